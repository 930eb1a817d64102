//! A session taken away: as one HTML file that opens offline (photos inline, no script), as
//! Markdown with its photos in a folder beside it, or as its transcript's own lines, byte for byte.
//!
//! The session is read page by page and written as it is read; a photo's bytes are streamed from
//! its transcript (or the vault) through [`media::open`], checked against their blake3, and
//! base64-encoded a chunk at a time, so memory stays bounded whatever number of photos the
//! session has. A photo whose bytes no longer match fails the export (the caller writes to a
//! temporary file and keeps nothing).
//!
//! The store is read through a [`Lend`]: a store (a pooled connection) lent for one question at a
//! time (the session, one page of entries, the list of a transcript's lines), so that a server's
//! pooled reader is given back before what it read is written ([`scrollback_read::pool::Readers::lent`]).
//! HTML and Markdown are made of the read interface's answers alone, so a team's hub exports them
//! too, its photos' bytes its own ([`Store::with_bytes`]). JSONL is the transcripts' lines, read
//! from the transcripts where the store has them (an index); a store that holds no transcript (a
//! team's hub) gives each line as its host stored it, its payloads put back from the bytes the store
//! holds ([`Store::export_lines`]).
//!
//! The HTML is the viewer's rendering ([`markdown`], tool calls at a glance, diffs, the viewer's
//! style sheet), with a Content-Security-Policy that lets it load nothing: `img-src data:` only.

use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::Path;

use serde_json::Value;

use crate::markdown::{self, escape};
use crate::redact::{Redacted, Redactor};
use scrollback_core::codec::scan::MediaKind;
use scrollback_core::error::{Error, Result};
use scrollback_core::format;
use scrollback_core::format::parts::{DiffLine, Part, ToolCall};
use scrollback_read::Store;
use scrollback_read::history::{EntryBody, HistoryEntry, Position, SessionSummary};
use scrollback_read::media::{self, MediaRecord};
use scrollback_read::render::MediaUrls;
use scrollback_read::transcript::{Lend, Line};

/// What an export is written as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// One self-contained HTML file.
    Html,
    /// Markdown, photos in a folder beside it.
    Markdown,
    /// The transcript's lines as they are.
    Jsonl,
}

impl Kind {
    /// The kind called `name` (`html`, `md`, `jsonl`).
    pub fn parse(name: &str) -> Result<Kind> {
        match name {
            "html" => Ok(Kind::Html),
            "md" | "markdown" => Ok(Kind::Markdown),
            "jsonl" => Ok(Kind::Jsonl),
            other => Err(Error::BadQuery(format!(
                "format {:?}: expected html, md or jsonl",
                other.chars().take(40).collect::<String>()
            ))),
        }
    }

    /// The file name extension.
    pub fn extension(self) -> &'static str {
        match self {
            Kind::Html => "html",
            Kind::Markdown => "md",
            Kind::Jsonl => "jsonl",
        }
    }

    /// The media type, for HTTP.
    pub fn media_type(self) -> &'static str {
        match self {
            Kind::Html => "text/html; charset=utf-8",
            Kind::Markdown => "text/markdown; charset=utf-8",
            Kind::Jsonl => "application/x-ndjson",
        }
    }
}

/// What an export wrote.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Written {
    /// Entries written.
    pub entries: u64,
    /// Photos written (inline, or into the folder).
    pub photos: u64,
    /// Secrets taken out, by rule.
    pub redacted: Redacted,
    /// A JSONL export's lines its transcript could no longer give (deleted with the vault off,
    /// replaced or changed), written from the index's stored copy.
    pub from_index: u64,
    /// Of those, the lines with payloads, which the stored copy holds as the marker.
    pub without_payloads: u64,
    /// A JSONL export's lines neither the transcript nor the index could give (a line the index
    /// did not store, whose transcript is gone): left out.
    pub lost: u64,
}

/// The viewer's style sheet, which the HTML export carries. Its one copy is `crates/render/style.css`,
/// in this crate so that the export (and `cargo package`) finds it; the viewer serves it as
/// `/web/style.css` from here.
pub const STYLE: &str = include_str!("../style.css");

/// What the HTML export adds to it: a page, not an app.
const EXPORT_STYLE: &str = "body { display: block; height: auto; } .export { max-width: 52rem; margin: 0 auto; padding: 1rem; }
.export header { padding: 0 0 1rem; border-bottom: 1px solid var(--line); } .export h1 { font-size: 1.3rem; margin: 0 0 0.3rem; }
.export .who { font-size: 0.75rem; color: var(--muted); margin-top: 0.2rem; } .export img.photo { width: auto; height: auto; max-width: 100%; }
.export .redaction { font-size: 0.8rem; color: var(--muted); }";

/// Pages of this many entries are read at a time.
const PAGE: u32 = 200;

