//! The writer's part of `forget` and `unforget`: a session's rows forgotten in one transaction that
//! leaves a `forgetting:` mark, the mark removed once every store's part is done, the sessions whose
//! lines every pass leaves out, and whether a file is a forgotten transcript. What spans the other
//! stores (the acceptance record) is `scrollback_ops::forget`'s; the SQL is [`crate::forget`]'s.

use std::collections::HashSet;

use rusqlite::params;

use super::Indexer;
use super::file::Opened;
use crate::events::Event;
use crate::fingerprint::hash_range;
use crate::vault::Vault;
use scrollback_core::error::Result;

impl Indexer {
    /// Forgets `session`'s rows in the index (see [`crate::forget`]), in one transaction
    /// that leaves a `forgetting:` mark; with `dry_run`, only counts. What spans the other stores
    /// (the acceptance record) is the caller's (`scrollback_ops::forget`), which then calls
    /// [`Indexer::finish_forget`].
    pub fn forget_rows(&mut self, session: &str, dry_run: bool) -> Result<crate::forget::Forgotten> {
        let forgotten = crate::forget::forget(&self.conn, session, dry_run)?;
        if !dry_run {
            self.forgotten_sessions.insert(session.to_owned());
        }
        Ok(forgotten)
    }

    /// The sessions a person forgot (kept in the acceptance record, which the caller reads): their
    /// lines are passed over in every transcript from now on.
    pub fn set_forgotten_sessions(&mut self, sessions: HashSet<String>) {
        self.forgotten_sessions = sessions;
    }

    /// Ends forgetting `session` once every store's part is done: the vault `links` no row needs go,
    /// the `forgetting:` mark goes, and the bus hears it.
    pub fn finish_forget(&mut self, session: &str, links: &[String]) -> Result<()> {
        if let Vault::On(_, touched, _) = &mut self.vault {
            touched.extend(links.iter().cloned());
        }
        self.vault.settle(&self.conn);
        crate::forget::finished(&self.conn, session)?;
        self.announce(Event::SessionForgotten { session_id: session.to_owned() });
        Ok(())
    }

    /// Sessions a killed `forget` left with their index rows gone but not every store's part done
    /// (each with its vault links): finish each with [`Indexer::finish_forget`].
    pub fn unfinished_forgets(&self) -> Result<Vec<(String, Vec<String>)>> {
        crate::forget::unfinished(&self.conn)
    }

    /// Whether the index has a session `id`.
    pub fn has_session(&self, id: &str) -> Result<bool> {
        Ok(self.conn.query_row("SELECT EXISTS (SELECT 1 FROM sessions WHERE id = ?1)", [id], |r| r.get(0))?)
    }

    /// Writes the write-ahead log back into the index and truncates it: forgotten rows leave no copy
    /// behind in it.
    pub fn truncate_wal(&mut self) -> Result<()> {
        self.conn.execute_batch("PRAGMA wal_checkpoint(TRUNCATE)")?;
        Ok(())
    }

    /// Lets forgotten sessions' transcripts be indexed again (by the next catch-up): those that held
    /// nothing else, and those that held their lines beside other sessions', read again from their
    /// start. Returns how many transcripts that is.
    pub fn unforget(&mut self, sessions: &[String]) -> Result<u64> {
        let mut n = 0;
        for session in sessions {
            self.forgotten_sessions.remove(session);
            n += crate::forget::unforget(&self.conn, session)?;
        }
        Ok(n)
    }

    /// Whether `opened` is a transcript of a forgotten session: the same identity and first bytes.
    pub(super) fn is_forgotten(&self, opened: &Opened) -> Result<bool> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT fingerprint, fingerprint_len FROM forgotten WHERE dev = ?1 AND inode = ?2")?;
        let marks: Vec<(String, i64)> = stmt
            .query_map(params![opened.dev as i64, opened.inode as i64], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect::<rusqlite::Result<_>>()?;
        for (fingerprint, len) in marks {
            if hash_range(&opened.file, &opened.path, 0, len as u64)? == fingerprint {
                return Ok(true);
            }
        }
        Ok(false)
    }
}
