//! The overview: `GET /api/stats` and `scrollback stats --json` on a generated tree equal the
//! figures this test computes from the tree it wrote, whole and filtered (dates in a time zone,
//! project, agent); they follow live appends, and a forgotten session leaves them.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::util::Env;
use crate::util::server::Server;

const SONNET: &str = "claude-sonnet-4-5-20250929";
const OPUS: &str = "claude-opus-4-6";

/// One message as the test counts it: session, project, agent, when (seconds since the epoch), and
/// whether it is a person's prompt.
#[derive(Debug, Clone)]
struct Message {
    session: String,
    project: String,
    agent: &'static str,
    at: i64,
    prompt: bool,
}

/// A tool call: session, when, tool, failed, and the file it edits.
#[derive(Debug, Clone)]
struct Call {
    session: String,
    project: String,
    agent: &'static str,
    at: i64,
    tool: &'static str,
    failed: bool,
    edit: Option<String>,
}

/// A response: session, when asked, seconds to answer, model, tokens (input, output, cache read,
/// cache write).
#[derive(Debug, Clone)]
struct Response {
    session: String,
    project: String,
    agent: &'static str,
    asked: i64,
    seconds: i64,
    model: &'static str,
    tokens: [u64; 4],
}

/// What the tree holds, as the test wrote it.
#[derive(Debug, Default)]
struct Tree {
    messages: Vec<Message>,
    calls: Vec<Call>,
    responses: Vec<Response>,
}

/// `2026-03-01T00:00:00Z` in seconds.
const MARCH_1: i64 = 1_772_323_200;

fn stamp(at: i64) -> String {
    jiff::Timestamp::from_second(at).unwrap().strftime("%Y-%m-%dT%H:%M:%S.000Z").to_string()
}

/// Writes session `i` of the Claude Code tree (with `turns` turns from `start`), and records it.
fn claude_session(env: &Env, tree: &mut Tree, i: usize, start: i64, turns: usize) -> String {
    let session = format!("s{i:02}");
    let project = format!("/work/p{}", i % 3);
    let model = if i.is_multiple_of(2) { SONNET } else { OPUS };
    let mut lines = String::new();
    let mut parent: Option<String> = None;
    for j in 0..turns {
        let asked = start + 600 * j as i64;
        let seconds = 2 + ((i * 3 + j * 5) % 40) as i64;
        let answered = asked + seconds;
        let (uuid_p, uuid_a, uuid_r) =
            (format!("{session}-{j}-p"), format!("{session}-{j}-a"), format!("{session}-{j}-r"));
        lines += &(json!({"type": "user", "sessionId": session, "uuid": uuid_p, "parentUuid": parent, "timestamp": stamp(asked),
            "cwd": project, "message": {"role": "user", "content": format!("Do step {j} of {session}")}})
        .to_string()
            + "\n");
        tree.messages.push(Message {
            session: session.clone(),
            project: project.clone(),
            agent: "claude",
            at: asked,
            prompt: true,
        });
        let tools: Vec<(&'static str, bool)> = match j % 3 {
            0 => vec![("Edit", (i + j).is_multiple_of(4))],
            1 => vec![("Bash", i.is_multiple_of(2)), ("Read", false)],
            _ => vec![],
        };
        let mut content = vec![json!({"type": "text", "text": format!("Working on step {j}.")})];
        for (k, (tool, _)) in tools.iter().enumerate() {
            let path = format!("{project}/src/f{i}_{j}.rs");
            let input = match *tool {
                "Edit" => json!({"file_path": path, "old_string": "a\n", "new_string": "b\nc\n"}),
                "Bash" => json!({"command": "cargo test"}),
                _ => json!({"file_path": path}),
            };
            content
                .push(json!({"type": "tool_use", "id": format!("tu-{session}-{j}-{k}"), "name": tool, "input": input}));
        }
        let tokens = [10 + i as u64, 100 + j as u64, 1000, 50];
        lines += &(json!({"type": "assistant", "sessionId": session, "uuid": uuid_a, "parentUuid": uuid_p,
            "timestamp": stamp(answered), "cwd": project, "requestId": format!("req-{session}-{j}"),
            "message": {"id": format!("msg-{session}-{j}"), "type": "message", "role": "assistant", "model": model,
                        "content": content,
                        "usage": {"input_tokens": tokens[0], "output_tokens": tokens[1], "cache_read_input_tokens": tokens[2],
                                  "cache_creation_input_tokens": tokens[3], "service_tier": "standard"}}})
        .to_string()
            + "\n");
        tree.messages.push(Message {
            session: session.clone(),
            project: project.clone(),
            agent: "claude",
            at: answered,
            prompt: false,
        });
        tree.responses.push(Response {
            session: session.clone(),
            project: project.clone(),
            agent: "claude",
            asked,
            seconds,
            model,
            tokens,
        });
        parent = Some(uuid_a.clone());
        if !tools.is_empty() {
            let results: Vec<Value> = tools
                .iter()
                .enumerate()
                .map(|(k, (_, failed))| {
                    json!({"type": "tool_result", "tool_use_id": format!("tu-{session}-{j}-{k}"),
                           "content": if *failed { "error: it broke" } else { "done" }, "is_error": failed})
                })
                .collect();
            lines += &(json!({"type": "user", "sessionId": session, "uuid": uuid_r, "parentUuid": uuid_a,
                "timestamp": stamp(answered + 1), "cwd": project, "message": {"role": "user", "content": results}})
            .to_string()
                + "\n");
            tree.messages.push(Message {
                session: session.clone(),
                project: project.clone(),
                agent: "claude",
                at: answered + 1,
                prompt: false,
            });
            for (tool, failed) in &tools {
                let edit = (*tool == "Edit").then(|| format!("{project}/src/f{i}_{j}.rs"));
                tree.calls.push(Call {
                    session: session.clone(),
                    project: project.clone(),
                    agent: "claude",
                    at: answered,
                    tool,
                    failed: *failed,
                    edit,
                });
            }
            parent = Some(uuid_r);
        }
    }
    env.write(&format!("p{}/{session}.jsonl", i % 3), &lines);
    session
}

