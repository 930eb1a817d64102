//! Codex CLI and Gemini CLI beside Claude Code: each read from a root of its format, every photo
//! served by ref byte-exact, no payload byte in SQLite, every line restored byte for byte, and the
//! agents' replays (repeated events, forks, rewritten messages, rewinds, checkpoints) shown as the
//! agents show them. On generated transcripts (always) and on the corpus's public samples
//! (`fixtures/codex`, `fixtures/gemini`; see their PROVENANCE.md), which skip without it.

use std::os::unix::fs::MetadataExt;
use std::path::Path;

use crate::util::fixtures::{codex, gemini};
use crate::util::server::Server;
use crate::util::{Env, b64, check_invariants, corpus, fake_png};

/// The uuids a session's history shows, in order (side chains included).
fn shown(conn: &rusqlite::Connection, session: &str) -> Vec<String> {
    let page =
        scrollback::read::history::history(conn, session, scrollback::read::history::Position::Newest, 500, true)
            .unwrap()
            .unwrap();
    page.entries.iter().filter_map(|e| e.columns.uuid.clone()).collect()
}

pub(crate) fn root_args(env: &Env) -> Vec<String> {
    vec![
        "--root".into(),
        format!("codex:{}", env.path("codex/sessions").display()),
        "--root".into(),
        format!("gemini:{}", env.path("gemini/tmp").display()),
    ]
}

fn index_roots(env: &Env) -> String {
    env.index_roots(&root_args(env))
}

