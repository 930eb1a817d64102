//! The one writer: reads transcripts from their checkpoints and commits rows and checkpoint together.
//!
//! [`Indexer`] holds the only connection that writes, and a lock file so that a second scrollback
//! process on the same data directory is refused. For each file it first decides (`plan`) from the
//! file's identity (device, inode), its fingerprint and the bytes just before the checkpoint
//! (`fingerprint`) whether to skip it, read on from the checkpoint, or re-index it from the start;
//! then it reads complete lines in batches (`batch`) and commits the new rows (`rows`), the sessions
//! they touch and the new checkpoint in one `BEGIN IMMEDIATE` transaction. A partial last line is left for the next pass. It never
//! deletes the rows of a transcript that disappeared: they are marked gone.

use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::mpsc::Receiver;
use std::time::Instant;

use rusqlite::{Connection, OptionalExtension, Transaction, TransactionBehavior, params};

use crate::ahead::{self, ReadAhead};
use crate::batch::{Batch, Reading, produce};
use crate::bulk::{self, FtsBuild};
use crate::events::{Bus, Event};
use crate::fingerprint::{self, Hashes, hash_range, partial_window, settled_mtime, tail_hash};
use crate::lines::{End, LineReader};
use crate::lock::WriterLock;
use crate::roots::{self, Root};
use crate::rows;
use crate::tree::{self, Found};
use crate::vault::{Linked, VAULT_OFF_KEY, Vault, VaultOff, vault_dir};
use scrollback_core::db::{self, ConnectionKind};
use scrollback_core::error::{Error, Result};
use scrollback_core::format::{self, FileContext, Format};

/// A first catch-up of at least this many bytes is a bulk load (see [`crate::bulk`]).
const BULK_BYTES: u64 = 64 << 20;
/// Reads of at least this many bytes are parsed on a second thread while this one writes.
const PIPELINE_BYTES: u64 = 256 << 10;
/// Partial lines shorter than this are simply read again; the memo is for long ones.
const PARTIAL_MEMO_MIN: u64 = 64 << 10;

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

/// What the index knows of one live file.
#[derive(Debug, Clone)]
struct FileRow {
    id: i64,
    dev: u64,
    inode: u64,
    fingerprint: String,
    fingerprint_len: u64,
    tail_hash: String,
    size: u64,
    mtime_ns: i64,
    checkpoint: u64,
    lines: u64,
}

/// A transcript opened for a pass, with what its metadata said at that moment.
struct Opened {
    path: PathBuf,
    path_str: String,
    /// What is read: the file, or for a compressed one its decompressed bytes ([`Opened::materialize`]).
    file: File,
    dev: u64,
    inode: u64,
    /// The bytes there are to read: the file's size, or its decompressed size once materialized.
    size: u64,
    /// The file's size on disk, which its row records to notice a change without reading it.
    disk_size: u64,
    mtime_ns: i64,
    /// zstd-compressed (see [`scrollback_core::files`]).
    compressed: bool,
    /// `file` holds the decompressed bytes.
    materialized: bool,
}

impl Opened {
    fn open(path: &Path) -> Result<Opened> {
        let path_str = path
            .to_str()
            .ok_or_else(|| Error::io(path, std::io::Error::new(std::io::ErrorKind::InvalidData, "path is not UTF-8")))?
            .to_owned();
        let file = scrollback_core::files::open_regular(path).map_err(|e| Error::io(path, e))?;
        let meta = file.metadata().map_err(|e| Error::io(path, e))?;
        let mtime_ns = meta.mtime().saturating_mul(1_000_000_000).saturating_add(meta.mtime_nsec());
        let compressed = scrollback_core::files::is_compressed(&file).map_err(|e| Error::io(path, e))?;
        Ok(Opened {
            path: path.to_owned(),
            path_str,
            file,
            dev: meta.dev(),
            inode: meta.ino(),
            size: meta.len(),
            disk_size: meta.len(),
            mtime_ns,
            compressed,
            materialized: !compressed,
        })
    }

    /// For a compressed file, decompresses it (once) into an unlinked scratch file in `scratch_dir`,
    /// which is then what is read: every offset is one of the decompressed bytes.
    fn materialize(&mut self, scratch_dir: &Path) -> Result<()> {
        if self.materialized {
            return Ok(());
        }
        let scratch = scrollback_core::files::decompress_to_scratch(&self.file, scratch_dir).map_err(|e| {
            Error::io(&self.path, std::io::Error::new(e.kind(), format!("cannot decompress (zstd): {e}")))
        })?;
        self.size = scratch.metadata().map_err(|e| Error::io(&self.path, e))?.len();
        self.file = scratch;
        self.materialized = true;
        Ok(())
    }

    /// Whether its row says it is as it was last read: same identity, size on disk and settled mtime.
    fn unchanged_since(&self, row: &FileRow) -> bool {
        row.mtime_ns != 0
            && (row.dev, row.inode, row.size, row.mtime_ns) == (self.dev, self.inode, self.disk_size, self.mtime_ns)
    }

