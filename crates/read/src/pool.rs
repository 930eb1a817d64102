//! The readers' pool the servers read through: read-only SQLite connections to the index, or another
//! store's ([`Backend`]: a team's hub), each handed to its caller as a [`Store`] (never as a
//! connection), used only inside `spawn_blocking` (the checkout included), each returned before its
//! caller goes on, and a bound on full-text queries at once so that searches cannot starve
//! everything else.

use std::path::Path;
use std::sync::Arc;

use r2d2_sqlite::SqliteConnectionManager;
use rusqlite::Connection;

use scrollback_core::db::{self, ConnectionKind};
use scrollback_core::error::{Error, Result};

use crate::export::Lend;
use crate::store::Store;

/// Connections in a pool.
const POOL_SIZE: u32 = 8;
/// Full-text queries at the same time (of [`POOL_SIZE`] connections); more wait their turn.
const CONCURRENT_SEARCHES: usize = 2;

/// A connection of the pool for each question, given back after it.
struct Pooled(r2d2::Pool<SqliteConnectionManager>);

impl Lend for Pooled {
    fn lend(&self, f: &mut dyn FnMut(&dyn Store) -> Result<()>) -> Result<()> {
        let conn = self.0.get()?;
        f(&*conn as &Connection)
    }
}

/// Another store's connection for each question, given back after it.
struct LentBackend(Arc<dyn Backend>);

impl Lend for LentBackend {
    fn lend(&self, f: &mut dyn FnMut(&dyn Store) -> Result<()>) -> Result<()> {
        self.0.with(f)
    }
}

/// A store other than an index, with connections of its own: a team's hub.
pub trait Backend: Send + Sync + 'static {
    /// What it is, as `/api/info` says (`"hub"`).
    fn kind(&self) -> &'static str;
    /// Runs `f` on one of its connections, as a [`Store`], on the caller's thread (a blocking one).
    fn with(&self, f: &mut dyn FnMut(&dyn Store) -> Result<()>) -> Result<()>;
}

/// What the readers read.
#[derive(Clone)]
enum Source {
    /// The index, through a pool of read-only connections.
    Index(r2d2::Pool<SqliteConnectionManager>),
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
        let pool = r2d2::Pool::builder().max_size(POOL_SIZE).build(manager)?;
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
            Source::Index(pool) => {
                let conn = pool.get()?;
                f(&*conn as &Connection as &dyn Store)
            }
            Source::Other(backend) => {
                let mut f = Some(f);
                let mut answer = None;
                backend.with(&mut |store| {
                    let f = f.take().ok_or_else(|| Error::Internal("a store ran a question twice".into()))?;
                    answer = Some(f(store));
                    Ok(())
                })?;
                answer.unwrap_or_else(|| Err(Error::Internal("the store ran no question".into())))
            }
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
    /// connection and starve history, sessions and media.
    pub async fn search<T: Send + 'static>(
        &self,
        f: impl FnOnce(&dyn Store) -> Result<T> + Send + 'static,
    ) -> Result<T> {
        let _turn = self.searches.acquire().await.map_err(|_| Error::Internal("the server is stopping".into()))?;
        self.run(f).await
    }
}
