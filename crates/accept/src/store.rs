//! The acceptance record: each sent message, recorded durably before anything else happens.
//!
//! [`AcceptStore`] owns `accepted.sqlite3` (synchronous commits, see `accept.sql`) and the image
//! files under `accepted-images/`, named by the blake3 of their bytes. A send's images are written
//! and synced (file and directory) before its row commits, and the row commits before the send is
//! answered: "recording it IS acceptance". The same `clientMessageId` again returns the recorded
//! message and stores nothing twice. Nothing here is derived from the transcripts, and nothing here
//! is deleted or rebuilt by scrollback.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};

use crate::send::CheckedSend;
use scrollback_core::codec::refs::ContentHash;
use scrollback_core::db::{self, ConnectionKind};
use scrollback_core::error::{Error, Result};

/// The environment variable that makes every sent image after the first `N` fail to be written as
/// if the disk were full (ENOSPC): fault injection for the test that a refused send leaves no
/// image behind (`tests/accept.rs`), where a real full file system cannot be had. Never set it
/// otherwise.
pub const FAULT_DISK_FULL_AFTER: &str = "SCROLLBACK_FAULT_DISK_FULL_AFTER";

/// The folder under the data directory that holds sent images.
pub const IMAGES_DIR: &str = "accepted-images";

/// Whether the transcript backs a message yet, as far as a client has said.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    /// Owed: no client has said the transcript holds it.
    Pending,
    /// A client reconciled it with a transcript entry; kept as an audit of the send.
    Retired,
}

impl State {
    /// The name stored and sent (`pending`, `retired`).
    pub fn as_str(self) -> &'static str {
        match self {
            State::Pending => "pending",
            State::Retired => "retired",
        }
    }
}

/// One accepted message, as recorded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Accepted {
    /// The client's id for it.
    pub client_message_id: String,
    /// Its chat.
    pub chat_id: String,
    /// The chat's session, once one is bound.
    pub session_id: Option<String>,
    /// The text.
    pub text: String,
    /// The images, in order.
    pub images: Vec<AcceptedImage>,
    /// When it was recorded (UTC, RFC 3339 with milliseconds).
    pub accepted_at: String,
    /// Pending or retired.
    pub state: State,
    /// Why the engine failed for it, if it did.
    pub engine_error: Option<String>,
}

/// One recorded image.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AcceptedImage {
    /// blake3 (hex) of its bytes.
    pub blake3: String,
    /// Its media type.
    pub media_type: String,
    /// Its length.
    pub bytes: u64,
}

/// What [`AcceptStore::accept`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Recorded now.
    New(Accepted),
    /// Recorded before, under the same `clientMessageId`: nothing was stored.
    Existing(Accepted),
}

impl Outcome {
    /// The record, either way.
    pub fn record(&self) -> &Accepted {
        match self {
            Outcome::New(a) | Outcome::Existing(a) => a,
        }
    }
}

/// What [`AcceptStore::bind`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bound {
    /// The chat is bound to the session now.
    Now,
    /// It already was, to the same session.
    Already,
}

/// A sent image's file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredImage {
    /// Where its bytes are.
    pub path: PathBuf,
    /// Its media type.
    pub media_type: String,
    /// Its length.
    pub bytes: u64,
}

/// A person's marks on a session (`marks` in `accept.sql`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Mark {
    /// The session.
    pub session_id: String,
    /// The title they gave it, if they did.
    pub title: Option<String>,
    /// Whether it is pinned to the top of the list.
    pub pinned: bool,
    /// When they last changed a mark (`None`: never).
    pub updated_at: Option<String>,
}

impl Mark {
    fn none(session_id: &str) -> Mark {
        Mark { session_id: session_id.to_owned(), title: None, pinned: false, updated_at: None }
    }

    fn from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Mark> {
        Ok(Mark { session_id: r.get(0)?, title: r.get(1)?, pinned: r.get(2)?, updated_at: r.get(3)? })
    }
}

/// The acceptance record of a data directory. Cheap to share behind an `Arc`; its methods block
/// (call them off an async runtime's threads).
#[derive(Debug)]
pub struct AcceptStore {
    conn: Mutex<Connection>,
    images: PathBuf,
}

const NOW: &str = "strftime('%Y-%m-%dT%H:%M:%fZ', 'now')";

