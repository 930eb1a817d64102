//! The reconcile rule against the shared vectors in `tests/vectors/reconcile/`: in Rust here, and in
//! the viewer's JavaScript (`crates/http/web/reconcile.js`) through `node --test tests/js/`. Each
//! vector entry carries its `typed` as the server gives it, and the format's rule on the entry's line
//! is checked to give exactly that, so the rule that says what a person typed is pinned too.

use std::path::{Path, PathBuf};
use std::process::Command;

use scrollback::accept::reconcile::{PendingSend, TranscriptEntry, reconcile};
use scrollback::format::{self, Typed};
use serde_json::Value;

fn vectors() -> Vec<(PathBuf, Value)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/vectors/reconcile");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    files.into_iter().map(|p| (p.clone(), serde_json::from_slice(&std::fs::read(&p).unwrap()).unwrap())).collect()
}

#[test]
fn every_vector_holds_in_rust() {
    let vectors = vectors();
    assert!(vectors.len() >= 25, "{} vectors", vectors.len());
    for (path, vector) in vectors {
        let name = path.file_name().unwrap().to_string_lossy();
        assert!(vector["description"].as_str().is_some_and(|d| !d.is_empty()), "{name} has no description");
        // What the server sends as `typed` is the entry's format's rule on its rendered line.
        for (i, e) in vector["entries"].as_array().unwrap().iter().enumerate() {
            let given = e.get("typed").unwrap_or_else(|| panic!("{name}: entry {i} has no typed"));
            let given: Option<Typed> = serde_json::from_value(given.clone()).unwrap();
            let format = e["agent"].as_str().and_then(format::by_name).unwrap_or(format::DEFAULT);
            let line = e.get("entry").unwrap_or(&Value::Null);
            let rule = format.typed_input(e["type"].as_str(), e["isSidechain"].as_bool().unwrap_or(false), line);
            assert_eq!(rule, given, "{name}: entry {i}'s typed is not what its format's rule gives");
        }
        let entries: Vec<TranscriptEntry> = serde_json::from_value(vector["entries"].clone()).unwrap();
        let pending: Vec<PendingSend> = serde_json::from_value(vector["pending"].clone()).unwrap();
        let got = reconcile(&entries, &pending);
        let retired: Vec<Value> = got
            .retired
            .iter()
            .map(|r| serde_json::json!({ "clientMessageId": r.client_message_id, "uuid": r.uuid }))
            .collect();
        assert_eq!(Value::Array(retired), vector["expected"]["retired"], "{name}: retired");
        assert_eq!(serde_json::json!(got.still_pending), vector["expected"]["stillPending"], "{name}: still pending");
    }
}

#[test]
fn every_vector_holds_in_the_viewers_javascript() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    // Each test file by name: Node.js versions differ in what a directory argument means.
    let mut files: Vec<PathBuf> = std::fs::read_dir(root.join("tests/js"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".test.mjs"))
        .collect();
    files.sort();
    let Ok(out) = Command::new("node").arg("--test").args(&files).current_dir(root).output() else {
        assert!(std::env::var_os("CI").is_none(), "node is missing: .ci/run installs nodejs");
        eprintln!("SKIPPED: node is not installed; `apt-get install nodejs` to run the JavaScript side");
        return;
    };
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "node --test failed:\n{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    let passed: usize = stdout
        .lines()
        .find_map(|l| l.strip_prefix("# pass "))
        .and_then(|n| n.trim().parse().ok())
        .expect("node --test reports how many passed");
    assert!(passed >= vectors().len(), "only {passed} JavaScript tests passed");
}

#[test]
fn the_server_serves_the_same_module_it_was_built_with() {
    let env = crate::util::Env::new();
    let server = crate::util::Server::start(&env, &[]);
    let res = server.get("/web/reconcile.js");
    assert_eq!(res.status(), reqwest::StatusCode::OK);
    assert_eq!(res.headers()["content-type"], "text/javascript; charset=utf-8");
    assert_eq!(res.headers()["x-content-type-options"], "nosniff");
    let source =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("crates/http/web/reconcile.js")).unwrap();
    assert_eq!(res.text().unwrap(), source);
}
