//! Crash recovery (sled's test_crash_recovery.rs is the model): `scrollback serve` follows a growing
//! tree and is killed with SIGKILL at random moments. After each kill the database passes
//! `PRAGMA integrity_check` and no checkpoint is past its file's end; after each restart it equals a
//! fresh index of the same files: no line lost, none twice. The tree holds every agent: Claude
//! Code's transcripts, and a root of each other agent's inside it (Codex, Gemini CLI, Qwen Code,
//! Droid, Cursor, Pi, Copilot CLI), its files where its agent keeps them and its lines in its
//! agent's shape, photos where its agent keeps them; Codex's rollouts are also compressed to
//! `.jsonl.zst` and decompressed again while the server runs; and OpenCode's database, into which
//! messages, their parts (photos among them) and parts written again in place go as OpenCode
//! writes them, and OpenCode 2's message rows into its tables beside them, inserted and updated in
//! place.
//!
//! `SCROLLBACK_CRASH_KILLS` (default 50) sets the number of kills; `SCROLLBACK_CRASH_SEED` the seed.

use std::process::Stdio;
use std::time::{Duration, Instant};

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use rusqlite::Connection;

use serde_json::{Value, json};

use crate::util::lines::{
    codex_line, copilot_event, cursor_asked, droid_message, gemini_message, pi_message, qwen_record,
};
use crate::util::{Env, b64, fake_png, image_block, user_line};

