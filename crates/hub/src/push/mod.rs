//! Pushing this host's index to the hub: what is new since each file's watermark, in transactions
//! that each move the watermark with the rows they send, so that a push stopped anywhere (`kill -9`,
//! the hub restarting) loses nothing and sends nothing twice when it runs again.
//!
//! A host name belongs to one data directory: its identity, a random id kept in the data
//! directory's `hub-identity` file (not in the index, which is derived and may be made anew), is
//! recorded on the hub with the name; another data directory is refused the name until it takes it
//! over, which replaces the host's rows with its own.
//!
//! One pass ([`Pusher::push`]):
//! - the index's identity (the device and inode of `index.sqlite3`) is compared with the one the
//!   hub recorded: an index made anew (`scrollback rebuild`, a damaged one moved aside) has new row
//!   ids, so the host's rows are sent again (photos already there are not);
//! - sessions forgotten here are deleted from the hub, and not sent again until unforgotten;
//! - a person's marks (titles, pins: the acceptance record's, not the index's) are made the hub's
//!   for this host: each set or changed here sent, each cleared here deleted there;
//! - each file whose row changed sends its lines after its watermark (the offset of the last line
//!   sent, in the file's generation: a file read again from its start is sent again), with their
//!   media rows, failed images, and every photo the hub does not hold yet, verified against its
//!   blake3 as it is read; the files go over two connections at once, so that the hub keeps its
//!   search indexes (most of a push's work) on two of its cores;
//! - each session those lines belong to sends its row, its copies' and hidden entries' marks, its
//!   usage ledger, and the overview's sums of it (by hour, and its edits);
//! - the pass's commits do not wait for the hub's disk but its last one, which then holds them all
//!   (`unflushed_commits`).
//!
//! The pusher only reads the index (a reader connection); the writer never waits for it.
//!
//! Layout: `read.rs` gathers, from the local index, what a pass sends into named rows; `write.rs`
//! writes them to the hub inside the transactions this module opens; this module decides what is
//! sent and when (the identity check, forgotten sessions, each file's watermark).

use std::collections::{BTreeSet, HashMap, HashSet};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Instant;

use rusqlite::Connection;

use crate::Pg;
use crate::connection::Hub;
use crate::{HubConfig, migrate};
use scrollback_core::db;
use scrollback_core::error::{Error, Result};

mod identity;
mod read;
mod write;

pub use identity::{IDENTITY_FILE, identity};

use read::{Batch, LocalFile};
use write::HubFile;

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
    /// Sessions whose marks (title, pin) were sent, or deleted from the hub as cleared here.
    pub marks: u64,
    /// Whether the host's rows were all sent again (the index was made anew).
    pub resent: bool,
}

impl Pushed {
    /// Whether anything was sent.
    pub fn is_empty(&self) -> bool {
        self.files == 0 && self.forgotten == 0 && self.marks == 0 && !self.resent
    }
}

/// The advisory lock class of a host's push (the key is the hash of its name).
const PUSH_LOCK: i32 = 7461024;

/// Pushes one host's index to a hub. Holds the hub's advisory lock for its host name, so that two
/// pushers of one host never interleave; the hub frees it when the session ends.
pub struct Pusher {
    host: String,
    data_dir: PathBuf,
    /// Where the hub is, for the pass's second connection ([`Pusher::push_files`]).
    config: HubConfig,
    /// What ends every wait of the pusher's connections.
    stop: Option<Arc<AtomicBool>>,
    client: Hub,
    /// When the hub last answered this pusher.
    used: Instant,
    /// The hub's files of this host as of the last pass (the pusher is their only writer).
    files: HashMap<i64, HubFile>,
}

impl std::fmt::Debug for Pusher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pusher").field("host", &self.host).field("data_dir", &self.data_dir).finish()
    }
}

impl Pusher {
    /// Connects to the hub, brings its schema to this version, takes the push lock of `host`
    /// (waiting at most the hub's timeout for a session of it that went silent to end), and checks
    /// that `host` is this data directory's name on the hub; with `take_over`, makes it so.
    pub fn connect(config: &HubConfig, host: &str, data_dir: &Path, take_over: bool) -> Result<Pusher> {
        Self::connect_stopping(config, host, data_dir, take_over, None)
    }

