//! The scanner against an oracle: random JSON lines with payloads at random depths and key orders,
//! written with random escapes, fed in random chunk sizes. serde_json parses the same line (keeping
//! key order) and a plain tree walk applies the payload rules (listed on `Scanner`); both must
//! agree on every payload, its bytes, kind, media type and ordinal, and the stripped line must be
//! the parsed line with each payload string replaced by the marker.
//!
//! The lines are each agent's (Claude Code, Codex, Gemini CLI, Qwen Code, Droid, Cursor, Pi,
//! Copilot CLI), in its layout, with payloads in the shapes its agent writes at the places its
//! format numbers (Anthropic image and document blocks, data URLs, MCP and Pi image blocks,
//! Gemini's and Qwen's `inlineData` parts, a tool's `functionResponse.parts`, Qwen's compacted
//! history, Copilot's binary assets, `blob` attachments, tool results' `contents` and
//! `binaryResultsForLlm`, audio), payloads outside those places, and decoys without bytes
//! (Copilot's asset references, `fileData` parts, a block quoted in text); each line is checked
//! under its own format's block places (and by `scan_oracle::check` under every format's).

use base64::Engine;
use proptest::prelude::*;
use scrollback_core::codec::scan::{self, Scanner};
use serde_json::Value;

use crate::scan_oracle::{self, oracle};

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

/// A block or object that may carry a payload, in one of the known shapes (each agent's).
fn arb_media() -> impl Strategy<Value = J> {
    (arb_payload(), media_type(), any::<bool>(), 0..21u8).prop_flat_map(|(data, mt, escape, shape)| {
        let data_str = J::Str(data.clone(), escape);
        let data_url = J::Str(format!("data:{mt};base64,{data}"), escape);
        match shape {
            // Anthropic's image block (Claude Code's, Droid's), keys in either order.
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
            // MCP image content (Codex's `mcp_tool_call_end`, Copilot's tool results), and Pi's
            // image block (`{type:"image", data, mimeType}`, keys in any order).
            7 => shuffled(vec![("type", s("image")), ("data", data_str), ("mimeType", s(&mt))]).boxed(),
            // Gemini's `inlineData` part (an image block when its type is an image's).
            8 => shuffled(vec![("inlineData", obj(vec![("mimeType", s(&mt)), ("data", data_str)]))]).boxed(),
            // Codex's `user_message` event: data URLs in an `images` array, and a link.
            9 => shuffled(vec![
                ("type", s("user_message")),
                ("images", J::Arr(vec![data_url, s("https://example.com/a.png")])),
            ])
            .boxed(),
            // Qwen Code's `inlineData` part, which names its file, its keys in any order.
            10 => shuffled(vec![("data", data_str), ("mimeType", s(&mt)), ("displayName", s("shot.png"))])
                .prop_map(|inline| obj(vec![("inlineData", inline)]))
                .boxed(),
            // Copilot CLI's binary asset (`session.binary_asset`'s `data`): an image, or a PDF's
            // `resource`.
            11 => shuffled(vec![
                ("assetId", s("sha256:9f1c0d")),
                ("byteLength", J::Num(70)),
                ("data", data_str),
                ("mimeType", s(&mt)),
                ("type", s(if mt.starts_with("image/") { "image" } else { "resource" })),
            ])
            .boxed(),
            // Copilot CLI's inline `blob` attachment.
            12 => shuffled(vec![
                ("type", s("blob")),
                ("data", data_str),
                ("mimeType", s(&mt)),
                ("displayName", s("paste.png")),
            ])
            .boxed(),
            // Copilot CLI's file attachment that names an asset: no bytes of its own.
            13 => shuffled(vec![
                ("type", s("file")),
                ("path", s("/tmp/copilot-image-3fa2c1.png")),
                ("assetId", s("sha256:9f1c0d")),
                ("mimeType", s(&mt)),
                ("byteLength", J::Num(70)),
            ])
            .boxed(),
            // MCP audio content (Copilot's tool results): bytes, no image.
            14 => shuffled(vec![("type", s("audio")), ("data", data_str), ("mimeType", s("audio/wav"))]).boxed(),
            // Gemini's and Qwen's `fileData` part: a file by its URI, no bytes.
            15 => shuffled(vec![(
                "fileData",
                obj(vec![("mimeType", s(&mt)), ("fileUri", s("https://example.com/a.png"))]),
            )])
            .boxed(),
            // OpenCode's file part: a data URL, an image by the URL's type (else a file).
            16 => shuffled(vec![("type", s("file")), ("mime", s(&mt)), ("filename", s("shot.png")), ("url", data_url)])
                .boxed(),
            // OpenCode 2's file attached by a person: its bytes beside its `mime` (an image block
            // when its type is an image's).
            17 => shuffled(vec![("data", data_str), ("mime", s(&mt)), ("source", obj(vec![("type", s("inline"))]))])
                .boxed(),
            // OpenCode 2's file in a tool's result: a data URL under `uri`.
            18 => shuffled(vec![("type", s("file")), ("uri", data_url), ("mime", s(&mt))]).boxed(),
            // Cline 4's image block: its bytes beside its `mediaType`.
            19 => shuffled(vec![("type", s("image")), ("data", data_str), ("mediaType", s(&mt))]).boxed(),
            _ => shuffled(vec![("type", s("image")), ("source", obj(vec![("type", s("base64"))]))]).boxed(),
        }
    })
}