fn env_number(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

fn line(rng: &mut StdRng, n: &mut u64) -> String {
    *n += 1;
    let content = if rng.random_ratio(1, 6) {
        format!("[{}]", image_block("image/png", &b64(&fake_png(*n, rng.random_range(1000..200_000)))))
    } else {
        format!("\"{}\"", "t".repeat(rng.random_range(0..2000)))
    };
    user_line(&format!("s{}", *n % 7), &format!("u{n}"), &content, "") + "\n"
}

/// The agents beside Claude Code and Codex, each with a root of its own in the tree (its name).
const OTHERS: [&str; 6] = ["gemini", "qwen", "droid", "cursor", "pi", "copilot"];

/// The transcript `i` (0 or 1) of one of [`OTHERS`], where its agent keeps it (its format's
/// `is_transcript`).
fn agent_file(agent: &str, i: usize) -> String {
    match agent {
        "gemini" => format!("gemini/mixed/chats/session-2026-11-30T09-00-{i}.jsonl"),
        "qwen" => format!("qwen/-work-mixed/chats/5f0c7a2e-1b2c-4d3e-8f90-00000000000{i}.jsonl"),
        "droid" => format!("droid/-work-mixed/7d3c2a10-0000-4000-8000-00000000000{i}.jsonl"),
        "cursor" => format!("cursor/work-mixed/agent-transcripts/9a1b2c3d-0000-4000-8000-00000000000{i}.jsonl"),
        "pi" => format!("pi/--work-mixed--/2026-11-30T09-00-00-000Z_019ca8d7-2d00-7c31-9d5e-00000000000{i}.jsonl"),
        "copilot" => format!("copilot/session-state/0b6a7c9e-0000-4e3a-9b8c-00000000000{i}/events.jsonl"),
        _ => unreachable!("{agent}"),
    }
}

/// The first line of the transcript `i` of one of [`OTHERS`] (the session it names is the file's),
/// for those whose agent writes one.
fn agent_header(agent: &str, i: usize) -> Option<String> {
    let header = match agent {
        "gemini" => {
            json!({ "sessionId": format!("g-{i}"), "projectHash": "0f", "startTime": "2026-11-30T09:00:00.000Z" })
        }
        "droid" => json!({ "type": "session_start", "id": format!("7d3c2a10-0000-4000-8000-00000000000{i}"),
            "title": "mixed", "cwd": "/work/mixed", "version": 2 }),
        "pi" => json!({ "type": "session", "version": 3, "id": format!("019ca8d7-2d00-7c31-9d5e-00000000000{i}"),
            "timestamp": "2026-11-30T09:00:00.000Z", "cwd": "/work/mixed" }),
        "copilot" => {
            let id = format!("0b6a7c9e-0000-4e3a-9b8c-00000000000{i}");
            return Some(copilot_event(
                "session.start",
                json!({ "sessionId": id, "context": { "cwd": "/work/mixed" } }),
                1,
                None,
            ));
        }
        _ => return None,
    };
    Some(header.to_string() + "\n")
}

/// A line of a Codex rollout (`agent` `codex`) or of the transcript `i` of one of [`OTHERS`], a
/// person's message in its agent's shape, with a photo now and then where its agent keeps them.
fn agent_line(rng: &mut StdRng, n: &mut u64, agent: &str, i: usize) -> String {
    *n += 1;
    let photo = rng.random_ratio(1, 6).then(|| b64(&fake_png(*n, rng.random_range(1000..100_000))));
    let text = "t".repeat(rng.random_range(0..2000));
    let ts = format!("2026-11-30T10:{:02}:{:02}.000Z", *n / 60 % 60, *n % 60);
    match agent {
        "codex" => {
            let mut content = vec![json!({ "type": "input_text", "text": text })];
            content.extend(
                photo.map(|p| json!({ "type": "input_image", "image_url": format!("data:image/png;base64,{p}") })),
            );
            codex_line(&ts, "response_item", json!({ "type": "message", "role": "user", "content": content }))
        }
        "gemini" => {
            let mut content = vec![json!({ "text": text })];
            content.extend(photo.map(|p| json!({ "inlineData": { "mimeType": "image/png", "data": p } })));
            gemini_message(&format!("g{n}"), &ts, "user", json!(content))
        }
        "qwen" => {
            let mut parts = vec![json!({ "text": text })];
            parts.extend(
                photo.map(
                    |p| json!({ "inlineData": { "data": p, "mimeType": "image/png", "displayName": "shot.png" } }),
                ),
            );
            let session = format!("5f0c7a2e-1b2c-4d3e-8f90-00000000000{i}");
            qwen_record(
                &session,
                &format!("q{n}"),
                None,
                &ts,
                "user",
                json!({ "message": { "role": "user", "parts": parts } }),
            )
        }
        "droid" => {
            let mut content: Vec<Value> =
                photo.map(|p| json!({ "type": "image", "source": { "type": "base64", "data": p, "media_type": "image/png" } })).into_iter().collect();
            content.push(json!({ "type": "text", "text": text }));
            droid_message(&format!("d{n}"), None, &ts, "user", json!(content))
        }
        // Cursor keeps a pasted photo's path, not its bytes.
        "cursor" => cursor_asked(&text, &ts, photo.map(|_| "/work/mixed/.cursor/shot.png")),
        "pi" => {
            let mut content = vec![json!({ "type": "text", "text": text })];
            content.extend(photo.map(|p| json!({ "type": "image", "data": p, "mimeType": "image/png" })));
            pi_message(&format!("{n:08x}"), "00000000", &ts, json!({ "role": "user", "content": content }))
        }
        "copilot" => {
            let attachments: Vec<Value> =
                photo.map(|p| json!({ "type": "blob", "data": p, "mimeType": "image/png" })).into_iter().collect();
            copilot_event("user.message", json!({ "content": text, "attachments": attachments }), *n as u32, None)
        }
        _ => unreachable!("{agent}"),
    }
}

/// The Codex rollout `i`, plain or compressed.
fn rollout(i: usize, compressed: bool) -> String {
    format!(
        "codex/rollout-2026-11-30T10-00-00-01a0c0de-0000-7000-8000-00000000000{i}.jsonl{}",
        if compressed { ".zst" } else { "" }
    )
}

/// One write to OpenCode's database, as OpenCode makes it: a message and its parts (a photo now and
/// then) in one of three sessions, or a part of `parts` (session, message, part) written again in
/// place; or, as OpenCode 2 makes it, a message row (with a photo now and then) in one of two
/// sessions of its tables, or one of `rows` (session, message, seq) updated in place.
fn opencode_write(
    conn: &Connection,
    rng: &mut StdRng,
    n: &mut u64,
    parts: &mut Vec<(String, String, String)>,
    rows: &mut Vec<(String, String, i64)>,
) {
    use crate::util::fixtures::opencode as oc;
    *n += 1;
    let at = oc::T0 + *n as i64 * 1000;
    if rng.random_ratio(1, 3) {
        if !rows.is_empty() && rng.random_ratio(1, 2) {
            let (session, message, seq) = &rows[rng.random_range(0..rows.len())];
            let content =
                json!([{"type": "text", "text": format!("streamed {n} {}", "t".repeat(rng.random_range(0..500)))}]);
            oc::row(
                conn,
                session,
                message,
                *seq,
                at,
                &oc::assistant_v2(at, content, oc::tokens(*n % 97 + 1, 1, 0, 0, 0)),
            );
            return;
        }
        let session = format!("ses_v2_{}", rng.random_range(0..2));
        oc::session_v2(conn, &session, None, oc::T0);
        let message = format!("msg_v2_{n:08}");
        let photo = fake_png(*n * 4 + 3, rng.random_range(1000..100_000));
        let files: Vec<(&[u8], &str)> = if rng.random_ratio(1, 4) { vec![(&photo, "shot.png")] } else { Vec::new() };
        oc::row(
            conn,
            &session,
            &message,
            *n as i64,
            at,
            &oc::user_v2(at, &"q".repeat(rng.random_range(1..2000)), &files),
        );
        rows.push((session, message, *n as i64));
        return;
    }
    if !parts.is_empty() && rng.random_ratio(1, 3) {
        let (session, message, part) = &parts[rng.random_range(0..parts.len())];
        let text = json!({"type": "text", "text": format!("rewritten {n} {}", "t".repeat(rng.random_range(0..500)))});
        oc::part(conn, session, message, part, at, &text.to_string());
        return;
    }
    let session = format!("ses_{}", rng.random_range(0..3));
    oc::session(conn, &session, "New session - 2026-11-30T10:00:00.000Z", oc::T0);
    let message = format!("msg_{n:08}");
    oc::message(conn, &session, &message, at, &oc::user(at));
    for k in 0..rng.random_range(1..4) {
        let part = format!("prt_{n:08}_{k}");
        let data = if rng.random_ratio(1, 4) {
            oc::photo(&fake_png(*n * 4 + k, rng.random_range(1000..100_000)), "shot.png")
        } else {
            json!({"type": "text", "text": "t".repeat(rng.random_range(0..2000))})
        };
        oc::part(conn, &session, &message, &part, at, &data.to_string());
        parts.push((session.clone(), message.clone(), part));
    }
}

/// Everything the index says about live files, in a comparable form.
fn snapshot(data: &std::path::Path) -> Vec<String> {
    let conn = Connection::open(data.join("index.sqlite3")).unwrap();
    scrollback::db::register_stored_line(&conn).unwrap();
    let mut out = Vec::new();
    let queries = [
        "SELECT f.path || ' ' || e.line || ' ' || e.offset || ' ' || e.length || ' ' || coalesce(e.uuid, '-') || ' '
                || coalesce(e.invalid, '') || ' ' || coalesce(length(stored_line(e.stripped)), -1) || ' ' || e.session_id
         FROM entries e JOIN files f ON f.id = e.file_id WHERE f.state = 'live' ORDER BY f.path, e.line",
        "SELECT f.path || ' ' || m.offset || ' ' || m.length || ' ' || m.blake3 || ' ' || coalesce(m.ordinal, '-')
         FROM media m JOIN entries e ON e.id = m.entry_id JOIN files f ON f.id = e.file_id
         WHERE f.state = 'live' ORDER BY f.path, m.offset",
        "SELECT f.path || ' ' || f.checkpoint || ' ' || f.lines FROM files f WHERE f.state = 'live' ORDER BY f.path",
        "SELECT id || ' ' || entries || ' ' || images || ' ' || coalesce(first_timestamp, '') || ' '
                || coalesce(last_timestamp, '') FROM sessions ORDER BY id",
        // The live files' rows the full-text index finds, as every query here counts live files
        // only: a rollout compressed or decompressed while the writer was down may be seen as a new
        // file, its old name's rows kept as history (gone, its entries copies), which a fresh index
        // of the files that are there has no reason to hold.
        "SELECT 'fts ' || count(*) FROM entries_fts JOIN entries e ON e.id = entries_fts.rowid
         JOIN files f ON f.id = e.file_id WHERE entries_fts MATCH 'tttt*' AND f.state = 'live'",
        // ... and no document of a row that is not there.
        "SELECT 'fts orphans ' || count(*) FROM entries_fts
         WHERE entries_fts MATCH 'tttt*' AND rowid NOT IN (SELECT id FROM entries)",
    ];
    for q in queries {
        let mut stmt = conn.prepare(q).unwrap();
        let rows = stmt.query_map([], |r| r.get::<_, String>(0)).unwrap();
        out.extend(rows.map(Result::unwrap));
    }
    out
}

#[test]
fn killed_at_random_moments_the_index_equals_a_fresh_one() {
    let kills = env_number("SCROLLBACK_CRASH_KILLS", 50);
    let seed = env_number("SCROLLBACK_CRASH_SEED", 1);
    let mut rng = StdRng::seed_from_u64(seed);
    let env = Env::new();
    let mut n = 0u64;
    // Start big enough that the first runs are bulk loads (64 MB), so kills land in those too.
    for f in 0..6 {
        let mut text = String::new();
        for _ in 0..70 {
            n += 1;
            let photo = image_block("image/png", &b64(&fake_png(n, 120_000)));
            text.push_str(&(user_line("s0", &format!("u{n}"), &format!("[{photo}]"), "") + "\n"));
        }
        env.write(&format!("p{}/f{f}.jsonl", f % 2), text);
    }
    // The other agents' files start with their first line whole (the session it names is the file's).
    let mut compressed = [false; 3];
    for i in 0..3 {
        let meta = serde_json::json!({ "timestamp": "2026-11-30T10:00:00.000Z", "type": "session_meta",
            "payload": { "id": format!("01a0c0de-0000-7000-8000-00000000000{i}"), "cwd": "/work/mixed" } });
        env.write(&rollout(i, false), meta.to_string() + "\n");
    }
    for agent in OTHERS {
        for i in 0..2 {
            match agent_header(agent, i) {
                Some(header) => env.write(&agent_file(agent, i), header),
                None => env.write(&agent_file(agent, i), agent_line(&mut rng, &mut n, agent, i)),
            };
        }
    }
    let mut roots = vec![
        "--root".to_owned(),
        format!("claude:{}", env.root.display()),
        "--root".to_owned(),
        format!("codex:{}", env.path("codex").display()),
    ];
    for agent in OTHERS {
        roots.extend(["--root".to_owned(), format!("{agent}:{}", env.path(agent).display())]);
    }
    roots.extend(["--root".to_owned(), format!("opencode:{}", env.path("opencode").display())]);
    let opencode = crate::util::fixtures::opencode::create(&env.path("opencode/opencode.db"));
    // Both generations in one database: OpenCode 2's tables beside the 1.x ones.
    crate::util::fixtures::opencode::upgrade(&opencode);
    let mut parts: Vec<(String, String, String)> = Vec::new();
    let mut rows: Vec<(String, String, i64)> = Vec::new();
    let started = Instant::now();
    for kill in 0..kills {
        let mut child = env
            .cmd()
            .args(["serve", "--rescan-secs", "1"])
            .args(&roots)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        // Grow the tree while it runs: whole lines, lines in pieces, new files.
        let until = Instant::now() + Duration::from_millis(rng.random_range(0..150));
        while Instant::now() < until {
            let (path, text) = match rng.random_range(0..16) {
                15 => {
                    opencode_write(&opencode, &mut rng, &mut n, &mut parts, &mut rows);
                    std::thread::sleep(Duration::from_millis(rng.random_range(0..4)));
                    continue;
                }
                0..6 => {
                    (format!("p{}/f{}.jsonl", rng.random_range(0..3), rng.random_range(0..8)), line(&mut rng, &mut n))
                }
                6 => {
                    // Compressed as Codex does (the `.zst`, then the plain file deleted), or back.
                    let i = rng.random_range(0..3);
                    let (from, to) = (env.path(&rollout(i, compressed[i])), env.path(&rollout(i, !compressed[i])));
                    let bytes = std::fs::read(&from).unwrap();
                    let bytes = if compressed[i] {
                        zstd::stream::decode_all(&bytes[..]).unwrap()
                    } else {
                        zstd::stream::encode_all(&bytes[..], 3).unwrap()
                    };
                    std::fs::write(&to, bytes).unwrap();
                    std::fs::remove_file(&from).unwrap();
                    compressed[i] = !compressed[i];
                    continue;
                }
                7 | 8 => {
                    // Appended to once plain again, as Codex does.
                    let i = rng.random_range(0..3);
                    if compressed[i] {
                        continue;
                    }
                    (rollout(i, false), agent_line(&mut rng, &mut n, "codex", i))
                }
                other => {
                    let (agent, i) = (OTHERS[other - 9], rng.random_range(0..2));
                    (agent_file(agent, i), agent_line(&mut rng, &mut n, agent, i))
                }
            };
            if rng.random_bool(0.2) {
                let cut = rng.random_range(1..text.len());
                env.append(&path, &text[..cut]);
                std::thread::sleep(Duration::from_millis(rng.random_range(0..3)));
                env.append(&path, &text[cut..]);
            } else {
                env.append(&path, &text);
            }
            std::thread::sleep(Duration::from_millis(rng.random_range(0..4)));
        }
        child.kill().unwrap();
        child.wait().unwrap();

        // Straight after the kill: a sound database, no checkpoint past a file's end.
        if env.data.join("index.sqlite3").exists() {
            let conn = Connection::open(env.data.join("index.sqlite3")).unwrap();
            let check: String = conn.query_row("PRAGMA integrity_check", [], |r| r.get(0)).unwrap();
            assert_eq!(check, "ok", "kill {kill}");
            // Killed before the schema was created: an empty database, which the next start fills.
            let has_schema: bool = conn
                .query_row("SELECT count(*) > 0 FROM sqlite_master WHERE name = 'files'", [], |r| r.get(0))
                .unwrap();
            let query = if has_schema {
                "SELECT path, checkpoint FROM files WHERE state = 'live'"
            } else {
                "SELECT '', 0 WHERE 0"
            };
            let mut stmt = conn.prepare(query).unwrap();
            for row in stmt.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?))).unwrap() {
                let (path, checkpoint) = row.unwrap();
                if !std::path::Path::new(&path).exists() {
                    // Compressed or decompressed since, under its other name: seen at the restart.
                    continue;
                }
                // A compressed file's offsets are in its decompressed bytes.
                let len = if path.ends_with(".zst") {
                    crate::util::read_transcript(std::path::Path::new(&path)).len() as u64
                } else {
                    std::fs::metadata(&path).unwrap().len()
                };
                assert!(checkpoint as u64 <= len, "kill {kill}: {path} checkpoint {checkpoint} past its end {len}");
            }
        }

        // Restart, then compare with a fresh index of the same files.
        assert!(env.cmd().arg("index").args(&roots).output().unwrap().status.success(), "restart after kill {kill}");
        let fresh = env.dir.path().join(format!("fresh-{kill}"));
        let out = env.cmd().args(["index", "--data-dir", fresh.to_str().unwrap()]).args(&roots).output().unwrap();
        assert!(out.status.success());
        let (ours, theirs) = (snapshot(&env.data), snapshot(&fresh));
        if ours != theirs {
            for d in [&env.data, &fresh] {
                let conn = Connection::open(d.join("index.sqlite3")).unwrap();
                let mut stmt = conn.prepare("SELECT id || ' ' || path || ' ' || state || ' ' || lines || ' ' || checkpoint FROM files ORDER BY id").unwrap();
                let rows: Vec<String> = stmt.query_map([], |r| r.get(0)).unwrap().map(Result::unwrap).collect();
                eprintln!("the files of {}:\n{}", d.display(), rows.join("\n"));
            }
            let first = ours.iter().zip(&theirs).position(|(a, b)| a != b);
            panic!(
                "seed {seed}, kill {kill}: the index differs from a fresh one (rows {} vs {}), first at {first:?}: {:?} vs {:?}",
                ours.len(),
                theirs.len(),
                first.map(|i| &ours[i]),
                first.map(|i| &theirs[i])
            );
        }
        std::fs::remove_dir_all(&fresh).unwrap();
    }
    eprintln!("crash test: {kills} kills in {:.1} s", started.elapsed().as_secs_f64());
}

