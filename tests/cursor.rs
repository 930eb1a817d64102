//! Cursor's agent transcripts, generated from the facts docs/formats.md cites: the flat and nested
//! layouts and a sub-agent's, a person's message in its tagged sections (a photo's path, the time,
//! the query), answers with calls and the marker where thinking was, a failed turn, a 3 MB line, a
//! non-UTF-8 and a torn line, and an append. Every line restored byte for byte, and each session as
//! Cursor shows it.

use serde_json::{Value, json};

use crate::util::fixtures::cursor::{answer, asked, line};
use crate::util::server::Server;
use crate::util::{Env, check_invariants};

const NESTED: &str = "3f0c9a52-1b7e-4d2a-9c11-0a6b5e7d2f44";
const FLAT: &str = "9a1b2c3d-0000-4000-8000-00000000c001";
const CHILD: &str = "5c4b3a29-0000-4000-8000-00000000c002";

fn root(env: &Env) -> String {
    format!("cursor:{}", env.path("cursor/projects").display())
}

fn index(env: &Env) -> String {
    env.index_roots(&["--root".into(), root(env)])
}

#[test]
fn cursor_transcripts_read_as_cursor_shows_them() {
    let env = Env::new();
    let shot = "/home/ana/.cursor/projects/home-ana-src-demo/assets/shot-7d1e2c3a.png";
    let mut nested =
        asked("The build badge is red. Fix the failing test.", "Monday, Nov 30, 2026, 9:12 AM (UTC+1)", Some(shot));
    nested += &answer(json!([{"type": "text", "text": "[REDACTED]"}]));
    nested += &answer(json!([{"type": "text", "text": "I'll look at the test output first.[REDACTED]"},
        {"type": "tool_use", "name": "Shell", "input": {"command": "cargo test -q", "working_directory": "/home/ana/src/demo"}}]));
    nested += &answer(json!([{"type": "tool_use", "name": "StrReplace",
        "input": {"path": "/home/ana/src/demo/src/lib.rs", "old_string": "a - b", "new_string": "a + b"}},
        {"type": "text", "text": "Fixed `add`: it was subtracting.[REDACTED]"}]));
    nested += &line(json!({"type": "turn_ended", "status": "success"}));
    nested += &asked("now delete the tmp dir", "Monday, Nov 30, 2026, 9:20 AM (UTC+1)", None);
    nested += &answer(json!([{"type": "tool_use", "name": "Task",
        "input": {"description": "Find tmp users", "prompt": "List files that use tmp/", "subagent_type": "explore"}}]));
    // A 3 MB line: a long file written whole.
    nested += &answer(json!([{"type": "tool_use", "name": "Write",
        "input": {"path": "/home/ana/src/demo/big.txt", "contents": "let x = 1;\n".repeat(300_000)}}]));
    nested += &line(json!({"type": "turn_ended", "status": "error", "error": "User aborted request"}));
    let mut bytes = nested.into_bytes();
    bytes.extend_from_slice(b"{\"role\":\"user\",\"message\":{\"content\":\"\xff\xfe\"}}\n");
    bytes.extend_from_slice(b"{\"role\":\"assistant\",\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"Do");
    let dir = "cursor/projects/home-ana-src-demo/agent-transcripts";
    env.write(&format!("{dir}/{NESTED}/{NESTED}.jsonl"), &bytes);
    env.write(
        &format!("{dir}/{NESTED}/subagents/{CHILD}.jsonl"),
        line(json!({"role": "user", "message": {"content": [{"type": "text", "text": "List files that use tmp/"}]}}))
            + &answer(json!([{"type": "tool_use", "name": "Grep", "input": {"pattern": "tmp/", "path": "/home/ana/src/demo"}}])),
    );
    // An older build's flat transcript, with no tags at all, and its plain-text twin (not read).
    env.write(
        &format!("{dir}/{FLAT}.jsonl"),
        line(json!({"role": "user", "message": {"content": "what does this repo do?"}}))
            + &answer(json!([{"type": "text", "text": "It is a demo."}])),
    );
    env.write(&format!("{dir}/{FLAT}.txt"), "user:\nwhat does this repo do?\n");
    let summary = index(&env);
    assert!(summary.starts_with("indexed 3 files, 14 lines"), "{summary}");
    assert_eq!(check_invariants(&env.data), 13, "every complete line but the non-UTF-8 one restored byte for byte");
    let conn = env.conn();
    type Row = (String, Option<String>, Option<String>, Option<String>, Option<String>);
    let sessions: Vec<Row> = conn
        .prepare("SELECT id, title, project, first_timestamp, last_timestamp FROM sessions WHERE agent = 'cursor' ORDER BY id")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)))
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap();
    let nested_row = (
        NESTED.to_owned(),
        Some("The build badge is red. Fix the failing test.".to_owned()),
        Some("home-ana-src-demo".to_owned()),
        Some("2026-11-30T08:12:00.000Z".to_owned()),
        Some("2026-11-30T08:20:00.000Z".to_owned()),
    );
    assert_eq!(sessions.len(), 3, "{sessions:?}");
    assert_eq!(sessions[0], nested_row);
    assert_eq!(sessions[1].1.as_deref(), Some("List files that use tmp/"), "a sub-agent is a session of its own");
    assert_eq!((sessions[2].1.as_deref(), sessions[2].3.as_deref()), (Some("what does this repo do?"), None));

    let server = Server::start(&env, &["--root", &root(&env)]);
    server.wait_for_sessions(3);
    let page: Value = server.get(&format!("/api/sessions/{NESTED}/history?view=true&limit=50")).json().unwrap();
    let entries = page["entries"].as_array().unwrap();
    let view =
        |u: &str| entries.iter().find(|e| e["uuid"] == u).unwrap_or_else(|| panic!("{u}: {page}"))["view"].clone();
    let first = view("L1").to_string();
    assert!(
        first.contains(shot) && first.contains("Fix the failing test.") && !first.contains("<user_query>"),
        "{first}"
    );
    assert_eq!(view("L2")["parts"][0]["kind"], "thinking", "a turn that only thought");
    let third = view("L3");
    let kinds: Vec<&str> = third["parts"].as_array().unwrap().iter().map(|p| p["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["text", "thinking", "toolCall"]);
    assert!(view("L5")["who"].is_null(), "a turn that ended well is bookkeeping");
    assert!(view("L9").to_string().contains("User aborted request"));
    let listed: Value = server.get("/api/sessions?agent=cursor").json().unwrap();
    assert_eq!(listed["sessions"].as_array().unwrap().len(), 3, "{listed}");
    drop(server);

    // The torn line completed, and a turn appended: only they are read.
    env.append(
        &format!("{dir}/{NESTED}/{NESTED}.jsonl"),
        "ne.\"}]}}\n".to_owned() + &asked("thanks", "Monday, Nov 30, 2026, 9:31 AM (UTC+1)", None),
    );
    let summary = index(&env);
    assert!(summary.starts_with("indexed 1 file, 2 lines"), "{summary}");
    let last: String =
        env.conn().query_row("SELECT last_timestamp FROM sessions WHERE id = ?1", [NESTED], |r| r.get(0)).unwrap();
    assert_eq!(last, "2026-11-30T08:31:00.000Z");
}