/// Placeholder URLs for a rendered line: an export puts the bytes in, not a server's URL.
struct NoUrls;

impl MediaUrls for NoUrls {
    fn by_ref(&self, _: &scrollback_core::codec::refs::MediaRef) -> String {
        String::new()
    }
    fn by_hash(&self, _: &str) -> String {
        String::new()
    }
}

/// `f`'s answer, on a store `lender` lends for it alone (given back before the answer is used).
fn ask<T>(lender: &dyn Lend, f: impl FnOnce(&dyn Store) -> Result<T>) -> Result<T> {
    f(lender.lend()?.store())
}

/// Exports session `session_id` as `kind` to `out`. A Markdown export writes its photos into
/// `photos` (a folder, made if needed, named in the links as `photos_name`). `None` if the index
/// has no such session.
pub fn export(
    lender: &dyn Lend,
    session_id: &str,
    kind: Kind,
    redactor: Option<&Redactor>,
    out: &mut dyn Write,
    photos: Option<(&Path, &str)>,
) -> Result<Option<Written>> {
    let about = ask(lender, |store| {
        let Some(summary) = store.session(session_id)? else { return Ok(None) };
        Ok(Some((summary, store.git_branch(session_id)?)))
    })?;
    let Some((summary, branch)) = about else { return Ok(None) };
    let mut written = Written::default();
    let io = |e: io::Error| Error::io(Path::new("export"), e);
    match kind {
        Kind::Jsonl => jsonl(lender, session_id, redactor, out, &mut written)?,
        Kind::Html => {
            write!(out, "{}", html_head(&summary, branch.as_deref(), redactor, &mut written.redacted)).map_err(io)?;
            for_each_entry(lender, session_id, |e| html_entry(e, redactor, out, &mut written))?;
            write!(out, "{}", html_tail(&written)).map_err(io)?;
        }
        Kind::Markdown => {
            write!(out, "{}", md_head(&summary, branch.as_deref(), redactor, &mut written.redacted)).map_err(io)?;
            for_each_entry(lender, session_id, |e| md_entry(e, redactor, out, photos, &mut written))?;
            if !written.redacted.is_empty() {
                writeln!(out, "\n---\n\nRedacted: {}", counts(&written.redacted)).map_err(io)?;
            }
        }
    }
    out.flush().map_err(io)?;
    Ok(Some(written))
}

/// Calls `f` with every entry of the session a reader is shown (side chains left out), in
/// conversation order, a page at a time (each page read on a connection lent for it alone, and
/// written after it is given back).
fn for_each_entry(lender: &dyn Lend, session_id: &str, mut f: impl FnMut(&HistoryEntry) -> Result<()>) -> Result<()> {
    let mut at = ask(lender, |store| store.first_cursor(session_id, false))?;
    while let Some(cursor) = at {
        let page = ask(lender, |store| store.history(session_id, Position::From(cursor), PAGE, false))?;
        let Some(page) = page else { break };
        for e in &page.entries {
            // A store that holds photos' bytes itself (a team's hub) gives an entry's photos
            // theirs, one entry at a time.
            let held = match &e.body {
                EntryBody::Stored { media, .. } if media.iter().any(|m| !m.file_live && m.held.is_none()) => {
                    let media = ask(lender, |store| media.iter().map(|m| store.with_bytes(m)).collect())?;
                    let EntryBody::Stored { stripped, .. } = &e.body else { unreachable!("matched above") };
                    Some(HistoryEntry { body: EntryBody::Stored { stripped: stripped.clone(), media }, ..e.clone() })
                }
                _ => None,
            };
            f(held.as_ref().unwrap_or(e))?;
        }
        at = page.next;
    }
    Ok(())
}

