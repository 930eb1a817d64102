//! One line of each agent's transcripts, in the layout its format reads (the facts docs/formats.md
//! cites): the writers the per-agent tests build their fixtures with, and the model and crash tests
//! their random trees. Each returns the line with its newline.

use serde_json::{Value, json};

/// A Codex CLI rollout line: `{timestamp, type, payload}`.
pub fn codex_line(ts: &str, kind: &str, payload: Value) -> String {
    json!({ "timestamp": ts, "type": kind, "payload": payload }).to_string() + "\n"
}

/// A Gemini CLI chat's message (a JSONL chat, v0.39 on): `content` is a string or parts.
pub fn gemini_message(id: &str, ts: &str, kind: &str, content: Value) -> String {
    json!({ "id": id, "timestamp": ts, "type": kind, "content": content }).to_string() + "\n"
}

/// A Qwen Code record of the chat `session`: the envelope Qwen Code writes on each
/// (`createBaseRecord`), then `fields`.
pub fn qwen_record(session: &str, uuid: &str, parent: Option<&str>, ts: &str, kind: &str, fields: Value) -> String {
    let mut r = json!({ "uuid": uuid, "parentUuid": parent, "sessionId": session, "timestamp": ts, "type": kind,
        "cwd": "/home/u/demo", "version": "0.24.4", "gitBranch": "main" });
    r.as_object_mut().unwrap().extend(fields.as_object().unwrap().clone());
    r.to_string() + "\n"
}

/// A Factory Droid `message` line: one Anthropic-style message (`content` a string or blocks).
pub fn droid_message(id: &str, parent: Option<&str>, ts: &str, role: &str, content: Value) -> String {
    let mut line = json!({ "type": "message", "id": id, "timestamp": ts,
        "message": { "role": role, "content": content } });
    if let Some(parent) = parent {
        line["parentId"] = json!(parent);
    }
    line.to_string() + "\n"
}

/// A Cursor person's message, in its tagged sections: a photo's path (Cursor keeps the file, not
/// its bytes), the time, the query.
pub fn cursor_asked(query: &str, time: &str, photo: Option<&str>) -> String {
    let files = photo.map_or(String::new(), |p| {
        format!("[Image]\n<image_files>\nThe following images were provided by the user and saved to the workspace for future use:\n1. {p}\n\nThese images can be copied for use in other locations.\n</image_files>\n")
    });
    json!({"role": "user", "message": {"content": [
        {"type": "text", "text": format!("{files}<timestamp>{time}</timestamp>\n<user_query>\n{query}\n</user_query>")}]}})
    .to_string()
        + "\n"
}

/// A Pi `message` entry.
pub fn pi_message(id: &str, parent: &str, at: &str, message: Value) -> String {
    json!({ "type": "message", "id": id, "parentId": parent, "timestamp": at, "message": message }).to_string() + "\n"
}

/// A Copilot CLI event, the `n`th of its file: `{type, data, id, timestamp, parentId}` (and
/// `agentId` for a sub-agent's), in the key order the CLI writes; its id `e<n>`, its parent the
/// event before.
pub fn copilot_event(kind: &str, data: Value, n: u32, agent: Option<&str>) -> String {
    let parent = if n == 1 { Value::Null } else { json!(format!("e{:03}", n - 1)) };
    let ts = format!("2026-07-01T{:02}:{:02}:{:02}.000Z", 9 + n / 3600, n / 60 % 60, n % 60);
    let mut line = json!({ "type": kind, "data": data, "id": format!("e{n:03}"), "timestamp": ts, "parentId": parent });
    if let Some(agent) = agent {
        line["agentId"] = json!(agent);
    }
    line.to_string() + "\n"
}
