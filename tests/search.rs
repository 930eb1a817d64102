//! The query language through every front end: a table of everyday and hostile queries goes through
//! `GET /api/search`, `scrollback search --json` and MCP's `search_history` (the official Python
//! SDK, over stdio). None is an error but the impossible ones, which are a 400 (exit 2, a tool error)
//! with a plain sentence; no answer ever carries SQLite's or FTS5's words. And the judged query set
//! keeps its quality (`benches/search_quality.py`, `tests/search/judged.json`).

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};

use crate::mcp::{call, run_plan, sdk_available, stdio_plan, urlencode};
use crate::util::{Env, Server};

/// What a query must get.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Expect {
    /// An answer with at least one session.
    Finds,
    /// An answer (perhaps of nothing).
    Answers,
    /// A 400 with a sentence: the query is impossible as written.
    Refused,
}
use Expect::*;

/// The table: every query written as a person or an agent would, and some as an attacker would.
const QUERIES: &[(&str, Expect)] = &[
    // Words with punctuation, found as written.
    ("gpt-5", Finds),
    ("GPT-5", Finds),
    ("claude-code", Finds),
    ("C++", Finds),
    ("don't", Finds),
    ("foo.bar", Finds),
    ("e-mail", Finds),
    ("src/main.rs", Finds),
    ("https://example.com/a?b=c", Finds),
    ("snake_case_name", Finds),
    ("CamelCaseName", Finds),
    ("E0502", Finds),
    ("ERR_CONNECTION_REFUSED", Finds),
    ("mix format --migrate", Finds),
    ("what?", Finds),
    ("node_modules/.bin", Finds),
    ("v1.2.3", Finds),
    ("@types/node", Finds),
    ("#1234", Finds),
    ("$HOME", Finds),
    ("数据库", Finds),
    ("データベース", Finds),
    // The syntax.
    ("deep link", Finds),
    ("\"deep link\"", Finds),
    ("dee*", Finds),
    ("deep -zzzz", Finds),
    ("deep NOT zzzz", Finds),
    ("deep OR nothingness", Finds),
    ("deep AND link", Finds),
    ("agent:claude deep", Finds),
    ("agent:claude-code deep", Finds),
    ("role:user deep", Finds),
    ("role:tool cargo", Finds),
    ("tool:Bash", Finds),
    ("tool:bash cargo", Finds),
    ("project:alpha deep", Finds),
    ("session:5e55a000 deep", Finds),
    ("after:2026-01-01 deep", Finds),
    ("before:2030-01-01 deep", Finds),
    ("after:2026-01-01T00:00:00Z deep", Finds),
    // Operators out of place, unbalanced quotes and brackets: read as words.
    ("(deep)", Finds),
    ("[deep]", Finds),
    ("deep)", Finds),
    ("\"deep", Finds),
    ("deep\"", Finds),
    ("NEAR(deep link)", Answers),
    ("^deep", Finds),
    ("deep^", Finds),
    ("{deep}", Finds),
    ("deep*link", Answers),
    ("OR", Answers),
    ("AND", Answers),
    ("NOT", Answers),
    ("OR OR OR", Answers),
    ("a*", Answers),
    ("\"unterminated", Answers),
    ("'single quotes'", Answers),
    ("`backticks`", Answers),
    ("Error: something", Answers),
    ("localhost:8080", Answers),
    ("std::io::Error", Answers),
    ("C:\\Users\\x", Answers),
    ("col:1", Answers),
    ("🚀 deploy", Answers),
    // Injection attempts are words.
    (";DROP TABLE entries;--", Answers),
    ("') OR 1=1 --", Answers),
    ("entries_fts MATCH x", Answers),
    ("%", Refused),
    ("_x_", Answers),
    ("\\", Refused),
    ("x\u{7}y", Answers),
    // Too long or too many: cut to the bounds, and said so.
    ("a* b* c* d* e* f* g* h*", Answers),
    // Impossible as written.
    ("", Refused),
    ("   ", Refused),
    ("??", Refused),
    ("!!! ---", Refused),
    ("🚀", Refused),
    ("foo:bar", Refused),
    ("deep:link", Refused),
    ("agent:nosuch deep", Refused),
    ("role:robot deep", Refused),
    ("after:someday deep", Refused),
    ("-deep", Refused),
    ("agent:claude", Refused),
    ("-agent:claude deep", Refused),
];

