//! The bulk load: the first catch-up into an empty index, built for throughput.
//!
//! [`begin`] sets the secondary indexes and the full-text triggers aside (their SQL kept in
//! `scrollback_meta`, in the same transaction that drops them) so that they are built once at the
//! end, which is several times faster than row by row; commits skip fsync (`synchronous = OFF`:
//! still safe if the process is killed, and a power cut can only cost the index being rebuilt, since
//! it held nothing before). The files' passes are committed in groups (`Indexer`'s `Group`), each
//! pass in a savepoint whose journal is kept in memory (`temp_store = MEMORY` until [`end`]): a
//! commit per file, and a journal file per savepoint, wrote the index's pages about ten times over.
//!
//! [`end`] builds the indexes, then makes the ledger and its sums in one pass
//! (`usage::settle_all`) before the ledger's own indexes, then the overview's sums.
//!
//! The full-text index is built while the rows are written, by [`FtsBuild`]: a thread with its own
//! connection to a scratch database (`fts-build.sqlite3` in the data directory) that gets each
//! batch's lines and row ids from the writer (and frees the lines, off the writer's thread) and
//! indexes their text into a copy of `entries_fts`, on another core. At the end, [`end`] copies that table's segments (its `_data`, `_idx` and `_docsize` shadow
//! tables: same definition, same SQLite, so the same bytes a rebuild would write) into the index,
//! from that second connection, so that the writer's connection sees the change as another
//! connection's commit and drops any full-text state it cached. If the scratch build cannot be
//! used (it failed, or rows were deleted during the load), the index is rebuilt from `entries`.
//!
//! A crash at any point leaves `deferred:` rows in `scrollback_meta`; [`end`] runs again when the
//! index is next opened and finishes the job with a rebuild.

use std::path::{Path, PathBuf};
use std::sync::mpsc::{SyncSender, sync_channel};
use std::thread::JoinHandle;
use std::time::Instant;

use rusqlite::{Connection, params};

use crate::entry::Described;
use crate::rows;
use scrollback_core::error::{Error, Result};

/// The scratch database the full-text index is built in during a bulk load.
pub const FTS_BUILD_FILE: &str = "fts-build.sqlite3";
/// The `scrollback_meta` key that says the full-text index still has to be built.
const FTS_PENDING: &str = "deferred:fts";
/// Memory FTS5 may use for terms before it writes a segment (its `hashsize`), in the scratch build.
/// Bigger means fewer segments to merge; this keeps the indexer inside its memory bound.
const FTS_HASH_BYTES: i64 = 8 << 20;
/// The shadow tables of `entries_fts` that hold the index (`_config` holds settings, not copied).
const FTS_SHADOWS: [&str; 3] = ["entries_fts_data", "entries_fts_idx", "entries_fts_docsize"];

/// Starts a bulk load into an empty index: see the module documentation.
pub fn begin(conn: &Connection) -> Result<()> {
    let tx = conn.unchecked_transaction()?;
    let mut stmt = tx.prepare(
        "SELECT type, name, sql FROM sqlite_master
         WHERE type IN ('index', 'trigger') AND tbl_name IN ('entries', 'media', 'usage_lines', 'usage_sums', 'tool_events')
           AND sql IS NOT NULL",
    )?;
    let deferred: Vec<(String, String, String)> =
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?.collect::<rusqlite::Result<_>>()?;
    drop(stmt);
    for (kind, name, sql) in &deferred {
        tx.execute(
            "INSERT INTO scrollback_meta (key, value) VALUES (?1, ?2)",
            [format!("deferred:{name}"), sql.clone()],
        )?;
        tx.execute_batch(&format!("DROP {} \"{name}\"", kind.to_uppercase()))?;
    }
    tx.execute("INSERT INTO scrollback_meta (key, value) VALUES (?1, 'build entries_fts')", [FTS_PENDING])?;
    tx.commit()?;
    // The rows of a bulk load reference each other by construction: skip the per-row lookups.
    conn.execute_batch("PRAGMA synchronous = OFF; PRAGMA foreign_keys = OFF")?;
    // A pass's savepoint (and a statement that changes many rows) keeps the pages it changes in a
    // journal of its own, which spills to a temporary file past 64 KiB: 240 KB a file, four times
    // the index in writes. In memory, that journal is a pass's pages at most. (Put back before the
    // indexes are built at the end: their sorts spill to files, not to memory.)
    conn.execute_batch("PRAGMA temp_store = MEMORY")?;
    tracing::info!(deferred = deferred.len(), "bulk load: indexes and full-text triggers set aside");
    Ok(())
}

