//! Pi's sessions, on a tree generated here from the facts docs/formats.md cites (badlogic/pi-mono's
//! `session-manager.ts` and `packages/ai/src/types.ts`): every entry type and message role, photos
//! in a person's message and in a tool's result (keys in both orders), a failed tool call, usage
//! per response, an abandoned branch, a 2 MB photo line, a non-UTF-8 line and a torn last line; a
//! fork that copies its parent's first entries, a sub-agent's session in a subdirectory beside an
//! extension's artifacts, and a v1 file. Each is checked as the other agents' are: refs byte-exact,
//! no payload byte in SQLite, every line restored byte for byte, usage in the ledger once, the
//! viewer's parts over the API, live appends, and MCP `read_session` and `get_photo`.

use serde_json::{Value, json};

use crate::util::fixtures::pi::{MAIN, SESSION, assistant, first_entries, line, main_session, message};
use crate::util::server::Server;
use crate::util::{Env, check_invariants, fake_png};

const FORK: &str = "019cae00-1a00-7c31-9d5e-2f6a8b1c3d4f";
const FORKED: &str =
    "pi/sessions/--home-ana-proj--/2026-03-02T09-00-00-000Z_019cae00-1a00-7c31-9d5e-2f6a8b1c3d4f.jsonl";
const SUB: &str = "pi/sessions/--home-ana-proj--/2026-03-01T10-00-00-000Z_019ca8d7-2d00-7c31-9d5e-2f6a8b1c3d4e/run1/run-0/session.jsonl";
const V1: &str = "pi/sessions/--home-ana-old--/2025-12-08T22-41-05-306Z_d97339c6-6c10-4827-846b-9ff1d9c3dc37.jsonl";

/// A session's id, agent, title, project and parent.
type SessionRow = (String, String, Option<String>, Option<String>, Option<String>);

/// The rest of it, and one more reply.
fn torn_rest() -> String {
    let rest = "looks fine.\"}],\"api\":\"anthropic-messages\",\"provider\":\"anthropic\",\"model\":\"claude-sonnet-4-5\",\"usage\":{\"input\":7,\"output\":9,\"cacheRead\":5000,\"cacheWrite\":0,\"totalTokens\":5016},\"stopReason\":\"stop\",\"timestamp\":1772359559000}}\n";
    rest.to_owned()
        + &message(
            "b4c5d6e7",
            "a3b4c5d6",
            "2026-03-01T10:07:00.000Z",
            assistant(json!([{ "type": "text", "text": "Anything else?" }]), [3, 4, 5100, 0], "stop", 1772359619000),
        )
}

/// A `/fork` of the main session: its header names the parent's file, its first entries are the
/// parent's, copied verbatim (stamped before the header), then a turn of its own.
fn fork(env: &Env, photo: &[u8]) -> String {
    let parent = env.path(MAIN);
    let mut s = line(json!({ "type": "session", "version": 3, "id": FORK, "timestamp": "2026-03-02T09:00:00.000Z",
        "cwd": "/home/ana/proj", "parentSession": parent.to_str().unwrap() }));
    s += &first_entries(photo);
    s += &message(
        "c5d6e7f8",
        "d4e5f6a7",
        "2026-03-02T09:00:01.000Z",
        json!({ "role": "user", "content": [{ "type": "text", "text": "Now the tests too" }], "timestamp": 1772442001000u64 }),
    );
    s += &message(
        "d6e7f8a9",
        "c5d6e7f8",
        "2026-03-02T09:00:04.000Z",
        assistant(json!([{ "type": "text", "text": "Running them." }]), [100, 20, 0, 0], "stop", 1772442002000),
    );
    s
}

