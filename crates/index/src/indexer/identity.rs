//! File identity: which row of the index a path new to it belongs to. A file is known by its device
//! and inode and the blake3 of its first bytes, never by its path alone: a hard link is indexed once,
//! under its first name; a renamed transcript, or one back after it was seen gone, takes its rows
//! with it; a compressed transcript and its decompressed twin are one. An inode freed by a deleted
//! transcript and handed to an unrelated file never takes over the deleted one's history.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use rusqlite::{OptionalExtension, TransactionBehavior, params};

use super::Indexer;
use super::file::{FileRow, Opened};
use crate::fingerprint::{hash_range, tail_hash};
use crate::roots;
use crate::tree;
use crate::vault::Linked;
use scrollback_core::error::Result;

/// What a path new to the index is ([`Indexer::identify`]).
pub(super) enum Identified {
    /// Its row, moved here (renamed, back, or its twin's), or none: a file new to the index.
    Row(Option<FileRow>),
    /// Another name of a file indexed under this one: index it there, once.
    HardLink(String),
    /// Shorter than its twin's row while the twin is still there: being written, left for the next
    /// pass.
    Unfinished,
}

impl Indexer {
    /// What a path new to the index is, by its identity and first bytes: another name (a hard link)
    /// of a file indexed under its first one; a transcript renamed, or back after it was seen gone,
    /// whose row follows it here; its compressed (or decompressed) twin's, whose row moves here; or
    /// a file new to the index.
    pub(super) fn identify(&mut self, opened: &Opened) -> Result<Identified> {
        match self.same_file_elsewhere(opened)? {
            Elsewhere::HardLink(other) => {
                // One file, indexed once, under the path it was first found at.
                tracing::debug!(path = %opened.path.display(), other = %other, "a hard link to a file already indexed");
                Ok(Identified::HardLink(other))
            }
            Elsewhere::Renamed(id) => {
                tracing::info!(path = %opened.path.display(), "transcript was renamed; its rows follow it");
                self.conn.execute("UPDATE files SET path = ?2 WHERE id = ?1", params![id, opened.path_str])?;
                Ok(Identified::Row(self.file_row(&opened.path_str)?))
            }
            Elsewhere::Returned(id) => {
                tracing::info!(path = %opened.path.display(), "transcript is back; it takes its old rows back");
                self.conn.execute(
                    "UPDATE files SET path = ?2, state = 'live', gone_at = NULL WHERE id = ?1",
                    params![id, opened.path_str],
                )?;
                Ok(Identified::Row(self.file_row(&opened.path_str)?))
            }
            Elsewhere::Nowhere => match self.compressed_twin_of(opened)? {
                Twin::Moved(id) => {
                    let row = self.file_row(&opened.path_str)?;
                    tracing::info!(path = %opened.path.display(), file_id = id, compressed = opened.compressed,
                        "the same transcript, compressed or decompressed; its rows follow it");
                    Ok(Identified::Row(row))
                }
                Twin::Unfinished => Ok(Identified::Unfinished),
                Twin::None => Ok(Identified::Row(None)),
            },
        }
    }