    /// The size its row records: the bytes read up to `end`, or for a compressed file (which never
    /// grows in place) its size on disk.
    fn recorded_size(&self, end: &End) -> u64 {
        if self.compressed { self.disk_size } else { end.size }
    }
}

/// Why a known file is read again from its start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reset {
    /// Another inode is at its path.
    Replaced,
    /// It is shorter than its checkpoint.
    Truncated,
    /// Its first bytes changed.
    StartChanged,
    /// The bytes just before its checkpoint changed.
    TailChanged,
    /// A recorded payload no longer matches its bytes (an edit the hashes above do not cover).
    PayloadChanged,
}

impl std::fmt::Display for Reset {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Reset::Replaced => "replaced by another file",
            Reset::Truncated => "truncated",
            Reset::StartChanged => "rewritten (its first bytes changed)",
            Reset::TailChanged => "rewritten (the bytes before the checkpoint changed)",
            Reset::PayloadChanged => "rewritten (a recorded payload no longer matches its bytes)",
        })
    }
}

/// What a pass over one file reads.
#[derive(Debug)]
enum Plan {
    /// Nothing to read: unchanged, or only its incomplete last line grew.
    Skip,
    /// Nothing to read, and its modification time has settled since it was recorded: record it
    /// (`files.id`, the settled mtime, the size), so that later rescans can trust it instead of
    /// reading the file.
    SettleMtime(i64, i64, u64),
    /// A file new to the index, from its start.
    New,
    /// New bytes of a known file, from its checkpoint.
    Append(FileRow),
    /// A known file again from its start (why is logged); its rows are replaced.
    Reindex(FileRow),
}

