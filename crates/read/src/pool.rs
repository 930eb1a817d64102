//! The readers' pool the servers read through: read-only SQLite connections to the index, or another
//! store's ([`Backend`]: a team's hub), each handed to its caller as a [`Store`] (never as a
//! connection), used only inside `spawn_blocking` (the checkout included), each returned before its
//! caller goes on, and a bound on full-text queries at once so that searches cannot starve
//! everything else.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use r2d2_sqlite::SqliteConnectionManager;
use rusqlite::Connection;

use scrollback_core::db::{self, ConnectionKind};
use scrollback_core::error::{Error, Result};

use crate::history::Stop;
use crate::status::{HubStatus, IndexStatus, RootCount};
use crate::store::Store;
use crate::transcript::{AsStore, Lend, Lent};

/// Connections in a pool.
const POOL_SIZE: u32 = 8;
/// Full-text queries at the same time (of [`POOL_SIZE`] connections); more wait their turn.
const CONCURRENT_SEARCHES: usize = 2;

/// The index's read-only connections, each with the file (device and inode) the index's path named
/// when it was opened. SQLite goes on reading the file it opened whatever the name comes to hold, so
/// a connection whose path now names another file (`rebuild` moved the index aside and made a new
/// one while an `mcp` server, which outlives it, read it) is dropped at its next checkout and a new
/// one opened on the index there now. While the name holds no file, the connection stays.
struct IndexFiles {
    path: PathBuf,
    manager: SqliteConnectionManager,
}

/// A reader's connection, and the file it opened.
struct Opened {
    conn: Connection,
    file: Option<(u64, u64)>,
}

/// The device and inode of the file at `path`.
fn file_at(path: &Path) -> Option<(u64, u64)> {
    std::fs::metadata(path).ok().map(|m| (m.dev(), m.ino()))
}

impl r2d2::ManageConnection for IndexFiles {
    type Connection = Opened;
    type Error = rusqlite::Error;

    fn connect(&self) -> rusqlite::Result<Opened> {
        // Looked at before the open: a file put in place between the two costs a reconnect, never
        // a connection taken for the new file's while it reads the old one.
        let file = file_at(&self.path);
        Ok(Opened { conn: self.manager.connect()?, file })
    }

    fn is_valid(&self, opened: &mut Opened) -> rusqlite::Result<()> {
        // Another file under the name. (No file under it: the one opened is still all there is to
        // read, and a new connection could open nothing.)
        if file_at(&self.path).is_some_and(|now| Some(now) != opened.file) {
            return Err(rusqlite::Error::InvalidPath(self.path.clone()));
        }
        self.manager.is_valid(&mut opened.conn)
    }

    fn has_broken(&self, opened: &mut Opened) -> bool {
        self.manager.has_broken(&mut opened.conn)
    }
}

/// A connection of the pool for each question, given back after it.
struct Pooled(r2d2::Pool<IndexFiles>);

impl AsStore for r2d2::PooledConnection<IndexFiles> {
    fn store(&self) -> &dyn Store {
        &self.conn as &Connection
    }
}

impl Lend for Pooled {
    fn lend(&self) -> Result<Lent<'_>> {
        Ok(Lent::new(self.0.get()?))
    }
}

/// Another store's connection for each question, given back after it.
struct LentBackend(Arc<dyn Backend>);

impl Lend for LentBackend {
    fn lend(&self) -> Result<Lent<'_>> {
        self.0.get()
    }
}

/// A store other than an index, with connections of its own: a team's hub.
pub trait Backend: Send + Sync + 'static {
    /// What it is, as `/api/info` says (`"hub"`).
    fn kind(&self) -> &'static str;
    /// One of its connections, as a [`Store`], given back when the guard drops. On the caller's
    /// thread (a blocking one).
    fn get(&self) -> Result<Lent<'_>>;
    /// What it holds, for `status`: its hosts and their last pushes. On the caller's thread.
    fn status(&self) -> Result<HubStatus>;
}

/// What a store holds, for `status` ([`Readers::held`]).
#[derive(Debug)]
pub enum Held {
    /// An index: what it holds, and from each root asked about (in that order).
    Index {
        /// Its counts, vault and room.
        index: IndexStatus,
        /// What it holds from each root.
        roots: Vec<RootCount>,
    },
    /// Another store (a team's hub): its own account.
    Other(HubStatus),
}

/// What the readers read.
#[derive(Clone)]
enum Source {
    /// The index, through a pool of read-only connections.
    Index(r2d2::Pool<IndexFiles>),
    /// Another store.
    Other(Arc<dyn Backend>),
}

