//! Cline's and Roo Code's tasks, generated from the facts docs/formats.md cites: a person's photo,
//! a tool's screenshot and a 3 MB photo, a tool that failed, the editor's state on each turn, the
//! panel's copy with its API requests' counts (one under way), a task file torn as it is written,
//! and files rewritten whole as the task goes on. Every photo served by ref byte-exact, no payload
//! byte in SQLite, every record restored byte for byte, the session as the extension shows it, its
//! words found once, and its requests in the ledger.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::util::fixtures::cline::{TASK, at, conversation, environment, file, panel, request};
use crate::util::server::Server;
use crate::util::{Env, check_invariants, fake_png};

fn roots(env: &Env) -> Vec<String> {
    vec![
        "--root".into(),
        format!("cline:{}", env.path("cline/tasks").display()),
        "--root".into(),
        format!("roo:{}", env.path("roo/tasks").display()),
    ]
}

/// `scrollback usage --json --by session --agent AGENT`: each session's responses, input, output,
/// cache read and cache write, and its models.
fn usage(env: &Env, agent: &str) -> Vec<(String, [u64; 5], Value)> {
    env.usage_report(&["--by", "session", "--agent", agent])["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let n = |k: &str| r[k].as_u64().unwrap();
            let counts = ["responses", "inputTokens", "outputTokens", "cacheReadTokens", "cacheWriteTokens"].map(n);
            (r["key"].as_str().unwrap().to_owned(), counts, r["models"].clone())
        })
        .collect()
}

const ROO_TASK: &str = "0197a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b";