impl AcceptStore {
    /// Opens (creating if needed) the acceptance record in `data_dir`.
    pub fn open(data_dir: &Path) -> Result<AcceptStore> {
        let conn = ConnectionKind::Acceptances.open(&data_dir.join(db::ACCEPT_FILE))?;
        Ok(AcceptStore { conn: Mutex::new(conn), images: data_dir.join(IMAGES_DIR) })
    }

    /// The acceptance record of `data_dir` if it has one (nothing is created): for readers (the
    /// hub's push, MCP) that show what a person marked, and never record a send.
    pub fn open_if_any(data_dir: &Path) -> Result<Option<AcceptStore>> {
        match data_dir.join(db::ACCEPT_FILE).exists() {
            true => Ok(Some(AcceptStore::open(data_dir)?)),
            false => Ok(None),
        }
    }

    /// The data directory it is kept in.
    pub fn data_dir(&self) -> &Path {
        self.images.parent().unwrap_or(&self.images)
    }

    fn lock(&self) -> MutexGuard<'_, Connection> {
        // A panic while holding the lock leaves no transaction open (rusqlite rolls back on drop).
        self.conn.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Records a checked send: images first (written and synced), then the row, committed durably.
    /// A `clientMessageId` recorded before returns that record if the send is the same message, and
    /// is [`Error::Conflict`] if it is another one. A chat bound to another session than the one
    /// the send names is [`Error::Conflict`] too.
    ///
    /// With `queue_run` (the server has an engine), a first engine run is queued in the same
    /// transaction, so an accepted message is never left with no run ([`Self::next_run`]).
    pub fn accept(&self, send: &CheckedSend, queue_run: bool) -> Result<Outcome> {
        let mut conn = self.lock();
        if let Some(existing) = record(&conn, &send.client_message_id)? {
            return if same_message(&existing, send) {
                Ok(Outcome::Existing(existing))
            } else {
                Err(Error::Conflict(format!(
                    "clientMessageId {:?} was already used for another message",
                    send.client_message_id
                )))
            };
        }
        // A conflict is found before anything is written (the lock keeps it true until the commit).
        if let Some(session) = &send.session_id {
            let current: Option<Option<String>> = conn
                .query_row("SELECT session_id FROM chats WHERE chat_id = ?1", [&send.chat_id], |r| r.get(0))
                .optional()?;
            if let Some(Some(current)) = current.filter(|c| c.as_ref() != Some(session)) {
                return Err(Error::Conflict(format!(
                    "chat {:?} is bound to session {current:?}, not {session:?}",
                    send.chat_id
                )));
            }
        }
        // Nothing half-way: an image file this send wrote goes again if the send is not recorded
        // after all (a full disk, a failed commit). A file that was there before is another
        // message's, and stays.
        let mut written = Vec::new();
        let recorded = (|| -> Result<i64> {
            let full_after = std::env::var(FAULT_DISK_FULL_AFTER).ok().and_then(|n| n.parse::<usize>().ok());
            for (i, image) in send.images.iter().enumerate() {
                if full_after.is_some_and(|n| i >= n) {
                    return Err(Error::write(
                        self.image_path(&image.blake3),
                        std::io::Error::from_raw_os_error(libc::ENOSPC),
                    ));
                }
                if let Some(new) = self.write_image(&image.blake3, &image.bytes)? {
                    written.push(new);
                }
            }
            insert_acceptance(&mut conn, send, queue_run)
        })();
        if let Err(e) = recorded {
            for path in &written {
                if let Err(removed) = std::fs::remove_file(path) {
                    tracing::warn!(path = %path.display(), "a refused send's image stays behind: {removed}");
                }
            }
            return Err(e);
        }
        let recorded =
            record(&conn, &send.client_message_id)?.ok_or_else(|| Error::NotFound(send.client_message_id.clone()))?;
        tracing::info!(client_message_id = %recorded.client_message_id, chat_id = %recorded.chat_id, images = recorded.images.len(), "accepted");
        Ok(Outcome::New(recorded))
    }

