//! The SQLite files: the index and the acceptance record, their schemas, their `PRAGMA user_version`
//! migrations, and the one place that says how a connection is opened ([`ConnectionKind`]: flags
//! and pragmas of the index's writer and readers, and of the acceptance record).
//!
//! Never deletes an index: a corrupt file or one from a newer scrollback is renamed, with a warning,
//! and a fresh index is built beside it.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use rusqlite::{Connection, ErrorCode, OpenFlags, OptionalExtension};

use crate::pack;

use crate::error::{Error, Result};

/// Every table, index, view and trigger of the current version.
pub const SCHEMA: &str = include_str!("../schema.sql");

/// The schema version `SCHEMA` creates, kept in `PRAGMA user_version`.
pub const VERSION: i64 = 23;

/// One step each: `MIGRATIONS[i]` takes a database from version `i + 1` to `i + 2`. A step is run in
/// the same transaction as the `user_version` bump. When you add one, bump `VERSION`, update
/// `schema.sql` to the result, and keep the old schema in `tests/fixtures/schema-v<N>.sql`.
const MIGRATIONS: &[&str] = &[
    // 1 -> 2: full-text search without the porter stemmer, which took a fifth of a bulk load's time.
    "DROP TABLE entries_fts;
     CREATE VIRTUAL TABLE entries_fts USING fts5(text, content='entries', content_rowid='id', tokenize='unicode61 remove_diacritics 2');
     INSERT INTO entries_fts (entries_fts) VALUES ('rebuild');",
    // 2 -> 3: the full-text table declared with content="entries", which Datasette and sqlite-utils
    // recognise (they look for that spelling in its SQL); the index itself is rebuilt unchanged.
    "DROP TABLE entries_fts;
     CREATE VIRTUAL TABLE entries_fts USING fts5(text, content=\"entries\", content_rowid='id', tokenize='unicode61 remove_diacritics 2');
     INSERT INTO entries_fts (entries_fts) VALUES ('rebuild');",
    // 3 -> 4: conversation order across a session's files, copies of an entry marked, sub-agent
    // links, side-chain counts, where a title came from. The new columns of rows written before are
    // filled in by the writer when it next opens the index (`BACKFILL_PENDING`: they need Rust:
    // path hashes, the line parser, word marks), in one transaction.
    "ALTER TABLE entries ADD COLUMN sort_at TEXT NOT NULL DEFAULT '';
     ALTER TABLE entries ADD COLUMN sort_file INTEGER NOT NULL DEFAULT 0;
     ALTER TABLE entries ADD COLUMN duplicate INTEGER NOT NULL DEFAULT 0;
     ALTER TABLE entries ADD COLUMN agent_id TEXT;
     ALTER TABLE entries ADD COLUMN spawned_agent TEXT;
     ALTER TABLE sessions ADD COLUMN sidechain_entries INTEGER NOT NULL DEFAULT 0;
     ALTER TABLE sessions ADD COLUMN title_order TEXT;
     CREATE INDEX entries_order ON entries(session_id, sort_at, sort_file, line);
     CREATE INDEX entries_agent ON entries(session_id, agent_id) WHERE agent_id IS NOT NULL;
     DROP TRIGGER entries_au;
     CREATE TRIGGER entries_au AFTER UPDATE OF text ON entries BEGIN
    INSERT INTO entries_fts(entries_fts, rowid, text) VALUES ('delete', old.id, old.text);
    INSERT INTO entries_fts(rowid, text) VALUES (new.id, new.text);
END;
     DROP VIEW messages;
     CREATE VIEW messages AS
SELECT e.session_id, e.line, e.uuid, e.parent_uuid, e.type, e.role, e.timestamp, e.is_sidechain,
       replace(e.text, char(8203), '') AS text, f.path
FROM entries e JOIN files f ON f.id = e.file_id
WHERE e.invalid IS NULL AND e.duplicate = 0 AND e.type IN ('user', 'assistant');
     INSERT INTO scrollback_meta (key, value) VALUES ('pending:v4-backfill', 'fill in the version 4 columns');",
    // 4 -> 5: the vault, a hard link per transcript in the data directory, so that a transcript's
    // bytes outlive its deletion. Rows written before have no link until their file is re-read.
    "ALTER TABLE files ADD COLUMN vault TEXT;",
    // 5 -> 6: what `scrollback forget` must not index again.
    "-- Transcripts whose session was forgotten (`scrollback forget`): not indexed again while they are
-- the same file (device, inode, and the blake3 of their first bytes), until `scrollback unforget`.
CREATE TABLE forgotten (
    session_id      TEXT    NOT NULL,
    path            TEXT    NOT NULL,
    dev             INTEGER NOT NULL,
    inode           INTEGER NOT NULL,
    fingerprint     TEXT    NOT NULL,
    fingerprint_len INTEGER NOT NULL,
    forgotten_at    TEXT    NOT NULL
);
CREATE INDEX forgotten_identity ON forgotten(dev, inode);
",
    // 6 -> 7: several agents (each file, session and entry records its agent), entries hidden for
    // a reason other than being a copy (replays the agents' formats keep), forks' parents. Rows
    // written before are Claude Code's.
    "ALTER TABLE files ADD COLUMN agent TEXT NOT NULL DEFAULT 'claude';
     ALTER TABLE sessions ADD COLUMN agent TEXT NOT NULL DEFAULT 'claude';
     ALTER TABLE sessions ADD COLUMN forked_from TEXT;
     ALTER TABLE entries ADD COLUMN agent TEXT NOT NULL DEFAULT 'claude';
     ALTER TABLE entries ADD COLUMN hidden TEXT;
     CREATE INDEX sessions_agent ON sessions(agent, last_timestamp);
     DROP VIEW messages;
     CREATE VIEW messages AS
SELECT e.session_id, e.line, e.uuid, e.parent_uuid, e.type, e.role, e.timestamp, e.is_sidechain,
       replace(e.text, char(8203), '') AS text, f.path, e.agent
FROM entries e JOIN files f ON f.id = e.file_id
WHERE e.invalid IS NULL AND e.duplicate = 0 AND (e.type IN ('user', 'assistant') OR e.role IN ('user', 'assistant'));",
    // 7 -> 8: the usage ledger. It is made from the stored lines by the writer when it next opens
    // the index (the index crate's `usage::BACKFILL_PENDING`: it needs the formats' parsers).
"-- One row per line that states an API response's usage: a response stated again by a later line
-- (a streamed response, a block at a time), another file or another session is a row each. The
-- ledger (`usage`) is derived from these. Counts are disjoint: `input_tokens` is the input neither
-- read from nor written to a cache, `output_tokens` includes reasoning (README.md, \"Usage\").
CREATE TABLE usage_lines (
    entry_id              INTEGER NOT NULL REFERENCES entries(id),
    ordinal               INTEGER NOT NULL,     -- which of the responses the line states (0, or a checkpoint's n-th)
    key                   TEXT    NOT NULL,     -- the response's identity: claude:<message.id>, gemini:<id>, codex:<session>:<running total>
    session_id            TEXT    NOT NULL,
    agent                 TEXT    NOT NULL,
    model                 TEXT,
    request_id            TEXT,
    timestamp             TEXT,
    tier                  TEXT,                 -- a price tier other than standard: priority, batch, flex, fast
    input_tokens          INTEGER NOT NULL,
    output_tokens         INTEGER NOT NULL,
    cache_read_tokens     INTEGER NOT NULL,
    cache_write_tokens    INTEGER NOT NULL,     -- both lifetimes
    cache_write_1h_tokens INTEGER NOT NULL,     -- of cache_write_tokens, for an hour (the rest 5 minutes)
    reasoning_tokens      INTEGER NOT NULL,     -- of output_tokens, reasoning
    PRIMARY KEY (entry_id, ordinal)
) WITHOUT ROWID;
CREATE INDEX usage_lines_key ON usage_lines(key);

-- The ledger: one row per API response, from the line of it that stands (the most output tokens,
-- then the latest): README.md, \"Usage\".
CREATE TABLE usage (
    key                   TEXT    PRIMARY KEY,
    session_id            TEXT    NOT NULL,
    agent                 TEXT    NOT NULL,
    model                 TEXT,
    request_id            TEXT,
    timestamp             TEXT,
    day                   TEXT,                 -- UTC date of timestamp
    tier                  TEXT,
    input_tokens          INTEGER NOT NULL,
    output_tokens         INTEGER NOT NULL,
    cache_read_tokens     INTEGER NOT NULL,
    cache_write_tokens    INTEGER NOT NULL,
    cache_write_1h_tokens INTEGER NOT NULL,
    reasoning_tokens      INTEGER NOT NULL,
    entry_id              INTEGER NOT NULL,     -- the line that stands (usage_lines holds every line)
    lines                 INTEGER NOT NULL      -- how many lines state it
);
CREATE INDEX usage_day ON usage(day);
CREATE INDEX usage_session ON usage(session_id, day);

-- The ledger summed by session, UTC day, agent, model, price tier and context size (`over`: the
-- largest of `format::usage::CONTEXT_SIZES` the request's input was over, else 0), kept by the
-- writer with the ledger: the reports read these sums, not every response.
CREATE TABLE usage_sums (
    session_id            TEXT    NOT NULL,
    day                   TEXT,
    agent                 TEXT    NOT NULL,
    model                 TEXT,
    tier                  TEXT,
    over                  INTEGER NOT NULL,
    responses             INTEGER NOT NULL,
    input_tokens          INTEGER NOT NULL,
    output_tokens         INTEGER NOT NULL,
    cache_read_tokens     INTEGER NOT NULL,
    cache_write_tokens    INTEGER NOT NULL,
    cache_write_1h_tokens INTEGER NOT NULL,
    reasoning_tokens      INTEGER NOT NULL,
    first_timestamp       TEXT,
    last_timestamp        TEXT
);
CREATE INDEX usage_sums_day ON usage_sums(day);
CREATE INDEX usage_sums_session ON usage_sums(session_id, day);

-- What the writer keeps of a file between its lines: the model its last turn_context named, and
-- Codex's running total (\"input/output/cache_read/cache_write/cache_write_1h/reasoning\").
CREATE TABLE usage_state (
    file_id INTEGER PRIMARY KEY,
    model   TEXT,
    running TEXT
);

-- Tokens per UTC day, agent and model (cost: `scrollback usage`, which prices them).
CREATE VIEW usage_daily AS
SELECT day, agent, model, count(*) AS responses,
       sum(input_tokens) AS input_tokens, sum(output_tokens) AS output_tokens,
       sum(cache_read_tokens) AS cache_read_tokens, sum(cache_write_tokens) AS cache_write_tokens,
       sum(cache_write_1h_tokens) AS cache_write_1h_tokens, sum(reasoning_tokens) AS reasoning_tokens,
       sum(input_tokens + output_tokens + cache_read_tokens + cache_write_tokens) AS total_tokens
FROM usage GROUP BY day, agent, model;

-- Tokens per session, with its title and project.
CREATE VIEW usage_by_session AS
SELECT u.session_id, s.title, s.project, u.agent, group_concat(DISTINCT u.model) AS models,
       min(u.timestamp) AS first_timestamp, max(u.timestamp) AS last_timestamp, count(*) AS responses,
       sum(u.input_tokens) AS input_tokens, sum(u.output_tokens) AS output_tokens,
       sum(u.cache_read_tokens) AS cache_read_tokens, sum(u.cache_write_tokens) AS cache_write_tokens,
       sum(u.cache_write_1h_tokens) AS cache_write_1h_tokens, sum(u.reasoning_tokens) AS reasoning_tokens,
       sum(u.input_tokens + u.output_tokens + u.cache_read_tokens + u.cache_write_tokens) AS total_tokens
FROM usage u LEFT JOIN sessions s ON s.id = u.session_id GROUP BY u.session_id;
INSERT INTO scrollback_meta (key, value) VALUES ('pending:v8-usage', 'make the usage ledger from the stored lines');",
    // 8 -> 9: where a forgotten session's lines were passed over, for `unforget`.
    "-- Transcripts that hold lines of a forgotten session beside other sessions' (version 9): those lines
-- are not indexed (the acceptance record's `forgotten_sessions` says which sessions), and
-- `scrollback unforget` reads these files again from their start.
CREATE TABLE forgotten_in (
    session_id TEXT    NOT NULL,
    file_id    INTEGER NOT NULL,
    PRIMARY KEY (session_id, file_id)
) WITHOUT ROWID;
",
    // 9 -> 10: a file's generation, moved on each time its rows are replaced, so that a push to a
    // hub knows its watermark in the file still holds.
    "ALTER TABLE files ADD COLUMN generation INTEGER NOT NULL DEFAULT 0;",
    // 10 -> 11: a session's git branch kept in its row, from its lines' formats as they are written,
    // with the order of the entry it came from (`Order::key`; a later one replaces it, as titles
    // do). Rows written before get the branch version 10 read from the stored lines at each
    // request: that of the last entry in conversation order, copies and hidden entries left out,
    // that names one by an agent's field (frozen here, as every migration is).
    r#"ALTER TABLE sessions ADD COLUMN git_branch TEXT;
     ALTER TABLE sessions ADD COLUMN git_branch_order TEXT;
     UPDATE sessions SET (git_branch, git_branch_order) = (
         SELECT coalesce(json_extract(stripped, '$.gitBranch'), json_extract(stripped, '$.payload.git.branch')),
                sort_at || char(1) || printf('%016d', sort_file) || char(1) || printf('%012d', line)
         FROM entries
         WHERE session_id = sessions.id AND stripped IS NOT NULL AND duplicate = 0
           AND (instr(stripped, '"gitBranch":"') > 0 OR (type = 'session_meta' AND instr(stripped, '"branch"') > 0))
           AND json_valid(stripped)
         ORDER BY sort_at DESC, sort_file DESC, line DESC, id DESC LIMIT 1);"#,
    // 11 -> 12: files found by their identity through an index (each new path asks whether its
    // file is known under another name: without it, a scan of every file row, so that a first
    // index of 20,000 transcripts took time in their square). And search text in three columns (what was said; tool calls' input and output; the
    // tools called), so that search ranks what was said first, snippets show a call's input as
    // its strings, and `tool:` filters. The full-text table is made again from the rows as they
    // are (all their text in `text`, searchable at once); the writer splits the text of rows
    // written before into the three columns when it next opens the index (`SEARCH_PENDING`: it
    // needs the formats' parsers).
    "CREATE INDEX files_identity ON files(dev, inode);
     DROP TRIGGER entries_ai;
     DROP TRIGGER entries_ad;
     DROP TRIGGER entries_au;
     DROP TABLE entries_fts;
     ALTER TABLE entries ADD COLUMN tool_text TEXT;
     ALTER TABLE entries ADD COLUMN tools TEXT;
     CREATE VIRTUAL TABLE entries_fts USING fts5(text, tool_text, tools, content=\"entries\", content_rowid='id', tokenize='unicode61 remove_diacritics 2');
     CREATE TRIGGER entries_ai AFTER INSERT ON entries BEGIN
    INSERT INTO entries_fts(rowid, text, tool_text, tools) VALUES (new.id, new.text, new.tool_text, new.tools);
END;
     CREATE TRIGGER entries_ad AFTER DELETE ON entries BEGIN
    INSERT INTO entries_fts(entries_fts, rowid, text, tool_text, tools) VALUES ('delete', old.id, old.text, old.tool_text, old.tools);
END;
     CREATE TRIGGER entries_au AFTER UPDATE OF text, tool_text, tools ON entries BEGIN
    INSERT INTO entries_fts(entries_fts, rowid, text, tool_text, tools) VALUES ('delete', old.id, old.text, old.tool_text, old.tools);
    INSERT INTO entries_fts(rowid, text, tool_text, tools) VALUES (new.id, new.text, new.tool_text, new.tools);
END;
     DROP VIEW messages;
     CREATE VIEW messages AS
SELECT e.session_id, e.line, e.uuid, e.parent_uuid, e.type, e.role, e.timestamp, e.is_sidechain,
       replace(e.text, char(8203), '') AS text, f.path, e.agent, replace(e.tool_text, char(8203), '') AS tool_text
FROM entries e JOIN files f ON f.id = e.file_id
WHERE e.invalid IS NULL AND e.duplicate = 0 AND (e.type IN ('user', 'assistant') OR e.role IN ('user', 'assistant'));
     INSERT INTO entries_fts (entries_fts) VALUES ('rebuild');
     INSERT INTO scrollback_meta (key, value) VALUES ('pending:v12-search', 'fill in the search columns and rebuild entries_fts');",
    // 12 -> 13: the overview's sums (tool calls and edits, messages, tool use, response times and
    // tokens by hour), kept by the writer. The writer makes them from the stored lines when it
    // next opens the index (`STATS_PENDING`: the tool calls need the formats' parsers).
    "CREATE TABLE tool_events (
         entry_id  INTEGER NOT NULL REFERENCES entries(id),
         ordinal   INTEGER NOT NULL,
         session_id TEXT   NOT NULL,
         tool      TEXT,
         failed    INTEGER,
         path      TEXT,
         added     INTEGER,
         removed   INTEGER,
         timestamp TEXT,
         PRIMARY KEY (entry_id, ordinal)
     ) WITHOUT ROWID;
     CREATE INDEX tool_events_session ON tool_events(session_id);
     CREATE INDEX tool_events_edits ON tool_events(timestamp) WHERE path IS NOT NULL;
     CREATE TABLE stats_hours (
         session_id TEXT    NOT NULL,
         hour       TEXT    NOT NULL,
         messages   INTEGER NOT NULL,
         prompts    INTEGER NOT NULL,
         PRIMARY KEY (session_id, hour)
     ) WITHOUT ROWID;
     CREATE INDEX stats_hours_hour ON stats_hours(hour);
     CREATE TABLE tool_hours (
         session_id TEXT    NOT NULL,
         hour       TEXT    NOT NULL,
         tool       TEXT    NOT NULL,
         calls      INTEGER NOT NULL,
         failures   INTEGER NOT NULL,
         PRIMARY KEY (session_id, hour, tool)
     ) WITHOUT ROWID;
     CREATE TABLE response_hours (
         session_id TEXT    NOT NULL,
         hour       TEXT    NOT NULL,
         model      TEXT    NOT NULL,
         bucket     INTEGER NOT NULL,
         responses  INTEGER NOT NULL,
         PRIMARY KEY (session_id, hour, model, bucket)
     ) WITHOUT ROWID;
     CREATE TABLE usage_hours (
         session_id            TEXT    NOT NULL,
         hour                  TEXT,
         agent                 TEXT    NOT NULL,
         model                 TEXT,
         tier                  TEXT,
         over                  INTEGER NOT NULL,
         responses             INTEGER NOT NULL,
         input_tokens          INTEGER NOT NULL,
         output_tokens         INTEGER NOT NULL,
         cache_read_tokens     INTEGER NOT NULL,
         cache_write_tokens    INTEGER NOT NULL,
         cache_write_1h_tokens INTEGER NOT NULL,
         reasoning_tokens      INTEGER NOT NULL
     );
     CREATE INDEX usage_hours_hour ON usage_hours(hour);
     CREATE INDEX usage_hours_session ON usage_hours(session_id, hour);
     INSERT INTO scrollback_meta (key, value) VALUES ('pending:v13-stats', 'make the overview sums from the stored lines');",
    // 13 -> 14: stored lines packed (zstd with a dictionary trained on the index's own lines). Rows
    // written before stay text: `stored_line(stripped)` reads either.
    "CREATE TABLE dictionaries (
         id       INTEGER PRIMARY KEY,
         made_at  TEXT    NOT NULL,
         samples  INTEGER NOT NULL,
         bytes    BLOB    NOT NULL
     );",
    // 14 -> 15: two small partial indexes, so that `status` and `index` count hidden and invalid
    // lines without a full scan of `entries` (three of them took most of a no-op `index`'s second on
    // 20,000 sessions). Built once here, one pass over the table.
    "CREATE INDEX entries_hidden ON entries(duplicate) WHERE duplicate <> 0;
     CREATE INDEX entries_invalid ON entries(duplicate, invalid) WHERE invalid IS NOT NULL;",
    // 15 -> 16: a smaller index (#36). `entries_session` goes: `entries_order` begins with the same
    // column (a small partial index finds the calls that ran a sub-agent, which it served). `tool_events` is kept in session order, by its primary key, so it needs no index of
    // its sessions; a time is kept on edits alone (the only rows read by time).
    "DROP INDEX entries_session;
     CREATE INDEX entries_spawner ON entries(session_id, spawned_agent) WHERE spawned_agent IS NOT NULL;
     DROP INDEX tool_events_session;
     DROP INDEX tool_events_edits;
     ALTER TABLE tool_events RENAME TO tool_events_v15;
     CREATE TABLE tool_events (
         entry_id  INTEGER NOT NULL REFERENCES entries(id),
         ordinal   INTEGER NOT NULL,
         session_id TEXT   NOT NULL,
         tool      TEXT,
         failed    INTEGER,
         path      TEXT,
         added     INTEGER,
         removed   INTEGER,
         timestamp TEXT,
         PRIMARY KEY (session_id, entry_id, ordinal)
     ) WITHOUT ROWID;
     INSERT INTO tool_events (entry_id, ordinal, session_id, tool, failed, path, added, removed, timestamp)
         SELECT entry_id, ordinal, session_id, tool, failed, path, added, removed,
                CASE WHEN path IS NOT NULL THEN timestamp END
         FROM tool_events_v15;
     DROP TABLE tool_events_v15;
     CREATE INDEX tool_events_edits ON tool_events(timestamp) WHERE path IS NOT NULL;",
    // 16 -> 17: the two questions asked of `files` for each file new to the index (is there a row
    // of this transcript seen gone at its name or its compressed twin's; does a row still need this
    // vault link) answered by an index each, not a scan of every file: a cold index of 20,000
    // transcripts spent a sixth of its time scanning.
    "CREATE INDEX files_gone_path ON files(path) WHERE state = 'gone';
     CREATE INDEX files_vault ON files(vault) WHERE vault IS NOT NULL;",
    // 17 -> 18: a title made of a person's first words reads without Markdown's marks
    // (`plain_title`, the SQL function the writer's connection has: format::plain_title).
    "UPDATE sessions SET title = plain_title(title) WHERE title_rank = 1 AND title IS NOT NULL;",
    // 18 -> 19: a vault link recorded relative to the directory its writer ran in (a relative
    // `--data-dir`) is recorded by its absolute path in this data directory, where every link is
    // (`vault_link`, the SQL function the writer's connection has); and a title longer than
    // `format::TITLE_MAX_CHARS` is cut (`bounded_title`, likewise).
    "UPDATE files SET vault = vault_link(vault) WHERE vault IS NOT NULL AND vault NOT LIKE '/%';
     UPDATE sessions SET title = bounded_title(title) WHERE length(title) > bounded_title_max();",
    // 19 -> 20: where each session's walk of its sums stopped, so that a batch that appends to a
    // long session walks its new entries alone. Empty: a session's next batch walks it whole once.
    "CREATE TABLE stats_walks (
         session_id TEXT    PRIMARY KEY,
         sort_at    TEXT    NOT NULL,
         sort_file  INTEGER NOT NULL,
         line       INTEGER NOT NULL,
         id         INTEGER NOT NULL,
         state      TEXT    NOT NULL
     ) WITHOUT ROWID;",
    // 20 -> 21: the ledger keeps which line of each response stands, not a copy of its facts (the
    // `usage` table held each response's key, session, model, request id and time a second time,
    // with three indexes: a third of the ledger's size); `usage` is a view of the same columns. The
    // standing lines are picked from the lines by the writer's rule (`usage::STANDING`, frozen here).
    "CREATE TABLE usage_standing (
         session_id TEXT    NOT NULL,
         entry_id   INTEGER NOT NULL,
         ordinal    INTEGER NOT NULL,
         lines      INTEGER NOT NULL,
         PRIMARY KEY (session_id, entry_id, ordinal)
     ) WITHOUT ROWID;
     INSERT INTO usage_standing (session_id, entry_id, ordinal, lines)
     SELECT session_id, entry_id, ordinal, lines
     FROM (SELECT u.session_id, u.entry_id, u.ordinal,
                  row_number() OVER (PARTITION BY u.key ORDER BY
                      u.output_tokens DESC, u.input_tokens + u.cache_read_tokens + u.cache_write_tokens DESC,
                      u.timestamp DESC, u.session_id, e.sort_file, e.line, u.ordinal) AS standing,
                  count(*) OVER (PARTITION BY u.key) AS lines
           FROM usage_lines u JOIN entries e ON e.id = u.entry_id)
     WHERE standing = 1;
     DROP VIEW usage_daily;
     DROP VIEW usage_by_session;
     DROP TABLE usage;
     CREATE VIEW usage AS
SELECT u.key, s.session_id, u.agent, u.model, u.request_id, u.timestamp,
       coalesce(date(u.timestamp), substr(u.timestamp, 1, 10)) AS day, u.tier, u.input_tokens,
       u.output_tokens, u.cache_read_tokens, u.cache_write_tokens, u.cache_write_1h_tokens,
       u.reasoning_tokens, s.entry_id, s.lines
FROM usage_standing s
JOIN usage_lines u ON u.entry_id = s.entry_id AND u.ordinal = s.ordinal AND u.session_id = s.session_id;
     CREATE VIEW usage_daily AS
SELECT day, agent, model, count(*) AS responses,
       sum(input_tokens) AS input_tokens, sum(output_tokens) AS output_tokens,
       sum(cache_read_tokens) AS cache_read_tokens, sum(cache_write_tokens) AS cache_write_tokens,
       sum(cache_write_1h_tokens) AS cache_write_1h_tokens, sum(reasoning_tokens) AS reasoning_tokens,
       sum(input_tokens + output_tokens + cache_read_tokens + cache_write_tokens) AS total_tokens
FROM usage GROUP BY day, agent, model;
     CREATE VIEW usage_by_session AS
SELECT u.session_id, s.title, s.project, u.agent, group_concat(DISTINCT u.model) AS models,
       min(u.timestamp) AS first_timestamp, max(u.timestamp) AS last_timestamp, count(*) AS responses,
       sum(u.input_tokens) AS input_tokens, sum(u.output_tokens) AS output_tokens,
       sum(u.cache_read_tokens) AS cache_read_tokens, sum(u.cache_write_tokens) AS cache_write_tokens,
       sum(u.cache_write_1h_tokens) AS cache_write_1h_tokens, sum(u.reasoning_tokens) AS reasoning_tokens,
       sum(u.input_tokens + u.output_tokens + u.cache_read_tokens + u.cache_write_tokens) AS total_tokens
FROM usage u LEFT JOIN sessions s ON s.id = u.session_id GROUP BY u.session_id;",
    // 21 -> 22: each session's lowest and highest entry id, kept by the writer, so that a search
    // counts a session's hits within them without reading every entry of the session for them (a
    // min and a max over 50,000 entries took 6 ms at each search).
    "ALTER TABLE sessions ADD COLUMN first_entry INTEGER;
     ALTER TABLE sessions ADD COLUMN last_entry INTEGER;
     UPDATE sessions SET first_entry = b.lo, last_entry = b.hi
     FROM (SELECT session_id, min(id) AS lo, max(id) AS hi FROM entries GROUP BY session_id) AS b
     WHERE b.session_id = sessions.id;",
    // 22 -> 23: a compact ledger. A usage line no longer repeats its entry's session and time (the
    // time is kept only where the response states another), and names its model by a number
    // (`usage_models`): the ledger was 197 MB for 473,000 responses, its lines 141 MB of it.
    "CREATE TABLE usage_models (
         id   INTEGER PRIMARY KEY,
         name TEXT    NOT NULL UNIQUE
     );
     INSERT INTO usage_models (name) SELECT DISTINCT model FROM usage_lines WHERE model IS NOT NULL ORDER BY model;
     CREATE TABLE usage_lines_v23 (
         entry_id              INTEGER NOT NULL REFERENCES entries(id),
         ordinal               INTEGER NOT NULL,
         key                   TEXT    NOT NULL,
         agent                 TEXT    NOT NULL,
         model                 INTEGER REFERENCES usage_models(id),
         request_id            TEXT,
         timestamp             TEXT,
         tier                  TEXT,
         input_tokens          INTEGER NOT NULL,
         output_tokens         INTEGER NOT NULL,
         cache_read_tokens     INTEGER NOT NULL,
         cache_write_tokens    INTEGER NOT NULL,
         cache_write_1h_tokens INTEGER NOT NULL,
         reasoning_tokens      INTEGER NOT NULL,
         PRIMARY KEY (entry_id, ordinal)
     ) WITHOUT ROWID;
     INSERT INTO usage_lines_v23
     SELECT u.entry_id, u.ordinal, u.key, u.agent, m.id, u.request_id,
            CASE WHEN u.timestamp IS e.timestamp THEN NULL ELSE u.timestamp END, u.tier, u.input_tokens,
            u.output_tokens, u.cache_read_tokens, u.cache_write_tokens, u.cache_write_1h_tokens, u.reasoning_tokens
     FROM usage_lines u
     JOIN entries e ON e.id = u.entry_id
     LEFT JOIN usage_models m ON m.name = u.model
     ORDER BY u.entry_id, u.ordinal;
     DROP VIEW usage_daily;
     DROP VIEW usage_by_session;
     DROP VIEW usage;
     DROP TABLE usage_lines;
     ALTER TABLE usage_lines_v23 RENAME TO usage_lines;
     CREATE INDEX usage_lines_key ON usage_lines(key);
     CREATE VIEW usage AS
SELECT u.key, s.session_id, u.agent, m.name AS model, u.request_id, coalesce(u.timestamp, e.timestamp) AS timestamp,
       coalesce(date(coalesce(u.timestamp, e.timestamp)), substr(coalesce(u.timestamp, e.timestamp), 1, 10)) AS day,
       u.tier, u.input_tokens, u.output_tokens, u.cache_read_tokens, u.cache_write_tokens, u.cache_write_1h_tokens,
       u.reasoning_tokens, s.entry_id, s.lines
FROM usage_standing s
JOIN usage_lines u ON u.entry_id = s.entry_id AND u.ordinal = s.ordinal
JOIN entries e ON e.id = s.entry_id AND e.session_id = s.session_id
LEFT JOIN usage_models m ON m.id = u.model;
     CREATE VIEW usage_daily AS
SELECT day, agent, model, count(*) AS responses,
       sum(input_tokens) AS input_tokens, sum(output_tokens) AS output_tokens,
       sum(cache_read_tokens) AS cache_read_tokens, sum(cache_write_tokens) AS cache_write_tokens,
       sum(cache_write_1h_tokens) AS cache_write_1h_tokens, sum(reasoning_tokens) AS reasoning_tokens,
       sum(input_tokens + output_tokens + cache_read_tokens + cache_write_tokens) AS total_tokens
FROM usage GROUP BY day, agent, model;
     CREATE VIEW usage_by_session AS
SELECT u.session_id, s.title, s.project, u.agent, group_concat(DISTINCT u.model) AS models,
       min(u.timestamp) AS first_timestamp, max(u.timestamp) AS last_timestamp, count(*) AS responses,
       sum(u.input_tokens) AS input_tokens, sum(u.output_tokens) AS output_tokens,
       sum(u.cache_read_tokens) AS cache_read_tokens, sum(u.cache_write_tokens) AS cache_write_tokens,
       sum(u.cache_write_1h_tokens) AS cache_write_1h_tokens, sum(u.reasoning_tokens) AS reasoning_tokens,
       sum(u.input_tokens + u.output_tokens + u.cache_read_tokens + u.cache_write_tokens) AS total_tokens
FROM usage u LEFT JOIN sessions s ON s.id = u.session_id GROUP BY u.session_id;",
];

/// The `scrollback_meta` key that says rows written before version 12 still need their search text
/// split into the three search columns (the index crate's `migrate` module).
pub const SEARCH_PENDING: &str = "pending:v12-search";

/// The `scrollback_meta` key that says the overview's sums of an index from before version 13 (or
/// of rows carried over by a rebuild) must be made from the stored lines (the index crate's `migrate`).
pub const STATS_PENDING: &str = "pending:v13-stats";

/// The response-time histogram's buckets' upper bounds (`response_hours.bucket`): bucket `i` holds
/// the times over bucket `i - 1`'s seconds and not over its own; bucket `RESPONSE_BUCKETS.len()`
/// every longer one.
pub const RESPONSE_BUCKETS: &[u32] =
    &[1, 2, 3, 5, 8, 13, 20, 30, 45, 60, 90, 120, 180, 300, 600, 1200, 1800, 3600, 7200, 14400, 86400];

/// The `scrollback_meta` key that says rows written before version 4 still need their version 4
/// columns filled in (the index crate's `migrate` module).
pub const BACKFILL_PENDING: &str = "pending:v4-backfill";

/// The `scrollback_meta` key that records the context sizes `usage_sums` was made with
/// (`format::usage::CONTEXT_SIZES`, as text).
pub const USAGE_SUMS_SIZES: &str = "usage-sums:context-sizes";

/// The index's file name inside the data directory.
pub const INDEX_FILE: &str = "index.sqlite3";

/// The acceptance record's schema: primary data, in a file of its own ([`ACCEPT_FILE`]).
pub const ACCEPT_SCHEMA: &str = include_str!("../accept.sql");
/// The version `ACCEPT_SCHEMA` creates, kept in that file's `PRAGMA user_version`.
pub const ACCEPT_VERSION: i64 = 3;
/// One step each, as [`MIGRATIONS`] for the index. Keep each old schema in
/// `tests/fixtures/accept-v<N>.sql`.
const ACCEPT_MIGRATIONS: &[&str] = &[
    // 1 -> 2: a person's marks on sessions (a title of their own, pinned).
    "-- A person's own marks on a session (version 2): the title they gave it and whether it is pinned to
-- the top of the list. Primary data as the sends are: never written into a transcript, kept
-- through a rebuild of the index.
CREATE TABLE marks (
    session_id TEXT PRIMARY KEY,
    title      TEXT,                                -- NULL: the title the transcript gives
    pinned     INTEGER NOT NULL DEFAULT 0 CHECK (pinned IN (0, 1)),
    updated_at TEXT NOT NULL
) WITHOUT ROWID;",
    // 2 -> 3: forgotten sessions, and each engine run of a message. Messages accepted before have
    // no runs, so none of them is run again.
    "-- Sessions a person forgot (version 3; `scrollback forget`, `DELETE /api/sessions/{id}`): their
-- lines are never indexed again, in any transcript, until `scrollback unforget`. Primary data: a
-- rebuilt or deleted index does not bring them back.
CREATE TABLE forgotten_sessions (
    session_id   TEXT PRIMARY KEY,
    forgotten_at TEXT NOT NULL
) WITHOUT ROWID;

-- Each engine run of a message (version 3): queued with the acceptance when the server has an
-- engine, started and ended as it runs. A run with no end (the server stopped during it, or before
-- it) is run again at the next start: at least once, never zero times. A retry of a message whose
-- last run failed queues another.
CREATE TABLE engine_runs (
    id            INTEGER PRIMARY KEY,
    acceptance_id INTEGER NOT NULL REFERENCES acceptances(id),
    queued_at     TEXT    NOT NULL,
    started_at    TEXT,
    ended_at      TEXT,
    outcome       TEXT    CHECK (outcome IN ('ok', 'failed')),
    error         TEXT
);
CREATE INDEX engine_runs_acceptance ON engine_runs(acceptance_id);
CREATE INDEX engine_runs_unfinished ON engine_runs(acceptance_id) WHERE ended_at IS NULL;
",
];
/// The acceptance record's file name inside the data directory.
pub const ACCEPT_FILE: &str = "accepted.sqlite3";

/// What scrollback keeps in a data directory, which is made its owner's alone
/// ([`crate::files::keep_private`]): the index and the acceptance record (with their logs and the
/// copies moved aside), the lock, the scratch full-text build, the vault, the sent images, the
/// demo's own data directory, the roots it remembers and the data directory's identity on a team's
/// hub. (The names of the layers above are checked against theirs by their tests.)
pub const DATA_DIR_NAMES: &[&str] = &[
    INDEX_FILE,
    ACCEPT_FILE,
    "scrollback.lock",
    "scrollback.lock.wait",
    "fts-build.sqlite3",
    "vault",
    "accepted-images",
    "demo",
    "roots.json",
    "hub-identity",
];

/// How a connection to the index is opened. Every connection scrollback makes goes through here, so
/// flags and pragmas have one home.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConnectionKind {
    /// The one writer: creates and migrates the schema, WAL, `synchronous = NORMAL`.
    Writer,
    /// A reader (queries, media lookups, the server's pool): read-only, refuses to write.
    Reader,
    /// The acceptance record (`accepted.sqlite3`): primary data, so every commit is synced to disk,
    /// and a file it cannot use is an error, never moved aside and replaced.
    Acceptances,
}

