//! scrollback's codec: the rules for transcript bytes that both sides share, below the writer and
//! the readers alike. It does no I/O, opens no database and knows no transcript format (what a
//! format says, such as where its image blocks live, is handed in by the formats of
//! `scrollback-core`, which re-exports this crate as `scrollback_core::codec`).
//!
//! [`scan`] finds each payload's span in a line's bytes (with [`b64`] decoding into blake3) and
//! strips or restores it; [`words`] marks word boundaries for scripts without spaces, in indexed
//! text and in queries alike; [`order`] is an entry's place in its conversation; [`refs`] is how a
//! payload is named (ref or hash).
//!
//! A leaf: it depends on no other crate of the workspace, and on no SQLite or zstd, so that the
//! fuzzer and the scanner's benchmark build it alone.

#![deny(missing_docs)]

pub mod b64;
pub mod order;
pub mod refs;
pub mod scan;
pub mod words;
