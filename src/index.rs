//! The one writer: reads transcripts from their checkpoints and commits rows and checkpoint together.
//!
//! [`Indexer`] holds the only connection that writes, and a lock file so that a second scrollback
//! process on the same data directory is refused. For each file it decides from the file's identity
//! (device, inode), its fingerprint (blake3 of the first bytes) and the bytes just before the
//! checkpoint whether to read on from the checkpoint or to re-index from the start; then it reads
//! complete lines in bounded memory ([`crate::lines`]), and commits the new rows, the sessions they
//! touch and the new checkpoint in one `BEGIN IMMEDIATE` transaction. A partial last line is left for
//! the next pass. It never deletes the rows of a transcript that disappeared: they are marked gone.

use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::sync::mpsc::Receiver;
use std::time::Instant;

use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};

use crate::ahead::{self, ReadAhead};
use crate::bulk::{self, FtsBuild};
use crate::db;
use crate::entry::{self, Described};
use crate::error::{Error, Result};
use crate::events::{Bus, Event};
use crate::lines::{End, Line, LineReader};
use crate::tree::{self, Found};

/// How many leading bytes of a file its fingerprint covers (fewer while the file is shorter).
pub const FINGERPRINT_LEN: u64 = 4096;
/// How many bytes just before the checkpoint are hashed to notice a rewrite that kept the start.
pub const TAIL_LEN: u64 = 256;
/// How long opening waits for the data directory's lock before saying another process holds it.
const LOCK_WAIT: std::time::Duration = std::time::Duration::from_secs(1);
/// A first catch-up of at least this many bytes is a bulk load (see [`crate::bulk`]).
const BULK_BYTES: u64 = 64 << 20;
/// How long a file must have been quiet for its mtime to be trusted (see [`settled_mtime`]).
const SETTLED: std::time::Duration = std::time::Duration::from_secs(2);
/// Reads of at least this many bytes are parsed on a second thread while this one writes.
const PIPELINE_BYTES: u64 = 256 << 10;
/// Lines written to SQLite at a time within a file's transaction.
const BATCH_LINES: usize = 256;
/// Stored bytes written to SQLite at a time within a file's transaction.
const BATCH_BYTES: usize = 2 << 20;

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
    /// Wall time of the pass.
    pub seconds: f64,
}

