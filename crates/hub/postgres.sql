-- scrollback hub schema, version 8 (hub_meta 'schema_version' = 8).
--
-- The hub is a PostgreSQL database that many hosts push their index to (`scrollback push`,
-- `serve --push`). Each host's own SQLite index stays the system of record: everything here is
-- derived from it and can be pushed again. Rows are keyed by the host, the file's row in that
-- host's index (`file_id`) and the byte offset of the line (`off`), so that pushing a row again
-- changes nothing. Photos are content-addressed: `blobs` holds each decoded payload once, by the
-- blake3 of its bytes, whichever hosts hold it.
--
-- Text search: `entries.tsv` is generated from the three search texts of a line, each with its
-- weight: `text` (what was said) A, `tool_text` (tool calls' input and output) B, `tools` (the names
-- of the tools called) C, so that a query may keep to one of them (`ts_filter`) as `role:` and
-- `tool:` do. Each is read with the 'simple' configuration (words as written, lower-cased, not
-- stemmed), after the zero-width spaces (U+200B) the indexer writes at each word boundary of Chinese
-- and Japanese text are turned into spaces, so that each of those words is a lexeme.
-- `entries_text_trgm` (pg_trgm) serves substring matches (`ILIKE '%…%'`) of what was said in the
-- lines that hold Chinese or Japanese words (those with a word mark, U+200B: a query names the
-- predicate to use it), where words have no spaces to find them by; it needs a database whose ctype
-- classifies those letters (C.UTF-8 or a language's UTF-8 locale). Over every line it would cost a
-- push about 50% more (docs/benchmarks.md), for `psql` users alone: the hub's search reads `tsv`.

CREATE EXTENSION IF NOT EXISTS pg_trgm;

CREATE TABLE hub_meta (
    key   text PRIMARY KEY,
    value text NOT NULL
);

-- One row per host that pushed, with how its last push went. A host name belongs to one data
-- directory, `identity` (its `hub-identity` file): another is refused the name unless it takes it
-- over (`--take-over`), which replaces the host's rows with its own.
CREATE TABLE hosts (
    name          text PRIMARY KEY,
    index_id      text,                    -- the device and inode of its index.sqlite3 when last pushed
    first_push_at timestamptz NOT NULL DEFAULT now(),
    last_push_at  timestamptz,
    identity      text                     -- the data directory pushing as it (NULL: not yet known)
);

-- One row per transcript file of a host's index, with the push's watermark: the offset of the last
-- line sent, in the file's generation. The next push sends the file's lines after it; a file read
-- again from its start on the host (a new generation) is sent again. `lines`, `checkpoint` and
-- `indexed_at` are the host's once every line is sent (-1 and '' while a push is midway).
CREATE TABLE files (
    host        text    NOT NULL REFERENCES hosts(name),
    file_id     bigint  NOT NULL,          -- files.id in the host's index
    path        text    NOT NULL,          -- on the host
    session_id  text    NOT NULL,
    agent       text    NOT NULL,
    state       text    NOT NULL,          -- live, gone
    lines       bigint  NOT NULL,
    checkpoint  bigint  NOT NULL,
    indexed_at  text    NOT NULL,
    gone_at     text,
    generation  bigint  NOT NULL,          -- files.generation on the host: the watermark's
    last_off    bigint  NOT NULL,          -- the offset of the last line sent (-1: none)
    PRIMARY KEY (host, file_id)
);

CREATE TABLE sessions (
    host              text    NOT NULL REFERENCES hosts(name),
    id                text    NOT NULL,
    project           text,
    title             text,
    title_rank        integer NOT NULL DEFAULT 0,
    first_timestamp   text,
    last_timestamp    text,
    entries           bigint  NOT NULL DEFAULT 0,
    images            bigint  NOT NULL DEFAULT 0,
    sidechain_entries bigint  NOT NULL DEFAULT 0,
    agent             text    NOT NULL,
    forked_from       text,
    git_branch        text,                -- the git branch its transcript names last, as written
    PRIMARY KEY (host, id)
);
CREATE INDEX sessions_last ON sessions(last_timestamp);
CREATE INDEX sessions_id ON sessions(id);

-- One row per complete line, as the host's index has it (schema.sql's `entries`).
CREATE TABLE entries (
    host          text    NOT NULL,
    file_id       bigint  NOT NULL,
    off           bigint  NOT NULL,        -- entries.offset: the line's byte offset in its file
    local_id      bigint  NOT NULL,        -- entries.id on the host (the order lines were indexed in)
    session_id    text    NOT NULL,
    line          bigint  NOT NULL,
    length        bigint  NOT NULL,
    uuid          text,
    parent_uuid   text,
    type          text,
    role          text,
    timestamp     text,
    is_sidechain  boolean NOT NULL,
    stripped      text,
    text          text,                    -- what was said (search text)
    invalid       text,
    sort_at       text    NOT NULL,
    sort_file     bigint  NOT NULL,
    duplicate     boolean NOT NULL,
    agent_id      text,
    spawned_agent text,
    agent         text    NOT NULL,
    hidden        text,
    tool_text     text,                    -- tool calls' input and output (search text)
    tools         text,                    -- the names of the tools called, one per line
    tsv           tsvector GENERATED ALWAYS AS
                  (setweight(to_tsvector('simple', replace(coalesce(text, ''), U&'\200B', ' ')), 'A')
                   || setweight(to_tsvector('simple', replace(coalesce(tool_text, ''), U&'\200B', ' ')), 'B')
                   || setweight(to_tsvector('simple', coalesce(tools, '')), 'C')) STORED,
    -- No foreign key to `files`: its check was a query for each line sent (about 5% of the hub's
    -- work in a push). A push writes a file's row in the transaction of its lines, and deletes the
    -- lines with the row.
    PRIMARY KEY (host, file_id, off)
);
CREATE INDEX entries_order ON entries(host, session_id, sort_at, sort_file, line);
CREATE INDEX entries_tsv ON entries USING gin(tsv);
-- The newest lines first, as a search takes its candidates: a common word's newest matches are
-- found by walking this, not by sorting every match.
CREATE INDEX entries_recent ON entries (timestamp COLLATE "C" DESC NULLS LAST, host, local_id DESC);
CREATE INDEX entries_text_trgm ON entries USING gin(text gin_trgm_ops) WHERE strpos(text, U&'\200B') > 0;

