//! The `scrollback` command: flags, logging and exit codes around the library. Nothing else.

use std::io::{IsTerminal, Write};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, bail};
use clap::{Args, Parser, Subcommand};
use scrollback::accept::engine::Engine;
use scrollback::ops::writer::{WriterOptions, open_writer};
use scrollback::read::{Store, history, index, media};
use scrollback::{MediaName, Progress, Root, Tail, TailConfig};

/// An embedded, SQLite-indexed store for AI chat transcripts.
#[derive(Debug, Parser)]
#[command(version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Follow the transcript tree live and serve history, photos and search over HTTP.
    Serve {
        #[command(flatten)]
        dirs: Dirs,
        /// Address to listen on; anything but loopback needs --token.
        #[arg(long, env = "SCROLLBACK_LISTEN", default_value = scrollback::http::DEFAULT_LISTEN)]
        listen: SocketAddr,
        /// Require this token on every /api route (Authorization: Bearer, or the scrollback_token cookie).
        #[arg(long, env = "SCROLLBACK_TOKEN", hide_env_values = true)]
        token: Option<String>,
        /// Also answer requests to this host name (besides localhost, 127.0.0.1 and, with --token,
        /// IP addresses); repeat for more. Any other Host is refused (DNS rebinding).
        #[arg(long = "allow-host", value_name = "NAME")]
        allow_hosts: Vec<String>,
        /// Write a small sample transcript tree (with real photos) into the data directory and serve it.
        #[arg(long)]
        demo: bool,
        #[command(flatten)]
        follow: Follow,
        /// Run this for each accepted message, the message as JSON on its standard input (a program
        /// and its arguments, split on spaces; no shell). With --demo: the built-in demo engine.
        #[arg(long, env = "SCROLLBACK_ENGINE")]
        engine: Option<String>,
        /// Seconds an engine run may take before it is killed and recorded as failed.
        #[arg(long, default_value_t = 600, value_parser = clap::value_parser!(u64).range(1..))]
        engine_timeout_secs: u64,
        /// Seconds a connection may sit idle between requests before it is closed (the events
        /// socket is pinged every half of it, and closed when its peer stops answering).
        #[arg(long, default_value_t = scrollback::http::IDLE_TIMEOUT.as_secs(), value_parser = clap::value_parser!(u64).range(1..))]
        idle_secs: u64,
        /// The most connections open at once (events sockets included); more wait until one closes.
        /// Lowered to what the descriptor limit (`ulimit -n`) leaves room for.
        #[arg(long, default_value_t = scrollback::http::MAX_CONNECTIONS, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
        max_connections: usize,
        #[command(flatten)]
        prices: PricesArg,
        /// Also push the index to a team's hub (PostgreSQL) as it changes: a postgres:// URL or
        /// key=value string, or none to take it all from the PG* variables (see `push`).
        #[arg(long, value_name = "URL", num_args = 0..=1, default_missing_value = "")]
        push: Option<String>,
        /// This machine's name on the hub [default: the machine's host name].
        #[arg(long = "host", value_name = "NAME", requires = "push")]
        hub_host: Option<String>,
    },
    /// Send this host's index to a team's hub (PostgreSQL): sessions, lines, search text, photos
    /// (each once, by blake3) and the usage ledger; only what is new since the last push.
    Push {
        #[command(flatten)]
        data: DataDir,
        /// The hub: a postgres:// URL or key=value string. What it leaves out comes from PGHOST,
        /// PGPORT, PGUSER, PGPASSWORD, PGDATABASE and PGSSLMODE, as for psql; a password belongs in
        /// PGPASSWORD (or SCROLLBACK_POSTGRES), never on a command line, which `ps` shows.
        #[arg(
            long = "postgres",
            value_name = "URL",
            env = "SCROLLBACK_POSTGRES",
            hide_env_values = true,
            default_value = ""
        )]
        postgres: String,
        /// This machine's name on the hub [default: the machine's host name].
        #[arg(long = "host", value_name = "NAME")]
        host: Option<String>,
    },
    /// An MCP server over standard input and output, for coding agents to search and read their
    /// history, photos included. It reads the index; when no other scrollback writes it, it follows
    /// the transcripts itself, as `serve` does.
    Mcp {
        #[command(flatten)]
        dirs: Dirs,
        /// Only this project's sessions: its working directory (made absolute).
        #[arg(long)]
        project: Option<PathBuf>,
        #[command(flatten)]
        follow: Follow,
    },
    /// A stand-in for the agent: reads an accepted message on standard input and appends it, and a
    /// reply, to its session's transcript (what `serve --demo` runs for each message).
    DemoEngine {
        /// The transcript tree to write into.
        #[arg(long)]
        transcripts: PathBuf,
        /// The project folder under it.
        #[arg(long, default_value = scrollback::demo::engine::DEMO_PROJECT)]
        project: String,
        /// Milliseconds between the user line and the reply.
        #[arg(long, default_value_t = 300)]
        reply_delay_ms: u64,
    },
    /// Index the transcript tree once (only new bytes on a second run) and print a summary.
    Index {
        #[command(flatten)]
        dirs: Dirs,
    },
    /// Full-text search over the index.
    Search {
        /// An FTS5 query: words, "a phrase", prefix*, AND / OR / NOT.
        query: String,
        #[command(flatten)]
        data: DataDir,
        /// Only this session.
        #[arg(long)]
        session: Option<String>,
        /// Only this agent's entries.
        #[arg(long, value_parser = clap::builder::PossibleValuesParser::new(scrollback::format::names()))]
        agent: Option<String>,
        /// At most this many hits.
        #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(u32).range(1..=500))]
        limit: u32,
    },
    /// Tokens and cost from the usage ledger: one row per API response, grouped and priced.
    Usage {
        #[command(flatten)]
        data: DataDir,
        /// Group by this.
        #[arg(long, default_value = "day", value_parser = clap::builder::PossibleValuesParser::new(["day", "week", "month", "session", "project", "model", "agent"]))]
        by: String,
        /// From this date (YYYY-MM-DD, UTC) or RFC 3339 time on.
        #[arg(long)]
        since: Option<String>,
        /// Up to this date (inclusive) or time.
        #[arg(long)]
        until: Option<String>,
        /// Only this agent's responses.
        #[arg(long, value_parser = clap::builder::PossibleValuesParser::new(scrollback::format::names()))]
        agent: Option<String>,
        /// Only this project's (its working directory, as the sessions list names it).
        #[arg(long)]
        project: Option<String>,
        /// Only this session's.
        #[arg(long)]
        session: Option<String>,
        /// Print the report as JSON (the same as GET /api/usage).
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        prices: PricesArg,
    },
    /// Take a session away: one HTML file that opens offline (photos inline), Markdown with its
    /// photos in a folder beside it, or the transcript's own lines (JSONL), byte for byte.
    Export {
        /// The session's id.
        session: String,
        #[command(flatten)]
        data: DataDir,
        /// What to write.
        #[arg(long, default_value = "html", value_parser = clap::builder::PossibleValuesParser::new(["html", "md", "jsonl"]))]
        format: String,
        /// Replace secrets (API keys, tokens, private keys, passwords in URLs…) by gitleaks' rules.
        #[arg(long)]
        redact: bool,
        /// Write here (`-`: standard output; a Markdown export's photos go to `<name>_files/`
        /// beside it). Default: `<session>.<format>` in the current directory.
        #[arg(short, long)]
        output: Option<PathBuf>,
    },
    /// Write one photo's (or any payload's) decoded bytes, verified against its recorded blake3.
    Media {
        /// `<sessionId>/<entryUuid>/<ordinal>`, or the blake3 (hex) of the decoded bytes.
        reference: String,
        #[command(flatten)]
        data: DataDir,
        /// Write to this file instead of standard output.
        #[arg(short = 'o', long = "output")]
        output: Option<PathBuf>,
    },
    /// What the index holds: transcripts live and gone, sessions, entries, invalid lines, photos,
    /// its size, the data directory's free space, and sends pending.
    Status {
        #[command(flatten)]
        data: DataDir,
        #[command(flatten)]
        roots: RootArgs,
    },
    /// Forget sessions: their entries, photos' rows, search rows, vault links and sent messages go,
    /// and their transcripts are not indexed again until `unforget`. It needs the data directory to
    /// itself: while `serve` runs, use its `DELETE /api/sessions/{id}` instead.
    Forget {
        /// The sessions to forget.
        sessions: Vec<String>,
        /// Also every session of this project (its working directory, as listed).
        #[arg(long)]
        project: Option<String>,
        /// Also every session whose last entry is before this date (RFC 3339, or YYYY-MM-DD).
        #[arg(long)]
        before: Option<String>,
        /// Say what would go, and how many bytes it frees, and change nothing.
        #[arg(long)]
        dry_run: bool,
        /// Forget more than one session without asking (otherwise they are listed, and a terminal
        /// is asked to confirm; without a terminal, nothing is forgotten).
        #[arg(long)]
        yes: bool,
        #[command(flatten)]
        data: DataDir,
    },
    /// Let forgotten sessions' transcripts be indexed again (at the next `index` or rescan).
    Unforget {
        /// The sessions.
        #[arg(required = true)]
        sessions: Vec<String>,
        #[command(flatten)]
        data: DataDir,
    },
    /// Check the index file for damage (SQLite's integrity check); exits 1 if it is damaged.
    Check {
        #[command(flatten)]
        data: DataDir,
    },
    /// Build a new index from the transcripts, moving the old one aside (never deleting it) and
    /// carrying over the history only it held (transcripts gone since), as much as can be read.
    Rebuild {
        #[command(flatten)]
        dirs: Dirs,
    },
}

