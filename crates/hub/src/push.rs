//! Pushing this host's index to the hub: what is new since each file's watermark, in transactions
//! that each move the watermark with the rows they send, so that a push stopped anywhere (`kill -9`,
//! the hub restarting) loses nothing and sends nothing twice when it runs again.
//!
//! One pass ([`Pusher::push`]):
//! - the index's identity (the device and inode of `index.sqlite3`) is compared with the one the
//!   hub recorded: an index made anew (`scrollback rebuild`, a damaged one moved aside) has new row
//!   ids, so the host's rows are sent again (photos already there are not);
//! - sessions forgotten here are deleted from the hub, and not sent again until unforgotten;
//! - each file whose row changed sends its lines after its watermark (the offset of the last line
//!   sent, in the file's generation: a file read again from its start is sent again), with their
//!   media rows, failed images, and every photo the hub does not hold yet, verified against its
//!   blake3 as it is read;
//! - each session those lines belong to sends its row, its copies' and hidden entries' marks, and its
//!   usage ledger.
//!
//! The pusher only reads the index (a reader connection); the writer never waits for it.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::io::Read;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use postgres::Client;
use rusqlite::{Connection, params};

use crate::{HubConfig, migrate};
use scrollback_core::db;
use scrollback_core::error::{Error, Result};
use scrollback_read::index::{MEDIA_COLUMNS, media_record};
use scrollback_read::media;

/// Lines per transaction on the hub.
const BATCH_LINES: i64 = 500;
/// A batch ends early past this many bytes of stored lines and search text.
const BATCH_BYTES: usize = 8 << 20;

/// What one pass sent.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Pushed {
    /// Files whose rows changed.
    pub files: u64,
    /// Lines sent.
    pub entries: u64,
    /// Photos (and other payloads) whose bytes were sent: the hub had none with their blake3.
    pub photos: u64,
    /// Their decoded bytes.
    pub photo_bytes: u64,
    /// Payloads whose bytes could not be read here (their transcript gone, or changed): their rows
    /// are on the hub, their bytes are not.
    pub photos_unreadable: u64,
    /// Sessions whose row, marks and ledger were sent.
    pub sessions: u64,
    /// Sessions deleted from the hub because they were forgotten here.
    pub forgotten: u64,
    /// Whether the host's rows were all sent again (the index was made anew).
    pub resent: bool,
}

impl Pushed {
    /// Whether anything was sent.
    pub fn is_empty(&self) -> bool {
        self.files == 0 && self.forgotten == 0 && !self.resent
    }
}

/// What the hub holds of one file of this host.
#[derive(Debug, Clone, PartialEq, Eq)]
struct HubFile {
    path: String,
    state: String,
    lines: i64,
    checkpoint: i64,
    indexed_at: String,
    generation: i64,
    last_off: i64,
}

/// A file's row in the local index.
#[derive(Debug, Clone)]
struct LocalFile {
    id: i64,
    path: String,
    session_id: String,
    agent: String,
    state: String,
    lines: i64,
    checkpoint: i64,
    indexed_at: String,
    gone_at: Option<String>,
    generation: i64,
}

impl LocalFile {
    fn same_as(&self, hub: &HubFile) -> bool {
        self.path == hub.path
            && self.state == hub.state
            && self.lines == hub.lines
            && self.checkpoint == hub.checkpoint
            && self.indexed_at == hub.indexed_at
            && self.generation == hub.generation
    }
}

/// Pushes one host's index to a hub. Holds the hub's advisory lock for its host name, so that two
/// pushers of one host never interleave.
pub struct Pusher {
    host: String,
    data_dir: PathBuf,
    client: Client,
    /// The hub's files of this host as of the last pass (the pusher is their only writer).
    files: HashMap<i64, HubFile>,
}

impl std::fmt::Debug for Pusher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pusher").field("host", &self.host).field("data_dir", &self.data_dir).finish()
    }
}

