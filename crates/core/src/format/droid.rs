//! Factory Droid's sessions (`~/.factory/sessions/<dir>/<session>.jsonl`, `<dir>` the working
//! directory with each separator made `-`; a session of an older build directly in `sessions/`).
//!
//! Droid is closed source. Read from Factory's own TypeScript SDK (Factory-AI/droid-sdk-typescript,
//! `src/session-discovery.ts`, `src/protocol/session.ts`, `src/protocol/messages.ts`, which say they
//! mirror the CLI's session service) and its session-navigation skill (Factory-AI/factory-plugins),
//! with the on-disk content blocks as the CLI's converters write them (see docs/formats.md for each
//! source and what rests on which).
//!
//! The first line is `session_start` (`id`, `title`, `sessionTitle`, `cwd`, `parent`, no time),
//! which the CLI writes again in place when the title or the directory changes (the file is then
//! read again from its start). Then one record a line:
//! - `message`: `id`, `parentId`, `timestamp`, and `message` with `role` (`user` or `assistant`
//!   only: a tool's results and the CLI's notices are stored as `user` messages), `content` (a
//!   string or Anthropic-style blocks: `text`, `image` with base64 `source.data` and
//!   `source.media_type`, `thinking`, `redacted_thinking`, `tool_use`, `tool_result` with
//!   `tool_use_id`, `is_error` and its own blocks, `document`), `visibility` (`llm_only` for the
//!   context the CLI gives the model, `user_only` for a notice) and `modelId`;
//! - `compaction_state` (`summaryText`): the context was compacted; the messages before stay;
//! - `todo_state`: the to-do list (bookkeeping, not shown);
//! - `session_end` (a sub-agent's file): its `finalText`.
//!
//! The transcript states no token counts: Droid keeps a session's running totals in the
//! `<session>.settings.json` beside it (the session's settings: `model`, `providerLock`,
//! `providerLockTimestamp`, and `tokenUsage` with `inputTokens`, `outputTokens`,
//! `cacheCreationTokens`, `cacheReadTokens` and `thinkingTokens`, which it rewrites in place as the
//! session goes on). That file is read as one record (a JSON document, rewritten whole) whose usage
//! is the session's totals, one ledger row keyed `droid:<session>`: thinking is billed as output,
//! so it is counted in the output and said as reasoning (ccusage and tokscale keep it apart and
//! price it as output: the same total and cost). `inclusiveTokenUsage` adds the sessions a session
//! started, whose own files count them: it is not read.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::{
    BlockPlaces, Columns, FileContext, Format, Meta, MetaError, Part, Records, SearchText, Side, Tokens, Typed, Usage,
    Who, first_chars, parse_object, str_at, title_rank, usage, without_injected,
};

/// Factory Droid's format.
#[derive(Debug, Clone, Copy, Default)]
pub struct Droid;

/// Image blocks are numbered under `message.content` (a tool result's among them).
static BLOCK_PLACES: BlockPlaces = BlockPlaces::new(&[&["message", "content"]]);

/// The title a session starts with before it has one.
const PLACEHOLDER_TITLE: &str = "New Session";

/// The name's end of the file that holds a session's settings and token totals.
const SETTINGS: &str = ".settings.json";

/// The session whose settings the file at `path` holds (`<session>.settings.json`), if it is one.
fn settings_of(path: &Path) -> Option<&str> {
    let name = path.file_name()?.to_str()?;
    name.strip_suffix(SETTINGS).filter(|s| !s.is_empty())
}

