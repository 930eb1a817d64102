//! Codex CLI's rollouts (`$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<thread id>.jsonl`, and
//! the same names in `$CODEX_HOME/archived_sessions/`).
//!
//! Every line is `{timestamp, type, payload}` (openai/codex, `codex-rs/protocol`'s `RolloutLine`
//! and `RolloutItem`):
//! - `session_meta`: the thread's id, `cwd`, CLI version, model provider, git; a fork's first line
//!   names its parent (`forked_from_id`);
//! - `response_item`: what the model saw and said: `message` (`input_text`, `output_text` and
//!   `input_image` blocks), `reasoning` (its summary), `function_call` / `custom_tool_call` /
//!   `local_shell_call` and their outputs (a string, or content items with `input_image` among
//!   them), `web_search_call`;
//! - `event_msg`: what the UI showed, repeating the messages (`user_message`, `agent_message`,
//!   `agent_reasoning`) and tool ends (`exec_command_end`, `patch_apply_end`), and the token counts;
//! - `compacted` (a summary that replaced the history) and `turn_context` (each turn's cwd, model).
//!
//! Lines carry no id: an entry's is `L<line>`. The UI events that repeat a
//! conversation item are indexed hidden ([`hidden::REPEAT`]) and not searched, so nothing shows or
//! matches twice. A fork that copies its parent's history (a second `session_meta` after the first,
//! with the parent's lines verbatim) has those lines hidden as copies ([`hidden::FORK`]): the ones
//! stamped before the fork's own first line. Photos are `input_image` data URLs, in user messages and
//! in tool outputs, and MCP image content (`{type: "image", data, mimeType}`); the event's `images`
//! list repeats the user's.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::{
    BlockPlaces, Columns, FileContext, Format, Media, Meta, MetaError, Part, SearchText, Side, Twin, Typed, Usage, Who,
    first_chars, hidden, line_id, parse_object, str_at, title_rank, usage, value_text, without_injected,
};

/// Codex CLI's format.
#[derive(Debug, Clone, Copy, Default)]
pub struct Codex;

/// Image blocks are numbered anywhere in the payload: message content, tool outputs, MCP results,
/// a compaction's replacement history.
static BLOCK_PLACES: BlockPlaces = BlockPlaces::new(&[&["payload"]]);

/// The UI events that repeat a conversation item: hidden, not searched.
const REPEATED_EVENTS: &[&str] = &[
    "user_message",
    "agent_message",
    "agent_reasoning",
    "agent_reasoning_raw_content",
    "exec_command_end",
    "patch_apply_end",
    "web_search_end",
];

