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
//!
//! **Built aside.** Where no other connection reads the index while the writer runs (`scrollback
//! index` and `rebuild`: [`crate::Indexer::set_alone`]), the index holds nothing but its settings (no row in any
//! table but `scrollback_meta`, so nothing a person made: no forgotten session, no vault link), and
//! no other process has it open (SQLite lets only a lone connection take it out of WAL mode), the
//! load is built in a file of its own, [`BUILD_FILE`], its rollback journal in memory (`Aside`): in
//! WAL mode every page was written twice, to the log and then into the file, and read back in
//! between. (In memory, not off: without a journal SQLite rolls nothing back, not even a pass's
//! savepoint, and a pass that fails must leave nothing.) The
//! empty index is closed meanwhile. At the end the build is synced and renamed over the index. A
//! crash before that leaves the index as it was and the build as scratch (a file written without a
//! journal may be torn), removed when the writer next opens (`discard_aside`): the next `index`
//! reads every file again, where a load in place goes on from its last group. A connection that
//! opened the empty index during the load reads it until it opens the index again, as the servers'
//! readers do at their next question (`read::pool` checks the file under the name). With readers
//! (`serve`), the load is built in place, as above.

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
/// The file a first bulk load is built in, aside from the index, when nothing else reads it.
pub const BUILD_FILE: &str = "index-build.sqlite3";
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

/// A bulk load built aside ([`BUILD_FILE`]): where the build is, and the index it will replace.
///
/// The empty index is closed while the load runs (its connection's cache would be held for
/// nothing) and opened again to be replaced.
#[derive(Debug)]
pub(crate) struct Aside {
    index_path: PathBuf,
    build_path: PathBuf,
}

impl Aside {
    /// Starts a build aside of the index `index` (the writer's connection to `index_path`), if it
    /// holds nothing but its settings and no other process has it open: returns the build's
    /// connection (schema made, its journal in memory, the index's settings copied) and the `Aside` that
    /// [`Aside::finish`] or [`Aside::abandon`] ends; the caller closes `index`. `None` where the load
    /// is built in place (why, in the log), `index` as it was.
    pub(crate) fn start(index: &Connection, index_path: &Path) -> Option<(Connection, Aside)> {
        let build_path = index_path.with_file_name(BUILD_FILE);
        match only_settings(index) {
            Ok(true) => {}
            Ok(false) => return None,
            Err(e) => {
                tracing::warn!("the first index is built in place: {e}");
                return None;
            }
        }
        // Out of WAL mode, which SQLite allows only to the one connection that has the file open:
        // it is the check that no reader has it, and a reader that opened it in WAL mode would keep
        // its log and shared memory, which the build would find beside it under the same names.
        match index.query_row("PRAGMA journal_mode = DELETE", [], |r| r.get::<_, String>(0)) {
            Ok(mode) if mode == "delete" => {}
            Ok(_) | Err(_) => {
                tracing::info!("the first index is built in place: another process has the index open");
                return None;
            }
        }
        match open_build(index, &build_path) {
            Ok(build) => Some((build, Aside { index_path: index_path.to_owned(), build_path })),
            Err(e) => {
                tracing::warn!(path = %build_path.display(), "the first index is built in place: {e}");
                if let Err(e) = discard_aside(index_path) {
                    tracing::warn!("{e}");
                }
                // Back to the writer's journal; if this fails, the next open sets it.
                let _ = index.query_row("PRAGMA journal_mode = WAL", [], |r| r.get::<_, String>(0));
                None
            }
        }
    }

    /// Where the build is.
    pub(crate) fn build_path(&self) -> &Path {
        &self.build_path
    }