/// Writes the tree: twelve Claude Code sessions over five days (one resumed: its first lines
/// copied into a second file, counted once), and a Codex session with a failed shell call.
fn write_tree(env: &Env) -> Tree {
    let mut tree = Tree::default();
    for i in 0..12 {
        let start = MARCH_1 + 86_400 * (i as i64 % 5) + 3600 * ((i as i64 * 7) % 24) + 60 * i as i64;
        claude_session(env, &mut tree, i, start, 1 + i % 4);
    }
    // A resume copies the session's lines into a file of its own: copies, not counted again.
    let first: String = std::fs::read_to_string(env.path("p0/s00.jsonl"))
        .unwrap()
        .lines()
        .take(3)
        .map(|l| l.to_owned() + "\n")
        .collect();
    env.write("p0/s00-resumed.jsonl", first);
    // Codex: a prompt, a shell call that failed, an answer.
    let id = "01a0c0de-0000-7000-8000-00000000c0de";
    let at = MARCH_1 + 86_400 + 5 * 3600;
    let line = |t: i64, v: Value| -> String {
        json!({"timestamp": stamp(t), "type": v["type"], "payload": v["payload"]}).to_string() + "\n"
    };
    let mut rollout = line(
        at,
        json!({"type": "session_meta", "payload": {"id": id, "timestamp": stamp(at), "cwd": "/work/codex", "originator": "codex_cli_rs"}}),
    );
    rollout += &line(at, json!({"type": "turn_context", "payload": {"cwd": "/work/codex", "model": "gpt-5-codex"}}));
    rollout += &line(
        at,
        json!({"type": "response_item", "payload": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Run the tests."}]}}),
    );
    rollout += &line(
        at + 3,
        json!({"type": "response_item", "payload": {"type": "function_call", "name": "shell", "arguments": "{\"command\":[\"bash\",\"-lc\",\"make test\"]}", "call_id": "c1"}}),
    );
    rollout += &line(
        at + 4,
        json!({"type": "response_item", "payload": {"type": "function_call_output", "call_id": "c1", "output": {"content": "make: *** no rule", "success": false}}}),
    );
    rollout += &line(
        at + 5,
        json!({"type": "response_item", "payload": {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "The tests have no rule."}]}}),
    );
    env.write(&format!("codex/2026/03/02/rollout-2026-03-02T05-00-00-{id}.jsonl"), rollout);
    for t in [at, at + 5] {
        tree.messages.push(Message {
            session: id.into(),
            project: "/work/codex".into(),
            agent: "codex",
            at: t,
            prompt: t == at,
        });
    }
    // No usage line names its model.
    tree.responses.push(Response {
        session: id.into(),
        project: "/work/codex".into(),
        agent: "codex",
        asked: at,
        seconds: 5,
        model: "",
        tokens: [0; 4],
    });
    tree.calls.push(Call {
        session: id.into(),
        project: "/work/codex".into(),
        agent: "codex",
        at: at + 3,
        tool: "shell",
        failed: true,
        edit: None,
    });
    tree
}