impl Format for Codex {
    fn name(&self) -> &'static str {
        "codex"
    }

    fn display_name(&self) -> &'static str {
        "Codex"
    }

    /// `rollout-*.jsonl`.
    fn is_transcript(&self, path: &Path) -> bool {
        path.file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with("rollout-") && (n.ends_with(".jsonl") || n.ends_with(".jsonl.zst")))
    }

    /// `X.jsonl.zst` for `X.jsonl`, and `X.jsonl` (the plain one) for `X.jsonl.zst`: Codex
    /// recompresses cold rollouts, writing the new name whole before it deletes the old one, and
    /// decompresses them again the same way.
    fn twin(&self, path: &Path) -> Option<Twin> {
        let name = path.file_name()?.to_str()?;
        if let Some(plain) = name.strip_suffix(".jsonl.zst") {
            Some(Twin { path: path.with_file_name(format!("{plain}.jsonl")), plain: true })
        } else {
            name.ends_with(".jsonl").then(|| Twin { path: path.with_file_name(format!("{name}.zst")), plain: false })
        }
    }

    fn block_places(&self) -> &'static BlockPlaces {
        &BLOCK_PLACES
    }

    /// The thread id from the first line's `session_meta` (else the one that ends the file's name),
    /// and, for a fork, its parent and the instant of its first line.
    fn file_context(&self, path: &Path, first_line: &mut dyn FnMut() -> Option<String>) -> FileContext {
        let mut context = FileContext { session: session_from_name(path), ..FileContext::default() };
        let Some(first) = first_line().and_then(|l| serde_json::from_str::<Value>(&l).ok()) else {
            return context;
        };
        if str_at(&first, "type") != Some("session_meta") {
            return context;
        }
        let payload = first.get("payload").unwrap_or(&Value::Null);
        if let Some(id) = str_at(payload, "id").filter(|id| !id.is_empty()) {
            context.session = id.to_owned();
        }
        if let Some(parent) = str_at(payload, "forked_from_id").filter(|p| !p.is_empty()) {
            context.forked_from = Some(parent.to_owned());
            context.copies_before = str_at(&first, "timestamp").map(str::to_owned);
        }
        context
    }

    /// 0: a rollout is its thread's one transcript (its compressed twin is the same file's row,
    /// moved; see [`Format::twin`]).
    fn file_key(&self, _path: &Path, _session: &str) -> i64 {
        0
    }

    fn describe(&self, stripped: &str, line: u64, file: &FileContext) -> Result<Meta, MetaError> {
        let top = parse_object(stripped)?;
        Ok(describe(&top, line, file))
    }

    /// A user `message` item's text blocks (without the injected context) and `input_image`s.
    fn typed_input(&self, _kind: Option<&str>, _is_sidechain: bool, line: &Value) -> Option<Typed> {
        let payload = line.get("payload")?;
        if str_at(line, "type") != Some("response_item")
            || str_at(payload, "type") != Some("message")
            || str_at(payload, "role") != Some("user")
        {
            return None;
        }
        let mut texts = Vec::new();
        let mut images = Vec::new();
        for block in payload.get("content")?.as_array()? {
            match str_at(block, "type") {
                Some("input_text") => {
                    let text = str_at(block, "text").unwrap_or("");
                    if is_injected(text) {
                        if texts.is_empty() && images.is_empty() && !is_image_wrapper(text) {
                            // A message of injected context only.
                            return None;
                        }
                        continue;
                    }
                    texts.push(text);
                }
                Some("input_image") => images.push(str_at(block, "blake3").map(str::to_owned)),
                _ => {}
            }
        }
        let typed = Typed { text: texts.join("\n"), images };
        (!typed.text.trim().is_empty() || !typed.images.is_empty()).then_some(typed)
    }

    /// A `token_count` event's `total_token_usage` and `last_token_usage`, and the model a
    /// `turn_context` names.
    fn usage_markers(&self) -> &'static [&'static str] {
        &["usage", "turn_context"]
    }

    fn parts(&self, line: &Value) -> Vec<Part> {
        parts(line)
    }

    fn who(&self, line: &Value, _is_sidechain: bool) -> Option<Who> {
        who(line)
    }

    /// `codex resume ID`.
    fn resume_command(&self, id: &str) -> Option<String> {
        Some(format!("codex resume {}", super::shell_word(id)))
    }

    /// `$CODEX_HOME/sessions` and `$CODEX_HOME/archived_sessions`, else the same under `~/.codex`.
    fn default_roots(&self, var: &dyn Fn(&str) -> Option<OsString>) -> Vec<PathBuf> {
        let nonempty = |name: &str| var(name).filter(|v| !v.is_empty()).map(PathBuf::from);
        let home = match nonempty("CODEX_HOME") {
            Some(home) => home,
            None => match nonempty("HOME") {
                Some(home) => home.join(".codex"),
                None => return Vec::new(),
            },
        };
        vec![home.join("sessions"), home.join("archived_sessions")]
    }
}

/// The thread id that ends a rollout's name (`rollout-<time>-<uuid>.jsonl[.zst]`), else the name
/// without its extensions.
fn session_from_name(path: &Path) -> String {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let stem = name.strip_suffix(".zst").unwrap_or(&name);
    let stem = stem.strip_suffix(".jsonl").unwrap_or(stem);
    let uuid = stem.len().checked_sub(36).and_then(|at| stem.get(at..));
    match uuid {
        Some(id)
            if id.bytes().filter(|&b| b == b'-').count() == 4
                && id.bytes().all(|b| b.is_ascii_hexdigit() || b == b'-') =>
        {
            id.to_owned()
        }
        _ => stem.to_owned(),
    }
}

