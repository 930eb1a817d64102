//! A stored line, rendered for a client: each payload's URL put back where its marker is, and each
//! image block annotated with its ref, URL, type and size (or marked as a failed upload).
//!
//! Rendering reads no transcript byte: image blocks are located by scanning the *stored* line with
//! the same [`Scanner`] the indexer used (a marker is not base64, so every block reads as
//! payload-less, with its ordinal and position), and markers by the media rows' extents through
//! [`scan::marker_offsets`]: nothing is enumerated a second way. What a URL looks like is the
//! caller's ([`MediaUrls`]): the HTTP layer's, or a library user's own.

use std::fmt::Write as _;

use crate::media::MediaRecord;
use scrollback_core::codec::refs::MediaRef;
use scrollback_core::codec::scan::{self, BlockPlaces, MediaKind, STRIPPED_MEDIA_MARKER, Scanner};

/// What the client shows for an image block with nothing behind it.
pub const NOT_DISPLAYED: &str = "[image not displayed]";

/// How a rendered line points at a payload.
pub trait MediaUrls {
    /// The URL of an image block's payload, by its ref.
    fn by_ref(&self, r: &MediaRef) -> String;
    /// The URL of any payload, by the blake3 (hex) of its bytes.
    fn by_hash(&self, blake3: &str) -> String;
}

/// One change to the stored line: at byte `at`, remove `remove` bytes and insert `insert`.
#[derive(Debug)]
struct Edit {
    at: usize,
    remove: usize,
    insert: String,
}

fn json_string(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into())
}

/// Renders a stored line whose payloads are `media` (its own media rows, in line order):
/// - each payload marker becomes the payload's URL (by ref for an image with one, else by hash), so a
///   chat UI's `{"type":"image","url":...}` chunk renders as it is;
/// - each image block under the format's block `places` gains `ref`, `url`, `mimeType`, `bytes` and `blake3`
///   (of the decoded bytes, what a client compares a sent photo with), or, for a
///   failed upload, `"failed": true` and `"placeholder": "[image not displayed]"` (keys the block
///   already has are left alone);
/// - every other stripped payload's object gains `mediaUrl`, `mediaType` and `mediaBytes`.
///
/// The result is JSON; if the stored line cannot be scanned (it always can), it is returned as it is.
pub fn render(stripped: &str, media: &[&MediaRecord], places: &'static BlockPlaces, urls: &impl MediaUrls) -> String {
    let bytes = stripped.as_bytes();
    if media.is_empty()
        && memchr::memmem::find(bytes, b"image").is_none()
        && memchr::memmem::find(bytes, b"\\u").is_none()
    {
        // No payload and no image block (their `type` would spell "image", or hide it in an escape).
        return stripped.to_owned();
    }
    let mut scanner = Scanner::new(places);
    scanner.feed(bytes);
    let Ok(output) = scanner.finish() else { return stripped.to_owned() };
    let mut edits = marker_edits(stripped, media, urls);
    for block in &output.blocks {
        let (start, end) = (block.start as usize, block.end as usize);
        let keys: Vec<String> =
            serde_json::from_str::<serde_json::Map<String, serde_json::Value>>(&stripped[start..=end])
                .map(|m| m.keys().cloned().collect())
                .unwrap_or_default();
        let payload = media.iter().find(|m| m.ordinal == Some(block.ordinal)).and_then(|m| Some((m, m.reference()?)));
        let mut fields: Vec<(&str, String)> = Vec::new();
        match payload {
            Some((m, r)) => {
                fields.push(("ref", json_string(&r.to_string())));
                fields.push(("url", json_string(&urls.by_ref(&r))));
                if let Some(t) = &m.media_type {
                    fields.push(("mimeType", json_string(t)));
                }
                fields.push(("bytes", m.decoded_length.to_string()));
                fields.push(("blake3", json_string(&m.blake3)));
            }
            None => {
                fields.push(("failed", "true".into()));
                fields.push(("placeholder", json_string(NOT_DISPLAYED)));
            }
        }
        let empty = stripped[start + 1..end].trim().is_empty();
        let mut insert = String::new();
        for (key, value) in fields.into_iter().filter(|(k, _)| !keys.iter().any(|existing| existing == k)) {
            if !(insert.is_empty() && empty) {
                insert.push(',');
            }
            write!(insert, "\"{key}\":{value}").unwrap();
        }
        edits.push(Edit { at: end, remove: 0, insert });
    }
    edits.sort_by(|a, b| b.at.cmp(&a.at).then(b.remove.cmp(&a.remove)));
    let mut out = stripped.to_owned();
    for Edit { at, remove, insert } in edits {
        out.replace_range(at..at + remove, &insert);
    }
    out
}

