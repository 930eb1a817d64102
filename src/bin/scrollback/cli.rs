//! The command line as clap types: every command, its flags and their help, and what a flag turns
//! into (the roots followed, the data directory, the pricing table, the hub's settings). Bad usage
//! is a [`Usage`] error, which `main` reports with exit code 2. It runs no command.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, bail};
use clap::{Args, Parser, Subcommand};
use scrollback::Root;
use scrollback::ops::roots::Origin;
use scrollback::ops::writer::WriterOptions;

/// An embedded, SQLite-indexed store for AI chat transcripts.
#[derive(Debug, Parser)]
#[command(version, about)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) command: Command,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Follow the transcript tree live and serve history, photos and search over HTTP.
    Serve(ServeArgs),
    /// Send this host's index to a team's hub (PostgreSQL): sessions, lines, search text, photos
    /// (each once, by blake3) and the usage ledger; only what is new since the last push.
    Push {
        #[command(flatten)]
        data: DataDir,
        /// The hub: a postgres:// URL or key=value string. What it leaves out comes from PGHOST,
        /// PGPORT, PGUSER, PGPASSWORD, PGDATABASE, PGSSLMODE and PGSSLROOTCERT, as for psql (TLS:
        /// sslmode=verify-full&sslrootcert=CA.pem, see docs/hub.md); a password belongs in
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
        /// Push as --host NAME even though another data directory pushes as it: its rows on the hub
        /// are replaced by this index's, and it is refused the name from then on.
        #[arg(long, requires = "host")]
        take_over: bool,
        #[command(flatten)]
        timeout: HubTimeout,
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
        #[command(flatten)]
        mask: MaskArg,
        /// Read a team's hub (PostgreSQL) instead of this machine's index: every host's sessions,
        /// read-only, as `serve --postgres` does (a postgres:// URL or key=value string, or none to
        /// take it all from the PG* variables). It follows no transcripts.
        #[arg(long = "postgres", value_name = "URL", num_args = 0..=1, default_missing_value = "")]
        postgres: Option<String>,
        #[command(flatten)]
        hub_timeout: HubTimeout,
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
    /// The sessions, newest first: id, last activity, agent, project, entries, photos and title,
    /// with the titles a person gave them.
    Sessions {
        #[command(flatten)]
        data: DataDir,
        /// Only this project's (its working directory).
        #[arg(long)]
        project: Option<String>,
        /// Only this agent's.
        #[arg(long, value_parser = clap::builder::PossibleValuesParser::new(scrollback::format::names()))]
        agent: Option<String>,
        /// Only sessions an entry or the title of which matches this query (the search's language).
        #[arg(long)]
        query: Option<String>,
        /// Only sessions with an entry from this date (YYYY-MM-DD, UTC) or RFC 3339 time on.
        #[arg(long)]
        since: Option<String>,
        /// Only sessions with an entry up to this date (inclusive) or time.
        #[arg(long)]
        until: Option<String>,
        /// At most this many.
        #[arg(long, default_value_t = 50, value_parser = clap::value_parser!(u32).range(1..=500))]
        limit: u32,
        /// Print the list as JSON (the same as GET /api/sessions).
        #[arg(long)]
        json: bool,
    },
    /// Full-text search over the index: sessions with hits, best first, each with its best hit.
    Search {
        /// What to look for: words (punctuation is fine: gpt-5, C++), "a phrase", prefix*,
        /// -excluded, a OR b, and fields agent: project: role: tool: session: after: before:
        /// (docs/search.md).
        query: String,
        #[command(flatten)]
        data: DataDir,
        /// Only this session: its id, or any unique prefix of it (at least 4 characters).
        #[arg(long)]
        session: Option<String>,
        /// Only this agent's entries.
        #[arg(long, value_parser = clap::builder::PossibleValuesParser::new(scrollback::format::names()))]
        agent: Option<String>,
        /// Only this project's sessions (its working directory, as the sessions list names it).
        #[arg(long)]
        project: Option<String>,
        /// Only what the person wrote (user) or what the agent answered (assistant).
        #[arg(long, value_parser = clap::builder::PossibleValuesParser::new(scrollback::read::request::ROLES))]
        role: Option<String>,
        /// Only entries from this date (YYYY-MM-DD, UTC) or RFC 3339 time on.
        #[arg(long)]
        since: Option<String>,
        /// Only entries up to this date (inclusive) or time.
        #[arg(long)]
        until: Option<String>,
        /// Best first, newest first, or in the conversations' order.
        #[arg(long, default_value = "relevance", value_parser = clap::builder::PossibleValuesParser::new(["relevance", "recent", "conversation"]))]
        sort: String,
        /// Every matching entry, instead of one line per session.
        #[arg(long)]
        per_entry: bool,
        /// At most this many sessions (or hits, with --per-entry).
        #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(u32).range(1..=500))]
        limit: u32,
        /// Print the results as JSON (the same as GET /api/search).
        #[arg(long)]
        json: bool,
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
        /// Only this session's: its id, or any unique prefix of it (at least 4 characters).
        #[arg(long)]
        session: Option<String>,
        /// Print the report as JSON (the same as GET /api/usage).
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        prices: PricesArg,
    },
    /// The overview: sessions, messages, tokens and cost per day, activity by hour, the top
    /// projects, agents and models, tool use with failure rates, response times, recent edits,
    /// and the longest and costliest sessions.
    Stats {
        #[command(flatten)]
        data: DataDir,
        /// From this day (YYYY-MM-DD, in the time zone --tz) on.
        #[arg(long)]
        since: Option<String>,
        /// Up to this day (inclusive).
        #[arg(long)]
        until: Option<String>,
        /// The time zone's offset from UTC, in whole hours (-12 to 14): days and hours are its.
        #[arg(long, default_value_t = 0, allow_hyphen_values = true, value_parser = clap::value_parser!(i32).range(-12..=14))]
        tz: i32,
        /// Only this agent's sessions.
        #[arg(long, value_parser = clap::builder::PossibleValuesParser::new(scrollback::format::names()))]
        agent: Option<String>,
        /// Only this project's (its working directory, as the sessions list names it).
        #[arg(long)]
        project: Option<String>,
        /// Print the figures as JSON (the same as GET /api/stats).
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        prices: PricesArg,
    },
    /// Take a session away: one HTML file that opens offline (photos inline), Markdown with its
    /// photos in a folder beside it, or the transcript's own lines (JSONL), byte for byte.
    Export {
        /// The session: its id, or any unique prefix of it (at least 4 characters).
        session: String,
        #[command(flatten)]
        data: DataDir,
        /// What to write: html, md (Markdown; `markdown` is taken too) or jsonl.
        #[arg(long, default_value = "html", value_parser = clap::builder::PossibleValuesParser::new([
            clap::builder::PossibleValue::new("html"),
            clap::builder::PossibleValue::new("md").alias("markdown"),
            clap::builder::PossibleValue::new("jsonl"),
        ]))]
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
        /// The sessions to forget, each by its id, or any unique prefix of it (at least 4 characters).
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
        /// The sessions, each by its id, or any unique prefix of it (at least 4 characters).
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

