//! Work that spans the stores: the index (through its one writer), the acceptance record and the
//! vault, above both sides and below every front end.
//!
//! [`writer`] opens the writer as a front end needs it (finishing a `forget` a crash cut short) and
//! tells when the live writer dies; [`forget`] forgets a session across the index, the acceptance
//! record and the vault; [`chat`] records a sent message and runs the engine for it, one run at a
//! time per chat, through [`engine`], which runs whatever writes the transcript; [`status`] is what
//! the data directory holds and how its parts stand; [`election`] picks which of several `mcp`
//! servers follows the transcripts; [`roots`] are the transcript roots a data directory remembers.
//! The acceptance record of sent messages (primary data) is `scrollback_accept`, below this crate. The HTTP
//! server, the CLI (and any other front end) call these and hold none of this logic themselves.

#![deny(missing_docs)]

pub mod chat;
pub mod election;
pub mod engine;
pub mod forget;
pub mod roots;
pub mod status;
pub mod writer;
