-- scrollback index schema, version 23 (PRAGMA user_version = 23).
--
-- The one source of truth for the database: every table, index, view and trigger. The offsets below
-- are a frozen format, documented byte for byte in docs/schema.md ("Offsets are a frozen format"):
--   * entries.offset / entries.length: the line's bytes in the transcript, without its terminator
--     ("\n" or "\r\n") and, on the first line, without a UTF-8 byte order mark;
--   * media.offset / media.length: the payload's bytes in the transcript, absolute, between the JSON
--     string's quotes (escapes included; for a data URL, from "data:" on).
-- No payload byte is ever stored here: the stored line carries STRIPPED_MEDIA_MARKER in its place.

-- One row per transcript file ever seen. A path has at most one live row; a file that disappeared
-- keeps its row (state 'gone') and its entries, and the same path appearing again is a new row.
CREATE TABLE files (
    id              INTEGER PRIMARY KEY,
    path            TEXT    NOT NULL,           -- absolute path
    session_id      TEXT    NOT NULL,           -- the session of its lines that name none (its name's, or its first line's)
    dev             INTEGER NOT NULL,           -- device of the file when last read
    inode           INTEGER NOT NULL,           -- inode of the file when last read
    fingerprint     TEXT    NOT NULL,           -- blake3 (hex) of the first fingerprint_len bytes
    fingerprint_len INTEGER NOT NULL,
    tail_hash       TEXT    NOT NULL,           -- blake3 (hex) of the bytes just before checkpoint (up to 256)
    size            INTEGER NOT NULL,           -- size when last read
    mtime_ns        INTEGER NOT NULL,           -- modification time when last read (ns since the epoch)
    checkpoint      INTEGER NOT NULL,           -- offset just past the last complete line indexed
    lines           INTEGER NOT NULL,           -- complete lines indexed (the next line's number - 1)
    state           TEXT    NOT NULL CHECK (state IN ('live', 'gone')),
    indexed_at      TEXT    NOT NULL,           -- UTC, RFC 3339
    gone_at         TEXT,                       -- UTC, RFC 3339, when it was seen gone
    vault           TEXT,                       -- absolute path of its hard link in <data dir>/vault, or NULL
                                                -- (absolute whatever directory the writer ran in)
    agent           TEXT    NOT NULL DEFAULT 'claude', -- its format: claude, codex, gemini
    generation      INTEGER NOT NULL DEFAULT 0  -- how many times it was read again from its start (its
                                                -- rows replaced): a push's watermark holds within one
);
CREATE UNIQUE INDEX files_live_path ON files(path) WHERE state = 'live';
CREATE INDEX files_identity ON files(dev, inode); -- a new path's file known under another name
CREATE INDEX files_gone_path ON files(path) WHERE state = 'gone'; -- a new path's transcript seen gone there
CREATE INDEX files_vault ON files(vault) WHERE vault IS NOT NULL; -- whether a vault link is still needed

-- One row per conversation, kept up to date by the indexer.
CREATE TABLE sessions (
    id              TEXT    PRIMARY KEY,
    project         TEXT,                       -- cwd of the first entry that names one
    title           TEXT,                       -- custom title > AI title > summary > first user text (without Markdown's marks),
                                                -- at most 200 characters (format::TITLE_MAX_CHARS)
    title_rank      INTEGER NOT NULL DEFAULT 0, -- which of those the title is (4 .. 1; 0 none)
    first_timestamp TEXT,
    last_timestamp  TEXT,
    entries         INTEGER NOT NULL DEFAULT 0, -- entries history returns with side chains (invalid lines too)
    images          INTEGER NOT NULL DEFAULT 0, -- image blocks under message.content, failed ones included
    sidechain_entries INTEGER NOT NULL DEFAULT 0, -- of `entries`, those on a side chain (sub-agents)
    title_order     TEXT,                       -- the conversation order of the entry the title is from
    agent           TEXT    NOT NULL DEFAULT 'claude', -- the agent that wrote it: claude, codex, gemini
    forked_from     TEXT,                       -- the session it was forked from, as its transcript says
    git_branch      TEXT,                       -- the git branch its transcript names last, as written
    git_branch_order TEXT,                      -- the conversation order of the entry the branch is from
    first_entry     INTEGER,                    -- the lowest and highest `entries.id` of its entries: a search
    last_entry      INTEGER                     --    counts a session's hits within them
);
CREATE INDEX sessions_last ON sessions(last_timestamp);
CREATE INDEX sessions_agent ON sessions(agent, last_timestamp);

-- One row per complete line. A line that is not JSON or not UTF-8 is a row too, with `invalid` set
-- and no stored line.
CREATE TABLE entries (
    id           INTEGER PRIMARY KEY,
    file_id      INTEGER NOT NULL REFERENCES files(id),
    session_id   TEXT    NOT NULL,              -- the line's sessionId, else the file's
    line         INTEGER NOT NULL,              -- 1-based line number in the file
    offset       INTEGER NOT NULL,              -- byte offset of the line in the file
    length       INTEGER NOT NULL,              -- bytes of the line, terminator excluded
    uuid         TEXT,
    parent_uuid  TEXT,
    type         TEXT,                          -- user, assistant, system, summary, ... as written
    role         TEXT,                          -- message.role
    timestamp    TEXT,
    is_sidechain INTEGER NOT NULL DEFAULT 0,
    stripped     TEXT,                          -- the line, each payload replaced by the marker: as text, or
                                                --    packed (a zstd frame naming its dictionary); read it
                                                --    as text with stored_line(stripped)
    text         TEXT,                          -- search text: what was said (typed, answered, thought)
    invalid      TEXT,                          -- why the line is not indexed, or NULL
    sort_at      TEXT    NOT NULL DEFAULT '',   -- conversation order: latest timestamp of the file so far
    sort_file    INTEGER NOT NULL DEFAULT 0,    -- conversation order: 0 main transcript, else from the path
    duplicate    INTEGER NOT NULL DEFAULT 0,    -- 1: left out of history, search and counts: a copy of an
                                                --    entry earlier in order with this uuid, or hidden
    agent_id     TEXT,                          -- agentId: the sub-agent whose transcript the line is in
    spawned_agent TEXT,                         -- toolUseResult.agentId: the sub-agent this tool call ran
    agent        TEXT    NOT NULL DEFAULT 'claude', -- the agent that wrote the line: claude, codex, gemini
    hidden       TEXT,                          -- why it is left out though no copy: repeat, fork,
                                                --    rewritten, rewound, replaced (README.md); else NULL
    tool_text    TEXT,                          -- search text: tool calls' input (its strings) and output
    tools        TEXT,                          -- the names of the tools the line calls, one per line
    UNIQUE (file_id, offset)
);
-- A session's history is in conversation order, (sort_at, sort_file, line): see docs/formats.md.
CREATE INDEX entries_order ON entries(session_id, sort_at, sort_file, line);
CREATE INDEX entries_agent ON entries(session_id, agent_id) WHERE agent_id IS NOT NULL;
-- The tool calls that ran a sub-agent (a few rows): a sub-agent's link to the call that ran it.
CREATE INDEX entries_spawner ON entries(session_id, spawned_agent) WHERE spawned_agent IS NOT NULL;
CREATE INDEX entries_uuid ON entries(uuid) WHERE uuid IS NOT NULL;
-- What `status` and `index` count, without reading the table: the lines history leaves out, and
-- the invalid ones (each index holds those lines only; every line is counted from the smallest index).
CREATE INDEX entries_hidden ON entries(duplicate) WHERE duplicate <> 0;
CREATE INDEX entries_invalid ON entries(duplicate, invalid) WHERE invalid IS NOT NULL;

-- One row per stripped payload.
CREATE TABLE media (
    id             INTEGER PRIMARY KEY,
    entry_id       INTEGER NOT NULL REFERENCES entries(id),
    ordinal        INTEGER,                     -- image ordinal under message.content, or NULL
    kind           TEXT    NOT NULL CHECK (kind IN ('image', 'document', 'file')),
    offset         INTEGER NOT NULL,            -- absolute byte offset of the payload in the file
    length         INTEGER NOT NULL,            -- bytes of the payload in the file
    encoding       TEXT    NOT NULL CHECK (encoding IN ('base64', 'base64-escaped', 'data-url', 'data-url-escaped')),
    media_type     TEXT,
    decoded_length INTEGER NOT NULL,
    blake3         TEXT    NOT NULL             -- blake3 (hex) of the decoded bytes
);
CREATE INDEX media_entry ON media(entry_id, ordinal);
CREATE INDEX media_blake3 ON media(blake3);

-- Image blocks under message.content with no payload behind them (failed uploads): they take an
-- ordinal, have no ref, and read "[image not displayed]".
CREATE TABLE failed_images (
    entry_id INTEGER NOT NULL REFERENCES entries(id),
    ordinal  INTEGER NOT NULL,
    reason   TEXT    NOT NULL,
    PRIMARY KEY (entry_id, ordinal)
) WITHOUT ROWID;

-- Full-text search over entries' three search columns, external content, named `<table>_fts` and
-- declared with content="entries" (double quotes), the form Datasette and sqlite-utils look for to
-- recognise it. `text` is what was said, `tool_text` tool calls' input and output, `tools` the
-- names of the tools called; search ranks `text` above `tool_text` (docs/search.md).
-- Words are matched as written (case and diacritics folded), not stemmed: `photo*` finds "photos".
-- In text written without spaces (Chinese, Japanese) the columns have a zero-width space (U+200B)
-- at each Unicode word boundary, so that each word there is a token; queries are marked the same.
CREATE VIRTUAL TABLE entries_fts USING fts5(text, tool_text, tools, content="entries", content_rowid='id', tokenize='unicode61 remove_diacritics 2');
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

-- Transcripts whose session was forgotten (`scrollback forget`): not indexed again while they are
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

-- Transcripts that hold lines of a forgotten session beside other sessions' (version 9): those lines
-- are not indexed (the acceptance record's `forgotten_sessions` says which sessions), and
-- `scrollback unforget` reads these files again from their start.
CREATE TABLE forgotten_in (
    session_id TEXT    NOT NULL,
    file_id    INTEGER NOT NULL,
    PRIMARY KEY (session_id, file_id)
) WITHOUT ROWID;

-- One row per line that states an API response's usage: a response stated again by a later line
-- (a streamed response, a block at a time), another file or another session is a row each. The
-- ledger (`usage`) is derived from these. Counts are disjoint:
-- `input_tokens` is the input neither read from nor written to a cache, `output_tokens` includes
-- reasoning (docs/usage.md, "The counting rule"). What the line's entry says (its session, its time)
-- is read from `entries`, not kept again: read the ledger as text through the `usage` view.
CREATE TABLE usage_lines (
    entry_id              INTEGER NOT NULL REFERENCES entries(id),
    ordinal               INTEGER NOT NULL,     -- which of the responses the line states (0, or a checkpoint's n-th)
    key                   TEXT    NOT NULL,     -- the response's identity: claude:<message.id>, gemini:<id>, codex:<session>:<running total>
    agent                 TEXT    NOT NULL,
    model                 INTEGER REFERENCES usage_models(id),
    request_id            TEXT,
    timestamp             TEXT,                 -- the response's time where it is not its entry's, else NULL
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

-- The models the usage lines name, each once.
CREATE TABLE usage_models (
    id   INTEGER PRIMARY KEY,
    name TEXT    NOT NULL UNIQUE
);

-- The ledger: one row per API response, the line of it that stands (the most output tokens, then
-- the latest: docs/usage.md, "The counting rule"), whose facts are read where they are kept, in
-- that line's `usage_lines` row and its entry (the `usage` view). Kept in session order, by its key.
CREATE TABLE usage_standing (
    session_id            TEXT    NOT NULL,
    entry_id              INTEGER NOT NULL,
    ordinal               INTEGER NOT NULL,
    lines                 INTEGER NOT NULL,     -- how many lines state the response
    PRIMARY KEY (session_id, entry_id, ordinal)
) WITHOUT ROWID;

-- The ledger as rows of text: one per API response, with its session, agent, UTC day and counts.
CREATE VIEW usage AS
SELECT u.key, s.session_id, u.agent, m.name AS model, u.request_id, coalesce(u.timestamp, e.timestamp) AS timestamp,
       coalesce(date(coalesce(u.timestamp, e.timestamp)), substr(coalesce(u.timestamp, e.timestamp), 1, 10)) AS day,
       u.tier, u.input_tokens, u.output_tokens, u.cache_read_tokens, u.cache_write_tokens, u.cache_write_1h_tokens,
       u.reasoning_tokens, s.entry_id, s.lines
FROM usage_standing s
JOIN usage_lines u ON u.entry_id = s.entry_id AND u.ordinal = s.ordinal
JOIN entries e ON e.id = s.entry_id AND e.session_id = s.session_id
LEFT JOIN usage_models m ON m.id = u.model;

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

-- The overview's figures (`GET /api/stats`), kept by the writer in the transaction that writes the
-- rows they are made from, never read from the transcripts again. Hours are UTC, `YYYY-MM-DDTHH`; a
-- line without a timestamp is in none. Each session's rows are made again from its entries (copies
-- and hidden entries left out) whenever a batch writes or removes entries of it (a batch that only
-- appends adds its new entries' share, from where the last walk stopped), and removed with it.

-- Tool calls, and the results the format does not state beside their call: one row each, per line
-- (copies and hidden lines too: they are left out when summed). An edit's row names its file(s).
-- Kept in session order (a session's rows are read together, whenever its sums are made again).
CREATE TABLE tool_events (
    entry_id  INTEGER NOT NULL REFERENCES entries(id),
    ordinal   INTEGER NOT NULL,                 -- its place among the line's calls and results
    session_id TEXT   NOT NULL,
    tool      TEXT,                             -- a call: the tool's name, a result: NULL
    failed    INTEGER,                          -- 1: the tool said it failed, 0: it did not, a call whose result is not beside it: NULL
    path      TEXT,                             -- an edit (a diff, a patch, a file written whole): its file(s)
    added     INTEGER,                          -- an edit: lines added
    removed   INTEGER,                          -- an edit: lines removed
    timestamp TEXT,                             -- an edit: the line's timestamp (NULL on other rows)
    PRIMARY KEY (session_id, entry_id, ordinal)
) WITHOUT ROWID;
CREATE INDEX tool_events_edits ON tool_events(timestamp) WHERE path IS NOT NULL;

-- Messages (the rows of the `messages` view) by session and hour, and of them the prompts (a
-- person's words, not tool results).
CREATE TABLE stats_hours (
    session_id TEXT    NOT NULL,
    hour       TEXT    NOT NULL,
    messages   INTEGER NOT NULL,
    prompts    INTEGER NOT NULL,
    PRIMARY KEY (session_id, hour)
) WITHOUT ROWID;
CREATE INDEX stats_hours_hour ON stats_hours(hour);

-- Tool calls by session, hour (of the call) and tool, and how many of them failed (a result is
-- matched to the oldest call of its session still waiting for one).
CREATE TABLE tool_hours (
    session_id TEXT    NOT NULL,
    hour       TEXT    NOT NULL,
    tool       TEXT    NOT NULL,
    calls      INTEGER NOT NULL,
    failures   INTEGER NOT NULL,
    PRIMARY KEY (session_id, hour, tool)
) WITHOUT ROWID;

-- The agent's response time (from a prompt to the first assistant message after it) as a histogram
-- by session, hour (of the prompt), model ('' when no usage line names one) and bucket (the index
-- of the first of `db::RESPONSE_BUCKETS` the time is not over, or its length: longer).
CREATE TABLE response_hours (
    session_id TEXT    NOT NULL,
    hour       TEXT    NOT NULL,
    model      TEXT    NOT NULL,
    bucket     INTEGER NOT NULL,
    responses  INTEGER NOT NULL,
    PRIMARY KEY (session_id, hour, model, bucket)
) WITHOUT ROWID;

-- Where the walk that made each session's sums stopped (its last entry in conversation order), and
-- what it carried on from there as JSON: calls still waiting for their result, the prompt not
-- answered yet, responses no usage line had named yet. A batch that only appends to a session walks
-- its new entries from here and adds to the sums; any other change walks the session again.
CREATE TABLE stats_walks (
    session_id TEXT    PRIMARY KEY,
    sort_at    TEXT    NOT NULL,
    sort_file  INTEGER NOT NULL,
    line       INTEGER NOT NULL,
    id         INTEGER NOT NULL,
    state      TEXT    NOT NULL
) WITHOUT ROWID;

-- The ledger summed as `usage_sums` is, by UTC hour instead of day, kept with it.
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

-- What the writer keeps of a file between its lines: the model its last turn_context named, and
-- Codex's running total ("input/output/cache_read/cache_write/cache_write_1h/reasoning").
CREATE TABLE usage_state (
    file_id INTEGER PRIMARY KEY,
    model   TEXT,
    running TEXT
);

-- The zstd dictionaries stored lines are packed with, trained on the index's own first lines
-- (docs/schema.md, "Stored lines"): `id` is the id zstd writes in each frame packed with it.
CREATE TABLE dictionaries (
    id       INTEGER PRIMARY KEY,
    made_at  TEXT    NOT NULL,                  -- UTC, RFC 3339
    samples  INTEGER NOT NULL,                  -- how many stored lines it was trained on
    bytes    BLOB    NOT NULL
);

-- Index state the indexer keeps for itself (e.g. DDL deferred during a bulk load).
CREATE TABLE scrollback_meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
) WITHOUT ROWID;

-- Views for the questions people ask offline.

-- One row per user or assistant message (copies and hidden entries left out), with its text and its
-- tool calls' and results' text (word marks removed), and agent.
CREATE VIEW messages AS
SELECT e.session_id, e.line, e.uuid, e.parent_uuid, e.type, e.role, e.timestamp, e.is_sidechain,
       replace(e.text, char(8203), '') AS text, f.path, e.agent, replace(e.tool_text, char(8203), '') AS tool_text
FROM entries e JOIN files f ON f.id = e.file_id
WHERE e.invalid IS NULL AND e.duplicate = 0 AND (e.type IN ('user', 'assistant') OR e.role IN ('user', 'assistant'));

-- Every stripped payload, with its ref (for images under message.content) and where its bytes are.
CREATE VIEW photos AS
SELECT CASE WHEN m.ordinal IS NOT NULL AND e.uuid IS NOT NULL
            THEN e.session_id || '/' || e.uuid || '/' || m.ordinal END AS ref,
       m.blake3, m.kind, m.media_type, m.decoded_length, e.session_id, e.uuid AS entry_uuid, m.ordinal,
       e.timestamp, f.path, m.offset, m.length, m.encoding, f.state AS file_state
FROM media m JOIN entries e ON e.id = m.entry_id JOIN files f ON f.id = e.file_id;

-- Lines that could not be indexed, and why.
CREATE VIEW invalid_lines AS
SELECT f.path, e.line, e.offset, e.length, e.invalid AS reason
FROM entries e JOIN files f ON f.id = e.file_id
WHERE e.invalid IS NOT NULL;

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
