//! The HTTP API: warp filters, handlers, the wire format, and one rejection -> status mapping.
//!
//! Reads come from an r2d2 pool of read-only SQLite connections, always inside `spawn_blocking`
//! (the pool checkout included), and a connection is returned before any transcript byte is read.
//! Media are served by seeking to the recorded offset ([`crate::read::media`]); bytes that do not hash to
//! the recorded blake3 are never served (409, and the file is queued for the writer). Errors are
//! `{"error": {"code", "message"}}` with a 4xx status; a 5xx is a bug.
//!
//! Security defaults: refs and hashes are looked up in the index, never turned into paths; listening
//! beyond loopback requires a token ([`check_listen`]), and with a token every `/api` route answers
//! 401 without it (`Authorization: Bearer`, or the `scrollback_token` cookie so `<img>` tags work).

mod api;
mod chat;
mod openapi;
mod web;
mod wire;

use std::collections::{HashMap, VecDeque};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use r2d2_sqlite::SqliteConnectionManager;
use rusqlite::Connection;
use warp::Filter;
use warp::http::StatusCode;

use crate::accept::engine::Engine;
use crate::accept::{AcceptStore, Accepted};
use crate::db::{self, ConnectionKind};
use crate::error::{Error, Result};
use crate::events::Bus;
use crate::ingest::tail::{Reindexer, WriterHealth};

pub use api::routes;
pub use wire::ApiUrls;

/// The default listen address.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:7878";

/// Decoded photos kept in memory after verification, in bytes.
const CACHE_BYTES: usize = 64 << 20;
/// The largest photo kept in the cache; larger ones are streamed.
const CACHE_ENTRY_MAX: usize = 16 << 20;

/// Refuses to listen beyond loopback without a token.
pub fn check_listen(addr: &SocketAddr, token: Option<&str>) -> std::result::Result<(), String> {
    // A token of only white space guards nothing: it counts as none.
    if !addr.ip().is_loopback() && token.is_none_or(|t| t.trim().is_empty()) {
        return Err(format!(
            "refusing to listen on {addr} without --token: anyone who can reach it could read every transcript"
        ));
    }
    Ok(())
}

/// The server's state, shared by every request.
#[derive(Clone)]
pub struct Api {
    inner: Arc<Inner>,
}

struct Inner {
    pool: r2d2::Pool<SqliteConnectionManager>,
    bus: Bus,
    token: Option<String>,
    reindexer: Option<Reindexer>,
    writer: Option<WriterHealth>,
    watcher: Option<&'static str>,
    data_dir: PathBuf,
    /// SQLite found the index damaged (a request met it): why.
    damage: Mutex<Option<String>>,
    cache: Mutex<Cache>,
    accept: Arc<AcceptStore>,
    engine: Option<Engine>,
    /// One engine run at a time per chat, in acceptance order.
    chat_locks: Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
    /// Send bodies being read and checked at once: each may be [`crate::accept::send::MAX_BODY`].
    sends: Arc<tokio::sync::Semaphore>,
    /// Full-text queries running at once: fewer than the pool's connections, so that searches can
    /// never hold every connection and starve history, sessions and media.
    searches: Arc<tokio::sync::Semaphore>,
    /// How long a connection may idle between requests.
    idle_timeout: Duration,
}

/// What a server is set up with, beyond its data directory and bus.
#[derive(Debug, Clone, Default)]
pub struct Config {
    /// Require this token on every `/api` route.
    pub token: Option<String>,
    /// Told about files whose bytes changed under a recorded offset.
    pub reindexer: Option<Reindexer>,
    /// Run for each accepted message.
    pub engine: Option<Engine>,
    /// The live writer's health, for `/api/status` (and 503s when it is dead).
    pub writer: Option<WriterHealth>,
    /// How the live writer notices changes (`"notify"` or `"poll"`), for `/api/status`.
    pub watcher: Option<&'static str>,
    /// How long a connection may idle between requests: [`IDLE_TIMEOUT`] if `None`.
    pub idle_timeout: Option<Duration>,
}

/// Send requests read and checked at the same time; more wait their turn.
const CONCURRENT_SENDS: usize = 4;
/// Connections in the readers' pool.
const POOL_SIZE: u32 = 8;
/// Full-text queries at the same time (of [`POOL_SIZE`] connections); more wait their turn.
const CONCURRENT_SEARCHES: usize = 2;

