//! Kiro CLI's chat sessions, generated from the facts docs/formats.md cites: a prompt, an answer
//! that calls a tool, its failed result, a line that is not JSON and a torn last line; the
//! session's metadata beside it naming its directory (and one that is a FIFO, which must not block);
//! the torn line completed and a prompt appended while the server runs.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::util::server::Server;
use crate::util::{Env, check_invariants};

const SESSION: &str = "5b0e1c2d-3f4a-4b5c-8d6e-7f8091a2b3c4";
const OTHER: &str = "6c1f2d3e-4a5b-4c6d-9e7f-8091a2b3c4d5";

fn record(kind: &str, id: &str, content: Value, at: Option<f64>) -> String {
    let mut data = json!({"message_id": id, "content": content});
    if let Some(at) = at {
        data["meta"] = json!({"timestamp": at});
    }
    json!({"version": "v1", "kind": kind, "data": data}).to_string() + "\n"
}

fn root(env: &Env) -> String {
    format!("kiro:{}", env.path("kiro/sessions/cli").display())
}

#[test]
fn kiro_chats_read_as_kiro_shows_them_with_the_directory_their_metadata_names() {
    let env = Env::new();
    let t = 1_780_308_000.0;
    let mut chat =
        record("Prompt", "m1", json!([{"kind": "text", "data": "list the red rules in the stylesheet"}]), Some(t));
    chat += &record(
        "AssistantMessage",
        "m2",
        json!([{"kind": "text", "data": "Searching the styles."},
               {"kind": "toolUse", "data": {"toolUseId": "tooluse_1", "name": "shell", "input": {"command": "grep -rn red src"}}}]),
        None,
    );
    chat += &record(
        "ToolResults",
        "m3",
        json!([{"kind": "toolResult", "data": {"toolUseId": "tooluse_1", "status": "error",
            "content": [{"kind": "json", "data": {"exit_status": "exit status: 2", "stdout": "", "stderr": "grep: src: No such file or directory"}}]}}]),
        None,
    );
    chat += "{this is not json\n";
    let torn_rest = "the styles live in app/, not src/.\"}]}}\n";
    let torn =
        record("AssistantMessage", "m4", json!([{"kind": "text", "data": "the styles live in app/, not src/."}]), None);
    let torn = &torn[..torn.len() - torn_rest.len()];
    chat += torn;
    let path = env.write(&format!("kiro/sessions/cli/{SESSION}.jsonl"), &chat);
    env.write(
        &format!("kiro/sessions/cli/{SESSION}.json"),
        serde_json::to_string_pretty(&json!({"session_id": SESSION, "cwd": "/w/app", "title": "red rules",
            "created_at": "2026-06-01T10:00:00Z", "updated_at": "2026-06-01T10:01:00Z",
            "session_state": {"rts_model_state": {"model_info": {"model_id": "claude-sonnet-4.5"}}}}))
        .unwrap(),
    );
    // Another session whose metadata is a FIFO: read without blocking, as no metadata.
    env.write(
        &format!("kiro/sessions/cli/{OTHER}.jsonl"),
        record("Prompt", "p1", json!([{"kind": "text", "data": "hello"}]), Some(t)),
    );
    let fifo = env.path(&format!("kiro/sessions/cli/{OTHER}.json"));
    assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());

    let summary = env.index_roots(&["--root".into(), root(&env)]);
    assert!(summary.starts_with("indexed 2 files, 5 lines"), "{summary}");
    let sessions = env.sessions_listed();
    assert_eq!(
        sessions,
        [
            (SESSION.into(), "kiro".into(), Some("list the red rules in the stylesheet".into()), Some("/w/app".into())),
            (OTHER.into(), "kiro".into(), Some("hello".into()), None),
        ]
    );
    let invalid: i64 = env.conn().query_row("SELECT count(*) FROM invalid_lines", [], |r| r.get(0)).unwrap();
    assert_eq!(invalid, 1, "the line that is not JSON");
    assert_eq!(check_invariants(&env.data), 4, "every complete JSON line restored byte for byte");

    let server = Server::start(&env, &["--root", &root(&env)]);
    server.wait_for_sessions(2);
    let page = server.json(&format!("/api/sessions/{SESSION}/history?view=true&limit=50"));
    let view = |uuid: &str| {
        page["entries"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["uuid"] == uuid)
            .unwrap_or_else(|| panic!("{uuid}: {page}"))["view"]
            .clone()
    };
    assert_eq!(view("m1")["who"]["side"], "user");
    assert_eq!(view("m2")["who"]["name"], "Kiro");
    let answer = view("m2");
    let kinds: Vec<&str> = answer["parts"].as_array().unwrap().iter().map(|p| p["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["text", "toolCall"]);
    let result = view("m3").to_string();
    assert!(result.contains("No such file or directory") && result.contains("\"error\":true"), "{result}");

    // The torn line completed and a prompt appended: both read, live.
    env.append(
        &format!("kiro/sessions/cli/{SESSION}.jsonl"),
        torn_rest.to_owned()
            + &record("Prompt", "m5", json!([{"kind": "text", "data": "thanks, lighthouse"}]), Some(t + 60.0)),
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let a = server.json("/api/search?group=none&q=lighthouse&agent=kiro");
        let b = server.json("/api/search?group=none&q=%22not+src%22&agent=kiro");
        if a["hits"].as_array().unwrap().len() == 1 && b["hits"].as_array().unwrap().len() == 1 {
            break;
        }
        assert!(Instant::now() < deadline, "the appended lines were not read: {a} {b}");
        std::thread::sleep(Duration::from_millis(50));
    }
    drop(server);
    assert_eq!(check_invariants(&env.data), 6);
    assert!(path.exists());
}