/// The lines of every file of the session, as they are in the file (or its vault link): each file
/// in turn, its lines of this session in their order. Each line read from the file is verified
/// before it is written: its bytes outside its payloads equal the stored line's, and each payload's
/// bytes their blake3. A line the file can no longer give (deleted with the vault off, replaced,
/// changed), or one of a store that holds no transcript (a team's hub), is written as the store
/// holds it: byte for byte the line, each payload put back where the store holds its bytes
/// ([`restored`]), else the marker ([`Written::from_index`], [`Written::without_payloads`]). The
/// store is asked a chunk of lines at a time, and given back before a byte of a transcript is read.
fn jsonl(
    lender: &dyn Lend,
    session_id: &str,
    redactor: Option<&Redactor>,
    out: &mut dyn Write,
    written: &mut Written,
) -> Result<()> {
    let files = ask(lender, |store| store.export_files(session_id))?;
    for file in files {
        // The transcript, else its vault link (the same inode: a transcript replaced under its
        // name is still there whole); none for a store that holds no transcript.
        let mut source = file.transcript.as_ref().map(|t| {
            Source::open(Path::new(&t.path), t.dev, t.inode)
                .or_else(|e| t.link.as_deref().map_or(Err(e), |l| Source::open(Path::new(l), t.dev, t.inode)))
        });
        let path = file.transcript.as_ref().map_or_else(|| Path::new("-"), |t| Path::new(&t.path));
        let mut after = -1i64;
        loop {
            let lines = ask(lender, |store| store.export_lines(&file, session_id, after))?;
            let Some(last) = lines.last() else { break };
            after = last.offset;
            for line in &lines {
                let verified = match &mut source {
                    Some(Ok(s)) => s.verified(line),
                    _ => None,
                };
                let bytes: std::borrow::Cow<'_, [u8]> = match (verified, &line.stored) {
                    (Some(raw), _) => raw.into(),
                    (None, Some(stored)) => {
                        written.from_index += 1;
                        let whole = match line.media.is_empty() {
                            true => None,
                            false => ask(lender, |store| restored(store, line))?,
                        };
                        match whole {
                            Some(whole) => whole.into(),
                            None => {
                                written.without_payloads += !line.media.is_empty() as u64;
                                stored.as_bytes().into()
                            }
                        }
                    }
                    (None, None) => {
                        written.lost += 1;
                        continue;
                    }
                };
                match redactor {
                    None => out.write_all(&bytes).and_then(|_| out.write_all(b"\n")),
                    Some(r) => {
                        let line = redact_line(r, &bytes, &mut written.redacted);
                        out.write_all(&line).and_then(|_| out.write_all(b"\n"))
                    }
                }
                .map_err(|e| Error::io(path, e))?;
                written.entries += 1;
            }
        }
    }
    Ok(())
}

/// `line`'s stored copy with each payload put back: the bytes `store` holds of it (a team's hub's
/// blobs; [`Store::with_bytes`]), checked against their blake3 as they are read, written again as
/// the line had them (standard base64, padded or not, or a data URL of its media type). `None` when
/// the line has no payload, a payload's bytes are not held (an index's are in its transcript), or
/// one was written otherwise (JSON escapes inside, another header): its encoding does not come out
/// the length the line's had.
fn restored(store: &dyn Store, line: &Line) -> Result<Option<Vec<u8>>> {
    use scrollback_core::codec::scan::{Encoding, STRIPPED_MEDIA_MARKER, marker_offsets};
    let Some(stored) = &line.stored else { return Ok(None) };
    if line.media.is_empty() {
        return Ok(None);
    }
    let (stored, marker) = (stored.as_bytes(), STRIPPED_MEDIA_MARKER.as_bytes());
    let mut out = Vec::with_capacity(stored.len());
    let mut at = 0usize;
    for (m, start) in line.media.iter().zip(marker_offsets(line.media.iter().map(MediaRecord::extent))) {
        let held = match &m.held {
            Some(_) => m.clone(),
            None => store.with_bytes(m)?,
        };
        if held.held.is_none() {
            return Ok(None);
        }
        let mut bytes = Vec::with_capacity(usize::try_from(held.decoded_length).unwrap_or(0));
        media::open(&held)?.read_to_end(&mut bytes).map_err(|e| media::into_error(e, &held))?;
        let wanted = usize::try_from(m.length).unwrap_or(usize::MAX);
        let header = match m.encoding {
            Encoding::Base64 => String::new(),
            Encoding::DataUrl => format!("data:{};base64,", m.media_type.as_deref().unwrap_or("")),
            Encoding::Base64Escaped | Encoding::DataUrlEscaped => return Ok(None),
        };
        let padded = header.clone() + &base64_simd::STANDARD.encode_to_string(&bytes);
        let written = if padded.len() == wanted {
            padded
        } else {
            header + &base64_simd::STANDARD_NO_PAD.encode_to_string(&bytes)
        };
        let start = start as usize;
        if written.len() != wanted || start < at || stored.get(start..start + marker.len()) != Some(marker) {
            return Ok(None);
        }
        out.extend_from_slice(&stored[at..start]);
        out.extend_from_slice(written.as_bytes());
        at = start + marker.len();
    }
    out.extend_from_slice(&stored[at..]);
    Ok(Some(out))
}

/// A transcript being read for its lines (the file, or the stream it decompresses to, read
/// forward), and the path it was opened by (the transcript's, or its vault link's).
struct Source {
    path: std::path::PathBuf,
    bytes: Bytes,
}

enum Bytes {
    Plain(std::fs::File),
    Compressed { file: std::fs::File, stream: Option<(Box<dyn Read>, u64)> },
}

