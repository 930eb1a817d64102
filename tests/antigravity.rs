//! Antigravity CLI's transcripts, generated from the facts docs/formats.md cites: the person's
//! request with the CLI's settings block, the model's plan with its thinking and a tool call, the
//! tool's result as a step of its own, a checkpoint, bookkeeping steps, a line that is not JSON and
//! a torn last line; the full transcript beside it is not read; a step appended while the server
//! runs.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::util::server::Server;
use crate::util::{Env, check_invariants};

const CONVERSATION: &str = "0b1c2d3e-4f50-4a6b-8c7d-9e0f1a2b3c4d";

fn step(n: u64, source: &str, kind: &str, at: u32, extra: Value) -> String {
    let mut v = json!({"step_index": n, "source": source, "type": kind, "status": "DONE",
        "created_at": format!("2026-06-26T21:16:{at:02}Z")});
    for (k, x) in extra.as_object().unwrap() {
        v[k] = x.clone();
    }
    v.to_string() + "\n"
}

#[test]
fn antigravity_transcripts_read_as_the_cli_shows_them() {
    let env = Env::new();
    let logs = format!("antigravity/brain/{CONVERSATION}/.system_generated/logs");
    let mut steps = step(
        0,
        "USER_EXPLICIT",
        "USER_INPUT",
        16,
        json!({"content":
        "<USER_REQUEST>\nWhy does the harbour build fail?\n</USER_REQUEST>\n<USER_SETTINGS_CHANGE>\nThe user changed setting `Model Selection` from None to Gemini 3.5 Flash (Medium).\n</USER_SETTINGS_CHANGE>"}),
    );
    steps += &step(1, "SYSTEM", "CONVERSATION_HISTORY", 16, json!({}));
    steps += &step(
        2,
        "MODEL",
        "PLANNER_RESPONSE",
        17,
        json!({"thinking": "Read the build log first.",
        "tool_calls": [{"name": "run_command", "args": {"CommandLine": "\"make harbour\"", "toolSummary": "\"Building\""}}]}),
    );
    steps += &step(
        3,
        "MODEL",
        "RUN_COMMAND",
        18,
        json!({"content": "make: *** [harbour] Error 2\nmissing lighthouse.o", "status": "ERROR"}),
    );
    steps += &step(
        4,
        "SYSTEM",
        "SYSTEM_MESSAGE",
        19,
        json!({"content": "<SYSTEM_MESSAGE>\nnot from the person\n</SYSTEM_MESSAGE>"}),
    );
    steps += "{not json\n";
    steps += &step(
        5,
        "MODEL",
        "PLANNER_RESPONSE",
        21,
        json!({"content": "The object file is missing: run make clean first."}),
    );
    let torn = step(6, "SYSTEM", "CHECKPOINT", 22, json!({"content": "The build needs a clean tree."}));
    let (head, tail) = torn.split_at(torn.len() / 2);
    steps += head;
    env.write(&format!("{logs}/transcript.jsonl"), &steps);
    // The full transcript beside it repeats every step (longer fields whole): not read.
    env.write(&format!("{logs}/transcript_full.jsonl"), &steps[..steps.len() - head.len()]);
    let root = format!("antigravity:{}", env.path("antigravity/brain").display());
    let summary = env.index_roots(&["--root".into(), root.clone()]);
    assert!(summary.starts_with("indexed 1 file, 7 lines"), "{summary}");
    let (agent, title): (String, Option<String>) = env
        .conn()
        .query_row("SELECT agent, title FROM sessions WHERE id = ?1", [CONVERSATION], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap();
    assert_eq!((agent.as_str(), title.as_deref()), ("antigravity", Some("Why does the harbour build fail?")));
    assert_eq!(check_invariants(&env.data), 6, "every complete JSON line restored byte for byte");

    let server = Server::start(&env, &["--root", &root]);
    server.wait_for_sessions(1);
    let page = server.json(&format!("/api/sessions/{CONVERSATION}/history?view=true&limit=50"));
    let shown: Vec<Value> =
        page["entries"].as_array().unwrap().iter().map(|e| e["view"].clone()).filter(|v| !v["who"].is_null()).collect();
    let names: Vec<&str> = shown.iter().map(|v| v["who"]["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["You", "Antigravity", "Tool result", "Antigravity"], "{page}");
    assert!(shown[1].to_string().contains("make harbour"), "the call's argument as the text it spells: {}", shown[1]);
    let result = shown[2].to_string();
    assert!(result.contains("missing lighthouse.o") && result.contains("\"error\":true"), "{result}");
    let hits = server.json("/api/search?group=none&q=lighthouse&agent=antigravity");
    assert_eq!(hits["hits"].as_array().unwrap().len(), 1, "found once, not again from the full transcript: {hits}");

    // The torn step completed, then a request appended: read live.
    env.append(
        &format!("{logs}/transcript.jsonl"),
        tail.to_owned()
            + &step(
                7,
                "USER_EXPLICIT",
                "USER_INPUT",
                30,
                json!({"content": "<USER_REQUEST>\nthanks, the breakwater builds now\n</USER_REQUEST>"}),
            ),
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let a = server.json("/api/search?group=none&q=breakwater&agent=antigravity");
        let b = server.json("/api/search?group=none&q=%22clean+tree%22&agent=antigravity");
        if a["hits"].as_array().unwrap().len() == 1 && b["hits"].as_array().unwrap().len() == 1 {
            break;
        }
        assert!(Instant::now() < deadline, "the appended steps were not read: {a} {b}");
        std::thread::sleep(Duration::from_millis(50));
    }
}
