//! OpenCode 2's tables, in the same database: `session_v2` (a session: the 1.x columns, `title`
//! now nullable, and running sums of its tokens), and `session_message` (`id`, `session_id`, `type`,
//! `seq`, `time_created`, `time_updated`, `data`), one row a message, its role the `type` column
//! and `data` the message as JSON without its `id` and `type`.
//!
//! Read from OpenCode's own source (anomalyco/opencode, MIT; docs/formats.md names each file and
//! commit): `packages/core/src/session/sql.ts` and the migration `20260804233008_loose_psylocke`
//! (the tables), `packages/schema/src/session-message.ts`, `prompt.ts`, `tool.ts` and
//! `token-usage.ts` (what `data` holds), `packages/core/src/session/projector.ts` (rows inserted at
//! the session's event sequence number and updated in place while an answer streams), and
//! `packages/core/src/database/v1-migration.bun.ts` (the copy of 1.x sessions, ids kept, recorded
//! in `kv` as `migration.v1-v2`).
//!
//! The types: `user` (`text`, `files[]` of `{data, mime, source, name}`: the bytes as base64),
//! `synthetic` and `system` (text OpenCode wrote for the model), `skill`, `shell` (a `!command` the
//! person ran: `command`, `status`, `exit`, `output.output`), `assistant` (`model {id, providerID}`,
//! `content[]` of `text`, `reasoning` and `tool` parts, `tokens`, `cost`, `error`), `compaction`
//! (`summary`, and its own `tokens`), `agent-switched`, `model-switched`, `location-switched` and
//! `idle`. A tool part has `id` (the call's), `name`, and `state` with `status` (`streaming`,
//! `running`, `completed`, `error`), `input`, and its result as `content[]` of `{type: "text",
//! text}` and `{type: "file", uri, mime}` (a photo's `uri` a `data:` URL).
//!
//! A session in `session_v2` is rendered from its rows ([`render`]): the same header line as a
//! 1.x session's, then a line a row in `seq` order, `{"row":DATA,"id":ID,"type":TYPE,"seq":N,
//! "time":MS}`, `DATA` the `data` column byte for byte, so a payload is [`ROW_PREFIX`] bytes less
//! into the column than into the line. A 1.x session OpenCode 2 did not copy (one written by a 1.x
//! build after the copy) is read from the 1.x tables; one it copied is read once, from its copy.
//! An answer's counts are its row's `tokens`, keyed by the message's id; the session's sums
//! (`tokens_*`) are never counted again.

use std::io::Write;

use rusqlite::{Connection, OptionalExtension};
use serde_json::Value;

use crate::codec::scan::STRIPPED_MEDIA_MARKER;

use super::{
    FileContext, Media, Meta, Part, SearchText, Side, Typed, Usage, Who, copy_column, file_media, first_chars,
    json_string, millis_of, shared_names, str_at, text_of, title_rank, tokens,
};

/// What a row's line begins with: its `data` column follows.
pub const ROW_PREFIX: &str = r#"{"row":"#;

/// The stamp columns of a session of `session_v2 s` ([`super::STAMP_COLUMNS`]'s five, for its
/// rows): its time, and its messages' count, times (summed modulo 2^32), sizes (`octet_length`
/// reads no value) and last `seq`. A row rewritten in the millisecond it was written changes its
/// size or nothing a reader could see.
pub(super) const STAMP_COLUMNS: &str = "s.time_updated,
       (SELECT count(*) FROM session_message WHERE session_id = s.id),
       (SELECT sum(CAST(time_updated AS INTEGER) % 4294967296) FROM session_message WHERE session_id = s.id),
       (SELECT sum(octet_length(data)) FROM session_message WHERE session_id = s.id),
       (SELECT max(seq) FROM session_message WHERE session_id = s.id)";

/// Whether the database has the table `name`.
pub(super) fn has_table(conn: &Connection, name: &str) -> rusqlite::Result<bool> {
    conn.query_row("SELECT count(*) > 0 FROM sqlite_master WHERE type = 'table' AND name = ?1", [name], |r| r.get(0))
}

