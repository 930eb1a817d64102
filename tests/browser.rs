//! The viewer in real headless Chromium (Debian's `chromium`), driven by `tests/browser/viewer.test.mjs`
//! with playwright-core (no browser download: it starts the system binary). This test writes the
//! transcript trees the scenarios open, then runs `node --test` on them; each scenario starts the
//! real `scrollback serve` on 127.0.0.1:0 and saves a screenshot under `target/browser/`.

use std::path::{Path, PathBuf};
use std::process::Command;

use scrollback::demo::png;
use serde_json::{Value, json};

use crate::util::b64;

/// How many scenarios of `viewer.test.mjs` run again over a team's hub (its `readScenario`s).
const HUB_SCENARIOS: usize = 5;

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
    grouped(root);

    // 46: one session of each agent, and what each must show.
    let every = root.join("every");
    let samples = crate::util::fixtures::every_agent(&every);
    let roots: Vec<String> =
        crate::util::fixtures::EVERY_AGENT_ROOTS.iter().map(|(agent, dir)| format!("{agent}:{dir}")).collect();
    let expect: Vec<Value> = samples
        .iter()
        .map(|s| {
            let sizes: Vec<[u32; 2]> = s
                .photos
                .iter()
                .map(|p| {
                    let img = image::load_from_memory(p).unwrap();
                    [img.width(), img.height()]
                })
                .collect();
            json!({ "agent": s.agent, "display": s.display, "session": s.session, "user": s.user, "answer": s.answer,
                "photos": sizes })
        })
        .collect();
    std::fs::write(every.join("every.json"), json!({ "roots": roots, "sessions": expect }).to_string()).unwrap();

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
    harness(root);

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
    reading(root);

    // 49-51: a long session to walk (400 turns, 2,000 entries, tool calls and usage), and what
    // its outline must list.
    let (body, turns) = crate::util::fixtures::long::long_session(SESSION, LONG_TURNS);
    write(root, "long", &body);
    let expect: Vec<Value> = turns
        .iter()
        .map(|t| {
            json!({ "text": t.text, "toolCalls": t.tool_calls, "contextTokens": t.context_tokens,
                "outputTokens": t.output_tokens, "seconds": t.seconds, "answer": t.answer })
        })
        .collect();
    std::fs::write(root.join("long/turns.json"), Value::Array(expect).to_string()).unwrap();
    names(root);
}

