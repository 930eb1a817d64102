//! Kiro CLI's sessions as its chat writes them (`~/.kiro/sessions/cli/<session>.jsonl`, with the
//! session's metadata in `<session>.json` beside it).
//!
//! Kiro CLI is closed source (the open Amazon Q Developer CLI it grew from says so:
//! aws/amazon-q-developer-cli @ 15cc8f3c, `README.md`). Read from the readers that checked real
//! files: kenn-io/agentsview @ 53860074 (`internal/parser/kiro.go`, its contributor checked it
//! against live sessions), junhoyeo/tokscale (`crates/tokscale-core/src/sessions/kiro.rs` @ 0178c210)
//! and k-k1/agent-fleet (`workspace/agent/internal/agents/kiro/transcript.go`); see docs/formats.md.
//!
//! One record a line, `{"version": "v1", "kind": K, "data": {"message_id", "content": [blocks],
//! "meta"}}`, `K` one of:
//! - `Prompt`: the person's words, `text` blocks (`{"kind": "text", "data": "…"}`); its
//!   `meta.timestamp` is the only time a line carries (epoch seconds, a fraction allowed);
//! - `AssistantMessage`: Kiro's answer, `text` blocks and `toolUse` blocks (`{"toolUseId", "name",
//!   "input"}`); no model is named;
//! - `ToolResults`: `toolResult` blocks (`{"toolUseId", "content": [{"kind": "json" | "text",
//!   "data"}], "status": "success" | "error"}`).
//!
//! The metadata (`session_id`, `cwd`, `title`, `created_at`, `updated_at`) names the session's
//! directory: the project ([`Format::project_file`]). The chat writes no token counts. Its older
//! sessions (`kiro-cli --classic`) are rows of a SQLite database (`~/.local/share/kiro-cli/
//! data.sqlite3`, `conversations_v2`), which is not read.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::{
    BlockPlaces, Columns, FileContext, Format, Meta, MetaError, Part, SearchText, Side, Typed, Who, first_chars,
    line_id, parse_object, str_at, title_rank,
};

/// Kiro CLI's format.
#[derive(Debug, Clone, Copy, Default)]
pub struct Kiro;

/// Image blocks would be under a record's `data.content` (no reader has seen one).
static BLOCK_PLACES: BlockPlaces = BlockPlaces::new(&[&["data", "content"]]);

impl Format for Kiro {
    fn name(&self) -> &'static str {
        "kiro"
    }

    fn display_name(&self) -> &'static str {
        "Kiro CLI"
    }

    /// A `*.jsonl` file (the `.json` metadata beside each is not one).
    fn is_transcript(&self, path: &Path) -> bool {
        path.extension().is_some_and(|e| e == "jsonl")
    }

    fn block_places(&self) -> &'static BlockPlaces {
        &BLOCK_PLACES
    }

    /// The session is the file's name.
    fn file_context(&self, path: &Path, _first_line: &mut dyn FnMut() -> Option<String>) -> FileContext {
        let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        FileContext { session: stem, ..FileContext::default() }
    }

    /// The session's metadata, `<session>.json` beside it.
    fn project_file(&self, path: &Path) -> Option<PathBuf> {
        Some(path.with_extension("json"))
    }

    /// The metadata's `cwd`.
    fn project_in(&self, text: &str) -> Option<String> {
        let meta: Value = serde_json::from_str(text).ok()?;
        str_at(&meta, "cwd").map(str::trim).filter(|c| !c.is_empty() && !c.contains('\n')).map(str::to_owned)
    }

    /// 0: a file is its session's one transcript.
    fn file_key(&self, _path: &Path, _session: &str) -> i64 {
        0
    }

    fn describe(&self, stripped: &str, line: u64, file: &FileContext) -> Result<Meta, MetaError> {
        let top = Value::Object(parse_object(stripped)?);
        let mut meta = describe(&top, line);
        meta.cwd.clone_from(&file.project);
        Ok(meta)
    }

    /// A `Prompt`'s words.
    fn typed_input(&self, _kind: Option<&str>, _is_sidechain: bool, line: &Value) -> Option<Typed> {
        if str_at(line, "kind") != Some("Prompt") {
            return None;
        }
        let text = texts(line).join("\n");
        (!text.trim().is_empty()).then(|| Typed { text, images: Vec::new() })
    }

    /// None: the chat writes no usage.
    fn usage_markers(&self) -> &'static [&'static str] {
        &[]
    }

    fn parts(&self, line: &Value) -> Vec<Part> {
        let mut out = Vec::new();
        for block in blocks(line) {
            let data = block.get("data").unwrap_or(&Value::Null);
            match str_at(block, "kind") {
                Some("text") => {
                    if let Some(t) = data.as_str().filter(|t| !t.trim().is_empty()) {
                        out.push(Part::Text(t.to_owned()));
                    }
                }
                Some("toolUse") => {
                    let name = str_at(data, "name").unwrap_or("tool");
                    let input = data.get("input").unwrap_or(&Value::Null);
                    out.push(Part::ToolCall(super::parts::tool_call_with_id(name, input, str_at(data, "toolUseId"))));
                }
                Some("toolResult") => out.push(Part::ToolResult {
                    call: str_at(data, "toolUseId").map(str::to_owned),
                    text: result_text(data),
                    error: str_at(data, "status").is_some_and(|s| !s.eq_ignore_ascii_case("success")),
                    label: None,
                    media: Vec::new(),
                }),
                _ => {}
            }
        }
        out
    }

    /// The person, Kiro, or a tool's results; other records (bookkeeping) are not shown.
    fn who(&self, line: &Value, _is_sidechain: bool) -> Option<Who> {
        Some(match str_at(line, "kind")? {
            "Prompt" => Who::new("You", Side::User),
            "AssistantMessage" => Who::new("Kiro", Side::Assistant),
            "ToolResults" => Who::new("Tool result", Side::Note),
            _ => return None,
        })
    }

    /// `~/.kiro/sessions/cli`.
    fn default_roots(&self, var: &dyn Fn(&str) -> Option<OsString>) -> Vec<PathBuf> {
        var("HOME")
            .filter(|v| !v.is_empty())
            .map(|home| PathBuf::from(home).join(".kiro/sessions/cli"))
            .into_iter()
            .collect()
    }
}

