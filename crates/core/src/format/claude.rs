//! Claude Code's transcripts (and the Claude Agent SDK's, which writes the same).
//!
//! One JSON object a line, each with its `type`, `uuid`, `parentUuid`, `sessionId`, `timestamp`,
//! `cwd`, `gitBranch` and `isSidechain`; the conversation's messages under `message` (`role`, and
//! `content` as a string or blocks: `text`, `thinking`, `tool_use`, `tool_result`, `image`,
//! `document`), photos as base64 image blocks under `message.content` (tool results included). A
//! session is `<project>/<sessionId>.jsonl`, its sub-agents' transcripts
//! `<sessionId>/subagents/agent-<id>.jsonl` (or `agent-<id>.jsonl` beside it). Titles come from
//! `custom-title`, `ai-title` and `summary` lines, else from the person's first words.
//!
//! A line is read in one pass that borrows from it: only the fields the index keeps are looked at,
//! everything else is skipped as it is validated (the helpers of `format/loose.rs`).

use std::borrow::Cow;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;
use serde_json::value::RawValue;

use super::loose::{Key, LooseStr, LooseTrue, Str, skip_scalars, skip_seq, skip_strings};
use super::{
    BlockPlaces, Columns, FileContext, Format, Media, Meta, MetaError, Part, SearchText, Side, Typed, Usage, Who,
    first_chars, str_at, title_rank, usage, without_injected,
};

/// Claude Code's format.
#[derive(Debug, Clone, Copy, Default)]
pub struct Claude;

/// Image blocks are numbered under `message.content`.
static BLOCK_PLACES: BlockPlaces = BlockPlaces::new(&[&["message", "content"]]);

impl Format for Claude {
    fn name(&self) -> &'static str {
        "claude"
    }

    fn display_name(&self) -> &'static str {
        "Claude Code"
    }

    /// Every `*.jsonl` file.
    fn is_transcript(&self, path: &Path) -> bool {
        path.extension().is_some_and(|e| e == "jsonl")
    }

    fn block_places(&self) -> &'static BlockPlaces {
        &BLOCK_PLACES
    }

    /// The session the file's name gives; lines name their own.
    fn file_context(&self, path: &Path, _first_line: &mut dyn FnMut() -> Option<String>) -> FileContext {
        FileContext { session: session_from_path(path), ..FileContext::default() }
    }

    fn file_key(&self, path: &Path, session: &str) -> i64 {
        file_key(path, session)
    }

    fn describe(&self, stripped: &str, _line: u64, _file: &FileContext) -> Result<Meta, MetaError> {
        describe(stripped)
    }

    fn typed_input(&self, kind: Option<&str>, is_sidechain: bool, line: &Value) -> Option<Typed> {
        typed_input(kind, is_sidechain, line)
    }

    /// An assistant line's `message.usage`.
    fn usage_markers(&self) -> &'static [&'static str] {
        &["usage"]
    }

    fn parts(&self, line: &Value) -> Vec<Part> {
        parts(line)
    }

    fn who(&self, line: &Value, is_sidechain: bool) -> Option<Who> {
        who(line, is_sidechain)
    }

    /// `claude --resume ID` (run in the session's project directory, where Claude Code looks for it).
    fn resume_command(&self, id: &str) -> Option<String> {
        Some(format!("claude --resume {}", super::shell_word(id)))
    }

    /// `$CLAUDE_CONFIG_DIR/projects`, else `~/.claude/projects`.
    fn default_roots(&self, var: &dyn Fn(&str) -> Option<OsString>) -> Vec<PathBuf> {
        let nonempty = |name: &str| var(name).filter(|v| !v.is_empty()).map(PathBuf::from);
        match nonempty("CLAUDE_CONFIG_DIR") {
            Some(config) => vec![config.join("projects")],
            None => nonempty("HOME").map(|home| home.join(".claude/projects")).into_iter().collect(),
        }
    }
}

/// A line's parts: a message's content blocks (a queued message's prompt), or the note a summary,
/// title or system line makes. Other lines (progress, snapshots, bookkeeping) say nothing to a
/// reader.
fn parts(line: &Value) -> Vec<Part> {
    let mut out = Vec::new();
    let note = |label: &str, key: &str| -> Option<Part> {
        let s = str_at(line, key).filter(|s| !s.trim().is_empty())?;
        Some(Part::Note(if label.is_empty() { s.to_owned() } else { format!("{label}: {s}") }))
    };
    match str_at(line, "type") {
        Some("summary") => out.extend(note("Summary", "summary")),
        Some("custom-title") => out.extend(note("Title", "customTitle")),
        Some("ai-title") => out.extend(note("Title", "aiTitle")),
        Some("system") => out.extend(note("", "content")),
        Some("user" | "assistant") => {
            if let Some(content) = line.get("message").and_then(|m| m.get("content")) {
                content_parts(content, &mut out);
            }
        }
        Some("attachment") => {
            if let Some(prompt) = queued_prompt(line) {
                content_parts(prompt, &mut out);
            }
        }
        _ => {}
    }
    out
}

/// The prompt of an `attachment` line that is a message sent while the agent was busy.
fn queued_prompt(line: &Value) -> Option<&Value> {
    let attachment = line.get("attachment")?;
    if str_at(attachment, "type") != Some("queued_command") {
        return None;
    }
    attachment.get("prompt")
}

