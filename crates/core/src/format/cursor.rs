//! Cursor's agent transcripts (`~/.cursor/projects/<project>/agent-transcripts/`: `<session>.jsonl`,
//! `<session>/<session>.jsonl`, and a sub-agent's `<session>/subagents/<sub-agent>.jsonl`), which the
//! agent CLI and the editor's agent write.
//!
//! Cursor is closed source and documents no schema. Read from the readers that checked real files
//! (docs/formats.md names each): one record a line, `{"role": "user" | "assistant", "message":
//! {"content": …}}` (a string, or `text` and `tool_use` blocks: no ids, no tool results, no
//! thinking but a trailing `[REDACTED]` where it was), and `{"type": "turn_ended", "status", "error"}`.
//! No line has a time, an id, a model or token counts. A person's message is a text of tagged
//! sections: `<user_query>` (what they typed), `<timestamp>` (newer builds: a local time with its
//! offset, to the minute), `<image_files>` (the paths of pasted photos, which are files beside the
//! transcript, not in it), and context the editor adds.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::{
    BlockPlaces, Columns, FileContext, Format, Meta, MetaError, Part, SearchText, Side, Typed, Who, first_chars,
    line_id, parse_object, str_at, title_rank,
};

/// Cursor's format.
#[derive(Debug, Clone, Copy, Default)]
pub struct Cursor;

/// Where image blocks would be: Cursor writes none (a pasted photo is a file the transcript names).
static BLOCK_PLACES: BlockPlaces = BlockPlaces::new(&[&["message", "content"]]);

/// Where thinking was, at the end of an assistant's text (Cursor keeps none of it).
const REDACTED: &str = "[REDACTED]";

impl Format for Cursor {
    fn name(&self) -> &'static str {
        "cursor"
    }

    fn display_name(&self) -> &'static str {
        "Cursor"
    }

    /// A `*.jsonl` file in an `agent-transcripts` directory or below it.
    fn is_transcript(&self, path: &Path) -> bool {
        path.extension().is_some_and(|e| e == "jsonl")
            && path.ancestors().skip(1).any(|a| a.ends_with("agent-transcripts"))
    }

    /// The plain-text transcripts of older builds.
    fn not_read(&self, path: &Path) -> Option<&'static str> {
        (path.extension().is_some_and(|e| e == "txt")
            && path.ancestors().skip(1).any(|a| a.ends_with("agent-transcripts")))
        .then_some("a plain-text transcript of an older Cursor build, which scrollback does not read")
    }

    fn block_places(&self) -> &'static BlockPlaces {
        &BLOCK_PLACES
    }

    /// The session is the file's name (a sub-agent's is a session of its own); the project is the
    /// folder that holds `agent-transcripts`, Cursor's slug of the working directory (it cannot be
    /// turned back into a path).
    fn file_context(&self, path: &Path, _first_line: &mut dyn FnMut() -> Option<String>) -> FileContext {
        let session = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        let project = path
            .ancestors()
            .find(|a| a.ends_with("agent-transcripts"))
            .and_then(|t| t.parent()?.file_name())
            .map(|n| n.to_string_lossy().into_owned())
            .filter(|n| n != "projects");
        FileContext { session, project, ..FileContext::default() }
    }

    fn file_key(&self, _path: &Path, _session: &str) -> i64 {
        0
    }

    fn describe(&self, stripped: &str, line: u64, file: &FileContext) -> Result<Meta, MetaError> {
        let top = parse_object(stripped)?;
        Ok(describe(&Value::Object(top), line, file))
    }

    /// What a person typed: the `<user_query>` of a `user` line (its whole text where it has none).
    fn typed_input(&self, _kind: Option<&str>, _is_sidechain: bool, line: &Value) -> Option<Typed> {
        if str_at(line, "role") != Some("user") {
            return None;
        }
        let text = query(&user_text(line)?)?.to_owned();
        Some(Typed { text, images: Vec::new() })
    }

    /// None: no line states usage.
    fn usage_markers(&self) -> &'static [&'static str] {
        &[]
    }

    fn parts(&self, line: &Value) -> Vec<Part> {
        parts(line)
    }

    fn who(&self, line: &Value, _is_sidechain: bool) -> Option<Who> {
        match (str_at(line, "role"), str_at(line, "type")) {
            (Some("user"), _) => Some(Who::new("You", Side::User)),
            (Some("assistant"), _) => Some(Who::new("Cursor", Side::Assistant)),
            (_, Some("turn_ended")) if str_at(line, "status") == Some("error") => Some(Who::note()),
            _ => None,
        }
    }

    /// `cursor-agent --resume ID` (the agent CLI; run in the session's directory).
    fn resume_command(&self, id: &str) -> Option<String> {
        Some(format!("cursor-agent --resume {}", super::shell_word(id)))
    }

    /// `~/.cursor/projects` (the same on every system; the editor and the CLI write there).
    fn default_roots(&self, var: &dyn Fn(&str) -> Option<OsString>) -> Vec<PathBuf> {
        var("HOME")
            .filter(|v| !v.is_empty())
            .map(|home| PathBuf::from(home).join(".cursor/projects"))
            .into_iter()
            .collect()
    }
}