/// The lines one pass committed for a session, for the event that announces them.
#[derive(Debug, Clone, Copy)]
struct LineRange {
    from: u64,
    to: u64,
}

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
    /// The full-text index being built alongside a bulk load.
    fts: Option<FtsBuild>,
    /// A bulk load is running (its secondary indexes are set aside).
    bulk: bool,
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
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Partial {
    dev: u64,
    inode: u64,
    checkpoint: u64,
    no_newline_until: u64,
    /// [`partial_window`] of `checkpoint..no_newline_until`: the partial line was not edited in
    /// place if it is unchanged.
    window: [u8; 32],
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
        rows::backfill_v4(&conn)?;
        crate::usage::backfill(&conn)?;
        crate::usage::check_sums(&conn)?;
        // The vault is on until a link fails or `set_vault_off` turns it off.
        conn.execute("DELETE FROM scrollback_meta WHERE key = ?1", [VAULT_OFF_KEY])?;
        let mut indexer = Indexer::with(conn, data_dir, lock);
        indexer.vault.probe(&indexer.conn)?;
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
        let indexer = Indexer::with(conn, data_dir, lock);
        Ok((indexer, old))
    }

    /// Copies from the index at `old` the history of every transcript this index has no row for
    /// (see [`crate::rebuild`]).
    pub fn carry_over(&mut self, old: &Path) -> Result<crate::rebuild::CarriedOver> {
        crate::rebuild::carry_over(&self.conn, old)
    }

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
    fn is_forgotten(&self, opened: &Opened) -> Result<bool> {
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

    fn with(conn: Connection, data_dir: &Path, lock: WriterLock) -> Indexer {
        let vault_off = VaultOff::default();
        Indexer {
            conn,
            data_dir: data_dir.to_owned(),
            _lock: lock,
            reader: LineReader::new(),
            bus: None,
            partial: HashMap::new(),
            fts: None,
            bulk: false,
            vault: Vault::open(vault_dir(data_dir), vault_off.clone()),
            vault_off,
            changed: HashSet::new(),
            roots: Vec::new(),
            forgotten_sessions: HashSet::new(),
        }
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

    fn announce(&self, event: Event) {
        if let Some(bus) = &self.bus {
            // No receiver is not an error: nobody is listening yet.
            let _ = bus.send(event);
        }
    }

    /// Brings the index up to date with every transcript under `root`: new bytes of known files,
    /// new files, files rewritten, and files gone.
    pub fn catch_up(&mut self, root: &Path, progress: &mut dyn Progress) -> Result<Summary> {
        let started = Instant::now();
        // Paths are stored absolute, so that media can be read from any working directory.
        let root = &std::path::absolute(root).map_err(|e| Error::io(root, e))?;
        let mut found = tree::discover(root, self.format_of(root));
        // The vault's links are not transcripts, even when the data directory is inside the tree;
        // and a root inside this one is its own (its files are its format's, caught up with it).
        let own = roots::root_of(&self.roots, root).map(|r| r.dir.clone());
        found.retain(|f| {
            !self.vault.holds(&f.path) && roots::root_of(&self.roots, &f.path).map(|r| &r.dir) == own.as_ref()
        });
        let known = self.known_sizes()?;
        let total = found.iter().map(|f| f.size.saturating_sub(known.get(&f.path).copied().unwrap_or(0))).sum();
        progress.start(total);
        let empty: bool = self.conn.query_row("SELECT NOT EXISTS (SELECT 1 FROM entries)", [], |r| r.get(0))?;
        let bulk = empty && total >= BULK_BYTES;
        if bulk {
            bulk::begin(&self.conn)?;
            self.bulk = true;
            self.fts = match FtsBuild::start(&self.conn, &self.data_dir) {
                Ok(fts) => Some(fts),
                Err(e) => {
                    tracing::warn!("cannot build the full-text index alongside; it is built at the end: {e}");
                    None
                }
            };
        }
        let mut summary = Summary::default();
        // Files new to the index are read from their start whatever happens: read them ahead.
        let new_files = found
            .iter()
            .filter(|f| !known.contains_key(&f.path))
            .map(|f| (f.path.clone(), self.format_of(&f.path)))
            .collect();
        std::thread::scope(|scope| {
            let mut ahead = ReadAhead::start(scope, new_files);
            for file in &found {
                match self.index_found(file, progress, ahead.take(&file.path)) {
                    Ok(s) => summary.add(&s),
                    // One unreadable file must not stop the others.
                    Err(e) => {
                        tracing::warn!(path = %file.path.display(), "not indexed: {e}");
                        summary.failed += 1;
                    }
                }
            }
        });
        if bulk {
            self.bulk = false;
            bulk::end(&self.conn, &self.data_dir.join(db::INDEX_FILE), self.fts.take())?;
        }
        let seen: HashSet<&Path> = found.iter().map(|f| f.path.as_path()).collect();
        summary.gone += self.mark_gone_under(root, &seen)?;
        summary.seconds = started.elapsed().as_secs_f64();
        Ok(summary)
    }

    /// Indexes one file's new bytes (or all of it, if it was rewritten). A path that no longer exists
    /// is marked gone.
    pub fn index_path(&mut self, path: &Path) -> Result<Summary> {
        let path = &std::path::absolute(path).map_err(|e| Error::io(path, e))?;
        if self.vault.holds(path) {
            return Ok(Summary::default());
        }
        match std::fs::metadata(path) {
            Ok(meta) if meta.is_file() && !self.format_of(path).is_transcript(path) => Ok(Summary::default()),
            // The plain twin beside it is the one read.
            Ok(_) if tree::hidden_by_plain_twin(self.format_of(path), path) => Ok(Summary::default()),
            Ok(meta) if meta.is_file() => {
                let found = Found { path: path.to_owned(), dev: meta.dev(), inode: meta.ino(), size: meta.len() };
                self.index_found(&found, &mut NoProgress, None)
            }
            Ok(_) => Ok(Summary::default()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                // One name of a file with several (hard links) went: the file is not gone, and its
                // row moves to a name it still has.
                if let Some(other) = self.other_name(path)? {
                    tracing::info!(path = %path.display(), other = %other.display(), "a name of the transcript was removed; its rows follow its other name");
                    self.partial.remove(path);
                    self.conn.execute(
                        "UPDATE files SET path = ?2 WHERE path = ?1 AND state = 'live'",
                        params![path.to_str(), other.to_str()],
                    )?;
                    return self.index_path(&other);
                }
                // Compressed or decompressed, it is there under its other name: its row moves there.
                let mut moved = Summary::default();
                if let Some(twin) = self.format_of(path).twin(path).map(|t| t.path).filter(|t| t.is_file()) {
                    moved = self.index_path(&twin)?;
                }
                let gone = self.mark_gone(path)?;
                if !gone {
                    return Ok(moved);
                }
                Ok(Summary { gone: gone as u64, ..Summary::default() })
            }
            Err(e) => Err(Error::io(path, e)),
        }
    }

    /// Re-indexes one file from the start: a reader found that a payload recorded in it no longer
    /// matches its bytes, an edit its fingerprint and tail hash may not show.
    pub fn reindex_path(&mut self, path: &Path) -> Result<Summary> {
        let path = std::path::absolute(path).map_err(|e| Error::io(path, e))?;
        self.changed.insert(path.clone());
        let summary = self.index_path(&path);
        self.changed.remove(&path);
        summary
    }

    fn known_sizes(&self) -> Result<HashMap<PathBuf, u64>> {
        let mut stmt = self.conn.prepare("SELECT path, checkpoint FROM files WHERE state = 'live'")?;
        let rows = stmt.query_map([], |r| Ok((PathBuf::from(r.get::<_, String>(0)?), r.get::<_, i64>(1)? as u64)))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    fn file_row(&self, path: &str) -> Result<Option<FileRow>> {
        Ok(self
            .conn
            .query_row(
                "SELECT id, dev, inode, fingerprint, fingerprint_len, tail_hash, size, mtime_ns, checkpoint, lines
                 FROM files WHERE path = ?1 AND state = 'live'",
                [path],
                |r| {
                    Ok(FileRow {
                        id: r.get(0)?,
                        dev: r.get::<_, i64>(1)? as u64,
                        inode: r.get::<_, i64>(2)? as u64,
                        fingerprint: r.get(3)?,
                        fingerprint_len: r.get::<_, i64>(4)? as u64,
                        tail_hash: r.get(5)?,
                        size: r.get::<_, i64>(6)? as u64,
                        mtime_ns: r.get(7)?,
                        checkpoint: r.get::<_, i64>(8)? as u64,
                        lines: r.get::<_, i64>(9)? as u64,
                    })
                },
            )
            .optional()?)
    }

    /// One pass over one file: decide, then read and write what the decision says.
    fn index_found(
        &mut self,
        found: &Found,
        progress: &mut dyn Progress,
        ahead: Option<Receiver<ahead::Msg>>,
    ) -> Result<Summary> {
        let result = self.index_found_unsettled(found, progress, ahead);
        // Committed or rolled back, links no row refers to now go (see `Vault::settle`).
        self.vault.settle(&self.conn);
        result
    }

    fn index_found_unsettled(
        &mut self,
        found: &Found,
        progress: &mut dyn Progress,
        ahead: Option<Receiver<ahead::Msg>>,
    ) -> Result<Summary> {
        let mut opened = Opened::open(&found.path)?;
        let mut row = self.file_row(&opened.path_str)?;
        if opened.compressed
            && row.as_ref().is_some_and(|r| opened.unchanged_since(r))
            && !self.changed.contains(&opened.path)
        {
            // Not touched since it was read: not decompressed again.
            return Ok(Summary::default());
        }
        opened.materialize(&self.data_dir)?;
        if row.is_none() {
            match self.same_file_elsewhere(&opened)? {
                Elsewhere::HardLink(other) => {
                    // One file, indexed once, under the path it was first found at.
                    tracing::debug!(path = %opened.path.display(), other = %other, "a hard link to a file already indexed");
                    return self.index_path(Path::new(&other));
                }
                Elsewhere::Renamed(id) => {
                    tracing::info!(path = %opened.path.display(), "transcript was renamed; its rows follow it");
                    self.conn.execute("UPDATE files SET path = ?2 WHERE id = ?1", params![id, opened.path_str])?;
                    row = self.file_row(&opened.path_str)?;
                }
                Elsewhere::Returned(id) => {
                    tracing::info!(path = %opened.path.display(), "transcript is back; it takes its old rows back");
                    self.conn.execute(
                        "UPDATE files SET path = ?2, state = 'live', gone_at = NULL WHERE id = ?1",
                        params![id, opened.path_str],
                    )?;
                    row = self.file_row(&opened.path_str)?;
                }
                Elsewhere::Nowhere => match self.compressed_twin_of(&opened)? {
                    Twin::Moved(id) => {
                        row = self.file_row(&opened.path_str)?;
                        tracing::info!(path = %opened.path.display(), file_id = id, compressed = opened.compressed,
                            "the same transcript, compressed or decompressed; its rows follow it");
                    }
                    Twin::Unfinished => return Ok(Summary::default()),
                    Twin::None => {}
                },
            }
        }
        if row.is_none() && self.is_forgotten(&opened)? {
            return Ok(Summary::default());
        }
        match self.plan(&opened, row)? {
            Plan::Skip => Ok(Summary::default()),
            Plan::SettleMtime(id, mtime_ns, size) => {
                self.conn.execute(
                    "UPDATE files SET mtime_ns = ?2, size = ?3 WHERE id = ?1",
                    params![id, mtime_ns, size as i64],
                )?;
                Ok(Summary::default())
            }
            plan => self.read_and_commit(&opened, plan, progress, ahead),
        }
    }

    /// Decides what a pass over `opened` reads (it writes nothing; a long incomplete last line is
    /// remembered, in memory, on the way).
    fn plan(&mut self, opened: &Opened, row: Option<FileRow>) -> Result<Plan> {
        let Opened { path, file, dev, inode, size, mtime_ns, .. } = opened;
        let (dev, inode, size, mtime_ns) = (*dev, *inode, *size, *mtime_ns);
        let Some(row) = row else { return Ok(Plan::New) };
        if opened.unchanged_since(&row) && !self.changed.contains(path) {
            // Not touched since it was last read: nothing to hash, nothing to read.
            return Ok(Plan::Skip);
        }
        let reset = if (row.dev, row.inode) != (dev, inode) {
            Some(Reset::Replaced)
        } else if self.changed.contains(path) {
            Some(Reset::PayloadChanged)
        } else if size < row.checkpoint {
            Some(Reset::Truncated)
        } else if hash_range(file, path, 0, row.fingerprint_len)? != row.fingerprint {
            Some(Reset::StartChanged)
        } else if tail_hash(file, path, row.checkpoint)? != row.tail_hash {
            Some(Reset::TailChanged)
        } else {
            None
        };
        if let Some(reset) = reset {
            tracing::info!(path = %path.display(), "re-indexing from the start: {reset}");
            return Ok(Plan::Reindex(row));
        }
        if size == row.checkpoint {
            // Unchanged, as its bytes show. Once its mtime has settled, record it, so that later
            // rescans can trust the mtime instead of reading the file.
            let settled = settled_mtime(mtime_ns);
            if (row.mtime_ns != settled || row.size != opened.disk_size) && settled != 0 {
                return Ok(Plan::SettleMtime(row.id, settled, opened.disk_size));
            }
            return Ok(Plan::Skip);
        }
        if let Some(known) = self.partial.get(path).copied()
            && (known.dev, known.inode, known.checkpoint) == (dev, inode, row.checkpoint)
            && known.no_newline_until <= size
            && partial_window(file, path, known.checkpoint, known.no_newline_until)? == known.window
            && !fingerprint::has_newline(file, path, known.no_newline_until, size)?
        {
            // Only the incomplete last line grew, and still has no newline.
            let window = partial_window(file, path, known.checkpoint, size)?;
            self.partial.insert(path.clone(), Partial { no_newline_until: size, window, ..known });
            return Ok(Plan::Skip);
        }
        Ok(Plan::Append(row))
    }

    /// Reads what `plan` says and commits rows and checkpoint in one transaction: a re-index
    /// replaces the old rows atomically, and rows are written in batches as lines are read, so
    /// memory stays bounded however long the file.
    fn read_and_commit(
        &mut self,
        opened: &Opened,
        plan: Plan,
        progress: &mut dyn Progress,
        ahead: Option<Receiver<ahead::Msg>>,
    ) -> Result<Summary> {
        let path = &opened.path;
        let (start, lines_before) = match &plan {
            Plan::Append(row) => (row.checkpoint, row.lines),
            _ => (0, 0),
        };
        if matches!(plan, Plan::Reindex(..)) && self.fts.take().is_some() {
            // Rows are about to be deleted, which the scratch full-text build does not follow.
            tracing::info!("a file is re-indexed during the bulk load: the full-text index is built at the end");
        }
        // What was read ahead is of use if it is this file, read from its start.
        let ahead = ahead.filter(|_| matches!(plan, Plan::New)).filter(|receive| {
            matches!(receive.recv(), Ok(ahead::Msg::Opened { dev, inode }) if (dev, inode) == (opened.dev, opened.inode))
        });
        let format = self.format_of(path);
        let context = crate::lines::file_context(format, &opened.file, path);
        let file_session = context.session.as_str();
        let Indexer { conn, reader, fts, bulk, vault, forgotten_sessions, .. } = self;
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let file_id = start_pass(&tx, &plan, opened, file_session, format, *bulk, vault)?;
        let mut summary = Summary::default();
        let mut touched: HashMap<String, LineRange> = HashMap::new();
        let mut write = |mut batch: Batch| -> Result<()> {
            progress.advance(batch.advance);
            summary.bytes += batch.advance;
            if !forgotten_sessions.is_empty() {
                crate::forget::pass_over(&tx, file_id, file_session, forgotten_sessions, &mut batch.lines)?;
            }
            for d in &batch.lines {
                let range =
                    touched.entry(d.session(file_session).to_owned()).or_insert(LineRange { from: d.line, to: d.line });
                (range.from, range.to) = (range.from.min(d.line), range.to.max(d.line));
            }
            let file = rows::FileRows { id: file_id, path, session: file_session, format, bulk: *bulk };
            let written = rows::write_entries(&tx, file, &batch.lines, fts.is_some())?;
            summary.lines += written.lines;
            summary.media += written.media;
            summary.invalid += written.invalid;
            if let Some(fts) = fts {
                // The lines go to the full-text thread, which also frees them, off this one. A
                // stopped build is noticed, and replaced by a rebuild, at the end of the load.
                fts.add(written.ids, batch.lines);
            }
            Ok(())
        };
        let source = Source { reader, opened, format, context: &context, start, lines_before, ahead };
        let (end, read_hashes) = source.read(&mut write)?;
        if end.checkpoint == start && matches!(plan, Plan::Append(_)) {
            // Nothing complete was added: leave the file as it is.
            return Ok(Summary { bytes: summary.bytes, ..Summary::default() });
        }
        let hashes = match read_hashes {
            Some(hashes) => hashes,
            None => Hashes::of(&opened.file, path, &end)?,
        };
        record_checkpoint(&tx, file_id, opened, &end, &hashes)?;
        tx.commit()?;
        self.remember_partial(opened, &end)?;
        let reset = matches!(plan, Plan::Reindex(..));
        for (session_id, LineRange { from, to }) in touched {
            self.announce(Event::EntriesAppended {
                session_id,
                file_id,
                from_line: from,
                to_line: to,
                replaced: reset,
            });
        }
        summary.files = 1;
        summary.reindexed = reset as u64;
        tracing::debug!(path = %path.display(), from = start, to = end.checkpoint, lines = summary.lines, "indexed");
        Ok(summary)
    }

    /// Remembers a long incomplete last line, so that the next pass looks only at its new bytes.
    fn remember_partial(&mut self, opened: &Opened, end: &End) -> Result<()> {
        if end.size - end.checkpoint >= PARTIAL_MEMO_MIN {
            let partial = Partial {
                dev: opened.dev,
                inode: opened.inode,
                checkpoint: end.checkpoint,
                no_newline_until: end.size,
                window: partial_window(&opened.file, &opened.path, end.checkpoint, end.size)?,
            };
            self.partial.insert(opened.path.clone(), partial);
        } else {
            self.partial.remove(&opened.path);
        }
        Ok(())
    }

    /// Marks every live file under `root` that is not in `seen` as gone.
    fn mark_gone_under(&mut self, root: &Path, seen: &HashSet<&Path>) -> Result<u64> {
        let mut stmt = self.conn.prepare("SELECT path FROM files WHERE state = 'live'")?;
        let live: Vec<String> = stmt.query_map([], |r| r.get(0))?.collect::<rusqlite::Result<_>>()?;
        drop(stmt);
        let mut gone = 0;
        for path in live {
            let path = PathBuf::from(path);
            if path.starts_with(root) && !seen.contains(path.as_path()) && !path.is_file() {
                gone += self.mark_gone(&path)? as u64;
            }
        }
        Ok(gone)
    }

    /// Another name, under the same root, of the live file whose row is at `path` (now removed): a
    /// hard link. With the vault on, its link's count of names says first whether there can be one.
    fn other_name(&self, path: &Path) -> Result<Option<PathBuf>> {
        let Some(path_str) = path.to_str() else { return Ok(None) };
        let row: Option<(i64, i64, Option<String>)> = self
            .conn
            .query_row("SELECT dev, inode, vault FROM files WHERE path = ?1 AND state = 'live'", [path_str], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?))
            })
            .optional()?;
        let Some((dev, inode, vault)) = row else { return Ok(None) };
        if let Some(meta) = vault.and_then(|v| std::fs::symlink_metadata(v).ok())
            && (meta.dev(), meta.ino()) == (dev as u64, inode as u64)
            && meta.nlink() < 2
        {
            return Ok(None);
        }
        let Some(root) = roots::root_of(&self.roots, path) else { return Ok(None) };
        Ok(tree::discover(&root.dir, root.format)
            .into_iter()
            .find(|f| (f.dev, f.inode) == (dev as u64, inode as u64) && f.path != path && !self.vault.holds(&f.path))
            .map(|f| f.path))
    }

    /// Marks the live file at `path` gone, keeping its rows. Returns whether there was one.
    pub fn mark_gone(&mut self, path: &Path) -> Result<bool> {
        let Some(path_str) = path.to_str() else {
            return Ok(false);
        };
        self.partial.remove(path);
        let gone: Option<(i64, String)> = self
            .conn
            .query_row(
                "UPDATE files SET state = 'gone', gone_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
                 WHERE path = ?1 AND state = 'live' RETURNING id, session_id",
                [path_str],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()?;
        let Some((file_id, session_id)) = gone else {
            return Ok(false);
        };
        tracing::info!(path = %path.display(), "transcript is gone; its history is kept");
        self.announce(Event::SessionGone { session_id, file_id });
        Ok(true)
    }

    /// Whether `opened`, a path new to the index, is a transcript it knows under its compressed
    /// twin's name (as its format pairs names, [`Format::twin`]: Codex's `X.jsonl` for
    /// `X.jsonl.zst`, and back): a row at that path, live or gone (or one at this path marked gone,
    /// when the transcript went and came back while nobody looked), whose recorded bytes this
    /// file's (decompressed) bytes begin with, checked as a pass checks a known file (the same
    /// first bytes, and the same bytes before the checkpoint). The row then moves to this path and
    /// identity, with a vault link to this file, in one transaction, and nothing is read again.
    ///
    /// A file shorter than that checkpoint while its twin still exists is taken as being written
    /// (the agent writes each name whole, but a copy by hand need not): it is left for the next pass,
    /// and read as a transcript of its own only if it still differs once its twin is gone.
    fn compressed_twin_of(&mut self, opened: &Opened) -> Result<Twin> {
        // A format with no twins still looks for this name's own row marked gone.
        let twin_path = self.format_of(&opened.path).twin(&opened.path).map(|t| t.path);
        let twin = match &twin_path {
            Some(t) => match t.to_str() {
                Some(t) => Some(t.to_owned()),
                None => return Ok(Twin::None),
            },
            None => None,
        };
        // The twin's row; or this name's own row marked gone, when the transcript went to its twin
        // and came back before the row could follow it (the server was down meanwhile).
        let mut stmt = self.conn.prepare_cached(
            "SELECT id, fingerprint, fingerprint_len, tail_hash, checkpoint FROM files
             WHERE path = ?1 OR (path = ?2 AND state = 'gone') ORDER BY state = 'live' DESC, id DESC",
        )?;
        let candidates: Vec<(i64, String, i64, String, i64)> = stmt
            .query_map(params![twin, opened.path_str], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)))?
            .collect::<rusqlite::Result<_>>()?;
        drop(stmt);
        let (file, path) = (&opened.file, &opened.path);
        let mut same = None;
        for (id, fingerprint, fingerprint_len, tail, checkpoint) in candidates {
            // Its twin still there, or gone just now while this file grew past what was opened:
            // being written.
            let grew = || std::fs::metadata(path).is_ok_and(|m| m.len() != opened.disk_size);
            if opened.size < checkpoint as u64 && (twin_path.as_ref().is_some_and(|t| t.is_file()) || grew()) {
                tracing::debug!(path = %path.display(), twin = ?twin, "shorter than its twin: still being written");
                return Ok(Twin::Unfinished);
            }
            if opened.size >= checkpoint as u64
                && hash_range(file, path, 0, fingerprint_len as u64)? == fingerprint
                && tail_hash(file, path, checkpoint as u64)? == tail
            {
                same = Some(id);
                break;
            }
        }
        let Some(id) = same else { return Ok(Twin::None) };
        let Indexer { conn, vault, partial, .. } = self;
        if let Some(twin) = &twin_path {
            partial.remove(twin.as_path());
        }
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        tx.execute(
            "UPDATE files SET path = ?2, dev = ?3, inode = ?4, state = 'live', gone_at = NULL WHERE id = ?1",
            params![id, opened.path_str, opened.dev as i64, opened.inode as i64],
        )?;
        vault.link(&tx, id, &Linked { path, dev: opened.dev, inode: opened.inode })?;
        tx.commit()?;
        Ok(Twin::Moved(id))
    }

    /// Whether a path new to the index is a file it already knows under another name.
    ///
    /// A row whose path no longer holds this inode is taken as renamed only if this file still starts
    /// with the bytes that row fingerprinted: an inode freed by a deleted transcript and handed to an
    /// unrelated new file must not take over (and re-index away) the deleted one's history.
    fn same_file_elsewhere(&self, opened: &Opened) -> Result<Elsewhere> {
        let Opened { file, path, path_str, dev, inode, .. } = opened;
        let mut stmt = self.conn.prepare_cached(
            "SELECT id, path, fingerprint, fingerprint_len FROM files
             WHERE dev = ?1 AND inode = ?2 AND state = 'live' AND path != ?3",
        )?;
        let others: Vec<(i64, String, String, i64)> = stmt
            .query_map(params![*dev as i64, *inode as i64, path_str], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
            })?
            .collect::<rusqlite::Result<_>>()?;
        let mut renamed = None;
        for (id, other, fingerprint, fingerprint_len) in others {
            match std::fs::metadata(&other) {
                Ok(meta) if (meta.dev(), meta.ino()) == (*dev, *inode) => {
                    return Ok(Elsewhere::HardLink(other));
                }
                _ if renamed.is_none() && hash_range(file, path, 0, fingerprint_len as u64)? == fingerprint => {
                    renamed = Some(id);
                }
                _ => {}
            }
        }
        if let Some(id) = renamed {
            return Ok(Elsewhere::Renamed(id));
        }
        // A transcript seen gone that came back (moved away and back, its directory unreadable for
        // a moment): the same file, by identity and first bytes, takes its old row back rather
        // than starting a second copy of its history beside it.
        let mut stmt = self.conn.prepare_cached(
            "SELECT id, fingerprint, fingerprint_len FROM files
             WHERE dev = ?1 AND inode = ?2 AND state = 'gone' ORDER BY id DESC",
        )?;
        let gone: Vec<(i64, String, i64)> = stmt
            .query_map(params![*dev as i64, *inode as i64], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
            .collect::<rusqlite::Result<_>>()?;
        for (id, fingerprint, fingerprint_len) in gone {
            if hash_range(file, path, 0, fingerprint_len as u64)? == fingerprint {
                return Ok(Elsewhere::Returned(id));
            }
        }
        Ok(Elsewhere::Nowhere)
    }
}