impl Source {
    /// The transcript at `path`, if it is still the file the index read (its device and inode) and a
    /// regular file (never a FIFO, which would block).
    fn open(path: &Path, dev: i64, inode: i64) -> Result<Source> {
        let file = match open_same(path, dev, inode) {
            // `<database>/<session>`: the session as its format renders it from the rows now.
            Err(Error::Io { source, .. }) if source.kind() == io::ErrorKind::NotADirectory => {
                media::render_session(path)?
            }
            other => other?,
        };
        let bytes = match scrollback_core::files::is_compressed(&file).map_err(|e| Error::io(path, e))? {
            true => Bytes::Compressed { file, stream: None },
            false => Bytes::Plain(file),
        };
        Ok(Source { path: path.to_owned(), bytes })
    }

    /// The line's bytes (its terminator left out) if they are what the index recorded; `None` if
    /// the file no longer holds them.
    fn verified(&mut self, line: &Line) -> Option<Vec<u8>> {
        let mut buf = vec![0; usize::try_from(line.length).ok()? + 1];
        match &mut self.bytes {
            Bytes::Plain(file) => {
                file.seek(SeekFrom::Start(line.offset as u64)).ok()?;
                file.read_exact(&mut buf).ok()?;
            }
            Bytes::Compressed { file, stream } => {
                let at = line.offset as u64;
                if stream.as_ref().is_none_or(|(_, pos)| *pos > at) {
                    let from = scrollback_core::files::decompressed_from(file, at).ok()?;
                    *stream = Some((Box::new(from), at));
                }
                let (reader, pos) = stream.as_mut()?;
                io::copy(&mut reader.by_ref().take(at - *pos), &mut io::sink()).ok()?;
                *pos = at;
                let read = reader.read_exact(&mut buf);
                // (A failed read leaves the stream somewhere unknown: start again next time.)
                match read {
                    Ok(()) => *pos += buf.len() as u64,
                    Err(_) => {
                        *stream = None;
                        return None;
                    }
                }
            }
        }
        if buf.pop() != Some(b'\n') || !same_line(&buf, line, &self.path) {
            return None;
        }
        Some(buf)
    }
}

/// Whether `raw`, a line read from the transcript at `path`, is the line the index stored: equal to
/// the stored line outside its payloads (each payload's marker where its extent says), and each
/// payload's bytes, read from `path`, what their blake3 says. A line the index did not store (not
/// indexed) is taken as its terminator placed it.
fn same_line(raw: &[u8], line: &Line, path: &Path) -> bool {
    use scrollback_core::codec::scan::{STRIPPED_MEDIA_MARKER, marker_offsets};
    let Some(stored) = &line.stored else { return true };
    let (stored, marker) = (stored.as_bytes(), STRIPPED_MEDIA_MARKER.as_bytes());
    let (mut in_raw, mut in_stored) = (0usize, 0usize);
    for (m, at) in line.media.iter().zip(marker_offsets(line.media.iter().map(MediaRecord::extent))) {
        let extent = m.extent();
        let (start, end) = (extent.offset as usize, (extent.offset + extent.len) as usize);
        let at = at as usize;
        let same = start >= in_raw
            && at >= in_stored
            && raw.get(in_raw..start) == stored.get(in_stored..at)
            && stored.get(at..at + marker.len()) == Some(marker)
            && end <= raw.len();
        // (From the file the line was read from: the record names the transcript's path, which may
        // be another file by now while its vault link holds this one.)
        let from = MediaRecord { path: path.to_owned(), file_live: true, ..m.clone() };
        if !same || media::open(&from).and_then(|r| r.verify()).is_err() {
            return false;
        }
        (in_raw, in_stored) = (end, at + marker.len());
    }
    raw.get(in_raw..) == stored.get(in_stored..)
}

/// A transcript, opened only if it is still the file the index read (its device and inode), and
/// a regular file (never a FIFO, which would block).
fn open_same(path: &Path, dev: i64, inode: i64) -> Result<std::fs::File> {
    use std::os::unix::fs::MetadataExt;
    let file = scrollback_core::files::open_regular(path).map_err(|e| Error::io(path, e))?;
    let meta = file.metadata().map_err(|e| Error::io(path, e))?;
    // The vault's render of a database's session is a file of its own, named after the database.
    let render = scrollback_core::files::is_render_of(path, dev, inode);
    if (meta.dev() as i64, meta.ino() as i64) != (dev, inode) && !render {
        return Err(Error::io(path, io::Error::other("not the transcript the index read (replaced or moved)")));
    }
    Ok(file)
}

/// A JSON line with the secrets in its strings taken out (a line that is not JSON, as text).
fn redact_line(r: &Redactor, line: &[u8], counts: &mut Redacted) -> Vec<u8> {
    match serde_json::from_slice::<Value>(line) {
        Ok(mut v) => {
            let before = counts.values().sum::<u64>();
            r.redact_value(&mut v, counts);
            if counts.values().sum::<u64>() == before { line.to_vec() } else { v.to_string().into_bytes() }
        }
        Err(_) => r.redact(&String::from_utf8_lossy(line), counts).into_owned().into_bytes(),
    }
}