impl Format for Droid {
    fn name(&self) -> &'static str {
        "droid"
    }

    fn display_name(&self) -> &'static str {
        "Factory Droid"
    }

    /// A `*.jsonl` file, and the `<session>.settings.json` beside it (its token totals).
    fn is_transcript(&self, path: &Path) -> bool {
        path.extension().is_some_and(|e| e == "jsonl") || settings_of(path).is_some()
    }

    /// A session's settings file is one JSON object, rewritten in place: its one record.
    fn document_records(&self, path: &Path) -> Option<Records> {
        settings_of(path).map(|_| Records::Whole)
    }

    fn block_places(&self) -> &'static BlockPlaces {
        &BLOCK_PLACES
    }

    /// The session is the first line's `id`, else the file's name; its `parent` is the session it
    /// was forked or compacted from; the project is its `cwd`.
    /// A settings file's session is its name's; it says nothing of the project.
    fn file_context(&self, path: &Path, first_line: &mut dyn FnMut() -> Option<String>) -> FileContext {
        if let Some(session) = settings_of(path) {
            return FileContext { session: session.to_owned(), ..FileContext::default() };
        }
        let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        let start = first_line()
            .and_then(|l| serde_json::from_str::<Value>(&l).ok())
            .filter(|v| str_at(v, "type") == Some("session_start"));
        let nonempty =
            |key: &str| start.as_ref().and_then(|v| str_at(v, key)).filter(|s| !s.trim().is_empty()).map(str::to_owned);
        FileContext {
            session: nonempty("id").unwrap_or(stem),
            forked_from: nonempty("parent"),
            project: nonempty("cwd"),
            ..FileContext::default()
        }
    }

    /// 0: a file is its session's one transcript (a sub-agent's is a session of its own); its
    /// settings file comes after it.
    fn file_key(&self, path: &Path, _session: &str) -> i64 {
        if settings_of(path).is_some() { super::name_key(path) } else { 0 }
    }

    fn describe(&self, stripped: &str, _line: u64, file: &FileContext) -> Result<Meta, MetaError> {
        let top = parse_object(stripped)?;
        Ok(describe(&Value::Object(top), file))
    }

    /// A person's message: a `user` message shown to both sides, holding no tool result; its text
    /// blocks and images.
    fn typed_input(&self, _kind: Option<&str>, _is_sidechain: bool, line: &Value) -> Option<Typed> {
        if str_at(line, "type") != Some("message") || !is_persons(line) {
            return None;
        }
        super::typed_from_blocks(line.get("message")?.get("content")?)
    }

    /// The settings' token totals: the only usage Droid writes.
    fn usage_markers(&self) -> &'static [&'static str] {
        &["tokenUsage"]
    }

    fn parts(&self, line: &Value) -> Vec<Part> {
        parts(line)
    }

    fn who(&self, line: &Value, _is_sidechain: bool) -> Option<Who> {
        who(line)
    }

    /// `droid --resume ID` (run in the session's directory, where Droid looks first).
    fn resume_command(&self, id: &str) -> Option<String> {
        Some(format!("droid --resume {}", super::shell_word(id)))
    }

    /// `$FACTORY_HOME_OVERRIDE/.factory/sessions`, else `~/.factory/sessions` (the variable stands
    /// for the home directory, in the CLI and its SDK alike).
    fn default_roots(&self, var: &dyn Fn(&str) -> Option<OsString>) -> Vec<PathBuf> {
        let nonempty = |name: &str| var(name).filter(|v| !v.is_empty()).map(PathBuf::from);
        nonempty("FACTORY_HOME_OVERRIDE")
            .or_else(|| nonempty("HOME"))
            .map(|home| home.join(".factory/sessions"))
            .into_iter()
            .collect()
    }
}

/// A message's `visibility`: `both` when absent.
fn visibility(line: &Value) -> &str {
    line.get("message").and_then(|m| str_at(m, "visibility")).unwrap_or("both")
}

/// Whether a message's content holds a tool's result (a `user` message that is no person's words).
fn holds_tool_result(line: &Value) -> bool {
    match line.get("message").and_then(|m| m.get("content")) {
        Some(Value::Array(blocks)) => blocks.iter().any(|b| str_at(b, "type") == Some("tool_result")),
        _ => false,
    }
}

/// Whether a message is a person's: `user`, shown to both sides, no tool result in it.
fn is_persons(line: &Value) -> bool {
    let role = line.get("message").and_then(|m| str_at(m, "role"));
    role == Some("user") && visibility(line) == "both" && !holds_tool_result(line)
}