/// Which transcript trees are followed.
#[derive(Debug, Args)]
struct RootArgs {
    // Help from the format registry (`transcripts_help`).
    #[arg(long, env = "SCROLLBACK_TRANSCRIPTS", help = transcripts_help())]
    transcripts: Option<PathBuf>,
    // Help from the format registry and this environment (`roots_help`).
    #[arg(long = "root", value_name = "FORMAT:DIR", value_parser = parse_root, help = roots_help())]
    roots: Vec<Root>,
}

fn parse_root(spec: &str) -> Result<Root, String> {
    Root::parse(spec)
}

/// `--transcripts`' help: a tree of the default format's transcripts.
fn transcripts_help() -> String {
    let format = scrollback::format::DEFAULT;
    format!("A tree of {}'s transcripts: the same as --root {}:DIR.", format.display_name(), format.name())
}

/// `--root`'s help: the formats scrollback reads, and the default roots here.
fn roots_help() -> String {
    let defaults: Vec<String> = Root::from_env().iter().map(Root::spec).collect();
    let here = if defaults.is_empty() { String::new() } else { format!(" (here: {})", defaults.join(", ")) };
    format!(
        "A tree of transcripts of one format ({}), as FORMAT:DIR; repeat it for several. Given (or with \
         --transcripts), it replaces the defaults: every directory where an agent keeps its transcripts \
         (from its own variables, else HOME: see docs/formats.md) that exists{here}.",
        scrollback::format::names().join(", ")
    )
}

