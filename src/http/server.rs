//! The serve loop: warp's filters on hyper's HTTP/1.1 connections, each with a timer (warp's own
//! server loop has none), and a graceful stop.

use std::time::Duration;

use super::{Api, routes};

/// How long a connection may sit between requests (or take to send a request's head) before it is
/// closed, unless [`super::Config::idle_timeout`] says otherwise. An upgraded connection (the events
/// WebSocket) is not bound by it: it has its own pings.
pub const IDLE_TIMEOUT: Duration = Duration::from_secs(60);

/// Serves `routes(api)` on `listener` until `shutdown` resolves; in-flight requests finish first.
///
/// warp's filters on hyper's HTTP/1.1 connections, each with a timer (warp's own server loop has
/// none): a connection that takes longer than [`super::Config::idle_timeout`] to send a request's head,
/// or sits that long between requests, is closed, so clients that open connections and leave them
/// open cannot hold sockets and tasks forever.
pub async fn serve(
    api: Api,
    listener: tokio::net::TcpListener,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) {
    use hyper_util::rt::{TokioIo, TokioTimer};
    let idle = api.idle_timeout();
    // What the engine never finished before the last stop is handed to it again.
    let chats = api.chats().clone();
    tokio::spawn(async move {
        match chats.resume().await {
            Ok(0) => {}
            Ok(n) => tracing::info!(messages = n, "engine runs resumed"),
            Err(e) => tracing::error!("engine runs not resumed: {e}"),
        }
    });
    let mcp = super::mcp::McpHttp::new(&api);
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
        // `/mcp` is answered beside warp's route table, under its rules (see `super::mcp`).
        let service = hyper_util::service::TowerToHyperService::new(super::mcp::Dispatch::new(
            warp::service(filter.clone()),
            &mcp,
        ));
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