/// 60–62: names a person recognises and the harness's leftovers. SESSION (the oldest of 41, at
/// the bottom of the list) holds the caveat before a local command, a command's coloured output, a
/// tool result that is one photo; an untitled session says only an answer; two Gemini chats, one in
/// a folder named by the SHA-256 of its directory, one whose `.project_root` records a long one.
fn names(root: &Path) {
    let at = |n: usize| json!({"uuid": format!("n{n}"), "timestamp": format!("2026-10-01T09:00:{n:02}.000Z")});
    let caveat = "Caveat: The messages below were generated by the user while running local commands. DO NOT respond to these messages or otherwise consider them in your response unless the user explicitly asks you to.";
    let mut body = line(1, "user", json!("Which model is set?"), at(1));
    body +=
        &line(2, "user", json!(caveat), json!({"uuid": "n2", "timestamp": "2026-10-01T09:00:02.000Z", "isMeta": true}));
    body += &line(
        3,
        "user",
        json!(
            "<command-name>/model</command-name>\n<command-message>model</command-message>\n<command-args></command-args>"
        ),
        at(3),
    );
    body += &line(
        4,
        "user",
        json!(
            "<local-command-stdout>Set model to \u{1b}[1mopusplan\u{1b}[22m (\u{1b}[32mdefault\u{1b}[39m)</local-command-stdout>"
        ),
        at(4),
    );
    body += &line(
        5,
        "assistant",
        json!([{"type": "tool_use", "id": "shot1", "name": "Read", "input": {"file_path": "shot.png"}}]),
        at(5),
    );
    body += &line(
        6,
        "user",
        json!([{"type": "tool_result", "tool_use_id": "shot1", "content": [image(&png(180, 120, 60))]}]),
        at(6),
    );
    body += &line(
        7,
        "assistant",
        json!([{"type": "text", "text": "The model is opusplan; the shot shows a lighthouse."}]),
        at(7),
    );
    write(root, "names", &body);
    let dir = root.join("names/p");
    let claude = |session: &str, n: usize, ts: &str, kind: &str, content: Value| {
        json!({"parentUuid": null, "isSidechain": false, "userType": "external", "cwd": "/home/test/harbour",
               "sessionId": session, "type": kind, "uuid": format!("{session}-{n}"), "timestamp": ts,
               "message": {"role": kind, "content": content}})
        .to_string()
            + "\n"
    };
    for i in 0..40 {
        let session = format!("5e55a060-0000-4000-8000-{i:012}");
        let ts = format!("2026-10-{:02}T10:00:00.000Z", 2 + i / 4);
        std::fs::write(
            dir.join(format!("{session}.jsonl")),
            claude(&session, 1, &ts, "user", json!(format!("Filler session {i}"))),
        )
        .unwrap();
    }
    let untitled = "5e55a061-0000-4000-8000-000000000001";
    let answer = "Tidied the harbour charts and left the buoys as they were.";
    std::fs::write(
        dir.join(format!("{untitled}.jsonl")),
        claude(untitled, 1, "2026-10-30T10:00:00.000Z", "assistant", json!([{"type": "text", "text": answer}])),
    )
    .unwrap();
    let g = |v: Value| v.to_string() + "\n";
    let chat = |session: &str, ts: &str, words: &str| {
        g(json!({ "sessionId": session, "projectHash": "0f", "startTime": ts, "kind": "main" }))
            + &g(json!({ "id": "q1", "timestamp": ts, "type": "user", "content": [{ "text": words }] }))
            + &g(json!({ "id": "a1", "timestamp": ts, "type": "gemini", "content": "Done." }))
    };
    let hashed = root.join(format!("names/gemini/{}/chats", "3f2a9c1e".repeat(8)));
    std::fs::create_dir_all(&hashed).unwrap();
    std::fs::write(
        hashed.join("session-2026-10-31T09-00-5e55a062.jsonl"),
        chat("5e55a062-0000-4000-8000-000000000001", "2026-10-31T09:00:00.000Z", "Count the gulls"),
    )
    .unwrap();
    let slug = root.join("names/gemini/lighthouse-keeper/chats");
    std::fs::create_dir_all(&slug).unwrap();
    std::fs::write(
        slug.join("session-2026-10-31T10-00-5e55a063.jsonl"),
        chat("5e55a063-0000-4000-8000-000000000001", "2026-10-31T10:00:00.000Z", "Polish the lens"),
    )
    .unwrap();
    std::fs::write(
        slug.parent().unwrap().join(".project_root"),
        "/home/test/work/the-lighthouse-keepers-logbook-of-every-storm-and-every-ship-that-passed-in-the-night\n",
    )
    .unwrap();
}

/// The turns of the long session of scenarios 49-51: 2,000 entries.
const LONG_TURNS: usize = 400;

/// A Claude Code line of `session` in `cwd`, at `timestamp`.
fn said(session: &str, cwd: &str, n: usize, timestamp: &str, kind: &str, content: Value) -> String {
    json!({
        "parentUuid": null, "isSidechain": false, "userType": "external", "cwd": cwd, "sessionId": session,
        "type": kind, "uuid": format!("{}-{n:05}", &session[session.len() - 2..]), "timestamp": timestamp,
        "message": { "role": kind, "content": content },
    })
    .to_string()
        + "\n"
}

