//! One transcript as a pass sees it: [`Opened`], the file opened once with what its metadata said
//! (identity, sizes, modification time; a compressed one decompressed once into a scratch file), and
//! [`FileRow`], what the index's `files` row knows of it. Nothing here decides what to read or writes
//! a row.

use std::collections::HashMap;
use std::fs::File;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use rusqlite::OptionalExtension;

use super::Indexer;
use crate::fingerprint::settled_mtime;
use crate::lines::End;
use scrollback_core::error::{Error, Result};
use scrollback_core::files::ScratchLimit;
use scrollback_core::format::Format;

/// What the index knows of one live file.
#[derive(Debug, Clone)]
pub(super) struct FileRow {
    pub(super) id: i64,
    pub(super) dev: u64,
    pub(super) inode: u64,
    pub(super) fingerprint: String,
    pub(super) fingerprint_len: u64,
    pub(super) tail_hash: String,
    pub(super) size: u64,
    pub(super) mtime_ns: i64,
    pub(super) checkpoint: u64,
    pub(super) lines: u64,
}

/// A transcript opened for a pass, with what its metadata said at that moment.
pub(super) struct Opened {
    pub(super) path: PathBuf,
    pub(super) path_str: String,
    /// What is read: the file, or for a compressed one its decompressed bytes ([`Opened::materialize`]).
    pub(super) file: File,
    pub(super) dev: u64,
    pub(super) inode: u64,
    /// The bytes there are to read: the file's size, or its decompressed size once materialized.
    pub(super) size: u64,
    /// The file's size on disk, which its row records to notice a change without reading it.
    pub(super) disk_size: u64,
    pub(super) mtime_ns: i64,
    /// zstd-compressed (see [`scrollback_core::files`]).
    pub(super) compressed: bool,
    /// `file` holds the decompressed bytes.
    pub(super) materialized: bool,
    /// A session of an agent's database, rendered from its rows (see `database`): `mtime_ns` is
    /// its stamp, trusted at once, and it is read whole each time its rows change.
    pub(super) rendered: bool,
    /// A rendered session's file in the vault, which a pass that reads it keeps
    /// ([`crate::vault::Vault::keep`]); removed if none does.
    pub(super) render: std::sync::Mutex<Option<tempfile::TempPath>>,
}

impl Opened {
    pub(super) fn open(path: &Path) -> Result<Opened> {
        let path_str = path
            .to_str()
            .ok_or_else(|| Error::io(path, std::io::Error::new(std::io::ErrorKind::InvalidData, "path is not UTF-8")))?
            .to_owned();
        let file = scrollback_core::files::open_regular(path).map_err(|e| Error::io(path, e))?;
        let meta = file.metadata().map_err(|e| Error::io(path, e))?;
        let mtime_ns = meta.mtime().saturating_mul(1_000_000_000).saturating_add(meta.mtime_nsec());
        let compressed = scrollback_core::files::is_compressed(&file).map_err(|e| Error::io(path, e))?;
        Ok(Opened {
            path: path.to_owned(),
            path_str,
            file,
            dev: meta.dev(),
            inode: meta.ino(),
            size: meta.len(),
            disk_size: meta.len(),
            mtime_ns,
            compressed,
            materialized: !compressed,
            rendered: false,
            render: std::sync::Mutex::new(None),
        })
    }

    /// A session of the database of identity `dev`, `inode`, rendered into `file` (at `render` in the
    /// vault, where it is on), whose rows have the stamp `stamp`.
    pub(super) fn rendered(
        path: &Path,
        file: File,
        dev: u64,
        inode: u64,
        stamp: i64,
        render: Option<tempfile::TempPath>,
    ) -> Result<Opened> {
        let path_str = path
            .to_str()
            .ok_or_else(|| Error::io(path, std::io::Error::new(std::io::ErrorKind::InvalidData, "path is not UTF-8")))?
            .to_owned();
        let size = file.metadata().map_err(|e| Error::io(path, e))?.len();
        Ok(Opened {
            path: path.to_owned(),
            path_str,
            file,
            dev,
            inode,
            size,
            disk_size: size,
            mtime_ns: stamp,
            compressed: false,
            materialized: true,
            rendered: true,
            render: std::sync::Mutex::new(render),
        })
    }

    /// Whether it is read whole each time it changed, never appended to: a JSON document its agent
    /// writes whole (`format`'s [`Format::document_records`]), or a rendered session.
    pub(super) fn read_whole(&self, format: &dyn Format) -> bool {
        self.rendered || format.document_records(&self.path).is_some()
    }

