//! Qwen Code's chats (`<base>/projects/<sanitized cwd>/chats/<session id>.jsonl`, archived ones in
//! `chats/archive/`, a sub-agent's at `projects/<…>/subagents/<session id>/agent-<agent id>.jsonl`),
//! as QwenLM/qwen-code writes them (`packages/core/src/services/chatRecordingService.ts`).
//!
//! One record a line, appended and never rewritten, each with the envelope `uuid`, `parentUuid`,
//! `sessionId`, `timestamp`, `type`, `cwd`, `version`, `gitBranch`:
//! - `user`: what the person sent, `message: {role: "user", parts}` (the request after `@file`
//!   expansion: a referenced file's text between `--- Content from referenced files ---` and
//!   `--- End of content ---`, an image as `inlineData`); with a `subtype` it is what the harness
//!   sent (`notification`, `cron`, `goal_runtime`) or a message typed mid-turn
//!   (`mid_turn_user_message`);
//! - `assistant`: one API response, `message: {role: "model", parts}` (thoughts as `thought: true`
//!   text parts, `functionCall` parts), its `usageMetadata` and `model`;
//! - `tool_result`: one tool call's result, a `functionResponse` part (photos in its own `parts`)
//!   and `toolCallResult` (`status: "error"` when it failed);
//! - `system`: bookkeeping by `subtype` (`custom_title` names the session, the last one wins;
//!   `chat_compression` holds the compacted history; `rewind`; `ui_telemetry` repeats the token
//!   counts, and is never counted).
//!
//! The parts are the Gemini API's, read as Gemini CLI's are (`gemini_parts.rs`). Records
//! form a tree by `parentUuid`: a rewind moves the tail back and leaves the undone records in the
//! file, where the index keeps them in the order written. An entry's id is the record's `uuid`.
//!
//! Before Qwen Code wrote JSONL (0.1.x), a chat was Gemini CLI's legacy document,
//! `<home>/tmp/<project hash>/chats/session-<time>-<id8>.json`, whose assistant messages have
//! `type: "qwen"`: read as Gemini's ([`super::gemini`]), that type read as Gemini's assistant.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::gemini::Gemini;
use super::gemini_parts::{inline_media, part_text, push_part, response_failed, response_shown, typed_images};
use super::{
    BlockPlaces, Columns, FileContext, Format, Meta, MetaError, Part, Records, SearchText, Side, Typed, Usage, Who,
    first_chars, parse_object, str_at, title_rank, usage, without_injected,
};

/// Qwen Code's format.
#[derive(Debug, Clone, Copy, Default)]
pub struct Qwen;

/// Image parts are numbered in a record's message (a tool's, inside its `functionResponse`) and
/// payload (a compaction's history); in a legacy chat's messages, as Gemini's.
static BLOCK_PLACES: BlockPlaces =
    BlockPlaces::new(&[&["message"], &["systemPayload"], &["content"], &["displayContent"], &["toolCalls"]]);

/// What Qwen Code puts around the files an `@` reference read into the person's message.
const REFERENCED_START: &str = "--- Content from referenced files ---";
const REFERENCED_END: &str = "--- End of content ---";
/// The tag of the context a `UserPromptSubmit` hook adds to the person's message.
const HOOK_CONTEXT: &str = "<qwen:user-prompt-submit-context>";