    /// Writes an image's bytes under their hash, synced, unless they are there already: the path,
    /// if this call created the file.
    fn write_image(&self, hash: &ContentHash, bytes: &[u8]) -> Result<Option<PathBuf>> {
        let path = self.image_path(hash);
        let dir = path.parent().unwrap_or(&self.images);
        if std::fs::metadata(&path).is_ok_and(|m| m.is_file() && m.len() == bytes.len() as u64) {
            return Ok(None);
        }
        let created = !dir.is_dir();
        scrollback_core::files::create_private_dir(dir).map_err(|e| Error::write(dir, e))?;
        let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(|e| Error::write(dir, e))?;
        tmp.write_all(bytes).map_err(|e| Error::write(tmp.path(), e))?;
        tmp.as_file().sync_all().map_err(|e| Error::write(tmp.path(), e))?;
        tmp.persist(&path).map_err(|e| Error::write(&path, e.error))?;
        sync_dir(dir)?;
        if created {
            // The new folder's own entry lives in its parent.
            sync_dir(&self.images)?;
            if let Some(data_dir) = self.images.parent() {
                sync_dir(data_dir)?;
            }
        }
        Ok(Some(path))
    }

    /// Where an image's bytes are kept: `accepted-images/<first two hex digits>/<hash>`.
    fn image_path(&self, hash: &ContentHash) -> PathBuf {
        self.images.join(&hash.as_str()[..2]).join(hash.as_str())
    }

    /// The recorded message with this `clientMessageId`.
    pub fn record(&self, client_message_id: &str) -> Result<Option<Accepted>> {
        record(&self.lock(), client_message_id)
    }

