//! The scanner's oracle. The property test (`prop.rs`) checks the scanner with it on generated
//! lines; the fuzz target (`fuzz/scan.rs`, which includes this file) on any bytes the fuzzer makes;
//! and `fuzz_corpus.rs` replays the fuzzer's committed corpus through it in `cargo test`, so CI
//! checks on stable what the fuzzer found without running a fuzzer.
//!
//! On any bytes, in every chunking: no panic, the same answer whole or in pieces, spans in order
//! inside the line whose bytes decode to their blake3, and the stripped line restores to the
//! original. Where serde_json parses the line (with no key twice, which JSON leaves undefined), the
//! scanner accepts it and finds exactly the payloads, kinds, media types and ordinals a plain tree
//! walk of serde_json's value finds, and the stripped line is that value with each payload replaced
//! by the marker.

#![allow(dead_code)]

use base64::Engine;
use scrollback_core::codec::scan::{self, BlockPlaces, STRIPPED_MEDIA_MARKER, ScanError, ScanOutput, Scanner};
use scrollback_core::format::{CLAUDE, FORMATS};
use serde_json::Value;

/// What the oracle finds: per payload, in document order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Expected {
    pub value: String,
    pub kind: &'static str,
    pub media_type: Option<String>,
    pub ordinal: Option<u32>,
    pub blake3: blake3::Hash,
}

pub fn decode(text: &str) -> Option<Vec<u8>> {
    let clean: String = text.chars().filter(|&c| c != '\n' && c != '\r').collect();
    let engine = if clean.len().is_multiple_of(4) {
        &base64::engine::general_purpose::STANDARD
    } else {
        &base64::engine::general_purpose::STANDARD_NO_PAD
    };
    engine.decode(clean).ok().filter(|b| !b.is_empty())
}

struct Oracle {
    /// The format's block places, as key paths.
    paths: &'static [&'static [&'static str]],
    /// The block types the format declares an image by its data URL's type.
    url_images: &'static [&'static str],
    /// Each payload, and where it is (a JSON pointer).
    found: Vec<(Expected, String)>,
    /// Image blocks under a block place in the order they begin: the payload index each claimed.
    blocks: Vec<Option<usize>>,
}

/// Where a value is as to the block places: at or under one, on the way to some (those paths, and
/// the number of keys that led here), or elsewhere. Only objects lead on.
#[derive(Debug, Clone, PartialEq)]
enum Place {
    In,
    Along(Vec<usize>, usize),
    Out,
}

/// A data URL's media type and base64, if `clean` is one the scanner accepts.
fn data_url(clean: &str) -> Option<(String, String)> {
    let rest = clean.strip_prefix("data:")?;
    let (header, b64) = rest.split_once(',')?;
    // A header is printable ASCII, as media types are, and at most 256 bytes.
    if header.len() > 256 || !header.bytes().all(|b| (0x20..0x7f).contains(&b)) {
        return None;
    }
    let mut params = header.split(';');
    let mt = params.next().unwrap();
    params.any(|p| p == "base64").then(|| (mt.to_owned(), b64.to_owned()))
}

/// `\n` and `\r` (base64 line wraps) are skipped everywhere in a payload.
fn unwrapped(text: &str) -> String {
    text.chars().filter(|&c| c != '\n' && c != '\r').collect()
}

impl Oracle {
    /// The place of a value under `key` of an object at `place`.
    fn child(&self, place: &Place, key: &str, object: bool) -> Place {
        match place {
            Place::In => Place::In,
            Place::Out => Place::Out,
            Place::Along(paths, depth) => {
                let next: Vec<usize> =
                    paths.iter().copied().filter(|&i| self.paths[i].get(*depth) == Some(&key)).collect();
                if next.is_empty() {
                    Place::Out
                } else if next.iter().any(|&i| self.paths[i].len() == depth + 1) {
                    Place::In
                } else if object {
                    Place::Along(next, depth + 1)
                } else {
                    Place::Out
                }
            }
        }
    }

    fn payload(&mut self, text: &str, kind_media: Option<String>, b64: &str, pointer: String) -> Option<usize> {
        let bytes = decode(b64)?;
        self.found.push((
            Expected {
                value: text.to_owned(),
                kind: "file",
                media_type: kind_media,
                ordinal: None,
                blake3: blake3::hash(&bytes),
            },
            pointer,
        ));
        Some(self.found.len() - 1)
    }

