//! What the index records of a file's bytes to notice, later, that the file was rewritten.
//!
//! A file's row keeps its *fingerprint* (blake3 of the first [`FINGERPRINT_LEN`] bytes) and its
//! *tail hash* (blake3 of the [`TAIL_LEN`] bytes just before the checkpoint). If either differs on
//! the next pass, the bytes already indexed changed and the file is re-indexed from the start. A
//! file's mtime is trusted to skip reading it only once it has settled ([`settled_mtime`]).
//! Everything here reads with `pread` and never moves a file's cursor; nothing here writes.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::lines::End;
use scrollback_core::error::{Error, Result};

/// How many leading bytes of a file its fingerprint covers (fewer while the file is shorter).
pub const FINGERPRINT_LEN: u64 = 4096;
/// How many bytes just before the checkpoint are hashed to notice a rewrite that kept the start.
pub const TAIL_LEN: u64 = 256;
/// How long a file must have been quiet for its mtime to be trusted (see [`settled_mtime`]).
pub const SETTLED: Duration = Duration::from_secs(2);

/// What a file's row records of its bytes: the fingerprint and the tail hash.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Hashes {
    /// blake3 (hex) of the first `fingerprint_len` bytes.
    pub fingerprint: String,
    /// How many bytes the fingerprint covers.
    pub fingerprint_len: u64,
    /// blake3 (hex) of the bytes just before the checkpoint.
    pub tail: String,
}

impl Hashes {
    /// The hashes of `file` read up to `end`; taken by whoever read it, right after reading.
    pub(crate) fn of(file: &File, path: &Path, end: &End) -> Result<Hashes> {
        let fingerprint_len = end.size.min(FINGERPRINT_LEN);
        Ok(Hashes {
            fingerprint: hash_range(file, path, 0, fingerprint_len)?,
            fingerprint_len,
            tail: tail_hash(file, path, end.checkpoint)?,
        })
    }
}

impl Hashes {
    /// The hashes of a JSON document read whole up to `end` (see
    /// [`scrollback_core::format::Format::document_records`]): its fingerprint covers every byte,
    /// since its agent rewrites it anywhere, at the same length too.
    pub(crate) fn of_document(file: &File, path: &Path, end: &End) -> Result<Hashes> {
        Ok(Hashes {
            fingerprint: hash_range(file, path, 0, end.size)?,
            fingerprint_len: end.size,
            tail: tail_hash(file, path, end.checkpoint)?,
        })
    }
}

/// blake3 (hex) of `len` bytes of `file` from `offset`. A file shorter than that hashes to a value
/// no complete range can have.
pub(crate) fn hash_range(file: &File, path: &Path, offset: u64, len: u64) -> Result<String> {
    let mut hasher = blake3::Hasher::new();
    let mut buf = vec![0u8; len.min(64 * 1024) as usize];
    let mut at = offset;
    let end = offset + len;
    while at < end {
        let want = ((end - at) as usize).min(buf.len());
        let n = file.read_at(&mut buf[..want], at).map_err(|e| Error::io(path, e))?;
        if n == 0 {
            hasher.update(b"\0short");
            break;
        }
        hasher.update(&buf[..n]);
        at += n as u64;
    }
    Ok(hasher.finalize().to_hex().to_string())
}

/// The tail hash: blake3 (hex) of the [`TAIL_LEN`] bytes (fewer near the start) before `checkpoint`.
pub(crate) fn tail_hash(file: &File, path: &Path, checkpoint: u64) -> Result<String> {
    let len = checkpoint.min(TAIL_LEN);
    hash_range(file, path, checkpoint - len, len)
}

/// A digest of the first and last [`TAIL_LEN`] bytes of `from..to`: an incomplete last line whose
/// window is unchanged was only appended to, not edited.
pub(crate) fn partial_window(file: &File, path: &Path, from: u64, to: u64) -> Result<[u8; 32]> {
    let len = (to - from).min(TAIL_LEN);
    let head = hash_range(file, path, from, len)?;
    let tail = hash_range(file, path, to - len, len)?;
    Ok(*blake3::hash(format!("{head}{tail}").as_bytes()).as_bytes())
}

/// Whether `file` has a `\n` in `from..to`.
pub(crate) fn has_newline(file: &File, path: &Path, from: u64, to: u64) -> Result<bool> {
    let mut buf = vec![0u8; ((to - from) as usize).min(1 << 20)];
    let mut at = from;
    while at < to {
        let want = ((to - at) as usize).min(buf.len());
        let n = file.read_at(&mut buf[..want], at).map_err(|e| Error::io(path, e))?;
        if n == 0 {
            return Ok(false);
        }
        if memchr::memchr(b'\n', &buf[..n]).is_some() {
            return Ok(true);
        }
        at += n as u64;
    }
    Ok(false)
}

/// The modification time to record, or 0 when it cannot be trusted to change with the next write:
/// a file written in the last [`SETTLED`] may be written again within the same clock tick, with no
/// new mtime (git's "racily clean" entries). Such files are always checked by their bytes.
pub(crate) fn settled_mtime(mtime_ns: i64) -> i64 {
    settled_mtime_at(mtime_ns, SystemTime::now())
}

fn settled_mtime_at(mtime_ns: i64, now: SystemTime) -> i64 {
    let now = now.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos() as i64);
    if mtime_ns < now - SETTLED.as_nanos() as i64 { mtime_ns } else { 0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_mtime_is_trusted_only_once_it_is_two_seconds_old() {
        let now = UNIX_EPOCH + Duration::from_secs(1_000_000);
        let ns = |d: Duration| (now - d).duration_since(UNIX_EPOCH).unwrap().as_nanos() as i64;
        assert_eq!(settled_mtime_at(ns(Duration::ZERO), now), 0, "written just now");
        assert_eq!(settled_mtime_at(ns(Duration::from_millis(1999)), now), 0, "inside the window");
        let settled = ns(Duration::from_millis(2001));
        assert_eq!(settled_mtime_at(settled, now), settled, "outside the window");
    }

    #[test]
    fn hashes_notice_a_change_at_the_start_or_before_the_checkpoint() -> Result<()> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        let body = "{\"a\":1}\n".repeat(1000);
        std::fs::write(&path, &body).unwrap();
        let file = File::open(&path).unwrap();
        let end = End { checkpoint: body.len() as u64, lines: 1000, size: body.len() as u64 };
        let before = Hashes::of(&file, &path, &end)?;
        assert_eq!(before.fingerprint_len, FINGERPRINT_LEN);
        assert!(!has_newline(&file, &path, 1, 7)?);
        assert!(has_newline(&file, &path, 1, 8)?);

        let mut edited = body.clone().into_bytes();
        edited[body.len() - 3] = b'2';
        std::fs::write(&path, &edited).unwrap();
        let file = File::open(&path).unwrap();
        let after = Hashes::of(&file, &path, &end)?;
        assert_eq!(after.fingerprint, before.fingerprint);
        assert_ne!(after.tail, before.tail);
        assert_ne!(
            hash_range(&file, &path, 0, body.len() as u64 + 1)?,
            hash_range(&file, &path, 0, body.len() as u64)?
        );
        Ok(())
    }
}
