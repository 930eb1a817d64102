//! Kilo CLI's sessions: OpenCode's tables in Kilo's own database (`kilo.db`), generated as the
//! OpenCode tests generate theirs. Listed as Kilo's, photos read from their rows byte-exact, the
//! ledger's steps, a row added while the server runs; and each agent reads only its own database.

use std::time::{Duration, Instant};

use serde_json::json;

use crate::util::fixtures::opencode as oc;
use crate::util::server::Server;
use crate::util::{Env, fake_png};

#[test]
fn kilo_sessions_are_opencodes_rows_in_kilos_database() {
    let env = Env::new();
    let photos = [fake_png(81, 300), fake_png(82, 900)];
    oc::sample(&env.path("kilo/kilo.db"), &photos);
    // OpenCode's database beside it is OpenCode's: a Kilo root does not read it.
    oc::sample(&env.path("kilo/opencode.db"), &photos);
    let root = format!("kilo:{}", env.path("kilo").display());
    let summary = env.index_roots(&["--root".into(), root.clone()]);
    assert!(summary.starts_with("indexed 1 file,"), "{summary}");
    let sessions: Vec<(String, String, Option<String>)> = env
        .conn()
        .prepare("SELECT id, agent, title FROM sessions")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap();
    assert_eq!(sessions, [(oc::SESSION.into(), "kilo".into(), Some("Why the logo is blurry".into()))]);

    let server = Server::start(&env, &["--root", &root]);
    server.wait_for_sessions(1);
    for (i, part) in ["prt_s2", "prt_s3"].iter().enumerate() {
        let res = server.get(&format!("/api/session-media/{}/{part}/0", oc::SESSION));
        assert_eq!(res.status(), 200, "{part}");
        assert_eq!(res.bytes().unwrap().as_ref(), photos[i].as_slice(), "{part}");
    }
    let page = server.json(&format!("/api/sessions/{}/history?view=true&limit=50", oc::SESSION));
    let answer = page["entries"].as_array().unwrap().iter().find(|e| e["uuid"] == "prt_s4").unwrap();
    assert_eq!(answer["view"]["who"]["name"], "Kilo", "{page}");
    let info = server.json("/api/info");
    assert!(info["agents"].as_array().unwrap().iter().any(|a| a["name"] == "kilo" && a["displayName"] == "Kilo Code"));
    let report = server.json("/api/usage?agent=kilo");
    assert_eq!((report["total"]["responses"].as_u64(), report["total"]["inputTokens"].as_u64()), (Some(1), Some(800)));

    // Kilo answers again while the server runs: the new step counts and its words are found.
    let conn = rusqlite::Connection::open(env.path("kilo/kilo.db")).unwrap();
    let at = oc::T0 + 9000;
    oc::message(&conn, oc::SESSION, "msg_s3", at, &oc::assistant(at, "msg_s2", oc::tokens(50, 7, 0, 0, 0)));
    oc::part(
        &conn,
        oc::SESSION,
        "msg_s3",
        "prt_s6",
        at,
        &json!({"type": "text", "text": "Redrawn at full size, sharp as a lighthouse."}).to_string(),
    );
    let step = json!({"type": "step-finish", "reason": "stop", "cost": 0.0, "tokens": oc::tokens(50, 7, 0, 0, 0)});
    oc::part(&conn, oc::SESSION, "msg_s3", "prt_s7", at, &step.to_string());
    drop(conn);
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let hits = server.json("/api/search?group=none&q=lighthouse&agent=kilo");
        let report = server.json("/api/usage?agent=kilo");
        if hits["hits"].as_array().unwrap().len() == 1 && report["total"]["responses"] == 2 {
            assert_eq!(report["total"]["outputTokens"], 37, "{report}");
            break;
        }
        assert!(Instant::now() < deadline, "the new rows were not read: {hits} {report}");
        std::thread::sleep(Duration::from_millis(50));
    }
}
