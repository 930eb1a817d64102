//! The index's event bus: what the writer announces right after each commit, for the HTTP layer's
//! `/api/events` and for library users following live. Sent messages have a bus of their own
//! (`scrollback_ops::chat::ChatEvent`): the writer never sees the acceptance record's types, and
//! the HTTP layer merges the two streams.
//!
//! A `tokio::sync::broadcast` channel: sending never blocks the writer, and a receiver that falls
//! more than [`CAPACITY`] events behind is told it lagged (it should then re-read from its cursor).

/// Events a slow receiver may fall behind before it is told it lagged.
pub const CAPACITY: usize = 4096;

/// Something the index now knows. (The HTTP layer's `wire` module says how it is sent.)
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// Lines `fromLine..=toLine` of one transcript file, belonging to `sessionId`, were committed.
    /// `replaced` is set when the file was re-indexed from the start: earlier entries of it changed.
    EntriesAppended {
        /// The session the lines belong to.
        session_id: String,
        /// `files.id` of the transcript.
        file_id: i64,
        /// First line committed (1-based).
        from_line: u64,
        /// Last line committed.
        to_line: u64,
        /// The file was re-indexed from the start.
        replaced: bool,
    },
    /// The writer died: the index is no longer kept up to date (`serve` stops so that a supervisor
    /// restarts it).
    WriterFailed {
        /// Why (the panic's message).
        error: String,
    },
    /// A person had this session forgotten (`scrollback forget`, `DELETE /api/sessions/{id}`): its
    /// history is no longer in the index.
    SessionForgotten {
        /// The session.
        session_id: String,
    },
    /// A transcript of this session disappeared; its history stays in the index.
    SessionGone {
        /// The session.
        session_id: String,
        /// `files.id` of the transcript that is gone.
        file_id: i64,
    },
}

/// The sending side; clone it, or call [`Bus::subscribe`] for a receiver.
pub type Bus = tokio::sync::broadcast::Sender<Event>;

/// A new bus with no receivers.
pub fn bus() -> Bus {
    tokio::sync::broadcast::channel(CAPACITY).0
}