-- Each decoded payload once, by the blake3 (hex) of its bytes.
CREATE TABLE blobs (
    blake3     text   PRIMARY KEY,
    media_type text,
    length     bigint NOT NULL,
    bytes      bytea  NOT NULL,
    CHECK (length = octet_length(bytes))
);

-- One row per stripped payload (schema.sql's `media`); its bytes are in `blobs` once pushed.
CREATE TABLE media (
    host           text    NOT NULL,
    file_id        bigint  NOT NULL,
    off            bigint  NOT NULL,       -- the payload's offset in the file
    entry_off      bigint  NOT NULL,       -- its line's
    ordinal        integer,
    kind           text    NOT NULL,
    length         bigint  NOT NULL,
    encoding       text    NOT NULL,
    media_type     text,
    decoded_length bigint  NOT NULL,
    blake3         text    NOT NULL,
    PRIMARY KEY (host, file_id, off),
    FOREIGN KEY (host, file_id, entry_off) REFERENCES entries(host, file_id, off) ON DELETE CASCADE
);
CREATE INDEX media_entry ON media(host, file_id, entry_off);
CREATE INDEX media_blake3 ON media(blake3);

CREATE TABLE failed_images (
    host      text    NOT NULL,
    file_id   bigint  NOT NULL,
    entry_off bigint  NOT NULL,
    ordinal   integer NOT NULL,
    reason    text    NOT NULL,
    PRIMARY KEY (host, file_id, entry_off, ordinal),
    FOREIGN KEY (host, file_id, entry_off) REFERENCES entries(host, file_id, off) ON DELETE CASCADE
);

-- The usage ledger (schema.sql's `usage`): one row per API response.
CREATE TABLE usage (
    host                  text   NOT NULL REFERENCES hosts(name),
    key                   text   NOT NULL,
    session_id            text   NOT NULL,
    agent                 text   NOT NULL,
    model                 text,
    request_id            text,
    timestamp             text,
    day                   text,
    tier                  text,
    input_tokens          bigint NOT NULL,
    output_tokens         bigint NOT NULL,
    cache_read_tokens     bigint NOT NULL,
    cache_write_tokens    bigint NOT NULL,
    cache_write_1h_tokens bigint NOT NULL,
    reasoning_tokens      bigint NOT NULL,
    lines                 bigint NOT NULL,
    local_id              bigint,          -- the line that stands for the response, entries.id on the host
    PRIMARY KEY (host, key)
);
CREATE INDEX usage_session ON usage(host, session_id);
CREATE INDEX usage_day ON usage(day);

-- Sessions forgotten on a host: their rows were deleted here, and are not pushed again until the
-- host unforgets them.
CREATE TABLE forgotten (
    host         text NOT NULL REFERENCES hosts(name),
    session_id   text NOT NULL,
    forgotten_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (host, session_id)
);

-- A person's marks on a session, as each host has them (its data directory's `marks`, not derived
-- from the index): the title they gave it and whether it is pinned, with when they last changed one
-- there. A mark cleared on the host (no title, not pinned) or a session forgotten there has no row.
-- Across hosts, the latest `set_at` of a session's rows is the last write.
CREATE TABLE marks (
    host       text    NOT NULL REFERENCES hosts(name),
    session_id text    NOT NULL,
    title      text,
    pinned     boolean NOT NULL,
    set_at     text    NOT NULL,             -- on the host, UTC
    PRIMARY KEY (host, session_id)
);
CREATE INDEX marks_session ON marks(session_id);

-- The overview's figures (`GET /api/stats` of `serve --postgres`): the sums each host's index keeps
-- by session and UTC hour (schema.sql's `stats_hours`, `tool_hours`, `response_hours` and
-- `usage_hours`) and its edits (`tool_events` naming a file, of lines that are not copies), as the
-- host has them. A push replaces a session's rows whenever it sends the session's row.
CREATE TABLE stats_hours (
    host       text   NOT NULL REFERENCES hosts(name),
    session_id text   NOT NULL,
    hour       text   NOT NULL,                -- YYYY-MM-DDTHH, UTC
    messages   bigint NOT NULL,
    prompts    bigint NOT NULL,
    PRIMARY KEY (host, session_id, hour)
);
CREATE INDEX stats_hours_hour ON stats_hours(hour COLLATE "C");
CREATE TABLE tool_hours (
    host       text   NOT NULL REFERENCES hosts(name),
    session_id text   NOT NULL,
    hour       text   NOT NULL,
    tool       text   NOT NULL,
    calls      bigint NOT NULL,
    failures   bigint NOT NULL,
    PRIMARY KEY (host, session_id, hour, tool)
);
CREATE TABLE response_hours (
    host       text    NOT NULL REFERENCES hosts(name),
    session_id text    NOT NULL,
    hour       text    NOT NULL,
    model      text    NOT NULL,
    bucket     integer NOT NULL,
    responses  bigint  NOT NULL,
    PRIMARY KEY (host, session_id, hour, model, bucket)
);
CREATE TABLE usage_hours (
    host                  text   NOT NULL REFERENCES hosts(name),
    session_id            text   NOT NULL,
    hour                  text,
    agent                 text   NOT NULL,
    model                 text,
    tier                  text,
    over                  bigint NOT NULL,
    responses             bigint NOT NULL,
    input_tokens          bigint NOT NULL,
    output_tokens         bigint NOT NULL,
    cache_read_tokens     bigint NOT NULL,
    cache_write_tokens    bigint NOT NULL,
    cache_write_1h_tokens bigint NOT NULL,
    reasoning_tokens      bigint NOT NULL
);
CREATE INDEX usage_hours_session ON usage_hours(host, session_id);
CREATE INDEX usage_hours_hour ON usage_hours(hour COLLATE "C");
CREATE TABLE edits (
    host       text    NOT NULL REFERENCES hosts(name),
    session_id text    NOT NULL,
    local_id   bigint  NOT NULL,               -- the edit's line, entries.id on the host
    ordinal    integer NOT NULL,               -- its place among the line's calls
    timestamp  text    NOT NULL,
    path       text    NOT NULL,               -- the file (or the files a patch names)
    tool       text,
    added      bigint,
    removed    bigint,
    PRIMARY KEY (host, session_id, local_id, ordinal)
);
CREATE INDEX edits_recent ON edits(timestamp COLLATE "C" DESC);
-- A session's outline (`GET /api/sessions/{id}/outline`): each line's tool calls, as its host's
-- `tool_events` counts them (lines with none have no row), sent with the session's row as the sums are.
CREATE TABLE calls (
    host       text   NOT NULL REFERENCES hosts(name),
    session_id text   NOT NULL,
    local_id   bigint NOT NULL,                -- the line, entries.id on the host
    calls      bigint NOT NULL,
    PRIMARY KEY (host, session_id, local_id)
);

-- Views for the questions people ask, as schema.sql's.

CREATE VIEW messages AS
SELECT e.host, e.session_id, e.line, e.uuid, e.parent_uuid, e.type, e.role, e.timestamp, e.is_sidechain,
       replace(e.text, U&'\200B', '') AS text, f.path, e.agent
FROM entries e JOIN files f ON f.host = e.host AND f.file_id = e.file_id
WHERE e.invalid IS NULL AND NOT e.duplicate AND (e.type IN ('user', 'assistant') OR e.role IN ('user', 'assistant'));

CREATE VIEW photos AS
SELECT CASE WHEN m.ordinal IS NOT NULL AND e.uuid IS NOT NULL
            THEN e.session_id || '/' || e.uuid || '/' || m.ordinal END AS ref,
       m.blake3, m.kind, m.media_type, m.decoded_length, e.host, e.session_id, e.uuid AS entry_uuid,
       m.ordinal, e.timestamp, b.blake3 IS NOT NULL AS pushed
FROM media m
JOIN entries e ON e.host = m.host AND e.file_id = m.file_id AND e.off = m.entry_off
LEFT JOIN blobs b ON b.blake3 = m.blake3;

CREATE VIEW invalid_lines AS
SELECT f.host, f.path, e.line, e.off AS offset, e.length, e.invalid AS reason
FROM entries e JOIN files f ON f.host = e.host AND f.file_id = e.file_id
WHERE e.invalid IS NOT NULL;

CREATE VIEW usage_daily AS
SELECT day, host, agent, model, count(*) AS responses,
       sum(input_tokens) AS input_tokens, sum(output_tokens) AS output_tokens,
       sum(cache_read_tokens) AS cache_read_tokens, sum(cache_write_tokens) AS cache_write_tokens,
       sum(cache_write_1h_tokens) AS cache_write_1h_tokens, sum(reasoning_tokens) AS reasoning_tokens,
       sum(input_tokens + output_tokens + cache_read_tokens + cache_write_tokens) AS total_tokens
FROM usage GROUP BY day, host, agent, model;

CREATE VIEW usage_by_session AS
SELECT u.host, u.session_id, s.title, s.project, u.agent, string_agg(DISTINCT u.model, ',') AS models,
       min(u.timestamp) AS first_timestamp, max(u.timestamp) AS last_timestamp, count(*) AS responses,
       sum(u.input_tokens) AS input_tokens, sum(u.output_tokens) AS output_tokens,
       sum(u.cache_read_tokens) AS cache_read_tokens, sum(u.cache_write_tokens) AS cache_write_tokens,
       sum(u.cache_write_1h_tokens) AS cache_write_1h_tokens, sum(u.reasoning_tokens) AS reasoning_tokens,
       sum(u.input_tokens + u.output_tokens + u.cache_read_tokens + u.cache_write_tokens) AS total_tokens
FROM usage u LEFT JOIN sessions s ON s.host = u.host AND s.id = u.session_id
GROUP BY u.host, u.session_id, s.title, s.project, u.agent;

-- A line's texts are compressed with LZ4 where the server has it (PostgreSQL 14 and later, built
-- with lz4, as Debian's and the official images are), elsewhere with pglz: `LZ4` in
-- crates/hub/src/lib.rs, run after this.

INSERT INTO hub_meta (key, value) VALUES ('schema_version', '8');
