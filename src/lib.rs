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
//! let conn = scrollback::read::index::open(data_dir)?;
//! let record = scrollback::read::index::media_by_ref(&conn, &"session/entry-uuid/0".parse()?)?;
//! let mut png = Vec::new();
//! scrollback::read::media::open(&record)?.read_to_end(&mut png).map_err(|e| scrollback::read::media::into_error(e, &record))?;
//! # Ok(()) }
//! ```
//!
//! # Layout
//! The folders follow the data flow, from a transcript's bytes to an HTTP response, in layers (each
//! names only those below it; ARCHITECTURE.md lists them, a test keeps them):
//! - [`error`](Error), [`files`]: the one error type; opening a transcript without blocking.
//! - [`codec`]: the scanner (payload spans, stripping), base64, word marks, conversation order and
//!   the ref format. No I/O, no format.
//! - [`format`](mod@format): what each agent writes, one file per agent ([`format::claude`]).
//! - [`db`]: the index file: `schema.sql`, migrations, and how connections are opened.
//! - [`accept`]: sent messages. The acceptance record (primary data, its own SQLite file), the
//!   engine that writes the transcript, and [`reconcile`](fn@accept::reconcile), the client's rule.
//! - [`events`]: the bus the writer and the server announce on.
//! - [`ingest`]: the writer side. Tree walk, line reader, entry description, batches, fingerprints,
//!   the [`Indexer`] (the one writer), the vault, and the live [`Tail`] that runs it and its jobs.
//! - [`read`]: the read side. Queries (sessions, history, search), media lookups by ref or hash,
//!   rendering stored lines with URLs, and payload streams verified against their blake3.
//! - [`ops`]: work that spans the stores: forgetting, sends and their engine runs, status.
//! - [`hub`]: a team's hub on PostgreSQL (`postgres.sql`): pushing this host's index to it.
//! - [`mcp`](mod@mcp): the MCP server's tools (search, sessions, a session as text, photos) over
//!   the read side, for agents.
//! - [`http`]: the boundary. Routes, the wire format (camelCase JSON, URLs, escaped snippets), the
//!   OpenAPI document.
//! - [`demo`]: the sample tree `serve --demo` serves, and the stand-in engine that answers its sends.

#![deny(missing_docs)]
// The OpenAPI document is one `json!` literal, deeper than the macro's default limit.
#![recursion_limit = "256"]

pub mod accept;
pub mod codec;
pub mod db;
pub mod demo;
mod error;
pub mod events;
pub mod files;
pub mod format;
pub mod http;
pub mod hub;
pub mod ingest;
pub mod mcp;
pub mod ops;
pub mod read;

pub use codec::refs::{ContentHash, MediaName, MediaRef};
pub use codec::scan::STRIPPED_MEDIA_MARKER;
pub use error::{Error, Result};
pub use ingest::roots::Root;
pub use ingest::tail::{Tail, TailConfig};
pub use ingest::{Indexer, NoProgress, Progress, Summary};
pub use read::media::MediaRecord;