impl Format for Qwen {
    fn name(&self) -> &'static str {
        "qwen"
    }

    fn display_name(&self) -> &'static str {
        "Qwen Code"
    }

    /// `<session id>.jsonl` in a `chats` directory (or its `archive`), as Qwen Code's own session
    /// list takes them (`[0-9a-fA-F-]{32,36}`: never a `.ledger.jsonl` sidecar or a staging file);
    /// `agent-<id>.jsonl` under `subagents/<session id>/`; a legacy `session-*.json` in `chats`.
    fn is_transcript(&self, path: &Path) -> bool {
        let Some(name) = path.file_name().and_then(|n| n.to_str()) else { return false };
        let mut up = path.ancestors().skip(1).filter_map(Path::file_name);
        let (dir, above) = (up.next(), up.next());
        if let Some(stem) = name.strip_suffix(".jsonl") {
            let session = (32..=36).contains(&stem.len()) && stem.bytes().all(|b| b.is_ascii_hexdigit() || b == b'-');
            let chats = dir.is_some_and(|d| d == "chats")
                || (dir.is_some_and(|d| d == "archive") && above.is_some_and(|a| a == "chats"));
            return (session && chats) || (stem.starts_with("agent-") && above.is_some_and(|a| a == "subagents"));
        }
        name.starts_with("session-") && name.ends_with(".json") && dir.is_some_and(|d| d == "chats")
    }

    /// A legacy chat (`*.json`) is one document, written whole at each change: its entries are
    /// its `messages`.
    fn document_records(&self, path: &Path) -> Option<Records> {
        Gemini.document_records(path)
    }

    fn block_places(&self) -> &'static BlockPlaces {
        &BLOCK_PLACES
    }

    /// The file's name without `.jsonl` (a sub-agent's: the folder it is in, its parent session's);
    /// every record names its own. A legacy chat's header, as Gemini's; its folder is a hash of the
    /// project, no project's name.
    fn file_context(&self, path: &Path, first_line: &mut dyn FnMut() -> Option<String>) -> FileContext {
        if self.document_records(path).is_some() {
            let mut context = Gemini.file_context(path, first_line);
            let hash = path.parent().and_then(Path::parent).and_then(Path::file_name);
            if hash.is_some_and(|h| context.project.as_deref().map(std::ffi::OsStr::new) == Some(h)) {
                context.project = None;
            }
            return context;
        }
        let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        let mut up = path.ancestors().skip(1).filter_map(Path::file_name);
        let session = match (up.next(), up.next()) {
            (Some(dir), Some(subagents)) if stem.starts_with("agent-") && subagents == "subagents" => {
                dir.to_string_lossy().into_owned()
            }
            _ => stem,
        };
        FileContext { session, ..FileContext::default() }
    }

    /// 0 for a session's own chat (a legacy chat is one too), else (a sub-agent's) from the file's
    /// name.
    fn file_key(&self, path: &Path, session: &str) -> i64 {
        let own = path.file_stem().is_some_and(|stem| stem.as_encoded_bytes() == session.as_bytes());
        if own || self.document_records(path).is_some() { 0 } else { super::name_key(path) }
    }

    fn describe(&self, stripped: &str, line: u64, file: &FileContext) -> Result<Meta, MetaError> {
        let top = parse_object(stripped)?;
        if is_legacy(&top) {
            return Ok(legacy_describe(top, line, file));
        }
        Ok(describe(Value::Object(top)))
    }

    /// A person's `user` record (no subtype, not a sub-agent's): what they typed (`displayText`
    /// where a hook added context, else the text before the files their `@` references read) and
    /// its images.
    fn typed_input(&self, kind: Option<&str>, is_sidechain: bool, line: &Value) -> Option<Typed> {
        if line.get("uuid").is_none() && line.get("id").is_some() {
            return Gemini.typed_input(kind, is_sidechain, line);
        }
        if is_sidechain || str_at(line, "type") != Some("user") || line.get("subtype").is_some() {
            return None;
        }
        let parts = message_parts(line);
        if parts.iter().any(|p| p.get("functionResponse").is_some()) {
            return None;
        }
        let text = typed_text(line)?;
        let images = typed_images(parts);
        (!text.trim().is_empty() || !images.is_empty()).then_some(Typed { text, images })
    }

    /// An `assistant` record's `usageMetadata` (a legacy message's `tokens`).
    fn usage_markers(&self) -> &'static [&'static str] {
        &["usageMetadata", "tokens"]
    }

    fn parts(&self, line: &Value) -> Vec<Part> {
        if let Some(gemini) = as_gemini(line) {
            return Gemini.parts(&gemini);
        }
        parts(line)
    }

    fn who(&self, line: &Value, is_sidechain: bool) -> Option<Who> {
        if let Some(gemini) = as_gemini(line) {
            let who = Gemini.who(&gemini, is_sidechain)?;
            return Some(if who.name == "Gemini" { Who::new("Qwen Code", Side::Assistant) } else { who });
        }
        who(line, is_sidechain)
    }

    /// `qwen --resume ID` (run in the session's project directory: Qwen Code looks for it among
    /// that project's chats only).
    fn resume_command(&self, id: &str) -> Option<String> {
        Some(format!("qwen --resume {}", super::shell_word(id)))
    }

    /// `<base>/projects`, where `<base>` is `$QWEN_RUNTIME_DIR`, else `$QWEN_HOME`, else `~/.qwen`
    /// (`Storage.getRuntimeBaseDir` and `getGlobalQwenDir`); and the legacy chats' `tmp` under
    /// `$QWEN_HOME`, else `~/.qwen`.
    fn default_roots(&self, var: &dyn Fn(&str) -> Option<OsString>) -> Vec<PathBuf> {
        let nonempty = |name: &str| var(name).filter(|v| !v.is_empty()).map(PathBuf::from);
        let Some(home) = nonempty("QWEN_HOME").or_else(|| nonempty("HOME").map(|h| h.join(".qwen"))) else {
            return nonempty("QWEN_RUNTIME_DIR").map(|r| r.join("projects")).into_iter().collect();
        };
        let base = nonempty("QWEN_RUNTIME_DIR").unwrap_or_else(|| home.clone());
        vec![base.join("projects"), home.join("tmp")]
    }
}

/// Whether an object is a legacy chat's message (an `id`, no `uuid`).
fn is_legacy(top: &Map<String, Value>) -> bool {
    !top.contains_key("uuid") && top.contains_key("id")
}

