//! The tokenizer: [`Scanner`], a push tokenizer for one JSON document, fed a line in chunks of any
//! size. It follows JSON's syntax (states, brackets, strings and their escapes), keeps the short
//! keys and values that matter, hands candidate strings to their decoder (`payload.rs`) and each
//! closing object to the shapes (`shapes.rs`).
//!
//! Its state is a few hundred bytes whatever the line's length: strings are skipped with `memchr`,
//! never copied, and nesting deeper than [`MAX_DEPTH`] is refused.

use std::fmt;

use super::escape::{is_ws, simple_escape};
use super::keys::{KnownKey, MAX_KEY, MAX_SMALL};
use super::output::{ScanError, ScanOutput, Span};
use super::payload::Decoder;
use super::places::{BlockPlaces, Role};
use super::shapes::{self, ClosedBlock, Frame};

/// Deepest nesting the scanner follows; deeper lines are refused (serde_json's own limit is 128).
pub const MAX_DEPTH: usize = 512;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Expecting a value: line start, after `:`, after `,` in an array.
    Value,
    /// Just after `[`: a value or `]`.
    ArrayFirst,
    /// Just after `{`: a key or `}`.
    ObjectFirst,
    /// After `,` in an object: a key.
    KnownKey,
    /// After a key: `:`.
    Colon,
    /// After a value: `,` or a closing bracket.
    AfterValue,
    /// Inside a string.
    Str,
    /// Just after a backslash in a string.
    Escape,
    /// Inside `\uXXXX`: this many hex digits still to come.
    Unicode(u8),
    /// Inside a number or `true` / `false` / `null`.
    Literal,
    /// The top-level value is complete: whitespace only.
    Done,
    /// The line is not JSON; the rest is ignored.
    Broken,
}

/// What the current string is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum StrRole {
    /// An object key: kept (short ones only) to know what the value is.
    KnownKey,
    /// The value of `type`, `media_type` or `mimeType`: kept (short ones only).
    Small(KnownKey),
    /// The value of `data`, `base64`, `url` or `image_url`: may be a payload.
    Candidate(KnownKey),
    /// Anything else: skipped.
    Skip,
}

/// A push tokenizer for one line. Feed it the line's bytes in chunks, then call [`Scanner::finish`].
///
/// A *payload* is a non-empty base64 string in one of these places, at any depth of the line, keys
/// in any order, with or without JSON escapes (`\/`, `\n` line wraps, `\uXXXX`), padded or not:
/// - `data` of an object whose `type` is `base64` (Anthropic image and document sources:
///   `{"type":"image","source":{"type":"base64","media_type":"image/png","data":...}}`);
/// - `base64` of a `file` object (the Read tool's `toolUseResult.file.base64` copy, attachments);
/// - `data` of an object with a `mimeType`, a `mime` or a `mediaType` (MCP's
///   `{"type":"image","data":...,"mimeType":...}`, Gemini's `{"inlineData":{"mimeType":...,"data":...}}`,
///   OpenCode 2's `{"data":...,"mime":...}`, Cline 4's `{"type":"image","data":...,"mediaType":...}`);
/// - a `data:<type>;base64,` URL (its header printable ASCII, as media types are) in `url`, `uri`,
///   `image_url` or `data` (a chat UI's image chunk, OpenAI's
///   `{"type":"image_url","image_url":{"url":...}}` and Codex's `input_image`), or in `images` (an
///   item of its array, as Codex's `user_message` event writes it, or its value).
///
/// An *image block* is an object whose `type` is `image`, `image_url` or `input_image`, or that has
/// a `data` key and a `mimeType`, `mime` or `mediaType` that starts with `image/` (Gemini's
/// `inlineData`, OpenCode 2's attached file), or whose `type` is `file` and that holds a `data:image/...` URL (OpenCode's
/// file part, and its tools' files); those at or
/// under the format's [`BlockPlaces`] (Claude Code's `message.content`, tool results included) get
/// ordinals, 0-based, in the order they begin in the line. One without a payload (a failed upload)
/// keeps its ordinal and is reported as failed.
pub struct Scanner {
    places: &'static BlockPlaces,
    state: State,
    /// Offset in the line of the next byte fed.
    pos: u64,
    stack: Vec<Frame>,
    string: StrRole,
    /// Decoded characters of a key or small value.
    small: Vec<u8>,
    small_overflow: bool,
    /// Accumulated `\uXXXX` value.
    code: u32,
    decoder: Decoder,
    /// Image blocks under a block place: where each begins and ends, its payload, why it has none.
    image_blocks: Vec<ClosedBlock>,
    claimed: Vec<Span>,
    error: Option<ScanError>,
}

impl fmt::Debug for Scanner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Scanner")
            .field("state", &self.state)
            .field("pos", &self.pos)
            .field("depth", &self.stack.len())
            .finish_non_exhaustive()
    }
}

impl Scanner {
    /// A scanner at the start of a line, numbering image blocks under `places`.
    pub fn new(places: &'static BlockPlaces) -> Scanner {
        Scanner {
            places,
            state: State::Value,
            pos: 0,
            stack: Vec::new(),
            string: StrRole::Skip,
            small: Vec::new(),
            small_overflow: false,
            code: 0,
            decoder: Decoder::new(),
            image_blocks: Vec::new(),
            claimed: Vec::new(),
            error: None,
        }
    }

