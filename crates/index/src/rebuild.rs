//! `scrollback rebuild`: a new index from the transcripts, with the history only the old index held.
//!
//! The old file is moved aside (renamed), never deleted. The transcripts that exist
//! are indexed again from scratch; then the rows of every transcript the new index does not have
//! (gone ones, whose history the old index was the only record of) are copied over, as many as can
//! be read: a damaged page loses the rows on it, not the others. Only the columns every schema
//! version has are read, and the format that wrote a row (`agent`) and a session's fork parent where
//! the old index has them; the rest (order, copies, search text, titles, counts) is derived again
//! by the version 4 backfill, by each row's own format, so an old index of an older version is
//! carried over too.

use std::path::Path;

use rusqlite::{Connection, params};

use scrollback_core::error::Result;

/// Copies from the index at `old` what a person asked to forget: the `forgotten` marks (so that
/// those transcripts are not indexed again by the rebuild) and the unfinished forgets. Runs before
/// the rebuild reads any transcript. Returns how many marks were copied, and what could not be read
/// (an index older than version 6 has no marks: nothing to copy).
pub fn carry_over_forgotten(conn: &Connection, old: &Path) -> (u64, Vec<String>) {
    let mut unreadable = Vec::new();
    let uri = format!("file:{}?mode=ro", old.display());
    if let Err(e) = conn.execute("ATTACH ?1 AS old", [uri]) {
        return (0, vec![format!("the old index: {e}")]);
    }
    let has_marks = conn
        .query_row("SELECT count(*) FROM old.sqlite_master WHERE type = 'table' AND name = 'forgotten'", [], |r| {
            r.get::<_, i64>(0)
        })
        .map_err(|e| unreadable.push(format!("the old index's tables: {e}")))
        .is_ok_and(|n| n > 0);
    let mut copied = 0;
    if has_marks {
        match conn.execute(
            "INSERT INTO forgotten (session_id, path, dev, inode, fingerprint, fingerprint_len, forgotten_at)
             SELECT session_id, path, dev, inode, fingerprint, fingerprint_len, forgotten_at FROM old.forgotten",
            [],
        ) {
            Ok(n) => copied = n as u64,
            Err(e) => unreadable.push(format!("the forgotten transcripts: {e}")),
        }
    }
    if let Err(e) = conn.execute(
        "INSERT OR REPLACE INTO scrollback_meta (key, value)
         SELECT key, value FROM old.scrollback_meta WHERE key LIKE ?1",
        [format!("{}%", crate::forget::FORGETTING)],
    ) {
        unreadable.push(format!("the unfinished forgets: {e}"));
    }
    let _ = conn.execute_batch("DETACH old");
    (copied, unreadable)
}

/// What [`carry_over`] copied.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct CarriedOver {
    /// Transcripts (file rows) whose history was copied.
    pub files: u64,
    /// Their entries.
    pub entries: u64,
    /// Their media rows.
    pub media: u64,
    /// What could not be read, each with why (a damaged page loses the rows on it).
    pub unreadable: Vec<String>,
}

const FILE_COLUMNS: &str = "path, session_id, dev, inode, fingerprint, fingerprint_len, tail_hash, size, mtime_ns, checkpoint, lines, indexed_at";
const ENTRY_COLUMNS: &str =
    "line, offset, length, uuid, parent_uuid, type, role, timestamp, is_sidechain, stripped, text, invalid, session_id";
const MEDIA_COLUMNS: &str = "ordinal, kind, offset, length, encoding, media_type, decoded_length, blake3";

/// Copies, from the index at `old` into `conn` (a fresh index of the transcripts that exist), the
/// rows of every transcript `conn` has no row for, marked gone; then derives what version 4 adds.
pub fn carry_over(conn: &Connection, old: &Path) -> Result<CarriedOver> {
    let mut out = CarriedOver::default();
    let uri = format!("file:{}?mode=ro", old.display());
    conn.execute("ATTACH ?1 AS old", [uri])?;
    let result = copy_gone(conn, &mut out);
    conn.execute_batch("DETACH old")?;
    result?;
    crate::migrate::carried_over(conn)?;
    Ok(out)
}

