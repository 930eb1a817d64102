//! A model-based test of the live indexer (Vector's file_watcher tests are the model): random
//! sequences of append, partial append, truncate, rewrite, rename-replace, delete, recreate, new
//! directory and restart, applied to real files watched by a real [`Tail`] and to an in-memory model
//! (the bytes each file should hold). Some files are sub-agent transcripts of the same session
//! (`<dir>/s/subagents/agent-*.jsonl`), and lines carry timestamps that mostly go forward. After
//! each action settles, the index equals the model: for each live file, one entry per complete line
//! at the right offset with the right uuid; for deleted files, their entries kept; and the session's
//! history, page by page, is every shown entry once, in conversation order, as many as its count.
//! Some files are Codex CLI rollouts under a Codex root inside the tree (`codex/`), which are also
//! compressed to `.jsonl.zst` and decompressed again as Codex does (the compressed file written, then
//! the plain one deleted, and back): the same transcript, whose rows stay.
//!
//! A quarter of Claude Code's lines are assistant lines that state an API response's usage, a dozen
//! responses in all, each stated by lines in several files (as streamed blocks and resumed copies
//! are): the usage ledger equals the model's too (per response, the line with the most output and
//! then input tokens, over every line of the live and deleted files), and the reports read from its
//! sums equal those summed from its rows.
//!
//! `SCROLLBACK_MODEL_CASES` (default 20) x `SCROLLBACK_MODEL_ACTIONS` (default 500) actions;
//! `SCROLLBACK_MODEL_SEED` replays one case.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use scrollback::{Indexer, Root, Tail, TailConfig};

use crate::util::{Env, b64, check_invariants, fake_png, image_block, user_line};

/// A tail of the tree (Claude Code's) with the Codex root inside it.
fn start(env: &Env) -> Tail {
    let indexer = Indexer::open(&env.data).unwrap_or_else(|e| panic!("opening the index: {e}"));
    let roots =
        [Root::default_format(&env.root), Root::parse(&format!("codex:{}", env.path(CODEX).display())).unwrap()];
    let config = TailConfig { rescan_every: Duration::from_secs(3600), ..TailConfig::of(roots.to_vec()) };
    Tail::start(indexer, config).unwrap()
}

struct Model {
    /// Every transcript that exists, relative to the root, with the bytes it holds.
    files: BTreeMap<String, Vec<u8>>,
    /// Entries of deleted transcripts, which the index keeps.
    gone_entries: usize,
    /// The bytes of deleted Claude Code transcripts, whose usage lines the index keeps.
    gone: Vec<Vec<u8>>,
    dirs: Vec<String>,
    next_uuid: u64,
}

/// Where the Codex rollouts are (a root of their own).
const CODEX: &str = "codex/";

/// (offset, length, uuid) of each complete line of `bytes`, the transcript at `path`.
fn expected_lines(path: &str, bytes: &[u8]) -> Vec<(i64, i64, String)> {
    let mut out = Vec::new();
    let mut at = 0;
    while let Some(n) = bytes[at..].iter().position(|&b| b == b'\n') {
        let line = &bytes[at..at + n];
        // A torn piece followed by a whole line makes a line that is not JSON: an invalid entry,
        // which has no uuid. A Codex line's is `L<line>`.
        let value = serde_json::from_slice::<serde_json::Value>(line).ok();
        let uuid = match value {
            Some(_) if path.starts_with(CODEX) => format!("L{}", out.len() + 1),
            Some(v) => v["uuid"].as_str().map(str::to_owned).unwrap_or_default(),
            None => String::new(),
        };
        out.push((at as i64, n as i64, uuid));
        at += n + 1;
    }
    out
}

/// Per response of the usage ledger: (input tokens, output tokens, lines that state it).
type Ledger = BTreeMap<String, (i64, i64, i64)>;
type State = (BTreeMap<String, Vec<(i64, i64, String)>>, usize, Ledger);

