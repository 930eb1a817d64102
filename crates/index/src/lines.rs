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
    /// them after `lines_before`, its image blocks under `places`. One loop over the blocks, long because its three cases (a line in
    /// the block, a line kept across blocks, a line too long to keep) share the block's bounds.
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
        // block[lo..hi] holds the file's bytes from `block_at + lo`.
        let (mut lo, mut hi) = (0usize, 0usize);
        let mut block_at = start;
        loop {
            let line_start = end.checkpoint;
            // Most lines lie whole in the block: scan them there, without a copy, and not at all if
            // they cannot hold media.
            if let Some(j) = memchr::memchr(b'\n', &block[lo..hi]) {
                let bytes = &block[lo..lo + j];
                let scan = if scan::may_hold_media(bytes) {
                    scanner.reset();
                    scanner.feed(bytes);
                    scanner.finish_mut()
                } else {
                    scan::scan_without_media(bytes)
                };
                let length = if bytes.last() == Some(&b'\r') { j - 1 } else { j };
                lo += j + 1;
                end.checkpoint = block_at + lo as u64;
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
            let mut skip = 0u64;
            let mut kept = true;
            let mut last = 0u8;
            scanner.reset();
            line.clear();
            let newline_at = loop {
                if lo == hi {
                    block_at += hi as u64;
                    let n = read_at(file, path, block, block_at)?;
                    if n == 0 {
                        end.size = block_at;
                        return Ok(end);
                    }
                    (lo, hi) = (0, n);
                    if block_at == 0 && block[..n].starts_with(BOM) {
                        lo = BOM.len();
                        skip = BOM.len() as u64;
                    }
                }
                let avail = &block[lo..hi];
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
                lo += piece.len();
                if done {
                    lo += 1;
                    break block_at + lo as u64 - 1;
                }
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