#[test]
fn generated_codex_and_gemini_transcripts_keep_every_photo_and_replay_as_their_agents_show_them() {
    let env = Env::new();
    let codex_photos = [fake_png(1, 300), fake_png(2, 400), fake_png(3, 500), fake_png(4, 3 << 20)];
    let gemini_photos = [fake_png(5, 600), fake_png(6, 700)];
    let thread = "01a0c0de-0000-7000-8000-0000000000f1";
    let codex = env.write(&codex::rollout(thread), codex::with_photos(thread, &codex_photos));
    let chat = env.write(
        "gemini/tmp/demo/chats/session-2026-11-30T09-00-5e55a0de.jsonl",
        gemini::with_rewind("5e55a0de-1", &gemini_photos),
    );
    env.write(
        "gemini/tmp/demo/chats/session-2026-03-01T08-00-5e55a0de.json",
        "{\"sessionId\":\"legacy\",\"messages\":[]}\n",
    );
    // A Claude transcript under the Claude root, to show the three side by side.
    env.write("p/claude-1.jsonl", crate::util::user_line("claude-1", "c-u1", "\"hello from Claude\"", "") + "\n");
    let summary = index_roots(&env);
    assert!(summary.starts_with("indexed 4 files"), "{summary}");
    let invalid: Vec<String> = env
        .conn()
        .prepare("SELECT path || ':' || line || ' ' || reason FROM invalid_lines")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap();
    assert!(invalid.is_empty(), "{invalid:?}");
    let checked = check_invariants(&env.data);
    assert_eq!(checked, 21, "every line of the three transcripts restored");

    // Every photo by its ref, byte-exact: the user's, the tool output's, the MCP result's, the big one.
    assert_eq!(env.photos_of(&codex), codex_photos.to_vec());
    assert_eq!(env.photos_of(&chat), gemini_photos.to_vec());
    let conn = env.conn();
    // The event's copy of the user's photo is stripped too (no ref: it is no image block).
    let (payloads, stored): (i64, i64) = conn
        .query_row(
            "SELECT count(*), (SELECT max(length(stored_line(stripped))) FROM entries e2 JOIN files f2 ON f2.id = e2.file_id WHERE f2.path = ?1)
             FROM media m JOIN entries e ON e.id = m.entry_id JOIN files f ON f.id = e.file_id WHERE f.path = ?1",
            [codex.to_str().unwrap()],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!(payloads, 5);
    assert!(stored < 2000, "no payload in a stored line: the longest is {stored} bytes");

    // Codex: repeated events hidden; the title skips the injected context.
    let agents: Vec<(String, String, Option<String>)> = conn
        .prepare("SELECT id, agent, title FROM sessions ORDER BY id")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap();
    assert_eq!(
        agents,
        [
            (thread.to_owned(), "codex".to_owned(), Some("What is in the harbour photo?".to_owned())),
            ("5e55a0de-1".to_owned(), "gemini".to_owned(), Some("A lighthouse photo".to_owned())),
            ("claude-1".to_owned(), "claude".to_owned(), Some("hello from Claude".to_owned())),
        ]
    );
    assert_eq!(shown(&conn, thread), ["L1", "L2", "L3", "L5", "L6", "L7", "L8", "L10"]);
    // Gemini: the last write of m1 shows; the rewind undid u2 and m2.
    let gemini: Vec<String> = shown(&conn, "5e55a0de-1").into_iter().filter(|u| !u.starts_with('L')).collect();
    assert_eq!(gemini, ["u1", "m1", "u3"]);
    let hidden: Vec<(String, String)> = conn
        .prepare("SELECT uuid, hidden FROM entries WHERE hidden IS NOT NULL ORDER BY id")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap();
    let pairs: Vec<(&str, &str)> = hidden.iter().map(|(u, h)| (u.as_str(), h.as_str())).collect();
    assert_eq!(pairs, [("L4", "repeat"), ("L9", "repeat"), ("m1", "rewritten"), ("u2", "rewound"), ("m2", "rewound")]);
    // Search finds each agent's words once, and filters by agent.
    let hits = scrollback::read::history::search(&conn, "harbour", None, 20).unwrap();
    let mut found: Vec<&str> = hits.iter().map(|h| h.entry_uuid.as_deref().unwrap()).collect();
    found.sort();
    assert_eq!(found, ["L3", "L8"], "the message and the answer, not the events that repeat them");
    let scope = scrollback::read::history::Scope { agent: Some("gemini"), ..Default::default() };
    assert!(scrollback::read::history::search_in(&conn, "harbour", scope, 20).unwrap().is_empty());
    // The answer (its last write only) and the summary that names the session.
    assert_eq!(scrollback::read::history::search_in(&conn, "lighthouse", scope, 20).unwrap().len(), 2);

    // A second run reads nothing again.
    assert!(index_roots(&env).starts_with("indexed 0 files, 0 lines"));
}

#[test]
fn the_api_filters_by_agent_and_serves_each_agents_photos() {
    let env = Env::new();
    let photos = [fake_png(11, 300), fake_png(12, 400), fake_png(13, 500), fake_png(14, 600)];
    let thread = "01a0c0de-0000-7000-8000-0000000000f2";
    env.write(&codex::rollout(thread), codex::with_photos(thread, &photos));
    env.write(
        "gemini/tmp/demo/chats/session-2026-11-30T09-00-5e55a0de.jsonl",
        gemini::with_rewind("5e55a0de-2", &[fake_png(15, 300), fake_png(16, 300)]),
    );
    let missing = env.path("nowhere");
    let mut args = root_args(&env);
    args.extend(["--root".into(), format!("codex:{}", missing.display())]);
    let server = Server::start(&env, &args.iter().map(String::as_str).collect::<Vec<_>>());
    server.wait_for_sessions(2);
    let codex = server.json("/api/sessions?agent=codex");
    let listed: Vec<&str> = codex["sessions"].as_array().unwrap().iter().map(|s| s["id"].as_str().unwrap()).collect();
    assert_eq!(listed, [thread]);
    assert_eq!(codex["sessions"][0]["agent"], "codex");
    assert_eq!(server.get("/api/sessions?agent=nonesuch").status(), 400);
    let status = server.json("/api/status");
    let roots: Vec<(String, bool)> = status["roots"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (format!("{}:{}", r["agent"].as_str().unwrap(), r["dir"].as_str().unwrap()), r["exists"].as_bool().unwrap())
        })
        .collect();
    assert!(roots.contains(&(format!("codex:{}", missing.display()), false)), "{roots:?}");
    assert_eq!(status["agents"]["gemini"], 1);
    // The user's photo, through its rendered block's URL, byte-exact.
    let history = server.json(&format!("/api/sessions/{thread}/history"));
    let entries = history["entries"].as_array().unwrap();
    assert!(entries.iter().all(|e| e["agent"] == "codex"));
    let user = entries.iter().find(|e| e["uuid"] == "L3").unwrap();
    let block = &user["entry"]["payload"]["content"][1];
    assert_eq!(block["ref"], format!("{thread}/L3/0"));
    let bytes = server.get(block["url"].as_str().unwrap()).bytes().unwrap();
    assert_eq!(bytes.as_ref(), photos[0].as_slice());
    let hits = server.json("/api/search?group=none&q=lighthouse&agent=gemini");
    assert_eq!(hits["hits"][0]["agent"], "gemini");
}

