//! A recorded payload -> its decoded bytes, read by seeking to the recorded offset.
//!
//! [`PayloadReader`] reads exactly the recorded byte range of the transcript in 64 KiB blocks,
//! undoes JSON escapes, skips a data URL's header and decodes the base64 as a stream, hashing as it
//! goes: memory is bounded whatever the payload's size. When the range is used up it compares the
//! hash and length with the recorded ones, and a mismatch is an error ([`Error::Changed`]) instead of
//! a clean end. Since bytes already handed out cannot be taken back, callers that must never emit a
//! wrong byte call [`PayloadReader::verify`] first (or write to a temporary file and rename).
//! A compressed transcript (`.jsonl.zst`) cannot be sought in: its stream is decoded from the start
//! and dropped up to the offset ([`scrollback_core::files::decompressed_from`]), in bounded memory.
//! A session of an agent's database (`<database>/<session>`) has its payloads in a row's value,
//! read with SQLite's incremental blob I/O from the offset its format says ([`scrollback_core::format::Rows::payload_row`]).
//! Never turns a ref or a hash into a path: records come from the index.

use std::fs::File;
use std::io::{self, Read, Write};
use std::os::unix::fs::{FileExt, PermissionsExt};
use std::path::{Path, PathBuf};

use scrollback_core::codec::b64::Base64Stream;
use scrollback_core::codec::refs::MediaRef;
use scrollback_core::codec::scan::{self, Encoding, Extent, MediaKind, PayloadChar};
use scrollback_core::error::{Error, Result};
use scrollback_core::format::{Cell, session_of_database};

const CHUNK: usize = 64 * 1024;

/// Where one stripped payload is, as recorded in the index: a `media` row with its entry and file.
/// The one type for a media row, for lookups and history pages alike.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MediaRecord {
    /// `media.id`.
    pub id: i64,
    /// The transcript.
    pub path: PathBuf,
    /// Whether the payload's bytes can be read: the transcript exists, or its vault link does.
    pub file_live: bool,
    /// `path` is the vault's link to a transcript that is gone.
    pub from_vault: bool,
    /// Absolute byte offset of the payload in the transcript.
    pub offset: u64,
    /// Bytes of the payload in the transcript.
    pub length: u64,
    /// How the bytes are written.
    pub encoding: Encoding,
    /// The recorded media type.
    pub media_type: Option<String>,
    /// Length of the decoded bytes.
    pub decoded_length: u64,
    /// blake3 (hex) of the decoded bytes.
    pub blake3: String,
    /// What the payload belongs to.
    pub kind: MediaKind,
    /// The image ordinal, if the payload has a ref.
    pub ordinal: Option<u32>,
    /// The entry's session.
    pub session_id: String,
    /// The entry's uuid.
    pub entry_uuid: Option<String>,
    /// The entry's row id (its history cursor).
    pub entry_id: i64,
    /// Absolute byte offset of the entry's line in the transcript.
    pub line_offset: u64,
    /// The decoded bytes themselves, where the store holds them rather than a transcript (a team's
    /// hub keeps each photo's bytes): read from here, and checked against `blake3` all the same.
    pub held: Option<std::sync::Arc<[u8]>>,
}

impl MediaRecord {
    /// The payload's ref, for an image block's payload (one with an ordinal, in an entry with a uuid).
    pub fn reference(&self) -> Option<MediaRef> {
        Some(MediaRef {
            session_id: self.session_id.clone(),
            entry_uuid: self.entry_uuid.clone()?,
            ordinal: self.ordinal?,
        })
    }

    /// Where the payload is within its line.
    pub fn extent(&self) -> Extent {
        Extent { offset: self.offset - self.line_offset, len: self.length }
    }

    /// A file name extension for the media type (`png`, `jpg`, `pdf`, ...; `bin` if unknown).
    pub fn extension(&self) -> &'static str {
        extension(self.media_type.as_deref())
    }
}

/// A file name extension for a media type (`png`, `jpg`, `pdf`, ...; `bin` if unknown).
pub fn extension(media_type: Option<&str>) -> &'static str {
    match media_type {
        Some("image/png") => "png",
        Some("image/jpeg" | "image/jpg") => "jpg",
        Some("image/gif") => "gif",
        Some("image/webp") => "webp",
        Some("image/svg+xml") => "svg",
        Some("application/pdf") => "pdf",
        Some("text/plain") => "txt",
        _ => "bin",
    }
}

