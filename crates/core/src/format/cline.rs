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

    /// A task's `api_conversation_history.json` or `ui_messages.json`, in a folder under `tasks/`.
    fn is_transcript(&self, path: &Path) -> bool {
        let name = path.file_name().and_then(|n| n.to_str());
        let tasks = path.parent().and_then(Path::parent).and_then(Path::file_name);
        matches!(name, Some(API | UI)) && tasks.is_some_and(|t| t == "tasks")
    }

    /// Both are a JSON array, written whole.
    fn document_records(&self, _path: &Path) -> Option<Records> {
        Some(Records::Elements)
    }

    fn block_places(&self) -> &'static BlockPlaces {
        &BLOCK_PLACES
    }

    /// The session is the task's folder; its lines name the directory.
    fn file_context(&self, path: &Path, _first_line: &mut dyn FnMut() -> Option<String>) -> FileContext {
        let task = path.parent().and_then(Path::file_name).map(|t| t.to_string_lossy().into_owned());
        FileContext { session: task.unwrap_or_default(), ..FileContext::default() }
    }

    /// 0 for the conversation; the panel's file after it.
    fn file_key(&self, path: &Path, _session: &str) -> i64 {
        if path.file_name().is_some_and(|n| n == API) { 0 } else { super::name_key(path) }
    }

    fn describe(&self, stripped: &str, line: u64, file: &FileContext) -> Result<Meta, MetaError> {
        let top = Value::Object(parse_object(stripped)?);
        Ok(if top.get("role").is_some() { describe_message(&top, line) } else { self.describe_shown(&top, line, file) })
    }

    /// A person's message: their words, unwrapped, and their photos.
    fn typed_input(&self, _kind: Option<&str>, _is_sidechain: bool, line: &Value) -> Option<Typed> {
        if !is_persons(line) {
            return None;
        }
        let mut text = Vec::new();
        let mut images = Vec::new();
        match line.get("content")? {
            Value::String(s) => text.extend(persons_words(s)),
            Value::Array(blocks) => {
                for block in blocks {
                    match str_at(block, "type") {
                        Some("text") => text.extend(str_at(block, "text").and_then(persons_words)),
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

    /// The panel's API requests (`api_req_started`) state the counts.
    fn usage_markers(&self) -> &'static [&'static str] {
        &["tokensIn"]
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
                    let (words, rest) = unwrap_persons(text);
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
                _ => super::claude::content_parts(&Value::Array(vec![block]), &mut out),
            }
        }
        out
    }

    /// The person, the extension, or a tool's result; the panel's copy is not shown.
    fn who(&self, line: &Value, _is_sidechain: bool) -> Option<Who> {
        match str_at(line, "role")? {
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
        }
        roots
    }
}

impl Tasks {
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
        let (words, _) = unwrap_persons(t);
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

/// Whether a message is a person's: `user`, with their words in it and no tool's result.
fn is_persons(message: &Value) -> bool {
    str_at(message, "role") == Some("user") && !holds_tool_result(message)
}

/// The person's words a text block begins with (inside one of [`PERSONS_TAGS`]), and what follows
/// them; `None` and the whole text if it begins with none.
fn unwrap_persons(text: &str) -> (Option<&str>, &str) {
    let trimmed = text.trim_start();
    for tag in PERSONS_TAGS {
        let open = format!("<{tag}>");
        let close = format!("</{tag}>");
        if let Some(rest) = trimmed.strip_prefix(&open)
            && let Some(end) = rest.find(&close)
        {
            return (Some(rest[..end].trim()), &rest[end + close.len()..]);
        }
    }
    (None, text)
}

/// The person's words of a text block, if it holds them.
fn persons_words(text: &str) -> Option<&str> {
    unwrap_persons(text).0.filter(|w| !w.is_empty())
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
    }
}
