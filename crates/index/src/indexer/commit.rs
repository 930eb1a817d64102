//! A pass's one transaction: the file's row opened (new, or its old rows deleted for a re-index) with
//! its vault link, the batches written as they are read (forgotten sessions' lines passed over), the
//! checkpoint and its hashes moved, then the commit and the events that announce it. Nothing is
//! written outside that transaction but a bulk load's full-text build, which a pass that sent it
//! lines and committed none stops (the load then rebuilds it); a pass that added no complete line
//! changes nothing.

use std::collections::HashMap;
use std::sync::mpsc::Receiver;

use rusqlite::{Connection, Savepoint, Transaction, TransactionBehavior, params};

use super::file::Opened;
use super::plan::Plan;
use super::source::Source;
use super::{Indexer, Progress, Summary};
use crate::ahead;
use crate::batch::Batch;
use crate::events::Event;
use crate::fingerprint::Hashes;
use crate::lines::End;
use crate::rows;
use crate::vault::{Linked, Vault};
use scrollback_core::error::Result;
use scrollback_core::format::Format;

/// What a pass did with the full-text build of a bulk load.
#[derive(Debug, Default)]
struct Fed {
    /// It sent the build lines.
    sent: bool,
    /// Its rows were committed.
    committed: bool,
}

/// The lines one pass committed for a session, for the event that announces them.
#[derive(Debug, Clone, Copy)]
struct LineRange {
    from: u64,
    to: u64,
}

impl Indexer {
    /// Reads what `plan` says and commits rows and checkpoint in one transaction: a re-index
    /// replaces the old rows atomically, and rows are written in batches as lines are read, so
    /// memory stays bounded however long the file.
    pub(super) fn read_and_commit(
        &mut self,
        opened: &Opened,
        plan: Plan,
        progress: &mut dyn Progress,
        ahead: Option<Receiver<ahead::Msg>>,
    ) -> Result<Summary> {
        let mut fed = Fed::default();
        let result = self.pass(opened, plan, progress, ahead, &mut fed);
        // The full-text build of a bulk load indexes lines as they are written, and cannot take
        // them back: a pass that sent it lines and then committed none (rolled back by an error, or
        // left for its next pass) would leave their words there under row ids that name no entry,
        // or another's once the ids are taken again. The load ends with a rebuild from `entries`.
        if fed.sent && !fed.committed && self.drop_fts_build() {
            tracing::info!(path = %opened.path.display(), "a pass the full-text build followed committed nothing: the full-text index is built at the end");
        }
        result
    }