#[test]
fn cline_and_roo_tasks_keep_every_photo_and_read_as_the_extensions_show_them() {
    let env = Env::new();
    let photos = [fake_png(51, 300), fake_png(52, 400), fake_png(53, 3 << 20)];
    let api = env.write(&format!("cline/tasks/{TASK}/api_conversation_history.json"), file(&conversation(&photos)));
    env.write(&format!("cline/tasks/{TASK}/ui_messages.json"), file(&panel(&photos)));
    env.write(&format!("cline/tasks/{TASK}/task_metadata.json"), r#"{"files_in_context":[],"model_usage":[]}"#);
    // Roo Code: its words in `<user_message>`, its workspace, the model only in the editor's state.
    let roo_request = json!({"ts": at(2), "type": "say", "say": "api_req_started", "text": json!({
        "request": "<user_message>\nFix the build\n</user_message>\n<environment_details><model>gpt-5.1</model></environment_details>",
        "tokensIn": 100, "tokensOut": 20, "cacheWrites": 0, "cacheReads": 50, "apiProtocol": "openai"}).to_string()});
    env.write(
        &format!("roo/tasks/{ROO_TASK}/api_conversation_history.json"),
        file(&[
            json!({"role": "user", "ts": at(0), "content": [{"type": "text", "text": "<user_message>\nFix the build\n</user_message>"},
                environment("Current Workspace Directory", "/home/u/proj")]}),
            json!({"role": "assistant", "ts": at(3), "content": [{"type": "reasoning", "text": "The lockfile is stale."},
                {"type": "text", "text": "Regenerating the lockfile."}]}),
        ]),
    );
    env.write(
        &format!("roo/tasks/{ROO_TASK}/ui_messages.json"),
        file(&[json!({"ts": at(0), "type": "say", "say": "text", "text": "Fix the build", "images": []}), roo_request]),
    );
    // A task whose conversation is caught half written: not read until it is whole.
    let torn_task = "1780309000000";
    let torn = file(&conversation(&photos)[..2]);
    let torn_rel = format!("cline/tasks/{torn_task}/api_conversation_history.json");
    env.write(&torn_rel, &torn[..torn.len() / 2]);

    let summary = env.index_roots(&roots(&env));
    assert!(summary.starts_with("indexed 4 files, 20 lines"), "{summary}");
    assert_eq!(
        env.sessions_listed(),
        [
            (ROO_TASK.into(), "roo".into(), Some("Fix the build".into()), Some("/home/u/proj".into())),
            (TASK.into(), "cline".into(), Some("Why is the button red?".into()), Some("/w/app".into())),
        ]
    );
    let conn = env.conn();
    let invalid: i64 = conn.query_row("SELECT count(*) FROM invalid_lines", [], |r| r.get(0)).unwrap();
    assert_eq!(invalid, 0, "a file torn as it is written is not yet read, and is no error");
    assert_eq!(check_invariants(&env.data), 20, "every record restored byte for byte");
    assert_eq!(env.photos_of(&api), photos.to_vec(), "the person's, the screenshot and the 3 MB one");
    let longest: i64 =
        conn.query_row("SELECT max(length(stored_line(stripped))) FROM entries", [], |r| r.get(0)).unwrap();
    assert!(longest < 2000, "no payload in a stored line: the longest is {longest} bytes");
    drop(conn);

    // Each API request with counts is a response; the one under way is not yet.
    let model = json!(["claude-sonnet-4-5-20250929"]);
    assert_eq!(usage(&env, "cline"), [(TASK.into(), [2, 52, 420, 9000, 9000], model)]);
    assert_eq!(usage(&env, "roo"), [(ROO_TASK.into(), [1, 100, 20, 50, 0], json!(["gpt-5.1"]))]);

    // Over HTTP: the conversation as the extension shows it, the panel's copy not again.
    let mut args = vec!["--root"];
    let cline_root = format!("cline:{}", env.path("cline/tasks").display());
    let roo_root = format!("roo:{}", env.path("roo/tasks").display());
    args.extend([cline_root.as_str(), "--root", roo_root.as_str()]);
    let server = Server::start(&env, &args);
    server.wait_for_sessions(2);
    let listed = server.json("/api/sessions?agent=cline");
    assert_eq!(listed["sessions"].as_array().unwrap().len(), 1, "{listed}");
    let page = server.json(&format!("/api/sessions/{TASK}/history?view=true&limit=50"));
    let shown: Vec<&Value> =
        page["entries"].as_array().unwrap().iter().filter(|e| !e["view"]["who"].is_null()).collect();
    assert_eq!(shown.len(), 6, "the six messages, not the panel's copy: {page}");
    let view = |i: usize| shown[i]["view"].clone();
    assert_eq!((view(0)["who"]["name"].as_str(), view(0)["who"]["side"].as_str()), (Some("You"), Some("user")));
    let asked = view(0);
    let first: Vec<&str> = asked["parts"].as_array().unwrap().iter().map(|p| p["kind"].as_str().unwrap()).collect();
    assert_eq!(first[..2], ["text", "media"], "{asked}");
    assert!(view(0)["parts"][0].to_string().contains("Why is the button red?"));
    assert!(view(0).to_string().contains("Environment details"), "the editor's state, folded: {}", view(0));
    assert_eq!(view(1)["who"]["name"], "Cline");
    let results = view(2).to_string();
    assert!(results.contains("No such file or directory") && results.contains("\"error\":true"), "{results}");
    assert!(view(4)["parts"][0].to_string().contains("And this larger screenshot?"), "{}", view(4));
    let res = server.get(&format!("/api/session-media/{TASK}/m1/0"));
    assert_eq!(res.status(), 200);
    assert_eq!(res.bytes().unwrap().as_ref(), photos[0].as_slice());
    let hits = server.json("/api/search?group=none&q=stylesheet&agent=cline");
    assert_eq!(hits["hits"].as_array().unwrap().len(), 1, "said once, found once: {hits}");

    // The extension writes both files whole as the task goes on: the new answer is found, the
    // request that was under way counts; the torn file, whole, is a task.
    let mut more = conversation(&photos);
    more.push(
        json!({"role": "user", "ts": at(40), "content": [{"type": "text", "text": "<feedback>\nthanks\n</feedback>"}]}),
    );
    more.push(json!({"role": "assistant", "id": "a4", "ts": at(42), "content": [{"type": "text", "text": "Glad the lighthouse colours work."}]}));
    env.write(&format!("cline/tasks/{TASK}/api_conversation_history.json"), file(&more));
    let mut shown_more = panel(&photos);
    *shown_more.last_mut().unwrap() = request(at(31), Some([5, 60, 0, 9300]), Some("claude-sonnet-4-5-20250929"));
    env.write(&format!("cline/tasks/{TASK}/ui_messages.json"), file(&shown_more));
    env.write(&torn_rel, &torn);
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let hits = server.json("/api/search?group=none&q=lighthouse");
        let report = server.json("/api/usage?by=session&agent=cline");
        let listed = server.json("/api/sessions?agent=cline");
        if hits["hits"].as_array().unwrap().len() == 1
            && report["total"]["responses"] == 3
            && listed["sessions"].as_array().unwrap().len() == 2
        {
            assert_eq!(report["total"]["outputTokens"], 480, "{report}");
            break;
        }
        assert!(Instant::now() < deadline, "the rewrites were not followed: {hits} {report} {listed}");
        std::thread::sleep(Duration::from_millis(50));
    }
    drop(server);
    assert_eq!(env.photos_of(&api), photos.to_vec(), "the same photos after the rewrite");
}

