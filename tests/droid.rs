//! Factory Droid's sessions, generated from the facts docs/formats.md cites: every record kind, a
//! person's photo and a tool's, a 3 MB photo line, a non-UTF-8 line and a torn one, the first line
//! written again in place (a new title), an append, and a session of an older build directly in
//! `sessions/`. Every photo served by ref byte-exact, no payload byte in SQLite, every line
//! restored byte for byte, and the session as Droid shows it, over the API and MCP's renderer.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::util::fixtures::droid::{SESSION, body, line, start};
use crate::util::server::Server;
use crate::util::{Env, check_invariants, fake_png};

const OLD: &str = "0a1b2c3d-0000-4000-8000-00000000d001";

fn root(env: &Env) -> String {
    format!("droid:{}", env.path("factory/sessions").display())
}

fn index(env: &Env) -> String {
    env.index_roots(&["--root".into(), root(env)])
}

#[test]
fn droid_sessions_keep_every_photo_and_read_as_droid_shows_them() {
    let env = Env::new();
    let photos = [fake_png(41, 300), fake_png(42, 400), fake_png(43, 3 << 20)];
    let (_, bytes) = body(&photos);
    let mut file = start("Investigate red button").into_bytes();
    file.extend_from_slice(&bytes);
    let path = env.write(&format!("factory/sessions/-w-app/{SESSION}.jsonl"), &file);
    // The settings beside it hold the session's token totals (one record, not shown); an older
    // build's session sits in `sessions/` itself.
    env.write(&format!("factory/sessions/-w-app/{SESSION}.settings.json"), "{\"tokenUsage\":{\"inputTokens\":1}}");
    let old = env.write(
        &format!("factory/sessions/{OLD}.jsonl"),
        line(json!({"type": "session_start", "id": OLD, "title": "an old flat session", "owner": "a", "version": 2}))
            + &line(json!({"type": "message", "id": "o1", "timestamp": "2025-10-01T09:00:00.000Z",
                "message": {"role": "user", "content": "hello from an older build"}})),
    );
    let summary = index(&env);
    assert!(summary.starts_with("indexed 3 files, 12 lines"), "{summary}");
    let conn = env.conn();
    let invalid: Vec<(i64, String)> = conn
        .prepare("SELECT line, reason FROM invalid_lines ORDER BY line")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap();
    assert_eq!(invalid.len(), 1, "{invalid:?}");
    assert!(invalid[0].0 == 9 && invalid[0].1.starts_with("not UTF-8"), "{invalid:?}");
    assert_eq!(
        check_invariants(&env.data),
        11,
        "every complete line but the non-UTF-8 one, and the settings, restored byte for byte"
    );
    assert_eq!(env.photos_of(&path), photos.to_vec(), "the person's, the tool's and the 3 MB one");
    let longest: i64 =
        conn.query_row("SELECT max(length(stored_line(stripped))) FROM entries", [], |r| r.get(0)).unwrap();
    assert!(longest < 2000, "no payload in a stored line: the longest is {longest} bytes");
    assert_eq!(
        env.sessions_listed(),
        [
            (OLD.into(), "droid".into(), Some("an old flat session".into()), None),
            (SESSION.into(), "droid".into(), Some("Investigate red button".into()), Some("/w/app".into())),
        ]
    );
    assert_eq!(crate::util::media_rows(&conn, &old).len(), 0);

    // Over HTTP: the agent filter, the photos, and the parts as Droid shows them.
    let server = Server::start(&env, &["--root", &root(&env)]);
    server.wait_for_sessions(2);
    let listed: Value = server.get("/api/sessions?agent=droid").json().unwrap();
    assert_eq!(listed["sessions"].as_array().unwrap().len(), 2, "{listed}");
    let res = server.get(&format!("/api/session-media/{SESSION}/m1/0"));
    assert_eq!(res.status(), 200);
    assert_eq!(res.bytes().unwrap().as_ref(), photos[0].as_slice());
    let page: Value = server.get(&format!("/api/sessions/{SESSION}/history?view=true&limit=50")).json().unwrap();
    let entries = page["entries"].as_array().unwrap();
    let by_uuid = |u: &str| entries.iter().find(|e| e["uuid"] == u).unwrap_or_else(|| panic!("{u}: {page}"));
    let view = |u: &str| by_uuid(u)["view"].clone();
    assert_eq!(view("m0")["parts"][0]["kind"], "context", "the context the CLI gave the model, folded");
    assert_eq!(view("m0")["parts"][0]["label"], "Context for the model");
    assert_eq!(view("m1")["who"]["side"], "user");
    assert!(view("m1").to_string().contains("why is the button red?"));
    let answer = view("m2");
    assert_eq!(answer["who"]["name"], "Droid");
    let kinds: Vec<&str> = answer["parts"].as_array().unwrap().iter().map(|p| p["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["thinking", "text", "toolCall", "toolCall"], "{answer}");
    let results = view("m3").to_string();
    assert!(results.contains("No such file or directory") && results.contains("\"error\":true"), "{results}");
    assert!(view("c1").to_string().contains("The red comes from App.css"), "the compaction's summary");
    assert!(view("t1")["who"].is_null(), "the to-do list is bookkeeping");
    drop(server);

    // The CLI writes its first line again, whole, for a new title: read again, same rows, same photos.
    let mut renamed = start("Fix the red primary button").into_bytes();
    renamed.extend_from_slice(&bytes);
    std::fs::write(&path, &renamed).unwrap();
    index(&env);
    assert_eq!(env.sessions_listed()[1].2.as_deref(), Some("Fix the red primary button"));
    assert_eq!(check_invariants(&env.data), 11);
    assert_eq!(env.photos_of(&path), photos.to_vec());

    // The torn line completed, and one more appended: only they are read.
    let more = ":00.000Z\",\"message\":{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"Done.\"}]}}\n"
        .to_owned()
        + &line(json!({"type": "message", "id": "m7", "timestamp": "2026-06-01T11:33:00.000Z",
            "message": {"role": "user", "content": "thanks"}, "parentId": "m6"}));
    env.append(&format!("factory/sessions/-w-app/{SESSION}.jsonl"), more);
    let summary = index(&env);
    assert!(summary.starts_with("indexed 1 file, 2 lines"), "{summary}");
    assert_eq!(check_invariants(&env.data), 13);
}

/// A session's settings as Droid writes them beside its transcript (`tokenUsage` the session's
/// totals so far; `inclusiveTokenUsage` adds the sessions it started, which have files of their own).
fn settings(model: &str, at: Option<&str>, [input, output, write, read, thinking]: [u64; 5]) -> String {
    let mut v = json!({"model": model, "reasoningEffort": "high", "autonomyLevel": "medium", "providerLock": "anthropic",
        "assistantActiveTimeMs": 81234,
        "tokenUsage": {"inputTokens": input, "outputTokens": output, "cacheCreationTokens": write,
                       "cacheReadTokens": read, "thinkingTokens": thinking, "factoryCredits": 3.2},
        "inclusiveTokenUsage": {"inputTokens": input * 3, "outputTokens": output * 3, "cacheCreationTokens": write,
                                "cacheReadTokens": read, "thinkingTokens": thinking}});
    if let Some(at) = at {
        v["providerLockTimestamp"] = json!(at);
    }
    serde_json::to_string_pretty(&v).unwrap()
}

/// `scrollback usage --json --agent droid --by BY`: each row's key and (responses, input, output,
/// cache read, cache write, reasoning, total), by key.
fn droid_usage(env: &Env, by: &str) -> Vec<(String, [u64; 7])> {
    env.usage_report(&["--agent", "droid", "--by", by])["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let n = |k: &str| r[k].as_u64().unwrap();
            let counts = ["responses", "inputTokens", "outputTokens", "cacheReadTokens", "cacheWriteTokens"]
                .map(n)
                .into_iter()
                .chain([n("reasoningTokens"), n("totalTokens")]);
            (r["key"].as_str().unwrap_or("").to_owned(), counts.collect::<Vec<_>>().try_into().unwrap())
        })
        .collect::<std::collections::BTreeMap<_, _>>()
        .into_iter()
        .collect()
}

#[test]
fn droid_sessions_count_the_token_totals_of_their_settings_as_ccusage_does() {
    let env = Env::new();
    let dir = "factory/sessions/-w-app";
    let transcript = start("Investigate red button")
        + &line(json!({"type": "message", "id": "m1", "timestamp": "2026-06-01T10:00:00.100Z",
            "message": {"role": "user", "content": "why is the button red?"}}));
    env.write(&format!("{dir}/{SESSION}.jsonl"), &transcript);
    let sonnet = "claude-sonnet-4-5-20250929";
    env.write(
        &format!("{dir}/{SESSION}.settings.json"),
        settings(sonnet, Some("2026-06-01T09:59:58.000Z"), [4200, 1800, 9000, 150_000, 600]),
    );
    // Another session's, on another day; one that has answered nothing yet; one torn as it is
    // written (no record until it is whole).
    let other = "5e1f0000-0000-4000-8000-00000000d002";
    env.write(&format!("{dir}/{other}.jsonl"), line(json!({"type": "session_start", "id": other, "cwd": "/w/app"})));
    env.write(
        &format!("{dir}/{other}.settings.json"),
        settings(sonnet, Some("2026-06-02T08:00:00.000Z"), [10, 20, 0, 300, 0]),
    );
    env.write(&format!("{dir}/5e1f0000-0000-4000-8000-00000000d003.settings.json"), settings(sonnet, None, [0; 5]));
    let torn = settings(sonnet, Some("2026-06-03T08:00:00.000Z"), [1, 1, 1, 1, 1]);
    let torn_rel = format!("{dir}/5e1f0000-0000-4000-8000-00000000d004.settings.json");
    env.write(&torn_rel, &torn[..torn.len() / 2]);
    index(&env);
    let total = |t: [u64; 4], thinking: u64| t.iter().sum::<u64>() + thinking;
    assert_eq!(
        droid_usage(&env, "session"),
        [
            (other.to_owned(), [1, 10, 20, 300, 0, 0, 330]),
            (SESSION.to_owned(), [1, 4200, 2400, 150_000, 9000, 600, total([4200, 1800, 9000, 150_000], 600)]),
        ],
        "one response each, its thinking counted as output and said as reasoning"
    );
    let invalid: i64 = env.conn().query_row("SELECT count(*) FROM invalid_lines", [], |r| r.get(0)).unwrap();
    assert_eq!(invalid, 0, "a settings file torn as it is written is not yet read, and is no error");
    // The settings are bookkeeping: the session lists once, as its transcript names it, and its
    // history shows the person's words only; the torn file is no session yet.
    assert_eq!(env.sessions_listed().len(), 3, "{:?}", env.sessions_listed());
    assert_eq!(
        env.sessions_listed().iter().find(|s| s.0 == SESSION).unwrap().2.as_deref(),
        Some("Investigate red button")
    );

    // ccusage reads the same files, and agrees: the same input and caches, its output without the
    // thinking it adds to the total.
    if let Some(bin) = crate::usage::ccusage() {
        let home = env.dir.path().join("home");
        std::fs::create_dir_all(&home).unwrap();
        let out = std::process::Command::new(bin)
            .args(["droid", "daily", "--json", "--offline", "--timezone", "UTC"])
            .env("HOME", &home)
            .env("DROID_SESSIONS_DIR", env.path("factory/sessions"))
            .env("NO_COLOR", "1")
            .output()
            .unwrap();
        assert!(out.status.success(), "ccusage: {}", String::from_utf8_lossy(&out.stderr));
        let theirs: Value = serde_json::from_slice(&out.stdout).unwrap();
        let theirs: Vec<(String, [u64; 5])> = theirs["daily"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| {
                let n = |k: &str| d[k].as_u64().unwrap();
                let counts = ["inputTokens", "outputTokens", "cacheReadTokens", "cacheCreationTokens", "totalTokens"];
                (d["date"].as_str().unwrap().to_owned(), counts.map(n))
            })
            .collect();
        let ours: Vec<(String, [u64; 5])> = droid_usage(&env, "day")
            .into_iter()
            .map(|(day, [_, input, output, read, write, reasoning, total])| {
                (day, [input, output - reasoning, read, write, total])
            })
            .collect();
        assert_eq!(ours, theirs);
    }

    // Droid rewrites the settings in place as the session goes on: the totals follow, live, one
    // response still; the torn file, completed, counts.
    let server = Server::start(&env, &["--root", &root(&env)]);
    server.wait_for_sessions(3);
    env.write(
        &format!("{dir}/{SESSION}.settings.json"),
        settings(sonnet, Some("2026-06-01T09:59:58.000Z"), [5000, 2500, 9000, 300_000, 700]),
    );
    env.write(&torn_rel, &torn);
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let report = server.json("/api/usage?by=session&agent=droid");
        let rows = report["rows"].as_array().unwrap();
        let mine = rows.iter().find(|r| r["key"] == SESSION).unwrap();
        if rows.len() == 3 && mine["outputTokens"] == 3200 {
            assert_eq!((mine["responses"].as_u64(), mine["inputTokens"].as_u64()), (Some(1), Some(5000)), "{report}");
            assert_eq!(report["total"]["responses"], 3, "{report}");
            break;
        }
        assert!(Instant::now() < deadline, "the ledger did not follow the settings: {report}");
        std::thread::sleep(Duration::from_millis(50));
    }
    let page: Value = server.get(&format!("/api/sessions/{SESSION}/history?view=true&limit=50")).json().unwrap();
    let shown: Vec<&Value> =
        page["entries"].as_array().unwrap().iter().filter(|e| !e["view"]["who"].is_null()).collect();
    assert_eq!(shown.len(), 1, "the person's words, not the settings: {page}");
}
