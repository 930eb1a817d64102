//! Reading history back: session lists, pages of entries, full-text search, and the stored line
//! rendered for a client with each image block's `ref`, `url`, `mimeType` and `bytes`.
//!
//! Plain functions of a read-only `&Connection`. A page never reads a transcript byte: everything it
//! needs (stored lines, media rows) is in SQLite. Image blocks are located by scanning the *stored*
//! line with the same [`Scanner`](crate::scan::Scanner) the indexer used (a marker is not base64, so
//! every block reads as payload-less, with its ordinal and its position), and payload markers by the
//! media rows' offsets: nothing is enumerated a second way.

use std::fmt::Write as _;

use rusqlite::{Connection, OptionalExtension, params};
use serde::Serialize;
use serde_json::value::RawValue;

use crate::error::{Error, Result};
use crate::scan::{self, Encoding, MediaKind, STRIPPED_MEDIA_MARKER, Span};

/// The longest page a caller may ask for.
pub const MAX_LIMIT: u32 = 500;

/// What the client shows for an image block with nothing behind it.
pub const NOT_DISPLAYED: &str = "[image not displayed]";

/// A bad request: the message says which parameter and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invalid(pub String);

/// One session, as listed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionSummary {
    /// The session id.
    pub id: String,
    /// Its working directory.
    pub project: Option<String>,
    /// Its title.
    pub title: Option<String>,
    /// Earliest entry timestamp.
    pub first_timestamp: Option<String>,
    /// Latest entry timestamp.
    pub last_timestamp: Option<String>,
    /// Valid entries.
    pub entries: i64,
    /// Image blocks (failed uploads included).
    pub images: i64,
}

/// A page of sessions, newest first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionPage {
    /// The sessions.
    pub sessions: Vec<SessionSummary>,
    /// Pass as `cursor` for the next page; `None` at the end.
    pub next: Option<String>,
}

/// Which sessions to list.
#[derive(Debug, Clone, Default)]
pub struct SessionQuery {
    /// Only sessions whose project is this.
    pub project: Option<String>,
    /// Only sessions with an entry matching this full-text query, or whose title contains it.
    pub text: Option<String>,
    /// From this cursor on.
    pub cursor: Option<String>,
    /// At most this many.
    pub limit: u32,
}

/// Lists sessions, newest (by last entry) first.
pub fn sessions(conn: &Connection, q: &SessionQuery) -> Result<Result<SessionPage, Invalid>> {
    let limit = q.limit.clamp(1, MAX_LIMIT);
    // The cursor is "<lastTimestamp>|<rowid>" of the last session of the previous page.
    let cursor = match q.cursor.as_deref() {
        None => None,
        Some(c) => match c.rsplit_once('|').and_then(|(ts, id)| Some((ts.to_owned(), id.parse::<i64>().ok()?))) {
            Some(parsed) => Some(parsed),
            None => return Ok(Err(Invalid(format!("cursor {c:?} is not one this server gave")))),
        },
    };
    let mut sql = String::from(
        "SELECT rowid, id, project, title, first_timestamp, last_timestamp, entries, images
         FROM sessions WHERE 1",
    );
    let mut args: Vec<Box<dyn rusqlite::ToSql>> = Vec::new();
    if let Some(project) = &q.project {
        sql.push_str(" AND project = ?");
        args.push(Box::new(project.clone()));
    }
    if let Some(text) = &q.text {
        sql.push_str(
            " AND (instr(lower(coalesce(title, '')), lower(?)) > 0 OR id IN (
                 SELECT e.session_id FROM entries_fts JOIN entries e ON e.id = entries_fts.rowid
                 WHERE entries_fts MATCH ?))",
        );
        args.push(Box::new(text.clone()));
        args.push(Box::new(text.clone()));
    }
    if let Some((ts, rowid)) = &cursor {
        sql.push_str(" AND (coalesce(last_timestamp, ''), rowid) < (?, ?)");
        args.push(Box::new(ts.clone()));
        args.push(Box::new(*rowid));
    }
    write!(sql, " ORDER BY coalesce(last_timestamp, '') DESC, rowid DESC LIMIT {}", limit + 1).unwrap();
    let rows = (|| {
        let mut stmt = conn.prepare(&sql)?;
        let rows = stmt.query_map(rusqlite::params_from_iter(args.iter().map(|a| a.as_ref())), |r| {
            Ok((
                r.get::<_, i64>(0)?,
                SessionSummary {
                    id: r.get(1)?,
                    project: r.get(2)?,
                    title: r.get(3)?,
                    first_timestamp: r.get(4)?,
                    last_timestamp: r.get(5)?,
                    entries: r.get(6)?,
                    images: r.get(7)?,
                },
            ))
        })?;
        rows.collect::<rusqlite::Result<Vec<(i64, SessionSummary)>>>()
    })();
    let mut rows = match rows {
        Ok(rows) => rows,
        Err(e) => return fts_error(e).map(Err),
    };
    let next = if rows.len() > limit as usize {
        rows.truncate(limit as usize);
        rows.last().map(|(rowid, s)| format!("{}|{rowid}", s.last_timestamp.as_deref().unwrap_or("")))
    } else {
        None
    };
    Ok(Ok(SessionPage { sessions: rows.into_iter().map(|(_, s)| s).collect(), next }))
}