// `serve`'s flags. (No doc comment: the command's help is its variant's, `Command::Serve`.)
#[derive(Debug, Args)]
pub(crate) struct ServeArgs {
    #[command(flatten)]
    pub(crate) dirs: Dirs,
    /// Address to listen on; anything but loopback needs --token.
    #[arg(long, env = "SCROLLBACK_LISTEN", default_value = scrollback::http::DEFAULT_LISTEN)]
    pub(crate) listen: SocketAddr,
    /// Require this token on every /api route (Authorization: Bearer, or the scrollback_token cookie).
    #[arg(long, env = "SCROLLBACK_TOKEN", hide_env_values = true)]
    pub(crate) token: Option<String>,
    /// Also answer requests to this host name (besides localhost, 127.0.0.1 and, with --token,
    /// IP addresses); repeat for more. Any other Host is refused (DNS rebinding).
    #[arg(long = "allow-host", value_name = "NAME")]
    pub(crate) allow_hosts: Vec<String>,
    /// Serve a small sample transcript tree (with real photos) from a data directory of its own,
    /// `demo/` in the data directory: its index, sends and vault stay there, apart from yours.
    #[arg(long)]
    pub(crate) demo: bool,
    #[command(flatten)]
    pub(crate) follow: Follow,
    /// Run this for each accepted message, the message as JSON on its standard input (a program
    /// and its arguments, split on spaces; no shell). With --demo: the built-in demo engine.
    #[arg(long, env = "SCROLLBACK_ENGINE")]
    pub(crate) engine: Option<String>,
    /// Seconds an engine run may take before it is killed and recorded as failed.
    #[arg(long, default_value_t = 600, value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) engine_timeout_secs: u64,
    /// Seconds a connection may sit idle between requests before it is closed (the events
    /// socket is pinged every half of it, and closed when its peer stops answering).
    #[arg(long, default_value_t = scrollback::http::IDLE_TIMEOUT.as_secs(), value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) idle_secs: u64,
    /// The most connections open at once (events sockets included); more wait until one closes.
    /// Lowered to what the descriptor limit (`ulimit -n`) leaves room for.
    #[arg(long, default_value_t = scrollback::http::MAX_CONNECTIONS, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    pub(crate) max_connections: usize,
    #[command(flatten)]
    pub(crate) prices: PricesArg,
    /// Also push the index to a team's hub (PostgreSQL) as it changes: a postgres:// URL or
    /// key=value string, or none to take it all from the PG* variables (see `push`).
    #[arg(long, value_name = "URL", num_args = 0..=1, default_missing_value = "")]
    pub(crate) push: Option<String>,
    /// This machine's name on the hub [default: the machine's host name].
    #[arg(long = "host", value_name = "NAME", requires = "push")]
    pub(crate) hub_host: Option<String>,
    /// Push as --host NAME even though another data directory pushes as it (see `push`).
    #[arg(long, requires = "hub_host")]
    pub(crate) take_over: bool,
    /// Serve a team's hub (PostgreSQL) instead of this machine's index: every host's sessions,
    /// their history, photos, search and usage, read-only (a role with SELECT alone is enough:
    /// docs/hub.md). A postgres:// URL or key=value string, or none to take it all from the PG*
    /// variables (see `push`). It follows no transcripts; the overview and JSONL exports are not
    /// served from a hub.
    #[arg(long = "postgres", value_name = "URL", num_args = 0..=1, default_missing_value = "",
          conflicts_with_all = ["push", "demo", "engine"])]
    pub(crate) postgres: Option<String>,
    #[command(flatten)]
    pub(crate) hub_timeout: HubTimeout,
    #[command(flatten)]
    pub(crate) mask: MaskArg,
}

