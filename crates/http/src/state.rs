//! The server's state, shared by every request: the readers' pool, the bus, the token, the live
//! writer's handle and health, the photo cache, the sent messages ([`Chats`]) and the limits on work
//! in flight.
//!
//! Reads come from the readers' pool ([`Readers`]), always inside `spawn_blocking` (the pool
//! checkout included), and a connection is returned before any transcript byte is read:
//! [`Api::db`] is the handlers' only way to one, and it returns what its closure computed, never the
//! connection.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::ApiError;
use super::cache::Cache;
use super::server::IDLE_TIMEOUT;
use scrollback_accept::AcceptStore;
use scrollback_core::error::Result;
use scrollback_index::events::Bus;
use scrollback_index::tail::{WriterHandle, WriterHealth};
use scrollback_ops::chat::Chats;
use scrollback_ops::engine::Engine;
use scrollback_read::Store;
use scrollback_read::pool::Readers;
use scrollback_render::redact::Redactor;

/// Send requests checked and stored at the same time, once their bodies have arrived; more wait
/// their turn.
const CONCURRENT_SENDS: usize = 4;
/// The bytes of send bodies held at once, arriving or waiting for a turn: as many as
/// [`CONCURRENT_SENDS`] bodies at their largest. A chunk that would pass it is a 503 `busy`.
pub(crate) const SEND_BUDGET: u64 = CONCURRENT_SENDS as u64 * scrollback_accept::send::MAX_BODY;

/// What a server is set up with, beyond its data directory and bus.
#[derive(Debug, Clone, Default)]
pub struct Config {
    /// Require this token on every `/api` route.
    pub token: Option<String>,
    /// Host names answered besides loopback ones (and, with a token, IP addresses): `--allow-host`.
    pub allow_hosts: Vec<String>,
    /// The live writer: told about files whose bytes changed under a recorded offset, and given
    /// jobs (forgetting a session).
    pub writer: Option<WriterHandle>,
    /// Run for each accepted message.
    pub engine: Option<Engine>,
    /// The live writer's health, for `/api/status` (and 503s when it is dead).
    pub health: Option<WriterHealth>,
    /// How the live writer notices changes (`"notify"` or `"poll"`), for `/api/status`.
    pub watcher: Option<&'static str>,
    /// How long a connection may idle between requests: [`IDLE_TIMEOUT`] if `None`.
    pub idle_timeout: Option<Duration>,
    /// The most connections open at once: [`super::server::MAX_CONNECTIONS`] if `None` (and never
    /// more than the descriptor limit leaves room for).
    pub max_connections: Option<usize>,
    /// The transcript roots the writer follows, for `/api/status`.
    pub roots: Vec<scrollback_index::roots::Root>,
    /// What `/api/usage` prices responses by: the shipped table if `None`.
    pub prices: Option<scrollback_read::prices::Prices>,
    /// The push to a hub (`serve --push`), for `/api/status`.
    pub push: Option<scrollback_hub::follow::PushStatusHandle>,
    /// Mask secrets (`serve --mask-secrets`): the shipped redaction rules applied to the text
    /// of sessions, history, search and MCP answers.
    pub mask_secrets: bool,
    /// Read this store instead of the data directory's index (`serve --postgres`: a team's hub),
    /// which is then read-only: a request that would change something is refused, saying so.
    pub readers: Option<Readers>,
}

/// The server's state, shared by every request.
#[derive(Clone)]
pub struct Api {
    pub(crate) inner: Arc<Inner>,
}

