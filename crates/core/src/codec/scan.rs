//! The scanner: the bytes of one transcript line in, media spans out.
//!
//! [`Scanner`] is a push tokenizer for one JSON document. It is fed the line in chunks of any size and
//! keeps a few hundred bytes of state whatever the line's length: strings are skipped with `memchr`,
//! and the strings that may be payloads (values of `data`, `base64`, `url` and `image_url`, items of
//! `images`) are decoded
//! as a stream into a blake3 hasher, never copied. When an object closes, its keys decide whether a
//! candidate was a payload (the shapes are listed on [`Scanner`]); when the line ends, image blocks under
//! the format's [`BlockPlaces`] (Claude Code's `message.content`) are numbered in the order in which
//! they begin.
//!
//! [`strip`] then builds the stored line by replacing each span with [`STRIPPED_MEDIA_MARKER`], and
//! [`restore`] puts payloads back. JSON that merely *quotes* an image block inside a text string is
//! one string to the tokenizer, so decoys stay text.
//!
//! This module does no I/O and never touches SQLite. It does not fully validate JSON: a line it
//! accepts is checked by parsing the stripped line (small) with serde_json, and a payload it strips
//! holds only base64 characters and JSON escapes, so the original line is valid exactly when the
//! stripped one is.

use std::fmt;

use crate::codec::b64::Base64Stream;

/// The text that replaces every payload in a stored line.
pub const STRIPPED_MEDIA_MARKER: &str = "STRIPPED_MEDIA_MARKER";

/// Deepest nesting the scanner follows; deeper lines are refused (serde_json's own limit is 128).
pub const MAX_DEPTH: usize = 512;

/// Longest data-URL header (`data:image/png;base64,`) the scanner accepts.
const MAX_DATA_URL_HEADER: usize = 256;
/// Longest `type` / `media_type` value kept; longer ones are treated as unknown.
const MAX_SMALL: usize = 128;
/// Longest key that can matter; longer keys are "other".
const MAX_KEY: usize = 16;

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

/// Where a format's image blocks are numbered: key paths from the line's top-level object, such as
/// `message.content` ([`crate::format::Format::block_places`]). Image blocks at or below one of them
/// get ordinals; image blocks elsewhere are stripped all the same, without one.
#[derive(Debug)]
pub struct BlockPlaces {
    paths: &'static [&'static [&'static str]],
}

impl BlockPlaces {
    /// No place: no image block gets an ordinal (a scanner's value before it is told its format's).
    pub const NOWHERE: BlockPlaces = BlockPlaces { paths: &[] };

