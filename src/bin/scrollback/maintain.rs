//! The commands that keep the index and its copies: `index`, `rebuild`, `check`, `forget`,
//! `unforget` and `push`. Each opens the writer (or the hub's pusher) through the library, runs one
//! pass and prints what it did; the work itself (SQL, stores, the vault) is the library's.

use std::io::{IsTerminal, Write};
use std::path::Path;

use anyhow::{Context, bail};
use scrollback::ops::forget::Among;
use scrollback::ops::roots::Origin;
use scrollback::ops::writer::{WriterOptions, open_writer};
use scrollback::read::{Store, history, index};
use scrollback::{Progress, Root};

use crate::cli::{Dirs, Usage, bad_name, say_missing, say_roots};
use crate::visible::one_line;
use crate::words::count;

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

/// Catches up on every root of `roots` that exists, saying those that do not.
fn catch_up_all(
    indexer: &mut scrollback::Indexer,
    roots: &[Root],
    origin: &Origin,
) -> anyhow::Result<scrollback::Summary> {
    indexer.set_roots(roots)?;
    let mut total = scrollback::Summary::default();
    for root in say_missing(roots, origin) {
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

/// `scrollback index`: one catch-up of every root, what it read, and what the index then holds in
/// the words `status` uses.
pub(crate) fn index(dirs: &Dirs) -> anyhow::Result<()> {
    let data_dir = dirs.data.resolve()?;
    let (roots, origin) = dirs.roots.resolve(&data_dir)?;
    let mut indexer =
        open_writer(&data_dir, &dirs.writer_options("index")).map_err(|e| e.or_out_of_space(&data_dir))?;
    say_roots(&data_dir, &roots, &origin)?;
    let s = catch_up_all(&mut indexer, &roots, &origin)?;
    drop(indexer);
    // What this pass read: every line and every payload, copies and replays included.
    out!(
        "indexed {}, {}, {}, {}, {:.1} MB in {:.2} s ({} re-indexed, {} gone, {} failed)",
        count(s.files, "file"),
        count(s.lines, "line"),
        count(s.media, "payload"),
        count(s.invalid, "invalid line"),
        s.bytes as f64 / 1e6,
        s.seconds,
        s.reindexed,
        s.gone,
        s.failed
    )?;
    let conn = index::open(&data_dir)?;
    let held = scrollback::read::status::index_status(&conn, &data_dir)?;
    out!(
        "the index holds {}; entries {}; photos {}",
        count(held.sessions, "session"),
        crate::read::entries_words(&held),
        crate::read::photos_words(&held)
    )?;
    if s.failed > 0 {
        bail!("{} transcript(s) could not be indexed (the log above says why); the others were", s.failed);
    }
    Ok(())
}

/// `scrollback forget`: the sessions named or selected, each forgotten whole (see the ops crate).
pub(crate) fn forget(
    data_dir: &Path,
    sessions: Vec<String>,
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
    let record = scrollback::accept::AcceptStore::open_if_any(data_dir)?;
    let mut sessions = sessions
        .iter()
        .map(|given| scrollback::ops::forget::named(&conn, record.as_ref(), given, Among::Any).map_err(bad_name))
        .collect::<anyhow::Result<Vec<String>>>()?;
    drop(record);
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
        out!(
            "{verb} {}: {}, {}, {}, {}; frees about {:.1} MB",
            one_line(&forgotten.session_id),
            count(forgotten.entries, "entry"),
            count(forgotten.media, "payload row"),
            count(forgotten.files, "transcript"),
            count(forgotten.messages, "sent message"),
            mb(forgotten.freed_bytes())
        )?;
    }
    if sessions.is_empty() {
        out!("no session matches")?;
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
                writeln!(err, "  {}", one_line(&format!("{id}  last {last}  {}  {title}", count(s.entries, "entry"))))?
            }
            None => writeln!(err, "  {}  (not in the index)", one_line(id))?,
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

/// `scrollback unforget`: the sessions' transcripts are indexed again at the next catch-up. Each
/// is named by its id or a prefix of it, among the sessions forgotten.
pub(crate) fn unforget(data_dir: &Path, sessions: &[String]) -> anyhow::Result<()> {
    let options = WriterOptions { holder: Some("unforget"), ..WriterOptions::default() };
    let mut indexer = open_writer(data_dir, &options)?;
    let conn = index::open(data_dir)?;
    let record = scrollback::accept::AcceptStore::open_if_any(data_dir)?;
    let sessions = sessions
        .iter()
        .map(|given| {
            scrollback::ops::forget::named(&conn, record.as_ref(), given, Among::Forgotten).map_err(|e| match e {
                scrollback::Error::UnknownSession(what) => Usage(format!("no forgotten session {what}")).into(),
                e => bad_name(e),
            })
        })
        .collect::<anyhow::Result<Vec<String>>>()?;
    drop((conn, record));
    let n = scrollback::ops::forget::unforget(&mut indexer, data_dir, &sessions)?;
    out!("{n} transcript(s) will be indexed again at the next `scrollback index` (or rescan)")?;
    Ok(())
}

/// `scrollback check`: SQLite's integrity check of the index; an error if it is damaged.
pub(crate) fn check(data_dir: &Path) -> anyhow::Result<()> {
    let conn = index::open(data_dir)?;
    let problems = scrollback::db::integrity_problems(&conn);
    let path = data_dir.join(scrollback::db::INDEX_FILE);
    if problems.is_empty() {
        let counts = index::table_counts(&conn)?;
        let counts: Vec<String> = counts.iter().map(|(table, n)| format!("{n} {table}")).collect();
        out!("{}: ok ({})", path.display(), counts.join(", "))?;
        return Ok(());
    }
    out!("{}: damaged; SQLite's integrity check says:", path.display())?;
    for problem in problems.iter().take(20) {
        out!("  {problem}")?;
    }
    if problems.len() > 20 {
        out!("  ... and {} more", problems.len() - 20)?;
    }
    bail!("the index is damaged: stop `scrollback serve`, then run `scrollback rebuild` (the old file is kept)")
}

/// `scrollback rebuild`: a new index from the transcripts, then what only the old one held.
pub(crate) fn rebuild(dirs: &Dirs) -> anyhow::Result<()> {
    let data_dir = dirs.data.resolve()?;
    let (roots, origin) = dirs.roots.resolve(&data_dir)?;
    let (mut indexer, old) = scrollback::ops::writer::open_rebuilt(&data_dir)?;
    eprintln!("scrollback: the old index is kept as {}", old.display());
    say_roots(&data_dir, &roots, &origin)?;
    let s = catch_up_all(&mut indexer, &roots, &origin)?;
    let carried = indexer.carry_over(&old)?;
    out!(
        "rebuilt: {} indexed ({}, {} failed); {} carried over from the old index ({}, {})",
        count(s.files, "transcript"),
        count(s.lines, "line"),
        s.failed,
        count(carried.files, "gone transcript"),
        count(carried.entries, "entry"),
        count(carried.media, "payload")
    )?;
    for what in &carried.unreadable {
        eprintln!("scrollback: could not read from the old index: {}", one_line(what));
    }
    if s.failed > 0 || !carried.unreadable.is_empty() {
        bail!("the rebuild is done, but not all of it could be read (see above); the old index is kept");
    }
    Ok(())
}

/// `scrollback push`: one pass.
pub(crate) fn push(
    data_dir: &Path,
    config: &scrollback::hub::HubConfig,
    host: &str,
    take_over: bool,
) -> anyhow::Result<()> {
    let mut pusher = scrollback::hub::push::Pusher::connect(config, host, data_dir, take_over)
        .with_context(|| format!("pushing to {}", config.describe()))?;
    let started = std::time::Instant::now();
    let p = pusher.push().with_context(|| format!("pushing to {}", config.describe()))?;
    let hub = one_line(&format!("{} as {host}", config.describe()));
    out!(
        "pushed to {hub}: {} of {}, {}, {} ({:.1} MB), {} forgotten, {}, in {:.2} s{}{}",
        count(p.entries, "line"),
        count(p.files, "file"),
        count(p.sessions, "session"),
        count(p.photos, "photo"),
        p.photo_bytes as f64 / 1e6,
        p.forgotten,
        count(p.marks, "mark"),
        started.elapsed().as_secs_f64(),
        if p.resent { " (the index was made anew: its rows were sent again)" } else { "" },
        if p.photos_unreadable > 0 {
            format!(
                "; the bytes of {} could not be read here (their rows were sent)",
                count(p.photos_unreadable, "photo")
            )
        } else {
            String::new()
        },
    )?;
    Ok(())
}
