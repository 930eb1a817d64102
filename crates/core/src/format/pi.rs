//! Pi's sessions (badlogic/pi-mono, `@mariozechner/pi-coding-agent`):
//! `~/.pi/agent/sessions/--<cwd>--/<time>_<session id>.jsonl` (`packages/coding-agent/src/core/
//! session-manager.ts`, `docs/session.md`).
//!
//! The first line is the header, `{"type":"session", "version", "id", "timestamp", "cwd",
//! "parentSession"?}`; every other line is an entry with an 8-hex `id`, a `parentId` (`null` for a
//! root) and an ISO `timestamp`, the entries forming a tree (`/tree` moves the leaf and appends a
//! sibling branch to the same file, so abandoned branches stay in it, in the order they were
//! written). Entry types:
//! - `message`: one `AgentMessage` under `message`, by `role`: `user` (`content` a string or
//!   `text` / `image` blocks), `assistant` (`text`, `thinking`, `toolCall` blocks, and the
//!   response's `usage`, `model`, `stopReason`, `errorMessage`), `toolResult` (`toolCallId`,
//!   `content` blocks, `isError`), `bashExecution` (a `!command` the person ran: `command`,
//!   `output`, `exitCode`), `custom` (`hookMessage` in v2: an extension's message);
//! - `model_change`, `thinking_level_change`, `compaction` (`summary`), `branch_summary`
//!   (`summary`), `custom` (an extension's state), `custom_message` (an extension's message, shown
//!   where `display`), `label`, `session_info` (`name`: the title).
//!
//! Photos are base64 image blocks, `{"type":"image", "data", "mimeType"}` (keys in either order),
//! under `message.content` (a person's message, a tool's result) and `content` (`custom_message`).
//! Usage is per response (each `assistant` message's own counts, never a running total).
//!
//! A fork (`/fork`, `createBranchedSession`, `forkFrom`) is a new file whose header names its
//! parent's file (`parentSession`; `branchedFrom` in v1 and v2) and whose first entries are the
//! parent's, copied verbatim, stamped before the new header: they are hidden as copies. v1 files
//! (no `version`, entries without ids) are read as they are; pi rewrites them whole as v3 when
//! they are resumed, which the index reads again as any rewritten file.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::{
    BlockPlaces, Columns, FileContext, Format, Media, Meta, MetaError, Part, SearchText, Side, Tokens, Typed, Usage,
    Who, first_chars, hidden, line_id, parse_object, str_at, title_rank, usage,
};

/// Pi's format.
#[derive(Debug, Clone, Copy, Default)]
pub struct Pi;

/// Image blocks are numbered under a message's `content` (a person's message, a tool's result, an
/// extension's message) and a `custom_message` entry's `content`.
static BLOCK_PLACES: BlockPlaces = BlockPlaces::new(&[&["message", "content"], &["content"]]);

/// The directory the pi-subagents extension writes its run artifacts to, beside the sessions: its
/// `*.jsonl` files there are event streams and its own transcript copies, not pi sessions.
const ARTIFACTS_DIR: &str = "subagent-artifacts";