    /// Numbers image blocks under `places` from the next line on (call it between lines).
    pub fn set_places(&mut self, places: &'static BlockPlaces) {
        self.places = places;
    }

    /// Makes the scanner ready for a new line, keeping its buffers.
    pub fn reset(&mut self) {
        self.state = State::Value;
        self.pos = 0;
        self.stack.clear();
        self.image_blocks.clear();
        self.claimed.clear();
        self.error = None;
    }

    /// Feeds the next bytes of the line.
    pub fn feed(&mut self, chunk: &[u8]) {
        let base = self.pos;
        let mut i = 0usize;
        while i < chunk.len() {
            match self.state {
                State::Broken => break,
                State::Str => {
                    let rest = &chunk[i..];
                    match memchr::memchr2(b'"', b'\\', rest) {
                        None => {
                            self.string_chars(rest);
                            i = chunk.len();
                        }
                        Some(j) => {
                            self.string_chars(&rest[..j]);
                            i += j + 1;
                            if rest[j] == b'"' {
                                self.end_string(base + i as u64 - 1);
                            } else {
                                self.state = State::Escape;
                            }
                        }
                    }
                }
                State::Escape => {
                    let at = base + i as u64;
                    let c = chunk[i];
                    i += 1;
                    if c == b'u' {
                        self.code = 0;
                        self.state = State::Unicode(4);
                        continue;
                    }
                    let Some(decoded) = simple_escape(c) else {
                        self.fail(at, "invalid escape in a string");
                        continue;
                    };
                    self.state = State::Str;
                    self.escaped_char(decoded as u32);
                }
                State::Unicode(n) => {
                    let at = base + i as u64;
                    let c = chunk[i];
                    i += 1;
                    let Some(d) = (c as char).to_digit(16) else {
                        self.fail(at, "invalid \\u escape in a string");
                        continue;
                    };
                    self.code = self.code * 16 + d;
                    if n == 1 {
                        self.state = State::Str;
                        self.escaped_char(self.code);
                    } else {
                        self.state = State::Unicode(n - 1);
                    }
                }
                State::Literal => {
                    let rest = &chunk[i..];
                    match rest.iter().position(|&b| !(b.is_ascii_alphanumeric() || b"+-.".contains(&b))) {
                        None => i = chunk.len(),
                        Some(j) => {
                            i += j;
                            self.state = self.after_value();
                        }
                    }
                }
                _ => {
                    let c = chunk[i];
                    let at = base + i as u64;
                    i += 1;
                    if is_ws(c) {
                        continue;
                    }
                    self.structural(c, at);
                }
            }
        }
        self.pos = base + chunk.len() as u64;
    }

    fn fail(&mut self, offset: u64, reason: &'static str) {
        if self.error.is_none() {
            self.error = Some(ScanError { offset, reason });
        }
        self.state = State::Broken;
    }

    fn after_value(&self) -> State {
        if self.stack.is_empty() { State::Done } else { State::AfterValue }
    }

    fn structural(&mut self, c: u8, at: u64) {
        match self.state {
            State::Value | State::ArrayFirst => {
                if c == b']' && self.state == State::ArrayFirst {
                    self.close(false, at);
                } else {
                    self.value(c, at);
                }
            }
            State::ObjectFirst | State::KnownKey => {
                if c == b'"' {
                    self.string = StrRole::KnownKey;
                    self.small.clear();
                    self.small_overflow = false;
                    self.state = State::Str;
                } else if c == b'}' && self.state == State::ObjectFirst {
                    self.close(true, at);
                } else {
                    self.fail(at, "expected a key");
                }
            }
            State::Colon => {
                if c == b':' {
                    self.state = State::Value;
                } else {
                    self.fail(at, "expected ':'");
                }
            }
            State::AfterValue => match (c, self.stack.last().map(|f| f.object)) {
                (b',', Some(true)) => self.state = State::KnownKey,
                (b',', Some(false)) => self.state = State::Value,
                (b'}', Some(true)) => self.close(true, at),
                (b']', Some(false)) => self.close(false, at),
                _ => self.fail(at, "expected ',' or a closing bracket"),
            },
            State::Done => self.fail(at, "trailing characters after the JSON value"),
            _ => unreachable!("string and literal states are handled in feed"),
        }
    }

