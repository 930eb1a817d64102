//! GitHub Copilot CLI's session logs (`$COPILOT_HOME/session-state/<session id>/events.jsonl`, else
//! under `~/.copilot`; the older flat layout `session-state/<session id>.jsonl` holds the same lines).
//!
//! The CLI is closed source: the facts are from the event schema it ships and the official SDK
//! generates its types from (github/copilot-sdk, `nodejs/src/generated/session-events.ts`), the
//! CLI's own JavaScript (npm `@github/copilot` 1.0.48, `app.js`) and its changelog. Every line is an
//! event `{type, data, id, timestamp, parentId}` (`agentId` on a sub-agent's), appended as it
//! happens; only the events the schema does not mark ephemeral are written:
//! - `session.start` (the session's id, the CLI's version, `context.cwd` and `context.branch`),
//!   `session.resume`, `session.context_changed`, `session.model_change`, `session.info`,
//!   `session.warning`, `session.error`, `session.compaction_complete` (its summary),
//!   `session.task_complete`, `abort`, `subagent.*`: notes;
//! - `user.message`: what the person typed (`content`; `transformedContent` is what the model was
//!   sent, context included, and is not shown) and its `attachments` (files, selections, inline
//!   `blob`s);
//! - `assistant.message`: `content`, `reasoningText`, and the tool calls it makes (`toolRequests`:
//!   `toolCallId`, `name`, `arguments` as an object or a string of JSON); `assistant.reasoning`:
//!   thinking on a line of its own;
//! - `tool.execution_complete`: a call's result (`success`, `result.detailedContent` else
//!   `result.content`, `result.contents` blocks with MCP-style images, `error.message`);
//!   `tool.user_requested`: a tool the person ran;
//! - `session.binary_asset` (since 1.0.64): an image's or a PDF's bytes, base64 in `data.data` with
//!   `data.mimeType`, once per distinct asset; the messages and results that carry it name it by
//!   `assetId` instead of holding it;
//! - `session.shutdown`: the tokens of the process that ends (`modelMetrics`), the only token
//!   counts but one (`assistant.message.outputTokens`, the same output again) the file holds.
//!
//! Everything else (turn brackets, `tool.execution_start` repeating a request, hooks, permissions,
//! `system.message` with the whole system prompt) is kept and not shown. `/rewind` writes the file
//! again, shorter: the indexer reads a file that shrank, or whose bytes before its checkpoint
//! changed, again from its start, so no format effect is needed.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::{
    BlockPlaces, Columns, FileContext, Format, Media, Meta, MetaError, Part, SearchText, Side, Tokens, Typed, Usage,
    Who, first_chars, line_id, parse_object, str_at, title_rank, usage,
};

/// GitHub Copilot CLI's format.
#[derive(Debug, Clone, Copy, Default)]
pub struct Copilot;

/// Image blocks are numbered anywhere in an event's `data`: an asset's own object, a message's
/// inline `blob` attachments, a tool result's `contents` and `binaryResultsForLlm`.
static BLOCK_PLACES: BlockPlaces = BlockPlaces::new(&[&["data"]]);

/// The folders of a session's directory that hold no transcript (agent-written files, research
/// reports, compaction checkpoints, rewind snapshots): an `events.jsonl` in one is not the CLI's.
const NOT_SESSION_DIRS: &[&str] = &["files", "research", "checkpoints", "rewind-snapshots"];