impl Format for Pi {
    fn name(&self) -> &'static str {
        "pi"
    }

    fn display_name(&self) -> &'static str {
        "Pi"
    }

    /// A `*.jsonl` file at any depth under the sessions directory (extensions put sub-agents'
    /// sessions in subdirectories), but not an extension's artifacts: anything under a
    /// `subagent-artifacts` directory, nor a `*_transcript.jsonl` (pi-subagents' copy of a child's
    /// conversation in a format of its own, which would count it twice).
    fn is_transcript(&self, path: &Path) -> bool {
        let Some(name) = path.file_name().and_then(|n| n.to_str()) else { return false };
        name.ends_with(".jsonl")
            && !name.ends_with("_transcript.jsonl")
            && !path.ancestors().skip(1).any(|a| a.file_name().is_some_and(|n| n == ARTIFACTS_DIR))
    }

    fn block_places(&self) -> &'static BlockPlaces {
        &BLOCK_PLACES
    }

    /// The header's `id` (else the id the file's name ends with: `<time>_<id>.jsonl`), its `cwd`,
    /// and for a fork the parent (the id its `parentSession` or `branchedFrom` file is named for)
    /// and the header's instant, before which its entries are the parent's copies.
    fn file_context(&self, path: &Path, first_line: &mut dyn FnMut() -> Option<String>) -> FileContext {
        let mut context = FileContext { session: session_from_name(path), ..FileContext::default() };
        let Some(header) = first_line().and_then(|l| serde_json::from_str::<Value>(&l).ok()) else {
            return context;
        };
        if str_at(&header, "type") != Some("session") {
            return context;
        }
        if let Some(id) = str_at(&header, "id").filter(|id| !id.is_empty()) {
            context.session = id.to_owned();
        }
        context.project = str_at(&header, "cwd").filter(|c| !c.is_empty()).map(str::to_owned);
        if let Some(parent) = parent_of(&header) {
            context.forked_from = Some(parent);
            context.copies_before = str_at(&header, "timestamp").map(str::to_owned);
        }
        context
    }

    /// 0: a file is its session's one transcript (a fork or a sub-agent's run is a session of its
    /// own, with an id of its own).
    fn file_key(&self, _path: &Path, _session: &str) -> i64 {
        0
    }

    fn describe(&self, stripped: &str, line: u64, file: &FileContext) -> Result<Meta, MetaError> {
        let top = parse_object(stripped)?;
        Ok(describe(&top, line, file))
    }

    /// A `user` message's text blocks and images.
    fn typed_input(&self, _kind: Option<&str>, _is_sidechain: bool, line: &Value) -> Option<Typed> {
        let message = user_message(line)?;
        super::typed_from_blocks(message.get("content")?)
    }

    /// An assistant message's `usage` (and the `usage` newer builds put on compactions, branch
    /// summaries and tool results).
    fn usage_markers(&self) -> &'static [&'static str] {
        &["usage"]
    }

    fn parts(&self, line: &Value) -> Vec<Part> {
        parts(line)
    }

    fn who(&self, line: &Value, _is_sidechain: bool) -> Option<Who> {
        who(line)
    }

    /// `pi --session ID` (run in the session's project directory: pi looks for the id among that
    /// directory's sessions first, and offers to fork one of another project's).
    fn resume_command(&self, id: &str) -> Option<String> {
        Some(format!("pi --session {}", super::shell_word(id)))
    }

    /// `$PI_CODING_AGENT_DIR/sessions`, else `~/.pi/agent/sessions`; and
    /// `$PI_CODING_AGENT_SESSION_DIR` where it is set (newer builds' override, whose sessions lie
    /// in it directly). A leading `~` is the home directory, as pi expands it.
    fn default_roots(&self, var: &dyn Fn(&str) -> Option<OsString>) -> Vec<PathBuf> {
        let home = var("HOME").filter(|v| !v.is_empty()).map(PathBuf::from);
        let expand = |name: &str| -> Option<PathBuf> {
            let value = var(name).filter(|v| !v.is_empty())?;
            let text = value.to_string_lossy();
            match text.strip_prefix('~') {
                Some(rest) if rest.is_empty() || rest.starts_with('/') => {
                    Some(home.clone()?.join(rest.trim_start_matches('/')))
                }
                _ => Some(PathBuf::from(value)),
            }
        };
        let agent = match var("PI_CODING_AGENT_DIR").filter(|v| !v.is_empty()) {
            Some(_) => expand("PI_CODING_AGENT_DIR"),
            None => home.as_ref().map(|h| h.join(".pi/agent")),
        };
        let mut roots: Vec<PathBuf> = agent.map(|a| a.join("sessions")).into_iter().collect();
        if let Some(sessions) = expand("PI_CODING_AGENT_SESSION_DIR")
            && !roots.contains(&sessions)
        {
            roots.push(sessions);
        }
        roots
    }
}

/// The session id a file's name gives: what follows the first `_` of `<time>_<id>.jsonl` (a time
/// has none), else the name without `.jsonl`.
fn session_from_name(path: &Path) -> String {
    let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    match stem.split_once('_') {
        Some((time, id)) if time.starts_with(|c: char| c.is_ascii_digit()) && !id.is_empty() => id.to_owned(),
        _ => stem,
    }
}

/// The session a header says its own was forked from: the id its `parentSession` (v3) or
/// `branchedFrom` (v1, v2; migration keeps the old key) file is named for.
fn parent_of(header: &Value) -> Option<String> {
    let path = ["parentSession", "branchedFrom"].iter().find_map(|k| str_at(header, k)).filter(|p| !p.is_empty())?;
    // The path is written on the machine pi ran on: either separator.
    let name = path.rsplit(['/', '\\']).next().unwrap_or(path);
    let id = session_from_name(Path::new(name));
    (!id.is_empty()).then_some(id)
}

/// The message of a `message` entry, if it is a person's (`role` `user`).
fn user_message(line: &Value) -> Option<&Value> {
    let message = line.get("message")?;
    (str_at(line, "type") == Some("message") && str_at(message, "role") == Some("user")).then_some(message)
}

