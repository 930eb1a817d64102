//! The serve loop: warp's filters on hyper's HTTP/1.1 connections, each with a timer (warp's own
//! server loop has none), and a graceful stop.

use std::time::Duration;

use warp::http::Request;

use super::pace::{Paced, RequestBody};
use super::{Api, routes};

/// How long a connection may sit between requests (or take to send a request's head) before it is
/// closed, unless [`super::Config::idle_timeout`] says otherwise. An upgraded connection (the events
/// WebSocket) is not bound by it: it has its own pings.
pub const IDLE_TIMEOUT: Duration = Duration::from_secs(60);

/// The most connections open at once, unless [`super::Config::max_connections`] says otherwise,
/// and never more than the process's descriptor limit leaves room for ([`connection_cap`]). An
/// events WebSocket counts until it closes. Past it, new connections wait in the listen queue
/// until one closes.
pub const MAX_CONNECTIONS: usize = 512;

/// Descriptors kept for everything but connections: the databases, the transcripts being read,
/// the watcher, the engine's pipes.
const RESERVED_DESCRIPTORS: u64 = 64;

/// The cap on open connections: `wanted`, lowered to what the soft descriptor limit leaves once 64
/// are kept for the rest (said in the log when it does), and at least 1.
pub fn connection_cap(wanted: usize) -> usize {
    let limit = rustix::process::getrlimit(rustix::process::Resource::Nofile).current;
    let room = limit.map_or(u64::MAX, |n| n.saturating_sub(RESERVED_DESCRIPTORS));
    let cap = (wanted as u64).min(room).max(1) as usize;
    if cap < wanted {
        tracing::warn!(
            "at most {cap} connections at once, not {wanted}: the descriptor limit is {} (ulimit -n)",
            limit.unwrap_or_default()
        );
    }
    cap
}

/// A connection's socket, holding its place under the cap for as long as it is open (through an
/// upgrade to a WebSocket too: hyper hands the socket on, and this with it).
struct Counted {
    stream: tokio::net::TcpStream,
    _place: tokio::sync::OwnedSemaphorePermit,
}

impl tokio::io::AsyncRead for Counted {
    fn poll_read(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.stream).poll_read(cx, buf)
    }
}

impl tokio::io::AsyncWrite for Counted {
    fn poll_write(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        std::pin::Pin::new(&mut self.stream).poll_write(cx, buf)
    }

    fn poll_flush(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.stream).poll_flush(cx)
    }

    fn poll_shutdown(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.stream).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> std::task::Poll<std::io::Result<usize>> {
        std::pin::Pin::new(&mut self.stream).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }
}

/// warp's service for the route table, each request's body held to its deadline ([`super::pace`])
/// whichever route reads it. A named service, not an `async` block around warp's future: proving
/// such a block `Send` made the compiler's trait solving take minutes.
#[derive(Clone)]
struct PacedService<W> {
    warp: W,
    /// A body's first allowance.
    grace: Duration,
}

impl<W> tower_service::Service<Request<hyper::body::Incoming>> for PacedService<W>
where
    W: tower_service::Service<Request<RequestBody>>,
{
    type Response = W::Response;
    type Error = W::Error;
    type Future = W::Future;

    fn poll_ready(&mut self, cx: &mut std::task::Context<'_>) -> std::task::Poll<Result<(), W::Error>> {
        self.warp.poll_ready(cx)
    }

    fn call(&mut self, request: Request<hyper::body::Incoming>) -> W::Future {
        let grace = self.grace;
        self.warp.call(request.map(|body| Paced::new(body, grace)))
    }
}

/// Serves `routes(api)` on `listener` until `shutdown` resolves; in-flight requests finish first.
///
/// warp's filters on hyper's HTTP/1.1 connections, each with a timer (warp's own server loop has
/// none): a connection that takes longer than [`super::Config::idle_timeout`] to send a request's head,
/// or sits that long between requests, is closed, so clients that open connections and leave them
/// open cannot hold sockets and tasks forever. A request's body keeps to its own deadline (the idle
/// timeout, and a second more for every 16 KiB that arrive), and at most
/// [`super::Config::max_connections`] connections are open at once.
pub async fn serve(
    api: Api,
    listener: tokio::net::TcpListener,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) {
    use hyper_util::rt::{TokioIo, TokioTimer};
    let idle = api.idle_timeout();
    let cap = connection_cap(api.max_connections());
    let places = std::sync::Arc::new(tokio::sync::Semaphore::new(cap));
    let mut said_full: Option<std::time::Instant> = None;
    resume_engine_runs(&api);
    let filter = routes(api);
    // Told to each connection when the server stops; each holds an `alive` until it has finished.
    let (stop, stopping) = tokio::sync::watch::channel(false);
    let (alive, mut all_finished) = tokio::sync::mpsc::channel::<()>(1);
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        if places.available_permits() == 0 && said_full.is_none_or(|t| t.elapsed() > Duration::from_secs(60)) {
            tracing::warn!("{cap} connections are open, the most at once (--max-connections): new ones wait");
            said_full = Some(std::time::Instant::now());
        }
        let place = tokio::select! {
            place = places.clone().acquire_owned() => place.expect("the semaphore is never closed"),
            () = &mut shutdown => break,
        };
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
        let service = hyper_util::service::TowerToHyperService::new(PacedService {
            warp: warp::service(filter.clone()),
            grace: idle,
        });
        let (mut stopping, alive) = (stopping.clone(), alive.clone());
        // The connection's task stays inline: a function would have to name warp's opaque filter
        // type, or prove hyper's bounds `Send` for a generic service (see `PacedService`).
        tokio::spawn(async move {
            let _alive = alive;
            // HTTP/1.1 only (browsers speak HTTP/2 only over TLS): its header timeout runs from the
            // connection's first byte and between requests.
            let conn = hyper::server::conn::http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(idle)
                .serve_connection(TokioIo::new(Counted { stream, _place: place }), service)
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

/// Hands the engine again, on a task of its own, what it never finished before the last stop.
fn resume_engine_runs(api: &Api) {
    let chats = api.chats().clone();
    tokio::spawn(async move {
        match chats.resume().await {
            Ok(0) => {}
            Ok(n) => tracing::info!(messages = n, "engine runs resumed"),
            Err(e) => tracing::error!("engine runs not resumed: {e}"),
        }
    });
}
