//! `scrollback forget`: a person's right to have a conversation gone.
//!
//! A session is forgotten in one transaction: its entries (and their full-text rows, by the
//! delete trigger), media rows, failed images, the rows of the transcripts that hold nothing else,
//! and its session row. Those transcripts are remembered in `forgotten` by identity (device,
//! inode, and the blake3 of their first bytes), so that the indexer does not read them again while
//! they exist, until `unforget`. Lines of the session in a transcript shared with other sessions are
//! deleted, and that transcript stays followed. The vault links of the deleted file rows go once no
//! row needs them; the acceptance record's messages of the session are forgotten by
//! [`crate::accept::AcceptStore::forget_session`] (its own file: its own transaction).

use rusqlite::{Connection, params};

use crate::error::Result;

/// What forgetting a session removes (or, in a dry run, would).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Forgotten {
    /// The session.
    pub session_id: String,
    /// Its entries.
    pub entries: u64,
    /// Their payload rows.
    pub media: u64,
    /// Transcripts (file rows) that held only this session.
    pub files: u64,
    /// Bytes of the index's rows (stored lines and search text).
    pub index_bytes: u64,
    /// The vault links of those transcripts (removed once no row needs them).
    pub vault_links: Vec<String>,
}

/// Forgets `session_id` in the index `conn`, in one transaction; with `dry_run`, only counts.
pub fn forget(conn: &Connection, session_id: &str, dry_run: bool) -> Result<Forgotten> {
    let tx = conn.unchecked_transaction()?;
    let (entries, index_bytes): (i64, i64) = tx.query_row(
        "SELECT count(*), coalesce(sum(length(coalesce(stripped, '')) + length(coalesce(text, ''))), 0)
         FROM entries WHERE session_id = ?1",
        [session_id],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    let media: i64 = tx.query_row(
        "SELECT count(*) FROM media m JOIN entries e ON e.id = m.entry_id WHERE e.session_id = ?1",
        [session_id],
        |r| r.get(0),
    )?;
    // Transcripts with entries of this session and of no other.
    let mut stmt = tx.prepare(
        "SELECT f.id, f.vault FROM files f
         WHERE EXISTS (SELECT 1 FROM entries e WHERE e.file_id = f.id AND e.session_id = ?1)
           AND NOT EXISTS (SELECT 1 FROM entries e WHERE e.file_id = f.id AND e.session_id != ?1)",
    )?;
    let files: Vec<(i64, Option<String>)> =
        stmt.query_map([session_id], |r| Ok((r.get(0)?, r.get(1)?)))?.collect::<rusqlite::Result<_>>()?;
    drop(stmt);
    let out = Forgotten {
        session_id: session_id.to_owned(),
        entries: entries as u64,
        media: media as u64,
        files: files.len() as u64,
        index_bytes: index_bytes as u64,
        vault_links: files.iter().filter_map(|(_, v)| v.clone()).collect(),
    };
    if dry_run {
        return Ok(out);
    }
    for (file_id, _) in &files {
        tx.execute(
            "INSERT INTO forgotten (session_id, path, dev, inode, fingerprint, fingerprint_len, forgotten_at)
             SELECT ?2, path, dev, inode, fingerprint, fingerprint_len, strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
             FROM files WHERE id = ?1",
            params![file_id, session_id],
        )?;
    }
    tx.execute("DELETE FROM media WHERE entry_id IN (SELECT id FROM entries WHERE session_id = ?1)", [session_id])?;
    tx.execute(
        "DELETE FROM failed_images WHERE entry_id IN (SELECT id FROM entries WHERE session_id = ?1)",
        [session_id],
    )?;
    tx.execute("DELETE FROM entries WHERE session_id = ?1", [session_id])?;
    for (file_id, _) in &files {
        tx.execute("DELETE FROM files WHERE id = ?1", [file_id])?;
    }
    tx.execute("DELETE FROM sessions WHERE id = ?1", [session_id])?;
    tx.commit()?;
    Ok(out)
}

/// Lets the transcripts of `session_id` be indexed again; returns how many were forgotten.
pub fn unforget(conn: &Connection, session_id: &str) -> Result<u64> {
    Ok(conn.execute("DELETE FROM forgotten WHERE session_id = ?1", [session_id])? as u64)
}