/// The tree the queries run over: one session holds every punctuated word, another the same words
/// without them.
fn tree(env: &Env) {
    let line = |session: &str, uuid: &str, cwd: &str, role: &str, content: Value| {
        json!({
            "parentUuid": null, "isSidechain": false, "userType": "external", "cwd": cwd,
            "sessionId": session, "type": role, "uuid": uuid, "timestamp": "2026-02-01T10:00:00.000Z",
            "message": { "role": role, "content": content },
        })
        .to_string()
            + "\n"
    };
    let said = "Switch to gpt-5 in claude-code, port the checksum to C++ and don't forget foo.bar: e-mail me \
                when src/main.rs builds. See https://example.com/a?b=c for snake_case_name and CamelCaseName; \
                rustc says E0502 and the browser ERR_CONNECTION_REFUSED. Run mix format --migrate, then what? \
                Also node_modules/.bin, v1.2.3, @types/node, issue #1234 and $HOME. The deep link opens the \
                wrong screen. 数据库 データベース";
    let mut body = line("5e55a000-0000-4000-8000-000000000001", "u1", "/home/u/alpha", "user", json!(said));
    body += &line(
        "5e55a000-0000-4000-8000-000000000001",
        "u2",
        "/home/u/alpha",
        "assistant",
        json!([{ "type": "tool_use", "id": "t1", "name": "Bash", "input": { "command": "cargo test --release" } }]),
    );
    env.write("p/5e55a000-0000-4000-8000-000000000001.jsonl", body);
    let plain = line(
        "5e55a000-0000-4000-8000-000000000002",
        "v1",
        "/home/u/beta",
        "user",
        json!("gpt five, claude code, a checksum in C, foo and bar, mail, main, example"),
    );
    env.write("p/5e55a000-0000-4000-8000-000000000002.jsonl", plain);
}

/// A word whose punctuation names something (`C++`, `C#`, `.NET`) finds the entries that hold it
/// as written, not every one with its bare letter or word (`a checksum in C`, `the net`).
#[test]
fn a_punctuated_name_finds_what_was_written_not_its_bare_letter() {
    let env = Env::new();
    tree(&env);
    let line = |uuid: &str, text: &str| {
        json!({
            "parentUuid": null, "isSidechain": false, "userType": "external", "cwd": "/home/u/gamma",
            "sessionId": "5e55a000-0000-4000-8000-000000000003", "type": "user", "uuid": uuid,
            "timestamp": "2026-02-01T11:00:00.000Z", "message": { "role": "user", "content": text },
        })
        .to_string()
            + "\n"
    };
    env.write(
        "p/5e55a000-0000-4000-8000-000000000003.jsonl",
        line("w1", "Port it from C# to F# on .NET 8") + &line("w2", "the net result, plan c and f sharp notes"),
    );
    env.index();
    let server = Server::start(&env, &[]);
    server.wait_for_sessions(3);
    let found = |q: &str| -> Vec<String> {
        let answer = server.json(&format!("/api/search?group=none&q={}", urlencode(q)));
        answer["hits"].as_array().unwrap().iter().map(|h| h["entryUuid"].as_str().unwrap().to_owned()).collect()
    };
    assert_eq!(found("C++"), ["u1"], "not the session with a lone \"C\"");
    assert_eq!(found("c++"), ["u1"]);
    assert_eq!(found("C#"), ["w1"]);
    assert_eq!(found("F#"), ["w1"]);
    assert_eq!(found(".NET"), ["w1"]);
    assert_eq!(found("C++ checksum"), ["u1"]);
    // A word with its punctuation inside still finds its pieces as a phrase.
    assert_eq!(found("claude-code"), ["u1", "v1"], "as written first, then \"claude code\"");
}

/// What no answer may carry: the store's own words.
fn leaks_the_store(text: &str) -> bool {
    ["fts5", "syntax error", "no such column", "sqlite", "unterminated string", "malformed MATCH"]
        .iter()
        .any(|w| text.to_lowercase().contains(&w.to_lowercase()))
}