impl RootArgs {
    /// The roots asked for, else the defaults; whether they exist is for the caller to say.
    fn resolve(&self) -> anyhow::Result<Vec<Root>> {
        let mut roots: Vec<Root> = self.transcripts.iter().map(Root::default_format).collect();
        roots.extend(self.roots.iter().cloned());
        if roots.is_empty() {
            roots = Root::from_env();
        }
        if roots.is_empty() {
            bail!("HOME is not set: pass --data-dir and --root FORMAT:DIR (or --transcripts DIR)");
        }
        Ok(roots)
    }
}

/// Says, once, each root that does not exist; returns those that do.
fn say_missing(roots: &[Root]) -> Vec<&Root> {
    roots
        .iter()
        .filter(|root| {
            let exists = root.exists();
            if !exists {
                eprintln!("scrollback: {} does not exist (yet): nothing of it is indexed", root.spec());
            }
            exists
        })
        .collect()
}

#[derive(Debug, Args)]
struct Dirs {
    #[command(flatten)]
    roots: RootArgs,
    #[command(flatten)]
    data: DataDir,
    /// Keep a hard link to every transcript in the data directory (`vault/`), so that a deleted
    /// transcript's photos are still served: no disk while the transcript exists.
    #[arg(long, default_value = "on", value_parser = ["on", "off"])]
    vault: String,
}

impl Dirs {
    /// How the writer is opened: the vault as asked.
    fn writer_options(&self, holder: &'static str) -> WriterOptions {
        WriterOptions {
            vault_off: (self.vault == "off").then(|| "turned off with --vault off".to_owned()),
            holder: Some(holder),
        }
    }
}

/// How the transcripts are followed, by `serve` or by an `mcp` server that writes.
#[derive(Debug, Args)]
struct Follow {
    /// Seconds between full rescans (they make the index right even when file events are lost).
    #[arg(long, default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..))]
    rescan_secs: u64,
    /// Poll the tree instead of using file events (network file systems, WSL).
    #[arg(long)]
    poll: bool,
    /// Milliseconds between polls, with --poll.
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u64).range(10..))]
    poll_ms: u64,
}

impl Follow {
    /// The rescan interval, and the poll interval with --poll.
    fn intervals(&self) -> (Duration, Option<Duration>) {
        (Duration::from_secs(self.rescan_secs), self.poll.then(|| Duration::from_millis(self.poll_ms)))
    }
}

/// The pricing table usage is priced by.
#[derive(Debug, Args, Clone)]
struct PricesArg {
    /// A pricing table (JSON, the shape of the shipped prices.json) whose models replace or add to
    /// the shipped ones.
    #[arg(long = "prices", env = "SCROLLBACK_PRICES")]
    prices_file: Option<PathBuf>,
}

impl PricesArg {
    fn load(&self) -> anyhow::Result<scrollback::read::prices::Prices> {
        Ok(match &self.prices_file {
            Some(path) => scrollback::read::prices::Prices::with_file(path).map_err(|e| Usage(e.to_string()))?,
            None => scrollback::read::prices::Prices::shipped(),
        })
    }
}

#[derive(Debug, Args)]
struct DataDir {
    /// Where the index lives [default: $XDG_DATA_HOME/scrollback, else ~/.local/share/scrollback].
    #[arg(long, env = "SCROLLBACK_DATA_DIR")]
    data_dir: Option<PathBuf>,
}

impl DataDir {
    fn resolve(&self) -> anyhow::Result<PathBuf> {
        if let Some(dir) = &self.data_dir {
            return Ok(dir.clone());
        }
        if let Some(xdg) = std::env::var_os("XDG_DATA_HOME").filter(|v| !v.is_empty()) {
            return Ok(PathBuf::from(xdg).join("scrollback"));
        }
        Ok(home()?.join(".local/share/scrollback"))
    }
}

fn home() -> anyhow::Result<PathBuf> {
    std::env::var_os("HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .context("HOME is not set: pass --data-dir and --root FORMAT:DIR")
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "scrollback=warn".into()),
        )
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .init();
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            if e.chain().any(|c| {
                c.downcast_ref::<std::io::Error>().is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
            }) {
                return ExitCode::SUCCESS;
            }
            eprintln!("scrollback: {}", message(&e));
            if e.downcast_ref::<Usage>().is_some() {
                return ExitCode::from(2);
            }
            ExitCode::FAILURE
        }
    }
}

fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Command::Serve {
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
        } => {
            let push = match push {
                Some(url) => Some((hub_config(&url)?, hub_host.unwrap_or_else(scrollback::hub::machine_name))),
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
            };
            serve(&dirs, options)
        }
        Command::Mcp { dirs, project, follow } => {
            let (rescan_every, poll) = follow.intervals();
            mcp(&dirs, project.as_deref(), rescan_every, poll)
        }
        Command::DemoEngine { transcripts, project, reply_delay_ms } => {
            let engine = scrollback::demo::engine::DemoEngine {
                transcripts,
                project,
                reply_delay: Duration::from_millis(reply_delay_ms),
            };
            Ok(engine.run(std::io::stdin().lock(), std::io::stdout().lock())?)
        }
        Command::Search { query, data, session, agent, limit } => {
            let scope = history::Scope { session: session.as_deref(), agent: agent.as_deref(), ..Default::default() };
            search(&query, &data.resolve()?, scope, limit)
        }
        Command::Index { dirs } => index(&dirs),
        Command::Push { data, postgres, host } => {
            push(&data.resolve()?, &hub_config(&postgres)?, &host.unwrap_or_else(scrollback::hub::machine_name))
        }
        Command::Status { data, roots } => status(&data.resolve()?, &roots.resolve()?),
        Command::Check { data } => check(&data.resolve()?),
        Command::Forget { sessions, project, before, dry_run, yes, data } => {
            forget(&data.resolve()?, sessions, project.as_deref(), before.as_deref(), dry_run, yes)
        }
        Command::Unforget { sessions, data } => {
            let options = WriterOptions { holder: Some("unforget"), ..WriterOptions::default() };
            let data_dir = data.resolve()?;
            let n = scrollback::ops::forget::unforget(&mut open_writer(&data_dir, &options)?, &data_dir, &sessions)?;
            println!("{n} transcript(s) will be indexed again at the next `scrollback index` (or rescan)");
            Ok(())
        }
        Command::Rebuild { dirs } => rebuild(&dirs),
        Command::Export { session, data, format, redact, output } => {
            export(&data.resolve()?, &session, &format, redact, output)
        }
        Command::Usage { data, by, since, until, agent, project, session, json, prices } => {
            let filter = scrollback::read::usage::Filter {
                since: since.as_deref(),
                until: until.as_deref(),
                agent: agent.as_deref(),
                project: project.as_deref(),
                session: session.as_deref(),
                model: None,
            };
            usage(&data.resolve()?, &by, filter, &prices.load()?, json)
        }
        Command::Media { reference, data, output } => media_cmd(&reference, &data.resolve()?, output.as_deref()),
    }
}

/// A progress bar on a terminal, nothing otherwise.
struct Bar(Option<indicatif::ProgressBar>);

impl Progress for Bar {
    fn start(&mut self, total: u64) {
        if std::io::stderr().is_terminal() {
            let bar = indicatif::ProgressBar::new(total);
            bar.set_style(
                indicatif::ProgressStyle::with_template("{bar:40} {bytes}/{total_bytes} {binary_bytes_per_sec} {eta}")
                    .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
            );
            self.0 = Some(bar);
        }
    }

    fn advance(&mut self, bytes: u64) {
        if let Some(bar) = &self.0 {
            bar.inc(bytes);
        }
    }
}

/// Bad usage: reported with exit code 2, like clap's own.
#[derive(Debug)]
struct Usage(String);

impl std::fmt::Display for Usage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Usage {}

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
    /// `--push`: the hub and this host's name on it.
    push: Option<(scrollback::hub::HubConfig, String)>,
}

/// The hub's connection settings from `--postgres`/`--push` (or `SCROLLBACK_POSTGRES`) and the
/// PG* variables. A password in a URL given on the command line is refused: `ps` shows it.
fn hub_config(url: &str) -> anyhow::Result<scrollback::hub::HubConfig> {
    let config = scrollback::hub::HubConfig::new(url).map_err(|e| Usage(e.to_string()))?;
    let from_environment = std::env::var("SCROLLBACK_POSTGRES").is_ok_and(|v| v == url);
    if !url.is_empty() && !from_environment && scrollback::hub::HubConfig::new_without_environment(url)?.has_password()
    {
        return Err(Usage(
            "the hub's URL carries a password, which any user can read on this command line (ps): put it in PGPASSWORD or SCROLLBACK_POSTGRES instead".into(),
        )
        .into());
    }
    Ok(config)
}

