//! GitHub Copilot CLI's session logs, from trees generated here from the facts `docs/formats.md`
//! cites (github/copilot-sdk's event schema, the CLI's own code): every event kind scrollback maps,
//! photos as binary assets, inline attachments and tool results (one of 2 MB), a failed tool call,
//! two shutdowns' tokens, a sub-agent, a non-UTF-8 line and a torn last line; then a `/rewind`
//! (the CLI writes the file again, shorter), an append followed live, the MCP tools, and the vault
//! once the session's folder is deleted.

use serde_json::{Value, json};

use crate::util::fixtures::copilot::{SESSION, event, events_path, session_file, session_lines};
use crate::util::server::Server;
use crate::util::{Env, check_invariants, fake_png, hash_hex};

const FLAT: &str = "0b6a7c9e-0000-4e3a-9b8c-000000000f1a";

/// A session's id, agent, title, project and git branch.
type SessionRow = (String, String, Option<String>, Option<String>, Option<String>);

fn roots(env: &Env) -> Vec<String> {
    vec!["--root".into(), format!("copilot:{}", env.path("copilot/session-state").display())]
}

fn index(env: &Env) -> String {
    env.index_roots(&roots(env))
}

/// The uuids a session's history shows, in order (side chains included).
fn shown(env: &Env, session: &str) -> Vec<String> {
    let conn = env.conn();
    let page =
        scrollback::read::history::history(&conn, session, scrollback::read::history::Position::Newest, 500, true)
            .unwrap()
            .unwrap();
    page.entries.iter().filter_map(|e| e.columns.uuid.clone()).collect()
}

/// The refs of every photo with one in the session, in line order.
fn refs(env: &Env, session: &str) -> Vec<String> {
    env.conn()
        .prepare(
            "SELECT e.session_id || '/' || e.uuid || '/' || m.ordinal FROM media m JOIN entries e ON e.id = m.entry_id
             WHERE e.session_id = ?1 AND m.ordinal IS NOT NULL ORDER BY e.line, m.offset",
        )
        .unwrap()
        .query_map([session], |r| r.get(0))
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap()
}