impl Pusher {
    /// Connects to the hub, brings its schema to this version, and takes the push lock of `host`.
    pub fn connect(config: &HubConfig, host: &str, data_dir: &Path) -> Result<Pusher> {
        if host.is_empty() || host.len() > 255 || host.chars().any(char::is_control) {
            return Err(Error::BadQuery(format!("{host:?} is not a host name (1 to 255 characters, no control ones)")));
        }
        let mut client = config.connect()?;
        migrate(&mut client)?;
        let locked: bool = client.query_one("SELECT pg_try_advisory_lock(7461024, hashtext($1))", &[&host])?.get(0);
        if !locked {
            return Err(Error::Hub(format!("another push of host {host:?} is running against this hub")));
        }
        client.execute("INSERT INTO hosts (name) VALUES ($1) ON CONFLICT (name) DO NOTHING", &[&host])?;
        let mut pusher = Pusher { host: host.to_owned(), data_dir: data_dir.to_owned(), client, files: HashMap::new() };
        pusher.load_files()?;
        Ok(pusher)
    }

    /// The host name it pushes as.
    pub fn host(&self) -> &str {
        &self.host
    }

    /// Whether the connection to the hub is gone (the pusher must then connect again).
    pub fn is_closed(&self) -> bool {
        self.client.is_closed()
    }

    fn load_files(&mut self) -> Result<()> {
        let rows = self.client.query(
            "SELECT file_id, path, state, lines, checkpoint, indexed_at, generation, last_off
                 FROM files WHERE host = $1",
            &[&self.host],
        )?;
        self.files = rows
            .iter()
            .map(|r| {
                (
                    r.get(0),
                    HubFile {
                        path: r.get(1),
                        state: r.get(2),
                        lines: r.get(3),
                        checkpoint: r.get(4),
                        indexed_at: r.get(5),
                        generation: r.get(6),
                        last_off: r.get(7),
                    },
                )
            })
            .collect();
        Ok(())
    }

    /// One pass: sends everything the hub does not hold yet of this host's index.
    pub fn push(&mut self) -> Result<Pushed> {
        let result = self.push_inner();
        if result.is_err() {
            // What the hub holds is read again on the next pass: a transaction that failed moved
            // no watermark, but this copy may have.
            self.files.clear();
            if !self.client.is_closed() {
                let _ = self.load_files();
            }
        }
        result
    }

    fn push_inner(&mut self) -> Result<Pushed> {
        let conn = scrollback_read::index::open(&self.data_dir)?;
        let resent = self.check_identity()?;
        let mut pushed = Pushed { resent, forgotten: self.push_forgotten()?, ..Pushed::default() };
        let local = local_files(&conn)?;
        let local_ids: HashSet<i64> = local.iter().map(|f| f.id).collect();
        let dropped: Vec<i64> = self.files.keys().filter(|id| !local_ids.contains(id)).copied().collect();
        let mut synced = BTreeSet::new();
        if !dropped.is_empty() {
            let sessions = self.client.query(
                "DELETE FROM files WHERE host = $1 AND file_id = ANY($2) RETURNING session_id",
                &[&self.host, &dropped],
            )?;
            for id in &dropped {
                self.files.remove(id);
            }
            for session in sessions.iter().map(|r| r.get::<_, String>(0)) {
                self.push_session(&conn, &session)?;
                synced.insert(session);
            }
        }
        for file in &local {
            if self.files.get(&file.id).is_some_and(|hub| file.same_as(hub)) {
                continue;
            }
            pushed.files += 1;
            self.push_file(&conn, file, &mut pushed, &mut synced)?;
        }
        pushed.sessions = synced.len() as u64;
        if !pushed.is_empty() {
            self.client.execute("UPDATE hosts SET last_push_at = now() WHERE name = $1", &[&self.host])?;
        }
        Ok(pushed)
    }

    /// Compares the index's identity with the hub's record of it; when it is another index, deletes
    /// the host's rows so that they are sent again. Whether it did.
    fn check_identity(&mut self) -> Result<bool> {
        let path = self.data_dir.join(db::INDEX_FILE);
        let meta = std::fs::metadata(&path).map_err(|e| Error::io(&path, e))?;
        let identity = format!("{}:{}", meta.dev(), meta.ino());
        let mut tx = self.client.transaction()?;
        let recorded: Option<String> =
            tx.query_one("SELECT index_id FROM hosts WHERE name = $1 FOR UPDATE", &[&self.host])?.get(0);
        if recorded.as_deref() == Some(identity.as_str()) {
            return Ok(false);
        }
        let resend = recorded.is_some();
        if resend {
            for table in ["files", "sessions", "usage"] {
                tx.execute(&format!("DELETE FROM {table} WHERE host = $1"), &[&self.host])?;
            }
        }
        tx.execute("UPDATE hosts SET index_id = $2 WHERE name = $1", &[&self.host, &identity])?;
        tx.commit()?;
        if resend {
            tracing::info!(
                "{}: this index is not the one pushed before (it was made anew): sending it again",
                self.host
            );
            self.files.clear();
        }
        Ok(resend)
    }

