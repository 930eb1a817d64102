//! The viewer in real headless Chromium (Debian's `chromium`), driven by `tests/browser/viewer.test.mjs`
//! with playwright-core (no browser download: it starts the system binary). This test writes the
//! transcript trees the scenarios open, then runs `node --test` on them; each scenario starts the
//! real `scrollback serve` on 127.0.0.1:0 and saves a screenshot under `target/browser/`.

use std::path::{Path, PathBuf};
use std::process::Command;

use scrollback::demo::png;
use serde_json::{Value, json};

use crate::util::b64;

const SESSION: &str = "5e55a000-0000-4000-8000-000000000001";

fn line(n: usize, kind: &str, content: Value, extra: Value) -> String {
    let mut v = json!({
        "parentUuid": null, "isSidechain": false, "userType": "external", "cwd": "/home/test/project",
        "sessionId": SESSION, "type": kind, "uuid": format!("u-{n:05}"),
        "timestamp": format!("2026-11-01T{:02}:{:02}:{:02}.000Z", 8 + n / 3600, n / 60 % 60, n % 60),
        "message": { "role": kind, "content": content },
    });
    if let (Some(v), Some(extra)) = (v.as_object_mut(), extra.as_object()) {
        v.extend(extra.clone());
    }
    v.to_string() + "\n"
}

