//! A candidate string's decoding: the value of `data`, `base64`, `url`, `image_url` or an item of
//! `images` is read as a stream (a data URL's header, then base64) into a blake3 hasher, and
//! becomes a [`Candidate`] when its string closes, or the reason it cannot be a payload
//! ([`Missing`]). Whether it *is* a payload is decided when its object closes (`shapes.rs`).
//!
//! Never a copy of a payload: its bytes pass through the base64 decoder into the hasher, and only
//! a data URL's header (at most [`MAX_DATA_URL_HEADER`] bytes) is kept.

use crate::b64::Base64Stream;

use super::escape::{PayloadChar, payload_char};
use super::keys::KnownKey;

/// Longest data-URL header (`data:image/png;base64,`) the scanner accepts.
const MAX_DATA_URL_HEADER: usize = 256;

/// Why an image block has no payload, from the strings seen inside it; the larger wins.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Missing {
    None,
    Empty,
    NotBase64,
}

impl Missing {
    pub(super) fn reason(self) -> &'static str {
        match self {
            Missing::None => "no payload",
            Missing::Empty => "empty payload",
            Missing::NotBase64 => "payload is not base64",
        }
    }
}

/// A finished candidate string, waiting for its object to close.
#[derive(Debug)]
pub(super) struct Candidate {
    pub(super) key: KnownKey,
    pub(super) offset: u64,
    pub(super) len: u64,
    pub(super) data_url: bool,
    pub(super) escaped: bool,
    pub(super) media_type: Option<String>,
    pub(super) decoded_len: u64,
    pub(super) blake3: blake3::Hash,
}

/// Where a candidate string is in its decoding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// The first characters decide: a data URL or plain base64.
    Sniff,
    /// Inside a data URL's header, up to the comma.
    Header,
    /// Decoding base64.
    Base64,
    /// Not a payload; skipped to its end.
    Rejected,
}

/// The state of the candidate string being read. One exists at a time (strings do not nest), and
/// its buffers are reused from one candidate to the next.
pub(super) struct Decoder {
    key: KnownKey,
    offset: u64,
    mode: Mode,
    data_url: bool,
    escaped: bool,
    empty: bool,
    /// Decoded characters of the sniffed prefix or the data-URL header.
    head: Vec<u8>,
    media_type: Option<String>,
    base64: Base64Stream,
    hasher: blake3::Hasher,
}

impl Decoder {
    pub(super) fn new() -> Decoder {
        Decoder {
            key: KnownKey::Other,
            offset: 0,
            mode: Mode::Rejected,
            data_url: false,
            escaped: false,
            empty: true,
            head: Vec::new(),
            media_type: None,
            base64: Base64Stream::new(),
            hasher: blake3::Hasher::new(),
        }
    }

    pub(super) fn start(&mut self, key: KnownKey, offset: u64) {
        self.key = key;
        self.offset = offset;
        self.mode = if key == KnownKey::Base64 { Mode::Base64 } else { Mode::Sniff };
        self.data_url = false;
        self.escaped = false;
        self.empty = true;
        self.head.clear();
        self.media_type = None;
        self.base64.reset();
        self.hasher.reset();
    }

    /// Feeds characters of the string's decoded value.
    pub(super) fn push(&mut self, mut chars: &[u8]) {
        if !chars.is_empty() {
            self.empty = false;
        }
        while !chars.is_empty() {
            match self.mode {
                Mode::Rejected => return,
                Mode::Base64 => {
                    self.push_base64(chars);
                    return;
                }
                Mode::Sniff => {
                    let want = 5 - self.head.len();
                    let take = want.min(chars.len());
                    self.head.extend_from_slice(&chars[..take]);
                    chars = &chars[take..];
                    if self.head.len() < 5 && !b"data:".starts_with(&self.head) {
                        self.sniffed_plain();
                    } else if self.head.len() == 5 {
                        if self.head == b"data:" {
                            self.data_url = true;
                            self.mode = Mode::Header;
                            self.head.clear();
                        } else {
                            self.sniffed_plain();
                        }
                    }
                }
                Mode::Header => match memchr::memchr(b',', chars) {
                    Some(i) => {
                        self.head.extend_from_slice(&chars[..i]);
                        chars = &chars[i + 1..];
                        self.end_header();
                    }
                    None => {
                        self.head.extend_from_slice(chars);
                        if self.head.len() > MAX_DATA_URL_HEADER {
                            self.mode = Mode::Rejected;
                        }
                        return;
                    }
                },
            }
        }
    }