    /// Deletes from the hub the sessions forgotten here since the last pass, and lets those
    /// unforgotten here be sent again. How many it deleted.
    fn push_forgotten(&mut self) -> Result<u64> {
        let here: BTreeSet<String> = match scrollback_ops::writer::accept_store_if_any(&self.data_dir)? {
            Some(store) => store.forgotten_sessions()?.into_iter().collect(),
            None => BTreeSet::new(),
        };
        let on_hub: BTreeSet<String> = self
            .client
            .query("SELECT session_id FROM forgotten WHERE host = $1", &[&self.host])?
            .iter()
            .map(|r| r.get(0))
            .collect();
        let back: Vec<&String> = on_hub.difference(&here).collect();
        if !back.is_empty() {
            self.client
                .execute("DELETE FROM forgotten WHERE host = $1 AND session_id = ANY($2)", &[&self.host, &back])?;
        }
        let mut n = 0;
        for session in here.difference(&on_hub) {
            let mut tx = self.client.transaction()?;
            for table in ["entries", "usage"] {
                tx.execute(
                    &format!("DELETE FROM {table} WHERE host = $1 AND session_id = $2"),
                    &[&self.host, session],
                )?;
            }
            tx.execute("DELETE FROM sessions WHERE host = $1 AND id = $2", &[&self.host, session])?;
            tx.execute("INSERT INTO forgotten (host, session_id) VALUES ($1, $2)", &[&self.host, session])?;
            tx.commit()?;
            n += 1;
        }
        Ok(n)
    }

    /// Sends a file's row and its lines after the watermark, a batch per transaction, then the rows
    /// of the sessions they belong to (into `synced`), and only then records the file as sent (its
    /// line count and checkpoint), so that a pass stopped anywhere is taken up again.
    fn push_file(
        &mut self,
        conn: &Connection,
        file: &LocalFile,
        pushed: &mut Pushed,
        synced: &mut BTreeSet<String>,
    ) -> Result<()> {
        let mut touched = BTreeSet::from([file.session_id.clone()]);
        let (mut after, reset) = match self.files.get(&file.id) {
            Some(hub) if hub.generation == file.generation => (hub.last_off, false),
            Some(_) => (-1, true),
            None => (-1, false),
        };
        let mut first = true;
        loop {
            let batch = read_batch(conn, file.id, after)?;
            let mut tx = self.client.transaction()?;
            if reset && first {
                let sessions = tx.query(
                    "SELECT DISTINCT session_id FROM entries WHERE host = $1 AND file_id = $2",
                    &[&self.host, &file.id],
                )?;
                touched.extend(sessions.iter().map(|r| r.get::<_, String>(0)));
                tx.execute("DELETE FROM entries WHERE host = $1 AND file_id = $2", &[&self.host, &file.id])?;
            }
            first = false;
            let last_off = batch.entries.last().map_or(after, |e| e.off);
            let done = (batch.entries.len() as i64) < BATCH_LINES && !batch.cut;
            // The file's row carries the watermark; its checkpoint and line count are the index's
            // only once its sessions are sent too (below).
            let (lines, checkpoint, indexed_at) = (-1i64, -1i64, String::new());
            tx.execute(
                "INSERT INTO files (host, file_id, path, session_id, agent, state, lines, checkpoint, indexed_at,
                                    gone_at, generation, last_off)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
                 ON CONFLICT (host, file_id) DO UPDATE SET
                    path = excluded.path, session_id = excluded.session_id, agent = excluded.agent,
                    state = excluded.state, lines = excluded.lines, checkpoint = excluded.checkpoint,
                    indexed_at = excluded.indexed_at, gone_at = excluded.gone_at,
                    generation = excluded.generation, last_off = excluded.last_off",
                &[
                    &self.host,
                    &file.id,
                    &text(&file.path),
                    &text(&file.session_id),
                    &file.agent,
                    &file.state,
                    &lines,
                    &checkpoint,
                    &indexed_at,
                    &file.gone_at,
                    &file.generation,
                    &last_off,
                ],
            )?;
            if !batch.entries.is_empty() {
                send_photos(&mut tx, &self.host, &batch.media, pushed)?;
                send_rows(&mut tx, &self.host, file.id, &batch)?;
                touched.extend(batch.entries.iter().map(|e| e.session_id.clone()));
                pushed.entries += batch.entries.len() as u64;
            }
            tx.commit()?;
            self.files.insert(
                file.id,
                HubFile {
                    path: file.path.clone(),
                    state: file.state.clone(),
                    lines,
                    checkpoint,
                    indexed_at,
                    generation: file.generation,
                    last_off,
                },
            );
            after = last_off;
            if done {
                break;
            }
        }
        for session in &touched {
            self.push_session(conn, session)?;
            synced.insert(session.clone());
        }
        self.client.execute(
            "UPDATE files SET lines = $3, checkpoint = $4, indexed_at = $5 WHERE host = $1 AND file_id = $2",
            &[&self.host, &file.id, &file.lines, &file.checkpoint, &file.indexed_at],
        )?;
        if let Some(hub) = self.files.get_mut(&file.id) {
            hub.lines = file.lines;
            hub.checkpoint = file.checkpoint;
            hub.indexed_at = file.indexed_at.clone();
        }
        Ok(())
    }
}