fn describe(top: &Map<String, Value>, line: u64, file: &FileContext) -> Meta {
    let value = |key: &str| top.get(key);
    let str_of = |key: &str| top.get(key).and_then(Value::as_str);
    let kind = str_of("type");
    let null = Value::Null;
    let message = value("message").filter(|m| m.is_object()).unwrap_or(&null);
    let role = str_at(message, "role");
    let timestamp = str_of("timestamp");
    let mut text = SearchText::default();
    let mut meta = Meta {
        columns: Columns {
            // The header's `id` is the session's, not an entry's.
            uuid: Some(
                str_of("id")
                    .filter(|id| !id.is_empty() && kind != Some("session"))
                    .map_or_else(|| line_id(line), str::to_owned),
            ),
            parent_uuid: str_of("parentId").map(str::to_owned),
            kind: kind.map(str::to_owned),
            role: role.filter(|_| kind == Some("message")).map(str::to_owned),
            timestamp: timestamp.map(str::to_owned),
            is_sidechain: false,
        },
        ..Meta::default()
    };
    match kind {
        Some("session") => {
            meta.cwd = str_of("cwd").map(str::to_owned);
            if line == 1 {
                meta.forked_from = file.forked_from.clone();
            }
        }
        Some("message") => {
            message_text(message, &mut text);
            if role == Some("user") {
                meta.title = first_user_text(message).map(|t| (title_rank::FIRST_USER_TEXT, t));
            }
            meta.usage.extend(response_usage(message.get("usage"), message, timestamp));
        }
        Some("compaction" | "branch_summary") => {
            if let Some(summary) = str_of("summary") {
                text.said(summary);
            }
            let entry = Value::Object(top.clone());
            meta.usage.extend(response_usage(value("usage"), &entry, timestamp));
        }
        Some("custom_message") => {
            if let Some(content) = value("content") {
                content_text(content, &mut text, false);
            }
        }
        Some("session_info") => {
            if let Some(name) = str_of("name").map(str::trim).filter(|n| !n.is_empty()) {
                meta.title = Some((title_rank::CUSTOM, first_chars(name.to_owned(), 200)));
                text.said(name);
            }
        }
        Some("model_change") => {
            meta.model = str_of("modelId").filter(|m| !m.is_empty()).map(str::to_owned);
        }
        _ => {}
    }
    if line > 1
        && let (Some(before), Some(at)) = (&file.copies_before, timestamp)
        && at < before.as_str()
    {
        meta.hidden = Some(hidden::FORK);
    }
    if meta.hidden.is_none() {
        text.finish(&mut meta);
    } else {
        meta.title = None;
    }
    meta
}

/// Everything searchable in one message: a person's and the model's text and thinking as said;
/// tool calls (names, arguments' strings), tool results and shell commands' output as tool text.
fn message_text(message: &Value, out: &mut SearchText) {
    match str_at(message, "role") {
        Some("toolResult") => {
            if let Some(content) = message.get("content") {
                content_text(content, out, true);
            }
        }
        Some("bashExecution") => {
            out.call(Some("!"), message.get("command"));
            if let Some(output) = str_at(message, "output") {
                out.output(output);
            }
        }
        _ => {
            if let Some(content) = message.get("content") {
                content_text(content, out, false);
            }
        }
    }
}

/// A `content` (a string or blocks): text and thinking as said (as output when `output`: a tool's
/// result), tool calls as calls.
fn content_text(content: &Value, out: &mut SearchText, output: bool) {
    let put = |out: &mut SearchText, s: &str| if output { out.output(s) } else { out.said(s) };
    match content {
        Value::String(s) => put(out, s),
        Value::Array(blocks) => {
            for block in blocks {
                match str_at(block, "type") {
                    Some("text") => put(out, str_at(block, "text").unwrap_or("")),
                    Some("thinking") => put(out, str_at(block, "thinking").unwrap_or("")),
                    Some("toolCall") => out.call(str_at(block, "name"), block.get("arguments")),
                    _ => {}
                }
            }
        }
        _ => {}
    }
}

/// The first words of a person's message, for a title: its text (blocks joined with spaces, as pi's
/// own session list shows it), not a bare slash command.
fn first_user_text(message: &Value) -> Option<String> {
    let text = match message.get("content")? {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter(|b| str_at(b, "type") == Some("text"))
            .filter_map(|b| str_at(b, "text"))
            .collect::<Vec<_>>()
            .join(" "),
        _ => return None,
    };
    let words = text.trim();
    let bare_command = words.starts_with('/') && !words.contains(char::is_whitespace);
    (!words.is_empty() && !bare_command).then(|| first_chars(words.to_owned(), 200))
}

/// The usage `usage` states, of the response `holder` (an assistant message; newer builds' compaction
/// or branch summary entry, or tool result). Keyed by what a fork copies verbatim and a v1 file's
/// rewrite as v3 keeps: the entry's time, the message's own time and the counts (entry ids are
/// only 8 hex digits, and v1 entries have none). A usage of no tokens (an aborted response) counts
/// nothing.
fn response_usage(usage: Option<&Value>, holder: &Value, timestamp: Option<&str>) -> Option<Usage> {
    let usage = usage.filter(|u| u.is_object())?;
    let tokens = tokens(usage);
    if tokens.total() == 0 {
        return None;
    }
    let started = match holder.get("timestamp") {
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
        None => String::new(),
    };
    Some(Usage {
        key: format!(
            "pi:{}:{started}:{}/{}/{}/{}",
            timestamp.unwrap_or(""),
            tokens.input,
            tokens.output,
            tokens.cache_read,
            tokens.cache_write
        ),
        model: str_at(holder, "model").filter(|m| !m.is_empty()).map(str::to_owned),
        timestamp: timestamp.map(str::to_owned),
        tokens,
        ..Usage::default()
    })
}