/// `--root cline:<tree>/cline/sessions`.
fn sdk_root(env: &Env) -> Vec<String> {
    vec!["--root".into(), format!("cline:{}", env.path("cline/sessions").display())]
}

#[test]
fn cline_4_sessions_keep_every_photo_their_answers_counts_and_follow_each_rewrite() {
    use crate::util::fixtures::cline::{SESSION, sdk_file, sdk_image, sdk_manifest, sdk_messages};
    let env = Env::new();
    let photos = [fake_png(61, 300), fake_png(62, 2 << 20)];
    let mut messages = sdk_messages(&photos);
    let path =
        env.write(&format!("cline/sessions/{SESSION}/{SESSION}.messages.json"), sdk_file(SESSION, "lead", &messages));
    env.write(&format!("cline/sessions/{SESSION}/{SESSION}.json"), sdk_manifest(SESSION, "/w/web"));
    // A sub-agent's transcript in the same folder: a session of its own.
    let sub = format!("{SESSION}__explorer");
    let sub_messages = vec![
        json!({"id": "msg_s1", "role": "user", "content": [{"type": "text", "text": "Find every flex container."}], "ts": at(5)}),
        json!({"id": "msg_s2", "role": "assistant", "content": [{"type": "text", "text": "Two: the header and the footer."}],
            "ts": at(7), "modelInfo": {"id": "anthropic/claude-haiku-4.5", "provider": "cline"},
            "metrics": {"inputTokens": 900, "outputTokens": 20}}),
    ];
    env.write(&format!("cline/sessions/{SESSION}/explorer.messages.json"), sdk_file(&sub, "subagent", &sub_messages));
    // The compaction sidecar is a working copy, not read.
    env.write(&format!("cline/sessions/{SESSION}/{SESSION}.compaction.json"), r#"{"version":1,"messages":[]}"#);

    let summary = env.index_roots(&sdk_root(&env));
    assert!(summary.starts_with("indexed 2 files, 9 lines, 2 payloads, 0 invalid lines"), "{summary}");
    assert_eq!(
        env.sessions_listed(),
        [
            (
                SESSION.into(),
                "cline".into(),
                Some("Why is the header misaligned in this screenshot? [Image 1]".into()),
                Some("/w/web".into())
            ),
            (sub.clone(), "cline".into(), Some("Find every flex container.".into()), Some("/w/web".into())),
        ]
    );
    assert_eq!(check_invariants(&env.data), 9, "every message restored byte for byte");
    assert_eq!(env.photos_of(&path), photos.to_vec(), "the person's photo and the tool's");
    let longest: i64 =
        env.conn().query_row("SELECT max(length(stored_line(stripped))) FROM entries", [], |r| r.get(0)).unwrap();
    assert!(longest < 3000, "no payload in a stored line: the longest is {longest} bytes");
    // Each answer's model call, its input without the cache's reads and writes.
    let model = json!(["anthropic/claude-sonnet-4.6"]);
    assert_eq!(
        usage(&env, "cline"),
        [
            (SESSION.into(), [3, 30 + 1000 + 1000, 196, 58_000, 15_180], model),
            (sub.clone(), [1, 900, 20, 0, 0], json!(["anthropic/claude-haiku-4.5"])),
        ]
    );

    // As the person sees it, live: rewritten whole in place, torn midway, then whole again.
    let server = Server::start(&env, &sdk_root(&env).iter().map(String::as_str).collect::<Vec<_>>());
    server.wait_for_sessions(2);
    let page: Value = server.get(&format!("/api/sessions/{SESSION}/history?view=true&limit=50")).json().unwrap();
    let entries = page["entries"].as_array().unwrap();
    let view =
        |u: &str| entries.iter().find(|e| e["uuid"] == u).unwrap_or_else(|| panic!("{u}: {page}"))["view"].clone();
    let kinds = |v: &Value| -> Vec<String> {
        v["parts"].as_array().unwrap().iter().map(|p| p["kind"].as_str().unwrap().to_owned()).collect()
    };
    let asked = view("msg_mrb2x1kq_1");
    assert_eq!(asked["who"]["side"], "user");
    assert_eq!(asked["parts"][0]["text"], "Why is the header misaligned in this screenshot? [Image 1]");
    assert_eq!(kinds(&asked), ["text", "media", "context"]);
    assert_eq!(kinds(&view("msg_Qm3vT8aZ")), ["thinking", "text", "toolCall"]);
    assert_eq!(view("msg_r3m1nd3r")["who"]["side"], "note", "the runtime's reminder is not the person's");
    let failed = view("msg_Tb7wQ2xY_tool_toolu_02");
    assert_eq!(failed["parts"][0]["error"], true, "{failed}");
    let url = view("msg_Qm3vT8aZ_tool_toolu_01")["parts"][0]["media"][0]["url"].as_str().unwrap().to_owned();
    assert_eq!(server.get(&url).bytes().unwrap().as_ref(), photos[1].as_slice());

    let third = fake_png(63, 500);
    messages.push(json!({"id": "msg_n3wq", "role": "user", "content": [
        {"type": "text", "text": "<mode_notice>Plan mode</mode_notice><user_input mode=\"plan\">And on a phone? [Image 1]</user_input>"},
        sdk_image(&third)], "ts": at(40)}));
    let whole = sdk_file(SESSION, "lead", &messages);
    std::fs::write(&path, &whole.as_bytes()[..whole.len() / 2]).unwrap();
    std::thread::sleep(Duration::from_millis(300));
    std::fs::write(&path, whole.as_bytes()).unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let page: Value = server.get(&format!("/api/sessions/{SESSION}/history?view=true&limit=50")).json().unwrap();
        let last = page["entries"].as_array().unwrap().iter().find(|e| e["uuid"] == "msg_n3wq").cloned();
        if let Some(last) = last {
            assert_eq!(last["view"]["parts"][0]["text"], "And on a phone? [Image 1]");
            let url = last["view"]["parts"][1]["url"].as_str().unwrap().to_owned();
            assert_eq!(server.get(&url).bytes().unwrap().as_ref(), third.as_slice());
            break;
        }
        assert!(Instant::now() < deadline, "the rewrite never showed: {page}");
        std::thread::sleep(Duration::from_millis(100));
    }
    drop(server);
    assert_eq!(check_invariants(&env.data), 10, "the torn write lost nothing and added nothing");
}
