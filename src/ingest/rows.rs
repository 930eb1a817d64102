//! Writing one file's rows: entries, media, failed images, and the sessions they add to.
//!
//! Called by the writer inside the transaction that also moves the file's checkpoint; nothing here
//! commits. Session rows are upserted per batch: counts add up, time ranges widen, and a title
//! replaces the one before it by [`title_rank::replaces`] (stated again in the upsert's SQL with
//! the same constant).

use std::collections::HashMap;

use rusqlite::{Connection, params};

use crate::error::Result;
use crate::ingest::entry::{Body, Described, Stored, title_rank};

/// Deletes a file's entries and everything that hangs off them, and fixes the sessions' counts.
pub(crate) fn delete_file_rows(tx: &Connection, file_id: i64) -> Result<()> {
    let mut stmt = tx.prepare("SELECT DISTINCT session_id FROM entries WHERE file_id = ?1")?;
    let sessions: Vec<String> = stmt.query_map([file_id], |r| r.get(0))?.collect::<rusqlite::Result<_>>()?;
    drop(stmt);
    tx.execute("DELETE FROM media WHERE entry_id IN (SELECT id FROM entries WHERE file_id = ?1)", [file_id])?;
    tx.execute("DELETE FROM failed_images WHERE entry_id IN (SELECT id FROM entries WHERE file_id = ?1)", [file_id])?;
    tx.execute("DELETE FROM entries WHERE file_id = ?1", [file_id])?;
    for session in sessions {
        recount_session(tx, &session)?;
    }
    Ok(())
}

/// Recomputes a session's counts and time range from its rows (after rows were removed).
fn recount_session(tx: &Connection, session: &str) -> Result<()> {
    tx.execute(
        "UPDATE sessions SET
            entries = (SELECT count(*) FROM entries WHERE session_id = ?1 AND invalid IS NULL),
            images = (SELECT count(*) FROM media m JOIN entries e ON e.id = m.entry_id
                      WHERE e.session_id = ?1 AND m.ordinal IS NOT NULL)
                   + (SELECT count(*) FROM failed_images f JOIN entries e ON e.id = f.entry_id
                      WHERE e.session_id = ?1),
            first_timestamp = (SELECT min(timestamp) FROM entries WHERE session_id = ?1),
            last_timestamp = (SELECT max(timestamp) FROM entries WHERE session_id = ?1)
         WHERE id = ?1",
        [session],
    )?;
    Ok(())
}

/// What a batch adds to one session.
#[derive(Debug, Default)]
struct SessionDelta {
    project: Option<String>,
    title: Option<(u8, String)>,
    first: Option<String>,
    last: Option<String>,
    entries: u64,
    images: u64,
}

/// What [`write_entries`] wrote.
#[derive(Debug, Default)]
pub(crate) struct Written {
    /// The entries' row ids, in order, when asked for.
    pub ids: Vec<i64>,
    /// Lines written.
    pub lines: u64,
    /// Payloads (media rows) written.
    pub media: u64,
    /// Invalid lines written.
    pub invalid: u64,
}