/// A pool of read-only connections to one index, or to another [`Backend`].
#[derive(Clone)]
pub struct Readers {
    source: Source,
    searches: Arc<tokio::sync::Semaphore>,
}

impl std::fmt::Debug for Readers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Readers").finish_non_exhaustive()
    }
}

impl Readers {
    /// A pool over the index in `data_dir`, which must exist at this build's schema version.
    pub fn open(data_dir: &Path) -> Result<Readers> {
        let path = data_dir.join(db::INDEX_FILE);
        ConnectionKind::Reader.open(&path)?;
        let manager = SqliteConnectionManager::file(&path)
            .with_flags(ConnectionKind::Reader.flags())
            .with_init(|c: &mut Connection| ConnectionKind::Reader.configure(c));
        // Checked out only once its file is still the index's (r2d2's `test_on_check_out`, on by
        // default, is what asks).
        let pool =
            r2d2::Pool::builder().max_size(POOL_SIZE).test_on_check_out(true).build(IndexFiles { path, manager })?;
        Ok(Readers {
            source: Source::Index(pool),
            searches: Arc::new(tokio::sync::Semaphore::new(CONCURRENT_SEARCHES)),
        })
    }

    /// Readers of another store.
    pub fn of(backend: Arc<dyn Backend>) -> Readers {
        Readers { source: Source::Other(backend), searches: Arc::new(tokio::sync::Semaphore::new(CONCURRENT_SEARCHES)) }
    }

    /// What the readers read, as `/api/info` says: `"index"`, or the other store's kind.
    pub fn kind(&self) -> &'static str {
        match &self.source {
            Source::Index(_) => "index",
            Source::Other(backend) => backend.kind(),
        }
    }

    /// Runs `f` on a pooled connection, as a [`Store`], on the blocking pool, and returns what it
    /// computed.
    pub async fn run<T: Send + 'static>(&self, f: impl FnOnce(&dyn Store) -> Result<T> + Send + 'static) -> Result<T> {
        let source = self.source.clone();
        tokio::task::spawn_blocking(move || match source {
            Source::Index(pool) => f(Pooled(pool).lend()?.store()),
            Source::Other(backend) => f(backend.get()?.store()),
        })
        .await
        .map_err(|e| Error::Internal(format!("a reader failed: {e}")))?
    }

    /// What the store holds, for `status`: an index's counts (with its data directory `data_dir`'s
    /// vault and room) and what it holds from each of `roots` (a format's name and an absolute
    /// directory), or another store's own account ([`Backend::status`]). On the blocking pool.
    pub async fn held(&self, data_dir: PathBuf, roots: Vec<(&'static str, PathBuf)>) -> Result<Held> {
        let source = self.source.clone();
        tokio::task::spawn_blocking(move || match source {
            Source::Index(pool) => {
                let conn = pool.get()?;
                let roots: Vec<(&str, &Path)> = roots.iter().map(|(f, d)| (*f, d.as_path())).collect();
                Ok(Held::Index {
                    index: crate::status::index_status(&conn.conn, &data_dir)?,
                    roots: crate::status::root_counts(&conn.conn, &roots)?,
                })
            }
            Source::Other(backend) => backend.status().map(Held::Other),
        })
        .await
        .map_err(|e| Error::Internal(format!("a reader failed: {e}")))?
    }

    /// Runs `f` on the blocking pool with a [`Lend`] that checks a pooled connection out for each
    /// question and gives it back before the answer is used: for work that writes while it reads
    /// (an export), which then never holds a reader while it writes.
    pub async fn lent<T: Send + 'static>(&self, f: impl FnOnce(&dyn Lend) -> Result<T> + Send + 'static) -> Result<T> {
        let lender: Box<dyn Lend + Send> = match &self.source {
            Source::Index(pool) => Box::new(Pooled(pool.clone())),
            Source::Other(backend) => Box::new(LentBackend(backend.clone())),
        };
        tokio::task::spawn_blocking(move || f(&*lender))
            .await
            .map_err(|e| Error::Internal(format!("a reader failed: {e}")))?
    }

    /// [`Readers::run`] for a full-text query: two at a time, so that searches never hold every
    /// connection and starve history, sessions and media. A search holds its turn until its work
    /// has ended, not only while it is awaited; and when the future is dropped (its client left),
    /// its queries stop at their next check of the step budget ([`Stop`]).
    pub async fn search<T: Send + 'static>(
        &self,
        f: impl FnOnce(&dyn Store) -> Result<T> + Send + 'static,
    ) -> Result<T> {
        let turn = self
            .searches
            .clone()
            .acquire_owned()
            .await
            .map_err(|_| Error::Internal("the server is stopping".into()))?;
        let stop = Stop::default();
        let _left = StopOnDrop(stop.clone());
        self.run(move |store| {
            let _turn = turn;
            let answer = stop.watching(|| f(store));
            if matches!(answer, Err(Error::Stopped)) {
                tracing::info!("a search was stopped: its client left");
            }
            answer
        })
        .await
    }
}

