//! The one writer: reads transcripts from their checkpoints and commits rows and checkpoint together.
//!
//! [`Indexer`] holds the only connection that writes, and a lock file so that a second scrollback
//! process on the same data directory is refused. For each file it first decides (`plan`) from the
//! file's identity (device, inode), its fingerprint and the bytes just before the checkpoint
//! (`fingerprint`) whether to skip it, read on from the checkpoint, or re-index it from the start;
//! then it reads complete lines in batches (`batch`) and commits the new rows (`rows`), the sessions
//! they touch and the new checkpoint in one `BEGIN IMMEDIATE` transaction. A partial last line is left
//! for the next pass. It never deletes the rows of a transcript that disappeared: they are marked
//! gone.
//!
//! Layout, one job per file: this one holds the writer, its opening and its settings; `walk` the
//! catch-up over a root and the pass over one path (files gone included); `file` a transcript as a
//! pass opens it, and its row; `identity` what a path new to the index is (a hard link, a renamed or
//! returned transcript, a compressed twin); `plan` what a pass reads; `commit` the pass's one
//! transaction; `source` where its batches come from; `forgetting` the writer's part of `forget`
//! and `unforget`; `database` an agent's database, whose sessions it renders and reads as files.

mod commit;
mod database;
mod file;
mod forgetting;
mod identity;
mod plan;
mod source;
mod walk;

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use rusqlite::Connection;

use crate::bulk::{self, FtsBuild};
use crate::events::{Bus, Event};
use crate::lines::LineReader;
use crate::lock::WriterLock;
use crate::roots::{self, Root};
use crate::vault::{VAULT_OFF_KEY, Vault, VaultOff, vault_dir};
use plan::Partial;
use scrollback_core::db::{self, ConnectionKind};
use scrollback_core::error::{Error, Result};
use scrollback_core::format::{self, Format};

/// Counts of one indexing pass.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Summary {
    /// Files read (new bytes or re-indexed).
    pub files: u64,
    /// Complete lines indexed.
    pub lines: u64,
    /// Payloads stripped (media rows).
    pub media: u64,
    /// Lines recorded as invalid.
    pub invalid: u64,
    /// Transcript bytes read.
    pub bytes: u64,
    /// Files re-indexed from the start (truncated, replaced, rewritten).
    pub reindexed: u64,
    /// Transcripts newly seen gone.
    pub gone: u64,
    /// Transcripts that could not be indexed (each logged with its reason); the others were.
    pub failed: u64,
    /// Wall time of the pass.
    pub seconds: f64,
}

impl Summary {
    /// Adds `other`'s counts to these (not its seconds).
    pub fn add(&mut self, other: &Summary) {
        self.files += other.files;
        self.lines += other.lines;
        self.media += other.media;
        self.invalid += other.invalid;
        self.bytes += other.bytes;
        self.reindexed += other.reindexed;
        self.gone += other.gone;
        self.failed += other.failed;
    }
}

/// Told how far a pass has got, in transcript bytes (for a progress bar).
pub trait Progress {
    /// The pass will read about this many bytes.
    fn start(&mut self, _total_bytes: u64) {}
    /// This many more bytes were read.
    fn advance(&mut self, _bytes: u64) {}
}

/// A [`Progress`] that shows nothing.
#[derive(Debug, Default)]
pub struct NoProgress;
impl Progress for NoProgress {}

/// The index's writer. Only one exists per data directory at a time.
pub struct Indexer {
    conn: Connection,
    data_dir: PathBuf,
    _lock: WriterLock,
    reader: LineReader,
    bus: Option<Bus>,
    /// Files whose last line is incomplete: where their checkpoint was, and up to where we know there
    /// is no newline after it. A long line arriving in pieces is then searched for its newline piece
    /// by piece and scanned once, not once per piece.
    partial: HashMap<PathBuf, Partial>,
    /// A bulk load under way: what lives for one first catch-up, not for the writer's life.
    load: Option<BulkLoad>,
    /// Where transcripts are hard-linked, so that their bytes outlive them.
    vault: Vault,
    /// Why the vault is off, shared with `status`.
    vault_off: VaultOff,
    /// Files a reader found a payload of changed in: their next pass re-indexes them.
    changed: HashSet<PathBuf>,
    /// The directories followed, each of one format (absolute).
    roots: Vec<Root>,
    /// Sessions a person forgot (the acceptance record's): their lines are passed over in every
    /// transcript, and where that was is kept in `forgotten_in`.
    forgotten_sessions: HashSet<String>,
    /// How much a compressed transcript may decompress to in the data directory.
    scratch_limit: scrollback_core::files::ScratchLimit,
    /// How stored lines are packed, and when a dictionary is trained.
    packing: crate::packing::Packing,
    /// Tests: run once by the next pass between reading the file's first line (its context) and its
    /// lines, as a write by the agent at that instant would.
    #[cfg(test)]
    between_context_and_lines: Option<Box<dyn FnOnce() + Send>>,
    /// Tests: a first catch-up of at least this many bytes is a bulk load (else `BULK_BYTES`).
    #[cfg(test)]
    bulk_from: Option<u64>,
}

impl std::fmt::Debug for Indexer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Indexer").field("data_dir", &self.data_dir).finish_non_exhaustive()
    }
}

impl Indexer {
    /// Opens the index in `data_dir` for writing, creating it if needed. Fails with
    /// [`Error::Locked`] while another process holds it.
    ///
    /// The writer's connection stays inside: readers open their own (`scrollback_read::index::open`).
    /// ```compile_fail
    /// # fn f(indexer: scrollback_index::Indexer) {
    /// let _ = indexer.connection();
    /// # }
    /// ```
    pub fn open(data_dir: &Path) -> Result<Indexer> {
        Indexer::open_locked(data_dir, WriterLock::take(data_dir, "scrollback")?)
    }

