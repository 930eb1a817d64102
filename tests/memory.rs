//! The memory bound: a 256 MB line (one giant photo) indexes, and streams back, with the process's
//! peak RSS under 64 MB. Each measurement runs in a child process (this test binary re-executed with
//! one test selected), which reports its own `VmHWM` from /proc/self/status.

use std::io::{BufWriter, Read, Write};
use std::path::Path;
use std::process::Command;

use base64::Engine;

const LINE_BYTES: usize = 256 << 20;
const LIMIT_KB: u64 = 64 * 1024;
const CHILD_ENV: &str = "SCROLLBACK_TEST_MEMORY_CHILD";
const ROOTS_ENV: &str = "SCROLLBACK_TEST_MEMORY_ROOTS";

/// The photo's bytes, made in pieces so that the parent stays small too.
fn photo_piece(i: u64) -> Vec<u8> {
    crate::util::fake_png(i + 1, 3 * 65536)
}

/// Writes the line: a user message with one image whose base64 makes the line 256 MB. Returns the
/// blake3 of the decoded photo.
fn write_giant_line(path: &Path) -> (String, u64) {
    let mut out = BufWriter::new(std::fs::File::create(path).unwrap());
    out.write_all(
        br#"{"type":"user","uuid":"giant","sessionId":"big","message":{"role":"user","content":[{"type":"image","source":{"type":"base64","media_type":"image/png","data":""#,
    )
    .unwrap();
    let mut hasher = blake3::Hasher::new();
    let mut decoded = 0u64;
    let pieces = (LINE_BYTES / (4 * 65536)) as u64;
    for i in 0..pieces {
        let piece = photo_piece(i);
        hasher.update(&piece);
        decoded += piece.len() as u64;
        out.write_all(base64::engine::general_purpose::STANDARD.encode(&piece).as_bytes()).unwrap();
    }
    out.write_all(b"\"}}]}}\n").unwrap();
    out.flush().unwrap();
    (hasher.finalize().to_hex().to_string(), decoded)
}

fn peak_rss_kb() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

/// Runs `test` in a child process with `dir` passed along; returns the child's peak RSS in kB.
fn in_child(test: &str, dir: &Path) -> u64 {
    in_child_with(test, dir, "")
}

/// [`in_child`], with `roots` (`FORMAT:DIR` lines) passed along too.
fn in_child_with(test: &str, dir: &Path, roots: &str) -> u64 {
    let out = Command::new(std::env::current_exe().unwrap())
        .args([test, "--exact", "--nocapture", "--include-ignored", "--test-threads", "1"])
        .env(CHILD_ENV, dir)
        .env(ROOTS_ENV, roots)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "child {test} failed:\n{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    // The harness may print "test name ... " on the same line before the child's own output.
    let line = stdout.lines().find_map(|l| l.split_once("peak-rss-kb ")).expect("child reports its peak").1;
    line.split_whitespace().next().unwrap().parse().unwrap()
}

#[test]
fn a_256_mb_line_indexes_and_streams_back_under_64_mb() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("projects/p");
    std::fs::create_dir_all(&root).unwrap();
    let (hash, decoded) = write_giant_line(&root.join("big.jsonl"));
    std::fs::write(dir.path().join("expected"), format!("{hash} {decoded}")).unwrap();

    let index_kb = in_child("memory::child_index", dir.path());
    let media_kb = in_child("memory::child_media", dir.path());
    eprintln!("peak RSS: index {index_kb} kB, media {media_kb} kB (limit {LIMIT_KB} kB)");
    assert!(index_kb < LIMIT_KB, "indexing a 256 MB line peaked at {index_kb} kB");
    assert!(media_kb < LIMIT_KB, "streaming a 256 MB line's photo peaked at {media_kb} kB");
}

/// The directory the parent test passed. A child run any other way (`--ignored`) fails: it has
/// nothing to measure, and passing would claim it measured something.
fn child_dir() -> std::path::PathBuf {
    std::env::var_os(CHILD_ENV)
        .map(Into::into)
        .unwrap_or_else(|| panic!("{CHILD_ENV} is not set: this test is run by its parent test, in a child process"))
}

#[test]
#[ignore = "run by a_256_mb_line_indexes_and_streams_back_under_64_mb in a child process"]
fn child_index() {
    let dir = child_dir();
    let mut indexer = scrollback::Indexer::open(&dir.join("data")).unwrap();
    let summary = indexer.catch_up(&dir.join("projects"), &mut scrollback::NoProgress).unwrap();
    assert_eq!((summary.lines, summary.media, summary.invalid), (1, 1, 0));
    println!("peak-rss-kb {}", peak_rss_kb());
}