/// Pi's `usage`: `input` (uncached), `output` (reasoning included), `cacheRead`, `cacheWrite`. Where
/// its `totalTokens` says `input` already holds the cached tokens (Google's `promptTokenCount`,
/// which pi copies as it is: `totalTokens` is then `input + output + cacheWrite`, not the sum of
/// all four), they are taken out of it.
fn tokens(u: &Value) -> Tokens {
    let (input, output) = (usage::count(u, "input"), usage::count(u, "output"));
    let (cache_read, cache_write) = (usage::count(u, "cacheRead"), usage::count(u, "cacheWrite"));
    let total = u.get("totalTokens").map(|_| usage::count(u, "totalTokens"));
    let overlaps = cache_read > 0
        && total == Some(input.saturating_add(output).saturating_add(cache_write))
        && cache_read <= input;
    Tokens {
        input: if overlaps { input - cache_read } else { input },
        output,
        cache_read,
        cache_write,
        cache_write_1h: 0,
        reasoning: 0,
    }
}

/// A `content` as parts: a string, or `text`, `thinking`, `toolCall` and `image` blocks.
fn content_parts(content: &Value, out: &mut Vec<Part>) {
    match content {
        Value::String(s) if !s.trim().is_empty() => out.push(Part::Text(s.clone())),
        Value::Array(blocks) => {
            let null = Value::Null;
            for block in blocks {
                match str_at(block, "type") {
                    Some("text") => {
                        if let Some(t) = str_at(block, "text").filter(|t| !t.trim().is_empty()) {
                            out.push(Part::Text(t.to_owned()));
                        }
                    }
                    Some("thinking") => match str_at(block, "thinking").filter(|t| !t.trim().is_empty()) {
                        Some(t) => out.push(Part::Thinking(t.to_owned())),
                        None if block.get("redacted") == Some(&Value::Bool(true)) => {
                            out.push(Part::Thinking("(redacted)".to_owned()))
                        }
                        None => {}
                    },
                    Some("toolCall") => {
                        let name = str_at(block, "name").unwrap_or("tool");
                        let input = block.get("arguments").unwrap_or(&null);
                        out.push(Part::ToolCall(super::parts::tool_call_with_id(name, input, str_at(block, "id"))));
                    }
                    Some("image") => out.push(Part::Media(Media::image(block))),
                    _ => {}
                }
            }
        }
        _ => {}
    }
}

/// A message's parts, by its role.
fn message_parts(message: &Value, out: &mut Vec<Part>) {
    let null = Value::Null;
    let content = message.get("content").unwrap_or(&null);
    match str_at(message, "role") {
        Some("toolResult") => {
            let (mut texts, mut media) = (Vec::new(), Vec::new());
            match content {
                Value::String(s) => texts.push(s.clone()),
                Value::Array(blocks) => {
                    for block in blocks {
                        match str_at(block, "type") {
                            Some("text") => texts.extend(str_at(block, "text").map(str::to_owned)),
                            Some("image") => media.push(Media::image(block)),
                            _ => {}
                        }
                    }
                }
                _ => {}
            }
            out.push(Part::ToolResult {
                call: str_at(message, "toolCallId").map(str::to_owned),
                text: texts.join("\n"),
                error: message.get("isError") == Some(&Value::Bool(true)),
                label: None,
                media,
            });
        }
        Some("bashExecution") => {
            out.push(Part::Command { name: "!".to_owned(), args: str_at(message, "command").unwrap_or("").to_owned() });
            let failed = message.get("exitCode").and_then(Value::as_i64).is_some_and(|c| c != 0);
            if let Some(output) = str_at(message, "output").filter(|o| !o.is_empty()) {
                out.push(Part::Output { text: output.to_owned(), error: failed });
            }
            let flag = |key: &str| message.get(key) == Some(&Value::Bool(true));
            if flag("cancelled") {
                out.push(Part::Note("Cancelled.".to_owned()));
            } else if failed {
                let code = message.get("exitCode").and_then(Value::as_i64).unwrap_or_default();
                out.push(Part::Note(format!("Exit code {code}.")));
            }
            if flag("truncated") {
                out.push(Part::Note("Output truncated.".to_owned()));
            }
        }
        _ => {
            content_parts(content, out);
            if matches!(str_at(message, "stopReason"), Some("error" | "aborted")) {
                let reason = str_at(message, "errorMessage").filter(|e| !e.trim().is_empty());
                out.push(Part::Note(match (str_at(message, "stopReason"), reason) {
                    (Some("aborted"), None) => "Aborted.".to_owned(),
                    (_, Some(reason)) => format!("Error: {reason}"),
                    (_, None) => "Error.".to_owned(),
                }));
            }
        }
    }
}