impl Summary {
    fn add(&mut self, other: &Summary) {
        self.files += other.files;
        self.lines += other.lines;
        self.media += other.media;
        self.invalid += other.invalid;
        self.bytes += other.bytes;
        self.reindexed += other.reindexed;
        self.gone += other.gone;
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

/// The index's writer. Only one exists per data directory at a time.
pub struct Indexer {
    conn: Connection,
    data_dir: PathBuf,
    _lock: File,
    reader: LineReader,
    bus: Option<Bus>,
    /// Files whose last line is incomplete: where their checkpoint was, and up to where we know there
    /// is no newline after it. A long line arriving in pieces is then searched for its newline piece
    /// by piece and scanned once, not once per piece.
    partial: HashMap<PathBuf, Partial>,
    /// The full-text index being built alongside a bulk load.
    fts: Option<FtsBuild>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Partial {
    dev: u64,
    inode: u64,
    checkpoint: u64,
    no_newline_until: u64,
    /// blake3 of the first and last [`TAIL_LEN`] bytes of `checkpoint..no_newline_until`: the
    /// partial line was not edited in place if these are unchanged.
    window: [u8; 32],
}

/// Partial lines shorter than this are simply read again; the memo is for long ones.
const PARTIAL_MEMO_MIN: u64 = 64 << 10;

fn partial_window(file: &File, path: &Path, from: u64, to: u64) -> Result<[u8; 32]> {
    let head = hash_range(file, path, from, (to - from).min(TAIL_LEN))?;
    let tail = hash_range(file, path, to - (to - from).min(TAIL_LEN), (to - from).min(TAIL_LEN))?;
    Ok(*blake3::hash(format!("{head}{tail}").as_bytes()).as_bytes())
}

impl std::fmt::Debug for Indexer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Indexer").field("data_dir", &self.data_dir).finish_non_exhaustive()
    }
}

impl Indexer {
    /// Opens the index in `data_dir` for writing, creating it if needed. Fails with
    /// [`Error::Locked`] while another process holds it.
    pub fn open(data_dir: &Path) -> Result<Indexer> {
        std::fs::create_dir_all(data_dir).map_err(|e| Error::io(data_dir, e))?;
        let lock_path = data_dir.join("scrollback.lock");
        let lock = File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(|e| Error::io(&lock_path, e))?;
        // A lock can be held for a moment by a process that is only being forked (a child inherits
        // the descriptor until it execs), so a refusal is final only after a short wait.
        let deadline = Instant::now() + LOCK_WAIT;
        loop {
            match lock.try_lock() {
                Ok(()) => break,
                Err(std::fs::TryLockError::WouldBlock) if Instant::now() < deadline => {
                    std::thread::sleep(std::time::Duration::from_millis(10));
                }
                Err(std::fs::TryLockError::WouldBlock) => return Err(Error::Locked { path: lock_path }),
                Err(std::fs::TryLockError::Error(e)) => return Err(Error::io(&lock_path, e)),
            }
        }
        let conn = db::open_writer(&data_dir.join(db::INDEX_FILE))?;
        // A bulk load that was interrupted left its indexes and triggers aside: put them back.
        bulk::end(&conn, &data_dir.join(db::INDEX_FILE), None)?;
        Ok(Indexer {
            conn,
            data_dir: data_dir.to_owned(),
            _lock: lock,
            reader: LineReader::new(),
            bus: None,
            partial: HashMap::new(),
            fts: None,
        })
    }

    /// Announces every commit on `bus` from now on.
    pub fn set_bus(&mut self, bus: Bus) {
        self.bus = Some(bus);
    }

    fn announce(&self, event: Event) {
        if let Some(bus) = &self.bus {
            // No receiver is not an error: nobody is listening yet.
            let _ = bus.send(event);
        }
    }

    /// The data directory.
    pub fn data_dir(&self) -> &Path {
        &self.data_dir
    }

    /// The writer's connection, for reads that must see its latest commit.
    pub fn connection(&self) -> &Connection {
        &self.conn
    }

