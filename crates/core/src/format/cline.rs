//! Cline and Roo Code, the VS Code extensions (Roo Code is a fork of Cline, and writes the same
//! files): a task is a folder `tasks/<task id>/` in the extension's global storage
//! (`saoudrizwan.claude-dev`, `rooveterinaryinc.roo-cline`), its id Cline's `Date.now()` or Roo's
//! UUID. Read from each extension's own source (cline/cline @ 864419d, v3.89.2, the last of the
//! classic layout: `apps/vscode/src/core/storage/disk.ts`, `src/shared/ExtensionMessage.ts`,
//! `src/shared/messages/content.ts`, `src/core/task/index.ts`; RooCodeInc/Roo-Code @ cb83656:
//! `src/core/task-persistence/apiMessages.ts`, `packages/types/src/message.ts`,
//! `src/core/task/Task.ts`); see docs/formats.md.
//!
//! Two files of a task are read, each a JSON array its extension writes whole at each change
//! (atomically: a temporary file renamed over it):
//! - `api_conversation_history.json`, the conversation as the model was sent it: Anthropic message
//!   params (`role`, `content` a string or blocks: `text`, `image` with base64 `source.data`,
//!   `tool_use`, `tool_result`, `thinking`, `redacted_thinking`, Roo's `reasoning`), with the
//!   message's `ts` (epoch milliseconds) where the build wrote it. The person's words come wrapped
//!   (`<task>`, `<feedback>`, `<answer>`, `<user_message>`), and each of their turns carries the
//!   editor's state in an `<environment_details>` block, which names the working directory
//!   (`# Current Working Directory (…) Files`, Roo's `# Current Workspace Directory`). These are the
//!   session's entries.
//! - `ui_messages.json`, what the extension's panel showed (`ts`, `type` `say` or `ask`, its kind,
//!   `text`, `images` as `data:` URLs): the same conversation again, indexed hidden as a repeat, of
//!   which one kind is read: `say: "api_req_started"`, whose `text` is a JSON string of the API
//!   request's counts (`tokensIn`, `tokensOut`, `cacheWrites`, `cacheReads`, and `cost`, which is
//!   not read: the ledger prices every agent alike) and, in Cline, its `modelInfo`. Each is one
//!   response, keyed by the task and the message's `ts`.
//!
//! Cline 4 (its SDK, run by its command line; cline/cline @ 21cb8d2:
//! `sdk/packages/shared/src/storage/paths.ts`, `sdk/packages/core/src/services/session-artifacts.ts`,
//! `session-data.ts`, `sdk/packages/shared/src/llms/messages.ts`,
//! `sdk/packages/core/src/session/models/session-manifest.ts`) keeps a session in a folder
//! `sessions/<session id>/` of its data directory (`~/.cline/data`): `<id>.messages.json`, an object
//! whose `messages` are the same Anthropic-like messages (an image block is `{type: "image", data,
//! mediaType}`, a file the person attached `{type: "file", path, content}`), each with its `id`,
//! `ts`, `modelInfo` and, on an answer, `metrics` (the model call's `inputTokens`, which hold the
//! cache's reads and writes, `outputTokens`, `cacheReadTokens`, `cacheWriteTokens`): one response,
//! keyed by the session and the message's id. The person's words come wrapped in `<user_input
//! mode="act">`; messages the runtime added are marked (`metadata.userRunSpan: 0`, or
//! `metadata.displayRole` `system` or `status`). A sub-agent's transcript is another
//! `<agent>.messages.json` in the same folder, a session of its own (`<session>__<agent>`, as the
//! SDK names it). The manifest beside it (`<id>.json`) names the working directory. Each file is
//! rewritten whole, in place.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::usage::count;
use super::{
    BlockPlaces, Columns, FileContext, Format, Meta, MetaError, Part, Records, SearchText, Side, Tokens, Typed, Usage,
    Who, first_chars, hidden, parse_object, str_at, title_rank,
};

/// One of the two extensions: its name, the one its panel gives its answers, and its global
/// storage folder's name.
#[derive(Debug, Clone, Copy)]
pub struct Tasks {
    name: &'static str,
    display: &'static str,
    speaker: &'static str,
    extension: &'static str,
}

/// Cline.
pub static CLINE: Tasks =
    Tasks { name: "cline", display: "Cline", speaker: "Cline", extension: "saoudrizwan.claude-dev" };

/// Roo Code.
pub static ROO: Tasks =
    Tasks { name: "roo", display: "Roo Code", speaker: "Roo", extension: "rooveterinaryinc.roo-cline" };

/// The conversation as the model was sent it: the task's entries.
const API: &str = "api_conversation_history.json";

/// What the panel showed: read for the API requests' counts.
const UI: &str = "ui_messages.json";