/// An entry's parts and photos, and who said it; `None` for a line a reader is not shown.
struct Shown<'e> {
    who: &'static str,
    parts: Vec<Part>,
    photos: Vec<&'e MediaRecord>,
}

/// The entry as a reader is shown it, its texts redacted by `redactor`, if any, each as a whole.
fn shown<'e>(e: &'e HistoryEntry, redactor: Option<&Redactor>, redacted: &mut Redacted) -> Option<Shown<'e>> {
    let EntryBody::Stored { media, .. } = &e.body else { return None };
    let line: Value = serde_json::from_str(&e.render(&NoUrls)?).ok()?;
    // Photos are written from the entry's media rows, with their verified bytes.
    let mut parts: Vec<Part> = e.format.parts(&line).into_iter().filter(|p| !matches!(p, Part::Media(_))).collect();
    if let Some(r) = redactor {
        r.redact_parts(&mut parts, redacted);
    }
    let photos: Vec<&MediaRecord> = media.iter().filter(|m| m.kind == MediaKind::Image).collect();
    if parts.is_empty() && photos.is_empty() {
        return None;
    }
    let results_only = parts.iter().all(|p| matches!(p, Part::ToolResult { .. }));
    let who = match e.columns.role.as_deref().or(e.columns.kind.as_deref()) {
        _ if results_only && !parts.is_empty() => "Tool result",
        Some("user") => "You",
        Some("assistant") => "Assistant",
        _ => "Note",
    };
    Some(Shown { who, parts, photos })
}

fn when(e: &HistoryEntry) -> String {
    e.columns.timestamp.as_deref().map(|t| t.replace('T', " ").trim_end_matches('Z').to_owned()).unwrap_or_default()
}

fn span(s: &SessionSummary) -> String {
    let t = |x: &Option<String>| x.as_deref().map(|t| t.get(..16).unwrap_or(t).replace('T', " "));
    match (t(&s.first_timestamp), t(&s.last_timestamp)) {
        (Some(a), Some(b)) => format!("{a} – {b}"),
        (a, b) => a.or(b).unwrap_or_default(),
    }
}

fn about(s: &SessionSummary, branch: Option<&str>) -> Vec<String> {
    let agent = format::by_name(&s.agent).map_or(s.agent.as_str(), |f| f.display_name());
    let mut out = vec![agent.to_owned()];
    out.extend(s.project.clone());
    out.extend(branch.map(|b| format!("branch {b}")));
    out.push(span(s));
    out.push(format!("{} entries", s.entries - s.sidechain_entries));
    out.push(format!("{} photos", s.images));
    out.retain(|x| !x.is_empty());
    out
}

fn counts(redacted: &Redacted) -> String {
    redacted.iter().map(|(id, n)| format!("{id} ({n})")).collect::<Vec<_>>().join(", ")
}

/// The session's title and the line about it, redacted by `redactor`, if any.
fn heading(
    s: &SessionSummary,
    branch: Option<&str>,
    redactor: Option<&Redactor>,
    redacted: &mut Redacted,
) -> (String, String) {
    let title = s.title.clone().unwrap_or_else(|| s.id.clone());
    let about = about(s, branch).join(" · ");
    match redactor {
        Some(r) => (r.redact(&title, redacted).into_owned(), r.redact(&about, redacted).into_owned()),
        None => (title, about),
    }
}

// ---------------------------------------------------------------------------------------------
// HTML

fn html_head(s: &SessionSummary, branch: Option<&str>, redactor: Option<&Redactor>, redacted: &mut Redacted) -> String {
    let (title, about) = heading(s, branch, redactor, redacted);
    let mut out = String::from("<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    out.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    out.push_str(
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; img-src data:; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'\">\n",
    );
    out.push_str(&format!(
        "<title>{}</title>\n<style>\n{STYLE}\n{EXPORT_STYLE}\n</style>\n</head>\n<body>\n",
        escape(&title)
    ));
    out.push_str(&format!(
        "<main class=\"export\">\n<header>\n<h1>{}</h1>\n<p class=\"meta-text\" style=\"text-align:left\">{}</p>\n<p class=\"meta-text\" style=\"text-align:left\">Session {} · exported by scrollback {}</p>\n",
        escape(&title),
        escape(&about),
        escape(&s.id),
        env!("CARGO_PKG_VERSION"),
    ));
    if let Some(r) = redactor {
        out.push_str(&format!(
            "<p class=\"redaction\">Secrets were redacted (shown as [REDACTED:rule]) by these rules of {}: {}.</p>\n",
            escape(&r.source),
            escape(&r.rule_ids().join(", "))
        ));
    }
    out.push_str("</header>\n<ol class=\"entries\">\n");
    out
}