/// The text of a `user` line: its string content, or its text blocks joined.
fn user_text(line: &Value) -> Option<String> {
    match line.get("message")?.get("content")? {
        Value::String(s) => Some(s.clone()),
        Value::Array(blocks) => Some(
            blocks
                .iter()
                .filter(|b| str_at(b, "type") == Some("text"))
                .filter_map(|b| str_at(b, "text"))
                .collect::<Vec<_>>()
                .join("\n"),
        ),
        _ => None,
    }
}

/// What is between `<tag>` and `</tag>` in `text`, trimmed.
fn tagged<'t>(text: &'t str, tag: &str) -> Option<&'t str> {
    let start = text.find(&format!("<{tag}>"))? + tag.len() + 2;
    let end = start + text[start..].find(&format!("</{tag}>"))?;
    Some(text[start..end].trim())
}

/// What the person typed: the `<user_query>`, else the whole text when it has no tags.
fn query(text: &str) -> Option<&str> {
    let typed = tagged(text, "user_query").or_else(|| (!text.trim_start().starts_with('<')).then_some(text.trim()))?;
    (!typed.is_empty()).then_some(typed)
}

/// A `<timestamp>` of a person's message (`Monday, Nov 30, 2026, 9:12 AM (UTC+1)`), as the index
/// writes times (UTC, milliseconds).
fn timestamp(text: &str) -> Option<String> {
    let tag = tagged(text, "timestamp")?;
    let (local, zone) = tag.rsplit_once(" (UTC")?;
    let zone = zone.strip_suffix(')')?;
    let minutes = match zone {
        "" => 0,
        _ => {
            let (sign, rest) = zone.split_at(1);
            let sign = match sign {
                "+" => 1,
                "-" => -1,
                _ => return None,
            };
            let (h, m) = rest.split_once(':').unwrap_or((rest, "0"));
            sign * (h.parse::<i32>().ok()? * 60 + m.parse::<i32>().ok()?)
        }
    };
    let civil = ["%A, %b %d, %Y, %I:%M %p", "%A, %b %d, %Y, %H:%M"]
        .iter()
        .find_map(|f| jiff::civil::DateTime::strptime(f, local.trim()).ok())?;
    let offset = jiff::tz::Offset::from_seconds(minutes * 60).ok()?;
    let at = offset.to_timestamp(civil).ok()?;
    Some(at.strftime("%Y-%m-%dT%H:%M:%S%.3fZ").to_string())
}

/// The photos a person's message names (`<image_files>`: one numbered path a line).
fn image_paths(text: &str) -> Vec<&str> {
    tagged(text, "image_files")
        .map(|files| {
            files
                .lines()
                .filter_map(|l| l.trim().split_once(". ").map(|(_, p)| p.trim()))
                .filter(|p| p.starts_with('/') || p.get(1..3) == Some(":\\"))
                .collect()
        })
        .unwrap_or_default()
}