impl std::fmt::Debug for Api {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Api").field("token", &self.inner.token.as_ref().map(|_| "…")).finish_non_exhaustive()
    }
}

impl Api {
    /// State for a server over the index and the acceptance record in `data_dir`; `bus` feeds
    /// `/api/events`.
    pub fn new(data_dir: &Path, bus: Bus, config: Config) -> Result<Api> {
        let Config { token, reindexer, engine, writer, watcher, idle_timeout } = config;
        let path = data_dir.join(db::INDEX_FILE);
        // The schema must exist, at this version, before readers open it read-only.
        ConnectionKind::Reader.open(&path)?;
        let manager = SqliteConnectionManager::file(&path)
            .with_flags(ConnectionKind::Reader.flags())
            .with_init(|c: &mut Connection| ConnectionKind::Reader.configure(c));
        let pool = r2d2::Pool::builder().max_size(POOL_SIZE).build(manager)?;
        Ok(Api {
            inner: Arc::new(Inner {
                pool,
                bus,
                token: token.filter(|t| !t.trim().is_empty()),
                reindexer,
                writer,
                watcher,
                data_dir: data_dir.to_owned(),
                damage: Mutex::new(None),
                cache: Mutex::new(Cache::default()),
                accept: Arc::new(AcceptStore::open(data_dir)?),
                engine,
                chat_locks: Mutex::new(HashMap::new()),
                sends: Arc::new(tokio::sync::Semaphore::new(CONCURRENT_SENDS)),
                searches: Arc::new(tokio::sync::Semaphore::new(CONCURRENT_SEARCHES)),
                idle_timeout: idle_timeout.unwrap_or(IDLE_TIMEOUT),
            }),
        })
    }