    /// [`Indexer::open`] with the data directory's lock already taken (see [`crate::lock`]).
    pub fn open_locked(data_dir: &Path, lock: WriterLock) -> Result<Indexer> {
        scrollback_core::files::keep_private(data_dir, db::DATA_DIR_NAMES).map_err(|e| Error::io(data_dir, e))?;
        let index_path = data_dir.join(db::INDEX_FILE);
        let conn = ConnectionKind::Writer.open(&index_path)?;
        // A bulk load that was interrupted left its indexes and triggers aside: put them back.
        bulk::end(&conn, &index_path, None)?;
        // What the schema's migrations left to Rust.
        crate::migrate::finish(&conn)?;
        // The vault is on until a link fails or `set_vault_off` turns it off.
        conn.execute("DELETE FROM scrollback_meta WHERE key = ?1", [VAULT_OFF_KEY])?;
        let mut indexer = Indexer::with(conn, data_dir, lock)?;
        indexer.vault.probe(&indexer.conn)?;
        // (Not on a rebuild's new index, which names no render yet: `carry_over` sweeps.)
        indexer.vault.sweep_renders(&indexer.conn);
        Ok(indexer)
    }

    /// For `scrollback rebuild`: moves the index aside (renamed `index.sqlite3.rebuilt-<time>`, never
    /// deleted) and opens a new, empty one in its place. Returns it, and where the old file went;
    /// index the transcripts with [`Indexer::catch_up`], then copy what only the old file held with
    /// [`Indexer::carry_over`].
    pub fn open_rebuilt(data_dir: &Path, lock: WriterLock) -> Result<(Indexer, PathBuf)> {
        let index_path = data_dir.join(db::INDEX_FILE);
        if !index_path.exists() {
            return Err(Error::io(
                &index_path,
                std::io::Error::new(std::io::ErrorKind::NotFound, "no index to rebuild here"),
            ));
        }
        let old = db::move_aside(&index_path, "rebuilt")?;
        tracing::warn!(old = %old.display(), "the index was moved aside; building a new one");
        let conn = ConnectionKind::Writer.open(&index_path)?;
        // What was forgotten stays forgotten: its marks first, before any transcript is read.
        let (marks, unreadable) = crate::rebuild::carry_over_forgotten(&conn, &old);
        for what in unreadable {
            tracing::error!("could not read from the old index: {what}; a forgotten session may come back");
        }
        if marks > 0 {
            tracing::info!(marks, "forgotten transcripts stay forgotten");
        }
        let indexer = Indexer::with(conn, data_dir, lock)?;
        Ok((indexer, old))
    }

    /// Copies from the index at `old` the history of every transcript this index has no row for
    /// (see [`crate::rebuild`]).
    pub fn carry_over(&mut self, old: &Path) -> Result<crate::rebuild::CarriedOver> {
        let carried = crate::rebuild::carry_over(&self.conn, old)?;
        // Now the new index names every render it needs: the gone sessions' it carried over, and
        // its own for the sessions still there (the old index's for those are no row's now).
        self.vault.sweep_renders(&self.conn);
        Ok(carried)
    }

    fn with(conn: Connection, data_dir: &Path, lock: WriterLock) -> Result<Indexer> {
        let vault_off = VaultOff::default();
        let packing = crate::packing::Packing::open(&conn)?;
        let vault = Vault::open(vault_dir(data_dir), vault_off.clone());
        Ok(Indexer {
            conn,
            data_dir: data_dir.to_owned(),
            _lock: lock,
            reader: LineReader::new(),
            bus: None,
            partial: HashMap::new(),
            load: None,
            vault,
            vault_off,
            changed: HashSet::new(),
            roots: Vec::new(),
            forgotten_sessions: HashSet::new(),
            scratch_limit: scrollback_core::files::ScratchLimit::from_env(),
            packing,
            #[cfg(test)]
            between_context_and_lines: None,
            #[cfg(test)]
            bulk_from: None,
        })
    }

    /// Keeps no vault links from now on (`--vault off`), saying why in `status`.
    pub fn set_vault_off(&mut self, why: &str) -> Result<()> {
        self.vault = Vault::Off;
        self.vault_off.set(why);
        crate::vault::record_off(&self.conn, why)
    }

    /// Why the vault is off, as this indexer knows it (a handle that follows it from any thread):
    /// what `status` reports when the index could not record it.
    pub fn vault_off(&self) -> VaultOff {
        self.vault_off.clone()
    }

    /// Follows `roots`: a transcript's format is its root's ([`roots::root_of`]); a path under none
    /// of them is the default format's ([`format::DEFAULT`]).
    pub fn set_roots(&mut self, roots: &[Root]) -> Result<()> {
        self.roots = roots
            .iter()
            .map(|r| Ok(Root::new(r.format, std::path::absolute(&r.dir).map_err(|e| Error::io(&r.dir, e))?)))
            .collect::<Result<_>>()?;
        Ok(())
    }

    /// The roots followed.
    pub fn roots(&self) -> &[Root] {
        &self.roots
    }

    /// The format of the transcript (or directory) at `path`: its root's, else the default.
    fn format_of(&self, path: &Path) -> &'static dyn Format {
        roots::root_of(&self.roots, path).map_or(format::DEFAULT, |r| r.format)
    }

    /// Announces every commit on `bus` from now on.
    pub fn set_bus(&mut self, bus: Bus) {
        self.bus = Some(bus);
    }

    /// The bus commits are announced on, if any.
    pub(crate) fn bus(&self) -> Option<Bus> {
        self.bus.clone()
    }

    /// Announces `event`, or keeps it for the commit of the group it was written in.
    fn announce(&mut self, event: Event) {
        if let Some(group) = self.group_mut() {
            group.events.push(event);
            return;
        }
        if let Some(bus) = &self.bus {
            // No receiver is not an error: nobody is listening yet.
            let _ = bus.send(event);
        }
    }
}

/// A bulk load under way (the first catch-up into an empty index, `crate::bulk`): its secondary
/// indexes are set aside while it runs, and it keeps this, which the writer drops at its end.
#[derive(Debug, Default)]
pub(crate) struct BulkLoad {
    /// The full-text index being built alongside, while it can be (a pass it cannot follow drops
    /// it, and the load ends with a rebuild).
    fts: Option<FtsBuild>,
    /// The transaction its passes are written in together, when one is open (see [`Group`]).
    group: Option<Group>,
}

/// A bulk load's passes share one transaction, each in a savepoint of its own (a pass that fails
/// rolls back alone), committed once the group holds [`GROUP_BYTES`] of transcripts or is
/// [`GROUP_SECONDS`] old, and at the load's end. A commit writes every page its transaction changed
/// to the write-ahead log, and a pass of a small file changes a page or two of each of a dozen
/// tables: one commit a file wrote about ten times the index to the log on a tree of 20,000
/// sessions. Nothing is announced before its commit; a crash loses the group's rows with their
/// checkpoints, which the next catch-up reads again. Live passes commit one by one, as before.
#[derive(Debug)]
pub(crate) struct Group {
    started: std::time::Instant,
    bytes: u64,
    events: Vec<Event>,
}

