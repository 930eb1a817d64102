//! One scanned line -> one entry row: the stored (stripped) line, the fields the index keeps, the
//! plain text to search, or the reason the line is invalid.
//!
//! Only the stripped line is parsed with serde_json, so a line's payloads are never parsed or copied.
//! A stripped line longer than [`MAX_STORED_LINE`] is refused rather than held in memory.

use serde_json::Value;

use crate::lines::{self, Line};
use crate::scan::{self, FailedImage, STRIPPED_MEDIA_MARKER, Span};

/// The longest stored line (the line without its payloads) that is indexed; a longer one is recorded
/// as invalid, its bytes left in the transcript.
pub const MAX_STORED_LINE: u64 = 16 << 20;

/// Title ranks (which kind of line named the session); a higher rank wins.
pub mod title_rank {
    /// `custom-title` lines (the user named the session).
    pub const CUSTOM: u8 = 4;
    /// `ai-title` lines.
    pub const AI: u8 = 3;
    /// `summary` lines.
    pub const SUMMARY: u8 = 2;
    /// The first user message's text.
    pub const FIRST_USER_TEXT: u8 = 1;
}

/// The fields of a line the index keeps in columns.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Meta {
    /// `sessionId`.
    pub session_id: Option<String>,
    /// `uuid`.
    pub uuid: Option<String>,
    /// `parentUuid`.
    pub parent_uuid: Option<String>,
    /// `type`.
    pub kind: Option<String>,
    /// `message.role`.
    pub role: Option<String>,
    /// `timestamp`.
    pub timestamp: Option<String>,
    /// `isSidechain`.
    pub is_sidechain: bool,
    /// `cwd`.
    pub cwd: Option<String>,
    /// Plain text for search.
    pub text: Option<String>,
    /// A title this line gives its session, with its rank.
    pub title: Option<(u8, String)>,
}

/// A line ready to be written.
#[derive(Debug, Clone)]
pub struct Described {
    /// 1-based line number.
    pub line: u64,
    /// Byte offset of the line in the file.
    pub offset: u64,
    /// Bytes of the line, terminator excluded.
    pub length: u64,
    /// The stored line, or `None` for an invalid one.
    pub stripped: Option<String>,
    /// Why the line is invalid.
    pub invalid: Option<String>,
    /// Payloads, offsets relative to the line.
    pub spans: Vec<Span>,
    /// Image blocks without a payload.
    pub failed_images: Vec<FailedImage>,
    /// Image blocks under `message.content`.
    pub image_blocks: u32,
    /// Column values.
    pub meta: Meta,
}

impl Described {
    fn invalid(line: &Line<'_>, reason: String) -> Described {
        tracing::warn!(path = %line.path.display(), offset = line.offset, line = line.number, "invalid line: {reason}");
        Described {
            line: line.number,
            offset: line.offset,
            length: line.length,
            stripped: None,
            invalid: Some(reason),
            spans: Vec::new(),
            failed_images: Vec::new(),
            image_blocks: 0,
            meta: Meta::default(),
        }
    }
}

/// Turns a scanned line into an entry.
pub fn describe(line: Line<'_>) -> Described {
    let output = match &line.scan {
        Ok(output) => output.clone(),
        Err(e) => {
            let reason = match line.bytes.map(std::str::from_utf8) {
                Some(Err(u)) => format!("not UTF-8: invalid byte at {}", u.valid_up_to()),
                _ => format!("not JSON: {e}"),
            };
            return Described::invalid(&line, reason);
        }
    };
    let payload_bytes: u64 = output.spans.iter().map(|s| s.len).sum();
    let text_bytes = line.length - payload_bytes;
    if text_bytes > MAX_STORED_LINE {
        return Described::invalid(
            &line,
            format!("line too long: {text_bytes} bytes without its payloads (the limit is {MAX_STORED_LINE})"),
        );
    }
    let stripped = match line.bytes {
        Some(bytes) => scan::strip(bytes, &output.spans),
        None => match read_stripped(&line, &output.spans) {
            Ok(s) => s,
            Err(e) => {
                return Described::invalid(&line, format!("could not read the line back: {e}"));
            }
        },
    };
    let stripped = match String::from_utf8(stripped) {
        Ok(s) => s,
        Err(e) => {
            return Described::invalid(&line, format!("not UTF-8: invalid byte at {}", e.utf8_error().valid_up_to()));
        }
    };
    let value: Value = match serde_json::from_str(&stripped) {
        Ok(v) => v,
        Err(e) => return Described::invalid(&line, format!("not JSON: {e}")),
    };
    let Value::Object(_) = &value else {
        return Described::invalid(&line, "not a JSON object".into());
    };
    Described {
        line: line.number,
        offset: line.offset,
        length: line.length,
        meta: meta(&value),
        stripped: Some(stripped),
        invalid: None,
        spans: output.spans,
        failed_images: output.failed_images,
        image_blocks: output.image_blocks,
    }
}

