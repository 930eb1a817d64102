//! The commands that run until stopped: `serve` (the writer, the HTTP server and, with `--push`, the
//! hub's follower) and `mcp` (the MCP server on standard input and output, with the writer
//! election), and `demo-engine`, the stand-in agent `serve --demo` runs. Their shutdown: a signal,
//! the writer's death, a grace period for requests in flight. What they serve is the library's;
//! nothing here reads or writes the index itself.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, bail};
use scrollback::ops::engine::Engine;
use scrollback::ops::writer::open_writer;
use scrollback::{Root, Tail, TailConfig};

use crate::cli::{Dirs, ServeArgs, Usage, hub_config, remember_roots};
use crate::start::Start;
use crate::visible::one_line;

/// `scrollback serve`, from its flags.
pub(crate) fn run(args: ServeArgs) -> anyhow::Result<()> {
    let ServeArgs {
        dirs,
        listen,
        token,
        allow_hosts,
        demo,
        follow,
        engine,
        engine_timeout_secs,
        idle_secs,
        max_connections,
        prices,
        push,
        hub_host,
        take_over,
        postgres,
        hub_timeout,
        mask,
    } = args;
    let push = match push {
        Some(url) => {
            Some((hub_config(&url, hub_timeout)?, hub_host.unwrap_or_else(scrollback::hub::machine_name), take_over))
        }
        None => None,
    };
    let options = ServeOptions {
        listen,
        token,
        allow_hosts,
        demo,
        rescan_secs: follow.rescan_secs,
        poll_ms: follow.poll.then_some(follow.poll_ms),
        engine,
        engine_timeout: Duration::from_secs(engine_timeout_secs),
        idle: Duration::from_secs(idle_secs),
        max_connections,
        prices: prices.load()?,
        push,
        mask_secrets: mask.mask_secrets,
    };
    match postgres {
        Some(url) => serve_hub(&dirs, options, hub_config(&url, hub_timeout)?),
        None => serve(&dirs, options),
    }
}

/// `scrollback serve --postgres`: the HTTP server over a team's hub, read-only, until a signal. No
/// writer: nothing here follows transcripts.
fn serve_hub(dirs: &Dirs, options: ServeOptions, hub: scrollback::hub::HubConfig) -> anyhow::Result<()> {
    let token = options.token.clone();
    scrollback::http::check_listen(&options.listen, token.as_deref()).map_err(|e| Usage(e.to_string()))?;
    let data_dir = dirs.data.resolve()?;
    let described = hub.describe();
    let readers =
        scrollback::hub::store::HubReaders::open(hub).with_context(|| format!("reading the hub {described}"))?;
    let api_config = scrollback::http::Config {
        token,
        allow_hosts: options.allow_hosts.clone(),
        idle_timeout: Some(options.idle),
        max_connections: Some(options.max_connections),
        prices: Some(options.prices.clone()),
        mask_secrets: options.mask_secrets,
        readers: Some(scrollback::read::pool::Readers::of(std::sync::Arc::new(readers))),
        ..Default::default()
    };
    let api = scrollback::http::Api::new(&data_dir, scrollback::events::bus(), api_config)?;
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    let reading =
        one_line(&format!("scrollback {}: reading the hub {described}, read-only", env!("CARGO_PKG_VERSION")));
    runtime.block_on(async move {
        let (listener, url) = bind(options.listen).await?;
        let announce = async move {
            eprintln!("{reading}");
            eprintln!("{url}");
        };
        run_server(api, listener, announce, std::future::pending()).await
    })
}

/// `scrollback demo-engine`: one accepted message from standard input, written with its reply into
/// the transcript tree.
pub(crate) fn demo_engine(transcripts: PathBuf, project: String, reply_delay_ms: u64) -> anyhow::Result<()> {
    let engine = scrollback::demo::engine::DemoEngine {
        transcripts,
        project,
        reply_delay: Duration::from_millis(reply_delay_ms),
    };
    Ok(engine.run(std::io::stdin().lock(), std::io::stdout().lock())?)
}

/// `serve`'s flags beyond the directories.
struct ServeOptions {
    listen: SocketAddr,
    token: Option<String>,
    allow_hosts: Vec<String>,
    demo: bool,
    rescan_secs: u64,
    poll_ms: Option<u64>,
    engine: Option<String>,
    engine_timeout: Duration,
    idle: Duration,
    max_connections: usize,
    prices: scrollback::read::prices::Prices,
    /// `--push`: the hub, the host name and whether to take it over.
    push: Option<(scrollback::hub::HubConfig, String, bool)>,
    /// `--mask-secrets`.
    mask_secrets: bool,
}

