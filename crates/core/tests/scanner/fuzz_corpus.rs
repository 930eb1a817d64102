//! The fuzzer's corpus, replayed: every input the scanner's fuzz target (`fuzz/scan.rs`) kept for
//! its coverage, and every input that once broke the oracle (`fuzz/regressions/scan/`), checked
//! against the same oracle (`scan_oracle::check`) on stable, without a fuzzer. Set
//! `SCROLLBACK_FUZZ_REPLAY=DIR` to replay another directory too (a fuzzer's `crashes/`).

use std::path::{Path, PathBuf};

fn inputs(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = match std::fs::read_dir(dir) {
        Ok(entries) => entries.map(|e| e.unwrap().path()).filter(|p| p.is_file()).collect(),
        Err(_) => Vec::new(),
    };
    files.retain(|p| p.file_name().is_some_and(|n| n != "README.txt" && n != "README.md"));
    files.sort();
    files
}

#[test]
fn the_fuzzers_corpus_passes_the_scanner_oracle() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz");
    let corpus = inputs(&root.join("corpus/scan"));
    let regressions = inputs(&root.join("regressions/scan"));
    assert!(corpus.len() >= 50, "the committed corpus has {} inputs", corpus.len());
    let extra = std::env::var_os("SCROLLBACK_FUZZ_REPLAY").map(|d| inputs(Path::new(&d))).unwrap_or_default();
    let mut failed = Vec::new();
    for path in corpus.iter().chain(&regressions).chain(&extra) {
        let line = std::fs::read(path).unwrap();
        if let Err(panic) = std::panic::catch_unwind(|| crate::scan_oracle::check(&line)) {
            let why = panic.downcast_ref::<String>().cloned().unwrap_or_default();
            failed.push(format!("{}: {why}", path.display()));
        }
    }
    assert!(failed.is_empty(), "{} inputs break the oracle:\n{}", failed.len(), failed.join("\n"));
}
