//! Gemini CLI's chats (`~/.gemini/tmp/<project>/chats/session-<time>-<id8>.jsonl`, a sub-agent's at
//! `chats/<parent session>/<session>.jsonl`), in the JSONL format the CLI writes since v0.39
//! (google-gemini/gemini-cli, `packages/core/src/services/chatRecordingTypes.ts` and the replay in
//! `chatRecordingService.ts`).
//!
//! The first line is the session's metadata (`sessionId`, `projectHash`, `startTime`, …); then one
//! record a line:
//! - a message (it has an `id`): `type` `user`, `gemini`, `info`, `error` or `warning`, `content` a
//!   string or parts (`text`, `inlineData {mimeType, data}`, `fileData`, `functionResponse`), and on
//!   `gemini` records `thoughts`, `toolCalls` (with their `result` parts), `tokens` and `model`. The
//!   CLI appends a message again, whole, each time it changes: the last write is the message;
//! - `{"$set": {…}}` updates the metadata (`summary`, `lastUpdated`, `directories`); one that sets
//!   `messages` is a checkpoint that replaces the whole conversation with the messages it holds;
//! - `{"$rewindTo": id}` undoes that message and every later one.
//!
//! An entry's `type` is the message's, else `session` (the metadata line), `update` (`$set`),
//! `checkpoint` (`$set.messages`) or `rewind`. Replay is kept in the index, not applied to it: a
//! rewritten message's earlier writes, the messages a rewind undid and those a checkpoint replaced
//! stay, hidden ([`super::hidden`]). Photos are `inlineData` parts, in user content and in tool
//! results.
//!
//! Before v0.39 a chat was one JSON document, `session-….json` (`ConversationRecord`: `sessionId`,
//! `projectHash`, `startTime`, `lastUpdated`, `messages`, `summary`, `directories`, `kind`), that
//! the CLI writes again whole (`JSON.stringify(conversation, null, 2)`, in place) at every change
//! (`writeConversation` in `chatRecordingService.ts` of those versions). Its messages are the same
//! records as the JSONL lines, so each is an entry ([`Format::document_records`]); a rewind there
//! removes messages from the array, and a rewrite is read again whole.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::gemini_parts::{inline, inline_media, part_text, push_part, response_shown, response_text, typed_images};
use super::{
    BlockPlaces, Columns, Effect, FileContext, Format, Meta, MetaError, Part, Records, SearchText, Side, Typed, Usage,
    Who, first_chars, line_id, parse_object, str_at, title_rank, usage, without_injected,
};

/// Gemini CLI's format.
#[derive(Debug, Clone, Copy, Default)]
pub struct Gemini;

/// Image parts are numbered in a message's content and tool calls, and in a checkpoint's messages.
static BLOCK_PLACES: BlockPlaces =
    BlockPlaces::new(&[&["content"], &["displayContent"], &["toolCalls"], &["$set", "messages"]]);