/// Whether the database has OpenCode 2's tables.
pub(super) fn has_tables(conn: &Connection) -> rusqlite::Result<bool> {
    Ok(has_table(conn, "session_v2")? && has_table(conn, "session_message")?)
}

/// Writes the rows of `session` (in `session_v2`, whose header the caller wrote) to `out`.
pub(super) fn render(conn: &Connection, session: &str, out: &mut dyn Write) -> std::io::Result<()> {
    let sql = |e: rusqlite::Error| std::io::Error::other(format!("reading OpenCode's database: {e}"));
    let mut stmt = conn
        .prepare(
            "SELECT rowid, id, type, seq, time_created FROM session_message WHERE session_id = ?1 ORDER BY seq, id",
        )
        .map_err(sql)?;
    type Row = (i64, Option<String>, Option<String>, Option<i64>, Option<i64>);
    let rows: Vec<Row> = stmt
        .query_map([session], |r| Ok((r.get(0)?, text_of(r, 1)?, text_of(r, 2)?, millis_of(r, 3)?, millis_of(r, 4)?)))
        .map_err(sql)?
        .collect::<rusqlite::Result<_>>()
        .map_err(sql)?;
    let number = |n: Option<i64>| n.map_or_else(|| "null".to_owned(), |n| n.to_string());
    for (rowid, id, ty, seq, time) in rows {
        out.write_all(ROW_PREFIX.as_bytes())?;
        copy_column(conn, "session_message", rowid, out)?;
        writeln!(
            out,
            r#","id":{},"type":{},"seq":{},"time":{}}}"#,
            json_string(id.as_deref().unwrap_or("")),
            serde_json::to_string(&ty).unwrap_or_default(),
            number(seq),
            number(time),
        )?;
    }
    Ok(())
}

/// The row holding a payload of message `uuid`'s line, `offset` bytes into it.
pub(super) fn payload_row(conn: &Connection, uuid: &str, offset: u64) -> rusqlite::Result<Option<super::Cell>> {
    let Some(offset) = offset.checked_sub(ROW_PREFIX.len() as u64) else { return Ok(None) };
    if !has_table(conn, "session_message")? {
        return Ok(None);
    }
    let rowid = conn.query_row("SELECT rowid FROM session_message WHERE id = ?1", [uuid], |r| r.get(0)).optional()?;
    Ok(rowid.map(|rowid| super::Cell { table: "session_message", column: "data", rowid, offset }))
}

/// A row line's type.
fn ty(line: &Value) -> Option<&str> {
    str_at(line, "type")
}

/// A tool part's result: its `content[]` texts and files (or the `output` an earlier build wrote),
/// once it ran.
fn tool_parts(tool: &Value, out: &mut Vec<Part>) {
    let state = tool.get("state").unwrap_or(&Value::Null);
    let input = state.get("input").unwrap_or(&Value::Null);
    let id = str_at(tool, "id");
    let mut call =
        super::super::parts::tool_call_with_id(str_at(tool, "name").unwrap_or("tool"), &shared_names(input), id);
    call.input = input.clone();
    out.push(Part::ToolCall(call));
    let status = str_at(state, "status");
    if !matches!(status, Some("completed" | "error")) {
        return;
    }
    let error = status == Some("error");
    let mut texts = Vec::new();
    let mut media: Vec<Media> = Vec::new();
    if let Some(Value::Array(content)) = state.get("content") {
        for item in content {
            match str_at(item, "type") {
                Some("text") => texts.extend(str_at(item, "text").map(str::to_owned)),
                Some("file") => match file_item(item) {
                    Ok(file) => media.push(file),
                    Err(named) => texts.push(named),
                },
                _ => {}
            }
        }
    }
    if texts.is_empty() {
        texts.extend(str_at(state, "output").or_else(|| str_at(state, "result")).map(str::to_owned));
    }
    if error && let Some(message) = state.get("error").and_then(|e| str_at(e, "message").or_else(|| e.as_str())) {
        texts.push(message.to_owned());
    }
    out.push(Part::ToolResult { call: id.map(str::to_owned), text: texts.join("\n"), error, label: None, media });
}

