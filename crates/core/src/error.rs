//! The library's one error type. Each variant says what failed and where: the path and, for bytes in
//! a transcript, the byte offset.

use std::path::PathBuf;
use std::time::Duration;

/// A `Result` with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What went wrong.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Reading or writing a file failed.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// Writing into the data directory failed (a full disk, a read-only file system, no
    /// permission): nothing was stored half-way.
    #[error("cannot write {path}: {source}")]
    Write {
        /// The file or folder in the data directory.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// The engine's run failed; the acceptance stands.
    #[error("{0}")]
    Engine(#[from] EngineError),
    /// A task the library ran on another thread failed (a bug: its panic is in the log).
    #[error("an internal task failed: {0}")]
    Internal(String),
    /// A query was stopped because whoever asked for it has gone (an HTTP client that left).
    #[error("stopped: its caller has gone")]
    Stopped,
    /// SQLite failed.
    #[error("database: {0}")]
    Sqlite(#[from] rusqlite::Error),
    /// The connection pool failed.
    #[error("database pool: {0}")]
    Pool(#[from] r2d2::Error),
    /// The hub (PostgreSQL) failed or refused, or cannot be used as asked.
    #[error("hub: {0}")]
    Hub(String),
    /// The index has a schema version this build cannot read.
    #[error("{path} has schema version {found}; this scrollback reads version {supported}")]
    Schema {
        /// The index file.
        path: PathBuf,
        /// Its `user_version`.
        found: i64,
        /// What this build knows.
        supported: i64,
    },
    /// Another scrollback process holds the data directory: said with who holds it (and, for a
    /// server, where it listens) when its lock file names it.
    #[error("{}", locked_message(path, holder.as_ref()))]
    Locked {
        /// The lock file.
        path: PathBuf,
        /// The process that holds it, as it named itself in the lock file.
        holder: Option<Holder>,
    },
    /// A media name that is neither a ref nor a hash (the codec's [`crate::codec::refs::RefError`]).
    #[error(transparent)]
    BadName(#[from] crate::codec::refs::RefError),
    /// A request the caller got wrong: a search query the full-text engine cannot parse, a cursor
    /// this index never gave. The message says which part and why.
    #[error("{0}")]
    BadQuery(String),
    /// A send request that breaks a rule (ids, text, images): the message says which and why.
    #[error("{0}")]
    BadSend(String),
    /// An image over its documented limit.
    #[error("{0}")]
    TooLarge(String),
    /// The request disagrees with what is recorded: a `clientMessageId` reused for another message,
    /// a chat already bound to another session.
    #[error("{0}")]
    Conflict(String),
    /// A message was sent to a server that runs no engine: nothing would ever write it into a
    /// transcript, so it is not taken (nothing is recorded).
    #[error(
        "this server runs no engine, so it takes no message: start it with `scrollback serve --engine CMD` (or `--demo`)"
    )]
    NoEngine,
    /// The store being read cannot do this (a team's hub is read-only, and serves less than an
    /// index): the message says what and why.
    #[error("{0}")]
    NotServed(String),
    /// Neither the index nor the acceptance record knows this session.
    #[error("no session {0}")]
    UnknownSession(String),
    /// Nothing in the index answers to this ref or hash.
    #[error("no media for {0}")]
    NotFound(String),
    /// The image block exists but nothing was uploaded behind it.
    #[error("{what} is a failed upload ({reason}): there is no image to serve")]
    FailedUpload {
        /// The ref.
        what: String,
        /// Why there is no payload.
        reason: String,
    },
    /// The transcript holding this payload is gone.
    #[error("{path} is gone: the payload at byte {offset} can no longer be read")]
    Gone {
        /// The transcript.
        path: PathBuf,
        /// The payload's offset.
        offset: u64,
    },
    /// The bytes at the recorded offset no longer decode to the recorded blake3: the transcript was
    /// rewritten since it was indexed.
    #[error("{path}: the payload at byte {offset} no longer matches its recorded blake3 {expected}")]
    Changed {
        /// The transcript.
        path: PathBuf,
        /// The payload's offset.
        offset: u64,
        /// The recorded hash.
        expected: String,
    },
}

/// The process holding a data directory's writer lock, as the lock file names it: read only while
/// the lock is held, so never a process that has gone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Holder {
    /// How it named itself (`serve`, `index`, `mcp`).
    pub command: String,
    /// Its process id.
    pub pid: Option<u32>,
    /// Where it serves the viewer (`http://127.0.0.1:7878/`), once a server listens.
    pub serving: Option<String>,
}

fn locked_message(path: &std::path::Path, holder: Option<&Holder>) -> String {
    let pid = |h: &Holder| h.pid.map(|p| format!(", pid {p}")).unwrap_or_default();
    match holder {
        Some(h @ Holder { serving: Some(url), .. }) => {
            let dir = path.parent().unwrap_or(path);
            format!(
                "scrollback is already serving this data directory ({}) at {url} ({}{}): open that, or stop it first",
                dir.display(),
                h.command,
                pid(h)
            )
        }
        Some(h) => format!(
            "{} is locked by another scrollback process (scrollback {}{}); stop it first",
            path.display(),
            h.command,
            pid(h)
        ),
        None => format!("{} is locked by another scrollback process; stop it first", path.display()),
    }
}

/// Why a run failed. The messages are what the acceptance record keeps as `engineError`.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EngineError {
    /// The program could not be started.
    #[error("cannot start {program}: {source}")]
    Start {
        /// The program.
        program: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// Its standard input, output or error could not be opened.
    #[error("the engine's pipes were not set up")]
    Pipes,
    /// It outlived its timeout and was killed.
    #[error("timed out after {} s", .0.as_secs_f64())]
    TimedOut(Duration),
    /// Waiting for it failed.
    #[error("waiting for the engine: {0}")]
    Wait(std::io::Error),
    /// It printed a session id that cannot be one (the bind route's rule: 1 to 128 letters,
    /// digits, `.`, `_`, `:` or `-`): the chat is not bound to it.
    #[error(
        "the engine printed {0:?} as its session id, which is not an id (1 to 128 letters, digits, '.', '_', ':' or '-')"
    )]
    BadSessionId(String),
    /// It exited unsuccessfully: its status (`None` for a signal) and the end of its standard error.
    #[error("exited with {}{}", code.map_or_else(|| "a signal".to_owned(), |c| format!("status {c}")), if stderr_tail.is_empty() { String::new() } else { format!(": {stderr_tail}") })]
    Exited {
        /// Its exit status.
        code: Option<i32>,
        /// The end of its standard error, trimmed.
        stderr_tail: String,
    },
}