/// Sends the bytes of each payload whose blake3 the hub does not hold, one at a time, verified.
fn send_photos(
    tx: &mut postgres::Transaction<'_>,
    host: &str,
    records: &[(i64, media::MediaRecord)],
    pushed: &mut Pushed,
) -> Result<()> {
    let hashes: Vec<&str> = records.iter().map(|(_, r)| r.blake3.as_str()).collect();
    if hashes.is_empty() {
        return Ok(());
    }
    let held: HashSet<String> =
        tx.query("SELECT blake3 FROM blobs WHERE blake3 = ANY($1)", &[&hashes])?.iter().map(|r| r.get(0)).collect();
    let mut sent = HashSet::new();
    for (_, record) in records {
        if held.contains(&record.blake3) || !sent.insert(record.blake3.clone()) {
            continue;
        }
        let bytes = match read_verified(record) {
            Ok(bytes) => bytes,
            Err(e) => {
                tracing::warn!("{host}: photo {} not sent: {e}", record.blake3);
                pushed.photos_unreadable += 1;
                continue;
            }
        };
        tx.execute(
            "INSERT INTO blobs (blake3, media_type, length, bytes) VALUES ($1, $2, $3, $4)
                 ON CONFLICT (blake3) DO NOTHING",
            &[&record.blake3, &record.media_type, &(bytes.len() as i64), &bytes],
        )?;
        pushed.photos += 1;
        pushed.photo_bytes += bytes.len() as u64;
    }
    Ok(())
}

