//! The live indexer: a startup catch-up, then notify events as hints, and a rare periodic rescan.
//!
//! [`Tail::start`] moves the [`Indexer`] (the only writer) onto its own thread. A recursive notify
//! watcher on each transcript root is created *before* the startup catch-up, so nothing written in
//! between is missed; its events are only hints ("this path may have changed"), because events can
//! be lost (queue overflow, network file systems, WSL). Correctness rests on the indexer itself:
//! every hint, and every periodic rescan, compares the file's identity, fingerprint and checkpoint
//! with the index and reads what is new. An event with notify's rescan flag, a new directory (whose
//! files may predate its watch), or a removed directory triggers a catch-up of that subtree.
//!
//! Symlinked directories are followed by scans (see [`crate::tree`]); live events inside them depend
//! on the watcher following them too (notify's inotify backend does), and the periodic rescan covers
//! any other case. With [`TailConfig::poll`], notify's `PollWatcher` replaces the native watcher.
//!
//! The periodic rescan is a safety net (every [`RESCAN_EVERY`] by default): a pass over every
//! transcript costs CPU in proportion to the tree (about 0.15 s for 20,000 unchanged files), which an
//! idle server should not spend every few seconds when events work; lost events say so themselves
//! (the rescan flag), and are caught up on at once.
//!
//! A root that does not exist is said once at start and is no error: it is looked for again every
//! [`TailConfig::look_at_roots_every`] (a stat per root), and one that has appeared is watched and
//! indexed from then on. A root whose directory was removed or replaced (its watch went with it) is
//! caught up on and watched anew the same way.

use std::collections::BTreeSet;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use notify::Watcher;

use crate::events::Event;
use crate::indexer::{Indexer, NoProgress};
use crate::roots::Root;
use crate::tree::is_transcript;
use crate::vault::VaultOff;
use scrollback_core::error::{Error, Result};

/// How often a full rescan runs by default, events or none: a safety net for events lost without a
/// word (a network file system's, say), since lost events that are noticed trigger one at once.
pub const RESCAN_EVERY: Duration = Duration::from_secs(600);

/// How often the roots are looked at by default: one that appeared is watched, one removed or
/// replaced is caught up on (and watched again).
pub const LOOK_AT_ROOTS_EVERY: Duration = Duration::from_secs(30);

/// How the live indexer runs.
#[derive(Debug, Clone)]
pub struct TailConfig {
    /// The transcript roots to watch, each of one format.
    pub roots: Vec<Root>,
    /// How often a full rescan runs even without events.
    pub rescan_every: Duration,
    /// How often the roots themselves are looked at (a stat each): one that did not exist and now
    /// does is watched and caught up on; one whose directory went or was replaced is caught up on.
    pub look_at_roots_every: Duration,
    /// Poll the tree at this interval instead of using native events (network file systems, WSL).
    /// notify's `PollWatcher` sees modification times only to the second, so the writer also
    /// rescans at this interval: a change is indexed within one interval either way.
    pub poll: Option<Duration>,
}

impl TailConfig {
    /// One root of the default format's transcripts ([`Root::default_format`]), native events,
    /// and the default intervals ([`RESCAN_EVERY`], [`LOOK_AT_ROOTS_EVERY`]).
    pub fn new(root: impl Into<PathBuf>) -> TailConfig {
        TailConfig::of(vec![Root::default_format(root)])
    }

    /// `roots`, native events, and the default intervals ([`RESCAN_EVERY`], [`LOOK_AT_ROOTS_EVERY`]).
    pub fn of(roots: Vec<Root>) -> TailConfig {
        TailConfig { roots, rescan_every: RESCAN_EVERY, look_at_roots_every: LOOK_AT_ROOTS_EVERY, poll: None }
    }
}

/// A hint for the writer thread: something may have changed, so look. Hints are never the truth
/// (the indexer compares what is on disk with the index).
#[derive(Debug)]
enum Hint {
    /// This transcript may have changed.
    File(PathBuf),
    /// A payload recorded in this transcript no longer matches its bytes: re-index it from the start,
    /// whatever its fingerprint and tail hash say (an edit in the middle changes neither).
    Changed(PathBuf),
    /// This directory appeared or disappeared: catch up on everything under it.
    Dir(PathBuf),
    /// Events were lost: catch up on the whole tree.
    Rescan,
}

/// Work that must run on the writer, between two of its passes, with the writer itself.
type Job = Box<dyn FnOnce(&mut Indexer) + Send>;