impl Format for Copilot {
    fn name(&self) -> &'static str {
        "copilot"
    }

    fn display_name(&self) -> &'static str {
        "Copilot CLI"
    }

    /// `<session>/events.jsonl` (not in one of a session's own folders), or a flat
    /// `<session>.jsonl` directly in `session-state` (the older layout). The other files of a
    /// session's folder (`workspace.yaml`, `plan.md`, `session.db`, checkpoints, locks) are not
    /// transcripts.
    fn is_transcript(&self, path: &Path) -> bool {
        let name = path.file_name().and_then(|n| n.to_str());
        let parent = path.parent().and_then(|p| p.file_name()).and_then(|n| n.to_str());
        match (name, parent) {
            (Some("events.jsonl"), Some(dir)) => !NOT_SESSION_DIRS.contains(&dir),
            (Some(name), Some("session-state")) => name.ends_with(".jsonl"),
            _ => false,
        }
    }

    fn block_places(&self) -> &'static BlockPlaces {
        &BLOCK_PLACES
    }

    /// The `sessionId` of the first line's `session.start` (the CLI requires that first line),
    /// else the session's folder (`<id>/events.jsonl`) or the flat file's name without `.jsonl`.
    fn file_context(&self, path: &Path, first_line: &mut dyn FnMut() -> Option<String>) -> FileContext {
        let fallback = match path.file_name().and_then(|n| n.to_str()) {
            Some("events.jsonl") => path.parent().and_then(|p| p.file_name()),
            _ => path.file_stem(),
        };
        let mut context = FileContext {
            session: fallback.map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(),
            ..FileContext::default()
        };
        let first = first_line().and_then(|l| serde_json::from_str::<Value>(&l).ok());
        if let Some(first) = first.filter(|f| str_at(f, "type") == Some("session.start"))
            && let Some(id) = first.get("data").and_then(|d| str_at(d, "sessionId")).filter(|id| !id.is_empty())
        {
            context.session = id.to_owned();
        }
        context
    }

    /// 0: a session's events are one file (a sub-agent's are in it, marked by `agentId`).
    fn file_key(&self, _path: &Path, _session: &str) -> i64 {
        0
    }

    fn describe(&self, stripped: &str, line: u64, file: &FileContext) -> Result<Meta, MetaError> {
        let top = parse_object(stripped)?;
        Ok(describe(&top, line, file))
    }

    /// A `user.message` the person typed (not injected, not a sub-agent's): its `content`, and its
    /// inline image attachments (an image kept as an asset is counted, its hash unknown here).
    fn typed_input(&self, _kind: Option<&str>, is_sidechain: bool, line: &Value) -> Option<Typed> {
        let data = line.get("data")?;
        if str_at(line, "type") != Some("user.message") || is_sidechain || injected_by(data).is_some() {
            return None;
        }
        let images = attachments(data)
            .filter(|a| is_image(a))
            .map(|a| str_at(a, "blake3").map(str::to_owned))
            .collect::<Vec<_>>();
        let text = str_at(data, "content").unwrap_or("").to_owned();
        (!text.trim().is_empty() || !images.is_empty()).then_some(Typed { text, images })
    }

    /// `session.shutdown`'s `modelMetrics`.
    fn usage_markers(&self) -> &'static [&'static str] {
        &["modelMetrics"]
    }

    fn parts(&self, line: &Value) -> Vec<Part> {
        parts(line)
    }

    fn who(&self, line: &Value, _is_sidechain: bool) -> Option<Who> {
        who(line)
    }

    /// `copilot --resume ID` (run in the session's directory).
    fn resume_command(&self, id: &str) -> Option<String> {
        Some(format!("copilot --resume {}", super::shell_word(id)))
    }

    /// `$COPILOT_HOME/session-state`, else `~/.copilot/session-state` (the CLI's own rule: its
    /// `--config-dir`, else `COPILOT_HOME`, else the home directory's `.copilot`); and where builds
    /// that kept their state under `$XDG_STATE_HOME` left it (`$XDG_STATE_HOME/.copilot/session-state`,
    /// which the CLI since moves to `~/.copilot` and links back), when that variable is set.
    fn default_roots(&self, var: &dyn Fn(&str) -> Option<OsString>) -> Vec<PathBuf> {
        let nonempty = |name: &str| var(name).filter(|v| !v.is_empty()).map(PathBuf::from);
        let home = nonempty("COPILOT_HOME").or_else(|| nonempty("HOME").map(|h| h.join(".copilot")));
        let mut roots: Vec<PathBuf> = home.into_iter().map(|h| h.join("session-state")).collect();
        if let Some(state) = nonempty("XDG_STATE_HOME") {
            roots.push(state.join(".copilot/session-state"));
        }
        roots
    }
}

/// Why a user message is not the person's own words: the `source` that injected it (a skill, an
/// inter-agent prompt), or an autopilot continuation.
fn injected_by(data: &Value) -> Option<&str> {
    if data.get("isAutopilotContinuation") == Some(&Value::Bool(true)) {
        return Some("autopilot");
    }
    str_at(data, "source").map(str::trim).filter(|s| !s.is_empty() && *s != "user")
}

/// A user message's attachments.
fn attachments(data: &Value) -> impl Iterator<Item = &Value> {
    data.get("attachments").and_then(Value::as_array).into_iter().flatten().filter(|a| a.is_object())
}

/// Whether an object holds an image's bytes (or held them: a rendered block has its URL there).
fn is_image(object: &Value) -> bool {
    object.get("data").is_some_and(|d| d.as_str().is_some_and(|d| !d.is_empty()))
        && (str_at(object, "type") == Some("image")
            || str_at(object, "mimeType").is_some_and(|t| t.starts_with("image/")))
}

/// An object that holds a payload: a photo (an image block of the rendered line), else a file.
fn media(object: &Value) -> Media {
    if is_image(object) { Media::image(object) } else { Media::file(object) }
}

/// Whether an object stands for bytes kept elsewhere (`assetId`, without bytes of its own).
fn asset_reference(object: &Value) -> Option<&str> {
    str_at(object, "assetId").filter(|_| object.get("data").is_none())
}