/// `scrollback push`: one pass.
fn push(data_dir: &Path, config: &scrollback::hub::HubConfig, host: &str) -> anyhow::Result<()> {
    let mut pusher = scrollback::hub::push::Pusher::connect(config, host, data_dir)
        .with_context(|| format!("pushing to {}", config.describe()))?;
    let started = std::time::Instant::now();
    let p = pusher.push().with_context(|| format!("pushing to {}", config.describe()))?;
    println!(
        "pushed to {} as {host}: {} lines of {} files, {} sessions, {} photos ({:.1} MB), {} forgotten, in {:.2} s{}{}",
        config.describe(),
        p.entries,
        p.files,
        p.sessions,
        p.photos,
        p.photo_bytes as f64 / 1e6,
        p.forgotten,
        started.elapsed().as_secs_f64(),
        if p.resent { " (the index was made anew: its rows were sent again)" } else { "" },
        if p.photos_unreadable > 0 {
            format!("; {} photos' bytes could not be read here (their rows were sent)", p.photos_unreadable)
        } else {
            String::new()
        },
    );
    Ok(())
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

fn serve(dirs: &Dirs, options: ServeOptions) -> anyhow::Result<()> {
    let ServeOptions { listen, demo, rescan_secs, poll_ms, .. } = options;
    let token = options.token.clone();
    scrollback::http::check_listen(&listen, token.as_deref()).map_err(|e| Usage(e.to_string()))?;
    let data_dir = dirs.data.resolve()?;
    let demo_root = if demo { Some(scrollback::demo::write_root(&data_dir)?) } else { None };
    let roots = match &demo_root {
        Some(root) => vec![root.clone()],
        None => dirs.roots.resolve()?,
    };
    if say_missing(&roots).is_empty() {
        eprintln!(
            "scrollback: no transcript root exists yet (try --demo, or --root FORMAT:DIR); each is looked for again at every rescan"
        );
    }
    let mut indexer =
        open_writer(&data_dir, &dirs.writer_options("serve")).map_err(|e| e.or_out_of_space(&data_dir))?;
    let bus = scrollback::events::bus();
    indexer.set_bus(bus.clone());
    let config = TailConfig {
        roots: roots.clone(),
        rescan_every: Duration::from_secs(rescan_secs),
        poll: poll_ms.map(Duration::from_millis),
    };
    // The demo engine writes into the demo's tree.
    let engine = engine(&options, demo_root.as_ref().map(|r| r.dir.as_path()))?;
    // Subscribed before the writer starts, so that its death is never missed.
    let writer_events = bus.subscribe();
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
    };
    // The push starts once the writer has the index open (its schema current).
    let push = match &options.push {
        Some((hub, host)) => Some(scrollback::hub::follow::Follow::start(hub.clone(), host.clone(), &data_dir)?),
        None => None,
    };
    let api_config = scrollback::http::Config { push: push.as_ref().map(|p| p.status()), ..api_config };
    let api = scrollback::http::Api::new(&data_dir, bus, api_config)?;
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    let specs: Vec<String> = roots.iter().filter(|r| r.exists()).map(Root::spec).collect();
    let following = format!("following {} (index in {})", specs.join(", "), data_dir.display());
    runtime.block_on(run_server(api, listen, following, scrollback::ops::writer::writer_died(writer_events)))?;
    if let Some(push) = push {
        push.stop();
    }
    if tail.stop().is_none() {
        bail!("the indexer died; see the log above");
    }
    Ok(())
}

/// `scrollback mcp`: the MCP server on standard input and output until the client closes it (or
/// SIGINT/SIGTERM), with the election that has one of several such servers follow the transcripts.
fn mcp(dirs: &Dirs, project: Option<&Path>, rescan_every: Duration, poll: Option<Duration>) -> anyhow::Result<()> {
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
    let roots = dirs.roots.resolve()?;
    let config = TailConfig { roots, rescan_every, poll };
    let follower = scrollback::ops::election::Follower::start(&data_dir, dirs.writer_options("mcp"), config)
        .context("starting the writer election")?;
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    let tools = scrollback::mcp::Tools::new(scrollback::mcp::Source::new(&data_dir, project));
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
    follower.stop();
    // stdin's reader thread may still be blocked on a read: do not wait for it.
    runtime.shutdown_timeout(Duration::from_millis(100));
    served
}