fn image(bytes: &[u8]) -> Value {
    json!({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": b64(bytes)}})
}

fn write(root: &Path, name: &str, body: &str) {
    let dir = root.join(name).join("p");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(format!("{SESSION}.jsonl")), body).unwrap();
}

/// The trees the scenarios open, one folder each, and the photos' sizes.
fn fixtures(root: &Path) {
    // 1: forty photos of distinct sizes, each with a line of text around it.
    let mut body = String::new();
    let mut sizes = Vec::new();
    for i in 0..40 {
        let (w, h) = (160 + i * 7, 120 + i * 3);
        sizes.push(json!({ "ordinalOf": format!("u-{:05}", 2 * i + 1), "width": w, "height": h }));
        body += &line(
            2 * i + 1,
            "user",
            json!([image(&png(w as u32, h as u32, i as u32)), {"type": "text", "text": format!("photo number {i}")}]),
            json!({}),
        );
        body += &line(
            2 * i + 2,
            "assistant",
            json!([{"type": "text", "text": format!("A reply about photo {i}.")}]),
            json!({}),
        );
    }
    write(root, "photos40", &body);
    std::fs::write(root.join("photos40/sizes.json"), Value::Array(sizes).to_string()).unwrap();

    // 2: three hundred entries, for paging back.
    let mut body = String::new();
    for n in 1..=300 {
        let kind = if n % 2 == 1 { "user" } else { "assistant" };
        body += &line(n, kind, json!([{"type": "text", "text": format!("entry {n} of the long session")}]), json!({}));
    }
    write(root, "history", &body);

    // 3: a failed upload and a PDF.
    let pdf = b"%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n";
    let mut body = String::new();
    body += &line(
        1,
        "user",
        json!([{"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": ""}}, {"type": "text", "text": "this upload failed"}]),
        json!({}),
    );
    body += &line(
        2,
        "user",
        json!([{"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": b64(pdf)}}, {"type": "text", "text": "here is the report"}]),
        json!({}),
    );
    body += &line(3, "assistant", json!([{"type": "text", "text": "Thanks."}]), json!({}));
    write(root, "failed", &body);

    // 4: transcript text that would run as HTML, were it inserted as HTML.
    let hostile = [
        "<script>window.__pwned = 'script'</script>",
        "<img src=x onerror=\"window.__pwned = 'img'\">",
        "[click me](javascript:window.__pwned='link') <a href=\"javascript:window.__pwned='a'\">a link</a>",
        "<svg onload=\"window.__pwned='svg'\"></svg><iframe src=\"javascript:window.__pwned='iframe'\"></iframe>",
    ];
    let mut body = String::new();
    for (i, text) in hostile.iter().enumerate() {
        body += &line(2 * i + 1, "user", json!(text), json!({}));
        body += &line(
            2 * i + 2,
            "assistant",
            json!([{"type": "text", "text": text}, {"type": "tool_use", "id": "t", "name": "<b onmouseover=x>Bash</b>", "input": {"command": text}}]),
            json!({}),
        );
    }
    body += &line(
        9,
        "user",
        json!([{"type": "image", "url": "x"}, {"type": "image", "url": "javascript:window.__pwned='url'"}, {"type": "text", "text": "images pointing elsewhere"}]),
        json!({}),
    );
    write(root, "hostile", &body);

    // 8: a long session with one rare word deep inside it.
    let mut body = String::new();
    for n in 1..=240 {
        let text = if n == 37 {
            "the zebrafinch nests in the old harbour wall".to_owned()
        } else {
            format!("ordinary line {n}")
        };
        body +=
            &line(n, if n % 2 == 1 { "user" } else { "assistant" }, json!([{"type": "text", "text": text}]), json!({}));
    }
    write(root, "search", &body);

    // 11: a conversation whose sub-agent's transcript arrives while it is open.
    let at = |n: usize, s: u32| json!({"uuid": format!("m{n}"), "timestamp": format!("2026-11-02T10:00:{s:02}.000Z")});
    let mut body = String::new();
    body += &line(1, "user", json!("Find where the parser loses lines"), at(1, 1));
    body += &line(
        2,
        "assistant",
        json!([{"type": "tool_use", "id": "t1", "name": "Task", "input": {"prompt": "read the parser"}}]),
        at(2, 2),
    );
    let mut result = at(3, 20);
    result["toolUseResult"] = json!({"agentId": "a1", "status": "completed"});
    body += &line(
        3,
        "user",
        json!([{"type": "tool_result", "tool_use_id": "t1", "content": "the helper found it"}]),
        result,
    );
    body += &line(4, "assistant", json!([{"type": "text", "text": "The parser drops a torn last line."}]), at(4, 30));
    write(root, "subagents", &body);

    // 13: a Codex rollout with a photo in the user's message and one in a tool output, and a
    // Gemini chat with a photo and a rewind, each under a root of its format.
    let url = |bytes: &[u8]| format!("data:image/png;base64,{}", b64(bytes));
    let codex = |ts: &str, kind: &str, payload: Value| {
        json!({ "timestamp": ts, "type": kind, "payload": payload }).to_string() + "\n"
    };
    let mut body = codex(
        "2026-11-30T10:00:00.000Z",
        "session_meta",
        json!({ "id": CODEX_SESSION, "cwd": "/home/test/harbour", "cli_version": "0.128.0" }),
    );
    body += &codex(
        "2026-11-30T10:00:01.000Z",
        "response_item",
        json!({ "type": "message", "role": "user", "content": [
        { "type": "input_text", "text": "<environment_context>\n  <cwd>/home/test/harbour</cwd>\n</environment_context>" }] }),
    );
    body += &codex(
        "2026-11-30T10:00:02.000Z",
        "response_item",
        json!({ "type": "message", "role": "user", "content": [
        { "type": "input_text", "text": "<image name=[Image #1]>" }, { "type": "input_image", "image_url": url(&png(240, 160, 1)) },
        { "type": "input_text", "text": "</image>" }, { "type": "input_text", "text": "What boats are in the harbour photo?" }] }),
    );
    body += &codex(
        "2026-11-30T10:00:02.001Z",
        "event_msg",
        json!({ "type": "user_message", "message": "What boats are in the harbour photo?", "images": [url(&png(240, 160, 1))] }),
    );
    body += &codex(
        "2026-11-30T10:00:03.000Z",
        "response_item",
        json!({ "type": "function_call", "name": "view_image", "arguments": "{\"path\":\"chart.png\"}", "call_id": "c1" }),
    );
    body += &codex(
        "2026-11-30T10:00:04.000Z",
        "response_item",
        json!({ "type": "function_call_output", "call_id": "c1",
        "output": [{ "type": "input_text", "text": "chart.png" }, { "type": "input_image", "image_url": url(&png(200, 120, 2)) }] }),
    );
    body += &codex(
        "2026-11-30T10:00:05.000Z",
        "response_item",
        json!({ "type": "message", "role": "assistant", "content": [{ "type": "output_text", "text": "Two sailing boats and a ferry." }] }),
    );
    body += &codex(
        "2026-11-30T10:00:05.001Z",
        "event_msg",
        json!({ "type": "agent_message", "message": "Two sailing boats and a ferry." }),
    );
    let dir = root.join("agents/codex/2026/11/30");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(format!("rollout-2026-11-30T10-00-00-{CODEX_SESSION}.jsonl")), body).unwrap();
    let g = |v: Value| v.to_string() + "\n";
    let mut body = g(
        json!({ "sessionId": GEMINI_SESSION, "projectHash": "0f", "startTime": "2026-11-30T09:00:00.000Z", "kind": "main" }),
    );
    body += &g(json!({ "id": "g1", "timestamp": "2026-11-30T09:00:01.000Z", "type": "user",
        "content": [{ "text": "What is in @lighthouse.png?" }, { "inlineData": { "mimeType": "image/png", "data": b64(&png(220, 140, 3)) } }],
        "displayContent": [{ "text": "What is in @lighthouse.png?" }] }));
    body += &g(
        json!({ "id": "g2", "timestamp": "2026-11-30T09:00:02.000Z", "type": "gemini", "content": "A lighthouse on a rock.", "model": "gemini-3-flash-preview" }),
    );
    body += &g(
        json!({ "id": "g3", "timestamp": "2026-11-30T09:01:00.000Z", "type": "user", "content": [{ "text": "a message the rewind undoes" }] }),
    );
    body += &g(
        json!({ "id": "g4", "timestamp": "2026-11-30T09:01:01.000Z", "type": "gemini", "content": "an answer the rewind undoes" }),
    );
    body += &g(json!({ "$rewindTo": "g3" }));
    body += &g(
        json!({ "id": "g5", "timestamp": "2026-11-30T09:02:00.000Z", "type": "user", "content": [{ "text": "Which colour is its light?" }] }),
    );
    body += &g(
        json!({ "id": "g6", "timestamp": "2026-11-30T09:02:01.000Z", "type": "gemini", "content": "White, flashing." }),
    );
    let dir = root.join("agents/gemini/lighthouse/chats");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("session-2026-11-30T09-00-5e55a0de.jsonl"), body).unwrap();
}