    /// Forgets every message of the chats bound to `session_id` (rows, chats, and each stored image
    /// no other message refers to), in one transaction. The image files go just before it commits:
    /// killed in between, the rows are still there to say which files a second call removes.
    /// Returns the messages and the image bytes freed; with `dry_run`, only counts them.
    pub fn forget_session(&self, session_id: &str, dry_run: bool) -> Result<(u64, u64)> {
        let mut conn = self.lock();
        let behavior = if dry_run { TransactionBehavior::Deferred } else { TransactionBehavior::Immediate };
        let tx = conn.transaction_with_behavior(behavior)?;
        let messages: i64 = tx.query_row(
            "SELECT count(*) FROM acceptances WHERE chat_id IN (SELECT chat_id FROM chats WHERE session_id = ?1)",
            [session_id],
            |r| r.get(0),
        )?;
        // Images of these messages that no other message has.
        let mut stmt = tx.prepare(
            "SELECT DISTINCT i.blake3, i.bytes FROM acceptance_images i JOIN acceptances a ON a.id = i.acceptance_id
             WHERE a.chat_id IN (SELECT chat_id FROM chats WHERE session_id = ?1)
               AND NOT EXISTS (SELECT 1 FROM acceptance_images o JOIN acceptances b ON b.id = o.acceptance_id
                               WHERE o.blake3 = i.blake3
                                 AND b.chat_id NOT IN (SELECT chat_id FROM chats WHERE session_id = ?1))",
        )?;
        let images: Vec<(String, i64)> =
            stmt.query_map([session_id], |r| Ok((r.get(0)?, r.get(1)?)))?.collect::<rusqlite::Result<_>>()?;
        drop(stmt);
        let freed = images.iter().map(|(_, b)| *b as u64).sum();
        if dry_run {
            return Ok((messages as u64, freed));
        }
        tx.execute(
            "DELETE FROM acceptance_images WHERE acceptance_id IN (SELECT id FROM acceptances
                 WHERE chat_id IN (SELECT chat_id FROM chats WHERE session_id = ?1))",
            [session_id],
        )?;
        tx.execute(
            "DELETE FROM engine_runs WHERE acceptance_id IN (SELECT id FROM acceptances
                 WHERE chat_id IN (SELECT chat_id FROM chats WHERE session_id = ?1))",
            [session_id],
        )?;
        tx.execute(
            "DELETE FROM acceptances WHERE chat_id IN (SELECT chat_id FROM chats WHERE session_id = ?1)",
            [session_id],
        )?;
        tx.execute("DELETE FROM chats WHERE session_id = ?1", [session_id])?;
        tx.execute("DELETE FROM marks WHERE session_id = ?1", [session_id])?;
        tx.execute(
            &format!("INSERT OR IGNORE INTO forgotten_sessions (session_id, forgotten_at) VALUES (?1, {NOW})"),
            [session_id],
        )?;
        for (hash, _) in images {
            if let Ok(hash) = hash.parse::<ContentHash>() {
                let path = self.image_path(&hash);
                match std::fs::remove_file(&path) {
                    Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(Error::io(&path, e)),
                    _ => {}
                }
            }
        }
        tx.commit()?;
        Ok((messages as u64, freed))
    }

    /// The sessions a person forgot: their lines are never indexed again until [`Self::unforget_session`].
    pub fn forgotten_sessions(&self) -> Result<std::collections::HashSet<String>> {
        let conn = self.lock();
        let mut stmt = conn.prepare("SELECT session_id FROM forgotten_sessions")?;
        let set = stmt.query_map([], |r| r.get::<_, String>(0))?.collect::<rusqlite::Result<_>>()?;
        Ok(set)
    }

    /// Lets `session_id`'s lines be indexed again; whether it was forgotten.
    pub fn unforget_session(&self, session_id: &str) -> Result<bool> {
        Ok(self.lock().execute("DELETE FROM forgotten_sessions WHERE session_id = ?1", [session_id])? > 0)
    }

    /// Sets a person's marks on `session_id`: its title (`Some(None)` gives it back the
    /// transcript's) and whether it is pinned; `None` leaves a mark as it is. Returns the marks.
    ///
    /// A forgotten session is [`Error::UnknownSession`], checked in the write's own transaction:
    /// [`Self::forget_session`] takes the marks and remembers the session in one transaction too,
    /// so a mark that races a forget either goes with it or is refused, never left behind.
    pub fn set_mark(&self, session_id: &str, title: Option<Option<&str>>, pinned: Option<bool>) -> Result<Mark> {
        let mut conn = self.lock();
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let forgotten: bool = tx.query_row(
            "SELECT EXISTS (SELECT 1 FROM forgotten_sessions WHERE session_id = ?1)",
            [session_id],
            |r| r.get(0),
        )?;
        if forgotten {
            return Err(Error::UnknownSession(session_id.chars().take(80).collect()));
        }
        tx.execute(
            &format!(
                "INSERT INTO marks (session_id, updated_at) VALUES (?1, {NOW}) ON CONFLICT (session_id) DO NOTHING"
            ),
            [session_id],
        )?;
        if let Some(title) = title {
            tx.execute("UPDATE marks SET title = ?2 WHERE session_id = ?1", params![session_id, title])?;
        }
        if let Some(pinned) = pinned {
            tx.execute("UPDATE marks SET pinned = ?2 WHERE session_id = ?1", params![session_id, pinned])?;
        }
        tx.execute(&format!("UPDATE marks SET updated_at = {NOW} WHERE session_id = ?1"), [session_id])?;
        // A mark that says nothing is no mark.
        tx.execute("DELETE FROM marks WHERE session_id = ?1 AND title IS NULL AND pinned = 0", [session_id])?;
        tx.commit()?;
        drop(conn);
        Ok(self.marks(&[session_id])?.pop().unwrap_or_else(|| Mark::none(session_id)))
    }

    /// The marks of those of `session_ids` that have any.
    pub fn marks(&self, session_ids: &[&str]) -> Result<Vec<Mark>> {
        let conn = self.lock();
        let mut stmt =
            conn.prepare_cached("SELECT session_id, title, pinned, updated_at FROM marks WHERE session_id = ?1")?;
        let mut out = Vec::new();
        for id in session_ids {
            if let Some(mark) = stmt.query_row([id], Mark::from_row).optional()? {
                out.push(mark);
            }
        }
        Ok(out)
    }

    /// Every session's marks (a session whose marks were all cleared has none), by session.
    pub fn all_marks(&self) -> Result<Vec<Mark>> {
        let conn = self.lock();
        let mut stmt =
            conn.prepare_cached("SELECT session_id, title, pinned, updated_at FROM marks ORDER BY session_id")?;
        Ok(stmt.query_map([], Mark::from_row)?.collect::<rusqlite::Result<_>>()?)
    }

    /// Every pinned session's marks, the latest pinned first.
    pub fn pinned(&self) -> Result<Vec<Mark>> {
        let conn = self.lock();
        let mut stmt = conn.prepare_cached(
            "SELECT session_id, title, pinned, updated_at FROM marks WHERE pinned = 1 ORDER BY updated_at DESC",
        )?;
        Ok(stmt.query_map([], Mark::from_row)?.collect::<rusqlite::Result<_>>()?)
    }

    /// How many messages, of every chat, no client has retired.
    pub fn pending_count(&self) -> Result<i64> {
        Ok(self.lock().query_row("SELECT count(*) FROM acceptances WHERE state = 'pending'", [], |r| r.get(0))?)
    }

    /// A chat's messages that no client has retired, oldest first.
    pub fn pending(&self, chat_id: &str) -> Result<Vec<Accepted>> {
        let conn = self.lock();
        let ids: Vec<String> = conn
            .prepare_cached(
                "SELECT client_message_id FROM acceptances WHERE chat_id = ?1 AND state = 'pending' ORDER BY id",
            )?
            .query_map([chat_id], |r| r.get(0))?
            .collect::<rusqlite::Result<_>>()?;
        ids.iter().filter_map(|id| record(&conn, id).transpose()).collect()
    }

    /// The session a chat is bound to: `None` for a chat never seen, `Some(None)` while unbound.
    pub fn chat_session(&self, chat_id: &str) -> Result<Option<Option<String>>> {
        Ok(self
            .lock()
            .prepare_cached("SELECT session_id FROM chats WHERE chat_id = ?1")?
            .query_row([chat_id], |r| r.get(0))
            .optional()?)
    }

    /// Binds a chat (created if new) to the session its engine assigned. Binding again to the same
    /// session changes nothing; to another is [`Error::Conflict`].
    pub fn bind(&self, chat_id: &str, session_id: &str) -> Result<Bound> {
        let mut conn = self.lock();
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        tx.execute(
            &format!("INSERT INTO chats (chat_id, created_at) VALUES (?1, {NOW}) ON CONFLICT DO NOTHING"),
            [chat_id],
        )?;
        let bound = bind_in(&tx, chat_id, session_id)?;
        tx.commit()?;
        Ok(bound)
    }

    /// Marks these of a chat's messages retired (the transcript backs them); returns the ids that
    /// were pending until now. Unknown ids, and ids of other chats, are left alone.
    pub fn retire(&self, chat_id: &str, client_message_ids: &[String]) -> Result<Vec<String>> {
        let mut conn = self.lock();
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let mut retired = Vec::new();
        {
            let mut stmt = tx.prepare_cached(&format!(
                "UPDATE acceptances SET state = 'retired', retired_at = {NOW}
                 WHERE chat_id = ?1 AND client_message_id = ?2 AND state = 'pending'"
            ))?;
            for id in client_message_ids {
                if stmt.execute(params![chat_id, id])? > 0 {
                    retired.push(id.clone());
                }
            }
        }
        tx.commit()?;
        Ok(retired)
    }

    /// The engine run of a message still to be done (queued, or started and never ended: the server
    /// stopped during it), if any.
    pub fn next_run(&self, client_message_id: &str) -> Result<Option<i64>> {
        Ok(self
            .lock()
            .prepare_cached(
                "SELECT r.id FROM engine_runs r JOIN acceptances a ON a.id = r.acceptance_id
                 WHERE a.client_message_id = ?1 AND r.ended_at IS NULL ORDER BY r.id LIMIT 1",
            )?
            .query_row([client_message_id], |r| r.get(0))
            .optional()?)
    }

    /// Every pending message with an engine run still to be done, in acceptance order: `(chat,
    /// clientMessageId)`. What a server hands its engine again when it starts.
    pub fn unfinished_runs(&self) -> Result<Vec<(String, String)>> {
        let conn = self.lock();
        let mut stmt = conn.prepare(
            "SELECT a.chat_id, a.client_message_id FROM acceptances a
             WHERE a.state = 'pending' AND EXISTS (SELECT 1 FROM engine_runs r WHERE r.acceptance_id = a.id AND r.ended_at IS NULL)
             ORDER BY a.id",
        )?;
        let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?.collect::<rusqlite::Result<_>>()?;
        Ok(rows)
    }

    /// Queues another run of a message whose last run failed (a retry of the send), clearing its
    /// `engine_error`; `false` if its last run did not fail, or one is still to be done.
    pub fn queue_retry(&self, client_message_id: &str) -> Result<bool> {
        let mut conn = self.lock();
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        // A pending message whose last run ended in failure (so none is still to be done).
        let failed: Option<i64> = tx
            .query_row(
                "SELECT a.id FROM acceptances a WHERE a.client_message_id = ?1 AND a.state = 'pending'
                   AND (SELECT r.outcome FROM engine_runs r WHERE r.acceptance_id = a.id ORDER BY r.id DESC LIMIT 1) = 'failed'",
                [client_message_id],
                |r| r.get(0),
            )
            .optional()?;
        let Some(id) = failed else { return Ok(false) };
        tx.execute(&format!("INSERT INTO engine_runs (acceptance_id, queued_at) VALUES (?1, {NOW})"), [id])?;
        tx.execute("UPDATE acceptances SET engine_error = NULL WHERE id = ?1", [id])?;
        tx.commit()?;
        Ok(true)
    }

    /// Records that run `run` started.
    pub fn start_run(&self, run: i64) -> Result<()> {
        self.lock().execute(&format!("UPDATE engine_runs SET started_at = {NOW} WHERE id = ?1"), [run])?;
        Ok(())
    }

    /// Records that run `run` ended, with its error if it failed (also kept as the message's
    /// `engine_error`, which the viewer shows). The message stays accepted either way.
    pub fn end_run(&self, run: i64, error: Option<&str>) -> Result<()> {
        let mut conn = self.lock();
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let outcome = if error.is_some() { "failed" } else { "ok" };
        tx.execute(
            &format!("UPDATE engine_runs SET ended_at = {NOW}, outcome = ?2, error = ?3 WHERE id = ?1"),
            params![run, outcome, error],
        )?;
        if let Some(error) = error {
            tx.execute(
                "UPDATE acceptances SET engine_error = ?2 WHERE id = (SELECT acceptance_id FROM engine_runs WHERE id = ?1)",
                params![run, error],
            )?;
        }
        tx.commit()?;
        Ok(())
    }

    /// A sent image by the blake3 of its bytes, if one was recorded.
    pub fn image(&self, hash: &ContentHash) -> Result<Option<StoredImage>> {
        let found: Option<(String, i64)> = self
            .lock()
            .prepare_cached("SELECT media_type, bytes FROM acceptance_images WHERE blake3 = ?1 LIMIT 1")?
            .query_row([hash.as_str()], |r| Ok((r.get(0)?, r.get(1)?)))
            .optional()?;
        Ok(found.map(|(media_type, bytes)| StoredImage {
            path: self.image_path(hash),
            media_type,
            bytes: bytes as u64,
        }))
    }
}