/// Opens a recorded payload for reading. Fails at once if its transcript is gone or cannot be opened,
/// or if the bytes the store holds do not hash to the recorded blake3.
pub fn open(record: &MediaRecord) -> Result<PayloadReader> {
    if let Some(held) = &record.held {
        return open_held(record, held);
    }
    if !record.file_live {
        return Err(Error::Gone { path: record.path.clone(), offset: record.offset });
    }
    let expected = blake3::Hash::from_hex(&record.blake3).map_err(|_| Error::Changed {
        path: record.path.clone(),
        offset: record.offset,
        expected: record.blake3.clone(),
    })?;
    let file = match scrollback_core::files::open_regular(&record.path) {
        Ok(file) => file,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Err(Error::Gone { path: record.path.clone(), offset: record.offset });
        }
        // `<database>/<session>`: a session of an agent's database, its payload in a row.
        Err(e) if e.kind() == io::ErrorKind::NotADirectory => {
            return Ok(reader(record, expected, Bytes::Cell(Box::new(open_cell(record)?))));
        }
        Err(e) => return Err(Error::io(&record.path, e)),
    };
    let compressed = scrollback_core::files::is_compressed(&file).map_err(|e| Error::io(&record.path, e))?;
    let bytes = if compressed {
        match scrollback_core::files::decompressed_from(&file, record.offset) {
            Ok(stream) => Bytes::Stream(Box::new(stream)),
            // Shorter than the record, or no longer a stream that decodes: not what was indexed.
            Err(e) if matches!(e.kind(), io::ErrorKind::UnexpectedEof | io::ErrorKind::Other) => {
                return Err(Error::Changed {
                    path: record.path.clone(),
                    offset: record.offset,
                    expected: record.blake3.clone(),
                });
            }
            Err(e) => return Err(Error::io(&record.path, e)),
        }
    } else {
        Bytes::File(file)
    };
    Ok(reader(record, expected, bytes))
}

/// A reader of `record`'s payload from `bytes`.
fn reader(record: &MediaRecord, expected: blake3::Hash, bytes: Bytes) -> PayloadReader {
    PayloadReader {
        bytes,
        record: record.clone(),
        at: record.offset,
        end: record.offset + record.length,
        raw: Vec::with_capacity(CHUNK + 8),
        carry: Vec::new(),
        in_header: record.encoding.is_data_url(),
        base64: Base64Stream::new(),
        out: Vec::new(),
        out_at: 0,
        hasher: blake3::Hasher::new(),
        expected,
        done: false,
    }
}

/// The row that holds the payload of `record`, a session of an agent's database: found by its
/// entry's id and its offset in the entry's line ([`scrollback_core::format::Rows::payload_row`]), read with SQLite's blob
/// I/O on a read-only connection.
fn open_cell(record: &MediaRecord) -> Result<DatabaseCell> {
    let changed =
        || Error::Changed { path: record.path.clone(), offset: record.offset, expected: record.blake3.clone() };
    let gone = || Error::Gone { path: record.path.clone(), offset: record.offset };
    let (rows, db, _) = session_of_database(&record.path)
        .ok_or_else(|| Error::io(&record.path, io::Error::from(io::ErrorKind::NotADirectory)))?;
    let conn = match scrollback_core::db::open_agent_database(db) {
        Ok(conn) => conn,
        Err(Error::Io { source, .. }) if source.kind() == io::ErrorKind::NotFound => return Err(gone()),
        Err(e) => return Err(e),
    };
    let uuid = record.entry_uuid.as_deref().ok_or_else(changed)?;
    let in_line = record.offset.checked_sub(record.line_offset).ok_or_else(changed)?;
    // A database that is no longer the agent's (another file in its place, a table gone) is one
    // that cannot be read, as a transcript that cannot be: the session is read again.
    let cell = rows.payload_row(&conn, uuid, in_line).map_err(|e| Error::io(db, io::Error::other(e)))?;
    DatabaseCell::spawn(conn, cell.ok_or_else(changed)?, record.length, &record.path)
}