/// How long the hub may take to answer.
#[derive(Debug, Clone, Copy, clap::Args)]
pub(crate) struct HubTimeout {
    /// Seconds the hub may take to answer a statement: past them the connection is dropped and the
    /// push fails (`serve --push` tries again). The hub is asked to end a statement running longer
    /// and a session idle longer, which frees the host's push lock.
    #[arg(long = "hub-timeout", value_name = "SECS", env = "SCROLLBACK_HUB_TIMEOUT", default_value_t = scrollback::hub::TIMEOUT.as_secs(), value_parser = clap::builder::RangedU64ValueParser::<u64>::new().range(1..=86_400))]
    pub(crate) secs: u64,
}

/// Whether secrets are masked in what is shown.
#[derive(Debug, Args)]
pub(crate) struct MaskArg {
    /// Mask secrets (API keys, tokens, private keys, URL passwords: the rules of `export --redact`)
    /// as [REDACTED:rule] in the text of sessions, history, search snippets and MCP answers. The
    /// transcripts and the index keep them.
    #[arg(long = "mask-secrets", env = "SCROLLBACK_MASK_SECRETS")]
    pub(crate) mask_secrets: bool,
}

/// Which transcript trees are followed.
#[derive(Debug, Args)]
pub(crate) struct RootArgs {
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
         --transcripts), it replaces the defaults, and `index`, `rebuild` and `serve` remember it in the \
         data directory (roots.json) for the commands after them. Else: the roots remembered, else every \
         directory where an agent keeps its transcripts (from its own variables, else HOME: see \
         docs/formats.md) that exists{here}.",
        scrollback::format::names().join(", ")
    )
}