/// Whether a user `input_text` block is context Codex put there, not the person's words: the
/// environment, AGENTS.md and permission instructions, an image's `<image>` wrapper.
fn is_injected(text: &str) -> bool {
    let t = text.trim_start();
    t.starts_with("# AGENTS.md instructions")
        || t.starts_with("<environment_context>")
        || t.starts_with("<user_instructions>")
        || t.starts_with("<permissions instructions>")
        || t.starts_with("<user_shell_command>")
        || t.starts_with("<turn_aborted>")
        || is_image_wrapper(t)
        || (t.starts_with('<') && without_injected(t).is_empty())
}

/// What the person wrote in a block the IDE extension framed (`# Context from my IDE setup:` …
/// `## My request for Codex:` then the request), else the block as it is.
fn own_words(text: &str) -> &str {
    const REQUEST: &str = "## My request for Codex:";
    match text.trim_start().starts_with("# Context from my IDE setup") {
        true => text.find(REQUEST).map_or(text, |at| &text[at + REQUEST.len()..]),
        false => text,
    }
}

/// `<image name=[Image #1]>` and `</image>`: the wrapper of a local image.
fn is_image_wrapper(text: &str) -> bool {
    let t = text.trim();
    (t.starts_with("<image") && t.ends_with('>') && !t.contains('\n')) || t == "</image>"
}