impl Format for Gemini {
    fn name(&self) -> &'static str {
        "gemini"
    }

    fn display_name(&self) -> &'static str {
        "Gemini CLI"
    }

    /// A `*.jsonl` file in a `chats` directory (or below one: sub-agents' chats), or a legacy
    /// single-JSON chat there (`*.json`, before v0.39).
    fn is_transcript(&self, path: &Path) -> bool {
        path.extension().is_some_and(|e| e == "jsonl" || e == "json")
            && path.ancestors().skip(1).any(|a| a.ends_with("chats"))
    }

    /// A legacy chat (`*.json`) is one `ConversationRecord`, written whole at each change: its
    /// entries are its `messages`.
    fn document_records(&self, path: &Path) -> Option<Records> {
        path.extension().is_some_and(|e| e == "json").then_some(Records::At("messages"))
    }

    fn block_places(&self) -> &'static BlockPlaces {
        &BLOCK_PLACES
    }

    /// The `sessionId` of the metadata line, else the file's name without `.jsonl`; the project is
    /// the folder that holds the `chats` directory (the CLI's slug of the project's name, or the
    /// SHA-256 of its directory before), for sessions whose lines name no directory, where no
    /// `.project_root` ([`Format::project_file`]) names it.
    fn file_context(&self, path: &Path, first_line: &mut dyn FnMut() -> Option<String>) -> FileContext {
        let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        let header =
            first_line().and_then(|l| serde_json::from_str::<Value>(&l).ok()).filter(|v| v.get("id").is_none());
        let session = header
            .as_ref()
            .and_then(|v| str_at(v, "sessionId").filter(|s| !s.is_empty()).map(str::to_owned))
            .unwrap_or(stem);
        let slug = path
            .ancestors()
            .find(|a| a.ends_with("chats"))
            .and_then(|chats| chats.parent()?.file_name())
            .map(|n| n.to_string_lossy().into_owned());
        if self.document_records(path).is_none() {
            return FileContext { session, project: slug, ..FileContext::default() };
        }
        // A legacy chat's header: its directories and summary, stated with its first message.
        let header = header.unwrap_or_default();
        FileContext {
            session,
            project: first_directory(&header).or(slug),
            title: str_at(&header, "summary")
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(|s| first_chars(s.to_owned(), 200)),
            ..FileContext::default()
        }
    }

    /// `.project_root` in the project's folder (beside `chats`), which Gemini CLI writes with the
    /// project's directory since it names folders by a slug of the project's name
    /// (`packages/core/src/config/projectRegistry.ts`, `ensureOwnershipMarkers`). A folder named by
    /// the older SHA-256 of the directory has none.
    fn project_file(&self, path: &Path) -> Option<PathBuf> {
        let chats = path.ancestors().find(|a| a.ends_with("chats"))?;
        Some(chats.parent()?.join(".project_root"))
    }

    /// 0: a chat is its session's one transcript (a sub-agent's chat is a session of its own).
    fn file_key(&self, _path: &Path, _session: &str) -> i64 {
        0
    }

    fn describe(&self, stripped: &str, line: u64, file: &FileContext) -> Result<Meta, MetaError> {
        let top = parse_object(stripped)?;
        Ok(describe(&top, line, file))
    }

    /// A `user` message's text parts (its `displayContent`, what was typed, where it has one) and
    /// `inlineData` images; not a tool response, not injected context.
    fn typed_input(&self, _kind: Option<&str>, _is_sidechain: bool, line: &Value) -> Option<Typed> {
        if str_at(line, "type") != Some("user") || line.get("id").is_none() {
            return None;
        }
        let content = line.get("content")?;
        let shown = line.get("displayContent").unwrap_or(content);
        let mut texts = Vec::new();
        let mut images = Vec::new();
        match shown {
            Value::String(s) => texts.push(s.as_str()),
            Value::Array(parts) => {
                for part in parts {
                    if part.get("functionResponse").is_some() {
                        return None;
                    }
                    if let Some(t) = str_at(part, "text") {
                        texts.push(t);
                    }
                }
            }
            _ => return None,
        }
        if let Value::Array(parts) = content {
            images = typed_images(parts);
        }
        let text = texts.join("");
        if is_noise(&text) {
            return None;
        }
        (!text.trim().is_empty() || !images.is_empty()).then_some(Typed { text, images })
    }

    /// A `gemini` message's `tokens`, on its own line or in a checkpoint's messages.
    fn usage_markers(&self) -> &'static [&'static str] {
        &["tokens"]
    }

    fn parts(&self, line: &Value) -> Vec<Part> {
        parts(line)
    }

    fn who(&self, line: &Value, _is_sidechain: bool) -> Option<Who> {
        who(line)
    }

    /// `gemini --resume ID` (the session's UUID; run in its project directory: Gemini CLI keeps
    /// sessions per project).
    fn resume_command(&self, id: &str) -> Option<String> {
        Some(format!("gemini --resume {}", super::shell_word(id)))
    }

    /// `$GEMINI_CLI_HOME/.gemini/tmp`, else `~/.gemini/tmp` (the CLI's `homedir()` and
    /// `Storage.getGlobalGeminiDir()`); the chats are in its projects' `chats` directories.
    fn default_roots(&self, var: &dyn Fn(&str) -> Option<OsString>) -> Vec<PathBuf> {
        let nonempty = |name: &str| var(name).filter(|v| !v.is_empty()).map(PathBuf::from);
        nonempty("GEMINI_CLI_HOME")
            .or_else(|| nonempty("HOME"))
            .map(|home| home.join(".gemini/tmp"))
            .into_iter()
            .collect()
    }
}

