//! OpenCode's sessions: rows of its SQLite database, generated as OpenCode 1.2 writes them (see
//! `util::fixtures::opencode`): every part kind, a person's photo and a tool's 3 MB one, usage per
//! step, a row that is not JSON and one that is not UTF-8, rows written again in place, a session
//! deleted, and the database written while it is read. Every photo served by ref byte-exact from
//! its row, no payload byte in SQLite, every line of the rendered sessions restored byte for byte,
//! and the session as OpenCode shows it, over the API, live.

use std::path::Path;
use std::time::{Duration, Instant};

use rusqlite::Connection;
use serde_json::{Value, json};

use crate::util::fixtures::opencode::{self as oc, T0};
use crate::util::server::Server;
use crate::util::{Env, check_invariants, fake_png};

const A: &str = "ses_7f3c2a1b0e9dAbCdEfGhIjKlMn";
const B: &str = "ses_7f3c2a1b0e9cZyXwVuTsRqPoNm";

fn root(env: &Env) -> String {
    format!("opencode:{}", env.path("opencode").display())
}

fn index(env: &Env) -> String {
    env.index_roots(&["--root".into(), root(env)])
}

/// Session A: a question with a photo and a file OpenCode read for the person; an answer with its
/// thinking, a tool call whose result has a 3 MB photo, its text and two steps' counts.
fn write_a(conn: &Connection, photos: &[Vec<u8>]) {
    oc::session(conn, A, "Fix the red button", T0);
    oc::message(conn, A, "msg_01", T0 + 100, &oc::user(T0 + 100));
    oc::part(
        conn,
        A,
        "msg_01",
        "prt_01",
        T0 + 100,
        &json!({"type": "text", "text": "why is the button red?"}).to_string(),
    );
    oc::part(conn, A, "msg_01", "prt_02", T0 + 100, &oc::photo(&photos[0], "shot.png").to_string());
    let read = json!({"type": "text", "synthetic": true, "text": "Called the Read tool with the following input: {\"filePath\":\"src/App.css\"}"});
    oc::part(conn, A, "msg_01", "prt_03", T0 + 100, &read.to_string());
    oc::message(conn, A, "msg_02", T0 + 1000, &oc::assistant(T0 + 1000, "msg_01", oc::tokens(900, 40, 0, 2000, 0)));
    oc::part(conn, A, "msg_02", "prt_04", T0 + 1000, r#"{"type":"step-start"}"#);
    oc::part(
        conn,
        A,
        "msg_02",
        "prt_05",
        T0 + 1000,
        &json!({"type": "reasoning", "text": "Check the CSS first.", "time": {"start": T0 + 1000}}).to_string(),
    );
    let tool = json!({"type": "tool", "callID": "toolu_01", "tool": "bash", "state": {"status": "completed",
        "input": {"command": "grep -rn btn src"}, "output": "src/App.css:12: .btn { color: red }", "title": "grep",
        "metadata": {}, "time": {"start": T0 + 1100, "end": T0 + 1200},
        "attachments": [oc::photo(&photos[1], "screen.png")]}});
    oc::part(conn, A, "msg_02", "prt_06", T0 + 1000, &tool.to_string());
    let step = json!({"type": "step-finish", "reason": "tool-calls", "cost": 0.01, "tokens": oc::tokens(1200, 85, 15, 3000, 100)});
    oc::part(conn, A, "msg_02", "prt_07", T0 + 1000, &step.to_string());
    oc::part(
        conn,
        A,
        "msg_02",
        "prt_08",
        T0 + 1000,
        &json!({"type": "text", "text": "The rule in App.css makes it red."}).to_string(),
    );
    let step =
        json!({"type": "step-finish", "reason": "stop", "cost": 0.01, "tokens": oc::tokens(900, 40, 0, 2000, 0)});
    oc::part(conn, A, "msg_02", "prt_09", T0 + 1000, &step.to_string());
    // The other kinds: a compaction, a sub-agent's task and an agent named by the person; a retry,
    // a snapshot and a patch in the answer.
    oc::message(conn, A, "msg_03", T0 + 5000, &oc::user(T0 + 5000));
    oc::part(conn, A, "msg_03", "prt_10", T0 + 5000, r#"{"type":"compaction","auto":true}"#);
    let task =
        json!({"type": "subtask", "prompt": "Find every red rule", "description": "red rules", "agent": "general"});
    oc::part(conn, A, "msg_03", "prt_11", T0 + 5000, &task.to_string());
    oc::part(conn, A, "msg_03", "prt_12", T0 + 5000, r#"{"type":"agent","name":"build"}"#);
    oc::message(conn, A, "msg_04", T0 + 6000, &oc::assistant(T0 + 6000, "msg_03", oc::tokens(0, 0, 0, 0, 0)));
    let retry = json!({"type": "retry", "attempt": 1, "error": {"name": "APIError", "data": {"message": "Overloaded"}}, "time": {"created": T0 + 6100}});
    oc::part(conn, A, "msg_04", "prt_13", T0 + 6000, &retry.to_string());
    oc::part(conn, A, "msg_04", "prt_14", T0 + 6000, r#"{"type":"snapshot","snapshot":"4b825dc6"}"#);
    oc::part(conn, A, "msg_04", "prt_15", T0 + 6000, r#"{"type":"patch","hash":"4b825dc6","files":["src/App.css"]}"#);
}

#[test]
fn opencode_sessions_keep_every_photo_from_their_rows_and_follow_the_database() {
    let env = Env::new();
    let db = env.path("opencode/opencode.db");
    let conn = oc::create(&db);
    let photos = [fake_png(61, 300), fake_png(62, 3 << 20)];
    write_a(&conn, &photos);
    // Session B: a placeholder title, a row that is not JSON and one that is not UTF-8.
    oc::session(&conn, B, "New session - 2026-06-01T11:00:00.000Z", T0 + 3_600_000);
    oc::message(&conn, B, "msg_10", T0 + 3_600_100, &oc::user(T0 + 3_600_100));
    oc::part(&conn, B, "msg_10", "prt_20", T0 + 3_600_100, r#"{"type":"text","text":"hello from a new session"}"#);
    oc::part(&conn, B, "msg_10", "prt_21", T0 + 3_600_100, "{not json");
    conn.execute(
        "INSERT INTO part VALUES ('prt_22', 'msg_10', ?1, ?2, ?2, CAST(x'7b2274797065223a2274657874222c2274657874223a22ff227d' AS TEXT))",
        rusqlite::params![B, T0 + 3_600_100],
    )
    .unwrap();
    // OpenCode's older JSON tree beside it is not read; nor are its logs.
    env.write("opencode/storage/session/0f1e2d/ses_old.json", "{}");
    env.write("opencode/log/2026-06-01.log", "INFO started\n");

    let summary = index(&env);
    assert!(summary.starts_with("indexed 2 files, 25 lines, 2 payloads, 2 invalid lines"), "{summary}");
    assert_eq!(
        env.sessions_listed(),
        [
            (B.into(), "opencode".into(), Some("hello from a new session".into()), Some("/w/app".into())),
            (A.into(), "opencode".into(), Some("Fix the red button".into()), Some("/w/app".into())),
        ]
    );
    let invalid: Vec<String> = env
        .conn()
        .prepare("SELECT reason FROM invalid_lines ORDER BY line")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap();
    assert_eq!(invalid.len(), 2, "{invalid:?}");
    assert!(invalid[0].starts_with("not JSON") && invalid[1].starts_with("not UTF-8"), "{invalid:?}");
    assert_eq!(check_invariants(&env.data), 23, "every line but the two invalid ones restored byte for byte");
    let session_a = db.join(A);
    assert_eq!(env.photos_of(&session_a), photos.to_vec(), "the person's photo and the tool's, from their rows");
    let longest = longest_stored_line(&env);
    assert!(longest < 2000, "no payload in a stored line: the longest is {longest} bytes");
    let conn_index = env.conn();
    let usage: Vec<(String, i64, i64, i64)> = conn_index
        .prepare("SELECT model, input_tokens, output_tokens, cache_read_tokens FROM usage ORDER BY input_tokens")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap();
    assert_eq!(
        usage,
        [("claude-sonnet-4-5".into(), 900, 40, 2000), ("claude-sonnet-4-5".into(), 1200, 100, 3000)],
        "each step's counts, not the answer's (its last step's) again"
    );
    drop(conn_index);

    // Unchanged rows: nothing read again.
    let again = index(&env);
    assert!(again.starts_with("indexed 0 files, 0 lines"), "{again}");

    // A photo's row written again with other bytes: refused, never a wrong byte.
    let other = fake_png(63, 300);
    oc::part(&conn, A, "msg_01", "prt_02", T0 + 100, &oc::photo(&other, "shot.png").to_string());
    let reference = format!("{A}/prt_02/0");
    assert!(env.media(&reference).is_err(), "the row changed since it was indexed");
    index(&env);
    assert_eq!(env.media(&reference).unwrap(), other);

    // Over HTTP, live: the parts as OpenCode shows them, photos by ref, and rows as they are written.
    let server = Server::start(&env, &["--root", &root(&env)]);
    server.wait_for_sessions(2);
    let res = server.get(&format!("/api/session-media/{A}/prt_06/0"));
    assert_eq!(res.status(), 200);
    assert_eq!(res.bytes().unwrap().as_ref(), photos[1].as_slice());
    // A photo's row written again while the server runs: a 409 (and the session read again), or the
    // new bytes once it is; never a byte that is not the row's.
    let third = fake_png(64, 500);
    oc::part(&conn, A, "msg_01", "prt_02", T0 + 100, &oc::photo(&third, "shot.png").to_string());
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let res = server.get(&format!("/api/session-media/{A}/prt_02/0"));
        match res.status().as_u16() {
            200 => {
                assert_eq!(res.bytes().unwrap().as_ref(), third.as_slice());
                break;
            }
            409 => assert!(Instant::now() < deadline, "never read again"),
            other => panic!("{other}: {}", res.text().unwrap()),
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let page: Value = server.get(&format!("/api/sessions/{A}/history?view=true&limit=50")).json().unwrap();
    let entries = page["entries"].as_array().unwrap();
    let view =
        |u: &str| entries.iter().find(|e| e["uuid"] == u).unwrap_or_else(|| panic!("{u}: {page}"))["view"].clone();
    assert_eq!(view("prt_01")["who"]["side"], "user");
    assert_eq!(
        view("prt_02")["parts"][0]["kind"],
        "media",
        "{}",
        entries.iter().find(|e| e["uuid"] == "prt_02").unwrap()
    );
    assert_eq!(view("prt_03")["parts"][0]["label"], "Context for the model");
    assert_eq!(view("prt_05")["parts"][0]["kind"], "thinking");
    let tool = view("prt_06");
    let kinds: Vec<&str> = tool["parts"].as_array().unwrap().iter().map(|p| p["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["toolCall", "toolResult"], "{tool}");
    assert_eq!(view("prt_08")["who"]["name"], "OpenCode");
    for (part, says) in
        [("prt_10", "Context compacted"), ("prt_11", "red rules"), ("prt_12", "build"), ("prt_13", "Overloaded")]
    {
        assert!(view(part).to_string().contains(says), "{part}: {}", view(part));
    }
    for bookkeeping in ["prt_04", "prt_07", "prt_14", "prt_15", "msg_01"] {
        assert!(view(bookkeeping)["who"].is_null(), "{bookkeeping} is not shown: {}", view(bookkeeping));
    }

    // OpenCode writes while the server reads: an answer streamed into place, then a session deleted.
    let writer = std::thread::spawn(move || {
        for i in 0..40u32 {
            let id = format!("msg_2{i:02}");
            let at = T0 + 10_000 + i64::from(i) * 1000;
            oc::message(&conn, A, &id, at, &oc::assistant(at, "msg_01", oc::tokens(10, 1, 0, 0, 0)));
            let part = format!("prt_2{i:02}");
            oc::part(&conn, A, &id, &part, at, r#"{"type":"text","text":""}"#);
            oc::part(
                &conn,
                A,
                &id,
                &part,
                at,
                &json!({"type": "text", "text": format!("streamed answer {i}")}).to_string(),
            );
        }
        conn.execute("DELETE FROM session WHERE id = ?1", [B]).unwrap();
        conn
    });
    let conn = writer.join().unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let page: Value = server.get(&format!("/api/sessions/{A}/history?limit=200")).json().unwrap();
        let text = page.to_string();
        if text.contains("streamed answer 39") {
            break;
        }
        assert!(Instant::now() < deadline, "the rows written live never showed: {page}");
        std::thread::sleep(Duration::from_millis(100));
    }
    drop(server);
    index(&env);
    let gone: String =
        env.conn().query_row("SELECT state FROM files WHERE path LIKE '%' || ?1", [B], |r| r.get(0)).unwrap();
    assert_eq!(gone, "gone", "a deleted session is marked gone, its rows kept");
    assert_eq!(env.sessions_listed().len(), 2);
    assert_eq!(check_invariants(&env.data), 20 + 80, "session A, its answers written live included");
    assert!(!Path::new(&format!("{}-journal", db.display())).exists(), "never written");

    // Its JSONL export is the rendered lines, photos restored, each verified against the index.
    let export = |name: &str| {
        let out = env.dir.path().join(name);
        let run = env.run(&["export", A, "--format", "jsonl", "-o", out.to_str().unwrap()]);
        let said = String::from_utf8_lossy(&run.stderr);
        assert!(run.status.success() && !said.contains("index's copy"), "{said}");
        std::fs::read(&out).unwrap()
    };
    let live = export("live.jsonl");
    assert!(live.windows(20).any(|w| w == &crate::util::b64(&photos[1]).as_bytes()[..20]), "the 3 MB photo");
    assert_eq!(live.iter().filter(|&&b| b == b'\n').count(), 100);

    // OpenCode deletes session A: the vault kept the document its last pass read, so its photos and
    // its lines are all there still.
    conn.execute("DELETE FROM session WHERE id = ?1", [A]).unwrap();
    let summary = index(&env);
    assert!(summary.contains("1 gone"), "{summary}");
    assert_eq!(env.photos_of(&session_a), [third, photos[1].clone()].to_vec(), "served from the vault");
    assert_eq!(export("gone.jsonl"), live);
    let status = env.run(&["status"]);
    let said = String::from_utf8_lossy(&status.stdout);
    assert!(status.status.success() && !said.contains("broken"), "{said}");
}

#[test]
fn a_database_that_is_no_longer_one_answers_photos_with_a_4xx() {
    let env = Env::new();
    let db = env.path("opencode/opencode.db");
    let photos = [fake_png(71, 300), fake_png(72, 900)];
    oc::sample(&db, &photos);
    // The vault off: with it, once the writer has seen the database go, the render it kept of the
    // session serves the photo (200, verified), and this would race the writer.
    let server = Server::start(&env, &["--root", &root(&env), "--vault", "off"]);
    server.wait_for_sessions(1);
    let url = format!("/api/session-media/{}/prt_s2/0", oc::SESSION);
    assert_eq!(server.get(&url).bytes().unwrap().as_ref(), photos[0].as_slice());
    // Another file in its place, and then none.
    std::fs::write(&db, vec![b'x'; 8192]).unwrap();
    let status = server.get(&url).status().as_u16();
    assert!((400..500).contains(&status), "{status}");
    std::fs::remove_file(&db).unwrap();
    let status = server.get(&url).status().as_u16();
    assert!((400..500).contains(&status), "{status}");
}

#[test]
fn a_session_asked_for_again_once_its_database_moved_away_is_gone_not_moved() {
    let env = Env::new();
    let dir = env.path("opencode");
    let db = dir.join("opencode.db");
    oc::sample(&db, &[fake_png(81, 300), fake_png(82, 400)]);
    let mut indexer = scrollback::Indexer::open(&env.data).unwrap();
    indexer.set_roots(&[scrollback::Root::parse(&root(&env)).unwrap()]).unwrap();
    assert_eq!(indexer.catch_up(&dir, &mut scrollback::NoProgress).unwrap().lines, 8);
    // Moved to another name of the root's (its identity kept), and a reader asks for the session
    // again (a payload that no longer matched, say).
    std::fs::rename(&db, dir.join("opencode-old.db")).unwrap();
    let session = db.join(oc::SESSION);
    indexer.reindex_path(&session).unwrap();
    drop(indexer);
    let rows: Vec<(String, String)> = env
        .conn()
        .prepare("SELECT path, state FROM files ORDER BY id")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap();
    assert_eq!(rows, [(session.display().to_string(), "gone".to_owned())], "never moved to another file's path");
}

#[test]
fn a_forgotten_opencode_session_stays_forgotten_as_opencode_writes_to_it() {
    let env = Env::new();
    let db = env.path("opencode/opencode.db");
    oc::sample(&db, &[fake_png(91, 300), fake_png(92, 400)]);
    index(&env);
    let kept = |env: &Env| -> Vec<String> {
        std::fs::read_dir(env.data.join("vault"))
            .map(|d| d.flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect())
            .unwrap_or_default()
    };
    assert!(kept(&env).iter().any(|n| n.contains(oc::SESSION)), "the vault keeps its render: {:?}", kept(&env));
    let out = env.run(&["forget", oc::SESSION]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(!kept(&env).iter().any(|n| n.contains(oc::SESSION)), "its render went with it: {:?}", kept(&env));
    // OpenCode goes on with the session: its rows change, and its stamp with them.
    let conn = rusqlite::Connection::open(&db).unwrap();
    oc::message(&conn, oc::SESSION, "msg_s3", T0 + 9000, &oc::user(T0 + 9000));
    oc::part(&conn, oc::SESSION, "msg_s3", "prt_s6", T0 + 9000, r#"{"type":"text","text":"one more thing"}"#);
    index(&env);
    let entries: i64 = env
        .conn()
        .query_row("SELECT count(*) FROM entries WHERE session_id = ?1", [oc::SESSION], |r| r.get(0))
        .unwrap();
    assert_eq!(entries, 0, "forgotten for good");
    assert!(env.photos_of(&db.join(oc::SESSION)).is_empty());
}

#[test]
fn an_opencode_session_gone_from_its_database_keeps_its_photos_through_a_rebuild() {
    let env = Env::new();
    let db = env.path("opencode/opencode.db");
    let photos = [fake_png(101, 300), fake_png(102, 400)];
    oc::sample(&db, &photos);
    let other = "ses_7f3c2a1b0e99ZzYyXxWwVvUu";
    {
        let conn = rusqlite::Connection::open(&db).unwrap();
        oc::session(&conn, other, "Another", T0);
        oc::message(&conn, other, "msg_o1", T0 + 100, &oc::user(T0 + 100));
        oc::part(&conn, other, "msg_o1", "prt_o1", T0 + 100, &oc::photo(&fake_png(103, 500), "o.png").to_string());
    }
    index(&env);
    // OpenCode deletes the sample's session; the other stays.
    rusqlite::Connection::open(&db).unwrap().execute("DELETE FROM session WHERE id = ?1", [oc::SESSION]).unwrap();
    assert!(index(&env).contains("1 gone"));
    let gone = db.join(oc::SESSION);
    assert_eq!(env.photos_of(&gone), photos.to_vec(), "from the vault");
    let out = env.run(&["rebuild", "--root", &root(&env)]);
    assert!(out.status.success(), "rebuild failed: {}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).contains("1 gone transcript carried over"), "{out:?}");
    assert_eq!(env.photos_of(&gone), photos.to_vec(), "still from the vault, after the rebuild");
    assert_eq!(env.photos_of(&db.join(other)), [fake_png(103, 500)].to_vec(), "the live one, from its row");
    // The vault holds a render for each session and no other: the old index's for the live one went.
    let renders = std::fs::read_dir(env.data.join("vault")).unwrap().count();
    assert_eq!(renders, 2);
}

/// The length of the index's longest stored line (a payload left in one would make it long).
fn longest_stored_line(env: &Env) -> i64 {
    env.conn().query_row("SELECT max(length(stored_line(stripped))) FROM entries", [], |r| r.get(0)).unwrap()
}

/// The stored lines of the index that hold `word`.
fn lines_with(env: &Env, word: &str) -> i64 {
    env.conn()
        .query_row("SELECT count(*) FROM entries WHERE instr(stored_line(stripped), ?1) > 0", [word], |r| r.get(0))
        .unwrap()
}

#[test]
fn a_part_of_a_long_session_written_again_a_millisecond_later_is_read_again() {
    // 20,000 parts at one time: their times add up past 2^54, where a float's step is 4 ms, so a
    // sum of floats could not see a row written again 1 ms later.
    let env = Env::new();
    let conn = oc::create(&env.path("opencode/opencode.db"));
    oc::session(&conn, A, "A long session", T0);
    oc::message(&conn, A, "msg_01", T0, &oc::user(T0));
    conn.execute_batch("BEGIN").unwrap();
    for i in 0..20_000 {
        oc::part(&conn, A, "msg_01", &format!("prt_{i:05}"), T0, r#"{"type":"text","text":"the first word"}"#);
    }
    conn.execute_batch("COMMIT").unwrap();
    index(&env);
    assert_eq!(lines_with(&env, "kestrel"), 0);
    conn.execute(
        "UPDATE part SET data = '{\"type\":\"text\",\"text\":\"a kestrel\"}', time_updated = time_updated + 1
         WHERE id = 'prt_12345'",
        [],
    )
    .unwrap();
    let again = index(&env);
    assert!(again.starts_with("indexed 1 file,"), "{again}");
    assert_eq!(lines_with(&env, "kestrel"), 1, "the part written again is read again");
}

#[test]
fn a_row_of_an_odd_type_is_read_as_what_it_says_and_the_rest_of_its_session_is_indexed() {
    let env = Env::new();
    let conn = oc::create(&env.path("opencode/opencode.db"));
    write_a(&conn, &[fake_png(91, 300), fake_png(92, 400)]);
    // A message whose time is text, and one whose id is a number with a role that is a number.
    conn.execute(
        "INSERT INTO message (id, session_id, time_created, time_updated, data)
         VALUES ('msg_09', ?1, '1 failed', '1 failed', '{\"role\":\"user\"}')",
        [A],
    )
    .unwrap();
    oc::part(&conn, A, "msg_09", "prt_90", T0, r#"{"type":"text","text":"an odd row's words"}"#);
    conn.execute(
        "INSERT INTO message (id, session_id, time_created, time_updated, data) VALUES (42, ?1, ?2, ?2, '{\"role\":7}')",
        rusqlite::params![A, T0 + 7000],
    )
    .unwrap();
    let summary = index(&env);
    assert!(summary.starts_with("indexed 1 file,"), "{summary}");
    assert_eq!(env.sessions_listed()[0].2.as_deref(), Some("Fix the red button"), "the session is indexed");
    assert_eq!(lines_with(&env, "an odd row's words"), 1, "the odd message's part too");
    assert_eq!(lines_with(&env, "why is the button red?"), 1, "and the rest");
}

#[test]
fn a_title_of_100_mb_is_read_by_its_head_and_cut() {
    let env = Env::new();
    let conn = oc::create(&env.path("opencode/opencode.db"));
    write_a(&conn, &[fake_png(93, 300), fake_png(94, 400)]);
    let title = format!("Fix {}", "x".repeat(100 << 20));
    conn.execute("UPDATE session SET title = ?2 WHERE id = ?1", [A, &title]).unwrap();
    drop(title);
    drop(conn);
    let kb = crate::memory::peak_of_index(&env.data, &[root(&env)]);
    let title = env.sessions_listed()[0].2.clone().unwrap();
    assert!(title.starts_with("Fix xxx") && title.chars().count() <= 300, "{title:?}");
    assert!(kb < 64 * 1024, "indexing a session with a 100 MB title peaked at {kb} kB");
}

const N: &str = "ses_7f3c2a1b0e9bNeWsEsSiOnV2aa";
const C: &str = "ses_7f3c2a1b0e9aOlDcLiEnTaFtEr";

/// Session N, written by OpenCode 2 only: a question with two photos attached, an answer with its
/// thinking, a tool whose result holds a 3 MB photo, and its text, and a `!command` the person ran.
fn write_n(conn: &Connection, photos: &[Vec<u8>]) {
    oc::session_v2(conn, N, None, T0 + 7_200_000);
    let at = T0 + 7_200_100;
    oc::row(
        conn,
        N,
        "msg_n1",
        4,
        at,
        &oc::user_v2(at, "why is the logo blurry?", &[(&photos[0], "a.png"), (&photos[1], "b.png")]),
    );
    let content = json!([
        {"type": "reasoning", "text": "Compare the two sizes."},
        oc::tool_v2("call_n1", "read", json!({"filePath": "/w/app/logo@1x.png"}), "Image read successfully", Some(&photos[2])),
        {"type": "text", "text": "The logo is drawn at half its size."}
    ]);
    oc::row(conn, N, "msg_n2", 7, at + 1000, &oc::assistant_v2(at + 1000, content, oc::tokens(700, 25, 5, 300, 0)));
    let shell = json!({"type": "shell", "time": {"created": at + 5000, "completed": at + 5100}, "shellID": "sh_1",
        "command": "git status", "status": "exited", "exit": 0,
        "output": {"output": "nothing to commit", "cursor": 0, "size": 17, "truncated": false}});
    oc::row(conn, N, "msg_n3", 9, at + 5000, &shell);
}

#[test]
fn opencode_2_sessions_are_read_from_their_rows_and_each_session_once() {
    let env = Env::new();
    let db = env.path("opencode/opencode.db");
    let conn = oc::create(&db);
    let old = [fake_png(111, 300), fake_png(112, 400)];
    write_a(&conn, &old);
    // OpenCode 2 upgrades the database and copies session A (ids kept, its parts folded into its
    // messages); a 1.x build writes session C afterwards, which is not copied.
    oc::upgrade(&conn);
    conn.execute("INSERT INTO kv VALUES ('migration.v1-v2', '{\"phase\":\"completed\"}', ?1, ?1)", [T0 + 7_000_000])
        .unwrap();
    oc::session_v2(&conn, A, Some("Fix the red button"), T0);
    oc::row(
        &conn,
        A,
        "msg_01",
        0,
        T0 + 100,
        &oc::user_v2(T0 + 100, "why is the button red?", &[(&old[0], "shot.png")]),
    );
    let content = json!([oc::tool_v2("toolu_01", "bash", json!({"command": "grep -rn btn src"}), "src/App.css:12", Some(&old[1])),
                         {"type": "text", "text": "The rule in App.css makes it red."}]);
    oc::row(
        &conn,
        A,
        "msg_02",
        1,
        T0 + 1000,
        &oc::assistant_v2(T0 + 1000, content, oc::tokens(2100, 125, 15, 5000, 100)),
    );
    oc::session(&conn, C, "Written by a 1.x build after the copy", T0 + 8_000_000);
    oc::message(&conn, C, "msg_c1", T0 + 8_000_100, &oc::user(T0 + 8_000_100));
    oc::part(&conn, C, "msg_c1", "prt_c1", T0 + 8_000_100, r#"{"type":"text","text":"an old client's question"}"#);
    let photos = [fake_png(113, 300), fake_png(114, 500), fake_png(115, 3 << 20)];
    write_n(&conn, &photos);

    let summary = index(&env);
    // A: its header and two rows; C: its header, message and part; N: its header and three rows.
    assert!(summary.starts_with("indexed 3 files, 10 lines, 5 payloads, 0 invalid lines"), "{summary}");
    assert_eq!(
        env.sessions_listed(),
        [
            (C.into(), "opencode".into(), Some("Written by a 1.x build after the copy".into()), Some("/w/app".into())),
            (N.into(), "opencode".into(), Some("why is the logo blurry?".into()), Some("/w/app".into())),
            (A.into(), "opencode".into(), Some("Fix the red button".into()), Some("/w/app".into())),
        ]
    );
    assert_eq!(check_invariants(&env.data), 10, "every line restored byte for byte");
    assert_eq!(env.photos_of(&db.join(N)), photos.to_vec(), "the person's two photos and the tool's, from their row");
    assert_eq!(env.photos_of(&db.join(A)), old.to_vec(), "session A's, from its copy");
    let longest = longest_stored_line(&env);
    assert!(longest < 3000, "no payload in a stored line: the longest is {longest} bytes");
    let usage: Vec<(String, String, i64, i64)> = env
        .conn()
        .prepare("SELECT session_id, key, input_tokens, output_tokens FROM usage ORDER BY session_id")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap();
    assert_eq!(
        usage,
        [(N.into(), "opencode:msg_n2".into(), 700, 30), (A.into(), "opencode:msg_02".into(), 2100, 140)],
        "each answer's own counts, once: not A's 1.x steps again, nor the sessions' sums"
    );
    assert!(index(&env).starts_with("indexed 0 files, 0 lines"), "unchanged rows are not read again");

    // Over HTTP, live: the rows as OpenCode shows them, a photo by ref, an answer streamed in place.
    let server = Server::start(&env, &["--root", &root(&env)]);
    server.wait_for_sessions(3);
    let res = server.get(&format!("/api/session-media/{N}/msg_n2/0"));
    assert_eq!(res.status(), 200);
    assert_eq!(res.bytes().unwrap().as_ref(), photos[2].as_slice());
    let page: Value = server.get(&format!("/api/sessions/{N}/history?view=true&limit=50")).json().unwrap();
    let entries = page["entries"].as_array().unwrap();
    let view =
        |u: &str| entries.iter().find(|e| e["uuid"] == u).unwrap_or_else(|| panic!("{u}: {page}"))["view"].clone();
    let kinds = |u: &str| -> Vec<String> {
        view(u)["parts"].as_array().unwrap().iter().map(|p| p["kind"].as_str().unwrap().to_owned()).collect()
    };
    assert_eq!(view("msg_n1")["who"]["side"], "user");
    assert_eq!(kinds("msg_n1"), ["text", "media", "media"]);
    // Every photo the view shows links to its bytes: the person's two, and the tool's.
    let shown: Vec<String> = view("msg_n1")["parts"]
        .as_array()
        .unwrap()
        .iter()
        .chain(view("msg_n2")["parts"][2]["media"].as_array().unwrap())
        .filter_map(|p| p["url"].as_str().map(str::to_owned))
        .collect();
    assert_eq!(shown.len(), 3, "{}", view("msg_n2"));
    for (url, png) in shown.iter().zip(&photos) {
        assert_eq!(server.get(url).bytes().unwrap().as_ref(), png.as_slice(), "{url}");
    }
    assert_eq!(kinds("msg_n2"), ["thinking", "toolCall", "toolResult", "text"]);
    assert_eq!(view("msg_n2")["who"]["name"], "OpenCode");
    assert_eq!(kinds("msg_n3"), ["command", "output"]);
    let found: Value = server.get("/api/search?q=blurry").json().unwrap();
    assert!(found.to_string().contains(N), "{found}");

    // OpenCode 2 writes an answer in place while the server reads: its row inserted, then updated.
    let writer = std::thread::spawn(move || {
        let at = T0 + 7_300_000;
        for i in 0..20u32 {
            let content = json!([{"type": "text", "text": format!("streamed answer {i}")}]);
            oc::row(&conn, N, "msg_n4", 12, at, &oc::assistant_v2(at, content, oc::tokens(10, 1, 0, 0, 0)));
        }
        conn
    });
    let conn = writer.join().unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let page: Value = server.get(&format!("/api/sessions/{N}/history?limit=200")).json().unwrap();
        if page.to_string().contains("streamed answer 19") {
            break;
        }
        assert!(Instant::now() < deadline, "the row written in place never showed: {page}");
        std::thread::sleep(Duration::from_millis(100));
    }
    drop(server);

    // OpenCode 2 deletes session N (its rows go with it): the vault keeps what was read.
    conn.execute("DELETE FROM session_v2 WHERE id = ?1", [N]).unwrap();
    assert!(index(&env).contains("1 gone"));
    assert_eq!(env.photos_of(&db.join(N)), photos.to_vec(), "served from the vault");
    assert!(!Path::new(&format!("{}-journal", db.display())).exists(), "never written");
}