const CODEX_SESSION: &str = "01a0c0de-0000-7000-8000-0000000000c1";
const GEMINI_SESSION: &str = "5e55a0de-0000-4000-8000-0000000000c2";

/// What the browser tests need: Chromium, Node.js and playwright-core (`npm ci` in tests/browser).
fn missing() -> Option<String> {
    let chromium = std::env::var("SCROLLBACK_CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".into());
    if !Path::new(&chromium).exists() {
        return Some(format!("{chromium} is missing: `apt-get install chromium`"));
    }
    if Command::new("node").arg("--version").output().is_err() {
        return Some("node is missing: `apt-get install nodejs`".into());
    }
    let driver = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/browser/node_modules/playwright-core");
    if !driver.exists() {
        return Some("playwright-core is missing: `npm ci --prefix tests/browser`".into());
    }
    None
}

#[test]
fn the_viewer_in_headless_chromium() {
    if let Some(what) = missing() {
        assert!(std::env::var_os("CI").is_none(), "the browser tests cannot run in CI: {what}");
        eprintln!("SKIPPED: the browser tests need {what}");
        return;
    }
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = tempfile::tempdir().unwrap();
    fixtures(dir.path());
    let shots: PathBuf = manifest.join("target/browser");
    std::fs::create_dir_all(&shots).unwrap();
    let out = Command::new("node")
        .args(["--test", "--test-concurrency=1", "tests/browser/viewer.test.mjs"])
        .current_dir(manifest)
        .env("SCROLLBACK_BIN", env!("CARGO_BIN_EXE_scrollback"))
        .env("SCROLLBACK_FIXTURES", dir.path())
        .env("SCROLLBACK_SHOTS", &shots)
        .env("SCROLLBACK_SESSION", SESSION)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    // The scenarios' own report, for whoever reads the test output.
    println!("{stdout}");
    assert!(out.status.success(), "browser scenarios failed:\n{stdout}\n{stderr}");
    let passed: usize = stdout
        .lines()
        .find_map(|l| l.strip_prefix("# pass "))
        .and_then(|n| n.trim().parse().ok())
        .expect("node --test reports how many passed");
    assert!(passed >= 13, "only {passed} browser scenarios passed:\n{stdout}");
}
