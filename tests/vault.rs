//! The vault: a hard link per transcript in the data directory, so that a deleted transcript's
//! photos are still served, at no disk cost while it exists; and what happens where links cannot be.

use std::os::unix::fs::MetadataExt;

use reqwest::StatusCode;
use serde_json::Value;

use crate::util::Server;
use crate::util::{Env, b64, fake_png, image_block, user_line};

/// Three transcripts with two photos each; returns (ref, blake3, bytes) of every photo.
fn photo_tree(env: &Env) -> Vec<(String, String, Vec<u8>)> {
    let mut photos = Vec::new();
    for s in 0..3 {
        let session = format!("s{s}");
        let mut body = String::new();
        for i in 0..2 {
            let bytes = fake_png(s * 10 + i, 3000 + 500 * i as usize);
            let uuid = format!("u{s}{i}");
            body += &(user_line(&session, &uuid, &format!("[{}]", image_block("image/png", &b64(&bytes))), "") + "\n");
            photos.push((format!("{session}/{uuid}/0"), blake3::hash(&bytes).to_hex().to_string(), bytes));
        }
        env.write(&format!("p/{session}.jsonl"), body);
    }
    photos
}

fn vault_links(env: &Env) -> Vec<std::path::PathBuf> {
    match std::fs::read_dir(env.data.join("vault")) {
        Ok(dir) => dir.map(|e| e.unwrap().path()).collect(),
        Err(_) => Vec::new(),
    }
}

#[test]
fn photos_of_deleted_transcripts_are_served_from_the_vault_byte_exact() {
    let env = Env::new();
    let photos = photo_tree(&env);
    env.index();
    // The links are the transcripts' own inodes: no byte copied.
    let links = vault_links(&env);
    assert_eq!(links.len(), 3);
    for link in &links {
        let meta = std::fs::metadata(link).unwrap();
        assert_eq!(meta.nlink(), 2, "{}: the transcript and its link, one inode", link.display());
    }
    let sizes: u64 = (0..3).map(|s| std::fs::metadata(env.path(&format!("p/s{s}.jsonl"))).unwrap().len()).sum();
    // Every transcript deleted, and the server started afresh on what the index says.
    for s in 0..3 {
        std::fs::remove_file(env.path(&format!("p/s{s}.jsonl"))).unwrap();
    }
    env.index();
    let server = Server::start(&env, &[]);
    let status = server.json("/api/status");
    assert_eq!(status["transcripts"]["gone"], 3, "{status}");
    assert_eq!(status["vault"]["state"], "on");
    assert_eq!(status["vault"]["links"], 3);
    assert_eq!(status["vault"]["onlyInVaultBytes"].as_u64(), Some(sizes), "the bytes only the vault still holds");
    assert_eq!(status["vault"]["broken"], Value::Array(vec![]));
    for (reference, hash, bytes) in &photos {
        for url in [format!("/api/session-media/{reference}"), format!("/api/media/{hash}")] {
            let res = server.get(&url);
            assert_eq!(res.status(), StatusCode::OK, "{url}");
            assert_eq!(res.bytes().unwrap().as_ref(), bytes.as_slice(), "{url}: byte-exact");
        }
    }
    drop(server);
    assert_eq!(env.media(&photos[0].0).unwrap(), photos[0].2, "the CLI reads the vault too");
    let out = String::from_utf8(env.run(&["status"]).stdout).unwrap();
    assert!(out.contains("vault           on: 3 links"), "{out}");
    // A link whose file was deleted by hand is reported, and its photos are then gone.
    std::fs::remove_file(&links[0]).unwrap();
    let out = String::from_utf8(env.run(&["status"]).stdout).unwrap();
    assert!(out.contains("vault problem"), "{out}");
}

