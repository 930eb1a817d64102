//! A team's hub on a real PostgreSQL (`tests/util/postgres.rs`): hosts push with the real binary
//! (`scrollback push`, `serve --push`), and the hub is compared with each host's own index, row for
//! row, photo byte for byte.

use std::collections::{BTreeMap, BTreeSet};
use std::process::Stdio;
use std::time::{Duration, Instant};

use rand::{Rng, SeedableRng};

use crate::mcp::urlencode;
use crate::util::postgres::Cluster;
use crate::util::server::Server;
use serde_json::Value;

use crate::util::{Env, b64, fake_png, image_block, user_line};

/// `scrollback push` as `host`, which must succeed; its summary line.
fn push(env: &Env, url: &str, host: &str) -> String {
    let out = env.cmd().args(["push", "--postgres", url, "--host", host]).output().unwrap();
    assert!(out.status.success(), "push failed: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

fn index_with(env: &Env, extra: &[String]) {
    let mut cmd = env.cmd();
    cmd.arg("index").args(extra);
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "index failed: {}", String::from_utf8_lossy(&out.stderr));
}

fn assistant_line(session: &str, uuid: &str, parent: &str, text: &str, ts: &str) -> String {
    serde_json::json!({
        "parentUuid": parent, "isSidechain": false, "cwd": "/work/demo", "sessionId": session,
        "type": "assistant", "uuid": uuid, "timestamp": ts,
        "message": { "id": format!("msg-{uuid}"), "role": "assistant", "model": "claude-sonnet-4-5",
                     "content": [{ "type": "text", "text": text }],
                     "usage": { "input_tokens": 10, "output_tokens": 20, "cache_read_input_tokens": 5,
                                "cache_creation_input_tokens": 0 } }
    })
    .to_string()
}

/// A Claude session: a user line with `photos`, then `turns` exchanges of `words`.
fn claude_session(session: &str, photos: &[Vec<u8>], words: &[&str], turns: usize) -> String {
    let blocks: Vec<String> = photos.iter().map(|p| image_block("image/png", &b64(p))).collect();
    let content = format!(
        "[{{\"type\":\"text\",\"text\":\"{}\"}}{}{}]",
        words[0],
        if blocks.is_empty() { "" } else { "," },
        blocks.join(",")
    );
    let mut s = user_line(session, &format!("{session}-u0"), &content, "") + "\n";
    let mut parent = format!("{session}-u0");
    for t in 0..turns {
        let uuid = format!("{session}-a{t}");
        let text = format!("{} {t}", words[t % words.len()]);
        s +=
            &assistant_line(session, &uuid, &parent, &text, &format!("2026-01-01T00:{:02}:{:02}.000Z", t / 60, t % 60));
        s += "\n";
        parent = uuid;
    }
    s
}

/// Every row the hub holds of `host`, table by table, as JSON text in a fixed order (the search
/// vector left out: it is generated from `text`).
fn hub_rows(hub: &mut postgres::Client, host: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (table, order) in [
        ("files", "file_id"),
        ("sessions", "id"),
        ("entries", "file_id, off"),
        ("media", "file_id, off"),
        ("failed_images", "file_id, entry_off, ordinal"),
        ("usage", "key"),
        ("forgotten", "session_id"),
    ] {
        let sql = format!(
            "SELECT (to_jsonb(t) - 'tsv' - 'forgotten_at')::text FROM {table} t WHERE host = $1 ORDER BY {order}"
        );
        for row in hub.query(&sql, &[&host]).unwrap() {
            out.push(format!("{table} {}", row.get::<_, String>(0)));
        }
    }
    let blobs = hub
        .query(
            "SELECT blake3 || ' ' || length || ' ' || md5(bytes) FROM blobs
             WHERE blake3 IN (SELECT blake3 FROM media WHERE host = $1) ORDER BY 1",
            &[&host],
        )
        .unwrap();
    out.extend(blobs.iter().map(|r| format!("blob {}", r.get::<_, String>(0))));
    out
}

/// Asserts two dumps are equal, naming the first row that differs (they are long).
fn same_rows(pushed: &[String], fresh: &[String]) {
    let cut = |s: &str| s.chars().take(600).collect::<String>();
    if let Some(i) = (0..pushed.len().max(fresh.len())).find(|&i| pushed.get(i) != fresh.get(i)) {
        panic!(
            "the hub differs from a fresh push ({} rows, fresh {}) first at row {i}:\n  hub:   {}\n  fresh: {}",
            pushed.len(),
            fresh.len(),
            pushed.get(i).map_or("-".into(), |r| cut(r)),
            fresh.get(i).map_or("-".into(), |r| cut(r)),
        );
    }
}

/// A line as the hub should hold it: (file, offset, session, stored line, its three search texts
/// (said, tool text, tools), copy).
type Line = (i64, i64, String, Option<String>, [Option<String>; 3], bool);

/// The index's lines.
fn local_entries(env: &Env) -> Vec<Line> {
    let conn = env.conn();
    let mut stmt = conn
        .prepare("SELECT file_id, offset, session_id, stored_line(stripped), text, tool_text, tools, duplicate FROM entries ORDER BY file_id, offset")
        .unwrap();
    stmt.query_map([], |r| {
        Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, [r.get(4)?, r.get(5)?, r.get(6)?], r.get::<_, i64>(7)? != 0))
    })
    .unwrap()
    .collect::<rusqlite::Result<_>>()
    .unwrap()
}

fn hub_entries(hub: &mut postgres::Client, host: &str) -> Vec<Line> {
    // No foreign key holds a line to its file's row (schema 7): the pusher deletes them together.
    let orphans: i64 = hub
        .query_one(
            "SELECT count(*) FROM entries e WHERE host = $1
               AND NOT EXISTS (SELECT 1 FROM files f WHERE f.host = e.host AND f.file_id = e.file_id)",
            &[&host],
        )
        .unwrap()
        .get(0);
    assert_eq!(orphans, 0, "every line on the hub has its file's row");
    hub.query(
        "SELECT file_id, off, session_id, stripped, text, tool_text, tools, duplicate FROM entries WHERE host = $1
         ORDER BY file_id, off",
        &[&host],
    )
    .unwrap()
    .iter()
    .map(|r| (r.get(0), r.get(1), r.get(2), r.get(3), [r.get(4), r.get(5), r.get(6)], r.get(7)))
    .collect()
}

/// Three hosts' indexes, and the photo all three hold: "laptop" (Claude Code, two sessions with
/// photos and one with sub-agents), "desk" (Codex and Gemini CLI, with photos and a rewind) and "box" (Claude Code in
/// Chinese and Japanese).
fn three_hosts() -> (Env, Env, Env, Vec<u8>) {
    let shared = fake_png(11, 5000);
    // Host "laptop": Claude Code, two sessions with photos.
    let laptop = Env::new();
    laptop.write(
        "p/a1.jsonl",
        claude_session("a1", &[shared.clone(), fake_png(12, 7000)], &["harbour lighthouse photo", "tide tables"], 30),
    );
    laptop.write("p/a2.jsonl", claude_session("a2", &[fake_png(13, 9000)], &["compiler error", "harbour map"], 12));
    // And a session whose tool calls ran two sub-agents, each a transcript of its own.
    for (path, body) in crate::sessions::files() {
        laptop.write(path, body);
    }
    // Host "desk": Codex and Gemini CLI.
    let desk = Env::new();
    let thread = "01a0c0de-0000-7000-8000-0000000000f1";
    desk.write(
        &crate::util::fixtures::codex::rollout(thread),
        crate::util::fixtures::codex::with_photos(
            thread,
            &[fake_png(21, 300), fake_png(22, 400), fake_png(23, 500), fake_png(24, 600)],
        ),
    );
    desk.write(
        "gemini/tmp/demo/chats/session-2026-11-30T09-00-5e55a0de.jsonl",
        crate::util::fixtures::gemini::with_rewind("5e55a0de-1", &[fake_png(25, 600), shared.clone()]),
    );
    // Host "box": Claude Code in Chinese and Japanese, with the laptop's photo.
    let others = Env::new();
    others.write(
        "p/c1.jsonl",
        claude_session("c1", std::slice::from_ref(&shared), &["灯塔的照片在港口", "東京の写真を見せて", "harbour"], 9),
    );
    // Files edited on two hosts, their times interleaved: the overview's recent edits are the
    // latest of both.
    laptop.write("q/e1.jsonl", edits_session("e1", 0, 7));
    others.write("q/e2.jsonl", edits_session("e2", 1, 7));
    // And a session with no title: one answer.
    let answer = serde_json::json!({"type": "assistant", "sessionId": "u1", "uuid": "u1-a",
        "timestamp": "2026-02-04T10:00:00.000Z", "cwd": "/work/lighthouse", "requestId": "req-u1",
        "message": {"id": "msg-u1", "role": "assistant", "model": "claude-sonnet-4-5",
            "content": [{"type": "text", "text": "The lamp turns once a minute."}],
            "usage": {"input_tokens": 5, "output_tokens": 7}}});
    others.write("q/u1.jsonl", format!("{answer}\n"));
    index_with(&laptop, &[]);
    index_with(&desk, &crate::agents::root_args(&desk));
    index_with(&others, &[]);
    (laptop, desk, others, shared)
}

/// A Claude Code session of `n` turns, each editing a file: turn `j` at hour `2j + odd` of a day,
/// on git branch `topic/ID`. Each prompt holds an API key, for a redacted export to take out.
fn edits_session(id: &str, odd: usize, n: usize) -> String {
    let key = |j: usize| format!("sk-ant-api03-{}{j}AA", "Zq8-rT_4".repeat(12).chars().take(92).collect::<String>());
    let mut lines = String::new();
    for j in 0..n {
        let at = |minute: usize| format!("2026-02-03T{:02}:{minute:02}:00.000Z", 2 * j + odd);
        let (asked, answered) = (format!("{id}-{j}-p"), format!("{id}-{j}-a"));
        let file = format!("/work/{id}/src/f{j}.rs");
        for line in [
            serde_json::json!({"type": "user", "sessionId": id, "uuid": asked, "timestamp": at(0), "cwd": "/work",
                "gitBranch": format!("topic/{id}"), "message": {"role": "user", "content": format!("Refactor file {j} with the key {}", key(j))}}),
            serde_json::json!({"type": "assistant", "sessionId": id, "uuid": answered, "parentUuid": asked,
                "timestamp": at(1), "cwd": "/work", "requestId": format!("req-{id}-{j}"),
                "message": {"id": format!("msg-{id}-{j}"), "role": "assistant", "model": "claude-sonnet-4-5",
                    "content": [{"type": "tool_use", "id": format!("tu-{id}-{j}"), "name": "Edit",
                                 "input": {"file_path": file, "old_string": "a\n", "new_string": "b\nc\n"}}],
                    "usage": {"input_tokens": 10, "output_tokens": 20 + j}}}),
        ] {
            lines += &format!("{line}\n");
        }
    }
    lines
}