/// A line's parts: a message's content blocks (the context the CLI gave the model, folded); a
/// compaction's summary; a sub-agent's last words.
fn parts(line: &Value) -> Vec<Part> {
    match str_at(line, "type") {
        Some("message") => {
            let Some(content) = line.get("message").and_then(|m| m.get("content")) else { return Vec::new() };
            let mut out = Vec::new();
            super::claude::content_parts(content, &mut out);
            if visibility(line) == "llm_only" {
                // What the CLI told the model beside the person's words (the directory, the date,
                // its skills): context, shown folded.
                let text: Vec<String> = out
                    .into_iter()
                    .filter_map(|p| match p {
                        Part::Text(t) => Some(t),
                        Part::Context { text, .. } => Some(text),
                        _ => None,
                    })
                    .collect();
                return vec![Part::Context { label: "Context for the model".into(), text: text.join("\n\n") }];
            }
            out
        }
        Some("compaction_state") => str_at(line, "summaryText")
            .filter(|s| !s.trim().is_empty())
            .map(|s| Part::Group {
                title: "Context compacted: the summary the model goes on from".into(),
                parts: vec![Part::Text(s.to_owned())],
            })
            .into_iter()
            .collect(),
        Some("session_end") => str_at(line, "finalText")
            .filter(|s| !s.trim().is_empty())
            .map(|s| Part::Text(s.to_owned()))
            .into_iter()
            .collect(),
        _ => Vec::new(),
    }
}

/// Who said a line: the person, Droid, a tool's result, the CLI's context or notice, a compaction
/// or the end of a sub-agent's run; the session's first line and the to-do list are not shown.
fn who(line: &Value) -> Option<Who> {
    match str_at(line, "type")? {
        "message" => {
            let role = line.get("message").and_then(|m| str_at(m, "role"))?;
            Some(match (role, visibility(line)) {
                ("assistant", _) => Who::new("Droid", Side::Assistant),
                (_, _) if holds_tool_result(line) => Who::new("Tool result", Side::Note),
                (_, "llm_only") => Who::new("Factory Droid", Side::Note),
                (_, "user_only") => Who::new("Notice", Side::Note),
                _ => Who::new("You", Side::User),
            })
        }
        "compaction_state" => Some(Who::new("Factory Droid", Side::Note)),
        "session_end" => Some(Who::new("Sub-agent finished", Side::Note)),
        _ => None,
    }
}

/// The search text of a message's content: what was said and thought (as a tool's output where it
/// is the `context` the CLI gave the model, nobody's words), tool calls' input and results' output.
fn content_text(content: &Value, out: &mut SearchText, context: bool) {
    let said = |out: &mut SearchText, s: &str| if context { out.output(s) } else { out.said(s) };
    match content {
        Value::String(s) => said(out, s),
        Value::Array(blocks) => {
            for block in blocks {
                match str_at(block, "type") {
                    Some("text") => said(out, str_at(block, "text").unwrap_or("")),
                    Some("thinking") => said(out, str_at(block, "thinking").unwrap_or("")),
                    Some("tool_use") => out.call(str_at(block, "name"), block.get("input")),
                    Some("tool_result") => {
                        if let Some(c) = block.get("content") {
                            out.output(&super::parts::result_text(c));
                        }
                    }
                    _ => {}
                }
            }
        }
        _ => {}
    }
}

/// The first words of a person's message, for a title: its text, the CLI's reminders taken out.
fn first_user_text(content: &Value) -> Option<String> {
    let text = match content {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter(|b| str_at(b, "type") == Some("text"))
            .filter_map(|b| str_at(b, "text"))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => return None,
    };
    let words = without_injected(&text).trim();
    (!words.is_empty() && !words.starts_with('<')).then(|| first_chars(words.to_owned(), 200))
}

/// The token totals of a session's settings (its `.settings.json`, the one record of that file),
/// as one ledger row keyed by the session; `None` when they count nothing (no response yet).
fn settings_usage(settings: &Value, session: &str) -> Option<Usage> {
    let counts = settings.get("tokenUsage").filter(|t| t.is_object())?;
    let thinking = usage::count(counts, "thinkingTokens");
    let tokens = Tokens {
        input: usage::count(counts, "inputTokens"),
        output: usage::count(counts, "outputTokens").saturating_add(thinking),
        cache_read: usage::count(counts, "cacheReadTokens"),
        cache_write: usage::count(counts, "cacheCreationTokens"),
        cache_write_1h: 0,
        reasoning: thinking,
    }
    .clamped();
    let nonempty = |key: &str| str_at(settings, key).map(str::trim).filter(|s| !s.is_empty()).map(str::to_owned);
    (tokens.total() > 0).then(|| Usage {
        key: format!("droid:{session}"),
        model: nonempty("model"),
        timestamp: nonempty("providerLockTimestamp"),
        tokens,
        ..Usage::default()
    })
}