/// Inserts described lines of one file and adds them to their sessions; returns what it wrote, with
/// the rows' ids if `want_ids`.
pub(crate) fn write_entries(
    tx: &Connection,
    file_id: i64,
    file_session: &str,
    lines: &[Described],
    want_ids: bool,
) -> Result<Written> {
    let mut insert_entry = tx.prepare_cached(
        "INSERT INTO entries (file_id, session_id, line, offset, length, uuid, parent_uuid, type, role, timestamp,
                              is_sidechain, stripped, text, invalid)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
    )?;
    let mut insert_media = tx.prepare_cached(
        "INSERT INTO media (entry_id, ordinal, kind, offset, length, encoding, media_type, decoded_length, blake3)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
    )?;
    let mut insert_failed =
        tx.prepare_cached("INSERT INTO failed_images (entry_id, ordinal, reason) VALUES (?1, ?2, ?3)")?;
    let mut sessions: HashMap<&str, SessionDelta> = HashMap::new();
    let mut written = Written { ids: Vec::with_capacity(if want_ids { lines.len() } else { 0 }), ..Written::default() };
    for d in lines {
        let session = d.session(file_session);
        let (stored, invalid) = match &d.body {
            Body::Stored(stored) => (Some(stored), None),
            Body::Invalid(reason) => (None, Some(reason)),
        };
        let columns = stored.map(|s| &s.meta.columns);
        insert_entry.execute(params![
            file_id,
            session,
            d.line as i64,
            d.offset as i64,
            d.length as i64,
            columns.and_then(|c| c.uuid.as_deref()),
            columns.and_then(|c| c.parent_uuid.as_deref()),
            columns.and_then(|c| c.kind.as_deref()),
            columns.and_then(|c| c.role.as_deref()),
            columns.and_then(|c| c.timestamp.as_deref()),
            columns.is_some_and(|c| c.is_sidechain),
            stored.map(|s| s.stripped.as_str()),
            stored.and_then(|s| s.meta.text.as_deref()),
            invalid,
        ])?;
        let entry_id = tx.last_insert_rowid();
        if want_ids {
            written.ids.push(entry_id);
        }
        written.lines += 1;
        let Some(stored) = stored else {
            written.invalid += 1;
            continue;
        };
        for span in &stored.spans {
            insert_media.execute(params![
                entry_id,
                span.ordinal,
                span.kind.as_str(),
                (d.offset + span.offset) as i64,
                span.len as i64,
                span.encoding.as_str(),
                span.media_type,
                span.decoded_len as i64,
                span.blake3.to_hex().as_str(),
            ])?;
            written.media += 1;
        }
        for failed in &stored.failed_images {
            insert_failed.execute(params![entry_id, failed.ordinal, failed.reason])?;
        }
        sessions.entry(session).or_default().add(stored);
    }
    upsert_sessions(tx, sessions)?;
    Ok(written)
}

impl SessionDelta {
    /// Adds one valid entry of the session.
    fn add(&mut self, stored: &Stored) {
        let meta = &stored.meta;
        self.entries += 1;
        self.images += stored.image_blocks as u64;
        if self.project.is_none() {
            self.project.clone_from(&meta.cwd);
        }
        if let Some((rank, title)) = &meta.title
            && self.title.as_ref().is_none_or(|(old, _)| title_rank::replaces(*rank, *old))
        {
            self.title = Some((*rank, title.clone()));
        }
        if let Some(ts) = &meta.columns.timestamp {
            if self.first.as_ref().is_none_or(|f| ts < f) {
                self.first = Some(ts.clone());
            }
            if self.last.as_ref().is_none_or(|l| ts > l) {
                self.last = Some(ts.clone());
            }
        }
    }
}

/// Adds each session's delta to its row, creating the row if it is new.
fn upsert_sessions(tx: &Connection, sessions: HashMap<&str, SessionDelta>) -> Result<()> {
    let mut upsert = tx.prepare_cached(&format!(
        "INSERT INTO sessions (id, project, title, title_rank, first_timestamp, last_timestamp, entries, images)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
         ON CONFLICT (id) DO UPDATE SET
            project = coalesce(sessions.project, excluded.project),
            title = CASE WHEN excluded.title_rank > sessions.title_rank
                           OR (excluded.title_rank = sessions.title_rank AND excluded.title_rank >= {latest})
                         THEN excluded.title ELSE sessions.title END,
            title_rank = max(sessions.title_rank, excluded.title_rank),
            first_timestamp = coalesce(min(sessions.first_timestamp, excluded.first_timestamp),
                                       sessions.first_timestamp, excluded.first_timestamp),
            last_timestamp = coalesce(max(sessions.last_timestamp, excluded.last_timestamp),
                                      sessions.last_timestamp, excluded.last_timestamp),
            entries = sessions.entries + excluded.entries,
            images = sessions.images + excluded.images",
        latest = title_rank::LATEST_WINS_FROM
    ))?;
    for (id, d) in sessions {
        let (rank, title) = match d.title {
            Some((rank, title)) => (rank, Some(title)),
            None => (0, None),
        };
        upsert.execute(params![id, d.project, title, rank, d.first, d.last, d.entries as i64, d.images as i64])?;
    }
    Ok(())
}