impl ConnectionKind {
    /// The flags SQLite opens the file with.
    pub fn flags(self) -> OpenFlags {
        match self {
            ConnectionKind::Writer | ConnectionKind::Acceptances => {
                OpenFlags::SQLITE_OPEN_READ_WRITE
                    | OpenFlags::SQLITE_OPEN_CREATE
                    | OpenFlags::SQLITE_OPEN_NO_MUTEX
                    | OpenFlags::SQLITE_OPEN_URI
            }
            ConnectionKind::Reader => {
                OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX | OpenFlags::SQLITE_OPEN_URI
            }
        }
    }

    /// Sets this kind's pragmas on a freshly opened connection, and gives the index's connections
    /// the `stored_line` function ([`register_stored_line`]).
    pub fn configure(self, conn: &Connection) -> rusqlite::Result<()> {
        if self != ConnectionKind::Acceptances {
            register_stored_line(conn)?;
        }
        match self {
            ConnectionKind::Writer => conn.execute_batch(
                "
                -- Wait for readers' locks instead of failing at once.
                PRAGMA busy_timeout = 5000;
                -- Stored lines average about a kilobyte: 16 KiB pages hold them with less per-page
                -- overhead. (Only takes effect when the file is created.)
                PRAGMA page_size = 16384;
                -- Readers (the HTTP server, sqlite3 users) never block the writer, nor it them.
                PRAGMA journal_mode = WAL;
                -- In WAL mode a commit survives a crash of this process; a power cut may lose the last
                -- transactions, which the next catch-up re-reads from the transcripts (the index is
                -- derived).
                PRAGMA synchronous = NORMAL;
                -- A 16 MiB page cache: enough for batched inserts, and inside the indexer's memory bound.
                PRAGMA cache_size = -16384;
                -- media and failed_images reference entries, entries reference files: checked, whatever
                -- the SQLite build's default. (A bulk load turns this off for its duration.)
                PRAGMA foreign_keys = ON;
                ",
            ),
            ConnectionKind::Reader => conn.execute_batch(
                "
                -- Wait for the writer's checkpoints instead of failing at once.
                PRAGMA busy_timeout = 5000;
                -- Readers never write, whatever a caller's SQL says (the flags say so too).
                PRAGMA query_only = ON;
                ",
            ),
            ConnectionKind::Acceptances => conn.execute_batch(
                "
                PRAGMA busy_timeout = 5000;
                -- Readers (sqlite3 users) do not block sends.
                PRAGMA journal_mode = WAL;
                -- A send is answered only after its row is on disk: a commit survives a power cut.
                PRAGMA synchronous = FULL;
                PRAGMA foreign_keys = ON;
                ",
            ),
        }
    }