/// The ledger the complete Claude Code lines of `transcripts` make.
fn expected_ledger<'a>(transcripts: impl Iterator<Item = &'a [u8]>) -> Ledger {
    let mut ledger: BTreeMap<String, ((i64, i64), i64)> = BTreeMap::new();
    for bytes in transcripts {
        let complete = bytes.len() - bytes.iter().rev().position(|&b| b == b'\n').unwrap_or(bytes.len());
        for line in bytes[..complete].split(|&b| b == b'\n') {
            let Ok(value) = serde_json::from_slice::<serde_json::Value>(line) else { continue };
            let (Some(id), Some(usage)) = (value["message"]["id"].as_str(), value["message"].get("usage")) else {
                continue;
            };
            let counts = (usage["output_tokens"].as_i64().unwrap(), usage["input_tokens"].as_i64().unwrap());
            let (best, lines) = ledger.entry(format!("claude:{id}")).or_insert((counts, 0));
            *best = (*best).max(counts);
            *lines += 1;
        }
    }
    ledger.into_iter().map(|(key, ((output, input), lines))| (key, (input, output, lines))).collect()
}

fn index_state(env: &Env) -> Option<State> {
    let conn = scrollback::read::index::open(&env.data).ok()?;
    let mut files = BTreeMap::new();
    let mut stmt = conn.prepare("SELECT id, path FROM files WHERE state = 'live'").ok()?;
    let live: Vec<(i64, String)> =
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?))).ok()?.collect::<rusqlite::Result<_>>().ok()?;
    for (id, path) in live {
        let mut stmt =
            conn.prepare("SELECT offset, length, uuid FROM entries WHERE file_id = ?1 ORDER BY line").ok()?;
        let lines = stmt
            .query_map([id], |r| Ok((r.get(0)?, r.get(1)?, r.get::<_, Option<String>>(2)?.unwrap_or_default())))
            .ok()?
            .collect::<rusqlite::Result<_>>()
            .ok()?;
        let rel = path.strip_prefix(&format!("{}/", env.root.display()))?.to_owned();
        files.insert(rel, lines);
    }
    let gone: i64 = conn
        .query_row("SELECT count(*) FROM entries e JOIN files f ON f.id = e.file_id WHERE f.state = 'gone'", [], |r| {
            r.get(0)
        })
        .ok()?;
    let ledger = conn
        .prepare("SELECT key, input_tokens, output_tokens, lines FROM usage")
        .ok()?
        .query_map([], |r| Ok((r.get(0)?, (r.get(1)?, r.get(2)?, r.get(3)?))))
        .ok()?
        .collect::<rusqlite::Result<_>>()
        .ok()?;
    Some((files, gone as usize, ledger))
}

impl Model {
    fn expected(&self) -> State {
        let claude = self.files.iter().filter(|(p, _)| !p.starts_with(CODEX)).map(|(_, b)| &b[..]);
        (
            self.files.iter().map(|(p, b)| (p.clone(), expected_lines(p, b))).collect(),
            self.gone_entries,
            expected_ledger(claude.chain(self.gone.iter().map(|b| &b[..]))),
        )
    }