impl RootArgs {
    /// The roots asked for (`--root`, `--transcripts`), else those `data_dir` remembers, else the
    /// defaults; and where they came from. Whether they exist is for the caller to say.
    pub(crate) fn resolve(&self, data_dir: &Path) -> anyhow::Result<(Vec<Root>, Origin)> {
        let mut roots: Vec<Root> = self.transcripts.iter().map(Root::default_format).collect();
        roots.extend(self.roots.iter().cloned());
        if !roots.is_empty() {
            return Ok((roots, Origin::Given));
        }
        if let Some(roots) = scrollback::ops::roots::remembered(data_dir)? {
            return Ok((roots, Origin::Remembered(data_dir.join(scrollback::ops::roots::ROOTS_FILE))));
        }
        let roots = Root::from_env();
        if roots.is_empty() {
            bail!("HOME is not set: pass --data-dir and --root FORMAT:DIR (or --transcripts DIR)");
        }
        Ok((roots, Origin::Defaults))
    }
}

/// For a command that writes the index (`index`, `rebuild`, `serve`): roots given on its command
/// line are remembered in the data directory, for the commands after it. Says where they came from.
pub(crate) fn remember_roots(data_dir: &Path, roots: &[Root], origin: &Origin) -> anyhow::Result<String> {
    let specs: Vec<String> = roots.iter().map(Root::spec).collect();
    let told = match origin {
        Origin::Given => {
            scrollback::ops::roots::remember(data_dir, roots)?;
            format!(
                "given; remembered in {} for the next command",
                data_dir.join(scrollback::ops::roots::ROOTS_FILE).display()
            )
        }
        other => other.to_string(),
    };
    Ok(format!("{} ({told})", specs.join(", ")))
}

/// For a command that writes the index: the roots it reads and where they came from. The defaults
/// (every agent's own places, which most people lack for most agents) are said by those that exist.
pub(crate) fn say_roots(data_dir: &Path, roots: &[Root], origin: &Origin) -> anyhow::Result<()> {
    let told = remember_roots(data_dir, roots, origin)?;
    if matches!(origin, Origin::Defaults) {
        let there: Vec<String> = roots.iter().filter(|r| r.exists()).map(Root::spec).collect();
        let there = if there.is_empty() { "none of them there".to_owned() } else { there.join(", ") };
        eprintln!("scrollback: roots: the defaults, each agent's own places: {}", crate::visible::one_line(&there));
    } else {
        eprintln!("scrollback: roots {}", crate::visible::one_line(&told));
    }
    Ok(())
}

/// Says, once, the roots that do not exist: each by its name, or for the defaults the agents that
/// have none, in one line; returns those that do.
pub(crate) fn say_missing<'r>(roots: &'r [Root], origin: &Origin) -> Vec<&'r Root> {
    let (there, missing): (Vec<&Root>, Vec<&Root>) = roots.iter().partition(|r| r.exists());
    if matches!(origin, Origin::Defaults) {
        let mut agents: Vec<&str> = Vec::new();
        for root in &missing {
            let agent = root.format.display_name();
            if !agents.contains(&agent) && !there.iter().any(|t| t.format.name() == root.format.name()) {
                agents.push(agent);
            }
        }
        if !agents.is_empty() {
            eprintln!(
                "scrollback: no transcripts yet for {} (`scrollback status` lists where it looked)",
                agents.join(", ")
            );
        }
    } else {
        for root in missing {
            eprintln!(
                "scrollback: {} does not exist (yet): nothing of it is indexed",
                crate::visible::one_line(&root.spec())
            );
        }
    }
    there
}