    /// Walks `v` at `place` (`images`: it is the value of an `images` key); returns the payloads
    /// decided in it not yet claimed by a block.
    fn walk(&mut self, v: &Value, at: &str, place: Place, images: bool) -> Vec<usize> {
        match v {
            Value::Array(items) => {
                let inner = if place == Place::In { Place::In } else { Place::Out };
                let mut pending = Vec::new();
                for (n, item) in items.iter().enumerate() {
                    let here = format!("{at}/{n}");
                    match item {
                        Value::String(text) if images => {
                            if let Some((mt, b64)) = data_url(&unwrapped(text))
                                && let Some(i) = self.payload(text, (!mt.is_empty()).then_some(mt), &b64, here)
                            {
                                pending.push(i);
                            }
                        }
                        _ => pending.extend(self.walk(item, &here, inner.clone(), false)),
                    }
                }
                pending
            }
            Value::Object(map) => {
                let ty = map.get("type").and_then(Value::as_str);
                // `mime` is OpenCode 2's name for it, `mediaType` Cline 4's (an object has one of them).
                let mime = small(map, "mimeType").or_else(|| small(map, "mime")).or_else(|| small(map, "mediaType"));
                let image = matches!(ty, Some("image" | "image_url" | "input_image"))
                    || (map.contains_key("data") && mime.is_some_and(|t| t.starts_with("image/")));
                // An object of a type the format declares (OpenCode's file part) is an image block if
                // it holds a data URL of an image's type, which only its payloads say: its slot is
                // taken where it begins, and given back if it is none.
                let file = ty.is_some_and(|t| self.url_images.contains(&t));
                let block_slot = ((image || file) && place == Place::In).then(|| {
                    self.blocks.push(None);
                    self.blocks.len() - 1
                });
                let mut pending = Vec::new();
                for (k, child) in map {
                    if let Value::String(text) = child {
                        let clean = unwrapped(text);
                        let url = data_url(&clean);
                        let candidate = match (k.as_str(), &url) {
                            // A data URL that is the value of `images` itself counts as one of its items.
                            ("data" | "url" | "uri" | "image_url" | "images", Some((mt, b64))) => {
                                Some(((!mt.is_empty()).then(|| mt.clone()), b64.clone()))
                            }
                            ("data", None) if ty == Some("base64") => {
                                Some((small(map, "media_type").map(str::to_owned), text.clone()))
                            }
                            ("data", None) if mime.is_some() => Some((mime.map(str::to_owned), text.clone())),
                            ("base64", None) => Some((
                                small(map, "type")
                                    .filter(|t| t.contains('/'))
                                    .or_else(|| small(map, "media_type"))
                                    .or(mime)
                                    .map(str::to_owned),
                                text.clone(),
                            )),
                            _ => None,
                        };
                        if let Some((media_type, b64)) = candidate
                            && let Some(i) = self.payload(text, media_type, &b64, pointer(at, k))
                        {
                            pending.push(i);
                        }
                    } else {
                        let place = self.child(&place, k, child.is_object());
                        pending.extend(self.walk(child, &pointer(at, k), place, k == "images"));
                    }
                }
                let image_url = |e: &Expected| {
                    unwrapped(&e.value).starts_with("data:")
                        && e.media_type.as_deref().is_some_and(|t| t.starts_with("image/"))
                };
                let image = image || (file && pending.iter().any(|&i| image_url(&self.found[i].0)));
                let block_slot = match block_slot {
                    Some(slot) if !image => {
                        self.blocks.remove(slot);
                        None
                    }
                    slot => slot,
                };
                if image || ty == Some("document") {
                    pending.sort();
                    for (n, &i) in pending.iter().enumerate() {
                        self.found[i].0.kind = if image { "image" } else { "document" };
                        if n == 0
                            && let Some(slot) = block_slot
                        {
                            self.blocks[slot] = Some(i);
                        }
                    }
                    Vec::new()
                } else {
                    pending
                }
            }
            _ => Vec::new(),
        }
    }
}

