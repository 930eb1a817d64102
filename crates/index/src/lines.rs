//! Complete lines of a transcript, read from a byte offset in bounded memory.
//!
//! [`LineReader`] reads a file from its checkpoint in [`BLOCK`]s, splits it at `\n` (a JSON line
//! cannot hold a raw newline, so every `\n` ends a line) and feeds each line to the [`Scanner`] as it
//! goes. A line that lies whole in a block is handed on from there, and is not scanned at all if
//! [`scan::may_hold_media`] says it cannot hold media. A line across blocks of up to
//! [`KEEP_IN_MEMORY`] bytes is copied and kept in memory; a longer one is not: its stored text is
//! read back from the file between its payloads. Memory is therefore bounded by the
//! block size plus [`KEEP_IN_MEMORY`], whatever the line's length. A last line without its `\n` is
//! left alone: it is not a state of error, only not yet complete.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::Path;

use scrollback_core::codec::scan::{self, BlockPlaces, ScanError, ScanOutput, Scanner};
use scrollback_core::error::{Error, Result};

/// Bytes read from the file at a time.
pub const BLOCK: usize = 128 << 10;
/// Lines up to this length are kept in memory while scanned; longer ones are read back when needed.
pub const KEEP_IN_MEMORY: usize = 256 << 10;

const BOM: &[u8] = b"\xEF\xBB\xBF";

/// One complete line, scanned.
#[derive(Debug)]
pub struct Line<'a> {
    /// 1-based line number in the file.
    pub number: u64,
    /// Byte offset of the line's first byte in the file (past a byte order mark).
    pub offset: u64,
    /// Bytes of the line without its terminator (`\n` or `\r\n`).
    pub length: u64,
    /// Bytes of the file this line takes, terminator (and byte order mark) included.
    pub advance: u64,
    /// What the scanner found.
    pub scan: Result<ScanOutput, ScanError>,
    /// The line's bytes, when it was short enough to keep.
    pub bytes: Option<&'a [u8]>,
    /// The file, to read a long line's text back.
    pub file: &'a File,
    /// The file's path, for errors.
    pub path: &'a Path,
}

/// Where reading stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct End {
    /// Offset just past the last complete line.
    pub checkpoint: u64,
    /// Complete lines up to the checkpoint.
    pub lines: u64,
    /// Bytes the file had when reading reached its end.
    pub size: u64,
}

/// Reads complete lines; holds its buffers from one file to the next.
#[derive(Debug)]
pub struct LineReader {
    block: Vec<u8>,
    line: Vec<u8>,
    scanner: Scanner,
}

impl Default for LineReader {
    fn default() -> Self {
        LineReader::new()
    }
}

impl LineReader {
    /// A reader with empty buffers.
    pub fn new() -> LineReader {
        LineReader { block: vec![0; BLOCK], line: Vec::new(), scanner: Scanner::new(&BlockPlaces::NOWHERE) }
    }

