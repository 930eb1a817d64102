//! Forgetting a session across every store: its index rows (one transaction, which leaves a
//! `forgetting:` mark), then its sent messages and their images in the acceptance record, then its
//! vault links and the mark. The index's writer never opens the acceptance record: this layer does,
//! and runs the whole on the writer (directly for the CLI, as a writer job for a running server).
//! A process killed in between leaves the mark, and [`finish_interrupted`] completes the job the
//! next time the writer is opened, so each session is forgotten whole or not at all.

use std::path::Path;

use rusqlite::Connection;

use scrollback_accept::AcceptStore;
use scrollback_core::error::{Error, Result};
use scrollback_index::Indexer;
use scrollback_index::forget::Forgotten;
use scrollback_index::tail::WriterHandle;

/// Forgets each of `sessions` in the index and in `accept` (the acceptance record, where there is
/// one), then truncates the write-ahead log; with `dry_run`, only says what would go.
pub fn forget(
    indexer: &mut Indexer,
    accept: &AcceptStore,
    sessions: &[String],
    dry_run: bool,
) -> Result<Vec<Forgotten>> {
    let mut out = Vec::new();
    for session in sessions {
        let mut forgotten = indexer.forget_rows(session, dry_run)?;
        // The record's part remembers the session as forgotten (primary data, which a rebuild of
        // the index keeps): its lines are never indexed again, in any transcript.
        (forgotten.messages, forgotten.image_bytes) = accept.forget_session(session, dry_run)?;
        if !dry_run {
            indexer.finish_forget(session, &forgotten.vault_links)?;
        }
        out.push(forgotten);
    }
    if !dry_run {
        indexer.truncate_wal()?;
    }
    Ok(out)
}

/// Finishes what a process killed while forgetting left: sessions whose index rows are gone and
/// whose acceptance record's messages and vault links may not be.
///
/// Then hands the indexer the sessions the acceptance record says were forgotten, and forgets
/// again any of them the index still has (an index carried over from before, or mended by hand).
pub fn finish_interrupted(indexer: &mut Indexer, data_dir: &Path) -> Result<()> {
    let unfinished = indexer.unfinished_forgets()?;
    if !unfinished.is_empty() {
        let store = AcceptStore::open(data_dir)?;
        for (session, links) in unfinished {
            tracing::warn!(%session, "finishing forgetting a session (the last `forget` was interrupted)");
            store.forget_session(&session, false)?;
            indexer.finish_forget(&session, &links)?;
        }
    }
    let Some(store) = scrollback_accept::AcceptStore::open_if_any(data_dir)? else { return Ok(()) };
    let forgotten = store.forgotten_sessions()?;
    let mut again = Vec::new();
    for session in &forgotten {
        if indexer.has_session(session)? {
            tracing::warn!(%session, "a forgotten session is in the index: forgetting it again");
            again.push(session.clone());
        }
    }
    indexer.set_forgotten_sessions(forgotten);
    if !again.is_empty() {
        forget(indexer, &store, &again, false)?;
    }
    Ok(())
}

/// `scrollback unforget`: lets `sessions` be indexed again, in the acceptance record (where they
/// are remembered) and in the index (its transcripts read again at the next catch-up). Returns how
/// many transcripts will be read again.
pub fn unforget(indexer: &mut Indexer, data_dir: &Path, sessions: &[String]) -> Result<u64> {
    if let Some(store) = scrollback_accept::AcceptStore::open_if_any(data_dir)? {
        for session in sessions {
            store.unforget_session(session)?;
        }
    }
    indexer.unforget(sessions)
}

