//! The index as the tools people point at it see it: sqlite-utils and Datasette recognise the
//! full-text table, and their search returns exactly FTS5's hits. Runs `tests/tools/fts_tools.py`
//! with the real packages (pip `sqlite-utils` and `datasette`, which `.ci/run` installs).

use std::process::Command;

use rusqlite::Connection;
use serde_json::Value;

use crate::util::Env;

/// Whether `python3` can import the tools; in CI their absence is a failure.
fn tools_available() -> bool {
    let found = Command::new("python3")
        .args(["-c", "import sqlite_utils, datasette"])
        .output()
        .is_ok_and(|out| out.status.success());
    if !found {
        assert!(std::env::var_os("CI").is_none(), "sqlite-utils and datasette are missing: .ci/run installs them");
        eprintln!(
            "SKIPPED: sqlite-utils and datasette are not installed; \
             `python3 -m pip install sqlite-utils datasette` to run this test"
        );
    }
    found
}

#[test]
fn sqlite_utils_and_datasette_search_exactly_the_fts5_hits() {
    if !tools_available() {
        return;
    }
    let Some(corpus) = crate::util::corpus("real") else { return };
    let env = Env::new();
    let out = env.run(&["index", "--transcripts", corpus.to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let index = env.data.join(scrollback::db::INDEX_FILE);

    let queries = ["image", "layout", "test*", "error AND file", "\"tool result\"", "nonexistentwordxyz"];
    let conn = Connection::open(&index).unwrap();
    let fts5 = |q: &str| -> Vec<i64> {
        let mut stmt = conn.prepare("SELECT rowid FROM entries_fts WHERE entries_fts MATCH ?1 ORDER BY rowid").unwrap();
        stmt.query_map([q], |r| r.get(0)).unwrap().collect::<rusqlite::Result<_>>().unwrap()
    };
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/tools/fts_tools.py");
    let out = Command::new("python3").arg(script).arg(&index).args(queries).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let found: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(found["sqlite_utils_detect_fts"], "entries_fts");
    assert_eq!(found["datasette_detect_fts"], "entries_fts");
    let mut hits = 0;
    for q in queries {
        let expected = fts5(q);
        hits += expected.len();
        for tool in ["sqlite_utils", "datasette"] {
            let got: Vec<i64> = found[tool][q].as_array().unwrap().iter().map(|v| v.as_i64().unwrap()).collect();
            assert_eq!(got, expected, "{tool} for {q:?}");
        }
    }
    assert!(hits > 0, "the queries found nothing at all: the comparison would prove nothing");
}