/// A group is committed once its passes have read this many bytes of transcripts...
const GROUP_BYTES: u64 = 64 << 20;
/// ... or once it is this old, so that a first start's viewer sees sessions arrive.
const GROUP_SECONDS: f64 = 1.0;

impl Indexer {
    /// The open group of a bulk load, if any.
    fn group_mut(&mut self) -> Option<&mut Group> {
        self.load.as_mut().and_then(|load| load.group.as_mut())
    }

    /// Whether a group is open.
    pub(crate) fn in_group(&self) -> bool {
        self.load.as_ref().is_some_and(|load| load.group.is_some())
    }

    /// Gives up the bulk load's full-text build, if it has one; whether it had.
    pub(crate) fn drop_fts_build(&mut self) -> bool {
        self.load.as_mut().and_then(|load| load.fts.take()).is_some()
    }

    /// Opens a group if a bulk load is running and none is open.
    pub(crate) fn open_group(&mut self) -> Result<()> {
        if let Some(load) = &mut self.load
            && load.group.is_none()
        {
            self.conn.execute_batch("BEGIN IMMEDIATE")?;
            load.group = Some(Group { started: std::time::Instant::now(), bytes: 0, events: Vec::new() });
        }
        Ok(())
    }

    /// Counts a committed pass's `bytes` into the open group, and commits the group if it is full.
    pub(crate) fn grouped(&mut self, bytes: u64) -> Result<()> {
        let Some(group) = self.group_mut() else { return Ok(()) };
        group.bytes += bytes;
        if group.bytes >= GROUP_BYTES || group.started.elapsed().as_secs_f64() >= GROUP_SECONDS {
            self.close_group()?;
        }
        Ok(())
    }