    /// Brings the index up to date with every transcript under `root`: new bytes of known files,
    /// new files, files rewritten, and files gone.
    pub fn catch_up(&mut self, root: &Path, progress: &mut dyn Progress) -> Result<Summary> {
        let started = Instant::now();
        // Paths are stored absolute, so that media can be read from any working directory.
        let root = &std::path::absolute(root).map_err(|e| Error::io(root, e))?;
        let found = tree::discover(root);
        let known = self.known_sizes()?;
        let total = found.iter().map(|f| f.size.saturating_sub(known.get(&f.path).copied().unwrap_or(0))).sum();
        progress.start(total);
        let empty: bool = self.conn.query_row("SELECT NOT EXISTS (SELECT 1 FROM entries)", [], |r| r.get(0))?;
        let bulk = empty && total >= BULK_BYTES;
        if bulk {
            bulk::begin(&self.conn)?;
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
        let new_files = found.iter().filter(|f| !known.contains_key(&f.path)).map(|f| f.path.clone()).collect();
        std::thread::scope(|scope| {
            let mut ahead = ReadAhead::start(scope, new_files);
            for file in &found {
                match self.index_found(file, progress, ahead.take(&file.path)) {
                    Ok(s) => summary.add(&s),
                    // One unreadable file must not stop the others.
                    Err(e) => tracing::warn!(path = %file.path.display(), "not indexed: {e}"),
                }
            }
        });
        if bulk {
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
        match std::fs::metadata(path) {
            Ok(meta) if meta.is_file() => {
                let found = Found { path: path.to_owned(), dev: meta.dev(), inode: meta.ino(), size: meta.len() };
                self.index_found(&found, &mut NoProgress, None)
            }
            Ok(_) => Ok(Summary::default()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let gone = self.mark_gone(path)?;
                Ok(Summary { gone: gone as u64, ..Summary::default() })
            }
            Err(e) => Err(Error::io(path, e)),
        }
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

    fn index_found(
        &mut self,
        found: &Found,
        progress: &mut dyn Progress,
        ahead: Option<Receiver<ahead::Msg>>,
    ) -> Result<Summary> {
        let path = &found.path;
        let path_str = path.to_str().ok_or_else(|| {
            Error::io(path, std::io::Error::new(std::io::ErrorKind::InvalidData, "path is not UTF-8"))
        })?;
        let file = File::open(path).map_err(|e| Error::io(path, e))?;
        let meta = file.metadata().map_err(|e| Error::io(path, e))?;
        let (dev, inode, size) = (meta.dev(), meta.ino(), meta.len());
        let mtime_ns = meta.mtime().saturating_mul(1_000_000_000).saturating_add(meta.mtime_nsec());
        let mut row = self.file_row(path_str)?;
        if row.is_none() {
            match self.same_file_elsewhere(&file, path_str, dev, inode)? {
                Elsewhere::HardLink(other) => {
                    // One file, indexed once, under the path it was first found at.
                    tracing::debug!(path = %path.display(), other = %other, "a hard link to a file already indexed");
                    return self.index_path(Path::new(&other));
                }
                Elsewhere::Renamed(id) => {
                    tracing::info!(path = %path.display(), "transcript was renamed; its rows follow it");
                    self.conn.execute("UPDATE files SET path = ?2 WHERE id = ?1", params![id, path_str])?;
                    row = self.file_row(path_str)?;
                }
                Elsewhere::Nowhere => {}
            }
        }

        let reset_reason = match &row {
            None => None,
            // Not touched since it was last read: nothing to hash, nothing to read.
            Some(row)
                if row.mtime_ns != 0
                    && (row.dev, row.inode, row.size, row.mtime_ns) == (dev, inode, size, mtime_ns) =>
            {
                return Ok(Summary::default());
            }
            Some(row) if (row.dev, row.inode) != (dev, inode) => Some("replaced by another file"),
            Some(row) if size < row.checkpoint => Some("truncated"),
            Some(row) if hash_range(&file, path, 0, row.fingerprint_len)? != row.fingerprint => {
                Some("rewritten (its first bytes changed)")
            }
            Some(row) if tail_hash(&file, path, row.checkpoint)? != row.tail_hash => {
                Some("rewritten (the bytes before the checkpoint changed)")
            }
            Some(row) if size == row.checkpoint => {
                // Unchanged, as its bytes show. Once its mtime has settled, record it, so that later
                // rescans can trust the mtime instead of reading the file.
                let settled = settled_mtime(mtime_ns);
                if row.mtime_ns != settled && settled != 0 {
                    self.conn.execute(
                        "UPDATE files SET mtime_ns = ?2, size = ?3 WHERE id = ?1",
                        params![row.id, settled, size as i64],
                    )?;
                }
                return Ok(Summary::default());
            }
            Some(_) => None,
        };
        if let Some(reason) = reset_reason {
            tracing::info!(path = %path.display(), "re-indexing from the start: {reason}");
        }
        let (start, lines_before) = match (&row, reset_reason) {
            (Some(row), None) => (row.checkpoint, row.lines),
            _ => (0, 0),
        };
        if reset_reason.is_none()
            && let Some(known) = self.partial.get(path).copied()
            && (known.dev, known.inode, known.checkpoint) == (dev, inode, start)
            && known.no_newline_until <= size
            && partial_window(&file, path, known.checkpoint, known.no_newline_until)? == known.window
        {
            // Only the incomplete last line grew: look for its newline in the new bytes alone.
            if !has_newline(&file, path, known.no_newline_until, size)? {
                let window = partial_window(&file, path, known.checkpoint, size)?;
                self.partial.insert(path.clone(), Partial { no_newline_until: size, window, ..known });
                return Ok(Summary::default());
            }
        }

        // One transaction per pass over a file: a re-index replaces the old rows atomically, and the
        // checkpoint commits with the rows it covers. Rows are written in batches as lines are read,
        // so memory stays bounded however long the file.
        if reset_reason.is_some() && row.is_some() && self.fts.take().is_some() {
            // Rows are about to be deleted, which the scratch full-text build does not follow.
            tracing::info!("a file is re-indexed during the bulk load: the full-text index is built at the end");
        }
        // What was read ahead is of use if it is this file, read from its start.
        let ahead = ahead.filter(|_| start == 0 && row.is_none()).filter(
            |receive| matches!(receive.recv(), Ok(ahead::Msg::Opened { dev: d, inode: i }) if (d, i) == (dev, inode)),
        );
        let file_session = session_from_path(path);
        let Indexer { conn, reader, fts, .. } = self;
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let file_id = match &row {
            None => {
                tx.execute(
                    "INSERT INTO files (path, session_id, dev, inode, fingerprint, fingerprint_len, tail_hash,
                                        size, mtime_ns, checkpoint, lines, state, indexed_at)
                     VALUES (?1, ?2, ?3, ?4, '', 0, '', 0, 0, 0, 0, 'live', strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))",
                    params![path_str, file_session, dev as i64, inode as i64],
                )?;
                tx.last_insert_rowid()
            }
            Some(row) => {
                if reset_reason.is_some() {
                    delete_file_rows(&tx, row.id)?;
                }
                row.id
            }
        };
        let mut summary = Summary::default();
        let mut touched: HashMap<String, (u64, u64)> = HashMap::new();
        let mut write = |batch: Batch| -> Result<()> {
            progress.advance(batch.advance);
            summary.bytes += batch.advance;
            for d in &batch.lines {
                let session = d.meta.session_id.as_deref().unwrap_or(&file_session);
                match touched.get_mut(session) {
                    Some(range) => *range = (range.0.min(d.line), range.1.max(d.line)),
                    None => {
                        touched.insert(session.to_owned(), (d.line, d.line));
                    }
                }
            }
            let ids = write_entries(&tx, file_id, &file_session, &batch.lines, &mut summary, fts.is_some())?;
            if let Some(fts) = fts {
                // The lines go to the full-text thread, which also frees them, off this one. A
                // stopped build is noticed, and replaced by a rebuild, at the end of the load.
                fts.add(ids, batch.lines);
            }
            Ok(())
        };
        // The hashes of the bytes read, when whoever read them took them right after.
        let mut read_hashes = None;
        let end = if let Some(receive) = ahead {
            let mut end = None;
            for msg in receive.iter() {
                match msg {
                    ahead::Msg::Batch(batch) => write(batch)?,
                    ahead::Msg::Done(done) => {
                        let (done, hashes) = done?;
                        (end, read_hashes) = (Some(done), Some(hashes));
                        break;
                    }
                    ahead::Msg::Opened { .. } => {}
                }
            }
            end.ok_or_else(|| Error::io(path, std::io::Error::other("reading ahead stopped")))?
        } else if size.saturating_sub(start) >= PIPELINE_BYTES {
            // Two threads: this one writes to SQLite while a scoped one reads and parses ahead.
            std::thread::scope(|scope| {
                let (send, receive) = std::sync::mpsc::sync_channel::<Batch>(4);
                let file = &file;
                let producer = scope.spawn(move || {
                    produce(reader, file, path, start, lines_before, |batch| {
                        // A closed channel means the writer failed; its error is the one reported.
                        send.send(batch).map_err(|_| Error::io(path, std::io::Error::other("writer stopped")))
                    })
                });
                let written = receive.iter().try_for_each(&mut write);
                drop(receive);
                let end = producer.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic));
                written.and(end)
            })?
        } else {
            produce(reader, &file, path, start, lines_before, write)?
        };
        if end.checkpoint == start && reset_reason.is_none() && row.is_some() {
            // Nothing complete was added: leave the file as it is.
            return Ok(Summary { bytes: summary.bytes, ..Summary::default() });
        }
        let Hashes { fingerprint, fingerprint_len, tail } = match read_hashes {
            Some(hashes) => hashes,
            None => Hashes::of(&file, path, &end)?,
        };
        tx.execute(
            "UPDATE files SET dev = ?2, inode = ?3, fingerprint = ?4, fingerprint_len = ?5, tail_hash = ?6,
                              size = ?7, checkpoint = ?8, lines = ?9, mtime_ns = ?10,
                              indexed_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
             WHERE id = ?1",
            params![
                file_id,
                dev as i64,
                inode as i64,
                fingerprint,
                fingerprint_len as i64,
                tail,
                end.size as i64,
                end.checkpoint as i64,
                end.lines as i64,
                settled_mtime(mtime_ns),
            ],
        )?;
        tx.commit()?;
        if end.size - end.checkpoint >= PARTIAL_MEMO_MIN {
            let partial = Partial {
                dev,
                inode,
                checkpoint: end.checkpoint,
                no_newline_until: end.size,
                window: partial_window(&file, path, end.checkpoint, end.size)?,
            };
            self.partial.insert(path.clone(), partial);
        } else {
            self.partial.remove(path);
        }
        for (session_id, (from_line, to_line)) in touched {
            self.announce(Event::EntriesAppended {
                session_id,
                file_id,
                from_line,
                to_line,
                replaced: reset_reason.is_some(),
            });
        }
        summary.files = 1;
        summary.reindexed = reset_reason.is_some() as u64;
        tracing::debug!(path = %path.display(), from = start, to = end.checkpoint, lines = summary.lines, "indexed");
        Ok(summary)
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

