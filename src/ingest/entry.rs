//! One scanned line -> one entry row: the stored (stripped) line, the fields the index keeps, the
//! plain text to search, or the reason the line is invalid.
//!
//! Only the stripped line is parsed with serde_json, so a line's payloads are never parsed or copied.
//! A stripped line longer than [`MAX_STORED_LINE`] is refused rather than held in memory.

use std::borrow::Cow;

use serde::Deserialize;
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;

use crate::ingest::lines::{self, Line};
use crate::ingest::scan::{self, FailedImage, STRIPPED_MEDIA_MARKER, ScanOutput, Span};
use crate::ingest::words;

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
    /// The first words the person wrote in the main transcript.
    pub const FIRST_USER_TEXT: u8 = 1;
    /// From this rank up the latest title (in conversation order) wins over an earlier one of the
    /// same rank; below it (the person's first words) the earliest stays. The sessions upsert
    /// states this rule in SQL with this constant, so both say the same.
    pub const LATEST_WINS_FROM: u8 = SUMMARY;

    /// Whether a title of rank `new` from the entry at `new_order` replaces one of rank `old` from
    /// `old_order`.
    pub fn replaces(
        new: u8,
        new_order: &crate::ingest::order::Order,
        old: u8,
        old_order: &crate::ingest::order::Order,
    ) -> bool {
        new > old
            || (new == old && if new >= LATEST_WINS_FROM { new_order >= old_order } else { new_order < old_order })
    }
}

/// The fields of a line that the index keeps as `entries` columns and gives back with each history
/// entry, as they were written.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Columns {
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
}

/// What the indexer reads of a line: its columns, and what it adds to its session and to search.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Meta {
    /// `sessionId`.
    pub session_id: Option<String>,
    /// The `entries` columns.
    pub columns: Columns,
    /// `cwd`.
    pub cwd: Option<String>,
    /// Plain text for search.
    pub text: Option<String>,
    /// A title this line gives its session, with its rank.
    pub title: Option<(u8, String)>,
    /// `agentId`: the sub-agent whose transcript this line is in.
    pub agent_id: Option<String>,
    /// `toolUseResult.agentId`: the sub-agent this line's tool call ran.
    pub spawned_agent: Option<String>,
}

/// A line ready to be written: where it is, and what it holds.
#[derive(Debug, Clone)]
pub struct Described {
    /// 1-based line number.
    pub line: u64,
    /// Byte offset of the line in the file.
    pub offset: u64,
    /// Bytes of the line, terminator excluded.
    pub length: u64,
    /// The entry, or why there is none.
    pub body: Body,
}

/// What a line holds: an entry to store, or the reason it cannot be one.
#[derive(Debug, Clone)]
// Nearly every line is `Stored`: boxing it would cost an allocation per line for the rare invalid one.
#[allow(clippy::large_enum_variant)]
pub enum Body {
    /// A JSON object, its payloads stripped.
    Stored(Stored),
    /// Not an entry (not JSON, not UTF-8, not an object, too long): the reason.
    Invalid(String),
}

/// A valid line, ready to be written.
#[derive(Debug, Clone)]
pub struct Stored {
    /// The line with each payload replaced by the marker.
    pub stripped: String,
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
        Described { line: line.number, offset: line.offset, length: line.length, body: Body::Invalid(reason) }
    }

    /// The stored entry, if the line is valid.
    pub fn stored(&self) -> Option<&Stored> {
        match &self.body {
            Body::Stored(stored) => Some(stored),
            Body::Invalid(_) => None,
        }
    }

    /// The session the entry belongs to: its `sessionId`, else the file's.
    pub fn session<'a>(&'a self, file_session: &'a str) -> &'a str {
        self.stored().and_then(|s| s.meta.session_id.as_deref()).unwrap_or(file_session)
    }
}

