//! The library's one error type. Each variant says what failed and where: the path and, for bytes in
//! a transcript, the byte offset.

use std::path::PathBuf;

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
    /// SQLite failed.
    #[error("database: {0}")]
    Sqlite(#[from] rusqlite::Error),
    /// The connection pool failed.
    #[error("database pool: {0}")]
    Pool(#[from] r2d2::Error),
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
    /// Another scrollback process holds the data directory.
    #[error("{path} is locked by another scrollback process; stop it first")]
    Locked {
        /// The lock file.
        path: PathBuf,
    },
    /// A media ref is malformed.
    #[error("bad media ref {0:?}: expected <sessionId>/<entryUuid>/<ordinal>")]
    BadRef(String),
    /// A content hash is malformed.
    #[error("{0:?} is not a blake3 hash (64 hex digits)")]
    BadHash(String),
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

impl Error {
    /// Wraps an I/O error with the path it concerns.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Error {
        Error::Io { path: path.into(), source }
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