    /// Whether a path new to the index is a file it already knows under another name.
    ///
    /// A row whose path no longer holds this inode is taken as renamed only if this file still starts
    /// with the bytes that row fingerprinted: an inode freed by a deleted transcript and handed to an
    /// unrelated new file must not take over (and re-index away) the deleted one's history.
    fn same_file_elsewhere(&self, file: &File, path: &str, dev: u64, inode: u64) -> Result<Elsewhere> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT id, path, fingerprint, fingerprint_len FROM files
             WHERE dev = ?1 AND inode = ?2 AND state = 'live' AND path != ?3",
        )?;
        let others: Vec<(i64, String, String, i64)> = stmt
            .query_map(params![dev as i64, inode as i64, path], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))?
            .collect::<rusqlite::Result<_>>()?;
        let mut renamed = None;
        for (id, other, fingerprint, fingerprint_len) in others {
            match std::fs::metadata(&other) {
                Ok(meta) if (meta.dev(), meta.ino()) == (dev, inode) => {
                    return Ok(Elsewhere::HardLink(other));
                }
                _ if renamed.is_none()
                    && hash_range(file, Path::new(path), 0, fingerprint_len as u64)? == fingerprint =>
                {
                    renamed = Some(id);
                }
                _ => {}
            }
        }
        Ok(renamed.map_or(Elsewhere::Nowhere, Elsewhere::Renamed))
    }
}

