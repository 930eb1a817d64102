//! What a pass over one file reads ([`Plan`]): nothing (unchanged, or only its incomplete last line
//! grew), a settled modification time to record, a new file from its start, a known file's new bytes
//! from its checkpoint, or a known file again from its start ([`Reset`] says why). It decides from
//! the file's identity, its fingerprint and the bytes just before the checkpoint; it never writes the
//! index, and remembers a long incomplete last line ([`Partial`]) in memory only.

use super::Indexer;
use super::file::{FileRow, Opened};
use crate::fingerprint::{self, hash_range, partial_window, tail_hash};
use crate::lines::End;
use scrollback_core::error::Result;

/// Partial lines shorter than this are simply read again; the memo is for long ones.
const PARTIAL_MEMO_MIN: u64 = 64 << 10;

/// What a pass over one file reads.
#[derive(Debug)]
pub(super) enum Plan {
    /// Nothing to read: unchanged, or only its incomplete last line grew.
    Skip,
    /// Nothing to read, and its modification time has settled since it was recorded: record it
    /// (`files.id`, the settled mtime, the size), so that later rescans can trust it instead of
    /// reading the file.
    SettleMtime(i64, i64, u64),
    /// A file new to the index, from its start.
    New,
    /// New bytes of a known file, from its checkpoint.
    Append(FileRow),
    /// A known file again from its start (why is logged); its rows are replaced.
    Reindex(FileRow),
}

/// Why a known file is read again from its start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reset {
    /// Another inode is at its path.
    Replaced,
    /// It is shorter than its checkpoint.
    Truncated,
    /// Its first bytes changed.
    StartChanged,
    /// The bytes just before its checkpoint changed.
    TailChanged,
    /// A recorded payload no longer matches its bytes (an edit the hashes above do not cover).
    PayloadChanged,
    /// A JSON document its agent writes whole changed size (it is never appended to).
    Rewritten,
}

impl std::fmt::Display for Reset {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Reset::Replaced => "replaced by another file",
            Reset::Truncated => "truncated",
            Reset::StartChanged => "rewritten (its first bytes changed)",
            Reset::TailChanged => "rewritten (the bytes before the checkpoint changed)",
            Reset::PayloadChanged => "rewritten (a recorded payload no longer matches its bytes)",
            Reset::Rewritten => "a document written again whole",
        })
    }
}

/// A file's incomplete last line, as far as it was searched for its newline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Partial {
    dev: u64,
    inode: u64,
    checkpoint: u64,
    no_newline_until: u64,
    /// [`partial_window`] of `checkpoint..no_newline_until`: the partial line was not edited in
    /// place if it is unchanged.
    window: [u8; 32],
}

impl Indexer {
    /// Decides what a pass over `opened` reads (it writes nothing; a long incomplete last line is
    /// remembered, in memory, on the way).
    pub(super) fn plan(&mut self, opened: &Opened, row: Option<FileRow>) -> Result<Plan> {
        let Opened { path, file, dev, inode, size, .. } = opened;
        let (dev, inode, size) = (*dev, *inode, *size);
        let Some(row) = row else { return Ok(Plan::New) };
        if opened.unchanged_since(&row) && !self.changed.contains(path) {
            // Not touched since it was last read: nothing to hash, nothing to read.
            return Ok(Plan::Skip);
        }
        let reset = if (row.dev, row.inode) != (dev, inode) {
            Some(Reset::Replaced)
        } else if self.changed.contains(path) {
            Some(Reset::PayloadChanged)
        } else if size < row.checkpoint {
            Some(Reset::Truncated)
        } else if hash_range(file, path, 0, row.fingerprint_len)? != row.fingerprint {
            Some(Reset::StartChanged)
        } else if tail_hash(file, path, row.checkpoint)? != row.tail_hash {
            Some(Reset::TailChanged)
        } else {
            None
        };
        let document = opened.read_whole(self.format_of(path));
        let reset = reset.or((document && size != row.checkpoint).then_some(Reset::Rewritten));
        if let Some(reset) = reset {
            tracing::info!(path = %path.display(), "re-indexing from the start: {reset}");
            return Ok(Plan::Reindex(row));
        }
        if size == row.checkpoint {
            // Unchanged, as its bytes show. Once its mtime has settled, record it, so that later
            // rescans can trust the mtime instead of reading the file.
            let settled = opened.settled_mtime();
            if (row.mtime_ns != settled || row.size != opened.disk_size) && settled != 0 {
                return Ok(Plan::SettleMtime(row.id, settled, opened.disk_size));
            }
            return Ok(Plan::Skip);
        }
        if let Some(known) = self.partial.get(path).copied()
            && (known.dev, known.inode, known.checkpoint) == (dev, inode, row.checkpoint)
            && known.no_newline_until <= size
            && partial_window(file, path, known.checkpoint, known.no_newline_until)? == known.window
            && !fingerprint::has_newline(file, path, known.no_newline_until, size)?
        {
            // Only the incomplete last line grew, and still has no newline.
            let window = partial_window(file, path, known.checkpoint, size)?;
            self.partial.insert(path.clone(), Partial { no_newline_until: size, window, ..known });
            return Ok(Plan::Skip);
        }
        Ok(Plan::Append(row))
    }

    /// Remembers a long incomplete last line, so that the next pass looks only at its new bytes.
    pub(super) fn remember_partial(&mut self, opened: &Opened, end: &End) -> Result<()> {
        if end.size - end.checkpoint >= PARTIAL_MEMO_MIN {
            let partial = Partial {
                dev: opened.dev,
                inode: opened.inode,
                checkpoint: end.checkpoint,
                no_newline_until: end.size,
                window: partial_window(&opened.file, &opened.path, end.checkpoint, end.size)?,
            };
            self.partial.insert(opened.path.clone(), partial);
        } else {
            self.partial.remove(&opened.path);
        }
        Ok(())
    }
}