/// Whether a message's content holds a tool's result (a `user` line that is no person's words).
fn holds_tool_result(line: &Value) -> bool {
    match line.get("message").and_then(|m| m.get("content")) {
        Some(Value::Array(blocks)) => blocks.iter().any(|b| str_at(b, "type") == Some("tool_result")),
        _ => false,
    }
}

/// The block types that are images.
const IMAGE_BLOCKS: &[&str] = &["image", "image_url", "input_image"];

/// The parts of a message's content: a string, or blocks (text, images, documents, thinking, tool
/// calls and results).
pub(super) fn content_parts(content: &Value, out: &mut Vec<Part>) {
    let blocks = match content {
        Value::String(s) => {
            harness_text(s, out);
            return;
        }
        Value::Array(blocks) => blocks,
        _ => return,
    };
    let null = Value::Null;
    for block in blocks {
        match str_at(block, "type") {
            Some("text") => {
                if let Some(t) = str_at(block, "text") {
                    harness_text(t, out);
                }
            }
            Some(kind) if IMAGE_BLOCKS.contains(&kind) => out.push(Part::Media(Media::image(block))),
            Some("document") => out.push(Part::Media(Media::file(block.get("source").unwrap_or(block)))),
            Some("thinking") => {
                if let Some(t) = str_at(block, "thinking").filter(|t| !t.trim().is_empty()) {
                    out.push(Part::Thinking(t.to_owned()));
                }
            }
            Some("redacted_thinking") => out.push(Part::Thinking("(redacted)".to_owned())),
            Some("tool_use" | "server_tool_use") => {
                let name = str_at(block, "name").unwrap_or("tool");
                let input = block.get("input").unwrap_or(&null);
                out.push(Part::ToolCall(super::parts::tool_call_with_id(name, input, str_at(block, "id"))));
            }
            Some("tool_result" | "web_search_tool_result") => {
                let content = block.get("content").unwrap_or(&null);
                let media = match content {
                    Value::Array(inner) => inner
                        .iter()
                        .filter(|b| str_at(b, "type").is_some_and(|t| IMAGE_BLOCKS.contains(&t)))
                        .map(Media::image)
                        .collect(),
                    _ => Vec::new(),
                };
                // The reminders the harness appends to a result (after a file it read) are no part of it.
                let text = super::parts::result_text(content);
                let (text, reminders) = trailing_context(&text);
                out.push(Part::ToolResult {
                    call: str_at(block, "tool_use_id").map(str::to_owned),
                    text: text.to_owned(),
                    error: block.get("is_error").and_then(Value::as_bool).unwrap_or(false),
                    label: None,
                    media,
                });
                out.extend(reminders);
            }
            _ => {}
        }
    }
}

/// The tags Claude Code wraps a slash command in: its name, the message it shows, its arguments.
const COMMAND_PARTS: &[&str] = &["command-name", "command-message", "command-args"];

/// What to call the context in a tag the harness wrote, where the tag's name does not say it well.
fn context_label(tag: &str) -> String {
    match tag {
        "ide_selection" => "IDE selection".to_owned(),
        "ide_opened_file" => "Opened in the IDE".to_owned(),
        "system-reminder" => "System reminder".to_owned(),
        "local-command-caveat" => "Caveat".to_owned(),
        "task-notification" => "Task notification".to_owned(),
        "user-prompt-submit-hook" => "Hook output".to_owned(),
        other => {
            let words = other.replace(['-', '_'], " ");
            let mut chars = words.chars();
            chars.next().map(|c| c.to_uppercase().chain(chars).collect()).unwrap_or_default()
        }
    }
}

/// How the caveat Claude Code puts before a local command's messages begins: tagged
/// (`<local-command-caveat>`) in newer versions, bare text in a meta message of its own in older ones.
const CAVEAT: &str = "Caveat: The messages below were generated by the user while running local commands.";

/// A text block of a message, as what it is: the harness's tagged blocks at its start (a slash
/// command, what a local command printed, an IDE selection, a system reminder…) each as its own
/// part, then what the person or the model wrote, then the reminders the harness appended.
fn harness_text(text: &str, out: &mut Vec<Part>) {
    let mut rest = text.trim();
    // A slash command's tags, gathered until the next other block: (name, message, args).
    let mut command: Option<(String, String, String)> = None;
    let flush = |command: &mut Option<(String, String, String)>, out: &mut Vec<Part>| {
        if let Some((name, message, args)) = command.take() {
            let name = if name.is_empty() { message } else { name };
            out.push(Part::Command { name, args });
        }
    };
    while let Some(name) = super::injected_tag(rest) {
        let close = format!("</{name}>");
        let (Some(open_end), Some(at)) = (rest.find('>'), rest.find(&close)) else { break };
        if open_end >= at {
            break;
        }
        let inner = rest[open_end + 1..at].trim();
        if COMMAND_PARTS.contains(&name) {
            let c = command.get_or_insert_with(Default::default);
            let slot = match name {
                "command-name" => &mut c.0,
                "command-message" => &mut c.1,
                _ => &mut c.2,
            };
            *slot = inner.to_owned();
        } else {
            flush(&mut command, out);
            match name {
                "local-command-stdout" | "bash-stdout" => {
                    out.push(Part::Output { text: inner.to_owned(), error: false });
                }
                "local-command-stderr" | "bash-stderr" => {
                    if !inner.is_empty() {
                        out.push(Part::Output { text: inner.to_owned(), error: true });
                    }
                }
                "bash-input" => out.push(Part::Command { name: "!".to_owned(), args: inner.to_owned() }),
                _ if inner.is_empty() => {}
                other => out.push(Part::Context { label: context_label(other), text: inner.to_owned() }),
            }
        }
        rest = rest[at + close.len()..].trim_start();
    }
    flush(&mut command, out);
    if rest.starts_with(CAVEAT) {
        // Older versions write the caveat as a meta message of its own, untagged.
        out.push(Part::Context { label: context_label("local-command-caveat"), text: rest.to_owned() });
        return;
    }
    let (said, reminders) = trailing_context(rest);
    if !said.trim().is_empty() {
        out.push(Part::Text(said.to_owned()));
    }
    out.extend(reminders);
}

