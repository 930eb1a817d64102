//! Finding transcripts: every file under the root that its format reads, recursively.
//!
//! Symlinked directories are followed (a directory reached twice, through a link or a cycle, is read
//! once); symlinked files are indexed at the path where they were found. A file reachable by several
//! paths (hard links, or a symlink beside its target) is one file: the first path in sorted order
//! wins. A compressed transcript beside its plain twin (a name pair its format states,
//! [`Format::twin`]) is left out: the plain one is read (see [`scrollback_core::files`]).
//! Unreadable directories are logged and skipped. No file is opened here.

use std::collections::HashSet;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use scrollback_core::format::Format;

/// A transcript found on disk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// Where it was found.
    pub path: PathBuf,
    /// Device and inode: the file's identity.
    pub dev: u64,
    /// Inode number.
    pub inode: u64,
    /// Size when found.
    pub size: u64,
    /// Modification time when found (ns since the epoch).
    pub mtime_ns: i64,
}

/// Whether `path` may name a transcript of some format (the watcher's first sieve; the writer asks
/// the path's own format).
pub fn is_transcript(path: &Path) -> bool {
    scrollback_core::format::FORMATS.iter().any(|f| f.is_transcript(path))
}

/// The agent's database a file beside it belongs to (its write-ahead log), for a file watcher.
pub fn database_of(path: &Path) -> Option<PathBuf> {
    scrollback_core::format::FORMATS.iter().find_map(|f| f.database()?.database_of(path))
}

/// Whether `path` is a compressed transcript of `format` whose plain twin ([`Format::twin`]) is
/// beside it: the plain one is the one read, as its agent does (it writes the new name whole before
/// it deletes the old one).
pub fn hidden_by_plain_twin(format: &dyn Format, path: &Path) -> bool {
    format.twin(path).is_some_and(|twin| twin.plain && std::fs::metadata(&twin.path).is_ok_and(|m| m.is_file()))
}

/// Every transcript of `format` under `root`, in path order (component by component), one per file
/// identity.
pub fn discover(root: &Path, format: &dyn Format) -> Vec<Found> {
    let mut dirs_seen = HashSet::new();
    let mut found = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        // A root that is gone or not a directory holds no transcripts.
        let Ok(meta) = std::fs::metadata(&dir)
            .and_then(|m| if m.is_dir() { Ok(m) } else { Err(std::io::ErrorKind::NotADirectory.into()) })
        else {
            continue;
        };
        if !dirs_seen.insert((meta.dev(), meta.ino())) {
            continue;
        }
        let entries = match std::fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(e) => {
                tracing::warn!(dir = %dir.display(), "cannot read directory: {e}");
                continue;
            }
        };
        for entry in entries.flatten() {
            let path = entry.path();
            // Follows symlinks: a link to a directory is walked, a link to a file is a file.
            let Ok(meta) = std::fs::metadata(&path) else {
                continue;
            };
            if meta.is_dir() {
                // An agent's database is at the top of its root (whose other directories hold its
                // logs and snapshots, no sessions; one its format names is said once).
                if format.database().is_none() {
                    stack.push(path);
                } else if let Some(why) = format.not_read(&path) {
                    say_skipped_once(&path, why);
                }
            } else if meta.is_file() && format.is_transcript(&path) && !hidden_by_plain_twin(format, &path) {
                found.push(Found {
                    path,
                    dev: meta.dev(),
                    inode: meta.ino(),
                    size: meta.len(),
                    mtime_ns: mtime_ns(&meta),
                });
            } else if meta.is_file()
                && let Some(why) = format.not_read(&path)
            {
                say_skipped_once(&path, why);
            }
        }
    }
    found.sort_by(|a, b| a.path.cmp(&b.path));
    let mut files_seen = HashSet::new();
    found.retain(|f| {
        let first = files_seen.insert((f.dev, f.inode));
        if !first {
            tracing::debug!(path = %f.path.display(), "another path to a file already found; skipped");
        }
        first
    });
    found
}

/// A file's modification time, in ns since the epoch.
pub(crate) fn mtime_ns(meta: &std::fs::Metadata) -> i64 {
    meta.mtime().saturating_mul(1_000_000_000).saturating_add(meta.mtime_nsec())
}

/// Logs that the file at `path` is skipped, and why, the first time this process sees it skipped for
/// that reason.
pub(crate) fn say_skipped_once(path: &Path, why: &str) {
    use std::sync::{Mutex, OnceLock};
    static SAID: OnceLock<Mutex<HashSet<(PathBuf, String)>>> = OnceLock::new();
    let mut said = SAID.get_or_init(Default::default).lock().unwrap_or_else(|e| e.into_inner());
    if said.insert((path.to_owned(), why.to_owned())) {
        tracing::warn!(path = %path.display(), "skipped: {why}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_nested_files_follows_dir_links_and_dedupes_hard_links() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("p/s1/subagents")).unwrap();
        std::fs::write(root.join("p/s1.jsonl"), "{}\n").unwrap();
        std::fs::write(root.join("p/s1/subagents/agent-a.jsonl"), "{}\n").unwrap();
        std::fs::write(root.join("p/notes.txt"), "x").unwrap();
        std::fs::hard_link(root.join("p/s1.jsonl"), root.join("p/z-link.jsonl")).unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("o.jsonl"), "{}\n").unwrap();
        std::os::unix::fs::symlink(outside.path(), root.join("linked")).unwrap();
        std::os::unix::fs::symlink(root, root.join("p/loop")).unwrap();
        let names: Vec<_> = discover(root, scrollback_core::format::CLAUDE)
            .into_iter()
            .map(|f| f.path.strip_prefix(root).unwrap().to_path_buf())
            .collect();
        assert_eq!(
            names,
            vec![
                PathBuf::from("linked/o.jsonl"),
                PathBuf::from("p/s1/subagents/agent-a.jsonl"),
                PathBuf::from("p/s1.jsonl"),
            ]
        );
    }

    #[test]
    fn a_compressed_transcript_beside_its_plain_twin_is_left_out() {
        let dir = tempfile::tempdir().unwrap();
        let codex = scrollback_core::format::by_name("codex").unwrap();
        let plain = dir.path().join("rollout-1.jsonl");
        let packed = dir.path().join("rollout-1.jsonl.zst");
        std::fs::write(&plain, "{}\n").unwrap();
        std::fs::write(&packed, "compressed").unwrap();
        let found = || discover(dir.path(), codex).into_iter().map(|f| f.path).collect::<Vec<_>>();
        assert!(hidden_by_plain_twin(codex, &packed));
        assert!(!hidden_by_plain_twin(codex, &plain));
        assert_eq!(found(), vec![plain.clone()]);
        std::fs::remove_file(&plain).unwrap();
        assert!(!hidden_by_plain_twin(codex, &packed));
        assert_eq!(found(), vec![packed.clone()]);
    }
}
