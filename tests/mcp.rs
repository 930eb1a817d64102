//! The MCP server driven by a real client nobody here wrote: the official Python SDK (`mcp` on
//! PyPI, which `.ci/run` installs), through `tests/mcp/client.py`, over stdio (`scrollback mcp`)
//! and Streamable HTTP (`/mcp` on `serve`). And the election among several `mcp` servers and a
//! `serve` on one data directory.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::util::server::Server;
use crate::util::{Env, hash_hex};

/// Whether `python3` has the SDK; in CI its absence is a failure.
pub(crate) fn sdk_available() -> bool {
    let found =
        Command::new("python3").args(["-c", "import mcp, jsonschema"]).output().is_ok_and(|out| out.status.success());
    if !found {
        assert!(std::env::var_os("CI").is_none(), "the MCP Python SDK is missing: .ci/run installs it");
        eprintln!("SKIPPED: the MCP Python SDK is not installed; `python3 -m pip install mcp` to run this test");
    }
    found
}

/// Runs the client on `plan` and returns its report.
pub(crate) fn run_plan(env: &Env, plan: &Value) -> Value {
    let path = env.dir.path().join(format!("plan-{}.json", rand::random::<u32>()));
    std::fs::write(&path, plan.to_string()).unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/client.py");
    let out = Command::new("python3").arg(script).arg(&path).output().unwrap();
    assert!(
        out.status.success(),
        "the MCP client failed: {}\n{}",
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// A plan for `scrollback mcp` over stdio on `env` (with `args`), making `calls` and `pages`.
pub(crate) fn stdio_plan(env: &Env, args: &[&str], calls: &[Value], pages: &[Value]) -> Value {
    let mut command = vec![env!("CARGO_BIN_EXE_scrollback").to_owned(), "mcp".to_owned()];
    command.extend(args.iter().map(|a| a.to_string()));
    json!({
        "transport": "stdio",
        "command": command,
        "env": {
            "HOME": env.dir.path(),
            "SCROLLBACK_DATA_DIR": env.data,
            "SCROLLBACK_TRANSCRIPTS": env.root,
            "RUST_LOG": "scrollback=warn",
            "PATH": std::env::var("PATH").unwrap_or_default(),
        },
        "calls": calls,
        "pages": pages,
    })
}

fn http_plan(base: &str, token: Option<&str>, calls: &[Value], pages: &[Value]) -> Value {
    let headers = match token {
        Some(t) => json!({ "Authorization": format!("Bearer {t}") }),
        None => json!({}),
    };
    json!({ "transport": "http", "url": format!("{base}/mcp"), "headers": headers, "calls": calls, "pages": pages })
}

pub(crate) fn call(tool: &str, args: Value) -> Value {
    json!({ "tool": tool, "args": args })
}

fn page(tool: &str, args: Value, cursor: &str) -> Value {
    json!({ "tool": tool, "args": args, "cursor": cursor })
}

/// A Claude Code line of `session` in project `cwd`.
fn claude_line(session: &str, n: u32, kind: &str, cwd: &str, content: Value) -> String {
    let line = json!({
        "parentUuid": (n > 1).then(|| format!("{session}-{:04}", n - 1)),
        "isSidechain": false, "cwd": cwd, "sessionId": session, "type": kind,
        "uuid": format!("{session}-{n:04}"),
        "timestamp": format!("2026-10-0{}T10:{:02}:00.000Z", 1 + n / 50, n % 50),
        "message": { "role": kind, "content": content },
    });
    format!("{line}\n")
}

/// A noisy RGB PNG of `w` × `h`: it does not compress, so it is about `3 w h` bytes.
fn noisy_png(w: u32, h: u32) -> Vec<u8> {
    let mut img = image::RgbImage::new(w, h);
    let mut x = 0x9e37_79b9u32;
    for p in img.pixels_mut() {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        *p = image::Rgb([x as u8, (x >> 8) as u8, (x >> 16) as u8]);
    }
    let mut out = Vec::new();
    img.write_to(&mut std::io::Cursor::new(&mut out), image::ImageFormat::Png).unwrap();
    out
}

const OTHER_PROJECT: &str = "/work/other-project";
const TOOLS_SESSION: &str = "0e000000-mcp0-4000-8000-000000000001";

/// A session of another project: Chinese and Japanese text, tool calls, and a photo over 5 MB.
fn tools_session() -> (String, Vec<u8>) {
    let big = noisy_png(1400, 1300);
    assert!(big.len() as u64 > 5 * 1024 * 1024, "the big photo must be over the API's limit");
    let s = TOOLS_SESSION;
    let b64 = crate::util::b64(&big);
    let mut text = String::new();
    text += &claude_line(s, 1, "user", OTHER_PROJECT, json!("缓存策略怎么定? 再構築のときにキャッシュを消す"));
    text += &claude_line(
        s,
        2,
        "assistant",
        OTHER_PROJECT,
        json!([
            {"type": "text", "text": "Let me look at the **cache** first."},
            {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "git status", "description": "Status"}},
            {"type": "tool_use", "id": "t2", "name": "Edit", "input": {"file_path": "src/cache.rs", "old_string": "a", "new_string": "b\nc"}}
        ]),
    );
    text += &claude_line(
        s,
        3,
        "user",
        OTHER_PROJECT,
        json!([{"type": "tool_result", "tool_use_id": "t1", "content": "On branch main\nnothing to commit", "is_error": false},
               {"type": "tool_result", "tool_use_id": "t2", "content": "permission denied", "is_error": true}]),
    );
    text += &claude_line(
        s,
        4,
        "user",
        OTHER_PROJECT,
        json!([{"type": "text", "text": "Here is the broken layout screenshot"},
               {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": b64}}]),
    );
    (text, big)
}

/// `(ref, blake3)` of every photo the index holds, in a stable order.
fn photos(env: &Env) -> Vec<(String, String)> {
    let conn = env.conn();
    let mut stmt = conn
        .prepare(
            "SELECT e.session_id || '/' || e.uuid || '/' || m.ordinal, m.blake3 FROM media m JOIN entries e ON e.id = m.entry_id
             WHERE m.ordinal IS NOT NULL ORDER BY m.id",
        )
        .unwrap();
    stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?))).unwrap().collect::<rusqlite::Result<_>>().unwrap()
}

const QUERIES: [&str; 10] = [
    "layout",
    "phone",
    "screenshot",
    "page",
    "\"newest page\"",
    "before OR after",
    "mock*",
    "cache",
    "缓存策略",
    "再構築",
];

fn decode(data: &str) -> Vec<u8> {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.decode(data).unwrap()
}

/// The `(sessionId, cursor)` of each hit in an answer's structured content (of each session's best
/// hit, grouped), or in an answer of `/api/search`.
fn hit_keys(answer: &Value) -> Vec<(String, i64)> {
    let answer = answer.get("structured").unwrap_or(answer);
    let (list, cursor) = match answer.get("sessions") {
        Some(sessions) => (sessions, "/best/cursor"),
        None => (&answer["hits"], "/cursor"),
    };
    list.as_array()
        .unwrap_or_else(|| panic!("no hits in {answer}"))
        .iter()
        .map(|h| (h["sessionId"].as_str().unwrap().to_owned(), h.pointer(cursor).unwrap().as_i64().unwrap()))
        .collect()
}

fn hostile_calls() -> Vec<Value> {
    vec![
        call("search_history", json!({"query": "?? !! --"})),
        call("search_history", json!({"query": "foo:bar"})),
        call("search_history", json!({"query": "agent:nosuch photo"})),
        call("search_history", json!({"query": "-photo"})),
        call("search_history", json!({"query": "page", "limit": 1_000_000_000_000i64})),
        call("search_history", json!({"query": "page", "cursor": "-5"})),
        call("search_history", json!({"query": "page", "since": "last tuesday"})),
        call("list_sessions", json!({"limit": 0})),
        call("list_sessions", json!({"cursor": "not-a-cursor"})),
        call("read_session", json!({"session": "no-such-session"})),
        call("read_session", json!({"session": "../../etc/passwd"})),
        call("read_session", json!({"session": scrollback::demo::PHOTO_SESSION, "from": 999_999_999})),
        call("read_session", json!({"session": scrollback::demo::PHOTO_SESSION, "limit": 100_000})),
        call("get_photo", json!({"ref": "../../etc/passwd"})),
        call("get_photo", json!({"ref": "a/b/c"})),
        call("get_photo", json!({"ref": format!("{}/x/0", "s".repeat(10_000))})),
        call("get_photo", json!({"blake3": "zz"})),
        call("get_photo", json!({"blake3": "0".repeat(64)})),
        call("get_photo", json!({})),
        call("get_photo", json!({"blake3": "0".repeat(64), "max_dimension": 1_000_000})),
    ]
}

/// Every answer of the hostile calls is a tool error that says something, and the server still
/// answers afterwards.
fn check_hostile(answers: &[Value], after: &Value) {
    for (i, a) in answers.iter().enumerate() {
        assert_eq!(a["isError"], true, "hostile call {i} was not a tool error: {a}");
        assert!(a["text"].as_str().unwrap().len() > 10, "hostile call {i} said nothing useful: {a}");
    }
    assert_eq!(after["isError"], false, "the server stopped answering after hostile input: {after}");
}

#[test]
fn the_tools_over_stdio_and_http_answer_as_the_api_does() {
    if !sdk_available() {
        return;
    }
    // The demo's own data directory is `demo/` in the one given: this test reads that one.
    let mut env = Env::new();
    let given = env.data.clone();
    env.data = scrollback::demo::data_dir(&given);
    let server = Server::start(&env, &["--demo", "--data-dir", given.to_str().unwrap()]);
    server.wait_for_sessions(2);
    // A session appended while the servers run: found by their next search.
    let (tools, big) = tools_session();
    let demo_project = env.data.join("projects").join(scrollback::demo::engine::DEMO_PROJECT);
    std::fs::write(demo_project.join(format!("{TOOLS_SESSION}.jsonl")), &tools).unwrap();
    server.wait_for_sessions(3);
    let photos = photos(&env);
    let big_photo = photos.iter().find(|(_, h)| *h == hash_hex(&big)).expect("the big photo is indexed").clone();
    let small_photo = photos.iter().find(|(r, _)| r.starts_with(scrollback::demo::PHOTO_SESSION)).unwrap().clone();

    let mut calls: Vec<Value> = QUERIES
        .iter()
        .map(|q| call("search_history", json!({"query": q, "limit": 50, "include_active": true})))
        .collect();
    calls.push(call("get_photo", json!({"ref": small_photo.0})));
    calls.push(call("get_photo", json!({"blake3": small_photo.1, "max_dimension": 32})));
    calls.push(call("get_photo", json!({"ref": big_photo.0})));
    calls.push(call("read_session", json!({"session": TOOLS_SESSION})));
    calls.push(call("list_sessions", json!({"include_active": true, "project": OTHER_PROJECT})));
    calls.push(call("list_sessions", json!({})));
    let hostile_from = calls.len();
    calls.extend(hostile_calls());
    calls.push(call("search_history", json!({"query": "layout"})));
    let pages = [
        page(
            "search_history",
            json!({"query": "page", "limit": 7, "include_active": true, "per_entry": true}),
            "cursor",
        ),
        page("list_sessions", json!({"limit": 1, "include_active": true}), "cursor"),
        page("read_session", json!({"session": scrollback::demo::TEXT_SESSION, "limit": 9}), "from"),
    ];

    let over_http = run_plan(&env, &http_plan(&server.base, None, &calls, &pages));
    let over_stdio = run_plan(&env, &stdio_plan(&env, &[], &calls, &pages));
    for (transport, report) in [("http", &over_http), ("stdio", &over_stdio)] {
        let names: Vec<&str> =
            report["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
        assert_eq!(names, ["get_photo", "list_sessions", "read_session", "search_history"], "{transport}");
        for tool in report["tools"].as_array().unwrap() {
            assert_eq!(tool["schemaValid"], true, "{transport}: {tool}");
            assert!(tool["description"].as_str().unwrap().len() > 80, "{transport}: {tool}");
            assert!(
                tool["inputSchema"]["properties"].as_object().unwrap().values().all(|p| p["description"].is_string()),
                "{transport}: every argument is described: {tool}"
            );
        }
        let answers = report["calls"].as_array().unwrap();
        // Search: the same hits, in the same order, as /api/search.
        let mut found = 0;
        for (q, answer) in QUERIES.iter().zip(answers) {
            let api = server.json(&format!("/api/search?limit=50&q={}", urlencode(q)));
            let expected = hit_keys(&api);
            assert_eq!(hit_keys(answer), expected, "{transport}: {q}");
            found += api["sessions"].as_array().unwrap().iter().map(|g| g["hits"].as_u64().unwrap()).sum::<u64>();
            let text = answer["text"].as_str().unwrap();
            assert!(expected.is_empty() || text.contains("**"), "{transport}: matched words are marked: {text}");
        }
        assert!(found > 50, "{transport}: the queries found too little ({found}) to prove anything");
        for cjk in [8, 9] {
            assert_eq!(hit_keys(&answers[cjk])[0].0, TOOLS_SESSION, "{transport}: {}", QUERIES[cjk]);
        }
        let group = &answers[0]["structured"]["sessions"][0];
        for key in ["sessionId", "title", "agent", "project", "lastTimestamp", "hits", "best"] {
            assert!(!group[key].is_null(), "{transport}: a session's hits have {key}: {group}");
        }
        for key in ["cursor", "snippet", "in"] {
            assert!(!group["best"][key].is_null(), "{transport}: a hit has {key}: {group}");
        }
        // Photos: the stored bytes, verified; scaled ones valid and no larger than asked.
        let small = &answers[10];
        assert_eq!(small["isError"], false, "{transport}: {small}");
        assert_eq!(hash_hex(&decode(small["images"][0]["data"].as_str().unwrap())), small_photo.1, "{transport}");
        assert_eq!(small["images"][0]["mime"], "image/png");
        let scaled = &answers[11];
        let bytes = decode(scaled["images"][0]["data"].as_str().unwrap());
        let img = image::load_from_memory(&bytes).expect("a scaled photo is a valid image");
        assert!(
            img.width().max(img.height()) <= 32 && img.width() > 0,
            "{transport}: {}x{}",
            img.width(),
            img.height()
        );
        let large = &answers[12];
        let bytes = decode(large["images"][0]["data"].as_str().unwrap());
        assert!(bytes.len() as u64 <= 5 * 1024 * 1024, "{transport}: a photo over 5 MB is scaled down by default");
        let img = image::load_from_memory(&bytes).unwrap();
        assert!(img.width().max(img.height()) <= 2048);
        assert!(large["text"].as_str().unwrap().contains("scaled down"), "{transport}: {}", large["text"]);
        // A session as text: tool calls at a glance, results, the photo line.
        let read = answers[13]["text"].as_str().unwrap();
        for expected in [
            "缓存策略怎么定",
            "→ Bash $ git status",
            "→ Edit src/cache.rs (+2 -1)",
            "← ERROR result",
            "On branch main",
            &format!("[photo ref {}", big_photo.0),
            "This is the end of the session.",
        ] {
            assert!(read.contains(expected), "{transport}: {expected:?} is not in:\n{read}");
        }
        assert_eq!(answers[14]["structured"]["sessions"].as_array().unwrap().len(), 1, "{transport}");
        // The demo's sessions are a month old: listed without include_active. The tools session
        // too (its timestamps are in October).
        assert!(answers[15]["structured"]["sessions"].as_array().unwrap().len() >= 3, "{transport}");
        check_hostile(&answers[hostile_from..answers.len() - 1], answers.last().unwrap());
        // Paging loses and repeats nothing.
        let pages = report["pages"].as_array().unwrap();
        let paged: Vec<(String, i64)> = pages[0].as_array().unwrap().iter().flat_map(hit_keys).collect();
        let api = server.json("/api/search?group=none&limit=500&q=page");
        let all: Vec<(String, i64)> = api["hits"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| (h["sessionId"].as_str().unwrap().to_owned(), h["cursor"].as_i64().unwrap()))
            .collect();
        assert!(all.len() > 100 && all.len() < 500);
        assert_eq!(paged, all, "{transport}: search pages");
        let listed: Vec<&str> = pages[1]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|a| a["structured"]["sessions"].as_array().unwrap().iter().map(|s| s["id"].as_str().unwrap()))
            .collect();
        assert_eq!(listed.len(), 3, "{transport}: {listed:?}");
        let mut unique = listed.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), 3, "{transport}: {listed:?}");
        let read: Vec<i64> = pages[2]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|a| a["structured"]["entries"].as_array().unwrap().iter().map(|e| e["cursor"].as_i64().unwrap()))
            .collect();
        let history = server.json(&format!("/api/sessions/{}/history?limit=500", scrollback::demo::TEXT_SESSION));
        let expected: Vec<i64> =
            history["entries"].as_array().unwrap().iter().map(|e| e["cursor"].as_i64().unwrap()).collect();
        assert_eq!(expected.len(), 240);
        assert_eq!(read, expected, "{transport}: read_session pages");
    }

    // --project: one project's sessions only.
    let limited = run_plan(
        &env,
        &stdio_plan(
            &env,
            &["--project", OTHER_PROJECT],
            &[
                call("list_sessions", json!({"include_active": true})),
                call("read_session", json!({"session": scrollback::demo::PHOTO_SESSION})),
                call("search_history", json!({"query": "layout OR cache", "limit": 50})),
                call("get_photo", json!({"ref": small_photo.0})),
            ],
            &[],
        ),
    );
    let answers = limited["calls"].as_array().unwrap();
    let ids: Vec<&str> =
        answers[0]["structured"]["sessions"].as_array().unwrap().iter().map(|s| s["id"].as_str().unwrap()).collect();
    assert_eq!(ids, [TOOLS_SESSION]);
    assert_eq!(answers[1]["isError"], true, "another project's session is not read: {}", answers[1]);
    assert!(hit_keys(&answers[2]).iter().all(|(s, _)| s == TOOLS_SESSION) && !hit_keys(&answers[2]).is_empty());
    assert_eq!(answers[3]["isError"], true, "another project's photo is not served");
}