    /// Opens the index at `path` as this kind. A writer creates or migrates it (moving aside a file
    /// it cannot use); a reader needs it to exist at this version.
    pub fn open(self, path: &Path) -> Result<Connection> {
        match self {
            ConnectionKind::Writer => open_writer(path),
            ConnectionKind::Reader => open_reader(path),
            ConnectionKind::Acceptances => open_acceptances(path),
        }
    }
}

/// Gives `conn` the SQL function `stored_line(stripped)`: a stored line as text, whether the row
/// keeps it as text (rows written before the index had a dictionary) or packed
/// ([`crate::pack`]). A dictionary the process does not know yet is read from the
/// `dictionaries` table of the database `conn` has open, on a connection of its own. A line that
/// cannot be unpacked is an SQL error that says why.
pub fn register_stored_line(conn: &Connection) -> rusqlite::Result<()> {
    use rusqlite::functions::FunctionFlags;
    use rusqlite::types::ValueRef;
    let path = conn.path().filter(|p| !p.is_empty()).map(PathBuf::from);
    conn.create_scalar_function(
        "stored_line",
        1,
        FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DETERMINISTIC,
        move |ctx| match ctx.get_raw(0) {
            ValueRef::Null => Ok(None),
            ValueRef::Text(text) => Ok(Some(String::from_utf8_lossy(text).into_owned())),
            ValueRef::Blob(frame) => pack::unpack(frame, |id| load_dictionary(path.as_deref(), id))
                .map(Some)
                .map_err(|e| rusqlite::Error::UserFunctionError(Box::new(e))),
            ValueRef::Integer(_) | ValueRef::Real(_) => {
                Err(rusqlite::Error::UserFunctionError("a stored line that is a number".into()))
            }
        },
    )
}