/// 19-22: four sessions of different days that share a word (kestrel): one with it in its title and
/// three entries, the newest with it once, one with it only in a tool's input and output, and a
/// long one (300 entries, of a day before the others) with it in four entries pages apart.
fn grouped(root: &Path) {
    let text = |t: &str| json!([{"type": "text", "text": t}]);
    let dir = root.join("grouped/p");
    std::fs::create_dir_all(&dir).unwrap();
    // A session's lines, a second apart from 08:00 on `day`.
    let put = |session: &str, cwd: &str, day: &str, lines: Vec<(&str, Value)>| {
        let body: String = lines
            .into_iter()
            .enumerate()
            .map(|(i, (kind, content))| {
                let n = i + 1;
                let at = format!("{day}T{:02}:{:02}:{:02}.000Z", 8 + n / 3600, n / 60 % 60, n % 60);
                said(session, cwd, n, &at, kind, content)
            })
            .collect();
        std::fs::write(dir.join(format!("{session}.jsonl")), body).unwrap();
    };
    put(
        GROUPED[0],
        "/home/test/birds",
        "2026-10-01",
        vec![
            ("user", text("Kestrel survey plan for the spring count")),
            ("assistant", text("The count starts at dawn: note each kestrel you see, and where.")),
            ("user", text("Where do they nest?")),
            ("assistant", text("A kestrel nests on ledges and in old crows' nests.")),
        ],
    );
    put(
        GROUPED[1],
        "/home/test/moor",
        "2026-11-20",
        vec![
            ("user", text("Notes on the moorland walk")),
            (
                "assistant",
                text(
                    "You saw a hen harrier over the heather, two ravens by the tor, a stonechat on the gorse and, near \
             the road at the end of the walk, a kestrel hovering.",
                ),
            ),
            ("user", text("Thanks, that is all.")),
        ],
    );
    let grep = json!({"command": "grep -rn kestrel field-notes/"});
    put(
        GROUPED[2],
        "/home/test/notes",
        "2026-11-10",
        vec![
            ("user", text("Tidy the field notes")),
            ("assistant", json!([{"type": "tool_use", "id": "t1", "name": "Bash", "input": grep}])),
            (
                "user",
                json!([{"type": "tool_result", "tool_use_id": "t1", "content": "field-notes/may.md:3: kestrel pair at the quarry"}]),
            ),
            ("assistant", text("Done: the notes are tidy.")),
        ],
    );
    let long = (1..=300)
        .map(|n| {
            let t = match n {
                1 => "Long bird log".to_owned(),
                5 | 100 | 180 | 290 => format!("kestrel sighting at entry {n}"),
                _ => format!("ordinary log line {n}"),
            };
            (if n % 2 == 1 { "user" } else { "assistant" }, text(&t))
        })
        .collect();
    put(GROUPED[3], "/home/test/birds", "2026-09-15", long);
}

/// The sessions of the `grouped` tree: titled, newest, tool, long.
const GROUPED: [&str; 4] = [
    "6e0a1000-0000-4000-8000-0000000000a1",
    "6e0a1000-0000-4000-8000-0000000000a2",
    "6e0a1000-0000-4000-8000-0000000000a3",
    "6e0a1000-0000-4000-8000-0000000000a4",
];