#[test]
fn three_hosts_push_to_one_hub_and_it_holds_the_union_of_their_answers() {
    let Some(cluster) = Cluster::start() else { return };
    let url = cluster.url("team");
    let (laptop, desk, others, shared) = three_hosts();
    let hosts = [("laptop", &laptop), ("desk", &desk), ("box", &others)];
    for (host, env) in hosts {
        let said = push(env, &url, host);
        assert!(said.contains(&format!("as {host}:")), "{said}");
    }
    let mut hub = cluster.client("team");

    // Sessions: the union of the three hosts', with their host.
    let mut local_sessions = BTreeSet::new();
    for (host, env) in hosts {
        let conn = env.conn();
        let mut stmt = conn.prepare("SELECT id, coalesce(title, ''), entries, images, agent FROM sessions").unwrap();
        let rows = stmt
            .query_map([], |r| {
                Ok(format!(
                    "{host} {} {} {} {} {}",
                    r.get::<_, String>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, i64>(2)?,
                    r.get::<_, i64>(3)?,
                    r.get::<_, String>(4)?
                ))
            })
            .unwrap();
        local_sessions.extend(rows.map(Result::unwrap));
    }
    let hub_sessions: BTreeSet<String> = hub
        .query("SELECT host || ' ' || id || ' ' || coalesce(title, '') || ' ' || entries || ' ' || images || ' ' || agent FROM sessions", &[])
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert_eq!(hub_sessions, local_sessions);
    assert!(hub_sessions.len() >= 5, "{hub_sessions:?}");

    // Every line, stored line and search text as each host indexed it, copies marked the same.
    for (host, env) in hosts {
        let local = local_entries(env);
        assert!(!local.is_empty());
        assert_eq!(hub_entries(&mut hub, host), local, "{host}'s lines");
    }

    // Every photo byte-exact, each stored once however many hosts hold it.
    let mut hashes = BTreeSet::new();
    for (_, env) in hosts {
        let conn = env.conn();
        let mut stmt = conn.prepare("SELECT DISTINCT blake3 FROM media").unwrap();
        let local: Vec<String> = stmt.query_map([], |r| r.get(0)).unwrap().map(Result::unwrap).collect();
        for hash in local {
            let bytes = env.media(&hash).unwrap();
            let row = hub.query_one("SELECT bytes FROM blobs WHERE blake3 = $1", &[&hash]).unwrap();
            assert_eq!(row.get::<_, Vec<u8>>(0), bytes, "photo {hash}");
            hashes.insert(hash);
        }
    }
    let blobs: i64 = hub.query_one("SELECT count(*) FROM blobs", &[]).unwrap().get(0);
    assert_eq!(blobs as usize, hashes.len(), "the shared photo is held once");
    let shared_hash = blake3::hash(&shared).to_hex().to_string();
    let holders: i64 =
        hub.query_one("SELECT count(DISTINCT host) FROM media WHERE blake3 = $1", &[&shared_hash]).unwrap().get(0);
    assert_eq!(holders, 3);

    // Ten searches: the hub's full text finds what the three hosts' own searches find, together.
    for query in ["harbour", "lighthouse", "photo", "compiler", "tide", "map", "灯塔", "港口", "東京", "写真"] {
        let mut local = BTreeSet::new();
        for (host, env) in hosts {
            let conn = env.conn();
            for hit in scrollback::read::history::search_in(&conn, query, Default::default(), 500).unwrap() {
                local.insert(format!("{host} {} {}", hit.session_id, hit.line));
            }
        }
        let marked = scrollback::codec::words::mark(query).replace('\u{200B}', " ");
        let found: BTreeSet<String> = hub
            .query(
                "SELECT host || ' ' || session_id || ' ' || line FROM entries
                 WHERE tsv @@ plainto_tsquery('simple', $1) AND NOT duplicate",
                &[&marked],
            )
            .unwrap()
            .iter()
            .map(|r| r.get(0))
            .collect();
        assert!(!local.is_empty(), "{query} finds something");
        assert_eq!(found, local, "{query}");
        // A substring match finds it too, in any script; in Chinese and Japanese through pg_trgm's
        // index of the lines with their words marked, which a query naming that predicate uses.
        let marked = scrollback::codec::words::mark(query);
        let cjk = marked.contains('\u{200B}') || !query.is_ascii();
        let sql = match cjk {
            true => {
                "SELECT count(*) FROM entries WHERE strpos(text, U&'\\200B') > 0 AND text ILIKE '%' || $1 || '%' AND NOT duplicate"
            }
            false => "SELECT count(*) FROM entries WHERE text ILIKE '%' || $1 || '%' AND NOT duplicate",
        };
        let like: i64 = hub.query_one(sql, &[&marked.as_ref()]).unwrap().get(0);
        assert!(like as usize >= local.len(), "{query}: {like} substring matches");
        if cjk {
            let mut tx = hub.transaction().unwrap();
            tx.batch_execute("SET LOCAL enable_seqscan = off").unwrap();
            let plan: Vec<String> =
                tx.query(&format!("EXPLAIN {sql}"), &[&marked.as_ref()]).unwrap().iter().map(|r| r.get(0)).collect();
            assert!(plan.iter().any(|l| l.contains("entries_text_trgm")), "{query}: {plan:?}");
        }
    }

    // The usage ledger is the hosts' own.
    for (host, env) in hosts {
        let local: i64 = env.conn().query_row("SELECT count(*) FROM usage", [], |r| r.get(0)).unwrap();
        let on_hub: i64 = hub.query_one("SELECT count(*) FROM usage WHERE host = $1", &[&host]).unwrap().get(0);
        assert_eq!(on_hub, local, "{host}'s ledger");
    }
    let used: i64 = hub.query_one("SELECT count(*) FROM usage_daily", &[]).unwrap().get(0);
    assert!(used > 0);

    // A push with nothing new sends nothing.
    assert!(push(&laptop, &url, "laptop").contains(": 0 lines of 0 files"));
}

/// Every page of a session's history from `server`, newest first by `before` (entries, and the
/// cursor each page gives), then read forward from its first entry by `from`, `limit` at a time.
fn every_page(server: &Server, session: &str, limit: usize, sidechains: bool) -> Vec<Value> {
    let base = format!("/api/sessions/{session}/history?limit={limit}&sidechains={sidechains}");
    let mut pages = Vec::new();
    let mut page = server.json(&base);
    let mut first = None;
    loop {
        first = page["entries"].as_array().unwrap().first().map(|e| e["cursor"].clone()).or(first);
        pages.push(serde_json::json!([page["entries"], page["before"]]));
        match page["before"].as_i64() {
            Some(before) => page = server.json(&format!("{base}&before={before}")),
            None => break,
        }
    }
    let mut from = first.and_then(|c| c.as_i64());
    while let Some(c) = from {
        let page = server.json(&format!("{base}&from={c}"));
        pages.push(serde_json::json!([page["entries"], page["next"]]));
        from = page["next"].as_i64();
    }
    pages
}

/// The photo URLs a history page's lines name.
fn photo_urls(pages: &[Value]) -> BTreeSet<String> {
    let text = serde_json::to_string(pages).unwrap();
    let mut urls = BTreeSet::new();
    for prefix in ["/api/session-media/", "/api/media/"] {
        for (at, _) in text.match_indices(prefix) {
            let end = text[at..].find(['"', '\\', ')', ' ']).map_or(text.len(), |e| at + e);
            urls.insert(text[at..end].to_owned());
        }
    }
    urls
}