    fn pass(
        &mut self,
        opened: &Opened,
        plan: Plan,
        progress: &mut dyn Progress,
        ahead: Option<Receiver<ahead::Msg>>,
        fed: &mut Fed,
    ) -> Result<Summary> {
        let path = &opened.path;
        let (start, lines_before) = match &plan {
            Plan::Append(row) => (row.checkpoint, row.lines),
            _ => (0, 0),
        };
        if matches!(plan, Plan::Reindex(..)) && self.drop_fts_build() {
            // Rows are about to be deleted, which the scratch full-text build does not follow.
            tracing::info!("a file is re-indexed during the bulk load: the full-text index is built at the end");
        }
        let format = self.format_of(path);
        let context = crate::lines::file_context(format, &opened.file, path);
        self.open_group()?;
        #[cfg(test)]
        if let Some(write) = self.between_context_and_lines.take() {
            write();
        }
        // What was read ahead is of use if it is this file, read from its start, and its first line
        // said what it says now.
        let ahead = ahead.filter(|_| matches!(plan, Plan::New)).filter(|receive| {
            matches!(receive.recv(), Ok(ahead::Msg::Opened { dev, inode, context: theirs })
                if (dev, inode) == (opened.dev, opened.inode) && *theirs == context)
        });
        let file_session = context.session.as_str();
        let dictionary = self.packing.current();
        let Indexer { conn, reader, load, vault, forgotten_sessions, .. } = self;
        let bulk = &load.is_some();
        let grouped = load.as_ref().is_some_and(|load| load.group.is_some());
        let mut fts = load.as_mut().and_then(|load| load.fts.as_mut());
        let tx = if grouped {
            PassTx::InGroup(conn.savepoint()?)
        } else {
            PassTx::Own(conn.transaction_with_behavior(TransactionBehavior::Immediate)?)
        };
        let file_id = start_pass(&tx, &plan, opened, file_session, format, *bulk, vault)?;
        let mut summary = Summary::default();
        let mut touched: HashMap<String, LineRange> = HashMap::new();
        let mut shown = rows::Shown::new();
        let mut write = |mut batch: Batch| -> Result<()> {
            progress.advance(batch.advance);
            summary.bytes += batch.advance;
            if !forgotten_sessions.is_empty() {
                crate::forget::pass_over(&tx, file_id, file_session, forgotten_sessions, &mut batch.lines)?;
            }
            for d in &batch.lines {
                let range =
                    touched.entry(d.session(file_session).to_owned()).or_insert(LineRange { from: d.line, to: d.line });
                (range.from, range.to) = (range.from.min(d.line), range.to.max(d.line));
            }
            let file = rows::FileRows {
                id: file_id,
                path,
                session: file_session,
                format,
                bulk: *bulk,
                dictionary: dictionary.as_ref(),
            };
            let written = rows::write_entries(&tx, file, &batch.lines, fts.is_some(), &mut shown)?;
            summary.lines += written.lines;
            summary.media += written.media;
            summary.invalid += written.invalid;
            if let Some(fts) = &mut fts {
                // The lines go to the full-text thread, which also frees them, off this one. A
                // stopped build is noticed, and replaced by a rebuild, at the end of the load.
                fts.add(written.ids, batch.lines);
                fed.sent = true;
            }
            Ok(())
        };
        let source = Source {
            reader,
            opened,
            format,
            context: &context,
            start,
            lines_before,
            ahead,
            dictionary: dictionary.as_ref(),
        };
        let (end, read_hashes) = source.read(&mut write)?;
        if crate::lines::file_context(format, &opened.file, path) != context {
            // Written again while it was read (a document's header, or the first line, is not what
            // it was when the pass began): the lines read may be the new file's, described with the
            // old one's session and title. Nothing is committed; the write's own event brings the
            // next pass, which reads it again.
            tracing::info!(path = %path.display(), "written again while it was read: left for its next pass");
            return Ok(Summary { bytes: summary.bytes, ..Summary::default() });
        }
        let document = opened.read_whole(format);
        if end.checkpoint == start && (matches!(plan, Plan::Append(_)) || document) {
            // Nothing complete was added (or a document is being written): leave the file as it is.
            return Ok(Summary { bytes: summary.bytes, ..Summary::default() });
        }
        let hashes = match read_hashes {
            // A document is rewritten anywhere: its fingerprint covers all of it.
            _ if document => Hashes::of_document(&opened.file, path, &end)?,
            Some(hashes) => hashes,
            None => Hashes::of(&opened.file, path, &end)?,
        };
        record_checkpoint(&tx, file_id, opened, &end, &hashes)?;
        tx.commit()?;
        fed.committed = true;
        if self.packing.will_train(summary.lines) {
            self.close_group()?;
        }
        self.grouped(summary.bytes)?;
        self.packing.stored(&self.conn, summary.lines)?;
        self.remember_partial(opened, &end)?;
        let reset = matches!(plan, Plan::Reindex(..));
        for (session_id, LineRange { from, to }) in touched {
            self.announce(Event::EntriesAppended {
                session_id,
                file_id,
                from_line: from,
                to_line: to,
                replaced: reset,
            });
        }
        summary.files = 1;
        summary.reindexed = reset as u64;
        tracing::debug!(path = %path.display(), from = start, to = end.checkpoint, lines = summary.lines, "indexed");
        Ok(summary)
    }
}

