//! The catch-up walk: every transcript under a root, new files read ahead on other cores, a bulk load
//! for a large first one, and rows of files no longer there marked gone (never deleted); and the pass
//! over one path a file event or a rescan names. One unreadable file is logged and skipped.

use std::collections::{HashMap, HashSet};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::mpsc::Receiver;
use std::time::Instant;

use rusqlite::{OptionalExtension, params};

use super::file::{FileRow, Opened};
use super::identity::Identified;
use super::plan::Plan;
use super::{BulkLoad, Indexer, NoProgress, Progress, Summary};
use crate::ahead::{self, ReadAhead};
use crate::bulk::{self, FtsBuild};
use crate::events::Event;
use crate::roots;
use crate::tree::{self, Found};
use scrollback_core::db;
use scrollback_core::error::{Error, Result};

/// A first catch-up of at least this many bytes is a bulk load (see [`crate::bulk`]).
const BULK_BYTES: u64 = 64 << 20;
/// The `scrollback_meta` key (then the path) of a compressed transcript whose decompressed bytes
/// passed the bound: its value is the file's identity, size and mtime when it was refused.
const REFUSED: &str = "refused:decompressed:";

impl Indexer {
    /// Brings the index up to date with every transcript under `root`: new bytes of known files,
    /// new files, files rewritten, and files gone.
    pub fn catch_up(&mut self, root: &Path, progress: &mut dyn Progress) -> Result<Summary> {
        let started = Instant::now();
        // Paths are stored absolute, so that media can be read from any working directory.
        let root = &std::path::absolute(root).map_err(|e| Error::io(root, e))?;
        let mut found = tree::discover(root, self.format_of(root));
        // The vault's links are not transcripts, even when the data directory is inside the tree;
        // and a root inside this one is its own (its files are its format's, caught up with it).
        let own = roots::root_of(&self.roots, root).map(|r| r.dir.clone());
        found.retain(|f| {
            !self.vault.holds(&f.path) && roots::root_of(&self.roots, &f.path).map(|r| &r.dir) == own.as_ref()
        });
        // Oldest first (path order among equals), so that a first index gives newer files' rows
        // higher ids: search walks the full-text index from its highest rowids, the newest.
        found.sort_by_key(|f| f.mtime_ns);
        let known = self.live_rows()?;
        let total = found.iter().map(|f| f.size.saturating_sub(known.get(&f.path).map_or(0, |r| r.checkpoint))).sum();
        progress.start(total);
        let empty: bool = self.conn.query_row("SELECT NOT EXISTS (SELECT 1 FROM entries)", [], |r| r.get(0))?;
        let bulk = empty && total >= self.bulk_bytes();
        if bulk {
            bulk::begin(&self.conn)?;
            let fts = match FtsBuild::start(&self.conn, &self.data_dir) {
                Ok(fts) => Some(fts),
                Err(e) => {
                    tracing::warn!("cannot build the full-text index alongside; it is built at the end: {e}");
                    None
                }
            };
            self.load = Some(BulkLoad { fts, group: None });
        }
        let mut summary = Summary::default();
        // Files new to the index are read from their start whatever happens: read them ahead.
        let new_files = found
            .iter()
            .filter(|f| !known.contains_key(&f.path) && self.format_of(&f.path).database().is_none())
            .map(|f| (f.path.clone(), self.format_of(&f.path)))
            .collect();
        // Rows change only by this connection's writes (it is the only writer): while it has written
        // none, `known` is what the index holds.
        let written = self.conn.total_changes();
        std::thread::scope(|scope| {
            let mut ahead = ReadAhead::start(scope, new_files, self.packing.shared());
            for file in &found {
                // Untouched since it was last read, as its row says: nothing to open. (The pass over
                // it would decide the same after opening it. A row that cannot be read is read again
                // by that pass, which says why.)
                if self.untouched(file, &known, written).unwrap_or(false) {
                    continue;
                }
                match self.index_found(file, progress, ahead.take(&file.path)) {
                    Ok(s) => summary.add(&s),
                    // One unreadable file must not stop the others.
                    Err(e) => {
                        tracing::warn!(path = %file.path.display(), "not indexed: {e}");
                        summary.failed += 1;
                    }
                }
            }
        });
        if bulk {
            let closed = self.close_group();
            let fts = self.load.take().and_then(|load| load.fts);
            closed?;
            bulk::end(&self.conn, &self.data_dir.join(db::INDEX_FILE), fts)?;
        }
        let seen: HashSet<&Path> = found.iter().map(|f| f.path.as_path()).collect();
        summary.gone += self.mark_gone_under(root, &seen)?;
        summary.seconds = started.elapsed().as_secs_f64();
        Ok(summary)
    }