impl Pusher {
    /// Sends a session's row, which of its entries are copies or hidden, and its usage ledger.
    fn push_session(&mut self, conn: &Connection, session: &str) -> Result<()> {
        let row = conn
            .prepare_cached(
                "SELECT project, title, title_rank, first_timestamp, last_timestamp, entries, images,
                        sidechain_entries, agent, forked_from
                 FROM sessions WHERE id = ?1",
            )?
            .query_row([session], |r| {
                Ok((
                    r.get::<_, Option<String>>(0)?,
                    r.get::<_, Option<String>>(1)?,
                    r.get::<_, i64>(2)?,
                    r.get::<_, Option<String>>(3)?,
                    r.get::<_, Option<String>>(4)?,
                    r.get::<_, i64>(5)?,
                    r.get::<_, i64>(6)?,
                    r.get::<_, i64>(7)?,
                    r.get::<_, String>(8)?,
                    r.get::<_, Option<String>>(9)?,
                ))
            });
        let row = match row {
            Ok(row) => Some(row),
            Err(rusqlite::Error::QueryReturnedNoRows) => None,
            Err(e) => return Err(e.into()),
        };
        let mut hidden = (Vec::<i64>::new(), Vec::<i64>::new(), Vec::<Option<String>>::new());
        let mut stmt =
            conn.prepare_cached("SELECT file_id, offset, hidden FROM entries WHERE session_id = ?1 AND duplicate = 1")?;
        let mut rows = stmt.query([session])?;
        while let Some(r) = rows.next()? {
            hidden.0.push(r.get(0)?);
            hidden.1.push(r.get(1)?);
            hidden.2.push(r.get::<_, Option<String>>(2)?.map(|h| text(&h)));
        }
        let usage = usage_rows(conn, session)?;
        let host = &self.host;
        let mut tx = self.client.transaction()?;
        match &row {
            None => {
                tx.execute("DELETE FROM sessions WHERE host = $1 AND id = $2", &[host, &session])?;
            }
            Some(s) => {
                tx.execute(
                    "INSERT INTO sessions (host, id, project, title, title_rank, first_timestamp, last_timestamp,
                                           entries, images, sidechain_entries, agent, forked_from)
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
                     ON CONFLICT (host, id) DO UPDATE SET
                        project = excluded.project, title = excluded.title, title_rank = excluded.title_rank,
                        first_timestamp = excluded.first_timestamp, last_timestamp = excluded.last_timestamp,
                        entries = excluded.entries, images = excluded.images,
                        sidechain_entries = excluded.sidechain_entries, agent = excluded.agent,
                        forked_from = excluded.forked_from",
                    &[
                        host,
                        &text(session),
                        &s.0.as_deref().map(text),
                        &s.1.as_deref().map(text),
                        &(s.2 as i32),
                        &s.3,
                        &s.4,
                        &s.5,
                        &s.6,
                        &s.7,
                        &s.8,
                        &s.9.as_deref().map(text),
                    ],
                )?;
            }
        }
        tx.execute(
            "UPDATE entries SET duplicate = false, hidden = NULL
             WHERE host = $1 AND session_id = $2 AND duplicate
               AND (file_id, off) NOT IN (SELECT * FROM unnest($3::bigint[], $4::bigint[]))",
            &[host, &text(session), &hidden.0, &hidden.1],
        )?;
        tx.execute(
            "UPDATE entries e SET duplicate = true, hidden = d.hidden
             FROM unnest($2::bigint[], $3::bigint[], $4::text[]) AS d(file_id, off, hidden)
             WHERE e.host = $1 AND e.file_id = d.file_id AND e.off = d.off
               AND (NOT e.duplicate OR e.hidden IS DISTINCT FROM d.hidden)",
            &[host, &hidden.0, &hidden.1, &hidden.2],
        )?;
        tx.execute("DELETE FROM usage WHERE host = $1 AND session_id = $2", &[host, &text(session)])?;
        if !usage.key.is_empty() {
            tx.execute(
                "INSERT INTO usage (host, key, session_id, agent, model, request_id, timestamp, day, tier,
                                    input_tokens, output_tokens, cache_read_tokens, cache_write_tokens,
                                    cache_write_1h_tokens, reasoning_tokens, lines)
                 SELECT $1, * FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[],
                                          $8::text[], $9::text[], $10::bigint[], $11::bigint[], $12::bigint[],
                                          $13::bigint[], $14::bigint[], $15::bigint[], $16::bigint[])
                 ON CONFLICT (host, key) DO UPDATE SET
                    session_id = excluded.session_id, agent = excluded.agent, model = excluded.model,
                    request_id = excluded.request_id, timestamp = excluded.timestamp, day = excluded.day,
                    tier = excluded.tier, input_tokens = excluded.input_tokens,
                    output_tokens = excluded.output_tokens, cache_read_tokens = excluded.cache_read_tokens,
                    cache_write_tokens = excluded.cache_write_tokens,
                    cache_write_1h_tokens = excluded.cache_write_1h_tokens,
                    reasoning_tokens = excluded.reasoning_tokens, lines = excluded.lines",
                &[
                    host,
                    &usage.key,
                    &usage.session_id,
                    &usage.agent,
                    &usage.model,
                    &usage.request_id,
                    &usage.timestamp,
                    &usage.day,
                    &usage.tier,
                    &usage.tokens[0],
                    &usage.tokens[1],
                    &usage.tokens[2],
                    &usage.tokens[3],
                    &usage.tokens[4],
                    &usage.tokens[5],
                    &usage.lines,
                ],
            )?;
        }
        tx.commit()?;
        Ok(())
    }
}

/// Text as PostgreSQL takes it: it refuses NUL, which a JSON string may hold (`\u0000`).
fn text(s: &str) -> String {
    if s.contains('\0') { s.replace('\0', "\u{FFFD}") } else { s.to_owned() }
}

