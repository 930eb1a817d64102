//! Opening a transcript for reading, in the one way that cannot block or mislead: without waiting
//! (`O_NONBLOCK`, so a FIFO or a device put where a transcript was answers at once), then checking
//! with `fstat` on the open descriptor that it is a regular file. Every transcript byte scrollback
//! reads, the writer's and the media reader's, comes through here.
//!
//! A transcript may be compressed: an agent may recompress its cold transcripts (Codex CLI's rollouts,
//! to `<name>.jsonl.zst`) and decompress them again to append; which names pair up is its format's
//! to say (`Format::twin`). Such a file is known by its first four bytes (zstd's
//! magic), whatever its name, and read as the stream of its decompressed bytes: every offset the
//! index records of it (checkpoints, lines, payloads) is an offset in that stream. Decoding holds at
//! most a window of [`ZSTD_WINDOW_LOG_MAX`] in memory; a frame that asks for more is refused.

use std::fs::{File, OpenOptions};
use std::io::{self, Read};
use std::os::unix::fs::{DirBuilderExt, FileExt, OpenOptionsExt, PermissionsExt};
use std::path::Path;

/// The four bytes every zstd frame starts with.
const ZSTD_MAGIC: [u8; 4] = [0x28, 0xB5, 0x2F, 0xFD];
/// The largest window (log2) a compressed transcript may need: 32 MiB. Codex writes level 3 (a
/// 2 MiB window at most); `zstd -19` needs 8 MiB. Only `--ultra` and `--long` go beyond.
pub const ZSTD_WINDOW_LOG_MAX: u32 = 25;

/// A compressed transcript's decompressed bytes, as a stream.
pub type Decompressed = zstd::stream::read::Decoder<'static, io::BufReader<FromStart>>;

/// A file's bytes from its start, read with `pread`: the descriptor's own offset (shared by its
/// clones) is never used, so that any number of streams can read one file.
#[derive(Debug)]
pub struct FromStart {
    file: File,
    at: u64,
}

impl Read for FromStart {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.file.read_at(buf, self.at)?;
        self.at += n as u64;
        Ok(n)
    }
}

/// Opens `path` for reading if it is a regular file; anything else (a FIFO, a device, a directory,
/// a socket) is an `InvalidInput` error, found without blocking.
pub fn open_regular(path: &Path) -> io::Result<File> {
    let file = OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY).open(path)?;
    if !file.metadata()?.is_file() {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, "not a regular file"));
    }
    Ok(file)
}

/// Makes the data directory its owner's alone, whatever the umask: creates it (and any missing
/// parent) 0700, and tightens what scrollback keeps there to 0700 for directories and 0600 for
/// files, saying so in the log. `ours` names what it keeps (a file `index.sqlite3` also covers
/// `index.sqlite3-wal` and `index.sqlite3.corrupt-…`); nothing else in the directory is touched,
/// and the directory itself only once it holds something of ours (a directory given with
/// `--data-dir` may be one of the person's own). A directory of ours that was open has its contents
/// tightened too (two levels: the sent images' folders). Never a file with another name elsewhere
/// (a vault link while its transcript exists): its mode is its owner's. Returns how many modes it
/// changed.
pub fn keep_private(dir: &Path, ours: &[&str]) -> io::Result<u64> {
    std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir)?;
    let is_ours = |name: &str| {
        ours.iter().any(|o| {
            name.strip_prefix(o).is_some_and(|rest| rest.is_empty() || rest.starts_with('-') || rest.starts_with('.'))
        })
    };
    let mut changed = 0;
    let mut any = false;
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let Some(name) = entry.file_name().to_str().map(str::to_owned) else { continue };
        if !is_ours(&name) {
            continue;
        }
        any = true;
        let path = entry.path();
        let was_open = tighten(&path)?;
        changed += was_open as u64;
        if was_open && path.is_dir() {
            // Written before its files were private: each of them, once.
            for inner in entries_of(&path)? {
                changed += tighten(&inner)? as u64;
                if inner.is_dir() {
                    for file in entries_of(&inner)? {
                        changed += tighten(&file)? as u64;
                    }
                }
            }
        }
    }
    if any {
        changed += tighten(dir)? as u64;
    }
    if changed > 0 {
        tracing::warn!(dir = %dir.display(), changed, "the data directory was open to other users: it is now 0700 and its files 0600");
    }
    Ok(changed)
}

