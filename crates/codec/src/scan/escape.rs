//! JSON's small rules, shared by the scanner and the media reader: what a two-character escape
//! stands for, what an escaped code point means inside a base64 payload, and which bytes are
//! whitespace between tokens.
//!
//! Rules only, with no state: they live here once, and nothing else decodes an escape its own way.

/// The byte a two-character JSON escape `\c` stands for, or `None` if `c` makes no such escape
/// (`\u` is the four-digit form, handled apart).
pub fn simple_escape(c: u8) -> Option<u8> {
    Some(match c {
        b'"' => b'"',
        b'\\' => b'\\',
        b'/' => b'/',
        b'b' => 0x08,
        b'f' => 0x0c,
        b'n' => b'\n',
        b'r' => b'\r',
        b't' => b'\t',
        _ => return None,
    })
}

/// What an escaped character means inside a base64 payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PayloadChar {
    /// A line wrap (`\n`, `\r`), which base64 in JSON may carry: skipped.
    Skip,
    /// An ASCII character, handed to the base64 decoder (which refuses what is not base64).
    Ascii(u8),
    /// Not ASCII: the string is not base64.
    Reject,
}

/// The one rule, for the scanner and the media reader alike, for an escaped code point in a payload.
pub fn payload_char(code: u32) -> PayloadChar {
    match code {
        0x0a | 0x0d => PayloadChar::Skip,
        c if c < 0x80 => PayloadChar::Ascii(c as u8),
        _ => PayloadChar::Reject,
    }
}

/// Whether `b` is whitespace between JSON tokens.
pub(super) fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | b'\n')
}