fn describe(line: &Value, file: &FileContext) -> Meta {
    let mut meta = Meta::default();
    let mut text = SearchText::default();
    if line.get("type").is_none() && line.get("tokenUsage").is_some() {
        // A session's settings: bookkeeping, with its token totals.
        meta.columns.kind = Some("settings".into());
        meta.usage.extend(settings_usage(line, &file.session));
        return meta;
    }
    match str_at(line, "type") {
        Some("session_start") => {
            meta.columns.kind = Some("session_start".into());
            meta.cwd = str_at(line, "cwd").or(str_at(line, "lastCwd")).map(str::to_owned);
            meta.forked_from = str_at(line, "parent").filter(|p| !p.is_empty()).map(str::to_owned);
            let given = |key: &str| str_at(line, key).map(str::trim).filter(|t| !t.is_empty());
            let manual = line.get("isSessionTitleManuallySet") == Some(&Value::Bool(true));
            meta.title = match (given("sessionTitle"), given("title").filter(|t| *t != PLACEHOLDER_TITLE)) {
                (Some(t), _) if manual => Some((title_rank::CUSTOM, t)),
                (Some(t), _) => Some((title_rank::AI, t)),
                (None, Some(t)) => Some((title_rank::FIRST_USER_TEXT, t)),
                (None, None) => None,
            }
            .map(|(rank, t)| (rank, first_chars(t.to_owned(), 200)));
            if let Some((_, t)) = &meta.title {
                text.said(t);
            }
        }
        Some("message") => {
            let message = line.get("message");
            let role = message.and_then(|m| str_at(m, "role"));
            meta.columns = Columns {
                uuid: str_at(line, "id").map(str::to_owned),
                parent_uuid: str_at(line, "parentId").map(str::to_owned),
                kind: role.map(str::to_owned),
                role: role.map(str::to_owned),
                timestamp: str_at(line, "timestamp").map(str::to_owned),
                is_sidechain: false,
            };
            let content = message.and_then(|m| m.get("content"));
            if let Some(c) = content {
                content_text(c, &mut text, visibility(line) == "llm_only");
            }
            if is_persons(line) {
                meta.title = content.and_then(first_user_text).map(|t| (title_rank::FIRST_USER_TEXT, t));
            }
            meta.cwd.clone_from(&file.project);
        }
        Some(kind @ ("compaction_state" | "todo_state" | "session_end")) => {
            meta.columns.uuid = str_at(line, "id").map(str::to_owned);
            meta.columns.kind = Some(kind.to_owned());
            meta.columns.timestamp = str_at(line, "timestamp").map(str::to_owned);
            for key in ["summaryText", "finalText"] {
                if let Some(s) = str_at(line, key) {
                    text.said(s);
                }
            }
        }
        // A record of a kind this build does not know: kept, described as far as it goes.
        other => {
            meta.columns.kind = other.map(str::to_owned);
            meta.columns.timestamp = str_at(line, "timestamp").map(str::to_owned);
        }
    }
    text.finish(&mut meta);
    meta
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::Media;

    fn meta(line: &str) -> Meta {
        Droid.describe(line, 2, &FileContext { project: Some("/w/app".into()), ..FileContext::default() }).unwrap()
    }

    fn value(line: &str) -> Value {
        serde_json::from_str(line).unwrap()
    }

    const START: &str = r#"{"type":"session_start","id":"7d3c","title":"why is the button red","sessionTitle":"Investigate red button","owner":"alice","version":2,"cwd":"/w/app","parent":"p1"}"#;
    const CONTEXT: &str = r#"{"type":"message","id":"m0","timestamp":"2026-06-01T10:00:00.000Z","message":{"role":"user","content":[{"type":"text","text":"<system-reminder>\nCWD: /w/app\n</system-reminder>"}],"visibility":"llm_only"}}"#;
    const ASKED: &str = r#"{"type":"message","id":"m1","timestamp":"2026-06-01T10:00:00.100Z","message":{"role":"user","content":[{"type":"image","source":{"type":"base64","data":"STRIPPED_MEDIA_MARKER","media_type":"image/png"}},{"type":"text","text":"why is the button red?"}],"visibility":"both"},"parentId":"m0"}"#;
    const ANSWER: &str = r#"{"type":"message","id":"m2","timestamp":"2026-06-01T10:00:04.512Z","message":{"role":"assistant","content":[{"type":"thinking","signature":"s","thinking":"Check the CSS."},{"type":"text","text":"Let me look."},{"type":"tool_use","id":"toolu_01","name":"Grep","input":{"pattern":"btn-primary"}},{"type":"tool_use","id":"toolu_02","name":"Execute","input":{"command":"cat missing.css"}}],"modelId":"claude-opus-4-5"},"parentId":"m1"}"#;
    const RESULTS: &str = r#"{"type":"message","id":"m3","timestamp":"2026-06-01T10:00:05.020Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_01","content":"src/App.css:12: .btn-primary { color: red }"},{"type":"tool_result","tool_use_id":"toolu_02","is_error":true,"content":"cat: missing.css: No such file or directory"}]},"parentId":"m2"}"#;
    const COMPACTED: &str = r#"{"type":"compaction_state","id":"c1","timestamp":"2026-06-01T11:30:00.000Z","summaryText":"The red comes from App.css.","summaryTokens":42,"removedCount":4}"#;
    const TODO: &str = r#"{"type":"todo_state","id":"t1","timestamp":"2026-06-01T10:00:05.100Z","todos":{"todos":[{"content":"Fix","status":"in_progress"}]},"messageIndex":3}"#;

    #[test]
    fn the_first_line_gives_the_session_its_title_project_and_parent() {
        let m = meta(START);
        assert_eq!(m.columns.kind.as_deref(), Some("session_start"));
        assert_eq!(m.title, Some((title_rank::AI, "Investigate red button".into())));
        assert_eq!((m.cwd.as_deref(), m.forked_from.as_deref()), (Some("/w/app"), Some("p1")));
        let manual = START.replace(r#""owner""#, r#""isSessionTitleManuallySet":true,"owner""#);
        assert_eq!(meta(&manual).title.unwrap().0, title_rank::CUSTOM);
        let placeholder = r#"{"type":"session_start","id":"x","title":"New Session","cwd":"/w"}"#;
        assert_eq!(meta(placeholder).title, None, "the placeholder is no title");
        let mut first = || Some(START.to_owned());
        let context = Droid.file_context(Path::new("/r/-w-app/7d3c.jsonl"), &mut first);
        assert_eq!((context.session.as_str(), context.project.as_deref()), ("7d3c", Some("/w/app")));
    }

    #[test]
    fn messages_are_a_persons_words_the_answer_and_tool_results_under_their_calls() {
        let asked = meta(ASKED);
        assert_eq!(
            (asked.columns.uuid.as_deref(), asked.columns.parent_uuid.as_deref(), asked.columns.role.as_deref()),
            (Some("m1"), Some("m0"), Some("user"))
        );
        assert_eq!(asked.title, Some((title_rank::FIRST_USER_TEXT, "why is the button red?".into())));
        assert_eq!(who(&value(ASKED)).unwrap().side, Side::User);
        let typed = Droid.typed_input(None, false, &value(ASKED)).unwrap();
        assert_eq!((typed.text.as_str(), typed.images.len()), ("why is the button red?", 1));
        assert!(matches!(&parts(&value(ASKED))[0], Part::Media(Media { .. })));

        let answer = meta(ANSWER);
        assert!(answer.text.as_deref().unwrap().contains("Check the CSS."));
        assert_eq!(answer.tools.as_deref(), Some("Grep\nExecute"));
        let answer_parts = parts(&value(ANSWER));
        assert!(matches!(&answer_parts[0], Part::Thinking(t) if t == "Check the CSS."));
        assert!(matches!(&answer_parts[2], Part::ToolCall(c) if c.id.as_deref() == Some("toolu_01")));

        let results = value(RESULTS);
        assert_eq!(who(&results).unwrap().side, Side::Note);
        assert!(Droid.typed_input(None, false, &results).is_none(), "a tool's result is nobody's words");
        assert!(meta(RESULTS).title.is_none());
        let failed: Vec<bool> = parts(&results)
            .iter()
            .filter_map(|p| match p {
                Part::ToolResult { error, .. } => Some(*error),
                _ => None,
            })
            .collect();
        assert_eq!(failed, [false, true]);
        assert!(meta(RESULTS).tool_text.as_deref().unwrap().contains("No such file"));
    }

    #[test]
    fn a_sessions_settings_are_its_token_totals_thinking_counted_as_output() {
        let path = Path::new("/r/-w-app/7d3c.settings.json");
        assert!(Droid.is_transcript(path) && Droid.document_records(path) == Some(Records::Whole));
        assert!(!Droid.is_transcript(Path::new("/r/-w-app/.settings.json")), "no session's");
        assert_eq!(Droid.document_records(Path::new("/r/-w-app/7d3c.jsonl")), None);
        let context = Droid.file_context(path, &mut || panic!("a settings file's context is its name's"));
        assert_eq!((context.session.as_str(), context.project.as_deref()), ("7d3c", None));
        assert_ne!(Droid.file_key(path, "7d3c"), 0, "after the transcript");
        let settings = r#"{
  "model": "claude-sonnet-4-5-20250929",
  "providerLock": "anthropic",
  "providerLockTimestamp": "2026-06-01T09:59:58.000Z",
  "tokenUsage": {"inputTokens": 4200, "outputTokens": 1800, "cacheCreationTokens": 9000,
                 "cacheReadTokens": 150000, "thinkingTokens": 600, "factoryCredits": 3.2},
  "inclusiveTokenUsage": {"inputTokens": 99999, "outputTokens": 1, "cacheCreationTokens": 0,
                          "cacheReadTokens": 0, "thinkingTokens": 0}
}"#;
        let m = Droid.describe(settings, 1, &context).unwrap();
        assert_eq!(m.columns.kind.as_deref(), Some("settings"));
        let [u] = &m.usage[..] else { panic!("{:?}", m.usage) };
        assert_eq!(u.key, "droid:7d3c");
        assert_eq!(
            (u.model.as_deref(), u.timestamp.as_deref()),
            (Some("claude-sonnet-4-5-20250929"), Some("2026-06-01T09:59:58.000Z"))
        );
        assert_eq!(
            u.tokens,
            Tokens {
                input: 4200,
                output: 2400,
                cache_read: 150000,
                cache_write: 9000,
                cache_write_1h: 0,
                reasoning: 600
            }
        );
        assert!(m.text.is_none() && m.title.is_none());
        assert!(who(&value(settings)).is_none() && parts(&value(settings)).is_empty(), "bookkeeping, not shown");
        assert!(settings.contains(Droid.usage_markers()[0]));
        // Nothing counted yet (a new session), or no totals at all: no response.
        let zero = r#"{"model":"m","tokenUsage":{"inputTokens":0,"outputTokens":0,"cacheCreationTokens":0,"cacheReadTokens":0,"thinkingTokens":0}}"#;
        assert!(Droid.describe(zero, 1, &context).unwrap().usage.is_empty());
        assert!(Droid.describe(r#"{"model":"m","tokenUsage":null}"#, 1, &context).unwrap().usage.is_empty());
    }

    #[test]
    fn the_context_given_the_model_is_folded_and_no_title_and_bookkeeping_is_not_shown() {
        let context = value(CONTEXT);
        assert!(
            matches!(&parts(&context)[..], [Part::Context { label, text }] if label == "Context for the model" && text.contains("CWD"))
        );
        assert!(meta(CONTEXT).title.is_none() && meta(CONTEXT).text.is_none());
        assert!(Droid.typed_input(None, false, &context).is_none());
        assert!(matches!(&parts(&value(COMPACTED))[..], [Part::Group { .. }]));
        assert_eq!(meta(COMPACTED).columns.kind.as_deref(), Some("compaction_state"));
        assert!(who(&value(TODO)).is_none() && who(&value(START)).is_none());
    }
}