    fn line(&mut self, rng: &mut StdRng, path: &str) -> Vec<u8> {
        self.next_uuid += 1;
        // A clock that mostly goes forward, sometimes steps back a little.
        let ms = self.next_uuid * 1000 - rng.random_range(0..3000u64).min(self.next_uuid * 1000);
        let ts = format!(
            "2026-01-01T{:02}:{:02}:{:02}.{:03}Z",
            ms / 3_600_000 % 24,
            ms / 60_000 % 60,
            ms / 1000 % 60,
            ms % 1000
        );
        let extra = match path.rsplit_once("/agent-") {
            Some((_, agent)) => format!(r#""isSidechain":true,"agentId":"{}""#, agent.trim_end_matches(".jsonl")),
            None => String::new(),
        };
        let uuid = format!("u{}", self.next_uuid);
        if !path.starts_with(CODEX) && rng.random_ratio(1, 4) {
            // A line of one of a dozen API responses, which other lines and files state too.
            let id = format!("msg_{}", rng.random_range(0..12));
            let tokens = [rng.random_range(1..1000), rng.random_range(1..60), 0, 0];
            let line = crate::usage::assistant("s", &uuid, &id, Some(&format!("req_{id}")), &ts, tokens);
            let mut value: serde_json::Value = serde_json::from_str(&line).unwrap();
            if let Some((_, agent)) = path.rsplit_once("/agent-") {
                value["isSidechain"] = true.into();
                value["agentId"] = agent.trim_end_matches(".jsonl").into();
            }
            return (value.to_string() + "\n").into_bytes();
        }
        if path.starts_with(CODEX) {
            let block = if rng.random_ratio(1, 6) {
                let photo = fake_png(self.next_uuid, rng.random_range(10..2000));
                serde_json::json!({ "type": "input_image", "image_url": format!("data:image/png;base64,{}", b64(&photo)) })
            } else {
                serde_json::json!({ "type": "input_text", "text": "w".repeat(rng.random_range(0..300)) })
            };
            let line = serde_json::json!({ "timestamp": ts, "type": "response_item",
                "payload": { "type": "message", "role": "user", "content": [block] } });
            return (line.to_string() + "\n").into_bytes();
        }
        let content = if rng.random_ratio(1, 8) {
            format!("[{}]", image_block("image/png", &b64(&fake_png(self.next_uuid, rng.random_range(10..2000)))))
        } else {
            format!("\"{}\"", "w".repeat(rng.random_range(0..300)))
        };
        let line = user_line("s", &uuid, &content, &extra).replace("2026-01-01T00:00:00.000Z", &ts);
        // (A key given twice: the last one, the sub-agent's `isSidechain`, counts.)
        (line + "\n").into_bytes()
    }

    fn lines(&mut self, rng: &mut StdRng, n: usize, path: &str) -> Vec<u8> {
        (0..n).flat_map(|_| self.line(rng, path)).collect()
    }

    /// An existing file that is not compressed (one that is is only decompressed, or deleted).
    fn pick_existing(&self, rng: &mut StdRng) -> Option<String> {
        let plain: Vec<&String> = self.files.keys().filter(|p| !p.ends_with(".zst")).collect();
        (!plain.is_empty()).then(|| plain[rng.random_range(0..plain.len())].clone())
    }

    fn pick_codex(&self, rng: &mut StdRng) -> Option<String> {
        let codex: Vec<&String> = self.files.keys().filter(|p| p.starts_with(CODEX)).collect();
        (!codex.is_empty()).then(|| codex[rng.random_range(0..codex.len())].clone())
    }

    fn pick_any(&self, rng: &mut StdRng) -> String {
        let dir = &self.dirs[rng.random_range(0..self.dirs.len())];
        if rng.random_ratio(1, 5) {
            let name = format!(
                "{CODEX}rollout-2026-01-01T00-00-00-01a0c0de-0000-7000-8000-00000000000{}.jsonl",
                rng.random_range(0..3)
            );
            // Not beside its compressed twin: Codex appends only once it has decompressed it.
            if !self.files.contains_key(&format!("{name}.zst")) {
                return name;
            }
        }
        if rng.random_ratio(1, 3) {
            format!("{dir}/s/subagents/agent-a{}.jsonl", rng.random_range(0..2))
        } else {
            format!("{dir}/f{}.jsonl", rng.random_range(0..3))
        }
    }
}

/// Applies one random action to the files and the model; returns its name.
fn act(env: &Env, model: &mut Model, rng: &mut StdRng) -> &'static str {
    let choice = rng.random_range(0..100);
    let existing = model.pick_existing(rng);
    match (choice, existing) {
        (27..30, _) if let Some(path) = model.pick_codex(rng) => {
            let bytes = model.files.remove(&path).unwrap();
            match path.strip_suffix(".zst") {
                None => {
                    // As Codex compresses a cold rollout: the `.zst` written, then the plain file deleted.
                    let packed = format!("{path}.zst");
                    std::fs::write(env.path(&packed), zstd::stream::encode_all(&bytes[..], 3).unwrap()).unwrap();
                    std::fs::remove_file(env.path(&path)).unwrap();
                    model.files.insert(packed, bytes);
                    "compress"
                }
                Some(plain) => {
                    // As Codex decompresses one to append to it: the plain file, then the `.zst` deleted.
                    std::fs::write(env.path(plain), &bytes).unwrap();
                    std::fs::remove_file(env.path(&path)).unwrap();
                    model.files.insert(plain.to_owned(), bytes);
                    "decompress"
                }
            }
        }
        (0..30, _) | (_, None) => {
            let path = model.pick_any(rng);
            let n = rng.random_range(1..4);
            let add = model.lines(rng, n, &path);
            env.append(&path, &add);
            model.files.entry(path).or_default().extend(add);
            "append"
        }
        (30..45, Some(path)) => {
            // A line in pieces: its first part now, the rest by a later append.
            let line = model.line(rng, &path);
            let cut = rng.random_range(1..line.len());
            env.append(&path, &line[..cut]);
            model.files.get_mut(&path).unwrap().extend_from_slice(&line[..cut]);
            if rng.random_bool(0.7) {
                env.append(&path, &line[cut..]);
                model.files.get_mut(&path).unwrap().extend_from_slice(&line[cut..]);
                "append-in-pieces"
            } else {
                "partial-append"
            }
        }
        (45..55, Some(path)) => {
            let bytes = model.files.get_mut(&path).unwrap();
            let at = rng.random_range(0..=bytes.len());
            bytes.truncate(at);
            std::fs::OpenOptions::new().write(true).open(env.path(&path)).unwrap().set_len(at as u64).unwrap();
            "truncate"
        }
        (55..65, Some(path)) => {
            let n = rng.random_range(0..5);
            let bytes = model.lines(rng, n, &path);
            env.write(&path, &bytes);
            model.files.insert(path, bytes);
            "rewrite"
        }
        (65..75, Some(path)) => {
            // An atomic save, sometimes keeping the first line.
            let mut bytes = Vec::new();
            let old = &model.files[&path];
            if rng.random_bool(0.5)
                && let Some(n) = old.iter().position(|&b| b == b'\n')
            {
                bytes.extend_from_slice(&old[..=n]);
            }
            let n = rng.random_range(0..5);
            bytes.extend(model.lines(rng, n, &path));
            let tmp = env.path(&format!("{path}.tmp"));
            std::fs::write(&tmp, &bytes).unwrap();
            std::fs::rename(&tmp, env.path(&path)).unwrap();
            model.files.insert(path, bytes);
            "rename-replace"
        }
        (75..85, Some(path)) => {
            // Compressed or not.
            let path = if rng.random_ratio(1, 4)
                && let Some(codex) = model.pick_codex(rng)
            {
                codex
            } else {
                path
            };
            std::fs::remove_file(env.path(&path)).unwrap();
            let bytes = model.files.remove(&path).unwrap();
            model.gone_entries += expected_lines(&path, &bytes).len();
            if !path.starts_with(CODEX) {
                model.gone.push(bytes);
            }
            "delete"
        }
        (85..95, _) => {
            let dir = format!("n{}/deep", model.dirs.len());
            let path = format!("{dir}/f0.jsonl");
            let n = rng.random_range(1..3);
            let bytes = model.lines(rng, n, &path);
            env.write(&path, &bytes);
            model.files.insert(path, bytes);
            model.dirs.push(dir);
            "create-directory"
        }
        _ => "restart",
    }
}

