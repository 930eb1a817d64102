//! Forgetting a session across every store: its index rows (one transaction, which leaves a
//! `forgetting:` mark), then its sent messages and their images in the acceptance record, then its
//! vault links and the mark. The index's writer never opens the acceptance record: this layer does,
//! and runs the whole on the writer (directly for the CLI, as a writer job for a running server).
//! A process killed in between leaves the mark, and [`finish_interrupted`] completes the job the
//! next time the writer is opened, so each session is forgotten whole or not at all.

use std::path::Path;

use rusqlite::Connection;

use crate::accept::AcceptStore;
use crate::error::{Error, Result};
use crate::ingest::Indexer;
use crate::ingest::forget::Forgotten;
use crate::ingest::tail::WriterHandle;

/// Forgets each of `sessions` in the index and in `accept` (the acceptance record, where there is
/// one), then truncates the write-ahead log; with `dry_run`, only says what would go.
pub fn forget(
    indexer: &mut Indexer,
    accept: Option<&AcceptStore>,
    sessions: &[String],
    dry_run: bool,
) -> Result<Vec<Forgotten>> {
    let mut out = Vec::new();
    for session in sessions {
        let mut forgotten = indexer.forget_rows(session, dry_run)?;
        if let Some(store) = accept {
            (forgotten.messages, forgotten.image_bytes) = store.forget_session(session, dry_run)?;
        }
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
pub fn finish_interrupted(indexer: &mut Indexer, data_dir: &Path) -> Result<()> {
    let unfinished = indexer.unfinished_forgets()?;
    if unfinished.is_empty() {
        return Ok(());
    }
    let accept = crate::ops::writer::accept_store_if_any(data_dir)?;
    for (session, links) in unfinished {
        tracing::warn!(%session, "finishing forgetting a session (the last `forget` was interrupted)");
        if let Some(store) = &accept {
            store.forget_session(&session, false)?;
        }
        indexer.finish_forget(&session, &links)?;
    }
    Ok(())
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
        let forgotten = forget(indexer, Some(&accept), std::slice::from_ref(&session), false);
        if let Err(e) = &forgotten {
            tracing::error!(%session, "not forgotten: {e}");
        }
        forgotten.map(|mut f| f.remove(0))
    })
}

/// The sessions `scrollback forget --project DIR --before DATE` names: those of the project, and
/// those whose last entry is before the date (RFC 3339, or `YYYY-MM-DD`), sorted, each once.
pub fn select_sessions(conn: &Connection, project: Option<&str>, before: Option<&str>) -> Result<Vec<String>> {
    let mut sessions = Vec::new();
    let mut select = |sql: &str, arg: &str| -> Result<()> {
        let mut stmt = conn.prepare(sql)?;
        for id in stmt.query_map([arg], |r| r.get::<_, String>(0))? {
            sessions.push(id?);
        }
        Ok(())
    };
    if let Some(project) = project {
        select("SELECT id FROM sessions WHERE project = ?1", project)?;
    }
    if let Some(before) = before {
        select("SELECT id FROM sessions WHERE coalesce(last_timestamp, '') < ?1", before)?;
    }
    sessions.sort();
    sessions.dedup();
    Ok(sessions)
}