/// The modification time to record, or 0 when it cannot be trusted to change with the next write:
/// a file written in the last [`SETTLED`] may be written again within the same clock tick, with no
/// new mtime (git's "racily clean" entries). Such files are always checked by their bytes.
fn settled_mtime(mtime_ns: i64) -> i64 {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as i64);
    if mtime_ns < now - SETTLED.as_nanos() as i64 { mtime_ns } else { 0 }
}

/// A new path's file, known under another path.
enum Elsewhere {
    /// The other path is the same file still (a hard link): index it once.
    HardLink(String),
    /// The other path is no longer this file: it was renamed, and its row moves.
    Renamed(i64),
    Nowhere,
}

/// Whether `file` has a `\n` in `from..to`.
fn has_newline(file: &File, path: &Path, from: u64, to: u64) -> Result<bool> {
    let mut buf = vec![0u8; ((to - from) as usize).min(1 << 20)];
    let mut at = from;
    while at < to {
        let want = ((to - at) as usize).min(buf.len());
        let n = file.read_at(&mut buf[..want], at).map_err(|e| Error::io(path, e))?;
        if n == 0 {
            return Ok(false);
        }
        if memchr::memchr(b'\n', &buf[..n]).is_some() {
            return Ok(true);
        }
        at += n as u64;
    }
    Ok(false)
}