/// Gives `conn` the SQL function `plain_title(words)`: [`crate::format::plain_title`], which the
/// step to version 18 writes the titles made of a person's first words with.
fn register_plain_title(conn: &Connection) -> rusqlite::Result<()> {
    use rusqlite::functions::FunctionFlags;
    conn.create_scalar_function(
        "plain_title",
        1,
        FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DETERMINISTIC,
        |ctx| Ok(ctx.get::<Option<String>>(0)?.map(|words| crate::format::plain_title(&words))),
    )
}

/// The directory the data directory keeps its vault in (the index crate's `vault::VAULT_DIR`).
const VAULT_DIR: &str = "vault";

/// Where the vault link recorded as `stored` is, for the index in `data_dir`: `stored` itself where
/// it is absolute; else the file of that name in the data directory's vault, made absolute (a
/// relative link was relative to the directory its writer ran in, which is not known; every link
/// is in the vault's directory).
pub fn vault_link(data_dir: &Path, stored: &str) -> String {
    let stored_path = Path::new(stored);
    if stored_path.is_absolute() {
        return stored.to_owned();
    }
    match stored_path.file_name() {
        Some(name) => crate::files::absolute(data_dir).join(VAULT_DIR).join(name).to_string_lossy().into_owned(),
        None => stored.to_owned(),
    }
}