    /// The places `paths` (at most 8, each of 1 to 255 keys of at most 16 bytes).
    pub const fn new(paths: &'static [&'static [&'static str]]) -> BlockPlaces {
        assert!(!paths.is_empty() && paths.len() <= 8, "1 to 8 places");
        let mut i = 0;
        while i < paths.len() {
            assert!(!paths[i].is_empty() && paths[i].len() < 256, "a place is 1 to 255 keys");
            let mut k = 0;
            while k < paths[i].len() {
                assert!(paths[i][k].len() <= MAX_KEY, "a place's keys are at most 16 bytes");
                k += 1;
            }
            i += 1;
        }
        BlockPlaces { paths }
    }

    /// The places, as key paths.
    pub fn paths(&self) -> &'static [&'static [&'static str]] {
        self.paths
    }

    /// Every place, as a mask (bit `i` for path `i`).
    fn all(&self) -> u8 {
        ((1u16 << self.paths.len()) - 1) as u8
    }

    /// Of the places in `mask`, those whose key at `depth` is `key`.
    fn next(&self, mask: u8, depth: usize, key: &[u8]) -> u8 {
        let mut out = 0;
        for (i, path) in self.paths.iter().enumerate() {
            if mask & (1 << i) != 0 && path.get(depth).is_some_and(|k| k.as_bytes() == key) {
                out |= 1 << i;
            }
        }
        out
    }

    /// Whether one of the places in `mask` is `keys` keys long (ends at that depth).
    fn ends(&self, mask: u8, keys: usize) -> bool {
        self.paths.iter().enumerate().any(|(i, path)| mask & (1 << i) != 0 && path.len() == keys)
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

/// Whether `line` may hold a payload or an image block, by a search for the words they cannot be
/// written without: every payload needs `base64` (a `"type":"base64"` source, a `base64` key, or a
/// data URL's `;base64,`) or a `"mimeType"` key beside its `data`, and every image block a type
/// that starts or ends its string with `image` (`"image"`, `"image_url"`, `"input_image"`) or a
/// `"mimeType"`, unless those words are spelt with `\u` escapes. A
/// line for which this is false scans to nothing (the tests check it against the scanner), so the
/// indexer skips its scan; typical text lines are most lines.
pub fn may_hold_media(line: &[u8]) -> bool {
    use std::sync::LazyLock;
    static NEEDLES: LazyLock<[memchr::memmem::Finder<'static>; 5]> = LazyLock::new(|| {
        [b"base64".as_slice(), b"\"image", b"image\"", b"\"mimeType\"", b"\\u"].map(memchr::memmem::Finder::new)
    });
    NEEDLES.iter().any(|needle| needle.find(line).is_some())
}

/// What a line that [`may_hold_media`] says cannot hold media scans to, without running the
/// scanner: nothing, unless it nests deeper than [`MAX_DEPTH`], which the scanner refuses at the same
/// byte. So a line's verdict is the same whether it was scanned or not (which depends on where it
/// fell in the reader's blocks), and depends on that line alone.
pub fn scan_without_media(line: &[u8]) -> Result<ScanOutput, ScanError> {
    // Only a line with more opening brackets than the limit can be too deep.
    if memchr::memchr2_iter(b'[', b'{', line).count() < MAX_DEPTH {
        return Ok(ScanOutput::default());
    }
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    for (at, &b) in line.iter().enumerate() {
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' if depth >= MAX_DEPTH => {
                return Err(ScanError { offset: at as u64, reason: "nesting too deep" });
            }
            b'[' | b'{' => depth += 1,
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    Ok(ScanOutput::default())
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

/// A scanned line held in memory: [`scan`]'s result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scanned {
    /// The line with every payload replaced by [`STRIPPED_MEDIA_MARKER`].
    pub stripped: Vec<u8>,
    /// What the scanner found.
    pub output: ScanOutput,
}

/// Scans a whole line held in memory, numbering image blocks under `places`, and strips it.
pub fn scan(line: &[u8], places: &'static BlockPlaces) -> Result<Scanned, ScanError> {
    let mut scanner = Scanner::new(places);
    scanner.feed(line);
    let output = scanner.finish()?;
    let stripped = strip(line, &output.spans);
    Ok(Scanned { stripped, output })
}

/// Builds the stored line: `line` with each span's bytes replaced by the marker.
pub fn strip(line: &[u8], spans: &[Span]) -> Vec<u8> {
    let removed: u64 = spans.iter().map(|s| s.len).sum();
    let mut out = Vec::with_capacity(line.len() - removed as usize + spans.len() * STRIPPED_MEDIA_MARKER.len());
    let mut at = 0usize;
    for span in spans {
        out.extend_from_slice(&line[at..span.offset as usize]);
        out.extend_from_slice(STRIPPED_MEDIA_MARKER.as_bytes());
        at = (span.offset + span.len) as usize;
    }
    out.extend_from_slice(&line[at..]);
    out
}

/// Where each payload's marker starts in the stripped line, given the payloads' extents in the
/// original line, in order.
pub fn marker_offsets(payloads: impl IntoIterator<Item = Extent>) -> impl Iterator<Item = u64> {
    let mut shift: i64 = 0;
    payloads.into_iter().map(move |extent| {
        let at = (extent.offset as i64 + shift) as u64;
        shift += STRIPPED_MEDIA_MARKER.len() as i64 - extent.len as i64;
        at
    })
}

/// Puts payloads back into a stored line. `payload(i)` returns the original bytes of span `i`.
/// Fails if the stored line has no marker where a span says it should.
pub fn restore(stripped: &[u8], spans: &[Span], mut payload: impl FnMut(usize) -> Vec<u8>) -> Option<Vec<u8>> {
    let marker = STRIPPED_MEDIA_MARKER.as_bytes();
    let mut out = Vec::with_capacity(stripped.len());
    let mut at = 0usize;
    for (i, start) in marker_offsets(spans.iter().map(Span::extent)).enumerate() {
        let start = start as usize;
        if stripped.get(start..start + marker.len())? != marker || start < at {
            return None;
        }
        out.extend_from_slice(&stripped[at..start]);
        out.extend_from_slice(&payload(i));
        at = start + marker.len();
    }
    out.extend_from_slice(&stripped[at..]);
    Some(out)
}

// ---------------------------------------------------------------------------------------------
// The tokenizer.

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

/// The keys the scanner acts on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum KnownKey {
    Type,
    MediaType,
    MimeType,
    Data,
    Base64,
    Url,
    ImageUrl,
    /// `images`: an array of data URLs (Codex's `user_message` event).
    Images,
    Other,
}

impl KnownKey {
    fn from_bytes(b: &[u8]) -> KnownKey {
        match b {
            b"type" => KnownKey::Type,
            b"media_type" => KnownKey::MediaType,
            b"mimeType" => KnownKey::MimeType,
            b"data" => KnownKey::Data,
            b"base64" => KnownKey::Base64,
            b"url" => KnownKey::Url,
            b"image_url" => KnownKey::ImageUrl,
            b"images" => KnownKey::Images,
            _ => KnownKey::Other,
        }
    }
}

/// Where an object or array sits in the line, as to the block places.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    /// An object on the way to a block place: the places (bit `i` for path `i`) whose first keys,
    /// as many as this frame is deep, lead here. The top-level value is on the way to all.
    Along(u8),
    /// At or below a block place.
    InPlace,
    /// Anywhere else.
    Other,
}

/// Why an image block has no payload, from the strings seen inside it; the larger wins.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Missing {
    None,
    Empty,
    NotBase64,
}