/// The session at `path` (`<database>/<session>`) as its format renders it from the database's rows
/// now, in an unlinked temporary file: what a reader of its lines reads while the vault keeps none.
pub fn render_session(path: &Path) -> Result<std::fs::File> {
    let (rows, db, session) =
        session_of_database(path).ok_or_else(|| Error::io(path, io::Error::from(io::ErrorKind::NotADirectory)))?;
    let conn = scrollback_core::db::open_agent_database(db)?;
    let mut file = tempfile::tempfile().map_err(|e| Error::io(path, e))?;
    scrollback_core::db::render_session(rows, &conn, session, path, &mut file)?;
    Ok(file)
}

/// A payload in a database's row, read in one pass: a thread of its own opens the value once with
/// SQLite's blob I/O and hands its blocks over a channel of two, so memory stays bounded. (Opening
/// the value again for each block made SQLite walk the row's overflow pages from the value's start
/// each time: quadratic in the payload's size, 91 s for 60 MB.) A row written again meanwhile is a
/// short or wrong read, which the hash catches.
struct DatabaseCell {
    blocks: std::sync::mpsc::Receiver<io::Result<Vec<u8>>>,
    block: Vec<u8>,
    at: usize,
}

impl DatabaseCell {
    /// Reads the `len` bytes from `cell.offset` of the value in `cell`, on `conn`, in a thread
    /// that ends with the reader (a send to a reader gone fails).
    fn spawn(conn: rusqlite::Connection, cell: Cell, len: u64, path: &Path) -> Result<DatabaseCell> {
        let (tx, blocks) = std::sync::mpsc::sync_channel(2);
        std::thread::Builder::new()
            .name("database-payload".into())
            .spawn(move || {
                let Cell { table, column, rowid, offset } = cell;
                let blob = match conn.blob_open(rusqlite::MAIN_DB, table, column, rowid, true) {
                    Ok(blob) => blob,
                    Err(e) => return drop(tx.send(Err(io::Error::other(e)))),
                };
                let end = (offset.saturating_add(len)).min(blob.len() as u64) as usize;
                let mut pos = offset as usize;
                while pos < end {
                    let mut buf = vec![0u8; CHUNK.min(end - pos)];
                    match blob.read_at(&mut buf, pos) {
                        Ok(0) => return,
                        Ok(n) => {
                            buf.truncate(n);
                            pos += n;
                            if tx.send(Ok(buf)).is_err() {
                                return;
                            }
                        }
                        Err(e) => return drop(tx.send(Err(io::Error::other(e)))),
                    }
                }
            })
            .map_err(|e| Error::io(path, e))?;
        Ok(DatabaseCell { blocks, block: Vec::new(), at: 0 })
    }

    /// Reads the next bytes of the payload, in order; 0 at its end.
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.at == self.block.len() {
            match self.blocks.recv() {
                Ok(block) => (self.block, self.at) = (block?, 0),
                Err(_) => return Ok(0),
            }
        }
        let n = buf.len().min(self.block.len() - self.at);
        buf[..n].copy_from_slice(&self.block[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

/// A reader of bytes the store holds: checked whole before the first is given.
fn open_held(record: &MediaRecord, held: &[u8]) -> Result<PayloadReader> {
    let changed =
        || Error::Changed { path: record.path.clone(), offset: record.offset, expected: record.blake3.clone() };
    let expected = blake3::Hash::from_hex(&record.blake3).map_err(|_| changed())?;
    if held.len() as u64 != record.decoded_length || blake3::hash(held) != expected {
        return Err(changed());
    }
    Ok(PayloadReader {
        bytes: Bytes::Held,
        record: record.clone(),
        at: record.offset + record.length,
        end: record.offset + record.length,
        raw: Vec::new(),
        carry: Vec::new(),
        in_header: false,
        base64: Base64Stream::new(),
        out: held.to_vec(),
        out_at: 0,
        hasher: blake3::Hasher::new(),
        expected,
        done: true,
    })
}

/// Where a payload's bytes are read from.
enum Bytes {
    /// A transcript, at the reader's offset.
    File(File),
    /// A compressed transcript's decompressed bytes, already at the reader's offset.
    Stream(Box<scrollback_core::files::Decompressed>),
    /// None: the store's own bytes, checked and given whole ([`open_held`]).
    Held,
    /// A value in a row of an agent's database.
    Cell(Box<DatabaseCell>),
}

impl Bytes {
    fn read_at(&mut self, buf: &mut [u8], at: u64) -> io::Result<usize> {
        match self {
            Bytes::File(file) => file.read_at(buf, at),
            // Read in order: `at` is where the stream is.
            Bytes::Stream(stream) => stream.read(buf),
            Bytes::Held => Ok(0),
            // Read in order, as a stream.
            Bytes::Cell(cell) => cell.read(buf),
        }
    }
}

/// The decoded bytes of one payload, as a stream. See the module docs.
pub struct PayloadReader {
    bytes: Bytes,
    record: MediaRecord,
    at: u64,
    end: u64,
    raw: Vec<u8>,
    /// An escape cut by a block boundary.
    carry: Vec<u8>,
    in_header: bool,
    base64: Base64Stream,
    out: Vec<u8>,
    out_at: usize,
    hasher: blake3::Hasher,
    expected: blake3::Hash,
    done: bool,
}

impl std::fmt::Debug for PayloadReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PayloadReader").field("record", &self.record).field("at", &self.at).finish_non_exhaustive()
    }
}

impl PayloadReader {
    /// The record being read.
    pub fn record(&self) -> &MediaRecord {
        &self.record
    }