    /// [`Api::db`] for a full-text query: one of [`CONCURRENT_SEARCHES`] at a time.
    async fn search_db<T: Send + 'static>(
        &self,
        f: impl FnOnce(&Connection) -> Result<T> + Send + 'static,
    ) -> std::result::Result<T, ApiError> {
        let _turn = self.inner.searches.acquire().await.map_err(|_| ApiError::internal("the server is stopping"))?;
        self.db(f).await
    }

    /// Runs `f` on the acceptance record on the blocking pool.
    async fn accept<T: Send + 'static>(
        &self,
        f: impl FnOnce(&AcceptStore) -> Result<T> + Send + 'static,
    ) -> std::result::Result<T, ApiError> {
        let store = self.inner.accept.clone();
        tokio::task::spawn_blocking(move || f(&store))
            .await
            .map_err(|e| ApiError::internal(format!("worker failed: {e}")))?
            .map_err(ApiError::from)
    }

    /// Announces an event on the bus (and so over `/api/events`).
    fn announce(&self, event: crate::events::Event) {
        // No receiver is not an error: nobody is listening.
        let _ = self.inner.bus.send(event);
    }

    /// The lock that keeps a chat's engine runs one at a time.
    fn chat_lock(&self, chat_id: &str) -> Arc<tokio::sync::Mutex<()>> {
        let mut locks = self.inner.chat_locks.lock().unwrap_or_else(|e| e.into_inner());
        // Chats whose runs are all done are forgotten, so the map stays as small as the work in hand.
        locks.retain(|_, lock| Arc::strong_count(lock) > 1);
        locks.entry(chat_id.to_owned()).or_default().clone()
    }

    /// Runs the engine for an accepted message, after the chat's earlier runs; binds the chat to the
    /// session the engine assigned; records and announces a failure.
    async fn run_engine(&self, record: Accepted) {
        let Some(engine) = self.inner.engine.clone() else { return };
        let lock = self.chat_lock(&record.chat_id);
        let _turn = lock.lock().await;
        let id = record.client_message_id.clone();
        // Read again: an earlier run may have bound the chat since this message was accepted. The
        // record and its images' paths are read on the blocking pool, as every store call is.
        let read = self.accept(move |store| {
            let Some(record) = store.record(&id)? else { return Ok(None) };
            let input = crate::accept::engine::input(&record, |hash| {
                let hash = hash.parse().ok()?;
                store.image(&hash).ok().flatten().map(|i| i.path)
            });
            Ok(Some((record, input)))
        });
        let (record, input) = match read.await {
            Ok(Some(read)) => read,
            Ok(None) => return,
            Err(e) => {
                tracing::error!("engine: cannot read the accepted message back: {}", e.message);
                return;
            }
        };
        match engine.run(&input).await {
            Ok(ran) => {
                if let Some(session_id) = ran.session_id.filter(|_| record.session_id.is_none()) {
                    self.bind(record.chat_id.clone(), session_id).await;
                }
            }
            Err(error) => {
                tracing::warn!(chat_id = %record.chat_id, client_message_id = %record.client_message_id, "engine failed: {error}");
                let (id, message) = (record.client_message_id.clone(), error.clone());
                if let Err(e) = self.accept(move |store| store.set_engine_error(&id, &message)).await {
                    tracing::error!("engine: cannot record its failure: {}", e.message);
                }
                self.announce(crate::events::Event::EngineFailed {
                    chat_id: record.chat_id,
                    client_message_id: record.client_message_id,
                    error,
                });
            }
        }
    }

    /// Binds a chat to a session an engine printed, announcing it; a refusal is logged.
    async fn bind(&self, chat_id: String, session_id: String) {
        let (chat, session) = (chat_id.clone(), session_id.clone());
        match self.accept(move |store| store.bind(&chat, &session)).await {
            Ok(crate::accept::store::Bound::Now) => {
                self.announce(crate::events::Event::SessionBound { chat_id, session_id });
            }
            Ok(crate::accept::store::Bound::Already) => {}
            Err(e) => tracing::warn!(%chat_id, %session_id, "engine's session not bound: {}", e.message),
        }
    }

    /// Runs `f` on a pooled read-only connection on the blocking pool.
    async fn db<T: Send + 'static>(
        &self,
        f: impl FnOnce(&Connection) -> Result<T> + Send + 'static,
    ) -> std::result::Result<T, ApiError> {
        let inner = self.inner.clone();
        tokio::task::spawn_blocking(move || {
            let conn = inner.pool.get()?;
            f(&conn)
        })
        .await
        .map_err(|e| ApiError::internal(format!("worker failed: {e}")))?
        .map_err(|e| {
            if e.is_corruption() {
                // Remembered for `/api/status`; every request that meets it answers 503.
                tracing::error!("the index is damaged: {e}; run `scrollback check`, then `scrollback rebuild`");
                *self.inner.damage.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Some(e.to_string());
            }
            ApiError::from(e)
        })
    }

    /// What SQLite said when it last found the index damaged, if it ever did.
    fn damage(&self) -> Option<String> {
        self.inner.damage.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone()
    }

    /// Queues a file for the writer to re-index; `false` if the writer is not running.
    fn reindex(&self, path: PathBuf) -> bool {
        match &self.inner.reindexer {
            Some(r) => r.reindex(path),
            None => true,
        }
    }

    /// Why the live writer died, if it did.
    fn writer_failure(&self) -> Option<String> {
        self.inner.writer.as_ref().and_then(WriterHealth::failure)
    }
}

/// How long a connection may sit between requests (or take to send a request's head) before it is
/// closed, unless [`Config::idle_timeout`] says otherwise. An upgraded connection (the events
/// WebSocket) is not bound by it: it has its own pings.
pub const IDLE_TIMEOUT: Duration = Duration::from_secs(60);

