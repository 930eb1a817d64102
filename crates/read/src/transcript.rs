//! A session's transcripts as a store holds them, for an export of their own lines (JSONL): its
//! files in the order an export writes them ([`Store::export_files`]), each with the transcript it
//! is read from, and its lines a chunk at a time with their stored copies and their payloads' rows
//! ([`Store::export_lines`]); and [`Lend`], how an export (the render crate's) reads a store one
//! question at a time.

use rusqlite::Connection;

use crate::index::MEDIA_COLUMNS;
use crate::media::MediaRecord;
use crate::store::Store;
use scrollback_core::error::Result;

/// A store checked out for as long as it lives (a pooled connection, a hub's connection), given
/// back when it drops: what a [`Lend`] hands out ([`Lent::store`]).
pub struct Lent<'a>(Box<dyn AsStore + 'a>);

impl<'a> Lent<'a> {
    /// The guard over `held`, which gives its store back when dropped.
    pub fn new(held: impl AsStore + 'a) -> Lent<'a> {
        Lent(Box::new(held))
    }

    /// The store, while the guard lives.
    pub fn store(&self) -> &dyn Store {
        self.0.store()
    }
}

/// What a [`Lent`] holds: something that is, or has, a store.
pub trait AsStore {
    /// The store.
    fn store(&self) -> &dyn Store;
}

impl<S: Store> AsStore for &S {
    fn store(&self) -> &dyn Store {
        *self
    }
}

/// Where an export reads the index: a store lent for one question at a time, so that a server's
/// pooled reader is given back before what it read is written.
pub trait Lend {
    /// A store (a pooled connection), given back when the guard drops.
    fn lend(&self) -> Result<Lent<'_>>;
}

impl<S: Store> Lend for S {
    fn lend(&self) -> Result<Lent<'_>> {
        Ok(Lent::new(self))
    }
}

/// Lines of a transcript read a chunk at a time: where they are, their stored copies and their
/// payloads' rows.
pub const LINES: i64 = 256;

/// One line of a session's transcript, as the store has it.
#[derive(Debug, Clone)]
pub struct Line {
    /// Its byte offset in its file.
    pub offset: i64,
    /// Its length, its terminator left out.
    pub length: i64,
    /// The stored line (each payload replaced by the marker); `None` for a line not indexed.
    pub stored: Option<String>,
    /// Its payloads, in file order.
    pub media: Vec<MediaRecord>,
}

/// One file of a session, as a JSONL export reads it.
#[derive(Debug, Clone)]
pub struct ExportFile {
    /// The file's row id in its index.
    pub id: i64,
    /// On a team's hub: the host whose file it is.
    pub host: Option<String>,
    /// Where its lines are read from; `None` for a store that holds no transcript (a team's hub).
    pub transcript: Option<Transcript>,
}

/// A transcript a JSONL export reads: the file the index read, by its device and inode.
#[derive(Debug, Clone)]
pub struct Transcript {
    /// The transcript (its vault link, where it is gone).
    pub path: String,
    /// Its vault link, to read where the transcript was replaced under its name.
    pub link: Option<String>,
    /// The device the index read it on.
    pub dev: i64,
    /// Its inode.
    pub inode: i64,
}

/// Up to [`LINES`] lines of `session_id` in an index's file `file_id` past byte `after`, with their
/// payloads ([`Store::export_lines`] of an index).
pub(crate) fn lines_after(conn: &Connection, file_id: i64, session_id: &str, after: i64) -> Result<Vec<Line>> {
    let mut stmt = conn.prepare_cached(
        "SELECT id, offset, length, stored_line(stripped) FROM entries
         WHERE file_id = ?1 AND session_id = ?2 AND offset > ?3 ORDER BY offset LIMIT ?4",
    )?;
    let mut ids = Vec::new();
    let mut lines: Vec<Line> = stmt
        .query_map(rusqlite::params![file_id, session_id, after, LINES], |r| {
            ids.push(r.get::<_, i64>(0)?);
            Ok(Line { offset: r.get(1)?, length: r.get(2)?, stored: r.get(3)?, media: Vec::new() })
        })?
        .collect::<rusqlite::Result<_>>()?;
    let (Some(from), Some(to)) = (ids.iter().min(), ids.iter().max()) else { return Ok(lines) };
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {MEDIA_COLUMNS}
         FROM media m JOIN entries e ON e.id = m.entry_id JOIN files f ON f.id = e.file_id
         WHERE m.entry_id BETWEEN ?1 AND ?2 AND e.file_id = ?3 AND e.session_id = ?4 ORDER BY m.offset"
    ))?;
    let media = stmt
        .query_map(rusqlite::params![from, to, file_id, session_id], crate::index::media_record)?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    let at: std::collections::HashMap<i64, usize> = lines.iter().enumerate().map(|(i, l)| (l.offset, i)).collect();
    for m in media {
        if let Some(&i) = at.get(&(m.line_offset as i64)) {
            lines[i].media.push(m);
        }
    }
    Ok(lines)
}

/// An index's files of a session, in the order a JSONL export writes them ([`Store::export_files`]
/// of an index): each with its transcript, or its vault link where the transcript is gone.
pub(crate) fn index_files(conn: &Connection, session_id: &str) -> Result<Vec<ExportFile>> {
    let mut files = conn.prepare(
        "SELECT f.id, f.path, f.vault, f.state, f.dev, f.inode FROM files f
         WHERE f.id IN (SELECT file_id FROM entries WHERE session_id = ?1)
         ORDER BY (SELECT min(sort_file) FROM entries WHERE file_id = f.id AND session_id = ?1), f.id",
    )?;
    let rows = files
        .query_map([session_id], |r| {
            let (path, vault, state): (String, Option<String>, String) = (r.get(1)?, r.get(2)?, r.get(3)?);
            let (path, link) = match (vault, state.as_str()) {
                (Some(vault), "gone") => (vault, None),
                (vault, _) => (path, vault),
            };
            Ok(ExportFile {
                id: r.get(0)?,
                host: None,
                transcript: Some(Transcript { path, link, dev: r.get(4)?, inode: r.get(5)? }),
            })
        })?
        .collect::<rusqlite::Result<_>>()?;
    Ok(rows)
}