/// Free space under which an I/O error on the way to a write is taken as a full disk
/// ([`Error::or_out_of_space`]).
pub const FULL_BELOW: u64 = 1 << 20;

impl Error {
    /// Wraps an I/O error with the path it concerns.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Error {
        Error::Io { path: path.into(), source }
    }

    /// Wraps a failure to write into the data directory with the path it concerns.
    pub fn write(path: impl Into<PathBuf>, source: std::io::Error) -> Error {
        Error::Write { path: path.into(), source }
    }

    /// Whether a failure to write is for want of space (a full disk, a quota), rather than a
    /// read-only file system or a permission.
    pub fn is_out_of_space(&self) -> bool {
        let full = |e: &std::io::Error| {
            matches!(e.raw_os_error(), Some(libc::ENOSPC | libc::EDQUOT))
                || matches!(e.kind(), std::io::ErrorKind::StorageFull | std::io::ErrorKind::QuotaExceeded)
        };
        match self {
            // A read never runs out of space: an `Io` that did was a write under another name (a
            // directory made or synced on the way to one).
            Error::Write { source, .. } | Error::Io { source, .. } => full(source),
            Error::Sqlite(rusqlite::Error::SqliteFailure(f, _)) => f.code == rusqlite::ErrorCode::DiskFull,
            _ => false,
        }
    }

    /// `self`, or a write refused for want of space in `dir` when that is what it was: SQLite says
    /// a full disk as an I/O error where the space ran out on the way to a write (the WAL's index
    /// growing, a file it creates), so an I/O error while `dir`'s file system has less than
    /// 1 MiB (`FULL_BELOW`) left is taken as one.
    pub fn or_out_of_space(self, dir: &std::path::Path) -> Error {
        let io = matches!(
            &self,
            Error::Sqlite(e) if matches!(
                e.sqlite_error_code(),
                Some(rusqlite::ErrorCode::SystemIoFailure | rusqlite::ErrorCode::CannotOpen)
            )
        );
        if !io || self.is_out_of_space() {
            return self;
        }
        match rustix::fs::statvfs(dir) {
            Ok(fs) if fs.f_bavail.saturating_mul(fs.f_frsize) < FULL_BELOW => {
                tracing::warn!(dir = %dir.display(), "{self}: taken as a full disk (less than 1 MiB free)");
                Error::write(dir, std::io::Error::from_raw_os_error(libc::ENOSPC))
            }
            _ => self,
        }
    }

    /// Whether SQLite found the database file damaged ("database disk image is malformed", "file
    /// is not a database"): a fault of the file, not of the request.
    pub fn is_corruption(&self) -> bool {
        matches!(
            self,
            Error::Sqlite(e) if matches!(
                e.sqlite_error_code(),
                Some(rusqlite::ErrorCode::DatabaseCorrupt | rusqlite::ErrorCode::NotADatabase)
            )
        )
    }
}

/// An error's message followed by its causes', each after a colon.
pub fn with_causes(e: &dyn std::error::Error) -> String {
    let mut message = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        message.push_str(": ");
        message.push_str(&c.to_string());
        cause = c.source();
    }
    message
}
