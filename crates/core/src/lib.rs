//! scrollback's core: what every other layer stands on, and nothing that serves, watches or writes
//! an index by itself.
//!
//! - [`error`](Error), [`files`]: the one error type; opening a transcript without blocking.
//! - [`codec`]: the `scrollback-codec` crate, re-exported: the scanner (payload spans, stripping),
//!   base64, word marks, conversation order and the ref format. No I/O, no format, no SQLite.
//! - [`pack`]: how a stored line is packed (zstd, with a dictionary the index keeps).
//! - [`format`](mod@format): what each agent writes, one file per agent ([`format::claude`]).
//! - [`db`]: the index file and the acceptance record: `schema.sql` and `accept.sql`, their
//!   migrations, and how connections are opened.
//! - [`query`]: the search query language, read into a tree every store compiles.
//!
//! The fuzzer and the scanner's benchmark depend on the codec alone.

#![deny(missing_docs)]

pub use scrollback_codec as codec;
pub mod db;
pub mod error;
pub mod files;
pub mod format;
pub mod pack;
pub mod query;

pub use codec::refs::{ContentHash, MediaName, MediaRef};
pub use codec::scan::STRIPPED_MEDIA_MARKER;
pub use error::{Error, Result};