#[test]
fn where_links_cannot_be_made_the_vault_is_off_and_says_so() {
    // A data directory on another file system than the transcripts: EXDEV, simulated.
    let env = Env::new();
    let photos = photo_tree(&env);
    let out = env
        .cmd()
        .env(scrollback::ingest::vault::FAULT_VAULT_EXDEV, "1")
        .env("RUST_LOG", "warn")
        .arg("index")
        .output()
        .unwrap();
    assert!(out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.matches("no vault").count(), 1, "said once: {stderr}");
    assert!(vault_links(&env).is_empty(), "nothing copied, nothing linked");
    let status = String::from_utf8(env.run(&["status"]).stdout).unwrap();
    assert!(status.contains("vault           off: the data directory is on another file system"), "{status}");
    // Everything else works; a deleted transcript's photos answer gone.
    assert_eq!(env.media(&photos[0].0).unwrap(), photos[0].2);
    std::fs::remove_file(env.path("p/s0.jsonl")).unwrap();
    env.index();
    let (code, message) = env.media(&photos[0].0).unwrap_err();
    assert_eq!(code, 1);
    assert!(message.contains("is gone"), "{message}");
    let server = Server::start(&env, &["--vault", "off"]);
    assert_eq!(server.get(&format!("/api/session-media/{}", photos[0].0)).status(), StatusCode::GONE);
    assert_eq!(server.get(&format!("/api/session-media/{}", photos[2].0)).status(), StatusCode::OK);
    let status = server.json("/api/status");
    assert_eq!(status["vault"]["off"], "turned off with --vault off", "{status}");
}

#[test]
fn links_follow_replacements_and_are_never_indexed_as_transcripts() {
    let env = Env::new();
    // The data directory inside the transcript tree: its links must not be read as transcripts.
    let data = env.root.join("p").join(".scrollback");
    let index = || {
        let out = env.cmd().env("SCROLLBACK_DATA_DIR", &data).arg("index").output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    };
    let links = || -> Vec<(u64, String)> {
        let mut out: Vec<(u64, String)> = std::fs::read_dir(data.join("vault"))
            .unwrap()
            .map(|e| {
                let e = e.unwrap();
                (e.metadata().unwrap().ino(), e.file_name().into_string().unwrap())
            })
            .collect();
        out.sort();
        out
    };
    env.write("p/a.jsonl", user_line("a", "a1", "\"one\"", "") + "\n");
    index();
    index();
    let conn = scrollback::read::index::open(&data).unwrap();
    let files: i64 = conn.query_row("SELECT count(*) FROM files", [], |r| r.get(0)).unwrap();
    assert_eq!(files, 1, "the vault's link was not indexed");
    let ino = |p: &str| std::fs::metadata(env.path(p)).unwrap().ino();
    assert_eq!(links().iter().map(|l| l.0).collect::<Vec<_>>(), [ino("p/a.jsonl")]);
    // Rewritten in place (same inode): the same link.
    std::fs::write(env.path("p/a.jsonl"), user_line("a", "a2", "\"two\"", "") + "\n").unwrap();
    index();
    assert_eq!(links().iter().map(|l| l.0).collect::<Vec<_>>(), [ino("p/a.jsonl")]);
    // Replaced by rename (a new inode): the new file's link; the old one, needed by no row, goes.
    let tmp = env.path("p/a.jsonl.tmp");
    std::fs::write(&tmp, user_line("a", "a3", "\"three\"", "") + "\n").unwrap();
    std::fs::rename(&tmp, env.path("p/a.jsonl")).unwrap();
    index();
    assert_eq!(links().iter().map(|l| l.0).collect::<Vec<_>>(), [ino("p/a.jsonl")], "no stale link");
    let recorded: String =
        scrollback::read::index::open(&data).unwrap().query_row("SELECT vault FROM files", [], |r| r.get(0)).unwrap();
    assert!(recorded.ends_with(&links()[0].1), "{recorded}");
}

/// Every row of the index that does not belong to `except` (a session), as text, in a stable order.
fn dump(env: &Env, except: &str) -> Vec<String> {
    let conn = env.conn();
    let mut out = Vec::new();
    for (table, sql) in [
        ("sessions", "SELECT * FROM sessions WHERE id != ?1 ORDER BY id"),
        ("entries", "SELECT * FROM entries WHERE session_id != ?1 ORDER BY id"),
        ("media", "SELECT m.* FROM media m JOIN entries e ON e.id = m.entry_id WHERE e.session_id != ?1 ORDER BY m.id"),
        (
            "files",
            "SELECT * FROM files f WHERE EXISTS (SELECT 1 FROM entries e WHERE e.file_id = f.id AND e.session_id != ?1) ORDER BY id",
        ),
        ("fts", "SELECT rowid FROM entries_fts WHERE entries_fts MATCH 'line' ORDER BY rowid"),
    ] {
        let mut stmt = conn.prepare(sql).unwrap();
        let n = stmt.column_count();
        let uses_param = sql.contains("?1");
        let params: Vec<&dyn rusqlite::ToSql> = if uses_param { vec![&except] } else { vec![] };
        let rows = stmt
            .query_map(params.as_slice(), |r| {
                Ok((0..n)
                    .map(|i| format!("{:?}", r.get::<_, rusqlite::types::Value>(i).unwrap()))
                    .collect::<Vec<_>>()
                    .join("|"))
            })
            .unwrap();
        out.extend(rows.map(|r| format!("{table}: {}", r.unwrap())));
    }
    out
}

