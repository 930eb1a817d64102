//! The vault: a hard link to every transcript indexed, in the data directory, so that a deleted
//! transcript's bytes (its photos) are still there at every recorded offset.
//!
//! A link is made before a file's first commit, made again when the file is read from its start (it
//! may be another inode by then), and removed once no row needs it, only after the pass that
//! replaced it has committed or rolled back. Where links cannot be made (another file system, or
//! refused) the vault is off and says so once; no transcript's byte is ever copied. Links are never
//! indexed as transcripts. A session of an agent's database (OpenCode's) has no file to link: the vault keeps
//! the document a pass rendered from its rows instead (`Vault::keep`), a copy, since the agent
//! deletes a session's rows with it. The retention check (`scrollback_read::status::vault_status`, run by the readers)
//! stats every recorded link and reports, never fixes.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use rusqlite::{Connection, OptionalExtension, params};

use scrollback_core::error::{Error, Result};

/// The directory of the vault's links, in the data directory.
pub const VAULT_DIR: &str = "vault";
/// The `scrollback_meta` key that says why the vault is off (absent while it is on).
pub const VAULT_OFF_KEY: &str = "vault:off";

/// The vault's directory, absolute: each link is recorded by this path, which must name the same
/// file from whichever directory a reader runs in (a relative `--data-dir` would not).
pub(crate) fn vault_dir(data_dir: &Path) -> PathBuf {
    scrollback_core::files::absolute(data_dir).join(VAULT_DIR)
}

/// The environment variable that makes every vault link fail as across file systems (EXDEV):
/// fault injection for the test of that fallback (`tests/vault.rs`). Never set it otherwise.
pub const FAULT_VAULT_EXDEV: &str = "SCROLLBACK_FAULT_VAULT_EXDEV";

/// Why no link can be made anywhere, if `e` says so (and not just that one file has a problem).
fn refused(e: &std::io::Error) -> Option<String> {
    if e.raw_os_error() == Some(libc::EXDEV) {
        Some(format!("the data directory is on another file system than the transcripts ({e})"))
    } else if matches!(e.kind(), std::io::ErrorKind::PermissionDenied | std::io::ErrorKind::Unsupported) {
        Some(format!("the file system refuses hard links here ({e})"))
    } else {
        None
    }
}

/// The file a pass read, as the vault links it: its path and identity when it was opened.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Linked<'a> {
    /// Its path.
    pub path: &'a Path,
    /// Its device.
    pub dev: u64,
    /// Its inode.
    pub inode: u64,
}

/// Turns the vault off for `why` (`--vault off`) before the writer has one of its own, saying so in
/// `status`.
pub(crate) fn record_off(conn: &Connection, why: &str) -> Result<()> {
    conn.execute("INSERT OR REPLACE INTO scrollback_meta (key, value) VALUES (?1, ?2)", params![VAULT_OFF_KEY, why])?;
    Ok(())
}

/// The vault: a hard link to every transcript indexed, `<data dir>/vault/<dev>-<inode>.jsonl` (a
/// name no other file can take while the link keeps that inode alive, and the same for every row
/// of the same file, in this index or a rebuilt one). While
/// the transcript exists it costs no disk (the same inode); once its path is deleted, the bytes stay
/// and every recorded offset stays valid, so its photos are still served. No transcript's byte is
/// ever copied: where links cannot be made (another file system, or refused), the vault is off, and
/// says so. (A database's session, which has no inode, is kept as its render: [`Vault::keep`].)
#[derive(Debug)]
pub(crate) enum Vault {
    /// Its directory, the links a pass made or replaced, to be removed if, once the pass has
    /// committed or rolled back, no row refers to them (file operations are not transactional), and
    /// where to say it turned off.
    On(PathBuf, Vec<String>, VaultOff),
    /// (Why is in `scrollback_meta` and in the [`VaultOff`], for `status`.)
    Off,
}

/// Why the vault is off, as this process knows it: set before the `scrollback_meta` marker is
/// written, so that `status` says so even when the marker could not be (a full disk). Cheap to
/// clone, readable from any thread.
#[derive(Debug, Clone, Default)]
pub struct VaultOff(std::sync::Arc<std::sync::Mutex<Option<String>>>);

impl VaultOff {
    /// Why the vault is off, if this process turned it off.
    pub fn why(&self) -> Option<String> {
        self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone()
    }

    pub(crate) fn set(&self, why: &str) {
        *self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Some(why.to_owned());
    }
}

impl Vault {
    pub(crate) fn open(dir: PathBuf, off: VaultOff) -> Vault {
        Vault::On(dir, Vec::new(), off)
    }

    /// Whether `path` is one of the vault's links.
    pub(crate) fn holds(&self, path: &Path) -> bool {
        matches!(self, Vault::On(dir, ..) if scrollback_core::files::absolute(path).starts_with(dir))
    }