/// Gives `conn`, a writer's connection to the index at `path`, the SQL functions the step to
/// version 19 mends rows with: `vault_link(stored)` ([`vault_link`] in the index's directory),
/// `bounded_title(title)` ([`crate::format::bounded_title`]) and `bounded_title_max()`.
fn register_mending(conn: &Connection, path: &Path) -> rusqlite::Result<()> {
    use rusqlite::functions::FunctionFlags;
    let data_dir = path.parent().unwrap_or(Path::new(".")).to_owned();
    conn.create_scalar_function(
        "vault_link",
        1,
        FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DETERMINISTIC,
        move |ctx| Ok(ctx.get::<Option<String>>(0)?.map(|stored| vault_link(&data_dir, &stored))),
    )?;
    conn.create_scalar_function(
        "bounded_title",
        1,
        FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DETERMINISTIC,
        |ctx| Ok(ctx.get::<Option<String>>(0)?.map(|title| crate::format::bounded_title(&title))),
    )?;
    conn.create_scalar_function(
        "bounded_title_max",
        0,
        FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DETERMINISTIC,
        |_| Ok(crate::format::TITLE_MAX_CHARS as i64),
    )
}

/// The dictionary `id` of the index at `path`, read on a connection of its own.
fn load_dictionary(path: Option<&Path>, id: u32) -> Result<Option<pack::Dictionary>, pack::PackError> {
    let Some(path) = path else { return Ok(None) };
    let read = || -> rusqlite::Result<Option<Vec<u8>>> {
        let conn = Connection::open_with_flags(path, ConnectionKind::Reader.flags())?;
        conn.busy_timeout(std::time::Duration::from_secs(5))?;
        conn.query_row("SELECT bytes FROM dictionaries WHERE id = ?1", [id], |r| r.get(0)).optional()
    };
    match read() {
        Ok(Some(bytes)) => pack::Dictionary::from_bytes(bytes).map(Some),
        Ok(None) => Ok(None),
        Err(e) => Err(pack::PackError(format!("dictionary {id} could not be read: {e}"))),
    }
}