/// `text` without the `<system-reminder>` blocks at its end, and those blocks as context parts.
fn trailing_context(text: &str) -> (&str, Vec<Part>) {
    const OPEN: &str = "<system-reminder>";
    const CLOSE: &str = "</system-reminder>";
    let mut rest = text.trim_end();
    let mut found = Vec::new();
    while rest.ends_with(CLOSE) {
        let Some(open) = rest.rfind(OPEN) else { break };
        let inner = rest[open + OPEN.len()..rest.len() - CLOSE.len()].trim();
        if !inner.is_empty() {
            found.push(Part::Context { label: context_label("system-reminder"), text: inner.to_owned() });
        }
        rest = rest[..open].trim_end();
    }
    found.reverse();
    (rest, found)
}

/// Whether a `user` line is what a local command printed (Claude Code writes it as the person's
/// message, wrapped in `<local-command-stdout>` or `<bash-stdout>`): nobody's words.
fn is_command_output(line: &Value) -> bool {
    let t = only_text(line).trim_start();
    ["<local-command-stdout>", "<local-command-stderr>", "<bash-stdout>", "<bash-stderr>"]
        .iter()
        .any(|tag| t.starts_with(tag))
}

/// Whether a `user` line is only the caveat the harness puts before a local command's messages
/// (tagged or not): nobody's words.
fn is_caveat(line: &Value) -> bool {
    let t = only_text(line).trim_start();
    t.starts_with(CAVEAT)
        || t.strip_prefix("<local-command-caveat>").is_some_and(|t| t.trim_start().starts_with(CAVEAT))
}

/// A message's text when it is one string or one block, else "".
fn only_text(line: &Value) -> &str {
    match line.get("message").and_then(|m| m.get("content")) {
        Some(Value::String(s)) => s.as_str(),
        Some(Value::Array(blocks)) if blocks.len() == 1 => str_at(&blocks[0], "text").unwrap_or(""),
        _ => "",
    }
}

/// Who said a line: the person (`You`; on a side chain, what was sent `To the sub-agent`), the
/// assistant (its tool results too), a queued message's sender, or nobody (a note).
fn who(line: &Value, is_sidechain: bool) -> Option<Who> {
    match str_at(line, "type") {
        Some("user") if is_command_output(line) => Some(Who::new("Command output", Side::Note)),
        Some("user") if is_caveat(line) => Some(Who::note()),
        Some(kind @ ("user" | "assistant")) => {
            let mine = kind == "user" && !holds_tool_result(line);
            let name = match (is_sidechain, mine) {
                (true, true) => "To the sub-agent",
                (true, false) => "Sub-agent",
                (false, true) => "You",
                (false, false) => "Assistant",
            };
            Some(Who::new(name, if mine { Side::User } else { Side::Assistant }))
        }
        Some("attachment") if queued_prompt(line).is_some() => Some(Who::new("You (queued)", Side::User)),
        Some("summary" | "custom-title" | "ai-title" | "system") => Some(Who::note()),
        _ => None,
    }
}

/// The session id a file's name gives: `<sessionId>.jsonl`, and for a sub-agent's transcript
/// `<sessionId>/subagents/agent-<id>.jsonl`, its session's. (Lines that name their `sessionId`
/// belong to that session whatever the file's name.)
fn session_from_path(path: &Path) -> String {
    let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let mut up = path.ancestors().skip(1).filter_map(Path::file_name);
    match (up.next(), up.next()) {
        (Some(dir), Some(session)) if stem.starts_with("agent-") && dir == "subagents" => {
            session.to_string_lossy().into_owned()
        }
        _ => stem,
    }
}

/// The `file` part of the order of an entry of session `session` in the file at `path`: 0 when the
/// file is that session's main transcript (`<session>.jsonl`), else from a hash of the file's name.
fn file_key(path: &Path, session: &str) -> i64 {
    if path.file_stem().is_some_and(|stem| stem.as_encoded_bytes() == session.as_bytes()) {
        return 0;
    }
    super::name_key(path)
}