/// Whether a recorded message and a send are the same message (a retry).
/// The send's rows (its chat, the binding it names, the message and its images), committed
/// durably in one transaction; the message's row id.
fn insert_acceptance(conn: &mut Connection, send: &CheckedSend, queue_run: bool) -> Result<i64> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    tx.execute(
        &format!("INSERT INTO chats (chat_id, created_at) VALUES (?1, {NOW}) ON CONFLICT DO NOTHING"),
        [&send.chat_id],
    )?;
    if let Some(session) = &send.session_id {
        bind_in(&tx, &send.chat_id, session)?;
    }
    tx.execute(
        &format!("INSERT INTO acceptances (client_message_id, chat_id, text, accepted_at) VALUES (?1, ?2, ?3, {NOW})"),
        params![send.client_message_id, send.chat_id, send.text],
    )?;
    let id = tx.last_insert_rowid();
    for (position, image) in send.images.iter().enumerate() {
        tx.execute(
            "INSERT INTO acceptance_images (acceptance_id, position, blake3, media_type, bytes)
                 VALUES (?1, ?2, ?3, ?4, ?5)",
            params![id, position as i64, image.blake3.as_str(), image.media_type, image.bytes.len() as i64],
        )?;
    }
    if queue_run {
        tx.execute(&format!("INSERT INTO engine_runs (acceptance_id, queued_at) VALUES (?1, {NOW})"), [id])?;
    }
    tx.commit()?;
    Ok(id)
}