/// Serves until SIGINT or SIGTERM, or until the writer dies (`writer_died` resolves): a supervisor
/// restarts a process that exits with an error, and a server whose index no longer follows the
/// transcripts must not go on answering as if it did.
async fn run_server(
    api: scrollback::http::Api,
    listen: SocketAddr,
    following: String,
    writer_died: impl std::future::Future<Output = String>,
) -> anyhow::Result<()> {
    let listener = tokio::net::TcpListener::bind(listen).await.with_context(|| format!("listening on {listen}"))?;
    let addr = listener.local_addr()?;
    eprintln!("scrollback: serving http://{addr}/api/sessions, {following}");
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(scrollback::http::serve(api, listener, async {
        let _ = stopped.await;
    }));
    let died = tokio::select! {
        signal = shutdown_signal() => {
            signal?;
            None
        }
        error = writer_died => Some(error),
    };
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

/// An error and its causes, each said once: a cause whose words its error already ends with (an
/// I/O error shows its OS message, and has it as its source too) is not repeated.
fn message(e: &anyhow::Error) -> String {
    let mut out = String::new();
    for cause in e.chain() {
        let text = cause.to_string();
        if out.ends_with(&text) {
            continue;
        }
        if !out.is_empty() {
            out.push_str(": ");
        }
        out.push_str(&text);
    }
    out
}

/// How long `serve` waits for in-flight requests once asked to stop.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(3);

fn status(data_dir: &Path, roots: &[Root]) -> anyhow::Result<()> {
    let conn = index::open(data_dir)?;
    let status = scrollback::ops::status::of_data_dir(&conn, data_dir)?;
    let pending = status.sends_pending;
    let s = status.index.context("the index could not be read")?;
    let mb = |b: u64| b as f64 / 1e6;
    let mut out = std::io::stdout().lock();
    writeln!(out, "data directory  {}", data_dir.display())?;
    writeln!(out, "transcripts     {} followed, {} gone (their history kept)", s.transcripts_live, s.transcripts_gone)?;
    for root in roots {
        let state = if root.exists() { "exists" } else { "does not exist" };
        writeln!(out, "root            {} ({state})", root.spec())?;
    }
    for (agent, sessions) in &s.agents {
        writeln!(out, "agent           {agent}: {sessions} sessions")?;
    }
    writeln!(out, "sessions        {}", s.sessions)?;
    writeln!(out, "entries         {} ({} invalid lines)", s.entries, s.invalid_lines)?;
    writeln!(out, "photos          {}", s.photos)?;
    writeln!(out, "index           {:.1} MB", mb(s.index_bytes))?;
    match s.free_bytes {
        Some(free) => writeln!(out, "free space      {:.1} MB", mb(free))?,
        None => writeln!(out, "free space      unknown")?,
    }
    writeln!(out, "sends pending   {pending}")?;
    match &s.vault.off {
        None => writeln!(
            out,
            "vault           on: {} links; {:.1} MB of deleted transcripts only the vault still holds",
            s.vault.links,
            mb(s.vault.only_in_vault_bytes)
        )?,
        Some(why) => writeln!(out, "vault           off: {why}")?,
    }
    for broken in &s.vault.broken {
        writeln!(out, "vault problem   {broken}")?;
    }
    Ok(())
}

fn search(query: &str, data_dir: &Path, scope: history::Scope<'_>, limit: u32) -> anyhow::Result<()> {
    let conn = index::open(data_dir)?;
    let store: &dyn Store = &conn;
    let hits = store.search(query, scope, 0, limit).map(|page| page.hits).map_err(|e| match e {
        scrollback::Error::BadQuery(why) => anyhow::Error::new(Usage(why)),
        e => e.into(),
    })?;
    let mut out = std::io::stdout().lock();
    for hit in &hits {
        let snippet = hit.snippet.marked("[", "]");
        writeln!(
            out,
            "{} {} line {} {}\n    {}",
            hit.timestamp.as_deref().unwrap_or("-"),
            hit.session_id,
            hit.line,
            hit.entry_uuid.as_deref().unwrap_or("-"),
            snippet.replace('\n', " ")
        )?;
    }
    if hits.is_empty() {
        eprintln!("no hits for {query:?}");
    }
    Ok(())
}

/// `scrollback export`: written to a temporary file beside the target and renamed into place once
/// every photo was checked (a failure leaves nothing behind), or to standard output.
fn export(data_dir: &Path, session: &str, format: &str, redact: bool, output: Option<PathBuf>) -> anyhow::Result<()> {
    use scrollback::read::export::Kind;
    let kind = Kind::parse(format).map_err(|e| Usage(e.to_string()))?;
    let redactor = redact.then(scrollback::read::redact::Redactor::shipped).transpose()?;
    let conn = index::open(data_dir)?;
    let store: &dyn Store = &conn;
    let target = output.unwrap_or_else(|| PathBuf::from(format!("{session}.{}", kind.extension())));
    let written = if target.as_os_str() == "-" {
        let photos = PathBuf::from(format!("{session}_files"));
        let name = photos.display().to_string();
        let mut out = std::io::BufWriter::new(std::io::stdout().lock());
        store.export(session, kind, redactor.as_ref(), &mut out, Some((&photos, &name)))?
    } else {
        let dir = target.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
        let stem = target.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| session.to_owned());
        let photos_name = format!("{stem}_files");
        let photos = dir.join(&photos_name);
        let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
        let written = {
            let mut out = std::io::BufWriter::new(tmp.as_file_mut());
            store.export(session, kind, redactor.as_ref(), &mut out, Some((&photos, &photos_name)))?
        };
        if written.is_some() {
            tmp.as_file().sync_all()?;
            tmp.persist(&target).map_err(|e| e.error)?;
        }
        written
    };
    let Some(written) = written else {
        return Err(anyhow::Error::new(Usage(format!("no session {session:?} in the index"))));
    };
    let redacted: u64 = written.redacted.values().sum();
    eprintln!(
        "exported {} entries and {} photos of {session}{}{}",
        written.entries,
        written.photos,
        if target.as_os_str() == "-" { String::new() } else { format!(" to {}", target.display()) },
        if redact { format!("; {redacted} secrets redacted") } else { String::new() }
    );
    Ok(())
}