/// User content that is the CLI's, not the person's: injected session or hook context.
fn is_noise(text: &str) -> bool {
    let t = text.trim_start();
    t.starts_with("<session_context>") || t.starts_with("<hook_context>")
}

/// The text of a message's `content` (or `displayContent`): a string, or its parts' text (as
/// said) and tool responses' output.
fn content_text(v: &Value, out: &mut SearchText) {
    match v {
        Value::String(s) => out.said(s),
        Value::Array(parts) => parts.iter().for_each(|part| part_text(part, out)),
        _ => {}
    }
}

/// A message record's parts: its thoughts, what it says (for a person's message, what they typed:
/// its `displayContent`, and the photos it sent), and its tool calls, each with its result.
fn message_parts(m: &Value) -> Vec<Part> {
    let mut out = Vec::new();
    if let Some(Value::Array(thoughts)) = m.get("thoughts") {
        let said: Vec<String> = thoughts
            .iter()
            .map(|t| ["subject", "description"].iter().filter_map(|k| str_at(t, k)).collect::<Vec<_>>().join(": "))
            .filter(|t| !t.trim().is_empty())
            .collect();
        if !said.is_empty() {
            out.push(Part::Thinking(said.join("\n\n")));
        }
    }
    let user = str_at(m, "type") == Some("user");
    let typed = m.get("displayContent").filter(|_| user);
    if let Some(shown) = typed.or_else(|| m.get("content")) {
        content_parts(shown, &mut out);
    }
    if typed.is_some()
        && let Some(Value::Array(parts)) = m.get("content")
    {
        out.extend(inline_media(parts).map(Part::Media));
    }
    if let Some(Value::Array(calls)) = m.get("toolCalls") {
        let null = Value::Null;
        for call in calls.iter().filter(|c| c.is_object()) {
            let name = str_at(call, "name").unwrap_or("tool");
            let args = match call.get("args") {
                Some(args) if !args.is_null() => args.clone(),
                _ => Value::Object(Map::new()),
            };
            let id = str_at(call, "id");
            out.push(Part::ToolCall(super::parts::tool_call_with_id(name, &args, id)));
            let mut texts = Vec::new();
            let mut media = Vec::new();
            if let Some(Value::Array(parts)) = call.get("result") {
                for part in parts {
                    if let Some(f) = part.get("functionResponse") {
                        texts.push(response_shown(f.get("response").unwrap_or(&null)));
                        if let Some(Value::Array(inner)) = f.get("parts") {
                            media.extend(inline_media(inner));
                        }
                    } else if let Some(d) = part.get("inlineData").filter(|d| d.is_object()) {
                        media.push(inline(d));
                    } else if let Some(t) = str_at(part, "text") {
                        texts.push(t.to_owned());
                    }
                }
            }
            let error = str_at(call, "status") == Some("error");
            if !texts.is_empty() || !media.is_empty() || error {
                let call = id.map(str::to_owned);
                out.push(Part::ToolResult { call, text: texts.join("\n"), error, label: None, media });
            }
        }
    }
    out
}

/// The parts of a message's content (or `displayContent`): a string, or its parts
/// ([`push_part`]).
fn content_parts(content: &Value, out: &mut Vec<Part>) {
    match content {
        Value::String(s) if !s.trim().is_empty() => out.push(Part::Text(s.clone())),
        Value::Array(parts) => parts.iter().for_each(|part| push_part(part, out)),
        _ => {}
    }
}