/// How Cline 4's transcripts' names end: `<session id>.messages.json`, `<agent>.messages.json`.
const MESSAGES: &str = ".messages.json";

/// Whether `path` is a transcript of Cline 4: `sessions/<session id>/<name>.messages.json`.
fn is_session_file(path: &Path) -> bool {
    let name = path.file_name().and_then(|n| n.to_str());
    let sessions = path.parent().and_then(Path::parent).and_then(Path::file_name);
    name.is_some_and(|n| n.len() > MESSAGES.len() && n.ends_with(MESSAGES)) && sessions.is_some_and(|s| s == "sessions")
}

/// The runtime's marks on a message it added: `userRunSpan: 0` (a reminder, a hook's context), or a
/// `displayRole` Cline's own panel does not show as anybody's words.
fn added_by_cline(message: &Value) -> bool {
    let meta = message.get("metadata").unwrap_or(&Value::Null);
    meta.get("userRunSpan").and_then(Value::as_i64) == Some(0)
        || matches!(str_at(meta, "displayRole"), Some("system" | "status"))
}

/// Image blocks are numbered under a message's `content` (a tool result's among them).
static BLOCK_PLACES: BlockPlaces = BlockPlaces::new(&[&["content"]]);

/// The tags the extensions wrap a person's words in: the task, feedback on a step, an answer to the
/// agent's question, a message (Roo's, since 2026).
const PERSONS_TAGS: &[&str] = &["task", "feedback", "answer", "user_message"];

/// The editors whose global storage the extensions live in (VS Code and its builds and forks).
const EDITORS: &[&str] = &["Code", "Code - Insiders", "VSCodium", "Cursor", "Windsurf"];

