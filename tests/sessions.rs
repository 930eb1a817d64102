//! A session as one conversation: history in the order it happened across a session's files,
//! whatever order they were indexed in; titles, counts and copies the same way; sub-agent links;
//! search over every kind of line that carries text, in every language.

use rusqlite::{Connection, OptionalExtension};
use scrollback::read::history::{self, HistoryEntry, Position, SessionQuery};
use scrollback::read::prices::Prices;
use scrollback::read::stats;
use scrollback::{Indexer, NoProgress};
use serde_json::{Value, json};

use crate::util::Env;

const S: &str = "5e55a0e0-0000-4000-8000-000000000001";
const R: &str = "5e55a0e0-0000-4000-8000-000000000002";

fn line(v: Value) -> String {
    format!("{v}\n")
}

fn user(uuid: &str, ts: &str, content: Value, extra: Value) -> Value {
    let mut v = json!({"type": "user", "sessionId": S, "uuid": uuid, "timestamp": ts, "isSidechain": false,
                       "cwd": "/work/demo", "message": {"role": "user", "content": content}});
    merge(&mut v, extra);
    v
}

fn assistant(uuid: &str, ts: &str, content: Value, extra: Value) -> Value {
    let mut v = json!({"type": "assistant", "sessionId": S, "uuid": uuid, "timestamp": ts, "isSidechain": false,
                       "message": {"role": "assistant", "content": content}});
    merge(&mut v, extra);
    v
}

fn merge(v: &mut Value, extra: Value) {
    if let Value::Object(extra) = extra {
        v.as_object_mut().unwrap().extend(extra);
    }
}

fn ts(s: u32) -> String {
    format!("2026-03-01T10:00:{s:02}.000Z")
}

/// The main transcript of S: injected context before the person's words, two Task calls whose
/// results name their sub-agents, a compaction notice, an invalid line.
fn main_file() -> String {
    let mut out = String::new();
    out += &line(user(
        "m1",
        &ts(1),
        json!([{"type": "text", "text": "<ide_selection>The user selected lines 1-3 of main.rs</ide_selection>"},
               {"type": "text", "text": "<system-reminder>be brief</system-reminder>\nWhy does history lose its order?"}]),
        json!({}),
    ));
    out += &line(assistant(
        "m2",
        &ts(2),
        json!([{"type": "tool_use", "id": "t1", "name": "Task", "input": {"prompt": "look"}}]),
        json!({}),
    ));
    out += &line(assistant(
        "m3",
        &ts(3),
        json!([{"type": "tool_use", "id": "t2", "name": "Task", "input": {"prompt": "look too"}}]),
        json!({}),
    ));
    out += &line(user(
        "m4",
        &ts(20),
        json!([{"type": "tool_result", "tool_use_id": "t1", "content": "agent one done"}]),
        json!({"toolUseResult": {"agentId": "a1", "status": "completed"}}),
    ));
    out += &line(user(
        "m5",
        &ts(21),
        json!([{"type": "tool_result", "tool_use_id": "t2", "content": "agent two done"}]),
        json!({"toolUseResult": {"agentId": "a2", "status": "completed"}}),
    ));
    out += &line(
        json!({"type": "system", "subtype": "compact_boundary", "sessionId": S, "uuid": "m6", "timestamp": ts(22),
                        "content": "Conversation compacted", "isSidechain": false}),
    );
    out += "this line is not JSON {\n";
    out += &line(assistant("m7", &ts(30), json!([{"type": "text", "text": "Both helpers are done."}]), json!({})));
    out
}

/// A sub-agent's transcript: its prompt (which must not title the session) and its work, at times
/// between the main transcript's lines; one line at the same instant as the other sub-agent's.
fn agent_file(agent: &str, times: [u32; 3]) -> String {
    let extra = || json!({"isSidechain": true, "agentId": agent});
    let mut out = String::new();
    out +=
        &line(user(&format!("{agent}-1"), &ts(times[0]), json!(format!("Prompt of {agent}: read the files")), extra()));
    out += &line(assistant(
        &format!("{agent}-2"),
        &ts(times[1]),
        json!([{"type": "text", "text": format!("{agent} reads")}]),
        extra(),
    ));
    out += &line(assistant(
        &format!("{agent}-3"),
        &ts(times[2]),
        json!([{"type": "text", "text": format!("{agent} is done")}]),
        extra(),
    ));
    out
}

const MAIN: &str = "proj/5e55a0e0-0000-4000-8000-000000000001.jsonl";
const A1: &str = "proj/5e55a0e0-0000-4000-8000-000000000001/subagents/agent-a1.jsonl";
const A2: &str = "proj/5e55a0e0-0000-4000-8000-000000000001/subagents/agent-a2.jsonl";