/// Lines read and described, ready to be written.
pub(crate) struct Batch {
    lines: Vec<Described>,
    /// Transcript bytes they take.
    advance: u64,
}

/// Reads complete lines from `start` and hands them on in batches of bounded size.
pub(crate) fn produce(
    reader: &mut LineReader,
    file: &File,
    path: &Path,
    start: u64,
    lines_before: u64,
    mut emit: impl FnMut(Batch) -> Result<()>,
) -> Result<End> {
    let mut batch = Batch { lines: Vec::new(), advance: 0 };
    let mut batch_bytes = 0usize;
    let end = reader.read(file, path, start, lines_before, |line: Line<'_>| {
        batch.advance += line.advance;
        let described = entry::describe(line);
        batch_bytes += described.stripped.as_ref().map_or(0, String::len);
        batch.lines.push(described);
        if batch.lines.len() >= BATCH_LINES || batch_bytes >= BATCH_BYTES {
            batch_bytes = 0;
            emit(std::mem::replace(&mut batch, Batch { lines: Vec::new(), advance: 0 }))?;
        }
        Ok(())
    })?;
    if !batch.lines.is_empty() {
        emit(batch)?;
    }
    Ok(end)
}

/// The session id a file's name gives: `<sessionId>.jsonl`.
pub fn session_from_path(path: &Path) -> String {
    path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default()
}

/// What a file's row records of its bytes, to notice a rewrite later: the fingerprint (blake3 of
/// the first bytes) and the tail hash (of the bytes just before the checkpoint).
#[derive(Debug)]
pub(crate) struct Hashes {
    fingerprint: String,
    fingerprint_len: u64,
    tail: String,
}

impl Hashes {
    /// The hashes of `file` read up to `end`; taken by whoever read it, right after reading.
    pub(crate) fn of(file: &File, path: &Path, end: &End) -> Result<Hashes> {
        let fingerprint_len = end.size.min(FINGERPRINT_LEN);
        Ok(Hashes {
            fingerprint: hash_range(file, path, 0, fingerprint_len)?,
            fingerprint_len,
            tail: tail_hash(file, path, end.checkpoint)?,
        })
    }
}

/// blake3 (hex) of `len` bytes of `file` from `offset`.
fn hash_range(file: &File, path: &Path, offset: u64, len: u64) -> Result<String> {
    let mut hasher = blake3::Hasher::new();
    let mut buf = vec![0u8; len.min(64 * 1024) as usize];
    let mut at = offset;
    let end = offset + len;
    while at < end {
        let want = ((end - at) as usize).min(buf.len());
        let n = file.read_at(&mut buf[..want], at).map_err(|e| Error::io(path, e))?;
        if n == 0 {
            // The file is shorter than it was: hash what is there, which will not match.
            hasher.update(b"\0short");
            break;
        }
        hasher.update(&buf[..n]);
        at += n as u64;
    }
    Ok(hasher.finalize().to_hex().to_string())
}