/// Who the message of `type` `kind` is from, as its byline says.
fn message_who(kind: Option<&str>, tool_response: bool) -> Option<Who> {
    Some(match kind? {
        "user" if tool_response => Who::new("Tool response", Side::Note),
        "user" => Who::new("You", Side::User),
        "gemini" => Who::new("Gemini", Side::Assistant),
        "info" => Who::new("Info", Side::Note),
        "error" => Who::new("Error", Side::Note),
        "warning" => Who::new("Warning", Side::Note),
        _ => return None,
    })
}

/// Whether a message's content holds a tool's response (a `user` record that is no person's words).
fn holds_tool_response(m: &Value) -> bool {
    matches!(m.get("content"), Some(Value::Array(parts)) if parts.iter().any(|p| p.get("functionResponse").is_some()))
}

/// The messages a checkpoint holds (`$set.messages`), if the line is one.
fn checkpoint(line: &Value) -> Option<&Vec<Value>> {
    line.get("$set")?.get("messages")?.as_array()
}

/// A line's parts: a message's; a checkpoint's messages, folded; the note a rewind makes.
fn parts(line: &Value) -> Vec<Part> {
    if line.get("id").is_some() {
        return message_parts(line);
    }
    if let Some(messages) = checkpoint(line) {
        let messages: Vec<&Value> = messages.iter().filter(|m| m.is_object()).collect();
        let parts = messages
            .iter()
            .map(|m| {
                let kind = str_at(m, "type");
                let who = message_who(kind, holds_tool_response(m))
                    .unwrap_or_else(|| Who::new(kind.unwrap_or("?"), Side::Note));
                Part::Message { who, parts: message_parts(m) }
            })
            .collect();
        return vec![Part::Group {
            title: format!("Checkpoint: the conversation as {} messages", messages.len()),
            parts,
        }];
    }
    if line.get("$rewindTo").is_some() {
        return vec![Part::Note(
            "Rewound: the messages just before this were undone (the index keeps them, hidden).".into(),
        )];
    }
    Vec::new()
}

/// Who said a line: a message's sender, the CLI for a checkpoint, nobody for a rewind (a note);
/// the metadata and its updates are not shown.
fn who(line: &Value) -> Option<Who> {
    if line.get("id").is_some() {
        message_who(str_at(line, "type"), holds_tool_response(line))
    } else if checkpoint(line).is_some() {
        Some(Who::new("Gemini CLI", Side::Assistant))
    } else if line.get("$rewindTo").is_some() {
        Some(Who::note())
    } else {
        None
    }
}

/// Everything searchable in one message record.
fn message_text(m: &Value, out: &mut SearchText) {
    if let Some(c) = m.get("content") {
        content_text(c, out);
    }
    if let Some(Value::Array(thoughts)) = m.get("thoughts") {
        for t in thoughts {
            if let Some(s) = str_at(t, "subject") {
                out.said(s);
            }
            if let Some(s) = str_at(t, "description") {
                out.said(s);
            }
        }
    }
    if let Some(Value::Array(calls)) = m.get("toolCalls") {
        for call in calls {
            out.call(str_at(call, "name"), call.get("args").filter(|a| !a.is_null()));
            if let Some(Value::Array(parts)) = call.get("result") {
                for part in parts {
                    if let Some(response) = part.get("functionResponse").and_then(|f| f.get("response")) {
                        response_text(response, out);
                    } else if let Some(t) = str_at(part, "text") {
                        out.output(t);
                    }
                }
            }
        }
    }
}

/// The first words of a `user` message, for a title: what was typed (`displayContent`), not
/// injected context and not a bare slash command.
fn first_user_text(m: &Value) -> Option<String> {
    let shown = m.get("displayContent").or_else(|| m.get("content"))?;
    let text = match shown {
        Value::String(s) => s.clone(),
        Value::Array(parts) => {
            if parts.iter().any(|p| p.get("functionResponse").is_some()) {
                return None;
            }
            parts.iter().filter_map(|p| str_at(p, "text")).collect::<Vec<_>>().join("")
        }
        _ => return None,
    };
    if is_noise(&text) {
        return None;
    }
    let words = without_injected(&text).trim();
    let bare_command = words.starts_with('/') && !words.contains(char::is_whitespace);
    (!words.is_empty() && !bare_command && !words.starts_with('<')).then(|| first_chars(words.to_owned(), 200))
}

