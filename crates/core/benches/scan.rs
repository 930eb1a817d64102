//! The scanner's hot path: every byte of every transcript goes through `Scanner::feed`.
//!
//! - `image_line`: a 1 MB pasted-photo line (the real corpus's largest), where the time is the
//!   payload's streaming base64 decode and blake3 hash;
//! - `text_lines`: the real corpus's 1,881-line modern session (no photos), where the time is the
//!   tokenizer walking keys and skipping strings;
//! - `strip_and_parse`: the indexer's whole per-line work: the media-word check (and the scan, for
//!   a line that may hold media), the stripped line, and its parse (borrowing, skipping what the
//!   index does not keep) for the columns and search text.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use scrollback_core::codec::scan::{self, Scanner};
use scrollback_core::format::CLAUDE;

/// A file of the real corpus (`$SCROLLBACK_CORPUS/real`, else `../shared/corpus/real`): other
/// projects' transcripts, read where they are and never copied into this repository.
fn fixture(name: &str) -> Option<Vec<u8>> {
    let root = std::env::var_os("SCROLLBACK_CORPUS")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus"));
    let path = root.join("real").join(name);
    match std::fs::read(&path) {
        Ok(bytes) => Some(bytes),
        Err(e) => {
            eprintln!("scan bench skipped: {} ({e}); set SCROLLBACK_CORPUS to a copy of shared/corpus", path.display());
            None
        }
    }
}

fn lines(bytes: &[u8]) -> Vec<&[u8]> {
    bytes.split(|&b| b == b'\n').filter(|l| !l.is_empty()).collect()
}

fn bench(c: &mut Criterion) {
    let (Some(image_file), Some(text_file)) =
        (fixture("ccl_0d3a8e6f_pasted-image_v1.0.43.jsonl"), fixture("spotter_fa812bfe_v2.1.39.jsonl"))
    else {
        return;
    };
    let image_line = *lines(&image_file).iter().max_by_key(|l| l.len()).unwrap();
    let text_lines = lines(&text_file);

    let mut group = c.benchmark_group("scan");
    group.throughput(Throughput::Bytes(image_line.len() as u64));
    group.bench_function("image_line", |b| {
        let mut scanner = Scanner::new(CLAUDE.block_places());
        b.iter(|| {
            scanner.reset();
            scanner.feed(image_line);
            scanner.finish_mut().unwrap()
        })
    });
    group.throughput(Throughput::Bytes(text_file.len() as u64));
    group.bench_function("text_lines", |b| {
        let mut scanner = Scanner::new(CLAUDE.block_places());
        b.iter(|| {
            for line in &text_lines {
                scanner.reset();
                scanner.feed(line);
                scanner.finish_mut().unwrap();
            }
        })
    });
    group.bench_function("strip_and_parse", |b| {
        b.iter(|| {
            for line in &text_lines {
                // As the indexer does: no scan for a line that cannot hold media.
                let stripped = if scan::may_hold_media(line) {
                    scan::scan(line, CLAUDE.block_places()).unwrap().stripped
                } else {
                    line.to_vec()
                };
                let stripped = std::str::from_utf8(&stripped).unwrap();
                CLAUDE.describe(stripped, 1, &scrollback_core::format::FileContext::default()).unwrap();
            }
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