fn describe(top: &Map<String, Value>, line: u64, file: &FileContext) -> Meta {
    let value = |key: &str| top.get(key);
    let str_of = |key: &str| value(key).and_then(Value::as_str);
    let kind = str_of("type");
    let null = Value::Null;
    let data = value("data").unwrap_or(&null);
    let agent = str_of("agentId").filter(|a| !a.is_empty());
    let sidechain = agent.is_some() || str_at(data, "parentToolCallId").is_some_and(|p| !p.is_empty());
    let mut meta = Meta {
        columns: Columns {
            uuid: Some(str_of("id").filter(|id| !id.is_empty()).map_or_else(|| line_id(line), str::to_owned)),
            parent_uuid: str_of("parentId").map(str::to_owned),
            kind: kind.map(str::to_owned),
            role: match kind {
                Some("user.message") => Some("user".into()),
                Some("assistant.message" | "assistant.reasoning") => Some("assistant".into()),
                _ => None,
            },
            timestamp: str_of("timestamp").map(str::to_owned),
            is_sidechain: sidechain,
        },
        agent_id: agent.map(str::to_owned),
        ..Meta::default()
    };
    let mut text = SearchText::default();
    match kind {
        Some("session.start" | "session.resume") => {
            let context = data.get("context").unwrap_or(&null);
            meta.cwd = str_at(context, "cwd").filter(|c| !c.is_empty()).map(str::to_owned);
            meta.git_branch = str_at(context, "branch").map(str::to_owned);
        }
        Some("session.context_changed") => {
            meta.cwd = str_at(data, "cwd").filter(|c| !c.is_empty()).map(str::to_owned);
            meta.git_branch = str_at(data, "branch").map(str::to_owned);
        }
        Some("user.message") => {
            let content = str_at(data, "content").unwrap_or("");
            text.said(content);
            for a in attachments(data) {
                if let Some(selected) = str_at(a, "text") {
                    text.said(selected);
                }
            }
            if !sidechain && injected_by(data).is_none() {
                meta.title = first_words(content).map(|t| (title_rank::FIRST_USER_TEXT, t));
            }
        }
        Some("assistant.message") => {
            text.said(str_at(data, "content").unwrap_or(""));
            text.said(str_at(data, "reasoningText").unwrap_or(""));
            for request in tool_requests(data) {
                call_text(&mut text, str_at(request, "name"), request.get("arguments"));
            }
        }
        Some("assistant.reasoning") => text.said(str_at(data, "content").unwrap_or("")),
        Some("tool.user_requested") => call_text(&mut text, str_at(data, "toolName"), data.get("arguments")),
        Some("tool.execution_complete") => {
            let (shown, error) = result_text(data);
            text.output(&shown);
            text.output(&error);
        }
        Some("session.compaction_complete") => text.said(str_at(data, "summaryContent").unwrap_or("")),
        Some("session.task_complete") => text.said(str_at(data, "summary").unwrap_or("")),
        Some("session.error" | "session.warning" | "session.info") => text.said(str_at(data, "message").unwrap_or("")),
        Some("session.shutdown") => meta.usage = shutdown_usage(data, str_of("id"), str_of("timestamp"), line, file),
        _ => {}
    }
    text.finish(&mut meta);
    meta
}

/// A tool call's search text: its name, and its arguments' strings (an object, or a string of JSON).
fn call_text(text: &mut SearchText, name: Option<&str>, arguments: Option<&Value>) {
    match arguments {
        Some(Value::String(raw)) => text.call_raw(name, Some(raw)),
        Some(args) if !args.is_null() => text.call(name, Some(args)),
        _ => text.call(name, None),
    }
}

/// An assistant message's tool requests.
fn tool_requests(data: &Value) -> impl Iterator<Item = &Value> {
    data.get("toolRequests").and_then(Value::as_array).into_iter().flatten().filter(|r| r.is_object())
}

/// A tool result's text as the CLI's timeline shows it (`detailedContent`, else `content`; older
/// builds wrote `result` as a string), and its error's message.
fn result_text(data: &Value) -> (String, String) {
    let shown = match data.get("result") {
        Some(Value::String(s)) => s.clone(),
        Some(result @ Value::Object(_)) => ["detailedContent", "content"]
            .iter()
            .find_map(|k| str_at(result, k).filter(|s| !s.is_empty()))
            .map(str::to_owned)
            .unwrap_or_else(|| content_blocks_text(result)),
        _ => String::new(),
    };
    let error = match data.get("error") {
        Some(Value::String(s)) => s.clone(),
        Some(e) => str_at(e, "message").unwrap_or("").to_owned(),
        None => String::new(),
    };
    (shown, error)
}

/// The text of a result's `contents` blocks (`text`, `terminal`), for a result that gives no other.
fn content_blocks_text(result: &Value) -> String {
    let blocks = result.get("contents").and_then(Value::as_array).into_iter().flatten();
    blocks.filter_map(|b| str_at(b, "text")).collect::<Vec<_>>().join("\n")
}

/// The usage a `session.shutdown` states: one response per model of its `modelMetrics`, the counts
/// of the process that ended (a resumed session's next process starts from nothing, so every
/// shutdown of a file counts), keyed by the event's id and the model, so a fork that copies the
/// event counts it once. `inputTokens` is taken as including the cache's reads and writes (OpenAI's
/// `prompt_tokens` as Copilot's API reports them) unless they are more than it.
fn shutdown_usage(
    data: &Value,
    id: Option<&str>,
    timestamp: Option<&str>,
    line: u64,
    file: &FileContext,
) -> Vec<Usage> {
    let Some(Value::Object(models)) = data.get("modelMetrics") else { return Vec::new() };
    let event = match id.filter(|id| !id.is_empty()) {
        Some(id) => id.to_owned(),
        None => format!("{}:{}", file.session, line_id(line)),
    };
    let mut out = Vec::new();
    for (model, metrics) in models {
        let counts = metrics.get("usage").unwrap_or(&Value::Null);
        let tokens = model_tokens(counts);
        if tokens.total() == 0 {
            continue;
        }
        out.push(Usage {
            key: format!("copilot:{event}:{model}"),
            model: Some(model.clone()).filter(|m| !m.is_empty()),
            timestamp: timestamp.map(str::to_owned),
            tokens,
            ..Usage::default()
        });
    }
    out
}

