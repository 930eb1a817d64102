//! The live indexer, one test per file event it must handle (Fluent Bit in_tail, Vector's file
//! source and Filebeat are the models). Each starts a real [`Tail`] with notify on a temporary tree,
//! changes real files, and waits until the index shows exactly the expected entries.

use std::path::Path;
use std::time::{Duration, Instant};

use scrollback::Indexer;
use scrollback::ingest::tail::{Tail, TailConfig};

use crate::util::{Env, b64, check_invariants, fake_png, image_block, user_line};

/// A Tail on `env` with native events and no periodic rescan during the test (so that what is tested
/// is the events), or with polling.
pub fn start(env: &Env, poll: Option<Duration>) -> Tail {
    let indexer = Indexer::open(&env.data).unwrap_or_else(|e| panic!("opening the index: {e}"));
    let config = TailConfig { rescan_every: Duration::from_secs(3600), poll, ..TailConfig::new(&env.root) };
    Tail::start(indexer, config).unwrap()
}

/// Entries of live files: (path relative to the root, uuid), in file and line order.
pub fn live_entries(env: &Env) -> Vec<(String, String)> {
    let Ok(conn) = scrollback::read::index::open(&env.data) else {
        return Vec::new();
    };
    let mut stmt = conn
        .prepare(
            "SELECT f.path, coalesce(e.uuid, e.invalid) FROM entries e JOIN files f ON f.id = e.file_id
             WHERE f.state = 'live' ORDER BY f.path, e.line",
        )
        .unwrap();
    stmt.query_map([], |r| {
        let path: String = r.get(0)?;
        Ok((Path::new(&path).strip_prefix(&env.root).unwrap().to_string_lossy().into_owned(), r.get(1)?))
    })
    .unwrap()
    .collect::<rusqlite::Result<_>>()
    .unwrap()
}

/// Waits until the index's live entries are `expected` (10 s at most).
pub fn settle(env: &Env, expected: &[(impl AsRef<str>, impl AsRef<str>)]) {
    let expected: Vec<(String, String)> =
        expected.iter().map(|(p, u)| (p.as_ref().to_owned(), u.as_ref().to_owned())).collect();
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let got = live_entries(env);
        if got == expected {
            return;
        }
        assert!(Instant::now() < deadline, "index did not settle:\n got {got:?}\nwant {expected:?}");
        std::thread::sleep(Duration::from_millis(3));
    }
}

fn line(session: &str, uuid: &str) -> String {
    user_line(session, uuid, &format!("\"text of {uuid}\""), "") + "\n"
}

fn gone_count(env: &Env) -> i64 {
    env.conn()
        .query_row("SELECT count(*) FROM entries e JOIN files f ON f.id = e.file_id WHERE f.state = 'gone'", [], |r| {
            r.get(0)
        })
        .unwrap()
}

#[test]
fn appends_in_pieces_index_only_complete_lines() {
    let env = Env::new();
    env.write("p/s.jsonl", line("s", "a"));
    let tail = start(&env, None);
    settle(&env, &[("p/s.jsonl", "a")]);
    let whole = line("s", "b");
    let (first, rest) = whole.split_at(30);
    env.append("p/s.jsonl", first);
    std::thread::sleep(Duration::from_millis(50));
    settle(&env, &[("p/s.jsonl", "a")]);
    let (middle, last) = rest.split_at(rest.len() - 10);
    env.append("p/s.jsonl", middle);
    env.append("p/s.jsonl", last);
    env.append("p/s.jsonl", line("s", "c"));
    settle(&env, &[("p/s.jsonl", "a"), ("p/s.jsonl", "b"), ("p/s.jsonl", "c")]);
    drop(tail);
    check_invariants(&env.data);
}

#[test]
fn a_new_directory_and_files_written_before_its_watch() {
    let env = Env::new();
    let tail = start(&env, None);
    settle(&env, &[] as &[(&str, &str)]);
    // Create a nested tree in one go: the files exist before any watch on their directories can.
    let photo = fake_png(1, 800);
    env.write("new/deeper/s1.jsonl", line("s1", "x"));
    env.write(
        "new/deeper/s1/subagents/agent-a.jsonl",
        user_line("s1", "y", &format!("[{}]", image_block("image/png", &b64(&photo))), "") + "\n",
    );
    settle(&env, &[("new/deeper/s1.jsonl", "x"), ("new/deeper/s1/subagents/agent-a.jsonl", "y")]);
    env.append("new/deeper/s1.jsonl", line("s1", "z"));
    settle(
        &env,
        &[("new/deeper/s1.jsonl", "x"), ("new/deeper/s1.jsonl", "z"), ("new/deeper/s1/subagents/agent-a.jsonl", "y")],
    );
    drop(tail);
    assert_eq!(env.media("s1/y/0").unwrap(), photo);
}

