//! A model-based test of the live indexer (Vector's file_watcher tests are the model): random
//! sequences of append, partial append, truncate, rewrite, rename-replace, delete, recreate, new
//! directory and restart, applied to real files watched by a real [`Tail`] and to an in-memory model
//! (the bytes each file should hold). Some files are sub-agent transcripts of the same session
//! (`<dir>/s/subagents/agent-*.jsonl`), and lines carry timestamps that mostly go forward. After
//! each action settles, the index equals the model: for each live file, one entry per complete line
//! at the right offset with the right uuid; for deleted files, their entries kept; and the session's
//! history, page by page, is every shown entry once, in conversation order, as many as its count.
//! Every agent is in the tree, each under a root of its own inside it (`codex/`, `gemini/`,
//! `qwen/`, `droid/`, `cursor/`, `pi/`, `copilot/`), its files named and laid out as its agent
//! writes them (each format's `is_transcript`: chats, sub-agents' files, nested and flat layouts)
//! and its lines in its agent's shape, with photos where its agent keeps them (Codex's
//! `input_image` data URLs, Gemini's and Qwen's `inlineData` parts and Qwen's inside a tool's
//! `functionResponse`, Droid's Anthropic image blocks, Pi's `{type:"image", data, mimeType}`,
//! Copilot's binary assets and inline `blob` attachments; Cursor keeps a photo's path only): the
//! same check holds for each, with each format's line id (its own `uuid` or `id`, else `L<line>`).
//! Codex's rollouts are also compressed to `.jsonl.zst` and decompressed again as Codex does (the
//! compressed file written, then the plain one deleted, and back): the same transcript, whose rows
//! stay. (Gemini CLI's and Qwen Code's legacy single-document chats, `*.json` written whole at each change, are
//! not among them: an append, a cut or a line in pieces is no change its CLI makes to one, and a
//! torn document has no entries to model; `agents.rs` rewrites one.)
//!
//! A quarter of Claude Code's lines are assistant lines that state an API response's usage, a dozen
//! responses in all, each stated by lines in several files (as streamed blocks and resumed copies
//! are): the usage ledger equals the model's too (per response, the line with the most output and
//! then input tokens, over every line of the live and deleted files), and the reports read from its
//! sums equal those summed from its rows.
//!
//! OpenCode keeps its sessions as rows of a SQLite database (`opencode/opencode.db`, in WAL mode),
//! which an eighth of the actions write as OpenCode does: a message with its parts (a photo's
//! `data:` URL among them, and a step's counts), a part written again in place (a text grown, a tool
//! completed), a session deleted, the log checkpointed; and once OpenCode 2 has added its tables (an
//! action of its own), its message rows (a person's photo in one now and then, a tool's in an
//! answer), an answer's row updated in place, a session of them deleted. Each session is a transcript
//! (`opencode.db/<session>`) whose lines are the document its format renders from the rows, which
//! the model writes down on its own: the same check holds for it.
//!
//! `SCROLLBACK_MODEL_CASES` (default 20) x `SCROLLBACK_MODEL_ACTIONS` (default 500) actions;
//! `SCROLLBACK_MODEL_SEED` replays one case.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::{Value, json};

use scrollback::{Indexer, Root, Tail, TailConfig};

use crate::util::lines::{
    codex_line, copilot_event, cursor_asked, droid_message, gemini_message, pi_message, qwen_record,
};
use crate::util::{Env, b64, check_invariants, fake_png, image_block, user_line};

/// The agent whose transcripts a file is, by where it is in the tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Agent {
    Claude,
    Codex,
    Gemini,
    Qwen,
    Droid,
    Cursor,
    Pi,
    Copilot,
}

use Agent::*;

/// The agents with a root of their own inside the tree (Claude Code's is the tree itself).
const OTHERS: [Agent; 7] = [Codex, Gemini, Qwen, Droid, Cursor, Pi, Copilot];