/// A record's content blocks.
fn blocks(line: &Value) -> &[Value] {
    line.get("data").and_then(|d| d.get("content")).and_then(Value::as_array).map_or(&[], Vec::as_slice)
}

/// A record's text blocks.
fn texts(line: &Value) -> Vec<&str> {
    blocks(line).iter().filter(|b| str_at(b, "kind") == Some("text")).filter_map(|b| b.get("data")?.as_str()).collect()
}

/// What a tool gave back, as text: each item's text, or its JSON's output streams and message
/// (`stdout`, `stderr`), else the JSON itself.
fn result_text(result: &Value) -> String {
    let mut out = Vec::new();
    for item in result.get("content").and_then(Value::as_array).map_or(&[][..], Vec::as_slice) {
        match item.get("data") {
            Some(Value::String(s)) => out.push(s.clone()),
            Some(v @ Value::Object(map)) => {
                let streams: Vec<&str> = ["stdout", "stderr"]
                    .iter()
                    .filter_map(|k| map.get(*k)?.as_str())
                    .filter(|s| !s.is_empty())
                    .collect();
                if streams.is_empty() {
                    out.push(v.to_string());
                } else {
                    out.extend(streams.into_iter().map(str::to_owned));
                }
            }
            Some(v) if !v.is_null() => out.push(v.to_string()),
            _ => {}
        }
    }
    out.join("\n")
}

/// An epoch second (a fraction allowed) as the index's timestamps are written.
fn iso(seconds: f64) -> Option<String> {
    if !seconds.is_finite() {
        return None;
    }
    super::millis_iso((seconds * 1000.0).round() as i64)
}

fn describe(line: &Value, number: u64) -> Meta {
    let mut meta = Meta::default();
    let kind = str_at(line, "kind");
    let data = line.get("data").unwrap_or(&Value::Null);
    let role = match kind {
        Some("Prompt" | "ToolResults") => Some("user"),
        Some("AssistantMessage") => Some("assistant"),
        _ => None,
    };
    meta.columns = Columns {
        uuid: Some(str_at(data, "message_id").map_or_else(|| line_id(number), str::to_owned)),
        kind: kind.map(str::to_owned),
        role: role.map(str::to_owned),
        timestamp: data.get("meta").and_then(|m| m.get("timestamp")).and_then(Value::as_f64).and_then(iso),
        ..Columns::default()
    };
    let mut text = SearchText::default();
    for block in blocks(line) {
        let data = block.get("data").unwrap_or(&Value::Null);
        match str_at(block, "kind") {
            Some("text") => text.said(data.as_str().unwrap_or("")),
            Some("toolUse") => text.call(str_at(data, "name"), data.get("input")),
            Some("toolResult") => text.output(&result_text(data)),
            _ => {}
        }
    }
    if kind == Some("Prompt") {
        let words = texts(line).join("\n");
        let words = words.trim();
        if !words.is_empty() {
            meta.title = Some((title_rank::FIRST_USER_TEXT, first_chars(words.to_owned(), 200)));
        }
    }
    text.finish(&mut meta);
    meta
}