pub(crate) fn files() -> [(&'static str, String); 3] {
    [(MAIN, main_file()), (A1, agent_file("a1", [4, 10, 12])), (A2, agent_file("a2", [5, 10, 15]))]
}

/// Indexes `files` one at a time, in this order, each with its own catch-up.
fn index_in_order(env: &Env, files: &[(&str, String)]) {
    let mut indexer = Indexer::open(&env.data).unwrap();
    for (rel, body) in files {
        env.write(rel, body);
        indexer.catch_up(&env.root, &mut NoProgress).unwrap();
    }
}

/// Every entry of a session's history, page by page backwards, pages of `limit`.
fn all_history(conn: &Connection, session: &str, sidechains: bool, limit: u32) -> Vec<HistoryEntry> {
    let mut pages = Vec::new();
    let mut at = Position::Newest;
    loop {
        let page = history::history(conn, session, at, limit, sidechains).unwrap().unwrap();
        pages.push(page.entries);
        match page.before {
            Some(before) => at = Position::Before(before),
            None => break,
        }
    }
    pages.into_iter().rev().flatten().collect()
}

/// What a person sees of a history: each entry's uuid (or line for an invalid one) and type.
fn seen(entries: &[HistoryEntry]) -> Vec<String> {
    entries
        .iter()
        .map(|e| match &e.columns.uuid {
            Some(uuid) => format!("{uuid} {}", e.columns.kind.as_deref().unwrap_or("")),
            None => format!("line {} {}", e.line, e.invalid().map(|_| "invalid").unwrap_or("")),
        })
        .collect()
}

fn session_row(conn: &Connection, id: &str) -> (Option<String>, i64, i64) {
    conn.query_row("SELECT title, entries, sidechain_entries FROM sessions WHERE id = ?1", [id], |r| {
        Ok((r.get(0)?, r.get(1)?, r.get(2)?))
    })
    .unwrap()
}

fn permutations(n: usize) -> Vec<Vec<usize>> {
    if n == 1 {
        return vec![vec![0]];
    }
    let mut out = Vec::new();
    for p in permutations(n - 1) {
        for at in 0..=p.len() {
            let mut q = p.clone();
            q.insert(at, n - 1);
            out.push(q);
        }
    }
    out
}

/// A session as a person sees it: history with and without side chains, and its title and counts.
type Seen = (Vec<String>, Vec<String>, (Option<String>, i64, i64));

#[test]
fn a_session_of_three_files_reads_the_same_in_every_indexing_order() {
    let files = files();
    let mut first: Option<Seen> = None;
    for order in permutations(3) {
        let env = Env::new();
        let in_order: Vec<(&str, String)> = order.iter().map(|&i| (files[i].0, files[i].1.clone())).collect();
        index_in_order(&env, &in_order);
        let conn = env.conn();
        let with = all_history(&conn, S, true, 4);
        let without = all_history(&conn, S, false, 3);
        let row = session_row(&conn, S);
        // In the order it happened: the main transcript's lines in line order, each sub-agent's lines
        // where they happened in time (the same instant: the main transcript first, then by path).
        let orders: Vec<_> = with.iter().map(|e| (e.order.clone(), e.cursor)).collect();
        assert!(orders.windows(2).all(|w| w[0] < w[1]), "{order:?}: sorted by order");
        let timestamps: Vec<&str> = with.iter().filter_map(|e| e.columns.timestamp.as_deref()).collect();
        assert!(timestamps.windows(2).all(|w| w[0] <= w[1]), "{order:?}: {timestamps:?}");
        assert_eq!(&seen(&with)[..5], ["m1 user", "m2 assistant", "m3 assistant", "a1-1 user", "a2-1 user"]);
        assert_eq!(
            seen(&without),
            [
                "m1 user",
                "m2 assistant",
                "m3 assistant",
                "m4 user",
                "m5 user",
                "m6 system",
                "line 7 invalid",
                "m7 assistant"
            ]
        );
        // The title is the person's own words from the main transcript: not the injected context,
        // not a sub-agent's prompt. The counts are what history returns.
        assert_eq!(row.0.as_deref(), Some("Why does history lose its order?"), "{order:?}");
        assert_eq!((row.1, row.1 - row.2), (with.len() as i64, without.len() as i64), "{order:?}");
        assert_eq!(row.1, 14);
        let now = (seen(&with), seen(&without), row);
        match &first {
            None => first = Some(now),
            Some(first) => assert_eq!(&now, first, "indexing order {order:?} gives another session"),
        }
        crate::util::check_invariants(&env.data);
    }
}

#[test]
fn a_tool_call_that_ran_a_sub_agent_links_to_its_entries() {
    let env = Env::new();
    index_in_order(&env, &files());
    let conn = env.conn();
    let with = all_history(&conn, S, true, 100);
    let m4 = with.iter().find(|e| e.columns.uuid.as_deref() == Some("m4")).unwrap();
    let link = m4.subagent.as_ref().expect("m4 names agent a1");
    assert_eq!((link.agent_id.as_str(), link.entries), ("a1", 3));
    let at = with.iter().position(|e| e.cursor == link.first.unwrap()).unwrap();
    let first = &with[at];
    assert_eq!(first.columns.uuid.as_deref(), Some("a1-1"));
    // Reading forward from there gives what follows in order, and says where to go on.
    let page = history::history(&conn, S, Position::From(first.cursor), 3, true).unwrap().unwrap();
    assert_eq!(seen(&page.entries), seen(&with[at..at + 3]));
    assert_eq!(page.next, Some(with[at + 3].cursor));
    let page = history::history(&conn, S, Position::From(with[at + 3].cursor), 100, true).unwrap().unwrap();
    assert_eq!(seen(&page.entries), seen(&with[at + 3..]));
    assert_eq!(page.next, None);
    // A cursor of another session is refused.
    assert!(history::history(&conn, "other", Position::Before(first.cursor), 3, true).unwrap().is_none());
    env.write(
        "proj/other.jsonl",
        line(json!({"type": "user", "sessionId": "other", "uuid": "o1", "message": {"role": "user", "content": "hi"}})),
    );
    Indexer::open(&env.data).unwrap().catch_up(&env.root, &mut NoProgress).unwrap();
    let conn = env.conn();
    let refused = history::history(&conn, "other", Position::Before(first.cursor), 3, true);
    assert!(matches!(refused, Err(scrollback::Error::BadQuery(_))), "{refused:?}");
}

#[test]
fn a_catch_up_gives_an_entry_indexed_late_exactly_once_wherever_it_stands() {
    let env = Env::new();
    let [main, a1, _] = files();
    index_in_order(&env, &[(main.0, main.1.clone())]);
    let conn = env.conn();
    let newest = history::history(&conn, S, Position::Newest, 100, true).unwrap().unwrap();
    let mark = newest.after.unwrap();
    // The sub-agent's file arrives after the main transcript's later lines: its entries stand before
    // them in the conversation, and a catch-up gives each of them once.
    index_in_order(&env, &[(a1.0, a1.1.clone())]);
    let caught = history::history(&conn, S, Position::After(mark), 2, true).unwrap().unwrap();
    assert_eq!(seen(&caught.entries), ["a1-1 user", "a1-2 assistant"]);
    let rest = history::history(&conn, S, Position::After(caught.after.unwrap()), 2, true).unwrap().unwrap();
    assert_eq!(seen(&rest.entries), ["a1-3 assistant"]);
    let none = history::history(&conn, S, Position::After(rest.after.unwrap()), 2, true).unwrap().unwrap();
    assert!(none.entries.is_empty());
    // Each stands between m3 (10:00:03) and m4 (10:00:20).
    let all = seen(&all_history(&conn, S, true, 100));
    let at = |u: &str| all.iter().position(|s| s.starts_with(u)).unwrap();
    assert!(at("m3 ") < at("a1-1") && at("a1-3") < at("m4 "), "{all:?}");
}

/// The resumed session R: an older file, and a newer one that starts with copies of two of its
/// entries (as Claude Code writes a resumed conversation) and renames it.
fn r(mut v: Value) -> String {
    v["sessionId"] = json!(R);
    line(v)
}

fn resumed_files() -> [(&'static str, String); 2] {
    let old_1 = r(user("r1", "2025-12-01T09:00:00.000Z", json!("First words of the old conversation"), json!({})));
    let old_2 =
        r(assistant("r2", "2025-12-01T09:00:05.000Z", json!([{"type": "text", "text": "An old answer."}]), json!({})));
    let old = format!(
        "{old_1}{old_2}{}{}",
        r(json!({"type": "custom-title", "customTitle": "Old name"})),
        r(assistant(
            "r3",
            "2025-12-01T09:01:00.000Z",
            json!([{"type": "text", "text": "The last old answer."}]),
            json!({})
        ))
    );
    let new = format!(
        "{old_1}{old_2}{}{}{}",
        r(user("r4", "2026-02-01T09:00:00.000Z", json!("Back at it, a year on"), json!({}))),
        r(json!({"type": "custom-title", "customTitle": "New name"})),
        r(assistant("r5", "2026-02-01T09:00:09.000Z", json!([{"type": "text", "text": "Welcome back."}]), json!({})))
    );
    [
        ("older-project/5e55a0e0-0000-4000-8000-000000000002.jsonl", old),
        ("newer-project/5e55a0e0-0000-4000-8000-000000000002.jsonl", new),
    ]
}

#[test]
fn a_resumed_session_reads_in_time_order_with_each_copy_once() {
    let files = resumed_files();
    let mut first = None;
    for order in [[0, 1], [1, 0]] {
        let env = Env::new();
        index_in_order(
            &env,
            &[(files[order[0]].0, files[order[0]].1.clone()), (files[order[1]].0, files[order[1]].1.clone())],
        );
        let conn = env.conn();
        let history = seen(&all_history(&conn, R, true, 2));
        assert_eq!(
            history,
            ["r1 user", "r2 assistant", "line 3 ", "r3 assistant", "r4 user", "line 4 ", "r5 assistant"],
            "{order:?}"
        );
        let row = session_row(&conn, R);
        assert_eq!(row, (Some("New name".to_owned()), 7, 0), "{order:?}: the latest title, copies not counted");
        let hits = history::search(&conn, "\"An old answer\"", None, 10).unwrap();
        assert_eq!(hits.len(), 1, "a copy is not a second hit");
        if let Some(first) = &first {
            assert_eq!(&history, first);
        }
        first = Some(history);
        // Re-reading one of the files (rewritten: a line in front) keeps one copy of each entry shown.
        let summary = r(json!({"type": "summary", "summary": "Resumed", "leafUuid": "r2"}));
        env.write(files[order[1]].0, format!("{summary}{}", files[order[1]].1));
        Indexer::open(&env.data).unwrap().catch_up(&env.root, &mut NoProgress).unwrap();
        let again = seen(&all_history(&env.conn(), R, true, 100));
        assert_eq!(again.iter().filter(|s| s.starts_with("r1 ")).count(), 1);
        assert_eq!(again.iter().filter(|s| s.starts_with("r2 ")).count(), 1);
    }
}

/// A session's git branch as version 10 read it at each request, from the stored lines: the last
/// shown line in conversation order that names one, by each agent's field. What the session's row
/// must say.
fn branch_from_the_stored_lines(conn: &Connection, session: &str) -> Option<String> {
    conn.query_row(
        r#"SELECT coalesce(json_extract(stored_line(stripped), '$.gitBranch'), json_extract(stored_line(stripped), '$.payload.git.branch'))
           FROM entries
           WHERE session_id = ?1 AND stripped IS NOT NULL AND duplicate = 0
             AND (instr(stored_line(stripped), '"gitBranch":"') > 0 OR (type = 'session_meta' AND instr(stored_line(stripped), '"branch"') > 0))
             AND json_valid(stored_line(stripped))
           ORDER BY sort_at DESC, sort_file DESC, line DESC, id DESC LIMIT 1"#,
        [session],
        |r| r.get::<_, Option<String>>(0),
    )
    .optional()
    .unwrap()
    .flatten()
    .filter(|b| !b.trim().is_empty())
}

#[test]
fn a_sessions_git_branch_is_the_last_its_shown_lines_name_whatever_the_indexing_order() {
    let on = |mut v: Value, branch: &str| -> String {
        v["gitBranch"] = json!(branch);
        r(v)
    };
    let old_1 = on(user("r1", "2025-12-01T09:00:00.000Z", json!("First words"), json!({})), "main");
    let old_2 = on(
        assistant("r2", "2025-12-01T09:00:05.000Z", json!([{"type": "text", "text": "An answer."}]), json!({})),
        "main",
    );
    let old_3 =
        on(assistant("r3", "2025-12-01T09:01:00.000Z", json!([{"type": "text", "text": "Fixed."}]), json!({})), "fix");
    let newer = on(user("r4", "2026-02-01T09:00:00.000Z", json!("Back at it"), json!({})), "feature");
    let summary = r(json!({"type": "summary", "summary": "Resumed", "leafUuid": "r4"}));
    // The newer file starts with copies of the older one's first two lines (a resumed session).
    let files = [
        ("older-project/5e55a0e0-0000-4000-8000-000000000002.jsonl", format!("{old_1}{old_2}{old_3}")),
        ("newer-project/5e55a0e0-0000-4000-8000-000000000002.jsonl", format!("{old_1}{old_2}{newer}{summary}")),
    ];
    for order in [[0, 1], [1, 0]] {
        let env = Env::new();
        index_in_order(
            &env,
            &[(files[order[0]].0, files[order[0]].1.clone()), (files[order[1]].0, files[order[1]].1.clone())],
        );
        let branch = |conn: &Connection| {
            let kept = history::git_branch(conn, R).unwrap();
            assert_eq!(kept, branch_from_the_stored_lines(conn, R), "{order:?}: the row says what the lines say");
            kept
        };
        assert_eq!(branch(&env.conn()).as_deref(), Some("feature"), "{order:?}");
        // The newer file rewritten without its own lines: the branch is the last the lines still
        // shown name (the older file's copies shown again where the newer one's went).
        env.write(files[1].0, format!("{old_1}{old_2}"));
        Indexer::open(&env.data).unwrap().catch_up(&env.root, &mut NoProgress).unwrap();
        assert_eq!(branch(&env.conn()).as_deref(), Some("fix"), "{order:?}");
        // A later line that names an empty branch: the transcript names none now.
        env.append(
            files[0].0,
            on(
                assistant("r6", "2026-03-01T09:00:00.000Z", json!([{"type": "text", "text": "Elsewhere."}]), json!({})),
                "",
            ),
        );
        Indexer::open(&env.data).unwrap().catch_up(&env.root, &mut NoProgress).unwrap();
        assert_eq!(branch(&env.conn()), None, "{order:?}");
    }
}

#[test]
fn titles_skip_injected_blocks_and_never_come_from_a_side_chain() {
    let env = Env::new();
    // The sub-agent's transcript is indexed first, and a side-chain Task prompt sits in the main one.
    let agent = agent_file("a1", [1, 2, 3]);
    let main = format!(
        "{}{}{}",
        line(user("k0", &ts(4), json!("Side-chain prompt that is no title"), json!({"isSidechain": true}))),
        line(user("k1", &ts(5), json!("<command-name>/clear</command-name>"), json!({}))),
        line(user(
            "k2",
            &ts(6),
            json!([{"type": "text", "text": "<ide_opened_file>a.rs</ide_opened_file>"},
                                       {"type": "text", "text": "Make the build faster"}]),
            json!({})
        )),
    );
    index_in_order(&env, &[(A1, agent), (MAIN, main)]);
    assert_eq!(session_row(&env.conn(), S).0.as_deref(), Some("Make the build faster"));
}

/// A transcript not named for its lines' session (renamed, copied, or one session's lines in a file
/// named for another) titles it with the person's first words; where the session's own transcript
/// is indexed too, its first words win, in either indexing order.
#[test]
fn a_transcript_named_for_another_session_titles_its_lines_session_with_the_first_words() {
    let copy = line(user("c1", &ts(1), json!("Why is the cache slow?"), json!({})));
    let renamed = Env::new();
    index_in_order(&renamed, &[("proj/renamed.jsonl", copy.clone())]);
    assert_eq!(session_row(&renamed.conn(), S).0.as_deref(), Some("Why is the cache slow?"));
    let own = line(user("o1", &ts(5), json!("Make the build faster"), json!({})));
    for order in [[0, 1], [1, 0]] {
        let env = Env::new();
        let files = [("proj/renamed.jsonl", copy.clone()), (MAIN, own.clone())];
        index_in_order(&env, &[files[order[0]].clone(), files[order[1]].clone()]);
        assert_eq!(session_row(&env.conn(), S).0.as_deref(), Some("Make the build faster"), "{order:?}");
    }
}

#[test]
fn every_kind_of_line_that_carries_text_is_searchable() {
    let env = Env::new();
    let lines = [
        json!({"type": "system", "subtype": "compact_boundary", "sessionId": S, "uuid": "y1", "timestamp": ts(1), "content": "Conversation compacted"}),
        json!({"type": "attachment", "sessionId": S, "uuid": "y2", "timestamp": ts(2), "attachment": {"type": "queued_command", "prompt": "also rename the fixtures"}}),
        json!({"type": "queue-operation", "operation": "enqueue", "sessionId": S, "timestamp": ts(3), "content": "rerun the benchmarks"}),
        json!({"type": "summary", "summary": "Refactoring the orderly parser", "leafUuid": "y1"}),
        json!({"type": "progress", "sessionId": S, "uuid": "y5", "timestamp": ts(4), "data": {"message": "tick tock progress"}}),
    ];
    env.write(MAIN, lines.iter().map(|v| line(v.clone())).collect::<String>());
    Indexer::open(&env.data).unwrap().catch_up(&env.root, &mut NoProgress).unwrap();
    let conn = env.conn();
    for (query, hits) in [("compacted", 1), ("fixtures", 1), ("benchmarks", 1), ("orderly", 1), ("tock", 0)] {
        assert_eq!(history::search(&conn, query, None, 10).unwrap().len(), hits, "{query}");
    }
}

#[test]
fn words_in_chinese_japanese_and_korean_are_found_as_written() {
    let env = Env::new();
    let texts = [
        ("c1", "我们需要修复数据库索引的性能问题"),
        ("c2", "请帮我检查这个函数为什么返回错误"),
        ("j1", "データベースのインデックスを再構築してください"),
        ("j2", "東京で写真を撮りました。とても綺麗でした"),
        ("k1", "데이터베이스 인덱스를 다시 만들어 주세요"),
        ("e1", "the harbour photos, and 数据库 in a mixed line"),
    ];
    let body: String = texts
        .iter()
        .enumerate()
        .map(|(i, (uuid, text))| line(user(uuid, &ts(i as u32), json!(text), json!({}))))
        .collect();
    env.write(MAIN, body);
    Indexer::open(&env.data).unwrap().catch_up(&env.root, &mut NoProgress).unwrap();
    let conn = env.conn();
    let cases: &[(&str, &[&str])] = &[
        ("数据库", &["c1", "e1"]),
        ("索引", &["c1"]),
        ("性能", &["c1"]),
        ("修复", &["c1"]),
        ("函数", &["c2"]),
        ("错误", &["c2"]),
        ("检查 函数", &["c2"]),
        ("データベース", &["j1"]),
        ("インデックス", &["j1"]),
        ("再構築", &["j1"]),
        ("写真", &["j2"]),
        ("東京", &["j2"]),
        ("데이터베이스", &["k1"]),
        ("주세요", &["k1"]),
        ("数据*", &["c1", "e1"]),
        ("\"数据库索引\"", &["c1"]),
        ("harbour 数据库", &["e1"]),
        ("photo*", &["e1"]),
        ("库数", &[]),
        ("数据库 OR 函数", &["c1", "c2", "e1"]),
    ];
    for (query, want) in cases {
        let mut got: Vec<String> =
            history::search(&conn, query, None, 50).unwrap().into_iter().map(|h| h.entry_uuid.unwrap()).collect();
        got.sort();
        assert_eq!(got, *want, "{query}");
    }
    // Snippets show the text as written, the match marked.
    for hit in history::search(&conn, "数据库", Some(S), 10).unwrap() {
        let marked = hit.snippet.marked("[", "]");
        assert!(marked.contains("[数据库]"), "{marked:?}");
        assert!(!marked.contains('\u{200B}'), "{marked:?}");
    }
    // The sessions list finds the session by a CJK word too; the messages view shows the text as
    // written.
    let page = history::sessions(&conn, &SessionQuery { text: Some("再構築".into()), limit: 10, ..Default::default() })
        .unwrap();
    assert_eq!(page.sessions.len(), 1);
    let text: String = conn.query_row("SELECT text FROM messages WHERE uuid = 'c1'", [], |r| r.get(0)).unwrap();
    assert_eq!(text, texts[0].1);
}

#[test]
fn an_index_written_by_version_3_reads_as_a_fresh_one_once_opened() {
    // A fresh index of the sessions above, and the same rows as version 3 wrote them (no order,
    // copies or sub-agent columns, text without word marks, its own titles and counts).
    let env = Env::new();
    let mut all: Vec<(&str, String)> = files().to_vec();
    all.extend(resumed_files());
    all.push((
        "proj/cjk.jsonl",
        line(user("c1", &ts(1), json!("我们需要修复数据库索引的性能问题"), json!({"sessionId": "cjk"}))),
    ));
    index_in_order(&env, &all);
    let old = env.dir.path().join("v3");
    std::fs::create_dir_all(&old).unwrap();
    let v3 = Connection::open(old.join("index.sqlite3")).unwrap();
    scrollback::db::register_stored_line(&v3).unwrap();
    let schema =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/crates/core/tests/fixtures/schema-v3.sql"))
            .unwrap();
    v3.execute_batch(&schema).unwrap();
    v3.execute("ATTACH ?1 AS fresh", [env.data.join("index.sqlite3").to_str().unwrap()]).unwrap();
    v3.execute_batch(
        "INSERT INTO files SELECT id, path, session_id, dev, inode, fingerprint, fingerprint_len, tail_hash, size,
                                  mtime_ns, checkpoint, lines, state, indexed_at, gone_at FROM fresh.files;
         INSERT INTO entries (id, file_id, session_id, line, offset, length, uuid, parent_uuid, type, role, timestamp,
                              is_sidechain, stripped, text, invalid)
             SELECT id, file_id, session_id, line, offset, length, uuid, parent_uuid, type, role, timestamp,
                    is_sidechain, stored_line(stripped), replace(text, char(8203), ''), invalid FROM fresh.entries;
         INSERT INTO media SELECT * FROM fresh.media;
         INSERT INTO failed_images SELECT * FROM fresh.failed_images;
         INSERT INTO sessions (id, project, title, title_rank, first_timestamp, last_timestamp, entries, images)
             SELECT id, project, 'a stale title', 1, first_timestamp, last_timestamp, 1, images FROM fresh.sessions;
         DETACH fresh;
         PRAGMA user_version = 3;",
    )
    .unwrap();
    drop(v3);
    drop(Indexer::open(&old).unwrap());
    let (fresh, migrated) = (env.conn(), scrollback::read::index::open(&old).unwrap());
    for session in [S, R, "cjk"] {
        for sidechains in [true, false] {
            assert_eq!(
                seen(&all_history(&migrated, session, sidechains, 3)),
                seen(&all_history(&fresh, session, sidechains, 3)),
                "{session}"
            );
        }
        let row = |conn: &Connection| -> Vec<Option<String>> {
            conn.query_row(
                "SELECT title, title_rank, title_order, entries, sidechain_entries, images FROM sessions WHERE id = ?1",
                [session],
                |r| (0..6).map(|i| r.get::<_, rusqlite::types::Value>(i).map(|v| Some(format!("{v:?}")))).collect(),
            )
            .unwrap()
        };
        assert_eq!(row(&migrated), row(&fresh), "{session}");
    }
    for query in ["数据库", "compacted", "\"An old answer\"", "helpers"] {
        let hits = |conn: &Connection| -> Vec<i64> {
            history::search(conn, query, None, 50).unwrap().into_iter().map(|h| h.cursor).collect()
        };
        assert_eq!(hits(&migrated), hits(&fresh), "{query}");
    }
    crate::util::check_invariants(&old);
}

/// The files of a public fixture tree (the corpus's `public/<name>`), relative to the tree, with
/// their bytes; `None` (the test skips) where the corpus is absent.
fn public_tree(name: &str) -> Option<Vec<(String, String)>> {
    let root = crate::util::corpus(&format!("public/{name}"))?;
    let mut files = Vec::new();
    let mut dirs = vec![root.clone()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else {
                let rel = path.strip_prefix(&root).unwrap().to_str().unwrap().to_owned();
                files.push((format!("{name}/{rel}"), std::fs::read_to_string(&path).unwrap()));
            }
        }
    }
    files.sort();
    Some(files)
}

#[test]
fn other_projects_multi_file_sessions_read_the_same_in_every_indexing_order() {
    for (tree, session) in [
        ("claude-code-log", "55550000-0000-4000-8000-000000000001"),
        ("claude-code-viewer", "5c0375b4-57a5-4f26-b12d-d022ee4e51b7"),
    ] {
        let Some(files) = public_tree(tree) else { return };
        assert_eq!(files.len(), 3, "{tree}");
        let mut first: Option<Seen> = None;
        for order in permutations(3) {
            let env = Env::new();
            let in_order: Vec<(&str, String)> =
                order.iter().map(|&i| (files[i].0.as_str(), files[i].1.clone())).collect();
            index_in_order(&env, &in_order);
            let conn = env.conn();
            let (with, without) = (all_history(&conn, session, true, 4), all_history(&conn, session, false, 4));
            let row = session_row(&conn, session);
            assert_eq!((row.1, row.1 - row.2), (with.len() as i64, without.len() as i64), "{tree} {order:?}");
            let timestamps: Vec<&str> = with.iter().filter_map(|e| e.columns.timestamp.as_deref()).collect();
            assert!(timestamps.windows(2).all(|w| w[0] <= w[1]), "{tree} {order:?}: in time order");
            let now = (seen(&with), seen(&without), row);
            match &first {
                None => first = Some(now),
                Some(first) => assert_eq!(&now, first, "{tree}: indexing order {order:?} gives another session"),
            }
        }
        let (with, without, (title, entries, sidechain_entries)) = first.unwrap();
        match tree {
            "claude-code-log" => {
                // The main transcript's 11 lines, then the two sub-agents' (10:00:12 on).
                assert_eq!((entries, sidechain_entries), (17, 6));
                assert_eq!(with[..11], without[..]);
                assert_eq!(with[11..13], ["showcol1-u1 user", "showcol1-a1 assistant"]);
                let expected = "Give me a tour of the repository: its structure, then compare the web and jobs modules side by side.";
                assert_eq!(title.as_deref(), Some(expected));
            }
            _ => {
                // The sub-agents' transcripts are dated days before the main one: they come first.
                // 4 in the sub-agents' files, 22 side-chain lines in the main transcript itself.
                assert_eq!(sidechain_entries, 26);
                assert!(with[..4].iter().all(|s| s.starts_with('a')), "{with:?}");
                // The title is not the sub-agent's prompt, nor the slash command's wrapper.
                // The title is the slash command the person typed with its (Japanese) arguments: not
                // the command's wrapper tags, not the sub-agent's prompt.
                assert_eq!(title.as_deref(), Some("/orchestrator @CLAUDE.md を最新の状態にアップデートしてください"));
            }
        }
    }
    // The sub-agent links of claude-code-log's showcase, and its Japanese text in the other one.
    let env = Env::new();
    let (Some(mut all), Some(viewer)) = (public_tree("claude-code-log"), public_tree("claude-code-viewer")) else {
        return;
    };
    all.extend(viewer);
    let all: Vec<(&str, String)> = all.iter().map(|(p, b)| (p.as_str(), b.clone())).collect();
    index_in_order(&env, &all);
    let conn = env.conn();
    let with = all_history(&conn, "55550000-0000-4000-8000-000000000001", true, 100);
    let links: Vec<(String, i64, Option<String>)> = with
        .iter()
        .filter_map(|e| e.subagent.as_ref())
        .map(|s| {
            let first = with.iter().find(|e| Some(e.cursor) == s.first).and_then(|e| e.columns.uuid.clone());
            (s.agent_id.clone(), s.entries, first)
        })
        .collect();
    assert_eq!(
        links,
        [
            ("showcol1".to_owned(), 2, Some("showcol1-u1".to_owned())),
            ("showcol2".to_owned(), 4, Some("showcol2-u1".to_owned()))
        ]
    );
    let hits = history::search(&conn, "最新", None, 10).unwrap();
    assert!(!hits.is_empty());
    for hit in hits {
        assert_eq!(hit.session_id, "5c0375b4-57a5-4f26-b12d-d022ee4e51b7");
        assert!(hit.snippet.marked("[", "]").contains("[最新]"), "{:?}", hit.snippet.marked("[", "]"));
    }
    crate::util::check_invariants(&env.data);
}

#[test]
fn a_page_costs_the_same_wherever_it_starts_even_when_every_timestamp_is_equal() {
    // 20,000 lines of one instant: every entry has the same `at`, so only the line orders them. A
    // page must start at its place in the index, not walk the session down to it. Measured in
    // SQLite virtual-machine steps (deterministic), not in time.
    let env = Env::new();
    let body: String =
        (0..20_000).map(|n| line(user(&format!("e{n}"), &ts(0), json!(format!("line {n}")), json!({})))).collect();
    env.write(MAIN, body);
    Indexer::open(&env.data).unwrap().catch_up(&env.root, &mut NoProgress).unwrap();
    let conn = env.conn();
    let steps = |at: Position| -> u64 {
        let count = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
        let c = count.clone();
        conn.progress_handler(
            100,
            Some(move || {
                c.fetch_add(100, std::sync::atomic::Ordering::Relaxed);
                false
            }),
        )
        .unwrap();
        let page = history::history(&conn, S, at, 50, false).unwrap().unwrap();
        conn.progress_handler(100, None::<fn() -> bool>).unwrap();
        assert_eq!(page.entries.len(), 50);
        count.load(std::sync::atomic::Ordering::Relaxed)
    };
    let newest = steps(Position::Newest);
    let middle = all_history(&conn, S, false, 500)[10_000].cursor;
    let (before, from) = (steps(Position::Before(middle)), steps(Position::From(middle)));
    assert!(before < 3 * newest && from < 3 * newest, "newest {newest} steps, before {before}, from {from}");
}

/// Where a title is expected (the list, one session, a search hit), a session with no title is
/// named by the first words said in it (an answer; a sub-agent's prompt), else by its project and
/// day: never by its id.
#[test]
fn an_untitled_session_is_named_by_its_first_words_or_its_project_and_day_never_its_id() {
    let env = Env::new();
    let answered = "5e55a0e0-0000-4000-8000-0000000000a1";
    let silent = "5e55a0e0-0000-4000-8000-0000000000a2";
    let as_session = |id: &str, v: Value| {
        let mut v = v;
        merge(&mut v, json!({"sessionId": id, "cwd": "/work/lighthouse"}));
        line(v)
    };
    let answer = "The build fails because the linker cannot find libssl.\n\nInstall libssl-dev and run it again; \
                  the rest of this answer is long enough that a title would be cut well before its end.";
    env.write(
        &format!("p/{answered}.jsonl"),
        as_session(answered, assistant("a1", &ts(1), json!([{"type": "text", "text": answer}]), json!({}))),
    );
    env.write(
        &format!("p/{silent}.jsonl"),
        as_session(
            silent,
            assistant(
                "b1",
                &ts(2),
                json!([{"type": "tool_use", "id": "t", "name": "Edit",
                        "input": {"file_path": "/work/lighthouse/lamp.rs", "old_string": "a", "new_string": "b"}}]),
                json!({}),
            ),
        ),
    );
    env.index();
    let conn = env.conn();
    let page = history::sessions(&conn, &SessionQuery { limit: 10, ..Default::default() }).unwrap();
    let title_of = |id: &str| page.sessions.iter().find(|s| s.id == id).and_then(|s| s.title.clone());
    let first_words = "The build fails because the linker cannot find libssl.";
    assert_eq!(title_of(answered).as_deref(), Some(first_words), "the first words of the answer");
    assert_eq!(title_of(silent).as_deref(), Some("lighthouse · 2026-03-01"), "nothing said: its project and day");
    assert_eq!(history::session(&conn, answered).unwrap().unwrap().title.as_deref(), Some(first_words));
    let hits = history::search(&conn, "linker", None, 10).unwrap();
    assert_eq!(hits[0].title.as_deref(), Some(first_words), "a search hit's session named the same way");
    // The overview's tables of sessions too (they showed the id).
    let overview = stats::stats(&conn, stats::Filter::default(), &Prices::shipped()).unwrap();
    let longest: Vec<_> =
        overview.longest_sessions.iter().map(|s| (s.session_id.as_str(), s.title.as_deref())).collect();
    assert!(longest.contains(&(answered, Some(first_words))), "{longest:?}");
    assert!(longest.contains(&(silent, Some("lighthouse · 2026-03-01"))), "{longest:?}");
    let edit = &overview.recent_edits[0];
    assert_eq!((edit.session_id.as_str(), edit.title.as_deref()), (silent, Some("lighthouse · 2026-03-01")));
}
