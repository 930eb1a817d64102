//! Google's Antigravity CLI (`agy`): each conversation's plaintext transcript,
//! `~/.gemini/antigravity-cli/brain/<conversation>/.system_generated/logs/transcript.jsonl`.
//!
//! Antigravity is closed source. Read from the readers whose authors checked real transcripts:
//! jazzyalex/agent-sessions @ 651e854 (`docs/superpowers/specs/2026-06-26-antigravity-cli-jsonl-migration-design.md`,
//! written against `agy` 1.0.12, `AgentSessions/Services/AntigravityTranscriptParser.swift`, and its
//! fixture `Resources/Fixtures/stage0/agents/antigravity/cli_small.jsonl`), ryoppippi/ccusage's
//! `antigravity` adapter (which reads the same file) and k-k1/agent-fleet
//! (`workspace/agent/internal/agents/agy/transcript.go`); see docs/formats.md.
//!
//! One step a line: `step_index`, `source` (`USER_EXPLICIT`, `MODEL`, `SYSTEM`), `type`, `status`,
//! `created_at` (RFC 3339), and by type:
//! - `USER_INPUT`: `content`, the person's words in `<USER_REQUEST>…</USER_REQUEST>`, then the
//!   CLI's blocks (`<ADDITIONAL_METADATA>`, `<USER_SETTINGS_CHANGE>`, which names the model);
//! - `PLANNER_RESPONSE`: the model's `thinking`, its `content`, and `tool_calls` (`{name, args}`,
//!   each argument's value a JSON text of its own);
//! - a tool's result, as a step of its own named for the tool (`RUN_COMMAND`, `VIEW_FILE`,
//!   `LIST_DIRECTORY`, `CODE_ACTION`, `SEARCH_WEB`, `GREP_SEARCH`, …): its `content`;
//! - `CHECKPOINT` (a compaction's summary), `ERROR_MESSAGE`; and bookkeeping:
//!   `CONVERSATION_HISTORY`, `SYSTEM_MESSAGE`, `KNOWLEDGE_ARTIFACTS`.
//!
//! A field too long for this file is cut (`truncated_fields` names it; `transcript_full.jsonl`
//! beside it keeps it whole, and is not read, so that no step is read twice). The transcript holds
//! no photos (an upload is a file in the conversation's folder) and no token counts (they are in
//! the conversation's database, `conversations/<id>.db`, in protobuf fields not published).

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::{
    BlockPlaces, Columns, FileContext, Format, Meta, MetaError, Part, SearchText, Side, Typed, Who, first_chars,
    line_id, parse_object, str_at, title_rank,
};

/// Antigravity CLI's format.
#[derive(Debug, Clone, Copy, Default)]
pub struct Antigravity;

/// No reader has seen an image in a step; one in its `content` would be numbered there.
static BLOCK_PLACES: BlockPlaces = BlockPlaces::new(&[&["content"]]);

/// The tag the CLI wraps the person's words in.
const REQUEST: (&str, &str) = ("<USER_REQUEST>", "</USER_REQUEST>");

/// Steps that are the CLI's bookkeeping, not shown.
const BOOKKEEPING: &[&str] = &["CONVERSATION_HISTORY", "SYSTEM_MESSAGE", "KNOWLEDGE_ARTIFACTS"];