/// The column values and search text of a stored (stripped) line, read in one pass that borrows
/// from the line: only the fields the index keeps are looked at, everything else is skipped as it
/// is validated. A field of an unexpected JSON type counts as absent, and of a key given twice the
/// last wins, as with any JSON object.
fn describe(stripped: &str) -> Result<Meta, MetaError> {
    let mut de = serde_json::Deserializer::from_str(stripped);
    let fields = match Top::deserialize(&mut de).and_then(|f| de.end().map(|()| f)) {
        Ok(Top(Some(fields))) => fields,
        Ok(Top(None)) => return Err(MetaError::NotObject),
        Err(e) => return Err(MetaError::NotJson(e.to_string())),
    };
    Ok(fields.into_meta())
}

/// The top-level fields of a line that the index reads.
#[derive(Default)]
struct Fields<'a> {
    kind: Str<'a>,
    session_id: Str<'a>,
    uuid: Str<'a>,
    parent_uuid: Str<'a>,
    timestamp: Str<'a>,
    cwd: Str<'a>,
    git_branch: Str<'a>,
    is_sidechain: bool,
    is_meta: bool,
    message: Message<'a>,
    /// `summary`, `customTitle`, `aiTitle`, `lastPrompt`, in that order.
    titles: [Str<'a>; 4],
    /// Top-level `content` (queue-operation and system lines).
    content: Str<'a>,
    agent_id: Str<'a>,
    tool_use_result: Nested<'a>,
    attachment: Nested<'a>,
    request_id: Str<'a>,
    is_api_error: bool,
    /// A progress line's `data`: a sub-agent's message, with its usage (read only for those).
    data: Option<&'a RawValue>,
}

/// The fields read from an object below the top level (`toolUseResult`, `attachment`).
#[derive(Default)]
struct Nested<'a> {
    agent_id: Str<'a>,
    prompt: Str<'a>,
}

#[derive(Default)]
struct Message<'a> {
    role: Str<'a>,
    content: Content<'a>,
    id: Str<'a>,
    model: Str<'a>,
    usage: Option<&'a RawValue>,
}

#[derive(Default)]
enum Content<'a> {
    #[default]
    None,
    Text(Cow<'a, str>),
    Blocks(Vec<Block<'a>>),
}

#[derive(Default)]
struct Block<'a> {
    kind: Str<'a>,
    text: Str<'a>,
    thinking: Str<'a>,
    name: Str<'a>,
    input: Option<&'a RawValue>,
    content: Content<'a>,
}

impl<'a> Fields<'a> {
    fn into_meta(self) -> Meta {
        let mut text = SearchText::default();
        content_text(&self.message.content, &mut text);
        for s in self.titles.iter().flatten() {
            text.said(s);
        }
        let kind = self.kind.as_deref();
        if matches!(kind, Some("queue-operation" | "system"))
            && let Some(s) = &self.content
        {
            text.said(s);
        }
        if let Some(prompt) = &self.attachment.prompt {
            text.said(prompt);
        }
        let [summary, custom, ai, _] = &self.titles;
        let role = self.message.role.as_deref();
        let title = match kind {
            Some("custom-title") => custom.as_deref().map(|t| (title_rank::CUSTOM, super::bounded_title(t))),
            Some("ai-title") => ai.as_deref().map(|t| (title_rank::AI, super::bounded_title(t))),
            Some("summary") => summary.as_deref().map(|t| (title_rank::SUMMARY, super::bounded_title(t))),
            Some("user") if role == Some("user") && !self.is_meta && !self.is_sidechain => {
                first_user_text(&self.message.content).map(|t| (title_rank::FIRST_USER_TEXT, t))
            }
            _ => None,
        };
        let mut usage = Vec::new();
        if !self.is_api_error
            && let Some(raw) = self.message.usage
        {
            let value: Value = serde_json::from_str(raw.get()).unwrap_or(Value::Null);
            usage.extend(response_usage(
                &value,
                self.message.id.as_deref(),
                self.message.model.as_deref(),
                self.request_id.as_deref(),
                self.uuid.as_deref(),
                self.timestamp.as_deref(),
            ));
        }
        if kind == Some("progress")
            && let Some(data) = self.data
        {
            usage.extend(progress_usage(data));
        }
        let mut meta = Meta {
            session_id: self.session_id.map(Cow::into_owned),
            columns: Columns {
                uuid: self.uuid.map(Cow::into_owned),
                parent_uuid: self.parent_uuid.map(Cow::into_owned),
                kind: self.kind.map(Cow::into_owned),
                role: self.message.role.map(Cow::into_owned),
                timestamp: self.timestamp.map(Cow::into_owned),
                is_sidechain: self.is_sidechain,
            },
            cwd: self.cwd.map(Cow::into_owned),
            git_branch: self.git_branch.map(Cow::into_owned),
            title,
            agent_id: self.agent_id.map(Cow::into_owned),
            spawned_agent: self.tool_use_result.agent_id.map(Cow::into_owned),
            usage,
            ..Meta::default()
        };
        text.finish(&mut meta);
        meta
    }
}

