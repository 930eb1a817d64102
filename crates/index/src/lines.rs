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
use std::io::Read;
use std::os::unix::fs::FileExt;
use std::path::Path;

use scrollback_core::codec::scan::{self, BlockPlaces, ScanError, ScanOutput, Scanner};
use scrollback_core::error::{Error, Result};
use scrollback_core::format::Records;

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
                let scan = scan_whole(scanner, bytes);
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

impl LineReader {
    /// Calls `on_line` for each of the `records` of the JSON document `file` (see
    /// [`scrollback_core::format::Format::document_records`]), numbered from 1, at its offset and
    /// length in the file. The document
    /// is read whole, up to [`MAX_DOCUMENT`]; `None` (and no record) while it is not one complete
    /// JSON value of the records' shape (its agent is writing it), a longer one is an error.
    pub fn read_document(
        &mut self,
        file: &File,
        path: &Path,
        places: &'static BlockPlaces,
        records: Records,
        mut on_line: impl FnMut(Line<'_>) -> Result<()>,
    ) -> Result<Option<End>> {
        let Some(doc) = read_document(file, path)? else { return Ok(None) };
        let Some(records) = document::records(&doc, records) else { return Ok(None) };
        let scanner = &mut self.scanner;
        scanner.set_places(places);
        let mut lines = 0u64;
        for (start, end) in records {
            let bytes = &doc[start..end];
            let scan = scan_whole(scanner, bytes);
            lines += 1;
            on_line(Line {
                number: lines,
                offset: start as u64,
                length: (end - start) as u64,
                advance: (end - start) as u64,
                scan,
                bytes: Some(bytes),
                file,
                path,
            })?;
        }
        let size = doc.len() as u64;
        Ok(Some(End { checkpoint: size, lines, size }))
    }
}

/// The largest JSON document ([`LineReader::read_document`]) read, whole, into memory.
pub const MAX_DOCUMENT: u64 = 256 << 20;

/// The bytes of the document `file`, if it is no longer than [`MAX_DOCUMENT`].
fn read_document(file: &File, path: &Path) -> Result<Option<Vec<u8>>> {
    let size = file.metadata().map_err(|e| Error::io(path, e))?.len();
    if size > MAX_DOCUMENT {
        return Err(Error::io(
            path,
            std::io::Error::new(
                std::io::ErrorKind::FileTooLarge,
                format!("a JSON document of {size} bytes, over the {MAX_DOCUMENT} read whole"),
            ),
        ));
    }
    let mut doc = Vec::with_capacity(size as usize);
    std::io::Read::read_to_end(&mut std::io::Read::take(FromStartReader { file, at: 0 }, MAX_DOCUMENT), &mut doc)
        .map_err(|e| Error::io(path, e))?;
    Ok(Some(doc))
}

/// A file read with `pread` from `at` on (the descriptor's own offset is never moved).
struct FromStartReader<'a> {
    file: &'a File,
    at: u64,
}

impl std::io::Read for FromStartReader<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.file.read_at(buf, self.at)?;
        self.at += n as u64;
        Ok(n)
    }
}

/// The header of the JSON document `file` (see [`Records`]), as one line of JSON; `None` while it
/// is not complete.
pub fn document_header(file: &File, records: Records) -> Option<String> {
    let doc = read_document(file, Path::new("")).ok()??;
    let key = match records {
        Records::At(key) => key,
        Records::Whole => "",
        Records::Elements => return document::records(&doc, records).map(|_| "{}".to_owned()),
    };
    let members = document::members(&doc)?;
    let kept: Vec<&[u8]> =
        members.iter().filter(|m| m.key != key.as_bytes()).map(|m| &doc[m.start..m.value.1]).collect();
    let mut line = b"{".to_vec();
    line.extend(kept.join(&b","[..]));
    line.push(b'}');
    let value: serde_json::Value = serde_json::from_slice(&line).ok()?;
    Some(value.to_string())
}

/// The structure of a JSON document, found without parsing its values: the members of its
/// top-level object and the elements of an array, as byte ranges.
mod document {
    use super::Records;