impl Format for Antigravity {
    fn name(&self) -> &'static str {
        "antigravity"
    }

    fn display_name(&self) -> &'static str {
        "Antigravity CLI"
    }

    /// A conversation's `transcript.jsonl`, in its `.system_generated/logs`.
    fn is_transcript(&self, path: &Path) -> bool {
        let mut up = path.ancestors().skip(1).filter_map(Path::file_name);
        path.file_name().is_some_and(|n| n == "transcript.jsonl")
            && up.next().is_some_and(|d| d == "logs")
            && up.next().is_some_and(|d| d == ".system_generated")
    }

    fn block_places(&self) -> &'static BlockPlaces {
        &BLOCK_PLACES
    }

    /// The session is the conversation's folder, `brain/<conversation>`.
    fn file_context(&self, path: &Path, _first_line: &mut dyn FnMut() -> Option<String>) -> FileContext {
        let conversation = path.ancestors().nth(3).and_then(Path::file_name);
        FileContext {
            session: conversation.map(|c| c.to_string_lossy().into_owned()).unwrap_or_default(),
            ..FileContext::default()
        }
    }

    /// 0: a conversation's one transcript.
    fn file_key(&self, _path: &Path, _session: &str) -> i64 {
        0
    }

    fn describe(&self, stripped: &str, line: u64, _file: &FileContext) -> Result<Meta, MetaError> {
        let step = Value::Object(parse_object(stripped)?);
        Ok(describe(&step, line))
    }

    /// A `USER_INPUT`'s words.
    fn typed_input(&self, _kind: Option<&str>, _is_sidechain: bool, line: &Value) -> Option<Typed> {
        if str_at(line, "type") != Some("USER_INPUT") {
            return None;
        }
        let words = request(str_at(line, "content")?).0?;
        (!words.is_empty()).then(|| Typed { text: words.to_owned(), images: Vec::new() })
    }

    /// None: the transcript states no usage.
    fn usage_markers(&self) -> &'static [&'static str] {
        &[]
    }

    fn parts(&self, line: &Value) -> Vec<Part> {
        let mut out = Vec::new();
        let content = str_at(line, "content").unwrap_or("");
        match str_at(line, "type") {
            Some("USER_INPUT") => {
                let (words, rest) = request(content);
                if let Some(words) = words.filter(|w| !w.is_empty()) {
                    out.push(Part::Text(words.to_owned()));
                }
                super::claude::content_parts(&Value::String(rest.to_owned()), &mut out);
            }
            Some("PLANNER_RESPONSE") => {
                if let Some(t) = str_at(line, "thinking").filter(|t| !t.trim().is_empty()) {
                    out.push(Part::Thinking(t.to_owned()));
                }
                if !content.trim().is_empty() {
                    out.push(Part::Text(content.to_owned()));
                }
                for call in tool_calls(line) {
                    let name = str_at(call, "name").unwrap_or("tool");
                    out.push(Part::ToolCall(super::parts::tool_call_with_id(name, &arguments(call), None)));
                }
            }
            Some("CHECKPOINT") if !content.trim().is_empty() => out.push(Part::Group {
                title: "Context compacted: the summary the model goes on from".into(),
                parts: vec![Part::Text(content.to_owned())],
            }),
            Some("ERROR_MESSAGE") if !content.trim().is_empty() => {
                out.push(Part::Output { text: content.to_owned(), error: true });
            }
            Some(kind) if is_result(line, kind) => out.push(Part::ToolResult {
                call: None,
                text: content.to_owned(),
                error: str_at(line, "status").is_some_and(|s| s.eq_ignore_ascii_case("ERROR")),
                label: Some(label(kind)),
                media: Vec::new(),
            }),
            _ => {}
        }
        out
    }

    /// The person, Antigravity, a tool's result, or the CLI's note; its bookkeeping is not shown.
    fn who(&self, line: &Value, _is_sidechain: bool) -> Option<Who> {
        Some(match str_at(line, "type")? {
            "USER_INPUT" => Who::new("You", Side::User),
            "PLANNER_RESPONSE" => Who::new("Antigravity", Side::Assistant),
            "CHECKPOINT" | "ERROR_MESSAGE" => Who::new("Antigravity CLI", Side::Note),
            kind if is_result(line, kind) => Who::new("Tool result", Side::Note),
            _ => return None,
        })
    }

    /// `agy --conversation ID`.
    fn resume_command(&self, id: &str) -> Option<String> {
        Some(format!("agy --conversation {}", super::shell_word(id)))
    }

    /// `~/.gemini/antigravity-cli/brain`.
    fn default_roots(&self, var: &dyn Fn(&str) -> Option<OsString>) -> Vec<PathBuf> {
        var("HOME")
            .filter(|v| !v.is_empty())
            .map(|home| PathBuf::from(home).join(".gemini/antigravity-cli/brain"))
            .into_iter()
            .collect()
    }
}

