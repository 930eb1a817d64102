//! The `scrollback` command: flags, logging and exit codes around the library. Nothing else.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, bail};
use clap::{Args, Parser, Subcommand};
use scrollback::tail::{Tail, TailConfig};
use scrollback::{Indexer, Progress, media, store};

/// An embedded, SQLite-indexed store for AI chat transcripts.
#[derive(Debug, Parser)]
#[command(version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Keep the index current: catch up on the transcript tree, then follow it live.
    Serve {
        #[command(flatten)]
        dirs: Dirs,
        /// Seconds between full rescans (they make the index right even when file events are lost).
        #[arg(long, default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..))]
        rescan_secs: u64,
        /// Poll the tree instead of using file events (network file systems, WSL).
        #[arg(long)]
        poll: bool,
        /// Milliseconds between polls, with --poll.
        #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u64).range(10..))]
        poll_ms: u64,
    },
    /// Index the transcript tree once (only new bytes on a second run) and print a summary.
    Index {
        #[command(flatten)]
        dirs: Dirs,
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
}

#[derive(Debug, Args)]
struct Dirs {
    /// The transcript tree [default: $CLAUDE_CONFIG_DIR/projects, else ~/.claude/projects].
    #[arg(long, env = "SCROLLBACK_TRANSCRIPTS")]
    transcripts: Option<PathBuf>,
    #[command(flatten)]
    data: DataDir,
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

impl Dirs {
    fn transcripts(&self) -> anyhow::Result<PathBuf> {
        if let Some(dir) = &self.transcripts {
            return Ok(dir.clone());
        }
        if let Some(config) = std::env::var_os("CLAUDE_CONFIG_DIR").filter(|v| !v.is_empty()) {
            return Ok(PathBuf::from(config).join("projects"));
        }
        Ok(home()?.join(".claude/projects"))
    }
}

fn home() -> anyhow::Result<PathBuf> {
    std::env::var_os("HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .context("HOME is not set: pass --data-dir and --transcripts")
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| "scrollback=warn".into()),
        )
        .with_writer(std::io::stderr)
        .init();
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            if e.chain().any(|c| {
                c.downcast_ref::<std::io::Error>()
                    .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
            }) {
                return ExitCode::SUCCESS;
            }
            eprintln!("scrollback: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Command::Serve {
            dirs,
            rescan_secs,
            poll,
            poll_ms,
        } => serve(&dirs, rescan_secs, poll.then_some(poll_ms)),
        Command::Index { dirs } => index(&dirs),
        Command::Media {
            reference,
            data,
            output,
        } => media_cmd(&reference, &data.resolve()?, output.as_deref()),
    }
}

/// A progress bar on a terminal, nothing otherwise.
struct Bar(Option<indicatif::ProgressBar>);

impl Progress for Bar {
    fn start(&mut self, total: u64) {
        if std::io::stderr().is_terminal() {
            let bar = indicatif::ProgressBar::new(total);
            bar.set_style(
                indicatif::ProgressStyle::with_template(
                    "{bar:40} {bytes}/{total_bytes} {binary_bytes_per_sec} {eta}",
                )
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

fn serve(dirs: &Dirs, rescan_secs: u64, poll_ms: Option<u64>) -> anyhow::Result<()> {
    let root = dirs.transcripts()?;
    let data_dir = dirs.data.resolve()?;
    if !root.is_dir() {
        bail!("transcript directory {} does not exist", root.display());
    }
    let mut indexer = Indexer::open(&data_dir)?;
    let bus = scrollback::events::bus();
    indexer.set_bus(bus.clone());
    let config = TailConfig {
        root: root.clone(),
        rescan_every: Duration::from_secs(rescan_secs),
        poll: poll_ms.map(Duration::from_millis),
    };
    let tail = Tail::start(indexer, config)?;
    eprintln!(
        "scrollback: following {} (index in {})",
        root.display(),
        data_dir.display()
    );
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(shutdown_signal())?;
    eprintln!("scrollback: stopping");
    tail.stop();
    Ok(())
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

fn index(dirs: &Dirs) -> anyhow::Result<()> {
    let root = dirs.transcripts()?;
    let data_dir = dirs.data.resolve()?;
    if !root.is_dir() {
        bail!("transcript directory {} does not exist", root.display());
    }
    let mut indexer = Indexer::open(&data_dir)?;
    let mut bar = Bar(None);
    let s = indexer.catch_up(&root, &mut bar)?;
    if let Some(bar) = bar.0 {
        bar.finish_and_clear();
    }
    println!(
        "indexed {} files, {} lines, {} photos, {} invalid lines, {:.1} MB in {:.2} s ({} re-indexed, {} gone)",
        s.files,
        s.lines,
        s.media,
        s.invalid,
        s.bytes as f64 / 1e6,
        s.seconds,
        s.reindexed,
        s.gone
    );
    Ok(())
}

fn media_cmd(reference: &str, data_dir: &Path, output: Option<&Path>) -> anyhow::Result<()> {
    let conn = store::open(data_dir)?;
    let record = if reference.len() == 64 && reference.bytes().all(|b| b.is_ascii_hexdigit()) {
        store::media_by_hash(&conn, reference)
    } else {
        store::media_by_ref(&conn, &reference.parse()?)
    };
    let record = record.map_err(|e| match e {
        scrollback::Error::NotFound(what) => anyhow::anyhow!(
            "no media for {what}: the ref is unknown, or its line is not indexed yet (run `scrollback index`)"
        ),
        e => e.into(),
    })?;
    drop(conn);
    let fail = |e: std::io::Error| anyhow::Error::from(media::into_error(e, &record));
    match output {
        Some(path) => {
            // Decode next to the target and rename once verified: a mismatch leaves nothing behind.
            let dir = path
                .parent()
                .filter(|p| !p.as_os_str().is_empty())
                .unwrap_or(Path::new("."));
            let mut tmp = tempfile::NamedTempFile::new_in(dir)
                .with_context(|| format!("creating a file in {}", dir.display()))?;
            std::io::copy(&mut media::open(&record)?, tmp.as_file_mut()).map_err(fail)?;
            tmp.persist(path)
                .with_context(|| format!("writing {}", path.display()))?;
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
            std::io::copy(&mut media::open(&record)?, &mut stdout).map_err(fail)?;
            stdout.flush()?;
        }
    }
    Ok(())
}