fn describe(top: &Map<String, Value>, line: u64, file: &FileContext) -> Meta {
    let mut text = SearchText::default();
    let mut meta = Meta::default();
    let value = Value::Object(top.clone());
    if let Some(target) = top.get("$rewindTo") {
        meta.columns.kind = Some("rewind".into());
        meta.effect = Some(Effect::RewindTo(target.as_str().unwrap_or_default().to_owned()));
        return meta;
    }
    if let Some(id) = top.get("id").and_then(Value::as_str) {
        let kind = str_at(&value, "type");
        meta.columns = Columns {
            uuid: Some(id.to_owned()),
            kind: kind.map(str::to_owned),
            role: match kind {
                Some("user") => Some("user".into()),
                Some("gemini") => Some("assistant".into()),
                _ => None,
            },
            timestamp: str_at(&value, "timestamp").map(str::to_owned),
            ..Columns::default()
        };
        meta.effect = Some(Effect::Rewrites);
        meta.usage.extend(message_usage(&value));
        message_text(&value, &mut text);
        if kind == Some("user") {
            meta.title = first_user_text(&value).map(|t| (title_rank::FIRST_USER_TEXT, t));
        }
        if line == 1 && file.title.is_some() {
            // A legacy chat's first message states what its header says of the whole chat.
            meta.title = file.title.clone().map(|t| (title_rank::SUMMARY, t));
        }
        if line == 1 {
            meta.cwd.clone_from(&file.project);
        }
        text.finish(&mut meta);
        return meta;
    }
    if let Some(set) = top.get("$set") {
        meta.columns.uuid = Some(line_id(line));
        if let Some(Value::Array(messages)) = set.get("messages") {
            meta.columns.kind = Some("checkpoint".into());
            meta.effect = Some(Effect::ReplacesAll);
            for m in messages {
                message_text(m, &mut text);
                meta.usage.extend(message_usage(m));
            }
        } else {
            meta.columns.kind = Some("update".into());
        }
        if let Some(summary) = str_at(set, "summary").filter(|s| !s.trim().is_empty()) {
            meta.title = Some((title_rank::SUMMARY, first_chars(summary.trim().to_owned(), 200)));
            text.said(summary);
        }
        meta.cwd = first_directory(set);
        meta.columns.timestamp = str_at(set, "lastUpdated").map(str::to_owned);
        text.finish(&mut meta);
        return meta;
    }
    // The metadata line (or a line of no kind scrollback knows: kept, described as far as it goes).
    if top.contains_key("sessionId") {
        meta.columns.kind = Some("session".into());
        meta.columns.timestamp = str_at(&value, "startTime").map(str::to_owned);
        meta.cwd = first_directory(&value).or_else(|| file.project.clone());
        if let Some(summary) = str_at(&value, "summary").filter(|s| !s.trim().is_empty()) {
            meta.title = Some((title_rank::SUMMARY, first_chars(summary.trim().to_owned(), 200)));
        }
    }
    meta
}

/// A `gemini` message's usage: its `tokens` (per response, `null` until they arrive), keyed by the
/// message's id, so that its rewrites and the checkpoints that hold it again are one response.
fn message_usage(message: &Value) -> Option<Usage> {
    if str_at(message, "type") != Some("gemini") {
        return None;
    }
    let tokens = message.get("tokens").filter(|t| t.is_object())?;
    let id = str_at(message, "id")?;
    Some(Usage {
        key: format!("gemini:{id}"),
        model: str_at(message, "model").filter(|m| !m.is_empty()).map(str::to_owned),
        timestamp: str_at(message, "timestamp").map(str::to_owned),
        tokens: usage::gemini(tokens),
        ..Usage::default()
    })
}