#[derive(Debug, Args)]
pub(crate) struct Dirs {
    #[command(flatten)]
    pub(crate) roots: RootArgs,
    #[command(flatten)]
    pub(crate) data: DataDir,
    /// Keep a hard link to every transcript in the data directory (`vault/`), so that a deleted
    /// transcript's photos are still served: no disk while the transcript exists.
    #[arg(long, default_value = "on", value_parser = ["on", "off"])]
    vault: String,
}

impl Dirs {
    /// How the writer is opened: the vault as asked.
    pub(crate) fn writer_options(&self, holder: &'static str) -> WriterOptions {
        WriterOptions {
            vault_off: (self.vault == "off").then(|| "turned off with --vault off".to_owned()),
            holder: Some(holder),
        }
    }
}

/// How the transcripts are followed, by `serve` or by an `mcp` server that writes.
#[derive(Debug, Args)]
pub(crate) struct Follow {
    /// Seconds between full rescans (they make the index right even when file events are lost
    /// without a word; lost events that are noticed are caught up on at once).
    #[arg(long, default_value_t = 600, value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) rescan_secs: u64,
    /// Poll the tree instead of using file events (network file systems, WSL).
    #[arg(long)]
    pub(crate) poll: bool,
    /// Milliseconds between polls, with --poll.
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u64).range(10..))]
    pub(crate) poll_ms: u64,
}

impl Follow {
    /// The rescan interval, and the poll interval with --poll.
    pub(crate) fn intervals(&self) -> (Duration, Option<Duration>) {
        (Duration::from_secs(self.rescan_secs), self.poll.then(|| Duration::from_millis(self.poll_ms)))
    }
}

/// The pricing table usage is priced by.
#[derive(Debug, Args, Clone)]
pub(crate) struct PricesArg {
    /// A pricing table (JSON, the shape of the shipped prices.json) whose models replace or add to
    /// the shipped ones.
    #[arg(long = "prices", env = "SCROLLBACK_PRICES")]
    prices_file: Option<PathBuf>,
}

impl PricesArg {
    pub(crate) fn load(&self) -> anyhow::Result<scrollback::read::prices::Prices> {
        Ok(match &self.prices_file {
            Some(path) => scrollback::read::prices::Prices::with_file(path).map_err(|e| Usage(e.to_string()))?,
            None => scrollback::read::prices::Prices::shipped(),
        })
    }
}

#[derive(Debug, Args)]
pub(crate) struct DataDir {
    /// Where the index lives [default: $XDG_DATA_HOME/scrollback, else ~/.local/share/scrollback].
    #[arg(long, env = "SCROLLBACK_DATA_DIR")]
    data_dir: Option<PathBuf>,
}

impl DataDir {
    pub(crate) fn resolve(&self) -> anyhow::Result<PathBuf> {
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

/// Bad usage: reported with exit code 2, like clap's own.
#[derive(Debug)]
pub(crate) struct Usage(pub(crate) String);

impl std::fmt::Display for Usage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Usage {}

/// The hub's connection settings from `--postgres`/`--push` (or `SCROLLBACK_POSTGRES`) and the
/// PG* variables. A password in a URL given on the command line is refused: `ps` shows it.
pub(crate) fn hub_config(url: &str, timeout: HubTimeout) -> anyhow::Result<scrollback::hub::HubConfig> {
    let config = scrollback::hub::HubConfig::new(url)
        .map_err(|e| Usage(e.to_string()))?
        .with_timeout(std::time::Duration::from_secs(timeout.secs));
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

/// A session's name that names none, or several, or is too short: bad usage, said as it is.
pub(crate) fn bad_name(e: scrollback::Error) -> anyhow::Error {
    match e {
        scrollback::Error::BadQuery(why) => Usage(why).into(),
        scrollback::Error::UnknownSession(what) => Usage(format!("no session {what}")).into(),
        e => e.into(),
    }
}
