//! Stored lines, packed (docs/schema.md, "Stored lines"): once the index holds enough lines it
//! trains a zstd dictionary on them, and every line after is kept as a frame naming it. The lines
//! still come back whole (checked against the transcripts by `check_invariants`), a `sqlite3` user
//! unpacks them with the `zstd` tool as the documentation says, and a rebuild carries the history of
//! a deleted transcript over with the dictionary its lines need.

use std::process::Command;

use crate::util::{Env, check_invariants, user_line};

/// A transcript of `lines` lines of session `session`, in words that vary as people's do.
fn transcript(session: &str, lines: usize) -> String {
    let words = ["the index", "a photo", "cargo test", "the harbour", "warp routes", "a migration", "SQLite pages"];
    (0..lines)
        .map(|i| {
            let text = format!(
                "message {i} of {session}: about {} and {} ({})",
                words[i % words.len()],
                words[(i * 5 + 3) % words.len()],
                "detail ".repeat(i % 13)
            );
            user_line(session, &format!("{session}-{i}"), &serde_json::to_string(&text).unwrap(), "") + "\n"
        })
        .collect()
}

#[test]
fn lines_are_packed_with_a_trained_dictionary_and_come_back_whole_through_sqlite3_zstd_and_a_rebuild() {
    let env = Env::new();
    env.write("p/a.jsonl", transcript("a", 1500));
    env.write("p/b.jsonl", transcript("b", 1000));
    let gone = env.write("p/c.jsonl", transcript("c", 300));
    let out = env.run(&["index", "--vault", "off"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    // A second pass: the lines of the file after the dictionary are packed with it.
    env.append("p/c.jsonl", transcript("c", 310).lines().skip(300).map(|l| l.to_owned() + "\n").collect::<String>());
    let out = env.run(&["index", "--vault", "off"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));

    let conn = env.conn();
    let dictionaries: Vec<(i64, i64)> = conn
        .prepare("SELECT id, samples FROM dictionaries")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap();
    assert_eq!(dictionaries.len(), 1, "one dictionary, trained once");
    let (not_packed, packed_bytes, line_bytes): (i64, i64, i64) = conn
        .query_row(
            "SELECT count(*) FILTER (WHERE typeof(stripped) != 'blob'), sum(length(stripped)), sum(length)
             FROM entries",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .unwrap();
    assert_eq!(not_packed, 0, "every stored line is packed");
    assert!(packed_bytes * 2 < line_bytes, "{line_bytes} bytes of lines packed into {packed_bytes}");
    let appended: i64 = conn
        .query_row("SELECT count(*) FROM entries WHERE line > 300 AND file_id = (SELECT id FROM files WHERE path LIKE '%c.jsonl')", [], |r| r.get(0))
        .unwrap();
    assert_eq!(appended, 10);
    // Every frame names the one dictionary: those stored before it was made were packed again.
    let frames: Vec<Vec<u8>> = conn
        .prepare("SELECT stripped FROM entries")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap();
    for frame in &frames {
        assert_eq!(scrollback::pack::dictionary_of(frame), Some(dictionaries[0].0 as u32));
    }
    // Every stored line, unpacked, is the transcript's line (and every other invariant holds).
    assert!(check_invariants(&env.data) > 0);

    // A sqlite3 user, as docs/schema.md says: the dictionary and a line out with sqlite3, into zstd.
    let work = env.dir.path();
    let index = env.data.join("index.sqlite3");
    let sqlite3 = |sql: &str| {
        let out =
            Command::new("sqlite3").arg(&index).arg(sql).current_dir(work).output().expect("sqlite3 is installed");
        assert!(out.status.success(), "sqlite3 {sql}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    };
    sqlite3("SELECT writefile('dictionary', bytes) FROM dictionaries");
    sqlite3("SELECT writefile('line.zst', stripped) FROM entries WHERE uuid = 'b-999'");
    let out = Command::new("zstd")
        .args(["-d", "-q", "-D", "dictionary", "line.zst", "-o", "line.json"])
        .current_dir(work)
        .output()
        .expect("zstd is installed");
    assert!(out.status.success(), "zstd: {}", String::from_utf8_lossy(&out.stderr));
    let expected = transcript("b", 1000).lines().nth(999).unwrap().to_owned();
    assert_eq!(std::fs::read_to_string(work.join("line.json")).unwrap(), expected);

    // The transcript goes; a rebuild carries its history over, dictionary included.
    let session_bytes = std::fs::read(&gone).unwrap();
    std::fs::remove_file(&gone).unwrap();
    let out = env.run(&["rebuild", "--vault", "off"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let exported = work.join("c.md");
    let out = env.run(&["export", "c", "--format", "md", "-o", exported.to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let markdown = std::fs::read_to_string(&exported).unwrap();
    for i in 0..310 {
        assert!(markdown.contains(&format!("message {i} of c:")), "message {i} of the deleted transcript");
    }
    assert_eq!(session_bytes.iter().filter(|b| **b == b'\n').count(), 310);
    let dictionaries: i64 = env.conn().query_row("SELECT count(*) FROM dictionaries", [], |r| r.get(0)).unwrap();
    assert!(dictionaries >= 1);
}