/// Compresses `plain` as Codex does: `<name>.zst` at level 3 with the same modification time,
/// then the plain file deleted. Returns the compressed file's path.
fn compress_like_codex(plain: &Path) -> std::path::PathBuf {
    let packed = plain.with_file_name(format!("{}.zst", plain.file_name().unwrap().to_str().unwrap()));
    let bytes = std::fs::read(plain).unwrap();
    std::fs::write(&packed, zstd::stream::encode_all(&bytes[..], 3).unwrap()).unwrap();
    let mtime = std::fs::metadata(plain).unwrap().modified().unwrap();
    std::fs::File::options().write(true).open(&packed).unwrap().set_modified(mtime).unwrap();
    std::fs::remove_file(plain).unwrap();
    packed
}

/// The file rows: (id, path, state, lines).
fn file_rows(env: &Env) -> Vec<(i64, String, String, i64)> {
    env.conn()
        .prepare("SELECT id, path, state, lines FROM files ORDER BY id")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap()
}

#[test]
fn a_rollout_compressed_and_decompressed_again_is_one_transcript_read_once_with_its_photos() {
    let env = Env::new();
    let photos = [fake_png(21, 300), fake_png(22, 400), fake_png(23, 500), fake_png(24, 3 << 20)];
    let thread = "01a0c0de-0000-7000-8000-0000000000f3";
    let plain = env.write(&codex::rollout(thread), codex::with_photos(thread, &photos));
    assert!(index_roots(&env).starts_with("indexed 1 file, 10 lines"));
    let before = file_rows(&env);
    let ids: Vec<i64> = env
        .conn()
        .prepare("SELECT id FROM entries ORDER BY id")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap();

    // Compressed: the same row, moved to the new name; nothing read again; every photo served from
    // the compressed bytes, byte-exact; the vault keeps the compressed file.
    let packed = compress_like_codex(&plain);
    assert!(index_roots(&env).starts_with("indexed 0 files, 0 lines"), "nothing is read twice");
    let after = file_rows(&env);
    assert_eq!(after, [(before[0].0, packed.to_str().unwrap().to_owned(), "live".to_owned(), 10)]);
    let same: Vec<i64> = env
        .conn()
        .prepare("SELECT id FROM entries ORDER BY id")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap();
    assert_eq!(same, ids, "its rows stay");
    assert_eq!(check_invariants(&env.data), 10);
    assert_eq!(env.photos_of(&packed), photos.to_vec());
    // Its JSONL export is the decompressed lines, each verified against the index (offsets are the
    // stream's, not the compressed file's).
    let out = env.dir.path().join("rollout.jsonl");
    let run = env.run(&["export", thread, "--format", "jsonl", "-o", out.to_str().unwrap()]);
    let said = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success() && !said.contains("index's copy"), "{said}");
    assert_eq!(std::fs::read_to_string(&out).unwrap(), codex::with_photos(thread, &photos));
    let vault: String = env.conn().query_row("SELECT vault FROM files", [], |r| r.get(0)).unwrap();
    assert!(vault.ends_with(".jsonl.zst"), "{vault}");
    let linked = std::fs::metadata(&vault).unwrap();
    let file = std::fs::metadata(&packed).unwrap();
    assert_eq!((linked.dev(), linked.ino()), (file.dev(), file.ino()), "the vault links the compressed file");
    {
        // Over HTTP too: the 3 MB one is checked whole, then streamed.
        let args = root_args(&env);
        let server = Server::start(&env, &args.iter().map(String::as_str).collect::<Vec<_>>());
        server.wait_for_sessions(1);
        for (line, photo) in [("L3", &photos[0]), ("L10", &photos[3])] {
            let res = server.get(&format!("/api/session-media/{thread}/{line}/0"));
            assert_eq!(res.status(), 200);
            assert_eq!(res.bytes().unwrap().as_ref(), photo.as_slice());
        }
    }

    // While both names exist the plain one is read: a compressed twin beside it is not a second copy.
    let extra_photo = fake_png(25, 800);
    let line = codex::line(
        "2026-11-30T10:01:00.000Z",
        "response_item",
        serde_json::json!({ "type": "message", "role": "user", "content": [
        { "type": "input_text", "text": "And this one?" },
        { "type": "input_image", "image_url": format!("data:image/png;base64,{}", b64(&extra_photo)) } ] }),
    );
    // Decompressed again to append, as Codex does: the plain file first, then the compressed one goes.
    let mut bytes = zstd::stream::decode_all(&std::fs::read(&packed).unwrap()[..]).unwrap();
    std::fs::write(&plain, &bytes).unwrap();
    assert!(index_roots(&env).starts_with("indexed 0 files, 0 lines"), "the plain twin is the same transcript");
    std::fs::remove_file(&packed).unwrap();
    bytes.extend_from_slice(line.as_bytes());
    std::fs::write(&plain, &bytes).unwrap();
    assert!(index_roots(&env).starts_with("indexed 1 file, 1 line"), "only the new line is read");
    let back = file_rows(&env);
    assert_eq!(back, [(before[0].0, plain.to_str().unwrap().to_owned(), "live".to_owned(), 11)]);
    assert_eq!(check_invariants(&env.data), 11);
    let mut expected = photos.to_vec();
    expected.push(extra_photo);
    assert_eq!(env.photos_of(&plain), expected);

    // Compressed once more, then deleted: gone, and its photos still served from the vault.
    let packed = compress_like_codex(&plain);
    index_roots(&env);
    std::fs::remove_file(&packed).unwrap();
    let out = index_roots(&env);
    assert!(out.contains("1 gone"), "{out}");
    let rows = file_rows(&env);
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].2, "gone");
    assert_eq!(env.media(&format!("{thread}/L10/0")).unwrap(), photos[3]);

    // A compressed file that does not decode is said, and the others are indexed all the same.
    let other = "01a0c0de-0000-7000-8000-0000000000f4";
    let good = env.write(&codex::rollout(other), codex::with_photos(other, &photos));
    let broken = env.path(&codex::rollout("01a0c0de-0000-7000-8000-0000000000f5")).with_extension("jsonl.zst");
    let mut torn = zstd::stream::encode_all(&std::fs::read(&good).unwrap()[..], 3).unwrap();
    torn.truncate(torn.len() / 2);
    std::fs::write(&broken, torn).unwrap();
    let out = env.cmd().arg("index").args(root_args(&env)).env("RUST_LOG", "scrollback=warn").output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("cannot decompress (zstd): incomplete frame"), "{stderr}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.starts_with("indexed 1 file, 10 lines") && stdout.contains("1 failed"), "{stdout}");
}