fn describe(top: &Map<String, Value>, line: u64, file: &FileContext) -> Meta {
    let str_of = |key: &str| top.get(key).and_then(Value::as_str);
    let kind = str_of("type");
    let timestamp = str_of("timestamp");
    let null = Value::Null;
    let payload = top.get("payload").unwrap_or(&null);
    let item = str_at(payload, "type");
    let mut text = SearchText::default();
    let mut meta = Meta {
        columns: Columns {
            uuid: Some(line_id(line)),
            kind: kind.map(str::to_owned),
            role: str_at(payload, "role").map(str::to_owned),
            timestamp: timestamp.map(str::to_owned),
            ..Columns::default()
        },
        ..Meta::default()
    };
    match kind {
        Some("session_meta") => {
            meta.cwd = str_at(payload, "cwd").map(str::to_owned);
            meta.git_branch = payload.get("git").and_then(|g| str_at(g, "branch")).map(str::to_owned);
            if line == 1 {
                meta.forked_from = file.forked_from.clone();
            }
        }
        Some("turn_context") => {
            meta.cwd = str_at(payload, "cwd").map(str::to_owned);
            meta.model = str_at(payload, "model").filter(|m| !m.is_empty()).map(str::to_owned);
        }
        Some("event_msg") if item == Some("token_count") => {
            meta.usage.extend(token_count(payload, &file.session, timestamp))
        }
        Some("response_item") => {
            item_text(payload, &mut text);
            if item == Some("message") && str_at(payload, "role") == Some("user") {
                meta.title = first_user_text(payload).map(|t| (title_rank::FIRST_USER_TEXT, t));
            }
        }
        Some("compacted") => {
            if let Some(message) = str_at(payload, "message") {
                text.said(message);
            }
        }
        Some("event_msg") if item.is_some_and(|i| REPEATED_EVENTS.contains(&i)) => {
            meta.hidden = Some(hidden::REPEAT);
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

/// A `token_count` event's usage: the thread's running total (`info.total_token_usage`), from
/// which the writer takes each response's increment, keyed by the session and that total (a
/// repeated snapshot is the same response). `info: null` (rate limits only) has none, nor has a
/// total of nothing.
fn token_count(payload: &Value, session: &str, timestamp: Option<&str>) -> Option<Usage> {
    let info = payload.get("info").filter(|i| i.is_object())?;
    let total = info.get("total_token_usage").filter(|t| t.is_object())?;
    let running = usage::openai(total);
    if running.total() == 0 {
        return None;
    }
    let last = info.get("last_token_usage").map(usage::openai).unwrap_or_default();
    Some(Usage {
        key: format!(
            "codex:{session}:{}/{}/{}/{}/{}",
            running.input, running.cache_read, running.cache_write, running.output, running.reasoning
        ),
        timestamp: timestamp.map(str::to_owned),
        tokens: last,
        running: Some(running),
        ..Usage::default()
    })
}

/// A line's parts: a `response_item`'s message (a person's own words: not the context Codex
/// injects), reasoning, tool call or output; an MCP tool's result; notes for the session's start,
/// a compaction, an interrupted turn and a web search. Other events and metadata say nothing to a
/// reader.
fn parts(line: &Value) -> Vec<Part> {
    let null = Value::Null;
    let payload = line.get("payload").unwrap_or(&null);
    let mut out = Vec::new();
    match (str_at(line, "type"), str_at(payload, "type")) {
        (Some("session_meta"), _) => out.push(Part::Note(session_note(payload))),
        (Some("compacted"), _) => {
            out.push(Part::Note("Context compacted: the conversation before this point was summarised.".into()))
        }
        (Some("event_msg"), Some("turn_aborted")) => out.push(Part::Note("Turn interrupted.".into())),
        (Some("event_msg"), Some("mcp_tool_call_end")) => {
            let content = payload.get("result").and_then(|r| r.get("Ok")).and_then(|ok| ok.get("content"));
            let parts = items(content.unwrap_or(&null), false);
            if !parts.is_empty() {
                out.push(Part::Group { title: "MCP result".into(), parts });
            }
        }
        (Some("response_item"), Some("message")) => {
            let user = str_at(payload, "role") == Some("user");
            out.extend(items(payload.get("content").unwrap_or(&null), user));
        }
        (Some("response_item"), Some("reasoning")) => {
            let texts = |key: &str| match payload.get(key) {
                Some(Value::Array(list)) => list.iter().filter_map(|i| str_at(i, "text")).collect::<Vec<_>>(),
                _ => Vec::new(),
            };
            // The summary, where there is one; else the reasoning as written.
            let mut said = texts("summary");
            if said.iter().all(|t| t.trim().is_empty()) {
                said = texts("content");
            }
            let text = said.join("\n\n");
            if !text.trim().is_empty() {
                out.push(Part::Thinking(text.trim_end().to_owned()));
            }
        }
        (Some("response_item"), Some("function_call" | "custom_tool_call")) => {
            let name = str_at(payload, "name").unwrap_or("tool");
            let input = payload.get("arguments").or_else(|| payload.get("input")).unwrap_or(&null);
            out.push(Part::ToolCall(super::parts::tool_call_with_id(name, input, str_at(payload, "call_id"))));
        }
        (Some("response_item"), Some("local_shell_call")) => {
            let action = payload.get("action").unwrap_or(&null);
            out.push(Part::ToolCall(super::parts::tool_call_with_id("shell", action, str_at(payload, "call_id"))));
        }
        (Some("response_item"), Some("web_search_call")) => {
            let query = payload.get("action").and_then(|a| str_at(a, "query")).unwrap_or("");
            out.push(Part::Note(format!("Web search: {query}")));
        }
        (Some("response_item"), Some("function_call_output" | "custom_tool_call_output")) => {
            let output = payload.get("output").unwrap_or(&null);
            let failed = output.get("success").and_then(Value::as_bool).is_some_and(|ok| !ok);
            // Older builds: `{content, success}`.
            let content = match output {
                Value::Object(o) => o.get("content").unwrap_or(&null),
                other => other,
            };
            let media: Vec<Media> = match content {
                Value::Array(items) => items
                    .iter()
                    .filter(|b| str_at(b, "type").is_some_and(|t| IMAGE_ITEMS.contains(&t)))
                    .map(Media::image)
                    .collect(),
                _ => Vec::new(),
            };
            let label = (!media.is_empty()).then(|| "Result (with a photo)".to_owned());
            let call = str_at(payload, "call_id").map(str::to_owned);
            out.push(Part::ToolResult { call, text: super::parts::result_text(output), error: failed, label, media });
        }
        _ => {}
    }
    out
}

/// Who said a line: the person (a user message), Codex (its messages, reasoning and tool calls),
/// a tool (its output, an MCP result), or nobody (a note); a developer's message, the UI's
/// events that repeat an item and metadata are not shown.
fn who(line: &Value) -> Option<Who> {
    let null = Value::Null;
    let payload = line.get("payload").unwrap_or(&null);
    match (str_at(line, "type"), str_at(payload, "type")) {
        (Some("session_meta" | "compacted"), _) | (Some("event_msg"), Some("turn_aborted")) => Some(Who::note()),
        (Some("event_msg"), Some("mcp_tool_call_end")) => Some(Who::new("Tool result", Side::Assistant)),
        (Some("response_item"), Some("message")) => match str_at(payload, "role") {
            Some("user") => Some(Who::new("You", Side::User)),
            Some("assistant") => Some(Who::new("Codex", Side::Assistant)),
            _ => None,
        },
        (Some("response_item"), Some("reasoning" | "function_call" | "custom_tool_call" | "local_shell_call")) => {
            Some(Who::new("Codex", Side::Assistant))
        }
        (Some("response_item"), Some("function_call_output" | "custom_tool_call_output")) => {
            Some(Who::new("Tool result", Side::Assistant))
        }
        (Some("response_item"), Some("web_search_call")) => Some(Who::note()),
        _ => None,
    }
}

/// The item types that are images: a user's `input_image`, an MCP tool's `image` content.
const IMAGE_ITEMS: &[&str] = &["input_image", "image"];

/// Message content or tool output items: text and photos. Of a user's, the context Codex injected
/// is left out, and of a block the IDE extension framed, only the request.
fn items(content: &Value, user: bool) -> Vec<Part> {
    let mut out = Vec::new();
    match content {
        Value::String(s) if !s.trim().is_empty() => out.push(Part::Text(s.clone())),
        Value::Array(blocks) => {
            for block in blocks {
                match str_at(block, "type") {
                    Some("input_text" | "output_text" | "text") => {
                        let Some(text) = str_at(block, "text") else { continue };
                        if is_image_wrapper(text) || (user && is_injected(text)) {
                            continue;
                        }
                        let text = if user { own_words(text).trim() } else { text };
                        if !text.trim().is_empty() {
                            out.push(Part::Text(text.to_owned()));
                        }
                    }
                    Some(t) if IMAGE_ITEMS.contains(&t) => out.push(Part::Media(Media::image(block))),
                    _ => {}
                }
            }
        }
        _ => {}
    }
    out
}

/// The note a session's first line makes: `Codex <version> · <cwd> · branch <branch>`, and the
/// session it was forked from.
fn session_note(payload: &Value) -> String {
    let version = format!("Codex {}", str_at(payload, "cli_version").unwrap_or("")).trim().to_owned();
    let mut words = vec![version];
    words.extend(str_at(payload, "cwd").filter(|c| !c.is_empty()).map(str::to_owned));
    words.extend(
        payload.get("git").and_then(|g| str_at(g, "branch")).filter(|b| !b.is_empty()).map(|b| format!("branch {b}")),
    );
    let mut note = words.join(" · ");
    if let Some(parent) = str_at(payload, "forked_from_id").filter(|p| !p.is_empty()) {
        note.push_str(&format!(" · forked from {parent}"));
    }
    note
}

/// The searchable text of a `response_item` payload: messages and reasoning as said, tool calls
/// (their names, their arguments' strings) and their output as tool text.
fn item_text(payload: &Value, out: &mut SearchText) {
    match str_at(payload, "type") {
        Some("message") => {
            if let Some(Value::Array(blocks)) = payload.get("content") {
                for block in blocks {
                    if let Some(t) = str_at(block, "text") {
                        out.said(t);
                    }
                }
            }
        }
        Some("reasoning") => {
            for key in ["summary", "content"] {
                if let Some(v) = payload.get(key) {
                    let mut said = String::new();
                    value_text(v, &mut said);
                    out.said(&said);
                }
            }
        }
        Some("function_call") => out.call_raw(str_at(payload, "name"), str_at(payload, "arguments")),
        Some("custom_tool_call") => out.call_raw(str_at(payload, "name"), str_at(payload, "input")),
        Some("function_call_output" | "custom_tool_call_output") => match payload.get("output") {
            Some(Value::Object(o)) => {
                // Older builds: `{content, success}`.
                if let Some(v) = o.get("content") {
                    out.output_value(v);
                }
            }
            Some(v) => out.output_value(v),
            None => {}
        },
        Some("local_shell_call") => {
            if let Some(Value::Array(command)) = payload.get("action").and_then(|a| a.get("command")) {
                let words: Vec<&str> = command.iter().filter_map(Value::as_str).collect();
                out.call(Some("shell"), Some(&Value::String(words.join(" "))));
            }
        }
        Some("web_search_call") => {
            let query = payload.get("action").and_then(|a| a.get("query"));
            out.call(Some("web_search"), query);
        }
        _ => {}
    }
}

/// The first words the person typed in a user `message` item: its first `input_text` block that
/// is not injected context.
fn first_user_text(payload: &Value) -> Option<String> {
    let blocks = payload.get("content")?.as_array()?;
    blocks
        .iter()
        .filter(|b| str_at(b, "type") == Some("input_text"))
        .filter_map(|b| str_at(b, "text"))
        .map(own_words)
        .find(|t| !is_injected(t) && !t.trim().is_empty())
        .map(|t| first_chars(t.trim().to_owned(), 200))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(line: &str, n: u64, file: &FileContext) -> Meta {
        Codex.describe(line, n, file).unwrap()
    }

    #[test]
    fn the_thread_id_comes_from_the_first_line_else_the_name() {
        let path =
            Path::new("/c/sessions/2026/05/11/rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl");
        let from_name = Codex.file_context(path, &mut || None);
        assert_eq!(from_name.session, "019e1625-789d-76c0-80ab-3724b5ddb799");
        let zst = Path::new("/c/rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl.zst");
        assert_eq!(Codex.file_context(zst, &mut || None).session, "019e1625-789d-76c0-80ab-3724b5ddb799");
        let fork = r#"{"timestamp":"2026-11-30T11:05:00.100Z","type":"session_meta","payload":{"id":"child","forked_from_id":"parent","cwd":"/w"}}"#;
        let context = Codex.file_context(path, &mut || Some(fork.to_owned()));
        assert_eq!(context.session, "child");
        assert_eq!(context.forked_from.as_deref(), Some("parent"));
        assert_eq!(context.copies_before.as_deref(), Some("2026-11-30T11:05:00.100Z"));
    }

    #[test]
    fn repeated_events_and_fork_copies_are_hidden_and_not_searched() {
        let file = FileContext {
            session: "child".into(),
            forked_from: Some("parent".into()),
            copies_before: Some("2026-11-30T11:05:00.100Z".into()),
            ..FileContext::default()
        };
        let event = r#"{"timestamp":"2026-11-30T11:06:00.000Z","type":"event_msg","payload":{"type":"user_message","message":"hi"}}"#;
        let m = meta(event, 20, &file);
        assert_eq!((m.hidden, m.text), (Some(hidden::REPEAT), None));
        let copied = r#"{"timestamp":"2026-11-30T11:00:00.104Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"List the Rust files."}]}}"#;
        let m = meta(copied, 6, &file);
        assert_eq!((m.hidden, m.title), (Some(hidden::FORK), None));
        let own = copied.replace("11:00:00.104Z", "11:05:00.202Z");
        let m = meta(&own, 16, &file);
        assert_eq!(m.hidden, None);
        assert_eq!(m.columns.uuid.as_deref(), Some("L16"));
        assert_eq!(m.title, Some((title_rank::FIRST_USER_TEXT, "List the Rust files.".into())));
    }

    #[test]
    fn the_git_branch_is_a_session_meta_lines() {
        let file = FileContext::default();
        let first = r#"{"timestamp":"2026-11-30T11:00:00.000Z","type":"session_meta","payload":{"id":"t","cwd":"/w","git":{"commit_hash":"abc","branch":"main"}}}"#;
        assert_eq!(meta(first, 1, &file).git_branch.as_deref(), Some("main"));
        let detached = r#"{"timestamp":"2026-11-30T11:00:00.000Z","type":"session_meta","payload":{"id":"t","git":{"commit_hash":"abc"}}}"#;
        assert_eq!(meta(detached, 1, &file).git_branch, None);
        let no_repository =
            r#"{"timestamp":"2026-11-30T11:00:00.000Z","type":"session_meta","payload":{"id":"t","git":null}}"#;
        assert_eq!(meta(no_repository, 1, &file).git_branch, None);
        let other = r#"{"timestamp":"2026-11-30T11:00:01.000Z","type":"turn_context","payload":{"cwd":"/w","git":{"branch":"x"}}}"#;
        assert_eq!(meta(other, 2, &file).git_branch, None);
    }

    #[test]
    fn injected_context_is_no_title_and_no_typed_input() {
        let file = FileContext::default();
        let env = r#"{"timestamp":"t","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"<environment_context>\n  <cwd>/w</cwd>\n</environment_context>"}]}}"#;
        assert_eq!(meta(env, 3, &file).title, None);
        assert_eq!(Codex.typed_input(None, false, &serde_json::from_str(env).unwrap()), None);
        let photo = r#"{"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"<image name=[Image #1]>"},{"type":"input_image","image_url":"x","blake3":"ab"},{"type":"input_text","text":"</image>"},{"type":"input_text","text":"What is this?"}]}}"#;
        let typed = Codex.typed_input(None, false, &serde_json::from_str(photo).unwrap()).unwrap();
        assert_eq!(typed, Typed { text: "What is this?".into(), images: vec![Some("ab".into())] });
        assert_eq!(meta(photo, 4, &file).title, Some((title_rank::FIRST_USER_TEXT, "What is this?".into())));
    }

    #[test]
    fn a_user_message_shows_the_persons_own_words_and_photos() {
        let v = |s: &str| serde_json::from_str::<Value>(s).unwrap();
        let env = v(
            r#"{"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"<environment_context>\n<cwd>/w</cwd>\n</environment_context>"}]}}"#,
        );
        assert!(Codex.parts(&env).is_empty(), "injected context only");
        let ide = v(r##"{"type":"response_item","payload":{"type":"message","role":"user","content":[
                {"type":"input_text","text":"# AGENTS.md instructions for /w\n\nBe brief."},
                {"type":"input_text","text":"<image name=[Image #1]>"},{"type":"input_image","image_url":"/api/session-media/s/L2/0","url":"/api/session-media/s/L2/0"},{"type":"input_text","text":"</image>"},
                {"type":"input_text","text":"# Context from my IDE setup:\n\n## Open tabs:\n- a.rs\n\n## My request for Codex:\nFix the **parser**\n"}]}}"##);
        assert_eq!(Codex.who(&ide, false), Some(Who::new("You", Side::User)));
        let photo = Media { image: true, url: Some("/api/session-media/s/L2/0".into()), ..Media::default() };
        assert_eq!(Codex.parts(&ide), [Part::Media(photo), Part::Text("Fix the **parser**".into())]);
        let developer = v(
            r#"{"type":"response_item","payload":{"type":"message","role":"developer","content":[{"type":"input_text","text":"<permissions instructions>"}]}}"#,
        );
        assert_eq!(Codex.who(&developer, false), None, "not shown");
    }

    #[test]
    fn outputs_notes_and_mcp_results_are_laid_out_as_the_viewer_shows_them() {
        let v = |s: &str| serde_json::from_str::<Value>(s).unwrap();
        let meta = v(
            r#"{"type":"session_meta","payload":{"id":"t","cwd":"/w","cli_version":"0.128.0","git":{"branch":"main"},"forked_from_id":"p"}}"#,
        );
        assert_eq!(Codex.who(&meta, false), Some(Who::note()));
        assert_eq!(Codex.parts(&meta), [Part::Note("Codex 0.128.0 · /w · branch main · forked from p".into())]);
        let search =
            v(r#"{"type":"response_item","payload":{"type":"web_search_call","action":{"query":"rust mcp"}}}"#);
        assert_eq!(Codex.parts(&search), [Part::Note("Web search: rust mcp".into())]);
        let aborted = v(r#"{"type":"event_msg","payload":{"type":"turn_aborted","reason":"interrupted"}}"#);
        assert_eq!(Codex.parts(&aborted), [Part::Note("Turn interrupted.".into())]);
        let output = v(
            r#"{"type":"response_item","payload":{"type":"function_call_output","call_id":"c","output":[{"type":"input_text","text":"chart.png"},{"type":"input_image","url":"/api/session-media/s/L4/0"}]}}"#,
        );
        assert_eq!(Codex.who(&output, false), Some(Who::new("Tool result", Side::Assistant)));
        match &Codex.parts(&output)[..] {
            [Part::ToolResult { text, error: false, label: Some(label), media, .. }] => {
                assert_eq!((text.as_str(), label.as_str(), media.len()), ("chart.png", "Result (with a photo)", 1));
            }
            other => panic!("{other:?}"),
        }
        let mcp = v(
            r#"{"type":"event_msg","payload":{"type":"mcp_tool_call_end","result":{"Ok":{"content":[{"type":"text","text":"42 rows"}]}}}}"#,
        );
        assert_eq!(Codex.who(&mcp, false), Some(Who::new("Tool result", Side::Assistant)));
        assert_eq!(
            Codex.parts(&mcp),
            [Part::Group { title: "MCP result".into(), parts: vec![Part::Text("42 rows".into())] }]
        );
        let call = v(
            r#"{"type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{\"command\":[\"bash\",\"-lc\",\"ls\"]}","call_id":"c"}}"#,
        );
        match &Codex.parts(&call)[..] {
            [Part::ToolCall(call)] => {
                assert_eq!(call.line(), "shell $ ls");
                assert_eq!(call.input["command"][2], "ls", "the input, as the value its JSON spells");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn tool_calls_and_outputs_are_searched() {
        let file = FileContext::default();
        let call = r#"{"type":"response_item","payload":{"type":"function_call","name":"exec_command","arguments":"{\"cmd\":\"rg --files\"}","call_id":"c1"}}"#;
        let described = meta(call, 2, &file);
        assert_eq!(described.tool_text.as_deref(), Some("rg --files"), "the arguments' strings, not their JSON");
        assert_eq!(described.tools.as_deref(), Some("exec_command"));
        assert_eq!(described.text, None);
        let output = r#"{"type":"response_item","payload":{"type":"function_call_output","call_id":"c1","output":[{"type":"input_text","text":"src/main.rs"},{"type":"input_image","image_url":"STRIPPED_MEDIA_MARKER"}]}}"#;
        assert_eq!(meta(output, 3, &file).tool_text.as_deref(), Some("src/main.rs"));
    }

    #[test]
    fn a_compressed_file_reads_from_any_offset_and_its_twin_is_named() {
        use crate::files::{decompress_to_scratch, decompressed_from, is_compressed, open_regular};
        use std::io::{self, Read, Seek};
        let dir = tempfile::tempdir().unwrap();
        let body: Vec<u8> = (0..200_000u32).flat_map(|i| format!("{{\"n\":{i}}}\n").into_bytes()).collect();
        let plain = dir.path().join("rollout-1.jsonl");
        let packed = dir.path().join("rollout-1.jsonl.zst");
        std::fs::write(&plain, &body).unwrap();
        std::fs::write(&packed, zstd::stream::encode_all(&body[..], 3).unwrap()).unwrap();
        let file = open_regular(&packed).unwrap();
        assert!(is_compressed(&file).unwrap());
        assert!(!is_compressed(&open_regular(&plain).unwrap()).unwrap());
        let mut rest = Vec::new();
        decompressed_from(&file, 1_000_001).unwrap().read_to_end(&mut rest).unwrap();
        assert_eq!(rest, body[1_000_001..]);
        let too_far = decompressed_from(&file, body.len() as u64 + 1).err().expect("past the end");
        assert_eq!(too_far.kind(), io::ErrorKind::UnexpectedEof);
        let mut scratch = decompress_to_scratch(&file, dir.path(), Default::default()).unwrap();
        let mut all = Vec::new();
        scratch.rewind().unwrap();
        scratch.read_to_end(&mut all).unwrap();
        assert_eq!(all, body);
        assert_eq!(Codex.twin(&plain), Some(Twin { path: packed.clone(), plain: false }));
        assert_eq!(Codex.twin(&packed), Some(Twin { path: plain.clone(), plain: true }));
        assert_eq!(Codex.twin(&dir.path().join("a.json")), None);
    }
}