/// A sub-agent's run, as the pi-subagents extension keeps it: an ordinary session in a directory
/// named after the parent's file.
fn sub_agent() -> String {
    let mut s = line(
        json!({ "type": "session", "version": 3, "id": "sub-agent-1", "timestamp": "2026-03-01T10:02:30.000Z", "cwd": "/home/ana/proj" }),
    );
    s += &line(json!({ "type": "message", "id": "e7f8a9b0", "parentId": null, "timestamp": "2026-03-01T10:02:30.100Z",
        "message": { "role": "user", "content": "Find every import of y", "timestamp": 1772359350000u64 } }));
    s += &message(
        "f8a9b0c1",
        "e7f8a9b0",
        "2026-03-01T10:02:33.000Z",
        assistant(json!([{ "type": "text", "text": "Two files import it." }]), [300, 12, 0, 0], "stop", 1772359351000),
    );
    s
}

/// A v1 file (before 0.31): no `version`, entries without ids, the model in the header.
fn v1() -> String {
    let mut s = line(
        json!({ "type": "session", "id": "d97339c6-6c10-4827-846b-9ff1d9c3dc37", "timestamp": "2025-12-08T22:41:05.000Z",
        "cwd": "/home/ana/old", "provider": "anthropic", "modelId": "claude-sonnet-4-5", "thinkingLevel": "off" }),
    );
    s += &line(
        json!({ "type": "message", "timestamp": "2025-12-08T22:41:05.306Z", "message": { "role": "user", "content": "Summarise the changelog", "timestamp": 1765233665292u64 } }),
    );
    s += &line(json!({ "type": "message", "timestamp": "2025-12-08T22:41:09.000Z",
        "message": assistant(json!([{ "type": "text", "text": "Three releases." }]), [2775, 141, 0, 0], "stop", 1765233665400) }));
    s
}

/// A small PNG an image decoder reads (MCP's `get_photo` looks at the photo it sends).
fn real_png(seed: u8) -> Vec<u8> {
    let img = image::RgbImage::from_fn(16, 12, |x, y| image::Rgb([x as u8 * 15, y as u8 * 20, seed]));
    let mut out = std::io::Cursor::new(Vec::new());
    img.write_to(&mut out, image::ImageFormat::Png).unwrap();
    out.into_inner()
}

fn roots(env: &Env) -> Vec<String> {
    vec!["--root".into(), format!("pi:{}", env.path("pi/sessions").display())]
}

fn index(env: &Env) -> String {
    env.index_roots(&roots(env))
}

