//! The HTTP API: warp filters over the read side and [`scrollback_ops`], one file per job.
//!
//! - [`state`](Api): the server's shared state, and the one way a handler reaches SQLite;
//! - `auth`: the token, loopback Host names, same-site checks ([`check_listen`] too);
//! - `filters`: bounded query strings and bodies, ids in paths, limits, 405s;
//! - `routes`: the route table and the read routes; `media`: payloads by seeking (verify, cache or
//!   stream); `chat`: sends; `web`: the viewer's files; `mcp`: the MCP server over Streamable HTTP;
//! - `error`: every failure to a status and a JSON body, in one place ([`handle_rejection`]);
//! - `cache`: verified photos in memory; `server`: the serve loop ([`serve`]);
//! - [`wire`](ApiUrls): every JSON body the API writes; `openapi`: the document of it all.
//!
//! Media are served by seeking to the recorded offset ([`scrollback_read::media`]); bytes that do not
//! hash to the recorded blake3 are never served (409, and the file is queued for the writer).
//! Errors are `{"error": {"code", "message"}}` with a 4xx status; a 5xx is a bug, or says that
//! what the request needs is not running (503) or that the disk is full (507).
//!
//! Security defaults: refs and hashes are looked up in the index, never turned into paths; listening
//! beyond loopback requires a token ([`check_listen`]), and with a token every `/api` route answers
//! 401 without it (`Authorization: Bearer`, or the `scrollback_token` cookie so `<img>` tags work).

#![deny(missing_docs)]
// The OpenAPI document is one `json!` literal, deeper than the macro's default limit.
#![recursion_limit = "256"]

mod auth;
mod cache;
mod chat;
mod error;
mod export;
mod filters;
mod mcp;
mod media;
mod openapi;
mod pace;
mod routes;
mod server;
mod session;
mod state;
mod stats;
mod usage;
mod web;
pub mod wire;

pub use auth::{ListenRefused, TOKEN_COOKIE, check_listen};
pub use error::{ApiError, handle_rejection};
pub use routes::routes;
pub use server::{IDLE_TIMEOUT, MAX_CONNECTIONS, connection_cap, serve};
pub use state::{Api, Config};
pub use wire::ApiUrls;

/// The default listen address.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:7878";