    /// Reads the whole payload without keeping it, and checks it against the recorded blake3 and
    /// length. Consumes the reader; open another to read the bytes.
    pub fn verify(mut self) -> Result<()> {
        let mut sink = io::sink();
        io::copy(&mut self, &mut sink).map_err(|e| into_error(e, &self.record))?;
        Ok(())
    }

    fn changed(&self) -> io::Error {
        io::Error::new(
            io::ErrorKind::InvalidData,
            Error::Changed {
                path: self.record.path.clone(),
                offset: self.record.offset,
                expected: self.record.blake3.clone(),
            },
        )
    }

    /// Reads the next block of the range and decodes it into `out`.
    fn fill(&mut self) -> io::Result<()> {
        self.out.clear();
        self.out_at = 0;
        if self.at >= self.end {
            let PayloadReader { base64, out, hasher, .. } = self;
            let ok = base64.finish(&mut |d| {
                hasher.update(d);
                out.extend_from_slice(d);
            });
            self.done = true;
            if !ok || self.hasher.finalize() != self.expected || self.base64.decoded() != self.record.decoded_length {
                return Err(self.changed());
            }
            return Ok(());
        }
        let want = ((self.end - self.at) as usize).min(CHUNK);
        self.raw.clear();
        self.raw.append(&mut self.carry);
        let have = self.raw.len();
        self.raw.resize(have + want, 0);
        let n = loop {
            match self.bytes.read_at(&mut self.raw[have..], self.at) {
                Ok(n) => break n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
        };
        if n == 0 {
            // The file is shorter than the record: it was truncated or rewritten.
            return Err(self.changed());
        }
        self.raw.truncate(have + n);
        self.at += n as u64;
        let last = self.at >= self.end;
        let raw = std::mem::take(&mut self.raw);
        let result = self.decode_raw(&raw, last);
        self.raw = raw;
        result
    }

    /// Undoes escapes, skips the data URL header, and feeds base64 to the decoder.
    fn decode_raw(&mut self, raw: &[u8], last: bool) -> io::Result<()> {
        let escaped = self.record.encoding.is_escaped();
        let mut clean_storage;
        let mut chars: &[u8] = raw;
        if escaped {
            clean_storage = Vec::with_capacity(raw.len());
            let mut i = 0;
            while i < raw.len() {
                match memchr::memchr(b'\\', &raw[i..]) {
                    None => {
                        clean_storage.extend_from_slice(&raw[i..]);
                        break;
                    }
                    Some(j) => {
                        clean_storage.extend_from_slice(&raw[i..i + j]);
                        i += j;
                        let need = if raw.get(i + 1) == Some(&b'u') { 6 } else { 2 };
                        if i + need > raw.len() {
                            if last {
                                return Err(self.changed());
                            }
                            self.carry.extend_from_slice(&raw[i..]);
                            break;
                        }
                        let code = match raw[i + 1] {
                            b'u' => std::str::from_utf8(&raw[i + 2..i + 6])
                                .ok()
                                .and_then(|h| u32::from_str_radix(h, 16).ok())
                                .ok_or_else(|| self.changed())?,
                            c => scan::simple_escape(c).ok_or_else(|| self.changed())? as u32,
                        };
                        match scan::payload_char(code) {
                            PayloadChar::Skip => {}
                            PayloadChar::Ascii(c) => clean_storage.push(c),
                            PayloadChar::Reject => return Err(self.changed()),
                        }
                        i += need;
                    }
                }
            }
            chars = &clean_storage;
        }
        if self.in_header {
            match memchr::memchr(b',', chars) {
                Some(j) => {
                    chars = &chars[j + 1..];
                    self.in_header = false;
                }
                None => chars = &[],
            }
        }
        let PayloadReader { base64, out, hasher, .. } = self;
        base64.push(chars, &mut |d| {
            hasher.update(d);
            out.extend_from_slice(d);
        });
        if base64.failed() {
            return Err(self.changed());
        }
        Ok(())
    }
}

impl Read for PayloadReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        while self.out_at == self.out.len() {
            if self.done {
                return Ok(0);
            }
            self.fill()?;
        }
        let n = buf.len().min(self.out.len() - self.out_at);
        buf[..n].copy_from_slice(&self.out[self.out_at..self.out_at + n]);
        self.out_at += n;
        Ok(n)
    }
}