#[test]
fn huge_codex_and_gemini_lines_index_with_their_photos_byte_exact_and_none_of_their_bytes_stored() {
    let env = Env::new();
    // 48 MiB photos: 64 MiB of base64 in one line each.
    let (codex_photo, gemini_photo) = (fake_png(31, 48 << 20), fake_png(32, 48 << 20));
    let thread = "01a0c0de-0000-7000-8000-0000000000f6";
    let mut rollout_body = codex::line(
        "2026-11-30T10:00:00.000Z",
        "session_meta",
        serde_json::json!({ "id": thread, "cwd": "/work/demo" }),
    );
    rollout_body += &format!(
        "{{\"timestamp\":\"2026-11-30T10:00:01.000Z\",\"type\":\"response_item\",\"payload\":{{\"type\":\"function_call_output\",\"call_id\":\"c1\",\"output\":[{{\"type\":\"input_text\",\"text\":\"a full-page screenshot\"}},{{\"type\":\"input_image\",\"image_url\":\"data:image/png;base64,{}\"}}]}}}}\n",
        b64(&codex_photo)
    );
    let codex = env.write(&codex::rollout(thread), rollout_body);
    let mut chat_body =
        serde_json::json!({ "sessionId": "5e55a0de-9", "startTime": "2026-11-30T09:00:00.000Z" }).to_string() + "\n";
    chat_body += &format!(
        "{{\"id\":\"u1\",\"timestamp\":\"2026-11-30T09:00:01.000Z\",\"type\":\"user\",\"content\":[{{\"text\":\"the whole map\"}},{{\"inlineData\":{{\"mimeType\":\"image/png\",\"data\":\"{}\"}}}}]}}\n",
        b64(&gemini_photo)
    );
    let chat = env.write("gemini/tmp/demo/chats/session-2026-11-30T09-00-5e55a0de.jsonl", chat_body);
    assert!(index_roots(&env).starts_with("indexed 2 files, 4 lines, 2 payloads"));
    assert_eq!(check_invariants(&env.data), 4);
    assert_eq!(env.photos_of(&codex), [codex_photo]);
    assert_eq!(env.photos_of(&chat), [gemini_photo]);
    let longest: i64 =
        env.conn().query_row("SELECT max(length(stored_line(stripped))) FROM entries", [], |r| r.get(0)).unwrap();
    assert!(longest < 1000, "the stored lines hold no payload: the longest is {longest} bytes");
}