fn roots(env: &Env) -> Vec<String> {
    vec!["--root".into(), format!("codex:{}", env.path("codex").display())]
}

/// The filter the test applies: days (inclusive, of the time zone), offset, project, agent.
#[derive(Debug, Clone, Default)]
struct Want {
    since: Option<&'static str>,
    until: Option<&'static str>,
    tz: i64,
    project: Option<&'static str>,
    agent: Option<&'static str>,
}

impl Want {
    fn query(&self) -> String {
        let mut q = vec![format!("tz={}", self.tz)];
        for (k, v) in [("since", self.since), ("until", self.until), ("project", self.project), ("agent", self.agent)] {
            if let Some(v) = v {
                q.push(format!("{k}={}", v.replace('/', "%2F")));
            }
        }
        q.join("&")
    }

    fn args(&self) -> Vec<String> {
        let mut a = vec!["stats".to_owned(), "--json".to_owned(), format!("--tz={}", self.tz)];
        for (k, v) in
            [("--since", self.since), ("--until", self.until), ("--project", self.project), ("--agent", self.agent)]
        {
            if let Some(v) = v {
                a.push(k.to_owned());
                a.push(v.to_owned());
            }
        }
        a
    }

    /// The local day of `at`, if `at` (of `project` and `agent`) is within the filter.
    fn day(&self, at: i64, project: &str, agent: &str) -> Option<String> {
        let day = jiff::Timestamp::from_second(at + 3600 * self.tz).unwrap().strftime("%Y-%m-%d").to_string();
        let ok = self.since.is_none_or(|s| day.as_str() >= s)
            && self.until.is_none_or(|u| day.as_str() <= u)
            && self.project.is_none_or(|p| p == project)
            && self.agent.is_none_or(|a| a == agent);
        ok.then_some(day)
    }
}

