//! A pass over an agent's database (OpenCode's): each of its sessions is a transcript at
//! `<database>/<session id>`, a document its format renders from the session's rows
//! ([`scrollback_core::format::Rows`]) into a file (the vault's, which keeps it if the pass reads
//! it, or an unlinked scratch file), which the pass then reads as it reads any file (plan, lines,
//! commit). The database is opened read-only, never written, and each
//! session is rendered in one read transaction, so what a pass reads is one state of its rows however
//! the agent writes meanwhile (the write-ahead log keeps that state for the reader). A session is
//! rendered only when its stamp moved: a number its format derives from its rows' counts and times.
//! A session no longer in the database is marked gone, its rows kept.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use rusqlite::Connection;

use super::file::Opened;
use super::{Indexer, Progress, Summary};
use crate::tree::Found;
use scrollback_core::codec::refs::is_id;
use scrollback_core::db::{open_agent_database, render_session};
use scrollback_core::error::{Error, Result};
use scrollback_core::format::Rows;

impl Indexer {
    /// Indexes every session of the database `found` whose rows changed since its last pass (or all
    /// of them if the database is another file now), and marks those no longer there gone.
    pub(super) fn index_database(
        &mut self,
        found: &Found,
        rows: &'static dyn Rows,
        progress: &mut dyn Progress,
    ) -> Result<Summary> {
        let db = &found.path;
        let conn = open_agent_database(db)?;
        let (dev, inode) = (found.dev, found.inode);
        let sessions = match rows.sessions(&conn) {
            Ok(sessions) => sessions,
            // Not (yet) a database of this agent's: an empty file the agent has just created, or
            // tables of a build its format does not know.
            // Said once: every write of the agent's brings a pass.
            Err(e) => {
                let agent = self.format_of(db).display_name();
                crate::tree::say_skipped_once(db, &format!("not read as {agent}'s database: {e}"));
                return Ok(Summary::default());
            }
        };
        if let Ok(Some(why)) = rows.tables_not_read(&conn) {
            crate::tree::say_skipped_once(db, why);
        }
        let known = self.sessions_of(db)?;
        let mut summary = Summary::default();
        let mut seen = HashSet::new();
        for (session, stamp) in sessions {
            if !is_id(&session) {
                tracing::warn!(path = %db.display(), "a session whose id cannot name a path is not read: {session:?}");
                continue;
            }
            let path = db.join(&session);
            seen.insert(path.clone());
            let same = known.get(&path).is_some_and(|&(d, i, s)| (d, i, s) == (dev, inode, stamp));
            if same && !self.changed.contains(&path) {
                continue;
            }
            match self.index_session(&conn, rows, &path, &session, (dev, inode), progress) {
                Ok(s) => summary.add(&s),
                Err(e) => {
                    tracing::warn!(path = %path.display(), "not indexed: {e}");
                    summary.failed += 1;
                }
            }
        }
        for path in known.keys().filter(|p| !seen.contains(*p)) {
            summary.gone += self.mark_gone(path)? as u64;
        }
        Ok(summary)
    }

    /// One session: rendered in one read transaction, then read as any transcript is.
    fn index_session(
        &mut self,
        conn: &Connection,
        rows: &'static dyn Rows,
        path: &Path,
        session: &str,
        (dev, inode): (u64, u64),
        progress: &mut dyn Progress,
    ) -> Result<Summary> {
        // Into the vault, which keeps it if the pass reads it; else into an unlinked scratch file.
        let (mut scratch, kept) = match self.vault.render_file()? {
            Some(named) => {
                let (file, path) = named.into_parts();
                (file, Some(path))
            }
            None => (tempfile::tempfile_in(&self.data_dir).map_err(|e| Error::io(&self.data_dir, e))?, None),
        };
        let Some(stamp) = render_session(rows, conn, session, path, &mut scratch)? else {
            // Deleted since the list was read: the next pass marks it gone.
            return Ok(Summary::default());
        };
        let opened = Opened::rendered(path, scratch, dev, inode, stamp, kept)?;
        let row = self.file_row(&opened.path_str)?;
        self.index_opened(opened, row, progress, None)
    }

    /// Every session of `db` the index holds live, by path: its database's identity and its stamp.
    fn sessions_of(&self, db: &Path) -> Result<HashMap<PathBuf, (u64, u64, i64)>> {
        let Some(prefix) = db.to_str() else { return Ok(HashMap::new()) };
        let mut stmt = self.conn.prepare(
            "SELECT path, dev, inode, mtime_ns FROM files
             WHERE state = 'live' AND path > ?1 || '/' AND path < ?1 || '0'",
        )?;
        let rows = stmt.query_map([prefix], |r| {
            Ok((
                PathBuf::from(r.get::<_, String>(0)?),
                (r.get::<_, i64>(1)? as u64, r.get::<_, i64>(2)? as u64, r.get(3)?),
            ))
        })?;
        let all: HashMap<PathBuf, (u64, u64, i64)> = rows.collect::<rusqlite::Result<_>>()?;
        // Only its sessions: `<db>/<id>`, no deeper.
        Ok(all.into_iter().filter(|(p, _)| p.parent() == Some(db)).collect())
    }
}