/// The first of the `directories` an object lists.
fn first_directory(v: &Value) -> Option<String> {
    v.get("directories")?.as_array()?.iter().find_map(Value::as_str).map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::Media;

    fn meta(line: &str, n: u64) -> Meta {
        Gemini.describe(line, n, &FileContext::default()).unwrap()
    }

    #[test]
    fn records_are_messages_updates_checkpoints_and_rewinds() {
        let m = meta(
            r#"{"id":"g-u1","timestamp":"t1","type":"user","content":[{"text":"What is in this screenshot? @shot.png"},{"inlineData":{"mimeType":"image/png","data":"STRIPPED_MEDIA_MARKER"}}],"displayContent":[{"text":"What is in this screenshot? @shot.png"}]}"#,
            2,
        );
        assert_eq!(m.columns.uuid.as_deref(), Some("g-u1"));
        assert_eq!(m.columns.role.as_deref(), Some("user"));
        assert_eq!(m.effect, Some(Effect::Rewrites));
        assert_eq!(m.title.unwrap().1, "What is in this screenshot? @shot.png");
        let rewind = meta(r#"{"$rewindTo":"g-u2"}"#, 12);
        assert_eq!(
            (rewind.columns.kind.as_deref(), rewind.effect),
            (Some("rewind"), Some(Effect::RewindTo("g-u2".into())))
        );
        let checkpoint = meta(
            r#"{"$set":{"messages":[{"id":"h-m3","type":"gemini","content":[{"text":"Summary of earlier turns"}]}]}}"#,
            9,
        );
        assert_eq!(checkpoint.effect, Some(Effect::ReplacesAll));
        assert_eq!(checkpoint.columns.uuid.as_deref(), Some("L9"));
        assert!(checkpoint.text.unwrap().contains("Summary of earlier turns"));
        let summary = meta(r#"{"$set":{"summary":"Identify colours"}}"#, 20);
        assert_eq!(summary.title, Some((title_rank::SUMMARY, "Identify colours".into())));
    }

    #[test]
    fn the_session_is_the_metadata_lines() {
        let path = Path::new("/g/tmp/demo/chats/session-2026-11-30T09-00-5e55a0de.jsonl");
        let first =
            r#"{"sessionId":"5e55a0de-0000-4000-8000-000000000001","projectHash":"0f","startTime":"t","kind":"main"}"#;
        assert_eq!(
            Gemini.file_context(path, &mut || Some(first.into())).session,
            "5e55a0de-0000-4000-8000-000000000001"
        );
        assert_eq!(Gemini.file_context(path, &mut || None).session, "session-2026-11-30T09-00-5e55a0de");
        assert!(Gemini.is_transcript(path));
        assert!(!Gemini.is_transcript(Path::new("/g/tmp/demo/logs.jsonl")));
    }

    #[test]
    fn a_message_shows_what_was_typed_its_photos_and_its_tool_calls_with_their_results() {
        let v = |s: &str| serde_json::from_str::<Value>(s).unwrap();
        let user = v(
            r#"{"id":"u1","type":"user","content":[{"text":"What is in @a.png?\n--- a.png ---"},{"inlineData":{"mimeType":"image/png","data":"/api/session-media/s/u1/0","url":"/api/session-media/s/u1/0"}}],
                "displayContent":[{"text":"What is in @a.png?"}]}"#,
        );
        assert_eq!(Gemini.who(&user, false), Some(Who::new("You", Side::User)));
        let photo = Media {
            image: true,
            url: Some("/api/session-media/s/u1/0".into()),
            mime_type: Some("image/png".into()),
            ..Media::default()
        };
        assert_eq!(Gemini.parts(&user), [Part::Text("What is in @a.png?".into()), Part::Media(photo)]);
        let answer = v(
            r#"{"id":"g1","type":"gemini","content":"Done.","thoughts":[{"subject":"Reading","description":"the file"},{"subject":"Editing","description":"it"}],
                "toolCalls":[{"name":"replace","status":"error","args":{"file_path":"/a.py","old_string":"a\n","new_string":"b\n"},
                              "result":[{"functionResponse":{"name":"replace","response":{"error":"no match"}}}]}]}"#,
        );
        assert_eq!(Gemini.who(&answer, false), Some(Who::new("Gemini", Side::Assistant)));
        match &Gemini.parts(&answer)[..] {
            [Part::Thinking(t), Part::Text(said), Part::ToolCall(call), Part::ToolResult { text, error: true, .. }] => {
                assert_eq!(t, "Reading: the file\n\nEditing: it");
                assert_eq!(said, "Done.");
                assert_eq!(call.line(), "replace /a.py (+1 -1)");
                assert_eq!(text, "no match");
            }
            other => panic!("{other:?}"),
        }
        let response = v(
            r#"{"id":"u2","type":"user","content":[{"functionResponse":{"name":"read_file","response":{"output":"x"}}}]}"#,
        );
        assert_eq!(Gemini.who(&response, false), Some(Who::new("Tool response", Side::Note)));
        match &Gemini.parts(&response)[..] {
            [Part::ToolResult { text, error: false, label: Some(label), .. }] => {
                assert_eq!((text.as_str(), label.as_str()), ("x", "Response of read_file"));
            }
            other => panic!("{other:?}"),
        }
        let info = v(r#"{"id":"i1","type":"info","content":"Switched model."}"#);
        assert_eq!(Gemini.who(&info, false), Some(Who::new("Info", Side::Note)));
    }

    #[test]
    fn a_checkpoint_folds_its_messages_a_rewind_is_a_note_and_metadata_is_not_shown() {
        let v = |s: &str| serde_json::from_str::<Value>(s).unwrap();
        let checkpoint = v(
            r#"{"$set":{"lastUpdated":"t","messages":[{"id":"a","type":"user","content":[{"text":"Hi"}]},{"id":"b","type":"gemini","content":"Hello"}]}}"#,
        );
        assert_eq!(Gemini.who(&checkpoint, false), Some(Who::new("Gemini CLI", Side::Assistant)));
        assert_eq!(
            Gemini.parts(&checkpoint),
            [Part::Group {
                title: "Checkpoint: the conversation as 2 messages".into(),
                parts: vec![
                    Part::Message { who: Who::new("You", Side::User), parts: vec![Part::Text("Hi".into())] },
                    Part::Message { who: Who::new("Gemini", Side::Assistant), parts: vec![Part::Text("Hello".into())] },
                ],
            }]
        );
        let rewind = v(r#"{"$rewindTo":"g3"}"#);
        assert_eq!(Gemini.who(&rewind, false), Some(Who::note()));
        assert!(matches!(&Gemini.parts(&rewind)[..], [Part::Note(n)] if n.starts_with("Rewound")));
        for nobody in [r#"{"sessionId":"s","projectHash":"0f","startTime":"t"}"#, r#"{"$set":{"summary":"x"}}"#] {
            assert_eq!(Gemini.who(&v(nobody), false), None);
            assert!(Gemini.parts(&v(nobody)).is_empty());
        }
    }

    #[test]
    fn tool_results_and_thoughts_are_searched_and_tool_responses_are_not_typed() {
        let m = meta(
            r#"{"id":"m1","type":"gemini","content":"","thoughts":[{"subject":"Reading","description":"red and blue"}],"toolCalls":[{"name":"read_file","args":{"file_path":"a.png"},"result":[{"functionResponse":{"response":{"output":"done reading"}}}]}]}"#,
            3,
        );
        assert_eq!(m.text.as_deref(), Some("Reading\nred and blue"));
        assert_eq!(m.tool_text.as_deref(), Some("a.png\ndone reading"));
        assert_eq!(m.tools.as_deref(), Some("read_file"));
        let response: Value = serde_json::from_str(
            r#"{"id":"u2","type":"user","content":[{"functionResponse":{"response":{"output":"x"}}}]}"#,
        )
        .unwrap();
        assert_eq!(Gemini.typed_input(None, false, &response), None);
        let command = meta(r#"{"id":"u3","type":"user","content":[{"text":"/init"}]}"#, 4);
        assert_eq!(command.title, None);
    }
}
