//! The bulk load (a first catch-up of 64 MiB or more into an empty index), through the real binary:
//! its full-text index is built on another thread into a scratch database and copied in at the end.
//! The copy must be exactly what a rebuild from `entries` gives, the indexes and triggers must be
//! back, and later appends must be searchable through the same index.

use rusqlite::Connection;

use crate::util::{Env, b64, check_invariants, fake_png, image_block, user_line};

/// Words the generated lines are made of; each line takes a few, so every word has many hits.
const WORDS: &[&str] = &[
    "harbour", "lantern", "quartz", "meadow", "cobalt", "falcon", "ember", "willow", "granite", "saffron", "tundra",
    "velvet", "zephyr", "orchid", "basalt", "juniper",
];

fn text_line(session: &str, file: usize, n: usize) -> String {
    let words: Vec<&str> = (0..6).map(|k| WORDS[(file * 7 + n * 3 + k * 5) % WORDS.len()]).collect();
    let content = serde_json::to_string(&format!("{} number{n}", words.join(" "))).unwrap();
    user_line(session, &format!("{session}-t{n}"), &content, "")
}

/// 64 files of one photo (1 MiB decoded) and 300 text lines each: about 90 MB.
fn write_corpus(env: &Env) {
    for file in 0..64 {
        let session = format!("00000000-0000-4000-8000-{file:012}");
        let mut body = String::new();
        let photo = b64(&fake_png(file as u64, 1 << 20));
        body += &user_line(&session, &format!("{session}-p"), &format!("[{}]", image_block("image/png", &photo)), "");
        body.push('\n');
        for n in 0..300 {
            body += &text_line(&session, file, n);
            body.push('\n');
        }
        env.write(&format!("p{}/{session}.jsonl", file % 4), body);
    }
}

fn hits(conn: &Connection, query: &str) -> Vec<i64> {
    let mut stmt = conn.prepare("SELECT rowid FROM entries_fts WHERE entries_fts MATCH ?1 ORDER BY rowid").unwrap();
    stmt.query_map([query], |r| r.get(0)).unwrap().collect::<rusqlite::Result<_>>().unwrap()
}