/// A line of an OpenCode session as its format renders it: a 1.x part (a file part, or a tool's
/// whose result has attachments, or filler) under `part`, its ids and its message's role beside
/// it; or an OpenCode 2 message under `row` (a person's attached files, or an answer whose tool's
/// result holds files); and a payload outside the part now and then.
fn arb_opencode_line() -> impl Strategy<Value = String> {
    (arb_media(), arb_blocks(0..4), 0..5u8, proptest::option::of(arb_media()))
        .prop_flat_map(|(file, attachments, kind, extra)| {
            let mut fields = match kind {
                0..=2 => {
                    let part = match kind {
                        0 | 1 => file,
                        _ => obj(vec![
                            ("type", s("tool")),
                            ("callID", s("toolu_01")),
                            ("tool", s("read")),
                            (
                                "state",
                                obj(vec![
                                    ("status", s("completed")),
                                    ("output", s("Image read successfully")),
                                    ("attachments", J::Arr(attachments)),
                                ]),
                            ),
                        ]),
                    };
                    vec![
                        ("part", part),
                        ("id", s("prt_0a1b2c3d4e5fAbCdEfGhIjKlMn")),
                        ("messageID", s("msg_0a1b2c3d4e5eAbCdEfGhIjKlMn")),
                        ("role", s("user")),
                        ("model", J::Null),
                        ("time", J::Num(1_780_308_000_100)),
                    ]
                }
                _ => {
                    let (row, ty) = if kind == 3 {
                        (obj(vec![("text", s("look at these")), ("files", J::Arr(attachments))]), "user")
                    } else {
                        let tool = obj(vec![
                            ("type", s("tool")),
                            ("id", s("call_01")),
                            ("name", s("read")),
                            ("state", obj(vec![("status", s("completed")), ("content", J::Arr(attachments))])),
                        ]);
                        (obj(vec![("content", J::Arr(vec![tool]))]), "assistant")
                    };
                    vec![
                        ("row", row),
                        ("id", s("msg_0a1b2c3d4e5eAbCdEfGhIjKlMn")),
                        ("type", s(ty)),
                        ("seq", J::Num(3)),
                        ("time", J::Num(1_780_308_000_100)),
                    ]
                }
            };
            if let Some(extra) = extra {
                fields.push(("extra", extra));
            }
            // (The format writes the row first; the scanner takes keys in any order.)
            shuffled(fields)
        })
        .prop_map(write)
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
                ((prop_oneof![Just("type"), Just("data"), Just("content"), Just("text"), Just("x"), Just("url"), Just("source"), Just("mimeType"), Just("images"), Just("payload"), Just("toolCalls")]),
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

/// A whole transcript line, in one of the agents' layouts, with the name of its format: content
/// blocks (media, tool results holding media, filler) where the agent keeps them, and payloads
/// outside those places too.
fn arb_line() -> impl Strategy<Value = (String, &'static str)> {
    prop_oneof![
        2 => arb_claude_line().prop_map(|l| (l, "claude")),
        1 => arb_codex_line().prop_map(|l| (l, "codex")),
        1 => arb_gemini_line().prop_map(|l| (l, "gemini")),
        1 => arb_qwen_line().prop_map(|l| (l, "qwen")),
        1 => arb_droid_line().prop_map(|l| (l, "droid")),
        1 => arb_cursor_line().prop_map(|l| (l, "cursor")),
        1 => arb_pi_line().prop_map(|l| (l, "pi")),
        1 => arb_copilot_line().prop_map(|l| (l, "copilot")),
        1 => arb_opencode_line().prop_map(|l| (l, "opencode")),
        1 => arb_opencode_line().prop_map(|l| (l, "kilo")),
        1 => arb_kiro_line().prop_map(|l| (l, "kiro")),
        1 => arb_antigravity_line().prop_map(|l| (l, "antigravity")),
        1 => arb_cline_line().prop_map(|l| (l, "cline")),
        1 => arb_cline_line().prop_map(|l| (l, "roo")),
    ]
}

/// Blocks of a content array: mostly media, some filler.
fn arb_blocks(n: std::ops::Range<usize>) -> impl Strategy<Value = Vec<J>> {
    proptest::collection::vec(prop_oneof![2 => arb_media(), 1 => arb_value()], n)
}

/// A Qwen Code record: a message's parts (a tool's `functionResponse` holding more), or a
/// compaction's history under `systemPayload`; and a payload outside the places now and then.
fn arb_qwen_line() -> impl Strategy<Value = String> {
    (arb_blocks(0..5), arb_blocks(0..3), 0..3u8, proptest::option::of(arb_media()))
        .prop_flat_map(|(parts, inner, kind, extra)| {
            let response = obj(vec![
                ("id", s("call_01")),
                ("name", s("read_file")),
                ("response", obj(vec![("output", s("Read image file"))])),
                ("parts", J::Arr(inner)),
            ]);
            let mut fields = vec![
                ("uuid", s("a2")),
                ("parentUuid", J::Null),
                ("sessionId", s("5f0c7a2e-1b2c-4d3e-8f90-0123456789ab")),
                ("timestamp", s("2026-10-01T09:00:05.120Z")),
                ("cwd", s("/home/u/demo")),
            ];
            match kind {
                0 => fields.extend([
                    ("type", s("user")),
                    ("message", obj(vec![("role", s("user")), ("parts", J::Arr(parts))])),
                ]),
                1 => fields.extend([
                    ("type", s("tool_result")),
                    (
                        "message",
                        obj(vec![
                            ("role", s("user")),
                            ("parts", J::Arr(vec![obj(vec![("functionResponse", response)])])),
                        ]),
                    ),
                ]),
                _ => fields.extend([
                    ("type", s("system")),
                    ("subtype", s("chat_compression")),
                    (
                        "systemPayload",
                        obj(vec![(
                            "compressedHistory",
                            J::Arr(vec![obj(vec![("role", s("user")), ("parts", J::Arr(parts))])]),
                        )]),
                    ),
                ]),
            }
            if let Some(extra) = extra {
                fields.push(("toolCallResult", extra));
            }
            shuffled(fields)
        })
        .prop_map(write)
}

/// Anthropic-style content blocks ending with a tool's result that holds more blocks, and a
/// payload to put outside them now and then.
fn arb_content_with_result() -> impl Strategy<Value = (J, Option<J>)> {
    (arb_blocks(0..5), arb_blocks(0..3), proptest::option::of(arb_media())).prop_map(|(mut content, result, extra)| {
        content.push(obj(vec![
            ("type", s("tool_result")),
            ("tool_use_id", s("toolu_01")),
            ("content", J::Arr(result)),
        ]));
        (J::Arr(content), extra)
    })
}

/// A Factory Droid `message` line: Anthropic-style blocks, a tool result's among them.
fn arb_droid_line() -> impl Strategy<Value = String> {
    arb_content_with_result()
        .prop_flat_map(|(content, extra)| {
            let mut fields = vec![
                ("type", s("message")),
                ("id", s("m1")),
                ("timestamp", s("2026-06-01T10:00:00.100Z")),
                ("parentId", s("m0")),
                ("message", obj(vec![("role", s("user")), ("content", content)])),
            ];
            if let Some(extra) = extra {
                fields.push(("extra", extra));
            }
            shuffled(fields)
        })
        .prop_map(write)
}

/// A Kiro CLI record, `{version, kind, data: {message_id, content}}`: blocks (a tool's result
/// holding more), and a payload outside the places now and then.
fn arb_kiro_line() -> impl Strategy<Value = String> {
    (arb_blocks(0..5), arb_blocks(0..3), proptest::option::of(arb_media()))
        .prop_flat_map(|(mut content, result, extra)| {
            content.push(obj(vec![
                ("kind", s("toolResult")),
                ("data", obj(vec![("toolUseId", s("tooluse_1")), ("content", J::Arr(result))])),
            ]));
            let mut data = vec![("message_id", s("m1")), ("content", J::Arr(content))];
            if let Some(extra) = extra {
                data.push(("meta", extra));
            }
            shuffled(vec![("version", s("v1")), ("kind", s("AssistantMessage")), ("data", obj(data))])
        })
        .prop_map(write)
}

/// An Antigravity CLI step: blocks where an image would be (`content`), and a payload outside it
/// now and then.
fn arb_antigravity_line() -> impl Strategy<Value = String> {
    (arb_blocks(1..5), proptest::option::of(arb_media()))
        .prop_flat_map(|(content, extra)| {
            let mut fields = vec![
                ("step_index", J::Num(3)),
                ("source", s("MODEL")),
                ("type", s("VIEW_FILE")),
                ("created_at", s("2026-06-26T21:16:18Z")),
                ("content", J::Arr(content)),
            ];
            if let Some(extra) = extra {
                fields.push(("extra", extra));
            }
            shuffled(fields)
        })
        .prop_map(write)
}

/// A message of a Cline or Roo Code task's conversation, `{role, content, ts}`: blocks (a tool's
/// result holding more), and a payload outside the places now and then (the panel's `images`).
fn arb_cline_line() -> impl Strategy<Value = String> {
    arb_content_with_result()
        .prop_flat_map(|(content, extra)| {
            let mut fields = vec![("role", s("user")), ("ts", J::Num(1_780_308_000_000)), ("content", content)];
            if let Some(extra) = extra {
                fields.push(("images", J::Arr(vec![extra])));
            }
            shuffled(fields)
        })
        .prop_map(write)
}

/// A Cursor line: `{role, message: {content}}` (Cursor writes no photo there, but the blocks are
/// read where they would be).
fn arb_cursor_line() -> impl Strategy<Value = String> {
    arb_blocks(0..5)
        .prop_flat_map(|content| {
            shuffled(vec![("role", s("user")), ("message", obj(vec![("content", J::Arr(content))]))])
        })
        .prop_map(write)
}

/// A Pi entry: a message (a person's, or a tool's result) whose `content` holds the blocks, or an
/// extension's `custom_message` with its own `content`.
fn arb_pi_line() -> impl Strategy<Value = String> {
    (arb_blocks(0..5), any::<bool>(), proptest::option::of(arb_media()))
        .prop_flat_map(|(content, custom, extra)| {
            let mut fields =
                vec![("id", s("c3d4e5f6")), ("parentId", s("b2c3d4e5")), ("timestamp", s("2026-03-01T10:00:05.120Z"))];
            if custom {
                fields.extend([
                    ("type", s("custom_message")),
                    ("customType", s("note")),
                    ("content", J::Arr(content)),
                    ("display", J::Bool(true)),
                ]);
            } else {
                fields.extend([
                    ("type", s("message")),
                    (
                        "message",
                        obj(vec![("role", s("toolResult")), ("toolCallId", s("t1")), ("content", J::Arr(content))]),
                    ),
                ]);
            }
            if let Some(extra) = extra {
                fields.push(("details", extra));
            }
            shuffled(fields)
        })
        .prop_map(write)
}

/// A Copilot CLI event: a binary asset (its `data` the asset), a person's message with
/// attachments, or a tool's result with `contents` and `binaryResultsForLlm`.
fn arb_copilot_line() -> impl Strategy<Value = String> {
    (arb_media(), arb_blocks(0..4), arb_blocks(0..3), 0..3u8)
        .prop_flat_map(|(asset, blocks, more, kind)| {
            let (kind, data) = match kind {
                0 => ("session.binary_asset", asset),
                1 => ("user.message", obj(vec![("content", s("see this")), ("attachments", J::Arr(blocks))])),
                _ => (
                    "tool.execution_complete",
                    obj(vec![
                        ("toolCallId", s("c1")),
                        ("success", J::Bool(true)),
                        (
                            "result",
                            obj(vec![
                                ("content", s("shot")),
                                ("contents", J::Arr(blocks)),
                                ("binaryResultsForLlm", J::Arr(more)),
                            ]),
                        ),
                    ]),
                ),
            };
            shuffled(vec![
                ("type", s(kind)),
                ("data", data),
                ("id", s("e2")),
                ("timestamp", s("2026-07-01T09:00:05.100Z")),
                ("parentId", s("e1")),
            ])
        })
        .prop_map(write)
}

fn write(j: J) -> String {
    let mut out = String::new();
    j.write(&mut out);
    out
}

/// A Codex rollout line: a `response_item` message or tool output whose content holds the blocks.
fn arb_codex_line() -> impl Strategy<Value = String> {
    (
        proptest::collection::vec(prop_oneof![2 => arb_media(), 1 => arb_value()], 0..5),
        any::<bool>(),
        proptest::option::of(arb_media()),
    )
        .prop_flat_map(|(content, output, extra)| {
            let item = if output {
                obj(vec![("type", s("function_call_output")), ("call_id", s("c1")), ("output", J::Arr(content))])
            } else {
                obj(vec![("type", s("message")), ("role", s("user")), ("content", J::Arr(content))])
            };
            let mut fields =
                vec![("timestamp", s("2026-11-30T10:00:00.000Z")), ("type", s("response_item")), ("payload", item)];
            if let Some(extra) = extra {
                fields.push(("metadata", extra));
            }
            shuffled(fields)
        })
        .prop_map(write)
}

/// A Gemini chat line: a message whose content parts and tool results hold the blocks.
fn arb_gemini_line() -> impl Strategy<Value = String> {
    (
        proptest::collection::vec(prop_oneof![2 => arb_media(), 1 => arb_value()], 0..5),
        proptest::collection::vec(prop_oneof![arb_media(), arb_value()], 0..3),
    )
        .prop_flat_map(|(content, result)| {
            shuffled(vec![
                ("id", s("g-1")),
                ("type", s("user")),
                ("content", J::Arr(content)),
                ("toolCalls", J::Arr(vec![obj(vec![("name", s("read_file")), ("result", J::Arr(result))])])),
            ])
        })
        .prop_map(write)
}

/// A Claude Code line.
fn arb_claude_line() -> impl Strategy<Value = String> {
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

/// A line with the words `scan::may_hold_media` looks for spelt differently, all else kept.
fn mangle(line: &str) -> String {
    line.replace("base64", "base65")
        .replace("\"image", "\"imago")
        .replace("image\"", "imago\"")
        .replace("\"mime", "\"mimo")
        .replace("\"mediaType\"", "\"mediaTypo\"")
}

#[test]
fn mangled_lines_are_often_ruled_out() {
    // So that the property below is tested on lines it rules out, not only on the others.
    use proptest::strategy::ValueTree;
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let lines: Vec<String> = (0..200).map(|_| arb_line().new_tree(&mut runner).unwrap().current().0).collect();
    let ruled_out = lines.iter().filter(|l| !scan::may_hold_media(mangle(l).as_bytes())).count();
    assert!(ruled_out >= 20, "{ruled_out} of 200");
}

#[test]
fn each_agents_lines_hold_numbered_photos_and_payloads_elsewhere() {
    // So that the property below checks the scanner at each format's places: of each agent's
    // generated lines, many hold an image block its places number, and many a payload they do not.
    use proptest::strategy::ValueTree;
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let mut seen: std::collections::BTreeMap<&str, (usize, usize, usize)> = std::collections::BTreeMap::new();
    for _ in 0..900 {
        let (line, format) = arb_line().new_tree(&mut runner).unwrap().current();
        let places = scrollback_core::format::by_name(format).unwrap().block_places();
        let (payloads, _, _, _) = scan_oracle::oracle_of(&serde_json::from_str(&line).unwrap(), places);
        let counts = seen.entry(format).or_default();
        counts.0 += 1;
        counts.1 += usize::from(payloads.iter().any(|p| p.ordinal.is_some()));
        counts.2 += usize::from(payloads.iter().any(|p| p.ordinal.is_none()));
    }
    assert_eq!(seen.len(), scrollback_core::format::FORMATS.len(), "every format's lines: {seen:?}");
    for (format, (lines, numbered, elsewhere)) in &seen {
        assert!(*numbered * 4 >= *lines && *elsewhere * 10 >= *lines, "{format}: {seen:?}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 4000, ..ProptestConfig::default() })]

    #[test]
    fn scanner_agrees_with_a_serde_json_oracle((line, format) in arb_line(), chunk in 1usize..4096) {
        // Generated lines are JSON: the scanner must accept them and agree with the tree walk
        // under their format's places (`scan_oracle::check`, which also feeds the line in other
        // pieces, under every format's).
        let places = scrollback_core::format::by_name(format).unwrap().block_places();
        let out = scan_oracle::scan_in_pieces(line.as_bytes(), chunk, places).expect("a valid line scans");
        let value: Value = serde_json::from_str(&line).unwrap();
        scan_oracle::agree(line.as_bytes(), &value, &out, &scan::strip(line.as_bytes(), &out.spans), places);
        scan_oracle::check(line.as_bytes());
    }

    #[test]
    fn lines_without_the_media_words_scan_to_nothing((line, _) in arb_line()) {
        // The indexer skips the scan of a line that `may_hold_media` rules out; it must be right.
        // Mangling the words turns most generated lines into ones it rules out (the rest keep a
        // `\u` escape), with all their structure left in place.
        let mangled = mangle(&line);
        if !scan::may_hold_media(mangled.as_bytes()) {
            let mut scanner = Scanner::new(scrollback_core::format::CLAUDE.block_places());
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
        let mut scanner = Scanner::new(scrollback_core::format::CLAUDE.block_places());
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
