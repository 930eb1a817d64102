//! Files that change between runs: rewritten, truncated, replaced, deleted.

use crate::util::{Env, b64, check_invariants, fake_png, image_block, user_line};

fn lines(session: &str, prefix: &str, n: usize) -> String {
    (0..n)
        .map(|i| user_line(session, &format!("{prefix}{i}"), &format!("\"message {prefix}{i}\""), "") + "\n")
        .collect()
}

fn uuids(env: &Env) -> Vec<String> {
    let conn = env.conn();
    let mut stmt = conn.prepare("SELECT uuid FROM entries ORDER BY file_id, line").unwrap();
    stmt.query_map([], |r| r.get(0)).unwrap().collect::<rusqlite::Result<_>>().unwrap()
}

#[test]
fn a_rewritten_file_is_reindexed_and_its_old_rows_replaced() {
    let env = Env::new();
    env.write("p/s.jsonl", lines("s", "a", 3));
    env.index();
    // Same length, different bytes: the fingerprint tells.
    env.write("p/s.jsonl", lines("s", "b", 3));
    let summary = env.index();
    assert!(summary.contains("(1 re-indexed, 0 gone, 0 failed)"), "{summary}");
    assert_eq!(uuids(&env), ["b0", "b1", "b2"]);
    // Truncated to fewer lines.
    env.write("p/s.jsonl", lines("s", "c", 1));
    env.index();
    assert_eq!(uuids(&env), ["c0"]);
    // Replaced by rename with a longer file that starts the same way.
    let mut longer = lines("s", "c", 1);
    longer.push_str(&lines("s", "d", 2));
    std::fs::write(env.path("p/new.tmp"), &longer).unwrap();
    std::fs::rename(env.path("p/new.tmp"), env.path("p/s.jsonl")).unwrap();
    env.index();
    assert_eq!(uuids(&env), ["c0", "d0", "d1"]);
    let entries: i64 = env.conn().query_row("SELECT entries FROM sessions WHERE id = 's'", [], |r| r.get(0)).unwrap();
    assert_eq!(entries, 3, "session counts follow the replacement");
    check_invariants(&env.data);
}

#[test]
fn a_rewrite_that_keeps_the_start_but_changes_the_end_is_noticed() {
    let env = Env::new();
    let head = "x".repeat(5000);
    let first = user_line("s", "u0", &format!("\"{head}\""), "") + "\n";
    env.write("p/s.jsonl", format!("{first}{}", lines("s", "a", 2)));
    env.index();
    env.write("p/s.jsonl", format!("{first}{}{}", lines("s", "b", 2), lines("s", "c", 1)));
    env.index();
    assert_eq!(uuids(&env), ["u0", "b0", "b1", "c0"]);
}