/// A new path's file and the row of its compressed twin's name.
enum Twin {
    /// The same transcript: the row moved to it.
    Moved(i64),
    /// Shorter than what the row read, while the twin is still there: being written.
    Unfinished,
    /// No such row, or another transcript.
    None,
}

/// A new path's file, known under another path.
enum Elsewhere {
    /// The other path is the same file still (a hard link): index it once.
    HardLink(String),
    /// The other path is no longer this file: it was renamed, and its row moves.
    Renamed(i64),
    /// A row marked gone is this file, back: the row is live again, at this path.
    Returned(i64),
    Nowhere,
}

/// Where a pass's batches come from: the read-ahead worker that already read the file, a reading
/// thread beside this one for a long read, or this thread.
struct Source<'a> {
    reader: &'a mut LineReader,
    opened: &'a Opened,
    format: &'static dyn Format,
    context: &'a FileContext,
    start: u64,
    lines_before: u64,
    ahead: Option<Receiver<ahead::Msg>>,
}

impl Source<'_> {
    /// Hands every batch to `write`; returns where reading stopped and, when the reader took them
    /// right after reading, the hashes of the bytes read.
    fn read(self, write: &mut dyn FnMut(Batch) -> Result<()>) -> Result<(End, Option<Hashes>)> {
        let Source { reader, opened, format, context, start, lines_before, ahead } = self;
        let (file, path) = (&opened.file, opened.path.as_path());
        if let Some(receive) = ahead {
            for msg in receive.iter() {
                match msg {
                    ahead::Msg::Batch(batch) => write(batch)?,
                    ahead::Msg::Done(done) => {
                        let (end, hashes) = done?;
                        return Ok((end, Some(hashes)));
                    }
                    ahead::Msg::Opened { .. } => {}
                }
            }
            return Err(Error::io(path, std::io::Error::other("reading ahead stopped")));
        }
        if opened.size.saturating_sub(start) < PIPELINE_BYTES {
            let reading = Reading { format, context };
            return Ok((produce(reader, file, path, reading, start, lines_before, write)?, None));
        }
        // Two threads: this one writes to SQLite while a scoped one reads and parses ahead.
        std::thread::scope(|scope| {
            let (send, receive) = std::sync::mpsc::sync_channel::<Batch>(4);
            let producer = scope.spawn(move || {
                produce(reader, file, path, Reading { format, context }, start, lines_before, |batch| {
                    // A closed channel means the writer failed; its error is the one reported.
                    send.send(batch).map_err(|_| Error::io(path, std::io::Error::other("writer stopped")))
                })
            });
            let written = receive.iter().try_for_each(&mut *write);
            drop(receive);
            let end = producer.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            Ok((written.and(end)?, None))
        })
    }
}