/// The sum of `scrollback usage --json`'s rows by session: (session, [input, output, cache read,
/// cache write]).
fn usage_by_session(env: &Env) -> Vec<(String, [u64; 4])> {
    let out = env.run(&["usage", "--by", "session", "--json"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut rows: Vec<(String, [u64; 4])> = report["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let n = |k: &str| r[k].as_u64().unwrap();
            (
                r["key"].as_str().unwrap().to_owned(),
                [n("inputTokens"), n("outputTokens"), n("cacheReadTokens"), n("cacheWriteTokens")],
            )
        })
        .collect();
    rows.sort();
    rows
}

fn total(rows: &[(String, [u64; 4])]) -> [u64; 4] {
    rows.iter().fold([0; 4], |mut t, (_, r)| {
        (0..4).for_each(|i| t[i] += r[i]);
        t
    })
}

#[test]
fn generated_pi_sessions_index_with_their_photos_usage_forks_sub_agents_and_live_appends() {
    let env = Env::new();
    let photos = [fake_png(71, 300), fake_png(72, 500), fake_png(73, 2 << 20)];
    let main = env.write(MAIN, main_session(&photos));
    env.write(FORKED, fork(&env, &photos[0]));
    env.write(SUB, sub_agent());
    env.write(V1, v1());
    // The extension's artifacts: an event stream and its own copy of the child's conversation.
    env.write(
        "pi/sessions/--home-ana-proj--/subagent-artifacts/run1_events.jsonl",
        line(json!({ "version": 1, "recordType": "message", "runId": "run1", "text": "Two files import it." })),
    );
    env.write(
        "pi/sessions/--home-ana-proj--/2026-03-01T10-00-00-000Z_019ca8d7-2d00-7c31-9d5e-2f6a8b1c3d4e/run1/run-0/run1_transcript.jsonl",
        line(json!({ "version": 1, "recordType": "message", "runId": "run1", "text": "Two files import it." })),
    );
    let summary = index(&env);
    // Main 20 complete lines (the torn one waits), fork 7, sub-agent 3, v1 3.
    assert!(summary.starts_with("indexed 4 files, 33 lines, 4 payloads, 1 invalid line"), "{summary}");
    assert_eq!(check_invariants(&env.data), 32, "every valid line restored byte for byte");
    let conn = env.conn();
    let invalid: Vec<(String, i64)> = conn
        .prepare("SELECT path, line FROM invalid_lines")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap();
    assert_eq!(invalid, [(main.to_str().unwrap().to_owned(), 20)], "the line that is not UTF-8");

    // Every photo by its ref, byte-exact (the 2 MB one too), and none of their bytes in SQLite.
    for (r, photo) in [("c3d4e5f6", &photos[0]), ("e5f6a7b8", &photos[1]), ("8192a3b4", &photos[2])] {
        assert_eq!(&env.media(&format!("{SESSION}/{r}/0")).unwrap(), photo, "{r}");
    }
    assert_eq!(env.media(&format!("{FORK}/c3d4e5f6/0")).unwrap(), photos[0], "the fork's copy");
    let longest: i64 =
        conn.query_row("SELECT max(length(stored_line(stripped))) FROM entries", [], |r| r.get(0)).unwrap();
    assert!(longest < 2000, "the stored lines hold no payload: the longest is {longest} bytes");

    // Sessions: the header's id and cwd, the title pi shows, the fork's parent; no artifact is one.
    let sessions: Vec<SessionRow> = conn
        .prepare("SELECT id, agent, title, project, forked_from FROM sessions ORDER BY id")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)))
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap();
    let s = |id: &str, title: &str, project: &str, parent: Option<&str>| {
        (id.to_owned(), "pi".to_owned(), Some(title.to_owned()), Some(project.to_owned()), parent.map(str::to_owned))
    };
    assert_eq!(
        sessions,
        [
            s(SESSION, "Fix build import", "/home/ana/proj", None),
            s(FORK, "Now the tests too", "/home/ana/proj", Some(SESSION)),
            s("d97339c6-6c10-4827-846b-9ff1d9c3dc37", "Summarise the changelog", "/home/ana/old", None),
            s("sub-agent-1", "Find every import of y", "/home/ana/proj", None),
        ]
    );
    // The fork's copies of its parent's entries are hidden; its own are not.
    let fork_hidden: Vec<(String, Option<String>)> = conn
        .prepare("SELECT uuid, hidden FROM entries WHERE session_id = ?1 ORDER BY line")
        .unwrap()
        .query_map([FORK], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap();
    let fork_hidden: Vec<(&str, Option<&str>)> = fork_hidden.iter().map(|(u, h)| (u.as_str(), h.as_deref())).collect();
    assert_eq!(
        fork_hidden,
        [
            ("L1", None),
            ("a1b2c3d4", Some("fork")),
            ("b2c3d4e5", Some("fork")),
            ("c3d4e5f6", Some("fork")),
            ("d4e5f6a7", Some("fork")),
            ("c5d6e7f8", None),
            ("d6e7f8a9", None)
        ]
    );
    // Entries keep their tree: the branch left for another is there, under its parent.
    let parent: Option<String> = conn
        .query_row("SELECT parent_uuid FROM entries WHERE session_id = ?1 AND uuid = '1a2b3c4d'", [SESSION], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(parent.as_deref(), Some("c3d4e5f6"));
    // Search: what was said, tool output and tool names; the fork's copies not twice.
    let hits = scrollback::read::history::search(&conn, "harbour", None, 20).unwrap();
    let found: Vec<(&str, &str)> =
        hits.iter().map(|h| (h.session_id.as_str(), h.entry_uuid.as_deref().unwrap())).collect();
    assert_eq!(found, [(SESSION, "c3d4e5f6")]);
    assert_eq!(scrollback::read::history::search(&conn, "lighthouse", None, 20).unwrap().len(), 1, "a compaction");
    let scope = scrollback::read::history::Scope { agent: Some("pi"), ..Default::default() };
    assert_eq!(scrollback::read::history::search_in(&conn, "exact text", scope, 20).unwrap().len(), 1, "a result");
    drop(conn);

    // Usage: each response once (the fork's copy of the first reply is the same response), the
    // errored one counts nothing.
    let rows = usage_by_session(&env);
    let expected = [1200 + 40 + 55 + 100 + 300 + 2775, 85 + 60 + 30 + 20 + 12 + 141, 4300 + 4400, 3100];
    assert_eq!(total(&rows), expected, "{rows:?}");
    let keys: i64 = env.conn().query_row("SELECT count(*) FROM usage", [], |r| r.get(0)).unwrap();
    assert_eq!(keys, 6);

    // Live: the torn line completed and one more appended; only they are read.
    env.append(MAIN, torn_rest());
    let summary = index(&env);
    assert!(summary.starts_with("indexed 1 file, 2 lines"), "{summary}");
    assert_eq!(check_invariants(&env.data), 34);
    let rows = usage_by_session(&env);
    assert_eq!(total(&rows), [expected[0] + 10, expected[1] + 13, expected[2] + 10100, expected[3]], "{rows:?}");
    assert!(index(&env).starts_with("indexed 0 files, 0 lines"));

    // pi resumes the v1 file: it rewrites it whole as v3 (a version, ids and parents, the same
    // times and messages). Read again from its start; its response is still counted once.
    let v3 = v1().replacen("{\"type\":\"session\",", "{\"type\":\"session\",\"version\":3,", 1);
    let mut lines: Vec<String> = v3.lines().map(str::to_owned).collect();
    lines[1] =
        lines[1].replacen("{\"type\":\"message\",", "{\"type\":\"message\",\"id\":\"0a0b0c0d\",\"parentId\":null,", 1);
    lines[2] = lines[2].replacen(
        "{\"type\":\"message\",",
        "{\"type\":\"message\",\"id\":\"1a1b1c1d\",\"parentId\":\"0a0b0c0d\",",
        1,
    );
    env.write(V1, lines.join("\n") + "\n");
    index(&env);
    assert_eq!(check_invariants(&env.data), 34);
    let conn = env.conn();
    let uuids: Vec<String> = conn
        .prepare("SELECT uuid FROM entries WHERE session_id = 'd97339c6-6c10-4827-846b-9ff1d9c3dc37' ORDER BY line")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap();
    assert_eq!(uuids, ["L1", "0a0b0c0d", "1a1b1c1d"], "the rewrite replaces the file's entries");
    let keys: i64 = conn.query_row("SELECT count(*) FROM usage", [], |r| r.get(0)).unwrap();
    assert_eq!(keys, 8, "the rewritten response is the same one");
    assert_eq!(total(&usage_by_session(&env)), [expected[0] + 10, expected[1] + 13, expected[2] + 10100, expected[3]]);
}

#[test]
fn the_api_shows_pi_sessions_as_pi_does_and_mcp_reads_them() {
    let env = Env::new();
    let photos = [real_png(81), fake_png(82, 500), fake_png(83, 900)];
    env.write(MAIN, main_session(&photos));
    env.write(V1, v1());
    let args = roots(&env);
    let server = Server::start(&env, &args.iter().map(String::as_str).collect::<Vec<_>>());
    server.wait_for_sessions(2);
    let listed = server.json("/api/sessions?agent=pi");
    let ids: Vec<&str> = listed["sessions"].as_array().unwrap().iter().map(|s| s["id"].as_str().unwrap()).collect();
    assert_eq!(ids.len(), 2, "{ids:?}");
    assert!(ids.contains(&SESSION));
    let info = server.json("/api/info");
    assert!(info["agents"].as_array().unwrap().iter().any(|a| a["name"] == "pi" && a["displayName"] == "Pi"), "{info}");
    let page = server.json(&format!("/api/sessions/{SESSION}/history?view=true&limit=100"));
    let entries = page["entries"].as_array().unwrap();
    let view = |uuid: &str| -> (Value, Vec<String>) {
        let e = entries.iter().find(|e| e["uuid"] == uuid).unwrap_or_else(|| panic!("no {uuid}"));
        assert_eq!(e["agent"], "pi");
        let kinds = e["view"]["parts"]
            .as_array()
            .map_or_else(Vec::new, |parts| parts.iter().map(|p| p["kind"].as_str().unwrap().to_owned()).collect());
        (e["view"]["who"].clone(), kinds)
    };
    let who = |name: &str, side: &str| json!({ "name": name, "side": side });
    assert_eq!(view("c3d4e5f6"), (who("You", "user"), vec!["text".into(), "media".into()]));
    assert_eq!(view("d4e5f6a7"), (who("Pi", "assistant"), vec!["thinking".into(), "text".into(), "toolCall".into()]));
    assert_eq!(view("e5f6a7b8"), (who("Tool result", "assistant"), vec!["toolResult".into()]));
    assert_eq!(view("d0e1f2a3"), (who("You", "user"), vec!["command".into(), "output".into()]));
    assert_eq!(view("3c4d5e6f"), (who("", "note"), vec!["group".into()]));
    assert_eq!(view("4d5e6f70"), (who("todo", "note"), vec!["text".into()]));
    assert_eq!(view("708192a3"), (who("Pi", "assistant"), vec!["note".into()]));
    let failed = entries.iter().find(|e| e["uuid"] == "a7b8c9d0").unwrap();
    assert_eq!(failed["view"]["parts"][0]["error"], true, "{failed}");
    let user = entries.iter().find(|e| e["uuid"] == "c3d4e5f6").unwrap();
    assert_eq!(user["typed"]["text"], "Why does the harbour build fail? See the screenshot.");
    // The tool's photo through its rendered block's URL, byte-exact.
    let result = entries.iter().find(|e| e["uuid"] == "e5f6a7b8").unwrap();
    let block = &result["entry"]["message"]["content"][1];
    assert_eq!(block["ref"], format!("{SESSION}/e5f6a7b8/0"));
    assert_eq!(server.get(block["url"].as_str().unwrap()).bytes().unwrap().as_ref(), photos[1].as_slice());
    let resume = server.json(&format!("/api/sessions/{SESSION}/about"));
    assert_eq!(resume["resume"], format!("pi --session {SESSION}"), "{resume}");
    drop(server);

    if !crate::mcp::sdk_available() {
        return;
    }
    let calls = [
        crate::mcp::call("read_session", json!({ "session": SESSION, "limit": 100 })),
        crate::mcp::call("get_photo", json!({ "ref": format!("{SESSION}/c3d4e5f6/0") })),
    ];
    let report = crate::mcp::run_plan(
        &env,
        &crate::mcp::stdio_plan(&env, &args.iter().map(String::as_str).collect::<Vec<_>>(), &calls, &[]),
    );
    let answers = report["calls"].as_array().unwrap();
    assert_eq!(answers[0]["isError"], false, "{}", answers[0]);
    let text = answers[0]["text"].as_str().unwrap();
    assert!(text.contains("Why does the harbour build fail?") && text.contains("read shot2.png"), "{text}");
    assert_eq!(answers[1]["isError"], false, "{}", answers[1]);
    use base64::Engine as _;
    let data = answers[1]["images"][0]["data"].as_str().unwrap();
    assert_eq!(base64::engine::general_purpose::STANDARD.decode(data).unwrap(), photos[0]);
}