/// The usage of one API response: `message.usage` of a line (or of the sub-agent message a
/// progress line carries), keyed by `message.id` (the response's own id), else the request's id,
/// else the line's `uuid`. A `<synthetic>` message (Claude Code's own, made without a call) has
/// none, nor has a `usage` that is not an object.
fn response_usage(
    value: &Value,
    id: Option<&str>,
    model: Option<&str>,
    request_id: Option<&str>,
    uuid: Option<&str>,
    timestamp: Option<&str>,
) -> Option<Usage> {
    if model == Some("<synthetic>") {
        return None;
    }
    if !value.is_object() {
        return None;
    }
    let key = match (id.filter(|s| !s.is_empty()), request_id.filter(|s| !s.is_empty()), uuid) {
        (Some(id), _, _) => format!("claude:{id}"),
        (None, Some(request), _) => format!("claude-request:{request}"),
        (None, None, Some(uuid)) => format!("claude-line:{uuid}"),
        (None, None, None) => return None,
    };
    let (tokens, tier) = usage::anthropic(value);
    Some(Usage {
        key,
        request_id: request_id.map(str::to_owned),
        model: model.map(str::to_owned),
        timestamp: timestamp.map(str::to_owned),
        tokens,
        tier,
        running: None,
    })
}

/// A progress line's sub-agent response (`data.message`: a line of the sub-agent's transcript,
/// with its `requestId`, `uuid`, `timestamp` and `message`): Claude Code reports a running
/// sub-agent's calls there, and these are its only record when its own transcript is not kept.
fn progress_usage(data: &RawValue) -> Option<Usage> {
    let data: Value = serde_json::from_str(data.get()).ok()?;
    let line = data.get("message")?;
    let message = line.get("message")?;
    if line.get("isApiErrorMessage") == Some(&Value::Bool(true)) {
        return None;
    }
    response_usage(
        message.get("usage")?,
        str_at(message, "id"),
        str_at(message, "model"),
        str_at(line, "requestId"),
        str_at(line, "uuid"),
        str_at(line, "timestamp"),
    )
}

/// The searchable text of `message.content` (a string or blocks, nested tool results included):
/// text and thinking as said, tool calls and results as tool text.
fn content_text(content: &Content<'_>, out: &mut SearchText) {
    content_in(content, out, false);
}

/// [`content_text`], all of it tool output when `output` (a tool result's content).
fn content_in(content: &Content<'_>, out: &mut SearchText, output: bool) {
    let put = |out: &mut SearchText, s: &str| if output { out.output(s) } else { out.said(s) };
    match content {
        Content::None => {}
        Content::Text(s) => put(out, s),
        Content::Blocks(blocks) => {
            for block in blocks {
                match block.kind.as_deref() {
                    Some("text") => put(out, block.text.as_deref().unwrap_or("")),
                    Some("thinking") => put(out, block.thinking.as_deref().unwrap_or("")),
                    Some("tool_use" | "server_tool_use") => {
                        out.call_raw(block.name.as_deref(), block.input.map(|i| i.get()));
                    }
                    Some("tool_result") => content_in(&block.content, out, true),
                    _ => {
                        if let Some(s) = &block.text {
                            put(out, s);
                        }
                    }
                }
            }
        }
    }
}

/// The first words a person typed, for a session's title: text blocks only (not tool results), and
/// of each, what follows the context the harness put in front of it (`<ide_selection>…</…>`,
/// `<system-reminder>…</…>` and other tagged blocks): a block that holds nothing else is skipped,
/// not the whole message. A slash command with arguments (`<command-name>`, `<command-args>`)
/// gives its name and arguments, as the person typed them.
fn first_user_text(content: &Content<'_>) -> Option<String> {
    let own = |text: &str| -> Option<String> {
        let rest = without_injected(text);
        let words = if rest.is_empty() {
            // A slash command the person gave arguments to: its name and arguments are their words
            // (one without, like `/clear`, says nothing about the conversation).
            let name = tag_content(text, "command-name")?;
            let args = tag_content(text, "command-args")?;
            format!("{name} {args}")
        } else if super::injected_tag(rest).is_some() {
            // A harness's block that is not closed: no words of the person's.
            return None;
        } else {
            rest.to_owned()
        };
        if words.is_empty() {
            return None;
        }
        Some(first_chars(words, 200))
    };
    match content {
        Content::None => None,
        Content::Text(s) => own(s),
        Content::Blocks(blocks) => {
            blocks.iter().filter(|b| b.kind.as_deref() == Some("text")).find_map(|b| b.text.as_deref().and_then(own))
        }
    }
}

/// What `<name>…</name>` holds in `text`, trimmed, if it is there and not empty.
fn tag_content<'t>(text: &'t str, name: &str) -> Option<&'t str> {
    let open = format!("<{name}>");
    let start = text.find(&open)? + open.len();
    let end = start + text[start..].find(&format!("</{name}>"))?;
    Some(text[start..end].trim()).filter(|s| !s.is_empty())
}

/// Tags that open a command's or a command output's text: typed by no person.
const COMMAND_TAGS: &[&str] = &[
    "<command-name>",
    "<command-message>",
    "<command-args>",
    "<local-command-stdout>",
    "<local-command-stderr>",
    "<local-command-caveat>",
    "<bash-input>",
    "<bash-stdout>",
    "<bash-stderr>",
];