    /// Commits the open group, if any, then announces what its passes wrote and removes the vault
    /// links no committed row needs. A group that cannot commit is rolled back: its files are read
    /// again by the next catch-up, and the full-text build, which had their lines, is replaced by
    /// a rebuild at the load's end.
    pub(crate) fn close_group(&mut self) -> Result<()> {
        let Some(group) = self.load.as_mut().and_then(|load| load.group.take()) else { return Ok(()) };
        let committed = self.conn.execute_batch("COMMIT");
        if let Err(e) = committed {
            let _ = self.conn.execute_batch("ROLLBACK");
            if self.drop_fts_build() {
                tracing::info!("a bulk load's group did not commit: the full-text index is built at the end");
            }
            self.vault.settle(&self.conn);
            return Err(e.into());
        }
        self.vault.settle(&self.conn);
        for event in group.events {
            self.announce(event);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicU64, Ordering};

    /// The SQLite virtual-machine steps the writer takes to index `path`, counted `every` steps at a
    /// time (a deterministic measure, unlike time).
    fn steps_to_index(indexer: &mut Indexer, path: &Path, every: i32) -> u64 {
        let count = Arc::new(AtomicU64::new(0));
        let c = count.clone();
        indexer
            .conn
            .progress_handler(
                every,
                Some(move || {
                    c.fetch_add(every as u64, Ordering::Relaxed);
                    false
                }),
            )
            .unwrap();
        indexer.index_path(path).unwrap();
        indexer.conn.progress_handler(every, None::<fn() -> bool>).unwrap();
        count.load(Ordering::Relaxed)
    }

    /// A Gemini chat of `turns` turns (the person's message, the answer written twice as it grows),
    /// with a rewind after every fourth turn that undoes the last two, as the CLI writes them; and
    /// the messages it shows.
    fn chat_with_rewinds(turns: usize) -> (String, usize) {
        let line = |v: serde_json::Value| v.to_string() + "\n";
        let mut s = line(
            serde_json::json!({ "sessionId": "rw", "projectHash": "0f", "startTime": "2026-11-30T09:00:00.000Z" }),
        );
        let mut shown = 0;
        for t in 0..turns {
            let ts = format!("2026-11-30T09:{:02}:{:02}.000Z", t / 60 % 60, t % 60);
            s += &line(
                serde_json::json!({ "id": format!("u{t}"), "timestamp": ts, "type": "user", "content": [{ "text": format!("question {t}") }] }),
            );
            s += &line(serde_json::json!({ "id": format!("m{t}"), "timestamp": ts, "type": "gemini", "content": "" }));
            s += &line(
                serde_json::json!({ "id": format!("m{t}"), "timestamp": ts, "type": "gemini", "content": format!("answer {t}") }),
            );
            shown += 2;
            if t % 4 == 3 {
                s += &line(serde_json::json!({ "$rewindTo": format!("u{}", t - 1) }));
                // Two turns undone; the rewind is an entry (a note).
                shown -= 3;
            }
        }
        (s, shown)
    }

    /// Indexes a chat of `turns` turns; the SQLite virtual-machine steps the writer took (a
    /// deterministic measure, unlike time), per line of the chat. Another chat is indexed first, so
    /// that the index's one-off dictionary for stored lines is made before the count.
    fn steps_per_line(turns: usize) -> u64 {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("tmp");
        let chat = root.join("demo/chats/session-2026-11-30T09-00-00000000.jsonl");
        std::fs::create_dir_all(chat.parent().unwrap()).unwrap();
        let (body, shown) = chat_with_rewinds(turns);
        std::fs::write(&chat, &body).unwrap();
        let warm_up = root.join("demo/chats/session-2026-11-29T09-00-00000000.jsonl");
        let (before, _) = chat_with_rewinds(crate::packing::TRAIN_AFTER as usize);
        std::fs::write(&warm_up, before.replace("\"rw\"", "\"warm-up\"")).unwrap();
        let mut indexer = Indexer::open(&dir.path().join("data")).unwrap();
        indexer.set_roots(&[Root::new(format::by_name("gemini").unwrap(), &root)]).unwrap();
        indexer.index_path(&warm_up).unwrap();
        assert!(indexer.packing.current().is_some(), "the dictionary is made");
        let steps = steps_to_index(&mut indexer, &chat, 100);
        let messages: i64 =
            indexer.conn.query_row("SELECT entries FROM sessions WHERE id = 'rw'", [], |r| r.get(0)).unwrap();
        assert_eq!(messages as usize, shown + 1, "the messages the CLI shows, its rewinds, and the metadata line");
        steps / body.lines().count() as u64
    }

    /// Indexes `files` one-line Claude Code transcripts one by one, with the vault on, then one
    /// more; the SQLite virtual-machine steps the writer took for that last one.
    fn steps_for_a_new_file(files: usize) -> u64 {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("projects");
        std::fs::create_dir_all(root.join("p")).unwrap();
        let write = |i: usize| {
            let path = root.join(format!("p/s{i}.jsonl"));
            let line = serde_json::json!({
                "type": "user", "sessionId": format!("s{i}"), "uuid": format!("u{i}"),
                "timestamp": "2026-12-01T10:00:00.000Z", "message": { "role": "user", "content": "hello" },
            });
            std::fs::write(&path, line.to_string() + "\n").unwrap();
            path
        };
        let mut indexer = Indexer::open(&dir.path().join("data")).unwrap();
        indexer.set_roots(&[Root::new(format::DEFAULT, &root)]).unwrap();
        for i in 0..files {
            indexer.index_path(&write(i)).unwrap();
        }
        let last = write(files);
        let vault_links: i64 = indexer.conn.query_row("SELECT count(vault) FROM files", [], |r| r.get(0)).unwrap();
        assert_eq!(vault_links as usize, files, "the vault is on");
        steps_to_index(&mut indexer, &last, 10)
    }

    /// #36: each file new to the index was looked up among every file's row twice (its compressed
    /// twin's or its own row seen gone; whether its new vault link was needed), so a cold index took
    /// time in the square of its files. A new file must cost the same in an index of four times as
    /// many files.
    #[test]
    fn a_new_file_takes_as_many_steps_however_many_files_the_index_holds() {
        let small = steps_for_a_new_file(100);
        let large = steps_for_a_new_file(400);
        eprintln!("steps for a new file: {small} beside 100 files, {large} beside 400");
        assert!(large < small + small / 5, "steps for a new file: {small} beside 100 files, {large} beside 400");
    }

    /// Turn `i` of a Claude Code session `s` begun at `start` (in seconds), seven minutes after the last: a prompt, an answer with
    /// its usage and a call, the call's result (every third one failed), and (every fifth turn) an
    /// answer with no usage, whose response time the next usage line names.
    fn claude_turn(start: i64, i: usize) -> String {
        let at = |m: usize| {
            let t = jiff::Timestamp::from_second(start + (i * 7 * 60 + m) as i64).unwrap();
            t.strftime("%Y-%m-%dT%H:%M:%S.000Z").to_string()
        };
        let base = |kind: &str, n: usize, m: usize, message: serde_json::Value| {
            serde_json::json!({ "type": kind, "sessionId": "s", "uuid": format!("u{i}-{n}"), "timestamp": at(m),
                                "message": message })
            .to_string()
                + "\n"
        };
        let mut out = base("user", 0, 0, serde_json::json!({ "role": "user", "content": format!("question {i}") }));
        if i % 5 == 4 {
            out += &base(
                "assistant",
                1,
                1,
                serde_json::json!({ "role": "assistant", "content": [{ "type": "text", "text": "thinking aloud" }] }),
            );
        }
        let mut answer: serde_json::Value = serde_json::from_str(&base(
            "assistant",
            2,
            2,
            serde_json::json!({ "role": "assistant", "model": if i.is_multiple_of(2) { "claude-sonnet-4-5" } else { "claude-opus-4-1" },
                "id": format!("msg{i}"),
                "content": [{ "type": "text", "text": format!("answer {i}") },
                            { "type": "tool_use", "id": format!("t{i}"), "name": "Bash", "input": { "command": "ls" } }],
                "usage": { "input_tokens": 10, "output_tokens": 5 } }),
        ))
        .unwrap();
        answer["requestId"] = format!("req{i}").into();
        out += &(answer.to_string() + "\n");
        out += &base(
            "user",
            3,
            3,
            serde_json::json!({ "role": "user", "content": [{ "type": "tool_result", "tool_use_id": format!("t{i}"),
                                                           "content": "done", "is_error": i.is_multiple_of(3) }] }),
        );
        out
    }

    /// The overview's sums of the index, each table's rows in order.
    fn sums(conn: &Connection) -> Vec<String> {
        rows_as_text(
            conn,
            &[
                "SELECT session_id, hour, messages, prompts FROM stats_hours ORDER BY 1, 2",
                "SELECT session_id, hour, tool, calls, failures FROM tool_hours ORDER BY 1, 2, 3",
                "SELECT session_id, hour, model, bucket, responses FROM response_hours ORDER BY 1, 2, 3, 4",
            ],
        )
    }

    /// The rows of each of `queries`, in turn, each as its values joined by spaces.
    fn rows_as_text(conn: &Connection, queries: &[&str]) -> Vec<String> {
        let mut out = Vec::new();
        for sql in queries {
            let mut stmt = conn.prepare(sql).unwrap();
            let n = stmt.column_count();
            let rows = stmt
                .query_map([], |r| {
                    Ok((0..n)
                        .map(|i| match r.get_ref(i).unwrap() {
                            rusqlite::types::ValueRef::Text(t) => String::from_utf8_lossy(t).into_owned(),
                            other => format!("{other:?}"),
                        })
                        .collect::<Vec<_>>()
                        .join(" "))
                })
                .unwrap();
            out.extend(rows.map(Result::unwrap));
        }
        out
    }

    /// Indexes a session of `turns` turns, then appends one more; the SQLite virtual-machine steps
    /// the writer took for the append. The session ends at the same time of day whatever its length
    /// (the ledger's sums are made again by day: a day's work is the same).
    fn steps_for_an_appended_turn(turns: usize) -> u64 {
        let start = 1_796_083_200 + 10 * 86_400 - 3_600 - (turns * 7 * 60) as i64;
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("projects");
        std::fs::create_dir_all(root.join("p")).unwrap();
        let path = root.join("p/s.jsonl");
        std::fs::write(&path, (0..turns).map(|i| claude_turn(start, i)).collect::<String>()).unwrap();
        let mut indexer = Indexer::open(&dir.path().join("data")).unwrap();
        indexer.set_roots(&[Root::new(format::DEFAULT, &root)]).unwrap();
        indexer.index_path(&path).unwrap();
        let mut file = std::fs::OpenOptions::new().append(true).open(&path).unwrap();
        std::io::Write::write_all(&mut file, claude_turn(start, turns).as_bytes()).unwrap();
        steps_to_index(&mut indexer, &path, 10)
    }

    /// #55.11: each batch walked its sessions' every entry again for the overview's sums, so a line
    /// appended to a 100,000-entry session cost 78 ms. The walk goes on from where it stopped: a turn
    /// appended to a session of four times the turns costs about the same steps.
    #[test]
    fn a_turn_appended_to_a_long_session_takes_the_steps_of_one_appended_to_a_short_one() {
        let small = steps_for_an_appended_turn(250);
        let large = steps_for_an_appended_turn(1000);
        eprintln!("steps for an appended turn: {small} after 250 turns, {large} after 1000");
        assert!(large < small + small / 4, "steps for an appended turn: {small} after 250 turns, {large} after 1000");
    }

    /// The sums a walk that goes on from where it stopped adds up, batch by batch (prompts, answers
    /// with and without usage, calls and failed results, across hours and models), are those one
    /// walk of the whole session makes, and those a bulk load makes.
    #[test]
    fn sums_added_append_by_append_equal_one_walk_of_the_whole_session() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("projects");
        std::fs::create_dir_all(root.join("p")).unwrap();
        let path = root.join("p/s.jsonl");
        std::fs::write(&path, "").unwrap();
        let mut indexer = Indexer::open(&dir.path().join("data")).unwrap();
        indexer.set_roots(&[Root::new(format::DEFAULT, &root)]).unwrap();
        let mut body = String::new();
        for i in 0..40 {
            // A turn at a time, or a line at a time (a response whose model the next batch names,
            // a call whose result comes later), or a prompt whose answer comes later.
            let turn = claude_turn(1_796_083_200, i);
            let pieces: Vec<String> = match i % 3 {
                1 => turn.lines().map(|l| format!("{l}\n")).collect(),
                2 => {
                    let cut = turn.find('\n').unwrap() + 1;
                    vec![turn[..cut].to_owned(), turn[cut..].to_owned()]
                }
                _ => vec![turn],
            };
            for piece in pieces {
                body += &piece;
                std::fs::write(&path, &body).unwrap();
                indexer.index_path(&path).unwrap();
            }
        }
        let walks: i64 = indexer.conn.query_row("SELECT count(*) FROM stats_walks", [], |r| r.get(0)).unwrap();
        assert_eq!(walks, 1, "where the walk stopped is kept");
        let appended = sums(&indexer.conn);
        assert!(appended.iter().any(|r| r.contains("claude-opus-4-1")), "{appended:?}");
        assert!(appended.iter().any(|r| r.contains("claude-sonnet-4-5")), "{appended:?}");
        let tx = indexer.conn.unchecked_transaction().unwrap();
        crate::stats::restat(&tx, ["s"]).unwrap();
        assert_eq!(sums(&tx), appended, "one walk of the whole session");
        crate::stats::restat_all(&tx).unwrap();
        assert_eq!(sums(&tx), appended, "a bulk load's walk");
    }