/// A failed full-text query: `Ok(Invalid)` with FTS5's reason when the query could not be parsed
/// (the caller's mistake), the error itself otherwise.
fn fts_error(e: rusqlite::Error) -> Result<Invalid> {
    match &e {
        rusqlite::Error::SqliteFailure(_, Some(message))
            if ["fts5", "syntax error", "no such column", "unterminated string", "unknown special query"]
                .iter()
                .any(|m| message.contains(m)) =>
        {
            Ok(Invalid(format!("search query: {message}")))
        }
        _ => Err(e.into()),
    }
}

/// Where a history page starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Position {
    /// The newest page.
    Newest,
    /// The page just older than this cursor.
    Before(i64),
    /// Entries newer than this cursor (catching up after an event).
    After(i64),
}

/// One entry of a history page.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HistoryEntry {
    /// This entry's cursor.
    pub cursor: i64,
    /// 1-based line number in its transcript.
    pub line: i64,
    /// `uuid`.
    pub uuid: Option<String>,
    /// `parentUuid`.
    pub parent_uuid: Option<String>,
    /// `type`.
    #[serde(rename = "type")]
    pub kind: Option<String>,
    /// `message.role`.
    pub role: Option<String>,
    /// `timestamp`.
    pub timestamp: Option<String>,
    /// `isSidechain`.
    pub is_sidechain: bool,
    /// The stored line, rendered for a client: markers replaced by URLs, image blocks with `ref`, `url`,
    /// `mimeType` and `bytes` (see the module docs); absent for an invalid line.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub entry: Option<Box<RawValue>>,
    /// Why the line could not be indexed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub invalid: Option<String>,
}

/// A page of history.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HistoryPage {
    /// The session.
    pub session_id: String,
    /// Entries in line order.
    pub entries: Vec<HistoryEntry>,
    /// Pass as `before` for the next older page; `None` at the start of the session.
    pub before: Option<i64>,
    /// Pass as `after` to catch up later.
    pub after: Option<i64>,
}

/// One media row as rendering needs it.
struct MediaRow {
    entry_id: i64,
    offset_in_line: u64,
    length: u64,
    ordinal: Option<u32>,
    kind: String,
    media_type: Option<String>,
    decoded_length: i64,
    blake3: String,
    encoding: String,
}