/// What the writer thread is sent.
enum ToWriter {
    Hint(Hint),
    Job(Job),
    Stop,
}

impl std::fmt::Debug for ToWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ToWriter::Hint(hint) => hint.fmt(f),
            ToWriter::Job(_) => f.write_str("Job"),
            ToWriter::Stop => f.write_str("Stop"),
        }
    }
}

/// The handle to the running writer: asks it to look at a file again, or runs a job on it (forget
/// a session, anything that must not run during a pass). Cheap to clone, usable from any thread.
#[derive(Debug, Clone)]
pub struct WriterHandle(mpsc::Sender<ToWriter>);

impl WriterHandle {
    /// Queues `path` for the writer, whose recorded payload no longer matched its bytes: it is
    /// re-indexed from the start. `false` if the writer is not running (it stopped, or died).
    pub fn reindex(&self, path: PathBuf) -> bool {
        self.0.send(ToWriter::Hint(Hint::Changed(path))).is_ok()
    }

    /// Runs `job` on the writer between two of its passes (before the hints queued with it), and
    /// waits for its result (blocking: call it off an async runtime's threads). `None` if the writer
    /// is not running, or died during the job.
    pub fn run<T: Send + 'static>(&self, job: impl FnOnce(&mut Indexer) -> T + Send + 'static) -> Option<T> {
        let (reply, answer) = mpsc::channel();
        let job: Job = Box::new(move |indexer| {
            // The asker may have gone (its request was cancelled): the work is done all the same.
            let _ = reply.send(job(indexer));
        });
        self.0.send(ToWriter::Job(job)).ok()?;
        answer.recv().ok()
    }
}

/// Whether the writer thread is alive, and whether its vault is; cheap to clone, readable from any
/// thread.
#[derive(Debug, Clone, Default)]
pub struct WriterHealth(Arc<Mutex<Option<String>>>, VaultOff);

impl WriterHealth {
    /// Why the writer died (its panic's message), or `None` while it runs (or after a clean stop).
    pub fn failure(&self) -> Option<String> {
        self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone()
    }

    /// Why the writer's vault is off, if it turned it off (recorded in the index or not).
    pub fn vault_off(&self) -> Option<String> {
        self.1.why()
    }

    fn fail(&self, why: String) {
        *self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Some(why);
    }
}

/// The environment variable that makes the writer panic at its first file hint: fault injection
/// for the test that checks a dead writer is loud (`tests/tail.rs`). Never set it otherwise.
pub const FAULT_WRITER_PANIC: &str = "SCROLLBACK_FAULT_WRITER_PANIC";

/// The running live indexer. Dropping it stops it.
pub struct Tail {
    hints: mpsc::Sender<ToWriter>,
    thread: Option<JoinHandle<Option<Indexer>>>,
    health: WriterHealth,
    watcher_kind: &'static str,
}

/// The watcher and the roots: those watched, and those that did not exist when last looked at.
struct Watched {
    watcher: Box<dyn Watcher + Send>,
    /// Every root (absolute), and whether its format keeps a database there (watched without its
    /// subdirectories: OpenCode's data directory also holds its logs and git snapshots).
    roots: Vec<(PathBuf, bool)>,
    /// The roots being watched, each with its directory's identity (device, inode) when its watch
    /// was made.
    watching: Vec<(PathBuf, (u64, u64))>,
}

/// A directory's identity (device, inode), if it is one.
fn dir_identity(dir: &Path) -> Option<(u64, u64)> {
    std::fs::metadata(dir).ok().filter(|m| m.is_dir()).map(|m| (m.dev(), m.ino()))
}

impl Watched {
    /// Watches each root that exists and is not watched yet; says which do not exist (at the
    /// `start`, or as they appear later). A root that exists but cannot be watched is an error at
    /// the start, and logged (and tried again) after it.
    fn watch_new(&mut self, start: bool) -> Result<Vec<PathBuf>> {
        let mut appeared = Vec::new();
        for (root, database) in &self.roots {
            if self.watches(root) {
                continue;
            }
            let Some(identity) = dir_identity(root) else {
                if start {
                    tracing::info!(root = %root.display(), "a transcript root that does not exist (yet): looked for again from time to time");
                }
                continue;
            };
            let mode = if *database { notify::RecursiveMode::NonRecursive } else { notify::RecursiveMode::Recursive };
            match self.watcher.watch(root, mode).map_err(watch_error(root)) {
                Ok(()) => {
                    if !start {
                        tracing::info!(root = %root.display(), "a transcript root appeared: now followed");
                    }
                    self.watching.push((root.clone(), identity));
                    appeared.push(root.clone());
                }
                Err(e) if start => return Err(e),
                Err(e) => tracing::warn!("{e}"),
            }
        }
        Ok(appeared)
    }