impl Agent {
    fn name(self) -> &'static str {
        match self {
            Claude => "claude",
            Codex => "codex",
            Gemini => "gemini",
            Qwen => "qwen",
            Droid => "droid",
            Cursor => "cursor",
            Pi => "pi",
            Copilot => "copilot",
        }
    }

    /// Its root, relative to the tree: `<name>/` (Claude Code's: the tree).
    fn root(self) -> String {
        if self == Claude { String::new() } else { format!("{}/", self.name()) }
    }

    fn of(path: &str) -> Agent {
        OTHERS.into_iter().find(|a| path.starts_with(&a.root())).unwrap_or(Claude)
    }

    /// Its transcript `k` (0 to 2) in the folder `dir`, in its agent's layout (each format's
    /// `is_transcript`): `other`, the other layout (a sub-agent's, the nested or the flat one).
    /// Codex rollouts are all in the root, beside their compressed twins.
    fn file(self, dir: &str, k: u32, other: bool) -> String {
        match (self, other) {
            (Claude, false) => format!("{dir}/f{k}.jsonl"),
            (Claude, true) => format!("{dir}/s/subagents/agent-a{}.jsonl", k % 2),
            (Codex, _) => format!("codex/rollout-2026-01-01T00-00-00-01a0c0de-0000-7000-8000-00000000000{k}.jsonl"),
            (Gemini, false) => format!("gemini/{dir}/chats/session-2026-01-01T00-00-0{k}.jsonl"),
            (Gemini, true) => format!("gemini/{dir}/chats/g-0/g-sub-{k}.jsonl"),
            (Qwen, false) => format!("qwen/{dir}/chats/5f0c7a2e-1b2c-4d3e-8f90-00000000000{k}.jsonl"),
            (Qwen, true) => format!("qwen/{dir}/subagents/5f0c7a2e-1b2c-4d3e-8f90-000000000000/agent-a{k}.jsonl"),
            (Droid, _) => format!("droid/{dir}/7d3c2a10-0000-4000-8000-00000000000{k}.jsonl"),
            (Cursor, false) => format!("cursor/{dir}/agent-transcripts/9a1b2c3d-0000-4000-8000-00000000000{k}.jsonl"),
            (Cursor, true) => {
                format!("cursor/{dir}/agent-transcripts/3f0c9a52-0000-4000-8000-000000000000/subagents/c{k}.jsonl")
            }
            (Pi, false) => format!("pi/{dir}/2026-01-01T00-00-00-000Z_019ca8d7-2d00-7c31-9d5e-00000000000{k}.jsonl"),
            (Pi, true) => {
                format!("pi/{dir}/2026-01-01T00-00-00-000Z_019ca8d7-2d00-7c31-9d5e-000000000000/run{k}/session.jsonl")
            }
            (Copilot, false) => {
                format!("copilot/{dir}/session-state/0b6a7c9e-0000-4e3a-9b8c-00000000000{k}/events.jsonl")
            }
            (Copilot, true) => format!("copilot/{dir}/session-state/0b6a7c9e-0000-4e3a-9b8c-00000000001{k}.jsonl"),
        }
    }

    /// The id the index gives the `n`th line (`value`) of one of its transcripts: the line's own,
    /// or `L<n>` where its lines have none (Codex's, Cursor's).
    fn uuid(self, value: &Value, n: usize) -> String {
        let own = match self {
            Codex | Cursor => return format!("L{n}"),
            Claude | Qwen => &value["uuid"],
            Gemini | Droid | Pi | Copilot => &value["id"],
        };
        own.as_str().unwrap_or_default().to_owned()
    }
}

/// A tail of the tree (Claude Code's) with each other agent's root inside it.
fn start(env: &Env) -> Tail {
    let indexer = Indexer::open(&env.data).unwrap_or_else(|e| panic!("opening the index: {e}"));
    let mut roots = vec![Root::default_format(&env.root)];
    for agent in OTHERS {
        roots.push(Root::parse(&format!("{}:{}", agent.name(), env.path(&agent.root()).display())).unwrap());
    }
    roots.push(Root::parse(&format!("opencode:{}", env.path("opencode").display())).unwrap());
    let config = TailConfig { rescan_every: Duration::from_secs(3600), ..TailConfig::of(roots) };
    Tail::start(indexer, config).unwrap()
}

struct Model {
    /// Every transcript that exists, relative to the root, with the bytes it holds.
    files: BTreeMap<String, Vec<u8>>,
    /// Entries of deleted transcripts, which the index keeps.
    gone_entries: usize,
    /// The usage lines of deleted Claude Code transcripts, which the index keeps.
    gone: Vec<Usage>,
    dirs: Vec<String>,
    next_uuid: u64,
    /// Lines written, by agent.
    written: BTreeMap<&'static str, usize>,
    /// What each file's bytes should make, as last worked out (each version is parsed once).
    read: std::cell::RefCell<BTreeMap<String, Read>>,
    /// OpenCode's database.
    opencode: OpenCodeModel,
}

/// OpenCode's database as the model holds it (`opencode/opencode.db`), with OpenCode's connection.
struct OpenCodeModel {
    conn: rusqlite::Connection,
    /// Each session's messages in OpenCode's order: its id, time, data and parts (id, data).
    sessions: BTreeMap<String, Vec<OpenCodeMessage>>,
    /// Once OpenCode 2 has upgraded the database: its sessions' rows, in `seq` order.
    v2: Option<BTreeMap<String, Vec<OpenCodeRow>>>,
    next: u64,
}