fn run_case(seed: u64, actions: usize) -> Vec<&'static str> {
    let env = Env::new();
    let mut rng = StdRng::seed_from_u64(seed);
    let mut model = Model {
        files: BTreeMap::new(),
        gone_entries: 0,
        gone: Vec::new(),
        dirs: vec!["a".into(), "b/c".into()],
        next_uuid: 0,
    };
    std::fs::create_dir_all(env.path(CODEX)).unwrap();
    let mut tail = Some(start(&env));
    let mut log = Vec::new();
    for step in 0..actions {
        let action = act(&env, &mut model, &mut rng);
        log.push(action);
        if action == "restart" {
            drop(tail.take());
            tail = Some(start(&env));
        }
        let expected = model.expected();
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let got = index_state(&env);
            if got.as_ref() == Some(&expected) {
                break;
            }
            if Instant::now() > deadline {
                let recent = &log[log.len().saturating_sub(8)..];
                panic!(
                    "seed {seed}, step {step}: the index does not match the model after {recent:?}\n got {got:?}\nwant {expected:?}"
                );
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        if step % 25 == 24 {
            check_history(&env, seed, step);
        }
    }
    drop(tail);
    check_history(&env, seed, actions);
    check_invariants(&env.data);
    log
}

/// The session's history with side chains, page by page backwards: every shown entry once, in
/// conversation order, as many as the session's count; a uuid shown once.
fn check_history(env: &Env, seed: u64, step: usize) {
    use scrollback::read::history::{self, Position};
    let conn = scrollback::read::index::open(&env.data).unwrap();
    // One snapshot for the pages and the counts.
    let tx = conn.unchecked_transaction().unwrap();
    let Some(mut page) = history::history(&tx, "s", Position::Newest, 7, true).unwrap() else { return };
    let mut entries = Vec::new();
    loop {
        entries.splice(0..0, page.entries);
        match page.before {
            Some(before) => page = history::history(&tx, "s", Position::Before(before), 7, true).unwrap().unwrap(),
            None => break,
        }
    }
    assert!(
        entries.windows(2).all(|w| (&w[0].order, w[0].cursor) < (&w[1].order, w[1].cursor)),
        "seed {seed}, step {step}: history not in conversation order"
    );
    let (count, shown): (i64, i64) = tx
        .query_row(
            "SELECT (SELECT entries FROM sessions WHERE id = 's'),
                    (SELECT count(*) FROM entries WHERE session_id = 's' AND duplicate = 0)",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!((entries.len() as i64, count), (shown, shown), "seed {seed}, step {step}: history, count, rows");
    let mut uuids: Vec<&str> = entries.iter().filter_map(|e| e.columns.uuid.as_deref()).collect();
    let all = uuids.len();
    uuids.sort();
    uuids.dedup();
    assert_eq!(uuids.len(), all, "seed {seed}, step {step}: a uuid shown twice");
    check_usage_sums(&tx, seed, step);
    drop(tx);
    check_vault(env, &conn, seed, step);
}

/// The usage reports read from the ledger's sums equal those summed from its rows.
fn check_usage_sums(conn: &rusqlite::Connection, seed: u64, step: usize) {
    use scrollback::read::prices::Prices;
    use scrollback::read::usage::{By, Filter, report_from};
    let prices = Prices::shipped();
    for by in [By::Day, By::Session, By::Model] {
        let from_sums = report_from(conn, by, Filter::default(), &prices, true).unwrap();
        let from_rows = report_from(conn, by, Filter::default(), &prices, false).unwrap();
        assert_eq!(from_sums, from_rows, "seed {seed}, step {step}: the usage sums by {by:?}");
    }
}

/// The vault: every row's link is its file's inode (no link lost while a row needs it), and every
/// link is a row's (no stale link survives its last row). A link is made before its rows commit
/// and removed after, and the writer runs on: a pass in flight may show one for a moment, so the
/// check is repeated until it holds (or 10 s go by).
fn check_vault(env: &Env, conn: &rusqlite::Connection, seed: u64, step: usize) {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        match vault_problem(env, conn) {
            None => return,
            Some(problem) if Instant::now() > deadline => panic!("seed {seed}, step {step}: {problem}"),
            Some(_) => std::thread::sleep(Duration::from_millis(20)),
        }
    }
}

