//! The scanner against an oracle: random JSON lines with payloads at random depths and key orders,
//! written with random escapes, fed in random chunk sizes. serde_json parses the same line (keeping
//! key order) and a plain tree walk applies the payload rules (listed on `Scanner`); both must agree on every payload,
//! its bytes, kind, media type and ordinal, and the stripped line must be the parsed line with each
//! payload string replaced by the marker.

use base64::Engine;
use proptest::prelude::*;
use scrollback::ingest::scan::{self, STRIPPED_MEDIA_MARKER, Scanner};
use serde_json::Value;

/// A JSON tree that keeps key order and says how each string is written.
#[derive(Debug, Clone)]
enum J {
    Obj(Vec<(String, J)>),
    Arr(Vec<J>),
    /// A string, and whether to write it with gratuitous escapes (`\/`, `\n` wraps, `\u00XX`).
    Str(String, bool),
    Num(i64),
    Bool(bool),
    Null,
}

fn write_str(s: &str, escape: bool, out: &mut String) {
    if !escape {
        out.push_str(&serde_json::to_string(s).unwrap());
        return;
    }
    out.push('"');
    for (i, c) in s.chars().enumerate() {
        if i > 0 && i % 61 == 0 && s.len() > 100 {
            // A line wrap, only inside base64-looking strings: the decoded value gains a newline,
            // which a base64 reader skips.
            out.push_str("\\n");
        }
        match c {
            '/' => out.push_str("\\/"),
            'A' => out.push_str("\\u0041"),
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

impl J {
    fn write(&self, out: &mut String) {
        match self {
            J::Obj(fields) => {
                out.push('{');
                for (i, (k, v)) in fields.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    write_str(k, false, out);
                    out.push(':');
                    v.write(out);
                }
                out.push('}');
            }
            J::Arr(items) => {
                out.push('[');
                for (i, v) in items.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    v.write(out);
                }
                out.push(']');
            }
            J::Str(s, escape) => write_str(s, *escape, out),
            J::Num(n) => out.push_str(&n.to_string()),
            J::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            J::Null => out.push_str("null"),
        }
    }
}

fn obj(fields: Vec<(&str, J)>) -> J {
    J::Obj(fields.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())
}

fn s(v: &str) -> J {
    J::Str(v.to_owned(), false)
}

/// Payload text: valid base64 of random bytes (padded or not), empty, or not base64.
fn arb_payload() -> impl Strategy<Value = String> {
    prop_oneof![
        6 => proptest::collection::vec(any::<u8>(), 1..300).prop_map(|b| base64::engine::general_purpose::STANDARD.encode(b)),
        2 => proptest::collection::vec(any::<u8>(), 1..300).prop_map(|b| base64::engine::general_purpose::STANDARD_NO_PAD.encode(b)),
        1 => Just(String::new()),
        1 => Just("[trimmed for fixture]".to_owned()),
        1 => Just("not/base64!".to_owned()),
    ]
}

fn media_type() -> impl Strategy<Value = String> {
    prop_oneof![Just("image/png".to_owned()), Just("image/jpeg".to_owned()), Just("application/pdf".to_owned())]
}

/// Shuffles an object's keys.
fn shuffled(fields: Vec<(&'static str, J)>) -> impl Strategy<Value = J> {
    Just(fields).prop_shuffle().prop_map(|f| obj(f))
}

/// A block or object that may carry a payload, in one of the known shapes.
fn arb_media() -> impl Strategy<Value = J> {
    (arb_payload(), media_type(), any::<bool>(), 0..8u8).prop_flat_map(|(data, mt, escape, shape)| {
        let data_str = J::Str(data.clone(), escape);
        let data_url = J::Str(format!("data:{mt};base64,{data}"), escape);
        match shape {
            0 => shuffled(vec![
                ("type", s("image")),
                ("source", obj(vec![("type", s("base64")), ("media_type", s(&mt)), ("data", data_str)])),
            ])
            .boxed(),
            1 => shuffled(vec![
                ("source", obj(vec![("data", data_str), ("media_type", s(&mt)), ("type", s("base64"))])),
                ("type", s("image")),
            ])
            .boxed(),
            2 => shuffled(vec![("type", s("image")), ("url", data_url)]).boxed(),
            3 => shuffled(vec![("type", s("image_url")), ("image_url", obj(vec![("url", data_url)]))]).boxed(),
            4 => shuffled(vec![("type", s("input_image")), ("image_url", data_url)]).boxed(),
            5 => shuffled(vec![
                ("type", s("document")),
                ("source", obj(vec![("type", s("base64")), ("media_type", s(&mt)), ("data", data_str)])),
            ])
            .boxed(),
            6 => shuffled(vec![("base64", data_str), ("type", s(&mt)), ("originalSize", J::Num(10))]).boxed(),
            _ => shuffled(vec![("type", s("image")), ("source", obj(vec![("type", s("base64"))]))]).boxed(),
        }
    })
}

/// Filler: text (sometimes quoting an image block: a decoy), numbers, nesting.
fn arb_value() -> impl Strategy<Value = J> {
    let leaf = prop_oneof![
        "[a-z é😀\"\\\\/]{0,20}".prop_map(|t| J::Str(t, false)),
        "[a-z]{0,10}".prop_map(|t| J::Str(t, true)),
        Just(J::Str(r#"{"type":"image","source":{"type":"base64","data":"AAAA"}}"#.to_owned(), false)),
        any::<i64>().prop_map(J::Num),
        any::<bool>().prop_map(J::Bool),
        Just(J::Null),
    ];
    leaf.prop_recursive(5, 48, 6, |inner| {
        prop_oneof![
            3 => proptest::collection::vec(prop_oneof![2 => inner.clone(), 1 => arb_media()], 0..5).prop_map(J::Arr),
            2 => proptest::collection::vec(
                ((prop_oneof![Just("type"), Just("data"), Just("content"), Just("text"), Just("x"), Just("url"), Just("source")]),
                 prop_oneof![2 => inner.clone(), 1 => arb_media()]),
                0..5,
            )
            .prop_map(|fields| {
                let mut seen = std::collections::HashSet::new();
                J::Obj(fields.into_iter().filter(|(k, _)| seen.insert(*k)).map(|(k, v)| (k.to_owned(), v)).collect())
            }),
        ]
    })
}

/// A whole transcript line: content blocks (media, tool results holding media, filler), and
/// payloads outside `message.content` too.
fn arb_line() -> impl Strategy<Value = String> {
    let block = prop_oneof![
        3 => arb_media(),
        2 => arb_value(),
        1 => proptest::collection::vec(prop_oneof![arb_media(), arb_value()], 0..4).prop_map(|content| obj(vec![
            ("type", s("tool_result")),
            ("tool_use_id", s("toolu_1")),
            ("content", J::Arr(content)),
        ])),
    ];
    (
        proptest::collection::vec(block, 0..6),
        proptest::option::of(arb_media()),
        proptest::option::of(arb_value()),
        any::<bool>(),
    )
        .prop_flat_map(|(content, tool_copy, extra, message_first)| {
            let mut fields = vec![
                ("type", s("user")),
                ("uuid", s("u-1")),
                ("message", obj(vec![("role", s("user")), ("content", J::Arr(content))])),
            ];
            if let Some(copy) = tool_copy {
                fields.push(("toolUseResult", obj(vec![("type", s("image")), ("file", copy)])));
            }
            if let Some(extra) = extra {
                fields.push(("extra", extra));
            }
            if message_first {
                fields.swap(0, 2);
            }
            shuffled(fields)
        })
        .prop_map(|j| {
            let mut out = String::new();
            j.write(&mut out);
            out
        })
}

/// What the oracle finds: per payload, in document order.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Expected {
    value: String,
    kind: &'static str,
    media_type: Option<String>,
    ordinal: Option<u32>,
    blake3: blake3::Hash,
}

fn decode(text: &str) -> Option<Vec<u8>> {
    let clean: String = text.chars().filter(|&c| c != '\n' && c != '\r').collect();
    let engine = if clean.len().is_multiple_of(4) {
        &base64::engine::general_purpose::STANDARD
    } else {
        &base64::engine::general_purpose::STANDARD_NO_PAD
    };
    engine.decode(clean).ok().filter(|b| !b.is_empty())
}

struct Oracle {
    found: Vec<(Expected, Option<usize>)>,
    /// In-content image blocks in the order they begin: the payload index each claimed.
    blocks: Vec<Option<usize>>,
}

impl Oracle {
    /// Walks `v`; returns the payloads decided in it not yet claimed by a block.
    fn walk(&mut self, v: &Value, in_content: bool, role_message: bool, top: bool) -> Vec<usize> {
        match v {
            Value::Array(items) => items.iter().flat_map(|i| self.walk(i, in_content, false, false)).collect(),
            Value::Object(map) => {
                let ty = map.get("type").and_then(Value::as_str);
                let image = matches!(ty, Some("image" | "image_url" | "input_image"));
                let block_slot = (image && in_content).then(|| {
                    self.blocks.push(None);
                    self.blocks.len() - 1
                });
                let mut pending = Vec::new();
                for (k, child) in map {
                    if let Value::String(text) = child {
                        let data_url = text.strip_prefix("data:").and_then(|rest| {
                            let (header, b64) = rest.split_once(',')?;
                            let mut params = header.split(';');
                            let mt = params.next().unwrap();
                            params.any(|p| p == "base64").then(|| (mt.to_owned(), b64.to_owned()))
                        });
                        let candidate = match (k.as_str(), &data_url) {
                            ("data" | "url" | "image_url", Some((mt, b64))) => {
                                Some(((!mt.is_empty()).then(|| mt.clone()), b64.clone()))
                            }
                            ("data", None) if ty == Some("base64") => {
                                Some((map.get("media_type").and_then(Value::as_str).map(str::to_owned), text.clone()))
                            }
                            ("base64", None) => Some((
                                ty.filter(|t| t.contains('/'))
                                    .or_else(|| map.get("media_type").and_then(Value::as_str))
                                    .or_else(|| map.get("mimeType").and_then(Value::as_str))
                                    .map(str::to_owned),
                                text.clone(),
                            )),
                            _ => None,
                        };
                        if let Some((media_type, b64)) = candidate
                            && let Some(bytes) = decode(&b64)
                        {
                            self.found.push((
                                Expected {
                                    value: text.clone(),
                                    kind: "file",
                                    media_type,
                                    ordinal: None,
                                    blake3: blake3::hash(&bytes),
                                },
                                None,
                            ));
                            pending.push(self.found.len() - 1);
                        }
                    } else {
                        let child_in_content = in_content || (role_message && k == "content");
                        let child_message = top && k == "message" && child.is_object();
                        pending.extend(self.walk(child, child_in_content, child_message, false));
                    }
                }
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

fn oracle(line: &str) -> (Vec<Expected>, u32, Vec<u32>) {
    let v: Value = serde_json::from_str(line).unwrap();
    let mut o = Oracle { found: Vec::new(), blocks: Vec::new() };
    o.walk(&v, false, false, true);
    let mut failed = Vec::new();
    for (ordinal, block) in o.blocks.iter().enumerate() {
        match block {
            Some(i) => o.found[*i].0.ordinal = Some(ordinal as u32),
            None => failed.push(ordinal as u32),
        }
    }
    (o.found.into_iter().map(|(e, _)| e).collect(), o.blocks.len() as u32, failed)
}

/// The parsed line with each payload string (identified by value) replaced by the marker.
fn replace_payloads(v: &mut Value, payloads: &[String]) {
    match v {
        Value::String(s) if payloads.contains(s) => *s = STRIPPED_MEDIA_MARKER.to_owned(),
        Value::Array(items) => items.iter_mut().for_each(|i| replace_payloads(i, payloads)),
        Value::Object(map) => map.values_mut().for_each(|i| replace_payloads(i, payloads)),
        _ => {}
    }
}

/// A line with the words `scan::may_hold_media` looks for spelt differently, all else kept.
fn mangle(line: &str) -> String {
    line.replace("base64", "base65").replace("\"image", "\"imago").replace("image\"", "imago\"")
}

#[test]
fn mangled_lines_are_often_ruled_out() {
    // So that the property below is tested on lines it rules out, not only on the others.
    use proptest::strategy::ValueTree;
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let lines: Vec<String> = (0..200).map(|_| arb_line().new_tree(&mut runner).unwrap().current()).collect();
    let ruled_out = lines.iter().filter(|l| !scan::may_hold_media(mangle(l).as_bytes())).count();
    assert!(ruled_out >= 20, "{ruled_out} of 200");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn scanner_agrees_with_a_serde_json_oracle(line in arb_line(), chunk in 1usize..4096) {
        let (expected, image_blocks, failed) = oracle(&line);

        let mut scanner = Scanner::new();
        for piece in line.as_bytes().chunks(chunk) {
            scanner.feed(piece);
        }
        let out = scanner.finish().expect("a valid line scans");
        let got: Vec<Expected> = out
            .spans
            .iter()
            .map(|span| {
                let raw = &line[span.offset as usize..(span.offset + span.len) as usize];
                Expected {
                    value: serde_json::from_str(&format!("\"{raw}\"")).expect("a span is a whole JSON string"),
                    kind: span.kind.as_str(),
                    media_type: span.media_type.clone(),
                    ordinal: span.ordinal,
                    blake3: span.blake3,
                }
            })
            .collect();
        prop_assert_eq!(&got, &expected);
        prop_assert_eq!(out.image_blocks, image_blocks);
        prop_assert_eq!(out.failed_images.iter().map(|f| f.ordinal).collect::<Vec<_>>(), failed);

        let stripped = scan::strip(line.as_bytes(), &out.spans);
        let parsed: Value = serde_json::from_slice(&stripped).expect("the stripped line is JSON");
        let mut original: Value = serde_json::from_str(&line).unwrap();
        replace_payloads(&mut original, &expected.iter().map(|e| e.value.clone()).collect::<Vec<_>>());
        prop_assert_eq!(parsed, original);
        let restored = scan::restore(&stripped, &out.spans, |i| {
            line.as_bytes()[out.spans[i].offset as usize..(out.spans[i].offset + out.spans[i].len) as usize].to_vec()
        });
        prop_assert_eq!(restored.as_deref(), Some(line.as_bytes()));
    }

    #[test]
    fn lines_without_the_media_words_scan_to_nothing(line in arb_line()) {
        // The indexer skips the scan of a line that `may_hold_media` rules out; it must be right.
        // Mangling the words turns most generated lines into ones it rules out (the rest keep a
        // `\u` escape), with all their structure left in place.
        let mangled = mangle(&line);
        if !scan::may_hold_media(mangled.as_bytes()) {
            let mut scanner = Scanner::new();
            scanner.feed(mangled.as_bytes());
            let out = scanner.finish().expect("a valid line scans");
            prop_assert!(out.spans.is_empty(), "{:?}", out.spans);
            prop_assert_eq!(out.image_blocks, 0);
            prop_assert!(out.failed_images.is_empty());
        }
        if !scan::may_hold_media(line.as_bytes()) {
            prop_assert!(oracle(&line).0.is_empty());
        }
    }

    #[test]
    fn scanner_never_panics_on_arbitrary_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..400), chunk in 1usize..64) {
        let mut scanner = Scanner::new();
        for piece in bytes.chunks(chunk) {
            scanner.feed(piece);
        }
        if let Ok(out) = scanner.finish() {
            // Whatever it accepted, its spans lie inside the line, in order.
            let mut at = 0;
            for span in &out.spans {
                prop_assert!(span.offset >= at && span.offset + span.len <= bytes.len() as u64);
                at = span.offset + span.len;
            }
        }
    }
}
