//! The writer side: from transcript bytes to rows in the index.
//!
//! The data flow, one file per step: [`roots`] are the directories followed, each of one format;
//! [`tree`] finds transcripts; [`lines`] reads complete lines from
//! a checkpoint, each scanned by [`scrollback_core::codec::scan`] (payload spans found and stripped); [`entry`]
//! has the line's format describe the stripped line (columns, search text, title); `batch` groups
//! lines for the writer and `ahead` reads new files on other cores; [`indexer`] (the one writer)
//! decides per file from its `fingerprint` what to read, and commits the rows (`rows`) with the
//! checkpoint; [`lock`] says which one process writes; [`vault`] keeps a hard link to each transcript; [`packing`] packs the stored lines; `stats` keeps the overview's sums; [`forget`] and [`rebuild`] are the
//! index's part of those commands; [`bulk`] speeds up a first load; `migrate` runs what the
//! schema's migrations leave to Rust; [`tail`] keeps it all running
//! live and runs jobs on the writer; [`events`] is what the writer announces. Nothing here serves a
//! request or opens the acceptance record.

#![deny(missing_docs)]

mod ahead;
mod batch;
pub mod bulk;
pub mod entry;
pub mod events;
mod fingerprint;
pub mod forget;
pub mod indexer;
pub mod lines;
pub mod lock;
mod migrate;
pub mod packing;
pub mod rebuild;
pub mod roots;
mod rows;
mod stats;
pub mod tail;
pub mod tree;
pub mod usage;
pub mod vault;

pub use indexer::{Indexer, NoProgress, Progress, Summary};

pub use roots::Root;
pub use tail::{Tail, TailConfig};