#[test]
fn a_bulk_load_builds_the_same_search_index_as_a_rebuild() {
    let env = Env::new();
    write_corpus(&env);
    let out = env.cmd().args(["index"]).env("RUST_LOG", "scrollback=info").output().unwrap();
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{log}");
    assert!(log.contains("bulk load") && log.contains("copied=true"), "the load must be a bulk load: {log}");
    assert!(!env.data.join(scrollback::ingest::bulk::FTS_BUILD_FILE).exists(), "the scratch database is removed");
    check_invariants(&env.data);

    let conn = Connection::open(env.data.join(scrollback::db::INDEX_FILE)).unwrap();
    let pending: i64 =
        conn.query_row("SELECT count(*) FROM scrollback_meta WHERE key LIKE 'deferred:%'", [], |r| r.get(0)).unwrap();
    assert_eq!(pending, 0);
    let objects: i64 = conn
        .query_row(
            "SELECT count(*) FROM sqlite_master WHERE type IN ('index', 'trigger') AND sql IS NOT NULL",
            [],
            |r| r.get(0),
        )
        .unwrap();
    let fresh = Connection::open_in_memory().unwrap();
    fresh.execute_batch(scrollback::db::SCHEMA).unwrap();
    let expected: i64 = fresh
        .query_row(
            "SELECT count(*) FROM sqlite_master WHERE type IN ('index', 'trigger') AND sql IS NOT NULL",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(objects, expected, "every index and trigger is back");
    // FTS5's own check, content included: every row's text is in the index, and nothing else.
    conn.execute("INSERT INTO entries_fts (entries_fts, rank) VALUES ('integrity-check', 1)", []).unwrap();

    // The same answers as an index rebuilt from the rows.
    let copy = env.dir.path().join("rebuilt.sqlite3");
    conn.execute("VACUUM INTO ?1", [copy.to_str().unwrap()]).unwrap();
    let rebuilt = Connection::open(&copy).unwrap();
    rebuilt.execute_batch("INSERT INTO entries_fts (entries_fts) VALUES ('rebuild')").unwrap();
    let (lines, with_text): (i64, i64) =
        conn.query_row("SELECT count(*), count(text) FROM entries", [], |r| Ok((r.get(0)?, r.get(1)?))).unwrap();
    assert_eq!((lines, with_text), (64 * 301, 64 * 300), "a photo line has no text");
    for query in WORDS.iter().map(|w| w.to_string()).chain(["harbour AND falcon".into(), "\"harbour falcon\"".into()]) {
        let got = hits(&conn, &query);
        assert!(!got.is_empty(), "{query}");
        assert_eq!(got, hits(&rebuilt, &query), "{query}");
    }

    // Appended later, in the live way (row by row, through the triggers), and found.
    env.append("p0/00000000-0000-4000-8000-000000000000.jsonl", {
        let mut line = user_line("00000000-0000-4000-8000-000000000000", "late", "\"a pelican arrives late\"", "");
        line.push('\n');
        line
    });
    env.index();
    assert_eq!(hits(&conn, "pelican").len(), 1);
    conn.execute("INSERT INTO entries_fts (entries_fts, rank) VALUES ('integrity-check', 1)", []).unwrap();
}

/// Index and trigger definitions, for comparing with a fresh schema.
fn definitions(conn: &Connection) -> Vec<(String, String)> {
    let mut stmt = conn
        .prepare(
            "SELECT name, sql FROM sqlite_master WHERE type IN ('index', 'trigger', 'table', 'view')
             AND sql IS NOT NULL ORDER BY name",
        )
        .unwrap();
    stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?))).unwrap().collect::<rusqlite::Result<_>>().unwrap()
}

#[test]
fn a_bulk_load_killed_midway_is_finished_when_the_index_is_reopened() {
    let env = Env::new();
    write_corpus(&env);
    // Kill `index` during its bulk load: sooner each time, until the kill lands inside it.
    let mut interrupted = false;
    for delay_ms in [400, 250, 150, 80, 40, 20] {
        let _ = std::fs::remove_dir_all(&env.data);
        let mut child = env.cmd().arg("index").spawn().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(delay_ms));
        let _ = child.kill();
        let status = child.wait().unwrap();
        let Ok(conn) = Connection::open(env.data.join(scrollback::db::INDEX_FILE)) else { continue };
        let deferred: rusqlite::Result<i64> =
            conn.query_row("SELECT count(*) FROM scrollback_meta WHERE key LIKE 'deferred:%'", [], |r| r.get(0));
        if !status.success() && deferred.is_ok_and(|n| n > 0) {
            interrupted = true;
            break;
        }
    }
    assert!(interrupted, "no kill landed inside the bulk load");

    env.index();
    check_invariants(&env.data);
    let conn = Connection::open(env.data.join(scrollback::db::INDEX_FILE)).unwrap();
    let pending: i64 =
        conn.query_row("SELECT count(*) FROM scrollback_meta WHERE key LIKE 'deferred:%'", [], |r| r.get(0)).unwrap();
    assert_eq!(pending, 0, "nothing is left aside");
    let fresh = Connection::open_in_memory().unwrap();
    fresh.execute_batch(scrollback::db::SCHEMA).unwrap();
    assert_eq!(definitions(&conn), definitions(&fresh), "every index and trigger is back, as the schema says");
    conn.execute("INSERT INTO entries_fts (entries_fts, rank) VALUES ('integrity-check', 1)", []).unwrap();
    let lines: i64 = conn.query_row("SELECT count(*) FROM entries", [], |r| r.get(0)).unwrap();
    assert_eq!(lines, 64 * 301, "every line indexed once");
    for word in WORDS {
        assert!(!hits(&conn, word).is_empty(), "{word}");
    }
}