impl Format for Tasks {
    fn name(&self) -> &'static str {
        self.name
    }

    fn display_name(&self) -> &'static str {
        self.display
    }

    /// A task's `api_conversation_history.json` or `ui_messages.json`, in a folder under `tasks/`;
    /// and Cline 4's `<name>.messages.json`, in a folder under `sessions/`.
    fn is_transcript(&self, path: &Path) -> bool {
        let name = path.file_name().and_then(|n| n.to_str());
        let tasks = path.parent().and_then(Path::parent).and_then(Path::file_name);
        (matches!(name, Some(API | UI)) && tasks.is_some_and(|t| t == "tasks"))
            || (self.name == CLINE.name && is_session_file(path))
    }

    /// A task's files are a JSON array, written whole; Cline 4's an object whose `messages` are.
    fn document_records(&self, path: &Path) -> Option<Records> {
        Some(if is_session_file(path) { Records::At("messages") } else { Records::Elements })
    }

    /// Cline 4's manifest beside its transcript (`<session id>/<session id>.json`).
    fn project_file(&self, path: &Path) -> Option<PathBuf> {
        let folder = path.parent().filter(|_| is_session_file(path))?;
        let id = folder.file_name()?.to_str()?;
        Some(folder.join(format!("{id}.json")))
    }

    /// The manifest's `cwd` (else its `workspace_root`).
    fn project_in(&self, text: &str) -> Option<String> {
        let manifest: Value = serde_json::from_str(text).ok()?;
        ["cwd", "workspace_root"]
            .iter()
            .find_map(|k| str_at(&manifest, k).filter(|d| !d.trim().is_empty() && !d.contains('\n')))
            .map(str::to_owned)
    }

    fn block_places(&self) -> &'static BlockPlaces {
        &BLOCK_PLACES
    }

    /// The session is the task's folder; its lines name the directory. Cline 4's: the session its
    /// header names (`sessionId`), else the folder's, or for a sub-agent's file `<folder>__<agent>`.
    fn file_context(&self, path: &Path, first_line: &mut dyn FnMut() -> Option<String>) -> FileContext {
        let folder = path.parent().and_then(Path::file_name).map(|t| t.to_string_lossy().into_owned());
        let folder = folder.unwrap_or_default();
        if !is_session_file(path) {
            return FileContext { session: folder, ..FileContext::default() };
        }
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        let stem = name.strip_suffix(MESSAGES).unwrap_or(name);
        let named = first_line()
            .and_then(|l| serde_json::from_str::<Value>(&l).ok())
            .and_then(|h| str_at(&h, "sessionId").map(str::to_owned))
            .filter(|id| crate::codec::refs::is_id(id));
        let session =
            named.unwrap_or_else(|| if stem == folder { folder.clone() } else { format!("{folder}__{stem}") });
        FileContext { session, ..FileContext::default() }
    }

    /// 0 for the conversation (and for each of Cline 4's, a session each); the panel's file after it.
    fn file_key(&self, path: &Path, _session: &str) -> i64 {
        if path.file_name().is_some_and(|n| n == API) || is_session_file(path) { 0 } else { super::name_key(path) }
    }

    fn describe(&self, stripped: &str, line: u64, file: &FileContext) -> Result<Meta, MetaError> {
        let top = Value::Object(parse_object(stripped)?);
        if top.get("role").is_none() {
            return Ok(self.describe_shown(&top, line, file));
        }
        let mut meta = describe_message(&top, line);
        if meta.cwd.is_none() {
            meta.cwd.clone_from(&file.project);
        }
        // Cline 4's answers state their model call's counts.
        meta.usage.extend(self.message_usage(&top, &file.session));
        Ok(meta)
    }

    /// A person's message: their words, unwrapped, and their photos.
    fn typed_input(&self, _kind: Option<&str>, _is_sidechain: bool, line: &Value) -> Option<Typed> {
        if !is_persons(line) {
            return None;
        }
        let mut text = Vec::new();
        let mut images = Vec::new();
        match line.get("content")? {
            Value::String(s) => text.extend(persons_words(line, s)),
            Value::Array(blocks) => {
                for block in blocks {
                    match str_at(block, "type") {
                        Some("text") => text.extend(str_at(block, "text").and_then(|t| persons_words(line, t))),
                        Some("image") => images.push(str_at(block, "blake3").map(str::to_owned)),
                        _ => {}
                    }
                }
            }
            _ => return None,
        }
        let typed = Typed { text: text.join("\n"), images };
        (!typed.text.trim().is_empty() || !typed.images.is_empty()).then_some(typed)
    }

    /// The panel's API requests (`api_req_started`) state the counts; Cline 4's answers their
    /// `metrics`.
    fn usage_markers(&self) -> &'static [&'static str] {
        &["tokensIn", "inputTokens"]
    }

    fn parts(&self, line: &Value) -> Vec<Part> {
        let Some(content) = line.get("content").filter(|_| line.get("role").is_some()) else { return Vec::new() };
        let mut out = Vec::new();
        let blocks = match content {
            Value::String(s) => vec![serde_json::json!({"type": "text", "text": s})],
            Value::Array(blocks) => blocks.clone(),
            _ => return out,
        };
        for block in blocks {
            match str_at(&block, "type") {
                Some("text") => {
                    let text = str_at(&block, "text").unwrap_or("");
                    let (words, rest) = unwrap_in(line, text);
                    if let Some(words) = words {
                        out.push(Part::Text(words.to_owned()));
                    }
                    super::claude::content_parts(&Value::String(rest.to_owned()), &mut out);
                }
                Some("reasoning") => {
                    if let Some(t) = str_at(&block, "text").filter(|t| !t.trim().is_empty()) {
                        out.push(Part::Thinking(t.to_owned()));
                    }
                }
                // A file the person attached (Cline 4): its text, folded.
                Some("file") => {
                    let path = str_at(&block, "path").unwrap_or("a file");
                    let text = str_at(&block, "content").unwrap_or("").to_owned();
                    out.push(Part::Context { label: format!("File {path}"), text });
                }
                _ => super::claude::content_parts(&Value::Array(vec![block]), &mut out),
            }
        }
        out
    }

    /// The person, the extension, or a tool's result; the panel's copy is not shown.
    fn who(&self, line: &Value, _is_sidechain: bool) -> Option<Who> {
        match str_at(line, "role")? {
            _ if added_by_cline(line) => Some(Who::new(self.speaker, Side::Note)),
            "assistant" => Some(Who::new(self.speaker, Side::Assistant)),
            "user" if holds_tool_result(line) => Some(Who::new("Tool result", Side::Note)),
            "user" => Some(Who::new("You", Side::User)),
            _ => None,
        }
    }

    /// The tasks folders of the extension's global storage in each editor: under
    /// `~/Library/Application Support` on macOS, else `$XDG_CONFIG_HOME` (else `~/.config`); Cline's
    /// command line and JetBrains builds keep theirs in `~/.cline/data`.
    fn default_roots(&self, var: &dyn Fn(&str) -> Option<OsString>) -> Vec<PathBuf> {
        let nonempty = |name: &str| var(name).filter(|v| !v.is_empty()).map(PathBuf::from);
        let Some(home) = nonempty("HOME") else { return Vec::new() };
        let base = if cfg!(target_os = "macos") {
            home.join("Library/Application Support")
        } else {
            nonempty("XDG_CONFIG_HOME").filter(|p| p.is_absolute()).unwrap_or_else(|| home.join(".config"))
        };
        let mut roots: Vec<PathBuf> = EDITORS
            .iter()
            .map(|editor| base.join(editor).join("User/globalStorage").join(self.extension).join("tasks"))
            .collect();
        if self.name == CLINE.name {
            roots.push(home.join(".cline/data/tasks"));
            // Cline 4's sessions: `$CLINE_SESSION_DATA_DIR`, else `$CLINE_DATA_DIR/sessions`, else
            // `$CLINE_DIR/data/sessions`, else `~/.cline/data/sessions`.
            let absolute = |name: &str| nonempty(name).filter(|p| p.is_absolute());
            roots.push(
                absolute("CLINE_SESSION_DATA_DIR")
                    .or_else(|| absolute("CLINE_DATA_DIR").map(|d| d.join("sessions")))
                    .or_else(|| absolute("CLINE_DIR").map(|d| d.join("data/sessions")))
                    .unwrap_or_else(|| home.join(".cline/data/sessions")),
            );
        }
        roots
    }
}