/// Takes group and other permissions off `path`: 0700 for a directory, 0600 for a file with no
/// other name; a symbolic link or anything else is left as it is. Whether it changed anything. A
/// path gone since it was listed changes nothing: another process of the same data directory
/// removes files of ours at any time (SQLite a log when its last connection closes, a front end the
/// lock's wait file).
fn tighten(path: &Path) -> io::Result<bool> {
    use std::os::unix::fs::MetadataExt;
    let gone = |e: io::Error| if e.kind() == io::ErrorKind::NotFound { Ok(false) } else { Err(e) };
    let meta = match std::fs::symlink_metadata(path) {
        Ok(meta) => meta,
        Err(e) => return gone(e),
    };
    let mode = match meta.file_type() {
        t if t.is_dir() => 0o700,
        t if t.is_file() && meta.nlink() == 1 => 0o600,
        _ => return Ok(false),
    };
    if meta.permissions().mode() & 0o077 == 0 {
        return Ok(false);
    }
    match std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)) {
        Ok(()) => Ok(true),
        Err(e) => gone(e),
    }
}

/// The entries of `dir`, none if it is gone since it was listed (see [`tighten`]).
fn entries_of(dir: &Path) -> io::Result<Vec<std::path::PathBuf>> {
    match std::fs::read_dir(dir) {
        Ok(entries) => entries.map(|e| e.map(|e| e.path())).collect(),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(Vec::new()),
        Err(e) => Err(e),
    }
}

/// Creates `path` empty, 0600, unless it exists: a database's file, made before SQLite opens it,
/// since SQLite gives its write-ahead log and shared-memory file the database's own mode.
pub fn create_private(path: &Path) -> io::Result<()> {
    match OpenOptions::new().write(true).create_new(true).mode(0o600).open(path) {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(e),
    }
}

/// Creates a directory (and its missing parents) 0700.
pub fn create_private_dir(dir: &Path) -> io::Result<()> {
    std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir)
}

/// Whether `file` is zstd-compressed (it starts with zstd's magic).
pub fn is_compressed(file: &File) -> io::Result<bool> {
    let mut head = [0u8; 4];
    let mut have = 0;
    while have < head.len() {
        match file.read_at(&mut head[have..], have as u64) {
            Ok(0) => return Ok(false),
            Ok(n) => have += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(head == ZSTD_MAGIC)
}

/// The decompressed bytes of the compressed `file` from `offset` on: the stream is decoded from
/// the start and the bytes before `offset` are dropped as they come. A stream shorter than `offset`
/// is an `UnexpectedEof` error.
pub fn decompressed_from(file: &File, offset: u64) -> io::Result<Decompressed> {
    let mut decoder = zstd::stream::read::Decoder::new(FromStart { file: file.try_clone()?, at: 0 })?;
    decoder.window_log_max(ZSTD_WINDOW_LOG_MAX)?;
    let skipped = io::copy(&mut (&mut decoder).take(offset), &mut io::sink())?;
    if skipped < offset {
        return Err(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            format!("the decompressed transcript has {skipped} bytes, fewer than the {offset} recorded"),
        ));
    }
    Ok(decoder)
}

/// How much a compressed transcript's decompressed bytes may take in the data directory: a small
/// file may decompress to gigabytes (a zstd bomb), which must neither fill the disk nor be written
/// again at every rescan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScratchLimit {
    /// The most bytes one transcript may decompress to.
    pub per_file: u64,
    /// Bytes of the data directory's file system that decompressing leaves free.
    pub keep_free: u64,
}