fn copy_gone(conn: &Connection, out: &mut CarriedOver) -> Result<()> {
    let tx = conn.unchecked_transaction()?;
    // The dictionaries the old rows' lines were packed with (version 14 on) come with them.
    let packed: bool = tx.query_row(
        "SELECT EXISTS (SELECT 1 FROM old.sqlite_master WHERE type = 'table' AND name = 'dictionaries')",
        [],
        |r| r.get(0),
    )?;
    if packed {
        tx.execute(
            "INSERT OR IGNORE INTO main.dictionaries (id, made_at, samples, bytes)
             SELECT id, made_at, samples, bytes FROM old.dictionaries",
            [],
        )?;
        scrollback_core::db::load_dictionaries(&tx)?;
    }
    let files: Vec<(i64, String)> = {
        let mut stmt = tx.prepare(
            "SELECT id, path FROM old.files o
             WHERE NOT EXISTS (SELECT 1 FROM main.files f WHERE f.path = o.path AND f.state = 'live')
             ORDER BY id",
        )?;
        let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
        keep_readable(rows, "the list of transcripts", out)
    };
    // The format that wrote each row, where the old index says (version 7 on): without it, a gone
    // transcript of another agent would be carried over as the default's.
    let agent = |table: &str| if has_column(&tx, table, "agent") { ", agent" } else { "" };
    let (file_agent, entry_agent) = (agent("files"), agent("entries"));
    for (old_id, path) in files {
        tx.execute(
            &format!(
                "INSERT INTO files ({FILE_COLUMNS}{file_agent}, state, gone_at)
                 SELECT {FILE_COLUMNS}{file_agent}, 'gone', coalesce(gone_at, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
                 FROM old.files WHERE id = ?1"
            ),
            [old_id],
        )?;
        let new_file = tx.last_insert_rowid();
        out.files += 1;
        // Its vault link, where the old index (version 5 on) recorded one: named by the file's
        // identity, so it is the same file's link in the new index.
        let _ = tx.execute(
            "UPDATE files SET vault = (SELECT vault FROM old.files WHERE id = ?2) WHERE id = ?1",
            params![new_file, old_id],
        );
        let entries: Vec<i64> = {
            let mut stmt = tx.prepare("SELECT id FROM old.entries WHERE file_id = ?1 ORDER BY line")?;
            let rows = stmt.query_map([old_id], |r| r.get(0))?;
            keep_readable(rows, &format!("entries of {path}"), out)
        };
        for old_entry in entries {
            let copied = tx.execute(
                &format!(
                    "INSERT INTO entries (file_id, {ENTRY_COLUMNS}{entry_agent})
                     SELECT ?1, {ENTRY_COLUMNS}{entry_agent} FROM old.entries WHERE id = ?2"
                ),
                params![new_file, old_entry],
            );
            if let Err(e) = copied {
                out.unreadable.push(format!("entry {old_entry} of {path}: {e}"));
                continue;
            }
            let new_entry = tx.last_insert_rowid();
            out.entries += 1;
            for (table, columns) in [("media", MEDIA_COLUMNS), ("failed_images", "ordinal, reason")] {
                match tx.execute(
                    &format!(
                        "INSERT INTO {table} (entry_id, {columns}) SELECT ?1, {columns} FROM old.{table} WHERE entry_id = ?2"
                    ),
                    params![new_entry, old_entry],
                ) {
                    Ok(n) if table == "media" => out.media += n as u64,
                    Ok(_) => {}
                    Err(e) => out.unreadable.push(format!("{table} of entry {old_entry} of {path}: {e}")),
                }
            }
        }
    }
    // Sessions the carried rows belong to (counts and titles are derived afterwards), with their
    // agent and fork parent where the old index has them.
    let extra: Vec<&str> = ["agent", "forked_from"].into_iter().filter(|c| has_column(&tx, "sessions", c)).collect();
    let columns: String = extra.iter().map(|c| format!(", {c}")).collect();
    let values: String = extra
        .iter()
        .map(|c| match *c {
            // Never NULL: a session the old index does not list takes its entries' agent.
            "agent" => ", coalesce((SELECT agent FROM old.sessions s WHERE s.id = e.session_id), e.agent)".to_owned(),
            c => format!(", (SELECT {c} FROM old.sessions s WHERE s.id = e.session_id)"),
        })
        .collect();
    if let Err(e) = tx.execute_batch(&format!(
        "INSERT OR IGNORE INTO sessions (id, project{columns})
         SELECT DISTINCT e.session_id, (SELECT project FROM old.sessions s WHERE s.id = e.session_id){values}
         FROM entries e"
    )) {
        out.unreadable.push(format!("the sessions' projects: {e}"));
        tx.execute_batch("INSERT OR IGNORE INTO sessions (id) SELECT DISTINCT session_id FROM entries")?;
    }
    tx.commit()?;
    Ok(())
}

/// Whether the old index's `table` has `column` (one older than the column's version has not).
fn has_column(conn: &Connection, table: &str, column: &str) -> bool {
    conn.query_row("SELECT count(*) FROM pragma_table_info(?1, 'old') WHERE name = ?2", params![table, column], |r| {
        r.get::<_, i64>(0)
    })
    .is_ok_and(|n| n > 0)
}

/// The rows of `rows` up to the first that cannot be read; that one is recorded under `what`.
fn keep_readable<T>(rows: impl Iterator<Item = rusqlite::Result<T>>, what: &str, out: &mut CarriedOver) -> Vec<T> {
    let mut kept = Vec::new();
    for row in rows {
        match row {
            Ok(row) => kept.push(row),
            Err(e) => {
                out.unreadable.push(format!("{what}: {e} (after {} rows)", kept.len()));
                break;
            }
        }
    }
    kept
}
