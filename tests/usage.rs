//! The usage ledger: one row per API response, by the counting rule of docs/usage.md, kept
//! current while tailing and the same after a rebuild; `scrollback usage` and `GET /api/usage`;
//! and the comparison with ccusage (npm `ccusage`, which `.ci/run` installs under tests/ccusage),
//! day by day, on the real corpus and on generated trees.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use scrollback::format::usage::CONTEXT_SIZES;
use scrollback::read::prices::Prices;
use scrollback::read::usage::{By, Filter, report, report_from};
use serde_json::{Value, json};

use crate::util::Env;
use crate::util::server::Server;

/// (responses, input, output, cache read, cache write).
type Totals = (u64, u64, u64, u64, u64);
/// A fixture's name and the [`Totals`] the ledger must hold for it.
type Expected = (&'static str, u64, u64, u64, u64, u64);

/// An assistant line of Claude Code that states `usage` for message `id` (request `request`).
pub fn assistant(session: &str, uuid: &str, id: &str, request: Option<&str>, ts: &str, tokens: [u64; 4]) -> String {
    let [input, output, cache_read, cache_write] = tokens;
    let mut line = json!({
        "type": "assistant", "sessionId": session, "uuid": uuid, "timestamp": ts, "cwd": "/work/p",
        "message": {
            "id": id, "type": "message", "role": "assistant", "model": "claude-sonnet-4-5-20250929",
            "content": [{"type": "text", "text": format!("reply {uuid}")}],
            "usage": {"input_tokens": input, "output_tokens": output, "cache_read_input_tokens": cache_read,
                      "cache_creation_input_tokens": cache_write, "service_tier": "standard"}
        }
    });
    if let Some(request) = request {
        line["requestId"] = json!(request);
    }
    line.to_string() + "\n"
}

/// A Codex rollout's lines: its `session_meta`, a `turn_context` naming the model, and a
/// `token_count` event per running total.
fn codex_rollout(id: &str, started: &str, forked_from: Option<&str>, totals: &[(u64, u64, u64)]) -> String {
    let mut meta = json!({"timestamp": started, "type": "session_meta",
        "payload": {"id": id, "timestamp": started, "cwd": "/work/codex", "originator": "codex_cli_rs"}});
    if let Some(parent) = forked_from {
        meta["payload"]["forked_from_id"] = json!(parent);
    }
    let mut out = meta.to_string() + "\n";
    out += &(json!({"timestamp": started, "type": "turn_context", "payload": {"cwd": "/work/codex", "model": "gpt-5-codex"}})
        .to_string()
        + "\n");
    out += &token_counts(started, totals);
    out
}

/// `token_count` events for running totals of (input, cached input, output), stamped from `at` on.
fn token_counts(at: &str, totals: &[(u64, u64, u64)]) -> String {
    totals
        .iter()
        .map(|&(input, cached, output)| {
            json!({"timestamp": at, "type": "event_msg", "payload": {"type": "token_count", "info": {
                "total_token_usage": {"input_tokens": input, "cached_input_tokens": cached, "output_tokens": output,
                                      "reasoning_output_tokens": 0, "total_tokens": input + output},
                "last_token_usage": null, "model_context_window": 272000}}})
            .to_string()
                + "\n"
        })
        .collect()
}

/// The fixtures of the counting rule, each in its own folder of the Claude tree (and the Codex and
/// Gemini ones under `codex/` and `gemini/`), and what the ledger must hold for each:
/// (fixture, responses, input, output, cache read, cache write).
fn write_fixtures(env: &Env) -> Vec<Expected> {
    let t = |s: u32| format!("2026-03-0{}T10:00:{s:02}.000Z", 1 + s / 20);
    // Streamed blocks: three lines of one response; only the last has the final output count.
    env.write(
        "streamed/s1.jsonl",
        [3, 50, 190]
            .iter()
            .enumerate()
            .map(|(i, out)| assistant("s1", &format!("u1{i}"), "msg_1", Some("req_1"), &t(1), [4, *out, 1000, 200]))
            .collect::<String>(),
    );
    // A resumed session: its lines copied into another file of the same session.
    let first = assistant("s2", "u20", "msg_2", Some("req_2"), &t(2), [5, 60, 2000, 0]);
    env.write("resumed/s2.jsonl", &first);
    env.write(
        "resumed/s2-resumed.jsonl",
        first.clone() + &assistant("s2", "u21", "msg_3", Some("req_3"), &t(3), [6, 70, 2100, 10]),
    );
    // A sub-agent: its call reported in the parent's progress line and in its own transcript.
    let sub = assistant("s3", "u31", "msg_4", Some("req_4"), &t(4), [7, 80, 500, 50]);
    let sub_value: Value = serde_json::from_str(&sub).unwrap();
    let progress = json!({"type": "progress", "sessionId": "s3", "uuid": "u30", "timestamp": t(4), "cwd": "/work/p",
        "data": {"type": "agent_progress", "message": sub_value}});
    env.write("subagent/s3.jsonl", progress.to_string() + "\n");
    env.write(
        "subagent/s3/subagents/agent-a1.jsonl",
        sub.replace(r#""sessionId":"s3""#, r#""sessionId":"s3","isSidechain":true,"agentId":"a1""#),
    );
    // The same message under two session ids (a fork of a session copies its lines).
    env.write("two-sessions/s4.jsonl", assistant("s4", "u40", "msg_5", Some("req_5"), &t(5), [8, 90, 300, 30]));
    env.write("two-sessions/s5.jsonl", assistant("s5", "u50", "msg_5", Some("req_5"), &t(5), [8, 90, 300, 30]));
    // Lines without requestId (the Agent SDK's, older builds'): a streamed response of two lines.
    env.write(
        "no-request-id/s6.jsonl",
        assistant("s6", "u60", "msg_6", None, &t(6), [9, 5, 400, 40])
            + &assistant("s6", "u61", "msg_6", None, &t(6), [9, 100, 400, 40]),
    );
    // Claude Code's own synthetic message, and an API error line: nothing was billed.
    let synthetic =
        assistant("s7", "u70", "msg_7", None, &t(7), [0, 0, 0, 0]).replace("claude-sonnet-4-5-20250929", "<synthetic>");
    let error = assistant("s7", "u71", "msg_8", Some("req_8"), &t(7), [10, 10, 10, 10])
        .replace(r#""type":"assistant""#, r#""type":"assistant","isApiErrorMessage":true"#);
    env.write("synthetic/s7.jsonl", synthetic + &error);
    // Codex: running totals, one snapshot repeated; a fork that replays its parent's events.
    let parent = "01a0c0de-0000-7000-8000-0000000000a1";
    let child = "01a0c0de-0000-7000-8000-0000000000a2";
    let totals = [(100, 0, 10), (250, 100, 30), (250, 100, 30), (400, 200, 50)];
    env.write(
        &format!("codex/2026/03/01/rollout-2026-03-01T10-00-00-{parent}.jsonl"),
        codex_rollout(parent, "2026-03-01T10:00:00.000Z", None, &totals),
    );
    let copied = codex_rollout(parent, "2026-03-01T10:00:00.000Z", None, &totals);
    env.write(
        &format!("codex/2026/03/01/rollout-2026-03-01T11-00-00-{child}.jsonl"),
        codex_rollout(child, "2026-03-01T11:00:00.000Z", Some(parent), &[]).lines().next().unwrap().to_owned()
            + "\n"
            + &copied
            + &token_counts("2026-03-01T11:00:05.000Z", &[(470, 250, 65)]),
    );
    // Gemini: a message written again when its tokens arrive.
    let gemini_message = |tokens: Value| {
        json!({"id": "g1", "timestamp": "2026-03-01T12:00:00.000Z", "type": "gemini", "content": "hi",
               "model": "gemini-2.5-pro", "tokens": tokens})
        .to_string()
            + "\n"
    };
    env.write(
        "gemini/proj/chats/session-2026-03-01T12-00-5e55a0de.jsonl",
        json!({"sessionId": "5e55a0de-0000-4000-8000-000000000001", "projectHash": "p", "startTime": "2026-03-01T12:00:00.000Z"})
            .to_string()
            + "\n"
            + &gemini_message(Value::Null)
            + &gemini_message(json!({"input": 900, "output": 40, "cached": 300, "thoughts": 25, "tool": 5, "total": 970})),
    );
    vec![
        ("streamed", 1, 4, 190, 1000, 200),
        ("resumed", 2, 5 + 6, 60 + 70, 2000 + 2100, 10),
        ("subagent", 1, 7, 80, 500, 50),
        ("two-sessions", 1, 8, 90, 300, 30),
        ("no-request-id", 1, 9, 100, 400, 40),
        ("synthetic", 0, 0, 0, 0, 0),
        // 100 + 150 + 150 (the repeat counts nothing), then the fork's own 70 (input 470 - 400 of
        // which 50 more cached, output 15 more).
        ("codex", 4, 100 + 50 + 50 + 20, 10 + 20 + 20 + 15, 100 + 100 + 50, 0),
        ("gemini", 1, 605, 65, 300, 0),
    ]
}

fn roots(env: &Env) -> Vec<String> {
    vec![
        "--root".into(),
        format!("codex:{}", env.path("codex").display()),
        "--root".into(),
        format!("gemini:{}", env.path("gemini").display()),
    ]
}

/// The ledger's (responses, input, output, cache read, cache write) by the fixture folder of each
/// response's standing line.
fn ledger_by_fixture(env: &Env) -> BTreeMap<String, Totals> {
    let conn = env.conn();
    let mut stmt = conn
        .prepare(
            "SELECT f.path, u.input_tokens, u.output_tokens, u.cache_read_tokens, u.cache_write_tokens
             FROM usage u JOIN entries e ON e.id = u.entry_id JOIN files f ON f.id = e.file_id",
        )
        .unwrap();
    let mut out: BTreeMap<String, Totals> = BTreeMap::new();
    let root = format!("{}/", env.root.display());
    for row in stmt
        .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?, r.get(2)?, r.get(3)?, r.get(4)?)))
        .unwrap()
    {
        let (path, i, o, cr, cw): (String, i64, i64, i64, i64) = row.unwrap();
        let fixture = path.strip_prefix(&root).unwrap().split('/').next().unwrap().to_owned();
        let e = out.entry(fixture).or_default();
        *e = (e.0 + 1, e.1 + i as u64, e.2 + o as u64, e.3 + cr as u64, e.4 + cw as u64);
    }
    out
}