/// A line's parts: a message's; an extension's message shown to the person; the notes a session's
/// start, a model change, a compaction, a branch summary and a title make. Bookkeeping (the
/// thinking level, an extension's state, labels) says nothing to a reader.
fn parts(line: &Value) -> Vec<Part> {
    let mut out = Vec::new();
    let null = Value::Null;
    let summary = |title: String| -> Part {
        let said = str_at(line, "summary").filter(|s| !s.trim().is_empty());
        Part::Group { title, parts: said.map(|s| vec![Part::Text(s.to_owned())]).unwrap_or_default() }
    };
    match str_at(line, "type") {
        Some("session") => {
            let mut words = vec![format!("Pi session {}", str_at(line, "id").unwrap_or("")).trim_end().to_owned()];
            words.extend(str_at(line, "cwd").filter(|c| !c.is_empty()).map(str::to_owned));
            if let Some(parent) = parent_of(line) {
                words.push(format!("forked from {parent}"));
            }
            out.push(Part::Note(words.join(" · ")));
        }
        Some("message") => message_parts(line.get("message").unwrap_or(&null), &mut out),
        Some("custom_message") if shown_message(line) => {
            content_parts(line.get("content").unwrap_or(&null), &mut out);
        }
        Some("model_change") => {
            let model = ["provider", "modelId"].iter().filter_map(|k| str_at(line, k)).collect::<Vec<_>>().join("/");
            out.push(Part::Note(format!("Model: {model}")));
        }
        Some("compaction") => {
            let before = line.get("tokensBefore").and_then(Value::as_u64);
            out.push(summary(match before {
                Some(n) => format!("Context compacted ({n} tokens before): the conversation so far, summarised"),
                None => "Context compacted: the conversation so far, summarised".to_owned(),
            }));
        }
        Some("branch_summary") => out.push(summary("Summary of the branch left".to_owned())),
        Some("session_info") => {
            if let Some(name) = str_at(line, "name").filter(|n| !n.trim().is_empty()) {
                out.push(Part::Note(format!("Title: {name}")));
            }
        }
        _ => {}
    }
    out
}

/// Whether an extension's message (`custom_message`) is shown to the person (`display`).
fn shown_message(line: &Value) -> bool {
    line.get("display") == Some(&Value::Bool(true))
}