/// Reads a long line's bytes between its payloads back from the file.
fn read_stripped(line: &Line<'_>, spans: &[Span]) -> crate::Result<Vec<u8>> {
    let mut out = Vec::new();
    let mut at = 0u64;
    for span in spans {
        lines::read_exact_at(line.file, line.path, line.offset + at, span.offset - at, &mut out)?;
        out.extend_from_slice(STRIPPED_MEDIA_MARKER.as_bytes());
        at = span.offset + span.len;
    }
    lines::read_exact_at(line.file, line.path, line.offset + at, line.length - at, &mut out)?;
    Ok(out)
}

fn string(v: Option<&Value>) -> Option<String> {
    v.and_then(Value::as_str).map(str::to_owned)
}

/// The column values and search text of a parsed (stripped) line.
pub fn meta(v: &Value) -> Meta {
    let message = v.get("message");
    let kind = string(v.get("type"));
    let mut text = String::new();
    if let Some(content) = message.and_then(|m| m.get("content")) {
        content_text(content, &mut text);
    }
    for key in ["summary", "customTitle", "aiTitle", "lastPrompt"] {
        if let Some(s) = v.get(key).and_then(Value::as_str) {
            push_text(&mut text, s);
        }
    }
    if kind.as_deref() == Some("queue-operation")
        && let Some(s) = v.get("content").and_then(Value::as_str)
    {
        push_text(&mut text, s);
    }
    let role = string(message.and_then(|m| m.get("role")));
    let title = match kind.as_deref() {
        Some("custom-title") => string(v.get("customTitle")).map(|t| (title_rank::CUSTOM, t)),
        Some("ai-title") => string(v.get("aiTitle")).map(|t| (title_rank::AI, t)),
        Some("summary") => string(v.get("summary")).map(|t| (title_rank::SUMMARY, t)),
        Some("user") if role.as_deref() == Some("user") && v.get("isMeta") != Some(&Value::Bool(true)) => {
            first_user_text(message.and_then(|m| m.get("content"))).map(|t| (title_rank::FIRST_USER_TEXT, t))
        }
        _ => None,
    };
    Meta {
        session_id: string(v.get("sessionId")),
        uuid: string(v.get("uuid")),
        parent_uuid: string(v.get("parentUuid")),
        kind,
        role,
        timestamp: string(v.get("timestamp")),
        is_sidechain: v.get("isSidechain").and_then(Value::as_bool).unwrap_or(false),
        cwd: string(v.get("cwd")),
        text: (!text.is_empty()).then_some(text),
        title,
    }
}

fn push_text(out: &mut String, s: &str) {
    let s = s.trim();
    if s.is_empty() || s == STRIPPED_MEDIA_MARKER {
        return;
    }
    if !out.is_empty() {
        out.push('\n');
    }
    out.push_str(s);
}

/// The searchable text of `message.content` (a string or blocks, nested tool results included).
fn content_text(content: &Value, out: &mut String) {
    match content {
        Value::String(s) => push_text(out, s),
        Value::Array(blocks) => {
            for block in blocks {
                match block.get("type").and_then(Value::as_str) {
                    Some("text") => push_text(out, block.get("text").and_then(Value::as_str).unwrap_or("")),
                    Some("thinking") => push_text(out, block.get("thinking").and_then(Value::as_str).unwrap_or("")),
                    Some("tool_use") => {
                        if let Some(name) = block.get("name").and_then(Value::as_str) {
                            push_text(out, name);
                        }
                        if let Some(input) = block.get("input") {
                            push_text(out, &input.to_string());
                        }
                    }
                    Some("tool_result") => {
                        if let Some(c) = block.get("content") {
                            content_text(c, out);
                        }
                    }
                    _ => {
                        if let Some(s) = block.get("text").and_then(Value::as_str) {
                            push_text(out, s);
                        }
                    }
                }
            }
        }
        _ => {}
    }
}

/// The first text a user typed, for a session's title: text blocks only, not tool results, and not
/// the harness's own `<command-...>` or `<local-command-...>` wrappers.
fn first_user_text(content: Option<&Value>) -> Option<String> {
    let text = match content? {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
            .find_map(|b| b.get("text").and_then(Value::as_str).filter(|t| !t.trim().is_empty()).map(str::to_owned))?,
        _ => return None,
    };
    let text = text.trim();
    if text.is_empty() || text.starts_with('<') {
        return None;
    }
    Some(text.chars().take(200).collect())
}