fn html_tail(written: &Written) -> String {
    let mut out = String::from("</ol>\n");
    if !written.redacted.is_empty() {
        out.push_str(&format!("<p class=\"redaction\">Redacted: {}.</p>\n", escape(&counts(&written.redacted))));
    }
    out.push_str("</main>\n</body>\n</html>\n");
    out
}

fn html_entry(e: &HistoryEntry, redactor: Option<&Redactor>, out: &mut dyn Write, written: &mut Written) -> Result<()> {
    let Some(shown) = shown(e, redactor, &mut written.redacted) else { return Ok(()) };
    let io = |e: io::Error| Error::io(Path::new("export"), e);
    let class = match shown.who {
        "You" => "entry user",
        "Note" => "entry note",
        _ => "entry assistant",
    };
    let mut body = String::new();
    html_parts(&shown.parts, &mut body);
    write!(out, "<li class=\"{class}\"><div class=\"bubble\">{body}").map_err(io)?;
    for photo in &shown.photos {
        let mime = photo
            .media_type
            .as_deref()
            .filter(|m| m.starts_with("image/") && !m.contains(['"', '<', '>', ' ']))
            .unwrap_or("application/octet-stream");
        write!(
            out,
            "<img class=\"photo\" alt=\"photo ({} bytes, blake3 {})\" data-blake3=\"{}\" src=\"data:{mime};base64,",
            photo.decoded_length,
            escape(&photo.blake3),
            escape(&photo.blake3)
        )
        .map_err(io)?;
        inline_base64(photo, out)?;
        write!(out, "\">").map_err(io)?;
        written.photos += 1;
    }
    writeln!(out, "</div><div class=\"who\">{} · {}</div></li>", shown.who, escape(&when(e))).map_err(io)?;
    written.entries += 1;
    Ok(())
}

/// The HTML of `parts`, appended to `body`. Photos and files are not among them: an entry's photos
/// are written from its media rows.
fn html_parts(parts: &[Part], body: &mut String) {
    for part in parts {
        match part {
            Part::Text(t) => match markdown::to_html(t) {
                Some(html) => body.push_str(&format!("<div class=\"text markdown\">{html}</div>")),
                None => body.push_str(&format!("<pre>{}</pre>", escape(t))),
            },
            Part::Thinking(t) => body.push_str(&format!(
                "<details class=\"thinking\"><summary>Thinking</summary><pre>{}</pre></details>",
                escape(t)
            )),
            Part::ToolCall(call) => body.push_str(&html_tool(call)),
            Part::ToolResult { text: t, error, .. } => {
                let lines = if t.is_empty() { 0 } else { t.lines().count() };
                body.push_str(&format!(
                    "<details class=\"tool result{}\"><summary><span class=\"result-label{}\">{}</span> <span class=\"meta-text\">{lines} lines, {}</span></summary><pre class=\"result-body\">{}</pre></details>",
                    if *error { " error" } else { "" },
                    if *error { " error" } else { "" },
                    if *error { "Result: error" } else { "Result" },
                    bytes(t.len() as u64),
                    escape(t)
                ));
            }
            Part::Note(t) => body.push_str(&format!("<p class=\"meta-text\">{}</p>", escape(t))),
            Part::Command { name, args } => body.push_str(&format!(
                "<p><code class=\"command\">{}</code></p>",
                escape(format!("{name} {args}").trim_end())
            )),
            Part::Output { text: t, error } => body.push_str(&format!(
                "<pre class=\"command-output{}\">{}</pre>",
                if *error { " error" } else { "" },
                escape(t)
            )),
            Part::Context { label, text: t } => body.push_str(&format!(
                "<details class=\"context\"><summary>{}</summary><pre>{}</pre></details>",
                escape(label),
                escape(t)
            )),
            Part::Group { title, parts } => {
                body.push_str(&format!("<details class=\"tool\"><summary>{}</summary>", escape(title)));
                html_parts(parts, body);
                body.push_str("</details>");
            }
            Part::Message { who, parts } => {
                body.push_str(&format!(
                    "<div class=\"checkpoint-message\"><div class=\"who\">{}</div>",
                    escape(&who.name)
                ));
                html_parts(parts, body);
                body.push_str("</div>");
            }
            Part::Media(_) => {}
        }
    }
}