#[test]
fn everyday_and_hostile_queries_answer_through_http_the_cli_and_mcp() {
    assert!(QUERIES.len() >= 80, "the table holds {} queries", QUERIES.len());
    let env = Env::new();
    tree(&env);
    env.index();
    let server = Server::start(&env, &[]);
    server.wait_for_sessions(2);
    let mut http_sessions = Vec::new();
    for (q, expect) in QUERIES {
        let res = server.get(&format!("/api/search?q={}", urlencode(q)));
        let status = res.status().as_u16();
        let body = res.text().unwrap();
        assert!(!leaks_the_store(&body), "HTTP {q:?}: {body}");
        let answer: Value = serde_json::from_str(&body).unwrap_or_else(|_| panic!("HTTP {q:?}: not JSON: {body}"));
        match expect {
            Refused => {
                assert_eq!(status, 400, "HTTP {q:?}: {body}");
                let message = answer["error"]["message"].as_str().unwrap();
                assert!(message.len() > 20, "HTTP {q:?} says why: {message}");
                http_sessions.push(None);
            }
            Finds | Answers => {
                assert_eq!(status, 200, "HTTP {q:?}: {body}");
                let sessions = answer["sessions"].as_array().unwrap();
                if *expect == Finds {
                    assert_eq!(
                        sessions.first().map(|s| s["sessionId"].as_str().unwrap()),
                        Some("5e55a000-0000-4000-8000-000000000001"),
                        "HTTP {q:?} finds the session that holds it, first: {body}"
                    );
                }
                assert!(answer["query"]["readAs"].is_string(), "HTTP {q:?}: {body}");
                http_sessions.push(Some(sessions.iter().map(|s| s["sessionId"].clone()).collect::<Vec<_>>()));
            }
        }
    }
    // The CLI: the same answers, as JSON; an impossible query exits 2 with the same sentence.
    for ((q, expect), from_http) in QUERIES.iter().zip(&http_sessions) {
        let out = env.run(&["search", "--json", "--", q]);
        let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        assert!(!leaks_the_store(&stdout) && !leaks_the_store(&stderr), "CLI {q:?}: {stdout} {stderr}");
        match expect {
            Refused => {
                assert_eq!(out.status.code(), Some(2), "CLI {q:?}: {stderr}");
                assert!(stderr.trim().len() > 20, "CLI {q:?} says why: {stderr}");
            }
            _ => {
                assert!(out.status.success(), "CLI {q:?}: {stderr}");
                let answer: Value = serde_json::from_str(&stdout).unwrap();
                let ids: Vec<Value> =
                    answer["sessions"].as_array().unwrap().iter().map(|s| s["sessionId"].clone()).collect();
                assert_eq!(Some(&ids), from_http.as_ref(), "CLI {q:?} answers as HTTP does");
            }
        }
    }
    // MCP, through the official SDK: tool errors for the impossible ones only.
    if sdk_available() {
        let calls: Vec<Value> =
            QUERIES.iter().map(|(q, _)| call("search_history", json!({"query": q, "include_active": true}))).collect();
        let report = run_plan(&env, &stdio_plan(&env, &[], &calls, &[]));
        for ((q, expect), (answer, from_http)) in
            QUERIES.iter().zip(report["calls"].as_array().unwrap().iter().zip(&http_sessions))
        {
            let text = answer["text"].as_str().unwrap_or_default();
            assert!(!leaks_the_store(text), "MCP {q:?}: {text}");
            assert_eq!(answer["isError"], *expect == Refused, "MCP {q:?}: {answer}");
            if let Some(ids) = from_http {
                let found: Vec<Value> = answer["structured"]["sessions"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|s| s["sessionId"].clone())
                    .collect();
                assert_eq!(&found, ids, "MCP {q:?} answers as HTTP does");
            }
        }
    }
}

#[test]
fn filters_narrow_and_tool_calls_read_as_their_input() {
    let env = Env::new();
    tree(&env);
    env.index();
    let server = Server::start(&env, &[]);
    server.wait_for_sessions(2);
    let answer = server.json("/api/search?q=tool%3ABash");
    let best = &answer["sessions"][0]["best"];
    assert_eq!((best["tool"].as_str(), best["in"].as_str()), (Some("Bash"), Some("tool")), "{answer}");
    assert!(!best["snippet"].as_str().unwrap().contains('{'), "a call reads as its input, not JSON: {answer}");
    // Each filter alone takes the matching session out or leaves it.
    for (q, found) in [
        ("checksum project:beta", "5e55a000-0000-4000-8000-000000000002"),
        ("checksum project:alpha", "5e55a000-0000-4000-8000-000000000001"),
        ("checksum session:5e55a000-0000-4000-8000-000000000002", "5e55a000-0000-4000-8000-000000000002"),
    ] {
        let answer = server.json(&format!("/api/search?q={}", urlencode(q)));
        let ids: Vec<&str> =
            answer["sessions"].as_array().unwrap().iter().map(|s| s["sessionId"].as_str().unwrap()).collect();
        assert_eq!(ids, [found], "{q}: {answer}");
    }
    for q in ["checksum before:2026-01-01", "checksum agent:codex", "cargo role:user", "checksum -checksum"] {
        let answer = server.json(&format!("/api/search?q={}", urlencode(q)));
        assert_eq!(answer["sessions"].as_array().unwrap().len(), 0, "{q}: {answer}");
    }
    // One session's hits in conversation order, one per entry.
    let hits = server
        .json("/api/search?q=checksum%20OR%20cargo&session=5e55a000-0000-4000-8000-000000000001&sort=conversation");
    let lines: Vec<i64> = hits["hits"].as_array().unwrap().iter().map(|h| h["line"].as_i64().unwrap()).collect();
    assert_eq!(lines, [1, 2], "{hits}");
}