/// A pass's transaction: its own, or, in a bulk load, a savepoint in the group's ([`super::Group`]).
enum PassTx<'c> {
    Own(Transaction<'c>),
    InGroup(Savepoint<'c>),
}

impl std::ops::Deref for PassTx<'_> {
    type Target = Connection;

    fn deref(&self) -> &Connection {
        match self {
            PassTx::Own(tx) => tx,
            PassTx::InGroup(sp) => sp,
        }
    }
}

impl PassTx<'_> {
    fn commit(self) -> rusqlite::Result<()> {
        match self {
            PassTx::Own(tx) => tx.commit(),
            PassTx::InGroup(sp) => sp.commit(),
        }
    }
}

/// Opens a pass in `tx`: the file's row (a new one, or the old one with its rows deleted for a
/// re-index), and its vault link, made before the rows' first commit and again whenever the file is
/// read from its start (it may be another inode now, which the old link no longer is). The row's id.
fn start_pass(
    tx: &Connection,
    plan: &Plan,
    opened: &Opened,
    file_session: &str,
    format: &dyn Format,
    bulk: bool,
    vault: &mut Vault,
) -> Result<i64> {
    let file_id = match plan {
        Plan::New => insert_file_row(tx, opened, file_session, format)?,
        Plan::Reindex(row) => {
            rows::delete_file_rows(tx, row.id, bulk)?;
            tx.execute("UPDATE files SET generation = generation + 1 WHERE id = ?1", [row.id])?;
            row.id
        }
        Plan::Append(row) => row.id,
        Plan::Skip | Plan::SettleMtime(..) => unreachable!("a skipped file is not read"),
    };
    if matches!(plan, Plan::New | Plan::Reindex(..)) {
        // A session of a database has no file to link: the vault keeps what was rendered.
        let render = opened.render.lock().unwrap_or_else(std::sync::PoisonError::into_inner).take();
        match render {
            Some(render) => vault.keep(tx, file_id, &opened.path, (opened.dev, opened.inode), render)?,
            None if opened.rendered => {}
            None => vault.link(tx, file_id, &Linked { path: &opened.path, dev: opened.dev, inode: opened.inode })?,
        }
    }
    Ok(file_id)
}

/// A new file's row, before its lines: the checkpoint and hashes are set when they commit.
fn insert_file_row(tx: &Connection, opened: &Opened, file_session: &str, format: &dyn Format) -> Result<i64> {
    // Cached, as every statement of a pass is: prepared each time, the pass's few per-file
    // statements were a twentieth of the writer's time in a bulk load.
    tx.prepare_cached(
        "INSERT INTO files (path, session_id, dev, inode, fingerprint, fingerprint_len, tail_hash,
                            size, mtime_ns, checkpoint, lines, state, indexed_at, agent)
         VALUES (?1, ?2, ?3, ?4, '', 0, '', 0, 0, 0, 0, 'live', strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), ?5)",
    )?
    .execute(params![opened.path_str, file_session, opened.dev as i64, opened.inode as i64, format.name()])?;
    Ok(tx.last_insert_rowid())
}

/// Moves a file's checkpoint to `end`, with the hashes of the bytes read, in the rows' transaction.
fn record_checkpoint(tx: &Connection, file_id: i64, opened: &Opened, end: &End, hashes: &Hashes) -> Result<()> {
    tx.prepare_cached(
        "UPDATE files SET dev = ?2, inode = ?3, fingerprint = ?4, fingerprint_len = ?5, tail_hash = ?6,
                          size = ?7, checkpoint = ?8, lines = ?9, mtime_ns = ?10,
                          indexed_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
         WHERE id = ?1",
    )?
    .execute(params![
        file_id,
        opened.dev as i64,
        opened.inode as i64,
        hashes.fingerprint,
        hashes.fingerprint_len as i64,
        hashes.tail,
        opened.recorded_size(end) as i64,
        end.checkpoint as i64,
        end.lines as i64,
        opened.settled_mtime(),
    ])?;
    Ok(())
}
