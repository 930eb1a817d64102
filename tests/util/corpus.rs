//! The real transcripts the tests read: other projects' files, kept outside this repository in
//! `../shared/corpus/` (or wherever `SCROLLBACK_CORPUS` points), never copied in.
//!
//! [`corpus`] finds a folder of it. Where it is absent (a fresh clone, without `../shared`) a test
//! that needs it says so and skips; in CI (`CI` set), where it is always laid out, its absence fails
//! the test instead, so that a missing corpus can never pass for a green run.

use std::path::{Path, PathBuf};

/// The environment variable that names the corpus root.
pub const CORPUS_VAR: &str = "SCROLLBACK_CORPUS";

/// The corpus root: `$SCROLLBACK_CORPUS`, else `../shared/corpus` beside the repository.
pub fn corpus_root() -> PathBuf {
    match std::env::var_os(CORPUS_VAR).filter(|v| !v.is_empty()) {
        Some(dir) => PathBuf::from(dir),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus"),
    }
}

/// The folder `sub` of the corpus (`real`, `public/claude-code-log`, `fixtures/codex`, ...), or
/// `None` after saying why the calling test skips. In CI a missing folder panics.
pub fn corpus(sub: &str) -> Option<PathBuf> {
    let dir = corpus_root().join(sub);
    if dir.is_dir() {
        return Some(dir);
    }
    let why = format!(
        "the corpus folder {} is not here: set {CORPUS_VAR} to a copy of shared/corpus to run this test",
        dir.display()
    );
    if std::env::var_os("CI").is_some() {
        panic!("{why} (CI always has it)");
    }
    eprintln!("SKIPPED: {why}");
    None
}

/// Every `*.jsonl` directly in `dir`, sorted by name.
pub fn jsonl_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    files.sort();
    files
}