/// What the person typed, if this entry carries it.
fn typed_input(kind: Option<&str>, is_sidechain: bool, line: &Value) -> Option<Typed> {
    if is_sidechain
        || line.get("isSidechain") == Some(&Value::Bool(true))
        || line.get("isMeta") == Some(&Value::Bool(true))
    {
        return None;
    }
    let kind = kind.or_else(|| line.get("type").and_then(Value::as_str));
    let content = match kind {
        Some("user") => {
            let message = line.get("message")?;
            if message.get("role").and_then(Value::as_str) != Some("user") {
                return None;
            }
            message.get("content")?
        }
        Some("attachment") => {
            let attachment = line.get("attachment")?;
            if attachment.get("type").and_then(Value::as_str) != Some("queued_command") {
                return None;
            }
            attachment.get("prompt")?
        }
        _ => return None,
    };
    let typed = match content {
        Value::String(text) => Typed { text: text.clone(), images: Vec::new() },
        Value::Array(blocks) => {
            let mut texts = Vec::new();
            let mut images = Vec::new();
            for block in blocks {
                match block.get("type").and_then(Value::as_str) {
                    Some("tool_result") => return None,
                    Some("text") => texts.push(block.get("text").and_then(Value::as_str).unwrap_or("")),
                    Some("image" | "image_url" | "input_image") => {
                        images.push(block.get("blake3").and_then(Value::as_str).map(str::to_owned));
                    }
                    _ => {}
                }
            }
            Typed { text: texts.join("\n"), images }
        }
        _ => return None,
    };
    let trimmed = typed.text.trim_start();
    if COMMAND_TAGS.iter().any(|tag| trimmed.starts_with(tag)) {
        return None;
    }
    if typed.text.trim().is_empty() && typed.images.is_empty() {
        return None;
    }
    Some(typed)
}

/// The line's fields: `Some` for an object, `None` for any other JSON value.
struct Top<'a>(Option<Fields<'a>>);

impl<'de> Deserialize<'de> for Top<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Option<Fields<'de>>;
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut f = Fields::default();
                while let Some(key) = map.next_key::<Key>()? {
                    match &*key.0 {
                        "type" => f.kind = map.next_value::<LooseStr>()?.0,
                        "sessionId" => f.session_id = map.next_value::<LooseStr>()?.0,
                        "uuid" => f.uuid = map.next_value::<LooseStr>()?.0,
                        "parentUuid" => f.parent_uuid = map.next_value::<LooseStr>()?.0,
                        "timestamp" => f.timestamp = map.next_value::<LooseStr>()?.0,
                        "cwd" => f.cwd = map.next_value::<LooseStr>()?.0,
                        "gitBranch" => f.git_branch = map.next_value::<LooseStr>()?.0,
                        "isSidechain" => f.is_sidechain = map.next_value::<LooseTrue>()?.0,
                        "isMeta" => f.is_meta = map.next_value::<LooseTrue>()?.0,
                        "message" => f.message = map.next_value()?,
                        "summary" => f.titles[0] = map.next_value::<LooseStr>()?.0,
                        "customTitle" => f.titles[1] = map.next_value::<LooseStr>()?.0,
                        "aiTitle" => f.titles[2] = map.next_value::<LooseStr>()?.0,
                        "lastPrompt" => f.titles[3] = map.next_value::<LooseStr>()?.0,
                        "content" => f.content = map.next_value::<LooseStr>()?.0,
                        "agentId" => f.agent_id = map.next_value::<LooseStr>()?.0,
                        "toolUseResult" => f.tool_use_result = map.next_value()?,
                        "attachment" => f.attachment = map.next_value()?,
                        "requestId" => f.request_id = map.next_value::<LooseStr>()?.0,
                        "isApiErrorMessage" => f.is_api_error = map.next_value::<LooseTrue>()?.0,
                        "data" => f.data = Some(map.next_value()?),
                        _ => {
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                Ok(Some(f))
            }
            skip_seq!();
            skip_scalars!();
            skip_strings!();
        }
        d.deserialize_any(V).map(Top)
    }
}

impl<'de> Deserialize<'de> for Nested<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Nested<'de>;
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut n = Nested::default();
                while let Some(key) = map.next_key::<Key>()? {
                    match &*key.0 {
                        "agentId" => n.agent_id = map.next_value::<LooseStr>()?.0,
                        "prompt" => n.prompt = map.next_value::<LooseStr>()?.0,
                        _ => {
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                Ok(n)
            }
            skip_seq!();
            skip_scalars!();
            skip_strings!();
        }
        d.deserialize_any(V)
    }
}

impl<'de> Deserialize<'de> for Message<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Message<'de>;
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut m = Message::default();
                while let Some(key) = map.next_key::<Key>()? {
                    match &*key.0 {
                        "role" => m.role = map.next_value::<LooseStr>()?.0,
                        "content" => m.content = map.next_value()?,
                        "id" => m.id = map.next_value::<LooseStr>()?.0,
                        "model" => m.model = map.next_value::<LooseStr>()?.0,
                        "usage" => m.usage = Some(map.next_value()?),
                        _ => {
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                Ok(m)
            }
            skip_seq!();
            skip_scalars!();
            skip_strings!();
        }
        d.deserialize_any(V)
    }
}