/// Serves `routes(api)` on `listener` until `shutdown` resolves; in-flight requests finish first.
///
/// warp's filters on hyper's HTTP/1.1 connections, each with a timer (warp's own server loop has
/// none): a connection that takes longer than [`Config::idle_timeout`] to send a request's head,
/// or sits that long between requests, is closed, so clients that open connections and leave them
/// open cannot hold sockets and tasks forever.
pub async fn serve(
    api: Api,
    listener: tokio::net::TcpListener,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) {
    use hyper_util::rt::{TokioIo, TokioTimer};
    let idle = api.inner.idle_timeout;
    let filter = routes(api);
    // Told to each connection when the server stops; each holds an `alive` until it has finished.
    let (stop, stopping) = tokio::sync::watch::channel(false);
    let (alive, mut all_finished) = tokio::sync::mpsc::channel::<()>(1);
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(e) => {
                    // Out of file descriptors, or a connection reset before it was accepted: the
                    // listener is fine; wait a moment instead of spinning.
                    tracing::debug!("accept: {e}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let service = hyper_util::service::TowerToHyperService::new(warp::service(filter.clone()));
        let (mut stopping, alive) = (stopping.clone(), alive.clone());
        tokio::spawn(async move {
            let _alive = alive;
            // HTTP/1.1 only (browsers speak HTTP/2 only over TLS): its header timeout runs from the
            // connection's first byte and between requests.
            let conn = hyper::server::conn::http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(idle)
                .serve_connection(TokioIo::new(stream), service)
                .with_upgrades();
            let mut conn = std::pin::pin!(conn);
            let done = tokio::select! {
                done = conn.as_mut() => done,
                _ = stopping.changed() => {
                    // The request in flight finishes; an idle connection closes now.
                    conn.as_mut().graceful_shutdown();
                    conn.await
                }
            };
            if let Err(e) = done {
                tracing::debug!("connection: {e}");
            }
        });
    }
    drop(listener);
    let _ = stop.send(true);
    drop(alive);
    let _ = all_finished.recv().await;
}

/// A small FIFO cache of verified, decoded photos, keyed by blake3.
#[derive(Default)]
struct Cache {
    map: HashMap<String, Bytes>,
    order: VecDeque<String>,
    total: usize,
}

impl Cache {
    fn get(&self, key: &str) -> Option<Bytes> {
        self.map.get(key).cloned()
    }

    fn put(&mut self, key: String, bytes: Bytes) {
        if bytes.len() > CACHE_ENTRY_MAX || self.map.contains_key(&key) {
            return;
        }
        while self.total + bytes.len() > CACHE_BYTES {
            let Some(old) = self.order.pop_front() else { break };
            if let Some(b) = self.map.remove(&old) {
                self.total -= b.len();
            }
        }
        self.total += bytes.len();
        self.order.push_back(key.clone());
        self.map.insert(key, bytes);
    }
}

/// A domain error on its way to becoming a response.
#[derive(Debug)]
pub struct ApiError {
    pub(crate) status: StatusCode,
    code: &'static str,
    message: String,
}

impl warp::reject::Reject for ApiError {}

impl ApiError {
    fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> ApiError {
        ApiError { status, code, message: message.into() }
    }

    fn forbidden(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::FORBIDDEN, "cross-site", message)
    }

    fn bad_request(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::BAD_REQUEST, "bad-request", message)
    }

    fn not_found(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::NOT_FOUND, "not-found", message)
    }

    fn internal(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", message)
    }
}

impl From<Error> for ApiError {
    fn from(e: Error) -> ApiError {
        match e {
            Error::BadRef(_) | Error::BadHash(_) | Error::BadQuery(_) => ApiError::bad_request(e.to_string()),
            Error::BadSend(_) => ApiError::new(StatusCode::BAD_REQUEST, "bad-send", e.to_string()),
            Error::TooLarge(_) => ApiError::new(StatusCode::PAYLOAD_TOO_LARGE, "too-large", e.to_string()),
            Error::Conflict(_) => ApiError::new(StatusCode::CONFLICT, "conflict", e.to_string()),
            Error::NotFound(_) => ApiError::not_found(e.to_string()),
            Error::FailedUpload { .. } => ApiError::new(StatusCode::NOT_FOUND, "failed-upload", e.to_string()),
            // Paths stay in the log: an answer names no file of the machine.
            Error::Gone { offset, .. } => ApiError::new(
                StatusCode::GONE,
                "gone",
                format!("the transcript holding this payload (at byte {offset}) is gone; its history is kept"),
            ),
            Error::Changed { expected, .. } => ApiError::new(
                StatusCode::CONFLICT,
                "changed",
                format!(
                    "the transcript's bytes no longer decode to the recorded blake3 {expected}: it is being re-indexed"
                ),
            ),
            Error::Io { source, .. } => {
                ApiError::new(StatusCode::CONFLICT, "unreadable", format!("the transcript cannot be read: {source}"))
            }
            e if e.is_corruption() => ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "index-damaged",
                format!("the index is damaged ({e}): run `scrollback check`, then `scrollback rebuild`"),
            ),
            Error::Schema { found, supported, .. } => ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "index-unavailable",
                format!("the index has schema version {found}; this server reads version {supported}"),
            ),
            e => {
                tracing::error!("request failed: {e}");
                ApiError::internal("the request failed on the server; its log says why")
            }
        }
    }
}