    /// Indexes a Gemini chat of `turns` turns (rewinds among them), then appends a turn whose
    /// answer is written twice, as the CLI writes it; the SQLite virtual-machine steps the writer
    /// took for the append.
    fn steps_for_a_gemini_turn(turns: usize) -> u64 {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("tmp");
        let chat = root.join("demo/chats/session-2026-11-30T09-00-00000000.jsonl");
        std::fs::create_dir_all(chat.parent().unwrap()).unwrap();
        let (body, _) = chat_with_rewinds(turns);
        std::fs::write(&chat, &body).unwrap();
        let mut indexer = Indexer::open(&dir.path().join("data")).unwrap();
        indexer.set_roots(&[Root::new(format::by_name("gemini").unwrap(), &root)]).unwrap();
        indexer.index_path(&chat).unwrap();
        let (longer, _) = chat_with_rewinds(turns + 1);
        let turn = &longer[body.len()..];
        assert_eq!(turn.lines().count(), 3, "a question and its answer written twice: {turn}");
        std::io::Write::write_all(&mut std::fs::OpenOptions::new().append(true).open(&chat).unwrap(), turn.as_bytes())
            .unwrap();
        steps_to_index(&mut indexer, &chat, 10)
    }

    /// A Gemini answer written again within the batch that wrote it hides its first write, which
    /// no walk had read: the overview's walk goes on, so a turn appended to a chat of four times the
    /// turns costs about the same steps (before, every such batch walked the whole chat again).
    #[test]
    fn a_gemini_turn_appended_to_a_long_chat_takes_the_steps_of_one_appended_to_a_short_one() {
        let small = steps_for_a_gemini_turn(249);
        let large = steps_for_a_gemini_turn(997);
        eprintln!("steps for an appended Gemini turn: {small} after 249 turns, {large} after 997");
        assert!(
            large < small + small / 4,
            "steps for an appended Gemini turn: {small} after 249 turns, {large} after 997"
        );
    }