#[test]
fn truncation_and_copy_truncate() {
    let env = Env::new();
    env.write("p/s.jsonl", format!("{}{}{}", line("s", "a"), line("s", "b"), line("s", "c")));
    let tail = start(&env, None);
    settle(&env, &[("p/s.jsonl", "a"), ("p/s.jsonl", "b"), ("p/s.jsonl", "c")]);
    // Truncated to its first line.
    let keep = line("s", "a");
    std::fs::OpenOptions::new().write(true).open(env.path("p/s.jsonl")).unwrap().set_len(keep.len() as u64).unwrap();
    settle(&env, &[("p/s.jsonl", "a")]);
    // copy-truncate (logrotate): copied away, truncated to nothing, then written again.
    std::fs::copy(env.path("p/s.jsonl"), env.path("p/s.jsonl.1")).unwrap();
    std::fs::OpenOptions::new().write(true).open(env.path("p/s.jsonl")).unwrap().set_len(0).unwrap();
    settle(&env, &[] as &[(&str, &str)]);
    env.append("p/s.jsonl", line("s", "d"));
    settle(&env, &[("p/s.jsonl", "d")]);
    drop(tail);
    check_invariants(&env.data);
}

#[test]
fn a_rewrite_with_different_content_of_any_size() {
    let env = Env::new();
    env.write("p/s.jsonl", format!("{}{}", line("s", "a1"), line("s", "a2")));
    let tail = start(&env, None);
    settle(&env, &[("p/s.jsonl", "a1"), ("p/s.jsonl", "a2")]);
    // Same size, different bytes.
    env.write("p/s.jsonl", format!("{}{}", line("s", "b1"), line("s", "b2")));
    settle(&env, &[("p/s.jsonl", "b1"), ("p/s.jsonl", "b2")]);
    // Smaller.
    env.write("p/s.jsonl", line("s", "c1"));
    settle(&env, &[("p/s.jsonl", "c1")]);
    // Larger, keeping the first line.
    env.write("p/s.jsonl", format!("{}{}{}", line("s", "c1"), line("s", "d2"), line("s", "d3")));
    settle(&env, &[("p/s.jsonl", "c1"), ("p/s.jsonl", "d2"), ("p/s.jsonl", "d3")]);
    drop(tail);
    check_invariants(&env.data);
}

#[test]
fn replacement_by_rename() {
    let env = Env::new();
    env.write("p/s.jsonl", format!("{}{}", line("s", "a"), line("s", "b")));
    let tail = start(&env, None);
    settle(&env, &[("p/s.jsonl", "a"), ("p/s.jsonl", "b")]);
    // An atomic save: a larger file with the same first line, renamed over the transcript.
    std::fs::write(env.path("p/.s.jsonl.tmp"), format!("{}{}{}", line("s", "a"), line("s", "x"), line("s", "y")))
        .unwrap();
    std::fs::rename(env.path("p/.s.jsonl.tmp"), env.path("p/s.jsonl")).unwrap();
    settle(&env, &[("p/s.jsonl", "a"), ("p/s.jsonl", "x"), ("p/s.jsonl", "y")]);
    // And by a file that differs from the first line on.
    std::fs::write(env.path("p/.s.jsonl.tmp"), line("s", "z")).unwrap();
    std::fs::rename(env.path("p/.s.jsonl.tmp"), env.path("p/s.jsonl")).unwrap();
    settle(&env, &[("p/s.jsonl", "z")]);
    drop(tail);
    assert_eq!(gone_count(&env), 0, "a replaced file's old rows are replaced, not kept");
}

#[test]
fn deletion_keeps_history_and_a_recreated_path_is_a_new_file() {
    let env = Env::new();
    env.write("p/s.jsonl", format!("{}{}", line("s", "a"), line("s", "b")));
    let tail = start(&env, None);
    settle(&env, &[("p/s.jsonl", "a"), ("p/s.jsonl", "b")]);
    std::fs::remove_file(env.path("p/s.jsonl")).unwrap();
    settle(&env, &[] as &[(&str, &str)]);
    assert_eq!(gone_count(&env), 2, "a deleted transcript's entries stay, marked gone");
    env.write("p/s.jsonl", line("s", "c"));
    settle(&env, &[("p/s.jsonl", "c")]);
    assert_eq!(gone_count(&env), 2);
    drop(tail);
}

