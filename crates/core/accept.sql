-- scrollback acceptance record, version 3 (PRAGMA user_version = 3), in `accepted.sqlite3`.
--
-- Primary data: what people sent, recorded before anything else happens ("recording it IS
-- acceptance"). It is not derived from the transcripts and is never rebuilt, moved aside or deleted
-- by scrollback; the index (index.sqlite3) can be deleted and rebuilt without touching it.
-- Times are UTC, RFC 3339 with milliseconds: 2026-11-30T20:00:00.000Z.

-- One row per accepted message.
CREATE TABLE acceptances (
    id                INTEGER PRIMARY KEY,
    client_message_id TEXT    NOT NULL UNIQUE,     -- the client's id for the message: a retry repeats it
    chat_id           TEXT    NOT NULL REFERENCES chats(chat_id),
    text              TEXT    NOT NULL,
    accepted_at       TEXT    NOT NULL,
    -- 'pending' until a client, having reconciled, tells the server the transcript backs it.
    state             TEXT    NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'retired')),
    retired_at        TEXT,
    engine_error      TEXT                          -- why the engine failed for it, if it did
);
CREATE INDEX acceptances_chat ON acceptances(chat_id, state, id);

-- The images of a message, in the order they were sent. Their bytes are files under the data
-- directory's `accepted-images/`, named by blake3, written and synced before the row commits.
CREATE TABLE acceptance_images (
    acceptance_id INTEGER NOT NULL REFERENCES acceptances(id),
    position      INTEGER NOT NULL,
    blake3        TEXT    NOT NULL,                 -- blake3 (hex) of the decoded bytes
    media_type    TEXT    NOT NULL,
    bytes         INTEGER NOT NULL,
    PRIMARY KEY (acceptance_id, position)
) WITHOUT ROWID;
CREATE INDEX acceptance_images_blake3 ON acceptance_images(blake3);

-- A chat, and the transcript session its engine assigned (NULL until one is bound).
CREATE TABLE chats (
    chat_id    TEXT PRIMARY KEY,
    session_id TEXT,
    created_at TEXT NOT NULL,
    bound_at   TEXT
) WITHOUT ROWID;

-- A person's own marks on a session (version 2): the title they gave it and whether it is pinned to
-- the top of the list. Primary data as the sends are: never written into a transcript, kept
-- through a rebuild of the index.
CREATE TABLE marks (
    session_id TEXT PRIMARY KEY,
    title      TEXT,                                -- NULL: the title the transcript gives
    pinned     INTEGER NOT NULL DEFAULT 0 CHECK (pinned IN (0, 1)),
    updated_at TEXT NOT NULL
) WITHOUT ROWID;

-- Sessions a person forgot (version 3; `scrollback forget`, `DELETE /api/sessions/{id}`): their
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

-- Every send, with its chat's session, for offline questions.
CREATE VIEW sends AS
    SELECT a.client_message_id, a.chat_id, c.session_id, a.text, a.accepted_at, a.state, a.retired_at,
           a.engine_error, (SELECT count(*) FROM acceptance_images i WHERE i.acceptance_id = a.id) AS images
    FROM acceptances a JOIN chats c USING (chat_id);