fn expected_by_fixture(expected: &[Expected]) -> BTreeMap<String, Totals> {
    expected.iter().filter(|e| e.1 > 0).map(|&(f, n, i, o, cr, cw)| (f.to_owned(), (n, i, o, cr, cw))).collect()
}

#[test]
fn each_api_response_is_one_ledger_row_by_the_counting_rule() {
    let env = Env::new();
    let expected = write_fixtures(&env);
    let mut args = vec!["index".to_owned()];
    args.extend(roots(&env));
    let out = env.run(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let want = expected_by_fixture(&expected);
    assert_eq!(ledger_by_fixture(&env), want);
    // Every line that states a response is kept, with the response it is a line of.
    let conn = env.conn();
    let lines: i64 = conn.query_row("SELECT count(*) FROM usage_lines", [], |r| r.get(0)).unwrap();
    let responses: i64 = conn.query_row("SELECT sum(lines) FROM usage", [], |r| r.get(0)).unwrap();
    assert_eq!(lines, responses);
    assert!(lines > want.values().map(|v| v.0 as i64).sum::<i64>(), "copies and blocks are lines of one response");
    // The Codex model comes from the rollout's turn_context; a response stands in one session.
    let models: Vec<(String, Option<String>)> = conn
        .prepare("SELECT agent, model FROM usage GROUP BY agent, model ORDER BY agent")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(
        models,
        [
            ("claude".to_owned(), Some("claude-sonnet-4-5-20250929".to_owned())),
            ("codex".to_owned(), Some("gpt-5-codex".to_owned())),
            ("gemini".to_owned(), Some("gemini-2.5-pro".to_owned())),
        ]
    );
    // A rebuild derives the same ledger.
    drop(conn);
    let mut args = vec!["rebuild".to_owned()];
    args.extend(roots(&env));
    let out = env.run(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(ledger_by_fixture(&env), want, "after a rebuild");
}

/// The ledger and its sums, as rows of text in order.
fn ledger_rows(env: &Env) -> Vec<String> {
    let conn = env.conn();
    let mut out = Vec::new();
    for sql in [
        "SELECT * FROM usage ORDER BY key",
        "SELECT * FROM usage_sums ORDER BY session_id, day, agent, model, tier, over",
        "SELECT * FROM usage_hours ORDER BY session_id, hour, agent, model, tier, over",
        "SELECT * FROM usage_daily",
        "SELECT * FROM usage_by_session",
    ] {
        let mut stmt = conn.prepare(sql).unwrap();
        let n = stmt.column_count();
        let rows = stmt
            .query_map([], |r| {
                (0..n)
                    .map(|i| Ok(format!("{:?}", r.get::<_, rusqlite::types::Value>(i)?)))
                    .collect::<rusqlite::Result<Vec<_>>>()
            })
            .unwrap();
        out.extend(rows.map(|r| format!("{sql}: {}", r.unwrap().join(" | "))));
    }
    out
}

/// Puts a fresh index's ledger back as version 22 kept it: each usage line with its entry's session
/// and time and its model's name (`usage_standing` is as it was).
const BACK_TO_V22: &str = "
    CREATE TABLE usage_lines_v22 AS
    SELECT u.entry_id, u.ordinal, u.key, e.session_id, u.agent, m.name AS model, u.request_id,
           coalesce(u.timestamp, e.timestamp) AS timestamp, u.tier, u.input_tokens, u.output_tokens,
           u.cache_read_tokens, u.cache_write_tokens, u.cache_write_1h_tokens, u.reasoning_tokens
    FROM usage_lines u JOIN entries e ON e.id = u.entry_id LEFT JOIN usage_models m ON m.id = u.model;
    DROP VIEW usage_daily; DROP VIEW usage_by_session; DROP VIEW usage; DROP TABLE usage_lines; DROP TABLE usage_models;
    CREATE TABLE usage_lines (
        entry_id INTEGER NOT NULL, ordinal INTEGER NOT NULL, key TEXT NOT NULL, session_id TEXT NOT NULL,
        agent TEXT NOT NULL, model TEXT, request_id TEXT, timestamp TEXT, tier TEXT, input_tokens INTEGER NOT NULL,
        output_tokens INTEGER NOT NULL, cache_read_tokens INTEGER NOT NULL, cache_write_tokens INTEGER NOT NULL,
        cache_write_1h_tokens INTEGER NOT NULL, reasoning_tokens INTEGER NOT NULL,
        PRIMARY KEY (entry_id, ordinal)) WITHOUT ROWID;
    INSERT INTO usage_lines SELECT entry_id, ordinal, key, session_id, agent, model, request_id, timestamp, tier,
        input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, cache_write_1h_tokens, reasoning_tokens
    FROM usage_lines_v22 ORDER BY random();
    CREATE INDEX usage_lines_key ON usage_lines(key);
    DROP TABLE usage_lines_v22;
    CREATE VIEW usage AS
    SELECT u.key, s.session_id, u.agent, u.model, u.request_id, u.timestamp,
           coalesce(date(u.timestamp), substr(u.timestamp, 1, 10)) AS day, u.tier, u.input_tokens,
           u.output_tokens, u.cache_read_tokens, u.cache_write_tokens, u.cache_write_1h_tokens,
           u.reasoning_tokens, s.entry_id, s.lines
    FROM usage_standing s
    JOIN usage_lines u ON u.entry_id = s.entry_id AND u.ordinal = s.ordinal AND u.session_id = s.session_id;
    CREATE VIEW usage_daily AS SELECT day FROM usage;
    CREATE VIEW usage_by_session AS SELECT session_id FROM usage;";

#[test]
fn an_index_of_version_20_or_22_keeps_its_ledger_as_the_standing_lines_a_fresh_index_picks() {
    let env = Env::new();
    let expected = write_fixtures(&env);
    let mut args = vec!["index".to_owned()];
    args.extend(roots(&env));
    let index = |env: &Env| {
        let out = env.run(&args.iter().map(String::as_str).collect::<Vec<_>>());
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    };
    index(&env);
    let fresh = ledger_rows(&env);
    assert!(fresh.len() > expected.len(), "{fresh:#?}");
    // A usage line keeps no time of its own where its entry's is the response's (all of Claude
    // Code's), and no model's name: a number in `usage_models`.
    let conn = rusqlite::Connection::open(env.data.join("index.sqlite3")).unwrap();
    let (lines, own_times, models, named): (i64, i64, i64, i64) = conn
        .query_row(
            "SELECT count(*), count(timestamp), count(DISTINCT model),
                    count(*) FILTER (WHERE typeof(model) = 'integer' AND model IN (SELECT id FROM usage_models))
             FROM usage_lines WHERE agent = 'claude'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
        )
        .unwrap();
    assert!(lines > 0 && own_times == 0, "{own_times} of {lines} lines keep a time of their own");
    assert!(models >= 1 && named == lines, "{named} of {lines} lines name one of {models} models by its number");
    // Version 22 kept each line's session, time and model name on it, and the standing lines in a
    // table of their own.
    conn.execute_batch(&format!("BEGIN; {BACK_TO_V22} PRAGMA user_version = 22; COMMIT;")).unwrap();
    drop(conn);
    index(&env);
    assert_eq!(ledger_rows(&env), fresh, "migrated from version 22");
    // Version 20 kept each response's facts in a `usage` table of their own: put the index back
    // as it was, the table made from the same rows (and its sessions without version 22's columns).
    let conn = rusqlite::Connection::open(env.data.join("index.sqlite3")).unwrap();
    conn.execute_batch(&format!(
        "BEGIN;
         CREATE TABLE usage_v20 AS SELECT * FROM usage;
         {BACK_TO_V22}
         DROP VIEW usage_daily; DROP VIEW usage_by_session; DROP VIEW usage; DROP TABLE usage_standing;
         CREATE TABLE usage (
             key TEXT PRIMARY KEY, session_id TEXT NOT NULL, agent TEXT NOT NULL, model TEXT, request_id TEXT,
             timestamp TEXT, day TEXT, tier TEXT, input_tokens INTEGER NOT NULL, output_tokens INTEGER NOT NULL,
             cache_read_tokens INTEGER NOT NULL, cache_write_tokens INTEGER NOT NULL,
             cache_write_1h_tokens INTEGER NOT NULL, reasoning_tokens INTEGER NOT NULL, entry_id INTEGER NOT NULL,
             lines INTEGER NOT NULL);
         INSERT INTO usage SELECT * FROM usage_v20 ORDER BY random();
         DROP TABLE usage_v20;
         CREATE INDEX usage_day ON usage(day);
         CREATE INDEX usage_session ON usage(session_id, day);
         CREATE VIEW usage_daily AS SELECT day FROM usage;
         CREATE VIEW usage_by_session AS SELECT session_id FROM usage;
         ALTER TABLE sessions DROP COLUMN first_entry;
         ALTER TABLE sessions DROP COLUMN last_entry;
         PRAGMA user_version = 20;
         COMMIT;"
    ))
    .unwrap();
    drop(conn);
    index(&env);
    let version: i64 = env.conn().query_row("PRAGMA user_version", [], |r| r.get(0)).unwrap();
    assert_eq!(version, scrollback::db::VERSION);
    assert_eq!(ledger_rows(&env), fresh);
}

#[test]
fn the_ledger_follows_appends_rewrites_and_forgets_live_and_equals_a_fresh_index() {
    let env = Env::new();
    env.write("p/s1.jsonl", assistant("s1", "u1", "msg_1", Some("req_1"), "2026-03-01T10:00:00.000Z", [4, 3, 100, 0]));
    let server = Server::start(&env, &[]);
    server.wait_for_sessions(1);
    let total = |server: &Server| -> (u64, u64) {
        let report = server.json("/api/usage?by=day");
        (report["total"]["responses"].as_u64().unwrap(), report["total"]["outputTokens"].as_u64().unwrap())
    };
    let settle = |server: &Server, want: (u64, u64)| {
        let deadline = Instant::now() + Duration::from_secs(10);
        while total(server) != want {
            assert!(Instant::now() < deadline, "the ledger did not reach {want:?}: {:?}", total(server));
            std::thread::sleep(Duration::from_millis(20));
        }
    };
    settle(&server, (1, 3));
    // The next block of the same streamed response: its final output count replaces the first.
    env.append(
        "p/s1.jsonl",
        assistant("s1", "u2", "msg_1", Some("req_1"), "2026-03-01T10:00:01.000Z", [4, 190, 100, 0]),
    );
    settle(&server, (1, 190));
    // Another response, in another session's file.
    env.append("p/s2.jsonl", assistant("s2", "u3", "msg_2", Some("req_2"), "2026-03-02T10:00:00.000Z", [1, 10, 0, 0]));
    settle(&server, (2, 200));
    // Rewritten to hold the first block only: the first block's count stands again.
    env.write("p/s1.jsonl", assistant("s1", "u1", "msg_1", Some("req_1"), "2026-03-01T10:00:00.000Z", [4, 3, 100, 0]));
    settle(&server, (2, 13));
    // Forgotten: its responses leave the ledger.
    let resp = server.client.delete(format!("{}/api/sessions/s2", server.base)).send().unwrap();
    assert!(resp.status().is_success(), "{}", resp.status());
    settle(&server, (1, 3));
    let live = server.json("/api/usage?by=session");
    drop(server);
    // A fresh index of the same files gives the same report.
    let fresh = Env::new();
    fresh.write("p/s1.jsonl", std::fs::read(env.path("p/s1.jsonl")).unwrap());
    fresh.index();
    let out = fresh.run(&["usage", "--by", "session", "--json"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let cli: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(cli["rows"], live["rows"]);
    assert_eq!(cli["total"], live["total"]);
}

#[test]
fn usage_reports_group_filter_price_and_refuse_bad_requests() {
    let env = Env::new();
    write_fixtures(&env);
    let mut args = vec!["index".to_owned()];
    args.extend(roots(&env));
    assert!(env.run(&args.iter().map(String::as_str).collect::<Vec<_>>()).status.success());
    let usage = |extra: &[&str]| -> Value {
        let mut args = vec!["usage", "--json"];
        args.extend_from_slice(extra);
        let out = env.run(&args);
        assert!(out.status.success(), "{extra:?}: {}", String::from_utf8_lossy(&out.stderr));
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let by_day = usage(&[]);
    let days: Vec<&str> = by_day["rows"].as_array().unwrap().iter().map(|r| r["key"].as_str().unwrap()).collect();
    assert_eq!(days, ["2026-03-01"], "{by_day}");
    assert_eq!(by_day["total"]["responses"], 11);
    for by in ["week", "month", "session", "project", "model", "agent"] {
        let report = usage(&["--by", by]);
        // The same total (its cost summed in another order: equal to rounding).
        let (mut total, mut want) = (report["total"].clone(), by_day["total"].clone());
        let (a, b) = (total["cost"].take().as_f64().unwrap(), want["cost"].take().as_f64().unwrap());
        assert_eq!(total, want, "grouped by {by}, the same total");
        assert!((a - b).abs() < 1e-12, "grouped by {by}: cost {a} against {b}");
        let sum: u64 = report["rows"].as_array().unwrap().iter().map(|r| r["totalTokens"].as_u64().unwrap()).sum();
        assert_eq!(sum, by_day["total"]["totalTokens"].as_u64().unwrap(), "{by}");
    }
    assert_eq!(usage(&["--by", "week"])["rows"][0]["key"], "2026-02-23", "weeks are named by their Monday");
    let codex = usage(&["--agent", "codex"]);
    assert_eq!(codex["total"]["responses"], 4);
    // gpt-5-codex at the shipped prices: input 220, cached 250, output 65.
    let cost = codex["total"]["cost"].as_f64().unwrap();
    assert!((cost - (220.0 * 1.25e-6 + 250.0 * 1.25e-7 + 65.0 * 1e-5)).abs() < 1e-12, "{cost}");
    assert_eq!(usage(&["--since", "2026-03-02"])["total"]["responses"], 0);
    assert_eq!(usage(&["--until", "2026-02-28"])["total"]["responses"], 0);
    // A model with no price is unpriced, never free; --prices gives it one.
    let prices = env.dir.path().join("prices.json");
    std::fs::write(
        &prices,
        json!({"source": "a test", "taken": "2026-03-01", "models": {"gpt-5-codex": {"input": 1.0, "output": 0.0, "cache_read": 0.0}}})
            .to_string(),
    )
    .unwrap();
    let repriced = usage(&["--agent", "codex", "--prices", prices.to_str().unwrap()]);
    assert_eq!(repriced["total"]["cost"], 220.0);
    assert!(repriced["prices"]["source"].as_str().unwrap().contains("a test"));
    std::fs::write(
        &prices,
        json!({"source": "s", "taken": "t", "models": {"gpt-5-codex": {"input": 1.0}}}).to_string(),
    )
    .unwrap();
    let partial = usage(&["--agent", "codex", "--prices", prices.to_str().unwrap()]);
    assert_eq!(partial["total"]["unpricedResponses"], 4, "output tokens with no output price: unpriced");
    assert_eq!(partial["unpricedModels"]["gpt-5-codex"], 4);
    let table = env.run(&["usage", "--by", "model"]);
    let text = String::from_utf8(table.stdout).unwrap();
    assert!(text.contains("gpt-5-codex") && text.contains("total") && text.contains("prices: litellm "), "{text}");
    let bad = env.run(&["usage", "--since", "last tuesday"]);
    assert_eq!(bad.status.code(), Some(2), "{}", String::from_utf8_lossy(&bad.stderr));
    // The reports read the ledger's sums; they answer as its rows do, whatever the grouping and
    // filter. A bound within a day is answered from the rows.
    let conn = env.conn();
    let shipped = Prices::shipped();
    assert!(shipped.long_context_sizes().iter().all(|n| CONTEXT_SIZES.contains(n)), "the sums keep every size");
    let project: String =
        conn.query_row("SELECT project FROM sessions WHERE project IS NOT NULL", [], |r| r.get(0)).unwrap();
    let filters = [
        Filter::default(),
        Filter { since: Some("2026-03-01"), until: Some("2026-03-01"), ..Filter::default() },
        Filter { until: Some("2026-02-28"), ..Filter::default() },
        Filter { agent: Some("codex"), ..Filter::default() },
        Filter { project: Some(&project), ..Filter::default() },
        Filter { model: Some("gemini-2.5-pro"), ..Filter::default() },
    ];
    for (name, by) in By::ALL {
        for filter in filters {
            let from_sums = report_from(&conn, by, filter, &shipped, true).unwrap();
            assert_eq!(from_sums, report_from(&conn, by, filter, &shipped, false).unwrap(), "by {name}, {filter:?}");
            assert_eq!(from_sums, report(&conn, by, filter, &shipped).unwrap(), "by {name}, {filter:?}");
        }
    }
    let day = Filter { since: Some("2026-03-01"), ..Filter::default() };
    let noon = Filter { since: Some("2026-03-01T11:30:00Z"), ..Filter::default() };
    let (all, later) =
        (report(&conn, By::Day, day, &shipped).unwrap(), report(&conn, By::Day, noon, &shipped).unwrap());
    let want: i64 =
        conn.query_row("SELECT count(*) FROM usage WHERE timestamp >= '2026-03-01T11:30'", [], |r| r.get(0)).unwrap();
    assert!(0 < want && want < all.total.responses as i64, "{want} of {}", all.total.responses);
    assert_eq!(later.total.responses, want as u64);
    drop(conn);
    // The same report over HTTP; bad parameters are 400s with the API's error.
    let server = Server::start(&env, &roots(&env).iter().map(String::as_str).collect::<Vec<_>>());
    let api = server.json("/api/usage?by=agent");
    assert_eq!(api, usage(&["--by", "agent"]));
    for bad in ["/api/usage?by=year", "/api/usage?since=yesterday", "/api/usage?agent=nobody", "/api/usage?what=1"] {
        let resp = server.get(bad);
        assert_eq!(resp.status().as_u16(), 400, "{bad}");
        let body: Value = resp.json().unwrap();
        assert!(body["error"].is_object() || body["error"].is_string(), "{bad}: {body}");
    }
}

/// The ccusage binary `.ci/run` installs (`tests/ccusage/node_modules/.bin/ccusage`), if it is there.
pub(crate) fn ccusage() -> Option<PathBuf> {
    let bin = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/ccusage/node_modules/.bin/ccusage");
    if bin.exists() {
        return Some(bin);
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "ccusage is missing: .ci/run installs it (npm install --prefix tests/ccusage --no-save)"
    );
    eprintln!("SKIPPED: ccusage is not installed; `npm install --prefix tests/ccusage --no-save` to run this test");
    None
}

/// ccusage's `daily --json --offline` over the Claude Code tree `claude` (as `CLAUDE_CONFIG_DIR`'s
/// `projects`): (input, output, cache read, cache write) by day.
fn ccusage_daily(bin: &Path, home: &Path) -> BTreeMap<String, [u64; 4]> {
    let out = Command::new(bin)
        .args(["daily", "--json", "--offline", "--timezone", "UTC"])
        .env("HOME", home)
        .env("CLAUDE_CONFIG_DIR", home.join(".claude"))
        .env("CODEX_HOME", home.join(".codex"))
        .env("GEMINI_DATA_DIR", home.join(".gemini"))
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert!(out.status.success(), "ccusage: {}", String::from_utf8_lossy(&out.stderr));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    report["daily"]
        .as_array()
        .map(|days| {
            days.iter()
                .map(|d| {
                    let n = |k: &str| d[k].as_u64().unwrap();
                    let tokens = [n("inputTokens"), n("outputTokens"), n("cacheReadTokens"), n("cacheCreationTokens")];
                    (d["period"].as_str().unwrap().to_owned(), tokens)
                })
                .collect()
        })
        .unwrap_or_default()
}

/// scrollback's report by day of the index of `env`, as the same four counts.
fn ours_daily(env: &Env, agent: &str) -> BTreeMap<String, [u64; 4]> {
    env.usage_report(&["--agent", agent])["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let n = |k: &str| r[k].as_u64().unwrap();
            let tokens = [n("inputTokens"), n("outputTokens"), n("cacheReadTokens"), n("cacheWriteTokens")];
            (r["key"].as_str().unwrap().to_owned(), tokens)
        })
        .collect()
}

#[test]
fn ccusage_agrees_day_by_day_on_the_real_corpus() {
    let Some(bin) = ccusage() else { return };
    let Some(corpus) = crate::util::corpus("real") else { return };
    let env = Env::new();
    // ccusage reads `$CLAUDE_CONFIG_DIR/projects`; scrollback the same tree.
    let home = env.dir.path().join("home");
    let projects = home.join(".claude/projects");
    for path in crate::util::corpus::jsonl_files(&corpus) {
        let to = projects.join("corpus").join(path.file_name().unwrap());
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(&path, &to).unwrap();
    }
    let out = env.run(&["index", "--transcripts", projects.to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let theirs = ccusage_daily(&bin, &home);
    let ours = ours_daily(&env, "claude");
    assert!(theirs.len() >= 5, "ccusage found too little to compare: {theirs:?}");
    // Both take one line per response (message.id + requestId), the last, and both count the
    // sub-agent calls Claude Code reports in progress lines: equal, day by day.
    assert_eq!(ours, theirs);
}

#[test]
fn ccusage_agrees_on_generated_streamed_resumed_and_unkeyed_responses() {
    let Some(bin) = ccusage() else { return };
    let env = Env::new();
    let home = env.dir.path().join("home");
    let projects = home.join(".claude/projects");
    let t = "2026-03-01T10:00:00.000Z";
    let write = |rel: &str, text: String| {
        let path = projects.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    // Streamed blocks with requestId, and a resumed copy: one response each to both.
    write(
        "p/s1.jsonl",
        assistant("s1", "u10", "msg_1", Some("req_1"), t, [4, 3, 1000, 200])
            + &assistant("s1", "u11", "msg_1", Some("req_1"), t, [4, 190, 1000, 200]),
    );
    write("p/s1-resumed.jsonl", assistant("s1", "u11", "msg_1", Some("req_1"), t, [4, 190, 1000, 200]));
    // A streamed response whose lines have no requestId: ccusage 20.0.24 keys it by message.id
    // too, and takes its last line, as scrollback does.
    let t2 = "2026-03-02T10:00:00.000Z";
    write(
        "p/s2.jsonl",
        assistant("s2", "u20", "msg_2", None, t2, [9, 5, 400, 40])
            + &assistant("s2", "u21", "msg_2", None, t2, [9, 100, 400, 40]),
    );
    let out = env.run(&["index", "--transcripts", projects.to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let ours = ours_daily(&env, "claude");
    assert_eq!(ours["2026-03-01"], [4, 190, 1000, 200]);
    assert_eq!(ours["2026-03-02"], [9, 100, 400, 40], "one response, its final output");
    assert_eq!(ours, ccusage_daily(&bin, &home));
}

/// Token counts near the 64-bit maximum (#39.7): each count is clamped on ingest to
/// `format::usage::MAX_TOKENS`, sums never overflow, and the writer goes on with the next line.
#[test]
fn token_counts_near_the_64_bit_maximum_are_clamped_and_stop_nothing() {
    let env = Env::new();
    let huge = u64::MAX;
    let near = i64::MAX as u64;
    let mut first = assistant("huge-1", "a1", "msg_h1", None, "2026-03-01T10:00:00.000Z", [huge, near, near, huge]);
    first += &assistant("huge-1", "a2", "msg_h2", None, "2026-03-01T10:00:01.000Z", [near, near, near, near]);
    first += &assistant("huge-1", "a3", "msg_h3", None, "2026-03-01T10:00:02.000Z", [10, 20, 30, 40]);
    env.write("p/huge-1.jsonl", first);
    env.write(
        "p/huge-2.jsonl",
        assistant("huge-2", "b1", "msg_h4", None, "2026-03-01T11:00:00.000Z", [near, near, near, near]),
    );
    env.index();
    let conn = env.conn();
    let lines: i64 = conn.query_row("SELECT count(*) FROM entries", [], |r| r.get(0)).unwrap();
    assert_eq!(lines, 4, "every line indexed, the one after the hostile ones too");
    let max = scrollback::format::usage::MAX_TOKENS as i64;
    let rows: Vec<(i64, i64)> = conn
        .prepare("SELECT input_tokens, output_tokens FROM usage ORDER BY timestamp")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap();
    assert_eq!(rows, [(max, max), (max, max), (10, 20), (max, max)]);
    // The writer goes on: a line appended later is indexed.
    env.append("p/huge-1.jsonl", assistant("huge-1", "a4", "msg_h5", None, "2026-03-01T10:00:03.000Z", [1, 2, 3, 4]));
    env.index();
    let lines: i64 = env.conn().query_row("SELECT count(*) FROM entries", [], |r| r.get(0)).unwrap();
    assert_eq!(lines, 5);
    let out = env.run(&["usage", "--json", "--by", "session"]);
    assert!(out.status.success(), "scrollback usage: {}", String::from_utf8_lossy(&out.stderr));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["total"]["responses"], 5);
    assert_eq!(report["total"]["inputTokens"].as_u64(), Some(3 * max as u64 + 11));
    let server = Server::start(&env, &[]);
    server.wait_for_sessions(2);
    for path in ["/api/usage", "/api/usage?by=session", "/api/usage?by=model", "/api/stats"] {
        assert_eq!(server.get(path).status(), reqwest::StatusCode::OK, "{path}");
    }
}