/// A legacy chat's message as Gemini CLI's: its `qwen` type read as `gemini`. `None` for a
/// JSONL record.
fn as_gemini(line: &Value) -> Option<Value> {
    let top = line.as_object().filter(|top| is_legacy(top))?;
    let mut top = top.clone();
    if top.get("type").and_then(Value::as_str) == Some("qwen") {
        top.insert("type".into(), "gemini".into());
    }
    Some(Value::Object(top))
}

/// A legacy message, described as Gemini's is; its kind stays `qwen`, its usage is keyed as Qwen
/// Code's.
fn legacy_describe(mut top: Map<String, Value>, line: u64, file: &FileContext) -> Meta {
    let qwen = top.get("type").and_then(Value::as_str) == Some("qwen");
    if qwen {
        top.insert("type".into(), "gemini".into());
    }
    let line_text = Value::Object(top).to_string();
    let mut meta = match Gemini.describe(&line_text, line, file) {
        Ok(meta) => meta,
        Err(_) => return Meta::default(),
    };
    if qwen {
        meta.columns.kind = Some("qwen".into());
    }
    for u in &mut meta.usage {
        if let Some(id) = u.key.strip_prefix("gemini:") {
            u.key = format!("qwen:{id}");
        }
    }
    meta
}

/// A `Content`'s `parts`.
fn content_of(content: &Value) -> &[Value] {
    content.get("parts").and_then(Value::as_array).map_or(&[], Vec::as_slice)
}

/// A record's `message.parts`.
fn message_parts(line: &Value) -> &[Value] {
    line.get("message").map_or(&[], content_of)
}

/// A `systemPayload` string.
fn payload_str<'v>(line: &'v Value, key: &str) -> Option<&'v str> {
    line.get("systemPayload").and_then(|p| str_at(p, key))
}

/// Whether a user record is a person's words: no subtype, a message typed mid-turn, a realtime one.
fn persons(line: &Value) -> bool {
    matches!(str_at(line, "subtype"), None | Some("mid_turn_user_message" | "realtime_message"))
}

/// What a person typed in a `user` record: `displayText` where the record has it, else its text
/// parts before the files an `@` reference read and the context a hook added.
fn typed_text(line: &Value) -> Option<String> {
    if let Some(shown) = payload_str(line, "displayText") {
        return Some(shown.to_owned());
    }
    let mut texts = Vec::new();
    for part in message_parts(line).iter().filter(|p| !super::gemini_parts::is_thought(p)) {
        let Some(t) = str_at(part, "text") else { continue };
        if t.trim() == REFERENCED_START || t.trim_start().starts_with(HOOK_CONTEXT) {
            break;
        }
        texts.push(t);
    }
    (!texts.is_empty()).then(|| texts.join(""))
}

/// The first words a person typed, for a title: not a bare slash command, not injected context.
fn first_user_text(line: &Value) -> Option<String> {
    let text = typed_text(line)?;
    let words = without_injected(&text).trim();
    let bare_command = words.starts_with('/') && !words.contains(char::is_whitespace);
    (!words.is_empty() && !bare_command && !words.starts_with('<')).then(|| first_chars(words.to_owned(), 200))
}

fn describe(v: Value) -> Meta {
    let kind = str_at(&v, "type");
    let subtype = str_at(&v, "subtype");
    let sidechain = v.get("isSidechain") == Some(&Value::Bool(true));
    let owned = |key: &str| str_at(&v, key).map(str::to_owned);
    let mut meta = Meta {
        session_id: owned("sessionId").filter(|s| !s.is_empty()),
        columns: Columns {
            uuid: owned("uuid"),
            parent_uuid: owned("parentUuid"),
            kind: kind.map(str::to_owned),
            role: match kind {
                Some("user") if persons(&v) => Some("user".into()),
                Some("assistant") => Some("assistant".into()),
                _ => None,
            },
            timestamp: owned("timestamp"),
            is_sidechain: sidechain,
        },
        cwd: owned("cwd").filter(|c| !c.is_empty()),
        git_branch: owned("gitBranch"),
        agent_id: owned("agentId").filter(|a| !a.is_empty()),
        forked_from: v.get("forkedFrom").and_then(|f| str_at(f, "sessionId")).map(str::to_owned),
        ..Meta::default()
    };
    let mut text = SearchText::default();
    match kind {
        Some("user" | "assistant" | "tool_result") => {
            for part in message_parts(&v) {
                if let Some(call) = part.get("functionCall") {
                    text.call(str_at(call, "name"), call.get("args").filter(|a| !a.is_null()));
                } else {
                    part_text(part, &mut text);
                }
            }
            if kind == Some("user") && subtype.is_none() && !sidechain {
                meta.title = first_user_text(&v).map(|t| (title_rank::FIRST_USER_TEXT, t));
            }
            if kind == Some("user") && message_parts(&v).is_empty() {
                text.said(payload_str(&v, "displayText").unwrap_or(""));
            }
            meta.usage.extend(record_usage(&v));
        }
        Some("system") => match subtype {
            Some("custom_title") => {
                if let Some(title) = payload_str(&v, "customTitle").map(str::trim).filter(|t| !t.is_empty()) {
                    let rank = match payload_str(&v, "titleSource") {
                        Some("auto") => title_rank::AI,
                        _ => title_rank::CUSTOM,
                    };
                    meta.title = Some((rank, first_chars(title.to_owned(), 200)));
                    text.said(title);
                }
            }
            Some("chat_compression") => {
                // Its words (the summary, the turns it kept), not the tool output it repeats.
                for content in compressed_history(&v) {
                    content_of(content).iter().filter_map(|p| str_at(p, "text")).for_each(|t| text.said(t));
                }
            }
            Some("slash_command") if payload_str(&v, "phase") != Some("result") => {
                text.said(payload_str(&v, "rawCommand").unwrap_or(""));
            }
            _ => {}
        },
        _ => {}
    }
    text.finish(&mut meta);
    meta
}

