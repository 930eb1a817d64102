//! Who writes the index: the data directory's writer lock, and the queue of front ends waiting
//! to take it over.
//!
//! - `scrollback.lock` is held (an advisory `flock`) by the one process that writes; it holds one
//!   line naming that process (`serve 1234`, `mcp 987`), so that a process that waits can say for
//!   whom, and, once a server listens, a second line with the viewer's address
//!   ([`record_serving`]), so that a second server can say where the first one is. What it says is
//!   believed only while its lock is held: a server that crashed left its lines behind, but not
//!   the lock, and the next process to take it writes its own.
//! - `scrollback.lock.wait` is held by a front end that must write (`serve`, `index`, `forget`,
//!   `rebuild`) from the moment it asks until it exits. An `mcp` server writes only while nobody
//!   holds it, and hands the lock over when somebody does (`scrollback_ops::election`).
//!
//! Both are released by the kernel when their process dies, however it dies: nothing is left
//! behind to clean up.

use std::fs::File;
use std::io::{Read as _, Write as _};
use std::os::unix::fs::{FileExt as _, OpenOptionsExt as _};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use scrollback_core::db;
use scrollback_core::error::{Error, Holder, Result};

/// The writer lock's file in the data directory.
pub const LOCK_FILE: &str = "scrollback.lock";
/// The file a front end that must write holds while it waits and while it runs.
pub const WAIT_FILE: &str = "scrollback.lock.wait";
/// How an `mcp` server names itself in the lock file.
pub const MCP_HOLDER: &str = "mcp";

/// How long taking a lock waits before saying another process holds it: a lock can be held
/// briefly by a process that is only being forked (a child inherits the descriptor until it execs).
const LOCK_WAIT: Duration = Duration::from_secs(1);

/// The data directory's writer lock, held. Dropping it releases it.
#[derive(Debug)]
pub struct WriterLock {
    _file: File,
    /// The place in the queue of a front end that must write, held as long as the lock.
    _claim: Option<WaitClaim>,
}

fn open_lock_file(data_dir: &Path, name: &str) -> Result<(File, PathBuf)> {
    scrollback_core::files::keep_private(data_dir, db::DATA_DIR_NAMES).map_err(|e| Error::io(data_dir, e))?;
    let path = data_dir.join(name);
    let file = File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .mode(0o600)
        .open(&path)
        .map_err(|e| Error::io(&path, e))?;
    Ok((file, path))
}

/// Tries `file`'s lock until `deadline` (once, if it is `None`): `Ok(false)` if it is still held.
fn try_until(file: &File, path: &Path, deadline: Option<Instant>) -> Result<bool> {
    loop {
        match file.try_lock() {
            Ok(()) => return Ok(true),
            Err(std::fs::TryLockError::WouldBlock) if deadline.is_some_and(|d| Instant::now() < d) => {
                std::thread::sleep(Duration::from_millis(10));
            }
            Err(std::fs::TryLockError::WouldBlock) => return Ok(false),
            Err(std::fs::TryLockError::Error(e)) => return Err(Error::io(path, e)),
        }
    }
}

/// Writes `who` and this process's id into the lock file just taken.
fn name_holder(mut file: &File, path: &Path, who: &str) -> Result<()> {
    let line = format!("{who} {}\n", std::process::id());
    file.set_len(0).and_then(|()| file.write_all(line.as_bytes())).map_err(|e| Error::io(path, e))
}

impl WriterLock {
    /// Takes the lock, waiting a moment for it ([`Error::Locked`] if another process holds it),
    /// and names `who` as its holder.
    pub fn take(data_dir: &Path, who: &str) -> Result<WriterLock> {
        let (file, path) = open_lock_file(data_dir, LOCK_FILE)?;
        if !try_until(&file, &path, Some(Instant::now() + LOCK_WAIT))? {
            return Err(locked(data_dir, path));
        }
        name_holder(&file, &path, who)?;
        Ok(WriterLock { _file: file, _claim: None })
    }

    /// Takes the lock if nobody holds it and no front end waits for it; `None` otherwise.
    pub fn take_if_free(data_dir: &Path, who: &str) -> Result<Option<WriterLock>> {
        if WaitClaim::anyone_waits(data_dir)? {
            return Ok(None);
        }
        let (file, path) = open_lock_file(data_dir, LOCK_FILE)?;
        if !try_until(&file, &path, None)? {
            return Ok(None);
        }
        name_holder(&file, &path, who)?;
        Ok(Some(WriterLock { _file: file, _claim: None }))
    }

    /// For a front end that must write: joins the queue (held until the lock is dropped), then
    /// takes the lock. An `mcp` server that holds it hands it over: this waits as long as that
    /// takes, calling `waiting` once with the holder's name. Any other holder, or another front
    /// end already in the queue, is [`Error::Locked`] after a moment, as [`WriterLock::take`].
    pub fn take_over(data_dir: &Path, who: &str, waiting: &mut dyn FnMut(&str)) -> Result<WriterLock> {
        let claim = WaitClaim::take(data_dir)?;
        let (file, path) = open_lock_file(data_dir, LOCK_FILE)?;
        let mut deadline = Instant::now() + LOCK_WAIT;
        let mut said = false;
        loop {
            if try_until(&file, &path, Some(deadline))? {
                name_holder(&file, &path, who)?;
                return Ok(WriterLock { _file: file, _claim: Some(claim) });
            }
            match holder(data_dir) {
                Some(h) if h.split_whitespace().next() == Some(MCP_HOLDER) => {
                    if !said {
                        waiting(&h);
                        said = true;
                    }
                    deadline = Instant::now() + Duration::from_millis(100);
                }
                _ => return Err(locked(data_dir, path)),
            }
        }
    }
}