fn local_files(conn: &Connection) -> Result<Vec<LocalFile>> {
    let mut stmt = conn.prepare(
        "SELECT id, path, session_id, agent, state, lines, checkpoint, indexed_at, gone_at, generation
         FROM files ORDER BY id",
    )?;
    let rows = stmt.query_map([], |r| {
        Ok(LocalFile {
            id: r.get(0)?,
            path: r.get(1)?,
            session_id: r.get(2)?,
            agent: r.get(3)?,
            state: r.get(4)?,
            lines: r.get(5)?,
            checkpoint: r.get(6)?,
            indexed_at: r.get(7)?,
            gone_at: r.get(8)?,
            generation: r.get(9)?,
        })
    })?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// One line's row, as the hub takes it.
#[derive(Debug)]
struct Entry {
    off: i64,
    local_id: i64,
    session_id: String,
    line: i64,
    length: i64,
    uuid: Option<String>,
    parent_uuid: Option<String>,
    kind: Option<String>,
    role: Option<String>,
    timestamp: Option<String>,
    is_sidechain: bool,
    stripped: Option<String>,
    text: Option<String>,
    invalid: Option<String>,
    sort_at: String,
    sort_file: i64,
    duplicate: bool,
    agent_id: Option<String>,
    spawned_agent: Option<String>,
    agent: String,
    hidden: Option<String>,
}

/// A file's next lines after an offset, with their media rows and failed images.
#[derive(Debug, Default)]
struct Batch {
    entries: Vec<Entry>,
    /// Each media row with its line's offset.
    media: Vec<(i64, media::MediaRecord)>,
    /// (line offset, ordinal, reason).
    failed: Vec<(i64, i32, String)>,
    /// It stopped at [`BATCH_BYTES`], not at the end of the file's lines.
    cut: bool,
}

fn read_batch(conn: &Connection, file_id: i64, after: i64) -> Result<Batch> {
    // One snapshot for the batch's lines, media rows and failed images.
    let tx = conn.unchecked_transaction()?;
    let mut batch = Batch::default();
    let opt = |s: Option<String>| s.map(|s| text(&s));
    {
        let mut stmt = tx.prepare_cached(
            "SELECT offset, id, session_id, line, length, uuid, parent_uuid, type, role, timestamp, is_sidechain,
                    stripped, text, invalid, sort_at, sort_file, duplicate, agent_id, spawned_agent, agent, hidden
             FROM entries WHERE file_id = ?1 AND offset > ?2 ORDER BY offset LIMIT ?3",
        )?;
        let mut rows = stmt.query(params![file_id, after, BATCH_LINES])?;
        let mut bytes = 0usize;
        while let Some(r) = rows.next()? {
            let entry = Entry {
                off: r.get(0)?,
                local_id: r.get(1)?,
                session_id: text(&r.get::<_, String>(2)?),
                line: r.get(3)?,
                length: r.get(4)?,
                uuid: opt(r.get(5)?),
                parent_uuid: opt(r.get(6)?),
                kind: opt(r.get(7)?),
                role: opt(r.get(8)?),
                timestamp: opt(r.get(9)?),
                is_sidechain: r.get::<_, i64>(10)? != 0,
                stripped: opt(r.get(11)?),
                text: opt(r.get(12)?),
                invalid: opt(r.get(13)?),
                sort_at: text(&r.get::<_, String>(14)?),
                sort_file: r.get(15)?,
                duplicate: r.get::<_, i64>(16)? != 0,
                agent_id: opt(r.get(17)?),
                spawned_agent: opt(r.get(18)?),
                agent: r.get(19)?,
                hidden: opt(r.get(20)?),
            };
            bytes += entry.stripped.as_ref().map_or(0, String::len) + entry.text.as_ref().map_or(0, String::len);
            batch.entries.push(entry);
            if bytes > BATCH_BYTES {
                batch.cut = true;
                break;
            }
        }
    }
    let (Some(first), Some(last)) = (batch.entries.first(), batch.entries.last()) else {
        return Ok(batch);
    };
    let (from, to) = (first.off, last.off);
    {
        let mut stmt = tx.prepare_cached(&format!(
            "SELECT {MEDIA_COLUMNS}
         FROM entries e JOIN media m ON m.entry_id = e.id JOIN files f ON f.id = e.file_id
         WHERE e.file_id = ?1 AND e.offset BETWEEN ?2 AND ?3 ORDER BY m.offset"
        ))?;
        let records = stmt.query_map(params![file_id, from, to], media_record)?;
        for record in records {
            let record = record?;
            batch.media.push((record.line_offset as i64, record));
        }
    }
    {
        let mut stmt = tx.prepare_cached(
            "SELECT e.offset, fi.ordinal, fi.reason FROM entries e JOIN failed_images fi ON fi.entry_id = e.id
         WHERE e.file_id = ?1 AND e.offset BETWEEN ?2 AND ?3",
        )?;
        let failed = stmt.query_map(params![file_id, from, to], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
        for f in failed {
            let (off, ordinal, reason): (i64, i32, String) = f?;
            batch.failed.push((off, ordinal, text(&reason)));
        }
    }
    tx.commit()?;
    Ok(batch)
}

/// A payload's decoded bytes, checked against its blake3 before they are handed out.
fn read_verified(record: &media::MediaRecord) -> Result<Vec<u8>> {
    let mut reader = media::open(record)?;
    let mut bytes = Vec::with_capacity(record.decoded_length.min(64 << 20) as usize);
    // The reader fails at its end when the bytes do not match their length and blake3.
    reader.read_to_end(&mut bytes).map_err(|e| media::into_error(e, record))?;
    Ok(bytes)
}

/// Sends a batch's lines (an upsert: a line sent again replaces itself), then their media rows and
/// failed images, replacing those the hub held for the same lines.
fn send_rows(tx: &mut postgres::Transaction<'_>, host: &str, file_id: i64, batch: &Batch) -> Result<()> {
    let e = &batch.entries;
    let offs: Vec<i64> = e.iter().map(|e| e.off).collect();
    let col = |f: &dyn Fn(&Entry) -> Option<String>| e.iter().map(f).collect::<Vec<Option<String>>>();
    tx.execute(
        "INSERT INTO entries (host, file_id, off, local_id, session_id, line, length, uuid, parent_uuid, type, role,
                              timestamp, is_sidechain, stripped, text, invalid, sort_at, sort_file, duplicate,
                              agent_id, spawned_agent, agent, hidden)
         SELECT $1, $2, * FROM unnest($3::bigint[], $4::bigint[], $5::text[], $6::bigint[], $7::bigint[],
                                      $8::text[], $9::text[], $10::text[], $11::text[], $12::text[],
                                      $13::boolean[], $14::text[], $15::text[], $16::text[], $17::text[],
                                      $18::bigint[], $19::boolean[], $20::text[], $21::text[], $22::text[],
                                      $23::text[])
         ON CONFLICT (host, file_id, off) DO UPDATE SET
            local_id = excluded.local_id, session_id = excluded.session_id, line = excluded.line,
            length = excluded.length, uuid = excluded.uuid, parent_uuid = excluded.parent_uuid,
            type = excluded.type, role = excluded.role, timestamp = excluded.timestamp,
            is_sidechain = excluded.is_sidechain, stripped = excluded.stripped, text = excluded.text,
            invalid = excluded.invalid, sort_at = excluded.sort_at, sort_file = excluded.sort_file,
            duplicate = excluded.duplicate, agent_id = excluded.agent_id,
            spawned_agent = excluded.spawned_agent, agent = excluded.agent, hidden = excluded.hidden",
        &[
            &host,
            &file_id,
            &offs,
            &e.iter().map(|e| e.local_id).collect::<Vec<_>>(),
            &e.iter().map(|e| e.session_id.clone()).collect::<Vec<_>>(),
            &e.iter().map(|e| e.line).collect::<Vec<_>>(),
            &e.iter().map(|e| e.length).collect::<Vec<_>>(),
            &col(&|e| e.uuid.clone()),
            &col(&|e| e.parent_uuid.clone()),
            &col(&|e| e.kind.clone()),
            &col(&|e| e.role.clone()),
            &col(&|e| e.timestamp.clone()),
            &e.iter().map(|e| e.is_sidechain).collect::<Vec<_>>(),
            &col(&|e| e.stripped.clone()),
            &col(&|e| e.text.clone()),
            &col(&|e| e.invalid.clone()),
            &e.iter().map(|e| e.sort_at.clone()).collect::<Vec<_>>(),
            &e.iter().map(|e| e.sort_file).collect::<Vec<_>>(),
            &e.iter().map(|e| e.duplicate).collect::<Vec<_>>(),
            &col(&|e| e.agent_id.clone()),
            &col(&|e| e.spawned_agent.clone()),
            &e.iter().map(|e| e.agent.clone()).collect::<Vec<_>>(),
            &col(&|e| e.hidden.clone()),
        ],
    )?;
    for table in ["media", "failed_images"] {
        tx.execute(
            &format!("DELETE FROM {table} WHERE host = $1 AND file_id = $2 AND entry_off = ANY($3)"),
            &[&host, &file_id, &offs],
        )?;
    }
    if !batch.media.is_empty() {
        let m = &batch.media;
        tx.execute(
            "INSERT INTO media (host, file_id, off, entry_off, ordinal, kind, length, encoding, media_type,
                                decoded_length, blake3)
             SELECT $1, $2, * FROM unnest($3::bigint[], $4::bigint[], $5::integer[], $6::text[], $7::bigint[],
                                          $8::text[], $9::text[], $10::bigint[], $11::text[])",
            &[
                &host,
                &file_id,
                &m.iter().map(|(_, r)| r.offset as i64).collect::<Vec<_>>(),
                &m.iter().map(|(off, _)| *off).collect::<Vec<_>>(),
                &m.iter().map(|(_, r)| r.ordinal.map(|o| o as i32)).collect::<Vec<_>>(),
                &m.iter().map(|(_, r)| r.kind.as_str().to_owned()).collect::<Vec<_>>(),
                &m.iter().map(|(_, r)| r.length as i64).collect::<Vec<_>>(),
                &m.iter().map(|(_, r)| r.encoding.as_str().to_owned()).collect::<Vec<_>>(),
                &m.iter().map(|(_, r)| r.media_type.as_deref().map(text)).collect::<Vec<_>>(),
                &m.iter().map(|(_, r)| r.decoded_length as i64).collect::<Vec<_>>(),
                &m.iter().map(|(_, r)| r.blake3.clone()).collect::<Vec<_>>(),
            ],
        )?;
    }
    if !batch.failed.is_empty() {
        let f = &batch.failed;
        tx.execute(
            "INSERT INTO failed_images (host, file_id, entry_off, ordinal, reason)
             SELECT $1, $2, * FROM unnest($3::bigint[], $4::integer[], $5::text[])",
            &[
                &host,
                &file_id,
                &f.iter().map(|f| f.0).collect::<Vec<_>>(),
                &f.iter().map(|f| f.1).collect::<Vec<_>>(),
                &f.iter().map(|f| f.2.clone()).collect::<Vec<_>>(),
            ],
        )?;
    }
    Ok(())
}