    /// Whether `root` is watched.
    fn watches(&self, root: &Path) -> bool {
        self.watching.iter().any(|(r, _)| r == root)
    }

    /// Catches up on every root watched.
    fn catch_up(&self, indexer: &mut Indexer) {
        for (root, _) in &self.watching {
            catch_up_logged(indexer, root);
        }
    }

    /// Looks at the roots: a watched one whose directory went or was replaced loses its watch (its
    /// watch went with the directory), and each that exists and is not watched is watched. Returns
    /// the roots to catch up on: those that went, were replaced, or appeared.
    fn look_at_roots(&mut self) -> Vec<PathBuf> {
        let mut lost = Vec::new();
        self.watching.retain(|(root, identity)| {
            let same = dir_identity(root) == Some(*identity);
            if !same {
                lost.push(root.clone());
            }
            same
        });
        for root in &lost {
            tracing::info!(root = %root.display(), "a transcript root was removed or replaced: caught up on, and watched again if it is there");
            // Its watch may have gone with the directory already.
            let _ = self.watcher.unwatch(root);
        }
        // Errors are logged inside once the tail runs.
        let appeared = self.watch_new(false).unwrap_or_default();
        for root in appeared {
            if !lost.contains(&root) {
                lost.push(root);
            }
        }
        lost
    }

    /// Catches up on the roots [`Watched::look_at_roots`] names.
    fn look_and_catch_up(&mut self, indexer: &mut Indexer) {
        for root in self.look_at_roots() {
            catch_up_logged(indexer, &root);
        }
    }

    /// A full rescan: the roots are looked at first (see [`Watched::look_at_roots`]).
    fn rescan(&mut self, indexer: &mut Indexer) {
        for root in self.look_at_roots() {
            // A root watched now is caught up on below.
            if !self.watches(&root) {
                catch_up_logged(indexer, &root);
            }
        }
        self.catch_up(indexer);
    }

    /// Whether `dir` is in a root followed.
    fn follows(&self, dir: &Path) -> bool {
        self.watching.iter().any(|(root, _)| dir.starts_with(root))
    }
}

impl std::fmt::Debug for Tail {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tail").finish_non_exhaustive()
    }
}