/// The corpus's public samples, in the trees their agents keep them in: Codex's rollouts (the
/// samples not named `rollout-*` given one) and Gemini's chats (the legacy `.json` among them).
pub(crate) fn fixtures_env() -> Option<Env> {
    let codex = corpus("fixtures/codex")?;
    let gemini = corpus("fixtures/gemini")?;
    let env = Env::new();
    for dir in std::fs::read_dir(&codex).unwrap() {
        for file in crate::util::jsonl_files(&dir.unwrap().path()) {
            let name = file.file_name().unwrap().to_str().unwrap().to_owned();
            let name = match name.strip_prefix("synthetic-") {
                Some(rest) => rest.to_owned(),
                None if name.starts_with("rollout-") => name,
                None => format!("rollout-2026-01-01T00-00-00-{}.jsonl", name.trim_end_matches(".jsonl")),
            };
            env.write(&format!("codex/sessions/2026/11/30/{name}"), std::fs::read(&file).unwrap());
        }
    }
    for dir in std::fs::read_dir(&gemini).unwrap() {
        for file in std::fs::read_dir(dir.unwrap().path()).unwrap() {
            let file = file.unwrap().path();
            let name = file.file_name().unwrap().to_str().unwrap().to_owned();
            env.write(&format!("gemini/tmp/demo/chats/{name}"), std::fs::read(&file).unwrap());
        }
    }
    Some(env)
}

#[test]
fn the_public_codex_and_gemini_samples_index_whole_with_their_photos_byte_exact() {
    let Some(env) = fixtures_env() else { return };
    let summary = index_roots(&env);
    // 15 rollouts, 4 JSONL chats and 4 legacy JSON chats.
    assert!(summary.starts_with("indexed 23 files,"), "{summary}");
    assert!(summary.contains(" 0 invalid lines"), "{summary}");
    let lines = check_invariants(&env.data);
    assert!(lines > 5000, "{lines}");
    let conn = env.conn();
    // Every photo of the synthetic samples (real PNGs) comes back by ref, a PNG.
    let mut refs: Vec<String> = conn
        .prepare("SELECT ref FROM photos WHERE ref IS NOT NULL ORDER BY ref")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap();
    refs.sort();
    assert!(refs.len() >= 10, "{refs:?}");
    for r in &refs {
        let bytes = env.media(r).unwrap_or_else(|e| panic!("{r}: {e:?}"));
        assert!(bytes.starts_with(b"\x89PNG\r\n\x1a\n"), "{r} is a PNG");
    }
    // The fork shows its own turn only; its parent's copied lines are hidden as copies.
    let fork = "01a0c0de-0000-7000-8000-00000000b002";
    let parent: Option<String> =
        conn.query_row("SELECT forked_from FROM sessions WHERE id = ?1", [fork], |r| r.get(0)).unwrap();
    assert_eq!(parent.as_deref(), Some("01a0c0de-0000-7000-8000-00000000b001"));
    let copies: i64 = conn
        .query_row("SELECT count(*) FROM entries WHERE session_id = ?1 AND hidden = 'fork'", [fork], |r| r.get(0))
        .unwrap();
    assert_eq!(copies, 13);
    // Gemini's replays: after the rewind u1, m1, m2, u3, m4; after the checkpoint, its messages and h-m4.
    let messages =
        |session: &str| -> Vec<String> { shown(&conn, session).into_iter().filter(|u| !u.starts_with('L')).collect() };
    assert_eq!(messages("5e55a0de-0000-4000-8000-000000000001"), ["g-u1", "g-m1", "g-m2", "g-u3", "g-m4"]);
    assert_eq!(messages("5e55a0de-0000-4000-8000-000000000002"), ["h-m4"]);
    let checkpoint: i64 = conn
        .query_row(
            "SELECT count(*) FROM entries WHERE session_id = '5e55a0de-0000-4000-8000-000000000002' AND type = 'checkpoint' AND duplicate = 0",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(checkpoint, 1);
    // The message ids the CLI wrote twice show once, their last write.
    let twice: i64 = conn
        .query_row(
            "SELECT count(*) FROM entries e JOIN files f ON f.id = e.file_id WHERE f.path LIKE '%gemini.jsonl' AND e.hidden = 'rewritten'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(twice, 5);
    // The legacy JSON chats: each message an entry, titled by their first words (none has a summary).
    for (session, messages) in [
        ("5e55a0de-0000-4000-8000-000000000003", 3),
        ("5b959dae-8655-4cd1-b10f-720b8c336ea2", 0),
        ("37b7abef-713d-4522-85f0-8ff15a4e6d17", 0),
        ("8a20078e-2d5e-4f81-a640-9b879bbb7e6d", 0),
    ] {
        let (entries, title, agent): (i64, Option<String>, String) = conn
            .query_row("SELECT entries, title, agent FROM sessions WHERE id = ?1", [session], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?))
            })
            .unwrap_or_else(|e| panic!("{session}: {e}"));
        assert_eq!(agent, "gemini");
        assert!(title.is_some_and(|t| !t.is_empty()), "{session} has a title");
        assert!(entries > 0 && (messages == 0 || entries == messages), "{session}: {entries}");
    }
    let legacy_tokens: i64 =
        conn.query_row("SELECT count(*) FROM usage WHERE key = 'gemini:l-m1'", [], |r| r.get(0)).unwrap();
    assert_eq!(legacy_tokens, 1);
}