/// The model-facing history a `chat_compression` record holds (`Content` objects).
fn compressed_history(line: &Value) -> &[Value] {
    line.get("systemPayload")
        .and_then(|p| p.get("compressedHistory"))
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// An `assistant` record's usage: its `usageMetadata` (one API response's), keyed by the record's
/// `uuid` (a fork copies records with their `uuid`s into its own file: the same response).
fn record_usage(line: &Value) -> Option<Usage> {
    if str_at(line, "type") != Some("assistant") {
        return None;
    }
    let metadata = line.get("usageMetadata").filter(|m| m.is_object())?;
    Some(Usage {
        key: format!("qwen:{}", str_at(line, "uuid")?),
        model: str_at(line, "model").filter(|m| !m.is_empty()).map(str::to_owned),
        timestamp: str_at(line, "timestamp").map(str::to_owned),
        tokens: usage::qwen(metadata),
        ..Usage::default()
    })
}

/// A record's parts: a person's message (the files their `@` references read and a hook's context
/// folded), the model's answer and its calls, a tool's result, a compaction's history, a rewind's
/// note, a slash command.
fn parts(line: &Value) -> Vec<Part> {
    let mut out = Vec::new();
    match str_at(line, "type") {
        Some("user") => user_parts(line, &mut out),
        Some("assistant") => content_parts(message_parts(line), &mut out),
        Some("tool_result") => {
            let result = line.get("toolCallResult").unwrap_or(&Value::Null);
            let failed = str_at(result, "status") == Some("error");
            for part in message_parts(line) {
                let Some(f) = part.get("functionResponse").filter(|f| f.is_object()) else {
                    push_part(part, &mut out);
                    continue;
                };
                let response = f.get("response").unwrap_or(&Value::Null);
                let media = match f.get("parts") {
                    Some(Value::Array(inner)) => inline_media(inner).collect(),
                    _ => Vec::new(),
                };
                out.push(Part::ToolResult {
                    call: str_at(f, "id").or_else(|| str_at(result, "callId")).map(str::to_owned),
                    text: response_shown(response),
                    error: failed || response_failed(response),
                    label: None,
                    media,
                });
            }
        }
        Some("system") => match str_at(line, "subtype") {
            Some("chat_compression") => {
                let history = compressed_history(line);
                let parts = history
                    .iter()
                    .filter(|c| c.is_object())
                    .map(|c| Part::Message { who: content_who(c), parts: compacted_parts(content_of(c)) })
                    .collect();
                out.push(Part::Group {
                    title: format!("Context compacted: the conversation as {} messages", history.len()),
                    parts,
                });
            }
            Some("rewind") => out.push(Part::Note(
                "Rewound: the turns just before this were undone (the index keeps them, as written).".into(),
            )),
            Some("slash_command") if payload_str(line, "phase") != Some("result") => {
                let raw = payload_str(line, "rawCommand").unwrap_or("").trim();
                let (name, args) = raw.split_once(char::is_whitespace).unwrap_or((raw, ""));
                if !name.is_empty() {
                    out.push(Part::Command { name: name.to_owned(), args: args.trim().to_owned() });
                }
            }
            _ => {}
        },
        _ => {}
    }
    out
}

/// Parts of a model's or a person's content: each part as Gemini CLI's, a `functionCall` as a tool
/// call.
fn content_parts(parts: &[Value], out: &mut Vec<Part>) {
    for part in parts {
        match part.get("functionCall").filter(|c| c.is_object()) {
            Some(call) => {
                let args = match call.get("args") {
                    Some(args) if !args.is_null() => args.clone(),
                    _ => Value::Object(Map::new()),
                };
                let name = str_at(call, "name").unwrap_or("tool");
                out.push(Part::ToolCall(super::parts::tool_call_with_id(name, &args, str_at(call, "id"))));
            }
            None => push_part(part, out),
        }
    }
}

/// The parts of a message a compaction kept: its calls and their responses as notes (the records
/// that made them show them, and count them, already).
fn compacted_parts(parts: &[Value]) -> Vec<Part> {
    let mut out = Vec::new();
    for part in parts {
        let name = |key: &str| part.get(key).and_then(|c| str_at(c, "name")).unwrap_or("a tool").to_owned();
        if part.get("functionCall").is_some() {
            out.push(Part::Note(format!("Called {}", name("functionCall"))));
        } else if part.get("functionResponse").is_some() {
            out.push(Part::Note(format!("Response of {}", name("functionResponse"))));
        } else {
            push_part(part, &mut out);
        }
    }
    out
}

/// A `user` record's parts: what the person typed (its `displayText` where a hook added context),
/// their photos, and, folded, the files their `@` references read and the hook's context.
fn user_parts(line: &Value, out: &mut Vec<Part>) {
    let parts = message_parts(line);
    if parts.is_empty() {
        if let Some(shown) = payload_str(line, "displayText").filter(|t| !t.trim().is_empty()) {
            out.push(Part::Text(shown.to_owned()));
        }
        return;
    }
    let hooked = parts.iter().any(|p| str_at(p, "text").is_some_and(|t| t.trim_start().starts_with(HOOK_CONTEXT)));
    let shown = payload_str(line, "displayText").filter(|_| hooked);
    if let Some(shown) = shown {
        out.push(Part::Text(shown.to_owned()));
    }
    let mut referenced = false;
    for part in parts {
        let Some(t) = str_at(part, "text").filter(|_| !super::gemini_parts::is_thought(part)) else {
            push_part(part, out);
            continue;
        };
        if t.trim_start().starts_with(HOOK_CONTEXT) {
            out.push(Part::Context { label: "Hook context".into(), text: t.trim().to_owned() });
        } else if t.trim() == REFERENCED_START {
            referenced = true;
        } else if t.trim() == REFERENCED_END {
            referenced = false;
        } else if referenced {
            if !t.trim().is_empty() {
                out.push(Part::Context { label: "Referenced file".into(), text: t.to_owned() });
            }
        } else if shown.is_none() {
            push_part(part, out);
        }
    }
}

/// Who said one of a compaction's `Content`s: the person (`role: "user"`), else the model.
fn content_who(content: &Value) -> Who {
    match str_at(content, "role") {
        Some("user") => Who::new("You", Side::User),
        _ => Who::new("Qwen Code", Side::Assistant),
    }
}

/// Who said a record: the person (on a sub-agent's chat, what was sent to it), the model, a tool,
/// the harness (its notifications and scheduled prompts), the CLI (a compaction, a rewind);
/// nobody for bookkeeping.
fn who(line: &Value, is_sidechain: bool) -> Option<Who> {
    let said = !message_parts(line).is_empty();
    match (str_at(line, "type")?, str_at(line, "subtype")) {
        ("user", _) if !said && payload_str(line, "displayText").is_none() => None,
        ("user", _) if persons(line) => {
            Some(Who::new(if is_sidechain { "To the sub-agent" } else { "You" }, Side::User))
        }
        ("user", Some("notification")) => Some(Who::new("Notification", Side::Note)),
        ("user", Some("cron")) => Some(Who::new("Scheduled prompt", Side::Note)),
        ("user", Some("goal_runtime")) => Some(Who::new("Goal", Side::Note)),
        ("user", Some(other)) => Some(Who::new(other, Side::Note)),
        ("assistant", _) if said => {
            Some(Who::new(if is_sidechain { "Sub-agent" } else { "Qwen Code" }, Side::Assistant))
        }
        ("tool_result", _) if said => Some(Who::new("Tool result", Side::Assistant)),
        ("system", Some("chat_compression")) => Some(Who::new("Qwen Code", Side::Assistant)),
        ("system", Some("rewind")) => Some(Who::note()),
        ("system", Some("slash_command")) if payload_str(line, "phase") != Some("result") => {
            Some(Who::new("You", Side::User))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::{Media, Tokens};

    fn v(s: &str) -> Value {
        serde_json::from_str(s).unwrap()
    }

    fn meta(line: &str) -> Meta {
        Qwen.describe(line, 1, &FileContext::default()).unwrap()
    }

    const ENVELOPE: &str = r#""sessionId":"5f0c7a2e-1b2c-4d3e-8f90-0123456789ab","cwd":"/home/u/demo","version":"0.24.4","gitBranch":"main""#;

    fn record(uuid: &str, parent: Option<&str>, kind: &str, rest: &str) -> String {
        let parent = parent.map_or("null".to_owned(), |p| format!("\"{p}\""));
        format!(
            r#"{{"uuid":"{uuid}","parentUuid":{parent},{ENVELOPE},"timestamp":"2026-10-01T09:00:05.120Z","type":"{kind}",{rest}}}"#
        )
    }

    #[test]
    fn transcripts_are_session_chats_archived_ones_and_sub_agents_not_sidecars() {
        let chats = "/q/projects/-home-u-demo/chats";
        for yes in [
            format!("{chats}/5f0c7a2e-1b2c-4d3e-8f90-0123456789ab.jsonl"),
            format!("{chats}/archive/5f0c7a2e-1b2c-4d3e-8f90-0123456789ab.jsonl"),
            "/q/projects/-home-u-demo/subagents/5f0c7a2e-1b2c-4d3e-8f90-0123456789ab/agent-a1.jsonl".into(),
            "/q/tmp/0f3a/chats/session-2025-10-01T09-00-5f0c7a2e.json".into(),
        ] {
            assert!(Qwen.is_transcript(Path::new(&yes)), "{yes}");
        }
        for no in [
            format!("{chats}/5f0c7a2e-1b2c-4d3e-8f90-0123456789ab.ledger.jsonl"),
            format!("{chats}/5f0c7a2e-1b2c-4d3e-8f90-0123456789ab.runtime.json"),
            format!("{chats}/.5f0c7a2e-1b2c-4d3e-8f90-0123456789ab.op1.tmp"),
            "/q/projects/-home-u-demo/subagents/5f0c/agent-a1.jsonl.stream".into(),
            "/q/projects/-home-u-demo/subagents/5f0c/agent-a1.meta.json".into(),
            "/q/projects/-home-u-demo/notes.jsonl".into(),
        ] {
            assert!(!Qwen.is_transcript(Path::new(&no)), "{no}");
        }
        let sub = Path::new("/q/projects/x/subagents/5f0c7a2e-1b2c-4d3e-8f90-0123456789ab/agent-a1.jsonl");
        let context = Qwen.file_context(sub, &mut || None);
        assert_eq!(context.session, "5f0c7a2e-1b2c-4d3e-8f90-0123456789ab");
        assert_ne!(Qwen.file_key(sub, &context.session), 0);
        let main = Path::new("/q/projects/x/chats/5f0c7a2e-1b2c-4d3e-8f90-0123456789ab.jsonl");
        assert_eq!(Qwen.file_key(main, &context.session), 0);
        let legacy = Path::new("/q/tmp/0f3a/chats/session-2025-10-01T09-00-5f0c7a2e.json");
        assert_eq!(
            Qwen.file_key(legacy, "5f0c7a2e-1b2c-4d3e-8f90-0123456789ab"),
            0,
            "a legacy chat is its session's own"
        );
    }

    #[test]
    fn default_roots_follow_the_runtime_dir_and_qwen_home() {
        let env = |vars: &'static [(&'static str, &'static str)]| {
            move |name: &str| vars.iter().find(|(k, _)| *k == name).map(|(_, v)| OsString::from(v))
        };
        let roots = |vars| Qwen.default_roots(&env(vars));
        assert_eq!(roots(&[("HOME", "/h")]), [PathBuf::from("/h/.qwen/projects"), PathBuf::from("/h/.qwen/tmp")]);
        assert_eq!(
            roots(&[("HOME", "/h"), ("QWEN_HOME", "/q")]),
            [PathBuf::from("/q/projects"), PathBuf::from("/q/tmp")]
        );
        assert_eq!(
            roots(&[("HOME", "/h"), ("QWEN_RUNTIME_DIR", "/r")]),
            [PathBuf::from("/r/projects"), PathBuf::from("/h/.qwen/tmp")]
        );
        assert_eq!(roots(&[("QWEN_RUNTIME_DIR", "/r")]), [PathBuf::from("/r/projects")]);
        assert!(roots(&[]).is_empty());
    }

    #[test]
    fn a_persons_message_shows_what_they_typed_their_photo_and_the_files_they_referenced() {
        let line = record(
            "a2",
            Some("a1"),
            "user",
            r#""provenance":"real_user","message":{"role":"user","parts":[{"text":"What is in @shot.png?"},{"text":"\n--- Content from referenced files ---"},{"text":"port = 8080"},{"inlineData":{"data":"/api/session-media/s/a2/0","url":"/api/session-media/s/a2/0","mimeType":"image/png"}},{"text":"\n--- End of content ---"}]}"#,
        );
        let m = meta(&line);
        assert_eq!(m.columns.uuid.as_deref(), Some("a2"));
        assert_eq!(m.columns.parent_uuid.as_deref(), Some("a1"));
        assert_eq!(m.columns.role.as_deref(), Some("user"));
        assert_eq!(m.session_id.as_deref(), Some("5f0c7a2e-1b2c-4d3e-8f90-0123456789ab"));
        assert_eq!((m.cwd.as_deref(), m.git_branch.as_deref()), (Some("/home/u/demo"), Some("main")));
        assert_eq!(m.title, Some((title_rank::FIRST_USER_TEXT, "What is in @shot.png?".into())));
        assert!(m.text.unwrap().contains("8080"), "a referenced file's text is searched");
        let line = v(&line);
        assert_eq!(Qwen.who(&line, false), Some(Who::new("You", Side::User)));
        let photo = Media {
            image: true,
            url: Some("/api/session-media/s/a2/0".into()),
            mime_type: Some("image/png".into()),
            ..Media::default()
        };
        assert_eq!(
            Qwen.parts(&line),
            [
                Part::Text("What is in @shot.png?".into()),
                Part::Context { label: "Referenced file".into(), text: "port = 8080".into() },
                Part::Media(photo),
            ]
        );
        let typed = Qwen.typed_input(Some("user"), false, &line).unwrap();
        assert_eq!((typed.text.as_str(), typed.images.len()), ("What is in @shot.png?", 1));
        // A hook's context: what was typed is the displayText, the context folded.
        let hooked = v(&record(
            "a9",
            None,
            "user",
            r#""message":{"role":"user","parts":[{"text":"Fix it"},{"text":"<qwen:user-prompt-submit-context>\nbranch main\n</qwen:user-prompt-submit-context>"}]},"systemPayload":{"displayText":"Fix it","hookContext":"branch main"}"#,
        ));
        assert!(
            matches!(&Qwen.parts(&hooked)[..], [Part::Text(t), Part::Context { label, .. }] if t == "Fix it" && label == "Hook context")
        );
        assert_eq!(Qwen.typed_input(Some("user"), false, &hooked).unwrap().text, "Fix it");
    }

    #[test]
    fn an_answer_has_thinking_text_and_calls_and_each_result_names_its_call() {
        let answer = record(
            "a3",
            Some("a2"),
            "assistant",
            r#""model":"qwen3-coder-plus","message":{"role":"model","parts":[{"text":"Let me check.","thought":true},{"text":"Reading the config."},{"functionCall":{"id":"call_01","name":"read_file","args":{"absolute_path":"/home/u/demo/app.toml"}}}]},"usageMetadata":{"promptTokenCount":5210,"candidatesTokenCount":96,"totalTokenCount":5306,"cachedContentTokenCount":4800,"thoughtsTokenCount":18}"#,
        );
        let m = meta(&answer);
        assert_eq!(m.columns.role.as_deref(), Some("assistant"));
        assert_eq!(m.text.as_deref(), Some("Let me check.\nReading the config."));
        assert_eq!(m.tools.as_deref(), Some("read_file"));
        assert_eq!(m.tool_text.as_deref().map(|t| t.contains("app.toml")), Some(true));
        assert_eq!(m.usage.len(), 1);
        assert_eq!(m.usage[0].key, "qwen:a3");
        assert_eq!(m.usage[0].model.as_deref(), Some("qwen3-coder-plus"));
        assert_eq!(
            m.usage[0].tokens,
            Tokens { input: 410, output: 96, cache_read: 4800, reasoning: 18, ..Tokens::default() }
        );
        let answer = v(&answer);
        assert_eq!(Qwen.who(&answer, false), Some(Who::new("Qwen Code", Side::Assistant)));
        assert_eq!(Qwen.who(&answer, true), Some(Who::new("Sub-agent", Side::Assistant)));
        match &Qwen.parts(&answer)[..] {
            [Part::Thinking(t), Part::Text(said), Part::ToolCall(call)] => {
                assert_eq!((t.as_str(), said.as_str()), ("Let me check.", "Reading the config."));
                assert_eq!(call.id.as_deref(), Some("call_01"));
                assert_eq!(call.tool, "read_file");
            }
            other => panic!("{other:?}"),
        }
        let failed = v(&record(
            "a5",
            Some("a4"),
            "tool_result",
            r#""message":{"role":"user","parts":[{"functionResponse":{"id":"call_02","name":"run_shell_command","response":{"error":"cat: missing.txt: No such file"}}}]},"toolCallResult":{"callId":"call_02","status":"error","error":{}}"#,
        ));
        assert_eq!(Qwen.who(&failed, false), Some(Who::new("Tool result", Side::Assistant)));
        assert_eq!(
            Qwen.parts(&failed),
            [Part::ToolResult {
                call: Some("call_02".into()),
                text: "cat: missing.txt: No such file".into(),
                error: true,
                label: None,
                media: Vec::new()
            }]
        );
        let photo = v(&record(
            "a6",
            Some("a5"),
            "tool_result",
            r#""message":{"role":"user","parts":[{"functionResponse":{"id":"call_03","name":"read_file","response":{"output":"Read image"},"parts":[{"inlineData":{"data":"x","url":"/u","mimeType":"image/png"}}]}}]},"toolCallResult":{"callId":"call_03","status":"success"}"#,
        ));
        assert!(
            matches!(&Qwen.parts(&photo)[..], [Part::ToolResult { error: false, media, .. }] if media.len() == 1 && media[0].image)
        );
        assert_eq!(meta(&serde_json::to_string(&photo).unwrap()).tool_text.as_deref(), Some("Read image"));
        assert_eq!(Qwen.typed_input(Some("tool_result"), false, &photo), None);
    }

    #[test]
    fn system_records_title_compact_rewind_and_keep_the_rest_to_themselves() {
        let auto = meta(&record(
            "a8",
            Some("a7"),
            "system",
            r#""subtype":"custom_title","systemPayload":{"customTitle":"Inspect screenshot","titleSource":"auto"}"#,
        ));
        assert_eq!(auto.title, Some((title_rank::AI, "Inspect screenshot".into())));
        let manual =
            meta(&record("b1", None, "system", r#""subtype":"custom_title","systemPayload":{"customTitle":"Mine"}"#));
        assert_eq!(manual.title, Some((title_rank::CUSTOM, "Mine".into())));
        let telemetry = record(
            "a7",
            Some("a6"),
            "system",
            r#""subtype":"ui_telemetry","systemPayload":{"uiEvent":{"event.name":"qwen-code.api_response","input_token_count":5420,"output_token_count":22,"response_text":"secret words"}}"#,
        );
        let m = meta(&telemetry);
        assert!(m.usage.is_empty() && m.text.is_none(), "telemetry repeats usage and text: neither counted");
        assert_eq!(Qwen.who(&v(&telemetry), false), None);
        assert!(Qwen.parts(&v(&telemetry)).is_empty());
        let compaction = v(&record(
            "c1",
            Some("a8"),
            "system",
            r#""subtype":"chat_compression","systemPayload":{"info":{"originalTokenCount":9000,"newTokenCount":900},"compressedHistory":[{"role":"user","parts":[{"text":"Summary: we read app.toml"}]},{"role":"model","parts":[{"text":"Got it."},{"functionCall":{"id":"c9","name":"read_file","args":{}}}]},{"role":"user","parts":[{"functionResponse":{"id":"c9","name":"read_file","response":{"output":"port = 8080"}}}]}]}"#,
        ));
        let m = meta(&compaction.to_string());
        assert_eq!(m.text.as_deref(), Some("Summary: we read app.toml\nGot it."));
        assert_eq!((m.tool_text, m.tools), (None, None), "the calls it repeats are searched where they were made");
        assert_eq!(Qwen.who(&compaction, false), Some(Who::new("Qwen Code", Side::Assistant)));
        match &Qwen.parts(&compaction)[..] {
            [Part::Group { parts, .. }] => {
                assert_eq!(parts.len(), 3);
                assert!(
                    matches!(&parts[1], Part::Message { parts, .. } if parts[1] == Part::Note("Called read_file".into()))
                );
                assert!(
                    matches!(&parts[2], Part::Message { parts, .. } if parts[..] == [Part::Note("Response of read_file".into())])
                );
            }
            other => panic!("{other:?}"),
        }
        let rewind =
            v(&record("r1", Some("a2"), "system", r#""subtype":"rewind","systemPayload":{"truncatedCount":2}"#));
        assert_eq!(Qwen.who(&rewind, false), Some(Who::note()));
        assert!(matches!(&Qwen.parts(&rewind)[..], [Part::Note(n)] if n.starts_with("Rewound")));
        let command = v(&record(
            "s1",
            None,
            "system",
            r#""subtype":"slash_command","systemPayload":{"phase":"invocation","rawCommand":"/rename Inspect it"}"#,
        ));
        assert_eq!(Qwen.parts(&command), [Part::Command { name: "/rename".into(), args: "Inspect it".into() }]);
        let notice = v(&record(
            "n1",
            None,
            "user",
            r#""subtype":"notification","provenance":"system","message":{"role":"user","parts":[{"text":"Task 3 finished"}]},"systemPayload":{"displayText":"Task 3 finished"}"#,
        ));
        assert_eq!(Qwen.who(&notice, false), Some(Who::new("Notification", Side::Note)));
        assert_eq!(meta(&notice.to_string()).title, None);
        assert_eq!(Qwen.typed_input(Some("user"), false, &notice), None);
    }

    #[test]
    fn a_legacy_chats_qwen_messages_are_read_as_gemini_clis() {
        let answer = r#"{"id":"l-m1","timestamp":"2025-10-01T09:00:04.000Z","type":"qwen","content":"A checkerboard.","tokens":{"input":1800,"output":14,"cached":0,"thoughts":60,"tool":0,"total":1874},"model":"qwen3-coder-plus"}"#;
        let m = meta(answer);
        assert_eq!(m.columns.kind.as_deref(), Some("qwen"));
        assert_eq!(m.columns.role.as_deref(), Some("assistant"));
        assert_eq!(m.usage[0].key, "qwen:l-m1");
        assert_eq!(m.usage[0].tokens.output, 74);
        let answer = v(answer);
        assert_eq!(Qwen.who(&answer, false), Some(Who::new("Qwen Code", Side::Assistant)));
        assert_eq!(Qwen.parts(&answer), [Part::Text("A checkerboard.".into())]);
        let asked = v(r#"{"id":"l-u1","type":"user","content":[{"text":"What is it?"}]}"#);
        assert_eq!(Qwen.who(&asked, false), Some(Who::new("You", Side::User)));
        assert_eq!(Qwen.typed_input(Some("user"), false, &asked).unwrap().text, "What is it?");
    }
}
