//! The integration suite: one binary, one module per area. Every test works in its own temporary
//! directory and runs the real `scrollback` binary where the CLI is what is tested.

mod accept;
mod agents;
mod architecture;
mod browser;
mod bulk;
mod cli;
mod corpus;
mod crash;
mod examples;
mod export;
mod fuzz_corpus;
mod generated;
mod http;
mod hub;
mod mcp;
mod memory;
mod model;
mod packing;
mod prop;
mod qwen;
mod reconcile;
mod redact;
mod reindex;
mod search;
mod sessions;
mod stats;
mod status;
mod tail;
mod tools;
mod usage;
mod util;
mod vault;