pub(crate) struct Inner {
    pub(crate) readers: Readers,
    pub(crate) bus: Bus,
    token: Option<String>,
    pub(crate) allow_hosts: Vec<String>,
    /// Wrong tokens lately, for the limit on guesses.
    pub(crate) attempts: Mutex<super::auth::Attempts>,
    pub(crate) writer: Option<WriterHandle>,
    pub(crate) health: Option<WriterHealth>,
    pub(crate) watcher: Option<&'static str>,
    pub(crate) push: Option<scrollback_hub::follow::PushStatusHandle>,
    pub(crate) roots: Vec<scrollback_index::roots::Root>,
    pub(crate) data_dir: PathBuf,
    /// SQLite found the index damaged (a request met it): why.
    damage: Mutex<Option<String>>,
    pub(crate) cache: Mutex<Cache>,
    pub(crate) chats: Arc<Chats>,
    /// Sends checked and stored at once.
    pub(crate) sends: Arc<tokio::sync::Semaphore>,
    /// Exports written at once ([`super::export::CONCURRENT_EXPORTS`]).
    pub(crate) exports: Arc<tokio::sync::Semaphore>,
    /// The bytes of send bodies held at once ([`SEND_BUDGET`]).
    pub(crate) send_budget: super::filters::Budget,
    /// How long a connection may idle between requests.
    idle_timeout: Duration,
    /// The most connections open at once, as asked.
    max_connections: usize,
    /// What usage is priced by.
    pub(crate) prices: Arc<scrollback_read::prices::Prices>,
    /// The rules secrets are masked by (`--mask-secrets`), if they are.
    pub(crate) mask: Option<Arc<Redactor>>,
}

impl std::fmt::Debug for Api {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Api").field("token", &self.inner.token.as_ref().map(|_| "…")).finish_non_exhaustive()
    }
}

impl Api {
    /// State for a server over the index and the acceptance record in `data_dir`; `bus` feeds
    /// `/api/events`.
    pub fn new(data_dir: &Path, bus: Bus, config: Config) -> Result<Api> {
        let Config {
            token,
            allow_hosts,
            writer,
            engine,
            health,
            watcher,
            idle_timeout,
            max_connections,
            roots,
            prices,
            push,
            mask_secrets,
            readers,
        } = config;
        let mask = if mask_secrets { Some(Arc::new(Redactor::shipped()?)) } else { None };
        // The schema must exist, at this version, before readers open it read-only.
        let readers = match readers {
            Some(readers) => readers,
            None => Readers::open(data_dir)?,
        };
        let chats = Chats::new(Arc::new(AcceptStore::open(data_dir)?), engine, scrollback_ops::chat::bus());
        Ok(Api {
            inner: Arc::new(Inner {
                readers,
                bus,
                token: token.filter(|t| !t.trim().is_empty()),
                allow_hosts: allow_hosts.iter().map(|h| h.trim_end_matches('.').to_ascii_lowercase()).collect(),
                attempts: Mutex::new(super::auth::Attempts::default()),
                writer,
                health,
                watcher,
                push,
                roots,
                data_dir: data_dir.to_owned(),
                damage: Mutex::new(None),
                cache: Mutex::new(Cache::default()),
                chats,
                sends: Arc::new(tokio::sync::Semaphore::new(CONCURRENT_SENDS)),
                exports: Arc::new(tokio::sync::Semaphore::new(super::export::CONCURRENT_EXPORTS)),
                send_budget: super::filters::Budget::new(SEND_BUDGET),
                idle_timeout: idle_timeout.unwrap_or(IDLE_TIMEOUT),
                max_connections: max_connections.unwrap_or(super::server::MAX_CONNECTIONS),
                prices: Arc::new(prices.unwrap_or_else(scrollback_read::prices::Prices::shipped)),
                mask,
            }),
        })
    }