impl ApiError {
    /// 503: the live writer is not running, so what the request needs (a re-index) cannot happen.
    fn writer_stopped(why: Option<String>) -> ApiError {
        ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "writer-stopped",
            match why {
                Some(why) => format!("the indexer stopped ({why}); restart scrollback"),
                None => "the indexer is not running; restart scrollback".into(),
            },
        )
    }
}

/// The JSON error body.
fn error_reply(status: StatusCode, code: &str, message: &str) -> warp::reply::Response {
    let body = serde_json::json!({ "error": { "code": code, "message": message } });
    let mut res = warp::reply::with_status(warp::reply::json(&body), status).into_response();
    res.headers_mut().insert("x-content-type-options", warp::http::HeaderValue::from_static("nosniff"));
    res
}

use warp::Reply as _;

/// Maps every rejection to a status and a JSON body.
pub async fn handle_rejection(
    err: warp::Rejection,
) -> std::result::Result<warp::reply::Response, std::convert::Infallible> {
    use warp::reject;
    let (status, code, message): (StatusCode, &str, String) = if let Some(e) = err.find::<ApiError>() {
        (e.status, e.code, e.message.clone())
    } else if err.is_not_found() {
        (StatusCode::NOT_FOUND, "not-found", "no such route".into())
    } else if let Some(e) = err.find::<reject::InvalidQuery>() {
        (StatusCode::BAD_REQUEST, "bad-query", format!("query string: {e}"))
    } else if err.find::<reject::MethodNotAllowed>().is_some() {
        (StatusCode::METHOD_NOT_ALLOWED, "method-not-allowed", "method not allowed on this route".into())
    } else if err.find::<reject::PayloadTooLarge>().is_some() {
        (StatusCode::PAYLOAD_TOO_LARGE, "too-large", "request body too large".into())
    } else if err.find::<reject::LengthRequired>().is_some() {
        (StatusCode::LENGTH_REQUIRED, "length-required", "a Content-Length is required".into())
    } else if err.find::<reject::UnsupportedMediaType>().is_some() {
        (StatusCode::UNSUPPORTED_MEDIA_TYPE, "unsupported-media-type", "unsupported content type".into())
    } else if let Some(e) = err.find::<reject::InvalidHeader>() {
        (StatusCode::BAD_REQUEST, "bad-header", e.to_string())
    } else if let Some(e) = err.find::<reject::MissingHeader>() {
        (StatusCode::BAD_REQUEST, "missing-header", e.to_string())
    } else if let Some(e) = err.find::<warp::filters::body::BodyDeserializeError>() {
        (StatusCode::BAD_REQUEST, "bad-body", e.to_string())
    } else if err.find::<warp::ws::MissingConnectionUpgrade>().is_some() {
        (StatusCode::BAD_REQUEST, "not-a-websocket", "this route is a WebSocket: send an upgrade request".into())
    } else {
        tracing::warn!("unhandled rejection: {err:?}");
        (StatusCode::BAD_REQUEST, "bad-request", format!("{err:?}"))
    };
    let mut res = error_reply(status, code, &message);
    if status == StatusCode::METHOD_NOT_ALLOWED {
        // RFC 9110: a 405 lists what is allowed. The routes that take POST or DELETE say so
        // themselves (codes "post-only", "delete-only"); every other route is GET.
        let allow = match code {
            "post-only" => "POST",
            "delete-only" => "DELETE",
            _ => "GET",
        };
        res.headers_mut().insert(warp::http::header::ALLOW, warp::http::HeaderValue::from_static(allow));
    }
    Ok(res)
}

/// The cookie the viewer keeps the token in, so that `<img>` and the events socket carry it.
pub const TOKEN_COOKIE: &str = "scrollback_token";

#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct LoginBody {
    token: String,
}

