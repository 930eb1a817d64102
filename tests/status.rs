//! What a server says of itself (`/api/status`, `/api/info`, `scrollback status`): the roots and what
//! each holds, the data directory, the version, whether an engine runs; and a send to a server
//! without an engine, refused with nothing stored.

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::accept::stored;
use crate::util::{Env, SILENT_ENGINE, Server, user_line};

const S1: &str = "5747a000-0000-4000-8000-000000000001";
const S2: &str = "5747a000-0000-4000-8000-000000000002";

fn two_sessions(env: &Env) {
    env.write(&format!("p/{S1}.jsonl"), user_line(S1, "u1", r#""first""#, "") + "\n");
    env.write(&format!("q/{S2}.jsonl"), user_line(S2, "u2", r#""second""#, "") + "\n");
}

/// The root of `status` whose spec is `spec`.
fn root<'a>(status: &'a Value, spec: &str) -> &'a Value {
    status["roots"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| format!("{}:{}", r["agent"].as_str().unwrap(), r["dir"].as_str().unwrap()) == spec)
        .unwrap_or_else(|| panic!("no root {spec} in {:#}", status["roots"]))
}

#[test]
fn status_names_each_root_with_what_it_holds_the_data_directory_the_version_and_the_engine() {
    let env = Env::new();
    two_sessions(&env);
    let missing = env.path("nowhere");
    let codex = format!("codex:{}", missing.display());
    let claude = format!("claude:{}", env.root.display());
    // The Claude Code root is the test tree's (SCROLLBACK_TRANSCRIPTS).
    let server = Server::start(&env, &["--root", &codex]);
    server.wait_for_sessions(2);
    let status = server.json("/api/status");
    assert_eq!(status["dataDir"], env.data.to_str().unwrap());
    assert_eq!(status["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(status["engine"], false);
    let here = root(&status, &claude);
    assert_eq!((&here["exists"], &here["transcripts"], &here["sessions"]), (&json!(true), &json!(2), &json!(2)));
    let gone = root(&status, &codex);
    assert_eq!((&gone["exists"], &gone["transcripts"], &gone["sessions"]), (&json!(false), &json!(0), &json!(0)));
    assert_eq!(server.json("/api/info")["engine"], false);
    // The CLI says the same, from the same place.
    drop(server);
    let out = env.cmd().args(["status", "--root", &codex]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains(&format!("root            {claude} (exists: 2 transcripts, 2 sessions)")), "{text}");
    assert!(text.contains(&format!("root            {codex} (does not exist)")), "{text}");
    // With an engine, both routes say so.
    let server = Server::start(&env, &SILENT_ENGINE);
    assert_eq!(server.json("/api/status")["engine"], true);
    assert_eq!(server.json("/api/info")["engine"], true);
}

#[test]
fn a_send_to_a_server_without_an_engine_is_refused_and_nothing_is_stored() {
    let env = Env::new();
    two_sessions(&env);
    let server = Server::start(&env, &[]);
    server.wait_for_sessions(2);
    let png = crate::util::fake_png(7, 2000);
    let sends = [
        json!({"clientMessageId": "m1", "chatId": format!("session-{S1}"), "sessionId": S1, "text": "hello"}),
        json!({"clientMessageId": "m2", "chatId": "c2", "text": "a photo",
               "images": [{"url": format!("data:image/png;base64,{}", crate::util::b64(&png))}]}),
    ];
    for body in &sends {
        let res = server.client.post(format!("{}/api/chat/send", server.base)).json(body).send().unwrap();
        assert_eq!(res.status(), StatusCode::CONFLICT);
        let error: Value = res.json().unwrap();
        assert_eq!(error["error"]["code"], "no-engine", "{error}");
        assert!(error["error"]["message"].as_str().unwrap().contains("--engine"), "{error}");
    }
    assert_eq!(stored(&env.data), (0, 0, 0), "no acceptance, no image row, no image file");
    assert_eq!(server.json(&format!("/api/chat/bootstrap?chatId=session-{S1}"))["pending"], json!([]));
    assert_eq!(server.json("/api/status")["acceptancesPending"], 0);
    // The same send to a server with an engine is taken.
    drop(server);
    let server = Server::start(&env, &SILENT_ENGINE);
    let res = server.client.post(format!("{}/api/chat/send", server.base)).json(&sends[1]).send().unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    assert_eq!(stored(&env.data), (1, 1, 1));
}

/// The counts `status` and `index` print, and the same counted over every row of `entries` (no index
/// used): they must agree.
fn counts_and_a_fresh_count(env: &Env) -> ((i64, i64, i64), (i64, i64, i64)) {
    let conn = scrollback::read::index::open(&env.data).unwrap();
    let status = scrollback::read::status::index_status(&conn, &env.data).unwrap();
    let count = |sql: &str| -> i64 { conn.query_row(sql, [], |r| r.get(0)).unwrap() };
    let fresh = (
        count("SELECT count(*) FROM entries NOT INDEXED WHERE duplicate = 0"),
        count("SELECT count(*) FROM entries NOT INDEXED WHERE duplicate = 0 AND invalid IS NOT NULL"),
        count("SELECT count(*) FROM entries NOT INDEXED WHERE duplicate <> 0"),
    );
    ((status.entries, status.invalid_lines, status.hidden_lines), fresh)
}

#[test]
fn the_counts_equal_a_fresh_count_after_appends_copies_invalid_lines_and_forgets() {
    let env = Env::new();
    let line = |session: &str, uuid: &str| user_line(session, uuid, &format!("\"said {uuid}\""), "") + "\n";
    let mut first = String::new();
    for uuid in ["a1", "a2", "a3"] {
        first += &line(S1, uuid);
    }
    env.write(&format!("p/{S1}.jsonl"), format!("{first}not json\n"));
    env.write(&format!("q/{S2}.jsonl"), format!("{}{{\"torn\n", line(S2, "b1")));
    env.index();
    let (counts, fresh) = counts_and_a_fresh_count(&env);
    assert_eq!(counts, fresh);
    assert_eq!(counts, (6, 2, 0));
    // An append, with another invalid line, and a second transcript of the first session that
    // copies two of its entries (as a resumed session does): the copies are hidden.
    env.append(&format!("p/{S1}.jsonl"), format!("{}also not json\n", line(S1, "a4")));
    env.write(&format!("p/resumed-{S1}.jsonl"), format!("{}{}{}", line(S1, "a1"), line(S1, "a2"), line(S1, "c1")));
    env.index();
    let (counts, fresh) = counts_and_a_fresh_count(&env);
    assert_eq!(counts, fresh);
    assert_eq!(counts, (9, 3, 2));
    // The first session forgotten: its lines, copies and invalid ones go.
    let out = env.run(&["forget", S1]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let (counts, fresh) = counts_and_a_fresh_count(&env);
    assert_eq!(counts, fresh);
    assert_eq!(counts, (2, 1, 0));
}