fn html_tool(call: &ToolCall) -> String {
    let mut out = format!(
        "<details class=\"tool call\"><summary class=\"tool-line\"><span class=\"tool-name\">{}</span> <code class=\"tool-subject\">{}</code>",
        escape(&call.tool),
        escape(&call.subject)
    );
    if let Some((added, removed)) = call.lines {
        out.push_str(&format!(
            " <span class=\"diffstat\"><span class=\"add\">+{added}</span> <span class=\"del\">−{removed}</span></span>"
        ));
    }
    out.push_str("</summary>");
    if !call.diff.is_empty() {
        out.push_str("<div class=\"diff\"><div class=\"diff-unified\" style=\"display:block\">");
        for DiffLine { op, text: line } in &call.diff {
            let class = match op {
                '+' => "add",
                '-' => "del",
                '@' => "head",
                _ => "ctx",
            };
            let mark = if *op == '@' { String::new() } else { op.to_string() };
            out.push_str(&format!("<div class=\"diff-line {class}\">{}{}</div>", mark, escape(line)));
        }
        out.push_str("</div></div>");
    }
    out.push_str("</details>");
    out
}

fn bytes(n: u64) -> String {
    if n < 1024 {
        format!("{n} B")
    } else if n < 1 << 20 {
        format!("{:.1} KB", n as f64 / 1024.0)
    } else {
        format!("{:.1} MB", n as f64 / (1 << 20) as f64)
    }
}

