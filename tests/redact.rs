//! Redaction end to end, against the planted set (`crates/render/src/planted_secrets.rs`: every rule,
//! every position): `export --redact` takes every secret out of every text that leaves (the title,
//! the header, what was said, tool inputs and results, an edit's diff as a whole, file names) in
//! HTML, Markdown and JSONL, and leaves ordinary text as it was; `--mask-secrets` masks them in the
//! API's history, sessions and search snippets and in MCP's answers, and without it they show.

use serde_json::{Value, json};

use crate::mcp::{call, run_plan, sdk_available, stdio_plan};
use crate::util::Env;
use crate::util::server::Server;

#[path = "../crates/render/src/planted_secrets.rs"]
#[allow(dead_code)]
mod planted_secrets;

use planted_secrets::{Planted, ordinary, planted};

const SESSION: &str = "5ec7e700-0000-4000-8000-000000000001";
const CWD: &str = "/work/demo";

fn line(n: usize, kind: &str, content: Value) -> String {
    json!({
        "parentUuid": (n > 1).then(|| format!("{SESSION}-{:04}", n - 1)),
        "isSidechain": false, "cwd": CWD, "sessionId": SESSION, "type": kind,
        "uuid": format!("{SESSION}-{n:04}"),
        "timestamp": format!("2026-01-01T{:02}:{:02}:00.000Z", n / 60, n % 60),
        "message": { "role": kind, "content": content },
    })
    .to_string()
}

/// The session: its title holds a token, a file's name holds one, and each planted secret is in
/// turn what a person said, what the assistant said, a command and its output, a file written
/// whole, an edit's new text. Returns the entry (line number) each planted secret is in, and the
/// title's secret.
fn write_session(env: &Env, planted: &[Planted]) -> (Vec<usize>, String) {
    let title_secret = planted.iter().find(|p| p.rule == "github-pat").unwrap().secret[0].clone();
    let path_secret = planted.iter().find(|p| p.rule == "gitlab-pat").unwrap().secret[0].clone();
    let mut lines = vec![
        json!({"type": "custom-title", "customTitle": format!("Deploy with {title_secret} today"), "sessionId": SESSION})
            .to_string(),
    ];
    let mut n = 1;
    let mut push = |lines: &mut Vec<String>, kind: &str, content: Value| {
        lines.push(line(n, kind, content));
        n += 1;
        n - 1
    };
    push(&mut lines, "user", json!("Set up the deployment, please."));
    push(
        &mut lines,
        "assistant",
        json!([{"type": "tool_use", "id": "path", "name": "Write",
                "input": {"file_path": format!("/tmp/{path_secret}/notes.txt"), "content": "notes"}}]),
    );
    let mut at = Vec::new();
    for (i, p) in planted.iter().enumerate() {
        let entry = match i % 5 {
            0 => push(&mut lines, "user", json!(p.text)),
            1 => push(&mut lines, "assistant", json!([{"type": "text", "text": p.text}])),
            2 => {
                let id = format!("t{i}");
                let call = push(
                    &mut lines,
                    "assistant",
                    json!([{"type": "tool_use", "id": id, "name": "Bash", "input": {"command": format!("echo {}", p.text)}}]),
                );
                push(&mut lines, "user", json!([{"type": "tool_result", "tool_use_id": id, "content": p.text}]));
                call
            }
            3 => push(
                &mut lines,
                "assistant",
                json!([{"type": "tool_use", "id": format!("t{i}"), "name": "Write",
                        "input": {"file_path": format!("{CWD}/config/{i}.env"), "content": p.text}}]),
            ),
            _ => push(
                &mut lines,
                "assistant",
                json!([{"type": "tool_use", "id": format!("t{i}"), "name": "Edit",
                        "input": {"file_path": format!("{CWD}/src/{i}.rs"), "old_string": "placeholder\nkept", "new_string": format!("{}\nkept", p.text)}}]),
            ),
        };
        at.push(entry);
    }
    for text in ordinary() {
        push(&mut lines, "user", json!(text));
    }
    env.write(&format!("demo/{SESSION}.jsonl"), lines.join("\n") + "\n");
    (at, title_secret)
}

