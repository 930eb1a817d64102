//! The read side: questions asked of the index, answered from SQLite, and payloads read back from
//! the transcripts by their recorded offsets.
//!
//! [`index`] opens read-only connections and looks payloads up by name ([`scrollback_core::codec::refs`]);
//! [`status`] counts what the index holds; [`history`] lists sessions, pages history and searches, each question as [`request`] checks what was asked; [`render`] puts each
//! payload's URL back into a stored line for a client; [`media`] streams a payload's decoded bytes,
//! verified against its blake3; [`store`] is the one read interface every front end reads through ([`Store`]: SQLite's
//! connection is its first store), and [`pool`] the readers' pool that hands it out; [`usage`] reports the usage ledger,
//! priced by [`prices`], and [`stats`] the overview; [`transcript`] gives a session's transcripts' own lines, for an
//! export. Presentation (Markdown as HTML, an entry's view, the exports, redaction) is the render crate's, above this
//! one. Nothing here writes to the index.

#![deny(missing_docs)]

pub mod history;
pub mod index;
pub mod media;
pub mod pool;
pub mod prices;
pub mod render;
pub mod request;
pub mod stats;
pub mod status;
pub mod store;
pub mod transcript;
pub mod usage;

pub use media::MediaRecord;
pub use store::Store;