impl OpenCodeModel {
    /// One action of OpenCode 2, if `choice` picks one: the upgrade that adds its tables (once),
    /// then a message row (a question, with a photo now and then; an answer with a tool whose result
    /// holds a photo, and its counts), an answer's row updated in place as it streams, or a session
    /// deleted with its rows.
    fn act_v2(
        &mut self,
        rng: &mut StdRng,
        gone: &mut (usize, Vec<Usage>),
        choice: u32,
        n: u64,
        at: i64,
    ) -> Option<&'static str> {
        use crate::util::fixtures::opencode as oc;
        let Some(v2) = self.v2.as_mut() else {
            if choice == 7 && n > 8 {
                oc::upgrade(&self.conn);
                self.v2 = Some(BTreeMap::new());
                return Some("opencode-upgrade");
            }
            return None;
        };
        let stored = |conn: &rusqlite::Connection, id: &str| -> String {
            conn.query_row("SELECT data FROM session_message WHERE id = ?1", [id], |r| r.get(0)).unwrap()
        };
        match choice {
            7 if !v2.is_empty() => {
                let keys: Vec<String> = v2.keys().cloned().collect();
                let session = keys[rng.random_range(0..keys.len())].clone();
                let (lines, usage) = read_v2(&session, &v2[&session]);
                self.conn.execute("DELETE FROM session_v2 WHERE id = ?1", [&session]).unwrap();
                v2.remove(&session);
                gone.0 += lines.len();
                gone.1.push(usage);
                Some("opencode2-delete")
            }
            8 if v2.values().flatten().any(|r| r.ty == "assistant") => {
                let all: Vec<(String, usize)> = v2
                    .iter()
                    .flat_map(|(s, rows)| {
                        rows.iter().enumerate().filter(|(_, r)| r.ty == "assistant").map(move |(i, _)| (s.clone(), i))
                    })
                    .collect();
                let (session, i) = all[rng.random_range(0..all.len())].clone();
                let row = &mut v2.get_mut(&session).unwrap()[i];
                let content = json!([{"type": "text", "text": format!("streamed {n}")}]);
                oc::row(
                    &self.conn,
                    &session,
                    &row.id,
                    row.seq,
                    row.time,
                    &oc::assistant_v2(row.time, content, oc::tokens(n % 89 + 1, 2, 1, 0, 0)),
                );
                row.data = stored(&self.conn, &row.id);
                Some("opencode2-update")
            }
            9..12 => {
                let session = match v2.keys().nth(rng.random_range(0..3)) {
                    Some(s) if !rng.random_ratio(1, 5) => s.clone(),
                    _ => {
                        let s = format!("ses_2_{n:06}");
                        oc::session_v2(&self.conn, &s, None, 1_767_225_600_000);
                        v2.insert(s.clone(), Vec::new());
                        s
                    }
                };
                let id = format!("msg_2_{n:06}");
                let seq = n as i64 * 3;
                let photo = fake_png(n * 4 + 3, 200);
                let (ty, data) = if rng.random_bool(0.5) {
                    let files: Vec<(&[u8], &str)> =
                        if rng.random_bool(0.3) { vec![(&photo, "shot.png")] } else { Vec::new() };
                    ("user", oc::user_v2(at, &format!("question {n}"), &files))
                } else {
                    let png = rng.random_bool(0.3).then_some(photo.as_slice());
                    let tool =
                        oc::tool_v2(&format!("call_{n}"), "read", json!({"filePath": "/w/app/a.png"}), "read", png);
                    let content = json!([tool, {"type": "text", "text": format!("answer {n}")}]);
                    ("assistant", oc::assistant_v2(at, content, oc::tokens(n % 89 + 1, 1, 0, 0, 0)))
                };
                oc::row(&self.conn, &session, &id, seq, at, &data);
                let data = stored(&self.conn, &id);
                v2.get_mut(&session).unwrap().push(OpenCodeRow { id, ty, seq, time: at, data });
                Some("opencode2-message")
            }
            _ => None,
        }
    }
}

/// A message row of OpenCode 2: its id, type, seq, time and `data` as stored.
struct OpenCodeRow {
    id: String,
    ty: &'static str,
    seq: i64,
    time: i64,
    data: String,
}

struct OpenCodeMessage {
    id: String,
    time: i64,
    data: Value,
    parts: Vec<(String, String)>,
}

/// `opencode/opencode.db/<session>`, relative to the tree.
fn opencode_path(session: &str) -> String {
    format!("opencode/opencode.db/{session}")
}