/// Stops a search's queries when the future waiting for them is dropped.
struct StopOnDrop(Stop);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.stop();
    }
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc;
    use std::time::{Duration, Instant};

    use super::*;

    /// Waits, on a search's blocking thread, until its [`Stop`] is set (or a minute passes), and
    /// says whether it was.
    fn until_stopped() -> bool {
        let stop = Stop::current().expect("a search's thread has its stop flag");
        let deadline = Instant::now() + Duration::from_secs(60);
        while !stop.stopped() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
        stop.stopped()
    }

    /// An index with `which` in its settings.
    fn index_at(path: &Path, which: &str) -> Result<()> {
        let conn = ConnectionKind::Writer.open(path)?;
        conn.execute("INSERT INTO scrollback_meta (key, value) VALUES ('test:which', ?1)", [which])?;
        Ok(())
    }

    #[test]
    fn a_reader_reads_the_index_put_in_the_place_of_the_one_it_opened() -> Result<()> {
        let dir = tempfile::tempdir().map_err(|e| Error::io(Path::new("tmp"), e))?;
        let index = dir.path().join(db::INDEX_FILE);
        index_at(&index, "first")?;
        let readers = Readers::open(dir.path())?;
        let Source::Index(pool) = &readers.source else { unreachable!("an index's readers") };
        let which = || -> Result<String> {
            let conn = pool.get()?;
            Ok(conn.conn.query_row("SELECT value FROM scrollback_meta WHERE key = 'test:which'", [], |r| r.get(0))?)
        };
        assert_eq!(which()?, "first");
        // What `rebuild` does while another process reads the index: the name holds no file for a
        // moment (the connections read the one they have), then a new one.
        db::move_aside(&index, "rebuilt")?;
        assert_eq!(which()?, "first");
        index_at(&index, "second")?;
        // Every connection the pool holds opened the first file; each is opened again.
        for _ in 0..POOL_SIZE + 1 {
            assert_eq!(which()?, "second");
        }
        Ok(())
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_search_whose_caller_left_is_stopped_and_holds_its_turn_until_it_ends() -> Result<()> {
        let dir = tempfile::tempdir().map_err(|e| Error::io(std::path::Path::new("tmp"), e))?;
        ConnectionKind::Writer.open(&dir.path().join(db::INDEX_FILE))?;
        let readers = Readers::open(dir.path())?;
        // Two searches hold both turns: the first until it is stopped and let go, the second
        // until it is let go.
        let (said, heard) = mpsc::channel::<&'static str>();
        let (let_go_first, first_waits) = mpsc::channel::<()>();
        let (let_go_second, second_waits) = mpsc::channel::<()>();
        let first = tokio::spawn({
            let (readers, said) = (readers.clone(), said.clone());
            async move {
                readers
                    .search(move |_| {
                        said.send("first started").unwrap();
                        let stopped = until_stopped();
                        said.send(if stopped { "first stopped" } else { "first never stopped" }).unwrap();
                        first_waits.recv().ok();
                        Ok(())
                    })
                    .await
            }
        });
        assert_eq!(heard.recv().unwrap(), "first started");
        let second = tokio::spawn({
            let (readers, said) = (readers.clone(), said.clone());
            async move {
                readers
                    .search(move |_| {
                        said.send("second started").unwrap();
                        second_waits.recv().ok();
                        Ok(())
                    })
                    .await
            }
        });
        assert_eq!(heard.recv().unwrap(), "second started");
        // The first's caller leaves: its work is told to stop.
        first.abort();
        assert_eq!(heard.recv().unwrap(), "first stopped");
        // It still holds its turn: a third search waits until its work ends.
        let third = tokio::spawn({
            let (readers, said) = (readers.clone(), said.clone());
            async move {
                readers
                    .search(move |_| {
                        said.send("third started").unwrap();
                        Ok(())
                    })
                    .await
            }
        });
        assert!(heard.recv_timeout(Duration::from_millis(300)).is_err(), "the third ran while both turns were held");
        let_go_first.send(()).unwrap();
        assert_eq!(heard.recv().unwrap(), "third started");
        third.await.unwrap()?;
        let_go_second.send(()).unwrap();
        second.await.unwrap()?;
        Ok(())
    }
}