/// An assistant's text without the marker where its thinking was.
fn without_redacted(text: &str) -> &str {
    text.trim_end().strip_suffix(REDACTED).unwrap_or(text).trim_end()
}

fn parts(line: &Value) -> Vec<Part> {
    let mut out = Vec::new();
    match str_at(line, "role") {
        Some("user") => {
            let Some(text) = user_text(line) else { return out };
            for path in image_paths(&text) {
                out.push(Part::Note(format!("[photo {path}: a file beside the transcript, not in it]")));
            }
            if let Some(typed) = query(&text) {
                out.push(Part::Text(typed.to_owned()));
            }
            let context: Vec<&str> =
                ["attached_files", "open_and_recently_viewed_files", "system_reminder", "user_info"]
                    .iter()
                    .filter_map(|t| tagged(&text, t))
                    .filter(|t| !t.is_empty())
                    .collect();
            if !context.is_empty() {
                out.push(Part::Context { label: "Context from Cursor".into(), text: context.join("\n\n") });
            }
        }
        Some("assistant") => match line.get("message").and_then(|m| m.get("content")) {
            Some(Value::String(s)) => assistant_text(s, &mut out),
            Some(Value::Array(blocks)) => {
                let null = Value::Null;
                for block in blocks {
                    match str_at(block, "type") {
                        Some("text") => assistant_text(str_at(block, "text").unwrap_or(""), &mut out),
                        Some("tool_use") => {
                            let name = str_at(block, "name").unwrap_or("tool");
                            let input = block.get("input").unwrap_or(&null);
                            out.push(Part::ToolCall(super::parts::tool_call_with_id(name, input, str_at(block, "id"))));
                        }
                        _ => {}
                    }
                }
            }
            _ => {}
        },
        _ if str_at(line, "type") == Some("turn_ended") && str_at(line, "status") == Some("error") => {
            let why = str_at(line, "error").unwrap_or("no reason given");
            out.push(Part::Note(format!("The turn ended with an error: {why}")));
        }
        _ => {}
    }
    out
}

/// An assistant's text block: what it says, and that it thought where the marker is.
fn assistant_text(text: &str, out: &mut Vec<Part>) {
    let said = without_redacted(text);
    if !said.is_empty() {
        out.push(Part::Text(said.to_owned()));
    }
    if text.trim_end().ends_with(REDACTED) {
        out.push(Part::Thinking("(thought; Cursor keeps none of it)".to_owned()));
    }
}

fn describe(line: &Value, n: u64, file: &FileContext) -> Meta {
    let mut meta = Meta::default();
    let mut text = SearchText::default();
    let role = str_at(line, "role");
    meta.columns = Columns {
        uuid: Some(line_id(n)),
        kind: role.or_else(|| str_at(line, "type")).map(str::to_owned),
        role: role.map(str::to_owned),
        ..Columns::default()
    };
    match role {
        Some("user") => {
            if let Some(all) = user_text(line) {
                meta.columns.timestamp = timestamp(&all);
                if let Some(typed) = query(&all) {
                    text.said(typed);
                    meta.title = Some((title_rank::FIRST_USER_TEXT, first_chars(typed.to_owned(), 200)));
                }
            }
        }
        Some("assistant") => match line.get("message").and_then(|m| m.get("content")) {
            Some(Value::String(s)) => text.said(without_redacted(s)),
            Some(Value::Array(blocks)) => {
                for block in blocks {
                    match str_at(block, "type") {
                        Some("text") => text.said(without_redacted(str_at(block, "text").unwrap_or(""))),
                        Some("tool_use") => text.call(str_at(block, "name"), block.get("input")),
                        _ => {}
                    }
                }
            }
            _ => {}
        },
        _ => {
            if let Some(why) = str_at(line, "error") {
                text.said(why);
            }
        }
    }
    if n == 1 {
        meta.cwd.clone_from(&file.project);
    }
    text.finish(&mut meta);
    meta
}

#[cfg(test)]
mod tests {
    use super::*;

