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
//!
//! Layout, in the order a line goes through:
//! - `sieve.rs`: [`may_hold_media`], the word search that lets the indexer skip most lines;
//! - `tokenizer.rs`: [`Scanner`], JSON's syntax as a push tokenizer;
//! - `escape.rs`: JSON's escapes and the one rule for an escaped character in a payload;
//! - `keys.rs`: the keys the scanner acts on;
//! - `payload.rs`: a candidate string decoded as a stream into blake3;
//! - `places.rs`: [`BlockPlaces`], where a format's image blocks are numbered;
//! - `shapes.rs`: at an object's close, which candidates are payloads and which blocks are images;
//! - `output.rs`: what a scan finds ([`Span`], [`ScanOutput`], [`ScanError`]);
//! - `stripping.rs`: [`strip`], [`restore`] and where markers land ([`marker_offsets`]).

mod escape;
mod keys;
mod output;
mod payload;
mod places;
mod shapes;
mod sieve;
mod stripping;
mod tokenizer;

pub use escape::{PayloadChar, payload_char, simple_escape};
pub use output::{Encoding, Extent, FailedImage, ImageBlock, MediaKind, ScanError, ScanOutput, Span};
pub use places::BlockPlaces;
pub use sieve::{may_hold_media, scan_without_media};
pub use stripping::{STRIPPED_MEDIA_MARKER, marker_offsets, restore, strip};
pub use tokenizer::{MAX_DEPTH, Scanner};

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
    fn files_are_payloads_under_mime_and_uri_and_a_declared_block_is_an_image_by_its_url() {
        // A person's attached files (`data` beside `mime`), a tool's image (`uri` a data URL in a
        // `file` object, a shape its format declares), and a file that is only named by its path.
        static ROW: BlockPlaces = BlockPlaces::new(&[&["row"]]).with_url_images(&["file"]);
        let line = r#"{"row":{"files":[{"data":"AAAA","mime":"image/png","source":{"type":"inline"}},{"data":"JVBE","mime":"application/pdf","source":{"type":"inline"}}],"content":[{"type":"tool","state":{"content":[{"type":"text","text":"ok"},{"type":"file","uri":"data:image/webp;base64,UklG","mime":"image/webp"},{"type":"file","uri":"file:///w/a.png","mime":"image/png"}]}}]}}"#;
        let s = scan(line.as_bytes(), &ROW).unwrap();
        let got: Vec<_> =
            s.output.spans.iter().map(|s| (s.kind, s.ordinal, s.media_type.clone().unwrap(), s.encoding)).collect();
        assert_eq!(
            got,
            vec![
                (MediaKind::Image, Some(0), "image/png".into(), Encoding::Base64),
                (MediaKind::File, None, "application/pdf".into(), Encoding::Base64),
                (MediaKind::Image, Some(1), "image/webp".into(), Encoding::DataUrl),
            ]
        );
        assert_eq!(s.output.image_blocks, 2, "a file named by its path is no image block");
        // Where no format declared the shape, the same bytes are a file's payload, in no block.
        static UNDECLARED: BlockPlaces = BlockPlaces::new(&[&["row"]]);
        let s = scan(line.as_bytes(), &UNDECLARED).unwrap();
        let got: Vec<_> = s.output.spans.iter().map(|s| (s.kind, s.ordinal)).collect();
        assert_eq!(got, vec![(MediaKind::Image, Some(0)), (MediaKind::File, None), (MediaKind::File, None)]);
        assert_eq!(s.output.image_blocks, 1);
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
