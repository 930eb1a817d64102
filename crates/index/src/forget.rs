//! `scrollback forget`: a person's right to have a conversation gone.
//!
//! A session is forgotten in one transaction: its entries (and their full-text rows, by the
//! delete trigger), media rows, failed images, the rows of the transcripts that hold nothing else,
//! and its session row. Those transcripts are remembered in `forgotten` by identity (device,
//! inode, and the blake3 of their first bytes), so that the indexer does not read them again while
//! they exist, until `unforget`. Lines of the session in a transcript shared with other sessions are
//! deleted, and that transcript stays followed. The vault links of the deleted file rows go once no
//! row needs them; the acceptance record's messages of the session are forgotten by
//! `scrollback_accept::AcceptStore::forget_session`.
//!
//! The acceptance record is another file, so its transaction cannot be the index's. The index's
//! transaction therefore also writes a `forgetting:<session>` mark, removed only once the record's
//! messages are gone too; a process killed in between finds the mark when the index is next opened
//! for writing and finishes the job ([`crate::Indexer::open`]). Each session is so either forgotten
//! whole or not at all.

use rusqlite::{Connection, params};

use scrollback_core::error::Result;

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
    /// Bytes of those links whose transcript is gone: the vault was their last name, so they are
    /// freed.
    pub vault_bytes: u64,
    /// Messages of the session in the acceptance record.
    pub messages: u64,
    /// Bytes of the images of those messages that no other message has.
    pub image_bytes: u64,
}

impl Forgotten {
    /// About how many bytes forgetting frees: index rows, vault-only transcripts and sent images.
    pub fn freed_bytes(&self) -> u64 {
        self.index_bytes + self.vault_bytes + self.image_bytes
    }
}

/// The `scrollback_meta` key prefix of a session whose index rows are gone and whose acceptance
/// record's messages may not be yet.
pub const FORGETTING: &str = "forgetting:";

/// Forgets `session_id` in the index `conn`, in one transaction; with `dry_run`, only counts.
pub fn forget(conn: &Connection, session_id: &str, dry_run: bool) -> Result<Forgotten> {
    let tx = conn.unchecked_transaction()?;
    let (out, files) = count(&tx, session_id)?;
    if dry_run {
        return Ok(out);
    }
    delete(&tx, session_id, &files, &out.vault_links)?;
    tx.commit()?;
    Ok(out)
}

/// Transcripts (file rows) that hold a session's entries and no other's: each row's id and vault link.
type Transcripts = Vec<(i64, Option<String>)>;

/// What forgetting `session_id` removes, and the transcripts (file rows, with their vault links)
/// that hold its entries and no other session's.
fn count(tx: &Connection, session_id: &str) -> Result<(Forgotten, Transcripts)> {
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
    let files: Transcripts =
        stmt.query_map([session_id], |r| Ok((r.get(0)?, r.get(1)?)))?.collect::<rusqlite::Result<_>>()?;
    drop(stmt);
    let vault_links: Vec<String> = files.iter().filter_map(|(_, v)| v.clone()).collect();
    // A link that is its inode's only name holds bytes nothing else does.
    let vault_bytes = vault_links
        .iter()
        .filter_map(|l| std::fs::symlink_metadata(l).ok())
        .filter(|m| m.is_file() && std::os::unix::fs::MetadataExt::nlink(m) == 1)
        .map(|m| m.len())
        .sum();
    let out = Forgotten {
        session_id: session_id.to_owned(),
        entries: entries as u64,
        media: media as u64,
        files: files.len() as u64,
        index_bytes: index_bytes as u64,
        vault_links,
        vault_bytes,
        messages: 0,
        image_bytes: 0,
    };
    Ok((out, files))
}