/// Ends a bulk load, or finishes one that was interrupted: recreates what [`begin`] set aside, then
/// builds the full-text index, from `fts` if it was built alongside, else from `entries`.
pub fn end(conn: &Connection, index_path: &Path, fts: Option<FtsBuild>) -> Result<()> {
    let mut stmt = conn.prepare("SELECT key, value FROM scrollback_meta WHERE key LIKE 'deferred:%' ORDER BY key")?;
    let deferred: Vec<(String, String)> =
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?.collect::<rusqlite::Result<_>>()?;
    drop(stmt);
    conn.execute_batch("PRAGMA temp_store = DEFAULT")?;
    if !deferred.is_empty() {
        let started = Instant::now();
        let tx = conn.unchecked_transaction()?;
        let step = |what: &str, at: &mut Instant| {
            tracing::debug!(seconds = at.elapsed().as_secs_f64(), "bulk load: {what}");
            *at = Instant::now();
        };
        let mut at = Instant::now();
        let build = |which: &dyn Fn(&str) -> bool, at: &mut Instant| -> Result<()> {
            for (key, sql) in deferred.iter().filter(|(key, sql)| key != FTS_PENDING && which(sql)) {
                tx.execute_batch(sql)?;
                tx.execute("DELETE FROM scrollback_meta WHERE key = ?1", [key])?;
                step(key, at);
            }
            Ok(())
        };
        // The ledger's sums' own indexes once their rows are written: rows added in key order to
        // an index by session or day land anywhere in it.
        build(&|sql| !of_ledger(sql), &mut at)?;
        // The load wrote copies of entries unmarked (there was no `uuid` index to look them up by).
        rows::mark_copies(&tx)?;
        step("copies marked", &mut at);
        // The load recorded usage lines without deriving the ledger from them.
        crate::usage::settle_all(&tx)?;
        step("ledger and its sums made", &mut at);
        build(&of_ledger, &mut at)?;
        crate::stats::restat_all(&tx)?;
        step("overview's sums made", &mut at);
        // (A load interrupted by an older version has no FTS_PENDING row, but needs the build too.)
        tx.execute(
            "INSERT OR IGNORE INTO scrollback_meta (key, value) VALUES (?1, 'build entries_fts')",
            [FTS_PENDING],
        )?;
        tx.commit()?;
        tracing::debug!(seconds = started.elapsed().as_secs_f64(), "bulk load: indexes built");
        if fts.is_none() {
            // A scratch build a crash left behind is of no use.
            remove(&index_path.with_file_name(FTS_BUILD_FILE))?;
        }
        let copied = match fts.map(|fts| fts.finish(index_path)) {
            Some(Ok(())) => true,
            Some(Err(e)) => {
                tracing::warn!("full-text index built alongside could not be used, rebuilding it: {e}");
                false
            }
            None => false,
        };
        if !copied {
            let tx = conn.unchecked_transaction()?;
            tx.execute_batch("INSERT INTO entries_fts (entries_fts) VALUES ('rebuild')")?;
            tx.execute("DELETE FROM scrollback_meta WHERE key = ?1", [FTS_PENDING])?;
            tx.commit()?;
        }
        tracing::info!(
            seconds = started.elapsed().as_secs_f64(),
            copied,
            "bulk load: indexes and full-text index built"
        );
    } else if let Some(fts) = fts {
        // Nothing to build: dropping it stops the thread and removes its file.
        drop(fts);
    }
    conn.execute_batch("PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON")?;
    Ok(())
}

/// Whether a deferred index or trigger (its SQL) is on a table the ledger's derivation writes (its
/// sums: which line stands, `usage_standing`, has no index but its key).
fn of_ledger(sql: &str) -> bool {
    sql.contains(" ON usage_sums(")
}

/// The full-text index of a bulk load, built on its own thread into a scratch database.
pub struct FtsBuild {
    send: Option<SyncSender<(Vec<i64>, Vec<Described>)>>,
    thread: Option<JoinHandle<Result<Connection>>>,
    path: PathBuf,
}