/// One model's `usage` of a shutdown, in disjoint buckets: the cache's reads and writes taken out
/// of `inputTokens` where they fit in it; `reasoningTokens` as the part of `outputTokens` it is.
fn model_tokens(counts: &Value) -> Tokens {
    let input = usage::count(counts, "inputTokens");
    let read = usage::count(counts, "cacheReadTokens");
    let write = usage::count(counts, "cacheWriteTokens");
    let output = usage::count(counts, "outputTokens");
    let cached = read.saturating_add(write);
    Tokens {
        input: if cached <= input { input - cached } else { input },
        output,
        cache_read: read,
        cache_write: write,
        cache_write_1h: 0,
        reasoning: usage::count(counts, "reasoningTokens").min(output),
    }
    .clamped()
}

/// The first words of what the person typed, for a title: not a bare slash command.
fn first_words(content: &str) -> Option<String> {
    let words = content.trim();
    let bare_command = words.starts_with('/') && !words.contains(char::is_whitespace);
    (!words.is_empty() && !bare_command).then(|| first_chars(words.to_owned(), 200))
}

/// The note a session's first line makes: `Copilot CLI <version> · <cwd> · branch <branch>`.
fn session_note(data: &Value) -> String {
    let context = data.get("context").unwrap_or(&Value::Null);
    let version = format!("Copilot CLI {}", str_at(data, "copilotVersion").unwrap_or("")).trim().to_owned();
    let mut words = vec![version];
    words.extend(str_at(context, "cwd").filter(|c| !c.is_empty()).map(str::to_owned));
    words.extend(str_at(context, "branch").filter(|b| !b.is_empty()).map(|b| format!("branch {b}")));
    words.extend(str_at(data, "selectedModel").filter(|m| !m.is_empty()).map(|m| format!("model {m}")));
    words.join(" · ")
}

/// A user message's attachment, as a reader is shown it.
fn attachment_part(a: &Value) -> Part {
    let name = str_at(a, "displayName")
        .or_else(|| str_at(a, "path"))
        .or_else(|| str_at(a, "filePath"))
        .or_else(|| str_at(a, "title"))
        .unwrap_or("");
    if a.get("data").is_some_and(|d| d.as_str().is_some_and(|d| !d.is_empty())) {
        return Part::Media(media(a));
    }
    match str_at(a, "type") {
        Some("selection") => Part::Context {
            label: format!("Selection in {}", str_at(a, "filePath").unwrap_or(name)),
            text: str_at(a, "text").unwrap_or("").to_owned(),
        },
        _ if asset_reference(a).is_some() => Part::Note(format!(
            "Attached {name} (its bytes are kept once in the session, shown where they were written)"
        )),
        Some("github_reference") => {
            Part::Note(format!("Attached {} {}", str_at(a, "title").unwrap_or(""), str_at(a, "url").unwrap_or("")))
        }
        Some(kind) => Part::Note(format!("Attached {kind} {name}").trim_end().to_owned()),
        None => Part::Note(format!("Attached {name}").trim_end().to_owned()),
    }
}

/// A tool result: its text (or its error's), whether it failed, and the photos and files it holds
/// inline (`result.contents`, `result.binaryResultsForLlm`; one image repeated in both once).
fn tool_result(data: &Value) -> Part {
    let (shown, error_text) = result_text(data);
    let failed = data.get("success") == Some(&Value::Bool(false)) || (!error_text.is_empty() && shown.is_empty());
    let text = match (shown.is_empty(), error_text.is_empty()) {
        (true, _) => error_text,
        (false, true) => shown,
        (false, false) => format!("{shown}\n{error_text}"),
    };
    let result = data.get("result").unwrap_or(&Value::Null);
    let mut found: Vec<Media> = Vec::new();
    let mut kept_elsewhere = 0;
    for key in ["contents", "binaryResultsForLlm"] {
        for block in result.get(key).and_then(Value::as_array).into_iter().flatten() {
            if asset_reference(block).is_some() {
                kept_elsewhere += 1;
            } else if block.get("data").is_some_and(|d| d.as_str().is_some_and(|d| !d.is_empty()))
                && (block.get("mimeType").is_some() || block.get("mediaUrl").is_some())
            {
                let m = media(block);
                let same = |o: &Media| o.blake3.is_some() && o.blake3 == m.blake3;
                if !found.iter().any(same) {
                    found.push(m);
                }
            }
        }
    }
    let label = match (found.is_empty(), kept_elsewhere) {
        (true, 0) => None,
        (false, 0) => Some("Result (with a photo)".to_owned()),
        (_, _) => Some("Result (with a photo kept once in the session, shown where it was written)".to_owned()),
    };
    Part::ToolResult { call: str_at(data, "toolCallId").map(str::to_owned), text, error: failed, label, media: found }
}