/// The figures the overview must show, computed from the tree.
fn expected(tree: &Tree, w: &Want) -> Value {
    let mut days: BTreeMap<String, (BTreeSet<&str>, u64, u64)> = BTreeMap::new();
    let mut sessions: BTreeMap<&str, u64> = BTreeMap::new();
    let mut hours = vec![0u64; 24];
    let mut projects: BTreeMap<&str, (BTreeSet<&str>, u64)> = BTreeMap::new();
    for m in &tree.messages {
        let Some(day) = w.day(m.at, &m.project, m.agent) else { continue };
        let d = days.entry(day).or_default();
        d.0.insert(&m.session);
        d.1 += 1;
        *sessions.entry(&m.session).or_default() += 1;
        hours[((m.at + 3600 * w.tz).rem_euclid(86_400) / 3600) as usize] += 1;
        let p = projects.entry(&m.project).or_default();
        p.0.insert(&m.session);
        p.1 += 1;
    }
    for r in &tree.responses {
        // Tokens are counted at the response's time.
        if let Some(day) = w.day(r.asked + r.seconds, &r.project, r.agent) {
            days.entry(day).or_default().2 += r.tokens.iter().sum::<u64>();
        }
    }
    let mut tools: BTreeMap<&str, (u64, u64)> = BTreeMap::new();
    let mut edits: Vec<(String, String)> = Vec::new();
    for c in &tree.calls {
        if w.day(c.at, &c.project, c.agent).is_none() {
            continue;
        }
        let t = tools.entry(c.tool).or_default();
        t.0 += 1;
        t.1 += c.failed as u64;
        if let Some(path) = &c.edit {
            edits.push((stamp(c.at), path.clone()));
        }
    }
    edits.sort_by(|a, b| b.cmp(a));
    edits.truncate(10);
    let mut tools: Vec<(&str, u64, u64)> = tools.into_iter().map(|(t, (c, f))| (t, c, f)).collect();
    tools.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    let mut responses: BTreeMap<&str, u64> = BTreeMap::new();
    for r in &tree.responses {
        if w.day(r.asked, &r.project, r.agent).is_some() {
            *responses.entry(r.model).or_default() += 1;
        }
    }
    let mut longest: Vec<(&str, u64)> = sessions.iter().map(|(s, n)| (*s, *n)).collect();
    longest.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    longest.truncate(10);
    // (By name: the order among equals depends on tokens.)
    let top: Vec<(&str, u64, u64)> = projects.iter().map(|(p, (s, n))| (*p, s.len() as u64, *n)).collect();
    json!({
        "sessions": sessions.len(),
        "messages": tree.messages.iter().filter(|m| w.day(m.at, &m.project, m.agent).is_some()).count(),
        "prompts": tree.messages.iter().filter(|m| m.prompt && w.day(m.at, &m.project, m.agent).is_some()).count(),
        "days": days.iter().map(|(d, (s, m, t))| json!([d, s.len(), m, t])).collect::<Vec<_>>(),
        "hours": hours,
        "tools": tools.iter().map(|(t, c, f)| json!([t, c, f])).collect::<Vec<_>>(),
        "edits": edits.iter().map(|(t, p)| json!([t, p])).collect::<Vec<_>>(),
        "responses": responses,
        "longest": longest.iter().map(|(s, n)| json!([s, n])).collect::<Vec<_>>(),
        "projects": top.iter().map(|(p, s, n)| json!([p, s, n])).collect::<Vec<_>>(),
    })
}

/// The same figures, read from an overview's JSON (days without activity left out, as the test
/// knows only the days it wrote to).
fn shown(stats: &Value) -> Value {
    let list = |key: &str| stats[key].as_array().unwrap().clone();
    let days: Vec<Value> = list("days")
        .iter()
        .filter(|d| d["messages"].as_u64().unwrap() > 0 || d["tokens"].as_u64().unwrap() > 0)
        .map(|d| json!([d["day"], d["sessions"], d["messages"], d["tokens"]]))
        .collect();
    let heat: u64 = stats["heatmap"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|r| r.as_array().unwrap().clone())
        .map(|n| n.as_u64().unwrap())
        .sum();
    assert_eq!(heat, stats["totals"]["messages"].as_u64().unwrap(), "the heatmap holds every message");
    let responses: BTreeMap<String, u64> = list("responseTimes")
        .iter()
        .map(|r| (r["model"].as_str().unwrap_or("").to_owned(), r["responses"].as_u64().unwrap()))
        .collect();
    let mut projects: Vec<Value> =
        list("projects").iter().map(|p| json!([p["name"], p["sessions"], p["messages"]])).collect();
    projects.sort_by_key(|p| p[0].as_str().unwrap_or("").to_owned());
    json!({
        "sessions": stats["totals"]["sessions"],
        "messages": stats["totals"]["messages"],
        "prompts": stats["totals"]["prompts"],
        "days": days,
        "hours": stats["hours"],
        "tools": list("tools").iter().map(|t| json!([t["tool"], t["calls"], t["failures"]])).collect::<Vec<_>>(),
        "edits": list("recentEdits").iter().map(|e| json!([e["timestamp"], e["path"]])).collect::<Vec<_>>(),
        "responses": responses,
        "longest": list("longestSessions").iter().map(|s| json!([s["sessionId"], s["messages"]])).collect::<Vec<_>>(),
        "projects": projects,
    })
}