impl Default for ScratchLimit {
    /// 4 GiB per transcript (a Codex rollout, photos and all, is far less), leaving 1 GiB free.
    fn default() -> ScratchLimit {
        ScratchLimit { per_file: 4 << 30, keep_free: 1 << 30 }
    }
}

impl ScratchLimit {
    /// The environment variable that sets [`ScratchLimit::per_file`], in bytes.
    pub const VAR: &str = "SCROLLBACK_MAX_DECOMPRESSED";

    /// The default, with `per_file` from [`ScratchLimit::VAR`] if that is set to a number of bytes
    /// (another value is said in the log and left aside).
    pub fn from_env() -> ScratchLimit {
        let mut limit = ScratchLimit::default();
        if let Some(value) = std::env::var_os(Self::VAR) {
            match value.to_str().and_then(|v| v.trim().parse::<u64>().ok()) {
                Some(bytes) => limit.per_file = bytes,
                None => tracing::warn!("{} is not a number of bytes: {value:?}; the default holds", Self::VAR),
            }
        }
        limit
    }

    /// The bytes a transcript may decompress to in `dir` now: the per-file bound, or what the file
    /// system has free beyond `keep_free`, whichever is less.
    fn bound(&self, dir: &Path) -> io::Result<u64> {
        let stat = rustix::fs::statvfs(dir).map_err(io::Error::from)?;
        let free = stat.f_bavail.saturating_mul(stat.f_frsize);
        Ok(self.per_file.min(free.saturating_sub(self.keep_free)))
    }
}

/// Decompresses the compressed `file` into a new unlinked file in `dir` (on disk, not in memory:
/// `dir` is the data directory, never a tmpfs), which then reads like any transcript. Output past
/// `limit`'s bound is refused: a `FileTooLarge` error, the scratch file (unlinked) dropped with what
/// was written of it.
pub fn decompress_to_scratch(file: &File, dir: &Path, limit: ScratchLimit) -> io::Result<File> {
    let bound = limit.bound(dir)?;
    let mut scratch = tempfile::tempfile_in(dir)?;
    let written = io::copy(&mut decompressed_from(file, 0)?.take(bound.saturating_add(1)), &mut scratch)?;
    if written > bound {
        let why = if bound < limit.per_file {
            format!("the {} bytes the data directory may take while keeping {} free", bound, limit.keep_free)
        } else {
            format!("{bound} bytes ({} sets it)", ScratchLimit::VAR)
        };
        return Err(io::Error::new(io::ErrorKind::FileTooLarge, format!("it decompresses to more than {why}")));
    }
    Ok(scratch)
}

/// `path` made absolute against the current directory (without resolving links or `..`): how a
/// path is recorded that another process, run from another directory, must read. A current
/// directory that cannot be read leaves `path` as it is.
pub fn absolute(path: &Path) -> std::path::PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_owned())
}