/// The dictionaries of the index `conn` has open, made known to the process; the newest (the one
/// new lines are packed with), if any.
pub fn load_dictionaries(conn: &Connection) -> Result<Option<pack::Dictionary>> {
    let mut stmt = conn.prepare("SELECT bytes FROM dictionaries ORDER BY rowid")?;
    let mut rows = stmt.query([])?;
    let mut newest = None;
    while let Some(r) = rows.next()? {
        match pack::Dictionary::from_bytes(r.get(0)?) {
            Ok(dictionary) => {
                pack::remember(&dictionary);
                newest = Some(dictionary);
            }
            Err(e) => tracing::warn!("a dictionary of the index is unusable: {e}"),
        }
    }
    Ok(newest)
}

fn open_writer(path: &Path) -> Result<Connection> {
    if let Some(dir) = path.parent() {
        crate::files::keep_private(dir, DATA_DIR_NAMES).map_err(|e| Error::io(dir, e))?;
    }
    crate::files::create_private(path).map_err(|e| Error::io(path, e))?;
    match try_open_writer(path) {
        Ok(conn) => Ok(conn),
        Err(Unusable::Corrupt(why)) => {
            let moved = move_aside(path, "corrupt")?;
            tracing::warn!(path = %path.display(), moved_to = %moved.display(), "index is not a usable SQLite database ({why}); moved it aside and building a new one");
            try_open_writer(path).map_err(Unusable::into_error)
        }
        Err(Unusable::Newer(found)) => {
            let moved = move_aside(path, &format!("v{found}"))?;
            tracing::warn!(path = %path.display(), moved_to = %moved.display(), found, supported = VERSION, "index was written by a newer scrollback; moved it aside and building a new one");
            try_open_writer(path).map_err(Unusable::into_error)
        }
        Err(Unusable::Other(e)) => Err(e),
    }
}

fn open_reader(path: &Path) -> Result<Connection> {
    if !path.exists() {
        return Err(Error::io(
            path,
            std::io::Error::new(std::io::ErrorKind::NotFound, "no index here yet: run `scrollback index` first"),
        ));
    }
    let conn = Connection::open_with_flags(path, ConnectionKind::Reader.flags())?;
    ConnectionKind::Reader.configure(&conn)?;
    let found: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    if found != VERSION {
        return Err(Error::Schema { path: path.to_owned(), found, supported: VERSION });
    }
    Ok(conn)
}

fn open_acceptances(path: &Path) -> Result<Connection> {
    if let Some(dir) = path.parent() {
        crate::files::keep_private(dir, DATA_DIR_NAMES).map_err(|e| Error::io(dir, e))?;
    }
    crate::files::create_private(path).map_err(|e| Error::io(path, e))?;
    let conn = Connection::open_with_flags(path, ConnectionKind::Acceptances.flags())?;
    configure_acceptances(&conn)?;
    let found: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    if found > ACCEPT_VERSION {
        return Err(Error::Schema { path: path.to_owned(), found, supported: ACCEPT_VERSION });
    }
    let schema =
        Schema { what: "acceptance", sql: ACCEPT_SCHEMA, version: ACCEPT_VERSION, migrations: ACCEPT_MIGRATIONS };
    schema.migrate(&conn, found).map_err(|e| match e {
        // Primary data is never moved aside: the person must look at it.
        Unusable::Corrupt(why) => Error::Sqlite(rusqlite::Error::SqliteFailure(
            rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_CORRUPT),
            Some(format!("{}: {why}; it holds sent messages, so scrollback leaves it as it is", path.display())),
        )),
        other => other.into_error(),
    })?;
    Ok(conn)
}

/// Configures a connection to the acceptance record, again while another connection holds the
/// lock it needs, for at most the busy timeout: the first connections to a new record each switch
/// it to WAL, and SQLite answers all but one `SQLITE_BUSY` at once rather than wait (its busy handler
/// is not called where waiting could deadlock). A server and a push do open one at once.
fn configure_acceptances(conn: &Connection) -> rusqlite::Result<()> {
    let start = Instant::now();
    loop {
        match ConnectionKind::Acceptances.configure(conn) {
            Err(rusqlite::Error::SqliteFailure(e, _))
                if e.code == rusqlite::ErrorCode::DatabaseBusy && start.elapsed() < ACCEPT_BUSY_WAIT =>
            {
                std::thread::sleep(Duration::from_millis(10));
            }
            other => return other,
        }
    }
}

/// How long [`configure_acceptances`] tries again: the busy timeout it sets.
const ACCEPT_BUSY_WAIT: Duration = Duration::from_secs(5);

enum Unusable {
    Corrupt(String),
    Newer(i64),
    Other(Error),
}

impl Unusable {
    fn into_error(self) -> Error {
        match self {
            Unusable::Other(e) => e,
            Unusable::Corrupt(why) => Error::Sqlite(rusqlite::Error::SqliteFailure(
                rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_CORRUPT),
                Some(why),
            )),
            Unusable::Newer(found) => Error::Schema { path: PathBuf::new(), found, supported: VERSION },
        }
    }
}

impl From<rusqlite::Error> for Unusable {
    fn from(e: rusqlite::Error) -> Self {
        match e.sqlite_error_code() {
            Some(ErrorCode::NotADatabase | ErrorCode::DatabaseCorrupt) => Unusable::Corrupt(e.to_string()),
            _ => Unusable::Other(e.into()),
        }
    }
}

fn try_open_writer(path: &Path) -> Result<Connection, Unusable> {
    let conn = Connection::open_with_flags(path, ConnectionKind::Writer.flags())?;
    ConnectionKind::Writer.configure(&conn)?;
    register_plain_title(&conn)?;
    register_mending(&conn, path)?;
    let found: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    if found > VERSION {
        return Err(Unusable::Newer(found));
    }
    let schema = Schema { what: "index", sql: SCHEMA, version: VERSION, migrations: MIGRATIONS };
    schema.migrate(&conn, found)?;
    Ok(conn)
}

/// A database file's schema, its version and the steps that lead to it.
struct Schema {
    what: &'static str,
    sql: &'static str,
    version: i64,
    migrations: &'static [&'static str],
}

impl Schema {
    /// Creates the schema or takes it from version `found` to the current one, a step per
    /// transaction. Each step reads the version again under its write lock: another connection
    /// opening the same file at the same moment (a server and a push opening the acceptance record)
    /// may have taken the step while this one waited, and it is not taken twice.
    fn migrate(&self, conn: &Connection, found: i64) -> Result<(), Unusable> {
        let Schema { what, version, .. } = self;
        let mut at = found;
        while at < *version {
            conn.execute_batch("BEGIN IMMEDIATE")?;
            let step = self.step(conn, at);
            match step {
                Ok(Some(now)) => {
                    conn.execute_batch("COMMIT")?;
                    if at == 0 {
                        tracing::info!(version, "created {what} schema");
                    } else {
                        tracing::info!(from = at, to = now, "migrated {what} schema");
                    }
                    at = now;
                }
                Ok(None) => {
                    // Taken by another connection meanwhile: go on from where it left it.
                    conn.execute_batch("COMMIT")?;
                    at = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
                }
                Err(e) => {
                    let _ = conn.execute_batch("ROLLBACK");
                    return Err(e);
                }
            }
        }
        Ok(())
    }

    /// Inside a write transaction: the step from version `at` (the whole schema from 0), and the
    /// version it leads to; `None` when the file is no longer at `at`.
    fn step(&self, conn: &Connection, at: i64) -> Result<Option<i64>, Unusable> {
        let now: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
        if now != at {
            return Ok(None);
        }
        if at == 0 {
            let empty: bool = conn.query_row("SELECT count(*) = 0 FROM sqlite_master", [], |r| r.get(0))?;
            if !empty {
                return Err(Unusable::Corrupt("tables present but no schema version".into()));
            }
            conn.execute_batch(&format!("{}\nPRAGMA user_version = {};", self.sql, self.version))?;
            return Ok(Some(self.version));
        }
        let step = self.migrations[(at - 1) as usize];
        conn.execute_batch(&format!("{step}\nPRAGMA user_version = {};", at + 1))?;
        Ok(Some(at + 1))
    }
}

/// Renames `path` (and its WAL files) to `<path>.<why>-<unix seconds>`; returns the new name.
pub fn move_aside(path: &Path, why: &str) -> Result<PathBuf> {
    let secs = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
    let mut name = path.as_os_str().to_owned();
    name.push(format!(".{why}-{secs}"));
    let target = PathBuf::from(name);
    std::fs::rename(path, &target).map_err(|e| Error::io(path, e))?;
    for suffix in ["-wal", "-shm"] {
        let mut side = path.as_os_str().to_owned();
        side.push(suffix);
        let mut side_target = target.as_os_str().to_owned();
        side_target.push(suffix);
        if Path::new(&side).exists() {
            std::fs::rename(&side, &side_target).map_err(|e| Error::io(PathBuf::from(&side), e))?;
        }
    }
    Ok(target)
}

/// SQLite's integrity check of the file `conn` is open on: each problem it reports (at most 100),
/// or SQLite's own error as the one problem; empty when the file is sound.
pub fn integrity_problems(conn: &Connection) -> Vec<String> {
    let lines = conn
        .prepare("PRAGMA integrity_check(100)")
        .and_then(|mut stmt| stmt.query_map([], |r| r.get::<_, String>(0))?.collect::<rusqlite::Result<Vec<_>>>());
    match lines {
        Ok(lines) => lines.into_iter().filter(|l| l != "ok").collect(),
        Err(e) => vec![e.to_string()],
    }
}