impl Missing {
    fn reason(self) -> &'static str {
        match self {
            Missing::None => "no payload",
            Missing::Empty => "empty payload",
            Missing::NotBase64 => "payload is not base64",
        }
    }
}

/// A finished candidate string, waiting for its object to close.
#[derive(Debug)]
struct Candidate {
    key: KnownKey,
    offset: u64,
    len: u64,
    data_url: bool,
    escaped: bool,
    media_type: Option<String>,
    decoded_len: u64,
    blake3: blake3::Hash,
}

#[derive(Debug)]
struct Frame {
    object: bool,
    start: u64,
    role: Role,
    /// The key this object or array is the value of (`Other` in an array or at the top).
    under: KnownKey,
    key: KnownKey,
    /// Whether the object has a `data` key (whatever its value).
    has_data: bool,
    /// Of an [`Role::Along`] object's places, those its current key leads on to.
    next: u8,
    ty: Option<String>,
    media_type: Option<String>,
    mime_type: Option<String>,
    candidates: Vec<Candidate>,
    /// Payloads decided in this frame or below, not yet claimed by a block.
    pending: Vec<Span>,
    hint: Missing,
}

impl Frame {
    fn new(object: bool, start: u64, role: Role, under: KnownKey) -> Frame {
        Frame {
            object,
            start,
            role,
            under,
            key: KnownKey::Other,
            has_data: false,
            next: 0,
            ty: None,
            media_type: None,
            mime_type: None,
            candidates: Vec::new(),
            pending: Vec::new(),
            hint: Missing::None,
        }
    }
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
struct Decoder {
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
    fn new() -> Decoder {
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

    fn start(&mut self, key: KnownKey, offset: u64) {
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
    fn push(&mut self, mut chars: &[u8]) {
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
    fn finish(&mut self, end: u64) -> Result<Candidate, Missing> {
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

/// An image block under a block place whose object has closed, waiting for its ordinal.
#[derive(Debug)]
struct ClosedBlock {
    /// Offset of its `{`.
    start: u64,
    /// Offset of its `}`.
    end: u64,
    /// Its payload, if it has one.
    payload: Option<Span>,
    /// Why it has none, if it has none.
    missing: Missing,
}

/// A push tokenizer for one line. Feed it the line's bytes in chunks, then call [`Scanner::finish`].
///
/// A *payload* is a non-empty base64 string in one of these places, at any depth of the line, keys
/// in any order, with or without JSON escapes (`\/`, `\n` line wraps, `\uXXXX`), padded or not:
/// - `data` of an object whose `type` is `base64` (Anthropic image and document sources:
///   `{"type":"image","source":{"type":"base64","media_type":"image/png","data":...}}`);
/// - `base64` of a `file` object (the Read tool's `toolUseResult.file.base64` copy, attachments);
/// - `data` of an object with a `mimeType` (MCP's `{"type":"image","data":...,"mimeType":...}`,
///   Gemini's `{"inlineData":{"mimeType":...,"data":...}}`);
/// - a `data:<type>;base64,` URL (its header printable ASCII, as media types are) in `url`,
///   `image_url` or `data` (a chat UI's image chunk, OpenAI's
///   `{"type":"image_url","image_url":{"url":...}}` and Codex's `input_image`), or in `images` (an
///   item of its array, as Codex's `user_message` event writes it, or its value).
///
/// An *image block* is an object whose `type` is `image`, `image_url` or `input_image`, or that has
/// a `data` key and a `mimeType` that starts with `image/` (Gemini's `inlineData`); those at or
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

fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | b'\n')
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
            StrRole::Candidate(_) => {
                self.decoder.escaped = true;
                self.decoder.empty = false;
                match payload_char(code) {
                    PayloadChar::Skip => {}
                    PayloadChar::Ascii(c) => self.decoder.push(&[c]),
                    PayloadChar::Reject => self.decoder.mode = Mode::Rejected,
                }
            }
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
        let Some(mut frame) = self.stack.pop() else {
            self.fail(at, "unbalanced bracket");
            return;
        };
        debug_assert_eq!(frame.object, object);
        self.decide(&mut frame);
        let block = if object { frame.ty.as_deref() } else { None };
        let image = matches!(block, Some("image" | "image_url" | "input_image"))
            || (object && frame.has_data && frame.mime_type.as_deref().is_some_and(|t| t.starts_with("image/")));
        if image || block == Some("document") {
            let kind = if image { MediaKind::Image } else { MediaKind::Document };
            let mut pending = std::mem::take(&mut frame.pending);
            pending.sort_by_key(|s| s.offset);
            let mut first = None;
            for mut span in pending {
                span.kind = kind;
                if image && frame.role == Role::InPlace && first.is_none() {
                    first = Some(span);
                } else {
                    self.claimed.push(span);
                }
            }
            if image && frame.role == Role::InPlace {
                self.image_blocks.push(ClosedBlock {
                    start: frame.start,
                    end: at,
                    payload: first,
                    missing: frame.hint,
                });
            }
        } else if let Some(parent) = self.stack.last_mut() {
            parent.pending.append(&mut frame.pending);
            parent.hint = parent.hint.max(frame.hint);
        } else {
            self.claimed.append(&mut frame.pending);
        }
        self.state = self.after_value();
    }

    /// At an object's close: which of its candidate strings are payloads.
    fn decide(&mut self, frame: &mut Frame) {
        let ty = frame.ty.as_deref();
        for c in frame.candidates.drain(..) {
            let media_type = if c.data_url {
                c.media_type
            } else {
                match c.key {
                    KnownKey::Data if ty == Some("base64") => frame.media_type.clone(),
                    // MCP's `{type: "image", data, mimeType}`, Gemini's `inlineData {mimeType, data}`.
                    KnownKey::Data if frame.mime_type.is_some() => frame.mime_type.clone(),
                    KnownKey::Base64 => ty
                        .filter(|t| t.contains('/'))
                        .map(str::to_owned)
                        .or_else(|| frame.media_type.clone())
                        .or_else(|| frame.mime_type.clone()),
                    _ => {
                        frame.hint = frame.hint.max(Missing::NotBase64);
                        continue;
                    }
                }
            };
            let encoding = match (c.data_url, c.escaped) {
                (false, false) => Encoding::Base64,
                (false, true) => Encoding::Base64Escaped,
                (true, false) => Encoding::DataUrl,
                (true, true) => Encoding::DataUrlEscaped,
            };
            frame.pending.push(Span {
                offset: c.offset,
                len: c.len,
                encoding,
                media_type,
                kind: MediaKind::File,
                ordinal: None,
                decoded_len: c.decoded_len,
                blake3: c.blake3,
            });
        }
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
        let mut blocks = std::mem::take(&mut self.image_blocks);
        blocks.sort_by_key(|b| b.start);
        let mut spans = std::mem::take(&mut self.claimed);
        let mut failed_images = Vec::new();
        let image_blocks = blocks.len() as u32;
        let mut positions = Vec::with_capacity(blocks.len());
        for (ordinal, ClosedBlock { start, end, payload, missing }) in blocks.into_iter().enumerate() {
            let ordinal = ordinal as u32;
            positions.push(ImageBlock { ordinal, start, end });
            match payload {
                Some(span) => spans.push(Span { ordinal: Some(ordinal), ..span }),
                None => failed_images.push(FailedImage { ordinal, offset: start, reason: missing.reason() }),
            }
        }
        spans.sort_by_key(|s| s.offset);
        Ok(ScanOutput { spans, failed_images, image_blocks, blocks: positions })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Claude Code's place, as a plain fixture of the scanner's own tests.
    static PLACES: BlockPlaces = BlockPlaces::new(&[&["message", "content"]]);

    fn b64(bytes: &[u8]) -> String {
        base64_simd::STANDARD.encode_to_string(bytes)
    }

    #[test]
    fn image_block_in_content_gets_ordinal_and_is_stripped() {
        let data = b64(b"\x89PNG fake");
        let line = format!(
            r#"{{"type":"user","message":{{"role":"user","content":[{{"type":"text","text":"hi"}},{{"type":"image","source":{{"type":"base64","media_type":"image/png","data":"{data}"}}}}]}}}}"#
        );
        let s = scan(line.as_bytes(), &PLACES).unwrap();
        assert_eq!(s.output.spans.len(), 1);
        let span = &s.output.spans[0];
        assert_eq!(span.ordinal, Some(0));
        assert_eq!(span.kind, MediaKind::Image);
        assert_eq!(span.media_type.as_deref(), Some("image/png"));
        assert_eq!(span.blake3, blake3::hash(b"\x89PNG fake"));
        assert_eq!(&line.as_bytes()[span.offset as usize..][..span.len as usize], data.as_bytes());
        let stripped = String::from_utf8(s.stripped.clone()).unwrap();
        assert!(stripped.contains(r#""data":"STRIPPED_MEDIA_MARKER""#));
        let back = restore(&s.stripped, &s.output.spans, |_| data.clone().into_bytes()).unwrap();
        assert_eq!(back, line.as_bytes());
    }

    #[test]
    fn data_before_type_and_escapes() {
        let line = r#"{"message":{"content":[{"source":{"data":"aGV\/\nbG8=","media_type":"image/png","type":"base64"},"type":"image"}]}}"#;
        let s = scan(line.as_bytes(), &PLACES).unwrap();
        assert_eq!(s.output.spans.len(), 1);
        assert_eq!(s.output.spans[0].encoding, Encoding::Base64Escaped);
        let expected = base64_simd::STANDARD.decode_to_vec("aGV/bG8=").unwrap();
        assert_eq!(s.output.spans[0].blake3, blake3::hash(&expected));
    }

    #[test]
    fn failed_upload_takes_an_ordinal() {
        let line = r#"{"message":{"content":[{"type":"image","source":{"type":"base64","media_type":"image/png","data":""}},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"AAAA"}}]}}"#;
        let s = scan(line.as_bytes(), &PLACES).unwrap();
        assert_eq!(s.output.image_blocks, 2);
        assert_eq!(s.output.failed_images, vec![FailedImage { ordinal: 0, offset: 23, reason: "empty payload" }]);
        assert_eq!(s.output.spans[0].ordinal, Some(1));
    }

    #[test]
    fn media_words_rule_lines_in_or_out() {
        let text = r#"{"type":"assistant","message":{"content":[{"type":"text","text":"one image at a time"}]}}"#;
        assert!(!may_hold_media(text.as_bytes()));
        for line in [
            r#"{"message":{"content":[{"type":"image","source":{"data":""}}]}}"#,
            r#"{"content":[{"type":"input_image"}]}"#,
            r#"{"a":{"image_url":{"url":"data:image/png;base64,AAAA"}}}"#,
            r#"{"file":{"base64":"AAAA"}}"#,
            // Words spelt with escapes are JSON's business: such lines are always scanned.
            r#"{"message":{"content":[{"type":"\u0069mage"}]}}"#,
        ] {
            assert!(may_hold_media(line.as_bytes()), "{line}");
        }
    }

    #[test]
    fn decoy_stays_text() {
        let line = r#"{"message":{"content":[{"type":"text","text":"{\"type\":\"image\",\"source\":{\"type\":\"base64\",\"data\":\"AAAA\"}}"}]}}"#;
        let s = scan(line.as_bytes(), &PLACES).unwrap();
        assert!(s.output.spans.is_empty());
        assert_eq!(s.stripped, line.as_bytes());
    }

    #[test]
    fn data_urls_and_file_base64() {
        let line = r#"{"toolUseResult":{"type":"image","file":{"base64":"AAAA","type":"image/jpeg"}},"message":{"content":[{"type":"image_url","image_url":{"url":"data:image/gif;base64,R0lG"}},{"type":"image","url":"data:image/webp;base64,UklG"}]}}"#;
        let s = scan(line.as_bytes(), &PLACES).unwrap();
        let got: Vec<_> =
            s.output.spans.iter().map(|s| (s.kind, s.ordinal, s.media_type.clone().unwrap(), s.encoding)).collect();
        assert_eq!(
            got,
            vec![
                (MediaKind::Image, None, "image/jpeg".into(), Encoding::Base64),
                (MediaKind::Image, Some(0), "image/gif".into(), Encoding::DataUrl),
                (MediaKind::Image, Some(1), "image/webp".into(), Encoding::DataUrl),
            ]
        );
    }

    #[test]
    fn chunked_feeding_matches_whole() {
        let data = b64(&(0..100_000u32).map(|i| (i * 7) as u8).collect::<Vec<_>>());
        let line = format!(
            r#"{{"message":{{"content":[{{"type":"image","source":{{"type":"base64","media_type":"image/png","data":"{data}"}}}}]}},"x":"\u00e9\"","n":[1,-2.5e3,true,null]}}"#
        );
        let whole = scan(line.as_bytes(), &PLACES).unwrap().output;
        for size in [1, 3, 7, 4096] {
            let mut s = Scanner::new(&PLACES);
            for chunk in line.as_bytes().chunks(size) {
                s.feed(chunk);
            }
            assert_eq!(s.finish().unwrap(), whole, "chunk size {size}");
        }
    }

    #[test]
    fn broken_lines_are_errors() {
        for line in [&b"{\"a\":"[..], b"not json", b"{\"a\":1}}", b"", b"{\"a\" 1}", b"[1,]x"] {
            assert!(scan(line, &PLACES).is_err(), "{:?}", String::from_utf8_lossy(line));
        }
        assert!(scan(b"  {\"a\":[]}\r", &PLACES).is_ok());
    }

    #[test]
    fn a_data_url_whose_header_is_not_printable_ascii_is_not_a_payload() {
        // Found by the fuzzer: a byte that is not UTF-8 (or a raw control character) in a data
        // URL's header made the line invalid JSON, yet the header went into the payload's span and
        // the stripped line parsed: the line was stored as valid, with a photo. It must stay in the
        // stripped line, whose parse then refuses the line.
        let data = b64(b"\x89PNG fake");
        for header in [&b"\x89mage/png"[..], b"image/\x01png", b"image/\x7fpng", "imagé/png".as_bytes()] {
            let line = [
                br#"{"message":{"content":[{"type":"image","url":"data:"#,
                header,
                b";base64,",
                data.as_bytes(),
                br#""}]}}"#,
            ]
            .concat();
            let s = scan(&line, &PLACES).unwrap();
            assert!(s.output.spans.is_empty(), "{:?}", String::from_utf8_lossy(&line));
            assert_eq!(s.stripped, line);
        }
        let line = format!(r#"{{"message":{{"content":[{{"type":"image","url":"data:image/png;base64,{data}"}}]}}}}"#);
        assert_eq!(scan(line.as_bytes(), &PLACES).unwrap().output.spans.len(), 1);
    }

    #[test]
    fn not_base64_is_not_stripped() {
        let line = r#"{"source":{"type":"base64","data":"[trimmed for fixture]"}}"#;
        let s = scan(line.as_bytes(), &PLACES).unwrap();
        assert!(s.output.spans.is_empty());
    }
}