/// The forms a secret's piece could take in `text`: as it is, HTML-escaped, JSON-escaped.
fn leaks<'p>(text: &str, planted: impl IntoIterator<Item = &'p Planted>) -> Vec<String> {
    let mut out = Vec::new();
    for p in planted {
        for piece in &p.secret {
            let html = piece.replace('&', "&amp;").replace('\'', "&#39;").replace('"', "&quot;");
            if text.contains(piece.as_str()) || text.contains(&html) {
                out.push(format!("{} {}: {piece}", p.rule, p.position));
            }
        }
    }
    out
}

#[test]
fn export_redacts_every_planted_secret_from_every_text_that_leaves() {
    let env = Env::new();
    let planted = planted();
    assert!(planted.len() >= 100, "{}", planted.len());
    let (_, title_secret) = write_session(&env, &planted);
    env.index();
    for format in ["html", "md", "jsonl"] {
        let out = env.dir.path().join(format!("r.{format}"));
        let run = env.run(&["export", SESSION, "--format", format, "--redact", "-o", out.to_str().unwrap()]);
        assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
        let text = std::fs::read_to_string(&out).unwrap();
        let leaked = leaks(&text, &planted);
        assert!(leaked.is_empty(), "{format}: {} of {} leaked:\n{}", leaked.len(), planted.len(), leaked.join("\n"));
        assert!(!text.contains(&title_secret), "{format}: the title's secret");
        assert!(text.contains("[REDACTED:"), "{format}");
        // HTML renders Markdown: ordinary text is checked as it stands in the other two.
        for kept in ordinary().into_iter().filter(|_| format != "html") {
            let shown = match format {
                "jsonl" => serde_json::to_string(kept).unwrap().trim_matches('"').to_owned(),
                _ => kept.to_owned(),
            };
            assert!(text.contains(&shown), "{format}: {kept:?} was changed");
        }
        match format {
            "html" => {
                assert!(text.contains("<title>Deploy with [REDACTED:github-pat] today</title>"), "the HTML title");
                assert!(text.contains("<h1>Deploy with [REDACTED:github-pat] today</h1>"), "the HTML heading");
            }
            "md" => assert!(text.starts_with("# Deploy with [REDACTED:github-pat] today\n"), "the Markdown heading"),
            _ => {}
        }
    }
}

/// Every history page of the session, as the viewer asks for them (with their views), newest first.
fn history_text(server: &Server) -> String {
    let mut out = String::new();
    let mut page = server.json(&format!("/api/sessions/{SESSION}/history?view=true&limit=100"));
    loop {
        out.push_str(&page.to_string());
        let Some(before) = page["before"].as_i64() else { break };
        page = server.json(&format!("/api/sessions/{SESSION}/history?view=true&limit=100&before={before}"));
    }
    out
}

/// The sessions list and a session's about, and searches that find the planted secrets' entries.
fn listed_text(server: &Server) -> String {
    let mut out = server.json("/api/sessions?limit=50").to_string();
    out.push_str(&server.json(&format!("/api/sessions/{SESSION}/about")).to_string());
    out
}

const SEARCHES: [&str; 5] = ["printed", "Keys", "connect", "first line", "value"];

fn search_text(server: &Server) -> String {
    let mut out = String::new();
    for q in SEARCHES {
        for group in ["session", "none"] {
            let q = crate::mcp::urlencode(q);
            out.push_str(&server.json(&format!("/api/search?q={q}&group={group}&limit=100")).to_string());
        }
    }
    out
}