/// Who said a line: the person (a message, a shell command), Pi (its responses), a tool (its
/// result), an extension (its shown messages), or nobody (a note); bookkeeping is not shown.
fn who(line: &Value) -> Option<Who> {
    match str_at(line, "type")? {
        "message" => {
            let message = line.get("message")?;
            Some(match str_at(message, "role")? {
                "user" | "bashExecution" => Who::new("You", Side::User),
                "assistant" => Who::new("Pi", Side::Assistant),
                "toolResult" => Who::new("Tool result", Side::Assistant),
                "custom" | "hookMessage" if message.get("display") != Some(&Value::Bool(false)) => {
                    Who::new(str_at(message, "customType").unwrap_or("Extension"), Side::Note)
                }
                _ => return None,
            })
        }
        "custom_message" if shown_message(line) => {
            Some(Who::new(str_at(line, "customType").unwrap_or("Extension"), Side::Note))
        }
        "session" | "model_change" | "compaction" | "branch_summary" | "session_info" => Some(Who::note()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The synthetic session of the facts (docs/formats.md), a line at a time.
    const HEADER: &str = r#"{"type":"session","version":3,"id":"019ca8d7-2d00-7c31-9d5e-2f6a8b1c3d4e","timestamp":"2026-03-01T10:00:00.000Z","cwd":"/home/ana/proj"}"#;
    const USER: &str = r#"{"type":"message","id":"c3d4e5f6","parentId":"b2c3d4e5","timestamp":"2026-03-01T10:00:05.120Z","message":{"role":"user","content":[{"type":"text","text":"Why does the build fail? See the screenshot."},{"type":"image","mimeType":"image/png","data":"/api/session-media/s/c3d4e5f6/0","url":"/api/session-media/s/c3d4e5f6/0"}],"timestamp":1772359205100}}"#;
    const ASSISTANT: &str = r#"{"type":"message","id":"d4e5f6a7","parentId":"c3d4e5f6","timestamp":"2026-03-01T10:00:09.400Z","message":{"role":"assistant","content":[{"type":"thinking","thinking":"Check package.json first.","thinkingSignature":"EqQB"},{"type":"text","text":"Let me look at package.json."},{"type":"toolCall","id":"toolu_01A","name":"read","arguments":{"path":"package.json"}}],"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5","usage":{"input":1200,"output":85,"cacheRead":0,"cacheWrite":3100,"totalTokens":4385},"stopReason":"toolUse","timestamp":1772359205130}}"#;
    const FAILED: &str = r#"{"type":"message","id":"a7b8c9d0","parentId":"f6a7b8c9","timestamp":"2026-03-01T10:00:12.030Z","message":{"role":"toolResult","toolCallId":"toolu_01B","toolName":"edit","content":[{"type":"text","text":"Could not find the exact text in src/main.ts."}],"details":{},"isError":true,"timestamp":1772359212025}}"#;
    const BASH: &str = r#"{"type":"message","id":"d0e1f2a3","parentId":"c9d0e1f2","timestamp":"2026-03-01T10:02:00.000Z","message":{"role":"bashExecution","command":"git status --short","output":" M src/main.ts\n","exitCode":0,"cancelled":false,"truncated":false,"timestamp":1772359320000}}"#;

    fn v(s: &str) -> Value {
        serde_json::from_str(s).unwrap()
    }

    fn context() -> FileContext {
        let path = Path::new("/h/.pi/agent/sessions/--home-ana-proj--/2026-03-01T10-00-00-000Z_019ca8d7.jsonl");
        Pi.file_context(path, &mut || Some(HEADER.to_owned()))
    }

    fn meta(line: &str, n: u64) -> Meta {
        Pi.describe(line, n, &context()).unwrap()
    }

    #[test]
    fn the_session_and_project_are_the_headers_and_a_fork_names_its_parent() {
        let c = context();
        assert_eq!(c.session, "019ca8d7-2d00-7c31-9d5e-2f6a8b1c3d4e");
        assert_eq!(c.project.as_deref(), Some("/home/ana/proj"));
        assert_eq!((c.forked_from, c.copies_before), (None, None));
        let path = Path::new("/s/--w--/2025-12-09T00-52-54-397Z_d97339c6-6c10-4827-846b-9ff1d9c3dc37.jsonl");
        assert_eq!(Pi.file_context(path, &mut || None).session, "d97339c6-6c10-4827-846b-9ff1d9c3dc37");
        assert_eq!(Pi.file_context(Path::new("/s/run-0/session.jsonl"), &mut || None).session, "session");
        let fork = r#"{"type":"session","version":3,"id":"child","timestamp":"2026-03-02T09:00:00.000Z","cwd":"/w","parentSession":"/h/.pi/agent/sessions/--w--/2026-03-01T10-00-00-000Z_parent-id.jsonl"}"#;
        let c = Pi.file_context(path, &mut || Some(fork.to_owned()));
        assert_eq!((c.session.as_str(), c.forked_from.as_deref()), ("child", Some("parent-id")));
        assert_eq!(c.copies_before.as_deref(), Some("2026-03-02T09:00:00.000Z"));
        let v1 = r#"{"type":"session","id":"old","timestamp":"t","cwd":"/w","branchedFrom":"C:\\Users\\ana\\.pi\\agent\\sessions\\--C--w--\\2025-12-08T22-41-05-306Z_first.jsonl"}"#;
        assert_eq!(Pi.file_context(path, &mut || Some(v1.to_owned())).forked_from.as_deref(), Some("first"));
        // A fork's copies (stamped before its header) are hidden, its own entries are not.
        let c = Pi.file_context(path, &mut || Some(fork.to_owned()));
        let copy = Pi.describe(USER, 3, &c).unwrap();
        assert_eq!((copy.hidden, copy.title, copy.text), (Some(hidden::FORK), None, None));
        let own = USER.replace("2026-03-01T10:00:05.120Z", "2026-03-02T09:00:01.000Z");
        assert_eq!(Pi.describe(&own, 9, &c).unwrap().hidden, None);
        assert_eq!(Pi.describe(fork, 1, &c).unwrap().forked_from.as_deref(), Some("parent-id"));
    }

    #[test]
    fn artifacts_are_not_transcripts_and_sub_agents_sessions_are() {
        assert!(Pi.is_transcript(Path::new("/s/--w--/2026-03-01T10-00-00-000Z_x.jsonl")));
        assert!(Pi.is_transcript(Path::new("/s/--w--/2026-03-01T10-00-00-000Z_x/run1/run-0/session.jsonl")));
        assert!(!Pi.is_transcript(Path::new("/s/--w--/subagent-artifacts/abc_events.jsonl")));
        assert!(!Pi.is_transcript(Path::new("/s/--w--/subagent-artifacts/permission-audit/a.jsonl")));
        assert!(!Pi.is_transcript(Path::new("/s/--w--/run-0/abc_transcript.jsonl")));
        assert!(!Pi.is_transcript(Path::new("/s/--w--/subagent-artifacts/abc_meta.json")));
    }

    #[test]
    fn every_entry_keeps_its_id_parent_kind_role_and_time() {
        let user = meta(USER, 4);
        assert_eq!(
            user.columns,
            Columns {
                uuid: Some("c3d4e5f6".into()),
                parent_uuid: Some("b2c3d4e5".into()),
                kind: Some("message".into()),
                role: Some("user".into()),
                timestamp: Some("2026-03-01T10:00:05.120Z".into()),
                is_sidechain: false,
            }
        );
        assert_eq!(
            user.title,
            Some((title_rank::FIRST_USER_TEXT, "Why does the build fail? See the screenshot.".into()))
        );
        let header = meta(HEADER, 1);
        assert_eq!((header.columns.kind.as_deref(), header.cwd.as_deref()), (Some("session"), Some("/home/ana/proj")));
        let root = meta(
            r#"{"type":"model_change","id":"a1b2c3d4","parentId":null,"timestamp":"t","provider":"anthropic","modelId":"claude-sonnet-4-5"}"#,
            2,
        );
        assert_eq!((root.columns.parent_uuid, root.model.as_deref()), (None, Some("claude-sonnet-4-5")));
        // A v1 entry has no id.
        let v1 =
            meta(r#"{"type":"message","timestamp":"t","message":{"role":"user","content":"hi","timestamp":1}}"#, 7);
        assert_eq!(v1.columns.uuid.as_deref(), Some("L7"));
        let named = meta(
            r#"{"type":"session_info","id":"c9d0e1f2","parentId":"b8c9d0e1","timestamp":"t","name":" Fix build import "}"#,
            10,
        );
        assert_eq!(named.title, Some((title_rank::CUSTOM, "Fix build import".into())));
    }

    #[test]
    fn usage_is_each_responses_keyed_by_what_a_fork_copies() {
        let m = meta(ASSISTANT, 5);
        assert_eq!(m.usage.len(), 1);
        let u = &m.usage[0];
        assert_eq!(u.tokens, Tokens { input: 1200, output: 85, cache_write: 3100, ..Tokens::default() });
        assert_eq!(u.model.as_deref(), Some("claude-sonnet-4-5"));
        assert_eq!(u.key, "pi:2026-03-01T10:00:09.400Z:1772359205130:1200/85/0/3100");
        assert_eq!(m.text.as_deref(), Some("Check package.json first.\nLet me look at package.json."));
        assert_eq!((m.tool_text.as_deref(), m.tools.as_deref()), (Some("package.json"), Some("read")));
        // Google's prompt count holds the cached tokens: its total says so.
        let google = tokens(&v(r#"{"input":1000,"output":50,"cacheRead":600,"cacheWrite":0,"totalTokens":1050}"#));
        assert_eq!((google.input, google.cache_read, google.total()), (400, 600, 1050));
        let openai = tokens(&v(r#"{"input":400,"output":50,"cacheRead":600,"cacheWrite":0,"totalTokens":1050}"#));
        assert_eq!((openai.input, openai.total()), (400, 1050));
        let aborted = ASSISTANT.replace(
            r#""input":1200,"output":85,"cacheRead":0,"cacheWrite":3100,"totalTokens":4385"#,
            r#""input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0"#,
        );
        assert!(meta(&aborted, 5).usage.is_empty());
        let compaction = r#"{"type":"compaction","id":"e1","parentId":"d1","timestamp":"t2","summary":"Goal: fix the build.","firstKeptEntryId":"c3d4e5f6","tokensBefore":50000,"usage":{"input":9000,"output":400,"cacheRead":0,"cacheWrite":0}}"#;
        let c = meta(compaction, 12);
        assert_eq!((c.usage.len(), c.text.as_deref()), (1, Some("Goal: fix the build.")));
    }

    #[test]
    fn results_and_shell_commands_are_searched_as_tool_text() {
        let failed = meta(FAILED, 7);
        assert_eq!(
            (failed.text, failed.tool_text.as_deref()),
            (None, Some("Could not find the exact text in src/main.ts."))
        );
        let bash = meta(BASH, 11);
        assert_eq!(bash.tool_text.as_deref(), Some("git status --short\nM src/main.ts"));
        assert_eq!(bash.tools.as_deref(), Some("!"));
    }

    #[test]
    fn each_kind_of_line_shows_as_pi_shows_it() {
        let user = v(USER);
        assert_eq!(Pi.who(&user, false), Some(Who::new("You", Side::User)));
        let photo = Media {
            image: true,
            url: Some("/api/session-media/s/c3d4e5f6/0".into()),
            mime_type: Some("image/png".into()),
            ..Media::default()
        };
        assert_eq!(
            Pi.parts(&user),
            [Part::Text("Why does the build fail? See the screenshot.".into()), Part::Media(photo)]
        );
        let typed = Pi.typed_input(None, false, &user).unwrap();
        assert_eq!((typed.text.as_str(), typed.images.len()), ("Why does the build fail? See the screenshot.", 1));
        let answer = v(ASSISTANT);
        assert_eq!(Pi.who(&answer, false), Some(Who::new("Pi", Side::Assistant)));
        assert_eq!(Pi.typed_input(None, false, &answer), None);
        match &Pi.parts(&answer)[..] {
            [Part::Thinking(t), Part::Text(said), Part::ToolCall(call)] => {
                assert_eq!((t.as_str(), said.as_str()), ("Check package.json first.", "Let me look at package.json."));
                assert_eq!((call.line().as_str(), call.id.as_deref()), ("read package.json", Some("toolu_01A")));
            }
            other => panic!("{other:?}"),
        }
        let failed = v(FAILED);
        assert_eq!(Pi.who(&failed, false), Some(Who::new("Tool result", Side::Assistant)));
        match &Pi.parts(&failed)[..] {
            [Part::ToolResult { call: Some(call), error: true, text, .. }] => {
                assert_eq!(
                    (call.as_str(), text.as_str()),
                    ("toolu_01B", "Could not find the exact text in src/main.ts.")
                );
            }
            other => panic!("{other:?}"),
        }
        let bash = v(BASH);
        assert_eq!(Pi.who(&bash, false), Some(Who::new("You", Side::User)));
        assert_eq!(
            Pi.parts(&bash),
            [
                Part::Command { name: "!".into(), args: "git status --short".into() },
                Part::Output { text: " M src/main.ts\n".into(), error: false }
            ]
        );
        let error = v(
            r#"{"type":"message","id":"e","parentId":"d","timestamp":"t","message":{"role":"assistant","content":[],"stopReason":"error","errorMessage":"overloaded","usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0}}}"#,
        );
        assert_eq!(Pi.parts(&error), [Part::Note("Error: overloaded".into())]);
        assert_eq!(
            Pi.parts(&v(HEADER)),
            [Part::Note("Pi session 019ca8d7-2d00-7c31-9d5e-2f6a8b1c3d4e · /home/ana/proj".into())]
        );
        let model = v(
            r#"{"type":"model_change","id":"a","parentId":null,"timestamp":"t","provider":"anthropic","modelId":"claude-sonnet-4-5"}"#,
        );
        assert_eq!(
            (Pi.who(&model, false), Pi.parts(&model)),
            (Some(Who::note()), vec![Part::Note("Model: anthropic/claude-sonnet-4-5".into())])
        );
        let compaction = v(
            r#"{"type":"compaction","id":"e1","parentId":"d1","timestamp":"t","summary":"Goal: fix the build.","firstKeptEntryId":"c3","tokensBefore":50000}"#,
        );
        assert_eq!(
            Pi.parts(&compaction),
            [Part::Group {
                title: "Context compacted (50000 tokens before): the conversation so far, summarised".into(),
                parts: vec![Part::Text("Goal: fix the build.".into())]
            }]
        );
        let shown = v(
            r#"{"type":"custom_message","id":"f","parentId":"e","timestamp":"t","customType":"todo","content":"3 items left","display":true}"#,
        );
        assert_eq!(
            (Pi.who(&shown, false), Pi.parts(&shown)),
            (Some(Who::new("todo", Side::Note)), vec![Part::Text("3 items left".into())])
        );
        for nobody in [
            r#"{"type":"custom_message","id":"f","parentId":"e","timestamp":"t","customType":"todo","content":"x","display":false}"#,
            r#"{"type":"thinking_level_change","id":"b","parentId":"a","timestamp":"t","thinkingLevel":"medium"}"#,
            r#"{"type":"custom","id":"g","parentId":"f","timestamp":"t","customType":"x","data":{}}"#,
            r#"{"type":"label","id":"h","parentId":"g","timestamp":"t","targetId":"c3","label":"here"}"#,
        ] {
            assert_eq!(Pi.who(&v(nobody), false), None, "{nobody}");
            assert!(Pi.parts(&v(nobody)).is_empty(), "{nobody}");
        }
    }

    #[test]
    fn the_default_roots_follow_pis_own_variables() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |name: &str| pairs.iter().find(|(k, _)| *k == name).map(|(_, v)| OsString::from(v))
        };
        assert_eq!(Pi.default_roots(&env(&[("HOME", "/h")])), [PathBuf::from("/h/.pi/agent/sessions")]);
        assert_eq!(
            Pi.default_roots(&env(&[("HOME", "/h"), ("PI_CODING_AGENT_DIR", "~/pi")])),
            [PathBuf::from("/h/pi/sessions")]
        );
        assert_eq!(
            Pi.default_roots(&env(&[("HOME", "/h"), ("PI_CODING_AGENT_SESSION_DIR", "/elsewhere")])),
            [PathBuf::from("/h/.pi/agent/sessions"), PathBuf::from("/elsewhere")]
        );
        assert!(Pi.default_roots(&env(&[])).is_empty());
        assert_eq!(Pi.resume_command("019ca8d7").as_deref(), Some("pi --session 019ca8d7"));
    }
}