#[cfg(test)]
mod tests {
    use super::*;

    const PROMPT: &str = r#"{"version":"v1","kind":"Prompt","data":{"message_id":"m1","content":[{"kind":"text","data":"list the red rules"}],"meta":{"timestamp":1780308000.25}}}"#;
    const ANSWER: &str = r#"{"version":"v1","kind":"AssistantMessage","data":{"message_id":"m2","content":[{"kind":"text","data":"Searching."},{"kind":"toolUse","data":{"toolUseId":"tooluse_1","name":"shell","input":{"command":"grep -rn red src"}}}]}}"#;
    const RESULTS: &str = r#"{"version":"v1","kind":"ToolResults","data":{"message_id":"m3","content":[{"kind":"toolResult","data":{"toolUseId":"tooluse_1","content":[{"kind":"json","data":{"exit_status":"exit status: 2","stdout":"","stderr":"grep: src: No such file"}}],"status":"error"}}]}}"#;

    fn value(line: &str) -> Value {
        serde_json::from_str(line).unwrap()
    }

    #[test]
    fn a_prompt_an_answer_that_calls_a_tool_and_its_failed_result() {
        let m = Kiro.describe(PROMPT, 1, &FileContext::default()).unwrap();
        assert_eq!(
            (m.columns.uuid.as_deref(), m.columns.role.as_deref(), m.columns.timestamp.as_deref()),
            (Some("m1"), Some("user"), Some("2026-06-01T10:00:00.250Z"))
        );
        assert_eq!(m.title, Some((title_rank::FIRST_USER_TEXT, "list the red rules".into())));
        assert_eq!(Kiro.typed_input(None, false, &value(PROMPT)).unwrap().text, "list the red rules");
        assert_eq!(Kiro.who(&value(PROMPT), false).unwrap().side, Side::User);

        let m = Kiro.describe(ANSWER, 2, &FileContext::default()).unwrap();
        assert_eq!((m.columns.role.as_deref(), m.columns.timestamp), (Some("assistant"), None));
        assert_eq!(m.tools.as_deref(), Some("shell"));
        let parts = Kiro.parts(&value(ANSWER));
        assert!(
            matches!(&parts[..], [Part::Text(t), Part::ToolCall(c)] if t == "Searching." && c.id.as_deref() == Some("tooluse_1"))
        );
        assert_eq!(Kiro.who(&value(ANSWER), false).unwrap().name, "Kiro");

        let m = Kiro.describe(RESULTS, 3, &FileContext::default()).unwrap();
        assert!(m.tool_text.as_deref().unwrap().contains("No such file") && m.title.is_none());
        assert!(
            matches!(&Kiro.parts(&value(RESULTS))[..], [Part::ToolResult { error: true, text, .. }] if text.contains("No such file"))
        );
        assert!(Kiro.typed_input(None, false, &value(RESULTS)).is_none());
        let clear = r#"{"version":"v1","kind":"Clear","data":null}"#;
        assert!(Kiro.who(&value(clear), false).is_none());
        assert_eq!(Kiro.describe(clear, 9, &FileContext::default()).unwrap().columns.uuid.as_deref(), Some("L9"));
    }

    #[test]
    fn the_metadata_beside_it_names_the_project_and_the_root_is_the_chats() {
        let path = Path::new("/h/.kiro/sessions/cli/5b0e.jsonl");
        assert_eq!(Kiro.file_context(path, &mut || None).session, "5b0e");
        let named = FileContext { project: Some("/w/app".into()), ..FileContext::default() };
        assert_eq!(Kiro.describe(PROMPT, 1, &named).unwrap().cwd.as_deref(), Some("/w/app"), "each line says it");
        assert_eq!(Kiro.project_file(path), Some(PathBuf::from("/h/.kiro/sessions/cli/5b0e.json")));
        let meta = r#"{"session_id":"5b0e","cwd":"/w/app","title":"red rules","created_at":"2026-06-01T10:00:00Z"}"#;
        assert_eq!(Kiro.project_in(meta).as_deref(), Some("/w/app"));
        assert_eq!(Kiro.project_in("/w/app"), None, "JSON, not a line");
        assert!(!Kiro.is_transcript(Path::new("/h/.kiro/sessions/cli/5b0e.json")));
        let var = |name: &str| (name == "HOME").then(|| OsString::from("/h"));
        assert_eq!(Kiro.default_roots(&var), [PathBuf::from("/h/.kiro/sessions/cli")]);
    }
}