impl<'de> Deserialize<'de> for Content<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Content<'de>;
            fn visit_borrowed_str<E: de::Error>(self, s: &'de str) -> Result<Self::Value, E> {
                Ok(Content::Text(Cow::Borrowed(s)))
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Self::Value, E> {
                Ok(Content::Text(Cow::Owned(s.to_owned())))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let mut blocks = Vec::new();
                while let Some(block) = seq.next_element()? {
                    blocks.push(block);
                }
                Ok(Content::Blocks(blocks))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(Content::None)
            }
            skip_scalars!();
        }
        d.deserialize_any(V)
    }
}

impl<'de> Deserialize<'de> for Block<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Block<'de>;
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut b = Block::default();
                while let Some(key) = map.next_key::<Key>()? {
                    match &*key.0 {
                        "type" => b.kind = map.next_value::<LooseStr>()?.0,
                        "text" => b.text = map.next_value::<LooseStr>()?.0,
                        "thinking" => b.thinking = map.next_value::<LooseStr>()?.0,
                        "name" => b.name = map.next_value::<LooseStr>()?.0,
                        "input" => b.input = Some(map.next_value()?),
                        "content" => b.content = map.next_value()?,
                        _ => {
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                Ok(b)
            }
            skip_seq!();
            skip_scalars!();
            skip_strings!();
        }
        d.deserialize_any(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::order::Order;
    use serde_json::json;

    fn line(s: &str) -> Value {
        serde_json::from_str(s).unwrap()
    }

    #[test]
    fn a_message_says_its_blocks_under_who_said_it() {
        let user = line(
            r#"{"type":"user","message":{"role":"user","content":[
                {"type":"image","source":{"type":"base64","data":"/api/session-media/s/u/0"},"url":"/api/session-media/s/u/0","mimeType":"image/png","bytes":3,"blake3":"ab"},
                {"type":"image","source":{"type":"base64","data":""},"failed":true,"placeholder":"[image not displayed]"},
                {"type":"document","source":{"type":"base64","media_type":"application/pdf","data":"/api/media/cd","mediaUrl":"/api/media/cd","mediaType":"application/pdf","mediaBytes":9}},
                {"type":"text","text":"Look"}]}}"#,
        );
        assert_eq!(Claude.who(&user, false), Some(Who::new("You", Side::User)));
        assert_eq!(Claude.who(&user, true), Some(Who::new("To the sub-agent", Side::User)));
        let photo = Media {
            image: true,
            url: Some("/api/session-media/s/u/0".into()),
            mime_type: Some("image/png".into()),
            bytes: Some(3),
            blake3: Some("ab".into()),
            failed: false,
            label: None,
        };
        let pdf = Media {
            image: false,
            url: Some("/api/media/cd".into()),
            mime_type: Some("application/pdf".into()),
            bytes: Some(9),
            blake3: None,
            failed: false,
            label: None,
        };
        let failed = Media { image: true, failed: true, ..Media::default() };
        assert_eq!(
            Claude.parts(&user),
            [Part::Media(photo), Part::Media(failed), Part::Media(pdf), Part::Text("Look".into())]
        );
        // A tool's result is on the assistant's side, with the photo it gave back.
        let result = line(
            r#"{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","is_error":true,
                "content":[{"type":"text","text":"ok"},{"type":"image","url":"/api/session-media/s/r/0"}]}]}}"#,
        );
        assert_eq!(Claude.who(&result, false), Some(Who::new("Assistant", Side::Assistant)));
        assert_eq!(Claude.who(&result, true), Some(Who::new("Sub-agent", Side::Assistant)));
        match &Claude.parts(&result)[..] {
            [Part::ToolResult { call: Some(call), text, error: true, label: None, media }] => {
                assert_eq!(call, "t");
                assert_eq!(text, "ok");
                assert_eq!(media[0].url.as_deref(), Some("/api/session-media/s/r/0"));
            }
            other => panic!("{other:?}"),
        }
        let thinking = line(
            r#"{"type":"assistant","message":{"role":"assistant","content":[{"type":"redacted_thinking","data":"x"},{"type":"thinking","thinking":""}]}}"#,
        );
        assert_eq!(Claude.parts(&thinking), [Part::Thinking("(redacted)".into())]);
    }

    #[test]
    fn titles_summaries_and_system_lines_are_notes_and_a_queued_message_is_the_persons() {
        let summary = line(r#"{"type":"summary","summary":"Fixing the parser"}"#);
        assert_eq!(
            (Claude.who(&summary, false), Claude.parts(&summary)),
            (Some(Who::note()), vec![Part::Note("Summary: Fixing the parser".into())])
        );
        assert_eq!(
            Claude.parts(&line(r#"{"type":"ai-title","aiTitle":"Parser"}"#)),
            [Part::Note("Title: Parser".into())]
        );
        assert_eq!(Claude.parts(&line(r#"{"type":"system","content":"Compacted"}"#)), [Part::Note("Compacted".into())]);
        let queued = line(
            r#"{"type":"attachment","attachment":{"type":"queued_command","prompt":[{"type":"text","text":"and this"}]}}"#,
        );
        assert_eq!(Claude.who(&queued, false), Some(Who::new("You (queued)", Side::User)));
        assert_eq!(Claude.parts(&queued), [Part::Text("and this".into())]);
        for nobody in [r#"{"type":"progress","data":{}}"#, r#"{"type":"file-history-snapshot"}"#] {
            assert_eq!((Claude.who(&line(nobody), false), Claude.parts(&line(nobody))), (None, vec![]));
        }
    }

    #[test]
    fn a_lines_git_branch_is_read_as_written_and_a_value_of_another_type_is_none() {
        let branch = |line: &str| Claude.describe(line, 1, &FileContext::default()).unwrap().git_branch;
        let user = r#"{"type":"user","gitBranch":"feature/x","message":{"role":"user","content":"hi"}}"#;
        assert_eq!(branch(user).as_deref(), Some("feature/x"));
        assert_eq!(branch(r#"{"type":"progress","gitBranch":""}"#).as_deref(), Some(""));
        assert_eq!(branch(r#"{"type":"user","gitBranch":null,"cwd":"/w"}"#), None);
        assert_eq!(branch(r#"{"type":"user","gitBranch":{"name":"x"}}"#), None);
        assert_eq!(branch(r#"{"type":"summary","summary":"s"}"#), None);
    }

    #[test]
    fn the_main_transcript_comes_first_among_entries_of_the_same_instant() {
        let main = file_key(Path::new("/p/s1.jsonl"), "s1");
        let sub = file_key(Path::new("/p/s1/subagents/agent-a1.jsonl"), "s1");
        assert_eq!(main, 0);
        assert!(sub > 0 && sub < 1 << 52);
        assert_eq!(sub, file_key(Path::new("/elsewhere/s1/subagents/agent-a1.jsonl"), "s1"), "stable");
        let at = "2026-01-01T10:00:00.000Z".to_owned();
        let a = Order { at: at.clone(), file: main, line: 9 };
        let b = Order { at, file: sub, line: 1 };
        assert!(a < b && a.key() < b.key());
    }

    #[test]
    fn the_harness_tags_are_parts_of_their_own() {
        let command = line(
            r#"{"type":"user","message":{"role":"user","content":"<command-message>review is running…</command-message>\n<command-name>/review</command-name>\n<command-args>src/lib.rs</command-args>"}}"#,
        );
        assert_eq!(Claude.who(&command, false), Some(Who::new("You", Side::User)));
        assert_eq!(Claude.parts(&command), [Part::Command { name: "/review".into(), args: "src/lib.rs".into() }]);
        let output = line(
            r#"{"type":"user","message":{"role":"user","content":"<local-command-stdout>Compacted.</local-command-stdout>"}}"#,
        );
        assert_eq!(Claude.who(&output, false), Some(Who::new("Command output", Side::Note)));
        assert_eq!(Claude.parts(&output), [Part::Output { text: "Compacted.".into(), error: false }]);
        let ide = line(
            r#"{"type":"user","message":{"role":"user","content":[{"type":"text","text":"<ide_selection>The user selected lines 1 to 2 of a.rs</ide_selection>"},{"type":"text","text":"<ide_opened_file>a.rs</ide_opened_file> Why does this fail?\n\n<system-reminder>Be brief.</system-reminder>"}]}}"#,
        );
        assert_eq!(
            Claude.parts(&ide),
            [
                Part::Context { label: "IDE selection".into(), text: "The user selected lines 1 to 2 of a.rs".into() },
                Part::Context { label: "Opened in the IDE".into(), text: "a.rs".into() },
                Part::Text("Why does this fail?".into()),
                Part::Context { label: "System reminder".into(), text: "Be brief.".into() },
            ]
        );
        // A reminder after what a tool read is no part of its result; HTML a person typed is theirs.
        let read = line(
            r#"{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"r","content":"1 fn main() {}\n\n<system-reminder>Mind malware.</system-reminder>"}]}}"#,
        );
        assert!(
            matches!(&Claude.parts(&read)[..], [Part::ToolResult { text, .. }, Part::Context { .. }] if text == "1 fn main() {}")
        );
        // The caveat before a local command's messages is the harness's, tagged or (older) bare.
        for content in [
            "Caveat: The messages below were generated by the user while running local commands. DO NOT respond to these messages.",
            "<local-command-caveat>Caveat: The messages below were generated by the user while running local commands. DO NOT respond to these messages.</local-command-caveat>",
        ] {
            let caveat = line(
                &json!({"type": "user", "isMeta": true, "message": {"role": "user", "content": content}}).to_string(),
            );
            assert_eq!(Claude.who(&caveat, false), Some(Who::note()), "{content}");
            assert!(
                matches!(&Claude.parts(&caveat)[..], [Part::Context { label, text }] if label == "Caveat" && text.ends_with("DO NOT respond to these messages.")),
                "{content}: {:?}",
                Claude.parts(&caveat)
            );
        }
        let html = line(r#"{"type":"user","message":{"role":"user","content":"<div>x</div> is not centred"}}"#);
        assert_eq!(Claude.parts(&html), [Part::Text("<div>x</div> is not centred".into())]);
        let call = line(
            r#"{"type":"assistant","message":{"role":"assistant","content":[{"type":"tool_use","id":"r","name":"Read","input":{"file_path":"a.rs"}}]}}"#,
        );
        assert!(matches!(&Claude.parts(&call)[..], [Part::ToolCall(c)] if c.id.as_deref() == Some("r")));
    }
}