/// Who holds (or last held) the writer lock, as it named itself (`mcp 987`); `None` if no process
/// ever took it here.
pub fn holder(data_dir: &Path) -> Option<String> {
    let mut text = String::new();
    File::open(data_dir.join(LOCK_FILE)).ok()?.take(200).read_to_string(&mut text).ok()?;
    let line = text.lines().next()?.trim();
    (!line.is_empty()).then(|| line.to_owned())
}

/// The process that holds the writer lock, as its lock file names it: its command, its process id
/// and, for a server, where it serves. Only for a lock known to be held (see the module's doc).
pub fn held_by(data_dir: &Path) -> Option<Holder> {
    let mut text = String::new();
    File::open(data_dir.join(LOCK_FILE)).ok()?.take(1000).read_to_string(&mut text).ok()?;
    let mut lines = text.lines();
    let mut first = lines.next()?.split_whitespace();
    let command = first.next()?.to_owned();
    let pid = first.next().and_then(|p| p.parse().ok());
    let serving = lines.next().map(str::trim).filter(|url| url.starts_with("http")).map(str::to_owned);
    Some(Holder { command, pid, serving })
}

/// [`Error::Locked`] for `path`, naming the holder of `data_dir`'s writer lock.
fn locked(data_dir: &Path, path: PathBuf) -> Error {
    Error::Locked { path, holder: held_by(data_dir) }
}

/// Records that this process, which holds `data_dir`'s writer lock, serves the viewer at `url`: the
/// lock file's second line. A lock file that names another process is left as it is.
pub fn record_serving(data_dir: &Path, url: &str) -> Result<()> {
    let path = data_dir.join(LOCK_FILE);
    let io = |e: std::io::Error| Error::io(&path, e);
    let mut file = File::options().read(true).write(true).open(&path).map_err(io)?;
    let mut text = String::new();
    (&mut file).take(1000).read_to_string(&mut text).map_err(io)?;
    let first = text.lines().next().unwrap_or_default();
    if first.split_whitespace().nth(1) != Some(std::process::id().to_string().as_str()) {
        return Ok(());
    }
    let record = format!("{first}\n{url}\n");
    file.set_len(0).map_err(io)?;
    file.write_all_at(record.as_bytes(), 0).map_err(io)
}

/// A front end's place in the queue for the writer lock. Dropping it leaves the queue.
#[derive(Debug)]
pub struct WaitClaim {
    _file: File,
}

impl WaitClaim {
    /// Joins the queue, waiting a moment; [`Error::Locked`] if another front end is in it.
    pub fn take(data_dir: &Path) -> Result<WaitClaim> {
        let (file, path) = open_lock_file(data_dir, WAIT_FILE)?;
        if !try_until(&file, &path, Some(Instant::now() + LOCK_WAIT))? {
            return Err(locked(data_dir, path));
        }
        Ok(WaitClaim { _file: file })
    }

    /// Whether a front end waits for the writer lock, or holds it.
    pub fn anyone_waits(data_dir: &Path) -> Result<bool> {
        let (file, path) = open_lock_file(data_dir, WAIT_FILE)?;
        let free = try_until(&file, &path, None)?;
        // Released at once (closing the file releases it too): this only looked.
        if free {
            let _ = file.unlock();
        }
        Ok(!free)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_front_end_takes_the_lock_over_from_an_mcp_and_no_mcp_takes_it_while_one_waits() -> Result<()> {
        let dir = tempfile::tempdir().map_err(|e| Error::io(Path::new("tmp"), e))?;
        let data = dir.path();
        let mcp = WriterLock::take_if_free(data, MCP_HOLDER)?.expect("a free lock is taken");
        assert_eq!(holder(data), Some(format!("mcp {}", std::process::id())));
        assert!(WriterLock::take_if_free(data, MCP_HOLDER)?.is_none(), "held: not taken twice");
        // A front end waits while the mcp holds it, says for whom, and gets it once it is let go.
        let (said_tx, said_rx) = std::sync::mpsc::channel();
        let data_owned = data.to_owned();
        let waiter = std::thread::spawn(move || {
            WriterLock::take_over(&data_owned, "serve", &mut |h| said_tx.send(h.to_owned()).unwrap())
        });
        let said = said_rx.recv_timeout(Duration::from_secs(10)).expect("the waiter says whom it waits for");
        assert!(said.starts_with("mcp "), "{said}");
        assert!(WaitClaim::anyone_waits(data)?, "the waiter is in the queue");
        drop(mcp);
        let serve = waiter.join().unwrap()?;
        assert!(holder(data).unwrap().starts_with("serve "));
        // While the front end runs, no mcp takes the lock, even were it free.
        assert!(WriterLock::take_if_free(data, MCP_HOLDER)?.is_none());
        // A second front end is refused, as two servers always were.
        assert!(matches!(WriterLock::take_over(data, "index", &mut |_| {}), Err(Error::Locked { .. })));
        drop(serve);
        assert!(!WaitClaim::anyone_waits(data)?);
        assert!(WriterLock::take_if_free(data, MCP_HOLDER)?.is_some());
        Ok(())
    }
}