/// The engine `serve` runs: `--engine`, else with `--demo` this binary's `demo-engine`.
fn engine(options: &ServeOptions, root: Option<&Path>) -> anyhow::Result<Option<Engine>> {
    if let Some(command) = &options.engine {
        let engine = Engine::parse(command, options.engine_timeout).ok_or_else(|| Usage("--engine is empty".into()))?;
        return Ok(Some(engine));
    }
    if !options.demo {
        return Ok(None);
    }
    let program = std::env::current_exe().context("finding this program, to run its demo engine")?;
    let root = root.context("the demo engine needs the demo's transcript tree")?;
    let root = root.to_str().context("the demo tree's path is not UTF-8")?;
    Ok(Some(Engine {
        program,
        args: vec!["demo-engine".into(), "--transcripts".into(), root.into()],
        timeout: options.engine_timeout,
    }))
}

/// `scrollback serve`: the writer on its own thread, the push if asked, and the HTTP server until a
/// signal or the writer's death.
fn serve(dirs: &Dirs, options: ServeOptions) -> anyhow::Result<()> {
    let ServeOptions { listen, demo, rescan_secs, poll_ms, .. } = options;
    let token = options.token.clone();
    scrollback::http::check_listen(&listen, token.as_deref()).map_err(|e| Usage(e.to_string()))?;
    // The demo has a data directory of its own: its index, sends and vault never mix with yours.
    let data_dir = match demo {
        true => scrollback::demo::data_dir(&dirs.data.resolve()?),
        false => dirs.data.resolve()?,
    };
    let demo_root = if demo { Some(scrollback::demo::write_root(&data_dir)?) } else { None };
    let (roots, origin) = match &demo_root {
        Some(root) => (vec![root.clone()], None),
        None => {
            let (roots, origin) = dirs.roots.resolve(&data_dir)?;
            (roots, Some(origin))
        }
    };
    let mut indexer =
        open_writer(&data_dir, &dirs.writer_options("serve")).map_err(|e| e.or_out_of_space(&data_dir))?;
    let roots_told = match &origin {
        Some(origin) => remember_roots(&data_dir, &roots, origin)?,
        None => format!("{} (the demo's)", roots.iter().map(Root::spec).collect::<Vec<_>>().join(", ")),
    };
    let bus = scrollback::events::bus();
    indexer.set_bus(bus.clone());
    let config = TailConfig {
        rescan_every: Duration::from_secs(rescan_secs),
        poll: poll_ms.map(Duration::from_millis),
        ..TailConfig::of(roots.clone())
    };
    // The demo engine writes into the demo's tree.
    let engine = engine(&options, demo_root.as_ref().map(|r| r.dir.as_path()))?;
    // Subscribed before the writer starts, so that its death is never missed.
    let writer_events = bus.subscribe();
    let started = std::time::Instant::now();
    let tail = Tail::start(indexer, config)?;
    let api_config = scrollback::http::Config {
        token,
        allow_hosts: options.allow_hosts.clone(),
        writer: Some(tail.writer()),
        engine,
        health: Some(tail.health()),
        watcher: Some(tail.watcher_kind()),
        idle_timeout: Some(options.idle),
        max_connections: Some(options.max_connections),
        roots: roots.clone(),
        prices: Some(options.prices.clone()),
        push: None,
        mask_secrets: options.mask_secrets,
        readers: None,
    };
    // The push starts once the writer has the index open (its schema current).
    let push = match &options.push {
        Some((hub, host, take_over)) => {
            Some(scrollback::hub::follow::Follow::start(hub.clone(), host.clone(), &data_dir, *take_over)?)
        }
        None => None,
    };
    let api_config = scrollback::http::Config { push: push.as_ref().map(|p| p.status()), ..api_config };
    let api = scrollback::http::Api::new(&data_dir, bus, api_config)?;
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    // The detail, for the log; a person is told what `Start` says.
    tracing::info!("following {}; index in {}", one_line(&roots_told), data_dir.display());
    let start = Start { roots, origin, data_dir: data_dir.clone(), writer: tail.writer(), started };
    runtime.block_on(async move {
        let (listener, url) = bind(listen).await?;
        // Where it listens, for a second `serve` on this data directory to say.
        if let Err(e) = scrollback::ingest::lock::record_serving(&data_dir, &url) {
            tracing::warn!("recording where this server listens: {e}");
        }
        run_server(api, listener, start.announce(url), scrollback::ops::writer::writer_died(writer_events)).await
    })?;
    if let Some(push) = push {
        push.stop();
    }
    if tail.stop().is_none() {
        bail!("the indexer died; see the log above");
    }
    Ok(())
}

