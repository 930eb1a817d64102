//! Sent messages: the acceptance record (primary data) and the one rule that reconciles it with the
//! transcript; and a person's own marks on sessions (a title, a pin), primary data too.
//!
//! [`send`] checks a send request; [`store`] records it durably (its images content-addressed on
//! disk) before anything else happens, and keeps the marks; [`reconcile`](mod@reconcile) is the pure
//! comparison a client makes between transcript entries and pending sends. The server never compares
//! the two records itself. What runs the engine for an accepted message is `scrollback_ops`' (its
//! `engine` and `chat`), above this crate; the HTTP server, MCP, the CLI and the hub read the record
//! through [`AcceptStore`].

#![deny(missing_docs)]

pub mod reconcile;
pub mod send;
pub mod store;

pub use reconcile::reconcile;
pub use store::{AcceptStore, Accepted, Mark};