/// A session's usage ledger, column by column.
#[derive(Debug, Default)]
struct UsageRows {
    key: Vec<String>,
    session_id: Vec<String>,
    agent: Vec<String>,
    model: Vec<Option<String>>,
    request_id: Vec<Option<String>>,
    timestamp: Vec<Option<String>>,
    day: Vec<Option<String>>,
    tier: Vec<Option<String>>,
    tokens: [Vec<i64>; 6],
    lines: Vec<i64>,
}

fn usage_rows(conn: &Connection, session: &str) -> Result<UsageRows> {
    let mut out = UsageRows::default();
    let mut stmt = conn.prepare_cached(
        "SELECT key, session_id, agent, model, request_id, timestamp, day, tier, input_tokens, output_tokens,
                cache_read_tokens, cache_write_tokens, cache_write_1h_tokens, reasoning_tokens, lines
         FROM usage WHERE session_id = ?1",
    )?;
    let mut rows = stmt.query([session])?;
    let opt = |s: Option<String>| s.map(|s| text(&s));
    while let Some(r) = rows.next()? {
        out.key.push(text(&r.get::<_, String>(0)?));
        out.session_id.push(text(&r.get::<_, String>(1)?));
        out.agent.push(r.get(2)?);
        out.model.push(opt(r.get(3)?));
        out.request_id.push(opt(r.get(4)?));
        out.timestamp.push(opt(r.get(5)?));
        out.day.push(opt(r.get(6)?));
        out.tier.push(opt(r.get(7)?));
        for (i, column) in out.tokens.iter_mut().enumerate() {
            column.push(r.get(8 + i)?);
        }
        out.lines.push(r.get(14)?);
    }
    Ok(out)
}
