//! Which of several `scrollback mcp` servers on one data directory follows the transcripts.
//!
//! Agents start one `mcp` server per conversation, so several run at once, beside a `serve` or
//! not. Each reads the index; at most one writes it (the lock, [`scrollback_index::lock`]). When none
//! writes, the first to find the lock free takes it and follows the transcripts as `serve` does, so
//! that every server's answers stay current. When it exits, another finds the lock free within
//! [`Follower`]'s interval. A front end that must write (`serve`, `index`, `forget`, `rebuild`)
//! joins the lock's queue; the `mcp` that writes sees it there, stops its writer and lets the lock
//! go, and none takes it again until the queue is empty.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::Duration;

use crate::writer::{WriterOptions, open_writer_locked};
use scrollback_index::lock::{MCP_HOLDER, WaitClaim, WriterLock};
use scrollback_index::tail::{Tail, TailConfig};

/// How often a follower looks at the lock: well within the shortest rescan interval.
pub const LOOK_EVERY: Duration = Duration::from_millis(500);

/// The election's side of one `mcp` server: a thread that takes the writer lock when it is free
/// and nobody waits for it, runs the live writer while it holds it, and hands it over.
#[derive(Debug)]
pub struct Follower {
    stop: mpsc::Sender<()>,
    writing: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Follower {
    /// Starts the election for the index in `data_dir`, whose writer would follow `config`.
    pub fn start(data_dir: &Path, options: WriterOptions, config: TailConfig) -> std::io::Result<Follower> {
        let (stop, stopped) = mpsc::channel();
        let writing = Arc::new(AtomicBool::new(false));
        let flag = writing.clone();
        let data_dir = data_dir.to_owned();
        let thread = std::thread::Builder::new()
            .name("scrollback-election".into())
            .spawn(move || run(&data_dir, &options, &config, &stopped, &flag))?;
        Ok(Follower { stop, writing, thread: Some(thread) })
    }

    /// Whether this server writes the index now.
    pub fn writing(&self) -> bool {
        self.writing.load(Ordering::Relaxed)
    }

    /// Stops the writer, if this server runs it, and lets the lock go.
    pub fn stop(mut self) {
        self.stop_thread();
    }

    fn stop_thread(&mut self) {
        let _ = self.stop.send(());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for Follower {
    fn drop(&mut self) {
        self.stop_thread();
    }
}

fn run(
    data_dir: &Path,
    options: &WriterOptions,
    config: &TailConfig,
    stopped: &mpsc::Receiver<()>,
    writing: &AtomicBool,
) {
    let mut tail: Option<Tail> = None;
    loop {
        match tail.take() {
            None => match take_if_free(data_dir, options, config) {
                Ok(Some(t)) => {
                    tracing::info!("no other process writes the index: this mcp server follows the transcripts");
                    writing.store(true, Ordering::Relaxed);
                    tail = Some(t);
                }
                Ok(None) => {}
                Err(e) => tracing::warn!("could not start following the transcripts: {e}; trying again"),
            },
            Some(t) => {
                let waits = WaitClaim::anyone_waits(data_dir).unwrap_or(false);
                let died = t.health().failure();
                if waits || died.is_some() {
                    match died {
                        Some(why) => tracing::warn!("this mcp server's writer died ({why}); letting the lock go"),
                        None => tracing::info!("another scrollback wants to write the index: handing it over"),
                    }
                    // Stopping finishes the pass in hand, then lets the lock go with the indexer.
                    drop(t.stop());
                    writing.store(false, Ordering::Relaxed);
                } else {
                    tail = Some(t);
                }
            }
        }
        match stopped.recv_timeout(LOOK_EVERY) {
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Ok(()) | Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
    }
    if let Some(t) = tail {
        drop(t.stop());
        writing.store(false, Ordering::Relaxed);
    }
}

fn take_if_free(
    data_dir: &Path,
    options: &WriterOptions,
    config: &TailConfig,
) -> scrollback_core::Result<Option<Tail>> {
    let Some(lock) = WriterLock::take_if_free(data_dir, MCP_HOLDER)? else { return Ok(None) };
    let indexer = open_writer_locked(data_dir, options, lock)?;
    Ok(Some(Tail::start(indexer, config.clone())?))
}
