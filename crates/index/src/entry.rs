//! One scanned line -> one entry row: the stored (stripped) line, the fields the index keeps, the
//! plain text to search, or the reason the line is invalid.
//!
//! Only the stripped line is parsed, by its [`Format`], so a line's payloads are never parsed or
//! copied.
//! A stripped line longer than [`MAX_STORED_LINE`] is refused rather than held in memory.

use crate::lines::{self, Line};
use scrollback_core::codec::scan::{self, FailedImage, STRIPPED_MEDIA_MARKER, ScanOutput, Span};
use scrollback_core::format::{FileContext, Format, Meta, MetaError};

/// The longest stored line (the line without its payloads) that is indexed; a longer one is recorded
/// as invalid, its bytes left in the transcript.
pub const MAX_STORED_LINE: u64 = 16 << 20;

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
    /// The stored line packed by the thread that read it, if it was.
    pub packed: Option<crate::packing::Packed>,
    /// Its tool calls and results, found by the thread that read it (`None`: not looked for).
    pub(crate) events: Option<Vec<crate::stats::Event>>,
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

/// Turns a scanned line into an entry, as `format` reads it in a file of `context`.
pub fn describe(mut line: Line<'_>, format: &dyn Format, context: &FileContext) -> Described {
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
    let meta = match format.describe(&stripped, line.number, context) {
        Ok(meta) => meta,
        Err(MetaError::NotJson(e)) => return Described::invalid(&line, format!("not JSON: {e}")),
        Err(MetaError::NotObject) => return Described::invalid(&line, "not a JSON object".into()),
    };
    // Nothing is listed that cannot be opened: a session id no route takes (a slash, a backslash,
    // NUL, a dot segment, over 256 bytes) makes the line invalid, said in the log.
    let session = meta.session_id.as_deref().unwrap_or(&context.session);
    if !scrollback_core::codec::refs::is_id(session) {
        let shown: String = session.chars().take(80).collect();
        return Described::invalid(
            &line,
            format!(
                "session id {shown:?} cannot be served (it has a slash, a backslash or NUL, is a dot segment or is over 256 bytes)"
            ),
        );
    }
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
            packed: None,
            events: None,
        }),
    }
}

/// Reads a long line's bytes between its payloads back from the file.
fn read_stripped(line: &Line<'_>, spans: &[Span]) -> scrollback_core::Result<Vec<u8>> {
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