#[test]
fn inode_reuse_is_a_new_file() {
    // Delete a file and create another at once: the file system may hand the new file the old
    // inode. The fingerprint tells them apart.
    let env = Env::new();
    env.write("p/s.jsonl", format!("{}{}", line("s", "a"), line("s", "b")));
    let tail = start(&env, None);
    settle(&env, &[("p/s.jsonl", "a"), ("p/s.jsonl", "b")]);
    for round in 0..5 {
        std::fs::remove_file(env.path("p/s.jsonl")).unwrap();
        let uuid = format!("r{round}");
        env.write("p/s.jsonl", format!("{}{}", line("s", &uuid), line("s", "b")));
        settle(&env, &[("p/s.jsonl", uuid.as_str()), ("p/s.jsonl", "b")]);
    }
    drop(tail);
    check_invariants(&env.data);
}

#[test]
fn a_symlinked_directory_is_followed() {
    let env = Env::new();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("s.jsonl"), line("s", "a")).unwrap();
    std::os::unix::fs::symlink(outside.path(), env.path("linked")).unwrap();
    let tail = start(&env, None);
    settle(&env, &[("linked/s.jsonl", "a")]);
    drop(tail);
    // A rescan reads through the link too, events or not.
    let mut indexer = Indexer::open(&env.data).unwrap();
    std::fs::write(outside.path().join("s.jsonl"), format!("{}{}", line("s", "a"), line("s", "b"))).unwrap();
    indexer.catch_up(&env.root, &mut scrollback::NoProgress).unwrap();
    drop(indexer);
    settle(&env, &[("linked/s.jsonl", "a"), ("linked/s.jsonl", "b")]);
}

#[test]
fn hard_links_are_one_file_indexed_once() {
    let env = Env::new();
    env.write("p/s.jsonl", line("s", "a"));
    let tail = start(&env, None);
    settle(&env, &[("p/s.jsonl", "a")]);
    std::fs::hard_link(env.path("p/s.jsonl"), env.path("p/t.jsonl")).unwrap();
    env.append("p/t.jsonl", line("s", "b"));
    settle(&env, &[("p/s.jsonl", "a"), ("p/s.jsonl", "b")]);
    drop(tail);
    let files: i64 = env.conn().query_row("SELECT count(*) FROM files", [], |r| r.get(0)).unwrap();
    assert_eq!(files, 1);
}

#[test]
fn an_overflow_rescan_finds_what_events_missed() {
    // Changes the watcher cannot see (made while no event reaches the writer: here, on the far
    // side of a symlink to a directory outside the watch that is replaced) are found by a rescan,
    // which is what notify's rescan flag triggers (see tail::tests for the flag itself).
    let env = Env::new();
    let outside = tempfile::tempdir().unwrap();
    std::fs::create_dir(outside.path().join("a")).unwrap();
    std::fs::write(outside.path().join("a/s.jsonl"), line("s", "a")).unwrap();
    std::os::unix::fs::symlink(outside.path().join("a"), env.path("linked")).unwrap();
    let tail = start(&env, None);
    settle(&env, &[("linked/s.jsonl", "a")]);
    std::fs::create_dir(outside.path().join("b")).unwrap();
    std::fs::write(outside.path().join("b/s.jsonl"), format!("{}{}", line("s", "a"), line("s", "b"))).unwrap();
    std::fs::remove_file(env.path("linked")).unwrap();
    std::os::unix::fs::symlink(outside.path().join("b"), env.path("linked")).unwrap();
    tail.rescan();
    settle(&env, &[("linked/s.jsonl", "a"), ("linked/s.jsonl", "b")]);
    drop(tail);
}

#[test]
fn the_periodic_rescan_finds_what_no_event_told_of() {
    // As above, but nothing asks for the rescan: the writer's own timer runs it (rare by default,
    // short here).
    let env = Env::new();
    let outside = tempfile::tempdir().unwrap();
    std::fs::create_dir(outside.path().join("a")).unwrap();
    std::fs::write(outside.path().join("a/s.jsonl"), line("s", "a")).unwrap();
    std::os::unix::fs::symlink(outside.path().join("a"), env.path("linked")).unwrap();
    let indexer = Indexer::open(&env.data).unwrap();
    let config = TailConfig { rescan_every: Duration::from_millis(200), ..TailConfig::new(&env.root) };
    let tail = Tail::start(indexer, config).unwrap();
    settle(&env, &[("linked/s.jsonl", "a")]);
    std::fs::create_dir(outside.path().join("b")).unwrap();
    std::fs::write(outside.path().join("b/s.jsonl"), format!("{}{}", line("s", "a"), line("s", "b"))).unwrap();
    std::fs::remove_file(env.path("linked")).unwrap();
    std::os::unix::fs::symlink(outside.path().join("b"), env.path("linked")).unwrap();
    settle(&env, &[("linked/s.jsonl", "a"), ("linked/s.jsonl", "b")]);
    drop(tail);
}