impl Tail {
    /// Starts watching `config.roots`, catches up on them, and keeps the index current until
    /// stopped. Fails if no root can be made absolute or a watcher cannot start.
    pub fn start(mut indexer: Indexer, config: TailConfig) -> Result<Tail> {
        indexer.set_roots(&config.roots)?;
        let roots: Vec<(PathBuf, bool)> =
            indexer.roots().iter().map(|r| (r.dir.clone(), r.format.database().is_some())).collect();
        let (hints, receive) = mpsc::channel();
        let sender = hints.clone();
        let handler = move |event: notify::Result<notify::Event>| {
            for hint in hints_of(event) {
                // The writer has stopped: nothing to tell.
                let _ = sender.send(ToWriter::Hint(hint));
            }
        };
        let notify_config = notify::Config::default().with_follow_symlinks(true);
        let first = roots.first().map(|r| r.0.clone()).unwrap_or_default();
        let watcher: Box<dyn Watcher + Send> = match config.poll {
            Some(interval) => Box::new(
                notify::PollWatcher::new(handler, notify_config.with_poll_interval(interval))
                    .map_err(watch_error(&first))?,
            ),
            None => Box::new(notify::RecommendedWatcher::new(handler, notify_config).map_err(watch_error(&first))?),
        };
        let mut watched = Watched { watcher, roots, watching: Vec::new() };
        watched.watch_new(true)?;

        let rescan_every = match config.poll {
            Some(interval) => config.rescan_every.min(interval),
            None => config.rescan_every,
        };
        let timers = Timers { rescan_every, look_at_roots_every: config.look_at_roots_every };
        let health = WriterHealth(Arc::default(), indexer.vault_off());
        let failure = health.clone();
        let bus = indexer.bus();
        let fault = std::env::var_os(FAULT_WRITER_PANIC).is_some();
        let thread = std::thread::Builder::new()
            .name("scrollback-writer".into())
            .spawn(move || {
                // A panic here (a bug, or a read-ahead worker's panic carried over) must not leave a
                // server serving a frozen index in silence: it is logged, recorded for `status`, and
                // announced on the bus, whose listeners (`serve`) stop with an error.
                let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    watched.catch_up(&mut indexer);
                    run(&mut indexer, &mut watched, &receive, timers, fault);
                }));
                match outcome {
                    Ok(()) => Some(indexer),
                    Err(panic) => {
                        let why = panic
                            .downcast_ref::<&str>()
                            .map(|s| s.to_string())
                            .or_else(|| panic.downcast_ref::<String>().cloned())
                            .unwrap_or_else(|| "a panic without a message".into());
                        tracing::error!("the writer died: {why}; the index is no longer kept up to date");
                        failure.fail(why.clone());
                        if let Some(bus) = bus {
                            let _ = bus.send(Event::WriterFailed { error: why });
                        }
                        None
                    }
                }
            })
            .map_err(|e| Error::io(&first, e))?;
        let watcher_kind = if config.poll.is_some() { "poll" } else { "notify" };
        Ok(Tail { hints, thread: Some(thread), health, watcher_kind })
    }

    /// Whether the writer runs, or why it died.
    pub fn health(&self) -> WriterHealth {
        self.health.clone()
    }

    /// How changes are noticed: `"notify"` (native events) or `"poll"`.
    pub fn watcher_kind(&self) -> &'static str {
        self.watcher_kind
    }

    /// Asks for a full catch-up now (as if events had been lost).
    pub fn rescan(&self) {
        let _ = self.hints.send(ToWriter::Hint(Hint::Rescan));
    }

    /// A handle to the writer: for a reader that found a file's bytes changed under a recorded
    /// offset, and for jobs (forgetting a session) that must run on it.
    pub fn writer(&self) -> WriterHandle {
        WriterHandle(self.hints.clone())
    }

    /// Stops watching, finishes the work in hand, and gives the indexer back; `None` if the writer
    /// died (see [`Tail::health`]).
    pub fn stop(mut self) -> Option<Indexer> {
        self.stop_thread()
    }

    fn stop_thread(&mut self) -> Option<Indexer> {
        let _ = self.hints.send(ToWriter::Stop);
        // The thread catches its own panics; a join error would be one in that catching.
        self.thread.take().and_then(|t| t.join().unwrap_or(None))
    }
}

impl Drop for Tail {
    fn drop(&mut self) {
        self.stop_thread();
    }
}

fn watch_error(root: &Path) -> impl Fn(notify::Error) -> Error + '_ {
    move |e| Error::io(root, std::io::Error::other(format!("cannot watch: {e}")))
}

/// Turns one notify event into hints.
fn hints_of(event: notify::Result<notify::Event>) -> Vec<Hint> {
    let event = match event {
        Ok(event) => event,
        Err(e) => {
            tracing::warn!("file watcher error, rescanning: {e}");
            return vec![Hint::Rescan];
        }
    };
    if event.need_rescan() {
        return vec![Hint::Rescan];
    }
    // Opening a file changes nothing, and the writer's own reads open files: following those
    // events would loop. A close after writing is kept.
    if let notify::EventKind::Access(kind) = event.kind
        && kind != notify::event::AccessKind::Close(notify::event::AccessMode::Write)
    {
        return Vec::new();
    }
    let dir_event = matches!(
        event.kind,
        notify::EventKind::Create(notify::event::CreateKind::Folder)
            | notify::EventKind::Remove(notify::event::RemoveKind::Folder)
    );
    event
        .paths
        .into_iter()
        .filter_map(|path| {
            if is_transcript(&path) {
                Some(Hint::File(path))
            } else if let Some(db) = crate::tree::database_of(&path) {
                // A database's write-ahead log: the agent wrote rows.
                Some(Hint::File(db))
            } else if dir_event || path.is_dir() {
                // A directory renamed into place, or created: its files may predate any watch on it.
                Some(Hint::Dir(path))
            } else if (matches!(event.kind, notify::EventKind::Modify(notify::event::ModifyKind::Name(_)))
                || matches!(event.kind, notify::EventKind::Remove(_)))
                && !path.exists()
            {
                // A directory renamed away or removed reads as a plain path: its transcripts went too.
                // (An existing file that is not a transcript, such as an editor's temporary file, is
                // nothing to us.)
                Some(Hint::Dir(path))
            } else {
                None
            }
        })
        .collect()
}

