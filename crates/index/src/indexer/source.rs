//! Where a pass's batches come from: the read-ahead worker that already read a new file, a reading
//! thread beside the writer for a long read, or the writer's own thread for a short one. It reads and
//! parses only; every batch goes to the caller's `write`, which alone touches the index.

use std::sync::mpsc::Receiver;

use super::file::Opened;
use crate::ahead;
use crate::batch::{Batch, Reading, produce};
use crate::fingerprint::Hashes;
use crate::lines::{End, LineReader};
use scrollback_core::error::{Error, Result};
use scrollback_core::format::{FileContext, Format};
use scrollback_core::pack::Dictionary;

/// Reads of at least this many bytes are parsed on a second thread while this one writes.
const PIPELINE_BYTES: u64 = 256 << 10;

/// Where a pass's batches come from: the read-ahead worker that already read the file, a reading
/// thread beside this one for a long read, or this thread.
pub(super) struct Source<'a> {
    pub(super) reader: &'a mut LineReader,
    pub(super) opened: &'a Opened,
    pub(super) format: &'static dyn Format,
    pub(super) context: &'a FileContext,
    pub(super) start: u64,
    pub(super) lines_before: u64,
    pub(super) ahead: Option<Receiver<ahead::Msg>>,
    /// The dictionary stored lines are packed with, if the index has one.
    pub(super) dictionary: Option<&'a Dictionary>,
}

impl Source<'_> {
    /// Hands every batch to `write`; returns where reading stopped and, when the reader took them
    /// right after reading, the hashes of the bytes read.
    pub(super) fn read(self, write: &mut dyn FnMut(Batch) -> Result<()>) -> Result<(End, Option<Hashes>)> {
        let Source { reader, opened, format, context, start, lines_before, ahead, dictionary } = self;
        let (file, path) = (&opened.file, opened.path.as_path());
        if let Some(receive) = ahead {
            for msg in receive.iter() {
                match msg {
                    ahead::Msg::Batch(batch) => write(batch)?,
                    ahead::Msg::Done(done) => {
                        let (end, hashes) = done?;
                        return Ok((end, Some(hashes)));
                    }
                    ahead::Msg::Opened { .. } => {}
                }
            }
            return Err(Error::io(path, std::io::Error::other("reading ahead stopped")));
        }
        if opened.size.saturating_sub(start) < PIPELINE_BYTES {
            let reading = Reading { format, context, dictionary };
            return Ok((produce(reader, file, path, reading, start, lines_before, write)?, None));
        }
        // Two threads: this one writes to SQLite while a scoped one reads and parses ahead.
        std::thread::scope(|scope| {
            let (send, receive) = std::sync::mpsc::sync_channel::<Batch>(4);
            let producer = scope.spawn(move || {
                produce(reader, file, path, Reading { format, context, dictionary }, start, lines_before, |batch| {
                    // A closed channel means the writer failed; its error is the one reported.
                    send.send(batch).map_err(|_| Error::io(path, std::io::Error::other("writer stopped")))
                })
            });
            let written = receive.iter().try_for_each(&mut *write);
            drop(receive);
            let end = producer.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            Ok((written.and(end)?, None))
        })
    }
}