/// 15: reading: Markdown with every construct and hostile Markdown, and tool calls of each agent
/// (Claude Code's, Codex's shell and patch, Gemini CLI's edit), with an edit's diff and an error.
fn reading(root: &Path) {
    let markdown = "## A heading\n\nSome *emphasis*, **strong** and `inline code`.\n\n- one\n- two\n\n1. first\n2. second\n\n> a quotation\n\n```rust\nfn main() {\n    println!(\"hi\");\n}\n```\n\n| name | value |\n|------|-------|\n| a    | 1     |\n\nA [safe link](https://example.com/docs).";
    let hostile = "[click](javascript:window.__pwned='md') and <img src=x onerror=\"window.__pwned='raw'\"> and ![remote](https://evil.example/x.png)\n\n```html\n<script>window.__pwned='fence'</script>\n```";
    let at = |n: usize| json!({"uuid": format!("r{n}"), "timestamp": format!("2026-11-03T10:00:{n:02}.000Z"), "gitBranch": "main"});
    let mut body = String::new();
    body += &line(1, "user", json!(markdown), at(1));
    body += &line(2, "assistant", json!([{"type": "text", "text": hostile}]), at(2));
    body += &line(
        3,
        "assistant",
        json!([
            {"type": "tool_use", "id": "b1", "name": "Bash", "input": {"command": "git status", "description": "Status"}},
            {"type": "tool_use", "id": "e1", "name": "Edit", "input": {"file_path": "src/lib.rs", "old_string": "fn a() {}\nfn b() {}\n", "new_string": "fn a() {}\nfn c() {}\nfn d() {}\n"}},
            {"type": "tool_use", "id": "g1", "name": "Grep", "input": {"pattern": "fn main", "path": "src"}},
            {"type": "tool_use", "id": "w1", "name": "WebFetch", "input": {"url": "https://example.com/page", "prompt": "summarise"}}
        ]),
        at(3),
    );
    body += &line(
        4,
        "user",
        json!([
            {"type": "tool_result", "tool_use_id": "b1", "content": "On branch main\nnothing to commit\nworking tree clean\nline four\nline five"},
            {"type": "tool_result", "tool_use_id": "e1", "content": "permission denied", "is_error": true}
        ]),
        at(4),
    );
    write(root, "reading", &body);
    let codex = |ts: &str, kind: &str, payload: Value| {
        json!({ "timestamp": ts, "type": kind, "payload": payload }).to_string() + "\n"
    };
    let mut body = codex(
        "2026-11-03T11:00:00.000Z",
        "session_meta",
        json!({ "id": READING_CODEX, "cwd": "/home/test/harbour", "cli_version": "0.128.0", "git": {"branch": "fix/patch"} }),
    );
    body += &codex(
        "2026-11-03T11:00:01.000Z",
        "response_item",
        json!({ "type": "message", "role": "user", "content": [{ "type": "input_text", "text": "Fix the **parser**" }] }),
    );
    body += &codex(
        "2026-11-03T11:00:02.000Z",
        "response_item",
        json!({ "type": "function_call", "name": "shell", "arguments": "{\"command\":[\"bash\",\"-lc\",\"cargo test\"]}", "call_id": "c1" }),
    );
    body += &codex(
        "2026-11-03T11:00:03.000Z",
        "response_item",
        json!({ "type": "function_call_output", "call_id": "c1", "output": "test result: ok. 3 passed" }),
    );
    body += &codex(
        "2026-11-03T11:00:04.000Z",
        "response_item",
        json!({ "type": "custom_tool_call", "name": "apply_patch", "call_id": "c2",
        "input": "*** Begin Patch\n*** Update File: src/parser.rs\n@@\n-let x = 1;\n+let x = 2;\n+let y = 3;\n*** End Patch" }),
    );
    let dir = root.join("reading/codex/2026/11/03");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(format!("rollout-2026-11-03T11-00-00-{READING_CODEX}.jsonl")), body).unwrap();
    let g = |v: Value| v.to_string() + "\n";
    let mut body = g(
        json!({ "sessionId": READING_GEMINI, "projectHash": "0f", "startTime": "2026-11-03T12:00:00.000Z", "kind": "main" }),
    );
    body += &g(
        json!({ "id": "q1", "timestamp": "2026-11-03T12:00:01.000Z", "type": "user", "content": [{ "text": "Rename the function" }] }),
    );
    body += &g(
        json!({ "id": "q2", "timestamp": "2026-11-03T12:00:02.000Z", "type": "gemini", "content": "Done, with **one** edit.", "model": "gemini-3-flash-preview",
        "toolCalls": [{ "id": "tc1", "name": "replace", "displayName": "Edit", "status": "success",
                        "args": { "file_path": "/home/test/app.py", "old_string": "def old():\n    pass\n", "new_string": "def new():\n    pass\n" },
                        "result": [{ "functionResponse": { "id": "tc1", "name": "replace", "response": { "output": "Edited app.py" } } }] }] }),
    );
    let dir = root.join("reading/gemini/app/chats");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("session-2026-11-03T12-00-5e55a0de.jsonl"), body).unwrap();
}

