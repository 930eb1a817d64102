//! Presentation, above the read side: what a person or an agent is shown of what the store
//! answers. [`markdown`] turns transcript text into sanitised HTML (pulldown-cmark, syntect, then
//! ammonia), and [`view`] gives an entry's texts so and its tool calls at a glance; [`export`]
//! writes a session out (one HTML file that opens offline, Markdown with its photos beside it, or
//! its transcripts' own lines), secrets taken out by [`redact`] if asked, which also masks what
//! the servers answer (`--mask-secrets`). The HTTP server, MCP and the CLI use it; the index, the
//! hub and ops do not.

#![deny(missing_docs)]

pub mod export;
pub mod markdown;
#[cfg(test)]
mod planted_secrets;
pub mod redact;
pub mod view;