/// Deletes `session_id`'s rows and its transcripts' `files`, remembering them in `forgotten` (and in
/// `forgotten_in` those that keep other sessions' lines), and leaves the `forgetting:` mark with
/// the `vault_links` to remove.
fn delete(tx: &Connection, session_id: &str, files: &[(i64, Option<String>)], vault_links: &[String]) -> Result<()> {
    // Transcripts that keep other sessions' lines: `unforget` reads them again.
    tx.execute(
        "INSERT OR IGNORE INTO forgotten_in (session_id, file_id)
         SELECT DISTINCT ?1, file_id FROM entries WHERE session_id = ?1
           AND EXISTS (SELECT 1 FROM entries o WHERE o.file_id = entries.file_id AND o.session_id != ?1)",
        [session_id],
    )?;
    for (file_id, _) in files {
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
    let dropped = crate::usage::drop_lines(tx, "session_id = ?1", &session_id, false)?;
    crate::stats::drop_events(tx, "session_id = ?1", &session_id)?;
    crate::stats::drop_session(tx, session_id)?;
    tx.execute("DELETE FROM entries WHERE session_id = ?1", [session_id])?;
    for (file_id, _) in files {
        tx.execute("DELETE FROM usage_state WHERE file_id = ?1", [file_id])?;
        tx.execute("DELETE FROM files WHERE id = ?1", [file_id])?;
    }
    // The same response stated in another session's lines stands there now.
    dropped.settle(tx)?;
    tx.execute("DELETE FROM sessions WHERE id = ?1", [session_id])?;
    // The mark holds the vault links to remove: a link no row needs is removed after the commit.
    let links = serde_json::Value::from(vault_links.to_vec()).to_string();
    tx.execute(
        "INSERT OR REPLACE INTO scrollback_meta (key, value) VALUES (?1, ?2)",
        params![format!("{FORGETTING}{session_id}"), links],
    )?;
    Ok(())
}

/// Sessions whose index rows were forgotten and whose acceptance record's messages and vault links
/// may not be: each with those links.
pub fn unfinished(conn: &Connection) -> Result<Vec<(String, Vec<String>)>> {
    let mut stmt = conn.prepare("SELECT substr(key, ?2), value FROM scrollback_meta WHERE key LIKE ?1 ORDER BY key")?;
    let rows = stmt.query_map(params![format!("{FORGETTING}%"), FORGETTING.len() as i64 + 1], |r| {
        Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?))
    })?;
    let mut out = Vec::new();
    for row in rows {
        let (session, links) = row?;
        // An unreadable list leaves the links for the retention check to report.
        out.push((session, serde_json::from_str(&links).unwrap_or_default()));
    }
    Ok(out)
}

/// Marks `session_id` forgotten everywhere: removes its `forgetting:` mark.
pub fn finished(conn: &Connection, session_id: &str) -> Result<()> {
    conn.execute("DELETE FROM scrollback_meta WHERE key = ?1", [format!("{FORGETTING}{session_id}")])?;
    Ok(())
}

/// Lets the transcripts of `session_id` be indexed again: those that held only it, and those that
/// held its lines beside others' (read again from their start at their next pass: their row no
/// longer matches the file). Returns how many transcripts that is.
pub fn unforget(conn: &Connection, session_id: &str) -> Result<u64> {
    let tx = conn.unchecked_transaction()?;
    let whole = tx.execute("DELETE FROM forgotten WHERE session_id = ?1", [session_id])?;
    let shared = tx.execute(
        "UPDATE files SET mtime_ns = 0, tail_hash = '' WHERE id IN (SELECT file_id FROM forgotten_in WHERE session_id = ?1)",
        [session_id],
    )?;
    tx.execute("DELETE FROM forgotten_in WHERE session_id = ?1", [session_id])?;
    tx.commit()?;
    Ok((whole + shared) as u64)
}

/// Takes the lines of forgotten sessions out of a batch of file `file_id` before it is written, and
/// records that the file held them (`forgotten_in`), so that `unforget` can read it again.
pub fn pass_over(
    tx: &Connection,
    file_id: i64,
    file_session: &str,
    forgotten: &std::collections::HashSet<String>,
    lines: &mut Vec<crate::entry::Described>,
) -> Result<()> {
    let mut passed: Vec<String> = Vec::new();
    lines.retain(|d| {
        let session = d.session(file_session);
        let keep = !forgotten.contains(session);
        if !keep && !passed.iter().any(|p| p == session) {
            passed.push(session.to_owned());
        }
        keep
    });
    for session in passed {
        tracing::debug!(%session, file_id, "lines of a forgotten session passed over");
        tx.prepare_cached("INSERT OR IGNORE INTO forgotten_in (session_id, file_id) VALUES (?1, ?2)")?
            .execute(params![session, file_id])?;
    }
    Ok(())
}