/// A media type the scanner keeps: a string value of at most 128 bytes (longer ones are unknown).
fn small<'a>(map: &'a serde_json::Map<String, Value>, key: &str) -> Option<&'a str> {
    map.get(key).and_then(Value::as_str).filter(|v| v.len() <= 128)
}

/// A JSON pointer to `key` of the object at `at`.
fn pointer(at: &str, key: &str) -> String {
    format!("{at}/{}", key.replace('~', "~0").replace('/', "~1"))
}

/// The payloads of `line` in document order, its image blocks under Claude Code's places, and the
/// ordinals of those without a payload.
pub fn oracle(line: &str) -> (Vec<Expected>, u32, Vec<u32>) {
    let (payloads, blocks, failed, _) = oracle_of(&serde_json::from_str(line).unwrap(), CLAUDE.block_places());
    (payloads, blocks, failed)
}

/// [`oracle`] of a parsed line under `places`, with where each payload is (JSON pointers).
pub fn oracle_of(v: &Value, places: &'static BlockPlaces) -> (Vec<Expected>, u32, Vec<u32>, Vec<String>) {
    let paths = places.paths();
    let mut o = Oracle { paths, url_images: places.url_images(), found: Vec::new(), blocks: Vec::new() };
    o.walk(v, "", Place::Along((0..paths.len()).collect(), 0), false);
    let mut failed = Vec::new();
    for (ordinal, block) in o.blocks.iter().enumerate() {
        match block {
            Some(i) => o.found[*i].0.ordinal = Some(ordinal as u32),
            None => failed.push(ordinal as u32),
        }
    }
    let (payloads, pointers) = o.found.into_iter().unzip();
    (payloads, o.blocks.len() as u32, failed, pointers)
}

/// The parsed line with the payload string at each of `pointers` replaced by the marker.
pub fn replace_payloads(v: &mut Value, pointers: &[String]) {
    for p in pointers {
        *v.pointer_mut(p).expect("a payload's pointer") = Value::String(STRIPPED_MEDIA_MARKER.to_owned());
    }
}

/// Scans `line` fed in pieces of `chunk` bytes, numbering image blocks under `places`.
pub fn scan_in_pieces(line: &[u8], chunk: usize, places: &'static BlockPlaces) -> Result<ScanOutput, ScanError> {
    let mut scanner = Scanner::new(places);
    for piece in line.chunks(chunk.max(1)) {
        scanner.feed(piece);
    }
    scanner.finish()
}

/// The chunk sizes a line is fed in: whole, a byte at a time, a few in between, and one taken from
/// the line itself (so that a fuzzer steers it).
pub fn chunkings(line: &[u8]) -> Vec<usize> {
    let mut sizes = vec![line.len().max(1), 1, 2, 3, 7, 64, 4096];
    if let Some(&first) = line.first() {
        sizes.push(usize::from(first) % 61 + 1);
    }
    sizes
}

/// A JSON value in which no object has a key twice; parsing fails otherwise.
struct Strict;

impl<'de> serde::Deserialize<'de> for Strict {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Strict, D::Error> {
        d.deserialize_any(StrictVisitor)
    }
}

struct StrictVisitor;