    /// Removes the links the last pass made or replaced that no row refers to (a replaced file's
    /// old link; a new link whose rows were rolled back). A failure is logged: the link stays.
    pub(crate) fn settle(&mut self, conn: &Connection) {
        let Vault::On(_, touched, _) = self else { return };
        for link in touched.drain(..) {
            let needed = conn.query_row("SELECT EXISTS (SELECT 1 FROM files WHERE vault = ?1)", [&link], |r| r.get(0));
            match needed {
                Ok(true) => {}
                Ok(false) => match std::fs::remove_file(&link) {
                    Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                        tracing::warn!(link = %link, "vault: cannot remove a link no row needs: {e}");
                    }
                    _ => {}
                },
                Err(e) => tracing::warn!(link = %link, "vault: cannot tell whether a link is needed: {e}"),
            }
        }
    }

    /// No vault from now on, because links are refused (`why`): said once, and kept for `status`,
    /// in memory first and then in `scrollback_meta`. A marker that cannot be written (a full disk)
    /// is said in the log; the vault is off all the same, and `status` says so from memory.
    pub(crate) fn turn_off(&mut self, conn: &Connection, why: &str) -> Result<()> {
        let Vault::On(_, _, off) = std::mem::replace(self, Vault::Off) else { return Ok(()) };
        off.set(why);
        tracing::warn!(
            "no vault: {why}. A deleted transcript's text stays in the index, but its photos will answer 410; \
             put the data directory on the transcripts' file system to keep them"
        );
        if let Err(e) = record_off(conn, why) {
            tracing::warn!(
                "the vault is off, but that could not be recorded in the index ({e}): status says so until the server stops"
            );
        }
        Ok(())
    }

    /// Tries a link of one followed transcript, at start: where links are refused, the vault is off
    /// from the start and says so, even when no transcript is new (an index with no transcript yet
    /// finds out at its first link).
    pub(crate) fn probe(&mut self, conn: &Connection) -> Result<()> {
        let Vault::On(dir, ..) = self else { return Ok(()) };
        let paths: Vec<String> = conn
            .prepare("SELECT path FROM files WHERE state = 'live' ORDER BY id LIMIT 8")?
            .query_map([], |r| r.get(0))?
            .collect::<rusqlite::Result<_>>()?;
        let probe = dir.join(format!(".probe-{}", std::process::id()));
        for path in paths {
            let made = if std::env::var_os(FAULT_VAULT_EXDEV).is_some() {
                Err(std::io::Error::from_raw_os_error(libc::EXDEV))
            } else {
                scrollback_core::files::create_private_dir(dir).and_then(|()| std::fs::hard_link(&path, &probe))
            };
            match made {
                Ok(()) => {
                    let _ = std::fs::remove_file(&probe);
                    return Ok(());
                }
                Err(e) if let Some(why) = refused(&e) => return self.turn_off(conn, &why),
                // Gone since, or unreadable: try another.
                Err(_) => {}
            }
        }
        Ok(())
    }

    /// Links the file `opened` (row `file_id`) into the vault and records the link, in `tx`.
    pub(crate) fn link(&mut self, tx: &Connection, file_id: i64, opened: &Linked<'_>) -> Result<()> {
        let Vault::On(dir, touched, _) = self else { return Ok(()) };
        // A compressed transcript's link says so in its name (its bytes say so too).
        let compressed = opened.path.to_str().is_some_and(|p| p.ends_with(".zst"));
        let link = dir.join(format!("{}-{}.jsonl{}", opened.dev, opened.inode, if compressed { ".zst" } else { "" }));
        scrollback_core::files::create_private_dir(dir).map_err(|e| Error::io(&*dir, e))?;
        // A link this row had to another inode (the file was replaced) goes once no row needs it,
        // after this pass: `settle`.
        let previous: Option<String> =
            tx.query_row("SELECT vault FROM files WHERE id = ?1", [file_id], |r| r.get(0)).optional()?.flatten();
        touched.extend(previous.filter(|p| Path::new(p) != link));
        if let Some(new) = link.to_str() {
            touched.push(new.to_owned());
        }
        tx.execute("UPDATE files SET vault = NULL WHERE id = ?1", [file_id])?;
        let made = if std::env::var_os(FAULT_VAULT_EXDEV).is_some() {
            Err(std::io::Error::from_raw_os_error(libc::EXDEV))
        } else {
            // A transcript that is a symbolic link is linked by its target, the file read: a link
            // to the link would break once the target moves or goes (or at once, if relative).
            let source = std::fs::canonicalize(opened.path).unwrap_or_else(|_| opened.path.to_owned());
            match std::fs::symlink_metadata(&link) {
                // Already this file's link (a row of the same inode made it).
                Ok(meta) if meta.is_file() && (meta.dev(), meta.ino()) == (opened.dev, opened.inode) => Ok(()),
                // A leftover of an inode that no longer exists under that name: not this file.
                Ok(_) => std::fs::remove_file(&link).and_then(|()| std::fs::hard_link(&source, &link)),
                Err(_) => std::fs::hard_link(&source, &link),
            }
        };
        match made {
            Ok(()) => {
                // The path may have been replaced between its open and the link: the link must be
                // the inode that was read, a file of its own, or none.
                let meta = std::fs::symlink_metadata(&link).map_err(|e| Error::io(&link, e))?;
                if !meta.is_file() || (meta.dev(), meta.ino()) != (opened.dev, opened.inode) {
                    std::fs::remove_file(&link).map_err(|e| Error::io(&link, e))?;
                    return Ok(());
                }
                let link = link.to_str().ok_or_else(|| Error::io(&link, std::io::ErrorKind::InvalidData.into()))?;
                tx.execute("UPDATE files SET vault = ?2 WHERE id = ?1", params![file_id, link])?;
                Ok(())
            }
            Err(e) if let Some(why) = refused(&e) => self.turn_off(tx, &why),
            Err(e) => {
                // This file has no link; the others may.
                tracing::warn!(path = %opened.path.display(), "no vault link: {e}");
                Ok(())
            }
        }
    }
}