impl Tasks {
    /// The counts of a Cline 4 answer's model call (its `metrics`): one response, keyed by the
    /// session and the message's id. `inputTokens` holds the cache's reads and writes, taken out of
    /// it here (unless they are more than it).
    fn message_usage(&self, message: &Value, session: &str) -> Option<Usage> {
        let metrics = message.get("metrics").filter(|_| str_at(message, "role") == Some("assistant"))?;
        let (read, write) = (count(metrics, "cacheReadTokens"), count(metrics, "cacheWriteTokens"));
        let input = count(metrics, "inputTokens");
        let tokens = Tokens {
            input: if read + write <= input { input - read - write } else { input },
            output: count(metrics, "outputTokens"),
            cache_read: read,
            cache_write: write,
            ..Tokens::default()
        };
        let id = str_at(message, "id")?;
        (tokens.total() > 0).then(|| Usage {
            key: format!("{}:{session}:{id}", self.name),
            model: message.get("modelInfo").and_then(|m| str_at(m, "id")).map(str::to_owned),
            timestamp: message.get("ts").and_then(Value::as_i64).and_then(super::millis_iso),
            tokens,
            ..Usage::default()
        })
    }

    /// A record of the panel's file: a repeat of the conversation, hidden, but for the counts of an
    /// API request.
    fn describe_shown(&self, record: &Value, line: u64, file: &FileContext) -> Meta {
        let mut meta = Meta::default();
        let kind = str_at(record, "say").or(str_at(record, "ask"));
        let ts = record.get("ts").and_then(Value::as_i64);
        meta.columns = Columns {
            uuid: Some(format!("ui-{line}")),
            kind: kind.map(|k| format!("ui:{k}")),
            timestamp: ts.and_then(super::millis_iso),
            ..Columns::default()
        };
        meta.hidden = Some(hidden::REPEAT);
        if kind == Some("api_req_started") && str_at(record, "type") == Some("say") {
            meta.usage.extend(self.request_usage(record, ts, &file.session));
        }
        meta
    }

    /// The counts of an API request (`api_req_started`'s `text`), one response keyed by the task and
    /// the message's time; none while the request is under way (no counts yet).
    fn request_usage(&self, record: &Value, ts: Option<i64>, task: &str) -> Option<Usage> {
        let info: Value = serde_json::from_str(str_at(record, "text")?).ok()?;
        let tokens = Tokens {
            input: count(&info, "tokensIn"),
            output: count(&info, "tokensOut"),
            cache_read: count(&info, "cacheReads"),
            cache_write: count(&info, "cacheWrites"),
            ..Tokens::default()
        };
        let model = record
            .get("modelInfo")
            .and_then(|m| str_at(m, "modelId"))
            .map(str::to_owned)
            .or_else(|| str_at(&info, "request").and_then(environment_model));
        (tokens.total() > 0).then(|| Usage {
            key: format!("{}:{task}:{}", self.name, ts.map_or_else(|| "?".to_owned(), |t| t.to_string())),
            model,
            timestamp: ts.and_then(super::millis_iso),
            tokens,
            ..Usage::default()
        })
    }
}

/// A message of the conversation: its columns, search text, title and directory.
fn describe_message(message: &Value, line: u64) -> Meta {
    let mut meta = Meta::default();
    let role = str_at(message, "role");
    meta.columns = Columns {
        uuid: Some(str_at(message, "id").map_or_else(|| format!("m{line}"), str::to_owned)),
        kind: role.map(str::to_owned),
        role: role.map(str::to_owned),
        timestamp: message.get("ts").and_then(Value::as_i64).and_then(super::millis_iso),
        ..Columns::default()
    };
    let mut text = SearchText::default();
    let persons = is_persons(message);
    let texts: Vec<&str> = match message.get("content") {
        Some(Value::String(s)) => vec![s.as_str()],
        Some(Value::Array(blocks)) => {
            for block in blocks {
                match str_at(block, "type") {
                    Some("thinking") => text.said(str_at(block, "thinking").unwrap_or("")),
                    Some("reasoning") => text.said(str_at(block, "text").unwrap_or("")),
                    Some("tool_use") => text.call(str_at(block, "name"), block.get("input")),
                    Some("tool_result") => {
                        if let Some(c) = block.get("content") {
                            text.output(&super::parts::result_text(c));
                        }
                    }
                    _ => {}
                }
            }
            blocks.iter().filter(|b| str_at(b, "type") == Some("text")).filter_map(|b| str_at(b, "text")).collect()
        }
        _ => Vec::new(),
    };
    for t in texts {
        if meta.cwd.is_none() {
            meta.cwd = working_directory(t);
        }
        let (words, _) = unwrap_in(message, t);
        match words {
            Some(words) => {
                text.said(words);
                if persons && meta.title.is_none() && !words.trim().is_empty() {
                    meta.title = Some((title_rank::FIRST_USER_TEXT, first_chars(words.trim().to_owned(), 200)));
                }
            }
            // The editor's state, a tool's result in words: context, searched as output.
            None if role == Some("user") => text.output(t),
            None => text.said(t),
        }
    }
    text.finish(&mut meta);
    meta
}