/// Whether the vault file `link` is its render of a session of the database of identity `dev`,
/// `inode` (the vault keeps a database's session as the document it rendered from the rows, named
/// `<dev>-<inode>-<session>.<n>.jsonl`, where a transcript's link is the transcript itself).
pub fn is_render_of(link: &Path, dev: i64, inode: i64) -> bool {
    link.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with(&format!("{dev}-{inode}-")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_data_directory_is_made_private_and_an_open_one_tightened() {
        let base = tempfile::tempdir().unwrap();
        let dir = base.path().join("a/data");
        let ours = ["index.sqlite3", "accepted-images", "vault"];
        assert_eq!(keep_private(&dir, &ours).unwrap(), 0);
        let mode = |p: &Path| std::fs::symlink_metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&dir), 0o700);
        create_private(&dir.join("index.sqlite3")).unwrap();
        assert_eq!(mode(&dir.join("index.sqlite3")), 0o600);
        // An open one, as an older scrollback left it with umask 022.
        let open = |p: &Path, m: u32| std::fs::set_permissions(p, std::fs::Permissions::from_mode(m)).unwrap();
        open(&dir, 0o755);
        open(&dir.join("index.sqlite3"), 0o644);
        let images = dir.join("accepted-images/ab");
        std::fs::create_dir_all(&images).unwrap();
        open(&dir.join("accepted-images"), 0o755);
        open(&images, 0o755);
        std::fs::write(images.join("abcd"), b"png").unwrap();
        open(&images.join("abcd"), 0o644);
        // A vault link is the transcript itself (while it exists): its mode is not ours to change.
        let transcript = base.path().join("t.jsonl");
        std::fs::write(&transcript, b"{}\n").unwrap();
        open(&transcript, 0o644);
        std::fs::create_dir_all(dir.join("vault")).unwrap();
        std::fs::hard_link(&transcript, dir.join("vault/1-2.jsonl")).unwrap();
        // Not ours: left as it is.
        std::fs::write(dir.join("notes.txt"), b"mine").unwrap();
        open(&dir.join("notes.txt"), 0o644);
        assert_eq!(keep_private(&dir, &ours).unwrap(), 6);
        for (p, m) in [
            (dir.clone(), 0o700),
            (dir.join("index.sqlite3"), 0o600),
            (dir.join("accepted-images"), 0o700),
            (images.clone(), 0o700),
            (images.join("abcd"), 0o600),
            (dir.join("vault"), 0o700),
            (transcript, 0o644),
            (dir.join("notes.txt"), 0o644),
        ] {
            assert_eq!(mode(&p), m, "{}", p.display());
        }
        assert_eq!(keep_private(&dir, &ours).unwrap(), 0, "once is enough");
        // A directory of the person's own, holding nothing of ours, keeps its mode.
        let theirs = base.path().join("theirs");
        std::fs::create_dir(&theirs).unwrap();
        open(&theirs, 0o755);
        assert_eq!(keep_private(&theirs, &ours).unwrap(), 0);
        assert_eq!(mode(&theirs), 0o755);
    }

    #[test]
    fn a_file_of_ours_removed_while_the_directory_is_tightened_is_passed_over() {
        // Another process of the same data directory removes its files at any time (SQLite the
        // acceptance record's log as its last connection closes): what is gone changes nothing and
        // fails nothing. (`serve --push` once refused to start on such a race.)
        let dir = tempfile::tempdir().unwrap();
        let gone = dir.path().join("accepted.sqlite3-wal");
        assert!(!tighten(&gone).unwrap());
        assert!(entries_of(&gone).unwrap().is_empty());
        std::fs::write(&gone, b"log").unwrap();
        std::fs::set_permissions(&gone, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert!(tighten(&gone).unwrap());
        std::fs::remove_file(&gone).unwrap();
        assert!(!tighten(&gone).unwrap());
    }

    #[test]
    fn a_frame_that_needs_a_window_beyond_the_limit_is_refused() {
        let body = vec![b'x'; 1 << 20];
        let mut encoder = zstd::stream::write::Encoder::new(Vec::new(), 3).unwrap();
        encoder.window_log(ZSTD_WINDOW_LOG_MAX + 2).unwrap();
        encoder.long_distance_matching(true).unwrap();
        std::io::Write::write_all(&mut encoder, &body).unwrap();
        let packed = encoder.finish().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big-window.jsonl.zst");
        std::fs::write(&path, packed).unwrap();
        let file = open_regular(&path).unwrap();
        let mut out = Vec::new();
        let read = decompressed_from(&file, 0).and_then(|mut d| d.read_to_end(&mut out));
        assert!(read.is_err(), "a 128 MiB window must not be allocated");
    }

    #[test]
    fn a_fifo_is_refused_at_once_and_a_file_opens() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("t.jsonl");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status().unwrap();
        assert!(made.success());
        // With no writer, a blocking open would wait forever.
        let err = open_regular(&fifo).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
        assert_eq!(open_regular(dir.path()).unwrap_err().kind(), io::ErrorKind::InvalidInput);
        let file = dir.path().join("f.jsonl");
        std::fs::write(&file, b"{}\n").unwrap();
        assert!(open_regular(&file).is_ok());
    }
}