/// `POST /api/login {token}`: checks a token and sets it as an `HttpOnly; SameSite=Strict` cookie
/// (the page cannot set an HttpOnly cookie itself). Reachable without a token; a wrong one is a 401.
fn login(api: Api) -> impl Filter<Extract = (warp::reply::Response,), Error = warp::Rejection> + Clone {
    warp::path!("login")
        .and(warp::post())
        .and(chat::same_site_json())
        .and(chat::json_body::<LoginBody>(chat::MAX_SMALL_BODY))
        .and_then(move |body: LoginBody| {
            let api = api.clone();
            async move {
                let Some(token) = api.inner.token.as_deref() else {
                    return Ok(warp::reply::json(&serde_json::json!({ "required": false })).into_response());
                };
                if !constant_time_eq(body.token.as_bytes(), token.as_bytes()) {
                    return Err(warp::reject::custom(ApiError::new(StatusCode::UNAUTHORIZED, "unauthorized", "wrong token")));
                }
                let cookie_safe = token.bytes().all(|b| b.is_ascii_graphic() && !b"\",;".contains(&b));
                if !cookie_safe {
                    return Err(warp::reject::custom(ApiError::bad_request(
                        "this token cannot be a cookie (it has spaces, quotes, commas or semicolons): send it as Authorization: Bearer",
                    )));
                }
                let cookie = format!("{TOKEN_COOKIE}={token}; HttpOnly; SameSite=Strict; Path=/; Max-Age=2592000");
                let mut res = warp::reply::json(&serde_json::json!({ "required": true })).into_response();
                if let Ok(v) = warp::http::HeaderValue::from_str(&cookie) {
                    res.headers_mut().insert(warp::http::header::SET_COOKIE, v);
                }
                Ok(res)
            }
        })
        .or(warp::path!("login").and(chat::post_only()))
        .unify()
}

/// Whether a `Host` header names this machine's loopback: `localhost` (or a name under it, which
/// browsers resolve to loopback themselves), `127.0.0.0/8` or `[::1]`, with or without a port.
fn is_loopback_host(host: &str) -> bool {
    let name = match host.strip_prefix('[') {
        Some(rest) => rest.split(']').next().unwrap_or(""),
        None => host
            .rsplit_once(':')
            .map_or(host, |(name, port)| if port.bytes().all(|b| b.is_ascii_digit()) { name } else { host }),
    };
    let name = name.trim_end_matches('.').to_ascii_lowercase();
    name == "localhost"
        || name.ends_with(".localhost")
        || name.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// Without a token, answers only requests addressed to a loopback name: a page the person visits
/// cannot reach this server by pointing a name of its own at 127.0.0.1 (DNS rebinding). With a
/// token, the token guards every route instead.
fn loopback_host(api: Api) -> impl Filter<Extract = (), Error = warp::Rejection> + Clone {
    warp::header::optional::<String>("host")
        .and_then(move |host: Option<String>| {
            let api = api.clone();
            async move {
                if api.inner.token.is_some() || host.as_deref().is_some_and(is_loopback_host) {
                    return Ok(());
                }
                Err(warp::reject::custom(ApiError::new(
                    StatusCode::FORBIDDEN,
                    "bad-host",
                    format!(
                        "Host {:?} is not a loopback name: without --token this server answers only localhost and 127.0.0.1",
                        host.unwrap_or_default().chars().take(100).collect::<String>()
                    ),
                )))
            }
        })
        .untuple_one()
}

/// A filter that extracts nothing and rejects with 401 when a token is set and not presented.
fn authorized(api: Api) -> impl Filter<Extract = (), Error = warp::Rejection> + Clone {
    warp::header::optional::<String>("authorization")
        .and(warp::cookie::optional::<String>(TOKEN_COOKIE))
        .and_then(move |header: Option<String>, cookie: Option<String>| {
            let api = api.clone();
            async move {
                let Some(token) = api.inner.token.as_deref() else { return Ok(()) };
                let presented = header.as_deref().and_then(|h| h.strip_prefix("Bearer ")).or(cookie.as_deref());
                match presented {
                    Some(p) if constant_time_eq(p.as_bytes(), token.as_bytes()) => Ok(()),
                    _ => Err(warp::reject::custom(ApiError::new(
                        StatusCode::UNAUTHORIZED,
                        "unauthorized",
                        "a token is required: Authorization: Bearer <token>, or the scrollback_token cookie",
                    ))),
                }
            }
        })
        .untuple_one()
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_hosts_and_others() {
        for host in [
            "localhost",
            "localhost:7878",
            "127.0.0.1:7878",
            "127.9.9.9",
            "[::1]:7878",
            "app.localhost:80",
            "LOCALHOST.",
        ] {
            assert!(is_loopback_host(host), "{host}");
        }
        for host in [
            "evil.example",
            "evil.example:7878",
            "127.0.0.1.evil.example",
            "localhost.evil.example",
            "[::2]:80",
            "10.0.0.1",
            "",
        ] {
            assert!(!is_loopback_host(host), "{host}");
        }
    }
}