/// How long a read of an agent's database waits while the agent holds a lock it needs (a reader of
/// a database in WAL mode rarely waits at all).
const AGENT_BUSY: Duration = Duration::from_secs(5);

/// Opens an agent's database (OpenCode's) read-only: never written, never created, and never a FIFO
/// or a device; its write-ahead log read as SQLite reads it (not `immutable`: the newest rows are
/// in the log).
pub fn open_agent_database(path: &Path) -> Result<Connection> {
    let meta = std::fs::metadata(path).map_err(|e| Error::io(path, e))?;
    if !meta.is_file() {
        return Err(Error::io(path, std::io::Error::other("not a regular file")));
    }
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = Connection::open_with_flags(path, flags)?;
    conn.busy_timeout(AGENT_BUSY)?;
    Ok(conn)
}

/// Writes `session` of the agent's database `conn` (whose format's rows are `rows`) to `out`, as
/// its format renders it, in one read transaction: one state of its rows whatever the agent writes
/// meanwhile. Returns the session's stamp in that state, or `None` (and nothing written) if the
/// session is not there. `path` names the session in errors.
pub fn render_session(
    rows: &dyn crate::format::Rows,
    conn: &Connection,
    session: &str,
    path: &Path,
    out: &mut std::fs::File,
) -> Result<Option<i64>> {
    let read = conn.unchecked_transaction()?;
    let Some(stamp) = rows.stamp(&read, session)? else { return Ok(None) };
    let mut out = std::io::BufWriter::with_capacity(64 << 10, out);
    rows.render(&read, session, &mut out).map_err(|e| Error::io(path, e))?;
    std::io::Write::flush(&mut out).map_err(|e| Error::io(path, e))?;
    Ok(Some(stamp))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every object of the schema: its SQL, except that a plain table is described by its columns
    /// (a migration adds columns with `ALTER TABLE`, which words the stored SQL its own way).
    fn objects(conn: &Connection) -> Vec<(String, String, Option<String>)> {
        let mut stmt = conn
            .prepare("SELECT type, name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY type, name")
            .unwrap();
        let objects: Vec<(String, String, Option<String>)> = stmt
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap();
        objects
            .into_iter()
            .map(|(kind, name, sql)| {
                if kind != "table" || sql.as_deref().is_some_and(|s| s.starts_with("CREATE VIRTUAL")) {
                    return (kind, name, sql);
                }
                let mut columns = conn
                    .prepare(&format!(
                        "SELECT name, type, \"notnull\", dflt_value, pk FROM pragma_table_info('{name}')"
                    ))
                    .unwrap();
                let columns: Vec<String> = columns
                    .query_map([], |r| {
                        Ok(format!(
                            "{} {} {} {:?} {}",
                            r.get::<_, String>(0)?,
                            r.get::<_, String>(1)?,
                            r.get::<_, bool>(2)?,
                            r.get::<_, Option<String>>(3)?,
                            r.get::<_, i64>(4)?
                        ))
                    })
                    .unwrap()
                    .collect::<rusqlite::Result<_>>()
                    .unwrap();
                (kind, name, Some(columns.join(", ")))
            })
            .collect()
    }

    #[test]
    fn every_old_version_migrates_to_the_fresh_schema() -> Result<()> {
        let dir = tempfile::tempdir().unwrap();
        let fresh = ConnectionKind::Writer.open(&dir.path().join("fresh.sqlite3"))?;
        assert_eq!(MIGRATIONS.len() as i64, VERSION - 1, "one migration per version step");
        for version in 1..VERSION {
            let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/fixtures/schema-v{version}.sql"));
            let old_sql = std::fs::read_to_string(&fixture).expect("keep each old schema as a fixture");
            let path = dir.path().join(format!("v{version}.sqlite3"));
            let old = Connection::open(&path)?;
            old.execute_batch(&format!("{old_sql}\nPRAGMA user_version = {version};"))?;
            // Rows written by the old version stay, and stay searchable.
            old.execute_batch(
                "INSERT INTO files (id, path, session_id, dev, inode, fingerprint, fingerprint_len, tail_hash, size,
                                    mtime_ns, checkpoint, lines, state, indexed_at)
                 VALUES (1, '/t/s.jsonl', 's', 0, 0, '', 0, '', 0, 0, 0, 0, 'live', '');
                 INSERT INTO entries (file_id, session_id, line, offset, length, text)
                 VALUES (1, 's', 1, 0, 10, 'two photos of the harbour');",
            )?;
            // A session titled by its first words, marked up, and one a summary named.
            old.execute_batch(
                "INSERT INTO sessions (id, title, title_rank) VALUES ('s', 'Fix the **parser**', 1), ('t', 'A **bold** summary', 2);",
            )?;
            if version >= 13 {
                // A tool call and an edit, with the line's time on both as versions before 16 kept,
                // and on the edit alone from 16 on.
                let call_time = if version < 16 { "'2026-01-01T00:00:00Z'" } else { "NULL" };
                old.execute_batch(&format!(
                    "INSERT INTO tool_events (entry_id, ordinal, session_id, tool, failed, path, added, removed, timestamp)
                     VALUES (1, 0, 's', 'Bash', 0, NULL, NULL, NULL, {call_time}),
                            (1, 1, 's', 'Edit', 0, 'a.rs', 2, 1, '2026-01-01T00:00:00Z');",
                ))?;
            }
            drop(old);
            let migrated = ConnectionKind::Writer.open(&path)?;
            assert_eq!(objects(&migrated), objects(&fresh), "v{version} migrated");
            if version >= 13 {
                let events: Vec<(String, Option<String>)> = migrated
                    .prepare("SELECT tool, timestamp FROM tool_events WHERE session_id = 's' ORDER BY ordinal")?
                    .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
                    .collect::<rusqlite::Result<_>>()?;
                let edit_time = Some("2026-01-01T00:00:00Z".to_owned());
                assert_eq!(
                    events,
                    [("Bash".to_owned(), None), ("Edit".to_owned(), edit_time)],
                    "v{version}'s tool events"
                );
            }
            let titles: Vec<String> = migrated
                .prepare("SELECT title FROM sessions ORDER BY id")?
                .query_map([], |r| r.get(0))?
                .collect::<rusqlite::Result<_>>()?;
            // (From version 18 on, a writer stored first words plain: the step to 18 made them so.)
            let first = if version < 18 { "Fix the parser" } else { "Fix the **parser**" };
            assert_eq!(titles, [first, "A **bold** summary"], "v{version}'s titles");
            let hits: i64 = migrated.query_row(
                "SELECT count(*) FROM entries_fts WHERE entries_fts MATCH 'harbour photo*'",
                [],
                |r| r.get(0),
            )?;
            assert_eq!(hits, 1, "v{version}'s rows are in the migrated full-text index");
        }
        let version: i64 = fresh.query_row("PRAGMA user_version", [], |r| r.get(0))?;
        assert_eq!(version, VERSION);
        Ok(())
    }

    #[test]
    fn a_version_18_index_gets_absolute_vault_links_and_bounded_titles() -> Result<()> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(INDEX_FILE);
        let old = Connection::open(&path)?;
        let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/schema-v18.sql");
        old.execute_batch(&std::fs::read_to_string(fixture).expect("the version 18 schema"))?;
        old.execute_batch("PRAGMA user_version = 18;")?;
        let absolute = dir.path().join("vault/2-3.jsonl").to_string_lossy().into_owned();
        for (id, vault) in [(1, Some("rel-data/vault/1-2.jsonl")), (2, Some(absolute.as_str())), (3, None)] {
            old.execute(
                "INSERT INTO files (id, path, session_id, dev, inode, fingerprint, fingerprint_len, tail_hash, size,
                                    mtime_ns, checkpoint, lines, state, indexed_at, vault)
                 VALUES (?1, '/t/' || ?1 || '.jsonl', 's', 0, 0, '', 0, '', 0, 0, 0, 0, 'gone', '', ?2)",
                rusqlite::params![id, vault],
            )?;
        }
        let long = "é".repeat(crate::format::TITLE_MAX_CHARS * 100);
        old.execute("INSERT INTO sessions (id, title, title_rank) VALUES ('s', ?1, 4), ('t', 'short', 4)", [&long])?;
        drop(old);
        let migrated = ConnectionKind::Writer.open(&path)?;
        let links: Vec<Option<String>> = migrated
            .prepare("SELECT vault FROM files ORDER BY id")?
            .query_map([], |r| r.get(0))?
            .collect::<rusqlite::Result<_>>()?;
        let mended = dir.path().join("vault/1-2.jsonl").to_string_lossy().into_owned();
        assert_eq!(links, [Some(mended), Some(absolute), None]);
        let titles: Vec<String> = migrated
            .prepare("SELECT title FROM sessions ORDER BY id")?
            .query_map([], |r| r.get(0))?
            .collect::<rusqlite::Result<_>>()?;
        assert_eq!(titles, ["é".repeat(crate::format::TITLE_MAX_CHARS), "short".to_owned()]);
        Ok(())
    }

    #[test]
    fn a_version_10_index_gets_the_branch_its_stored_lines_name_last() -> Result<()> {
        use crate::codec::order::Order;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(INDEX_FILE);
        let old = Connection::open(&path)?;
        let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/schema-v10.sql");
        old.execute_batch(&std::fs::read_to_string(fixture).expect("the version 10 schema"))?;
        old.execute_batch(
            r#"PRAGMA user_version = 10;
            INSERT INTO files (id, path, session_id, dev, inode, fingerprint, fingerprint_len, tail_hash, size,
                               mtime_ns, checkpoint, lines, state, indexed_at)
            VALUES (1, '/t/a.jsonl', 'a', 0, 0, '', 0, '', 0, 0, 0, 0, 'live', ''),
                   (2, '/t/b.jsonl', 'b', 0, 0, '', 0, '', 0, 0, 0, 0, 'live', '');
            INSERT INTO sessions (id) VALUES ('a'), ('b'), ('c');
            INSERT INTO entries (file_id, session_id, line, offset, length, type, stripped, sort_at, sort_file,
                                 duplicate)
            VALUES (1, 'a', 1, 0, 1, 'user', '{"type":"user","gitBranch":"main"}', 't1', 0, 0),
                   (1, 'a', 2, 1, 1, 'user', '{"type":"user","gitBranch":"feature"}', 't2', 0, 0),
                   (1, 'a', 3, 2, 1, 'user', '{"type":"user","gitBranch":"a copy"}', 't3', 0, 1),
                   (1, 'a', 4, 3, 1, 'summary', '{"type":"summary"}', 't3', 0, 0),
                   (2, 'b', 1, 0, 1, 'session_meta', '{"type":"session_meta","payload":{"git":{"branch":"trunk"}}}',
                    't1', 0, 0),
                   (2, 'b', 2, 1, 1, 'response_item', '{"type":"response_item","payload":{}}', 't2', 0, 0);"#,
        )?;
        drop(old);
        let migrated = ConnectionKind::Writer.open(&path)?;
        let branches: Vec<(String, Option<String>, Option<String>)> = migrated
            .prepare("SELECT id, git_branch, git_branch_order FROM sessions ORDER BY id")?
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
            .collect::<rusqlite::Result<_>>()?;
        let key = |at: &str, line: i64| Some(Order { at: at.to_owned(), file: 0, line }.key());
        assert_eq!(
            branches,
            [
                ("a".to_owned(), Some("feature".to_owned()), key("t2", 2)),
                ("b".to_owned(), Some("trunk".to_owned()), key("t1", 1)),
                ("c".to_owned(), None, None),
            ]
        );
        Ok(())
    }

    #[test]
    fn every_old_acceptance_record_migrates_to_the_fresh_schema_keeping_its_rows() -> Result<()> {
        let dir = tempfile::tempdir().unwrap();
        let fresh = ConnectionKind::Acceptances.open(&dir.path().join("fresh.sqlite3"))?;
        assert_eq!(ACCEPT_MIGRATIONS.len() as i64, ACCEPT_VERSION - 1, "one migration per version step");
        for version in 1..ACCEPT_VERSION {
            let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/fixtures/accept-v{version}.sql"));
            let old_sql = std::fs::read_to_string(&fixture).expect("keep each old schema as a fixture");
            let path = dir.path().join(format!("a{version}.sqlite3"));
            let old = Connection::open(&path)?;
            old.execute_batch(&format!(
                "{old_sql}\nPRAGMA user_version = {version};
                 INSERT INTO chats (chat_id, created_at) VALUES ('c', 'now');
                 INSERT INTO acceptances (client_message_id, chat_id, text, accepted_at) VALUES ('m', 'c', 'hi', 'now');"
            ))?;
            drop(old);
            let migrated = ConnectionKind::Acceptances.open(&path)?;
            assert_eq!(objects(&migrated), objects(&fresh), "v{version} migrated");
            let kept: i64 = migrated.query_row("SELECT count(*) FROM acceptances", [], |r| r.get(0))?;
            assert_eq!(kept, 1, "v{version}'s sends are kept");
        }
        Ok(())
    }

    #[test]
    fn newer_and_corrupt_files_are_moved_aside_not_deleted() -> Result<()> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(INDEX_FILE);
        let newer = Connection::open(&path)?;
        newer.execute_batch("CREATE TABLE future(x); PRAGMA user_version = 99;")?;
        drop(newer);
        let conn = open_writer(&path)?;
        let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
        assert_eq!(version, VERSION);
        drop(conn);
        let names = |dir: &Path| -> Vec<String> {
            let mut v: Vec<String> =
                std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
            v.sort();
            v
        };
        let moved: Vec<String> = names(dir.path()).into_iter().filter(|n| n.contains(".v99-")).collect();
        assert_eq!(moved.len(), 1);
        let kept = Connection::open(dir.path().join(&moved[0]))?;
        let version: i64 = kept.query_row("PRAGMA user_version", [], |r| r.get(0))?;
        assert_eq!(version, 99);

        let corrupt = dir.path().join("corrupt.sqlite3");
        std::fs::write(&corrupt, b"this is not a database, but somebody's data".repeat(200)).unwrap();
        open_writer(&corrupt)?;
        assert!(names(dir.path()).iter().any(|n| n.starts_with("corrupt.sqlite3.corrupt-")));
        Ok(())
    }

    #[test]
    fn the_acceptance_record_is_created_and_never_moved_aside() -> Result<()> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(ACCEPT_FILE);
        let conn = ConnectionKind::Acceptances.open(&path)?;
        assert_eq!(ACCEPT_MIGRATIONS.len() as i64, ACCEPT_VERSION - 1, "one migration per version step");
        let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
        assert_eq!(version, ACCEPT_VERSION);
        let sync: i64 = conn.query_row("PRAGMA synchronous", [], |r| r.get(0))?;
        assert_eq!(sync, 2, "synchronous = FULL");
        conn.execute_batch("PRAGMA user_version = 99")?;
        drop(conn);
        assert!(matches!(ConnectionKind::Acceptances.open(&path), Err(Error::Schema { found: 99, .. })));
        let garbage = dir.path().join("garbage.sqlite3");
        std::fs::write(&garbage, b"sent messages, not a database".repeat(200)).unwrap();
        assert!(ConnectionKind::Acceptances.open(&garbage).is_err());
        let mut names: Vec<String> =
            std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
        names.sort();
        assert!(names.iter().all(|n| !n.contains(".corrupt-") && !n.contains(".v99-")), "nothing moved: {names:?}");
        Ok(())
    }

    #[test]
    fn readers_cannot_write() -> Result<()> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(INDEX_FILE);
        drop(ConnectionKind::Writer.open(&path)?);
        let reader = ConnectionKind::Reader.open(&path)?;
        for sql in
            ["INSERT INTO scrollback_meta (key, value) VALUES ('k', 'v')", "DELETE FROM files", "CREATE TABLE mine (x)"]
        {
            let refused = reader.execute(sql, []);
            assert!(refused.is_err(), "a reader ran {sql:?}");
        }
        drop(reader);
        let writer = ConnectionKind::Writer.open(&path)?;
        let rows: i64 = writer.query_row("SELECT count(*) FROM scrollback_meta", [], |r| r.get(0))?;
        assert_eq!(rows, 0);
        Ok(())
    }

    #[test]
    fn connections_opening_a_new_acceptance_record_at_once_make_its_schema_once() {
        // A server and a push may both open a data directory's acceptance record as it is made:
        // the second used to find the tables there and fail ("table acceptances already exists").
        for _ in 0..20 {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join(ACCEPT_FILE);
            let opened: Vec<_> = (0..6)
                .map(|_| {
                    let path = path.clone();
                    std::thread::spawn(move || ConnectionKind::Acceptances.open(&path).map(|_| ()))
                })
                .collect();
            for t in opened {
                t.join().unwrap().unwrap();
            }
            let conn = ConnectionKind::Acceptances.open(&path).unwrap();
            let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0)).unwrap();
            assert_eq!(version, ACCEPT_VERSION);
        }
    }

    #[test]
    fn the_writer_checks_foreign_keys() -> Result<()> {
        let dir = tempfile::tempdir().unwrap();
        let writer = ConnectionKind::Writer.open(&dir.path().join(INDEX_FILE))?;
        let on: bool = writer.query_row("PRAGMA foreign_keys", [], |r| r.get(0))?;
        assert!(on);
        let orphan = writer.execute(
            "INSERT INTO media (entry_id, ordinal, kind, offset, length, encoding, decoded_length, blake3)
             VALUES (42, 0, 'image', 0, 4, 'base64', 3, '')",
            [],
        );
        assert!(orphan.is_err(), "a media row without its entry was accepted");
        Ok(())
    }

    #[test]
    fn reader_refuses_missing_and_other_versions() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(INDEX_FILE);
        assert!(open_reader(&path).is_err());
        Connection::open(&path).unwrap().execute_batch("PRAGMA user_version = 99;").unwrap();
        assert!(matches!(open_reader(&path), Err(Error::Schema { found: 99, .. })));
    }
}