    fn value(&mut self, c: u8, at: u64) {
        let key = match self.stack.last() {
            Some(f) if f.object => f.key,
            // The items of an `images` array.
            Some(f) if f.under == KnownKey::Images => KnownKey::Images,
            _ => KnownKey::Other,
        };
        match c {
            b'"' => {
                self.string = match key {
                    KnownKey::Type | KnownKey::MediaType | KnownKey::MimeType => {
                        self.small.clear();
                        self.small_overflow = false;
                        StrRole::Small(key)
                    }
                    KnownKey::Data | KnownKey::Base64 | KnownKey::Url | KnownKey::ImageUrl | KnownKey::Images => {
                        self.decoder.start(key, at + 1);
                        StrRole::Candidate(key)
                    }
                    _ => StrRole::Skip,
                };
                self.state = State::Str;
            }
            b'{' | b'[' => {
                if self.stack.len() >= MAX_DEPTH {
                    self.fail(at, "nesting too deep");
                    return;
                }
                // This frame's depth is the number of keys that lead to it.
                let depth = self.stack.len();
                let role = match self.stack.last() {
                    None => Role::Along(self.places.all()),
                    Some(f) => match f.role {
                        Role::InPlace => Role::InPlace,
                        Role::Along(_) if f.object && f.next != 0 => {
                            if self.places.ends(f.next, depth) {
                                Role::InPlace
                            } else if c == b'{' {
                                Role::Along(f.next)
                            } else {
                                Role::Other
                            }
                        }
                        _ => Role::Other,
                    },
                };
                let object = c == b'{';
                // The key whose value this is; nothing for an array's item or the top.
                let under = if self.stack.last().is_some_and(|f| f.object) { key } else { KnownKey::Other };
                self.stack.push(Frame::new(object, at, role, under));
                self.state = if object { State::ObjectFirst } else { State::ArrayFirst };
            }
            b'-' | b'0'..=b'9' | b't' | b'f' | b'n' => self.state = State::Literal,
            _ => self.fail(at, "expected a JSON value"),
        }
    }

    fn string_chars(&mut self, chars: &[u8]) {
        match self.string {
            StrRole::Skip => {}
            StrRole::KnownKey | StrRole::Small(_) => {
                let cap = if self.string == StrRole::KnownKey { MAX_KEY } else { MAX_SMALL };
                if self.small.len() + chars.len() > cap {
                    self.small_overflow = true;
                } else {
                    self.small.extend_from_slice(chars);
                }
            }
            StrRole::Candidate(_) => self.decoder.push(chars),
        }
    }

    /// A character decoded from an escape (`code` is a UTF-16 unit for `\u`).
    fn escaped_char(&mut self, code: u32) {
        match self.string {
            StrRole::Skip => {}
            StrRole::KnownKey | StrRole::Small(_) => match char::from_u32(code) {
                Some(ch) => {
                    let mut buf = [0u8; 4];
                    self.string_chars(ch.encode_utf8(&mut buf).as_bytes());
                }
                // A surrogate half: such keys and types are not ones we act on.
                None => self.small_overflow = true,
            },
            StrRole::Candidate(_) => self.decoder.push_escaped(code),
        }
    }

    fn end_string(&mut self, quote: u64) {
        match self.string {
            StrRole::KnownKey => {
                let key = if self.small_overflow { KnownKey::Other } else { KnownKey::from_bytes(&self.small) };
                let depth = self.stack.len().saturating_sub(1);
                if let Some(f) = self.stack.last_mut() {
                    f.key = key;
                    f.has_data |= key == KnownKey::Data;
                    if let Role::Along(mask) = f.role {
                        f.next = if self.small_overflow { 0 } else { self.places.next(mask, depth, &self.small) };
                    }
                }
                self.state = State::Colon;
                return;
            }
            StrRole::Small(key) => {
                let value = (!self.small_overflow).then(|| String::from_utf8(self.small.clone()).ok()).flatten();
                if let Some(f) = self.stack.last_mut() {
                    match key {
                        KnownKey::Type => f.ty = value,
                        KnownKey::MediaType => f.media_type = value,
                        _ => f.mime_type = value,
                    }
                }
            }
            StrRole::Candidate(_) => {
                let result = self.decoder.finish(quote);
                if let Some(f) = self.stack.last_mut() {
                    match result {
                        Ok(candidate) => f.candidates.push(candidate),
                        Err(hint) => f.hint = f.hint.max(hint),
                    }
                }
            }
            StrRole::Skip => {}
        }
        self.state = self.after_value();
    }

    fn close(&mut self, object: bool, at: u64) {
        let Some(frame) = self.stack.pop() else {
            self.fail(at, "unbalanced bracket");
            return;
        };
        debug_assert_eq!(frame.object, object);
        frame.close(at, self.stack.last_mut(), &mut self.claimed, &mut self.image_blocks, self.places.url_images());
        self.state = self.after_value();
    }

    /// Ends the line: the payloads found, or why the line is not JSON.
    pub fn finish(mut self) -> Result<ScanOutput, ScanError> {
        self.finish_mut()
    }

    /// [`Scanner::finish`] for a scanner that is reused (call [`Scanner::reset`] next).
    pub fn finish_mut(&mut self) -> Result<ScanOutput, ScanError> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        match self.state {
            State::Done => {}
            State::Literal if self.stack.is_empty() => {}
            State::Value if self.stack.is_empty() => {
                return Err(ScanError { offset: self.pos, reason: "empty line" });
            }
            _ => {
                return Err(ScanError { offset: self.pos, reason: "unexpected end of line" });
            }
        }
        Ok(shapes::number(std::mem::take(&mut self.image_blocks), std::mem::take(&mut self.claimed)))
    }
}