    /// The modification time its row may record: a settled one ([`settled_mtime`]), or a rendered
    /// session's stamp.
    pub(super) fn settled_mtime(&self) -> i64 {
        if self.rendered { self.mtime_ns } else { settled_mtime(self.mtime_ns) }
    }

    /// For a compressed file, decompresses it (once) into an unlinked scratch file in `scratch_dir`,
    /// which is then what is read: every offset is one of the decompressed bytes.
    pub(super) fn materialize(&mut self, scratch_dir: &Path, limit: ScratchLimit) -> Result<()> {
        if self.materialized {
            return Ok(());
        }
        let scratch = scrollback_core::files::decompress_to_scratch(&self.file, scratch_dir, limit).map_err(|e| {
            let what =
                if e.kind() == std::io::ErrorKind::FileTooLarge { "refused" } else { "cannot decompress (zstd)" };
            Error::io(&self.path, std::io::Error::new(e.kind(), format!("{what}: {e}")))
        })?;
        self.size = scratch.metadata().map_err(|e| Error::io(&self.path, e))?.len();
        self.file = scratch;
        self.materialized = true;
        Ok(())
    }

    /// What says it is the same file it was: identity, size on disk and modification time.
    pub(super) fn state_key(&self) -> String {
        format!("{}:{}:{}:{}", self.dev, self.inode, self.disk_size, self.mtime_ns)
    }

    /// Whether its row says it is as it was last read: same identity, size on disk and settled mtime.
    pub(super) fn unchanged_since(&self, row: &FileRow) -> bool {
        row.unchanged(self.dev, self.inode, self.disk_size, self.mtime_ns)
    }

    /// The size its row records: the bytes read up to `end`, or for a compressed file (which never
    /// grows in place) its size on disk.
    pub(super) fn recorded_size(&self, end: &End) -> u64 {
        if self.compressed { self.disk_size } else { end.size }
    }
}

/// The columns [`FileRow::read`] reads, in its order.
const FILE_ROW: &str = "id, dev, inode, fingerprint, fingerprint_len, tail_hash, size, mtime_ns, checkpoint, lines";

impl FileRow {
    /// The row's [`FILE_ROW`] columns, from column `at` of `r` on.
    fn read(r: &rusqlite::Row<'_>, at: usize) -> rusqlite::Result<FileRow> {
        Ok(FileRow {
            id: r.get(at)?,
            dev: r.get::<_, i64>(at + 1)? as u64,
            inode: r.get::<_, i64>(at + 2)? as u64,
            fingerprint: r.get(at + 3)?,
            fingerprint_len: r.get::<_, i64>(at + 4)? as u64,
            tail_hash: r.get(at + 5)?,
            size: r.get::<_, i64>(at + 6)? as u64,
            mtime_ns: r.get(at + 7)?,
            checkpoint: r.get::<_, i64>(at + 8)? as u64,
            lines: r.get::<_, i64>(at + 9)? as u64,
        })
    }

    /// Whether a file of this identity, size on disk and modification time is as the row says it
    /// was last read (its mtime was recorded only once settled: see [`crate::fingerprint::settled_mtime`]).
    pub(super) fn unchanged(&self, dev: u64, inode: u64, disk_size: u64, mtime_ns: i64) -> bool {
        self.mtime_ns != 0 && (self.dev, self.inode, self.size, self.mtime_ns) == (dev, inode, disk_size, mtime_ns)
    }
}

impl Indexer {
    /// The live row at `path`, if the index has one.
    pub(super) fn file_row(&self, path: &str) -> Result<Option<FileRow>> {
        let mut stmt =
            self.conn.prepare_cached(&format!("SELECT {FILE_ROW} FROM files WHERE path = ?1 AND state = 'live'"))?;
        Ok(stmt.query_row([path], |r| FileRow::read(r, 0)).optional()?)
    }

    /// Every live row, by path: one query for a whole catch-up.
    pub(super) fn live_rows(&self) -> Result<HashMap<PathBuf, FileRow>> {
        let mut stmt = self.conn.prepare(&format!("SELECT path, {FILE_ROW} FROM files WHERE state = 'live'"))?;
        let rows = stmt.query_map([], |r| Ok((PathBuf::from(r.get::<_, String>(0)?), FileRow::read(r, 1)?)))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }
}