/// Turns a scanned line into an entry.
pub fn describe(mut line: Line<'_>) -> Described {
    let output = match std::mem::replace(&mut line.scan, Ok(ScanOutput::default())) {
        Ok(output) => output,
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
    let meta = match meta(&stripped) {
        Ok(meta) => meta,
        Err(MetaError::NotJson(e)) => return Described::invalid(&line, format!("not JSON: {e}")),
        Err(MetaError::NotObject) => return Described::invalid(&line, "not a JSON object".into()),
    };
    Described {
        line: line.number,
        offset: line.offset,
        length: line.length,
        body: Body::Stored(Stored {
            stripped,
            spans: output.spans,
            failed_images: output.failed_images,
            image_blocks: output.image_blocks,
            meta,
        }),
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

/// Why a stored line gives no entry: it is not JSON, or it is JSON but not an object.
#[derive(Debug)]
pub enum MetaError {
    /// Not JSON (the parser's message).
    NotJson(String),
    /// Valid JSON, but not an object.
    NotObject,
}

/// The column values and search text of a stored (stripped) line, read in one pass that borrows
/// from the line: only the fields the index keeps are looked at, everything else is skipped as it
/// is validated. A field of an unexpected JSON type counts as absent, and of a key given twice the
/// last wins, as with any JSON object.
pub fn meta(stripped: &str) -> Result<Meta, MetaError> {
    let mut de = serde_json::Deserializer::from_str(stripped);
    let fields = match Top::deserialize(&mut de).and_then(|f| de.end().map(|()| f)) {
        Ok(Top(Some(fields))) => fields,
        Ok(Top(None)) => return Err(MetaError::NotObject),
        Err(e) => return Err(MetaError::NotJson(e.to_string())),
    };
    Ok(fields.into_meta())
}

type Str<'a> = Option<Cow<'a, str>>;

/// The top-level fields of a line that the index reads.
#[derive(Default)]
struct Fields<'a> {
    kind: Str<'a>,
    session_id: Str<'a>,
    uuid: Str<'a>,
    parent_uuid: Str<'a>,
    timestamp: Str<'a>,
    cwd: Str<'a>,
    is_sidechain: bool,
    is_meta: bool,
    message: Message<'a>,
    /// `summary`, `customTitle`, `aiTitle`, `lastPrompt`, in that order.
    titles: [Str<'a>; 4],
    /// Top-level `content` (queue-operation and system lines).
    content: Str<'a>,
    agent_id: Str<'a>,
    tool_use_result: Nested<'a>,
    attachment: Nested<'a>,
}

/// The fields read from an object below the top level (`toolUseResult`, `attachment`).
#[derive(Default)]
struct Nested<'a> {
    agent_id: Str<'a>,
    prompt: Str<'a>,
}

#[derive(Default)]
struct Message<'a> {
    role: Str<'a>,
    content: Content<'a>,
}

#[derive(Default)]
enum Content<'a> {
    #[default]
    None,
    Text(Cow<'a, str>),
    Blocks(Vec<Block<'a>>),
}

#[derive(Default)]
struct Block<'a> {
    kind: Str<'a>,
    text: Str<'a>,
    thinking: Str<'a>,
    name: Str<'a>,
    input: Option<&'a RawValue>,
    content: Content<'a>,
}

impl<'a> Fields<'a> {
    fn into_meta(self) -> Meta {
        let mut text = String::new();
        content_text(&self.message.content, &mut text);
        for s in self.titles.iter().flatten() {
            push_text(&mut text, s);
        }
        let kind = self.kind.as_deref();
        if matches!(kind, Some("queue-operation" | "system"))
            && let Some(s) = &self.content
        {
            push_text(&mut text, s);
        }
        if let Some(prompt) = &self.attachment.prompt {
            push_text(&mut text, prompt);
        }
        let [summary, custom, ai, _] = &self.titles;
        let role = self.message.role.as_deref();
        let title = match kind {
            Some("custom-title") => custom.as_deref().map(|t| (title_rank::CUSTOM, t.to_owned())),
            Some("ai-title") => ai.as_deref().map(|t| (title_rank::AI, t.to_owned())),
            Some("summary") => summary.as_deref().map(|t| (title_rank::SUMMARY, t.to_owned())),
            Some("user") if role == Some("user") && !self.is_meta && !self.is_sidechain => {
                first_user_text(&self.message.content).map(|t| (title_rank::FIRST_USER_TEXT, t))
            }
            _ => None,
        };
        let text = match words::mark(&text) {
            std::borrow::Cow::Borrowed(_) => text,
            std::borrow::Cow::Owned(marked) => marked,
        };
        Meta {
            session_id: self.session_id.map(Cow::into_owned),
            columns: Columns {
                uuid: self.uuid.map(Cow::into_owned),
                parent_uuid: self.parent_uuid.map(Cow::into_owned),
                kind: self.kind.map(Cow::into_owned),
                role: self.message.role.map(Cow::into_owned),
                timestamp: self.timestamp.map(Cow::into_owned),
                is_sidechain: self.is_sidechain,
            },
            cwd: self.cwd.map(Cow::into_owned),
            text: (!text.is_empty()).then_some(text),
            title,
            agent_id: self.agent_id.map(Cow::into_owned),
            spawned_agent: self.tool_use_result.agent_id.map(Cow::into_owned),
        }
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
fn content_text(content: &Content<'_>, out: &mut String) {
    match content {
        Content::None => {}
        Content::Text(s) => push_text(out, s),
        Content::Blocks(blocks) => {
            for block in blocks {
                match block.kind.as_deref() {
                    Some("text") => push_text(out, block.text.as_deref().unwrap_or("")),
                    Some("thinking") => push_text(out, block.thinking.as_deref().unwrap_or("")),
                    Some("tool_use") => {
                        if let Some(name) = &block.name {
                            push_text(out, name);
                        }
                        if let Some(input) = block.input {
                            push_text(out, input.get());
                        }
                    }
                    Some("tool_result") => content_text(&block.content, out),
                    _ => {
                        if let Some(s) = &block.text {
                            push_text(out, s);
                        }
                    }
                }
            }
        }
    }
}

/// The first words a person typed, for a session's title: text blocks only (not tool results), and
/// of each, what follows the context the harness put in front of it (`<ide_selection>…</…>`,
/// `<system-reminder>…</…>` and other tagged blocks): a block that holds nothing else is skipped,
/// not the whole message. A slash command with arguments (`<command-name>`, `<command-args>`)
/// gives its name and arguments, as the person typed them.
fn first_user_text(content: &Content<'_>) -> Option<String> {
    let own = |text: &str| -> Option<String> {
        let rest = without_injected(text);
        let words = if rest.is_empty() {
            // A slash command the person gave arguments to: its name and arguments are their words
            // (one without, like `/clear`, says nothing about the conversation).
            let name = tag_content(text, "command-name")?;
            let args = tag_content(text, "command-args")?;
            format!("{name} {args}")
        } else if rest.starts_with('<') {
            return None;
        } else {
            rest.to_owned()
        };
        if words.is_empty() {
            return None;
        }
        Some(match words.char_indices().nth(200) {
            Some((at, _)) => words[..at].to_owned(),
            None => words,
        })
    };
    match content {
        Content::None => None,
        Content::Text(s) => own(s),
        Content::Blocks(blocks) => {
            blocks.iter().filter(|b| b.kind.as_deref() == Some("text")).find_map(|b| b.text.as_deref().and_then(own))
        }
    }
}

/// What `<name>…</name>` holds in `text`, trimmed, if it is there and not empty.
fn tag_content<'t>(text: &'t str, name: &str) -> Option<&'t str> {
    let open = format!("<{name}>");
    let start = text.find(&open)? + open.len();
    let end = start + text[start..].find(&format!("</{name}>"))?;
    Some(text[start..end].trim()).filter(|s| !s.is_empty())
}

/// `text` (trimmed) without the tagged blocks at its start: `<tag …>…</tag>`, one after another.
fn without_injected(text: &str) -> &str {
    let mut rest = text.trim();
    while let Some(inner) = rest.strip_prefix('<') {
        let name_end =
            inner.find(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '_')).unwrap_or(inner.len());
        let name = &inner[..name_end];
        if name.is_empty() {
            break;
        }
        let close = format!("</{name}>");
        match rest.find(&close) {
            Some(at) => rest = rest[at + close.len()..].trim_start(),
            None => break,
        }
    }
    rest
}

