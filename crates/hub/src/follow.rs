//! `serve --push`: pushing continuously, on a thread of its own, as the index changes.
//!
//! The pusher reads the index through its own reader connection and notices the writer's commits
//! by SQLite's `data_version`, looked at every [`LOOK_EVERY`]; the writer never waits for it. When
//! the hub cannot be reached or fails, the pass is tried again after a pause that doubles up to
//! [`MAX_PAUSE`], and [`PushStatus`] says so (`GET /api/status`'s `push`).
//!
//! Every wait on the hub is bounded by its timeout, and ends within a tenth of a second of
//! [`Follow::stop`]; `stop` itself waits at most [`STOP_WAIT`] for the thread (reading the index
//! is all it can then be doing), so that a server stops within seconds whatever the hub does.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime};

use crate::HubConfig;
use crate::push::{Pushed, Pusher};
use scrollback_core::error::Result;

/// How often the index is looked at for commits.
pub const LOOK_EVERY: Duration = Duration::from_millis(200);
/// The longest pause after a failure.
pub const MAX_PAUSE: Duration = Duration::from_secs(60);
/// A pass runs at least this often even when nothing seems to have changed (a forget or unforget
/// in the acceptance record, a transcript's photo that could not be read before).
const EVERY: Duration = Duration::from_secs(30);
/// The longest [`Follow::stop`] waits for the push thread to end.
pub const STOP_WAIT: Duration = Duration::from_secs(5);

/// How the continuous push is going, for `status`.
#[derive(Debug, Clone, Default)]
pub struct PushStatus {
    /// `user@host:port/dbname` (never a password).
    pub hub: String,
    /// The host name pushed as.
    pub host: String,
    /// `connecting`, `pushing`, `current` (everything indexed is on the hub) or `failing`.
    pub state: &'static str,
    /// When the last pass that succeeded ended (RFC 3339, UTC).
    pub last_push_at: Option<String>,
    /// Why the last attempt failed, while failing.
    pub error: Option<String>,
    /// Seconds until the next attempt, while failing.
    pub retry_in_secs: Option<u64>,
    /// Lines sent since the server started.
    pub entries_sent: u64,
    /// Photos' bytes sent since the server started.
    pub photos_sent: u64,
}

/// The running push: its thread and its status.
#[derive(Debug)]
pub struct Follow {
    status: Arc<Mutex<PushStatus>>,
    stop: Arc<AtomicBool>,
    /// Set by the thread as it ends.
    ended: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Follow {
    /// Starts pushing `data_dir`'s index as `host` (taking the name over, with `take_over`: see
    /// [`Pusher::connect`]).
    pub fn start(config: HubConfig, host: String, data_dir: &Path, take_over: bool) -> Result<Follow> {
        let status = Arc::new(Mutex::new(PushStatus {
            hub: config.describe(),
            host: host.clone(),
            state: "connecting",
            ..PushStatus::default()
        }));
        let stop = Arc::new(AtomicBool::new(false));
        let ended = Arc::new(AtomicBool::new(false));
        let worker = Worker {
            config,
            host,
            data_dir: data_dir.to_owned(),
            take_over,
            status: status.clone(),
            stop: stop.clone(),
        };
        let done = ended.clone();
        let thread = std::thread::Builder::new()
            .name("push".into())
            .spawn(move || {
                worker.run();
                done.store(true, Ordering::SeqCst);
            })
            .map_err(|e| scrollback_core::error::Error::Internal(format!("starting the push thread: {e}")))?;
        Ok(Follow { status, stop, ended, thread: Some(thread) })
    }

    /// A handle on the status, for the server.
    pub fn status(&self) -> PushStatusHandle {
        PushStatusHandle(self.status.clone())
    }

    /// Stops: the pass under way ends at its next wait on the hub (its transactions are whole
    /// either way; the one cut short is rolled back). Waits at most [`STOP_WAIT`] for the thread.
    pub fn stop(mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let until = Instant::now() + STOP_WAIT;
        while !self.ended.load(Ordering::SeqCst) && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(20));
        }
        match self.thread.take() {
            Some(thread) if self.ended.load(Ordering::SeqCst) => {
                let _ = thread.join();
            }
            Some(_) => tracing::warn!("the push thread did not stop within {} s: left behind", STOP_WAIT.as_secs()),
            None => {}
        }
    }
}

