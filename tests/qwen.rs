//! Qwen Code's chats, generated from the facts docs/formats.md cites: every record kind (a
//! person's message with a photo and an `@` file, an answer with thinking and parallel tool calls,
//! a tool result with a photo on a 2 MB line and a failed one, telemetry that repeats the usage, an
//! auto title then a person's, a rewind, a compaction, a notification, a sub-agent's chat, an
//! archived chat, a sidecar that is no transcript, a legacy 0.1.x document), a non-UTF-8 line and a
//! torn last line. Indexed by the real binary: photos byte-exact by ref and through the API, every
//! corpus invariant, parts as the viewer gets them, usage counted once per response, live
//! appends, and the MCP tools.

use serde_json::{Value, json};

use crate::mcp::{call, run_plan, sdk_available, stdio_plan};
use crate::util::fixtures::qwen::{CHATS, SESSION, chat, record};
use crate::util::server::Server;
use crate::util::{Env, b64, check_invariants, fake_png, media_rows};

const ARCHIVED: &str = "5f0c7a2e-1b2c-4d3e-8f90-0123456789ac";
const LEGACY: &str = "5f0c7a2e-1b2c-4d3e-8f90-01234567890d";
/// A small PNG that decodes (what `get_photo` scales and serves).
fn real_png() -> Vec<u8> {
    let img = image::RgbImage::from_fn(24, 16, |x, y| image::Rgb([(x * 10) as u8, (y * 15) as u8, 200]));
    let mut out = Vec::new();
    img.write_to(&mut std::io::Cursor::new(&mut out), image::ImageFormat::Png).unwrap();
    out
}

/// A non-UTF-8 line (a byte that is no character), as a broken write leaves one.
const NOT_UTF8: &[u8] = b"{\"uuid\":\"x\",\"text\":\"\xff\xfe\"}\n";

/// A sub-agent's chat: its records on a side chain of the parent session.
fn sub_agent() -> String {
    let line = |uuid: &str, parent: Option<&str>, kind: &str, fields: Value| {
        let mut r = json!({ "uuid": uuid, "parentUuid": parent, "sessionId": SESSION,
            "timestamp": "2026-10-01T09:00:10.000Z", "type": kind, "cwd": "/home/u/demo", "version": "0.24.4",
            "agentId": "a1b2", "agentName": "explorer", "isSidechain": true });
        r.as_object_mut().unwrap().extend(fields.as_object().unwrap().clone());
        r.to_string() + "\n"
    };
    line("s1", None, "user", json!({ "message": { "role": "user", "parts": [{ "text": "Find the port" }] } }))
        + &line(
            "s2",
            Some("s1"),
            "assistant",
            json!({ "message": { "role": "model", "parts": [{ "text": "Port 8080 in app.toml" }] },
                "usageMetadata": { "promptTokenCount": 300, "candidatesTokenCount": 7, "totalTokenCount": 307 } }),
        )
}

/// A Qwen Code 0.1.x chat: Gemini CLI's legacy document, its assistant messages `type: "qwen"`.
fn legacy(photo: &[u8]) -> String {
    serde_json::to_string_pretty(&json!({ "sessionId": LEGACY, "projectHash": "9f3c", "startTime": "2025-10-01T08:00:00.000Z",
        "lastUpdated": "2025-10-01T08:00:04.000Z", "messages": [
            { "id": "l-u1", "timestamp": "2025-10-01T08:00:00.000Z", "type": "user",
              "content": [{ "text": "What does this logo say?" }, { "inlineData": { "mimeType": "image/png", "data": b64(photo) } }] },
            { "id": "l-m1", "timestamp": "2025-10-01T08:00:04.000Z", "type": "qwen", "content": "It says QWEN.",
              "tokens": { "input": 1800, "output": 14, "cached": 0, "thoughts": 60, "tool": 0, "total": 1874 },
              "model": "qwen3-coder-plus" }] }))
    .unwrap()
}

/// A session's id, agent, title, project and branch.
type SessionRow = (String, String, Option<String>, Option<String>, Option<String>);