#[test]
fn mask_secrets_masks_history_titles_and_mcp_reading() {
    let env = Env::new();
    let planted = planted();
    let (at, title_secret) = write_session(&env, &planted);
    env.index();
    // Without the setting, the secrets show (the viewer is the person's own).
    {
        let server = Server::start(&env, &[]);
        server.wait_for_sessions(1);
        let shown = history_text(&server);
        assert!(leaks(&shown, &planted).len() > planted.len() / 2, "without --mask-secrets, history shows them");
        assert!(listed_text(&server).contains(&title_secret));
        assert!(server.get("/api/stats").text().unwrap().contains(&title_secret), "the overview lists it");
    }
    let server = Server::start(&env, &["--mask-secrets"]);
    server.wait_for_sessions(1);
    let history = history_text(&server);
    let leaked = leaks(&history, &planted);
    assert!(leaked.is_empty(), "history: {} leaked:\n{}", leaked.len(), leaked.join("\n"));
    assert!(history.contains("[REDACTED:private-key]") && history.contains("[REDACTED:url-password]"));
    for kept in ordinary() {
        assert!(history.contains(&serde_json::to_string(kept).unwrap()), "history: {kept:?} was changed");
    }
    let listed = listed_text(&server);
    assert!(!listed.contains(&title_secret) && listed.contains("[REDACTED:github-pat]"), "a title: {listed}");
    let overview = server.get("/api/stats").text().unwrap();
    assert!(
        !overview.contains(&title_secret) && overview.contains("[REDACTED:github-pat]"),
        "the overview: {overview}"
    );
    drop(server);
    // MCP over stdio.
    if !sdk_available() {
        return;
    }
    let calls = vec![
        call("list_sessions", json!({"include_active": true})),
        call("read_session", json!({"session": SESSION, "limit": 100, "max_chars_per_entry": 20000})),
    ];
    let report = run_plan(&env, &stdio_plan(&env, &["--mask-secrets"], &calls, &[]));
    let answers = report["calls"].as_array().unwrap();
    // read_session's first page holds the entries up to its 100th.
    let read = answers[1]["text"].as_str().unwrap();
    assert!(read.contains("[REDACTED:"), "{read}");
    let first_page: Vec<&Planted> = planted.iter().zip(&at).filter(|(_, n)| **n <= 95).map(|(p, _)| p).collect();
    assert!(first_page.len() > 40);
    let leaked = leaks(read, first_page.iter().copied());
    assert!(leaked.is_empty(), "read_session: {} leaked:\n{}", leaked.len(), leaked.join("\n"));
    for (i, a) in answers.iter().enumerate() {
        assert_eq!(a["isError"], false, "{a}");
        let text = format!("{} {}", a["text"], a["structured"]);
        assert!(!text.contains(&title_secret), "MCP answer {i}: the title");
    }
}

/// Search snippets are masked from their entry's whole text: a snippet is a window of its entry,
/// and a secret the window cuts from the context its rule needs (a private key's body without its
/// BEGIN and END lines, a value without its `api_key =`, a key cut by the window's end) would not be
/// found in the window alone.
#[test]
fn mask_secrets_masks_search_snippets() {
    let env = Env::new();
    let planted = planted();
    write_session(&env, &planted);
    env.index();
    let server = Server::start(&env, &["--mask-secrets"]);
    server.wait_for_sessions(1);
    let searched = search_text(&server);
    let leaked = leaks(&searched, &planted);
    assert!(leaked.is_empty(), "search: {} leaked:\n{}", leaked.len(), leaked.join("\n"));
    assert!(searched.contains("[REDACTED:"), "the snippets had secrets to mask");
    drop(server);
    if !sdk_available() {
        return;
    }
    let calls: Vec<Value> = SEARCHES
        .iter()
        .map(|q| call("search_history", json!({"query": q, "include_active": true, "limit": 50})))
        .collect();
    let report = run_plan(&env, &stdio_plan(&env, &["--mask-secrets"], &calls, &[]));
    for (i, a) in report["calls"].as_array().unwrap().iter().enumerate() {
        let leaked = leaks(&format!("{} {}", a["text"], a["structured"]), &planted);
        assert!(leaked.is_empty(), "MCP search {i}: {} leaked:\n{}", leaked.len(), leaked.join("\n"));
    }
}