fn same_message(recorded: &Accepted, send: &CheckedSend) -> bool {
    recorded.chat_id == send.chat_id
        && recorded.text == send.text
        && recorded.images.len() == send.images.len()
        && recorded.images.iter().zip(&send.images).all(|(r, s)| r.blake3 == s.blake3.as_str())
}

/// Binds inside a transaction that has made sure the chat's row exists.
fn bind_in(tx: &Connection, chat_id: &str, session_id: &str) -> Result<Bound> {
    let current: Option<String> =
        tx.query_row("SELECT session_id FROM chats WHERE chat_id = ?1", [chat_id], |r| r.get(0))?;
    match current {
        Some(current) if current == session_id => Ok(Bound::Already),
        Some(current) => {
            Err(Error::Conflict(format!("chat {chat_id:?} is bound to session {current:?}, not {session_id:?}")))
        }
        None => {
            tx.execute(
                &format!("UPDATE chats SET session_id = ?2, bound_at = {NOW} WHERE chat_id = ?1"),
                params![chat_id, session_id],
            )?;
            Ok(Bound::Now)
        }
    }
}

fn record(conn: &Connection, client_message_id: &str) -> Result<Option<Accepted>> {
    let row = conn
        .prepare_cached(
            "SELECT a.id, a.client_message_id, a.chat_id, c.session_id, a.text, a.accepted_at, a.state, a.engine_error
             FROM acceptances a JOIN chats c USING (chat_id) WHERE a.client_message_id = ?1",
        )?
        .query_row([client_message_id], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                Accepted {
                    client_message_id: r.get(1)?,
                    chat_id: r.get(2)?,
                    session_id: r.get(3)?,
                    text: r.get(4)?,
                    images: Vec::new(),
                    accepted_at: r.get(5)?,
                    state: if r.get::<_, String>(6)? == "retired" { State::Retired } else { State::Pending },
                    engine_error: r.get(7)?,
                },
            ))
        })
        .optional()?;
    let Some((id, mut accepted)) = row else { return Ok(None) };
    accepted.images = conn
        .prepare_cached(
            "SELECT blake3, media_type, bytes FROM acceptance_images WHERE acceptance_id = ?1 ORDER BY position",
        )?
        .query_map([id], |r| {
            Ok(AcceptedImage { blake3: r.get(0)?, media_type: r.get(1)?, bytes: r.get::<_, i64>(2)? as u64 })
        })?
        .collect::<rusqlite::Result<_>>()?;
    Ok(Some(accepted))
}