#[test]
fn serve_postgres_answers_as_the_union_of_the_hosts_own_servers_and_refuses_writes() {
    let Some(cluster) = Cluster::start() else { return };
    let url = cluster.url("team");
    let (laptop, desk, others, _) = three_hosts();
    let hosts = [("laptop", &laptop), ("desk", &desk), ("box", &others)];
    for (host, env) in hosts {
        push(env, &url, host);
    }
    let reader = Env::new();
    let hub = Server::start(&reader, &["--postgres", &url]);
    assert_eq!(hub.json("/api/info")["store"], "hub");

    // Sessions: each host's own list, with its host; the host filter gives one host's; a page at a
    // time gives the same list in the same order.
    let mut all_local = Vec::new();
    let mut searched: BTreeMap<&str, BTreeSet<String>> = BTreeMap::new();
    let mut sessions_found: BTreeMap<&str, BTreeSet<String>> = BTreeMap::new();
    let mut listed_with_text = BTreeSet::new();
    let mut used: BTreeMap<(&str, String), [f64; 3]> = BTreeMap::new();
    let mut overviews: Vec<Overview> = OVERVIEWS.iter().map(|_| Overview::default()).collect();
    // Turns of the outlines compared with tool calls, and with tokens: the figures were compared too.
    let mut figures = (0, 0);
    for (host, env) in hosts {
        let roots = if host == "desk" { crate::agents::root_args(env) } else { Vec::new() };
        let own = Server::start(env, &roots.iter().map(String::as_str).collect::<Vec<_>>());
        for by in ["day", "week", "model", "agent"] {
            for row in own.json(&format!("/api/usage?by={by}"))["rows"].as_array().unwrap() {
                let sums = used.entry((by, row["key"].to_string())).or_insert([0.0; 3]);
                for (i, field) in ["responses", "totalTokens", "cost"].iter().enumerate() {
                    sums[i] += row[field].as_f64().unwrap();
                }
            }
        }
        for (i, query) in OVERVIEWS.iter().enumerate() {
            overviews[i].add(&own.json(&format!("/api/stats?{query}")), Some(host));
        }
        for s in own.json("/api/sessions?q=lighthouse&limit=500")["sessions"].as_array().unwrap() {
            listed_with_text.insert(format!("{host} {}", s["id"]));
        }
        for query in SEARCHES {
            let q = urlencode(query);
            let hits = own.json(&format!("/api/search?q={q}&group=none&limit=500"))["hits"].clone();
            for hit in hits.as_array().unwrap() {
                searched.entry(*query).or_default().insert(format!("{host} {} {}", hit["sessionId"], hit["line"]));
            }
            let grouped = own.json(&format!("/api/search?q={q}&limit=500"))["sessions"].clone();
            for s in grouped.as_array().unwrap() {
                sessions_found.entry(*query).or_default().insert(format!("{host} {} {}", s["sessionId"], s["hits"]));
            }
        }
        let mut local: Vec<Value> = own.json("/api/sessions?limit=500")["sessions"].as_array().unwrap().clone();
        for s in &mut local {
            s["host"] = host.into();
        }
        let filtered = hub.json(&format!("/api/sessions?limit=500&host={host}"))["sessions"].clone();
        assert_eq!(filtered, Value::from(local.clone()), "{host}'s sessions");
        // The hub's status: the host, its last push, and what its sessions hold.
        let status = hub.json("/api/status");
        assert_eq!((&status["store"], &status["schemaVersion"]), (&Value::from("hub"), &Value::from(8)));
        let row = status["hosts"].as_array().unwrap().iter().find(|h| h["name"] == host).unwrap().clone();
        let sum = |key: &str| local.iter().map(|s| s[key].as_i64().unwrap()).sum::<i64>();
        assert_eq!(
            [&row["sessions"], &row["entries"], &row["photos"]],
            [&Value::from(local.len()), &Value::from(sum("entries")), &Value::from(sum("images"))],
            "{host}'s status"
        );
        assert!(row["lastPushAt"].as_str().is_some_and(|t| t.ends_with('Z')), "{row}");

        // Every page of every session's history, both ways, side chains or not; every photo.
        for s in &local {
            let id = s["id"].as_str().unwrap();
            for sidechains in [false, true] {
                let pages = every_page(&own, id, 3, sidechains);
                assert_eq!(every_page(&hub, id, 3, sidechains), pages, "{host} {id} (side chains: {sidechains})");
                if !sidechains {
                    continue;
                }
                let urls = photo_urls(&pages);
                assert_eq!(urls.is_empty(), s["images"] == 0, "{host} {id}: {urls:?}");
                for path in urls {
                    let from_hub = hub.get(&path);
                    assert_eq!(from_hub.status(), 200, "{path} from the hub");
                    assert_eq!(from_hub.bytes().unwrap(), own.get(&path).bytes().unwrap(), "{path}");
                }
            }
            // Each entry's texts whole (the viewer's "Show all"), as the host's server gives them.
            let pages = every_page(&own, id, 500, true);
            for entry in pages[0][0].as_array().unwrap() {
                let path = format!("/api/sessions/{id}/entries/{}/texts", entry["cursor"]);
                assert_eq!(hub.json(&path), own.json(&path), "{host} {path}");
            }
            // Its outline: the same turns, cursors, tool calls and tokens as the host's server gives.
            let outline = own.json(&format!("/api/sessions/{id}/outline"));
            assert_eq!(hub.json(&format!("/api/sessions/{id}/outline")), outline, "{host} {id}: the outline");
            let turns = outline["turns"].as_array().unwrap();
            figures.0 += turns.iter().filter(|t| t["toolCalls"].as_i64().unwrap() > 0).count();
            figures.1 += turns.iter().filter(|t| !t["outputTokens"].is_null()).count();
            // The session as the host's server has it, its git branch included.
            let mut about = own.json(&format!("/api/sessions/{id}/about"));
            about["host"] = host.into();
            assert_eq!(hub.json(&format!("/api/sessions/{id}/about")), about, "{host} {id}");
            if id.starts_with('e') {
                assert_eq!(about["gitBranch"], format!("topic/{id}"));
            }
            // Its HTML, Markdown and JSONL exports are the host's, byte for byte, photos and all (the
            // hub's JSONL lines are the stored lines, each photo put back from its blob).
            for format in ["html", "markdown", "jsonl", "jsonl&redact=true"] {
                let path = format!("/api/sessions/{id}/export?format={format}");
                let (ours, theirs) = (hub.get(&path), own.get(&path));
                assert_eq!(
                    (ours.status(), theirs.status()),
                    (reqwest::StatusCode::OK, reqwest::StatusCode::OK),
                    "{path}"
                );
                let (ours, mut theirs) = (ours.bytes().unwrap().to_vec(), theirs.bytes().unwrap().to_vec());
                if format.starts_with("jsonl") {
                    // But for the lines that are not JSON, of which an index keeps no copy to push.
                    theirs = theirs
                        .split_inclusive(|b| *b == b'\n')
                        .filter(|l| serde_json::from_slice::<Value>(l).is_ok())
                        .flatten()
                        .copied()
                        .collect();
                }
                assert!(ours == theirs, "{host} {id}: the {format} export differs");
                if id == "e1" {
                    assert_eq!(ours.windows(13).any(|w| w == b"sk-ant-api03-"), !format.contains("redact"), "{format}");
                }
            }
            // A catch-up from the session's first entry gives what the host's gives.
            let oldest = pages[0][0].as_array().unwrap()[0]["cursor"].as_i64().unwrap();
            let catch_up = format!("/api/sessions/{id}/history?after={oldest}&sidechains=true&limit=500");
            assert_eq!(hub.json(&catch_up)["entries"], own.json(&catch_up)["entries"], "{host} {id} catch-up");
        }
        all_local.extend(local);
    }
    assert!(figures.0 > 0 && figures.1 > 0, "outlines with tool calls and with tokens were compared: {figures:?}");
    let mut listed = Vec::new();
    let mut cursor = String::new();
    loop {
        let page = hub.json(&format!("/api/sessions?limit=2{cursor}"));
        listed.extend(page["sessions"].as_array().unwrap().iter().cloned());
        match page["next"].as_str() {
            Some(next) => cursor = format!("&cursor={}", urlencode(next)),
            None => break,
        }
    }
    assert_eq!(listed, hub.json("/api/sessions?limit=500")["sessions"].as_array().unwrap().clone());
    let key = |s: &Value| (s["host"].to_string(), s["id"].to_string());
    let mut expected = all_local.clone();
    expected.sort_by_key(key);
    listed.sort_by_key(key);
    assert_eq!(listed, expected, "the hub lists the union of the hosts' sessions");
    assert!(listed.len() >= 5);

    // Searches: the hub finds what the three hosts' own servers find, together, hit for hit (by
    // host, session and line) and session for session (with their counts).
    for query in SEARCHES {
        let q = urlencode(query);
        let mut found = BTreeSet::new();
        let answer = hub.json(&format!("/api/search?q={q}&group=none&limit=500"));
        for hit in answer["hits"].as_array().unwrap() {
            found.insert(format!("{} {} {}", hit["host"].as_str().unwrap(), hit["sessionId"], hit["line"]));
            let snippet = hit["snippet"].as_str().unwrap();
            // (A query of a tool's name alone has no words to mark.)
            assert!(
                query.starts_with("tool:") || snippet.contains("<mark>"),
                "{query}: a snippet marks its match: {snippet}"
            );
        }
        let local = searched.remove(query).unwrap_or_default();
        assert!(!local.is_empty(), "{query} finds something");
        assert_eq!(found, local, "{query}");
        let mut grouped = BTreeSet::new();
        for s in hub.json(&format!("/api/search?q={q}&limit=500"))["sessions"].as_array().unwrap() {
            grouped.insert(format!("{} {} {}", s["best"]["host"].as_str().unwrap(), s["sessionId"], s["hits"]));
        }
        assert_eq!(grouped, sessions_found.remove(query).unwrap_or_default(), "{query}, by session");
    }
    // Usage: each day's, week's, model's and agent's responses, tokens and cost are the hosts' own,
    // added up.
    let mut on_hub: BTreeMap<(&str, String), [f64; 3]> = BTreeMap::new();
    for by in ["day", "week", "model", "agent"] {
        for row in hub.json(&format!("/api/usage?by={by}"))["rows"].as_array().unwrap() {
            let sums = ["responses", "totalTokens", "cost"].map(|f| row[f].as_f64().unwrap());
            on_hub.insert((by, row["key"].to_string()), sums);
        }
    }
    assert!(used.len() >= 4, "{used:?}");
    assert_eq!(on_hub.keys().collect::<Vec<_>>(), used.keys().collect::<Vec<_>>());
    for (key, sums) in &used {
        for (i, (hub_sum, host_sum)) in on_hub[key].iter().zip(sums).enumerate() {
            assert!(
                (hub_sum - host_sum).abs() <= 1e-9 * host_sum.abs().max(1.0),
                "{key:?} [{i}]: {hub_sum} on the hub, {host_sum} on the hosts"
            );
        }
    }

    // The overview: under each filter and time zone, every figure is the hosts' own added up, and
    // its lists (recent edits, the longest and costliest sessions) are the top of theirs together.
    for (query, hosts_together) in OVERVIEWS.iter().zip(&overviews) {
        let mut ours = Overview::default();
        ours.add(&hub.json(&format!("/api/stats?{query}")), None);
        hosts_together.same_as(&ours, query);
    }
    let all = &overviews[0];
    assert!(all.sums["messages"] > 0.0 && all.sums["responses"] > 0.0 && all.sums["toolCalls"] > 0.0, "{:?}", all.sums);
    assert!(!all.tools.is_empty() && !all.longest.is_empty() && !all.costliest.is_empty());
    // A session with no title is named by its first words on its host, and so on the hub (checked
    // by `same_as`: each of the hub's longest sessions, title and all, is one of the hosts').
    let untitled = all.longest.iter().find(|s| s.2 == "\"u1\"").expect("the untitled session is among the longest");
    assert_eq!(untitled.3, "\"The lamp turns once a minute.\"");
    assert!(!all.edits.is_empty(), "the hosts' sessions edit files");

    // A session list's text filter, and a page of hits at a time.
    let by_text: BTreeSet<String> = hub.json("/api/sessions?q=lighthouse&limit=500")["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| format!("{} {}", s["host"].as_str().unwrap(), s["id"]))
        .collect();
    assert_eq!(by_text, listed_with_text);
    let first = hub.json("/api/search?q=harbour&group=none&limit=2");
    let second =
        hub.json(&format!("/api/search?q=harbour&group=none&limit=2&cursor={}", first["next"].as_str().unwrap()));
    let all = hub.json("/api/search?q=harbour&group=none&limit=4");
    let paged: Vec<&Value> =
        first["hits"].as_array().unwrap().iter().chain(second["hits"].as_array().unwrap()).collect();
    assert_eq!(paged, all["hits"].as_array().unwrap().iter().collect::<Vec<_>>());

    // Read-only: what would change something is refused, saying so.
    let a1 = "a1";
    let forget =
        hub.client.delete(format!("{}/api/sessions/{a1}", hub.base)).header("origin", hub.base.clone()).send().unwrap();
    assert_eq!(forget.status(), 400);
    let error: Value = forget.json().unwrap();
    assert_eq!(error["error"]["code"], "not-served", "{error}");
    assert!(error["error"]["message"].as_str().unwrap().contains("read-only"), "{error}");
    assert_eq!(hub.get("/api/sessions/nonesuch/history").status(), 404);
    // Nothing of the hub's was written (a reader's sessions are read-only transactions).
    let mut client = cluster.client("team");
    let sessions: i64 = client.query_one("SELECT count(*) FROM sessions", &[]).unwrap().get(0);
    assert_eq!(sessions as usize, listed.len());
}

/// The searches `serve --postgres` answers as the hosts together: words, a prefix, OR, NOT, a
/// phrase, role and tool filters, and Chinese and Japanese.
const SEARCHES: &[&str] = &[
    "harbour",
    "lighthouse",
    "photo*",
    "compiler OR tide",
    "harbour -map",
    "\"tide tables\"",
    "role:user harbour",
    "灯塔",
    "港口",
    "東京",
    "写真",
    "agent:codex photo",
    "tool:Task",
    "look role:tool",
];

/// The overviews `serve --postgres` gives as the hosts' added up: all of it, in three time zones,
/// between two days, and of one agent.
const OVERVIEWS: &[&str] = &["tz=0", "tz=9", "tz=-5", "tz=2&since=2026-01-01&until=2026-06-30", "tz=0&agent=codex"];

/// An overview's figures in a form that adds up across hosts: every sum by its name (totals, each
/// day's, each hour's, each tool's, agent's and model's response times), and its lists with the
/// host of each item.
#[derive(Default, Debug)]
struct Overview {
    sums: BTreeMap<String, f64>,
    edits: Vec<(String, String, String, String)>,
    /// Messages, host, id and title (the hub names an untitled session as its host does).
    longest: Vec<(u64, String, String, String)>,
    costliest: Vec<(f64, String, String)>,
    tools: BTreeSet<String>,
}

impl Overview {
    /// Adds `stats` (an answer of /api/stats), its items of `host` (or, on the hub, each its own).
    fn add(&mut self, stats: &Value, host: Option<&str>) {
        let mut add = |key: String, v: &Value| *self.sums.entry(key).or_default() += v.as_f64().unwrap_or(0.0);
        let spend = ["responses", "tokens", "outputTokens", "cost", "unpricedResponses"];
        for field in spend.iter().chain(&["sessions", "messages", "prompts", "toolCalls", "toolFailures"]) {
            add(field.to_string(), &stats["totals"][field]);
        }
        for day in stats["days"].as_array().unwrap() {
            for field in spend.iter().chain(&["sessions", "messages", "prompts"]) {
                add(format!("day {} {field}", day["day"]), &day[field]);
            }
        }
        for (w, row) in stats["heatmap"].as_array().unwrap().iter().enumerate() {
            for (h, n) in row.as_array().unwrap().iter().enumerate() {
                add(format!("heatmap {w} {h}"), n);
            }
        }
        for (h, n) in stats["hours"].as_array().unwrap().iter().enumerate() {
            add(format!("hour {h}"), n);
        }
        for tool in stats["tools"].as_array().unwrap() {
            add(format!("tool {} calls", tool["tool"]), &tool["calls"]);
            add(format!("tool {} failures", tool["tool"]), &tool["failures"]);
            self.tools.insert(tool["tool"].to_string());
        }
        for agent in stats["agents"].as_array().unwrap() {
            for field in ["sessions", "messages", "tokens", "cost"] {
                add(format!("agent {} {field}", agent["name"]), &agent[field]);
            }
        }
        for model in stats["responseTimes"].as_array().unwrap() {
            for (i, n) in model["histogram"].as_array().unwrap().iter().enumerate() {
                add(format!("response {} {i}", model["model"]), n);
            }
        }
        let host_of =
            |item: &Value| host.map(str::to_owned).unwrap_or_else(|| item["host"].as_str().unwrap().to_owned());
        for e in stats["recentEdits"].as_array().unwrap() {
            let (at, path) = (e["timestamp"].as_str().unwrap(), e["path"].as_str().unwrap());
            self.edits.push((at.to_owned(), host_of(e), e["sessionId"].to_string(), path.to_owned()));
        }
        for s in stats["longestSessions"].as_array().unwrap() {
            let named = (s["sessionId"].to_string(), s["title"].to_string());
            self.longest.push((s["messages"].as_u64().unwrap(), host_of(s), named.0, named.1));
        }
        for s in stats["costliestSessions"].as_array().unwrap() {
            self.costliest.push((s["cost"].as_f64().unwrap(), host_of(s), s["sessionId"].to_string()));
        }
    }

    /// Asserts that `hub`'s overview is these hosts' added up.
    fn same_as(&self, hub: &Overview, query: &str) {
        let nonzero = |o: &Overview| -> BTreeMap<String, f64> {
            o.sums.iter().filter(|(_, v)| **v != 0.0).map(|(k, v)| (k.clone(), *v)).collect()
        };
        let (theirs, ours) = (nonzero(self), nonzero(hub));
        assert_eq!(ours.keys().collect::<Vec<_>>(), theirs.keys().collect::<Vec<_>>(), "{query}: the figures");
        for (key, v) in &theirs {
            assert!(
                (ours[key] - v).abs() <= 1e-9 * v.abs().max(1.0),
                "{query}: {key}: {} on the hub, {v} on the hosts",
                ours[key]
            );
        }
        assert_eq!(hub.tools, self.tools, "{query}: the tools");
        // Each list is the top of the hosts' lists together, each item one of theirs.
        let mut edits = self.edits.clone();
        edits.sort_by(|a, b| b.0.cmp(&a.0));
        let times = |e: &[(String, String, String, String)]| e.iter().map(|e| e.0.clone()).take(10).collect::<Vec<_>>();
        assert_eq!(times(&hub.edits), times(&edits), "{query}: recent edits");
        let mut longest = self.longest.clone();
        longest.sort_by_key(|s| std::cmp::Reverse(s.0));
        let counts = |l: &[(u64, String, String, String)]| l.iter().map(|s| s.0).take(10).collect::<Vec<_>>();
        assert_eq!(counts(&hub.longest), counts(&longest), "{query}: the longest sessions");
        let mut costliest = self.costliest.clone();
        costliest.sort_by(|a, b| b.0.total_cmp(&a.0));
        for (ours, theirs) in hub.costliest.iter().zip(&costliest) {
            assert!((ours.0 - theirs.0).abs() <= 1e-9 * theirs.0.max(1.0), "{query}: the costliest sessions");
        }
        assert_eq!(hub.costliest.len(), costliest.len().min(10), "{query}: the costliest sessions");
        for e in &hub.edits {
            assert!(self.edits.contains(e), "{query}: {e:?} is one of the hosts' edits");
        }
        for s in &hub.longest {
            assert!(self.longest.contains(s), "{query}: {s:?} is one of the hosts' longest sessions");
        }
    }
}

#[test]
fn mcp_over_the_hub_reads_every_agent_s_sessions_and_photos_as_the_host_s_own_server() {
    use crate::mcp::{call, decode, hit_keys, http_plan, photos, run_plan, sdk_available, stdio_plan};
    let Some(cluster) = Cluster::start() else { return };
    if !sdk_available() {
        return;
    }
    let url = cluster.url("team");
    let env = Env::new();
    let samples = crate::util::fixtures::every_agent(&env.root);
    let roots = crate::util::fixtures::every_agent_roots(&env.root);
    env.index_roots(&roots);
    push(&env, &url, "laptop");
    let mut calls = vec![
        call("list_sessions", serde_json::json!({"limit": 50})),
        call("search_history", serde_json::json!({"query": samples[0].user, "per_entry": true, "limit": 50})),
    ];
    calls.extend(samples.iter().map(|s| call("read_session", serde_json::json!({"session": s.session, "limit": 100}))));
    let refs = photos(&env);
    calls.extend(refs.iter().map(|(r, _)| call("get_photo", serde_json::json!({"ref": r}))));
    let own = Server::start(&env, &roots.iter().map(String::as_str).collect::<Vec<_>>());
    own.wait_for_sessions(samples.len());
    let local = run_plan(&env, &http_plan(&own.base, None, &calls, &[]));
    let reader = Env::new();
    let hub = Server::start(&reader, &["--postgres", &url]);
    // The official SDK, over the hub's /mcp and over `scrollback mcp --postgres` on stdio.
    for (how, report) in [
        ("/mcp", run_plan(&env, &http_plan(&hub.base, None, &calls, &[]))),
        ("mcp --postgres", run_plan(&reader, &stdio_plan(&reader, &["--postgres", &url], &calls, &[]))),
    ] {
        let (answers, theirs) = (report["calls"].as_array().unwrap(), local["calls"].as_array().unwrap());
        assert_eq!(answers.len(), calls.len(), "{how}");
        for (n, (a, l)) in answers.iter().zip(theirs).enumerate() {
            assert_eq!(a["isError"], false, "{how}, call {n}: {a}");
            assert_eq!(l["isError"], false, "the host's, call {n}: {l}");
        }
        // The sessions listed (in any order of equal times) and the hits found are the host's.
        let lines = |a: &Value| {
            let mut lines: Vec<String> = a["text"].as_str().unwrap().lines().map(str::to_owned).collect();
            lines.sort();
            lines
        };
        assert_eq!(lines(&answers[0]), lines(&theirs[0]), "{how}: list_sessions");
        let mut found = hit_keys(&answers[1]);
        let mut wanted = hit_keys(&theirs[1]);
        assert!(!wanted.is_empty());
        found.sort();
        wanted.sort();
        assert_eq!(found, wanted, "{how}: search_history");
        // Every session of every agent reads the same, and every photo is the same bytes.
        for (s, (a, l)) in samples.iter().zip(answers[2..].iter().zip(&theirs[2..])) {
            assert_eq!(a["text"], l["text"], "{how}: read_session of {}", s.agent);
        }
        for ((r, hash), a) in refs.iter().zip(&answers[2 + samples.len()..]) {
            let bytes = decode(a["images"][0]["data"].as_str().unwrap());
            assert_eq!(blake3::hash(&bytes).to_hex().to_string(), *hash, "{how}: get_photo {r}");
        }
    }
}

#[test]
fn serve_postgres_answers_503_while_the_hub_is_down_and_reads_it_again_once_it_is_back() {
    let Some(cluster) = Cluster::start() else { return };
    let url = cluster.url("team");
    let env = Env::new();
    let photo = fake_png(31, 2000);
    env.write("p/a1.jsonl", claude_session("a1", std::slice::from_ref(&photo), &["harbour at dusk"], 6));
    index_with(&env, &[]);
    push(&env, &url, "laptop");
    let reader = Env::new();
    let hub = Server::start(&reader, &["--postgres", &url]);
    let hash = blake3::hash(&photo).to_hex().to_string();
    let reads = ["/api/sessions", "/api/sessions/a1/history", "/api/search?q=harbour", "/api/usage"];
    for path in reads {
        assert_eq!(hub.get(path).status(), 200, "{path}");
    }
    // Many questions at once: each answered, over at most eight connections to the hub.
    let answered: Vec<u16> = std::thread::scope(|s| {
        let hub = &hub;
        let asked: Vec<_> =
            (0..32).map(|i| s.spawn(move || hub.get(reads[i % reads.len()]).status().as_u16())).collect();
        asked.into_iter().map(|t| t.join().unwrap()).collect()
    });
    assert!(answered.iter().all(|&s| s == 200), "{answered:?}");
    let mut client = cluster.client("team");
    let readers: i64 = client
        .query_one("SELECT count(*) FROM pg_stat_activity WHERE datname = 'team' AND pid <> pg_backend_pid()", &[])
        .unwrap()
        .get(0);
    assert!((1..=8).contains(&readers), "{readers} connections from the reader");
    drop(client);
    cluster.stop_server();
    for path in reads.iter().copied().chain([format!("/api/media/{hash}").as_str()]) {
        let res = hub.get(path);
        assert_eq!(res.status(), 503, "{path}");
        let body: Value = res.json().unwrap();
        assert_eq!(body["error"]["code"], "hub-unavailable", "{path}: {body}");
        assert!(!body.to_string().contains("127.0.0.1"), "{path}: the answer names no address: {body}");
    }
    cluster.start_server();
    let back = wait_until(Duration::from_secs(30), || hub.get("/api/sessions").status() == 200);
    assert!(back.is_some(), "the hub is read again once it is back");
    assert_eq!(hub.get(&format!("/api/media/{hash}")).bytes().unwrap(), photo);
}

/// A hub whose columns are not of the types this scrollback reads (a hand-made change, another
/// tool's schema): every read that meets one answers 503 with the API's error, and nothing panics.
#[test]
fn a_hub_column_of_another_type_is_a_503_never_a_panic() {
    let Some(cluster) = Cluster::start() else { return };
    let url = cluster.url("team");
    let env = Env::new();
    env.write("p/a1.jsonl", claude_session("a1", &[], &["harbour at dusk"], 6));
    index_with(&env, &[]);
    push(&env, &url, "laptop");
    let reader = Env::new();
    let hub = Server::start(&reader, &["--postgres", &url]);
    let reads = ["/api/sessions", "/api/sessions/a1/history", "/api/search?q=harbour", "/api/sessions/a1/about"];
    for path in reads {
        assert_eq!(hub.get(path).status(), 200, "{path}");
    }
    let mut client = cluster.client("team");
    client
        .batch_execute(
            "ALTER TABLE sessions ALTER COLUMN entries TYPE text USING entries::text;
             ALTER TABLE entries RENAME COLUMN line TO line_before;
             ALTER TABLE entries ADD COLUMN line text;
             UPDATE entries SET line = line_before::text;",
        )
        .unwrap();
    for path in reads {
        let res = hub.get(path);
        assert_eq!(res.status(), 503, "{path}");
        let body: Value = res.json().unwrap();
        assert_eq!(body["error"]["code"], "hub-unavailable", "{path}: {body}");
    }
    assert_eq!(hub.get("/").status(), 200, "the server goes on");
    let log = hub.log.lock().unwrap().clone();
    assert!(!log.contains("panicked"), "{log}");
}

#[test]
fn a_search_with_more_matches_than_it_ranks_counts_them_on_the_hub_and_the_server_stops_cleanly() {
    let Some(cluster) = Cluster::start() else { return };
    let url = cluster.url("team");
    let env = Env::new();
    // More matches than a search ranks (2,000): a grouped search then counts each session's matches.
    env.write("p/big1.jsonl", claude_session("big1", &[], &["lantern"], 2100));
    env.write("p/big2.jsonl", claude_session("big2", &[], &["lantern", "harbour"], 300));
    index_with(&env, &[]);
    push(&env, &url, "laptop");
    let own = Server::start(&env, &[]);
    let reader = Env::new();
    let hub = Server::start(&reader, &["--postgres", &url]);
    let counts = |server: &Server| -> BTreeSet<String> {
        let res = server.get("/api/search?q=lantern&limit=50");
        assert_eq!(res.status(), 200, "{}", server.log.lock().unwrap());
        let answer: Value = res.json().unwrap();
        let notes = answer["query"]["notes"].to_string();
        assert!(notes.contains("more than 2000"), "{notes}");
        answer["sessions"].as_array().unwrap().iter().map(|s| format!("{} {}", s["sessionId"], s["hits"])).collect()
    };
    let on_hub = counts(&hub);
    assert_eq!(on_hub, counts(&own));
    assert!(on_hub.contains("\"big1\" 2101"), "{on_hub:?}");
    // SIGTERM: the server stops, with its connections to the hub, and exits with success.
    let mut hub = hub;
    let _ = hub.get("/api/sessions");
    let killed = std::process::Command::new("kill").args(["-TERM", &hub.child.id().to_string()]).status().unwrap();
    assert!(killed.success());
    let status = wait_for_exit(&mut hub.child, Duration::from_secs(30)).expect("serve --postgres stops");
    let log = hub.log.lock().unwrap().clone();
    assert!(status.success() && !log.contains("panicked"), "{status}: {log}");
}

/// `scrollback push` started and killed (`kill -9`) after `ms` milliseconds.
fn push_killed_after(env: &Env, url: &str, host: &str, ms: u64) {
    let mut child = env
        .cmd()
        .args(["push", "--postgres", url, "--host", host])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(ms));
    let _ = child.kill();
    let _ = child.wait();
}

