//! Complete lines of a file, described and handed on in batches of bounded size.
//!
//! [`produce`] is the one way lines go from a file to the writer: the writer's own thread, its
//! parsing helper and the read-ahead workers all call it. It also does, off the writer where it
//! can, what the writer would otherwise do per line: packing the stored line, and finding its tool
//! calls and results for the overview. A batch holds at most [`BATCH_LINES`]
//! lines or [`BATCH_BYTES`] stored bytes, which bounds what a reading thread holds ahead of the
//! writer. Nothing here touches SQLite.

use std::fs::File;
use std::path::Path;

use crate::entry::{self, Described};
use crate::lines::{End, Line, LineReader};
use crate::{packing, stats};
use scrollback_core::error::Result;
use scrollback_core::format::{FileContext, Format};
use scrollback_core::pack::Dictionary;

/// Lines written to SQLite at a time within a file's transaction.
pub const BATCH_LINES: usize = 256;
/// Stored bytes written to SQLite at a time within a file's transaction.
pub const BATCH_BYTES: usize = 2 << 20;

/// Lines read and described, ready to be written.
#[derive(Debug, Default)]
pub(crate) struct Batch {
    /// The lines, in file order.
    pub lines: Vec<Described>,
    /// Transcript bytes they take, terminators included.
    pub advance: u64,
}

/// How a file's lines are described: its format, and what its first line says of all of them.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Reading<'a> {
    /// The file's format.
    pub format: &'static dyn Format,
    /// Its context ([`Format::file_context`]).
    pub context: &'a FileContext,
    /// The dictionary stored lines are packed with ahead of the writer (`None`: none yet).
    pub dictionary: Option<&'a Dictionary>,
}

/// Reads complete lines of `file` from `start` (after `lines_before` lines), as `reading` says,
/// and hands them to `emit` in batches; returns where reading stopped.
pub(crate) fn produce(
    reader: &mut LineReader,
    file: &File,
    path: &Path,
    reading: Reading<'_>,
    start: u64,
    lines_before: u64,
    mut emit: impl FnMut(Batch) -> Result<()>,
) -> Result<End> {
    let mut batch = Batch::default();
    let mut batch_bytes = 0usize;
    let Reading { format, context, dictionary } = reading;
    let on_line = |line: Line<'_>| {
        batch.advance += line.advance;
        let mut described = entry::describe(line, format, context);
        if let entry::Body::Stored(stored) = &mut described.body {
            stored.packed = packing::pack_ahead(dictionary, &stored.stripped);
            if stored.meta.tools.is_some() || stored.meta.tool_text.is_some() {
                stored.events = Some(stats::events_of(format, &stored.stripped));
            }
        }
        batch_bytes += described.stored().map_or(0, |s| s.stripped.len());
        batch.lines.push(described);
        if batch.lines.len() >= BATCH_LINES || batch_bytes >= BATCH_BYTES {
            batch_bytes = 0;
            emit(std::mem::take(&mut batch))?;
        }
        Ok(())
    };
    let end =
        match format.document_records(path) {
            // A document is read whole, whatever the start; while it is incomplete, nothing is.
            Some(records) => reader
                .read_document(file, path, format.block_places(), records, on_line)?
                .unwrap_or(End { checkpoint: 0, lines: 0, size: 0 }),
            None => reader.read(file, path, format.block_places(), start, lines_before, on_line)?,
        };
    if !batch.lines.is_empty() {
        emit(batch)?;
    }
    Ok(end)
}