#[test]
fn a_deleted_transcript_keeps_its_history_and_without_the_vault_its_photos_answer_gone() {
    let env = Env::new();
    let photo = fake_png(5, 2000);
    env.write("p/s.jsonl", user_line("s", "u1", &format!("[{}]", image_block("image/png", &b64(&photo))), "") + "\n");
    let out = env.run(&["index", "--vault", "off"]);
    assert!(out.status.success());
    assert_eq!(env.media("s/u1/0").unwrap(), photo);
    std::fs::remove_file(env.path("p/s.jsonl")).unwrap();
    let summary = String::from_utf8(env.run(&["index", "--vault", "off"]).stdout).unwrap();
    assert!(summary.contains("1 gone"), "{summary}");
    let (state, entries): (String, i64) = env
        .conn()
        .query_row("SELECT f.state, count(e.id) FROM files f JOIN entries e ON e.file_id = f.id", [], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .unwrap();
    assert_eq!((state.as_str(), entries), ("gone", 1));
    let (code, message) = env.media("s/u1/0").unwrap_err();
    assert_eq!(code, 1);
    assert!(message.contains("is gone"), "{message}");
    // The same path created again is a new file; the old history stays.
    env.write("p/s.jsonl", lines("s", "n", 1));
    env.index();
    let files: i64 = env.conn().query_row("SELECT count(*) FROM files", [], |r| r.get(0)).unwrap();
    assert_eq!(files, 2);
    assert_eq!(uuids(&env), ["u1", "n0"]);
}

#[test]
fn a_second_indexer_on_the_same_data_dir_is_refused() {
    let env = Env::new();
    env.write("p/s.jsonl", lines("s", "a", 1));
    let _held = scrollback::Indexer::open(&env.data).unwrap();
    let out = env.run(&["index"]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("locked by another scrollback process"), "{stderr}");
}

#[test]
fn bad_usage_exits_2_and_a_missing_tree_is_said_and_no_error() {
    let env = Env::new();
    assert_eq!(env.run(&["index", "--no-such-flag"]).status.code(), Some(2));
    assert_eq!(env.run(&["index", "--root", "nonesuch:/tmp"]).status.code(), Some(2));
    // A root that does not exist is said, and is no error: it may appear later.
    let out = env.run(&["index", "--transcripts", "/nonexistent/scrollback-test"]);
    assert_eq!(out.status.code(), Some(0));
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("claude:/nonexistent/scrollback-test does not exist"), "{said}");
    // A malformed ref is bad usage; a well-formed one the index does not know is a failure.
    assert_eq!(env.run(&["media", "not-a-ref"]).status.code(), Some(2));
    assert_eq!(env.run(&["media", "s/u/0"]).status.code(), Some(1));
}

#[test]
fn an_inode_reused_by_another_file_does_not_take_over_a_deleted_transcripts_history() {
    use std::os::unix::fs::MetadataExt;
    let env = Env::new();
    env.write("p/a.jsonl", lines("a", "a", 2));
    env.index();
    // a.jsonl is deleted and, before scrollback notices, b.jsonl is created on the inode it freed
    // (simulated: the file system may or may not reuse it at once).
    std::fs::remove_file(env.path("p/a.jsonl")).unwrap();
    let b = env.write("q/b.jsonl", lines("b", "b", 1));
    let meta = std::fs::metadata(&b).unwrap();
    rusqlite::Connection::open(env.data.join("index.sqlite3"))
        .unwrap()
        .execute("UPDATE files SET dev = ?1, inode = ?2", [meta.dev() as i64, meta.ino() as i64])
        .unwrap();
    env.index();
    assert_eq!(uuids(&env), ["a0", "a1", "b0"], "a's history is kept, b is indexed as a new file");
    let gone: String =
        env.conn().query_row("SELECT state FROM files WHERE path LIKE '%a.jsonl'", [], |r| r.get(0)).unwrap();
    assert_eq!(gone, "gone");
}

#[test]
fn a_renamed_transcript_keeps_its_rows() {
    let env = Env::new();
    env.write("p/a.jsonl", lines("a", "a", 2));
    env.index();
    std::fs::rename(env.path("p/a.jsonl"), env.path("p/renamed.jsonl")).unwrap();
    env.append("p/renamed.jsonl", lines("a", "c", 1));
    env.index();
    assert_eq!(uuids(&env), ["a0", "a1", "c0"]);
    let files: Vec<(String, String)> = env
        .conn()
        .prepare("SELECT path, state FROM files")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap();
    assert_eq!(files.len(), 1, "one file, moved: {files:?}");
    assert!(files[0].0.ends_with("p/renamed.jsonl") && files[0].1 == "live");
}