    /// Puts the finished build in the index's place: closes it, syncs it to disk and renames it over
    /// the index, then opens the writer's connection on it. On an error the index is as it was
    /// (the build left as scratch for the next open).
    pub(crate) fn finish(self, build: Connection) -> Result<Connection> {
        let started = Instant::now();
        build.close().map_err(|(_, e)| Error::from(e))?;
        let file = std::fs::File::open(&self.build_path).map_err(|e| Error::io(&self.build_path, e))?;
        file.sync_all().map_err(|e| Error::io(&self.build_path, e))?;
        drop(file);
        // No reader of the empty index (one that opened it since the start) is mid-read while the
        // build takes its name: it keeps the file it opened, and reads the build once it opens again.
        let index = Connection::open(&self.index_path)?;
        index.busy_timeout(std::time::Duration::from_secs(30))?;
        index.execute_batch("BEGIN EXCLUSIVE")?;
        let mode: String = index.query_row("PRAGMA journal_mode", [], |r| r.get(0))?;
        if mode != "delete" {
            // Only another writer could have changed it, which the writer's lock rules out.
            let _ = index.execute_batch("ROLLBACK");
            return Err(Error::io(&self.index_path, std::io::Error::other(format!("its journal became {mode}"))));
        }
        let renamed = std::fs::rename(&self.build_path, &self.index_path).map_err(|e| Error::io(&self.index_path, e));
        let _ = index.execute_batch("ROLLBACK");
        index.close().map_err(|(_, e)| Error::from(e))?;
        renamed?;
        if let Some(dir) = self.index_path.parent() {
            // The rename itself, on disk (a directory opens read-only on Linux and macOS).
            std::fs::File::open(dir).and_then(|d| d.sync_all()).map_err(|e| Error::io(dir, e))?;
        }
        let conn = scrollback_core::db::ConnectionKind::Writer.open(&self.index_path)?;
        tracing::debug!(seconds = started.elapsed().as_secs_f64(), "bulk load: the build aside put in place");
        Ok(conn)
    }

    /// Removes the build of a load that failed, the index left as it was.
    pub(crate) fn abandon(self, build: Connection) {
        drop(build);
        if let Err(e) = discard_aside(&self.index_path) {
            tracing::warn!("{e}");
        }
    }
}

/// Whether the index holds no row in any table but `scrollback_meta` (its settings) and the
/// full-text index's own.
fn only_settings(index: &Connection) -> Result<bool> {
    let tables: Vec<String> = index
        .prepare(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'
             AND name NOT LIKE 'entries\\_fts%' ESCAPE '\\' AND name != 'scrollback_meta'",
        )?
        .query_map([], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    for table in tables {
        let any: bool = index.query_row(&format!("SELECT EXISTS (SELECT 1 FROM \"{table}\")"), [], |r| r.get(0))?;
        if any {
            return Ok(false);
        }
    }
    Ok(true)
}

/// Makes the build's file: the schema, as the writer makes it, then its journal in memory (nothing
/// else has it open), and the index's settings.
fn open_build(index: &Connection, build_path: &Path) -> Result<Connection> {
    remove_build(build_path)?;
    let build = scrollback_core::db::ConnectionKind::Writer.open(build_path)?;
    // Rollbacks and savepoints work as in any mode; only a crash loses the file, which is scratch.
    let mode: String = build.query_row("PRAGMA journal_mode = MEMORY", [], |r| r.get(0))?;
    if mode != "memory" {
        return Err(Error::io(build_path, std::io::Error::other(format!("its journal stays {mode}"))));
    }
    let settings: Vec<(String, Option<String>)> = index
        .prepare("SELECT key, value FROM scrollback_meta")?
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<rusqlite::Result<_>>()?;
    for (key, value) in settings {
        build.execute("INSERT OR REPLACE INTO scrollback_meta (key, value) VALUES (?1, ?2)", params![key, value])?;
    }
    Ok(build)
}

/// Removes a build aside that a crash or a failure left beside the index at `index_path` (scratch:
/// the index was left as it was). Says so in the log if there was one.
pub(crate) fn discard_aside(index_path: &Path) -> Result<()> {
    let build = index_path.with_file_name(BUILD_FILE);
    if build.exists() {
        tracing::info!(path = %build.display(), "a first index that did not finish is discarded; the index is as it was");
    }
    remove_build(&build)
}

/// Removes the build at `build` and the files SQLite keeps beside it.
fn remove_build(build: &Path) -> Result<()> {
    for suffix in ["", "-journal", "-wal", "-shm"] {
        let mut path = build.as_os_str().to_owned();
        path.push(suffix);
        remove(Path::new(&path))?;
    }
    Ok(())
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