    /// One member of an object: its key (as written, escapes and all), where it starts (its key's
    /// opening quote), and its value's range.
    pub(super) struct Member<'a> {
        pub(super) key: &'a [u8],
        pub(super) start: usize,
        pub(super) value: (usize, usize),
    }

    fn skip_ws(doc: &[u8], mut at: usize) -> usize {
        while at < doc.len() && matches!(doc[at], b' ' | b'\t' | b'\n' | b'\r') {
            at += 1;
        }
        at
    }

    /// The end of the string whose opening quote is at `at` (just past its closing quote).
    fn string_end(doc: &[u8], mut at: usize) -> Option<usize> {
        at += 1;
        loop {
            let i = at + memchr::memchr2(b'"', b'\\', doc.get(at..)?)?;
            if doc[i] == b'\\' {
                at = i + 2;
            } else {
                return Some(i + 1);
            }
        }
    }

    /// The end of the value that starts at `at` (just past it): a string, an object or an array
    /// (brackets matched outside strings), or a literal or number (up to a delimiter).
    fn value_end(doc: &[u8], at: usize) -> Option<usize> {
        match *doc.get(at)? {
            b'"' => string_end(doc, at),
            b'{' | b'[' => {
                let mut depth = 0usize;
                let mut i = at;
                loop {
                    match *doc.get(i)? {
                        b'"' => {
                            i = string_end(doc, i)?;
                            continue;
                        }
                        b'{' | b'[' => depth += 1,
                        b'}' | b']' => {
                            depth -= 1;
                            if depth == 0 {
                                return Some(i + 1);
                            }
                        }
                        _ => {}
                    }
                    i += 1;
                }
            }
            _ => {
                let rest = &doc[at..];
                let n = rest.iter().position(|b| matches!(b, b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r'))?;
                (n > 0).then_some(at + n)
            }
        }
    }

    /// The members of the document's top-level object; `None` unless it is one complete object
    /// (nothing but white space after it).
    pub(super) fn members(doc: &[u8]) -> Option<Vec<Member<'_>>> {
        let doc_start = if doc.starts_with(b"\xEF\xBB\xBF") { 3 } else { 0 };
        let mut at = skip_ws(doc, doc_start);
        if doc.get(at) != Some(&b'{') {
            return None;
        }
        at = skip_ws(doc, at + 1);
        let mut members = Vec::new();
        if doc.get(at) == Some(&b'}') {
            at += 1;
        } else {
            loop {
                if doc.get(at) != Some(&b'"') {
                    return None;
                }
                let start = at;
                let key_end = string_end(doc, at)?;
                at = skip_ws(doc, key_end);
                if doc.get(at) != Some(&b':') {
                    return None;
                }
                let value_start = skip_ws(doc, at + 1);
                let value_end = value_end(doc, value_start)?;
                members.push(Member { key: &doc[start + 1..key_end - 1], start, value: (value_start, value_end) });
                at = skip_ws(doc, value_end);
                match doc.get(at)? {
                    b',' => at = skip_ws(doc, at + 1),
                    b'}' => {
                        at += 1;
                        break;
                    }
                    _ => return None,
                }
            }
        }
        (skip_ws(doc, at) == doc.len()).then_some(members)
    }

    /// The range of the document's one top-level value, if it is complete (nothing but white
    /// space after it).
    fn top(doc: &[u8]) -> Option<(usize, usize)> {
        let doc_start = if doc.starts_with(b"\xEF\xBB\xBF") { 3 } else { 0 };
        let start = skip_ws(doc, doc_start);
        let end = value_end(doc, start)?;
        (skip_ws(doc, end) == doc.len()).then_some((start, end))
    }

    /// The ranges of the document's `records`; `None` unless it is complete and of their shape (an
    /// object, or for [`Records::Elements`] an array).
    pub(super) fn records(doc: &[u8], records: Records) -> Option<Vec<(usize, usize)>> {
        match records {
            Records::At(key) => Some(
                members(doc)?
                    .iter()
                    .filter(|m| m.key == key.as_bytes())
                    .flat_map(|m| elements(doc, m.value.0).unwrap_or_default())
                    .collect(),
            ),
            Records::Whole => {
                members(doc)?;
                Some(vec![top(doc)?])
            }
            Records::Elements => elements(doc, top(doc)?.0),
        }
    }

    /// The elements of the array that starts at `at`, as ranges; `None` if it is not an array.
    pub(super) fn elements(doc: &[u8], at: usize) -> Option<Vec<(usize, usize)>> {
        if doc.get(at) != Some(&b'[') {
            return None;
        }
        let mut out = Vec::new();
        let mut i = skip_ws(doc, at + 1);
        if doc.get(i) == Some(&b']') {
            return Some(out);
        }
        loop {
            let end = value_end(doc, i)?;
            out.push((i, end));
            i = skip_ws(doc, end);
            match doc.get(i)? {
                b',' => i = skip_ws(doc, i + 1),
                b']' => return Some(out),
                _ => return None,
            }
        }
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn members_and_elements_are_found_as_written_and_a_torn_document_is_none() {
            let doc = br#"{ "sessionId": "s", "n": 12, "messages": [ {"id":"a","t":"x]}\"{"} , [1,2], "z" ], "summary": "ok" }
"#;
            let members = members(doc).unwrap();
            let keys: Vec<&[u8]> = members.iter().map(|m| m.key).collect();
            assert_eq!(keys, [&b"sessionId"[..], b"n", b"messages", b"summary"]);
            let messages = &members[2];
            let items: Vec<&[u8]> =
                elements(doc, messages.value.0).unwrap().into_iter().map(|(a, b)| &doc[a..b]).collect();
            assert_eq!(items, [&br#"{"id":"a","t":"x]}\"{"}"#[..], b"[1,2]", br#""z""#]);
            assert_eq!(&doc[members[1].value.0..members[1].value.1], b"12");
            for torn in [&doc[..doc.len() - 4], &doc[..40], b"", b"[]", b"{} x"] {
                assert!(super::members(torn).is_none(), "{}", String::from_utf8_lossy(torn));
                assert!(records(torn, Records::Whole).is_none(), "{}", String::from_utf8_lossy(torn));
            }
            let texts = |doc: &'static [u8], r: Records| -> Vec<&'static [u8]> {
                records(doc, r).unwrap().into_iter().map(|(a, b)| &doc[a..b]).collect()
            };
            assert_eq!(texts(doc, Records::At("messages")), items);
            // The object itself, without the white space and byte order mark around it.
            assert_eq!(texts(doc, Records::Whole), [doc.trim_ascii()]);
            let marked = b"\xEF\xBB\xBF\n {\"a\": {\"b\": 1}}\n\n";
            assert_eq!(texts(marked, Records::Whole), [&br#"{"a": {"b": 1}}"#[..]]);
            // A top-level array's elements; torn, or an object, it has none.
            let array = b" [ {\"role\": \"user\", \"content\": \"a]\"}, {\"role\": \"assistant\"} ]\n";
            assert_eq!(
                texts(array, Records::Elements),
                [&br#"{"role": "user", "content": "a]"}"#[..], br#"{"role": "assistant"}"#]
            );
            assert_eq!(texts(b"[]", Records::Elements), Vec::<&[u8]>::new());
            for not in [&array[..array.len() - 3], b"{}", b"[1] 2"] {
                assert!(records(not, Records::Elements).is_none(), "{}", String::from_utf8_lossy(not));
            }
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
    // Most first lines are short, and a pass reads its file's first line twice (before and after
    // its lines): start small.
    let mut buf = vec![0u8; 8 << 10];
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

/// The scan of a line held whole in memory: by `scanner`, or, if the line cannot hold media, by
/// the sieve's verdict alone ([`scan::scan_without_media`]).
fn scan_whole(scanner: &mut Scanner, bytes: &[u8]) -> std::result::Result<ScanOutput, ScanError> {
    if scan::may_hold_media(bytes) {
        scanner.reset();
        scanner.feed(bytes);
        scanner.finish_mut()
    } else {
        scan::scan_without_media(bytes)
    }
}

/// What holds for every line of `file` at `path`, as `format` reads it.
pub fn file_context(
    format: &dyn scrollback_core::format::Format,
    file: &File,
    path: &Path,
) -> scrollback_core::format::FileContext {
    let mut context = match format.document_records(path) {
        Some(records) => format.file_context(path, &mut || document_header(file, records)),
        None => format.file_context(path, &mut || first_line(file)),
    };
    if let Some(project) = format.project_file(path).and_then(|p| recorded_project(format, &p)) {
        context.project = Some(project);
    }
    context
}

/// The directory a project file ([`Format::project_file`]) records, as its format reads it
/// ([`Format::project_in`]): if it is there, a regular file (a FIFO put there never blocks), and
/// no longer than 1 MiB.
///
/// [`Format::project_file`]: scrollback_core::format::Format::project_file
/// [`Format::project_in`]: scrollback_core::format::Format::project_in
fn recorded_project(format: &dyn scrollback_core::format::Format, path: &Path) -> Option<String> {
    const MAX: u64 = 1 << 20;
    let file = scrollback_core::files::open_regular(path).ok()?;
    if file.metadata().ok()?.len() > MAX {
        return None;
    }
    let mut text = String::new();
    file.take(MAX).read_to_string(&mut text).ok()?;
    format.project_in(&text)
}

/// Reads `len` bytes of `file` at `offset` into `out`; a short file is an error.
pub fn read_exact_at(file: &File, path: &Path, offset: u64, len: u64, out: &mut Vec<u8>) -> Result<()> {
    let start = out.len();
    out.resize(start + len as usize, 0);
    file.read_exact_at(&mut out[start..], offset).map_err(|e| Error::io(path, e))
}