/// Forgets one session through the running writer (`DELETE /api/sessions/{id}`), as a job between
/// two of its passes; blocks until it is done (call it off an async runtime's threads). A session
/// neither the index nor the acceptance record knows is [`Error::UnknownSession`]; `None` if the writer
/// is not running.
pub fn forget_live(
    writer: &WriterHandle,
    accept: std::sync::Arc<AcceptStore>,
    session: String,
) -> Option<Result<Forgotten>> {
    writer.run(move |indexer| {
        // Known to the index, or to the acceptance record (a chat bound to it before its transcript).
        let known = indexer.has_session(&session)? || accept.forget_session(&session, true)?.0 > 0;
        if !known {
            return Err(Error::UnknownSession(session.chars().take(80).collect()));
        }
        let forgotten = forget(indexer, &accept, std::slice::from_ref(&session), false);
        if let Err(e) = &forgotten {
            tracing::error!(%session, "not forgotten: {e}");
        }
        forgotten.map(|mut f| f.remove(0))
    })
}

/// Which sessions a name given to `forget` or `unforget` may name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Among {
    /// Those of the index, and those already forgotten (forgetting one again does nothing).
    Any,
    /// Only those forgotten, in the index or the acceptance record.
    Forgotten,
}

/// The session `given` names among `among`: its id, or a prefix of that id and no other's
/// ([`scrollback_read::history::names::pick`]); the acceptance record's forgotten sessions count
/// too, where there is one. A whole id only the acceptance record knows (a chat bound to it before
/// its transcript) names that session, as for [`forget_live`].
pub fn named(conn: &Connection, accept: Option<&AcceptStore>, given: &str, among: Among) -> Result<String> {
    use scrollback_read::history::names;
    let mut candidates = names::forgotten_starting_with(conn, given)?;
    if let Some(accept) = accept {
        candidates.extend(accept.forgotten_sessions()?.into_iter().filter(|s| s.starts_with(given)));
    }
    if among == Among::Any {
        candidates.extend(names::sessions_starting_with(conn, given)?);
    }
    match names::pick(given, candidates) {
        Err(Error::UnknownSession(_)) if among == Among::Any && known_to_the_record(accept, given)? => {
            Ok(given.to_owned())
        }
        named => named,
    }
}

/// Whether the acceptance record holds sent messages of `session`.
fn known_to_the_record(accept: Option<&AcceptStore>, session: &str) -> Result<bool> {
    Ok(match accept {
        Some(accept) => accept.forget_session(session, true)?.0 > 0,
        None => false,
    })
}

/// The sessions `scrollback forget --project DIR --before DATE` names: those of the project, and
/// those whose last entry is before the date, sorted, each once.
///
/// The date is `YYYY-MM-DD` (that day's start, UTC) or an RFC 3339 time; anything else is
/// [`Error::BadQuery`]. Instants are compared, not texts: `2026-11-01T15:00:00+05:00` is the same
/// instant as `2026-11-01T10:00:00Z`, and a session whose last entry is then is not before it. A
/// session without a readable last time is never selected by age.
pub fn select_sessions(conn: &Connection, project: Option<&str>, before: Option<&str>) -> Result<Vec<String>> {
    let before = before
        .map(|text| -> Result<jiff::Timestamp> {
            let bound = scrollback_read::history::time_bound(text, false)?;
            bound.parse().map_err(|e| Error::BadQuery(format!("{bound}: {e}")))
        })
        .transpose()?;
    let mut sessions = Vec::new();
    if let Some(project) = project {
        let mut stmt = conn.prepare("SELECT id FROM sessions WHERE project = ?1")?;
        for id in stmt.query_map([project], |r| r.get::<_, String>(0))? {
            sessions.push(id?);
        }
    }
    if let Some(before) = before {
        let mut stmt = conn.prepare("SELECT id, last_timestamp FROM sessions WHERE last_timestamp IS NOT NULL")?;
        let rows = stmt.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))?;
        for row in rows {
            let (id, last) = row?;
            match last.parse::<jiff::Timestamp>() {
                Ok(at) if at < before => sessions.push(id),
                Ok(_) => {}
                Err(_) => {
                    tracing::warn!(session = %id, "its last time {last:?} is not an instant: not selected by --before")
                }
            }
        }
    }
    sessions.sort();
    sessions.dedup();
    Ok(sessions)
}
