//! The writer side: from transcript bytes to rows in the index.
//!
//! The data flow, one file per step: [`tree`] finds transcripts; [`lines`] reads complete lines from
//! a checkpoint; [`scan`] finds each payload's span (with `b64` decoding into blake3) and strips
//! it; [`entry`] describes the stripped line (columns, search text, title); `batch` groups lines
//! for the writer and `ahead` reads new files on other cores; [`indexer`] (the one writer) decides
//! per file from its `fingerprint` what to read, and commits the rows (`rows`) with the checkpoint;
//! [`bulk`] speeds up a first load; [`tail`] keeps it all running live. Nothing here serves a
//! request.

mod ahead;
pub(crate) mod b64;
mod batch;
pub mod bulk;
pub mod entry;
mod fingerprint;
pub mod forget;
pub mod indexer;
pub mod lines;
pub mod order;
pub mod rebuild;
mod rows;
pub mod scan;
pub mod tail;
pub mod tree;
pub mod words;

pub use indexer::{Indexer, NoProgress, Progress, Summary};
