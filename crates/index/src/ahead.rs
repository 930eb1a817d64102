//! Reading new transcripts ahead of the writer, on the other cores.
//!
//! In a catch-up, a file new to the index is read from its first byte whatever the writer decides
//! about the files before it, so worker threads (one per core, at most [`MAX_WORKERS`]) scan and
//! describe new files ahead of the writer, in the order the writer takes them. Each file's batches
//! go through a channel of its own that holds [`DEPTH`] batches: a worker that is a file ahead waits
//! for the writer, so memory stays bounded by the workers' count, not the files'.
//!
//! The writer takes a file's batches only if the file it opened is the one the worker read (same
//! device and inode) and it reads that file from the start. Otherwise (a hard link, a rename of a
//! file indexed earlier in the pass, a file replaced in between) it drops the channel, the worker's
//! next send fails, and the worker moves on to its next file.

use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::thread::Scope;

use crate::batch::{Batch, Reading, produce};
use crate::fingerprint::Hashes;
use crate::lines::{End, LineReader};
use crate::packing::Shared;
use scrollback_core::error::{Error, Result};
use scrollback_core::format::{FileContext, Format};

/// Worker threads at most, whatever the core count: the writer is the limit beyond that.
pub const MAX_WORKERS: usize = 4;
/// Batches a file's channel holds.
const DEPTH: usize = 2;

/// What a worker sends about one file, in this order.
pub(crate) enum Msg {
    /// The file the worker opened, and what its first line (or a document's header) said of its
    /// lines when the worker read it.
    Opened { dev: u64, inode: u64, context: Box<FileContext> },
    /// Lines read, in file order.
    Batch(Batch),
    /// Where reading stopped and the hashes of what was read, or why it failed.
    Done(Result<(End, Hashes)>),
}

/// The writer's end: one channel per file, taken in order.
pub(crate) struct ReadAhead {
    paths: Vec<PathBuf>,
    receivers: Vec<Option<Receiver<Msg>>>,
    next: usize,
}

impl ReadAhead {
    /// Starts workers in `scope` that read `files` (in the order the writer will ask for them, each
    /// with its format) from their first byte, packing stored lines with `packing`'s dictionary.
    pub fn start<'scope>(
        scope: &'scope Scope<'scope, '_>,
        files: Vec<(PathBuf, &'static dyn Format)>,
        packing: Shared,
    ) -> ReadAhead {
        let (senders, receivers): (Vec<_>, Vec<_>) = files.iter().map(|_| sync_channel::<Msg>(DEPTH)).unzip();
        let paths: Vec<PathBuf> = files.iter().map(|(path, _)| path.clone()).collect();
        let workers = std::thread::available_parallelism().map_or(1, |n| n.get()).clamp(1, MAX_WORKERS);
        let workers = workers.min(paths.len());
        if workers > 0 {
            let shared = std::sync::Arc::new(Work {
                files,
                packing,
                senders: senders.into_iter().map(|s| Mutex::new(Some(s))).collect(),
                next: AtomicUsize::new(0),
            });
            for n in 0..workers {
                let shared = shared.clone();
                let spawned = std::thread::Builder::new()
                    .name(format!("read-ahead-{n}"))
                    .spawn_scoped(scope, move || shared.run());
                if let Err(e) = spawned {
                    // Fewer workers only means less reading ahead; with none, the writer reads.
                    tracing::warn!("cannot start a reading thread: {e}");
                    break;
                }
            }
        }
        ReadAhead { paths, receivers: receivers.into_iter().map(Some).collect(), next: 0 }
    }

    /// The channel of `path`'s batches, if it is the next file read ahead.
    pub fn take(&mut self, path: &std::path::Path) -> Option<Receiver<Msg>> {
        if self.paths.get(self.next).is_some_and(|p| p == path) {
            self.next += 1;
            return self.receivers[self.next - 1].take();
        }
        None
    }
}

/// What the workers share: the files, one sender each, and the next file to take.
struct Work {
    files: Vec<(PathBuf, &'static dyn Format)>,
    packing: Shared,
    senders: Vec<Mutex<Option<SyncSender<Msg>>>>,
    next: AtomicUsize,
}

impl Work {
    fn run(&self) {
        let mut reader = LineReader::new();
        loop {
            let i = self.next.fetch_add(1, Ordering::Relaxed);
            let Some((path, format)) = self.files.get(i) else {
                return;
            };
            let Some(send) = self.senders[i].lock().unwrap_or_else(|e| e.into_inner()).take() else {
                continue;
            };
            let opened =
                scrollback_core::files::open_regular(path).and_then(|file| file.metadata().map(|meta| (file, meta)));
            let (file, meta) = match opened {
                Ok(opened) => opened,
                Err(e) => {
                    let _ = send.send(Msg::Done(Err(Error::io(path, e))));
                    continue;
                }
            };
            if scrollback_core::files::is_compressed(&file).unwrap_or(true) {
                // Decompressed by the writer, into its scratch file (see `files`).
                let _ =
                    send.send(Msg::Done(Err(Error::io(path, std::io::Error::other("compressed: read by the writer")))));
                continue;
            }
            let context = crate::lines::file_context(*format, &file, path);
            if send
                .send(Msg::Opened { dev: meta.dev(), inode: meta.ino(), context: Box::new(context.clone()) })
                .is_err()
            {
                continue;
            }
            let dictionary = self.packing.current();
            let reading = Reading { format: *format, context: &context, dictionary: dictionary.as_ref() };
            let end = produce(&mut reader, &file, path, reading, 0, 0, |batch| {
                // The writer dropped this file: stop reading it.
                send.send(Msg::Batch(batch)).map_err(|_| Error::io(path, std::io::Error::other("not wanted")))
            });
            // Hashed by the thread that read the bytes, right after: a rewrite in place between the
            // read and the writer's commit must not be recorded as what was indexed.
            let done = end.and_then(|end| Ok((end, Hashes::of(&file, path, &end)?)));
            let _ = send.send(Msg::Done(done));
        }
    }
}