/// A page of a session's history. Side chains (sub-agent transcripts) are left out unless asked for.
pub fn history(
    conn: &Connection,
    session_id: &str,
    at: Position,
    limit: u32,
    sidechains: bool,
) -> Result<Option<HistoryPage>> {
    let exists: bool = conn
        .prepare_cached(
            "SELECT EXISTS (SELECT 1 FROM sessions WHERE id = ?1) OR EXISTS (SELECT 1 FROM entries WHERE session_id = ?1)",
        )?
        .query_row([session_id], |r| r.get(0))?;
    if !exists {
        return Ok(None);
    }
    let limit = limit.clamp(1, MAX_LIMIT) as i64;
    let side = if sidechains { "" } else { " AND is_sidechain = 0" };
    let columns = "id, line, uuid, parent_uuid, type, role, timestamp, is_sidechain, stripped, invalid, offset";
    let sql = match at {
        Position::Newest => format!(
            "SELECT {columns} FROM entries WHERE session_id = ?1{side} AND ?2 IS NULL ORDER BY id DESC LIMIT ?3"
        ),
        Position::Before(_) => {
            format!("SELECT {columns} FROM entries WHERE session_id = ?1{side} AND id < ?2 ORDER BY id DESC LIMIT ?3")
        }
        Position::After(_) => {
            format!("SELECT {columns} FROM entries WHERE session_id = ?1{side} AND id > ?2 ORDER BY id ASC LIMIT ?3")
        }
    };
    let cursor = match at {
        Position::Newest => None,
        Position::Before(c) | Position::After(c) => Some(c),
    };
    type Row = (HistoryEntry, Option<String>, i64);
    let mut stmt = conn.prepare_cached(&sql)?;
    let mut rows: Vec<Row> = stmt
        .query_map(params![session_id, cursor, limit], |r| {
            Ok((
                HistoryEntry {
                    cursor: r.get(0)?,
                    line: r.get(1)?,
                    uuid: r.get(2)?,
                    parent_uuid: r.get(3)?,
                    kind: r.get(4)?,
                    role: r.get(5)?,
                    timestamp: r.get(6)?,
                    is_sidechain: r.get(7)?,
                    entry: None,
                    invalid: r.get(9)?,
                },
                r.get::<_, Option<String>>(8)?,
                r.get::<_, i64>(10)?,
            ))
        })?
        .collect::<rusqlite::Result<_>>()?;
    if !matches!(at, Position::After(_)) {
        rows.reverse();
    }
    let media = match (rows.first(), rows.last()) {
        (Some(first), Some(last)) => {
            media_rows(conn, session_id, first.0.cursor.min(last.0.cursor), first.0.cursor.max(last.0.cursor))?
        }
        _ => Vec::new(),
    };
    let mut entries = Vec::with_capacity(rows.len());
    for (mut entry, stripped, _) in rows {
        if let Some(stripped) = stripped {
            let own: Vec<&MediaRow> = media.iter().filter(|m| m.entry_id == entry.cursor).collect();
            let rendered = render(session_id, entry.uuid.as_deref(), &stripped, &own);
            entry.entry = Some(RawValue::from_string(rendered).map_err(|e| {
                Error::Sqlite(rusqlite::Error::ToSqlConversionFailure(format!("stored line is not JSON: {e}").into()))
            })?);
        }
        entries.push(entry);
    }
    let oldest = entries.first().map(|e| e.cursor);
    let newest = entries.last().map(|e| e.cursor);
    let older_exists = match oldest {
        Some(oldest) => conn
            .prepare_cached(&format!("SELECT 1 FROM entries WHERE session_id = ?1{side} AND id < ?2 LIMIT 1"))?
            .query_row(params![session_id, oldest], |_| Ok(()))
            .optional()?
            .is_some(),
        None => false,
    };
    let before = if older_exists { oldest } else { None };
    let after = newest.or(cursor);
    Ok(Some(HistoryPage { session_id: session_id.to_owned(), entries, before, after }))
}

/// The media rows of a session's entries with cursors in `from..=to`.
fn media_rows(conn: &Connection, session_id: &str, from: i64, to: i64) -> Result<Vec<MediaRow>> {
    let mut stmt = conn.prepare_cached(
        "SELECT m.entry_id, m.offset - e.offset, m.length, m.ordinal, m.kind, m.media_type, m.decoded_length,
                m.blake3, m.encoding
         FROM media m JOIN entries e ON e.id = m.entry_id
         WHERE m.entry_id BETWEEN ?1 AND ?2 AND e.session_id = ?3 ORDER BY m.entry_id, m.offset",
    )?;
    let rows = stmt.query_map(params![from, to, session_id], |r| {
        Ok(MediaRow {
            entry_id: r.get(0)?,
            offset_in_line: r.get::<_, i64>(1)? as u64,
            length: r.get::<_, i64>(2)? as u64,
            ordinal: r.get(3)?,
            kind: r.get(4)?,
            media_type: r.get(5)?,
            decoded_length: r.get(6)?,
            blake3: r.get(7)?,
            encoding: r.get(8)?,
        })
    })?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// The URL of a payload by ref.
pub fn session_media_url(session_id: &str, uuid: &str, ordinal: u32) -> String {
    format!("/api/session-media/{}/{}/{ordinal}", encode_segment(session_id), encode_segment(uuid))
}

/// The URL of a payload by hash.
pub fn media_url(blake3: &str) -> String {
    format!("/api/media/{blake3}")
}

/// Percent-encodes a path segment (anything but unreserved characters).
fn encode_segment(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(b as char);
        } else {
            write!(out, "%{b:02X}").unwrap();
        }
    }
    out
}

fn json_string(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into())
}