impl std::fmt::Debug for FtsBuild {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FtsBuild").field("path", &self.path).finish_non_exhaustive()
    }
}

impl FtsBuild {
    /// Starts the thread, with a table defined exactly as the index's `entries_fts`.
    pub fn start(conn: &Connection, data_dir: &Path) -> Result<FtsBuild> {
        let sql: String =
            conn.query_row("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'entries_fts'", [], |r| {
                r.get(0)
            })?;
        let path = data_dir.join(FTS_BUILD_FILE);
        remove(&path)?;
        let side = Connection::open(&path)?;
        // A scratch file: nothing in it is worth a journal; a crash leaves it to be removed.
        side.execute_batch("PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; PRAGMA busy_timeout = 5000;")?;
        side.execute_batch(&sql)?;
        side.execute("INSERT INTO entries_fts (entries_fts, rank) VALUES ('hashsize', ?1)", [FTS_HASH_BYTES])?;
        // Segments are merged once, by the index's own automerge, as rows are added later.
        side.execute_batch("INSERT INTO entries_fts (entries_fts, rank) VALUES ('automerge', 0)")?;
        let (send, receive) = sync_channel::<(Vec<i64>, Vec<Described>)>(2);
        let thread = std::thread::Builder::new()
            .name("fts-build".into())
            .spawn(move || -> Result<Connection> {
                side.execute_batch("BEGIN")?;
                {
                    let mut insert = side
                        .prepare("INSERT INTO entries_fts (rowid, text, tool_text, tools) VALUES (?1, ?2, ?3, ?4)")?;
                    for (ids, lines) in receive {
                        // Every row, as the insert trigger would: one without text counts too.
                        for (id, line) in ids.into_iter().zip(lines) {
                            let meta = line.stored().map(|s| &s.meta);
                            insert.execute(params![
                                id,
                                meta.and_then(|m| m.text.as_deref()),
                                meta.and_then(|m| m.tool_text.as_deref()),
                                meta.and_then(|m| m.tools.as_deref()),
                            ])?;
                        }
                    }
                }
                side.execute_batch("COMMIT")?;
                Ok(side)
            })
            .map_err(|e| Error::io(&path, e))?;
        Ok(FtsBuild { send: Some(send), thread: Some(thread), path })
    }

    /// Indexes the text of these lines, written as the rows `ids`. `false` means the thread
    /// stopped: the load then ends with a rebuild, and logs why.
    pub fn add(&self, ids: Vec<i64>, lines: Vec<Described>) -> bool {
        self.send.as_ref().is_some_and(|send| send.send((ids, lines)).is_ok())
    }

    fn join(&mut self) -> Result<Connection> {
        drop(self.send.take());
        let thread = self.thread.take().expect("joined once");
        thread.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    }

    /// Waits for the build, then copies it into the index at `index_path` in one transaction that
    /// also clears the pending mark.
    fn finish(mut self, index_path: &Path) -> Result<()> {
        let started = Instant::now();
        let side = self.join()?;
        tracing::debug!(seconds = started.elapsed().as_secs_f64(), "bulk load: full-text build joined");
        side.execute("ATTACH ?1 AS idx", [index_path.to_str().ok_or_else(|| not_utf8(index_path))?])?;
        // As for the rest of the bulk load: a kill cannot tear this transaction, a power cut can
        // only cost the index that is being built.
        side.execute_batch("PRAGMA idx.synchronous = OFF")?;
        let tx = side.unchecked_transaction()?;
        for table in FTS_SHADOWS {
            tx.execute_batch(&format!("DELETE FROM idx.{table}; INSERT INTO idx.{table} SELECT * FROM main.{table};"))?;
        }
        tx.execute("DELETE FROM idx.scrollback_meta WHERE key = ?1", [FTS_PENDING])?;
        tx.commit()?;
        side.execute_batch("DETACH idx")?;
        Ok(())
    }
}

impl Drop for FtsBuild {
    fn drop(&mut self) {
        if self.thread.is_some() {
            let _ = self.join();
        }
        let _ = remove(&self.path);
    }
}

fn remove(path: &Path) -> Result<()> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(Error::io(path, e)),
        _ => Ok(()),
    }
}

fn not_utf8(path: &Path) -> Error {
    Error::io(path, std::io::Error::new(std::io::ErrorKind::InvalidData, "path is not UTF-8"))
}