/// A file in a row: a photo or a file whose bytes the row holds (its `data`, or its `uri` as a
/// `data:` URL, which a rendered line holds as the payload's URL), else what names one by its path
/// (`file://`).
fn file_item(file: &Value) -> Result<Media, String> {
    let uri = str_at(file, "uri");
    if file.get("data").is_some() || uri.is_some_and(|u| !u.starts_with("file:")) {
        let mut media = file_media(file);
        if media.url.is_none() && media.image {
            media.url = uri.filter(|u| !u.starts_with("data:") && *u != STRIPPED_MEDIA_MARKER).map(str::to_owned);
        }
        return Ok(media);
    }
    let uri = file.get("source").and_then(|s| str_at(s, "uri")).or(uri);
    Err(format!("File: {}", str_at(file, "name").or(uri).unwrap_or("attached")))
}

/// A person's attached file, as a part.
fn attached(file: &Value) -> Part {
    file_item(file).map_or_else(Part::Note, Part::Media)
}

/// A row line's parts, as a reader takes them in.
pub(super) fn parts(line: &Value, row: &Value) -> Vec<Part> {
    let text = |k: &str| str_at(row, k).filter(|t| !t.trim().is_empty()).map(str::to_owned);
    let mut out = Vec::new();
    match ty(line) {
        Some("user") => {
            out.extend(text("text").map(Part::Text));
            if let Some(Value::Array(files)) = row.get("files") {
                out.extend(files.iter().map(attached));
            }
            if let Some(Value::Array(agents)) = row.get("agents") {
                out.extend(agents.iter().filter_map(|a| str_at(a, "name")).map(|n| Part::Note(format!("Agent: {n}"))));
            }
        }
        Some("synthetic" | "system") => {
            out.extend(text("text").map(|t| Part::Context { label: "Context for the model".into(), text: t }));
        }
        Some("skill") => out.push(Part::Note(format!("Skill: {}", str_at(row, "name").unwrap_or("skill")))),
        Some("shell") => {
            out.push(Part::Command { name: "!".to_owned(), args: str_at(row, "command").unwrap_or("").to_owned() });
            let exit = row.get("exit").and_then(Value::as_i64);
            let failed = exit.is_some_and(|c| c != 0) || matches!(str_at(row, "status"), Some("timeout" | "killed"));
            let printed = row.get("output").and_then(|o| str_at(o, "output")).filter(|o| !o.is_empty());
            out.extend(printed.map(|o| Part::Output { text: o.to_owned(), error: failed }));
            match (str_at(row, "status"), exit) {
                (Some("timeout"), _) => out.push(Part::Note("Timed out.".into())),
                (Some("killed"), _) => out.push(Part::Note("Killed.".into())),
                (_, Some(code)) if code != 0 => out.push(Part::Note(format!("Exit code {code}."))),
                _ => {}
            }
        }
        Some("assistant") => {
            if let Some(Value::Array(content)) = row.get("content") {
                for part in content {
                    let said = str_at(part, "text").filter(|t| !t.trim().is_empty()).map(str::to_owned);
                    match str_at(part, "type") {
                        Some("text") => out.extend(said.map(Part::Text)),
                        Some("reasoning") => out.extend(said.map(Part::Thinking)),
                        Some("tool") => tool_parts(part, &mut out),
                        _ => {}
                    }
                }
            }
            if let Some(message) = row.get("error").and_then(|e| str_at(e, "message")) {
                out.push(Part::Note(format!("Error: {message}")));
            }
        }
        Some("compaction") => {
            out.push(Part::Note("Context compacted".into()));
            out.extend(text("summary").map(|t| Part::Context { label: "Summary of the conversation".into(), text: t }));
        }
        Some("agent-switched") => out.extend(text("agent").map(|a| Part::Note(format!("Agent: {a}")))),
        Some("model-switched") => {
            let model = row.get("model").and_then(|m| str_at(m, "id"));
            out.extend(model.map(|m| Part::Note(format!("Model: {m}"))));
        }
        Some("idle") => match str_at(row, "outcome") {
            Some("failed") => {
                let why = row.get("error").and_then(|e| str_at(e, "message")).unwrap_or("the turn failed");
                out.push(Part::Note(format!("Failed: {why}")));
            }
            Some("interrupted") => out.push(Part::Note("Interrupted.".into())),
            _ => {}
        },
        _ => {}
    }
    out
}