/// Whether a step of `kind` is a tool's result: the model's, neither its answer nor bookkeeping.
fn is_result(step: &Value, kind: &str) -> bool {
    str_at(step, "source") == Some("MODEL") && kind != "PLANNER_RESPONSE" && !BOOKKEEPING.contains(&kind)
}

/// A step type as words: `RUN_COMMAND` → `Run command`.
fn label(kind: &str) -> String {
    let words = kind.replace('_', " ").to_lowercase();
    let mut chars = words.chars();
    chars.next().map(|c| c.to_uppercase().chain(chars).collect()).unwrap_or_default()
}

/// The person's words in a `USER_INPUT`'s content (inside `<USER_REQUEST>`), and what follows them.
fn request(content: &str) -> (Option<&str>, &str) {
    let trimmed = content.trim_start();
    match trimmed.strip_prefix(REQUEST.0).and_then(|rest| rest.find(REQUEST.1).map(|end| (rest, end))) {
        Some((rest, end)) => (Some(rest[..end].trim()), &rest[end + REQUEST.1.len()..]),
        None => (Some(content.trim()), ""),
    }
}

/// A planner response's tool calls.
fn tool_calls(step: &Value) -> &[Value] {
    step.get("tool_calls").and_then(Value::as_array).map_or(&[], Vec::as_slice)
}

/// A tool call's arguments, each value read as the JSON text it is (else kept as the string).
fn arguments(call: &Value) -> Value {
    match call.get("args") {
        Some(Value::Object(args)) => Value::Object(
            args.iter()
                .map(|(k, v)| {
                    let read =
                        v.as_str().and_then(|s| serde_json::from_str::<Value>(s).ok()).unwrap_or_else(|| v.clone());
                    (k.clone(), read)
                })
                .collect(),
        ),
        Some(other) => other.clone(),
        None => Value::Null,
    }
}

/// `created_at` as the index writes times (`2026-06-26T21:16:16.000Z`); `None` if it is no time.
fn timestamp(step: &Value) -> Option<String> {
    let t: jiff::Timestamp = str_at(step, "created_at")?.parse().ok()?;
    super::millis_iso(t.as_millisecond())
}

fn describe(step: &Value, line: u64) -> Meta {
    let mut meta = Meta::default();
    let kind = str_at(step, "type");
    let role = match kind {
        Some("USER_INPUT") => Some("user"),
        Some("PLANNER_RESPONSE") => Some("assistant"),
        _ => None,
    };
    meta.columns = Columns {
        uuid: Some(line_id(line)),
        kind: kind.map(str::to_owned),
        role: role.map(str::to_owned),
        timestamp: timestamp(step),
        ..Columns::default()
    };
    let mut text = SearchText::default();
    let content = str_at(step, "content").unwrap_or("");
    match kind {
        Some("USER_INPUT") => {
            let (words, rest) = request(content);
            let words = words.unwrap_or("");
            text.said(words);
            text.output(rest);
            if !words.is_empty() {
                meta.title = Some((title_rank::FIRST_USER_TEXT, first_chars(words.to_owned(), 200)));
            }
        }
        Some("PLANNER_RESPONSE") => {
            text.said(str_at(step, "thinking").unwrap_or(""));
            text.said(content);
            for call in tool_calls(step) {
                text.call(str_at(call, "name"), Some(&arguments(call)));
            }
        }
        Some("CHECKPOINT" | "ERROR_MESSAGE") => text.said(content),
        Some(kind) if is_result(step, kind) => text.output(content),
        _ => {}
    }
    text.finish(&mut meta);
    meta
}

#[cfg(test)]
mod tests {
    use super::*;