    /// A character decoded from a JSON escape inside the string (`code` is a UTF-16 unit for `\u`).
    pub(super) fn push_escaped(&mut self, code: u32) {
        self.escaped = true;
        self.empty = false;
        match payload_char(code) {
            PayloadChar::Skip => {}
            PayloadChar::Ascii(c) => self.push(&[c]),
            PayloadChar::Reject => self.mode = Mode::Rejected,
        }
    }

    /// The first characters were not `data:`: plain base64 for `data`, nothing for a URL key.
    fn sniffed_plain(&mut self) {
        if self.key == KnownKey::Data {
            self.mode = Mode::Base64;
            let head = std::mem::take(&mut self.head);
            self.push_base64(&head);
            self.head = head;
        } else {
            self.mode = Mode::Rejected;
        }
    }

    fn end_header(&mut self) {
        let header = &self.head;
        // A header is printable ASCII (`image/png;base64`), as media types are. Anything else (a
        // raw control character or a byte that is not UTF-8, which make the line invalid JSON; or
        // a type no one can serve) is not a payload: the string stays in the stripped line, whose
        // parse then judges the line.
        if header.len() > MAX_DATA_URL_HEADER || !header.iter().all(|&b| (0x20..0x7f).contains(&b)) {
            self.mode = Mode::Rejected;
            return;
        }
        let mut params = header.split(|&b| b == b';');
        let media_type = params.next().unwrap_or_default();
        if !params.any(|p| p == b"base64") {
            self.mode = Mode::Rejected;
            return;
        }
        self.media_type = std::str::from_utf8(media_type).ok().filter(|s| !s.is_empty()).map(str::to_owned);
        self.mode = Mode::Base64;
    }

    fn push_base64(&mut self, chars: &[u8]) {
        let Decoder { base64, hasher, .. } = self;
        base64.push(chars, &mut |d| {
            hasher.update(d);
        });
        if base64.failed() {
            self.mode = Mode::Rejected;
        }
    }

    /// The closing quote at `end` (offset in the line): a candidate, or `Err(hint)` if it can't be
    /// a payload.
    pub(super) fn finish(&mut self, end: u64) -> Result<Candidate, Missing> {
        if self.empty {
            return Err(Missing::Empty);
        }
        match self.mode {
            Mode::Base64 => {}
            Mode::Sniff if self.key == KnownKey::Data => {
                // Fewer than five characters, all of them a prefix of "data:"; decode them.
                self.mode = Mode::Base64;
                let head = std::mem::take(&mut self.head);
                self.push_base64(&head);
                if self.mode != Mode::Base64 {
                    return Err(Missing::NotBase64);
                }
            }
            // A URL that is not a data URL is a link, not a broken payload.
            _ if !self.data_url && matches!(self.key, KnownKey::Url | KnownKey::ImageUrl | KnownKey::Images) => {
                return Err(Missing::None);
            }
            _ => return Err(Missing::NotBase64),
        }
        if self.base64.is_empty() {
            // `"data:image/png;base64,"`: nothing behind the header.
            return Err(Missing::Empty);
        }
        let Decoder { base64, hasher, .. } = self;
        if !base64.finish(&mut |d| {
            hasher.update(d);
        }) {
            return Err(Missing::NotBase64);
        }
        Ok(Candidate {
            key: self.key,
            offset: self.offset,
            len: end - self.offset,
            data_url: self.data_url,
            escaped: self.escaped,
            media_type: self.media_type.take(),
            decoded_len: self.base64.decoded(),
            blake3: self.hasher.finalize(),
        })
    }
}