/// A line's parts. See the module documentation for which events say something to a reader.
fn parts(line: &Value) -> Vec<Part> {
    let null = Value::Null;
    let data = line.get("data").unwrap_or(&null);
    let said = |key: &str| str_at(data, key).filter(|s| !s.trim().is_empty()).map(str::to_owned);
    let mut out = Vec::new();
    match str_at(line, "type").unwrap_or("") {
        "session.start" => out.push(Part::Note(session_note(data))),
        "session.resume" => out.push(Part::Note("Session resumed.".into())),
        "session.model_change" => {
            out.push(Part::Note(format!("Model: {}", str_at(data, "newModel").unwrap_or("?"))));
        }
        "session.compaction_complete" => {
            let title = "Context compacted: the conversation before this point was summarised".to_owned();
            match said("summaryContent") {
                Some(summary) => out.push(Part::Group { title, parts: vec![Part::Text(summary)] }),
                None => out.push(Part::Note(format!("{title}."))),
            }
        }
        "session.task_complete" => {
            out.push(Part::Note(format!("Task complete. {}", said("summary").unwrap_or_default()).trim_end().into()));
        }
        "session.error" | "session.warning" | "session.info" => out.extend(said("message").map(Part::Note)),
        "abort" => out.push(Part::Note(format!("Interrupted ({}).", str_at(data, "reason").unwrap_or("aborted")))),
        "subagent.started" | "subagent.completed" | "subagent.failed" => {
            let name = str_at(data, "agentDisplayName").or_else(|| str_at(data, "agentName")).unwrap_or("sub-agent");
            let what = &str_at(line, "type").unwrap_or("")["subagent.".len()..];
            let mut note = format!("Sub-agent {name} {what}.");
            if let Some(error) = said("error") {
                note.push_str(&format!(" {error}"));
            }
            out.push(Part::Note(note));
        }
        "user.message" => {
            match injected_by(data) {
                Some(by) => out.push(Part::Context {
                    label: format!("Injected by {by}"),
                    text: str_at(data, "content").unwrap_or("").to_owned(),
                }),
                None => out.extend(said("content").map(Part::Text)),
            }
            out.extend(attachments(data).map(attachment_part));
        }
        "assistant.reasoning" => out.extend(said("content").map(Part::Thinking)),
        "assistant.message" => {
            out.extend(said("reasoningText").map(Part::Thinking));
            out.extend(said("content").map(Part::Text));
            for request in tool_requests(data) {
                let name = str_at(request, "name").unwrap_or("tool");
                let input = request.get("arguments").filter(|a| !a.is_null()).unwrap_or(&null);
                let id = str_at(request, "toolCallId");
                out.push(Part::ToolCall(super::parts::tool_call_with_id(name, input, id)));
            }
        }
        "tool.user_requested" => {
            let name = str_at(data, "toolName").unwrap_or("tool");
            let input = data.get("arguments").filter(|a| !a.is_null()).unwrap_or(&null);
            let id = str_at(data, "toolCallId");
            out.push(Part::ToolCall(super::parts::tool_call_with_id(name, input, id)));
        }
        "tool.execution_complete" => out.push(tool_result(data)),
        "session.binary_asset" => {
            if data.get("data").is_some_and(|d| d.as_str().is_some_and(|d| !d.is_empty())) {
                out.push(Part::Media(media(data)));
            }
            out.extend(said("description").map(Part::Note));
        }
        _ => {}
    }
    out
}