/// `scrollback push` started and killed (`kill -9`) as soon as the hub shows it midway through a
/// file (or once it has ended by itself): a random time alone lands after a push on a fast machine.
fn push_killed_midway(env: &Env, url: &str, host: &str, hub: &mut postgres::Client) {
    let mut child = env
        .cmd()
        .args(["push", "--postgres", url, "--host", host])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    while started.elapsed() < Duration::from_secs(10) && child.try_wait().unwrap().is_none() {
        let midway: i64 =
            hub.query_one("SELECT count(*) FROM files WHERE lines = -1", &[]).map(|r| r.get(0)).unwrap_or(0);
        if midway > 0 {
            break;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    let _ = child.kill();
    let _ = child.wait();
}

#[test]
fn a_push_killed_anywhere_or_cut_by_a_restart_leaves_the_hub_as_a_fresh_push_would() {
    let Some(cluster) = Cluster::start() else { return };
    cluster.create_database("fresh");
    let env = Env::new();
    let words = ["harbour", "lighthouse", "tide", "compiler", "灯塔的照片"];
    for s in 0..6 {
        let photos: Vec<Vec<u8>> = (0..3).map(|p| fake_png(100 + s * 10 + p, 40_000)).collect();
        env.write(&format!("p/s{s}.jsonl"), claude_session(&format!("s{s}"), &photos, &words, 400));
    }
    index_with(&env, &[]);
    let url = cluster.url("team");
    let mut rng = rand::rngs::StdRng::seed_from_u64(23);
    let mut hub = cluster.client("team");
    let mut cut_midway = 0;
    for round in 0..50 {
        // Every other kill at a random moment (before the push connects, between batches, after
        // it ended), the others as soon as the hub shows it midway.
        if round % 2 == 0 {
            push_killed_after(&env, &url, "h", rng.random_range(0..250));
        } else {
            push_killed_midway(&env, &url, "h", &mut hub);
        }
        // A push stopped midway leaves a file marked as not yet sent whole (lines -1).
        // (The schema may not be there yet, before the first push got that far.)
        let midway: i64 =
            hub.query_one("SELECT count(*) FROM files WHERE lines = -1", &[]).map(|r| r.get(0)).unwrap_or(0);
        cut_midway += (midway > 0) as u32;
        // Lines appended between kills, to a file of the round's choosing.
        let s = rng.random_range(0..6);
        let lines: String = (0..40)
            .map(|i| {
                assistant_line(
                    &format!("s{s}"),
                    &format!("s{s}-r{round}-{i}"),
                    &format!("s{s}-a399"),
                    "appended while pushing",
                    "2026-01-02T00:00:00.000Z",
                ) + "\n"
            })
            .collect();
        env.append(&format!("p/s{s}.jsonl"), lines);
        index_with(&env, &[]);
    }
    assert!(cut_midway >= 5, "only {cut_midway} of 50 kills stopped a push midway");
    // The hub stopped and started under a push.
    env.write("p/s6.jsonl", claude_session("s6", &[fake_png(200, 300_000)], &words, 3000));
    index_with(&env, &[]);
    let mut child = env.cmd().args(["push", "--postgres", &url, "--host", "h"]).stderr(Stdio::piped()).spawn().unwrap();
    std::thread::sleep(Duration::from_millis(150));
    cluster.stop_server();
    let _ = child.wait();
    cluster.start_server();
    let mut hub = cluster.client("team");
    push(&env, &url, "h");
    assert!(push(&env, &url, "h").contains(": 0 lines of 0 files"), "a second push finds nothing new");
    push(&env, &cluster.url("fresh"), "h");
    let mut fresh = cluster.client("fresh");
    same_rows(&hub_rows(&mut hub, "h"), &hub_rows(&mut fresh, "h"));
    assert_eq!(hub_entries(&mut hub, "h"), local_entries(&env));

    // A transcript rewritten in place (read again from its start) replaces its lines on the hub.
    env.write("p/s1.jsonl", claude_session("s1", &[], &["rewritten"], 5));
    index_with(&env, &[]);
    push(&env, &url, "h");
    assert_eq!(hub_entries(&mut hub, "h"), local_entries(&env));
    let old: i64 = hub
        .query_one("SELECT count(*) FROM entries WHERE host = 'h' AND session_id = 's1' AND text LIKE '%harbour%'", &[])
        .unwrap()
        .get(0);
    assert_eq!(old, 0, "none of the old lines stay");

    // An index made anew sends the host's rows again, and they are the same.
    let out = env.run(&["rebuild"]);
    assert!(out.status.success(), "rebuild: {}", String::from_utf8_lossy(&out.stderr));
    let said = push(&env, &url, "h");
    assert!(said.contains("made anew"), "{said}");
    assert_eq!(hub_entries(&mut hub, "h"), local_entries(&env));
}

/// Polls `f` until it is true or `limit` passes; how long it took.
fn wait_until(limit: Duration, mut f: impl FnMut() -> bool) -> Option<Duration> {
    let start = Instant::now();
    while start.elapsed() < limit {
        if f() {
            return Some(start.elapsed());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    None
}

#[test]
fn serve_push_sends_appends_at_once_backs_off_while_the_hub_is_down_and_forgets_on_the_hub_too() {
    let Some(cluster) = Cluster::start() else { return };
    let env = Env::new();
    env.write("p/live.jsonl", claude_session("live", &[fake_png(1, 2000)], &["first words"], 3));
    env.write("p/other.jsonl", claude_session("other", &[], &["other words"], 3));
    let url = cluster.url("team");
    let server = Server::start(&env, &["--push", &url, "--host", "desk"]);
    let mut hub = cluster.client("team");
    let count = |hub: &mut postgres::Client, session: &str| -> i64 {
        hub.query_one("SELECT count(*) FROM entries WHERE host = 'desk' AND session_id = $1", &[&session])
            .map(|r| r.get(0))
            .unwrap_or(-1)
    };
    assert!(wait_until(Duration::from_secs(30), || count(&mut hub, "live") == 4).is_some(), "the first push");
    // The pass that sent those lines goes on to the sessions' rows before it says it is current.
    let current = || server.json("/api/status")["push"]["state"] == "current";
    assert!(wait_until(Duration::from_secs(30), current).is_some(), "{}", server.json("/api/status")["push"]);
    assert_eq!(server.json("/api/status")["push"]["hub"], format!("hub@127.0.0.1:{}/team", cluster.port));

    // Appends arrive within a second or two.
    let mut took = Vec::new();
    for i in 0..5 {
        env.append(
            "p/live.jsonl",
            assistant_line("live", &format!("live-n{i}"), "live-a2", "appended", "2026-01-03T00:00:00.000Z") + "\n",
        );
        let arrived = wait_until(Duration::from_secs(20), || count(&mut hub, "live") == 5 + i);
        took.push(arrived.expect("the appended line reaches the hub"));
    }
    eprintln!("appends reached the hub in {took:?}");

    // The hub goes down: the push says so and tries again, and catches up once it is back.
    drop(hub);
    cluster.stop_server();
    env.append(
        "p/live.jsonl",
        assistant_line("live", "live-down", "live-a2", "written while the hub was down", "2026-01-04T00:00:00.000Z")
            + "\n",
    );
    let failing = wait_until(Duration::from_secs(20), || server.json("/api/status")["push"]["state"] == "failing");
    assert!(failing.is_some(), "{}", server.json("/api/status")["push"]);
    let status = server.json("/api/status");
    assert!(status["push"]["error"].as_str().is_some_and(|e| !e.is_empty()), "{status}");
    assert!(status["push"]["retryInSecs"].as_u64().is_some(), "{status}");
    // The server itself goes on answering while the hub is down.
    assert_eq!(server.json("/api/sessions")["sessions"].as_array().unwrap().len(), 2);
    cluster.start_server();
    let mut hub = cluster.client("team");
    assert!(
        wait_until(Duration::from_secs(90), || count(&mut hub, "live") == 10).is_some(),
        "caught up after the hub came back"
    );
    assert!(wait_until(Duration::from_secs(10), || server.json("/api/status")["push"]["state"] == "current").is_some());

    // Forgetting a session on the host removes it from the hub.
    let res = server.client.delete(format!("{}/api/sessions/live", server.base)).send().unwrap();
    assert!(res.status().is_success(), "{}", res.status());
    let gone = wait_until(Duration::from_secs(30), || {
        count(&mut hub, "live") == 0
            && hub
                .query_one("SELECT count(*) FROM sessions WHERE host = 'desk' AND id = 'live'", &[])
                .unwrap()
                .get::<_, i64>(0)
                == 0
    });
    assert!(gone.is_some(), "the forgotten session is deleted from the hub");
    assert_eq!(count(&mut hub, "other"), 4, "the other session stays");
    let photos: i64 = hub.query_one("SELECT count(*) FROM media WHERE host = 'desk'", &[]).unwrap().get(0);
    assert_eq!(photos, 0, "its photos' rows go with it");
}

#[test]
fn a_password_on_the_command_line_is_refused_and_the_pg_variables_are_read() {
    let env = Env::new();
    let out = env.run(&["push", "--postgres", "postgres://u:secret@127.0.0.1:1/db"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("PGPASSWORD"), "{}", String::from_utf8_lossy(&out.stderr));
    // From the environment, the same URL is taken (and the connection is then refused: port 1).
    let out =
        env.cmd().args(["push"]).env("SCROLLBACK_POSTGRES", "postgres://u:secret@127.0.0.1:1/db").output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains("u@127.0.0.1:1/db") && !stderr.contains("secret"), "{stderr}");
    let out = env
        .cmd()
        .args(["push"])
        .env("PGHOST", "127.0.0.1")
        .env("PGPORT", "1")
        .env("PGUSER", "pusher")
        .env("PGDATABASE", "team")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("pusher@127.0.0.1:1/team"), "{stderr}");
}

#[test]
fn a_nul_in_a_timestamp_or_a_media_type_is_made_safe_and_the_push_goes_on_past_its_file() {
    let Some(cluster) = Cluster::start() else { return };
    let env = Env::new();
    env.write("p/a.jsonl", claude_session("a", &[], &["before the nul"], 3));
    // A line whose timestamp, text and image media type hold a NUL (`\u0000` in the JSON), and a
    // reply whose timestamp and model do.
    let photo = fake_png(7, 3000);
    let content = format!(
        "[{{\"type\":\"text\",\"text\":\"nul\\u0000here\"}},{}]",
        image_block("image/png\\u0000", &b64(&photo))
    );
    let first = user_line("b", "b-u0", &content, "").replace("00:00:00.000Z", "00:00:00\\u0000Z");
    let reply = assistant_line("b", "b-a0", "b-u0", "after the nul", "2026-01-01T00:01:00\u{0}Z")
        .replace("claude-sonnet-4-5", "claude\\u0000");
    env.write("p/b.jsonl", format!("{first}\n{reply}\n"));
    env.write("p/c.jsonl", claude_session("c", &[], &["after the nul"], 3));
    index_with(&env, &[]);
    let nul: i64 = env
        .conn()
        .query_row("SELECT count(*) FROM entries WHERE instr(timestamp, char(0)) > 0", [], |r| r.get(0))
        .unwrap();
    assert_eq!(nul, 2, "the index holds the timestamps as written");
    let url = cluster.url("team");
    let said = push(&env, &url, "h");
    assert!(said.contains(": 10 lines of 3 files"), "{said}");
    let mut hub = cluster.client("team");
    // Every line is there, a NUL as U+FFFD.
    let safe = |s: Option<String>| s.map(|s| s.replace('\0', "\u{FFFD}"));
    let local: Vec<Line> = local_entries(&env)
        .into_iter()
        .map(|(f, o, s, stripped, texts, d)| (f, o, s, safe(stripped), texts.map(safe), d))
        .collect();
    assert_eq!(hub_entries(&mut hub, "h"), local);
    let stamps: Vec<String> = hub
        .query("SELECT timestamp FROM entries WHERE host = 'h' AND session_id = 'b' ORDER BY off", &[])
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert_eq!(stamps, ["2026-01-01T00:00:00\u{FFFD}Z", "2026-01-01T00:01:00\u{FFFD}Z"]);
    let sessions: Vec<String> = hub
        .query("SELECT id FROM sessions WHERE host = 'h' ORDER BY id", &[])
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert_eq!(sessions, ["a", "b", "c"]);
    let first: String =
        hub.query_one("SELECT first_timestamp FROM sessions WHERE host = 'h' AND id = 'b'", &[]).unwrap().get(0);
    assert_eq!(first, "2026-01-01T00:00:00\u{FFFD}Z");
    let hash = blake3::hash(&photo).to_hex().to_string();
    let row = hub.query_one("SELECT media_type, bytes FROM blobs WHERE blake3 = $1", &[&hash]).unwrap();
    assert_eq!(row.get::<_, Option<String>>(0).as_deref(), Some("image/png\u{FFFD}"));
    assert_eq!(row.get::<_, Vec<u8>>(1), photo);
    let media: Option<String> =
        hub.query_one("SELECT media_type FROM media WHERE host = 'h' AND blake3 = $1", &[&hash]).unwrap().get(0);
    assert_eq!(media.as_deref(), Some("image/png\u{FFFD}"));
    let model: Option<String> =
        hub.query_one("SELECT model FROM usage WHERE host = 'h' AND session_id = 'b'", &[]).unwrap().get(0);
    assert_eq!(model.as_deref(), Some("claude\u{FFFD}"));
    assert!(push(&env, &url, "h").contains(": 0 lines of 0 files"), "and nothing is left to send");
}

#[test]
fn two_data_directories_under_one_host_name_are_refused_until_one_takes_the_name_over() {
    let Some(cluster) = Cluster::start() else { return };
    let url = cluster.url("team");
    // Two machines (a clone, a container) with one host name, each with its own data directory.
    let first = Env::new();
    first.write("p/one.jsonl", claude_session("one", &[], &["the first machine"], 4));
    index_with(&first, &[]);
    let second = Env::new();
    second.write("p/two.jsonl", claude_session("two", &[], &["the second machine"], 6));
    index_with(&second, &[]);
    push(&first, &url, "clone");
    let mut hub = cluster.client("team");
    // A hub of schema version 1 (no identities, no marks, said and tool text together) is migrated
    // by the next push, which sends every line again, and the name, which no identity held, is the
    // first data directory's.
    hub.batch_execute(
        "DROP TABLE marks, stats_hours, tool_hours, response_hours, usage_hours, edits, calls;
         ALTER TABLE usage DROP COLUMN local_id;
         ALTER TABLE hosts DROP COLUMN identity; ALTER TABLE sessions DROP COLUMN git_branch;
         DROP INDEX entries_recent; ALTER TABLE entries DROP COLUMN tsv, DROP COLUMN tool_text, DROP COLUMN tools;
         ALTER TABLE entries ADD COLUMN tsv tsvector GENERATED ALWAYS AS
             (to_tsvector('simple', replace(coalesce(text, ''), U&'\\200B', ' '))) STORED;
         CREATE INDEX entries_tsv ON entries USING gin(tsv);
         ALTER TABLE entries ADD FOREIGN KEY (host, file_id) REFERENCES files(host, file_id) ON DELETE CASCADE,
             ALTER COLUMN stripped SET COMPRESSION pglz, ALTER COLUMN text SET COMPRESSION pglz;
         UPDATE hub_meta SET value = '1'",
    )
    .unwrap();
    let said = push(&first, &url, "clone");
    assert!(!said.contains(": 0 lines"), "every line is sent again: {said}");
    cluster.create_database("fresh");
    push(&second, &cluster.url("fresh"), "other");
    let columns = |hub: &mut postgres::Client| -> Vec<String> {
        hub.query(
            "SELECT * FROM (SELECT table_name || '.' || column_name || ' ' || data_type FROM information_schema.columns
                            WHERE table_schema = 'public' ORDER BY table_name, ordinal_position) c
             UNION ALL SELECT * FROM (SELECT indexdef FROM pg_indexes WHERE schemaname = 'public' ORDER BY indexname) i
             UNION ALL SELECT * FROM (SELECT conrelid::regclass || ' ' || pg_get_constraintdef(oid) FROM pg_constraint
                                      WHERE connamespace = 'public'::regnamespace ORDER BY 1) k
             UNION ALL SELECT * FROM (SELECT attrelid::regclass || '.' || attname || ' ' || attcompression::text FROM pg_attribute
                                      WHERE attcompression <> '' AND NOT attisdropped AND attrelid IN
                                          (SELECT oid FROM pg_class WHERE relnamespace = 'public'::regnamespace)
                                      ORDER BY 1) z",
            &[],
        )
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect()
    };
    assert_eq!(columns(&mut hub), columns(&mut cluster.client("fresh")), "migrated as a fresh hub");
    let version: String = hub.query_one("SELECT value FROM hub_meta WHERE key = 'schema_version'", &[]).unwrap().get(0);
    assert_eq!(version, "8");
    let out = second.run(&["push", "--postgres", &url, "--host", "clone"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "a second data directory pushing as clone is refused: {stderr}");
    assert!(stderr.contains("\"clone\"") && stderr.contains("--take-over"), "{stderr}");
    assert_eq!(hub_entries(&mut hub, "clone"), local_entries(&first), "the first's rows stay");
    assert!(push(&first, &url, "clone").contains(": 0 lines of 0 files"), "the first pushes on as before");
    // A hub of version 4 (no overview's sums, no outline's figures) is migrated by the next push,
    // which sends each session's sums and figures with its row, and no line again.
    let sums = |hub: &mut postgres::Client| -> i64 {
        hub.query_one("SELECT count(*) FROM stats_hours WHERE host = 'clone'", &[]).unwrap().get(0)
    };
    let local_sums: i64 = first.conn().query_row("SELECT count(*) FROM stats_hours", [], |r| r.get(0)).unwrap();
    assert!(local_sums > 0);
    assert_eq!(sums(&mut hub), local_sums);
    hub.batch_execute(
        "DROP TABLE stats_hours, tool_hours, response_hours, usage_hours, edits, calls;
         ALTER TABLE usage DROP COLUMN local_id;
         ALTER TABLE sessions DROP COLUMN git_branch; UPDATE hub_meta SET value = '4'",
    )
    .unwrap();
    let said = push(&first, &url, "clone");
    assert!(said.contains(": 0 lines of 1 file"), "no line is sent again: {said}");
    assert_eq!(sums(&mut hub), local_sums, "the sums are sent");
    let standing: Vec<(String, Option<i64>)> = hub
        .query("SELECT key, local_id FROM usage WHERE host = 'clone' ORDER BY key", &[])
        .unwrap()
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect();
    let local_standing: Vec<(String, Option<i64>)> = first
        .conn()
        .prepare("SELECT key, entry_id FROM usage ORDER BY key")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap();
    assert!(!local_standing.is_empty());
    assert_eq!(standing, local_standing, "each response names the line it stands on");
    assert_eq!(columns(&mut hub), columns(&mut cluster.client("fresh")), "migrated as a fresh hub");
    // Each data directory's identity is a private file of its own, kept out of the index.
    let id = std::fs::read_to_string(first.data.join("hub-identity")).unwrap();
    assert_ne!(id, std::fs::read_to_string(second.data.join("hub-identity")).unwrap());
    let mode = std::os::unix::fs::PermissionsExt::mode(
        &std::fs::metadata(first.data.join("hub-identity")).unwrap().permissions(),
    );
    assert_eq!(mode & 0o077, 0, "{mode:o}");
    let recorded: Option<String> =
        hub.query_one("SELECT identity FROM hosts WHERE name = 'clone'", &[]).unwrap().get(0);
    assert_eq!(recorded.as_deref(), Some(id.trim()));

    // Taking the name over replaces the first's rows with the second's.
    let out = second.run(&["push", "--postgres", &url, "--host", "clone", "--take-over"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(hub_entries(&mut hub, "clone"), local_entries(&second));
    let sessions: Vec<String> =
        hub.query("SELECT id FROM sessions WHERE host = 'clone'", &[]).unwrap().iter().map(|r| r.get(0)).collect();
    assert_eq!(sessions, ["two"]);
    // Now the first is the one refused, and the second pushes on.
    let out = first.run(&["push", "--postgres", &url, "--host", "clone"]);
    assert!(!out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(push(&second, &url, "clone").contains(": 0 lines of 0 files"));
    // `--take-over` names the host it takes.
    let out = second.run(&["push", "--postgres", &url, "--take-over"]);
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
}

/// A TCP relay to the hub that goes silent once it has passed `limit` bytes from its client on: it
/// then takes every byte either side sends and passes none on, and keeps both connections open, as
/// a hub behind a dead link or on a hung machine would.
struct Relay {
    port: u16,
    silent: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl Relay {
    fn start(to: u16, limit: usize) -> Relay {
        use std::io::{Read, Write};
        use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let silent = std::sync::Arc::new(AtomicBool::new(false));
        let passed = std::sync::Arc::new(AtomicUsize::new(0));
        let quiet = silent.clone();
        std::thread::spawn(move || {
            for client in listener.incoming() {
                let Ok(client) = client else { continue };
                let Ok(server) = std::net::TcpStream::connect(("127.0.0.1", to)) else { continue };
                let pairs = [(client.try_clone().unwrap(), server.try_clone().unwrap(), true), (server, client, false)];
                for (mut from, mut into, upstream) in pairs {
                    let (quiet, passed) = (quiet.clone(), passed.clone());
                    std::thread::spawn(move || {
                        let mut buf = vec![0u8; 64 << 10];
                        loop {
                            let n = match from.read(&mut buf) {
                                Ok(0) | Err(_) => break,
                                Ok(n) => n,
                            };
                            if upstream && passed.fetch_add(n, Ordering::SeqCst) + n > limit {
                                quiet.store(true, Ordering::SeqCst);
                            }
                            if !quiet.load(Ordering::SeqCst) && into.write_all(&buf[..n]).is_err() {
                                break;
                            }
                        }
                        // Silent, the other side is never told: both stay open.
                        if quiet.load(Ordering::SeqCst) {
                            std::thread::sleep(Duration::from_secs(3600));
                        }
                    });
                }
            }
        });
        Relay { port, silent }
    }

    fn url(&self, db: &str) -> String {
        format!("postgres://hub@127.0.0.1:{}/{db}", self.port)
    }

    fn is_silent(&self) -> bool {
        self.silent.load(std::sync::atomic::Ordering::SeqCst)
    }
}

/// Waits for `child` to end, at most `limit`; killed and `None` past it.
fn wait_for_exit(child: &mut std::process::Child, limit: Duration) -> Option<std::process::ExitStatus> {
    let start = Instant::now();
    while start.elapsed() < limit {
        if let Some(status) = child.try_wait().unwrap() {
            return Some(status);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    let _ = child.wait();
    None
}

#[test]
fn a_hub_gone_silent_mid_push_ends_the_push_with_an_error_frees_the_host_and_lets_serve_stop() {
    let Some(cluster) = Cluster::start() else { return };
    let words = ["harbour", "lighthouse", "tide"];
    let env = Env::new();
    env.write("p/s0.jsonl", claude_session("s0", &[fake_png(300, 200_000)], &words, 2000));
    env.write("p/s1.jsonl", claude_session("s1", &[fake_png(301, 200_000)], &words, 2000));
    index_with(&env, &[]);
    // The hub goes silent after some 300 kB of the push: midway through its first file.
    let relay = Relay::start(cluster.port, 300_000);
    let mut child = env
        .cmd()
        .args(["push", "--postgres", &relay.url("team"), "--host", "h"])
        .env("SCROLLBACK_HUB_TIMEOUT", "2")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let status = wait_for_exit(&mut child, Duration::from_secs(120)).expect("the push ends by itself");
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    assert!(relay.is_silent(), "the relay went silent");
    assert!(!status.success(), "{stderr}");
    assert!(stderr.contains("did not answer"), "{stderr}");
    // The hub let the host's lock go with the session: the next push (straight to the hub) takes
    // it and sends everything.
    let out = env
        .cmd()
        .args(["push", "--postgres", &cluster.url("team"), "--host", "h"])
        .env("SCROLLBACK_HUB_TIMEOUT", "2")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let mut hub = cluster.client("team");
    assert_eq!(hub_entries(&mut hub, "h"), local_entries(&env));

    // `serve --push` stuck on a silent hub (whose answers it would wait for ten minutes) still
    // ends on SIGTERM.
    let other = Env::new();
    other.write("p/s2.jsonl", claude_session("s2", &[fake_png(302, 200_000)], &words, 2000));
    let relay = Relay::start(cluster.port, 300_000);
    let mut server = Server::start_with(
        &other,
        &["--push", &relay.url("team"), "--host", "desk"],
        &[("SCROLLBACK_HUB_TIMEOUT", "600")],
    );
    assert!(wait_until(Duration::from_secs(60), || relay.is_silent()).is_some(), "the push reached the relay");
    std::thread::sleep(Duration::from_millis(500));
    let push = server.json("/api/status")["push"].clone();
    assert_eq!(push["state"], "pushing", "{push}");
    let term = std::process::Command::new("kill").args(["-TERM", &server.child.id().to_string()]).status().unwrap();
    assert!(term.success());
    let status = wait_for_exit(&mut server.child, Duration::from_secs(60));
    assert!(status.is_some(), "serve ended on SIGTERM while its push was stuck");
}

/// `scrollback push` as `host` with the variables `vars`, which must fail; its stderr.
fn push_refused(env: &Env, url: &str, host: &str, vars: &[(&str, &str)]) -> String {
    let out = env.cmd().args(["push", "--postgres", url, "--host", host]).envs(vars.iter().copied()).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!out.status.success(), "the push was to fail: {}{stderr}", String::from_utf8_lossy(&out.stdout));
    assert!(!stderr.contains("panicked"), "{stderr}");
    stderr
}

#[test]
fn tls_require_encrypts_and_verify_ca_and_verify_full_check_the_ca_and_the_name() {
    // The hub takes TCP over TLS only: every push that succeeds below was encrypted.
    let Some((cluster, certs)) = Cluster::start_tls() else { return };
    let env = Env::new();
    env.write("p/t1.jsonl", claude_session("t1", &[fake_png(31, 800)], &["sent over TLS", "to the hub"], 4));
    index_with(&env, &[]);
    let port = cluster.port;
    let (ca, other_ca) = (certs.ca.display().to_string(), certs.other_ca.display().to_string());
    // By address (the certificate names 127.0.0.1), and by a name (hub.test) on that address.
    let by_ip = |query: &str| format!("postgres://hub@127.0.0.1:{port}/team?{query}");
    let by_name = |name: &str, query: &str| format!("postgres://hub@{name}:{port}/team?hostaddr=127.0.0.1&{query}");

    // Without TLS the hub refuses the connection.
    let e = push_refused(&env, &by_ip("sslmode=disable"), "tls", &[]);
    assert!(e.contains("no pg_hba.conf entry") && e.contains("no encryption"), "{e}");
    // libpq's default (prefer) and require: encrypted, the certificate not checked.
    push(&env, &cluster.url("team"), "tls");
    push(&env, &by_ip("sslmode=require"), "tls");
    push(&env, &by_name("other.test", "sslmode=require"), "tls");
    // verify-full: the CA and the name, an address or a DNS name.
    push(&env, &by_ip(&format!("sslmode=verify-full&sslrootcert={ca}")), "tls");
    push(&env, &by_name("hub.test", &format!("sslmode=verify-full&sslrootcert={ca}")), "tls");
    let e = push_refused(&env, &by_name("other.test", &format!("sslmode=verify-full&sslrootcert={ca}")), "tls", &[]);
    assert!(
        e.contains("TLS") && e.contains("sslmode=verify-full") && e.contains("not valid for name \"other.test\""),
        "{e}"
    );
    // verify-ca: the CA, whatever the name.
    push(&env, &by_name("other.test", &format!("sslmode=verify-ca&sslrootcert={ca}")), "tls");
    // Another CA: refused by every mode that checks the chain (require does once sslrootcert is given).
    for mode in ["verify-ca", "verify-full", "require"] {
        let e = push_refused(&env, &by_ip(&format!("sslmode={mode}&sslrootcert={other_ca}")), "tls", &[]);
        assert!(e.contains(&format!("sslmode={mode}")) && e.contains("no CA of sslrootcert signed"), "{e}");
    }
    // A key=value string, and the PG variables.
    push(
        &env,
        &format!(
            "host=hub.test hostaddr=127.0.0.1 port={port} user=hub dbname=team sslmode=verify-full sslrootcert='{ca}'"
        ),
        "tls",
    );
    let vars = [("PGSSLMODE", "verify-full"), ("PGSSLROOTCERT", ca.as_str())];
    let out =
        env.cmd().args(["push", "--postgres", &by_name("hub.test", ""), "--host", "tls"]).envs(vars).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let e = push_refused(&env, &by_name("other.test", ""), "tls", &vars);
    assert!(e.contains("not valid for name"), "PGSSLMODE and PGSSLROOTCERT are read: {e}");
    let out = env
        .cmd()
        .args(["push", "--postgres", &by_ip("sslmode=verify-full"), "--host", "tls"])
        .env("PGSSLROOTCERT", &ca)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "the mode in the URL, the file in PGSSLROOTCERT: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let e = push_refused(&env, &by_name("other.test", "sslmode=require"), "tls", &[("PGSSLROOTCERT", &other_ca)]);
    assert!(e.contains("no CA of sslrootcert signed"), "{e}");

    // No TLS over the Unix socket, whatever the mode (as libpq: the server has none there).
    let socket =
        format!("host={} port={port} user=hub dbname=team sslmode=verify-full", cluster.socket_dir().display());
    push(&env, &socket, "tls");

    // A root certificate file that is missing or is not PEM, a verifying mode without one.
    let missing = env.path("nowhere/ca.pem");
    let e = push_refused(&env, &by_ip(&format!("sslmode=verify-full&sslrootcert={}", missing.display())), "tls", &[]);
    assert!(e.contains(&format!("sslrootcert {}: cannot be read", missing.display())), "{e}");
    let junk = env.write("junk.pem", "this is no certificate\n");
    let e = push_refused(&env, &by_ip(&format!("sslmode=verify-ca&sslrootcert={}", junk.display())), "tls", &[]);
    assert!(e.contains("junk.pem") && e.contains("no PEM certificate"), "{e}");
    let e = push_refused(&env, &by_ip("sslmode=verify-full"), "tls", &[]);
    assert!(e.contains("sslmode=verify-full needs sslrootcert"), "{e}");

    // A password over TLS, bound to the hub's certificate (SCRAM-SHA-256-PLUS).
    let mut hub = cluster.local_client("team");
    hub.batch_execute("CREATE ROLE pusher LOGIN SUPERUSER PASSWORD 'over tls'").unwrap();
    let url =
        format!("postgres://pusher@127.0.0.1:{port}/team?sslmode=verify-full&sslrootcert={ca}&channel_binding=require");
    let out =
        env.cmd().args(["push", "--postgres", &url, "--host", "tls"]).env("PGPASSWORD", "over tls").output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let e = push_refused(&env, &url, "tls", &[("PGPASSWORD", "wrong")]);
    assert!(e.contains("password authentication failed"), "{e}");

    // What was pushed is there.
    assert_eq!(hub_entries(&mut hub, "tls"), local_entries(&env));
}

#[test]
fn require_refuses_a_hub_without_tls_and_prefer_then_connects_without_it() {
    let Some(cluster) = Cluster::start() else { return };
    let env = Env::new();
    env.write("p/t2.jsonl", claude_session("t2", &[], &["no TLS here"], 2));
    index_with(&env, &[]);
    let e = push_refused(&env, &format!("{}?sslmode=require", cluster.url("team")), "plain", &[]);
    assert!(e.contains("error performing TLS handshake: server does not support TLS"), "{e}");
    push(&env, &format!("{}?sslmode=prefer", cluster.url("team")), "plain");
    assert_eq!(hub_entries(&mut cluster.client("team"), "plain"), local_entries(&env));
}

#[test]
fn a_person_s_marks_reach_the_hub_changed_cleared_and_forgotten_ones_too() {
    let Some(cluster) = Cluster::start() else { return };
    let env = Env::new();
    env.write("p/a.jsonl", claude_session("a", &[], &["harbour"], 3));
    env.write("p/b.jsonl", claude_session("b", &[], &["tide"], 3));
    env.write("p/c.jsonl", claude_session("c", &[], &["compiler"], 3));
    let server = Server::start(&env, &[]);
    let indexed = || server.json("/api/sessions")["sessions"].as_array().is_some_and(|s| s.len() == 3);
    assert!(wait_until(Duration::from_secs(30), indexed).is_some(), "the server indexed the three sessions");
    let put = |session: &str, change: serde_json::Value| {
        let res = server
            .client
            .put(format!("{}/api/sessions/{session}/marks", server.base))
            .header("content-type", "application/json")
            .body(change.to_string())
            .send()
            .unwrap();
        assert!(res.status().is_success(), "{}", res.status());
    };
    let url = cluster.url("team");
    let mut hub = cluster.client("team");
    // The marks as the hub shows them beside the sessions (docs/hub.md's query).
    let shown = |hub: &mut postgres::Client| -> Vec<(String, Option<String>, bool)> {
        hub.query(
            "SELECT s.id, coalesce(m.title, s.title), coalesce(m.pinned, false)
             FROM sessions s LEFT JOIN marks m ON m.host = s.host AND m.session_id = s.id
             WHERE s.host = 'h' ORDER BY s.id",
            &[],
        )
        .unwrap()
        .iter()
        .map(|r| (r.get(0), r.get(1), r.get(2)))
        .collect()
    };
    let marks = |hub: &mut postgres::Client| -> Vec<(String, Option<String>, bool)> {
        hub.query("SELECT session_id, title, pinned FROM marks WHERE host = 'h' ORDER BY session_id", &[])
            .unwrap()
            .iter()
            .map(|r| (r.get(0), r.get(1), r.get(2)))
            .collect()
    };
    let mark = |id: &str, title: Option<&str>, pinned: bool| (id.to_owned(), title.map(str::to_owned), pinned);

    put("a", serde_json::json!({"title": "Harbour photos", "pinned": true}));
    put("b", serde_json::json!({"pinned": true}));
    let said = push(&env, &url, "h");
    assert!(said.contains("2 marks"), "{said}");
    let shown_now = shown(&mut hub);
    assert_eq!(shown_now[0], mark("a", Some("Harbour photos"), true));
    assert!(shown_now[1].2 && shown_now[1].1.is_some(), "b pinned, with its transcript's title: {shown_now:?}");
    assert!(!shown_now[2].2, "c is not pinned");
    // `serve --postgres` shows the title a person gave, and their pin.
    let reader = Env::new();
    let hub_server = Server::start(&reader, &["--postgres", &url]);
    let listed = hub_server.json("/api/sessions");
    let a = listed["sessions"].as_array().unwrap().iter().find(|s| s["id"] == "a").unwrap().clone();
    assert_eq!((&a["title"], &a["pinned"]), (&Value::from("Harbour photos"), &Value::from(true)), "{a}");
    let c = listed["sessions"].as_array().unwrap().iter().find(|s| s["id"] == "c").unwrap().clone();
    assert_eq!(c["pinned"], false, "{c}");
    // And its overview names the session so too.
    let overview = hub_server.json("/api/stats");
    let a = overview["longestSessions"].as_array().unwrap().iter().find(|s| s["sessionId"] == "a").unwrap().clone();
    assert_eq!(a["title"], "Harbour photos", "{a}");
    drop(hub_server);
    let set_at: String =
        hub.query_one("SELECT set_at FROM marks WHERE host = 'h' AND session_id = 'a'", &[]).unwrap().get(0);
    assert!(set_at.starts_with("20") && set_at.ends_with('Z'), "{set_at}");
    assert!(push(&env, &url, "h").contains("0 marks"), "a second push sends nothing");

    // A title changed, a mark cleared (title given back, pin taken off): the latest write is on the hub.
    put("a", serde_json::json!({"title": "Harbour, second look"}));
    put("b", serde_json::json!({"pinned": false}));
    let said = push(&env, &url, "h");
    assert!(said.contains("2 marks"), "{said}");
    assert_eq!(marks(&mut hub), vec![mark("a", Some("Harbour, second look"), true)]);
    let later: String =
        hub.query_one("SELECT set_at FROM marks WHERE host = 'h' AND session_id = 'a'", &[]).unwrap().get(0);
    assert!(later > set_at, "{later} after {set_at}");

    // A forgotten session's marks leave the hub with it.
    put("c", serde_json::json!({"title": "Compiler notes"}));
    push(&env, &url, "h");
    assert_eq!(marks(&mut hub).len(), 2);
    let res = server.client.delete(format!("{}/api/sessions/a", server.base)).send().unwrap();
    assert!(res.status().is_success(), "{}", res.status());
    push(&env, &url, "h");
    assert_eq!(marks(&mut hub), vec![mark("c", Some("Compiler notes"), false)]);
    assert!(push(&env, &url, "h").contains("0 marks"));

    // Another host's marks of a session of the same id stay its own.
    let other = Env::new();
    other.write("p/c.jsonl", claude_session("c", &[], &["compiler"], 3));
    let other_server = Server::start(&other, &[]);
    let indexed = || other_server.json("/api/sessions")["sessions"].as_array().is_some_and(|s| s.len() == 1);
    assert!(wait_until(Duration::from_secs(30), indexed).is_some());
    let res = other_server
        .client
        .put(format!("{}/api/sessions/c/marks", other_server.base))
        .header("content-type", "application/json")
        .body(serde_json::json!({"title": "Elsewhere"}).to_string())
        .send()
        .unwrap();
    assert!(res.status().is_success());
    push(&other, &url, "g");
    let latest: String = hub
        .query_one(
            "SELECT DISTINCT ON (session_id) title FROM marks WHERE session_id = 'c' ORDER BY session_id, set_at DESC",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(latest, "Elsewhere", "the last write of the two hosts'");
    assert_eq!(marks(&mut hub), vec![mark("c", Some("Compiler notes"), false)]);
}

#[test]
fn a_reader_cannot_push_and_says_why_and_the_documented_pusher_grants_are_enough() {
    let Some(cluster) = Cluster::start() else { return };
    let env = Env::new();
    env.write("p/a.jsonl", claude_session("a", &[fake_png(4, 900)], &["harbour"], 3));
    index_with(&env, &[]);
    // The schema, made by the database's owner with a first push (docs/hub.md, Roles), then the
    // two roles with the grants that page gives.
    push(&env, &cluster.url("team"), "laptop");
    let mut hub = cluster.client("team");
    hub.batch_execute(
        "CREATE ROLE pusher LOGIN;
         CREATE ROLE reader LOGIN;
         GRANT CONNECT ON DATABASE team TO pusher, reader;
         GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO pusher;
         GRANT SELECT ON ALL TABLES IN SCHEMA public TO reader;",
    )
    .unwrap();
    let as_role = |role: &str| format!("postgres://{role}@127.0.0.1:{}/team", cluster.port);
    env.write("p/b.jsonl", claude_session("b", &[fake_png(5, 900)], &["tide"], 3));
    index_with(&env, &[]);
    let before = hub_rows(&mut hub, "laptop");
    // A reader's push is refused before it writes a row, and says what the role lacks.
    let stderr = push_refused(&env, &as_role("reader"), "laptop", &[]);
    assert!(stderr.contains("permission denied"), "{stderr}");
    assert!(stderr.contains("reader") && stderr.contains("INSERT, UPDATE and DELETE"), "{stderr}");
    same_rows(&hub_rows(&mut hub, "laptop"), &before);
    // The pusher's grants are enough: the new session and its photo reach the hub.
    push(&env, &as_role("pusher"), "laptop");
    let sessions: Vec<String> = hub
        .query("SELECT id FROM sessions WHERE host = 'laptop' ORDER BY id", &[])
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert_eq!(sessions, ["a", "b"]);
    let photos: i64 = hub.query_one("SELECT count(*) FROM media WHERE host = 'laptop'", &[]).unwrap().get(0);
    assert_eq!(photos, 2);
}

/// A hub's session list answers every query its search answers (two words and more, every field),
/// as a host's own server does; a NUL in a query string (`q`, `host`, `project`, `model`) is a 400,
/// never a 503.
#[test]
fn a_hub_s_session_list_answers_every_query_as_a_host_s_own_server_does() {
    let Some(cluster) = Cluster::start() else { return };
    let url = cluster.url("team");
    let env = Env::new();
    crate::http::deploy_sessions(&env);
    index_with(&env, &[]);
    push(&env, &url, "laptop");
    let own = Server::start(&env, &[]);
    let reader = Env::new();
    let hub = Server::start(&reader, &["--postgres", &url]);
    for q in crate::http::LISTED_QUERIES {
        let listed = crate::http::listed_sessions(&hub, q);
        assert_eq!(listed, crate::http::listed_sessions(&own, q), "{q}");
        assert_eq!(listed, crate::http::searched_sessions(&hub, q), "{q}");
    }
    for path in
        ["/api/sessions?q=dep%00loy", "/api/search?q=dep%00loy", "/api/sessions?host=%00", "/api/usage?model=%00"]
    {
        assert_eq!(hub.get(path).status(), 400, "{path}");
    }
}