/// `scrollback usage`: the report as a table on a terminal (or JSON).
fn usage(
    data_dir: &Path,
    by: &str,
    filter: scrollback::read::usage::Filter<'_>,
    prices: &scrollback::read::prices::Prices,
    json: bool,
) -> anyhow::Result<()> {
    use scrollback::read::usage::{By, Row};
    let conn = index::open(data_dir)?;
    let store: &dyn Store = &conn;
    let by = By::parse(by).map_err(|e| Usage(e.to_string()))?;
    let report = store.usage(by, filter, prices).map_err(|e| match e {
        scrollback::Error::BadQuery(why) => anyhow::Error::new(Usage(why)),
        e => e.into(),
    })?;
    let mut out = std::io::stdout().lock();
    if json {
        serde_json::to_writer_pretty(&mut out, &report)?;
        writeln!(out)?;
        return Ok(());
    }
    let name = By::ALL.iter().find(|(_, b)| *b == by).map_or("group", |(n, _)| n);
    let head = [name, "responses", "input", "output", "cache write", "cache read", "total", "cost (USD)"];
    let cells = |row: &Row, label: String| -> Vec<String> {
        let cost = match (row.unpriced_responses, row.responses) {
            (0, _) => format!("{:.2}", row.cost),
            (u, n) if u == n => "unpriced".to_owned(),
            (u, _) => format!("{:.2} +{u} unpriced", row.cost),
        };
        vec![
            label,
            grouped(row.responses),
            grouped(row.input_tokens),
            grouped(row.output_tokens),
            grouped(row.cache_write_tokens),
            grouped(row.cache_read_tokens),
            grouped(row.total_tokens),
            cost,
        ]
    };
    let mut table: Vec<Vec<String>> = vec![head.iter().map(|h| h.to_string()).collect()];
    for row in &report.rows {
        let label = match (by, &row.key) {
            (By::Session, Some(id)) => match &row.title {
                Some(title) => {
                    format!("{} {}", id.chars().take(8).collect::<String>(), title.chars().take(40).collect::<String>())
                }
                None => id.clone(),
            },
            (_, Some(key)) => key.clone(),
            (_, None) => "(none)".to_owned(),
        };
        table.push(cells(row, label.replace(['\n', '\r', '\t'], " ")));
    }
    table.push(cells(&report.total, "total".to_owned()));
    let widths: Vec<usize> =
        (0..head.len()).map(|c| table.iter().map(|r| r[c].chars().count()).max().unwrap_or(0)).collect();
    for (i, row) in table.iter().enumerate() {
        if i == table.len() - 1 {
            writeln!(out, "{}", widths.iter().map(|w| "-".repeat(*w)).collect::<Vec<_>>().join("  "))?;
        }
        let line: Vec<String> = row
            .iter()
            .zip(&widths)
            .enumerate()
            .map(|(c, (cell, w))| if c == 0 { format!("{cell:<w$}") } else { format!("{cell:>w$}") })
            .collect();
        writeln!(out, "{}", line.join("  ").trim_end())?;
    }
    for (model, n) in &report.unpriced_models {
        writeln!(out, "unpriced: {model} ({n} responses): no price in the table; pass --prices FILE")?;
    }
    writeln!(out, "prices: {}, taken {}", report.prices.source, report.prices.taken)?;
    Ok(())
}

/// `n` with a comma between each group of three digits.
fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Resolves on SIGINT or SIGTERM.
async fn shutdown_signal() -> anyhow::Result<()> {
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
    tokio::select! {
        result = tokio::signal::ctrl_c() => result?,
        _ = term.recv() => {}
    }
    Ok(())
}

/// Catches up on every root of `roots` that exists, saying those that do not.
fn catch_up_all(indexer: &mut scrollback::Indexer, roots: &[Root]) -> anyhow::Result<scrollback::Summary> {
    indexer.set_roots(roots)?;
    let mut total = scrollback::Summary::default();
    for root in say_missing(roots) {
        let mut bar = Bar(None);
        let s = indexer.catch_up(&root.dir, &mut bar)?;
        if let Some(bar) = bar.0 {
            bar.finish_and_clear();
        }
        total.add(&s);
        total.seconds += s.seconds;
    }
    Ok(total)
}

fn index(dirs: &Dirs) -> anyhow::Result<()> {
    let roots = dirs.roots.resolve()?;
    let data_dir = dirs.data.resolve()?;
    let mut indexer =
        open_writer(&data_dir, &dirs.writer_options("index")).map_err(|e| e.or_out_of_space(&data_dir))?;
    let s = catch_up_all(&mut indexer, &roots)?;
    println!(
        "indexed {} files, {} lines, {} photos, {} invalid lines, {:.1} MB in {:.2} s ({} re-indexed, {} gone, {} failed)",
        s.files,
        s.lines,
        s.media,
        s.invalid,
        s.bytes as f64 / 1e6,
        s.seconds,
        s.reindexed,
        s.gone,
        s.failed
    );
    if s.failed > 0 {
        bail!("{} transcript(s) could not be indexed (the log above says why); the others were", s.failed);
    }
    Ok(())
}

fn forget(
    data_dir: &Path,
    mut sessions: Vec<String>,
    project: Option<&str>,
    before: Option<&str>,
    dry_run: bool,
    yes: bool,
) -> anyhow::Result<()> {
    if sessions.is_empty() && project.is_none() && before.is_none() {
        return Err(Usage("name the sessions to forget, or --project DIR, or --before DATE".into()).into());
    }
    if let Some(before) = before {
        history::time_bound(before, false).map_err(|e| Usage(format!("--before: {e}")))?;
    }
    // The writer first: it holds the data directory, so nothing indexes while sessions go.
    let mut indexer = open_writer(data_dir, &WriterOptions { holder: Some("forget"), ..WriterOptions::default() })?;
    let conn = index::open(data_dir)?;
    sessions.extend(scrollback::ops::forget::select_sessions(&conn, project, before)?);
    sessions.sort();
    sessions.dedup();
    if sessions.len() > 1 && !dry_run && !yes && !confirm_forget(&conn as &dyn Store, &sessions)? {
        return Ok(());
    }
    drop(conn);
    // The record remembers what was forgotten, so it is made if there is none yet.
    let accept = scrollback::accept::AcceptStore::open(data_dir)?;
    let mb = |b: u64| b as f64 / 1e6;
    let verb = if dry_run { "would forget" } else { "forgot" };
    for forgotten in scrollback::ops::forget::forget(&mut indexer, &accept, &sessions, dry_run)? {
        println!(
            "{verb} {}: {} entries, {} payload rows, {} transcript(s), {} sent message(s); frees about {:.1} MB",
            forgotten.session_id,
            forgotten.entries,
            forgotten.media,
            forgotten.files,
            forgotten.messages,
            mb(forgotten.freed_bytes())
        );
    }
    if sessions.is_empty() {
        println!("no session matches");
    }
    Ok(())
}

