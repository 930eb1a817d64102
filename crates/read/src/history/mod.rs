//! Reading history back: session lists, pages of entries, and full-text search.
//!
//! Plain functions of a read-only `&Connection`, returning plain Rust values; how they look on the
//! wire (camelCase JSON, URLs, escaped snippets) is the HTTP layer's business. A page never reads a
//! transcript byte: everything it needs (stored lines, media rows) is in SQLite, and
//! [`HistoryEntry::render`] turns a stored line into what a client shows. Nothing here writes.
//!
//! A file per job, each re-exported here: `sessions.rs` (the session list, one session as listed,
//! its git branch), `pages.rs` (a session's history a page at a time, from a [`Position`]),
//! `entries.rs` (an entry of a page, its media rows and the sub-agent it ran), `outline.rs` (a
//! session's prompts with their turns' tool calls, tokens and times), `search.rs`
//! (full-text hits with their [`Snippet`]s, within a [`Scope`], grouped by session or not),
//! `excerpt.rs` (the snippet of a text too long for FTS5's `snippet()`),
//! `fts.rs` (the query language's tree compiled to FTS5), `prefixes.rs` (a query's prefixes spelled
//! out as the index's words, so that FTS5 gets no prefix query), `budget.rs` (the step budget a
//! full-text query runs within), `time.rs` ([`time_bound`]) and `names.rs` (a session named by a
//! prefix of its id).

mod budget;
mod entries;
mod excerpt;
mod fts;
pub mod names;
mod outline;
mod pages;
mod prefixes;
mod search;
pub use search::{MATCH_CLOSE, MATCH_OPEN};
mod sessions;
mod time;

pub use budget::{QUERY_STEPS, Stop};
pub use entries::{EntryBody, HistoryEntry, SpawnedBy, Subagent};
pub use outline::{Mask, OUTLINE_TEXT, Outline, OutlineRow, OutlineSource, Turn, USER_ENTRY, outline, outline_of};
pub use pages::{HistoryPage, PageSource, Position, first_cursor, history, page_of};
pub use prefixes::WORDS_PER_PREFIX;
pub use scrollback_core::query::{MAX_PREFIX_TERMS, MAX_QUERY, MAX_TERMS};
pub use search::{
    CANDIDATES, Candidate, MAX_OFFSET, Row, Scope, SearchAnswer, SearchHit, SearchPage, SearchSource, SessionHits,
    SessionHitsPage, SessionRow, Snippet, Sort, check_offset, hits_page, notes_of, order, scope_role, search,
    search_in, search_page, search_sessions, sessions_page,
};
pub(crate) use sessions::first_said;
pub use sessions::{
    SessionPage, SessionQuery, SessionSummary, git_branch, project_name, session, sessions, shown_title,
};
pub use time::time_bound;

/// The longest page a caller may ask for.
pub const MAX_LIMIT: u32 = 500;