/// Whether a message's content holds a tool's result.
fn holds_tool_result(message: &Value) -> bool {
    match message.get("content") {
        Some(Value::Array(blocks)) => blocks.iter().any(|b| str_at(b, "type") == Some("tool_result")),
        _ => false,
    }
}

/// Whether a message is a person's: `user`, with their words in it and no tool's result, and not
/// one Cline 4's runtime added.
fn is_persons(message: &Value) -> bool {
    str_at(message, "role") == Some("user") && !holds_tool_result(message) && !added_by_cline(message)
}

/// The person's words a text block begins with (inside one of [`PERSONS_TAGS`], or Cline 4's
/// `<user_input mode="...">`, after the `<mode_notice>` a mode's change puts before it), and what
/// follows them; `None` and the whole text if it begins with none.
fn unwrap_persons(text: &str) -> (Option<&str>, &str) {
    let mut trimmed = text.trim_start();
    if let Some(rest) = trimmed.strip_prefix("<mode_notice>")
        && let Some(end) = rest.find("</mode_notice>")
    {
        trimmed = rest[end + "</mode_notice>".len()..].trim_start();
    }
    for tag in PERSONS_TAGS {
        let open = format!("<{tag}>");
        let close = format!("</{tag}>");
        if let Some(rest) = trimmed.strip_prefix(&open)
            && let Some(end) = rest.find(&close)
        {
            return (Some(rest[..end].trim()), &rest[end + close.len()..]);
        }
    }
    // `<user_input>` or `<user_input mode="act">`.
    if let Some(rest) = trimmed.strip_prefix("<user_input")
        && rest.starts_with(['>', ' '])
        && let Some(open_end) = rest.find('>')
        && let Some(end) = rest.find("</user_input>")
        && open_end < end
    {
        return (Some(rest[open_end + 1..end].trim()), &rest[end + "</user_input>".len()..]);
    }
    (None, text)
}

/// The person's words of a text block of `message`, and what follows them: unwrapped from their tag
/// ([`unwrap_persons`]); or, in a person's message of Cline 4 (which has an `id`, unlike the
/// extensions' person's messages) written before its runtime wrapped them, the whole text, unless it
/// is a tag's (the editor's state).
fn unwrap_in<'a>(message: &Value, text: &'a str) -> (Option<&'a str>, &'a str) {
    let (words, rest) = unwrap_persons(text);
    if words.is_none()
        && is_persons(message)
        && message.get("id").is_some()
        && !text.trim().is_empty()
        && !text.trim_start().starts_with('<')
    {
        return (Some(text.trim()), "");
    }
    (words, rest)
}

/// The person's words of a text block of `message`, if it holds them.
fn persons_words<'a>(message: &Value, text: &'a str) -> Option<&'a str> {
    unwrap_in(message, text).0.filter(|w| !w.is_empty())
}

/// The working directory the editor's state names (`# Current Working Directory (/w/app) Files`;
/// Roo's `# Current Workspace Directory`).
fn working_directory(text: &str) -> Option<String> {
    ["# Current Working Directory (", "# Current Workspace Directory ("].iter().find_map(|heading| {
        let start = text.find(heading)? + heading.len();
        let rest = &text[start..];
        let end = rest.find(") Files").or_else(|| rest.find(")\n")).or_else(|| rest.find(')'))?;
        let dir = rest[..end].trim();
        (!dir.is_empty() && !dir.contains('\n')).then(|| dir.to_owned())
    })
}