#[test]
fn forget_removes_a_session_and_nothing_else_until_unforget() {
    let env = Env::new();
    let photos = photo_tree(&env);
    env.write("p/t.jsonl", user_line("t", "t0", "\"a line of t\"", "") + "\n");
    env.index();
    // s2's transcript is deleted: only the index and the vault hold it.
    std::fs::remove_file(env.path("p/s2.jsonl")).unwrap();
    env.index();
    let everything = dump(&env, "");
    let links = vault_links(&env).len();
    // A dry run changes nothing.
    let out = env.run(&["forget", "s1", "--dry-run"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).contains("would forget s1: 2 entries, 2 payload rows, 1 transcript,"));
    assert_eq!(dump(&env, ""), everything);
    // Forgetting s1 removes its rows and nothing else.
    let others = dump(&env, "s1");
    let out = env.run(&["forget", "s1"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(dump(&env, "s1"), others, "the other sessions' rows are untouched");
    let conn = env.conn();
    let left: i64 = conn
        .query_row("SELECT (SELECT count(*) FROM entries WHERE session_id = 's1') + (SELECT count(*) FROM sessions WHERE id = 's1')", [], |r| r.get(0))
        .unwrap();
    assert_eq!(left, 0);
    assert_eq!(vault_links(&env).len(), links - 1, "its vault link went");
    assert!(env.media(&photos[2].0).is_err(), "its photos are unknown now");
    // Not indexed again while its transcript exists, not even by a rebuild from the transcripts...
    for again in [&["index"][..], &["rebuild"]] {
        let out = env.run(again);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let entries: i64 =
            env.conn().query_row("SELECT count(*) FROM entries WHERE session_id = 's1'", [], |r| r.get(0)).unwrap();
        assert_eq!(entries, 0, "{again:?} keeps what was forgotten forgotten");
    }
    // ...until unforget.
    assert!(env.run(&["unforget", "s1"]).status.success());
    env.index();
    assert_eq!(env.media(&photos[2].0).unwrap(), photos[2].2);
    // A gone transcript's session is forgotten with its vault link, whose bytes are freed.
    let out = env.run(&["forget", "s2"]);
    assert!(out.status.success());
    assert_eq!(env.media(&photos[4].0).unwrap_err().0, 1);
    assert_eq!(vault_links(&env).len(), links - 1);
    crate::util::check_invariants(&env.data);
}

#[test]
fn delete_on_the_api_forgets_a_session_as_the_cli_does() {
    let env = Env::new();
    let photos = photo_tree(&env);
    env.write("p/t.jsonl", user_line("t", "t0", "\"a line of t\"", "") + "\n");
    env.index();
    let server = Server::start(&env, &["--token", "sesame-sesame-open", "--rescan-secs", "1", "--engine", "true"]);
    let url = |path: &str| format!("{}{path}", server.base);
    let client = &server.client;
    let with_token = |req: reqwest::blocking::RequestBuilder| req.bearer_auth("sesame-sesame-open").send().unwrap();
    // A message sent into s1, with a photo: the acceptance record holds it and its image file.
    let sent = fake_png(99, 5000);
    let body = serde_json::json!({
        "clientMessageId": "m1", "chatId": "c1", "sessionId": "s1", "text": "look",
        "images": [{ "url": format!("data:image/png;base64,{}", b64(&sent)) }],
    });
    assert_eq!(with_token(client.post(url("/api/chat/send")).json(&body)).status(), StatusCode::OK);
    let image_files = || crate::accept::walk(&env.data.join("accepted-images"));
    assert_eq!(image_files(), 1);
    let others = dump(&env, "s1");
    let mut events = crate::util::server::open_events_with(&server.base, Some("sesame-sesame-open"));

    // Token-protected, same-site only, DELETE only, and an unknown session is a 404.
    assert_eq!(client.delete(url("/api/sessions/s1")).send().unwrap().status(), StatusCode::UNAUTHORIZED);
    let cross = with_token(client.delete(url("/api/sessions/s1")).header("origin", "http://evil.example"));
    assert_eq!(cross.status(), StatusCode::FORBIDDEN);
    let get = with_token(client.get(url("/api/sessions/s1")));
    assert_eq!(get.status(), StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(get.headers()["allow"], "DELETE");
    assert_eq!(with_token(client.delete(url("/api/sessions/nobody"))).status(), StatusCode::NOT_FOUND);
    assert_eq!(with_token(client.get(url("/api/sessions/s1/history"))).status(), StatusCode::OK, "all of it refused");

    let res = with_token(client.delete(url("/api/sessions/s1")));
    assert_eq!(res.status(), StatusCode::OK);
    let done: Value = res.json().unwrap();
    assert_eq!(done["entries"], 2, "{done}");
    assert_eq!(done["photos"], 2, "{done}");
    assert_eq!(done["transcripts"], 1, "{done}");
    assert_eq!(done["messages"], 1, "{done}");
    assert!(done["freedBytes"].as_u64().unwrap() >= sent.len() as u64, "{done}");
    loop {
        let event = crate::util::server::read_event(&mut events);
        if event["type"] == "session-forgotten" {
            assert_eq!(event["sessionId"], "s1");
            break;
        }
    }
    // Gone from every route and from the record; the rest untouched.
    assert_eq!(with_token(client.get(url("/api/sessions/s1/history"))).status(), StatusCode::NOT_FOUND);
    for (reference, hash, _) in &photos[2..4] {
        assert_eq!(
            with_token(client.get(url(&format!("/api/session-media/{reference}")))).status(),
            StatusCode::NOT_FOUND
        );
        assert_eq!(with_token(client.get(url(&format!("/api/media/{hash}")))).status(), StatusCode::NOT_FOUND);
    }
    let sent_hash = blake3::hash(&sent).to_hex().to_string();
    assert_eq!(with_token(client.get(url(&format!("/api/media/{sent_hash}")))).status(), StatusCode::NOT_FOUND);
    let bootstrap: Value = with_token(client.get(url("/api/chat/bootstrap?chatId=c1"))).json().unwrap();
    assert_eq!(bootstrap["pending"], Value::Array(vec![]), "{bootstrap}");
    assert_eq!(image_files(), 0, "the sent photo's file went with it");
    assert_eq!(dump(&env, "s1"), others, "the other sessions' rows are untouched");
    // The transcript grows and the writer rescans: still forgotten.
    env.append("p/s1.jsonl", &(user_line("s1", "u1x", "\"more\"", "") + "\n"));
    std::thread::sleep(std::time::Duration::from_millis(2500));
    assert_eq!(with_token(client.get(url("/api/sessions/s1/history"))).status(), StatusCode::NOT_FOUND);
    assert_eq!(with_token(client.delete(url("/api/sessions/s1"))).status(), StatusCode::NOT_FOUND, "already gone");
    drop(server);
    crate::util::check_invariants(&env.data);
}

#[test]
fn a_data_directory_on_a_real_tmpfs_has_no_vault_and_says_so() {
    // The same as the simulated EXDEV above, with the real thing: the data directory on a tmpfs
    // mount, the transcripts on the test's own file system.
    let env = Env::new();
    let Some(_mount) = crate::util::Tmpfs::mount(&env.data, "64m") else {
        eprintln!("this machine does not let the test mount a tmpfs; the simulated EXDEV test covers the case");
        return;
    };
    let photos = photo_tree(&env);
    let out = env.cmd().env("RUST_LOG", "warn").arg("index").output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.matches("no vault").count(), 1, "said once: {stderr}");
    assert!(vault_links(&env).is_empty(), "nothing copied, nothing linked");
    let status = String::from_utf8(env.run(&["status"]).stdout).unwrap();
    assert!(status.contains("vault           off: the data directory is on another file system"), "{status}");
    std::fs::remove_file(env.path("p/s0.jsonl")).unwrap();
    let server = Server::start(&env, &[]);
    let gone = server.get(&format!("/api/session-media/{}", photos[0].0));
    assert_eq!(gone.status(), StatusCode::GONE);
    for (reference, _, bytes) in &photos[2..] {
        let res = server.get(&format!("/api/session-media/{reference}"));
        assert_eq!(res.status(), StatusCode::OK);
        assert_eq!(res.bytes().unwrap().as_ref(), bytes.as_slice());
    }
    let status = server.json("/api/status");
    assert_eq!(status["vault"]["state"], "off", "{status}");
    assert_eq!(status["transcripts"]["gone"], 1, "{status}");
    drop(server);
    crate::util::check_invariants(&env.data);
}

/// `forget --before` (#22, item 6): anything but `YYYY-MM-DD` or RFC 3339 exits 2 and forgets
/// nothing; instants are compared in UTC (an offset time selects nothing at exactly that instant);
/// more than one session is listed and needs `--yes` when no terminal can confirm.
#[test]
fn forget_before_takes_dates_and_instants_only_and_asks_before_many() {
    let env = Env::new();
    let line = |session: &str, ts: &str| {
        format!(
            r#"{{"cwd":"/work/demo","sessionId":"{session}","type":"user","uuid":"{session}-u","timestamp":"{ts}","message":{{"role":"user","content":"a line of {session}"}}}}"#
        ) + "\n"
    };
    env.write("p/old.jsonl", line("old", "2020-06-01T00:00:00.000Z"));
    env.write("p/edge.jsonl", line("edge", "2026-11-01T10:00:00.000Z"));
    env.write("p/new.jsonl", line("new", "2026-11-30T08:00:00.000Z"));
    env.index();
    // The index holds old's only copy once its transcript is gone.
    std::fs::remove_file(env.path("p/old.jsonl")).unwrap();
    env.index();
    let sessions = || -> Vec<String> {
        let conn = env.conn();
        let mut stmt = conn.prepare("SELECT id FROM sessions ORDER BY id").unwrap();
        stmt.query_map([], |r| r.get(0)).unwrap().map(|r| r.unwrap()).collect()
    };
    let all = vec!["edge".to_string(), "new".into(), "old".into()];
    assert_eq!(sessions(), all);
    for bad in ["yesterday", "Dec 2020", "2026-13-45", "2026-11", "", "11/01/2026"] {
        let out = env.run(&["forget", "--before", bad, "--yes"]);
        assert_eq!(out.status.code(), Some(2), "--before {bad:?}: {}", String::from_utf8_lossy(&out.stderr));
        assert!(String::from_utf8_lossy(&out.stderr).contains("--before"), "{bad:?}");
        assert_eq!(sessions(), all, "--before {bad:?} forgot nothing");
    }
    // 15:00 at +05:00 is 10:00 UTC: edge's last entry is at that instant, not before it.
    let out = env.run(&["forget", "--before", "2026-11-01T15:00:00+05:00", "--dry-run"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let said = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(said.contains("would forget old:") && !said.contains("edge"), "{said}");
    let out = env.run(&["forget", "--before", "2026-11-01T15:00:00.001+05:00", "--dry-run"]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("would forget edge:"));
    // Two sessions and no terminal: listed, nothing forgotten, exit 2.
    let out = env.run(&["forget", "--before", "2026-11-02"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(
        err.contains("these 2 sessions would be forgotten") && err.contains("old") && err.contains("edge"),
        "{err}"
    );
    assert!(err.contains("--yes"), "{err}");
    assert_eq!(sessions(), all);
    // One session needs no confirmation; --yes takes many.
    let out = env.run(&["forget", "old"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let out = env.run(&["forget", "--before", "2026-12-01", "--project", "/work/demo", "--yes"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(sessions(), Vec::<String>::new());
}

/// A forgotten session that shared its transcript with another (#22, item 5): neither a line of it
/// appended, nor the file rewritten in place, nor `rebuild`, nor a deleted index brings it back;
/// `unforget` does, whole.
#[test]
fn a_forgotten_session_stays_forgotten_in_a_transcript_it_shared() {
    let env = Env::new();
    let shared = |extra_a: &str, extra_b: &str| {
        let mut body = String::new();
        for i in 0..3 {
            body += &(user_line("a", &format!("a{i}"), &format!("\"alpha secret {i}\""), "") + "\n");
            body += &(user_line("b", &format!("b{i}"), &format!("\"bravo line {i}\""), "") + "\n");
        }
        body + extra_a + extra_b
    };
    env.write("p/shared.jsonl", shared("", ""));
    env.index();
    let server = Server::start(&env, &["--rescan-secs", "1"]);
    let hits = |q: &str| -> usize {
        server.json(&format!("/api/search?group=none&q={q}"))["hits"].as_array().map_or(0, |h| h.len())
    };
    assert_eq!(hits("alpha"), 3);
    let res = server.client.delete(format!("{}/api/sessions/a", server.base)).send().unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    assert_eq!(hits("alpha"), 0);
    // One more line of each appended: b's arrives, a's does not.
    env.append(
        "p/shared.jsonl",
        user_line("a", "a9", "\"alpha appended\"", "") + "\n" + &user_line("b", "b9", "\"bravo appended\"", "") + "\n",
    );
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while hits("appended") == 0 {
        assert!(std::time::Instant::now() < deadline, "b's appended line was never indexed");
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    assert_eq!(hits("appended"), 1, "only b's");
    assert_eq!(hits("alpha"), 0);
    assert_eq!(server.get("/api/sessions/a/history").status(), StatusCode::NOT_FOUND);
    drop(server);
    let a_rows = || -> i64 {
        env.conn().query_row("SELECT count(*) FROM entries WHERE session_id = 'a'", [], |r| r.get(0)).unwrap()
    };
    let b_rows = || -> i64 {
        env.conn().query_row("SELECT count(*) FROM entries WHERE session_id = 'b'", [], |r| r.get(0)).unwrap()
    };
    // Rewritten in place (a new first line: read again from the start).
    let rewritten = user_line("b", "b-first", "\"bravo first\"", "") + "\n" + &shared("", "");
    std::fs::write(env.path("p/shared.jsonl"), &rewritten).unwrap();
    env.index();
    assert_eq!((a_rows(), b_rows()), (0, 4));
    // A rebuild, and a deleted index, read every transcript again.
    assert!(env.run(&["rebuild"]).status.success());
    assert_eq!((a_rows(), b_rows()), (0, 4));
    for name in ["index.sqlite3", "index.sqlite3-wal", "index.sqlite3-shm"] {
        let _ = std::fs::remove_file(env.data.join(name));
    }
    env.index();
    assert_eq!((a_rows(), b_rows()), (0, 4), "the acceptance record remembers what was forgotten");
    // Unforget: the shared transcript is read again, and a is back whole.
    let out = env.run(&["unforget", "a"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    env.index();
    assert_eq!((a_rows(), b_rows()), (3, 4));
    crate::util::check_invariants(&env.data);
}

/// #22, item 10: a transcript that is a symbolic link (relative or absolute) is indexed, and the
/// vault links its target, so its photos outlive the target.
#[test]
fn a_transcript_that_is_a_symbolic_link_is_vaulted_by_its_target() {
    let env = Env::new();
    let elsewhere = env.dir.path().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    std::fs::create_dir_all(env.path("p")).unwrap();
    let mut photos = Vec::new();
    for (name, relative) in [("rel", true), ("abs", false)] {
        let bytes = fake_png(if relative { 71 } else { 72 }, 4000);
        let target = elsewhere.join(format!("real-{name}.jsonl"));
        std::fs::write(
            &target,
            user_line(name, "u0", &format!("[{}]", image_block("image/png", &b64(&bytes))), "") + "\n",
        )
        .unwrap();
        let link_to =
            if relative { std::path::PathBuf::from(format!("../../elsewhere/real-{name}.jsonl")) } else { target };
        std::os::unix::fs::symlink(&link_to, env.path(&format!("p/{name}.jsonl"))).unwrap();
        photos.push((format!("{name}/u0/0"), bytes));
    }
    let out = env.cmd().env("RUST_LOG", "warn").arg("index").output().unwrap();
    assert!(out.status.success());
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(!log.contains("not indexed"), "{log}");
    let links = vault_links(&env);
    assert_eq!(links.len(), 2, "{links:?}");
    for link in &links {
        let meta = std::fs::symlink_metadata(link).unwrap();
        assert!(meta.is_file(), "{}: a hard link of the target, not a symbolic link", link.display());
        assert_eq!(meta.nlink(), 2);
    }
    // The targets deleted: the photos are served from the vault.
    std::fs::remove_dir_all(&elsewhere).unwrap();
    env.index();
    for (reference, bytes) in &photos {
        assert_eq!(env.media(reference).unwrap(), *bytes, "{reference}");
    }
    crate::util::check_invariants(&env.data);
}

/// #22, item 11: a transcript with two hard-linked names is not gone when one name is removed; its
/// rows follow the name it still has.
#[test]
fn a_transcript_with_two_names_is_not_gone_when_one_is_removed() {
    for vault in [true, false] {
        let env = Env::new();
        env.write("p/one.jsonl", user_line("linked", "u0", "\"two names\"", "") + "\n");
        std::fs::hard_link(env.path("p/one.jsonl"), env.path("p/two.jsonl")).unwrap();
        let vars: &[(&str, &str)] = if vault { &[] } else { &[("SCROLLBACK_FAULT_VAULT_EXDEV", "1")] };
        let server = Server::start_with(&env, &["--rescan-secs", "3600"], vars);
        server.wait_for_sessions(1);
        std::fs::remove_file(env.path("p/one.jsonl")).unwrap();
        // A later change the writer must see: once it is indexed, the removal was handled before.
        env.write("p/marker.jsonl", user_line("marker", "m0", "\"after\"", "") + "\n");
        server.wait_for_sessions(2);
        let sessions = server.json("/api/sessions");
        let linked = sessions["sessions"].as_array().unwrap().iter().find(|s| s["id"] == "linked").unwrap().clone();
        assert_eq!(linked["gone"], false, "vault {vault}: {sessions}");
        assert_eq!(server.json("/api/status")["transcripts"]["gone"], 0, "vault {vault}");
        // And it is followed under its other name.
        env.append("p/two.jsonl", user_line("linked", "u1", "\"still here\"", "") + "\n");
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        while server.json("/api/search?group=none&q=still")["hits"].as_array().unwrap().is_empty() {
            assert!(std::time::Instant::now() < deadline, "vault {vault}: the other name is not followed");
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        let conn = env.conn();
        let path: String = conn
            .query_row(
                "SELECT DISTINCT f.path FROM files f JOIN entries e ON e.file_id = f.id WHERE e.session_id = 'linked'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert!(path.ends_with("p/two.jsonl"), "{path}");
    }
}

#[test]
fn a_relative_data_dir_keeps_links_that_every_directory_can_read() {
    // Indexed with `--data-dir data` from the temporary directory; read from elsewhere with its
    // absolute path, once the transcripts are deleted.
    let env = Env::new();
    let photos = photo_tree(&env);
    let relative = |args: &[&str]| {
        let mut cmd = env.cmd();
        cmd.current_dir(env.dir.path()).args(args).arg("--data-dir").arg("data");
        let out = cmd.output().unwrap();
        assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    };
    relative(&["index"]);
    for s in 0..3 {
        std::fs::remove_file(env.path(&format!("p/s{s}.jsonl"))).unwrap();
    }
    relative(&["index"]);
    let links: Vec<String> = env
        .conn()
        .prepare("SELECT vault FROM files ORDER BY id")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap();
    assert_eq!(links.len(), 3);
    for link in &links {
        assert!(std::path::Path::new(link).is_absolute(), "{link}: a link any directory can read");
    }
    let elsewhere = |args: &[&str]| {
        let out = env.cmd().current_dir(env.path("p")).args(args).output().unwrap();
        assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    };
    let status = elsewhere(&["status"]);
    assert!(status.contains("vault           on: 3 links"), "{status}");
    assert!(!status.contains("vault problem"), "{status}");
    let out = env.dir.path().join("photo.out");
    elsewhere(&["media", &photos[0].0, "-o", out.to_str().unwrap()]);
    assert_eq!(std::fs::read(&out).unwrap(), photos[0].2, "a gone transcript's photo, from another directory");
    let export = env.dir.path().join("s1.jsonl");
    elsewhere(&["export", "s1", "--format", "jsonl", "-o", export.to_str().unwrap()]);
    assert_eq!(
        std::fs::read_to_string(&export).unwrap().lines().count(),
        2,
        "a gone transcript's lines, from another directory"
    );
}
