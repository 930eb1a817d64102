//! The sieve: whether a line may hold media at all, by a search for the words no payload or image
//! block can be written without ([`may_hold_media`]), and what a line ruled out scans to
//! ([`scan_without_media`]), so that the indexer skips the scanner on most lines.
//!
//! It must never rule out a line the scanner would find something in: the tests and the oracle
//! check it against the scanner.

use super::output::{ScanError, ScanOutput};
use super::tokenizer::MAX_DEPTH;

/// Whether `line` may hold a payload or an image block, by a search for the words they cannot be
/// written without: every payload needs `base64` (a `"type":"base64"` source, a `base64` key, or a
/// data URL's `;base64,`) or a `"mimeType"`, `"mime"` (both begin `"mime`) or `"mediaType"` key
/// beside its `data`, and every image block a type that starts or ends its string with `image` (`"image"`,
/// `"image_url"`, `"input_image"`) or one of those keys, unless those words are spelt with `\u`
/// escapes. A
/// line for which this is false scans to nothing (the tests check it against the scanner), so the
/// indexer skips its scan; typical text lines are most lines.
pub fn may_hold_media(line: &[u8]) -> bool {
    use std::sync::LazyLock;
    static NEEDLES: LazyLock<[memchr::memmem::Finder<'static>; 6]> = LazyLock::new(|| {
        [b"base64".as_slice(), b"\"image", b"image\"", b"\"mime", b"\"mediaType\"", b"\\u"]
            .map(memchr::memmem::Finder::new)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn media_words_rule_lines_in_or_out() {
        let text = r#"{"type":"assistant","message":{"content":[{"type":"text","text":"one image at a time"}]}}"#;
        assert!(!may_hold_media(text.as_bytes()));
        for line in [
            r#"{"message":{"content":[{"type":"image","source":{"data":""}}]}}"#,
            r#"{"content":[{"type":"input_image"}]}"#,
            r#"{"a":{"image_url":{"url":"data:image/png;base64,AAAA"}}}"#,
            r#"{"file":{"base64":"AAAA"}}"#,
            r#"{"files":[{"data":"JVBERi0x","mime":"application/pdf"}]}"#,
            r#"{"content":[{"type":"media","data":"JVBERi0x","mediaType":"application/pdf"}]}"#,
            // Words spelt with escapes are JSON's business: such lines are always scanned.
            r#"{"message":{"content":[{"type":"\u0069mage"}]}}"#,
        ] {
            assert!(may_hold_media(line.as_bytes()), "{line}");
        }
    }
}