    /// Another name, under the same root, of the live file whose row is at `path` (now removed): a
    /// hard link. With the vault on, its link's count of names says first whether there can be one.
    pub(super) fn other_name(&self, path: &Path) -> Result<Option<PathBuf>> {
        let Some(path_str) = path.to_str() else { return Ok(None) };
        let row: Option<(i64, i64, Option<String>)> = self
            .conn
            .query_row("SELECT dev, inode, vault FROM files WHERE path = ?1 AND state = 'live'", [path_str], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?))
            })
            .optional()?;
        let Some((dev, inode, vault)) = row else { return Ok(None) };
        if let Some(meta) = vault.and_then(|v| std::fs::symlink_metadata(v).ok())
            && (meta.dev(), meta.ino()) == (dev as u64, inode as u64)
            && meta.nlink() < 2
        {
            return Ok(None);
        }
        let Some(root) = roots::root_of(&self.roots, path) else { return Ok(None) };
        Ok(tree::discover(&root.dir, root.format)
            .into_iter()
            .find(|f| (f.dev, f.inode) == (dev as u64, inode as u64) && f.path != path && !self.vault.holds(&f.path))
            .map(|f| f.path))
    }

    /// Whether `opened`, a path new to the index, is a transcript it knows under its compressed
    /// twin's name (as its format pairs names,
    /// [`Format::twin`](scrollback_core::format::Format::twin): Codex's `X.jsonl` for
    /// `X.jsonl.zst`, and back): a row at that path, live or gone (or one at this path marked gone,
    /// when the transcript went and came back while nobody looked), whose recorded bytes this
    /// file's (decompressed) bytes begin with, checked as a pass checks a known file (the same
    /// first bytes, and the same bytes before the checkpoint). The row then moves to this path and
    /// identity, with a vault link to this file, in one transaction, and nothing is read again.
    ///
    /// A file shorter than that checkpoint while its twin still exists is taken as being written
    /// (the agent writes each name whole, but a copy by hand need not): it is left for the next pass,
    /// and read as a transcript of its own only if it still differs once its twin is gone.
    fn compressed_twin_of(&mut self, opened: &Opened) -> Result<Twin> {
        // A format with no twins still looks for this name's own row marked gone.
        let twin_path = self.format_of(&opened.path).twin(&opened.path).map(|t| t.path);
        let twin = match &twin_path {
            Some(t) => match t.to_str() {
                Some(t) => Some(t.to_owned()),
                None => return Ok(Twin::None),
            },
            None => None,
        };
        // The twin's row; or this name's own row marked gone, when the transcript went to its twin
        // and came back before the row could follow it (the server was down meanwhile).
        // Three lookups of an index each (`files_live_path`, `files_gone_path`): asked for every
        // file new to the index, a scan of `files` here made a cold index quadratic in its files.
        let mut stmt = self.conn.prepare_cached(
            "SELECT id, fingerprint, fingerprint_len, tail_hash, checkpoint, 1 AS live FROM files
             WHERE path = ?1 AND state = 'live'
             UNION ALL
             SELECT id, fingerprint, fingerprint_len, tail_hash, checkpoint, 0 FROM files
             WHERE (path = ?1 OR path = ?2) AND state = 'gone'
             ORDER BY live DESC, id DESC",
        )?;
        let candidates: Vec<(i64, String, i64, String, i64)> = stmt
            .query_map(params![twin, opened.path_str], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)))?
            .collect::<rusqlite::Result<_>>()?;
        drop(stmt);
        let (file, path) = (&opened.file, &opened.path);
        let mut same = None;
        for (id, fingerprint, fingerprint_len, tail, checkpoint) in candidates {
            // Its twin still there, or gone just now while this file grew past what was opened:
            // being written.
            let grew = || std::fs::metadata(path).is_ok_and(|m| m.len() != opened.disk_size);
            if opened.size < checkpoint as u64 && (twin_path.as_ref().is_some_and(|t| t.is_file()) || grew()) {
                tracing::debug!(path = %path.display(), twin = ?twin, "shorter than its twin: still being written");
                return Ok(Twin::Unfinished);
            }
            if opened.size >= checkpoint as u64
                && hash_range(file, path, 0, fingerprint_len as u64)? == fingerprint
                && tail_hash(file, path, checkpoint as u64)? == tail
            {
                same = Some(id);
                break;
            }
        }
        let Some(id) = same else { return Ok(Twin::None) };
        // (Its own transaction, which a bulk load's group must not hold open.)
        self.close_group()?;
        let Indexer { conn, vault, partial, .. } = self;
        if let Some(twin) = &twin_path {
            partial.remove(twin.as_path());
        }
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        tx.execute(
            "UPDATE files SET path = ?2, dev = ?3, inode = ?4, state = 'live', gone_at = NULL WHERE id = ?1",
            params![id, opened.path_str, opened.dev as i64, opened.inode as i64],
        )?;
        vault.link(&tx, id, &Linked { path, dev: opened.dev, inode: opened.inode })?;
        tx.commit()?;
        Ok(Twin::Moved(id))
    }

    /// Whether a path new to the index is a file it already knows under another name.
    ///
    /// A row whose path no longer holds this inode is taken as renamed only if this file still starts
    /// with the bytes that row fingerprinted: an inode freed by a deleted transcript and handed to an
    /// unrelated new file must not take over (and re-index away) the deleted one's history.
    fn same_file_elsewhere(&self, opened: &Opened) -> Result<Elsewhere> {
        let Opened { file, path, path_str, dev, inode, .. } = opened;
        let mut stmt = self.conn.prepare_cached(
            "SELECT id, path, fingerprint, fingerprint_len FROM files
             WHERE dev = ?1 AND inode = ?2 AND state = 'live' AND path != ?3",
        )?;
        let others: Vec<(i64, String, String, i64)> = stmt
            .query_map(params![*dev as i64, *inode as i64, path_str], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
            })?
            .collect::<rusqlite::Result<_>>()?;
        let mut renamed = None;
        for (id, other, fingerprint, fingerprint_len) in others {
            match std::fs::metadata(&other) {
                Ok(meta) if (meta.dev(), meta.ino()) == (*dev, *inode) => {
                    return Ok(Elsewhere::HardLink(other));
                }
                _ if renamed.is_none() && hash_range(file, path, 0, fingerprint_len as u64)? == fingerprint => {
                    renamed = Some(id);
                }
                _ => {}
            }
        }
        if let Some(id) = renamed {
            return Ok(Elsewhere::Renamed(id));
        }
        // A transcript seen gone that came back (moved away and back, its directory unreadable for
        // a moment): the same file, by identity and first bytes, takes its old row back rather
        // than starting a second copy of its history beside it.
        let mut stmt = self.conn.prepare_cached(
            "SELECT id, fingerprint, fingerprint_len FROM files
             WHERE dev = ?1 AND inode = ?2 AND state = 'gone' ORDER BY id DESC",
        )?;
        let gone: Vec<(i64, String, i64)> = stmt
            .query_map(params![*dev as i64, *inode as i64], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
            .collect::<rusqlite::Result<_>>()?;
        for (id, fingerprint, fingerprint_len) in gone {
            if hash_range(file, path, 0, fingerprint_len as u64)? == fingerprint {
                return Ok(Elsewhere::Returned(id));
            }
        }
        Ok(Elsewhere::Nowhere)
    }
}

/// A new path's file and the row of its compressed twin's name.
enum Twin {
    /// The same transcript: the row moved to it.
    Moved(i64),
    /// Shorter than what the row read, while the twin is still there: being written.
    Unfinished,
    /// No such row, or another transcript.
    None,
}

/// A new path's file, known under another path.
enum Elsewhere {
    /// The other path is the same file still (a hard link): index it once.
    HardLink(String),
    /// The other path is no longer this file: it was renamed, and its row moves.
    Renamed(i64),
    /// A row marked gone is this file, back: the row is live again, at this path.
    Returned(i64),
    Nowhere,
}