/// Percent-encodes a query parameter.
pub(crate) fn urlencode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;

fn post_mcp(server: &Server, headers: &[(&str, &str)]) -> reqwest::blocking::Response {
    let mut req = server
        .client
        .post(format!("{}/mcp", server.base))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(INITIALIZE);
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    req.send().unwrap()
}

#[test]
fn the_http_transport_refuses_foreign_hosts_cross_site_origins_and_missing_tokens() {
    let env = Env::new();
    let open = Server::start(&env, &["--demo"]);
    let res = post_mcp(&open, &[]);
    assert_eq!(res.status(), StatusCode::OK);
    let body: Value = res.json().unwrap();
    assert_eq!(body["result"]["serverInfo"]["name"], "scrollback", "{body}");
    assert_eq!(post_mcp(&open, &[("host", "evil.example")]).status(), StatusCode::FORBIDDEN);
    assert_eq!(post_mcp(&open, &[("origin", "http://evil.example")]).status(), StatusCode::FORBIDDEN);
    assert_eq!(post_mcp(&open, &[("sec-fetch-site", "cross-site")]).status(), StatusCode::FORBIDDEN);
    assert_eq!(open.client.get(format!("{}/mcp", open.base)).send().unwrap().status(), StatusCode::METHOD_NOT_ALLOWED);
    drop(open);

    let guarded = Server::start(&env, &["--demo", "--token", "s3cret-s3cret-s3cret"]);
    assert_eq!(post_mcp(&guarded, &[]).status(), StatusCode::UNAUTHORIZED);
    assert_eq!(post_mcp(&guarded, &[("authorization", "Bearer wrong")]).status(), StatusCode::UNAUTHORIZED);
    assert_eq!(post_mcp(&guarded, &[("authorization", "Bearer s3cret-s3cret-s3cret")]).status(), StatusCode::OK);
    if sdk_available() {
        let report = run_plan(
            &env,
            &http_plan(
                &guarded.base,
                Some("s3cret-s3cret-s3cret"),
                &[call("search_history", json!({"query": "layout"}))],
                &[],
            ),
        );
        assert_eq!(report["calls"][0]["isError"], false, "{report}");
        assert!(!hit_keys(&report["calls"][0]).is_empty());
    }
}