impl<'de> serde::de::Visitor<'de> for StrictVisitor {
    type Value = Strict;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("JSON without duplicate keys")
    }
    fn visit_bool<E>(self, _: bool) -> Result<Strict, E> {
        Ok(Strict)
    }
    fn visit_i64<E>(self, _: i64) -> Result<Strict, E> {
        Ok(Strict)
    }
    fn visit_u64<E>(self, _: u64) -> Result<Strict, E> {
        Ok(Strict)
    }
    fn visit_f64<E>(self, _: f64) -> Result<Strict, E> {
        Ok(Strict)
    }
    fn visit_str<E>(self, _: &str) -> Result<Strict, E> {
        Ok(Strict)
    }
    fn visit_unit<E>(self) -> Result<Strict, E> {
        Ok(Strict)
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Strict, A::Error> {
        while seq.next_element::<Strict>()?.is_some() {}
        Ok(Strict)
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Strict, A::Error> {
        // A BTreeSet, not a HashSet: no random seed, so the fuzzer sees the same path each run.
        let mut keys = std::collections::BTreeSet::new();
        while let Some(key) = map.next_key::<String>()? {
            if !keys.insert(key) {
                return Err(serde::de::Error::custom("a key twice"));
            }
            map.next_value::<Strict>()?;
        }
        Ok(Strict)
    }
}

/// serde_json's value of `line`, if it is JSON with no key twice in an object.
pub fn parse_strict(line: &[u8]) -> Option<Value> {
    serde_json::from_slice::<Strict>(line).ok()?;
    serde_json::from_slice(line).ok()
}

/// The oracle on any bytes, under every format's block places; panics with what disagrees.
pub fn check(line: &[u8]) {
    for format in FORMATS {
        check_under(line, format.block_places());
    }
}

/// The oracle on any bytes, under `places`.
pub fn check_under(line: &[u8], places: &'static BlockPlaces) {
    let whole = scan_in_pieces(line, line.len(), places);
    for chunk in chunkings(line) {
        assert_eq!(scan_in_pieces(line, chunk, places), whole, "fed in pieces of {chunk} bytes, the answer differs");
    }
    if !scan::may_hold_media(line) {
        // The indexer skips the scan of such a line: it must scan to nothing (or to the same error).
        match &whole {
            Ok(out) => assert_eq!(out, &ScanOutput::default(), "a line without the media words holds media"),
            Err(e) if e.reason == "nesting too deep" => assert_eq!(scan::scan_without_media(line).as_ref(), Err(e)),
            Err(_) => {}
        }
    }
    let parsed = parse_strict(line);
    let out = match whole {
        Ok(out) => out,
        Err(e) => {
            assert!(parsed.is_none(), "serde_json parses the line, the scanner refuses it: {e}");
            return;
        }
    };
    let mut end = 0;
    for span in &out.spans {
        assert!(span.offset >= end && span.offset + span.len <= line.len() as u64, "spans in order, inside the line");
        end = span.offset + span.len;
        let raw = &line[span.offset as usize..end as usize];
        let quoted = [b"\"".as_slice(), raw, b"\""].concat();
        let text: String = serde_json::from_slice(&quoted).expect("a span is the inside of a JSON string");
        let b64 = match span.encoding.is_data_url() {
            true => text.split_once(',').expect("a data URL has a comma").1.to_owned(),
            false => text.clone(),
        };
        let bytes = decode(&b64).expect("a span decodes");
        assert_eq!(blake3::hash(&bytes), span.blake3, "a span's bytes hash to its blake3");
        assert_eq!(bytes.len() as u64, span.decoded_len);
    }
    let stripped = scan::strip(line, &out.spans);
    let restored = scan::restore(&stripped, &out.spans, |i| {
        line[out.spans[i].offset as usize..(out.spans[i].offset + out.spans[i].len) as usize].to_vec()
    });
    assert_eq!(restored.as_deref(), Some(line), "the stripped line restores to the original");
    if let Some(value) = parsed {
        agree(line, &value, &out, &stripped, places);
    }
}

/// The scanner's `out` for `line` (serde_json's `value`) is what the tree walk finds; `stripped`
/// parses to `value` with each payload replaced by the marker.
pub fn agree(line: &[u8], value: &Value, out: &ScanOutput, stripped: &[u8], places: &'static BlockPlaces) {
    let (expected, image_blocks, failed, pointers) = oracle_of(value, places);
    let got: Vec<Expected> = out
        .spans
        .iter()
        .map(|span| {
            let raw = &line[span.offset as usize..(span.offset + span.len) as usize];
            let quoted = [b"\"".as_slice(), raw, b"\""].concat();
            Expected {
                value: serde_json::from_slice(&quoted).expect("a span is a whole JSON string"),
                kind: span.kind.as_str(),
                media_type: span.media_type.clone(),
                ordinal: span.ordinal,
                blake3: span.blake3,
            }
        })
        .collect();
    assert_eq!(got, expected, "the payloads");
    assert_eq!(out.image_blocks, image_blocks, "the image blocks");
    assert_eq!(out.failed_images.iter().map(|f| f.ordinal).collect::<Vec<_>>(), failed, "the failed images");
    let parsed: Value = serde_json::from_slice(stripped).expect("the stripped line is JSON");
    let mut original = value.clone();
    replace_payloads(&mut original, &pointers);
    assert_eq!(parsed, original, "the stripped line");
}