fn tail_hash(file: &File, path: &Path, checkpoint: u64) -> Result<String> {
    let len = checkpoint.min(TAIL_LEN);
    hash_range(file, path, checkpoint - len, len)
}

/// Deletes a file's entries and everything that hangs off them, and fixes the sessions' counts.
fn delete_file_rows(tx: &Connection, file_id: i64) -> Result<()> {
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

/// Inserts described lines of one file, adding to `summary`'s counts; returns their rows' ids if
/// `want_ids`.
fn write_entries(
    tx: &Connection,
    file_id: i64,
    file_session: &str,
    lines: &[Described],
    summary: &mut Summary,
    want_ids: bool,
) -> Result<Vec<i64>> {
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
    let mut ids = Vec::with_capacity(if want_ids { lines.len() } else { 0 });
    for d in lines {
        let session = d.meta.session_id.as_deref().unwrap_or(file_session);
        insert_entry.execute(params![
            file_id,
            session,
            d.line as i64,
            d.offset as i64,
            d.length as i64,
            d.meta.uuid,
            d.meta.parent_uuid,
            d.meta.kind,
            d.meta.role,
            d.meta.timestamp,
            d.meta.is_sidechain,
            d.stripped,
            d.meta.text,
            d.invalid,
        ])?;
        let entry_id = tx.last_insert_rowid();
        if want_ids {
            ids.push(entry_id);
        }
        summary.lines += 1;
        if d.invalid.is_some() {
            summary.invalid += 1;
            continue;
        }
        for span in &d.spans {
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
            summary.media += 1;
        }
        for failed in &d.failed_images {
            insert_failed.execute(params![entry_id, failed.ordinal, failed.reason])?;
        }
        let delta = sessions.entry(session).or_default();
        delta.entries += 1;
        delta.images += d.image_blocks as u64;
        if delta.project.is_none() {
            delta.project.clone_from(&d.meta.cwd);
        }
        if let Some((rank, title)) = &d.meta.title {
            // First user text: the first wins; titles and summaries: the latest wins.
            let better = match &delta.title {
                None => true,
                Some((old, _)) => rank > old || (rank == old && *rank > 1),
            };
            if better {
                delta.title = Some((*rank, title.clone()));
            }
        }
        if let Some(ts) = &d.meta.timestamp {
            if delta.first.as_ref().is_none_or(|f| ts < f) {
                delta.first = Some(ts.clone());
            }
            if delta.last.as_ref().is_none_or(|l| ts > l) {
                delta.last = Some(ts.clone());
            }
        }
    }
    let mut upsert = tx.prepare_cached(
        "INSERT INTO sessions (id, project, title, title_rank, first_timestamp, last_timestamp, entries, images)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
         ON CONFLICT (id) DO UPDATE SET
            project = coalesce(sessions.project, excluded.project),
            title = CASE WHEN excluded.title_rank > sessions.title_rank
                           OR (excluded.title_rank = sessions.title_rank AND excluded.title_rank > 1)
                         THEN excluded.title ELSE sessions.title END,
            title_rank = max(sessions.title_rank, excluded.title_rank),
            first_timestamp = coalesce(min(sessions.first_timestamp, excluded.first_timestamp),
                                       sessions.first_timestamp, excluded.first_timestamp),
            last_timestamp = coalesce(max(sessions.last_timestamp, excluded.last_timestamp),
                                      sessions.last_timestamp, excluded.last_timestamp),
            entries = sessions.entries + excluded.entries,
            images = sessions.images + excluded.images",
    )?;
    for (id, d) in sessions {
        let (rank, title) = match d.title {
            Some((rank, title)) => (rank, Some(title)),
            None => (0, None),
        };
        upsert.execute(params![id, d.project, title, rank, d.first, d.last, d.entries as i64, d.images as i64])?;
    }
    Ok(ids)
}