/// Renders a stored line for a client:
/// - each payload marker becomes the payload's URL (by ref for an image with one, else by hash), so a
///   chat UI's `{"type":"image","url":...}` chunk renders as it is;
/// - each image block under `message.content` gains `ref`, `url`, `mimeType` and `bytes`, or, for a
///   failed upload, `"failed": true` and `"placeholder": "[image not displayed]"` (keys the block
///   already has are left alone);
/// - every other stripped payload's object gains `mediaUrl`, `mediaType` and `mediaBytes`.
///
/// The result is JSON; if the stored line cannot be scanned (it always can), it is returned as it is.
fn render(session_id: &str, uuid: Option<&str>, stripped: &str, media: &[&MediaRow]) -> String {
    let bytes = stripped.as_bytes();
    if media.is_empty()
        && memchr::memmem::find(bytes, b"image").is_none()
        && memchr::memmem::find(bytes, b"\\u").is_none()
    {
        // No payload and no image block (their `type` would spell "image", or hide it in an escape).
        return stripped.to_owned();
    }
    let mut scanner = scan::Scanner::new();
    scanner.feed(bytes);
    let Ok(output) = scanner.finish() else { return stripped.to_owned() };
    // Edits as (position, bytes to remove, text to insert), applied from the end.
    let mut edits: Vec<(usize, usize, String)> = Vec::new();
    let spans: Vec<Span> = media
        .iter()
        .map(|m| Span {
            offset: m.offset_in_line,
            len: m.length,
            encoding: Encoding::parse(&m.encoding).unwrap_or(Encoding::Base64),
            media_type: None,
            kind: MediaKind::File,
            ordinal: m.ordinal,
            decoded_len: 0,
            blake3: blake3::Hash::from_bytes([0; 32]),
        })
        .collect();
    for (m, at) in media.iter().zip(scan::marker_offsets(&spans)) {
        let at = at as usize;
        if stripped.get(at..at + STRIPPED_MEDIA_MARKER.len()) != Some(STRIPPED_MEDIA_MARKER) {
            continue;
        }
        let url = match (m.ordinal, uuid) {
            (Some(ordinal), Some(uuid)) if m.kind == "image" => session_media_url(session_id, uuid, ordinal),
            _ => media_url(&m.blake3),
        };
        edits.push((at, STRIPPED_MEDIA_MARKER.len(), url));
        if m.ordinal.is_none() {
            // After the marker's closing quote: still inside the payload's object.
            let mut extra = format!(",\"mediaUrl\":{}", json_string(&media_url(&m.blake3)));
            if let Some(t) = &m.media_type {
                write!(extra, ",\"mediaType\":{}", json_string(t)).unwrap();
            }
            write!(extra, ",\"mediaBytes\":{}", m.decoded_length).unwrap();
            edits.push((at + STRIPPED_MEDIA_MARKER.len() + 1, 0, extra));
        }
    }
    for block in &output.blocks {
        let (start, end) = (block.start as usize, block.end as usize);
        let keys: Vec<String> =
            serde_json::from_str::<serde_json::Map<String, serde_json::Value>>(&stripped[start..=end])
                .map(|m| m.keys().cloned().collect())
                .unwrap_or_default();
        let mut fields: Vec<(&str, String)> = Vec::new();
        match (media.iter().find(|m| m.ordinal == Some(block.ordinal)), uuid) {
            (Some(m), Some(uuid)) => {
                fields.push(("ref", json_string(&format!("{session_id}/{uuid}/{}", block.ordinal))));
                fields.push(("url", json_string(&session_media_url(session_id, uuid, block.ordinal))));
                if let Some(t) = &m.media_type {
                    fields.push(("mimeType", json_string(t)));
                }
                fields.push(("bytes", m.decoded_length.to_string()));
            }
            _ => {
                fields.push(("failed", "true".into()));
                fields.push(("placeholder", json_string(NOT_DISPLAYED)));
            }
        }
        let empty = stripped[start + 1..end].trim().is_empty();
        let mut insert = String::new();
        for (key, value) in fields.into_iter().filter(|(k, _)| !keys.iter().any(|existing| existing == k)) {
            if !(insert.is_empty() && empty) {
                insert.push(',');
            }
            write!(insert, "\"{key}\":{value}").unwrap();
        }
        edits.push((end, 0, insert));
    }
    edits.sort_by(|a, b| b.0.cmp(&a.0).then(b.1.cmp(&a.1)));
    let mut out = stripped.to_owned();
    for (at, remove, insert) in edits {
        out.replace_range(at..at + remove, &insert);
    }
    out
}

/// One full-text hit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SearchHit {
    /// The session.
    pub session_id: String,
    /// The entry's uuid.
    pub entry_uuid: Option<String>,
    /// The entry's cursor (for `before`/`after`).
    pub cursor: i64,
    /// Its line number.
    pub line: i64,
    /// `type`.
    #[serde(rename = "type")]
    pub kind: Option<String>,
    /// `timestamp`.
    pub timestamp: Option<String>,
    /// HTML: the matching text, escaped, with matches in `<mark>`.
    pub snippet: String,
}