#[test]
fn media_writes_like_cp_into_fifos_devices_links_and_files() {
    use std::os::unix::fs::{FileTypeExt, PermissionsExt};
    let env = Env::new();
    let photo = fake_png(8, 100_000);
    env.write("p/s.jsonl", user_line("s", "u", &format!("[{}]", image_block("image/png", &b64(&photo))), "") + "\n");
    env.index();
    let out = |target: &std::path::Path| env.run(&["media", "s/u/0", "-o", target.to_str().unwrap()]);

    // A FIFO: written into, and still a FIFO.
    let fifo = env.dir.path().join("pipe");
    assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read(fifo).unwrap())
    };
    let res = out(&fifo);
    assert!(res.status.success(), "{}", String::from_utf8_lossy(&res.stderr));
    assert_eq!(reader.join().unwrap(), photo);
    assert!(std::fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());

    // A symbolic link to a file: the file gets the bytes, the link stays a link, the mode stays.
    let real = env.dir.path().join("real.bin");
    std::fs::write(&real, b"old").unwrap();
    std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o640)).unwrap();
    let link = env.dir.path().join("link.png");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    assert!(out(&link).status.success());
    assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
    assert_eq!(std::fs::read(&real).unwrap(), photo);
    assert_eq!(std::fs::metadata(&real).unwrap().permissions().mode() & 0o777, 0o640);

    // A new path: a file readable by all.
    let new = env.dir.path().join("new.png");
    assert!(out(&new).status.success());
    assert_eq!(std::fs::read(&new).unwrap(), photo);
    assert_eq!(std::fs::metadata(&new).unwrap().permissions().mode() & 0o777, 0o644);

    // A device that refuses the bytes (like /dev/full, made here): a failure, and still a device.
    let full = env.dir.path().join("full");
    let made = std::process::Command::new("mknod").arg(&full).args(["c", "1", "7"]).status();
    if made.is_ok_and(|s| s.success()) {
        let res = out(&full);
        assert_eq!(res.status.code(), Some(1), "a full device is a failure");
        let stderr = String::from_utf8_lossy(&res.stderr);
        assert!(stderr.contains("No space left on device") && stderr.contains("full"), "{stderr}");
        assert!(std::fs::symlink_metadata(&full).unwrap().file_type().is_char_device(), "the device is still one");
        // Standard output on that device: the error names standard output, not the transcript.
        let to_stdout = env
            .cmd()
            .args(["media", "s/u/0"])
            .stdout(std::fs::OpenOptions::new().write(true).open(&full).unwrap())
            .output()
            .unwrap();
        assert_eq!(to_stdout.status.code(), Some(1));
        let stderr = String::from_utf8_lossy(&to_stdout.stderr);
        assert!(stderr.contains("standard output: No space left on device"), "{stderr}");
    } else {
        eprintln!("SKIPPED the device case: mknod needs root");
    }
}