fn sync_dir(dir: &Path) -> Result<()> {
    File::open(dir).and_then(|d| d.sync_all()).map_err(|e| Error::write(dir, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A mark written after its session was forgotten is refused and leaves no row: the check is
    /// in the write's own transaction, so a `PUT …/marks` that raced a `DELETE` cannot leave a
    /// title or a pin for a session nobody may see again.
    #[test]
    fn a_mark_for_a_forgotten_session_is_refused_and_leaves_no_row() -> Result<()> {
        let dir = tempfile::tempdir().map_err(|e| Error::io(Path::new("temp"), e))?;
        let store = AcceptStore::open(dir.path())?;
        store.set_mark("s1", Some(Some("mine")), Some(true))?;
        store.forget_session("s1", false)?;
        assert!(store.marks(&["s1"])?.is_empty(), "forgetting takes the marks");
        let late = store.set_mark("s1", Some(Some("too late")), Some(true));
        assert!(matches!(late, Err(Error::UnknownSession(_))), "{late:?}");
        assert!(store.marks(&["s1"])?.is_empty(), "a refused mark leaves no row");
        assert!(store.pinned()?.is_empty());
        // Unforgotten, it may be marked again.
        store.unforget_session("s1")?;
        assert!(store.set_mark("s1", None, Some(true))?.pinned);
        Ok(())
    }

    /// Marks and forgetting from two threads, many times over: every forgotten session ends with
    /// no mark, whichever went first.
    #[test]
    fn marks_racing_forget_leave_no_mark_for_a_forgotten_session() -> Result<()> {
        let dir = tempfile::tempdir().map_err(|e| Error::io(Path::new("temp"), e))?;
        let store = std::sync::Arc::new(AcceptStore::open(dir.path())?);
        let ids: Vec<String> = (0..40).map(|i| format!("race-{i}")).collect();
        let marker = {
            let (store, ids) = (store.clone(), ids.clone());
            std::thread::spawn(move || {
                for id in &ids {
                    for _ in 0..5 {
                        // Refused once the session is forgotten: the race itself.
                        let _ = store.set_mark(id, Some(Some("title")), Some(true));
                    }
                }
            })
        };
        for id in &ids {
            store.forget_session(id, false)?;
        }
        marker.join().expect("the marking thread");
        let left = store.marks(&ids.iter().map(String::as_str).collect::<Vec<_>>())?;
        assert!(left.is_empty(), "marks left for forgotten sessions: {left:?}");
        Ok(())
    }
}
