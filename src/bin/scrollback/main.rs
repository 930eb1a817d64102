//! The `scrollback` command: flags, logging and exit codes around the library. Nothing else: no
//! SQL, store or watch of its own.
//!
//! Layout: `cli` (every command and flag, as clap types; bad usage), `serve` (the commands that run
//! until stopped: `serve`, `mcp`, `demo-engine`), `start` (what `serve` says as it starts), `read`
//! (the commands that read the index and print: `search`, `export`, `usage`, `stats`, `media`,
//! `status`), `maintain` (`index`, `rebuild`, `check`, `forget`, `unforget`, `push`), `table`
//! (columns of text), `visible` (text printed with its control characters shown, not obeyed),
//! `words` (counts in words: `1 session`, `2 sessions`). This file: the tracing subscriber, the
//! dispatch, and the exit codes (0, 1 on failure, 2 on bad usage; a broken pipe is success).

/// `println!`, but giving back the error where `println!` panics: a reader gone from a pipe
/// (`scrollback index | head -1`) then ends the command, which [`main`] counts as success.
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        writeln!(std::io::stdout().lock(), $($arg)*)
    }};
}

/// mimalloc, not glibc's allocator: a cold index hands each batch of lines from the reading threads
/// to the writer and on to the full-text build, which frees them, and glibc's arenas then contend
/// on their locks. Side by side on 20,000 sessions 34.3–34.5 s against 39.1–39.5 s, and on the
/// text corpus 3.4–3.5 s against 4.2–4.3 s (docs/benchmarks.md). Without transparent huge pages
/// (`no_thp`): with them its peak memory was 107 MB against 93 MB; without, 89–94 MB.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod cli;
mod maintain;
mod read;
mod serve;
mod start;
mod table;
mod visible;
mod words;

use std::io::IsTerminal;
use std::process::ExitCode;

use clap::Parser;

use crate::cli::{Cli, Command, Usage, hub_config};
use scrollback::read::request;

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
            // A hub's or a file's words may carry a terminal's escapes: shown, not obeyed.
            eprintln!("scrollback: {}", visible::visible(&message(&e)));
            if e.downcast_ref::<Usage>().is_some() {
                return ExitCode::from(2);
            }
            ExitCode::FAILURE
        }
    }
}

/// Runs the command: one call for each.
fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Command::Serve(args) => serve::run(args),
        Command::Mcp { dirs, project, follow, mask, postgres, hub_timeout } => {
            let (rescan_every, poll) = follow.intervals();
            let hub = postgres.map(|url| cli::hub_config(&url, hub_timeout)).transpose()?;
            serve::mcp(&dirs, project.as_deref(), rescan_every, poll, mask.mask_secrets, hub)
        }
        Command::DemoEngine { transcripts, project, reply_delay_ms } => {
            serve::demo_engine(transcripts, project, reply_delay_ms)
        }
        Command::Sessions { data, project, agent, query, since, until, limit, json } => {
            let limit = Some(i64::from(limit));
            let input = request::SessionsInput { project, agent, q: query, since, until, limit, ..Default::default() };
            read::sessions(&data.resolve()?, input, json)
        }
        Command::Search { query, data, session, agent, project, role, since, until, sort, per_entry, limit, json } => {
            let (sort, limit) = (Some(sort), Some(i64::from(limit)));
            let group = Some(if per_entry { "none" } else { "session" }.to_owned());
            let input = request::SearchInput {
                q: query,
                session,
                agent,
                project,
                role,
                since,
                until,
                sort,
                group,
                limit,
                ..Default::default()
            };
            read::search(&data.resolve()?, input, json)
        }
        Command::Index { dirs } => maintain::index(&dirs),
        Command::Push { data, postgres, host, take_over, timeout } => maintain::push(
            &data.resolve()?,
            &hub_config(&postgres, timeout)?,
            &host.unwrap_or_else(scrollback::hub::machine_name),
            take_over,
        ),
        Command::Status { data, roots } => {
            let data_dir = data.resolve()?;
            let (roots, origin) = roots.resolve(&data_dir)?;
            read::status(&data_dir, &roots, &origin)
        }
        Command::Check { data } => maintain::check(&data.resolve()?),
        Command::Forget { sessions, project, before, dry_run, yes, data } => {
            maintain::forget(&data.resolve()?, sessions, project.as_deref(), before.as_deref(), dry_run, yes)
        }
        Command::Unforget { sessions, data } => maintain::unforget(&data.resolve()?, &sessions),
        Command::Rebuild { dirs } => maintain::rebuild(&dirs),
        Command::Export { session, data, format, redact, output } => {
            read::export(&data.resolve()?, &session, &format, redact, output)
        }
        Command::Usage { data, by, since, until, agent, project, session, json, prices } => {
            let input = request::UsageInput { by: Some(by), since, until, agent, project, session, model: None };
            read::usage(&data.resolve()?, input, &prices.load()?, json)
        }
        Command::Stats { data, since, until, tz, agent, project, json, prices } => {
            let input = request::StatsInput { since, until, tz: Some(tz.to_string()), agent, project, limit: None };
            read::stats(&data.resolve()?, input, &prices.load()?, json)
        }
        Command::Media { reference, data, output } => read::media_cmd(&reference, &data.resolve()?, output.as_deref()),
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