/// Who said a line: the person (their message, a tool they ran), Copilot (its messages, thinking
/// and calls), a tool (its result), the CLI (what it injected as the person, an asset's bytes), or
/// nobody (a note); bookkeeping is not shown.
fn who(line: &Value) -> Option<Who> {
    let data = line.get("data").unwrap_or(&Value::Null);
    Some(match str_at(line, "type")? {
        "user.message" if injected_by(data).is_some() => Who::new("Copilot CLI", Side::Note),
        "user.message" | "tool.user_requested" => Who::new("You", Side::User),
        "assistant.message" | "assistant.reasoning" => Who::new("Copilot", Side::Assistant),
        "tool.execution_complete" => Who::new("Tool result", Side::Assistant),
        "session.binary_asset" => Who::new("Attachment", Side::Note),
        "session.error" => Who::new("Error", Side::Note),
        "session.warning" => Who::new("Warning", Side::Note),
        "session.info" => Who::new("Info", Side::Note),
        "session.start"
        | "session.resume"
        | "session.model_change"
        | "session.compaction_complete"
        | "session.task_complete"
        | "abort"
        | "subagent.started"
        | "subagent.completed"
        | "subagent.failed" => Who::note(),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::scan;

    fn meta(line: &str, n: u64) -> Meta {
        Copilot.describe(line, n, &FileContext { session: "s".into(), ..FileContext::default() }).unwrap()
    }

    fn v(s: &str) -> Value {
        serde_json::from_str(s).unwrap()
    }

    const START: &str = r#"{"type":"session.start","data":{"sessionId":"0b6a7c9e-1f2d-4e3a-9b8c-7d6e5f4a3b21","version":1,"producer":"copilot-agent","copilotVersion":"1.0.70","startTime":"2026-07-01T09:00:00.000Z","selectedModel":"claude-sonnet-4.5","context":{"cwd":"/home/ana/src/shop","gitRoot":"/home/ana/src/shop","branch":"main"}},"id":"e1","timestamp":"2026-07-01T09:00:00.000Z","parentId":null}"#;

    #[test]
    fn transcripts_are_a_sessions_events_or_a_flat_file_and_the_session_is_the_first_lines() {
        let dir = Path::new("/h/.copilot/session-state/0b6a7c9e-1f2d-4e3a-9b8c-7d6e5f4a3b21/events.jsonl");
        assert!(Copilot.is_transcript(dir));
        assert!(Copilot.is_transcript(Path::new("/h/.copilot/session-state/0b6a7c9e.jsonl")));
        for not in ["workspace.yaml", "plan.md", "session.db", "files/events.jsonl", "files/x.jsonl", "inuse.1.lock"] {
            let path = Path::new("/h/.copilot/session-state/0b6a7c9e").join(not);
            assert!(!Copilot.is_transcript(&path), "{not}");
        }
        assert_eq!(
            Copilot.file_context(dir, &mut || Some(START.into())).session,
            "0b6a7c9e-1f2d-4e3a-9b8c-7d6e5f4a3b21"
        );
        let named = Path::new("/h/.copilot/session-state/from-the-folder/events.jsonl");
        assert_eq!(Copilot.file_context(named, &mut || None).session, "from-the-folder");
        let flat = Path::new("/h/.copilot/session-state/flat-id.jsonl");
        assert_eq!(Copilot.file_context(flat, &mut || Some("{\"type\":\"user.message\"}".into())).session, "flat-id");
    }

    #[test]
    fn the_default_root_is_copilot_homes_session_state() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |name: &str| pairs.iter().find(|(k, _)| *k == name).map(|(_, v)| OsString::from(v))
        };
        assert_eq!(Copilot.default_roots(&env(&[("HOME", "/h")])), [PathBuf::from("/h/.copilot/session-state")]);
        assert_eq!(
            Copilot.default_roots(&env(&[("HOME", "/h"), ("COPILOT_HOME", "/c"), ("XDG_STATE_HOME", "/s")])),
            [PathBuf::from("/c/session-state"), PathBuf::from("/s/.copilot/session-state")]
        );
        assert!(Copilot.default_roots(&env(&[])).is_empty());
        assert_eq!(Copilot.resume_command("abc").as_deref(), Some("copilot --resume abc"));
    }

    #[test]
    fn the_start_gives_project_and_branch_and_the_first_typed_words_the_title() {
        let m = meta(START, 1);
        assert_eq!(m.columns.uuid.as_deref(), Some("e1"));
        assert_eq!((m.cwd.as_deref(), m.git_branch.as_deref()), (Some("/home/ana/src/shop"), Some("main")));
        assert_eq!(
            Copilot.parts(&v(START)),
            [Part::Note("Copilot CLI 1.0.70 · /home/ana/src/shop · branch main · model claude-sonnet-4.5".into())]
        );
        assert_eq!(Copilot.who(&v(START), false), Some(Who::note()));
        let user = r#"{"type":"user.message","data":{"content":"Why does this button render blank?","transformedContent":"<current_datetime>x</current_datetime>\nWhy","attachments":[]},"id":"e3","timestamp":"t","parentId":"e2"}"#;
        let m = meta(user, 3);
        assert_eq!(m.columns.role.as_deref(), Some("user"));
        assert_eq!(m.columns.parent_uuid.as_deref(), Some("e2"));
        assert_eq!(m.title, Some((title_rank::FIRST_USER_TEXT, "Why does this button render blank?".into())));
        assert_eq!(m.text.as_deref(), Some("Why does this button render blank?"), "not the transformed content");
        assert_eq!(Copilot.parts(&v(user)), [Part::Text("Why does this button render blank?".into())]);
        let typed = Copilot.typed_input(None, false, &v(user)).unwrap();
        assert_eq!(typed.text, "Why does this button render blank?");
        let skill = r#"{"type":"user.message","data":{"content":"Use the PDF skill","source":"skill-pdf"},"id":"e4","timestamp":"t","parentId":"e3"}"#;
        assert_eq!(meta(skill, 4).title, None);
        assert_eq!(Copilot.who(&v(skill), false), Some(Who::new("Copilot CLI", Side::Note)));
        assert_eq!(Copilot.typed_input(None, false, &v(skill)), None);
        let sub = r#"{"type":"user.message","data":{"content":"Find the bug"},"id":"e5","timestamp":"t","parentId":"e4","agentId":"a1"}"#;
        let m = meta(sub, 5);
        assert!(m.columns.is_sidechain);
        assert_eq!((m.agent_id.as_deref(), m.title), (Some("a1"), None));
        assert_eq!(meta(r#"{"type":"user.message","data":{"content":"/clear"},"id":"e6"}"#, 6).title, None);
    }

    #[test]
    fn an_answer_shows_its_thinking_text_and_calls_and_a_result_pairs_with_its_call() {
        let answer = r#"{"type":"assistant.message","data":{"messageId":"m-1","content":"Let me look at the stylesheet.","reasoningText":"Check the CSS.","model":"claude-sonnet-4.5","outputTokens":58,"toolRequests":[{"toolCallId":"toolu_01","name":"view","arguments":{"path":"/w/button.css"},"type":"function"},{"toolCallId":"toolu_02","name":"bash","arguments":"{\"command\":\"npm run lint:css\"}","type":"function"}]},"id":"e6","timestamp":"t","parentId":"e5"}"#;
        let m = meta(answer, 6);
        assert_eq!(m.columns.role.as_deref(), Some("assistant"));
        assert_eq!(m.text.as_deref(), Some("Let me look at the stylesheet.\nCheck the CSS."));
        assert_eq!(m.tool_text.as_deref(), Some("/w/button.css\nnpm run lint:css"));
        assert_eq!(m.tools.as_deref(), Some("view\nbash"));
        assert!(m.usage.is_empty(), "a message's outputTokens are counted by the shutdown, not here");
        assert_eq!(Copilot.who(&v(answer), false), Some(Who::new("Copilot", Side::Assistant)));
        match &Copilot.parts(&v(answer))[..] {
            [Part::Thinking(t), Part::Text(said), Part::ToolCall(view), Part::ToolCall(bash)] => {
                assert_eq!((t.as_str(), said.as_str()), ("Check the CSS.", "Let me look at the stylesheet."));
                assert_eq!((view.line(), view.id.as_deref()), ("view /w/button.css".into(), Some("toolu_01")));
                assert_eq!(bash.line(), "bash $ npm run lint:css", "arguments as a string of JSON");
            }
            other => panic!("{other:?}"),
        }
        let reasoning = r#"{"type":"assistant.reasoning","data":{"reasoningId":"r","content":"Hmm."},"id":"e5"}"#;
        assert_eq!(Copilot.parts(&v(reasoning)), [Part::Thinking("Hmm.".into())]);
        let ok = r#"{"type":"tool.execution_complete","data":{"toolCallId":"toolu_01","success":true,"result":{"content":"short","detailedContent":"1. .btn { color: white; }"}},"id":"e8"}"#;
        assert_eq!(meta(ok, 8).tool_text.as_deref(), Some("1. .btn { color: white; }"));
        assert_eq!(Copilot.who(&v(ok), false), Some(Who::new("Tool result", Side::Assistant)));
        assert_eq!(
            Copilot.parts(&v(ok)),
            [Part::ToolResult {
                call: Some("toolu_01".into()),
                text: "1. .btn { color: white; }".into(),
                error: false,
                label: None,
                media: vec![]
            }]
        );
        let failed = r#"{"type":"tool.execution_complete","data":{"toolCallId":"toolu_02","success":false,"error":{"message":"npm ERR! Missing script","code":"failure"}},"id":"e10"}"#;
        assert_eq!(meta(failed, 10).tool_text.as_deref(), Some("npm ERR! Missing script"));
        match &Copilot.parts(&v(failed))[..] {
            [Part::ToolResult { text, error: true, call: Some(call), .. }] => {
                assert_eq!((text.as_str(), call.as_str()), ("npm ERR! Missing script", "toolu_02"));
            }
            other => panic!("{other:?}"),
        }
        let string_result =
            r#"{"type":"tool.execution_complete","data":{"toolCallId":"c","success":true,"result":"plain"}}"#;
        assert!(matches!(&Copilot.parts(&v(string_result))[..], [Part::ToolResult { text, .. }] if text == "plain"));
        let by_person = r#"{"type":"tool.user_requested","data":{"toolCallId":"u1","toolName":"bash","arguments":{"command":"ls"}}}"#;
        assert_eq!(Copilot.who(&v(by_person), false), Some(Who::new("You", Side::User)));
        assert_eq!(meta(by_person, 11).tools.as_deref(), Some("bash"));
    }

    #[test]
    fn photos_are_numbered_in_assets_inline_attachments_and_tool_results() {
        let asset = r#"{"type":"session.binary_asset","data":{"assetId":"sha256:9f","byteLength":4,"data":"iVBORw==","mimeType":"image/png","type":"image"},"id":"e2","timestamp":"t","parentId":"e1"}"#;
        let blob = r#"{"type":"user.message","data":{"content":"this","attachments":[{"type":"blob","data":"iVBORw==","mimeType":"image/png","displayName":"paste.png"}]},"id":"e3"}"#;
        let tool = r#"{"type":"tool.execution_complete","data":{"toolCallId":"c","success":true,"result":{"content":"shot","contents":[{"type":"text","text":"shot"},{"type":"image","data":"iVBORw==","mimeType":"image/png"}]}},"id":"e4"}"#;
        for line in [asset, blob, tool] {
            let scanned = scan::scan(line.as_bytes(), Copilot.block_places()).unwrap();
            assert_eq!(scanned.output.spans.len(), 1, "{line}");
            assert_eq!(scanned.output.spans[0].ordinal, Some(0), "{line}");
            assert!(scanned.output.failed_images.is_empty(), "{line}");
        }
        let rendered = |line: &str| line.replace("\"iVBORw==\"", "\"/m/0\",\"url\":\"/m/0\"");
        let photo =
            Media { image: true, url: Some("/m/0".into()), mime_type: Some("image/png".into()), ..Media::default() };
        assert_eq!(Copilot.who(&v(asset), false), Some(Who::new("Attachment", Side::Note)));
        assert_eq!(Copilot.parts(&v(&rendered(asset))), [Part::Media(photo.clone())]);
        assert_eq!(Copilot.parts(&v(&rendered(blob))), [Part::Text("this".into()), Part::Media(photo.clone())]);
        assert_eq!(Copilot.typed_input(None, false, &v(blob)).unwrap().images.len(), 1);
        match &Copilot.parts(&v(&rendered(tool)))[..] {
            [Part::ToolResult { text, media, label: Some(label), .. }] => {
                assert_eq!(
                    (text.as_str(), label.as_str(), media.as_slice()),
                    ("shot", "Result (with a photo)", &[photo][..])
                );
            }
            other => panic!("{other:?}"),
        }
        let referenced = r#"{"type":"user.message","data":{"content":"see [image: a.png]","attachments":[{"type":"file","path":"/tmp/copilot-image-3fa2c1.png","displayName":"a.png","assetId":"sha256:9f","mimeType":"image/png","byteLength":4}]},"id":"e5"}"#;
        let scanned = scan::scan(referenced.as_bytes(), Copilot.block_places()).unwrap();
        assert!(scanned.output.spans.is_empty() && scanned.output.failed_images.is_empty());
        match &Copilot.parts(&v(referenced))[..] {
            [Part::Text(_), Part::Note(note)] => assert!(note.starts_with("Attached a.png"), "{note}"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn every_shutdown_counts_its_models_tokens_once_by_its_id() {
        let shutdown = r#"{"type":"session.shutdown","data":{"shutdownType":"routine","sessionStartTime":1782896400000,"modelMetrics":{"claude-sonnet-4.5":{"requests":{"count":2,"cost":1},"usage":{"inputTokens":24100,"outputTokens":89,"cacheReadTokens":18000,"cacheWriteTokens":5200,"reasoningTokens":9}},"gpt-5-mini":{"requests":{"count":1},"usage":{"inputTokens":10,"outputTokens":0,"cacheReadTokens":30,"cacheWriteTokens":0}},"idle":{"usage":{"inputTokens":0,"outputTokens":0}}}},"id":"e13","timestamp":"2026-07-01T09:05:00.000Z","parentId":"e12"}"#;
        let m = meta(shutdown, 13);
        assert!(shutdown.contains(Copilot.usage_markers()[0]));
        assert_eq!(Copilot.who(&v(shutdown), false), None);
        assert_eq!(m.usage.len(), 2, "a model with no tokens states nothing");
        let sonnet = &m.usage[0];
        assert_eq!(sonnet.key, "copilot:e13:claude-sonnet-4.5");
        assert_eq!(sonnet.model.as_deref(), Some("claude-sonnet-4.5"));
        assert_eq!(sonnet.timestamp.as_deref(), Some("2026-07-01T09:05:00.000Z"));
        assert_eq!(
            sonnet.tokens,
            Tokens { input: 900, output: 89, cache_read: 18000, cache_write: 5200, cache_write_1h: 0, reasoning: 9 }
        );
        assert_eq!(sonnet.tokens.total(), 24100 + 89, "the input counted once");
        let mini = &m.usage[1];
        assert_eq!(
            (mini.tokens.input, mini.tokens.cache_read),
            (10, 30),
            "a cache larger than the input is apart from it"
        );
        let no_id = shutdown.replace(r#""id":"e13","#, "");
        assert_eq!(meta(&no_id, 40).usage[0].key, "copilot:s:L40:claude-sonnet-4.5");
    }

    #[test]
    fn notes_say_what_happened_and_bookkeeping_is_not_shown() {
        let note = |s: &str| {
            let line = v(s);
            assert_eq!(Copilot.who(&line, false).map(|w| w.side), Some(Side::Note), "{s}");
            Copilot.parts(&line)
        };
        assert_eq!(
            note(r#"{"type":"abort","data":{"reason":"user_initiated"}}"#),
            [Part::Note("Interrupted (user_initiated).".into())]
        );
        assert_eq!(
            note(r#"{"type":"session.error","data":{"errorType":"x","message":"Rate limited"}}"#),
            [Part::Note("Rate limited".into())]
        );
        assert_eq!(
            note(r#"{"type":"session.model_change","data":{"newModel":"gpt-5"}}"#),
            [Part::Note("Model: gpt-5".into())]
        );
        assert!(matches!(
            &note(r#"{"type":"session.compaction_complete","data":{"summaryContent":"We fixed the CSS."}}"#)[..],
            [Part::Group { parts, .. }] if parts == &[Part::Text("We fixed the CSS.".into())]
        ));
        assert_eq!(
            note(r#"{"type":"subagent.completed","data":{"agentDisplayName":"Explore"}}"#),
            [Part::Note("Sub-agent Explore completed.".into())]
        );
        for hidden in [
            r#"{"type":"system.message","data":{"role":"system","content":"You are..."}}"#,
            r#"{"type":"assistant.turn_start","data":{"turnId":"0"}}"#,
            r#"{"type":"tool.execution_start","data":{"toolCallId":"c","toolName":"view"}}"#,
            r#"{"type":"hook.start","data":{}}"#,
        ] {
            assert_eq!(Copilot.who(&v(hidden), false), None, "{hidden}");
            assert!(Copilot.parts(&v(hidden)).is_empty(), "{hidden}");
            assert_eq!(meta(hidden, 2).text, None, "{hidden}");
        }
    }
}
