//! Sent messages: the acceptance record (primary data) and the one rule that reconciles it with the
//! transcript.
//!
//! [`send`] checks a send request; [`store`] records it durably (its images content-addressed on
//! disk) before anything else happens; [`engine`] runs whatever writes the transcript; [`reconcile`](mod@reconcile)
//! is the pure comparison a client makes between transcript entries and pending sends. The server
//! never compares the two records itself.

pub mod engine;
pub mod reconcile;
pub mod send;
pub mod store;

pub use reconcile::reconcile;
pub use store::{AcceptStore, Accepted, Mark};