    /// Calls `on_line` for each complete line of `file` from `start` (a line boundary), numbering
    /// them after `lines_before`, its image blocks under `places`. A line that lies whole in the block
    /// is handed on from there; one across blocks is read on to its `\n` (`read_spanning`).
    pub fn read(
        &mut self,
        file: &File,
        path: &Path,
        places: &'static BlockPlaces,
        start: u64,
        lines_before: u64,
        mut on_line: impl FnMut(Line<'_>) -> Result<()>,
    ) -> Result<End> {
        let LineReader { block, line, scanner } = self;
        scanner.set_places(places);
        let mut end = End { checkpoint: start, lines: lines_before, size: start };
        let mut w = Window { lo: 0, hi: 0, at: start };
        loop {
            let line_start = end.checkpoint;
            // Most lines lie whole in the block: scan them there, without a copy, and not at all if
            // they cannot hold media.
            if let Some(j) = memchr::memchr(b'\n', &block[w.lo..w.hi]) {
                let bytes = &block[w.lo..w.lo + j];
                let scan = if scan::may_hold_media(bytes) {
                    scanner.reset();
                    scanner.feed(bytes);
                    scanner.finish_mut()
                } else {
                    scan::scan_without_media(bytes)
                };
                let length = if bytes.last() == Some(&b'\r') { j - 1 } else { j };
                w.lo += j + 1;
                end.checkpoint = w.at + w.lo as u64;
                end.lines += 1;
                end.size = end.size.max(end.checkpoint);
                on_line(Line {
                    number: end.lines,
                    offset: line_start,
                    length: length as u64,
                    advance: end.checkpoint - line_start,
                    scan,
                    bytes: Some(&bytes[..length]),
                    file,
                    path,
                })?;
                continue;
            }
            let Some(Spanning { newline_at, skip, kept, last }) =
                read_spanning(file, path, block, line, scanner, &mut w)?
            else {
                end.size = w.at;
                return Ok(end);
            };
            let offset = line_start + skip;
            let mut length = newline_at - offset;
            if length > 0 && last == b'\r' {
                length -= 1;
            }
            end.checkpoint = newline_at + 1;
            end.lines += 1;
            end.size = end.size.max(end.checkpoint);
            on_line(Line {
                number: end.lines,
                offset,
                length,
                advance: end.checkpoint - line_start,
                // A line held whole gets the verdict it would have got in one block; a longer one
                // never fits in a block, so it is always scanned.
                scan: match kept && !scan::may_hold_media(line) {
                    true => scan::scan_without_media(line),
                    false => scanner.finish_mut(),
                },
                bytes: kept.then(|| &line[..length as usize]),
                file,
                path,
            })?;
        }
    }
}

/// Where the reader is in the file: `block[lo..hi]` holds the file's bytes from `at + lo`.
#[derive(Debug, Clone, Copy)]
struct Window {
    lo: usize,
    hi: usize,
    at: u64,
}

/// A line that did not lie whole in the block, read on to its `\n`.
#[derive(Debug, Clone, Copy)]
struct Spanning {
    /// Offset of its `\n` in the file.
    newline_at: u64,
    /// Bytes of a byte order mark before it (at the file's start).
    skip: u64,
    /// Its bytes are in the reader's `line`: it is at most [`KEEP_IN_MEMORY`] bytes long.
    kept: bool,
    /// Its last byte before the `\n`.
    last: u8,
}

/// Feeds a line that does not lie whole in `block[w.lo..w.hi]` to `scanner` piece by piece, reading
/// blocks on to its `\n`, and keeps it in `line` while it fits in [`KEEP_IN_MEMORY`] bytes. `None`
/// at the end of the file, `w.at` then being the file's size: a last line without its `\n` waits.
fn read_spanning(
    file: &File,
    path: &Path,
    block: &mut [u8],
    line: &mut Vec<u8>,
    scanner: &mut Scanner,
    w: &mut Window,
) -> Result<Option<Spanning>> {
    let mut skip = 0u64;
    let mut kept = true;
    let mut last = 0u8;
    scanner.reset();
    line.clear();
    let newline_at = loop {
        if w.lo == w.hi {
            w.at += w.hi as u64;
            let n = read_at(file, path, block, w.at)?;
            if n == 0 {
                return Ok(None);
            }
            (w.lo, w.hi) = (0, n);
            if w.at == 0 && block[..n].starts_with(BOM) {
                w.lo = BOM.len();
                skip = BOM.len() as u64;
            }
        }
        let avail = &block[w.lo..w.hi];
        let (piece, done) = match memchr::memchr(b'\n', avail) {
            Some(j) => (&avail[..j], true),
            None => (avail, false),
        };
        scanner.feed(piece);
        if let Some(&b) = piece.last() {
            last = b;
        }
        if kept {
            if line.len() + piece.len() <= KEEP_IN_MEMORY {
                line.extend_from_slice(piece);
            } else {
                kept = false;
                line.clear();
            }
        }
        w.lo += piece.len();
        if done {
            w.lo += 1;
            break w.at + w.lo as u64 - 1;
        }
    };
    Ok(Some(Spanning { newline_at, skip, kept, last }))
}

fn read_at(file: &File, path: &Path, buf: &mut [u8], at: u64) -> Result<usize> {
    loop {
        match file.read_at(buf, at) {
            Ok(n) => return Ok(n),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(Error::io(path, e)),
        }
    }
}

/// The longest first line [`first_line`] reads.
const FIRST_LINE_MAX: usize = 1 << 20;

/// The file's first line (without a byte order mark and its terminator), if it is complete, UTF-8,
/// and at most 1 MiB: what a format reads of a whole file ([`scrollback_core::format::Format::file_context`]).
pub fn first_line(file: &File) -> Option<String> {
    use std::os::unix::fs::FileExt;
    let mut buf = vec![0u8; 64 << 10];
    let mut have = 0usize;
    loop {
        let n = file.read_at(&mut buf[have..], have as u64).ok()?;
        if n == 0 {
            return None;
        }
        let searched = have;
        have += n;
        if let Some(at) = memchr::memchr(b'\n', &buf[searched..have]) {
            let mut line = &buf[..searched + at];
            line = line.strip_prefix(BOM).unwrap_or(line);
            line = line.strip_suffix(b"\r").unwrap_or(line);
            return String::from_utf8(line.to_vec()).ok();
        }
        if have >= FIRST_LINE_MAX {
            return None;
        }
        if have == buf.len() {
            buf.resize((buf.len() * 2).min(FIRST_LINE_MAX), 0);
        }
    }
}

/// What holds for every line of `file` at `path`, as `format` reads it.
pub fn file_context(
    format: &dyn scrollback_core::format::Format,
    file: &File,
    path: &Path,
) -> scrollback_core::format::FileContext {
    format.file_context(path, &mut || first_line(file))
}

/// Reads `len` bytes of `file` at `offset` into `out`; a short file is an error.
pub fn read_exact_at(file: &File, path: &Path, offset: u64, len: u64, out: &mut Vec<u8>) -> Result<()> {
    let start = out.len();
    out.resize(start + len as usize, 0);
    file.read_exact_at(&mut out[start..], offset).map_err(|e| Error::io(path, e))
}