impl Vault {
    /// Where a session of an agent's database is rendered for a pass (see [`Vault::keep`]): a new
    /// file in the vault's directory while the vault is on, else `None` (an unlinked scratch file).
    pub(crate) fn render_file(&self) -> Result<Option<tempfile::NamedTempFile>> {
        let Vault::On(dir, ..) = self else { return Ok(None) };
        scrollback_core::files::create_private_dir(dir).map_err(|e| Error::io(dir, e))?;
        let file = tempfile::Builder::new().prefix(RENDERING).tempfile_in(dir).map_err(|e| Error::io(dir, e))?;
        Ok(Some(file))
    }

    /// Keeps the render `render` of the session at `path` (a session of the database of identity
    /// `dev`, `inode`; row `file_id`) as its vault file, `<dev>-<inode>-<session>.<n>.jsonl`, in
    /// `tx`. A database's rows cannot be linked, and the agent deletes them with its session: the
    /// vault keeps the document the pass read, the one copy it makes, so that every recorded offset
    /// holds once the session is gone. Each pass's render has a name of its own, so that the row
    /// always names the render its rows were read from: the previous one goes once no row needs it,
    /// after the pass has committed or rolled back (`settle`), as a replaced transcript's link does.
    pub(crate) fn keep(
        &mut self,
        tx: &Connection,
        file_id: i64,
        path: &Path,
        (dev, inode): (u64, u64),
        render: tempfile::TempPath,
    ) -> Result<()> {
        let Vault::On(dir, touched, _) = self else { return Ok(()) };
        let session = path.file_name().and_then(|n| n.to_str()).unwrap_or("session");
        let pass = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
        let kept = dir.join(render_name(dev, inode, session, pass));
        let previous: Option<String> =
            tx.query_row("SELECT vault FROM files WHERE id = ?1", [file_id], |r| r.get(0)).optional()?.flatten();
        touched.extend(previous.filter(|p| Path::new(p) != kept));
        render.persist_noclobber(&kept).map_err(|e| Error::io(&kept, e.error))?;
        let kept = kept.to_str().ok_or_else(|| Error::io(&kept, std::io::ErrorKind::InvalidData.into()))?;
        // Removed after the pass if it rolls back.
        touched.push(kept.to_owned());
        tx.execute("UPDATE files SET vault = ?2 WHERE id = ?1", params![file_id, kept])?;
        Ok(())
    }
}

/// The name of the vault's render of `session`, a session of the database of identity `dev`,
/// `inode`, made by the pass `pass`: readers know a render by its name starting with the database's
/// identity ([`scrollback_core::files::is_render_of`]).
fn render_name(dev: u64, inode: u64, session: &str, pass: u128) -> String {
    format!("{dev}-{inode}-{session}.{pass:x}.jsonl")
}

/// The prefix of a render being written ([`Vault::render_file`]).
const RENDERING: &str = ".render-";

impl Vault {
    /// Removes what a writer killed while it rendered left in the vault: renders being written, and
    /// renders no row names (kept by a pass that never committed). Called by the one writer when it
    /// opens, before any pass, and at the end of a rebuild's carry-over (never on a rebuild's new
    /// index before it: the gone sessions' renders are named only once carried over). Links are
    /// never touched.
    pub(crate) fn sweep_renders(&self, conn: &Connection) {
        let Vault::On(dir, ..) = self else { return };
        let Ok(entries) = std::fs::read_dir(dir) else { return };
        for entry in entries.flatten() {
            let path = entry.path();
            let Some(name) = path.file_name().and_then(|n| n.to_str()) else { continue };
            // A render is `<dev>-<inode>-<session>.<n>.jsonl`; a link `<dev>-<inode>.jsonl[.zst]`.
            let render = name.splitn(3, '-').count() == 3 && name.ends_with(".jsonl");
            let unneeded = name.starts_with(RENDERING)
                || (render
                    && !conn
                        .query_row("SELECT EXISTS (SELECT 1 FROM files WHERE vault = ?1)", [path.to_str()], |r| {
                            r.get::<_, bool>(0)
                        })
                        .unwrap_or(true));
            if unneeded {
                tracing::info!(path = %path.display(), "vault: removing a render no row needs (left by a writer that stopped)");
                if let Err(e) = std::fs::remove_file(&path) {
                    tracing::warn!(path = %path.display(), "vault: cannot remove it: {e}");
                }
            }
        }
    }
}