/// Each entry's place in its conversation and search text, and each session's title and agent, in a
/// stable order.
type Entry = (String, i64, Option<String>, String, i64, Option<String>);
type Derived = (Vec<Entry>, Vec<(String, Option<String>, String)>);

fn derived(env: &Env) -> Derived {
    let conn = env.conn();
    let texts = conn
        .prepare(
            "SELECT session_id, line, uuid, sort_at, sort_file, nullif(concat_ws(char(10), text, tool_text, tools), '') AS t
             FROM entries ORDER BY session_id, line, uuid, t",
        )
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?)))
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap();
    let sessions = conn
        .prepare("SELECT id, title, agent FROM sessions ORDER BY id")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap();
    (texts, sessions)
}

/// A rebuild derives every row again by the format that wrote it: Codex's and Gemini's places in
/// their conversations, search text and titles come out as the index had them (derived by Claude
/// Code's rules, the text and titles were lost and the order's file part changed).
#[test]
fn a_rebuild_derives_each_agents_rows_by_its_own_format() {
    let env = Env::new();
    let codex_photos = [fake_png(1, 300), fake_png(2, 400), fake_png(3, 500), fake_png(4, 600)];
    let thread = "01a0c0de-0000-7000-8000-0000000000f2";
    env.write(&codex::rollout(thread), codex::with_photos(thread, &codex_photos));
    env.write(
        "gemini/tmp/demo/chats/session-2026-11-30T09-00-5e55a0df.jsonl",
        gemini::with_rewind("5e55a0df-1", &[fake_png(5, 600), fake_png(6, 700)]),
    );
    index_roots(&env);
    let before = derived(&env);
    assert!(before.0.iter().filter(|entry| entry.5.is_some()).count() >= 4, "{before:?}");
    assert!(before.1.iter().all(|(_, title, _)| title.is_some()), "{before:?}");
    let args = root_args(&env);
    let mut all = vec!["rebuild"];
    all.extend(args.iter().map(String::as_str));
    let out = env.run(&all);
    assert!(out.status.success(), "rebuild failed: {}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(derived(&env), before, "after a rebuild");
}

/// A gone transcript of an agent other than the default is carried through a rebuild as its own:
/// its session's agent, order, search text and title come out as the index had them.
#[test]
fn a_gone_transcript_keeps_its_agent_through_a_rebuild() {
    let env = Env::new();
    let codex_photos = [fake_png(1, 300), fake_png(2, 400), fake_png(3, 500), fake_png(4, 600)];
    let thread = "01a0c0de-0000-7000-8000-0000000000f3";
    let rollout_path = env.write(&codex::rollout(thread), codex::with_photos(thread, &codex_photos));
    index_roots(&env);
    std::fs::remove_file(&rollout_path).unwrap();
    index_roots(&env);
    let before = derived(&env);
    assert_eq!(before.1.iter().map(|(_, _, agent)| agent.as_str()).collect::<Vec<_>>(), ["codex"], "{before:?}");
    assert!(before.0.iter().filter(|entry| entry.5.is_some()).count() >= 4, "{before:?}");
    let args = root_args(&env);
    let mut all = vec!["rebuild"];
    all.extend(args.iter().map(String::as_str));
    let out = env.run(&all);
    assert!(out.status.success(), "rebuild failed: {}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).contains("1 gone transcript carried over"), "{out:?}");
    assert_eq!(derived(&env), before, "after a rebuild");
}

/// #39.8: a zstd bomb (a small `.jsonl.zst` that decompresses to far more than any transcript) is
/// refused once its output passes the bound (`SCROLLBACK_MAX_DECOMPRESSED`, set small here), said
/// in the log, leaves nothing in the data directory, and is not decompressed again until it changes.
#[test]
fn a_zstd_bomb_is_refused_at_its_bound_remembered_and_read_again_once_it_changes() {
    let env = Env::new();
    let thread = "01a0c0de-0000-7000-8000-0000000000b8";
    let meta = codex::line(
        "2026-11-30T10:00:00.000Z",
        "session_meta",
        serde_json::json!({ "id": thread, "cwd": "/work/demo" }),
    );
    // 8 MB of one repeated line: a few kilobytes compressed.
    let filler = codex::line(
        "2026-11-30T10:00:01.000Z",
        "event_msg",
        serde_json::json!({ "type": "agent_message", "message": "x".repeat(1000) }),
    );
    let bomb = meta.clone() + &filler.repeat(8 << 20 >> 10);
    let plain = env.write(&codex::rollout(thread), &bomb);
    let packed = compress_like_codex(&plain);
    assert!(std::fs::metadata(&packed).unwrap().len() < 100_000);
    let run = || {
        let mut cmd = env.cmd();
        cmd.env("SCROLLBACK_MAX_DECOMPRESSED", "1000000").env("RUST_LOG", "scrollback=info").arg("index");
        cmd.args(root_args(&env));
        cmd.output().unwrap()
    };
    let out = run();
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "a refused transcript is a failed one: {log}");
    assert!(log.contains("refused") && log.contains("1000000"), "{log}");
    assert!(file_rows(&env).is_empty(), "nothing of it indexed");
    // Nothing of it left in the data directory (the scratch file is unlinked, then dropped).
    let kept: u64 = std::fs::read_dir(&env.data).unwrap().map(|e| e.unwrap().metadata().unwrap().len()).sum();
    assert!(kept < 1_000_000, "{kept} bytes in the data directory");
    // Not decompressed again while it is the same file.
    let out = run();
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{log}");
    assert!(log.contains("refused before"), "{log}");
    // Once it changes (a rollout under the bound in its place), it is read.
    std::fs::remove_file(&packed).unwrap();
    let plain = env.write(&codex::rollout(thread), meta + &filler);
    compress_like_codex(&plain);
    let out = run();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(file_rows(&env).len(), 1);
    assert_eq!(file_rows(&env)[0].3, 2, "both lines");
}

/// A legacy Gemini chat (before v0.39): one `ConversationRecord`, pretty-printed as the CLI's
/// `JSON.stringify(conversation, null, 2)` writes it, with a photo in the user's content and one
/// in a tool result, the answer's `tokens`, and `summary` after `messages`. `more` adds a turn.
fn gemini_legacy(session: &str, photos: &[Vec<u8>; 2], more: bool) -> String {
    let mut messages = vec![
        serde_json::json!({ "id": "l-u1", "timestamp": "2026-03-01T08:00:00.000Z", "type": "user",
            "content": [{ "text": "What does this logo say?" }, { "inlineData": { "mimeType": "image/png", "data": b64(&photos[0]) } }] }),
        serde_json::json!({ "id": "l-m1", "timestamp": "2026-03-01T08:00:04.000Z", "type": "gemini",
            "content": "It is a green checkerboard.",
            "thoughts": [{ "subject": "Looking", "description": "no glyphs", "timestamp": "2026-03-01T08:00:03.000Z" }],
            "toolCalls": [{ "id": "t1", "name": "read_file", "args": { "file_path": "b.png" }, "status": "success",
                "timestamp": "2026-03-01T08:00:02.000Z",
                "result": [{ "functionResponse": { "id": "t1", "name": "read_file", "response": { "output": "read" },
                    "parts": [{ "inlineData": { "mimeType": "image/png", "data": b64(&photos[1]) } }] } }] }],
            "tokens": { "input": 1800, "output": 14, "cached": 0, "thoughts": 60, "tool": 0, "total": 1874 },
            "model": "gemini-2.5-pro" }),
    ];
    if more {
        // The CLI writes the chat again whole: an earlier message grown in place, a new turn.
        messages[0]["content"][0]["text"] = "What does this logo say? Read it closely, letter by letter.".into();
        messages.push(serde_json::json!({ "id": "l-u2", "timestamp": "2026-03-01T08:01:00.000Z", "type": "user",
            "content": [{ "text": "And the colours?" }] }));
        messages.push(serde_json::json!({ "id": "l-m2", "timestamp": "2026-03-01T08:01:02.000Z", "type": "gemini",
            "content": "Green and white.", "tokens": { "input": 1900, "output": 5, "cached": 0, "total": 1905 },
            "model": "gemini-2.5-pro" }));
    }
    let chat = serde_json::json!({ "sessionId": session, "projectHash": "0f", "startTime": "2026-03-01T08:00:00.000Z",
        "lastUpdated": if more { "2026-03-01T08:01:02.000Z" } else { "2026-03-01T08:00:04.000Z" },
        "messages": messages, "summary": "Read a logo" });
    serde_json::to_string_pretty(&chat).unwrap()
}

/// #35.8: a legacy `.json` chat is indexed like a JSONL one: each message an entry at its own
/// offset, its photos served by seeking byte-exact, its tokens in the ledger, its summary the title;
/// and written again whole, it is read again whole, nothing doubled or lost, photos re-pointed.
#[test]
fn a_legacy_gemini_json_chat_is_indexed_with_photos_tokens_and_title_and_read_again_when_rewritten() {
    let env = Env::new();
    let photos = [fake_png(41, 700), fake_png(42, 900)];
    let rel = "gemini/tmp/demo/chats/session-2026-03-01T08-00-5e55a0dd.json";
    let session = "5e55a0dd-0000-4000-8000-000000000035";
    let chat = env.write(rel, gemini_legacy(session, &photos, false));
    let summary = index_roots(&env);
    assert!(summary.starts_with("indexed 1 file, 2 lines, 2 payloads, 0 invalid lines"), "{summary}");
    assert_eq!(check_invariants(&env.data), 2, "each message restored byte for byte from its offsets");
    assert_eq!(env.photos_of(&chat), photos.to_vec());
    let conn = env.conn();
    let (title, agent, entries): (String, String, i64) = conn
        .query_row("SELECT title, agent, entries FROM sessions WHERE id = ?1", [session], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?))
        })
        .unwrap();
    assert_eq!((title.as_str(), agent.as_str(), entries), ("Read a logo", "gemini", 2));
    let usage: Vec<(String, i64, i64)> = conn
        .prepare("SELECT key, input_tokens, output_tokens FROM usage ORDER BY key")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap();
    assert_eq!(usage, [("gemini:l-m1".to_owned(), 1800, 74)]);
    assert!(index_roots(&env).starts_with("indexed 0 files"), "unchanged, not read again");

    // Live: the CLI writes the chat again whole (every offset after the first message moves).
    let server = Server::start(&env, &root_args(&env).iter().map(String::as_str).collect::<Vec<_>>());
    server.wait_for_sessions(1);
    let photo = |ordinal_ref: &str| server.get(&format!("/api/session-media/{session}/{ordinal_ref}")).bytes().unwrap();
    assert_eq!(photo("l-u1/0").as_ref(), photos[0].as_slice());
    std::fs::write(&chat, gemini_legacy(session, &photos, true)).unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let history = server.json(&format!("/api/sessions/{session}/history"));
        let uuids: Vec<&str> =
            history["entries"].as_array().unwrap().iter().map(|e| e["uuid"].as_str().unwrap()).collect();
        if uuids.len() == 4 {
            assert_eq!(uuids, ["l-u1", "l-m1", "l-u2", "l-m2"], "each message once");
            break;
        }
        assert!(std::time::Instant::now() < deadline, "the rewrite was not read: {uuids:?}");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    // The refs stay, re-pointed to the photos' new offsets, byte-exact.
    assert_eq!(photo("l-u1/0").as_ref(), photos[0].as_slice());
    assert_eq!(photo("l-m1/0").as_ref(), photos[1].as_slice());
    drop(server);
    assert_eq!(check_invariants(&env.data), 4);
    let keys: i64 = env.conn().query_row("SELECT count(*) FROM usage", [], |r| r.get(0)).unwrap();
    assert_eq!(keys, 2, "each response once");
}