/// Who speaks in a row line; `None` for a row that is bookkeeping (a turn that ended well, a move).
pub(super) fn who(line: &Value, row: &Value) -> Option<Who> {
    let shown = !parts(line, row).is_empty();
    shown.then(|| match ty(line) {
        Some("user" | "shell") => Who::new("You", Side::User),
        Some("assistant") => Who::new("OpenCode", Side::Assistant),
        _ => Who::new("OpenCode", Side::Note),
    })
}

/// What the person typed, on a `user` row.
pub(super) fn typed_input(line: &Value, row: &Value) -> Option<Typed> {
    let text = str_at(row, "text").filter(|t| !t.trim().is_empty())?;
    (ty(line) == Some("user")).then(|| Typed { text: text.to_owned(), images: Vec::new() })
}

/// A row line's columns, search text, title and usage.
pub(super) fn describe(line: &Value, row: &Value, file: &FileContext) -> Meta {
    let mut meta = Meta::default();
    let mut text = SearchText::default();
    let kind = ty(line);
    meta.columns.uuid = str_at(line, "id").map(str::to_owned);
    meta.columns.kind = kind.map(str::to_owned);
    meta.columns.role = Some(match kind {
        Some("user" | "shell") => "user".to_owned(),
        Some("assistant") => "assistant".to_owned(),
        _ => "system".to_owned(),
    });
    meta.columns.timestamp = line.get("time").and_then(Value::as_i64).and_then(super::super::millis_iso);
    meta.cwd.clone_from(&file.project);
    match kind {
        Some("user") => {
            let said = str_at(row, "text").unwrap_or("");
            text.said(said);
            if !said.trim().is_empty() {
                meta.title = Some((title_rank::FIRST_USER_TEXT, first_chars(said.trim().to_owned(), 200)));
            }
        }
        Some("synthetic" | "system" | "skill") => text.output(str_at(row, "text").unwrap_or("")),
        Some("shell") => {
            text.call(Some("shell"), Some(&serde_json::json!({ "command": str_at(row, "command") })));
            text.output(row.get("output").and_then(|o| str_at(o, "output")).unwrap_or(""));
        }
        Some("assistant") => {
            for part in row.get("content").and_then(Value::as_array).into_iter().flatten() {
                match str_at(part, "type") {
                    Some("text" | "reasoning") => text.said(str_at(part, "text").unwrap_or("")),
                    Some("tool") => {
                        let state = part.get("state").unwrap_or(&Value::Null);
                        text.call(str_at(part, "name"), state.get("input"));
                        for item in state.get("content").and_then(Value::as_array).into_iter().flatten() {
                            text.output(str_at(item, "text").unwrap_or(""));
                        }
                        text.output(str_at(state, "output").unwrap_or(""));
                        text.output(state.get("error").and_then(|e| str_at(e, "message")).unwrap_or(""));
                    }
                    _ => {}
                }
            }
        }
        Some("compaction") => text.output(str_at(row, "summary").unwrap_or("")),
        _ => {}
    }
    // An answer's counts, and a compaction's (a model call of its own), keyed by the row's id.
    if matches!(kind, Some("assistant" | "compaction"))
        && let Some(t) = row.get("tokens").map(tokens).filter(|t| t.total() != 0)
    {
        meta.usage.push(Usage {
            key: format!("opencode:{}", str_at(line, "id").unwrap_or("")),
            model: row.get("model").and_then(|m| str_at(m, "id")).map(str::to_owned),
            tokens: t,
            ..Usage::default()
        });
    }
    text.finish(&mut meta);
    meta
}