/// How one session stands in the data directory: `(entries, session row, forgetting mark,
/// forgotten marks, sent messages, vault link)`.
fn standing(env: &Env, session: usize, link: &std::path::Path) -> (i64, bool, bool, i64, i64, bool) {
    let index = Connection::open(env.data.join("index.sqlite3")).unwrap();
    let accept = Connection::open(env.data.join("accepted.sqlite3")).unwrap();
    let s = format!("s{session}");
    let count = |conn: &Connection, sql: &str, arg: &str| -> i64 { conn.query_row(sql, [arg], |r| r.get(0)).unwrap() };
    (
        count(&index, "SELECT count(*) FROM entries WHERE session_id = ?1", &s),
        count(&index, "SELECT count(*) FROM sessions WHERE id = ?1", &s) == 1,
        count(&index, "SELECT count(*) FROM scrollback_meta WHERE key = 'forgetting:' || ?1", &s) == 1,
        count(&index, "SELECT count(*) FROM forgotten WHERE session_id = ?1", &s),
        count(&accept, "SELECT count(*) FROM acceptances WHERE chat_id = ?1", &format!("c{session}")),
        link.exists(),
    )
}

#[test]
fn forget_killed_midway_leaves_each_session_whole_or_gone() {
    // Sessions of 100 lines and a photo each, with a sent message and its image in the acceptance
    // record; `forget` runs on a few at a time and is killed at a random moment. Straight after a
    // kill each session is whole, or gone from the index with its `forgetting` mark; once the
    // index is next opened for writing, whole or gone everywhere: entries, session row, sent
    // messages, vault link and image files.
    let kills = env_number("SCROLLBACK_CRASH_FORGET_KILLS", 25) as usize;
    let seed = env_number("SCROLLBACK_CRASH_SEED", 1);
    let mut rng = StdRng::seed_from_u64(seed);
    let env = Env::new();
    let sessions = kills * 3;
    for s in 0..sessions {
        let mut text = String::new();
        for i in 0..100 {
            let content = match i {
                7 => format!("[{}]", image_block("image/png", &b64(&fake_png(s as u64, 20_000)))),
                _ => format!("\"line {i} of session {s}, some words to index\""),
            };
            text.push_str(&(user_line(&format!("s{s}"), &format!("u{s}-{i}"), &content, "") + "\n"));
        }
        env.write(&format!("p/s{s}.jsonl"), text);
    }
    env.index();
    {
        let server = crate::util::Server::start(&env, &crate::util::SILENT_ENGINE);
        for s in 0..sessions {
            let image = format!("data:image/png;base64,{}", b64(&fake_png(1000 + s as u64, 3000)));
            let body = serde_json::json!({
                "clientMessageId": format!("m{s}"), "chatId": format!("c{s}"), "sessionId": format!("s{s}"),
                "text": "sent", "images": [{ "url": image }],
            });
            let res = server.client.post(format!("{}/api/chat/send", server.base)).json(&body).send().unwrap();
            assert!(res.status().is_success());
        }
    }
    let links: Vec<std::path::PathBuf> = (0..sessions)
        .map(|s| {
            let meta = std::fs::metadata(env.path(&format!("p/s{s}.jsonl"))).unwrap();
            use std::os::unix::fs::MetadataExt;
            env.data.join("vault").join(format!("{}-{}.jsonl", meta.dev(), meta.ino()))
        })
        .collect();
    assert!(links.iter().all(|l| l.exists()));
    let whole = |st: (i64, bool, bool, i64, i64, bool)| st == (100, true, false, 0, 1, true);
    let gone = |st: (i64, bool, bool, i64, i64, bool)| st == (0, false, false, 1, 0, false);
    // Kills land anywhere from the start to past the end of a run: its length is measured (a dry
    // run of a batch opens and reads what a real one does, and writes nothing).
    let batch_of = |left: &[usize]| -> Vec<String> { left.iter().take(4).map(|s| format!("s{s}")).collect() };
    let mut left: Vec<usize> = (0..sessions).collect();
    let timed = Instant::now();
    assert!(env.cmd().arg("forget").arg("--dry-run").args(batch_of(&left)).output().unwrap().status.success());
    let window = (timed.elapsed().as_micros() as u64 * 2).max(5_000);
    let (mut midway, mut made, started) = (0, 0, Instant::now());
    for kill in 0..kills {
        if left.is_empty() {
            break;
        }
        made += 1;
        let mut child = env
            .cmd()
            .args(["forget", "--yes"])
            .args(batch_of(&left))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_micros(rng.random_range(0..window)));
        child.kill().unwrap();
        child.wait().unwrap();
        // Straight after the kill.
        for &s in &left {
            let st = standing(&env, s, &links[s]);
            let finishing = st.0 == 0 && !st.1 && st.2 && st.3 == 1;
            midway += usize::from(finishing);
            assert!(whole(st) || gone(st) || finishing, "seed {seed}, kill {kill}: s{s} is half forgotten: {st:?}");
        }
        // Opened for writing again: every session whole or gone, everywhere.
        assert!(env.run(&["index"]).status.success(), "restart after kill {kill}");
        let mut kept = 0;
        for &s in &left {
            let st = standing(&env, s, &links[s]);
            assert!(whole(st) || gone(st), "seed {seed}, kill {kill}: s{s} after the restart: {st:?}");
            kept += usize::from(whole(st));
        }
        left.retain(|&s| whole(standing(&env, s, &links[s])));
        assert_eq!(kept, left.len());
        let images = crate::accept::walk(&env.data.join("accepted-images"));
        assert_eq!(images, left.len(), "seed {seed}, kill {kill}: one sent image per session kept");
    }
    let conn = Connection::open(env.data.join("index.sqlite3")).unwrap();
    let check: String = conn.query_row("PRAGMA integrity_check", [], |r| r.get(0)).unwrap();
    assert_eq!(check, "ok");
    eprintln!(
        "forget crash test: {made} kills in {:.1} s (each within {} ms of the start); {} of {sessions} sessions forgotten; {midway} times a session was caught between its two stores",
        started.elapsed().as_secs_f64(),
        window / 1000,
        sessions - left.len()
    );
    assert!(left.len() < sessions, "no kill let a forget finish: the test tested nothing");
}