/// 40–45: the harness's own tags (a slash command, its output, an IDE selection, a system reminder,
/// a photo referred to as `[Image #1]`, 8 × 8 pixels), tool calls each with its result (one in the
/// same page, one whose call is on the page before its result's: 60 lines of talk come between the
/// first exchange and the end).
fn harness(root: &Path) {
    let at = |n: usize| json!({"uuid": format!("h{n}"), "timestamp": format!("2026-11-04T09:{:02}:{:02}.000Z", n / 60, n % 60), "gitBranch": "feature/harness"});
    let mut body = String::new();
    body += &line(
        1,
        "user",
        json!(
            "<command-message>review is running…</command-message>\n<command-name>/review</command-name>\n<command-args>src/lib.rs</command-args>"
        ),
        at(1),
    );
    body +=
        &line(2, "user", json!("<local-command-stdout>Reviewed 3 files: no findings.</local-command-stdout>"), at(2));
    body += &line(
        3,
        "user",
        json!([
            {"type": "text", "text": "<ide_selection>The user selected lines 3 to 4 of src/lib.rs:\nfn b() {}\n\nThis may or may not be related.</ide_selection>"},
            {"type": "text", "text": "Why does this function fail?\n\n<system-reminder>Keep answers short.</system-reminder>"}
        ]),
        at(3),
    );
    body += &line(
        4,
        "user",
        json!([image(&png(8, 8, 3)), {"type": "text", "text": "What colours are in [Image #1]?"}]),
        at(4),
    );
    body += &line(
        5,
        "assistant",
        json!([
            {"type": "text", "text": "I will fix it."},
            {"type": "tool_use", "id": "edit1", "name": "Edit", "input": {"file_path": "src/lib.rs", "old_string": "fn b() {}\n", "new_string": "fn b() -> u8 {\n    1\n}\n"}},
            {"type": "tool_use", "id": "bash1", "name": "Bash", "input": {"command": "cargo test", "description": "Test"}}
        ]),
        at(5),
    );
    body += &line(
        6,
        "user",
        json!([
            {"type": "tool_result", "tool_use_id": "edit1", "content": "The file src/lib.rs has been updated."},
            {"type": "tool_result", "tool_use_id": "bash1", "content": "test result: ok. 12 passed"}
        ]),
        at(6),
    );
    for n in 7..67 {
        let kind = if n % 2 == 1 { "user" } else { "assistant" };
        body += &line(n, kind, json!([{"type": "text", "text": format!("talk line {n}")}]), at(n));
    }
    // The newest page is the last 50 entries: this call is the 51st from the end, its result the 50th.
    body += &line(
        67,
        "assistant",
        json!([{"type": "tool_use", "id": "grep1", "name": "Grep", "input": {"pattern": "fn b", "path": "src"}}]),
        at(67),
    );
    body +=
        &line(68, "user", json!([{"type": "tool_result", "tool_use_id": "grep1", "content": "src/lib.rs:3"}]), at(68));
    for n in 69..118 {
        let kind = if n % 2 == 1 { "user" } else { "assistant" };
        body += &line(n, kind, json!([{"type": "text", "text": format!("later line {n}")}]), at(n));
    }
    write(root, "harness", &body);
}

const READING_CODEX: &str = "01a0c0de-0000-7000-8000-0000000000d1";
const READING_GEMINI: &str = "5e55a0de-0000-4000-8000-0000000000d2";

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
    // SCROLLBACK_BROWSER_ONLY=PATTERN runs the scenarios whose names match it (a developer's run).
    let only = std::env::var("SCROLLBACK_BROWSER_ONLY").ok();
    let mut args = vec!["--test".to_owned(), "--test-concurrency=1".to_owned()];
    args.extend(only.iter().map(|p| format!("--test-name-pattern={p}")));
    args.push("tests/browser/viewer.test.mjs".to_owned());
    // A team's hub for scenario 47 and the scenarios run again over one (skipped without
    // PostgreSQL, outside CI).
    let hub = crate::util::postgres::Cluster::start();
    let mut node = Command::new("node");
    if let Some(cluster) = &hub {
        node.env("SCROLLBACK_HUB", cluster.url("team"));
        // A database each for the scenarios that run again over a hub (readScenario).
        for i in 1..=HUB_SCENARIOS {
            cluster.create_database(&format!("view{i}"));
        }
        node.env("SCROLLBACK_HUB_DATABASES", cluster.url(""));
    }
    let out = node
        .args(&args)
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
    eprintln!("{stderr}");
    // What failed, last and alone, so that a report cut in its middle still names it.
    let mut failed = String::new();
    let mut in_failure = false;
    for l in stdout.lines() {
        in_failure = l.starts_with("not ok") || (in_failure && !l.starts_with("# Subtest") && !l.starts_with("ok "));
        if in_failure && !l.trim_start().starts_with("duration_ms") {
            failed += l;
            failed.push('\n');
        }
    }
    assert!(out.status.success(), "browser scenarios failed (the whole report is above):\n{failed}");
    let passed: usize = stdout
        .lines()
        .find_map(|l| l.strip_prefix("# pass "))
        .and_then(|n| n.trim().parse().ok())
        .expect("node --test reports how many passed");
    let wanted = match (&only, &hub) {
        (Some(_), _) => 1,
        (None, Some(_)) => 35 + HUB_SCENARIOS,
        (None, None) => 34,
    };
    assert!(passed >= wanted, "only {passed} browser scenarios passed:\n{stdout}");
}