#[test]
#[ignore = "run by a_256_mb_line_indexes_and_streams_back_under_64_mb in a child process"]
fn child_media() {
    let dir = child_dir();
    let expected = std::fs::read_to_string(dir.join("expected")).unwrap();
    let (hash, decoded) = expected.split_once(' ').unwrap();
    let conn = scrollback::read::index::open(&dir.join("data")).unwrap();
    let record = scrollback::read::index::media_by_ref(&conn, &"big/giant/0".parse().unwrap()).unwrap();
    assert_eq!(record.blake3, hash);
    let mut reader = scrollback::read::media::open(&record).unwrap();
    let mut hasher = blake3::Hasher::new();
    let mut buf = vec![0u8; 256 * 1024];
    let mut total = 0u64;
    loop {
        let n = reader.read(&mut buf).unwrap();
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
        total += n as u64;
    }
    assert_eq!(hasher.finalize().to_hex().as_str(), hash);
    assert_eq!(total.to_string(), decoded);
    println!("peak-rss-kb {}", peak_rss_kb());
}

#[test]
fn a_50_mb_line_appended_in_pieces_while_tailing_stays_under_64_mb() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("projects/p")).unwrap();
    let kb = in_child("memory::child_tail", dir.path());
    eprintln!("peak RSS while tailing a 50 MB line in pieces: {kb} kB (limit {LIMIT_KB} kB)");
    assert!(kb < LIMIT_KB, "tailing a 50 MB line peaked at {kb} kB");
}

#[test]
#[ignore = "run by a_50_mb_line_appended_in_pieces_while_tailing_stays_under_64_mb in a child process"]
fn child_tail() {
    use std::time::{Duration, Instant};
    let dir = child_dir();
    let root = dir.join("projects");
    let indexer = scrollback::Indexer::open(&dir.join("data")).unwrap();
    let config = scrollback::ingest::tail::TailConfig {
        rescan_every: Duration::from_secs(3600),
        ..scrollback::ingest::tail::TailConfig::new(&root)
    };
    let tail = scrollback::ingest::tail::Tail::start(indexer, config).unwrap();
    let path = root.join("p/big.jsonl");
    let mut file = std::fs::OpenOptions::new().create(true).append(true).open(&path).unwrap();
    file.write_all(br#"{"type":"user","uuid":"u","sessionId":"big","message":{"role":"user","content":[{"type":"image","source":{"type":"base64","media_type":"image/png","data":""#).unwrap();
    let mut hasher = blake3::Hasher::new();
    // 50 MB of base64 in 64 KiB pieces, flushed one by one so that the watcher sees each.
    for i in 0..(50 << 20) / (64 << 10) {
        let piece = crate::util::fake_png(i as u64, 48 << 10);
        hasher.update(&piece);
        file.write_all(base64::engine::general_purpose::STANDARD.encode(&piece).as_bytes()).unwrap();
        if i % 16 == 0 {
            std::thread::sleep(Duration::from_millis(1));
        }
    }
    file.write_all(b"\"}}]}}\n").unwrap();
    drop(file);
    let expected = hasher.finalize().to_hex().to_string();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Ok(conn) = scrollback::read::index::open(&dir.join("data"))
            && let Ok(record) = scrollback::read::index::media_by_ref(&conn, &"big/u/0".parse().unwrap())
        {
            assert_eq!(record.blake3, expected);
            break;
        }
        assert!(Instant::now() < deadline, "the 50 MB line was not indexed");
        std::thread::sleep(Duration::from_millis(20));
    }
    drop(tail);
    println!("peak-rss-kb {}", peak_rss_kb());
}

/// Indexes `roots` (`FORMAT:DIR`) into the data directory `data` in a child process; returns the
/// child's peak RSS in kB.
pub fn peak_of_index(data: &Path, roots: &[String]) -> u64 {
    in_child_with("memory::child_index_roots", data, &roots.join("\n"))
}

#[test]
#[ignore = "run by peak_of_index in a child process"]
fn child_index_roots() {
    let data = child_dir();
    let roots: Vec<scrollback::Root> =
        std::env::var(ROOTS_ENV).unwrap().lines().map(|r| scrollback::Root::parse(r).unwrap()).collect();
    let mut indexer = scrollback::Indexer::open(&data).unwrap();
    indexer.set_roots(&roots).unwrap();
    for root in &roots {
        indexer.catch_up(&root.dir, &mut scrollback::NoProgress).unwrap();
    }
    println!("peak-rss-kb {}", peak_rss_kb());
}