/// A search is one request whichever front end asks it (`read::request`): the same filters narrow
/// alike through the API's parameters, MCP's arguments and the CLI's options, and what cannot be
/// taken is refused by each with the same message.
#[test]
fn a_search_is_one_request_through_http_mcp_and_the_cli() {
    let env = Env::new();
    tree(&env);
    env.index();
    let server = Server::start(&env, &[]);
    server.wait_for_sessions(2);
    let (alpha, beta) = ("5e55a000-0000-4000-8000-000000000001", "5e55a000-0000-4000-8000-000000000002");
    // (parameters, the sessions found, in order)
    type Params<'a> = &'a [(&'a str, &'a str)];
    let asked: &[(Params, &[&str])] = &[
        (&[("q", "checksum")], &[beta, alpha]),
        (&[("q", "checksum"), ("project", "/home/u/beta")], &[beta]),
        (&[("q", "checksum"), ("role", "user"), ("since", "2026-02-01"), ("sort", "relevance")], &[beta, alpha]),
        (&[("q", "checksum"), ("until", "2026-01-31")], &[]),
        (&[("q", "cargo")], &[alpha]),
        (&[("q", "checksum"), ("role", "assistant")], &[]),
        (&[("q", "cargo"), ("role", "user")], &[]),
        (&[("q", "checksum"), ("agent", "codex")], &[]),
        (&[("q", "checksum"), ("limit", "1")], &[beta]),
    ];
    let refused: &[Params] = &[
        &[("q", "x"), ("role", "tool")],
        &[("q", "x"), ("sort", "best")],
        &[("q", "x"), ("since", "yesterday")],
        &[("q", "x"), ("until", "2026-13-01")],
        &[("q", "x"), ("agent", "vim")],
        &[("q", "x"), ("cursor", "+5")],
        &[("q", "agent:vim")],
    ];
    let query = |params: &[(&str, &str)]| {
        params.iter().map(|(k, v)| format!("{k}={}", urlencode(v))).collect::<Vec<_>>().join("&")
    };
    let ids = |sessions: &Value| -> Vec<String> {
        sessions.as_array().unwrap().iter().map(|s| s["sessionId"].as_str().unwrap().to_owned()).collect()
    };
    let mut messages = Vec::new();
    for params in asked {
        let answer = server.json(&format!("/api/search?{}", query(params.0)));
        assert_eq!(ids(&answer["sessions"]), params.1, "HTTP {:?}: {answer}", params.0);
    }
    for params in refused {
        let res = server.get(&format!("/api/search?{}", query(params)));
        assert_eq!(res.status().as_u16(), 400, "HTTP {params:?}");
        let answer: Value = res.json().unwrap();
        messages.push(answer["error"]["message"].as_str().unwrap().to_owned());
    }
    // The CLI: its options are the API's parameters.
    let cli = |params: &[(&str, &str)]| {
        let mut args = vec!["search".to_owned(), "--json".to_owned()];
        for (k, v) in params.iter().filter(|(k, _)| *k != "q") {
            args.extend([format!("--{k}"), (*v).to_owned()]);
        }
        args.extend(["--".to_owned(), params.iter().find(|(k, _)| *k == "q").unwrap().1.to_owned()]);
        env.run(&args.iter().map(String::as_str).collect::<Vec<_>>())
    };
    for params in asked {
        let out = cli(params.0);
        assert!(out.status.success(), "CLI {:?}: {}", params.0, String::from_utf8_lossy(&out.stderr));
        let answer: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(ids(&answer["sessions"]), params.1, "CLI {:?}: {answer}", params.0);
    }
    // Where the CLI's own parser lets a value through (dates, queries), ours says what HTTP says.
    for (params, message) in refused.iter().zip(&messages) {
        if !params.iter().all(|(k, _)| ["since", "until", "q"].contains(k)) {
            continue;
        }
        let out = cli(params);
        assert_eq!(out.status.code(), Some(2), "CLI {params:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(message.as_str()), "CLI {params:?}: {stderr} says {message}");
    }
    // MCP, through the official SDK: the same sessions, and the same message as a tool error.
    if sdk_available() {
        let args = |params: &[(&str, &str)]| {
            let mut args = json!({"include_active": true});
            for (k, v) in params {
                let key = if *k == "q" { "query" } else { k };
                args[key] = if *k == "limit" { json!(v.parse::<i64>().unwrap()) } else { json!(v) };
            }
            call("search_history", args)
        };
        let calls: Vec<Value> = asked.iter().map(|p| args(p.0)).chain(refused.iter().map(|p| args(p))).collect();
        let report = run_plan(&env, &stdio_plan(&env, &[], &calls, &[]));
        let answers = report["calls"].as_array().unwrap();
        for (params, answer) in asked.iter().zip(answers) {
            assert_eq!(answer["isError"], false, "MCP {:?}: {answer}", params.0);
            assert_eq!(ids(&answer["structured"]["sessions"]), params.1, "MCP {:?}: {answer}", params.0);
        }
        for ((params, message), answer) in refused.iter().zip(&messages).zip(&answers[asked.len()..]) {
            assert_eq!(answer["isError"], true, "MCP {params:?}: {answer}");
            assert_eq!(answer["text"].as_str(), Some(message.as_str()), "MCP {params:?}");
        }
    }
}

/// `scrollback sessions` is the API's sessions list (`read::request`'s `SessionsInput` both): the
/// same sessions for the same filters, its JSON the API's, and a value neither can take refused
/// with the API's message (exit 2).
#[test]
fn the_cli_lists_sessions_as_the_api_does() {
    let env = Env::new();
    tree(&env);
    env.index();
    let server = Server::start(&env, &[]);
    server.wait_for_sessions(2);
    let ids = |answer: &Value| -> Vec<String> {
        answer["sessions"].as_array().unwrap().iter().map(|s| s["id"].as_str().unwrap().to_owned()).collect()
    };
    for (api, cli) in [
        ("", vec![]),
        ("project=%2Fhome%2Fu%2Fbeta", vec!["--project", "/home/u/beta"]),
        ("q=cargo", vec!["--query", "cargo"]),
        ("since=2026-02-02", vec!["--since", "2026-02-02"]),
        ("agent=codex", vec!["--agent", "codex"]),
        ("limit=1", vec!["--limit", "1"]),
    ] {
        let from_api = server.json(&format!("/api/sessions?{api}"));
        let out = env.run(&[&["sessions", "--json"][..], &cli].concat());
        assert!(out.status.success(), "{cli:?}: {}", String::from_utf8_lossy(&out.stderr));
        let from_cli: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(ids(&from_cli), ids(&from_api), "{cli:?}");
        assert_eq!(from_cli["sessions"], from_api["sessions"], "{cli:?}: the API's JSON");
    }
    assert_eq!(ids(&server.json("/api/sessions?project=%2Fhome%2Fu%2Fbeta")), ["5e55a000-0000-4000-8000-000000000002"]);
    // A line a session, its title last.
    let out = env.run(&["sessions"]);
    let table = String::from_utf8_lossy(&out.stdout);
    assert_eq!(table.lines().count(), 3, "a heading and two sessions: {table}");
    assert!(
        table.lines().any(|l| l.starts_with("5e55a000-0000-4000-8000-000000000001") && l.contains("Switch to gpt-5"))
    );
    // Refused as the API refuses it.
    let res = server.get("/api/sessions?until=2026-13-01");
    assert_eq!(res.status().as_u16(), 400);
    let message = res.json::<Value>().unwrap()["error"]["message"].as_str().unwrap().to_owned();
    let out = env.run(&["sessions", "--until", "2026-13-01"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains(&message), "{}", String::from_utf8_lossy(&out.stderr));
}

/// The judged query set (`tests/search/judged.json`, over the real corpus where `../shared` has it
/// and a generated tree) keeps the quality it was measured at: MRR and nDCG@10 at or above the
/// floors, through the real binary (`benches/search_quality.py`).
#[test]
fn the_judged_queries_keep_their_quality() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = Command::new("python3")
        .arg(root.join("benches/search_quality.py"))
        .args(["--bin", env!("CARGO_BIN_EXE_scrollback"), "--min-mrr", "0.95", "--min-ndcg", "0.95"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "the judged set fell below its floor:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("overall"), "{stdout}");
}