    /// What the server reads: `"index"`, or another store (`"hub"`), which is read-only.
    pub(crate) fn store_kind(&self) -> &'static str {
        self.inner.readers.kind()
    }

    /// The token every `/api` route requires, if one is set.
    pub(crate) fn token(&self) -> Option<&str> {
        self.inner.token.as_deref()
    }

    /// How long a connection may idle between requests.
    pub(crate) fn idle_timeout(&self) -> Duration {
        self.inner.idle_timeout
    }

    /// The most connections open at once, as asked (before the descriptor limit has its say).
    pub(crate) fn max_connections(&self) -> usize {
        self.inner.max_connections
    }

    /// The rules secrets are masked by, if `--mask-secrets` is on.
    pub(crate) fn mask(&self) -> Option<&Arc<Redactor>> {
        self.inner.mask.as_ref()
    }

    /// `value` as JSON, every string of it masked if `--mask-secrets` is on.
    pub(crate) fn masked_json<T: serde::Serialize>(&self, value: &T) -> warp::reply::Response {
        use warp::Reply as _;
        match self.mask() {
            None => warp::reply::json(value).into_response(),
            Some(r) => match serde_json::to_value(value) {
                Ok(mut v) => {
                    r.redact_value(&mut v, &mut Default::default());
                    warp::reply::json(&v).into_response()
                }
                Err(e) => ApiError::from(scrollback_core::Error::Internal(e.to_string())).response(),
            },
        }
    }

    /// The sent messages and their engine runs.
    pub(crate) fn chats(&self) -> &Arc<Chats> {
        &self.inner.chats
    }

    /// Runs `f` on the index's [`Store`] (a pooled read-only connection) on the blocking pool: the
    /// one way a handler reads.
    pub(crate) async fn db<T: Send + 'static>(
        &self,
        f: impl FnOnce(&dyn Store) -> Result<T> + Send + 'static,
    ) -> std::result::Result<T, ApiError> {
        self.inner.readers.run(f).await.map_err(|e| self.met(e))
    }

    /// What the store holds, for `status` ([`scrollback_read::pool::Readers::held`]), from each of
    /// `roots`.
    pub(crate) async fn held(
        &self,
        roots: Vec<(&'static str, std::path::PathBuf)>,
    ) -> std::result::Result<scrollback_read::pool::Held, ApiError> {
        self.inner.readers.held(self.inner.data_dir.clone(), roots).await.map_err(|e| self.met(e))
    }

    /// Runs `f` with a [`scrollback_read::transcript::Lend`] over the pool: a reader for each question,
    /// given back before the answer is used (an export, which writes while it reads).
    pub(crate) async fn lent<T: Send + 'static>(
        &self,
        f: impl FnOnce(&dyn scrollback_read::transcript::Lend) -> Result<T> + Send + 'static,
    ) -> std::result::Result<T, ApiError> {
        self.inner.readers.lent(f).await.map_err(|e| self.met(e))
    }

    /// An error a read met, as the API answers it; a damaged index is remembered.
    fn met(&self, e: scrollback_core::Error) -> ApiError {
        if e.is_corruption() {
            // Remembered for `/api/status`; every request that meets it answers 503.
            tracing::error!("the index is damaged: {e}; run `scrollback check`, then `scrollback rebuild`");
            *self.inner.damage.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Some(e.to_string());
        }
        ApiError::from(e)
    }

    /// [`Api::db`] for a full-text query: a bounded number at a time ([`Readers::search`]).
    pub(crate) async fn search_db<T: Send + 'static>(
        &self,
        f: impl FnOnce(&dyn Store) -> Result<T> + Send + 'static,
    ) -> std::result::Result<T, ApiError> {
        self.inner.readers.search(f).await.map_err(|e| self.met(e))
    }

    /// What SQLite said when it last found the index damaged, if it ever did.
    pub(crate) fn damage(&self) -> Option<String> {
        self.inner.damage.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone()
    }

    /// Queues a file for the writer to re-index; `false` if the writer is not running.
    pub(crate) fn reindex(&self, path: PathBuf) -> bool {
        match &self.inner.writer {
            Some(w) => w.reindex(path),
            None => true,
        }
    }

    /// The live writer, as `/api/status` says it.
    pub(crate) fn writer_state(&self) -> scrollback_ops::status::WriterState {
        use scrollback_ops::status::WriterState;
        match (&self.inner.health, self.writer_failure()) {
            (None, _) => WriterState::None,
            (Some(_), None) => WriterState::Running,
            (Some(_), Some(error)) => WriterState::Failed(error),
        }
    }

    /// Why the live writer died, if it did.
    pub(crate) fn writer_failure(&self) -> Option<String> {
        self.inner.health.as_ref().and_then(WriterHealth::failure)
    }
}
