//! Live-tailing latency and idle cost: the hot path of `scrollback serve` between a transcript write
//! and the client's `entries-appended` event.
//!
//! ```text
//! cargo bench --bench tail            # 1,000 appends per mode, 1,000 idle transcripts
//! ```
//! - latency: one line appended at a time to a watched transcript; the time from the write to the
//!   bus event that announces its commit, with notify, and with `--poll` at 100 ms;
//! - idle: the CPU the process uses while nothing changes on a tree of 1,000 transcripts, with a
//!   full rescan every 2 s (the default is 30 s), and the cost of one rescan.

use std::io::Write;
use std::path::Path;
use std::time::{Duration, Instant};

use scrollback_index::Indexer;
use scrollback_index::events::{Bus, Event};
use scrollback_index::tail::{Tail, TailConfig};

const APPENDS: usize = 1000;

fn line(i: usize) -> String {
    format!(
        r#"{{"type":"user","uuid":"u{i}","sessionId":"s","timestamp":"2026-01-01T00:00:00Z","message":{{"role":"user","content":"message number {i} with some words in it"}}}}"#
    ) + "\n"
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

fn latency(poll: Option<Duration>) -> Vec<Duration> {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("projects");
    std::fs::create_dir_all(root.join("p")).unwrap();
    let path = root.join("p/s.jsonl");
    std::fs::write(&path, line(0)).unwrap();
    let mut indexer = Indexer::open(&dir.path().join("data")).unwrap();
    let bus: Bus = scrollback_index::events::bus();
    let mut events = bus.subscribe();
    indexer.set_bus(bus);
    let config = TailConfig { rescan_every: Duration::from_secs(30), poll, ..TailConfig::new(&root) };
    let tail = Tail::start(indexer, config).unwrap();
    wait_for_line(&mut events, 1);
    let mut file = std::fs::OpenOptions::new().append(true).open(&path).unwrap();
    let mut out = Vec::with_capacity(APPENDS);
    let appends = if poll.is_some() { APPENDS / 10 } else { APPENDS };
    for i in 1..=appends {
        let started = Instant::now();
        file.write_all(line(i).as_bytes()).unwrap();
        wait_for_line(&mut events, i as u64 + 1);
        out.push(started.elapsed());
    }
    drop(tail);
    out.sort();
    out
}

fn wait_for_line(events: &mut tokio::sync::broadcast::Receiver<Event>, line: u64) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        match events.try_recv() {
            Ok(Event::EntriesAppended { to_line, .. }) if to_line >= line => return,
            Ok(_) => {}
            Err(tokio::sync::broadcast::error::TryRecvError::Empty) => {
                assert!(Instant::now() < deadline, "line {line} never committed");
                std::thread::sleep(Duration::from_micros(50));
            }
            Err(e) => panic!("{e}"),
        }
    }
}

/// CPU time (user + system) of this process so far.
fn cpu_time() -> Duration {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap();
    let fields: Vec<&str> = stat.rsplit_once(')').unwrap().1.split_whitespace().collect();
    let ticks: u64 = fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap();
    Duration::from_millis(ticks * 10)
}

fn idle(files: usize, window: Duration) -> (f64, Duration) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("projects");
    for i in 0..files {
        let p = root.join(format!("proj-{}", i % 20));
        std::fs::create_dir_all(&p).unwrap();
        std::fs::write(p.join(format!("s{i}.jsonl")), (0..20).map(line).collect::<String>()).unwrap();
    }
    // One rescan's cost, on a settled tree (mtimes older than 2 s are trusted).
    std::thread::sleep(Duration::from_secs(3));
    let data = dir.path().join("data");
    let mut indexer = Indexer::open(&data).unwrap();
    indexer.catch_up(&root, &mut scrollback_index::NoProgress).unwrap();
    indexer.catch_up(&root, &mut scrollback_index::NoProgress).unwrap();
    let started = Instant::now();
    indexer.catch_up(&root, &mut scrollback_index::NoProgress).unwrap();
    let one_rescan = started.elapsed();
    let config = TailConfig { rescan_every: Duration::from_secs(2), ..TailConfig::new(&root) };
    let tail = Tail::start(indexer, config).unwrap();
    std::thread::sleep(Duration::from_secs(1));
    let (cpu0, wall0) = (cpu_time(), Instant::now());
    std::thread::sleep(window);
    let share = (cpu_time() - cpu0).as_secs_f64() / wall0.elapsed().as_secs_f64();
    drop(tail);
    assert!(Path::new(&data).exists());
    (share, one_rescan)
}

fn main() {
    // `cargo test --benches` runs this too: keep that quick.
    if std::env::args().any(|a| a == "--test") {
        return;
    }
    let native = latency(None);
    println!(
        "notify:  {} appends, p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms",
        native.len(),
        percentile(&native, 0.5).as_secs_f64() * 1e3,
        percentile(&native, 0.99).as_secs_f64() * 1e3,
        native.last().unwrap().as_secs_f64() * 1e3
    );
    let interval = Duration::from_millis(100);
    let polled = latency(Some(interval));
    println!(
        "--poll {} ms: {} appends, p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms",
        interval.as_millis(),
        polled.len(),
        percentile(&polled, 0.5).as_secs_f64() * 1e3,
        percentile(&polled, 0.99).as_secs_f64() * 1e3,
        polled.last().unwrap().as_secs_f64() * 1e3
    );
    let (share, one_rescan) = idle(1000, Duration::from_secs(10));
    println!(
        "idle, 1,000 transcripts, rescan every 2 s: {:.2}% of one core; one rescan {:.1} ms",
        share * 100.0,
        one_rescan.as_secs_f64() * 1e3
    );
}