    /// Indexes one file's new bytes (or all of it, if it was rewritten). A path that no longer exists
    /// is marked gone.
    pub fn index_path(&mut self, path: &Path) -> Result<Summary> {
        let path = &std::path::absolute(path).map_err(|e| Error::io(path, e))?;
        if self.vault.holds(path) {
            return Ok(Summary::default());
        }
        match std::fs::metadata(path) {
            Ok(meta) if meta.is_file() && !self.format_of(path).is_transcript(path) => Ok(Summary::default()),
            // The plain twin beside it is the one read.
            Ok(_) if tree::hidden_by_plain_twin(self.format_of(path), path) => Ok(Summary::default()),
            Ok(meta) if meta.is_file() => {
                let found = Found {
                    path: path.to_owned(),
                    dev: meta.dev(),
                    inode: meta.ino(),
                    size: meta.len(),
                    mtime_ns: tree::mtime_ns(&meta),
                };
                self.index_found(&found, &mut NoProgress, None)
            }
            Ok(_) => Ok(Summary::default()),
            // `<database>/<session>`: the database's pass reads it (again from its start, if a
            // reader asked: `reindex_path`).
            Err(e) if e.kind() == std::io::ErrorKind::NotADirectory => match self.database_of_session(path) {
                Some(db) => self.index_path(&db),
                None => Ok(Summary::default()),
            },
            // A session of a database that is gone: no other name of it can hold it (its siblings
            // share the database's identity), so it is gone with it.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && self.database_of_session(path).is_some() => {
                Ok(Summary { gone: self.mark_gone(path)? as u64, ..Summary::default() })
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                // One name of a file with several (hard links) went: the file is not gone, and its
                // row moves to a name it still has.
                if let Some(other) = self.other_name(path)? {
                    tracing::info!(path = %path.display(), other = %other.display(), "a name of the transcript was removed; its rows follow its other name");
                    self.partial.remove(path);
                    self.conn.execute(
                        "UPDATE files SET path = ?2 WHERE path = ?1 AND state = 'live'",
                        params![path.to_str(), other.to_str()],
                    )?;
                    return self.index_path(&other);
                }
                // Compressed or decompressed, it is there under its other name: its row moves there.
                let mut moved = Summary::default();
                if let Some(twin) = self.format_of(path).twin(path).map(|t| t.path).filter(|t| t.is_file()) {
                    moved = self.index_path(&twin)?;
                }
                let gone = self.mark_gone(path)?;
                if !gone {
                    return Ok(moved);
                }
                Ok(Summary { gone: gone as u64, ..Summary::default() })
            }
            Err(e) => Err(Error::io(path, e)),
        }
    }

    /// The database `path` is a session of (`<database>/<session id>`, the database one of its
    /// root's format names), if it is one.
    fn database_of_session(&self, path: &Path) -> Option<PathBuf> {
        let db = path.parent()?;
        let format = self.format_of(db);
        (format.database().is_some() && format.is_transcript(db)).then(|| db.to_owned())
    }

    /// Re-indexes one file from the start: a reader found that a payload recorded in it no longer
    /// matches its bytes, an edit its fingerprint and tail hash may not show.
    pub fn reindex_path(&mut self, path: &Path) -> Result<Summary> {
        let path = std::path::absolute(path).map_err(|e| Error::io(path, e))?;
        self.changed.insert(path.clone());
        let summary = self.index_path(&path);
        self.changed.remove(&path);
        summary
    }

    /// Whether `file` is as its row says it was when last read (identity, size on disk and settled
    /// mtime), so that a pass over it would read nothing: the row from `known` while the writer has
    /// written nothing since `known` was read (at `written` changes), else from the index.
    fn untouched(&self, file: &Found, known: &HashMap<PathBuf, FileRow>, written: u64) -> Result<bool> {
        if self.changed.contains(&file.path) {
            return Ok(false);
        }
        let same = |row: &FileRow| row.unchanged(file.dev, file.inode, file.size, file.mtime_ns);
        if self.conn.total_changes() == written {
            return Ok(known.get(&file.path).is_some_and(same));
        }
        let Some(path) = file.path.to_str() else { return Ok(false) };
        Ok(self.file_row(path)?.as_ref().is_some_and(same))
    }

    /// One pass over one file: decide, then read and write what the decision says.
    fn index_found(
        &mut self,
        found: &Found,
        progress: &mut dyn Progress,
        ahead: Option<Receiver<ahead::Msg>>,
    ) -> Result<Summary> {
        let result = self.index_found_unsettled(found, progress, ahead);
        // Committed or rolled back, links no row refers to now go (see `Vault::settle`); in a
        // group, once it is ([`Indexer::close_group`]).
        if !self.in_group() {
            self.vault.settle(&self.conn);
        }
        result
    }

    fn index_found_unsettled(
        &mut self,
        found: &Found,
        progress: &mut dyn Progress,
        ahead: Option<Receiver<ahead::Msg>>,
    ) -> Result<Summary> {
        if let Some(rows) = self.format_of(&found.path).database() {
            return self.index_database(found, rows, progress);
        }
        let opened = Opened::open(&found.path)?;
        let row = self.file_row(&opened.path_str)?;
        self.index_opened(opened, row, progress, ahead)
    }

    /// A pass over a transcript opened (or a database's session rendered), whose row is `row`.
    pub(super) fn index_opened(
        &mut self,
        mut opened: Opened,
        mut row: Option<FileRow>,
        progress: &mut dyn Progress,
        ahead: Option<Receiver<ahead::Msg>>,
    ) -> Result<Summary> {
        if opened.compressed
            && row.as_ref().is_some_and(|r| opened.unchanged_since(r))
            && !self.changed.contains(&opened.path)
        {
            // Not touched since it was read: not decompressed again.
            return Ok(Summary::default());
        }
        if opened.compressed && self.refused_before(&opened)? {
            tracing::info!(path = %opened.path.display(), "not decompressed: refused before, and unchanged since");
            return Ok(Summary::default());
        }
        if let Err(e) = opened.materialize(&self.data_dir, self.scratch_limit) {
            if matches!(&e, Error::Io { source, .. } if source.kind() == std::io::ErrorKind::FileTooLarge) {
                // Remembered, so that it is not decompressed again until it changes.
                self.conn.execute(
                    "INSERT OR REPLACE INTO scrollback_meta (key, value) VALUES (?1, ?2)",
                    params![format!("{REFUSED}{}", opened.path_str), opened.state_key()],
                )?;
            }
            return Err(e);
        }
        // A rendered session is no file another name could be, nor anything's twin.
        if row.is_none() && !opened.rendered {
            match self.identify(&opened)? {
                Identified::Row(known) => row = known,
                Identified::HardLink(other) => return self.index_path(Path::new(&other)),
                Identified::Unfinished => return Ok(Summary::default()),
            }
        }
        if row.is_none() && self.is_forgotten(&opened)? {
            return Ok(Summary::default());
        }
        match self.plan(&opened, row)? {
            Plan::Skip => Ok(Summary::default()),
            Plan::SettleMtime(id, mtime_ns, size) => {
                self.conn.execute(
                    "UPDATE files SET mtime_ns = ?2, size = ?3 WHERE id = ?1",
                    params![id, mtime_ns, size as i64],
                )?;
                Ok(Summary::default())
            }
            plan => self.read_and_commit(&opened, plan, progress, ahead),
        }
    }

    /// A first catch-up of at least this many bytes is a bulk load: [`BULK_BYTES`], which a test
    /// may lower.
    fn bulk_bytes(&self) -> u64 {
        #[cfg(test)]
        if let Some(bytes) = self.bulk_from {
            return bytes;
        }
        BULK_BYTES
    }

    /// Whether the compressed file `opened` was refused as it is now (its output passed the bound).
    fn refused_before(&self, opened: &Opened) -> Result<bool> {
        let key = format!("{REFUSED}{}", opened.path_str);
        let state: Option<String> =
            self.conn.query_row("SELECT value FROM scrollback_meta WHERE key = ?1", [&key], |r| r.get(0)).optional()?;
        Ok(state.as_deref() == Some(opened.state_key().as_str()))
    }

    /// Marks every live file under `root` that is not in `seen` as gone.
    fn mark_gone_under(&mut self, root: &Path, seen: &HashSet<&Path>) -> Result<u64> {
        let mut stmt = self.conn.prepare("SELECT path FROM files WHERE state = 'live'")?;
        let live: Vec<String> = stmt.query_map([], |r| r.get(0))?.collect::<rusqlite::Result<_>>()?;
        drop(stmt);
        let mut gone = 0;
        for path in live {
            let path = PathBuf::from(path);
            // A database's sessions are its own pass's to mark gone, while the database is there
            // (asked last: it may stat the database, for paths not seen alone).
            let of_database = || path.parent().is_some_and(|db| seen.contains(db) || db.is_file());
            if path.starts_with(root) && !seen.contains(path.as_path()) && !path.is_file() && !of_database() {
                gone += self.mark_gone(&path)? as u64;
            }
        }
        Ok(gone)
    }

    /// Marks the live file at `path` gone, keeping its rows. Returns whether there was one.
    pub fn mark_gone(&mut self, path: &Path) -> Result<bool> {
        let Some(path_str) = path.to_str() else {
            return Ok(false);
        };
        self.partial.remove(path);
        let gone: Option<(i64, String)> = self
            .conn
            .query_row(
                "UPDATE files SET state = 'gone', gone_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
                 WHERE path = ?1 AND state = 'live' RETURNING id, session_id",
                [path_str],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()?;
        let Some((file_id, session_id)) = gone else {
            return Ok(false);
        };
        tracing::info!(path = %path.display(), "transcript is gone; its history is kept");
        self.announce(Event::SessionGone { session_id, file_id });
        Ok(true)
    }
}