    const ASKED: &str = r#"{"step_index":0,"source":"USER_EXPLICIT","type":"USER_INPUT","status":"DONE","created_at":"2026-06-26T21:16:16Z","content":"<USER_REQUEST>\nList the files.\n</USER_REQUEST>\n<USER_SETTINGS_CHANGE>\nThe user changed setting `Model Selection` from None to Gemini 3.5 Flash (Medium).\n</USER_SETTINGS_CHANGE>"}"#;
    const PLANNED: &str = r#"{"step_index":2,"source":"MODEL","type":"PLANNER_RESPONSE","status":"DONE","created_at":"2026-06-26T21:16:17Z","thinking":"Listing the directory.","content":"Let me look.","tool_calls":[{"name":"list_dir","args":{"DirectoryPath":"\"/tmp/repo\"","toolSummary":"\"Listing contents\""}}]}"#;
    const LISTED: &str = r#"{"step_index":3,"source":"MODEL","type":"LIST_DIRECTORY","status":"DONE","created_at":"2026-06-26T21:16:18Z","content":"{\"name\":\"a.txt\"}\n"}"#;
    const HISTORY: &str = r#"{"step_index":1,"source":"SYSTEM","type":"CONVERSATION_HISTORY","status":"DONE","created_at":"2026-06-26T21:16:16Z"}"#;

    fn value(line: &str) -> Value {
        serde_json::from_str(line).unwrap()
    }

    #[test]
    fn the_persons_request_the_models_plan_its_tool_calls_and_their_results() {
        let m = Antigravity.describe(ASKED, 1, &FileContext::default()).unwrap();
        assert_eq!(m.title, Some((title_rank::FIRST_USER_TEXT, "List the files.".into())));
        assert_eq!(m.columns.timestamp.as_deref(), Some("2026-06-26T21:16:16.000Z"));
        assert_eq!(Antigravity.typed_input(None, false, &value(ASKED)).unwrap().text, "List the files.");
        let parts = Antigravity.parts(&value(ASKED));
        assert!(matches!(&parts[0], Part::Text(t) if t == "List the files."), "{parts:?}");
        assert!(matches!(&parts[1], Part::Context { text, .. } if text.contains("Model Selection")), "{parts:?}");

        let m = Antigravity.describe(PLANNED, 3, &FileContext::default()).unwrap();
        assert_eq!((m.columns.role.as_deref(), m.tools.as_deref()), (Some("assistant"), Some("list_dir")));
        assert!(m.tool_text.as_deref().unwrap().contains("/tmp/repo"), "the argument read as the text it spells");
        let parts = Antigravity.parts(&value(PLANNED));
        assert!(
            matches!(&parts[..], [Part::Thinking(_), Part::Text(_), Part::ToolCall(c)] if c.input["DirectoryPath"] == "/tmp/repo"),
            "{parts:?}"
        );
        assert_eq!(Antigravity.who(&value(PLANNED), false).unwrap().name, "Antigravity");

        let listed = value(LISTED);
        assert_eq!(Antigravity.who(&listed, false).unwrap().side, Side::Note);
        assert!(
            matches!(&Antigravity.parts(&listed)[..], [Part::ToolResult { label: Some(l), .. }] if l == "List directory")
        );
        assert!(Antigravity.who(&value(HISTORY), false).is_none() && Antigravity.parts(&value(HISTORY)).is_empty());
        let torn_time = r#"{"type":"USER_INPUT","created_at":"[trimmed]","content":"hi"}"#;
        assert_eq!(Antigravity.describe(torn_time, 1, &FileContext::default()).unwrap().columns.timestamp, None);
    }

    #[test]
    fn a_conversations_transcript_is_its_session() {
        let path = Path::new("/h/.gemini/antigravity-cli/brain/0b1c/.system_generated/logs/transcript.jsonl");
        assert!(Antigravity.is_transcript(path));
        assert_eq!(Antigravity.file_context(path, &mut || None).session, "0b1c");
        for not in [
            "/h/.gemini/antigravity-cli/brain/0b1c/.system_generated/logs/transcript_full.jsonl",
            "/h/.gemini/antigravity-cli/brain/0b1c/transcript.jsonl",
            "/h/.gemini/antigravity-cli/history.jsonl",
        ] {
            assert!(!Antigravity.is_transcript(Path::new(not)), "{not}");
        }
        let var = |name: &str| (name == "HOME").then(|| OsString::from("/h"));
        assert_eq!(Antigravity.default_roots(&var), [PathBuf::from("/h/.gemini/antigravity-cli/brain")]);
    }
}