    /// The sums of a Gemini chat indexed a few lines at a time (answers written again in the same
    /// batch and in the next, rewinds) are those one walk of the whole chat makes.
    #[test]
    fn a_gemini_chat_s_sums_added_batch_by_batch_equal_one_walk_of_the_whole_chat() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("tmp");
        let chat = root.join("demo/chats/session-2026-11-30T09-00-00000000.jsonl");
        std::fs::create_dir_all(chat.parent().unwrap()).unwrap();
        let (body, _) = chat_with_rewinds(40);
        let mut indexer = Indexer::open(&dir.path().join("data")).unwrap();
        indexer.set_roots(&[Root::new(format::by_name("gemini").unwrap(), &root)]).unwrap();
        let lines: Vec<&str> = body.split_inclusive('\n').collect();
        let mut at = 0;
        for (i, step) in [1, 2, 5, 3].iter().cycle().enumerate() {
            if at >= lines.len() {
                break;
            }
            at = (at + step + i % 2).min(lines.len());
            std::fs::write(&chat, lines[..at].concat()).unwrap();
            indexer.index_path(&chat).unwrap();
        }
        let added = sums(&indexer.conn);
        assert!(!added.is_empty(), "{added:?}");
        let tx = indexer.conn.unchecked_transaction().unwrap();
        crate::stats::restat(&tx, ["rw"]).unwrap();
        assert_eq!(sums(&tx), added, "one walk of the whole chat");
    }

    /// The ledger and its sums as rows of text, in order.
    fn ledger(conn: &Connection) -> Vec<String> {
        rows_as_text(
            conn,
            &[
            // (The standing line by its place: row ids differ between two indexes.)
            "SELECT key, session_id, agent, model, request_id, timestamp, day, tier, input_tokens, output_tokens,
                    cache_read_tokens, cache_write_tokens, cache_write_1h_tokens, reasoning_tokens, lines,
                    (SELECT f.path || ':' || e.line FROM entries e JOIN files f ON f.id = e.file_id WHERE e.id = u.entry_id)
             FROM usage u ORDER BY key",
            "SELECT * FROM usage_sums ORDER BY session_id, day, agent, model, tier, over",
            "SELECT * FROM usage_hours ORDER BY session_id, hour, agent, model, tier, over",
            ],
        )
    }

    /// A bulk load derives the ledger and sums it by day and hour in one pass in memory
    /// (`usage::settle_all`); the live writer derives each key and sums each day in SQL
    /// (`usage::settle`). Over responses stated by several lines, in several files and sessions,
    /// with ties, tiers, long contexts, no model, and times missing or unreadable, both give the
    /// same rows.
    #[test]
    fn a_bulk_load_makes_the_ledger_and_its_sums_the_live_writer_makes() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("projects");
        std::fs::create_dir_all(root.join("p")).unwrap();
        let line = |session: &str,
                    n: usize,
                    id: &str,
                    at: Option<&str>,
                    model: Option<&str>,
                    tier: &str,
                    input: u64,
                    output: u64| {
            let mut message = serde_json::json!({ "role": "assistant", "id": id, "content": [{ "type": "text", "text": format!("answer {n}") }],
                "usage": { "input_tokens": input, "output_tokens": output, "cache_read_input_tokens": n as u64 % 3 * 1000,
                           "cache_creation_input_tokens": 7, "service_tier": tier } });
            if let Some(model) = model {
                message["model"] = model.into();
            }
            let mut line = serde_json::json!({ "type": "assistant", "sessionId": session, "uuid": format!("{session}-{n}"),
                                              "requestId": format!("req-{id}"), "message": message });
            if let Some(at) = at {
                line["timestamp"] = at.into();
            }
            line.to_string() + "\n"
        };
        let mut files: Vec<String> = vec![String::new(); 4];
        for n in 0..120usize {
            let file = n % 4;
            let session = ["a", "b", "c", "a"][file];
            // Responses stated by one to three lines (streamed), some again in another file.
            let id = format!("msg{}", n / 3);
            let at = match n % 11 {
                0 => None,
                1 => Some("yesterday".to_owned()),
                2 => Some("2026-13-45T99:00:00Z".to_owned()),
                _ => Some(format!("2026-0{}-{:02}T{:02}:{:02}:00.000Z", 1 + n % 3, 1 + n % 27, n % 24, n % 60)),
            };
            let model = [Some("claude-opus-4-1"), Some("claude-sonnet-4-5"), None][n % 3];
            let tier = ["standard", "priority", "standard", "batch"][n % 4];
            let input = [10, 150_000, 10, 300_000, 1_200_000][n % 5];
            let output = [5, 5, 40, 0][n % 4];
            files[file] += &line(session, n, &id, at.as_deref(), model, tier, input, output);
        }
        // A long day of one session, one model: each response stated by two lines (streamed, the
        // second with the final count and a later time), so that a third's end may split them.
        files.push(line(
            "d",
            999,
            "first",
            Some("2026-04-02T07:59:00.000Z"),
            Some("claude-opus-4-1"),
            "standard",
            10,
            3,
        ));
        for n in 0..45usize {
            for (part, output) in [(0, 1), (1, 50 + n as u64)] {
                let at = format!("2026-04-02T{:02}:{:02}:{:02}.000Z", 8 + n / 10, n % 60, part * 30);
                files[4] += &line(
                    "d",
                    2 * n + part,
                    &format!("long{n}"),
                    Some(&at),
                    Some("claude-opus-4-1"),
                    "standard",
                    10,
                    output,
                );
            }
        }
        let opus = Some("claude-opus-4-1");
        let d = |n: usize, id: &str, at: &str, output: u64| line("d", n, id, Some(at), opus, "standard", 10, output);
        // Four more of the long day in a file that never changes: between its first and the next,
        // between its later ones, and its last two.
        let fixed = d(1002, "between-first", "2026-04-02T07:59:15.000Z", 9)
            + &d(1003, "between-last", "2026-04-02T11:30:00.000Z", 9)
            + &d(1004, "late", "2026-04-02T22:30:00.000Z", 9)
            + &d(1005, "latest", "2026-04-02T23:00:00.000Z", 9);
        // Then the day's first and last responses stated again, with more output: the first at a
        // later time, the last at an earlier one, each past a response of the file above.
        let (again_first, again_last) =
            (d(1006, "first", "2026-04-02T07:59:30.000Z", 50), d(1007, "latest", "2026-04-02T22:00:00.000Z", 99));
        // Then an earlier first and a later last, with nothing leaving.
        let beyond =
            d(1008, "earliest", "2026-04-02T06:00:00.000Z", 9) + &d(1009, "last", "2026-04-02T23:30:00.000Z", 9);
        // The live writer follows the files as they grow a third at a time, then two of them
        // rewritten in another order, then one cut short, then as they end, then the two files
        // above: each settle moves its sums by what changed. After each step, its ledger and sums
        // are a bulk load's of the files as they are then.
        let bulk = |n: usize| {
            let mut indexer = Indexer::open(&dir.path().join(format!("bulk{n}"))).unwrap();
            indexer.set_roots(&[Root::new(format::DEFAULT, &root)]).unwrap();
            indexer.bulk_from = Some(0);
            indexer.catch_up(&root, &mut NoProgress).unwrap();
            ledger(&indexer.conn)
        };
        let mut indexer = Indexer::open(&dir.path().join("live")).unwrap();
        indexer.set_roots(&[Root::new(format::DEFAULT, &root)]).unwrap();
        let write = |part: &dyn Fn(usize, &str) -> String| {
            for (i, body) in files.iter().enumerate() {
                std::fs::write(root.join(format!("p/s{i}.jsonl")), part(i, body)).unwrap();
            }
        };
        let upto = |body: &str, thirds: usize| {
            let lines: Vec<&str> = body.lines().collect();
            lines[..lines.len() * thirds / 3].iter().map(|l| format!("{l}\n")).collect::<String>()
        };
        std::fs::write(root.join("p/s8.jsonl"), &fixed).unwrap();
        let steps: Vec<Box<dyn Fn()>> = vec![
            Box::new(|| write(&|_, body| upto(body, 1))),
            Box::new(|| write(&|_, body| upto(body, 2))),
            Box::new(|| {
                write(&|i, body| {
                    if i == 1 || i == 4 {
                        body.lines().rev().map(|l| format!("{l}\n")).collect()
                    } else {
                        upto(body, 2)
                    }
                })
            }),
            // The long day without its first and latest responses: its first and last times go, and
            // the other file's times stand for them.
            Box::new(|| {
                write(&|i, body| {
                    if i == 4 { upto(body, 2).split_inclusive('\n').skip(1).collect() } else { body.to_owned() }
                })
            }),
            Box::new(|| write(&|_, body| body.to_owned())),
            Box::new(|| std::fs::write(root.join("p/s9.jsonl"), &again_first).unwrap()),
            Box::new(|| std::fs::write(root.join("p/s11.jsonl"), &again_last).unwrap()),
            Box::new(|| std::fs::write(root.join("p/s10.jsonl"), &beyond).unwrap()),
        ];
        for (n, step) in steps.iter().enumerate() {
            step();
            indexer.catch_up(&root, &mut NoProgress).unwrap();
            let live = ledger(&indexer.conn);
            assert!(live.iter().any(|r| r.contains("priority")), "step {n}: {live:?}");
            assert_eq!(live, bulk(n), "step {n}");
        }
        let live = ledger(&indexer.conn);
        assert!(live.len() > 60 && live.iter().any(|r| r.contains("1000000")), "{} rows: {live:#?}", live.len());
    }

    /// A bulk load commits its passes in groups: one commit a file wrote each file's pages of a dozen
    /// tables to the write-ahead log again, ten times the index on 20,000 sessions. Every file's
    /// lines are still announced, once, and a live pass after the load commits alone.
    #[test]
    fn a_bulk_load_commits_its_files_in_groups_and_announces_each() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("projects");
        std::fs::create_dir_all(root.join("p")).unwrap();
        let files = 60;
        for f in 0..files {
            let body: String = (0..40).map(|i| claude_turn(1_796_083_200 + f * 86_400, i)).collect();
            std::fs::write(
                root.join(format!("p/s{f}.jsonl")),
                body.replace("\"sessionId\":\"s\"", &format!("\"sessionId\":\"s{f}\"")),
            )
            .unwrap();
        }
        let mut indexer = Indexer::open(&dir.path().join("data")).unwrap();
        indexer.set_roots(&[Root::new(format::DEFAULT, &root)]).unwrap();
        indexer.bulk_from = Some(0);
        let bus = crate::events::bus();
        let mut events = bus.subscribe();
        indexer.set_bus(bus);
        let commits = Arc::new(AtomicU64::new(0));
        let c = commits.clone();
        indexer
            .conn
            .commit_hook(Some(move || {
                c.fetch_add(1, Ordering::Relaxed);
                false
            }))
            .unwrap();
        let summary = indexer.catch_up(&root, &mut NoProgress).unwrap();
        assert_eq!(summary.files, files as u64);
        let committed = commits.load(Ordering::Relaxed);
        assert!(committed < files as u64 / 4, "{committed} commits for {files} files");
        let mut announced = HashSet::new();
        while let Ok(event) = events.try_recv() {
            if let Event::EntriesAppended { session_id, .. } = event {
                assert!(announced.insert(session_id), "announced once");
            }
        }
        assert_eq!(announced.len(), files as usize, "{announced:?}");
        // After the load, a pass commits alone.
        let path = root.join("p/s0.jsonl");
        let mut file = std::fs::OpenOptions::new().append(true).open(&path).unwrap();
        std::io::Write::write_all(
            &mut file,
            claude_turn(1_796_083_200, 40).replace("\"sessionId\":\"s\"", "\"sessionId\":\"s0\"").as_bytes(),
        )
        .unwrap();
        let before = commits.load(Ordering::Relaxed);
        indexer.index_path(&path).unwrap();
        assert_eq!(commits.load(Ordering::Relaxed), before + 1);
        assert!(matches!(events.try_recv(), Ok(Event::EntriesAppended { .. })));
    }

    /// A legacy Gemini chat (a JSON document its CLI writes again whole, in place) of `messages`
    /// messages, summed up as `summary`.
    fn legacy_chat(messages: usize, summary: &str) -> String {
        let messages: Vec<_> = (0..messages)
            .map(|i| {
                serde_json::json!({ "id": format!("m{i}"), "timestamp": "2026-03-01T08:00:00.000Z",
                "type": if i % 2 == 0 { "user" } else { "gemini" }, "content": format!("message {i}") })
            })
            .collect();
        serde_json::to_string_pretty(&serde_json::json!({ "sessionId": "5e55a0dd-legacy", "projectHash": "0f",
            "startTime": "2026-03-01T08:00:00.000Z", "messages": messages, "summary": summary }))
        .unwrap()
    }

    /// A chat written again while a pass read it (truncated when the pass read its header, whole
    /// again when it read its messages) was committed with the header of the empty file: its
    /// messages went to a session named after the file, and the chat's own session showed none
    /// until the next write. Such a pass now commits nothing, and the next reads the chat whole.
    #[test]
    fn a_document_written_again_while_a_pass_reads_it_keeps_its_session() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("tmp");
        let chat = root.join("demo/chats/session-2026-03-01T08-00-5e55a0dd.json");
        std::fs::create_dir_all(chat.parent().unwrap()).unwrap();
        std::fs::write(&chat, legacy_chat(2, "Read a logo")).unwrap();
        let mut indexer = Indexer::open(&dir.path().join("data")).unwrap();
        indexer.set_roots(&[Root::new(format::by_name("gemini").unwrap(), &root)]).unwrap();
        indexer.index_path(&chat).unwrap();
        let sessions = |indexer: &Indexer| -> Vec<(String, i64)> {
            indexer
                .conn
                .prepare("SELECT session_id, count(*) FROM entries GROUP BY session_id")
                .unwrap()
                .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
                .unwrap()
                .collect::<rusqlite::Result<_>>()
                .unwrap()
        };
        assert_eq!(sessions(&indexer), [("5e55a0dd-legacy".to_owned(), 2)]);
        // The CLI truncates the file, and writes it whole again while the pass reads.
        std::fs::write(&chat, "").unwrap();
        let again = chat.clone();
        indexer.between_context_and_lines =
            Some(Box::new(move || std::fs::write(again, legacy_chat(4, "Read a logo")).unwrap()));
        indexer.index_path(&chat).unwrap();
        assert_eq!(sessions(&indexer), [("5e55a0dd-legacy".to_owned(), 2)], "nothing committed");
        indexer.index_path(&chat).unwrap();
        assert_eq!(sessions(&indexer), [("5e55a0dd-legacy".to_owned(), 4)], "read again whole, in its session");
    }

    /// A pass of a bulk load sends its lines to the full-text build as it writes them; one that then
    /// committed none (here a chat written again, with a new header, while it was read) left their
    /// words in the full-text index under row ids no entry had, until the next rows took them: the
    /// index no longer matched `entries`. The load now builds it again from `entries`.
    #[test]
    fn a_bulk_load_s_pass_that_commits_nothing_leaves_no_word_in_the_full_text_index() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("tmp");
        let chat = root.join("demo/chats/session-2026-03-01T08-00-5e55a0dd.json");
        std::fs::create_dir_all(chat.parent().unwrap()).unwrap();
        std::fs::write(&chat, legacy_chat(2, "Read a logo")).unwrap();
        let mut indexer = Indexer::open(&dir.path().join("data")).unwrap();
        indexer.set_roots(&[Root::new(format::by_name("gemini").unwrap(), &root)]).unwrap();
        indexer.bulk_from = Some(0);
        let again = chat.clone();
        indexer.between_context_and_lines =
            Some(Box::new(move || std::fs::write(again, legacy_chat(4, "Read two logos")).unwrap()));
        indexer.catch_up(&root, &mut NoProgress).unwrap();
        let count = |indexer: &Indexer, sql: &str| -> i64 { indexer.conn.query_row(sql, [], |r| r.get(0)).unwrap() };
        assert_eq!(count(&indexer, "SELECT count(*) FROM entries"), 0, "nothing committed");
        indexer.index_path(&chat).unwrap();
        assert_eq!(count(&indexer, "SELECT count(*) FROM entries"), 4, "read again whole");
        indexer
            .conn
            .execute("INSERT INTO entries_fts (entries_fts, rank) VALUES ('integrity-check', 1)", [])
            .expect("the full-text index matches entries");
        assert_eq!(count(&indexer, "SELECT count(*) FROM entries_fts WHERE entries_fts MATCH 'message'"), 4);
    }

    /// #39.16: a rewind hid the messages it undoes by scanning every entry of the file, so a chat
    /// with rewinds took time in the square of its length. Four times the chat must cost about four
    /// times the steps, not sixteen.
    #[test]
    fn gemini_rewinds_take_steps_in_proportion_to_the_chat_not_its_square() {
        let small = steps_per_line(300);
        let large = steps_per_line(1200);
        eprintln!("steps per line: {small} for 300 turns, {large} for 1200");
        assert!(large < small + small / 2, "steps per line: {small} for 300 turns, {large} for 1200");
    }

    /// A checkpoint (`$set` of the messages) appended to a chat already indexed hides the messages
    /// before it and stays shown itself, as when the chat is read from its start: the pass that
    /// appends reads what the file's rows hold at its first replay, which must not take the
    /// checkpoint it has just written for one of the messages it replaces.
    #[test]
    fn a_checkpoint_appended_to_a_chat_hides_what_it_replaces_as_one_read_from_the_start_does() {
        let (body, _) = chat_with_rewinds(3);
        let checkpoint = serde_json::json!({ "$set": { "messages": [
            { "id": "c1", "timestamp": "2026-11-30T10:00:00.000Z", "type": "user", "content": [{ "text": "kept" }] }
        ] } })
        .to_string()
            + "\n";
        let entries = |appended: bool| -> Vec<(String, Option<String>, bool)> {
            let dir = tempfile::tempdir().unwrap();
            let root = dir.path().join("tmp");
            let chat = root.join("demo/chats/session-2026-11-30T09-00-00000000.jsonl");
            std::fs::create_dir_all(chat.parent().unwrap()).unwrap();
            std::fs::write(&chat, if appended { body.clone() } else { body.clone() + &checkpoint }).unwrap();
            let mut indexer = Indexer::open(&dir.path().join("data")).unwrap();
            indexer.set_roots(&[Root::new(format::by_name("gemini").unwrap(), &root)]).unwrap();
            indexer.index_path(&chat).unwrap();
            if appended {
                use std::io::Write;
                std::fs::OpenOptions::new().append(true).open(&chat).unwrap().write_all(checkpoint.as_bytes()).unwrap();
                indexer.index_path(&chat).unwrap();
            }
            let mut stmt = indexer
                .conn
                .prepare(
                    "SELECT coalesce(uuid, ''), type, duplicate FROM entries WHERE session_id = 'rw' ORDER BY line",
                )
                .unwrap();
            stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?))).unwrap().map(Result::unwrap).collect()
        };
        let fresh = entries(false);
        let shown: Vec<_> =
            fresh.iter().filter(|(_, _, duplicate)| !duplicate).map(|(_, kind, _)| kind.clone()).collect();
        assert_eq!(
            shown,
            [Some("session".to_owned()), Some("checkpoint".to_owned())],
            "the metadata line and the checkpoint: {fresh:?}"
        );
        assert_eq!(entries(true), fresh);
    }

    #[test]
    fn a_writer_that_opens_removes_the_renders_a_killed_one_left_and_no_link() {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("data");
        drop(Indexer::open(&data).unwrap());
        let vault = data.join("vault");
        std::fs::create_dir_all(&vault).unwrap();
        let being_written = vault.join(".render-a1b2c3");
        let unnamed = vault.join("2049-77-ses_1.18f0a.jsonl");
        let link = vault.join("2049-78.jsonl");
        for file in [&being_written, &unnamed, &link] {
            std::fs::write(file, "{}\n").unwrap();
        }
        let indexer = Indexer::open(&data).unwrap();
        assert!(!being_written.exists() && !unnamed.exists(), "renders no row names");
        assert!(link.exists(), "a link is never removed by a sweep");
        drop(indexer);
    }
}