// The visitors. Each accepts any JSON value: the shape it expects is read, any other is skipped
// (validated, not kept) and counts as absent.

/// Implements the scalar visits of a visitor whose value is `Default` for anything unexpected, and
/// its `expecting`: every visitor here accepts any JSON value.
macro_rules! skip_scalars {
    () => {
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("any JSON value")
        }
        fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
            Ok(Default::default())
        }
        fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
            Ok(Default::default())
        }
        fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
            Ok(Default::default())
        }
        fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
            Ok(Default::default())
        }
        fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok(Default::default())
        }
    };
}

macro_rules! skip_strings {
    () => {
        fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
            Ok(Default::default())
        }
    };
}

macro_rules! skip_seq {
    () => {
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
            while seq.next_element::<IgnoredAny>()?.is_some() {}
            Ok(Default::default())
        }
    };
}

macro_rules! skip_containers {
    () => {
        skip_seq!();
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
            Ok(Default::default())
        }
    };
}

/// An object's key, borrowed from the line unless it has escapes.
struct Key<'a>(Cow<'a, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a key")
            }
            fn visit_borrowed_str<E: de::Error>(self, s: &'de str) -> Result<Self::Value, E> {
                Ok(Key(Cow::Borrowed(s)))
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Self::Value, E> {
                Ok(Key(Cow::Owned(s.to_owned())))
            }
        }
        d.deserialize_str(V)
    }
}

/// A string value, or nothing for any other JSON value.
struct LooseStr<'a>(Str<'a>);

impl<'de> Deserialize<'de> for LooseStr<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Str<'de>;
            fn visit_borrowed_str<E: de::Error>(self, s: &'de str) -> Result<Self::Value, E> {
                Ok(Some(Cow::Borrowed(s)))
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Self::Value, E> {
                Ok(Some(Cow::Owned(s.to_owned())))
            }
            skip_scalars!();
            skip_containers!();
        }
        d.deserialize_any(V).map(LooseStr)
    }
}

/// `true`, or `false` for any other JSON value.
struct LooseTrue(bool);