/// Lists the sessions `forget` would take, and asks a terminal whether to go on. Without a terminal
/// on standard input it does not guess: it says to pass `--yes`, and exits 2.
fn confirm_forget(store: &dyn Store, sessions: &[String]) -> anyhow::Result<bool> {
    let mut err = std::io::stderr().lock();
    writeln!(err, "scrollback: these {} sessions would be forgotten:", sessions.len())?;
    for id in sessions {
        match store.session(id)? {
            Some(s) => {
                let last = s.last_timestamp.as_deref().unwrap_or("-");
                let title: String = s.title.unwrap_or_default().chars().take(60).collect();
                writeln!(err, "  {id}  last {last}  {} entries  {title}", s.entries)?
            }
            None => writeln!(err, "  {id}  (not in the index)")?,
        }
    }
    if !std::io::stdin().is_terminal() {
        return Err(Usage(format!(
            "{} sessions match; run again with --yes to forget them (or --dry-run to see what goes)",
            sessions.len()
        ))
        .into());
    }
    write!(err, "Forget these {} sessions? [y/N] ", sessions.len())?;
    err.flush()?;
    let mut answer = String::new();
    std::io::stdin().read_line(&mut answer)?;
    let go = matches!(answer.trim(), "y" | "Y" | "yes" | "YES" | "Yes");
    if !go {
        writeln!(err, "scrollback: nothing forgotten")?;
    }
    Ok(go)
}

fn check(data_dir: &Path) -> anyhow::Result<()> {
    let conn = index::open(data_dir)?;
    let problems = scrollback::db::integrity_problems(&conn);
    let path = data_dir.join(scrollback::db::INDEX_FILE);
    if problems.is_empty() {
        let counts = index::table_counts(&conn)?;
        let counts: Vec<String> = counts.iter().map(|(table, n)| format!("{n} {table}")).collect();
        println!("{}: ok ({})", path.display(), counts.join(", "));
        return Ok(());
    }
    println!("{}: damaged; SQLite's integrity check says:", path.display());
    for problem in problems.iter().take(20) {
        println!("  {problem}");
    }
    if problems.len() > 20 {
        println!("  ... and {} more", problems.len() - 20);
    }
    bail!("the index is damaged: stop `scrollback serve`, then run `scrollback rebuild` (the old file is kept)")
}

fn rebuild(dirs: &Dirs) -> anyhow::Result<()> {
    let roots = dirs.roots.resolve()?;
    let data_dir = dirs.data.resolve()?;
    let (mut indexer, old) = scrollback::ops::writer::open_rebuilt(&data_dir)?;
    eprintln!("scrollback: the old index is kept as {}", old.display());
    let s = catch_up_all(&mut indexer, &roots)?;
    let carried = indexer.carry_over(&old)?;
    println!(
        "rebuilt: {} transcripts indexed ({} lines, {} failed); {} gone transcripts carried over from the old index ({} entries, {} payloads)",
        s.files, s.lines, s.failed, carried.files, carried.entries, carried.media
    );
    for what in &carried.unreadable {
        eprintln!("scrollback: could not read from the old index: {what}");
    }
    if s.failed > 0 || !carried.unreadable.is_empty() {
        bail!("the rebuild is done, but not all of it could be read (see above); the old index is kept");
    }
    Ok(())
}

fn media_cmd(reference: &str, data_dir: &Path, output: Option<&Path>) -> anyhow::Result<()> {
    let conn = index::open(data_dir)?;
    let name = MediaName::parse(reference).map_err(|e| Usage(e.to_string()))?;
    let record = (&conn as &dyn Store).media(&name).map_err(|e| match e {
        scrollback::Error::NotFound(what) => anyhow::anyhow!(
            "no media for {what}: the ref is unknown, or its line is not indexed yet (run `scrollback index`)"
        ),
        e => e.into(),
    })?;
    drop(conn);
    match output {
        Some(path) => {
            media::save(&record, path)?;
        }
        None => {
            let mut stdout = std::io::stdout().lock();
            if stdout.is_terminal() {
                bail!(
                    "refusing to write {} bytes of {} to a terminal: use -o FILE or redirect",
                    record.decoded_length,
                    record.media_type.as_deref().unwrap_or("media")
                );
            }
            // Verify first, so that standard output never gets a byte of a payload that changed.
            media::open(&record)?.verify()?;
            media::copy_to(&record, media::open(&record)?, &mut stdout, Path::new("standard output"))?;
        }
    }
    Ok(())
}