fn cli(env: &Env, w: &Want) -> Value {
    let args = w.args();
    let out = env.run(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

fn filters() -> Vec<Want> {
    vec![
        Want::default(),
        Want { tz: 2, since: Some("2026-03-02"), until: Some("2026-03-03"), ..Want::default() },
        Want { tz: -5, until: Some("2026-03-02"), ..Want::default() },
        Want { project: Some("/work/p1"), ..Want::default() },
        Want { agent: Some("codex"), ..Want::default() },
        Want { agent: Some("claude"), since: Some("2026-03-04"), ..Want::default() },
    ]
}

#[test]
fn the_overview_equals_the_figures_of_the_tree_in_the_api_and_the_cli() {
    let env = Env::new();
    let tree = write_tree(&env);
    let mut args = vec!["index".to_owned()];
    args.extend(roots(&env));
    let out = env.run(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let server = Server::start(&env, &roots(&env).iter().map(String::as_str).collect::<Vec<_>>());
    server.wait_for_sessions(13);
    let whole = expected(&tree, &Want::default());
    assert!(whole["messages"].as_u64().unwrap() > 50 && whole["edits"].as_array().unwrap().len() == 10, "{whole}");
    for w in filters() {
        let api = server.json(&format!("/api/stats?{}", w.query()));
        assert_eq!(shown(&api), expected(&tree, &w), "{w:?}");
        assert_eq!(cli(&env, &w), api, "the CLI's JSON is the API's: {w:?}");
    }
    // Tokens and cost equal the usage report's.
    let all = server.json("/api/stats");
    let usage = server.json("/api/usage");
    assert_eq!(all["totals"]["tokens"], usage["total"]["totalTokens"]);
    assert!((all["totals"]["cost"].as_f64().unwrap() - usage["total"]["cost"].as_f64().unwrap()).abs() < 1e-9);
    // Every day between the first and the last is on the axis.
    let days: Vec<&str> = all["days"].as_array().unwrap().iter().map(|d| d["day"].as_str().unwrap()).collect();
    assert_eq!(
        days,
        ["2026-03-01", "2026-03-02", "2026-03-03", "2026-03-04", "2026-03-05", "2026-03-06"][..days.len()]
    );
    // The Codex shell call failed; the failure rate says so.
    let shell = all["tools"].as_array().unwrap().iter().find(|t| t["tool"] == "shell").unwrap().clone();
    assert_eq!((shell["calls"].as_u64(), shell["failureRate"].as_f64()), (Some(1), Some(1.0)));
    // Bad requests are refused with the API's error.
    // `limit`: how many of each list (the viewer's tables show ten and the rest on demand).
    let three = server.json("/api/stats?limit=3");
    assert_eq!(three["longestSessions"].as_array().unwrap().len(), 3);
    assert_eq!(three["recentEdits"].as_array().unwrap().len(), 3);
    let every = server.json("/api/stats?limit=1000");
    let sessions = every["totals"]["sessions"].as_u64().unwrap() as usize;
    assert!(sessions > 10, "{sessions}");
    assert_eq!(every["longestSessions"].as_array().unwrap().len(), sessions);
    assert_eq!(all["longestSessions"].as_array().unwrap().len(), 10, "ten by default");
    for bad in ["tz=15", "tz=x", "since=yesterday", "agent=nobody", "colour=blue", "limit=0", "limit=1001", "limit=x"] {
        let res = server.get(&format!("/api/stats?{bad}"));
        assert_eq!(res.status(), 400, "{bad}");
    }
    let text = env.run(&["stats"]);
    assert!(text.status.success());
    let text = String::from_utf8(text.stdout).unwrap();
    for heading in [
        "Per day",
        "Top projects",
        "Tool use",
        "Response time",
        "Recent edits",
        "Longest sessions",
        "Costliest sessions",
    ] {
        assert!(text.contains(heading), "{heading} in:\n{text}");
    }
}

#[test]
fn the_overview_follows_appends_and_forgets_and_a_migrated_index_equals_a_fresh_one() {
    let env = Env::new();
    let mut tree = write_tree(&env);
    let server = Server::start(&env, &roots(&env).iter().map(String::as_str).collect::<Vec<_>>());
    server.wait_for_sessions(13);
    let settle = |server: &Server, tree: &Tree| {
        let deadline = Instant::now() + Duration::from_secs(15);
        loop {
            let got = shown(&server.json("/api/stats"));
            let want = expected(tree, &Want::default());
            if got == want {
                return;
            }
            assert!(Instant::now() < deadline, "the overview did not follow:\n{got}\nwant\n{want}");
            std::thread::sleep(Duration::from_millis(50));
        }
    };
    settle(&server, &tree);
    // A new session appears, and grows.
    let start = MARCH_1 + 86_400 * 6 + 3600 * 9;
    let mut more = Tree::default();
    claude_session(&env, &mut more, 20, start, 1);
    tree.messages.extend(more.messages);
    tree.calls.extend(more.calls);
    tree.responses.extend(more.responses);
    settle(&server, &tree);
    let before = std::fs::read_to_string(env.path("p2/s20.jsonl")).unwrap();
    let mut grown = Tree::default();
    claude_session(&env, &mut grown, 20, start, 3);
    let after = std::fs::read_to_string(env.path("p2/s20.jsonl")).unwrap();
    assert!(after.starts_with(&before), "an append");
    tree.messages.retain(|m| m.session != "s20");
    tree.calls.retain(|c| c.session != "s20");
    tree.responses.retain(|r| r.session != "s20");
    tree.messages.extend(grown.messages);
    tree.calls.extend(grown.calls);
    tree.responses.extend(grown.responses);
    settle(&server, &tree);
    // Forgotten: its figures leave.
    let resp = server.client.delete(format!("{}/api/sessions/s03", server.base)).send().unwrap();
    assert!(resp.status().is_success(), "{}", resp.status());
    tree.messages.retain(|m| m.session != "s03");
    tree.calls.retain(|c| c.session != "s03");
    tree.responses.retain(|r| r.session != "s03");
    settle(&server, &tree);
    let live = server.json("/api/stats");
    drop(server);
    // The same index with its sums made again from the stored lines (as a migration from version
    // 12 makes them) gives the same figures.
    let conn = rusqlite::Connection::open(env.data.join(scrollback::db::INDEX_FILE)).unwrap();
    conn.execute_batch(
        "DELETE FROM tool_events; DELETE FROM stats_hours; DELETE FROM tool_hours; DELETE FROM response_hours;
         DELETE FROM usage_hours; INSERT INTO scrollback_meta (key, value) VALUES ('pending:v13-stats', 'test');",
    )
    .unwrap();
    drop(conn);
    let mut args = vec!["index".to_owned()];
    args.extend(roots(&env));
    assert!(env.run(&args.iter().map(String::as_str).collect::<Vec<_>>()).status.success());
    assert_eq!(cli(&env, &Want::default()), live, "made again from the stored lines");
}

/// One usage line's timestamp that does not parse (an hour 25, a word, a seven-digit year) breaks no
/// report: the overview answers for every filter, in the API and the CLI, and counts the tokens of
/// the lines whose time parses.
#[test]
fn a_usage_line_whose_time_does_not_parse_breaks_no_report() {
    let env = Env::new();
    let session = "bad7e000-0000-4000-8000-000000000001";
    let mut lines = String::new();
    for (n, at) in ["2026-03-01T10:00:00.000Z", "2026-01-01T25:00:00Z", "garbage", "1000000-01-01T00:00:00Z"]
        .into_iter()
        .enumerate()
    {
        lines += &(json!({"type": "assistant", "sessionId": session, "uuid": format!("a{n}"), "timestamp": at,
            "cwd": "/work/p1", "requestId": format!("req-{n}"),
            "message": {"id": format!("msg-{n}"), "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
                        "content": [{"type": "text", "text": format!("answer {n}")}],
                        "usage": {"input_tokens": 10, "output_tokens": 100, "service_tier": "standard"}}})
        .to_string()
            + "\n");
    }
    env.write(&format!("p/{session}.jsonl"), lines);
    env.index();
    let server = Server::start(&env, &[]);
    for w in filters() {
        let query = w.query();
        let stats = server.json(&format!("/api/stats?{query}"));
        assert!(stats["totals"].is_object(), "{query}: {stats}");
        cli(&env, &w);
    }
}
