//! The object keys the scanner acts on ([`KnownKey`]), and how much of a key or a short value it
//! keeps to know them.
//!
//! A key longer than any known one is "other" without being kept: the scanner never holds more
//! than [`MAX_KEY`] bytes of a key nor [`MAX_SMALL`] of a value, whatever the line.

/// Longest `type` / `media_type` value kept; longer ones are treated as unknown.
pub(super) const MAX_SMALL: usize = 128;
/// Longest key that can matter; longer keys are "other".
pub(super) const MAX_KEY: usize = 16;

/// The keys the scanner acts on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum KnownKey {
    Type,
    MediaType,
    /// `mimeType`, or `mime` (OpenCode 2's), or `mediaType` (Cline 4's).
    MimeType,
    Data,
    Base64,
    /// `url`, or `uri` (OpenCode 2's).
    Url,
    ImageUrl,
    /// `images`: an array of data URLs (Codex's `user_message` event).
    Images,
    Other,
}

impl KnownKey {
    pub(super) fn from_bytes(b: &[u8]) -> KnownKey {
        match b {
            b"type" => KnownKey::Type,
            b"media_type" => KnownKey::MediaType,
            // OpenCode 2 names a file's type `mime` (`{data, mime}`, a tool's `{type: "file", uri, mime}`),
            // Cline 4 `mediaType` (`{type: "image", data, mediaType}`).
            b"mimeType" | b"mime" | b"mediaType" => KnownKey::MimeType,
            b"data" => KnownKey::Data,
            b"base64" => KnownKey::Base64,
            b"url" | b"uri" => KnownKey::Url,
            b"image_url" => KnownKey::ImageUrl,
            b"images" => KnownKey::Images,
            _ => KnownKey::Other,
        }
    }
}
