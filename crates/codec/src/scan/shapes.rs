//! The shapes: when an object closes, which of its candidate strings are payloads and whether it
//! is an image or document block (the shapes are listed on [`Scanner`](super::Scanner)); when the
//! line ends, the numbering of the image blocks under a block place.
//!
//! It sees only what the tokenizer kept of each object (its short keys' values, its candidates'
//! lengths and hashes): never the line, nor a byte of a payload.

use super::keys::KnownKey;
use super::output::{Encoding, FailedImage, ImageBlock, MediaKind, ScanOutput, Span};
use super::payload::{Candidate, Missing};
use super::places::Role;

/// What the scanner keeps of an open object or array: where it is, what its short keys said, its
/// candidate strings, and the payloads found below it that no block has claimed yet.
#[derive(Debug)]
pub(super) struct Frame {
    pub(super) object: bool,
    pub(super) start: u64,
    pub(super) role: Role,
    /// The key this object or array is the value of (`Other` in an array or at the top).
    pub(super) under: KnownKey,
    pub(super) key: KnownKey,
    /// Whether the object has a `data` key (whatever its value).
    pub(super) has_data: bool,
    /// Of an [`Role::Along`] object's places, those its current key leads on to.
    pub(super) next: u8,
    pub(super) ty: Option<String>,
    pub(super) media_type: Option<String>,
    pub(super) mime_type: Option<String>,
    pub(super) candidates: Vec<Candidate>,
    /// Payloads decided in this frame or below, not yet claimed by a block.
    pub(super) pending: Vec<Span>,
    pub(super) hint: Missing,
}

impl Frame {
    pub(super) fn new(object: bool, start: u64, role: Role, under: KnownKey) -> Frame {
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

/// An image block under a block place whose object has closed, waiting for its ordinal.
#[derive(Debug)]
pub(super) struct ClosedBlock {
    /// Offset of its `{`.
    start: u64,
    /// Offset of its `}`.
    end: u64,
    /// Its payload, if it has one.
    payload: Option<Span>,
    /// Why it has none, if it has none.
    missing: Missing,
}

impl Frame {
    /// At its close, after its candidates are decided: an image or document block claims the
    /// payloads found in it (the first one of an image block under a block place is its own);
    /// anything else hands them, and why a block may have none, to `parent` (to `claimed` at the
    /// top). `at` is the offset of its closing bracket.
    pub(super) fn close(
        mut self,
        at: u64,
        parent: Option<&mut Frame>,
        claimed: &mut Vec<Span>,
        image_blocks: &mut Vec<ClosedBlock>,
        url_images: &[&str],
    ) {
        self.decide();
        let block = if self.object { self.ty.as_deref() } else { None };
        // A block type the format declared ([`BlockPlaces::with_url_images`](super::BlockPlaces::with_url_images))
        // is a photo by its data URL's type.
        let image_url =
            |s: &Span| s.encoding.is_data_url() && s.media_type.as_deref().is_some_and(|t| t.starts_with("image/"));
        let image = matches!(block, Some("image" | "image_url" | "input_image"))
            || (self.object && self.has_data && self.mime_type.as_deref().is_some_and(|t| t.starts_with("image/")))
            || (block.is_some_and(|b| url_images.contains(&b)) && self.pending.iter().any(image_url));
        if image || block == Some("document") {
            let kind = if image { MediaKind::Image } else { MediaKind::Document };
            let mut pending = std::mem::take(&mut self.pending);
            pending.sort_by_key(|s| s.offset);
            let mut first = None;
            for mut span in pending {
                span.kind = kind;
                if image && self.role == Role::InPlace && first.is_none() {
                    first = Some(span);
                } else {
                    claimed.push(span);
                }
            }
            if image && self.role == Role::InPlace {
                image_blocks.push(ClosedBlock { start: self.start, end: at, payload: first, missing: self.hint });
            }
        } else if let Some(parent) = parent {
            parent.pending.append(&mut self.pending);
            parent.hint = parent.hint.max(self.hint);
        } else {
            claimed.append(&mut self.pending);
        }
    }

    /// At an object's close: which of its candidate strings are payloads.
    fn decide(&mut self) {
        let ty = self.ty.as_deref();
        for c in self.candidates.drain(..) {
            let media_type = if c.data_url {
                c.media_type
            } else {
                match c.key {
                    KnownKey::Data if ty == Some("base64") => self.media_type.clone(),
                    // MCP's `{type: "image", data, mimeType}`, Gemini's `inlineData {mimeType, data}`.
                    KnownKey::Data if self.mime_type.is_some() => self.mime_type.clone(),
                    KnownKey::Base64 => ty
                        .filter(|t| t.contains('/'))
                        .map(str::to_owned)
                        .or_else(|| self.media_type.clone())
                        .or_else(|| self.mime_type.clone()),
                    _ => {
                        self.hint = self.hint.max(Missing::NotBase64);
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
            self.pending.push(Span {
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
}

/// At the line's end: the image blocks under a block place numbered in the order they begin (a
/// block's payload takes its ordinal; one without a payload is a failed image), and every payload
/// in line order.
pub(super) fn number(mut blocks: Vec<ClosedBlock>, mut spans: Vec<Span>) -> ScanOutput {
    blocks.sort_by_key(|b| b.start);
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
    ScanOutput { spans, failed_images, image_blocks, blocks: positions }
}