/// Reads a running push's status.
#[derive(Debug, Clone)]
pub struct PushStatusHandle(Arc<Mutex<PushStatus>>);

impl PushStatusHandle {
    /// The status now.
    pub fn get(&self) -> PushStatus {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

struct Worker {
    config: HubConfig,
    host: String,
    data_dir: PathBuf,
    take_over: bool,
    status: Arc<Mutex<PushStatus>>,
    stop: Arc<AtomicBool>,
}

impl Worker {
    fn set(&self, f: impl FnOnce(&mut PushStatus)) {
        f(&mut self.status.lock().unwrap_or_else(|e| e.into_inner()));
    }

    fn run(self) {
        let mut pusher: Option<Pusher> = None;
        let mut pause = Duration::from_secs(1);
        let mut seen: Option<i64> = None;
        let mut last_pass = Instant::now() - EVERY;
        let mut reader: Option<rusqlite::Connection> = None;
        while !self.stop.load(Ordering::SeqCst) {
            // Has the writer committed since the last pass?
            if reader.is_none() {
                reader = scrollback_read::index::open(&self.data_dir).ok();
            }
            let version =
                reader.as_ref().and_then(|c| c.query_row("PRAGMA data_version", [], |r| r.get::<_, i64>(0)).ok());
            if version.is_none() {
                reader = None;
            }
            let due = version.is_none() || version != seen || last_pass.elapsed() >= EVERY;
            if !due {
                std::thread::sleep(LOOK_EVERY);
                continue;
            }
            match self.pass(&mut pusher) {
                Ok(pushed) => {
                    seen = version;
                    last_pass = Instant::now();
                    pause = Duration::from_secs(1);
                    if !pushed.is_empty() {
                        tracing::info!(
                            "pushed to {}: {} lines, {} photos ({} bytes) of {} files, {} sessions",
                            self.config.describe(),
                            pushed.entries,
                            pushed.photos,
                            pushed.photo_bytes,
                            pushed.files,
                            pushed.sessions
                        );
                    }
                    self.set(|s| {
                        s.state = "current";
                        s.error = None;
                        s.retry_in_secs = None;
                        s.last_push_at = Some(now());
                        s.entries_sent += pushed.entries;
                        s.photos_sent += pushed.photos;
                    });
                    std::thread::sleep(LOOK_EVERY);
                }
                Err(_) if self.stop.load(Ordering::SeqCst) => break,
                Err(e) => {
                    tracing::warn!("push to {}: {e}; trying again in {} s", self.config.describe(), pause.as_secs());
                    if pusher.as_ref().is_some_and(Pusher::is_closed) {
                        pusher = None;
                    }
                    self.set(|s| {
                        s.state = "failing";
                        s.error = Some(e.to_string());
                        s.retry_in_secs = Some(pause.as_secs());
                    });
                    self.sleep(pause);
                    pause = (pause * 2).min(MAX_PAUSE);
                }
            }
        }
    }

    fn pass(&self, pusher: &mut Option<Pusher>) -> Result<Pushed> {
        // The hub ends a session idle for its timeout: one idle half as long is replaced first.
        if pusher.as_ref().is_some_and(|p| p.idle() > self.config.timeout() / 2) {
            *pusher = None;
        }
        let p = match pusher {
            Some(p) => p,
            None => {
                self.set(|s| s.state = "connecting");
                pusher.insert(Pusher::connect_stopping(
                    &self.config,
                    &self.host,
                    &self.data_dir,
                    self.take_over,
                    Some(self.stop.clone()),
                )?)
            }
        };
        self.set(|s| {
            if s.state != "failing" {
                s.state = "pushing";
            }
        });
        let result = p.push();
        if result.is_err() && p.is_closed() {
            *pusher = None;
        }
        result
    }

    /// Sleeps `d`, waking to stop.
    fn sleep(&self, d: Duration) {
        let until = Instant::now() + d;
        while !self.stop.load(Ordering::SeqCst) && Instant::now() < until {
            std::thread::sleep(LOOK_EVERY.min(until - Instant::now()));
        }
    }
}

fn now() -> String {
    jiff::Timestamp::try_from(SystemTime::now()).map(|t| t.to_string()).unwrap_or_default()
}
