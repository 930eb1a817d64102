//! The real transcripts in the corpus's `real/` (see its PROVENANCE.md; [`crate::util::corpus`]): every photo in MANIFEST.json
//! comes back byte-exact through `scrollback media`, and every line round-trips.

use sha2::{Digest, Sha256};

use crate::util::{Env, check_invariants, corpus, counts, jsonl_files, media_rows};

/// A temporary tree with the real corpus in it, or `None` (the test skips) where it is absent.
fn corpus_env() -> Option<(Env, std::path::PathBuf)> {
    let real = corpus("real")?;
    let env = Env::new();
    env.copy_corpus(&real);
    Some((env, real))
}

#[test]
fn every_manifest_image_comes_back_byte_exact() {
    let Some((env, real)) = corpus_env() else { return };
    let summary = env.index();
    assert!(summary.starts_with("indexed 8 files, 4038 lines, 5 payloads, 0 invalid lines"), "{summary}");

    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(real.join("MANIFEST.json")).unwrap()).unwrap();
    let conn = env.conn();
    let mut images = 0;
    for (name, info) in manifest.as_object().unwrap() {
        let path = env.path(&format!("corpus/{name}"));
        let rows = media_rows(&conn, &path);
        let expected = info["images"].as_array().unwrap();
        assert_eq!(rows.len(), expected.len(), "{name}: one media row per manifest image");
        for (row, image) in rows.iter().zip(expected) {
            let start = image["data_file_start"].as_u64().unwrap();
            let end = image["data_file_end"].as_u64().unwrap();
            let (offset, length): (i64, i64) = conn
                .query_row("SELECT offset, length FROM media WHERE blake3 = ?1", [&row.blake3], |r| {
                    Ok((r.get(0)?, r.get(1)?))
                })
                .unwrap();
            assert_eq!((offset as u64, (offset + length) as u64), (start, end), "{name}: payload span");
            assert_eq!(row.line, image["line"].as_u64().unwrap(), "{name}: line");
            assert_eq!(row.media_type.as_deref(), image["media_type"].as_str());
            let reference = row.reference.as_deref().expect("a pasted image has a ref");
            let bytes = env.media(reference).unwrap_or_else(|e| panic!("{reference}: {e:?}"));
            assert_eq!(bytes.len() as u64, image["decoded_len"].as_u64().unwrap());
            assert_eq!(format!("{:x}", Sha256::digest(&bytes)), image["sha256"].as_str().unwrap(), "{reference}");
            // The same bytes by content hash.
            assert_eq!(env.media(&row.blake3).unwrap(), bytes);
            images += 1;
        }
    }
    assert_eq!(images, 5);
    assert_eq!(check_invariants(&env.data), 4038);
}

#[test]
fn lines_ruled_out_by_the_media_words_hold_no_media() {
    // The indexer does not scan a line that `scan::may_hold_media` rules out: on every real line,
    // such a line scans to nothing, and most text lines are ruled out.
    let Some(real) = corpus("real") else { return };
    let (mut ruled_out, mut lines) = (0, 0);
    for path in jsonl_files(&real) {
        for line in std::fs::read(&path).unwrap().split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
            lines += 1;
            if scrollback::codec::scan::may_hold_media(line) {
                continue;
            }
            ruled_out += 1;
            let mut scanner = scrollback::codec::scan::Scanner::new(scrollback::format::CLAUDE.block_places());
            scanner.feed(line);
            if let Ok(out) = scanner.finish() {
                assert!(out.spans.is_empty() && out.image_blocks == 0, "{}: {}", path.display(), out.spans.len());
            }
        }
    }
    assert!(ruled_out * 2 > lines, "{ruled_out} of {lines} lines ruled out");
}

#[test]
fn the_two_images_of_one_line_keep_their_order() {
    let Some((env, _)) = corpus_env() else { return };
    env.index();
    let rows = media_rows(&env.conn(), &env.path("corpus/ccl_debug_image_message_2images_v2.0.55.jsonl"));
    let refs: Vec<_> = rows.iter().map(|r| r.reference.clone().unwrap()).collect();
    assert_eq!(
        refs,
        [
            "15eaa3ee-d16e-4fdc-b5b5-ed52c42219bb/9848c51f-1fed-40f1-af53-cab1af30f3ff/0",
            "15eaa3ee-d16e-4fdc-b5b5-ed52c42219bb/9848c51f-1fed-40f1-af53-cab1af30f3ff/1"
        ]
    );
}

#[test]
fn trimmed_fixture_images_are_failed_uploads() {
    // agent-sessions' breadth fixture keeps image blocks but replaces their data with
    // "[trimmed for fixture]": not base64, so no ref, but the block still counts.
    let Some((env, _)) = corpus_env() else { return };
    env.index();
    let conn = env.conn();
    let (failed, reason): (i64, String) = conn
        .query_row(
            "SELECT count(*), min(reason) FROM failed_images fi JOIN entries e ON e.id = fi.entry_id
             JOIN files f ON f.id = e.file_id WHERE f.path LIKE '%agentsessions%'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!((failed, reason.as_str()), (1, "payload is not base64"));
    let types: i64 = conn
        .query_row(
            "SELECT count(DISTINCT type) FROM entries e JOIN files f ON f.id = e.file_id WHERE f.path LIKE '%agentsessions%'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(types, 22, "every line type of the breadth fixture is kept");
}

#[test]
fn a_second_run_changes_nothing() {
    let Some((env, _)) = corpus_env() else { return };
    env.index();
    let before = counts(&env.conn());
    let summary = env.index();
    assert!(summary.starts_with("indexed 0 files, 0 lines, 0 payloads"), "{summary}");
    assert_eq!(counts(&env.conn()), before);
}