impl OpenCodeModel {
    /// The document the format renders from a session's rows (its module documentation says how),
    /// written down here on its own: each line's offset, length and id; and the usage its steps
    /// state.
    fn read(&self, session: &str) -> (Vec<(i64, i64, String)>, Usage) {
        if let Some(rows) = self.v2.as_ref().and_then(|v2| v2.get(session)) {
            return read_v2(session, rows);
        }
        let header = json!({ "session": {
            "id": session, "title": "New session - 2026-01-01T00:00:00.000Z", "directory": "/w/app",
            "parentID": null, "version": "1.2.3", "timeCreated": 1_767_225_600_000i64,
            "timeUpdated": 1_767_225_600_000i64, "worktree": "/w/app" } })
        .to_string();
        let mut lines = vec![(0i64, header.len() as i64, String::new())];
        let mut usage = Vec::new();
        let mut at = header.len() as i64 + 1;
        let mut push = |len: usize, id: &str, lines: &mut Vec<(i64, i64, String)>| {
            lines.push((at, len as i64, id.to_owned()));
            at += len as i64 + 1;
        };
        for m in &self.sessions[session] {
            let steps = m.parts.iter().filter(|(_, d)| d.contains("step-finish")).count();
            let line = format!(r#"{{"message":{},"id":"{}","time":{},"steps":{steps}}}"#, m.data, m.id, m.time);
            push(line.len(), &m.id, &mut lines);
            let role = m.data["role"].to_string();
            let model = m.data.get("modelID").unwrap_or(&Value::Null).to_string();
            for (id, data) in &m.parts {
                let line = format!(
                    r#"{{"part":{data},"id":"{id}","messageID":"{}","role":{role},"model":{model},"time":{}}}"#,
                    m.id, m.time
                );
                push(line.len(), id, &mut lines);
                if let Ok(v) = serde_json::from_str::<Value>(data)
                    && v["type"] == "step-finish"
                {
                    let t = &v["tokens"];
                    usage.push((
                        format!("opencode:{id}"),
                        (t["output"].as_i64().unwrap(), t["input"].as_i64().unwrap()),
                    ));
                }
            }
        }
        (lines, usage)
    }

    /// One action on the database, as OpenCode writes it: a message and its parts, a part written
    /// again in place, a session deleted, or the log checkpointed. Returns its name; a deleted
    /// session's lines and usage go to `gone`.
    fn act(&mut self, rng: &mut StdRng, gone: &mut (usize, Vec<Usage>)) -> &'static str {
        use crate::util::fixtures::opencode as oc;
        self.next += 1;
        let n = self.next;
        let at = 1_767_225_600_000i64 + n as i64 * 1000;
        let choice = rng.random_range(0..20);
        let has_parts = self.sessions.values().flatten().any(|m| !m.parts.is_empty());
        if let Some(action) = self.act_v2(rng, gone, choice, n, at) {
            return action;
        }
        match choice {
            0..5 if has_parts => {
                // A part written again in place: a text grown, a tool completed.
                let all: Vec<(String, usize, usize)> = self
                    .sessions
                    .iter()
                    .flat_map(|(s, ms)| {
                        ms.iter().enumerate().flat_map(move |(i, m)| (0..m.parts.len()).map(move |j| (s.clone(), i, j)))
                    })
                    .collect();
                let (session, i, j) = all[rng.random_range(0..all.len())].clone();
                let message = &mut self.sessions.get_mut(&session).unwrap()[i];
                let (id, data) = &mut message.parts[j];
                if data.contains("step-finish") || data.contains("\"file\"") {
                    return "opencode-unchanged";
                }
                *data = json!({"type": "tool", "callID": format!("call_{n}"), "tool": "bash", "state": {
                    "status": "completed", "input": {"command": format!("echo {n}")}, "output": format!("{n}\n"),
                    "title": "echo", "metadata": {}, "time": {"start": at, "end": at + 5}}})
                .to_string();
                oc::part(&self.conn, &session, &message.id, id, at, data);
                "opencode-update"
            }
            5 if !self.sessions.is_empty() => {
                let keys: Vec<&String> = self.sessions.keys().collect();
                let session = keys[rng.random_range(0..keys.len())].clone();
                let (lines, usage) = self.read(&session);
                self.conn.execute("DELETE FROM session WHERE id = ?1", [&session]).unwrap();
                self.sessions.remove(&session);
                gone.0 += lines.len();
                gone.1.push(usage);
                "opencode-delete"
            }
            6 => {
                self.conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(())).unwrap();
                "opencode-checkpoint"
            }
            _ => {
                // A message and its parts, in a session of its own now and then.
                let session = match self.sessions.keys().nth(rng.random_range(0..4)) {
                    Some(s) if !rng.random_ratio(1, 6) => s.clone(),
                    _ => {
                        let s = format!("ses_{n:06}");
                        oc::session(&self.conn, &s, "New session - 2026-01-01T00:00:00.000Z", 1_767_225_600_000);
                        self.sessions.insert(s.clone(), Vec::new());
                        s
                    }
                };
                let user = rng.random_bool(0.5);
                let id = format!("msg_{n:06}");
                let data = if user {
                    oc::user(at)
                } else {
                    json!({"role": "assistant", "time": {"created": at},
                    "modelID": "claude-sonnet-4-5", "providerID": "anthropic"})
                };
                oc::message(&self.conn, &session, &id, at, &data);
                let stored: String =
                    self.conn.query_row("SELECT data FROM message WHERE id = ?1", [&id], |r| r.get(0)).unwrap();
                let mut message = OpenCodeMessage {
                    id: id.clone(),
                    time: at,
                    data: serde_json::from_str(&stored).unwrap(),
                    parts: Vec::new(),
                };
                for k in 0..rng.random_range(1..4) {
                    let part = format!("prt_{n:06}_{k}");
                    let data = match rng.random_range(0..6) {
                        0 => oc::photo(&fake_png(n * 4 + k, 200), "shot.png").to_string(),
                        1 if !user => json!({"type": "step-finish", "reason": "stop", "cost": 0,
                            "tokens": oc::tokens(n % 97 + 1, k + 1, 0, 0, 0)})
                        .to_string(),
                        _ => json!({"type": "text", "text": format!("words {n} {k}")}).to_string(),
                    };
                    oc::part(&self.conn, &session, &id, &part, at, &data);
                    message.parts.push((part, data));
                }
                // The message's data as OpenCode stored it (its text is what is rendered).
                message.data = serde_json::from_str(&stored).unwrap();
                self.sessions.get_mut(&session).unwrap().push(message);
                "opencode-message"
            }
        }
    }
}