#[test]
fn a_root_that_appears_or_is_replaced_is_followed_without_a_rescan() {
    // Rescans are rare, but the roots themselves are looked at often: one that did not exist at the
    // start is watched once it does, and one whose directory is replaced (its watch stays with the
    // old directory) is caught up on and watched anew. No rescan runs during the test.
    let env = Env::new();
    let root = env.path("later");
    let indexer = Indexer::open(&env.data).unwrap();
    let config = TailConfig {
        rescan_every: Duration::from_secs(3600),
        look_at_roots_every: Duration::from_millis(50),
        ..TailConfig::new(&root)
    };
    let tail = Tail::start(indexer, config).unwrap();
    env.write("later/p/s.jsonl", line("s", "a"));
    settle(&env, &[("later/p/s.jsonl", "a")]);
    // Watched: an append is read from its event.
    env.append("later/p/s.jsonl", line("s", "b"));
    settle(&env, &[("later/p/s.jsonl", "a"), ("later/p/s.jsonl", "b")]);
    // Replaced by another directory (the old one lives on elsewhere, so the new one is another inode).
    env.write("fresh/q/t.jsonl", line("t", "c"));
    std::fs::rename(&root, env.path("old")).unwrap();
    std::fs::rename(env.path("fresh"), &root).unwrap();
    settle(&env, &[("later/q/t.jsonl", "c")]);
    env.append("later/q/t.jsonl", line("t", "d"));
    settle(&env, &[("later/q/t.jsonl", "c"), ("later/q/t.jsonl", "d")]);
    drop(tail);
    assert_eq!(gone_count(&env), 2, "the first transcript's two entries left with the old directory");
}

#[test]
fn many_transcripts_with_identical_first_lines() {
    let env = Env::new();
    let first = line("shared", "same-first");
    for i in 0..20 {
        env.write(&format!("p/s{i:02}.jsonl"), &first);
    }
    let tail = start(&env, None);
    let expected: Vec<(String, String)> =
        (0..20).map(|i| (format!("p/s{i:02}.jsonl"), "same-first".to_owned())).collect();
    settle(&env, &expected);
    // Rewrite every other one keeping the first line; each must be told apart by path and content.
    for i in (0..20).step_by(2) {
        env.write(&format!("p/s{i:02}.jsonl"), format!("{first}{}", line("shared", &format!("own-{i}"))));
    }
    let expected: Vec<(String, String)> = (0..20)
        .flat_map(|i| {
            let mut v = vec![(format!("p/s{i:02}.jsonl"), "same-first".to_owned())];
            if i % 2 == 0 {
                v.push((format!("p/s{i:02}.jsonl"), format!("own-{i}")));
            }
            v
        })
        .collect();
    settle(&env, &expected);
    drop(tail);
    check_invariants(&env.data);
}

#[test]
fn polling_keeps_the_same_guarantees() {
    let env = Env::new();
    env.write("p/s.jsonl", line("s", "a"));
    let tail = start(&env, Some(Duration::from_millis(50)));
    settle(&env, &[("p/s.jsonl", "a")]);
    env.append("p/s.jsonl", line("s", "b"));
    settle(&env, &[("p/s.jsonl", "a"), ("p/s.jsonl", "b")]);
    env.write("p/s.jsonl", line("s", "c"));
    settle(&env, &[("p/s.jsonl", "c")]);
    env.write("q/t.jsonl", line("t", "d"));
    settle(&env, &[("p/s.jsonl", "c"), ("q/t.jsonl", "d")]);
    std::fs::remove_file(env.path("p/s.jsonl")).unwrap();
    settle(&env, &[("q/t.jsonl", "d")]);
    drop(tail);
}

#[test]
fn the_bus_announces_each_commit() {
    let env = Env::new();
    env.write("p/s.jsonl", line("s", "a"));
    let mut indexer = Indexer::open(&env.data).unwrap();
    let bus = scrollback::events::bus();
    let mut events = bus.subscribe();
    indexer.set_bus(bus);
    let tail =
        Tail::start(indexer, TailConfig { rescan_every: Duration::from_secs(3600), ..TailConfig::new(&env.root) })
            .unwrap();
    let next = |events: &mut tokio::sync::broadcast::Receiver<scrollback::events::Event>| {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            match events.try_recv() {
                Ok(e) => return e,
                Err(_) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(2)),
                Err(e) => panic!("no event: {e}"),
            }
        }
    };
    use scrollback::events::Event;
    assert!(
        matches!(next(&mut events), Event::EntriesAppended { ref session_id, from_line: 1, to_line: 1, replaced: false, .. } if session_id == "s")
    );
    env.append("p/s.jsonl", format!("{}{}", line("s", "b"), line("s", "c")));
    assert!(matches!(next(&mut events), Event::EntriesAppended { from_line: 2, to_line: 3, .. }));
    std::fs::remove_file(env.path("p/s.jsonl")).unwrap();
    assert!(matches!(next(&mut events), Event::SessionGone { ref session_id, .. } if session_id == "s"));
    drop(tail);
}