#[test]
fn index_counts_the_files_it_could_not_index_and_exits_1() {
    use std::os::unix::ffi::OsStrExt;
    let env = Env::new();
    env.write("p/good.jsonl", lines("good", "g", 3));
    // A name that is not UTF-8 cannot be stored as a path in the index.
    let bad = env.root.join("p").join(std::ffi::OsStr::from_bytes(b"bad-\xff.jsonl"));
    std::fs::write(&bad, lines("bad", "b", 2)).unwrap();
    let out = env.run(&["index"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stdout}{stderr}");
    assert!(stdout.contains("(0 re-indexed, 0 gone, 1 failed)"), "{stdout}");
    assert!(stderr.contains("could not be indexed"), "{stderr}");
    assert_eq!(uuids(&env), ["g0", "g1", "g2"], "the others are indexed");
}

#[test]
fn a_transcript_moved_away_and_back_takes_its_old_rows_back() {
    let env = Env::new();
    let title = r#"{"type":"custom-title","sessionId":"a","customTitle":"Named"}"#;
    env.write("p/a.jsonl", format!("{}{title}\n", lines("a", "a", 2)));
    env.index();
    // Moved out of the tree: gone, its history kept.
    let away = env.dir.path().join("away.jsonl");
    std::fs::rename(env.path("p/a.jsonl"), &away).unwrap();
    env.index();
    let state: String = env.conn().query_row("SELECT state FROM files", [], |r| r.get(0)).unwrap();
    assert_eq!(state, "gone");
    // Back, with a line more: the same row, live again, read on from where it was.
    std::fs::rename(&away, env.path("p/a.jsonl")).unwrap();
    env.append("p/a.jsonl", lines("a", "b", 1));
    env.index();
    let conn = env.conn();
    let files: Vec<String> = conn
        .prepare("SELECT state FROM files")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(files, ["live"], "one row for one file");
    let history =
        scrollback::read::history::history(&conn, "a", scrollback::read::history::Position::Newest, 100, true)
            .unwrap()
            .unwrap();
    let seen: Vec<Option<&str>> = history.entries.iter().map(|e| e.columns.uuid.as_deref()).collect();
    assert_eq!(seen, [Some("a0"), Some("a1"), None, Some("b0")], "each line once, the title line too");
    let entries: i64 = conn.query_row("SELECT entries FROM sessions WHERE id = 'a'", [], |r| r.get(0)).unwrap();
    assert_eq!(entries, 4);
}

#[test]
fn status_counts_what_the_index_holds_and_creates_nothing() {
    let env = Env::new();
    env.write("p/a.jsonl", format!("{}not json\n", lines("a", "a", 2)));
    env.write("p/b.jsonl", lines("b", "b", 1));
    env.index();
    std::fs::remove_file(env.path("p/b.jsonl")).unwrap();
    env.index();
    let out = env.run(&["status"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    for want in [
        "1 followed, 1 gone",
        "sessions        2",
        "entries         4 (1 invalid line), and 0 more lines hidden as copies or replays",
        "sends pending   0",
    ] {
        assert!(text.contains(want), "{want:?} in\n{text}");
    }
    assert!(!env.data.join("accepted.sqlite3").exists(), "status wrote nothing");
}

#[test]
fn an_error_says_its_cause_once() {
    let env = Env::new();
    let out = env.run(&["search", "x", "--data-dir", "/nonexistent/scrollback-test"]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.matches("no index here yet").count(), 1, "{stderr}");
}

#[test]
fn the_data_directory_is_its_owners_alone_whatever_the_umask() {
    use std::os::unix::fs::PermissionsExt;
    let env = Env::new();
    env.write("p/s.jsonl", user_line("s", "u1", "\"private words\"", "") + "\n");
    // `scrollback index` under umask 022, with the environment's variables.
    let index = || {
        let base = env.cmd();
        let mut sh = std::process::Command::new("sh");
        sh.args(["-c", "umask 022; exec \"$0\" index", env!("CARGO_BIN_EXE_scrollback")]);
        for (key, value) in base.get_envs() {
            match value {
                Some(v) => sh.env(key, v),
                None => sh.env_remove(key),
            };
        }
        let out = sh.env("RUST_LOG", "scrollback=warn").output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    let said = index();
    assert!(!said.contains("open to other users"), "{said}");
    assert_eq!(mode(&env.data), 0o700);
    let mut files = 0;
    for entry in std::fs::read_dir(&env.data).unwrap() {
        let path = entry.unwrap().path();
        let want = if path.is_dir() { 0o700 } else { 0o600 };
        assert_eq!(mode(&path), want, "{}", path.display());
        files += path.is_file() as usize;
    }
    assert!(files >= 2, "the index and the lock at least");
    // An open one, as an older scrollback left it: tightened on the next start, and said.
    for entry in std::fs::read_dir(&env.data).unwrap() {
        let path = entry.unwrap().path();
        let open = if path.is_dir() { 0o755 } else { 0o644 };
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(open)).unwrap();
    }
    std::fs::set_permissions(&env.data, std::fs::Permissions::from_mode(0o755)).unwrap();
    let said = index();
    assert!(said.contains("open to other users"), "{said}");
    assert_eq!(mode(&env.data), 0o700);
    assert_eq!(mode(&env.data.join("index.sqlite3")), 0o600);
    // The transcript itself (linked into the vault) keeps its owner's mode.
    assert_eq!(mode(&env.path("p/s.jsonl")) & 0o044, 0o044);
    // What the data directory holds is named where its privacy is kept.
    for name in [
        scrollback::db::INDEX_FILE,
        scrollback::db::ACCEPT_FILE,
        scrollback::ingest::vault::VAULT_DIR,
        scrollback::ingest::bulk::FTS_BUILD_FILE,
        scrollback::accept::store::IMAGES_DIR,
    ] {
        assert!(scrollback::db::DATA_DIR_NAMES.contains(&name), "{name}");
    }
}