fn catch_up_logged(indexer: &mut Indexer, dir: &Path) {
    match indexer.catch_up(dir, &mut NoProgress) {
        Ok(s) if s.failed > 0 => {
            tracing::warn!(dir = %dir.display(), files = s.files, failed = s.failed, "caught up, but some transcripts could not be indexed");
        }
        Ok(s) if s.files > 0 || s.gone > 0 => {
            tracing::info!(dir = %dir.display(), files = s.files, lines = s.lines, gone = s.gone, "caught up");
        }
        Ok(_) => {}
        Err(e) => tracing::warn!(dir = %dir.display(), "catch-up failed: {e}"),
    }
}

/// After a directory appears it is scanned at once and again after each of these delays: files
/// created in it (or in subdirectories made in the same breath) before the watcher had a watch on
/// them send no event.
const DIR_RECHECKS: [Duration; 2] = [Duration::from_millis(50), Duration::from_millis(500)];

/// A directory to scan again.
#[derive(Debug)]
struct Recheck {
    /// When.
    due: Instant,
    dir: PathBuf,
    /// How many rechecks it has had.
    done: usize,
}

/// Everything queued for the writer at one moment: a burst of events on one file is one read.
#[derive(Default)]
struct Queued {
    files: BTreeSet<PathBuf>,
    changed: BTreeSet<PathBuf>,
    dirs: BTreeSet<PathBuf>,
    rescan: bool,
    jobs: Vec<Job>,
    stop: bool,
}

impl Queued {
    /// `first`, and every message already queued behind it.
    fn take(first: ToWriter, hints: &mpsc::Receiver<ToWriter>, fault: bool) -> Queued {
        let mut q = Queued::default();
        for message in std::iter::once(first).chain(hints.try_iter()) {
            match message {
                ToWriter::Hint(Hint::File(_)) if fault => panic!("injected fault ({FAULT_WRITER_PANIC})"),
                ToWriter::Hint(Hint::File(path)) => {
                    q.files.insert(path);
                }
                ToWriter::Hint(Hint::Changed(path)) => {
                    q.changed.insert(path);
                }
                ToWriter::Hint(Hint::Dir(path)) => {
                    q.dirs.insert(path);
                }
                ToWriter::Hint(Hint::Rescan) => q.rescan = true,
                ToWriter::Job(job) => q.jobs.push(job),
                ToWriter::Stop => q.stop = true,
            }
        }
        q
    }
}

/// The writer's intervals.
#[derive(Debug, Clone, Copy)]
struct Timers {
    rescan_every: Duration,
    look_at_roots_every: Duration,
}

/// The writer loop: hints in batches, a look at the roots every `look_at_roots_every`, and a
/// rescan every `rescan_every` (events or none; one asked for resets it).
fn run(indexer: &mut Indexer, watched: &mut Watched, hints: &mpsc::Receiver<ToWriter>, timers: Timers, fault: bool) {
    let Timers { rescan_every, look_at_roots_every } = timers;
    let mut next_rescan = Instant::now() + rescan_every;
    let mut next_look = Instant::now() + look_at_roots_every;
    let mut rechecks: Vec<Recheck> = Vec::new();
    loop {
        let now = Instant::now();
        let due = rechecks.iter().map(|r| r.due).fold(next_rescan.min(next_look), Instant::min);
        let first = match hints.recv_timeout(due.saturating_duration_since(now)) {
            Ok(message) => message,
            Err(RecvTimeoutError::Timeout) => {
                let now = Instant::now();
                if now >= next_rescan {
                    watched.rescan(indexer);
                    next_rescan = Instant::now() + rescan_every;
                    next_look = Instant::now() + look_at_roots_every;
                    rechecks.clear();
                } else if now >= next_look {
                    watched.look_and_catch_up(indexer);
                    next_look = Instant::now() + look_at_roots_every;
                } else {
                    recheck_due(indexer, &mut rechecks);
                }
                continue;
            }
            Err(RecvTimeoutError::Disconnected) => return,
        };
        let queued = Queued::take(first, hints, fault);
        // Jobs first: what the hints below read then sees their work done (a forgotten session's
        // transcripts are not indexed again).
        for job in queued.jobs {
            job(indexer);
        }
        if queued.rescan {
            watched.rescan(indexer);
            next_rescan = Instant::now() + rescan_every;
            next_look = Instant::now() + look_at_roots_every;
        } else {
            for dir in queued.dirs {
                if watched.watches(&dir) {
                    // A root itself went, or was renamed: its watch may have gone with it (see
                    // `look_at_roots`). Caught up on whatever the look finds.
                    let mut roots = watched.look_at_roots();
                    if !roots.contains(&dir) {
                        roots.push(dir);
                    }
                    for root in roots {
                        catch_up_logged(indexer, &root);
                    }
                } else if watched.follows(&dir) {
                    catch_up_logged(indexer, &dir);
                    if dir.is_dir() {
                        rechecks.retain(|r| r.dir != dir);
                        rechecks.push(Recheck { due: Instant::now() + DIR_RECHECKS[0], dir, done: 1 });
                    }
                }
            }
            for path in &queued.changed {
                if let Err(e) = indexer.reindex_path(path) {
                    tracing::warn!(path = %path.display(), "not re-indexed: {e}");
                }
            }
            for path in queued.files.difference(&queued.changed) {
                if let Err(e) = indexer.index_path(path) {
                    tracing::warn!(path = %path.display(), "not indexed: {e}");
                }
            }
        }
        if queued.stop {
            return;
        }
    }
}