/// Every `GET` route of the OpenAPI document, under `--mask-secrets`, over the session with every
/// planted secret: its path's parameters filled from the session (each entry's cursor for an
/// entry's texts), and no planted secret in any answer. The routes of bytes (media) and the events
/// socket carry no transcript text as such, and are left out.
#[test]
fn mask_secrets_masks_every_get_route_of_the_openapi_document() {
    let env = Env::new();
    let planted = planted();
    write_session(&env, &planted);
    env.index();
    let server = Server::start(&env, &["--mask-secrets"]);
    server.wait_for_sessions(1);
    let cursors: Vec<i64> = {
        let mut cursors = Vec::new();
        let mut page = server.json(&format!("/api/sessions/{SESSION}/history?limit=100"));
        loop {
            cursors.extend(page["entries"].as_array().unwrap().iter().filter_map(|e| e["cursor"].as_i64()));
            let Some(before) = page["before"].as_i64() else { break };
            page = server.json(&format!("/api/sessions/{SESSION}/history?limit=100&before={before}"));
        }
        cursors
    };
    assert!(cursors.len() > planted.len(), "{}", cursors.len());
    let document = server.json("/api/openapi.json");
    let mut walked = 0;
    for (path, item) in document["paths"].as_object().unwrap() {
        if item.get("get").is_none() || ["/api/events", "/api/media/{blake3}"].contains(&path.as_str()) {
            continue;
        }
        if path.starts_with("/api/session-media/") {
            continue;
        }
        let with_session = path.replace("{sessionId}", SESSION).replace("{chatId}", "none");
        let urls: Vec<String> = match with_session.contains("{cursor}") {
            true => cursors.iter().map(|c| with_session.replace("{cursor}", &c.to_string())).collect(),
            false => match path.as_str() {
                "/api/search" => SEARCHES
                    .iter()
                    .map(|q| format!("{path}?q={}&group=none&limit=100", crate::mcp::urlencode(q)))
                    .collect(),
                "/api/sessions/{sessionId}/history" => vec![format!("{with_session}?view=true&limit=500")],
                _ => vec![with_session.clone()],
            },
        };
        assert!(!urls.iter().any(|u| u.contains('{')), "a parameter left unfilled: {path}");
        for url in urls {
            let text = server.get(&url).text().unwrap();
            let leaked = leaks(&text, &planted);
            assert!(leaked.is_empty(), "GET {url}: {} leaked:\n{}", leaked.len(), leaked.join("\n"));
            walked += 1;
        }
    }
    assert!(walked > cursors.len() + 10, "{walked}");
}

/// MCP's `read_session` masks an entry's texts whole before it cuts them: a private key in a
/// tool's output, of more lines than a result shows, is masked, not cut from its END line first.
#[test]
fn mcp_read_session_masks_whole_texts_before_it_cuts_them() {
    if !sdk_available() {
        return;
    }
    let env = Env::new();
    let key = planted().into_iter().find(|p| p.rule == "private-key").unwrap();
    let lines = [
        line(1, "user", json!("Show me the key file.")),
        line(
            2,
            "assistant",
            json!([{"type": "tool_use", "id": "k", "name": "Bash", "input": {"command": "cat id_rsa"}}]),
        ),
        line(3, "user", json!([{"type": "tool_result", "tool_use_id": "k", "content": key.text}])),
    ];
    env.write(&format!("demo/{SESSION}.jsonl"), lines.join("\n") + "\n");
    env.index();
    let calls = vec![call("read_session", json!({"session": SESSION, "max_chars_per_entry": 20000}))];
    let report = run_plan(&env, &stdio_plan(&env, &["--mask-secrets"], &calls, &[]));
    let answer = &report["calls"][0];
    let text = format!("{} {}", answer["text"], answer["structured"]);
    let leaked = leaks(&text, [&key]);
    assert!(leaked.is_empty(), "read_session: {} of {} lines leaked:\n{text}", leaked.len(), key.secret.len());
    assert!(text.contains("[REDACTED:private-key]"), "{text}");
}