#[test]
fn a_copilot_session_is_read_with_its_photos_tools_tokens_and_rewinds() {
    let env = Env::new();
    // The asset's photo a real PNG: get_photo decodes what it serves.
    let photos = [crate::mcp::noisy_png(16, 12), fake_png(72, 800), fake_png(73, 900), fake_png(74, 2 << 20)];
    let lines = session_lines(&photos);
    let events = env.write(&events_path(SESSION), session_file(&lines));
    // The older flat layout, and a session folder's other files, which are not transcripts.
    let flat = [
        event(
            "session.start",
            json!({ "sessionId": FLAT, "copilotVersion": "0.0.350", "context": { "cwd": "/work/old" } }),
            1,
            None,
        ),
        event("user.message", json!({ "content": "Hello from the flat layout" }), 2, None),
        event("assistant.message", json!({ "content": "Hi." }), 3, None),
    ]
    .concat();
    env.write(&format!("copilot/session-state/{FLAT}.jsonl"), &flat);
    env.write(&format!("copilot/session-state/{SESSION}/workspace.yaml"), "id: x\nname: Not a transcript\n");
    env.write(&format!("copilot/session-state/{SESSION}/files/notes.jsonl"), "{\"type\":\"user.message\"}\n");
    env.write(&format!("copilot/session-state/{SESSION}/checkpoints/001-start.md"), "# checkpoint\n");

    let summary = index(&env);
    assert!(summary.starts_with("indexed 2 files"), "{summary}");
    let conn = env.conn();
    let invalid: Vec<(i64, String)> = conn
        .prepare("SELECT line, reason FROM invalid_lines")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap();
    assert_eq!(invalid.len(), 1, "the non-UTF-8 line: {invalid:?}");
    assert_eq!(invalid[0].0, 4);
    // Every valid line restored byte for byte (the non-UTF-8 one is an invalid entry; the torn one waits).
    assert_eq!(check_invariants(&env.data), lines.len() as u64 + 3);

    // Sessions: their agent, title (the first typed words), project and branch.
    let sessions: Vec<SessionRow> = conn
        .prepare("SELECT id, agent, title, project, git_branch FROM sessions ORDER BY id")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)))
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap();
    let some = |s: &str| Some(s.to_owned());
    assert_eq!(
        sessions,
        [
            (FLAT.into(), "copilot".into(), some("Hello from the flat layout"), some("/work/old"), None),
            (
                SESSION.into(),
                "copilot".into(),
                some("Why does this button render blank? [image: shot.png]"),
                some("/work/shop"),
                some("main")
            ),
        ]
    );

    // Every photo by its ref, byte-exact: the asset's, the inline blob's, the tool result's, the 2 MB one.
    let photo_refs = refs(&env, SESSION);
    assert_eq!(
        photo_refs,
        [
            format!("{SESSION}/e004/0"),
            format!("{SESSION}/e005/0"),
            format!("{SESSION}/e010/0"),
            format!("{SESSION}/e024/0")
        ]
    );
    for (r, photo) in photo_refs.iter().zip(&photos) {
        assert_eq!(&env.media(r).unwrap_or_else(|e| panic!("{r}: {e:?}")), photo, "{r}");
    }
    let longest: i64 = conn
        .query_row("SELECT max(length(stored_line(stripped))) FROM entries WHERE session_id = ?1", [SESSION], |r| {
            r.get(0)
        })
        .unwrap();
    assert!(longest < 4000, "no payload in a stored line: the longest is {longest} bytes");

    // Usage: each shutdown's models, summed; the messages' outputTokens not counted again.
    let out = env.run(&["usage", "--by", "model", "--agent", "copilot", "--json"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let rows: Vec<(String, u64, u64, u64, u64, u64)> = report["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let n = |k: &str| r[k].as_u64().unwrap();
            (
                r["key"].as_str().unwrap().to_owned(),
                n("responses"),
                n("inputTokens"),
                n("outputTokens"),
                n("cacheReadTokens"),
                n("cacheWriteTokens"),
            )
        })
        .collect();
    let mut rows = rows;
    rows.sort();
    assert_eq!(
        rows,
        [
            ("claude-sonnet-4.5".to_owned(), 2, 900 + 6000, 89 + 12, 18000 + 24000, 5200),
            ("gpt-5-mini".to_owned(), 1, 1000, 9, 0, 0),
        ]
    );

    // The history's view: who said what, and its parts.
    let server = Server::start(&env, &roots(&env).iter().map(String::as_str).collect::<Vec<_>>());
    server.wait_for_sessions(2);
    let page = server.json(&format!("/api/sessions/{SESSION}/history?view=true&limit=100&sidechains=true"));
    let entries = page["entries"].as_array().unwrap();
    let by = |uuid: &str| entries.iter().find(|e| e["uuid"] == uuid).unwrap_or_else(|| panic!("{uuid}"));
    let kinds = |uuid: &str| -> Vec<String> {
        by(uuid)["view"]["parts"].as_array().unwrap().iter().map(|p| p["kind"].as_str().unwrap().to_owned()).collect()
    };
    assert_eq!(by("e001")["view"]["who"]["side"], "note");
    assert!(by("e003")["view"]["who"].is_null(), "the system prompt is not shown: {}", by("e003"));
    assert_eq!(by("e004")["view"]["who"]["name"], "Attachment");
    assert_eq!(kinds("e004"), ["media"]);
    assert_eq!(by("e005")["view"]["who"], json!({"name": "You", "side": "user"}));
    assert_eq!(kinds("e005"), ["text", "note", "media", "context"]);
    let blob = &by("e005")["view"]["parts"][2];
    assert_eq!(server.get(blob["url"].as_str().unwrap()).bytes().unwrap().as_ref(), photos[1].as_slice());
    assert_eq!(by("e005")["typed"]["text"], "Why does this button render blank? [image: shot.png]");
    assert_eq!(kinds("e007"), ["thinking"]);
    assert_eq!(kinds("e008"), ["text", "toolCall", "toolCall"]);
    assert_eq!(by("e008")["view"]["parts"][2]["line"], "bash $ npm run lint:css");
    assert_eq!(kinds("e010"), ["toolResult"]);
    let result = &by("e010")["view"]["parts"][0];
    assert_eq!(result["callId"], "toolu_01");
    let shot = result["media"][0]["url"].as_str().unwrap();
    assert_eq!(server.get(shot).bytes().unwrap().as_ref(), photos[2].as_slice());
    let failed = &by("e012")["view"]["parts"][0];
    assert_eq!((failed["error"].as_bool(), failed["callId"].as_str()), (Some(true), Some("toolu_02")), "{failed}");
    assert_eq!(by("e016")["isSidechain"], true, "a sub-agent's event");
    assert_eq!(by("e005")["isSidechain"], false);
    assert_eq!(kinds("e019"), ["note"]);
    assert_eq!(kinds("e021"), ["group"]);
    drop(server);

    // Search: the typed words, the tool's output and error, never the system prompt or the transformed content.
    let found = |q: &str| -> Vec<String> {
        scrollback::read::history::search(&env.conn(), q, None, 20)
            .unwrap()
            .iter()
            .filter_map(|h| h.entry_uuid.clone())
            .collect()
    };
    assert_eq!(found("blank"), ["e005"]);
    assert_eq!(found("\"Missing script\""), ["e012"]);
    assert!(found("\"Secret prompt words\"").is_empty());
    assert!(found("current_datetime").is_empty());

    // /rewind: the CLI writes the file again without the events from the one rewound to on, and
    // goes on appending. Read again from its start: the rewound events are gone, nothing doubled.
    let kept = &lines[..23];
    let mut rewound = kept.concat();
    rewound += &event("user.message", json!({ "content": "Try a darker grey instead" }), 24, None);
    std::fs::write(&events, &rewound).unwrap();
    index(&env);
    let after = shown(&env, SESSION);
    assert_eq!(after.len(), 24, "{after:?}");
    assert_eq!(after.last().map(String::as_str), Some("e024"));
    assert_eq!(refs(&env, SESSION).len(), 3, "the 2 MB asset went with the rewind");
    assert_eq!(check_invariants(&env.data), 24 + 3);
    let responses: i64 =
        env.conn().query_row("SELECT count(*) FROM usage WHERE agent = 'copilot'", [], |r| r.get(0)).unwrap();
    assert_eq!(responses, 2, "the rewound shutdown no longer counts");

    // Live: a serve follows the file as the CLI appends to it.
    let server = Server::start(&env, &roots(&env).iter().map(String::as_str).collect::<Vec<_>>());
    server.wait_for_sessions(2);
    env.append(
        &events_path(SESSION),
        event("assistant.message", json!({ "content": "Use #222 for the text." }), 25, None),
    );
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let history = server.json(&format!("/api/sessions/{SESSION}/history?limit=100"));
        let last = history["entries"].as_array().unwrap().last().map(|e| e["uuid"].clone());
        if last == Some(json!("e025")) {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "the append was not followed: {last:?}");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    drop(server);

    // MCP: read_session and get_photo on the Copilot session.
    if crate::mcp::sdk_available() {
        let calls = [
            crate::mcp::call("read_session", json!({ "session": SESSION, "limit": 100 })),
            crate::mcp::call("get_photo", json!({ "ref": format!("{SESSION}/e004/0") })),
        ];
        let args = roots(&env);
        let mut args: Vec<&str> = args.iter().map(String::as_str).collect();
        args.extend(["--rescan-secs", "600"]);
        let report = crate::mcp::run_plan(&env, &crate::mcp::stdio_plan(&env, &args, &calls, &[]));
        let answers = report["calls"].as_array().unwrap();
        let text = answers[0]["text"].as_str().unwrap();
        assert_eq!(answers[0]["isError"], false, "{text}");
        assert!(text.contains("Why does this button render blank?") && text.contains("Use #222"), "{text}");
        assert!(text.contains("$ npm run lint:css"), "{text}");
        assert!(!text.contains(scrollback::STRIPPED_MEDIA_MARKER), "{text}");
        assert_eq!(answers[1]["isError"], false, "{}", answers[1]);
        use base64::Engine as _;
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(answers[1]["images"][0]["data"].as_str().unwrap())
            .unwrap();
        assert_eq!(hash_hex(&bytes), hash_hex(&photos[0]), "the stored bytes");
    }

    // The vault: the CLI deletes the session's folder; its entries stay, and its photos are served
    // from the vault's link, byte-exact.
    std::fs::remove_dir_all(events.parent().unwrap()).unwrap();
    index(&env);
    assert_eq!(shown(&env, SESSION).len(), 25, "a gone transcript keeps its entries");
    for (r, photo) in refs(&env, SESSION).iter().zip(&photos) {
        assert_eq!(&env.media(r).unwrap_or_else(|e| panic!("{r}: {e:?}")), photo, "{r} from the vault");
    }
}