impl<'de> Deserialize<'de> for LooseTrue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = bool;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_bool<E: de::Error>(self, b: bool) -> Result<bool, E> {
                Ok(b)
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<bool, E> {
                Ok(false)
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<bool, E> {
                Ok(false)
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<bool, E> {
                Ok(false)
            }
            fn visit_unit<E: de::Error>(self) -> Result<bool, E> {
                Ok(false)
            }
            skip_strings!();
            skip_containers!();
        }
        d.deserialize_any(V).map(LooseTrue)
    }
}

/// The line's fields: `Some` for an object, `None` for any other JSON value.
struct Top<'a>(Option<Fields<'a>>);

impl<'de> Deserialize<'de> for Top<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Option<Fields<'de>>;
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut f = Fields::default();
                while let Some(key) = map.next_key::<Key>()? {
                    match &*key.0 {
                        "type" => f.kind = map.next_value::<LooseStr>()?.0,
                        "sessionId" => f.session_id = map.next_value::<LooseStr>()?.0,
                        "uuid" => f.uuid = map.next_value::<LooseStr>()?.0,
                        "parentUuid" => f.parent_uuid = map.next_value::<LooseStr>()?.0,
                        "timestamp" => f.timestamp = map.next_value::<LooseStr>()?.0,
                        "cwd" => f.cwd = map.next_value::<LooseStr>()?.0,
                        "isSidechain" => f.is_sidechain = map.next_value::<LooseTrue>()?.0,
                        "isMeta" => f.is_meta = map.next_value::<LooseTrue>()?.0,
                        "message" => f.message = map.next_value()?,
                        "summary" => f.titles[0] = map.next_value::<LooseStr>()?.0,
                        "customTitle" => f.titles[1] = map.next_value::<LooseStr>()?.0,
                        "aiTitle" => f.titles[2] = map.next_value::<LooseStr>()?.0,
                        "lastPrompt" => f.titles[3] = map.next_value::<LooseStr>()?.0,
                        "content" => f.content = map.next_value::<LooseStr>()?.0,
                        "agentId" => f.agent_id = map.next_value::<LooseStr>()?.0,
                        "toolUseResult" => f.tool_use_result = map.next_value()?,
                        "attachment" => f.attachment = map.next_value()?,
                        _ => {
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                Ok(Some(f))
            }
            skip_seq!();
            skip_scalars!();
            skip_strings!();
        }
        d.deserialize_any(V).map(Top)
    }
}

impl<'de> Deserialize<'de> for Nested<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Nested<'de>;
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut n = Nested::default();
                while let Some(key) = map.next_key::<Key>()? {
                    match &*key.0 {
                        "agentId" => n.agent_id = map.next_value::<LooseStr>()?.0,
                        "prompt" => n.prompt = map.next_value::<LooseStr>()?.0,
                        _ => {
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                Ok(n)
            }
            skip_seq!();
            skip_scalars!();
            skip_strings!();
        }
        d.deserialize_any(V)
    }
}

impl<'de> Deserialize<'de> for Message<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Message<'de>;
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut m = Message::default();
                while let Some(key) = map.next_key::<Key>()? {
                    match &*key.0 {
                        "role" => m.role = map.next_value::<LooseStr>()?.0,
                        "content" => m.content = map.next_value()?,
                        _ => {
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                Ok(m)
            }
            skip_seq!();
            skip_scalars!();
            skip_strings!();
        }
        d.deserialize_any(V)
    }
}

impl<'de> Deserialize<'de> for Content<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Content<'de>;
            fn visit_borrowed_str<E: de::Error>(self, s: &'de str) -> Result<Self::Value, E> {
                Ok(Content::Text(Cow::Borrowed(s)))
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Self::Value, E> {
                Ok(Content::Text(Cow::Owned(s.to_owned())))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let mut blocks = Vec::new();
                while let Some(block) = seq.next_element()? {
                    blocks.push(block);
                }
                Ok(Content::Blocks(blocks))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(Content::None)
            }
            skip_scalars!();
        }
        d.deserialize_any(V)
    }
}

impl<'de> Deserialize<'de> for Block<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Block<'de>;
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut b = Block::default();
                while let Some(key) = map.next_key::<Key>()? {
                    match &*key.0 {
                        "type" => b.kind = map.next_value::<LooseStr>()?.0,
                        "text" => b.text = map.next_value::<LooseStr>()?.0,
                        "thinking" => b.thinking = map.next_value::<LooseStr>()?.0,
                        "name" => b.name = map.next_value::<LooseStr>()?.0,
                        "input" => b.input = Some(map.next_value()?),
                        "content" => b.content = map.next_value()?,
                        _ => {
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                Ok(b)
            }
            skip_seq!();
            skip_scalars!();
            skip_strings!();
        }
        d.deserialize_any(V)
    }
}