/// The document OpenCode's format renders from an OpenCode 2 session's rows, written down here on
/// its own: its header, then a line a row in `seq` order; an answer's usage is its row's `tokens`.
fn read_v2(session: &str, rows: &[OpenCodeRow]) -> (Vec<(i64, i64, String)>, Usage) {
    let header = json!({ "session": {
        "id": session, "title": null, "directory": "/w/app", "parentID": null, "version": "2.0.26",
        "timeCreated": 1_767_225_600_000i64, "timeUpdated": 1_767_225_600_000i64, "worktree": "/w/app" } })
    .to_string();
    let mut lines = vec![(0i64, header.len() as i64, String::new())];
    let mut usage = Vec::new();
    let mut at = header.len() as i64 + 1;
    for row in rows {
        let line = format!(
            r#"{{"row":{},"id":"{}","type":"{}","seq":{},"time":{}}}"#,
            row.data, row.id, row.ty, row.seq, row.time
        );
        lines.push((at, line.len() as i64, row.id.clone()));
        at += line.len() as i64 + 1;
        let data: Value = serde_json::from_str(&row.data).unwrap();
        if let Some(t) = data.get("tokens") {
            let output = t["output"].as_i64().unwrap() + t["reasoning"].as_i64().unwrap();
            usage.push((format!("opencode:{}", row.id), (output, t["input"].as_i64().unwrap())));
        }
    }
    (lines, usage)
}

/// Of a usage line: the response it states, and its (output, input) tokens.
type Usage = Vec<(String, (i64, i64))>;

/// What the index should hold of a transcript's bytes: its complete lines, and its usage lines.
struct Read {
    bytes: Vec<u8>,
    lines: Vec<(i64, i64, String)>,
    usage: Usage,
}

/// (offset, length, uuid) of each complete line of `bytes`, the transcript at `path`, and of its
/// Claude Code usage lines, the response each states and its tokens.
fn read_of(path: &str, bytes: &[u8]) -> Read {
    let agent = Agent::of(path);
    let (mut lines, mut usage) = (Vec::new(), Vec::new());
    let mut at = 0;
    while let Some(n) = bytes[at..].iter().position(|&b| b == b'\n') {
        // A torn piece followed by a whole line makes a line that is not JSON: an invalid entry,
        // which has no uuid.
        let uuid = match serde_json::from_slice::<Value>(&bytes[at..at + n]) {
            Ok(v) => {
                if agent == Claude
                    && let (Some(id), Some(u)) = (v["message"]["id"].as_str(), v["message"].get("usage"))
                {
                    let counts = (u["output_tokens"].as_i64().unwrap(), u["input_tokens"].as_i64().unwrap());
                    usage.push((format!("claude:{id}"), counts));
                }
                agent.uuid(&v, lines.len() + 1)
            }
            Err(_) => String::new(),
        };
        lines.push((at as i64, n as i64, uuid));
        at += n + 1;
    }
    Read { bytes: bytes.to_vec(), lines, usage }
}

/// Per response of the usage ledger: (input tokens, output tokens, lines that state it).
type Ledger = BTreeMap<String, (i64, i64, i64)>;
type State = (BTreeMap<String, Vec<(i64, i64, String)>>, usize, Ledger);