/// A payload's verified bytes as base64, written a chunk at a time.
fn inline_base64(photo: &MediaRecord, out: &mut dyn Write) -> Result<()> {
    let mut reader = media::open(photo)?;
    // A multiple of 3: each chunk encodes without padding but the last.
    let mut buf = vec![0u8; 48 * 1024];
    loop {
        let mut filled = 0;
        while filled < buf.len() {
            let n = reader.read(&mut buf[filled..]).map_err(|e| media::into_error(e, photo))?;
            if n == 0 {
                break;
            }
            filled += n;
        }
        if filled == 0 {
            return Ok(());
        }
        let encoded = base64_simd::STANDARD.encode_to_string(&buf[..filled]);
        out.write_all(encoded.as_bytes()).map_err(|e| Error::io(Path::new("export"), e))?;
        if filled < buf.len() {
            return Ok(());
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Markdown

fn md_head(s: &SessionSummary, branch: Option<&str>, redactor: Option<&Redactor>, redacted: &mut Redacted) -> String {
    let (title, about) = heading(s, branch, redactor, redacted);
    let mut out = format!(
        "# {}\n\n{}  \nSession `{}` · exported by scrollback {}\n",
        title.replace('\n', " "),
        about,
        s.id,
        env!("CARGO_PKG_VERSION")
    );
    if let Some(r) = redactor {
        out.push_str(&format!(
            "\nSecrets were redacted (shown as `[REDACTED:rule]`) by these rules of {}: {}.\n",
            r.source,
            r.rule_ids().join(", ")
        ));
    }
    out
}

/// A fence longer than any run of backticks in `s`.
fn fence(s: &str) -> String {
    let longest = s.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    "`".repeat(longest.max(2) + 1)
}

/// The Markdown of `parts`, appended to `body` (photos are written from the entry's media rows).
fn md_parts(parts: &[Part], body: &mut String) {
    for part in parts {
        match part {
            Part::Text(t) => body.push_str(&format!("{t}\n\n")),
            Part::Thinking(t) => {
                for line in t.lines() {
                    body.push_str(&format!("> {line}\n"));
                }
                body.push('\n');
            }
            Part::ToolCall(call) => {
                let subject = &call.subject;
                let stat = call.lines.map(|(a, r)| format!(" (+{a} −{r})")).unwrap_or_default();
                body.push_str(&format!("**{}** `{}`{stat}\n\n", call.tool, subject.replace('`', "'")));
                if !call.diff.is_empty() {
                    let lines: Vec<String> = call
                        .diff
                        .iter()
                        .map(|d| {
                            let t = &d.text;
                            if d.op == '@' { format!("@@ {t}") } else { format!("{}{t}", d.op) }
                        })
                        .collect();
                    let joined = lines.join("\n");
                    let f = fence(&joined);
                    body.push_str(&format!("{f}diff\n{joined}\n{f}\n\n"));
                }
            }
            Part::ToolResult { text: t, error, .. } => {
                let f = fence(t);
                body.push_str(&format!(
                    "{}\n\n{f}\n{}\n{f}\n\n",
                    if *error { "Result (error):" } else { "Result:" },
                    t
                ));
            }
            Part::Note(t) => body.push_str(&format!("_{}_\n\n", t.trim())),
            Part::Command { name, args } => {
                let c = format!("{name} {args}").trim_end().replace('`', "'");
                body.push_str(&format!("`{c}`\n\n"));
            }
            Part::Output { text: t, error } => {
                let f = fence(t);
                body.push_str(&format!("{}\n\n{f}\n{t}\n{f}\n\n", if *error { "Error output:" } else { "Output:" }));
            }
            Part::Context { label, text: t } => {
                let f = fence(t);
                body.push_str(&format!("_{label}:_\n\n{f}\n{t}\n{f}\n\n"));
            }
            Part::Group { title, parts } => {
                body.push_str(&format!("**{title}**\n\n"));
                md_parts(parts, body);
            }
            Part::Message { who, parts } => {
                body.push_str(&format!("**{}:**\n\n", who.name));
                md_parts(parts, body);
            }
            Part::Media(_) => {}
        }
    }
}

fn md_entry(
    e: &HistoryEntry,
    redactor: Option<&Redactor>,
    out: &mut dyn Write,
    photos: Option<(&Path, &str)>,
    written: &mut Written,
) -> Result<()> {
    let Some(shown) = shown(e, redactor, &mut written.redacted) else { return Ok(()) };
    let mut body = format!("\n## {} · {}\n\n", shown.who, when(e));
    md_parts(&shown.parts, &mut body);
    out.write_all(body.as_bytes()).map_err(|e| Error::io(Path::new("export"), e))?;
    for photo in &shown.photos {
        let Some((dir, name)) = photos else {
            writeln!(out, "[photo {} not exported]\n", photo.blake3).map_err(|e| Error::io(Path::new("export"), e))?;
            continue;
        };
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        let file = format!("{}.{}", photo.blake3, photo.extension());
        media::save(photo, &dir.join(&file))?;
        writeln!(out, "![photo]({name}/{file})\n").map_err(|e| Error::io(Path::new("export"), e))?;
        written.photos += 1;
    }
    written.entries += 1;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use scrollback_core::codec::scan::{Encoding, STRIPPED_MEDIA_MARKER};

    /// A payload of `bytes` held by the store, written in `line` at `offset` as `length` bytes.
    fn held(bytes: &[u8], encoding: Encoding, offset: u64, length: usize) -> MediaRecord {
        MediaRecord {
            id: 0,
            path: "hub".into(),
            file_live: true,
            from_vault: false,
            offset,
            length: length as u64,
            encoding,
            media_type: Some("image/png".into()),
            decoded_length: bytes.len() as u64,
            blake3: blake3::hash(bytes).to_hex().to_string(),
            kind: MediaKind::Image,
            ordinal: Some(1),
            session_id: "s".into(),
            entry_uuid: None,
            entry_id: 1,
            line_offset: 0,
            held: Some(bytes.into()),
        }
    }

    /// The line `{"a":"<payload>","b":1}` with its payload as the marker, and where the payload is.
    fn stored_line(payload: &str) -> (Line, u64) {
        let head = r#"{"a":""#;
        let stored = format!("{head}{STRIPPED_MEDIA_MARKER}\",\"b\":1}}");
        let line =
            Line { offset: 0, length: (head.len() + payload.len() + 8) as i64, stored: Some(stored), media: vec![] };
        (line, head.len() as u64)
    }

    #[test]
    fn a_stored_line_gets_its_payloads_back_as_it_wrote_them_or_keeps_the_marker() {
        let store = rusqlite::Connection::open_in_memory().unwrap();
        let bytes = b"\x89PNG photo bytes!";
        for (written, encoding) in [
            (base64_simd::STANDARD.encode_to_string(bytes), Encoding::Base64),
            (base64_simd::STANDARD_NO_PAD.encode_to_string(bytes), Encoding::Base64),
            (format!("data:image/png;base64,{}", base64_simd::STANDARD.encode_to_string(bytes)), Encoding::DataUrl),
        ] {
            let (mut line, at) = stored_line(&written);
            line.media.push(held(bytes, encoding, at, written.len()));
            let whole = restored(&store, &line).unwrap().unwrap();
            assert_eq!(String::from_utf8(whole).unwrap(), format!(r#"{{"a":"{written}","b":1}}"#));
        }
        // Written with escapes inside, or in a way this does not write again: the marker stays.
        let escaped = base64_simd::STANDARD.encode_to_string(bytes).replace('/', "\\/");
        for (written, encoding) in
            [(escaped.clone(), Encoding::Base64Escaped), (format!("{escaped}=="), Encoding::Base64)]
        {
            let (mut line, at) = stored_line(&written);
            line.media.push(held(bytes, encoding, at, written.len()));
            assert_eq!(restored(&store, &line).unwrap(), None, "{written}");
        }
        // Bytes that are not the payload's (another blake3) fail, and are never written.
        let written = base64_simd::STANDARD.encode_to_string(bytes);
        let (mut line, at) = stored_line(&written);
        line.media.push(MediaRecord {
            held: Some(b"\x89PNG other bytes!".as_slice().into()),
            ..held(bytes, Encoding::Base64, at, written.len())
        });
        assert!(restored(&store, &line).is_err());
        // An index holds no payload's bytes: its lines come from their transcripts.
        let (mut line, at) = stored_line(&written);
        line.media.push(MediaRecord { held: None, ..held(bytes, Encoding::Base64, at, written.len()) });
        assert_eq!(restored(&store, &line).unwrap(), None);
    }
}
