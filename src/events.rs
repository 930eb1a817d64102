//! The event bus: what the writer announces right after each commit, for the HTTP layer's
//! `/api/events` and for library users following a session live.
//!
//! A `tokio::sync::broadcast` channel: sending never blocks the writer, and a receiver that falls
//! more than [`CAPACITY`] events behind is told it lagged (it should then re-read from its cursor).

use serde::Serialize;

/// Events a slow receiver may fall behind before it is told it lagged.
pub const CAPACITY: usize = 4096;

/// Something the index now knows. Serialized as `{"type": "entries-appended", ...}`, camelCase.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
#[non_exhaustive]
pub enum Event {
    /// Lines `fromLine..=toLine` of one transcript file, belonging to `sessionId`, were committed.
    /// `replaced` is set when the file was re-indexed from the start: earlier entries of it changed.
    #[serde(rename_all = "camelCase")]
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
    /// A transcript of this session disappeared; its history stays in the index.
    #[serde(rename_all = "camelCase")]
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_serialize_as_the_api_documents() {
        let e =
            Event::EntriesAppended { session_id: "s".into(), file_id: 3, from_line: 4, to_line: 9, replaced: false };
        assert_eq!(
            serde_json::to_string(&e).unwrap(),
            r#"{"type":"entries-appended","sessionId":"s","fileId":3,"fromLine":4,"toLine":9,"replaced":false}"#
        );
        let g = Event::SessionGone { session_id: "s".into(), file_id: 3 };
        assert_eq!(serde_json::to_string(&g).unwrap(), r#"{"type":"session-gone","sessionId":"s","fileId":3}"#);
    }
}