/// Writes a payload's decoded bytes to `out` (named `out_name` in errors), read by `reader`; a read
/// failure is the payload's error, a write failure `out_name`'s. Returns the bytes written.
pub fn copy_to(record: &MediaRecord, mut reader: PayloadReader, out: &mut dyn Write, out_name: &Path) -> Result<u64> {
    let mut buf = vec![0u8; CHUNK];
    let mut total = 0u64;
    loop {
        let n = reader.read(&mut buf).map_err(|e| into_error(e, record))?;
        if n == 0 {
            out.flush().map_err(|e| Error::io(out_name, e))?;
            return Ok(total);
        }
        out.write_all(&buf[..n]).map_err(|e| Error::io(out_name, e))?;
        total += n as u64;
    }
}

/// Writes a payload's verified bytes to `target` as `cp` would, and returns how many:
/// - a symbolic link is followed to the file it names;
/// - into an existing FIFO or device (standard output's `/dev/stdout`, say) the bytes are written
///   as they are, after a first, verifying pass: bytes written there cannot be taken back;
/// - a regular file or a new path gets a temporary file beside it, renamed into place once every
///   byte was checked (a mismatch leaves nothing behind); an existing file's permissions are kept,
///   a new one is readable by all (0644).
pub fn save(record: &MediaRecord, target: &Path) -> Result<u64> {
    let target = resolve_links(target);
    match std::fs::metadata(&target) {
        Ok(meta) if meta.is_dir() => {
            Err(Error::io(&target, io::Error::new(io::ErrorKind::IsADirectory, "is a directory")))
        }
        Ok(meta) if !meta.is_file() => {
            open(record)?.verify()?;
            let mut out = std::fs::OpenOptions::new().write(true).open(&target).map_err(|e| Error::io(&target, e))?;
            copy_to(record, open(record)?, &mut out, &target)
        }
        existing => {
            let dir = target.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
            let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(|e| Error::io(dir, e))?;
            let written = copy_to(record, open(record)?, tmp.as_file_mut(), &target)?;
            let permissions = match existing {
                Ok(meta) => meta.permissions(),
                Err(_) => std::fs::Permissions::from_mode(0o644),
            };
            tmp.as_file().set_permissions(permissions).map_err(|e| Error::io(tmp.path(), e))?;
            tmp.persist(&target).map_err(|e| Error::io(&target, e.error))?;
            Ok(written)
        }
    }
}

/// The path a chain of symbolic links ends at (the first path that is not a link, existing or not).
fn resolve_links(path: &Path) -> PathBuf {
    let mut path = path.to_owned();
    for _ in 0..40 {
        match std::fs::read_link(&path) {
            Ok(next) => path = path.parent().map_or(next.clone(), |dir| dir.join(&next)),
            Err(_) => return path,
        }
    }
    path
}

/// Turns an I/O error from a [`PayloadReader`] back into the library error it carries.
pub fn into_error(e: io::Error, record: &MediaRecord) -> Error {
    if e.get_ref().is_some_and(|inner| inner.is::<Error>()) {
        match e.into_inner().map(|inner| inner.downcast::<Error>()) {
            Some(Ok(inner)) => *inner,
            _ => Error::Changed { path: record.path.clone(), offset: record.offset, expected: record.blake3.clone() },
        }
    } else {
        Error::io(&record.path, e)
    }
}