/// Scans again each new directory whose recheck is due, and plans its next one.
fn recheck_due(indexer: &mut Indexer, rechecks: &mut Vec<Recheck>) {
    let now = Instant::now();
    let (ready, waiting): (Vec<_>, Vec<_>) = rechecks.drain(..).partition(|r| r.due <= now);
    *rechecks = waiting;
    for Recheck { dir, done, .. } in ready {
        catch_up_logged(indexer, &dir);
        if let Some(delay) = DIR_RECHECKS.get(done) {
            rechecks.push(Recheck { due: Instant::now() + *delay, dir, done: done + 1 });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use notify::event::{Event, EventKind, Flag, ModifyKind};

    fn kinds(hints: &[Hint]) -> Vec<String> {
        hints.iter().map(|h| format!("{h:?}")).collect()
    }

    #[test]
    fn a_rescan_flag_with_or_without_a_path_is_a_full_rescan() {
        let bare = Event::new(EventKind::Other).set_flag(Flag::Rescan);
        assert!(matches!(hints_of(Ok(bare))[..], [Hint::Rescan]));
        let with_path = Event::new(EventKind::Modify(ModifyKind::Any))
            .add_path(PathBuf::from("/t/p/s.jsonl"))
            .set_flag(Flag::Rescan);
        assert!(matches!(hints_of(Ok(with_path))[..], [Hint::Rescan]));
        let error = notify::Error::generic("queue overflow");
        assert!(matches!(hints_of(Err(error))[..], [Hint::Rescan]));
    }

    #[test]
    fn opening_a_file_is_not_a_change() {
        use notify::event::{AccessKind, AccessMode};
        let open =
            Event::new(EventKind::Access(AccessKind::Open(AccessMode::Any))).add_path(PathBuf::from("/t/s.jsonl"));
        assert!(hints_of(Ok(open)).is_empty());
        let closed =
            Event::new(EventKind::Access(AccessKind::Close(AccessMode::Write))).add_path(PathBuf::from("/t/s.jsonl"));
        assert_eq!(hints_of(Ok(closed)).len(), 1);
    }

    #[test]
    fn transcripts_are_file_hints_and_other_files_are_ignored() {
        let event = Event::new(EventKind::Modify(ModifyKind::Any))
            .add_path(PathBuf::from("/t/p/s.jsonl"))
            .add_path(PathBuf::from("/t/p/notes.txt"));
        assert_eq!(kinds(&hints_of(Ok(event))), ["File(\"/t/p/s.jsonl\")"]);
    }

    #[test]
    fn a_write_to_a_database_s_log_is_a_hint_for_the_database_and_its_index_file_is_not() {
        let event = Event::new(EventKind::Modify(ModifyKind::Any))
            .add_path(PathBuf::from("/o/opencode.db-wal"))
            .add_path(PathBuf::from("/o/opencode.db-shm"))
            .add_path(PathBuf::from("/o/opencode.db"));
        assert_eq!(kinds(&hints_of(Ok(event))), ["File(\"/o/opencode.db\")", "File(\"/o/opencode.db\")"]);
    }
}
