//! What the scanner finds in a line: each payload's [`Span`] (its [`Encoding`] and [`MediaKind`],
//! whose names are a frozen format of the index), image blocks that have no payload
//! ([`FailedImage`]), where the numbered image blocks are ([`ImageBlock`]), and why a line was
//! refused ([`ScanError`]).
//!
//! Plain data: nothing here reads a line, and a span says where a payload's bytes are, never what
//! they are.

use std::fmt;

/// How a payload is written in the line. Stored in `media.encoding`; the names are a frozen format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Encoding {
    /// Base64 characters only, between the quotes.
    Base64,
    /// Base64 with JSON escapes inside (`\/`, `\n` line wraps, `\uXXXX`).
    Base64Escaped,
    /// `data:<type>;base64,<base64>`, no escapes.
    DataUrl,
    /// A data URL with JSON escapes inside.
    DataUrlEscaped,
}

impl Encoding {
    /// The name stored in the index.
    pub fn as_str(self) -> &'static str {
        match self {
            Encoding::Base64 => "base64",
            Encoding::Base64Escaped => "base64-escaped",
            Encoding::DataUrl => "data-url",
            Encoding::DataUrlEscaped => "data-url-escaped",
        }
    }

    /// Parses a stored name.
    pub fn parse(s: &str) -> Option<Encoding> {
        Some(match s {
            "base64" => Encoding::Base64,
            "base64-escaped" => Encoding::Base64Escaped,
            "data-url" => Encoding::DataUrl,
            "data-url-escaped" => Encoding::DataUrlEscaped,
            _ => return None,
        })
    }

    /// Whether the payload is a data URL (its base64 starts after the first comma).
    pub fn is_data_url(self) -> bool {
        matches!(self, Encoding::DataUrl | Encoding::DataUrlEscaped)
    }

    /// Whether JSON escapes must be decoded before the base64.
    pub fn is_escaped(self) -> bool {
        matches!(self, Encoding::Base64Escaped | Encoding::DataUrlEscaped)
    }
}

impl fmt::Display for Encoding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a payload belongs to. Stored in `media.kind`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MediaKind {
    /// The payload of an image block (`type` `image`, `image_url` or `input_image`, or an
    /// `inlineData` image).
    Image,
    /// The payload of a `document` block (PDF).
    Document,
    /// Any other payload: the `toolUseResult.file.base64` copy, attachments, bare base64 sources.
    File,
}

impl MediaKind {
    /// The name stored in the index.
    pub fn as_str(self) -> &'static str {
        match self {
            MediaKind::Image => "image",
            MediaKind::Document => "document",
            MediaKind::File => "file",
        }
    }

    /// The kind a stored name stands for.
    pub fn parse(s: &str) -> Option<MediaKind> {
        [MediaKind::Image, MediaKind::Document, MediaKind::File].into_iter().find(|k| k.as_str() == s)
    }
}

/// Where a payload's bytes are in its line: offset from the line's first byte, and length.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Extent {
    /// Byte offset from the start of the line.
    pub offset: u64,
    /// Bytes of the payload as written (escapes and a data URL header included).
    pub len: u64,
}

/// One payload found in a line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Span {
    /// Byte offset in the line of the string's first byte (just past the opening quote).
    pub offset: u64,
    /// Bytes of the string between its quotes, escapes included.
    pub len: u64,
    /// How the bytes are written.
    pub encoding: Encoding,
    /// `media_type`, `type` (for `file.base64`) or the data URL's type, when given.
    pub media_type: Option<String>,
    /// What the payload belongs to.
    pub kind: MediaKind,
    /// The image ordinal, for the payload of an image block under a block place.
    pub ordinal: Option<u32>,
    /// Length of the decoded bytes.
    pub decoded_len: u64,
    /// blake3 of the decoded bytes.
    pub blake3: blake3::Hash,
}

impl Span {
    /// Where the payload is in its line.
    pub fn extent(&self) -> Extent {
        Extent { offset: self.offset, len: self.len }
    }
}

/// An image block under a block place with nothing behind it (a failed upload): it takes an
/// ordinal but has no span.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FailedImage {
    /// The block's image ordinal.
    pub ordinal: u32,
    /// Byte offset of the block's `{` in the line.
    pub offset: u64,
    /// Why there is no payload.
    pub reason: &'static str,
}

/// Where an image block under a block place is in the line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ImageBlock {
    /// Its image ordinal.
    pub ordinal: u32,
    /// Byte offset of its `{`.
    pub start: u64,
    /// Byte offset of its `}`.
    pub end: u64,
}

/// Why the scanner refused a line. The line is recorded as an invalid entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScanError {
    /// Byte offset in the line where it went wrong.
    pub offset: u64,
    /// What went wrong.
    pub reason: &'static str,
}

impl fmt::Display for ScanError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at byte {} of the line", self.reason, self.offset)
    }
}

/// Everything the scanner found in one line.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ScanOutput {
    /// Payloads in line order.
    pub spans: Vec<Span>,
    /// Image blocks under a block place without a payload, in ordinal order.
    pub failed_images: Vec<FailedImage>,
    /// Number of image blocks under a block place (with or without a payload).
    pub image_blocks: u32,
    /// Where each of them is, in ordinal order.
    pub blocks: Vec<ImageBlock>,
}