/// The model the editor's state names (`<model>…</model>`, Roo's), in an API request's text.
fn environment_model(request: &str) -> Option<String> {
    let start = request.rfind("<model>")? + "<model>".len();
    let end = request[start..].find("</model>")? + start;
    let model = request[start..end].trim();
    (!model.is_empty() && model.len() < 200).then(|| model.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::Media;

    fn context(path: &str) -> FileContext {
        CLINE.file_context(Path::new(path), &mut || None)
    }

    fn value(line: &str) -> Value {
        serde_json::from_str(line).unwrap()
    }

    const TASK: &str = r#"{"role":"user","content":[{"type":"text","text":"<task>\nWhy is the button red?\n</task>"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"STRIPPED_MEDIA_MARKER"}},{"type":"text","text":"<environment_details>\n# VSCode Visible Files\nsrc/App.css\n\n# Current Working Directory (/w/app) Files\nsrc/\n</environment_details>"}],"ts":1780308000000}"#;
    const ANSWER: &str = r#"{"role":"assistant","content":[{"type":"thinking","thinking":"Check the CSS.","signature":"s"},{"type":"text","text":"Let me look."},{"type":"tool_use","id":"toolu_01","name":"read_file","input":{"path":"src/App.css"}}],"id":"a1","ts":1780308004000,"modelInfo":{"modelId":"claude-sonnet-4-5","providerId":"anthropic","mode":"act"}}"#;
    const RESULT: &str = r#"{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_01","content":".btn { color: red }"},{"type":"text","text":"<environment_details>\n# Current Working Directory (/w/app) Files\n</environment_details>"}],"ts":1780308005000}"#;
    const REQUEST: &str = r#"{"ts":1780308003000,"type":"say","say":"api_req_started","text":"{\"request\":\"<task>\\nWhy?\\n</task>\",\"tokensIn\":12,\"tokensOut\":300,\"cacheWrites\":9000,\"cacheReads\":100,\"cost\":0.04}","modelInfo":{"modelId":"claude-sonnet-4-5","providerId":"anthropic","mode":"act"}}"#;

    #[test]
    fn a_tasks_two_files_are_its_session_the_conversation_first() {
        let api = Path::new("/g/saoudrizwan.claude-dev/tasks/1780308000000/api_conversation_history.json");
        let ui = Path::new("/g/saoudrizwan.claude-dev/tasks/1780308000000/ui_messages.json");
        assert!(CLINE.is_transcript(api) && CLINE.is_transcript(ui));
        for not in
            ["/g/tasks/1/task_metadata.json", "/g/state/api_conversation_history.json", "/g/x/1/ui_messages.json"]
        {
            assert!(!CLINE.is_transcript(Path::new(not)), "{not}");
        }
        assert_eq!(CLINE.document_records(api), Some(Records::Elements));
        assert_eq!(context(api.to_str().unwrap()).session, "1780308000000");
        assert_eq!(CLINE.file_key(api, "1780308000000"), 0);
        assert_ne!(CLINE.file_key(ui, "1780308000000"), 0);
    }

    #[test]
    fn the_persons_words_are_unwrapped_and_the_editors_state_is_context() {
        let m = CLINE.describe(TASK, 1, &context("/t/tasks/1/api_conversation_history.json")).unwrap();
        assert_eq!(m.title, Some((title_rank::FIRST_USER_TEXT, "Why is the button red?".into())));
        assert_eq!(m.cwd.as_deref(), Some("/w/app"));
        assert_eq!(m.columns.timestamp.as_deref(), Some("2026-06-01T10:00:00.000Z"));
        assert_eq!(m.columns.uuid.as_deref(), Some("m1"));
        assert!(m.text.as_deref().unwrap().contains("Why is the button red?"));
        let parts = CLINE.parts(&value(TASK));
        assert!(matches!(&parts[0], Part::Text(t) if t == "Why is the button red?"), "{parts:?}");
        assert!(matches!(&parts[1], Part::Media(Media { image: true, .. })), "{parts:?}");
        assert!(
            matches!(&parts[2], Part::Context { label, text } if label == "Environment details" && text.contains("/w/app"))
        );
        assert_eq!(CLINE.who(&value(TASK), false).unwrap().side, Side::User);
        let typed = CLINE.typed_input(None, false, &value(TASK)).unwrap();
        assert_eq!((typed.text.as_str(), typed.images.len()), ("Why is the button red?", 1));
    }

    #[test]
    fn answers_think_and_call_tools_whose_results_come_back() {
        let m = CLINE.describe(ANSWER, 2, &FileContext::default()).unwrap();
        assert_eq!(m.columns.uuid.as_deref(), Some("a1"));
        assert!(m.text.as_deref().unwrap().contains("Check the CSS."));
        assert_eq!(m.tools.as_deref(), Some("read_file"));
        let who = ROO.who(&value(ANSWER), false).unwrap();
        assert_eq!((who.name.as_str(), who.side), ("Roo", Side::Assistant));
        let kinds: Vec<&str> = CLINE
            .parts(&value(ANSWER))
            .iter()
            .map(|p| match p {
                Part::Thinking(_) => "thinking",
                Part::Text(_) => "text",
                Part::ToolCall(_) => "call",
                _ => "other",
            })
            .collect();
        assert_eq!(kinds, ["thinking", "text", "call"]);
        assert_eq!(CLINE.who(&value(RESULT), false).unwrap().side, Side::Note);
        assert!(CLINE.typed_input(None, false, &value(RESULT)).is_none());
        let m = CLINE.describe(RESULT, 3, &FileContext::default()).unwrap();
        assert!(m.tool_text.as_deref().unwrap().contains("color: red") && m.title.is_none());
    }

    #[test]
    fn the_panels_copy_is_a_hidden_repeat_and_its_api_requests_are_the_responses() {
        let task = context("/t/tasks/1780308000000/ui_messages.json");
        let m = CLINE.describe(REQUEST, 2, &task).unwrap();
        assert_eq!((m.hidden, m.text.as_deref()), (Some(hidden::REPEAT), None));
        assert_eq!(m.columns.uuid.as_deref(), Some("ui-2"));
        let [u] = &m.usage[..] else { panic!("{:?}", m.usage) };
        assert_eq!(u.key, "cline:1780308000000:1780308003000");
        assert_eq!(
            (u.model.as_deref(), u.timestamp.as_deref()),
            (Some("claude-sonnet-4-5"), Some("2026-06-01T10:00:03.000Z"))
        );
        assert_eq!(
            u.tokens,
            Tokens { input: 12, output: 300, cache_read: 100, cache_write: 9000, ..Tokens::default() }
        );
        assert!(REQUEST.contains(CLINE.usage_markers()[0]));
        assert!(CLINE.who(&value(REQUEST), false).is_none() && CLINE.parts(&value(REQUEST)).is_empty());
        // Roo names no model on the message: its request's editor state does. Under way: no counts.
        let roo = r#"{"ts":5,"type":"say","say":"api_req_started","text":"{\"request\":\"<user_message>hi</user_message><environment_details><model>gpt-5</model></environment_details>\",\"tokensIn\":1,\"tokensOut\":2}"}"#;
        assert_eq!(ROO.describe(roo, 1, &task).unwrap().usage[0].model.as_deref(), Some("gpt-5"));
        assert_eq!(ROO.describe(roo, 1, &task).unwrap().usage[0].key, "roo:1780308000000:5");
        let started = r#"{"ts":6,"type":"say","say":"api_req_started","text":"{\"request\":\"hi\"}"}"#;
        assert!(CLINE.describe(started, 1, &task).unwrap().usage.is_empty());
        let shown = r#"{"ts":7,"type":"say","say":"text","text":"Let me look.","images":[]}"#;
        let m = CLINE.describe(shown, 3, &task).unwrap();
        assert_eq!((m.hidden, m.columns.kind.as_deref(), m.usage.len()), (Some(hidden::REPEAT), Some("ui:text"), 0));
    }

    #[test]
    fn roos_words_and_workspace_and_the_default_roots() {
        let msg = r#"{"role":"user","content":[{"type":"text","text":"<user_message>\nFix the build\n</user_message>"},{"type":"text","text":"<environment_details>\n# Current Workspace Directory (/home/u/proj) Files\n</environment_details>"}],"ts":1}"#;
        let m = ROO.describe(msg, 1, &FileContext::default()).unwrap();
        assert_eq!((m.cwd.as_deref(), m.title.map(|t| t.1)), (Some("/home/u/proj"), Some("Fix the build".into())));
        let var = |name: &str| (name == "HOME").then(|| OsString::from("/h"));
        let roots = ROO.default_roots(&var);
        let base = if cfg!(target_os = "macos") { "/h/Library/Application Support" } else { "/h/.config" };
        assert!(
            roots.contains(&PathBuf::from(format!("{base}/Code/User/globalStorage/rooveterinaryinc.roo-cline/tasks")))
        );
        assert!(
            roots.contains(&PathBuf::from(format!(
                "{base}/VSCodium/User/globalStorage/rooveterinaryinc.roo-cline/tasks"
            )))
        );
        assert_eq!(roots.len(), EDITORS.len());
        assert!(CLINE.default_roots(&var).contains(&PathBuf::from("/h/.cline/data/tasks")));
        assert!(!roots.iter().any(|r| r.starts_with("/h/.cline")));
        // Cline 4's sessions, where its variables move them.
        for (vars, sessions) in [
            (vec![("HOME", "/h")], "/h/.cline/data/sessions"),
            (vec![("HOME", "/h"), ("CLINE_DIR", "/c")], "/c/data/sessions"),
            (vec![("HOME", "/h"), ("CLINE_DIR", "/c"), ("CLINE_DATA_DIR", "/d")], "/d/sessions"),
            (vec![("HOME", "/h"), ("CLINE_DATA_DIR", "/d"), ("CLINE_SESSION_DATA_DIR", "/s")], "/s"),
            (vec![("HOME", "/h"), ("CLINE_DATA_DIR", "relative")], "/h/.cline/data/sessions"),
        ] {
            let var = |name: &str| vars.iter().find(|(k, _)| *k == name).map(|(_, v)| OsString::from(v));
            assert!(CLINE.default_roots(&var).contains(&PathBuf::from(sessions)), "{vars:?}");
        }
    }

    const ASKED_4: &str = r#"{"id":"msg_1","role":"user","content":[{"type":"text","text":"<mode_notice>Plan mode</mode_notice>\n<user_input mode=\"plan\">Why is the header misaligned? [Image 1]</user_input>"},{"type":"image","data":"STRIPPED_MEDIA_MARKER","mediaType":"image/png"}],"ts":1787429702001}"#;
    const ANSWER_4: &str = r#"{"id":"msg_2","role":"assistant","content":[{"type":"text","text":"Let me look."}],"ts":1787429705120,"modelInfo":{"id":"anthropic/claude-sonnet-4.6","provider":"cline"},"metrics":{"inputTokens":14210,"outputTokens":96,"cacheReadTokens":0,"cacheWriteTokens":14180,"cost":0.05}}"#;

    #[test]
    fn cline_4_s_sessions_are_its_sdk_s_files_and_their_answers_state_their_counts() {
        let main = Path::new("/h/.cline/data/sessions/1787429701234_k3x9q/1787429701234_k3x9q.messages.json");
        let sub = Path::new("/h/.cline/data/sessions/1787429701234_k3x9q/explorer.messages.json");
        assert!(CLINE.is_transcript(main) && CLINE.is_transcript(sub) && !ROO.is_transcript(main));
        for not in [
            "/h/.cline/data/sessions/1787429701234_k3x9q/1787429701234_k3x9q.json",
            "/h/.cline/data/sessions/1787429701234_k3x9q/1787429701234_k3x9q.compaction.json",
            "/h/.cline/data/other/1787429701234_k3x9q/a.messages.json",
            "/h/.cline/data/sessions/x/.messages.json",
        ] {
            assert!(!CLINE.is_transcript(Path::new(not)), "{not}");
        }
        assert_eq!(CLINE.document_records(main), Some(Records::At("messages")));
        assert_eq!(
            CLINE.project_file(main),
            Some(PathBuf::from("/h/.cline/data/sessions/1787429701234_k3x9q/1787429701234_k3x9q.json"))
        );
        assert_eq!(CLINE.project_in(r#"{"cwd":"/w/web","workspace_root":"/w"}"#).as_deref(), Some("/w/web"));
        let session =
            |path: &Path, header: Option<&str>| CLINE.file_context(path, &mut || header.map(str::to_owned)).session;
        assert_eq!(session(main, None), "1787429701234_k3x9q");
        assert_eq!(session(sub, None), "1787429701234_k3x9q__explorer");
        assert_eq!(
            session(sub, Some(r#"{"version":1,"sessionId":"1787429701234_k3x9q__explorer_1"}"#)),
            "1787429701234_k3x9q__explorer_1"
        );
        assert_eq!((CLINE.file_key(main, "s"), CLINE.file_key(sub, "s")), (0, 0));

        let context = FileContext {
            session: "1787429701234_k3x9q".into(),
            project: Some("/w/web".into()),
            ..FileContext::default()
        };
        let asked = CLINE.describe(ASKED_4, 1, &context).unwrap();
        assert_eq!(asked.title, Some((title_rank::FIRST_USER_TEXT, "Why is the header misaligned? [Image 1]".into())));
        assert_eq!(asked.cwd.as_deref(), Some("/w/web"));
        let typed = CLINE.typed_input(None, false, &value(ASKED_4)).unwrap();
        assert_eq!((typed.text.as_str(), typed.images.len()), ("Why is the header misaligned? [Image 1]", 1));
        let answer = CLINE.describe(ANSWER_4, 2, &context).unwrap();
        let u = &answer.usage[0];
        assert_eq!(
            (u.key.as_str(), u.model.as_deref()),
            ("cline:1787429701234_k3x9q:msg_2", Some("anthropic/claude-sonnet-4.6"))
        );
        assert_eq!((u.tokens.input, u.tokens.output, u.tokens.cache_write), (30, 96, 14180));
        assert!(CLINE.usage_markers().iter().any(|m| ANSWER_4.contains(m)));
        // A message the runtime added is nobody's words, and titles nothing.
        let reminder = r#"{"id":"msg_3","role":"user","content":[{"type":"text","text":"Finish with attempt_completion."}],"ts":1,"metadata":{"userRunSpan":0}}"#;
        assert_eq!(CLINE.who(&value(reminder), false).unwrap().side, Side::Note);
        assert!(CLINE.describe(reminder, 3, &context).unwrap().title.is_none());
        assert!(CLINE.typed_input(None, false, &value(reminder)).is_none());
    }
}