    /// [`Self::connect`], every wait on the hub ended (and the connection dropped) once `stop` is set.
    pub fn connect_stopping(
        config: &HubConfig,
        host: &str,
        data_dir: &Path,
        take_over: bool,
        stop: Option<Arc<AtomicBool>>,
    ) -> Result<Pusher> {
        if host.is_empty() || host.len() > 255 || host.chars().any(char::is_control) {
            return Err(Error::BadQuery(format!("{host:?} is not a host name (1 to 255 characters, no control ones)")));
        }
        let identity = identity(data_dir)?;
        let mut client = config.connect()?;
        if let Some(stop) = &stop {
            client.stop_on(stop.clone());
        }
        migrate(&mut client)?;
        unflushed_commits(&mut client)?;
        if !client.advisory_lock(PUSH_LOCK, host, config.timeout())? {
            return Err(Error::Hub(format!(
                "another push of host {host:?} is running against this hub (it held the lock for {} s)",
                config.timeout().as_secs()
            )));
        }
        identity::claim(&mut client, host, &identity, take_over)?;
        let mut pusher = Pusher {
            host: host.to_owned(),
            data_dir: data_dir.to_owned(),
            config: config.clone(),
            stop,
            client,
            used: Instant::now(),
            files: HashMap::new(),
        };
        pusher.load_files()?;
        Ok(pusher)
    }

