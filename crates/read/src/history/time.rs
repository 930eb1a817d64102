//! Time bounds as the index compares them, from what a person gives: a date or an RFC 3339 time.
//! The query language's (`after:`, `before:`) and the API's (`since`, `until`) are one function.

pub use scrollback_core::query::time_bound;
