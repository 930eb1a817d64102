//! The read side: questions asked of the index, answered from SQLite, and payloads read back from
//! the transcripts by their recorded offsets.
//!
//! [`index`] opens read-only connections and looks payloads up by name ([`crate::codec::refs`]);
//! [`status`] counts what the index holds; [`history`] lists sessions, pages history and searches; [`render`] puts each
//! payload's URL back into a stored line for a client; [`media`] streams a payload's decoded bytes,
//! verified against its blake3; [`pool`] is the readers' pool every front end reads through; [`usage`] reports the usage ledger,
//! priced by [`prices`]. Nothing here writes to the index.

pub mod history;
pub mod index;
pub mod media;
pub mod pool;
pub mod prices;
pub mod render;
pub mod status;
pub mod usage;
