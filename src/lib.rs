//! scrollback: an embedded, SQLite-indexed store for AI chat transcripts.
//!
//! Transcripts are JSONL files (Claude Code, the Claude Agent SDK) whose photos are written into
//! their lines as base64. scrollback indexes them into SQLite without ever parsing a payload: each
//! line is stored with its payloads replaced by [`STRIPPED_MEDIA_MARKER`], and each payload is
//! recorded by its byte offset and length in the transcript, so a photo is served by seeking to it.
//!
//! ```no_run
//! # fn main() -> scrollback::Result<()> {
//! use std::io::Read;
//! use std::path::Path;
//!
//! let data_dir = Path::new("/tmp/scrollback-data");
//! let mut indexer = scrollback::Indexer::open(data_dir)?;
//! let summary = indexer.catch_up(Path::new("/path/to/transcripts"), &mut scrollback::NoProgress)?;
//! println!("{} lines, {} photos", summary.lines, summary.media);
//!
//! let conn = scrollback::store::open(data_dir)?;
//! let record = scrollback::store::media_by_ref(&conn, &"session/entry-uuid/0".parse()?)?;
//! let mut png = Vec::new();
//! scrollback::media::open(&record)?.read_to_end(&mut png).map_err(|e| scrollback::media::into_error(e, &record))?;
//! # Ok(()) }
//! ```
//!
//! # Layout
//! - [`scan`]: bytes of a line -> payload spans and the stripped line; no I/O.
//! - [`lines`]: complete lines of a file from an offset, in bounded memory.
//! - [`entry`]: a scanned line -> an entry row (stored line, columns, search text) or an invalid one.
//! - [`tree`]: finding the transcripts under a root.
//! - [`db`]: opening the index, pragmas, migrations (`schema.sql`).
//! - [`index`]: the one writer: rows and checkpoint in one transaction.
//! - [`store`]: read queries: media lookups.
//! - [`history`]: read queries: sessions, history pages rendered for clients, search.
//! - [`http`]: the warp server over all of it.
//! - [`media`]: a recorded payload -> verified decoded bytes, as a stream.
//! - [`tail`]: the live indexer: notify hints, periodic rescans, on the writer's own thread.
//! - [`events`]: the bus the writer announces commits on.

#![deny(missing_docs)]

mod ahead;
mod b64;
pub mod bulk;
pub mod db;
pub mod demo;
pub mod entry;
mod error;
pub mod events;
pub mod history;
pub mod http;
pub mod index;
pub mod lines;
pub mod media;
pub mod scan;
pub mod store;
pub mod tail;
pub mod tree;

pub use error::{Error, Result};
pub use index::{Indexer, NoProgress, Progress, Summary};
pub use scan::STRIPPED_MEDIA_MARKER;