/// Gemini CLI names a project's folder by a slug of its name (and, before, by the SHA-256 of its
/// directory), and records the directory in `.project_root` beside `chats`: a session's project
/// is that directory, not the folder's name; where no file records it, the folder's name stays.
#[test]
fn a_gemini_session_s_project_is_the_directory_its_project_root_file_records() {
    let env = Env::new();
    let photos = [fake_png(51, 300), fake_png(52, 300)];
    env.write(
        "gemini/tmp/lighthouse/chats/session-2026-11-30T09-00-5e55a0d1.jsonl",
        gemini::with_rewind("5e55a0d1-1", &photos),
    );
    env.write("gemini/tmp/lighthouse/.project_root", "/home/me/work/lighthouse\n");
    let hash = "3f2a9c1e".repeat(8);
    env.write(
        &format!("gemini/tmp/{hash}/chats/session-2026-11-30T09-00-5e55a0d2.jsonl"),
        gemini::with_rewind("5e55a0d2-1", &photos),
    );
    index_roots(&env);
    let conn = env.conn();
    let project = |id: &str| -> Option<String> {
        conn.query_row("SELECT project FROM sessions WHERE id = ?1", [id], |r| r.get(0)).unwrap()
    };
    assert_eq!(project("5e55a0d1-1").as_deref(), Some("/home/me/work/lighthouse"));
    assert_eq!(project("5e55a0d2-1"), Some(hash), "nothing records it: the folder's name");
}