fn vault_problem(env: &Env, conn: &rusqlite::Connection) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    let mut stmt = conn.prepare("SELECT vault, dev, inode FROM files WHERE vault IS NOT NULL").unwrap();
    let rows: Vec<(String, i64, i64)> =
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?))).unwrap().map(Result::unwrap).collect();
    for (link, dev, inode) in &rows {
        match std::fs::metadata(link) {
            Ok(meta) if (meta.dev() as i64, meta.ino() as i64) == (*dev, *inode) => {}
            Ok(_) => return Some(format!("{link} is another inode than its row's")),
            Err(e) => return Some(format!("{link}: {e}")),
        }
    }
    let recorded: std::collections::HashSet<&str> = rows.iter().map(|r| r.0.as_str()).collect();
    let dir = std::fs::read_dir(env.data.join("vault")).ok()?;
    for entry in dir {
        let path = entry.unwrap().path();
        if !recorded.contains(path.to_str().unwrap()) {
            return Some(format!("stale link {}", path.display()));
        }
    }
    None
}

fn env_number(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

#[test]
fn the_index_follows_a_model_through_random_file_actions() {
    let actions = env_number("SCROLLBACK_MODEL_ACTIONS", 500) as usize;
    let started = Instant::now();
    let log: Vec<&str> = match std::env::var("SCROLLBACK_MODEL_SEED").ok().and_then(|v| v.parse().ok()) {
        Some(seed) => run_case(seed, actions),
        None => (0..env_number("SCROLLBACK_MODEL_CASES", 20)).flat_map(|seed| run_case(seed, actions)).collect(),
    };
    let mut counts = BTreeMap::new();
    for action in &log {
        *counts.entry(*action).or_insert(0) += 1;
    }
    eprintln!("model test: {} actions in {:.1} s: {counts:?}", log.len(), started.elapsed().as_secs_f64());
    if log.len() >= 1000 {
        for action in ["compress", "decompress", "delete", "rename-replace", "truncate", "restart"] {
            assert!(counts.contains_key(action), "no {action} in {} actions", log.len());
        }
    }
}