/// The edits that turn each payload's marker into its URL, and annotate payloads outside image
/// blocks with `mediaUrl`, `mediaType` and `mediaBytes`.
fn marker_edits(stripped: &str, media: &[&MediaRecord], urls: &impl MediaUrls) -> Vec<Edit> {
    let mut edits = Vec::new();
    for (m, at) in media.iter().zip(scan::marker_offsets(media.iter().map(|m| m.extent()))) {
        let at = at as usize;
        if stripped.get(at..at + STRIPPED_MEDIA_MARKER.len()) != Some(STRIPPED_MEDIA_MARKER) {
            continue;
        }
        let url = match m.reference().filter(|_| m.kind == MediaKind::Image) {
            Some(r) => urls.by_ref(&r),
            None => urls.by_hash(&m.blake3),
        };
        edits.push(Edit { at, remove: STRIPPED_MEDIA_MARKER.len(), insert: url });
        if m.ordinal.is_none() {
            // After the marker's closing quote: still inside the payload's object.
            let mut extra = format!(",\"mediaUrl\":{}", json_string(&urls.by_hash(&m.blake3)));
            if let Some(t) = &m.media_type {
                write!(extra, ",\"mediaType\":{}", json_string(t)).unwrap();
            }
            write!(extra, ",\"mediaBytes\":{}", m.decoded_length).unwrap();
            edits.push(Edit { at: at + STRIPPED_MEDIA_MARKER.len() + 1, remove: 0, insert: extra });
        }
    }
    edits
}

#[cfg(test)]
mod tests {
    use super::*;
    use scrollback_core::codec::scan::{Encoding, Span};

    struct Urls;
    impl MediaUrls for Urls {
        fn by_ref(&self, r: &MediaRef) -> String {
            format!("/ref/{r}")
        }
        fn by_hash(&self, blake3: &str) -> String {
            format!("/hash/{blake3}")
        }
    }

    fn record(span: &Span, ordinal: Option<u32>, kind: MediaKind) -> MediaRecord {
        MediaRecord {
            id: 1,
            path: "/t/s.jsonl".into(),
            file_live: true,
            from_vault: false,
            offset: 1000 + span.offset,
            length: span.len,
            encoding: Encoding::Base64,
            media_type: Some("image/png".into()),
            decoded_length: 6,
            blake3: "ab".repeat(32),
            kind,
            ordinal,
            session_id: "s".into(),
            entry_uuid: Some("u".into()),
            entry_id: 1,
            line_offset: 1000,
            held: None,
        }
    }

    #[test]
    fn render_annotates_blocks_and_replaces_markers() {
        let line = r#"{"message":{"content":[{"type":"image","source":{"type":"base64","media_type":"image/png","data":"AAAAAAAA"}},{"type":"image","source":{"type":"base64","data":""}},{"type":"image","url":"data:image/png;base64,AAAAAAAA"}]},"toolUseResult":{"file":{"base64":"AAAAAAAA"}}}"#;
        let places = scrollback_core::format::CLAUDE.block_places();
        let scanned = scan::scan(line.as_bytes(), places).unwrap();
        let stripped = String::from_utf8(scanned.stripped).unwrap();
        let spans = &scanned.output.spans;
        assert_eq!(spans.len(), 3);
        let rows = [
            record(&spans[0], Some(0), MediaKind::Image),
            record(&spans[1], Some(2), MediaKind::Image),
            record(&spans[2], None, MediaKind::File),
        ];
        let refs: Vec<&MediaRecord> = rows.iter().collect();
        let out = render(&stripped, &refs, places, &Urls);
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        let blocks = &v["message"]["content"];
        assert_eq!(blocks[0]["ref"], "s/u/0");
        assert_eq!(blocks[0]["url"], "/ref/s/u/0");
        assert_eq!(blocks[0]["source"]["data"], "/ref/s/u/0");
        assert_eq!(blocks[0]["bytes"], 6);
        assert_eq!(blocks[0]["blake3"], "ab".repeat(32));
        assert_eq!(blocks[1]["failed"], true);
        assert_eq!(blocks[1]["placeholder"], NOT_DISPLAYED);
        assert!(blocks[1].get("ref").is_none());
        assert_eq!(blocks[2]["url"], "/ref/s/u/2", "a data-URL chunk's url is its media URL");
        assert_eq!(blocks[2]["ref"], "s/u/2");
        let hash_url = format!("/hash/{}", "ab".repeat(32));
        assert_eq!(v["toolUseResult"]["file"]["base64"], hash_url.as_str());
        assert_eq!(v["toolUseResult"]["file"]["mediaUrl"], hash_url.as_str());
        assert!(!out.contains(STRIPPED_MEDIA_MARKER));
    }
}