    const ASKED: &str = r#"{"role":"user","message":{"content":[{"type":"text","text":"[Image]\n<image_files>\nThe following images were provided by the user and saved to the workspace for future use:\n1. /home/ana/.cursor/projects/home-ana-demo/assets/shot-7d1e.png\n\nThese images can be copied for use in other locations.\n</image_files>\n<timestamp>Monday, Nov 30, 2026, 9:12 AM (UTC+1)</timestamp>\n<user_query>\nThe build badge is red. Fix the failing test.\n</user_query>"}]}}"#;
    const ANSWER: &str = r#"{"role":"assistant","message":{"content":[{"type":"text","text":"I'll run the tests.[REDACTED]"},{"type":"tool_use","name":"Shell","input":{"command":"cargo test -q","working_directory":"/home/ana/demo"}}]}}"#;
    const FAILED: &str = r#"{"type":"turn_ended","status":"error","error":"User aborted request"}"#;

    fn meta(line: &str) -> Meta {
        Cursor
            .describe(line, 1, &FileContext { project: Some("home-ana-demo".into()), ..FileContext::default() })
            .unwrap()
    }

    #[test]
    fn a_persons_message_is_its_query_with_its_time_and_photos_named() {
        let m = meta(ASKED);
        assert_eq!(m.columns.timestamp.as_deref(), Some("2026-11-30T08:12:00.000Z"));
        assert_eq!(
            m.title,
            Some((title_rank::FIRST_USER_TEXT, "The build badge is red. Fix the failing test.".into()))
        );
        assert_eq!(m.cwd.as_deref(), Some("home-ana-demo"));
        let line: Value = serde_json::from_str(ASKED).unwrap();
        let parts = parts(&line);
        assert!(
            matches!(&parts[0], Part::Note(n) if n.contains("/home/ana/.cursor/projects/home-ana-demo/assets/shot-7d1e.png"))
        );
        assert!(matches!(&parts[1], Part::Text(t) if t == "The build badge is red. Fix the failing test."));
        assert_eq!(
            Cursor.typed_input(None, false, &line).unwrap().text,
            "The build badge is red. Fix the failing test."
        );
    }

    #[test]
    fn times_read_in_both_clocks_and_every_offset() {
        let at = |t: &str| timestamp(&format!("<timestamp>{t}</timestamp>"));
        assert_eq!(at("Tuesday, Jul 21, 2026, 1:11 PM (UTC+3)").as_deref(), Some("2026-07-21T10:11:00.000Z"));
        assert_eq!(at("Wednesday, Sep 16, 2026, 3:37 PM (UTC-4)").as_deref(), Some("2026-09-16T19:37:00.000Z"));
        assert_eq!(at("Tuesday, Jul 21, 2026, 13:11 (UTC+5:30)").as_deref(), Some("2026-07-21T07:41:00.000Z"));
        assert_eq!(at("Tuesday, Jul 21, 2026, 1:11 PM (UTC)").as_deref(), Some("2026-07-21T13:11:00.000Z"));
        assert_eq!(at("sometime"), None);
    }

    #[test]
    fn an_answer_is_its_text_its_calls_and_that_it_thought_and_a_failed_turn_is_a_note() {
        let m = meta(ANSWER);
        assert_eq!(m.tools.as_deref(), Some("Shell"));
        assert!(!m.text.as_deref().unwrap().contains("REDACTED"));
        let line: Value = serde_json::from_str(ANSWER).unwrap();
        let parts = parts(&line);
        assert!(matches!(&parts[0], Part::Text(t) if t == "I'll run the tests."));
        assert!(matches!(&parts[1], Part::Thinking(_)));
        assert!(matches!(&parts[2], Part::ToolCall(c) if c.tool == "Shell"));
        let failed: Value = serde_json::from_str(FAILED).unwrap();
        assert!(matches!(&super::parts(&failed)[..], [Part::Note(n)] if n.contains("User aborted request")));
        assert!(Cursor.who(&failed, false).is_some());
        let ok: Value = serde_json::from_str(r#"{"type":"turn_ended","status":"success"}"#).unwrap();
        assert!(Cursor.who(&ok, false).is_none() && super::parts(&ok).is_empty());
    }
}