/// `scrollback mcp`: the MCP server on standard input and output until the client closes it (or
/// SIGINT/SIGTERM), with the election that has one of several such servers follow the transcripts;
/// or, with `hub` (`--postgres`), over a team's hub, following nothing.
pub(crate) fn mcp(
    dirs: &Dirs,
    project: Option<&Path>,
    rescan_every: Duration,
    poll: Option<Duration>,
    mask_secrets: bool,
    hub: Option<scrollback::hub::HubConfig>,
) -> anyhow::Result<()> {
    use rmcp::ServiceExt as _;
    let data_dir = dirs.data.resolve()?;
    let project = match project {
        Some(p) => {
            let absolute = std::path::absolute(p).with_context(|| format!("--project {}", p.display()))?;
            let text = absolute.to_str().context("--project is not UTF-8")?;
            Some(if text.len() > 1 { text.trim_end_matches('/').to_owned() } else { text.to_owned() })
        }
        None => None,
    };
    let mask =
        if mask_secrets { Some(std::sync::Arc::new(scrollback::render::redact::Redactor::shipped()?)) } else { None };
    let (source, follower) = match hub {
        Some(hub) => {
            let described = hub.describe();
            let readers = scrollback::hub::store::HubReaders::open(hub)
                .with_context(|| format!("reading the hub {described}"))?;
            let readers = scrollback::read::pool::Readers::of(std::sync::Arc::new(readers));
            (scrollback::mcp::Source::with_readers(&data_dir, readers).within(project), None)
        }
        None => {
            let (roots, _) = dirs.roots.resolve(&data_dir)?;
            let config = TailConfig { rescan_every, poll, ..TailConfig::of(roots) };
            let follower = scrollback::ops::election::Follower::start(&data_dir, dirs.writer_options("mcp"), config)
                .context("starting the writer election")?;
            (scrollback::mcp::Source::new(&data_dir, project), Some(follower))
        }
    };
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    let tools = scrollback::mcp::Tools::new(source.masking(mask));
    let served = runtime.block_on(async move {
        let running = match tools.serve(rmcp::transport::stdio()).await {
            Ok(running) => running,
            // The client left before it said hello (it was stopped, or only probed the command).
            Err(rmcp::service::ServerInitializeError::ConnectionClosed(_)) => {
                tracing::info!("the MCP client closed standard input before the handshake");
                return anyhow::Ok(());
            }
            Err(e) => return Err(e).context("the MCP handshake on standard input"),
        };
        tokio::select! {
            done = running.waiting() => { done.context("serving MCP")?; }
            signal = shutdown_signal() => signal?,
        }
        anyhow::Ok(())
    });
    // The writer, if this server ran it, stops and lets the lock go for the next.
    if let Some(follower) = follower {
        follower.stop();
    }
    // stdin's reader thread may still be blocked on a read: do not wait for it.
    runtime.shutdown_timeout(Duration::from_millis(100));
    served
}

/// Listens on `listen`: the listener, and the viewer's address on it.
async fn bind(listen: SocketAddr) -> anyhow::Result<(tokio::net::TcpListener, String)> {
    let listener = tokio::net::TcpListener::bind(listen).await.with_context(|| format!("listening on {listen}"))?;
    let url = format!("http://{}/", listener.local_addr()?);
    Ok((listener, url))
}

/// Serves on `listener` until SIGINT or SIGTERM, or until the writer dies (`writer_died`
/// resolves): a supervisor restarts a process that exits with an error, and a server whose index
/// no longer follows the transcripts must not go on answering as if it did. `announce` (what the
/// start says, the address last) runs beside the server, which answers from the first moment.
async fn run_server(
    api: scrollback::http::Api,
    listener: tokio::net::TcpListener,
    announce: impl std::future::Future<Output = ()> + Send + 'static,
    writer_died: impl std::future::Future<Output = String>,
) -> anyhow::Result<()> {
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(scrollback::http::serve(api, listener, async {
        let _ = stopped.await;
    }));
    let announce = tokio::spawn(announce);
    let died = tokio::select! {
        signal = shutdown_signal() => {
            signal?;
            None
        }
        error = writer_died => Some(error),
    };
    announce.abort();
    match &died {
        Some(error) => {
            eprintln!("scrollback: the indexer died ({error}); stopping");
            // A moment for the event to reach the open pages.
            tokio::time::sleep(Duration::from_millis(300)).await;
        }
        None => eprintln!("scrollback: stopping"),
    }
    let _ = stop.send(());
    // In-flight requests get a moment to finish; a slow client (a download read a byte at a time,
    // an events socket) does not keep the process alive past it.
    match tokio::time::timeout(SHUTDOWN_GRACE, server).await {
        Ok(joined) => joined?,
        Err(_) => {
            eprintln!("scrollback: requests still in flight after {} s; stopping anyway", SHUTDOWN_GRACE.as_secs())
        }
    }
    match died {
        Some(error) => Err(anyhow::anyhow!("the indexer died: {error}")),
        None => Ok(()),
    }
}

/// How long `serve` waits for in-flight requests once asked to stop.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(3);

/// Resolves on SIGINT or SIGTERM.
async fn shutdown_signal() -> anyhow::Result<()> {
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
    tokio::select! {
        result = tokio::signal::ctrl_c() => result?,
        _ = term.recv() => {}
    }
    Ok(())
}
