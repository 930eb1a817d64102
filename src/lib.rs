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
//! A workspace whose crates are the layers, in order (each names only those below it, so the
//! compiler holds the order; ARCHITECTURE.md says why the cut falls where it does). This crate is
//! the facade that puts them back under one name, the binary, and the demo:
//! - `scrollback-codec` (re-exported by core as [`codec`]): the byte rules, a leaf.
//! - `scrollback-core`: [`error`](Error), [`files`], [`pack`], [`format`](mod@format) (what each agent
//!   writes, one file per agent) and [`db`] (the index's and the acceptance record's schemas).
//! - `scrollback-index`: [`ingest`], the writer side (tree walk, line reader, the [`Indexer`], the
//!   vault, the live [`Tail`]) and [`events`], what the writer announces.
//! - `scrollback-read`: [`read`], the read side (sessions, history, search, media by seeking, usage).
//! - `scrollback-render`: [`render`](mod@render), presentation above it (Markdown as HTML, an entry's
//!   view, the exports, redaction).
//! - `scrollback-accept`: [`accept`], the acceptance record (sent messages and a person's marks)
//!   and the reconcile rule.
//! - `scrollback-ops`: [`ops`], work that spans the stores (chats and their engine runs, forgetting,
//!   the writer election, status).
//! - `scrollback-hub`: [`hub`], a team's hub on PostgreSQL.
//! - `scrollback-mcp`: [`mcp`](mod@mcp), the MCP server's tools, for agents.
//! - `scrollback-http`: [`http`], the boundary (routes, the wire format, the OpenAPI document, the
//!   viewer).
//! - here: [`demo`], the sample tree `serve --demo` serves, and the stand-in engine that answers
//!   its sends.

#![deny(missing_docs)]

pub mod demo;

pub use scrollback_accept as accept;
pub use scrollback_core::{codec, db, error, files, format, pack, query};
pub use scrollback_http as http;
pub use scrollback_hub as hub;
pub use scrollback_index as ingest;
pub use scrollback_index::events;
pub use scrollback_mcp as mcp;
pub use scrollback_ops as ops;
pub use scrollback_read as read;
pub use scrollback_render as render;

pub use scrollback_core::{ContentHash, Error, MediaName, MediaRef, Result, STRIPPED_MEDIA_MARKER};
pub use scrollback_index::{Indexer, NoProgress, Progress, Root, Summary, Tail, TailConfig};
pub use scrollback_read::MediaRecord;
