//! Factory Droid's sessions, generated from the facts docs/formats.md cites: every record kind, a
//! person's photo and a tool's, a 3 MB photo line, a non-UTF-8 line and a torn one, the first line
//! written again in place (a new title), an append, and a session of an older build directly in
//! `sessions/`. Every photo served by ref byte-exact, no payload byte in SQLite, every line
//! restored byte for byte, and the session as Droid shows it, over the API and MCP's renderer.

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

fn sessions(env: &Env) -> Vec<(String, String, Option<String>, Option<String>)> {
    env.conn()
        .prepare("SELECT id, agent, title, project FROM sessions ORDER BY id")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap()
}

#[test]
fn droid_sessions_keep_every_photo_and_read_as_droid_shows_them() {
    let env = Env::new();
    let photos = [fake_png(41, 300), fake_png(42, 400), fake_png(43, 3 << 20)];
    let (_, bytes) = body(&photos);
    let mut file = start("Investigate red button").into_bytes();
    file.extend_from_slice(&bytes);
    let path = env.write(&format!("factory/sessions/-w-app/{SESSION}.jsonl"), &file);
    // The settings beside it are no transcript; an older build's session sits in `sessions/` itself.
    env.write(&format!("factory/sessions/-w-app/{SESSION}.settings.json"), "{\"tokenUsage\":{\"inputTokens\":1}}");
    let old = env.write(
        &format!("factory/sessions/{OLD}.jsonl"),
        line(json!({"type": "session_start", "id": OLD, "title": "an old flat session", "owner": "a", "version": 2}))
            + &line(json!({"type": "message", "id": "o1", "timestamp": "2025-10-01T09:00:00.000Z",
                "message": {"role": "user", "content": "hello from an older build"}})),
    );
    let summary = index(&env);
    assert!(summary.starts_with("indexed 2 files, 11 lines"), "{summary}");
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
    assert_eq!(check_invariants(&env.data), 10, "every complete line but the non-UTF-8 one restored byte for byte");
    assert_eq!(env.photos_of(&path), photos.to_vec(), "the person's, the tool's and the 3 MB one");
    let longest: i64 =
        conn.query_row("SELECT max(length(stored_line(stripped))) FROM entries", [], |r| r.get(0)).unwrap();
    assert!(longest < 2000, "no payload in a stored line: the longest is {longest} bytes");
    assert_eq!(
        sessions(&env),
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
    assert_eq!(sessions(&env)[1].2.as_deref(), Some("Fix the red primary button"));
    assert_eq!(check_invariants(&env.data), 10);
    assert_eq!(env.photos_of(&path), photos.to_vec());

    // The torn line completed, and one more appended: only they are read.
    let more = ":00.000Z\",\"message\":{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"Done.\"}]}}\n"
        .to_owned()
        + &line(json!({"type": "message", "id": "m7", "timestamp": "2026-06-01T11:33:00.000Z",
            "message": {"role": "user", "content": "thanks"}, "parentId": "m6"}));
    env.append(&format!("factory/sessions/-w-app/{SESSION}.jsonl"), more);
    let summary = index(&env);
    assert!(summary.starts_with("indexed 1 file, 2 lines"), "{summary}");
    assert_eq!(check_invariants(&env.data), 12);
}