/// Opens a pass in `tx`: the file's row (a new one, or the old one with its rows deleted for a
/// re-index), and its vault link, made before the rows' first commit and again whenever the file is
/// read from its start (it may be another inode now, which the old link no longer is). The row's id.
fn start_pass(
    tx: &Transaction<'_>,
    plan: &Plan,
    opened: &Opened,
    file_session: &str,
    format: &dyn Format,
    bulk: bool,
    vault: &mut Vault,
) -> Result<i64> {
    let file_id = match plan {
        Plan::New => insert_file_row(tx, opened, file_session, format)?,
        Plan::Reindex(row) => {
            rows::delete_file_rows(tx, row.id, bulk)?;
            tx.execute("UPDATE files SET generation = generation + 1 WHERE id = ?1", [row.id])?;
            row.id
        }
        Plan::Append(row) => row.id,
        Plan::Skip | Plan::SettleMtime(..) => unreachable!("a skipped file is not read"),
    };
    if matches!(plan, Plan::New | Plan::Reindex(..)) {
        vault.link(tx, file_id, &Linked { path: &opened.path, dev: opened.dev, inode: opened.inode })?;
    }
    Ok(file_id)
}

/// A new file's row, before its lines: the checkpoint and hashes are set when they commit.
fn insert_file_row(tx: &Transaction<'_>, opened: &Opened, file_session: &str, format: &dyn Format) -> Result<i64> {
    tx.execute(
        "INSERT INTO files (path, session_id, dev, inode, fingerprint, fingerprint_len, tail_hash,
                            size, mtime_ns, checkpoint, lines, state, indexed_at, agent)
         VALUES (?1, ?2, ?3, ?4, '', 0, '', 0, 0, 0, 0, 'live', strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), ?5)",
        params![opened.path_str, file_session, opened.dev as i64, opened.inode as i64, format.name()],
    )?;
    Ok(tx.last_insert_rowid())
}

/// Moves a file's checkpoint to `end`, with the hashes of the bytes read, in the rows' transaction.
fn record_checkpoint(tx: &Transaction<'_>, file_id: i64, opened: &Opened, end: &End, hashes: &Hashes) -> Result<()> {
    tx.execute(
        "UPDATE files SET dev = ?2, inode = ?3, fingerprint = ?4, fingerprint_len = ?5, tail_hash = ?6,
                          size = ?7, checkpoint = ?8, lines = ?9, mtime_ns = ?10,
                          indexed_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
         WHERE id = ?1",
        params![
            file_id,
            opened.dev as i64,
            opened.inode as i64,
            hashes.fingerprint,
            hashes.fingerprint_len as i64,
            hashes.tail,
            opened.recorded_size(end) as i64,
            end.checkpoint as i64,
            end.lines as i64,
            settled_mtime(opened.mtime_ns),
        ],
    )?;
    Ok(())
}