/// A `scrollback mcp` on `env` with its standard input held open (it waits for a client there).
struct Mcp {
    child: Child,
    log: std::sync::Arc<std::sync::Mutex<String>>,
}

impl Mcp {
    fn start(env: &Env) -> Mcp {
        let mut child = env
            .cmd()
            .env("RUST_LOG", "scrollback=info")
            .args(["mcp", "--rescan-secs", "1"])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stderr = BufReader::new(child.stderr.take().unwrap());
        let log = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
        let kept = log.clone();
        std::thread::spawn(move || {
            for line in stderr.lines().map_while(Result::ok) {
                kept.lock().unwrap().push_str(&line);
                kept.lock().unwrap().push('\n');
            }
        });
        Mcp { child, log }
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for Mcp {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Who holds the writer lock, as it says (`mcp 123`), once someone does.
fn holder(env: &Env) -> String {
    std::fs::read_to_string(env.data.join("scrollback.lock")).unwrap_or_default().trim().to_owned()
}

/// Waits until `pred` holds, for up to 20 s.
fn wait_until(what: &str, mut pred: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !pred() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Whether the index holds `session` (read as any sqlite3 user would).
fn indexed(env: &Env, session: &str) -> bool {
    let Ok(conn) = rusqlite::Connection::open_with_flags(
        env.data.join(scrollback::db::INDEX_FILE),
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
    ) else {
        return false;
    };
    conn.query_row("SELECT count(*) FROM sessions WHERE id = ?1", [session], |r| r.get::<_, i64>(0)).unwrap_or(0) > 0
}

fn add_session(env: &Env, n: u32) -> String {
    let id = format!("0f000000-elec-4000-8000-{n:012}");
    env.write(&format!("p/{id}.jsonl"), claude_line(&id, 1, "user", "/work/p", json!(format!("election step {n}"))));
    id
}

#[test]
fn one_of_three_mcp_servers_follows_the_transcripts_and_a_serve_takes_over_in_turn() {
    let env = Env::new();
    let mut servers: Vec<Mcp> = (0..3).map(|_| Mcp::start(&env)).collect();
    let is_mcp = |h: &str, servers: &[Mcp]| servers.iter().any(|m| h == format!("mcp {}", m.pid()));
    wait_until("an mcp server to take the lock", || is_mcp(&holder(&env), &servers));
    let s1 = add_session(&env, 1);
    wait_until("the writing mcp to index a new session", || indexed(&env, &s1));

    // The writer exits: another takes over within a rescan interval, and the index stays current.
    let first = holder(&env);
    let at = servers.iter().position(|m| first == format!("mcp {}", m.pid())).unwrap();
    drop(servers.remove(at));
    wait_until("another mcp server to take over", || {
        let h = holder(&env);
        h != first && is_mcp(&h, &servers)
    });
    let s2 = add_session(&env, 2);
    wait_until("the new writer to index a new session", || indexed(&env, &s2));

    // A serve started now takes over from the mcp that writes (it waits for it, and says so).
    let serve = Server::start(&env, &["--rescan-secs", "1"]);
    assert_eq!(holder(&env), format!("serve {}", serve.child.id()));
    let s3 = add_session(&env, 3);
    wait_until("serve to index a new session", || indexed(&env, &s3));
    let said = servers.iter().any(|m| m.log.lock().unwrap().contains("handing it over"));
    assert!(said, "the mcp that wrote said it handed over");
    // While serve runs, no mcp takes the lock.
    std::thread::sleep(Duration::from_secs(2));
    assert_eq!(holder(&env), format!("serve {}", serve.child.id()));

    // serve stops: an mcp follows the transcripts again.
    drop(serve);
    wait_until("an mcp server to take over from serve", || is_mcp(&holder(&env), &servers));
    let s4 = add_session(&env, 4);
    wait_until("the mcp to index a new session", || indexed(&env, &s4));

    // A client that closes standard input ends its server, which lets the lock go.
    let writer = holder(&env);
    let at = servers.iter().position(|m| writer == format!("mcp {}", m.pid())).unwrap();
    let mut leaving = servers.remove(at);
    drop(leaving.child.stdin.take());
    let deadline = Instant::now() + Duration::from_secs(20);
    let status = loop {
        if let Some(status) = leaving.child.try_wait().unwrap() {
            break status;
        }
        assert!(Instant::now() < deadline, "an mcp whose client left did not exit");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(status.success(), "{}", leaving.log.lock().unwrap());
    wait_until("the last mcp to take over", || is_mcp(&holder(&env), &servers));
}

#[test]
fn the_tools_read_the_real_corpus_of_every_agent() {
    if !sdk_available() {
        return;
    }
    let Some(real) = crate::util::corpus("real") else { return };
    let Some(env) = crate::agents::fixtures_env() else { return };
    env.copy_corpus(&real);
    let mut roots = crate::agents::root_args(&env);
    roots.extend(["--root".to_owned(), format!("claude:{}", env.root.display())]);
    let mut index = vec!["index".to_owned()];
    index.extend(roots.iter().cloned());
    let out = env.run(&index.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let conn = env.conn();
    let sessions: Vec<(String, String)> = conn
        .prepare("SELECT id, agent FROM sessions ORDER BY id")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap();
    for agent in ["claude", "codex", "gemini"] {
        assert!(sessions.iter().any(|(_, a)| a == agent), "no {agent} session in the corpus");
    }
    let photos = photos(&env);
    assert!(photos.len() >= 5, "{}", photos.len());
    let mut calls = vec![
        call("list_sessions", json!({"limit": 100, "include_active": true})),
        call("search_history", json!({"query": "image", "limit": 50, "include_active": true})),
        call("search_history", json!({"query": "error", "agent": "codex", "include_active": true})),
        call("search_history", json!({"query": "file", "agent": "gemini", "include_active": true})),
    ];
    let first = calls.len();
    calls.extend(sessions.iter().map(|(id, _)| call("read_session", json!({"session": id, "limit": 100}))));
    let photo_calls = calls.len();
    calls.extend(photos.iter().map(|(r, _)| call("get_photo", json!({"ref": r}))));
    let mut args: Vec<&str> = roots.iter().map(String::as_str).collect();
    args.extend(["--rescan-secs", "600"]);
    let report = run_plan(&env, &stdio_plan(&env, &args, &calls, &[]));
    let answers = report["calls"].as_array().unwrap();
    assert_eq!(answers[0]["structured"]["sessions"].as_array().unwrap().len(), sessions.len().min(100));
    for (i, q) in [(1, "image"), (2, "codex error"), (3, "gemini file")] {
        let a = &answers[i];
        assert_eq!(a["isError"], false, "{q}: {a}");
        assert!(!hit_keys(a).is_empty(), "{q} found nothing in the corpus");
    }
    for ((id, agent), a) in sessions.iter().zip(&answers[first..photo_calls]) {
        assert_eq!(a["isError"], false, "{agent} {id}: {a}");
        let text = a["text"].as_str().unwrap();
        assert!(text.chars().count() <= scrollback::mcp::TEXT_MAX, "{id}: {} characters", text.chars().count());
        assert!(text.starts_with(&format!("Session {id}")), "{text}");
        assert!(!text.contains(scrollback::STRIPPED_MEDIA_MARKER), "{id}: a marker reached the text");
    }
    for ((r, hash), a) in photos.iter().zip(&answers[photo_calls..]) {
        assert_eq!(a["isError"], false, "{r}: {a}");
        let bytes = decode(a["images"][0]["data"].as_str().unwrap());
        let scaled = a["text"].as_str().unwrap().contains("scaled down");
        assert!(scaled || hash_hex(&bytes) == *hash, "{r}: the bytes are the stored ones");
        assert!(image::load_from_memory(&bytes).is_ok(), "{r}: a valid image");
    }
    // Tool calls read at a glance in every agent's sessions.
    let all: String = answers[first..photo_calls].iter().map(|a| a["text"].as_str().unwrap()).collect();
    assert!(all.contains("→ "), "no tool call was shown");
    assert!(all.contains("$ "), "no shell command was shown");
}