/// The ledger the usage lines make: per response, the line with the most output and then input
/// tokens, and how many lines state it.
fn expected_ledger<'a>(lines: impl Iterator<Item = &'a (String, (i64, i64))>) -> Ledger {
    let mut ledger: BTreeMap<String, ((i64, i64), i64)> = BTreeMap::new();
    for (key, counts) in lines {
        let (best, lines) = ledger.entry(key.clone()).or_insert((*counts, 0));
        *best = (*best).max(*counts);
        *lines += 1;
    }
    ledger.into_iter().map(|(key, ((output, input), lines))| (key, (input, output, lines))).collect()
}

/// The index's state, read in one snapshot through `conn` (opened once per run of the tail).
fn index_state(env: &Env, conn: &mut Option<rusqlite::Connection>) -> Option<State> {
    if conn.is_none() {
        *conn = Some(scrollback::read::index::open(&env.data).ok()?);
    }
    let conn = conn.as_ref()?.unchecked_transaction().ok()?;
    let mut files: BTreeMap<String, Vec<(i64, i64, String)>> = BTreeMap::new();
    let mut stmt = conn
        .prepare(
            "SELECT f.path, e.offset, e.length, e.uuid FROM files f LEFT JOIN entries e ON e.file_id = f.id
             WHERE f.state = 'live' ORDER BY f.id, e.line",
        )
        .ok()?;
    type Row = (String, Option<i64>, Option<i64>, Option<String>);
    let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))).ok()?;
    let prefix = format!("{}/", env.root.display());
    for row in rows {
        let (path, offset, length, uuid): Row = row.ok()?;
        let lines = files.entry(path.strip_prefix(&prefix)?.to_owned()).or_default();
        if let (Some(offset), Some(length)) = (offset, length) {
            lines.push((offset, length, uuid.unwrap_or_default()));
        }
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
        let mut read = self.read.borrow_mut();
        read.retain(|path, _| self.files.contains_key(path));
        for (path, bytes) in &self.files {
            if read.get(path).is_none_or(|r| r.bytes != *bytes) {
                read.insert(path.clone(), read_of(path, bytes));
            }
        }
        let mut files: BTreeMap<String, Vec<(i64, i64, String)>> =
            read.iter().map(|(p, r)| (p.clone(), r.lines.clone())).collect();
        let mut usage: Vec<&(String, (i64, i64))> =
            read.values().flat_map(|r| &r.usage).chain(self.gone.iter().flatten()).collect();
        let v2_sessions = self.opencode.v2.iter().flat_map(BTreeMap::keys);
        let opencode: Vec<(&String, Read)> = self
            .opencode
            .sessions
            .keys()
            .chain(v2_sessions)
            .map(|s| {
                let (lines, usage) = self.opencode.read(s);
                (s, Read { bytes: Vec::new(), lines, usage })
            })
            .collect();
        for (session, Read { lines, .. }) in &opencode {
            files.insert(opencode_path(session), lines.clone());
        }
        usage.extend(opencode.iter().flat_map(|(_, r)| &r.usage));
        (files, self.gone_entries, expected_ledger(usage.into_iter()))
    }

    fn line(&mut self, rng: &mut StdRng, path: &str) -> Vec<u8> {
        self.next_uuid += 1;
        let n = self.next_uuid;
        // A clock that mostly goes forward, sometimes steps back a little.
        let ms = n * 1000 - rng.random_range(0..3000u64).min(n * 1000);
        let ts = format!(
            "2026-01-01T{:02}:{:02}:{:02}.{:03}Z",
            ms / 3_600_000 % 24,
            ms / 60_000 % 60,
            ms / 1000 % 60,
            ms % 1000
        );
        let agent = Agent::of(path);
        *self.written.entry(agent.name()).or_default() += 1;
        // A photo now and then, in the places its agent keeps them; else words.
        let photo = rng
            .random_ratio(1, if agent == Claude { 8 } else { 6 })
            .then(|| b64(&fake_png(n, rng.random_range(10..2000))));
        let text = "w".repeat(rng.random_range(0..300));
        let line = match agent {
            Claude => return self.claude_line(rng, path, &ts, photo, &text),
            Codex => {
                let block = match photo {
                    Some(p) => json!({ "type": "input_image", "image_url": format!("data:image/png;base64,{p}") }),
                    None => json!({ "type": "input_text", "text": text }),
                };
                codex_line(&ts, "response_item", json!({ "type": "message", "role": "user", "content": [block] }))
            }
            Gemini => {
                let part = match photo {
                    Some(p) => json!({ "inlineData": { "mimeType": "image/png", "data": p } }),
                    None => json!({ "text": text }),
                };
                gemini_message(&format!("g{n}"), &ts, "user", json!([part]))
            }
            Qwen => {
                // The chat's id: its file's name, or a sub-agent's folder (its parent's).
                let session = path.rsplit('/').nth(usize::from(path.contains("/subagents/"))).unwrap();
                let session = session.trim_end_matches(".jsonl");
                let (kind, parts) = match photo {
                    // A pasted photo, or one a tool read (inside its `functionResponse`).
                    Some(p) if n.is_multiple_of(2) => (
                        "user",
                        json!([{ "text": text },
                        { "inlineData": { "data": p, "mimeType": "image/png", "displayName": "shot.png" } }]),
                    ),
                    Some(p) => (
                        "tool_result",
                        json!([{ "functionResponse": { "id": format!("call_{n}"), "name": "read_file",
                        "response": { "output": "Read image file" },
                        "parts": [{ "inlineData": { "data": p, "mimeType": "image/png", "displayName": "app.png" } }] } }]),
                    ),
                    None => ("user", json!([{ "text": text }])),
                };
                qwen_record(
                    session,
                    &format!("q{n}"),
                    None,
                    &ts,
                    kind,
                    json!({ "message": { "role": "user", "parts": parts } }),
                )
            }
            Droid => {
                let content = match photo {
                    Some(p) => {
                        json!([{ "type": "image", "source": { "type": "base64", "data": p, "media_type": "image/png" } },
                        { "type": "text", "text": text }])
                    }
                    None => json!(text),
                };
                droid_message(&format!("d{n}"), None, &ts, "user", content)
            }
            // Cursor keeps a pasted photo's path, not its bytes.
            Cursor => cursor_asked(&text, &ts, photo.map(|_| "/home/u/.cursor/images/shot.png")),
            Pi => {
                let mut content = vec![json!({ "type": "text", "text": text })];
                content.extend(photo.map(|p| json!({ "type": "image", "data": p, "mimeType": "image/png" })));
                pi_message(&format!("{n:08x}"), "00000000", &ts, json!({ "role": "user", "content": content }))
            }
            Copilot => match photo {
                // An asset the CLI keeps once, or an inline `blob` attachment.
                Some(p) if n.is_multiple_of(2) => copilot_event(
                    "session.binary_asset",
                    json!({ "assetId": format!("sha256:{n}"), "data": p, "mimeType": "image/png", "type": "image" }),
                    n as u32,
                    None,
                ),
                Some(p) => copilot_event(
                    "user.message",
                    json!({ "content": text, "attachments": [{ "type": "blob", "data": p, "mimeType": "image/png" }] }),
                    n as u32,
                    None,
                ),
                None => copilot_event("user.message", json!({ "content": text }), n as u32, None),
            },
        };
        line.into_bytes()
    }

    /// A Claude Code line of the session `s` (a sub-agent's on its side chain); a quarter of them
    /// state an API response's usage.
    fn claude_line(&mut self, rng: &mut StdRng, path: &str, ts: &str, photo: Option<String>, text: &str) -> Vec<u8> {
        let uuid = format!("u{}", self.next_uuid);
        let agent = path.rsplit_once("/agent-").map(|(_, a)| a.trim_end_matches(".jsonl"));
        if rng.random_ratio(1, 4) {
            // A line of one of a dozen API responses, which other lines and files state too.
            let id = format!("msg_{}", rng.random_range(0..12));
            let tokens = [rng.random_range(1..1000), rng.random_range(1..60), 0, 0];
            let line = crate::usage::assistant("s", &uuid, &id, Some(&format!("req_{id}")), ts, tokens);
            let mut value: Value = serde_json::from_str(&line).unwrap();
            if let Some(agent) = agent {
                value["isSidechain"] = true.into();
                value["agentId"] = agent.into();
            }
            return (value.to_string() + "\n").into_bytes();
        }
        let extra = agent.map(|a| format!(r#""isSidechain":true,"agentId":"{a}""#)).unwrap_or_default();
        let content = match photo {
            Some(p) => format!("[{}]", image_block("image/png", &p)),
            None => format!("\"{text}\""),
        };
        let line = user_line("s", &uuid, &content, &extra).replace("2026-01-01T00:00:00.000Z", ts);
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
        let codex: Vec<&String> = self.files.keys().filter(|p| Agent::of(p) == Codex).collect();
        (!codex.is_empty()).then(|| codex[rng.random_range(0..codex.len())].clone())
    }

    /// Half the time Claude Code, an eighth Codex (whose rollouts are also compressed), else one of
    /// the other agents.
    fn pick_agent(rng: &mut StdRng) -> Agent {
        match rng.random_range(0..16) {
            0..8 => Claude,
            8..10 => Codex,
            n => OTHERS[n - 9],
        }
    }

    fn pick_any(&self, rng: &mut StdRng) -> String {
        let dir = &self.dirs[rng.random_range(0..self.dirs.len())];
        let path = Self::pick_agent(rng).file(dir, rng.random_range(0..3), rng.random_ratio(1, 3));
        // Not beside its compressed twin: Codex appends only once it has decompressed it.
        if self.files.contains_key(&format!("{path}.zst")) {
            return Claude.file(dir, 0, false);
        }
        path
    }
}

/// Applies one random action to the files and the model; returns its name.
fn act(env: &Env, model: &mut Model, rng: &mut StdRng) -> &'static str {
    if rng.random_ratio(1, 8) {
        let mut gone = (0, Vec::new());
        let action = model.opencode.act(rng, &mut gone);
        model.gone_entries += gone.0;
        model.gone.extend(gone.1);
        return action;
    }
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
            let read = read_of(&path, &bytes);
            model.gone_entries += read.lines.len();
            model.gone.push(read.usage);
            "delete"
        }
        (85..95, _) => {
            // A new folder, with a transcript of an agent's in it (Codex's rollouts are all in its root).
            let dir = format!("n{}/deep", model.dirs.len());
            let agent = match Model::pick_agent(rng) {
                Codex => Claude,
                agent => agent,
            };
            let path = agent.file(&dir, 0, rng.random_ratio(1, 3));
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

/// Runs one case; returns its actions, and the lines it wrote by agent.
fn run_case(seed: u64, actions: usize) -> (Vec<&'static str>, BTreeMap<&'static str, usize>) {
    let env = Env::new();
    let mut rng = StdRng::seed_from_u64(seed);
    let mut model = Model {
        files: BTreeMap::new(),
        gone_entries: 0,
        gone: Vec::new(),
        dirs: vec!["a".into(), "b/c".into()],
        next_uuid: 0,
        written: BTreeMap::new(),
        read: Default::default(),
        opencode: OpenCodeModel {
            conn: crate::util::fixtures::opencode::create(&env.path("opencode/opencode.db")),
            sessions: BTreeMap::new(),
            v2: None,
            next: 0,
        },
    };
    for agent in OTHERS {
        std::fs::create_dir_all(env.path(&agent.root())).unwrap();
    }
    let mut tail = Some(start(&env));
    let mut conn = None;
    let mut log = Vec::new();
    for step in 0..actions {
        let action = act(&env, &mut model, &mut rng);
        log.push(action);
        if action == "restart" {
            conn = None;
            drop(tail.take());
            tail = Some(start(&env));
        }
        let expected = model.expected();
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let got = index_state(&env, &mut conn);
            if got.as_ref() == Some(&expected) {
                break;
            }
            if Instant::now() > deadline {
                let recent = &log[log.len().saturating_sub(8)..];
                panic!(
                    "seed {seed}, step {step}: the index does not match the model after {recent:?}\n got {got:?}\nwant {expected:?}"
                );
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        if step % 25 == 24 {
            check_history(&env, seed, step);
        }
    }
    drop(tail);
    check_history(&env, seed, actions);
    check_invariants(&env.data);
    (log, model.written)
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
        // A session of OpenCode's database is kept as its render, named after the database.
        let render = scrollback::files::is_render_of(std::path::Path::new(link), *dev, *inode);
        match std::fs::metadata(link) {
            Ok(meta) if (meta.dev() as i64, meta.ino() as i64) == (*dev, *inode) || render => {}
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
    let seeds = match std::env::var("SCROLLBACK_MODEL_SEED").ok().and_then(|v| v.parse().ok()) {
        Some(seed) => seed..seed + 1,
        None => 0..env_number("SCROLLBACK_MODEL_CASES", 20),
    };
    let (mut log, mut written) = (Vec::new(), BTreeMap::new());
    for seed in seeds {
        let (actions, lines) = run_case(seed, actions);
        log.extend(actions);
        for (agent, n) in lines {
            *written.entry(agent).or_insert(0) += n;
        }
    }
    let mut counts = BTreeMap::new();
    for action in &log {
        *counts.entry(*action).or_insert(0) += 1;
    }
    eprintln!(
        "model test: {} actions in {:.1} s: {counts:?}; lines by agent: {written:?}",
        log.len(),
        started.elapsed().as_secs_f64()
    );
    if log.len() >= 1000 {
        for action in [
            "compress",
            "decompress",
            "delete",
            "rename-replace",
            "truncate",
            "restart",
            "opencode-message",
            "opencode-update",
            "opencode-delete",
            "opencode-checkpoint",
            "opencode-upgrade",
            "opencode2-message",
            "opencode2-update",
            "opencode2-delete",
        ] {
            assert!(counts.contains_key(action), "no {action} in {} actions", log.len());
        }
        for agent in [Claude].into_iter().chain(OTHERS) {
            assert!(written.contains_key(agent.name()), "no line of {agent:?} in {} actions", log.len());
        }
    }
}