    /// How long since the hub last answered this pusher (the hub ends a session idle for its
    /// timeout: past half of it, connect again).
    pub fn idle(&self) -> std::time::Duration {
        self.used.elapsed()
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
                Ok((
                    r.try_get(0).pg()?,
                    HubFile {
                        path: r.try_get(1).pg()?,
                        state: r.try_get(2).pg()?,
                        lines: r.try_get(3).pg()?,
                        checkpoint: r.try_get(4).pg()?,
                        indexed_at: r.try_get(5).pg()?,
                        generation: r.try_get(6).pg()?,
                        last_off: r.try_get(7).pg()?,
                    },
                ))
            })
            .collect::<Result<_>>()?;
        Ok(())
    }

    /// One pass: sends everything the hub does not hold yet of this host's index.
    pub fn push(&mut self) -> Result<Pushed> {
        let result = self.push_inner();
        self.used = Instant::now();
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
        let forgotten = self.push_forgotten()?;
        let mut pushed = Pushed { resent, forgotten, marks: self.push_marks()?, ..Pushed::default() };
        let local = read::local_files(&conn)?;
        let local_ids: HashSet<i64> = local.iter().map(|f| f.id).collect();
        let dropped: Vec<i64> = self.files.keys().filter(|id| !local_ids.contains(id)).copied().collect();
        let mut synced = BTreeSet::new();
        if !dropped.is_empty() {
            let mut tx = self.client.transaction()?;
            tx.execute("DELETE FROM entries WHERE host = $1 AND file_id = ANY($2)", &[&self.host, &dropped])?;
            let sessions = tx.query(
                "DELETE FROM files WHERE host = $1 AND file_id = ANY($2) RETURNING session_id",
                &[&self.host, &dropped],
            )?;
            tx.commit()?;
            for id in &dropped {
                self.files.remove(id);
            }
            let sessions: BTreeSet<String> = sessions.iter().map(|r| r.try_get(0)).collect::<Result<_, _>>().pg()?;
            self.send_sessions(&conn, &sessions.iter().collect::<Vec<_>>())?;
            synced.extend(sessions);
        }
        let changed: Vec<&LocalFile> =
            local.iter().filter(|f| !self.files.get(&f.id).is_some_and(|hub| hub.same_as(f))).collect();
        pushed.files = changed.len() as u64;
        if !changed.is_empty() {
            self.push_files(&conn, &changed, &mut pushed, &mut synced)?;
        }
        pushed.sessions = synced.len() as u64;
        if !pushed.is_empty() || !dropped.is_empty() {
            // The pass's last commit waits for the hub's disk, and with it every commit before it
            // (the write-ahead log is flushed in order): a push that returns has its rows durable.
            let mut tx = self.client.transaction()?;
            tx.batch_execute("SET LOCAL synchronous_commit = on")?;
            tx.execute("UPDATE hosts SET last_push_at = now() WHERE name = $1", &[&self.host])?;
            tx.commit()?;
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
            tx.query_one("SELECT index_id FROM hosts WHERE name = $1 FOR UPDATE", &[&self.host])?.try_get(0).pg()?;
        if recorded.as_deref() == Some(identity.as_str()) {
            return Ok(false);
        }
        let resend = recorded.is_some();
        if resend {
            for table in ["entries", "files", "sessions", "usage"].into_iter().chain(read::SUMS.iter().map(|t| t.table))
            {
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
        let here: BTreeSet<String> = match scrollback_accept::AcceptStore::open_if_any(&self.data_dir)? {
            Some(store) => store.forgotten_sessions()?.into_iter().collect(),
            None => BTreeSet::new(),
        };
        let on_hub: BTreeSet<String> = self
            .client
            .query("SELECT session_id FROM forgotten WHERE host = $1", &[&self.host])?
            .iter()
            .map(|r| r.try_get(0))
            .collect::<Result<_, _>>()
            .pg()?;
        let back: Vec<&String> = on_hub.difference(&here).collect();
        if !back.is_empty() {
            self.client
                .execute("DELETE FROM forgotten WHERE host = $1 AND session_id = ANY($2)", &[&self.host, &back])?;
        }
        let mut n = 0;
        for session in here.difference(&on_hub) {
            let mut tx = self.client.transaction()?;
            for table in ["entries", "usage"].into_iter().chain(read::SUMS.iter().map(|t| t.table)) {
                tx.execute(
                    &format!("DELETE FROM {table} WHERE host = $1 AND session_id = $2"),
                    &[&self.host, session],
                )?;
            }
            tx.execute("DELETE FROM sessions WHERE host = $1 AND id = $2", &[&self.host, session])?;
            tx.execute("DELETE FROM marks WHERE host = $1 AND session_id = $2", &[&self.host, session])?;
            tx.execute("INSERT INTO forgotten (host, session_id) VALUES ($1, $2)", &[&self.host, session])?;
            tx.commit()?;
            n += 1;
        }
        Ok(n)
    }

    /// Makes the hub's marks of this host the data directory's, in one transaction: each mark set
    /// or changed here is sent, each the hub holds that is cleared here (or whose session was
    /// forgotten) is deleted. How many sessions' marks it sent or deleted.
    fn push_marks(&mut self) -> Result<u64> {
        let here: HashMap<String, MarkRow> = match scrollback_accept::AcceptStore::open_if_any(&self.data_dir)? {
            Some(store) => store
                .all_marks()?
                .into_iter()
                .map(|m| {
                    let set_at = read::text(&m.updated_at.unwrap_or_default());
                    (read::text(&m.session_id), (m.title.as_deref().map(read::text), m.pinned, set_at))
                })
                .collect(),
            None => HashMap::new(),
        };
        let on_hub: HashMap<String, MarkRow> = self
            .client
            .query("SELECT session_id, title, pinned, set_at FROM marks WHERE host = $1", &[&self.host])?
            .iter()
            .map(|r| Ok((r.try_get(0).pg()?, (r.try_get(1).pg()?, r.try_get(2).pg()?, r.try_get(3).pg()?))))
            .collect::<Result<_>>()?;
        let gone: Vec<&String> = on_hub.keys().filter(|id| !here.contains_key(*id)).collect();
        let changed: Vec<(&String, &MarkRow)> =
            here.iter().filter(|(id, mark)| on_hub.get(*id) != Some(mark)).collect();
        if gone.is_empty() && changed.is_empty() {
            return Ok(0);
        }
        let mut tx = self.client.transaction()?;
        if !gone.is_empty() {
            tx.execute("DELETE FROM marks WHERE host = $1 AND session_id = ANY($2)", &[&self.host, &gone])?;
        }
        for (session, (title, pinned, set_at)) in &changed {
            tx.execute(
                "INSERT INTO marks (host, session_id, title, pinned, set_at) VALUES ($1, $2, $3, $4, $5)
                 ON CONFLICT (host, session_id) DO UPDATE SET
                    title = excluded.title, pinned = excluded.pinned, set_at = excluded.set_at",
                &[&self.host, session, title, pinned, set_at],
            )?;
        }
        tx.commit()?;
        Ok((gone.len() + changed.len()) as u64)
    }

    /// Sends the changed files' lines after their watermarks over up to [`CONNECTIONS`] connections
    /// at once, a file to one of them (the hub's search indexes are most of a push's work, and the
    /// hub spends it on the cores of every connection); then, on this pusher's connection, the rows
    /// of the sessions they belong to (into `synced`), and only then records each file as sent (its
    /// line count and checkpoint), so that a pass stopped anywhere is taken up again.
    fn push_files(
        &mut self,
        conn: &Connection,
        changed: &[&LocalFile],
        pushed: &mut Pushed,
        synced: &mut BTreeSet<String>,
    ) -> Result<()> {
        let extras = self.extra_connections(CONNECTIONS.min(changed.len()) - 1)?;
        let next = AtomicUsize::new(0);
        let failed = AtomicBool::new(false);
        let (host, files) = (&self.host, &self.files);
        let work = |client: &mut Hub, conn: &Connection| -> Result<Sent> {
            let mut sent = Sent::default();
            while !failed.load(Ordering::SeqCst)
                && let Some(file) = changed.get(next.fetch_add(1, Ordering::SeqCst))
            {
                let result = send_lines(client, conn, host, file, files.get(&file.id), &failed, &mut sent);
                if result.is_err() {
                    failed.store(true, Ordering::SeqCst);
                    return result.map(|()| sent);
                }
            }
            Ok(sent)
        };
        let client = &mut self.client;
        let (mine, theirs) = std::thread::scope(|s| {
            let work = &work;
            let theirs: Vec<_> = extras.into_iter().map(|(mut c, conn)| s.spawn(move || work(&mut c, &conn))).collect();
            let mine = work(client, conn);
            (mine, theirs.into_iter().map(|t| t.join()).collect::<Vec<_>>())
        });
        let mut sent = mine?;
        for theirs in theirs {
            sent.add(theirs.map_err(|_| Error::Internal("a push connection's thread panicked".into()))??);
        }
        pushed.entries += sent.pushed.entries;
        pushed.photos += sent.pushed.photos;
        pushed.photo_bytes += sent.pushed.photo_bytes;
        pushed.photos_unreadable += sent.pushed.photos_unreadable;
        self.files.extend(sent.files);
        self.send_sessions(conn, &sent.touched.iter().collect::<Vec<_>>())?;
        synced.extend(sent.touched);
        write::files_sent(&mut self.client, &self.host, changed)?;
        for file in changed {
            if let Some(hub) = self.files.get_mut(&file.id) {
                hub.lines = file.lines;
                hub.checkpoint = file.checkpoint;
                hub.indexed_at = file.indexed_at.clone();
            }
        }
        Ok(())
    }

    /// Up to `n` more connections to the hub, each with a reader connection of the index of its
    /// own, for [`Self::push_files`]: fewer when the hub refuses one (this pusher's connection
    /// then sends more of the files). They work under this pusher's lock of the host, and stop
    /// with it.
    fn extra_connections(&self, n: usize) -> Result<Vec<(Hub, Connection)>> {
        let mut extras = Vec::new();
        for _ in 0..n {
            let mut client = match self.config.connect() {
                Ok(client) => client,
                Err(e) => {
                    tracing::debug!("{}: another connection to the hub: {e}; pushing over fewer", self.host);
                    break;
                }
            };
            if let Some(stop) = &self.stop {
                client.stop_on(stop.clone());
            }
            unflushed_commits(&mut client)?;
            extras.push((client, scrollback_read::index::open(&self.data_dir)?));
        }
        Ok(extras)
    }

    /// Sends sessions' rows, which of their entries are copies or hidden, their usage ledgers and
    /// their sums, [`SESSIONS_PER_TRANSACTION`] to a transaction.
    fn send_sessions(&mut self, conn: &Connection, sessions: &[&String]) -> Result<()> {
        for group in sessions.chunks(SESSIONS_PER_TRANSACTION) {
            let mut rows = read::SessionRows::default();
            for session in group {
                rows.read(conn, session)?;
            }
            let mut tx = self.client.transaction()?;
            write::send_sessions(&mut tx, &self.host, &rows)?;
            tx.commit()?;
        }
        Ok(())
    }
}

/// Has a pusher's connection commit without waiting for the hub to flush each commit to disk (a
/// pass commits a transaction per batch of a file's lines; docs/benchmarks.md measures the gain).
/// It is safe here: each transaction moves the file's watermark with its rows, so a hub that
/// crashes loses whole transactions, newest first, and the pusher reads the watermarks again on its
/// next connection (a crash ends this one) and sends what was lost; and a pass ends with a commit
/// that does wait ([`Pusher::push`]).
fn unflushed_commits(client: &mut Hub) -> Result<()> {
    client.batch_execute("SET synchronous_commit = off")
}

/// A session's marks as the hub holds them: its title, whether it is pinned, when one was set.
type MarkRow = (Option<String>, bool, String);

/// How many sessions' rows a transaction sends at most, in a few statements for them all: a heavy
/// user's pass touches tens of thousands of sessions, and a commit each, then a dozen statements
/// each, were most of its time on the hub.
const SESSIONS_PER_TRANSACTION: usize = 200;

/// How many connections a pass sends files' lines over at most.
const CONNECTIONS: usize = 2;

/// What one connection's share of [`Pusher::push_files`] sent: the hub's row of each file it sent
/// (as the hub holds it once those transactions committed), the sessions their lines belong to,
/// and the counts.
#[derive(Default)]
struct Sent {
    files: Vec<(i64, HubFile)>,
    touched: BTreeSet<String>,
    pushed: Pushed,
}

impl Sent {
    fn add(&mut self, other: Sent) {
        self.files.extend(other.files);
        self.touched.extend(other.touched);
        self.pushed.entries += other.pushed.entries;
        self.pushed.photos += other.pushed.photos;
        self.pushed.photo_bytes += other.pushed.photo_bytes;
        self.pushed.photos_unreadable += other.pushed.photos_unreadable;
    }
}

/// Sends a file's row and its lines after the watermark of `before` (the hub's row of it, if it
/// has one), a batch per transaction, into `sent`; it stops before a batch once `failed` is set
/// (another connection of the pass failed, which fails the pass).
fn send_lines(
    client: &mut Hub,
    conn: &Connection,
    host: &str,
    file: &LocalFile,
    before: Option<&HubFile>,
    failed: &AtomicBool,
    sent: &mut Sent,
) -> Result<()> {
    sent.touched.insert(file.session_id.clone());
    let (mut after, mut reset) = match before {
        Some(hub) if hub.generation == file.generation => (hub.last_off, false),
        Some(_) => (-1, true),
        None => (-1, false),
    };
    loop {
        if failed.load(Ordering::SeqCst) {
            // Another connection failed, and the pass with it (with its error).
            return Ok(());
        }
        let batch = read::read_batch(conn, file.id, after)?;
        let done = (batch.entries.len() as i64) < read::BATCH_LINES && !batch.cut;
        let hub = send_batch(client, host, file, &batch, after, reset, sent)?;
        after = hub.last_off;
        // Only the first transaction deletes the lines of the file's earlier generation.
        reset = false;
        if done {
            sent.files.push((file.id, hub));
            return Ok(());
        }
    }
}

/// Sends one batch of a file's lines in one transaction, with the file's row, whose watermark
/// moves to the batch's last line (stays at `after` when it has none); the file's row as the hub
/// then holds it. With `reset`, the lines the hub held of the file go first, and their sessions
/// into `sent`.
fn send_batch(
    client: &mut Hub,
    host: &str,
    file: &LocalFile,
    batch: &Batch,
    after: i64,
    reset: bool,
    sent: &mut Sent,
) -> Result<HubFile> {
    let mut tx = client.transaction()?;
    if reset {
        sent.touched.extend(write::drop_lines(&mut tx, host, file.id)?);
    }
    let last_off = batch.entries.last().map_or(after, |e| e.off);
    // The file's row carries the watermark; its checkpoint and line count are the index's only
    // once its sessions are sent too (`push_files`).
    let hub = HubFile {
        path: file.path.clone(),
        state: file.state.clone(),
        lines: -1,
        checkpoint: -1,
        indexed_at: String::new(),
        generation: file.generation,
        last_off,
    };
    write::file_row(&mut tx, host, file, &hub)?;
    if !batch.entries.is_empty() {
        let photos = write::send_photos(&mut tx, host, &batch.media)?;
        sent.pushed.photos += photos.sent;
        sent.pushed.photo_bytes += photos.bytes;
        sent.pushed.photos_unreadable += photos.unreadable;
        write::send_rows(&mut tx, host, file.id, batch)?;
        sent.touched.extend(batch.entries.iter().map(|e| e.session_id.clone()));
        sent.pushed.entries += batch.entries.len() as u64;
    }
    tx.commit()?;
    Ok(hub)
}