/// Full-text search, best matches first. A query FTS5 cannot parse is `Err(Invalid)`.
pub fn search(
    conn: &Connection,
    query: &str,
    session: Option<&str>,
    limit: u32,
) -> Result<Result<Vec<SearchHit>, Invalid>> {
    let mut stmt = conn.prepare_cached(
        "SELECT e.session_id, e.uuid, e.id, e.line, e.type, e.timestamp,
                snippet(entries_fts, 0, char(57344), char(57345), '…', 16)
         FROM entries_fts JOIN entries e ON e.id = entries_fts.rowid
         WHERE entries_fts MATCH ?1 AND (?2 IS NULL OR e.session_id = ?2)
         ORDER BY rank LIMIT ?3",
    )?;
    let hits = stmt.query_map(params![query, session, limit.clamp(1, MAX_LIMIT)], |r| {
        Ok(SearchHit {
            session_id: r.get(0)?,
            entry_uuid: r.get(1)?,
            cursor: r.get(2)?,
            line: r.get(3)?,
            kind: r.get(4)?,
            timestamp: r.get(5)?,
            snippet: highlight(&r.get::<_, String>(6)?),
        })
    })?;
    match hits.collect::<rusqlite::Result<_>>() {
        Ok(hits) => Ok(Ok(hits)),
        Err(e) => fts_error(e).map(Err),
    }
}

/// Escapes HTML, then turns FTS5's match markers (two private-use characters) into `<mark>`.
fn highlight(snippet: &str) -> String {
    let mut out = String::with_capacity(snippet.len() + 16);
    for c in snippet.chars() {
        match c {
            '\u{E000}' => out.push_str("<mark>"),
            '\u{E001}' => out.push_str("</mark>"),
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(span: &Span, ordinal: Option<u32>, kind: &str) -> MediaRow {
        MediaRow {
            entry_id: 1,
            offset_in_line: span.offset,
            length: span.len,
            ordinal,
            kind: kind.into(),
            media_type: Some("image/png".into()),
            decoded_length: 6,
            blake3: "ab".repeat(32),
            encoding: "base64".into(),
        }
    }

    #[test]
    fn render_annotates_blocks_and_replaces_markers() {
        let line = r#"{"message":{"content":[{"type":"image","source":{"type":"base64","media_type":"image/png","data":"AAAAAAAA"}},{"type":"image","source":{"type":"base64","data":""}},{"type":"image","url":"data:image/png;base64,AAAAAAAA"}]},"toolUseResult":{"file":{"base64":"AAAAAAAA"}}}"#;
        let scanned = scan::scan(line.as_bytes()).unwrap();
        let stripped = String::from_utf8(scanned.stripped).unwrap();
        let spans = &scanned.output.spans;
        assert_eq!(spans.len(), 3);
        let rows = [row(&spans[0], Some(0), "image"), row(&spans[1], Some(2), "image"), row(&spans[2], None, "image")];
        let refs: Vec<&MediaRow> = rows.iter().collect();
        let out = render("s", Some("u"), &stripped, &refs);
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        let blocks = &v["message"]["content"];
        assert_eq!(blocks[0]["ref"], "s/u/0");
        assert_eq!(blocks[0]["url"], "/api/session-media/s/u/0");
        assert_eq!(blocks[0]["source"]["data"], "/api/session-media/s/u/0");
        assert_eq!(blocks[0]["bytes"], 6);
        assert_eq!(blocks[1]["failed"], true);
        assert_eq!(blocks[1]["placeholder"], NOT_DISPLAYED);
        assert!(blocks[1].get("ref").is_none());
        assert_eq!(blocks[2]["url"], "/api/session-media/s/u/2", "a data-URL chunk's url is its media URL");
        assert_eq!(blocks[2]["ref"], "s/u/2");
        let hash_url = format!("/api/media/{}", "ab".repeat(32));
        assert_eq!(v["toolUseResult"]["file"]["base64"], hash_url.as_str());
        assert_eq!(v["toolUseResult"]["file"]["mediaUrl"], hash_url.as_str());
        assert!(!out.contains(STRIPPED_MEDIA_MARKER));
    }

    #[test]
    fn highlight_escapes_html() {
        assert_eq!(highlight("<b>\u{E000}x\u{E001}</b>"), "&lt;b&gt;<mark>x</mark>&lt;/b&gt;");
    }
}