fn roots(env: &Env) -> Vec<String> {
    vec![
        "--root".into(),
        format!("qwen:{}", env.path("qwen/projects").display()),
        "--root".into(),
        format!("qwen:{}", env.path("qwen/tmp").display()),
    ]
}

fn index(env: &Env) -> String {
    env.index_roots(&roots(env))
}

fn query<T: rusqlite::types::FromSql>(env: &Env, sql: &str) -> Vec<T> {
    env.conn().prepare(sql).unwrap().query_map([], |r| r.get(0)).unwrap().collect::<rusqlite::Result<_>>().unwrap()
}

#[test]
fn generated_qwen_chats_keep_every_photo_count_each_response_once_and_read_as_qwen_shows_them() {
    let env = Env::new();
    let photos = [real_png(), fake_png(51, 2 << 20)];
    let (body, torn) = chat(&photos);
    let main_rel = format!("{CHATS}/{SESSION}.jsonl");
    let mut bytes = body.into_bytes();
    bytes.extend_from_slice(NOT_UTF8);
    bytes.extend_from_slice(&torn.as_bytes()[..40]);
    let main = env.write(&main_rel, &bytes);
    env.write(&format!("{CHATS}/{SESSION}.ledger.jsonl"), "{\"promptId\":\"p1\",\"state\":\"completed\"}\n");
    env.write(&format!("{CHATS}/{SESSION}.runtime.json"), "{}");
    env.write(&format!("qwen/projects/-home-u-demo/subagents/{SESSION}/agent-a1b2.jsonl"), sub_agent());
    env.write(&format!("qwen/projects/-home-u-demo/subagents/{SESSION}/agent-a1b2.meta.json"), "{}");
    let archived = record(
        "z1",
        None,
        "2026-09-01T10:00:00.000Z",
        "user",
        json!({ "message": { "role": "user", "parts": [{ "text": "An old question" }] } }),
    )
    .replace(SESSION, ARCHIVED);
    env.write(&format!("{CHATS}/archive/{ARCHIVED}.jsonl"), archived);
    let legacy_photo = fake_png(52, 900);
    let old = env.write("qwen/tmp/9f3c/chats/session-2025-10-01T08-00-5f0c7a2e.json", legacy(&legacy_photo));

    let summary = index(&env);
    assert!(
        summary.starts_with("indexed 4 files"),
        "the chat, the sub-agent's, the archived one, the legacy one: {summary}"
    );
    let invalid: Vec<String> = query(&env, "SELECT line || ' ' || reason FROM invalid_lines ORDER BY line");
    assert_eq!(invalid.len(), 2, "the line that is not JSON and the one that is not UTF-8: {invalid:?}");
    assert_eq!(check_invariants(&env.data), 13 + 2 + 1 + 2, "every valid line restored byte for byte");

    // Photos by ref, byte-exact: the person's, the tool's on its 2 MB line, the legacy chat's.
    let refs = |path| -> Vec<String> {
        media_rows(&env.conn(), path).iter().filter_map(|row| row.reference.clone()).collect()
    };
    assert_eq!(refs(&main), [format!("{SESSION}/a2/0"), format!("{SESSION}/a4/0")]);
    for (r, photo) in refs(&main).iter().zip(&photos) {
        assert_eq!(&env.media(r).unwrap(), photo, "{r}");
    }
    assert_eq!(refs(&old), [format!("{LEGACY}/l-u1/0")]);
    assert_eq!(env.media(&format!("{LEGACY}/l-u1/0")).unwrap(), legacy_photo);
    let longest: Vec<i64> = query(&env, "SELECT max(length(stored_line(stripped))) FROM entries");
    assert!(longest[0] < 4000, "no payload byte in a stored line: the longest is {}", longest[0]);

    // Sessions: the auto title (the person's, still torn, is not read yet), the project from `cwd`.
    let sessions: Vec<SessionRow> = env
        .conn()
        .prepare("SELECT id, agent, title, project, git_branch FROM sessions ORDER BY id")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)))
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap();
    let s = |id: &str, title: &str, project: Option<&str>, branch: Option<&str>| {
        (
            id.to_owned(),
            "qwen".to_owned(),
            Some(title.to_owned()),
            project.map(str::to_owned),
            branch.map(str::to_owned),
        )
    };
    assert_eq!(
        sessions,
        [
            s(LEGACY, "What does this logo say?", None, None),
            s(SESSION, "Inspect screenshot", Some("/home/u/demo"), Some("main")),
            s(ARCHIVED, "An old question", Some("/home/u/demo"), Some("main")),
        ]
    );

    // Usage: each assistant record once (the sub-agent's too, the legacy message's), never the
    // telemetry that repeats it.
    let usage: Vec<(String, i64, i64, i64, i64)> = env
        .conn()
        .prepare("SELECT key, input_tokens, output_tokens, cache_read_tokens, reasoning_tokens FROM usage ORDER BY key")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)))
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap();
    let u = |key: &str, i, o, c, r| (key.to_owned(), i, o, c, r);
    assert_eq!(
        usage,
        [
            u("qwen:a3", 410, 96, 4800, 18),
            u("qwen:a6", 220, 22, 5200, 0),
            u("qwen:b2", 100, 5, 0, 0),
            u("qwen:l-m1", 1800, 74, 0, 60),
            u("qwen:s2", 300, 7, 0, 0),
        ]
    );
    let out = env.run(&["usage", "--json", "--agent", "qwen", "--by", "session"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let main_row = report["rows"].as_array().unwrap().iter().find(|r| r["key"] == SESSION).unwrap();
    assert_eq!(main_row["outputTokens"], 96 + 22 + 5 + 7);
    assert_eq!(main_row["inputTokens"], 410 + 220 + 100 + 300);

    // Search: the words of each kind once (a tool's output, thinking, a compaction's summary).
    let search = |q: &str| -> Vec<String> {
        let mut hits: Vec<String> = scrollback::read::history::search(&env.conn(), q, None, 20)
            .unwrap()
            .iter()
            .map(|h| h.entry_uuid.clone().unwrap())
            .collect();
        hits.sort();
        hits
    };
    assert_eq!(search("gradient"), ["a3"]);
    assert_eq!(search("missing.txt"), ["a3", "a5", "a6"]);
    assert_eq!(search("summary teal swatch"), ["c1"]);
    assert!(search("\"The swatch is teal\"").iter().all(|u| u != "a7"), "telemetry's response_text is not searched");

    // The viewer's parts, and the photos through their URLs.
    let server = Server::start(&env, &roots(&env).iter().map(String::as_str).collect::<Vec<_>>());
    server.wait_for_sessions(3);
    let page = server.json(&format!("/api/sessions/{SESSION}/history?view=true&limit=100&sidechains=true"));
    let entries = page["entries"].as_array().unwrap();
    let entry = |uuid: &str| entries.iter().find(|e| e["uuid"] == uuid).unwrap_or_else(|| panic!("{uuid}: {page}"));
    let kinds = |uuid: &str| -> Vec<String> {
        entry(uuid)["view"]["parts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["kind"].as_str().unwrap().to_owned())
            .collect()
    };
    let who = |uuid: &str| entry(uuid)["view"]["who"].clone();
    assert!(entries.iter().all(|e| e["agent"] == "qwen"));
    assert_eq!(who("a1"), Value::Null, "the @ command's bookkeeping is not shown");
    assert_eq!(who("a2"), json!({"name": "You", "side": "user"}));
    assert_eq!(kinds("a2"), ["text", "media"]);
    assert_eq!(entry("a2")["typed"]["text"], "What is in @shot.png? Check app.toml too");
    let url = entry("a2")["view"]["parts"][1]["url"].as_str().unwrap().to_owned();
    assert_eq!(server.get(&url).bytes().unwrap().as_ref(), photos[0].as_slice());
    assert_eq!(who("a3"), json!({"name": "Qwen Code", "side": "assistant"}));
    assert_eq!(kinds("a3"), ["thinking", "text", "toolCall", "toolCall"]);
    assert_eq!(entry("a3")["view"]["parts"][3]["line"], "run_shell_command $ cat missing.txt");
    let result = &entry("a4")["view"]["parts"][0];
    assert_eq!(
        (result["kind"].as_str(), result["callId"].as_str(), &result["error"]),
        (Some("toolResult"), Some("call_01"), &json!(false))
    );
    let url = result["media"][0]["url"].as_str().unwrap();
    assert_eq!(server.get(url).bytes().unwrap().as_ref(), photos[1].as_slice());
    let failed = &entry("a5")["view"]["parts"][0];
    assert_eq!((failed["callId"].as_str(), &failed["error"]), (Some("call_02"), &json!(true)));
    assert_eq!(failed["text"], "cat: missing.txt: No such file or directory");
    assert_eq!(who("a7"), Value::Null);
    assert_eq!(who("a8"), Value::Null);
    assert_eq!(kinds("r1"), ["note"]);
    assert_eq!(kinds("b1"), ["text"], "a rewound turn stays, as written");
    assert_eq!(kinds("c1"), ["group"]);
    assert_eq!(who("n1"), json!({"name": "Notification", "side": "note"}));
    assert_eq!(who("s2"), json!({"name": "Sub-agent", "side": "assistant"}));
    assert_eq!(entry("s2")["isSidechain"], true);

    // Live: the torn record completes and the chat goes on; the person's title replaces the auto one.
    env.append(&main_rel, &torn.as_bytes()[40..]);
    env.append(
        &main_rel,
        record(
            "d1",
            Some("t1"),
            "2026-10-01T09:04:00.000Z",
            "assistant",
            json!({ "message": { "role": "model", "parts": [{ "text": "Anything else about the swatch?" }] },
                "usageMetadata": { "promptTokenCount": 6000, "candidatesTokenCount": 9, "totalTokenCount": 6009,
                    "cachedContentTokenCount": 5000 } }),
        ),
    );
    // Two appends: the writer may read the first before the second is written, so both are waited
    // for (the title the first completes, and the answer the second adds).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let last = loop {
        let list = server.json("/api/sessions?agent=qwen");
        let session = list["sessions"].as_array().unwrap().iter().find(|s| s["id"] == SESSION).cloned();
        let page = server.json(&format!("/api/sessions/{SESSION}/history?view=true&limit=100"));
        let last = page["entries"].as_array().and_then(|e| e.last()).cloned().unwrap_or_default();
        if session.as_ref().is_some_and(|s| s["title"] == "Teal swatch and app config") && last["uuid"] == "d1" {
            break last;
        }
        assert!(std::time::Instant::now() < deadline, "the appended records were not read: {session:?} {last}");
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    assert_eq!((last["uuid"].as_str(), &last["view"]["who"]["name"]), (Some("d1"), &json!("Qwen Code")));
    drop(server);
    assert_eq!(check_invariants(&env.data), 13 + 2 + 1 + 2 + 2);
    let keys: Vec<String> = query(&env, "SELECT key FROM usage WHERE key = 'qwen:d1'");
    assert_eq!(keys.len(), 1);

    // The MCP tools read the chat and serve the person's photo.
    if !sdk_available() {
        return;
    }
    let calls = [
        call("read_session", json!({ "session": SESSION, "limit": 100 })),
        call("get_photo", json!({ "ref": format!("{SESSION}/a2/0") })),
    ];
    let args = roots(&env);
    let report = run_plan(&env, &stdio_plan(&env, &args.iter().map(String::as_str).collect::<Vec<_>>(), &calls, &[]));
    let answers = report["calls"].as_array().unwrap();
    assert_eq!(answers[0]["isError"], false, "{}", answers[0]);
    let text = answers[0]["text"].as_str().unwrap();
    for said in ["What is in @shot.png?", "It is a gradient swatch", "run_shell_command $ cat missing.txt", "Qwen Code"]
    {
        assert!(text.contains(said), "read_session lacks {said:?}: {text}");
    }
    assert_eq!(answers[1]["isError"], false, "{}", answers[1]);
    use base64::Engine as _;
    let served =
        base64::engine::general_purpose::STANDARD.decode(answers[1]["images"][0]["data"].as_str().unwrap()).unwrap();
    assert_eq!(served, photos[0], "get_photo serves the stored bytes");
}
