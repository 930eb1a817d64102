//! The one read interface: what the viewer, MCP and the CLI ask of an index, whichever store holds
//! it. Front ends never see SQL or a connection: [`crate::pool::Readers`] hands them a
//! `&dyn Store`, and the CLI makes one of its own connection.
//!
//! SQLite is the first store: a reader's connection is one (`impl Store for Connection`, each
//! method the query of its module: [`crate::history`], [`crate::index`], [`crate::usage`],
//! [`crate::transcript`]). A team's hub on PostgreSQL is the second, behind the same methods, so
//! that no front end is written twice. A store only reads: nothing here writes to any database.
//! What a store holds, for `status`, is not a question of the history and not here
//! ([`crate::pool::Readers::held`]): an index's is [`crate::status::index_status`] on its
//! connection, a hub's its backend's ([`crate::pool::Backend::status`]).

use rusqlite::Connection;

use scrollback_core::codec::refs::MediaName;
use scrollback_core::error::Result;

use crate::history::{
    HistoryPage, Outline, Position, Scope, SearchAnswer, SearchPage, SessionHitsPage, SessionPage, SessionQuery,
    SessionSummary, Sort,
};
use crate::media::MediaRecord;
use crate::prices::Prices;
use crate::usage::{By, Filter, Report};
use scrollback_core::query::Query;

/// The questions every front end asks of an index. Each answer is the store's own reading, taken
/// at the moment of the call; a page's cursor carries on from it.
pub trait Store {
    /// A page of sessions, newest activity first (or ranked, with a text query).
    fn sessions(&self, query: &SessionQuery) -> Result<SessionPage>;

    /// One session as listed; `None` if the store has no such session.
    fn session(&self, id: &str) -> Result<Option<SessionSummary>>;

    /// The session `given` names: its id, or a prefix of one id and no other
    /// ([`crate::history::names`]).
    fn session_named(&self, given: &str) -> Result<String>;

    /// The git branch a session's transcript names last, if any.
    fn git_branch(&self, session_id: &str) -> Result<Option<String>>;

    /// A page of a session's history in conversation order; `None` if the store has no such session.
    fn history(&self, session_id: &str, at: Position, limit: u32, sidechains: bool) -> Result<Option<HistoryPage>>;

    /// The cursor of a session's first entry; `None` if it has none.
    fn first_cursor(&self, session_id: &str, sidechains: bool) -> Result<Option<i64>>;

    /// A session's prompts with their turns' figures ([`crate::history::outline`]), each prompt
    /// masked by `mask` before it is cut; `None` if the store has no such session.
    fn outline(&self, session_id: &str, mask: Option<&dyn crate::history::Mask>) -> Result<Option<Outline>>;

    /// A page of full-text search hits within `scope`, one per entry, in `sort`'s order from
    /// `offset`.
    fn search(&self, query: &Query, scope: Scope<'_>, sort: Sort, offset: u32, limit: u32) -> Result<SearchPage>;

    /// A page of sessions with full-text hits within `scope`, each with its best hit and how many
    /// it has, in `sort`'s order from `offset`.
    fn search_sessions(
        &self,
        query: &Query,
        scope: Scope<'_>,
        sort: Sort,
        offset: u32,
        limit: u32,
    ) -> Result<SessionHitsPage>;

    /// [`Store::search_sessions`] when `grouped`, else [`Store::search`].
    fn search_answer(
        &self,
        query: &Query,
        scope: Scope<'_>,
        sort: Sort,
        (offset, limit): (u32, u32),
        grouped: bool,
    ) -> Result<SearchAnswer> {
        Ok(match grouped {
            true => SearchAnswer::Sessions(self.search_sessions(query, scope, sort, offset, limit)?),
            false => SearchAnswer::Entries(self.search(query, scope, sort, offset, limit)?),
        })
    }

    /// The whole search text of a hit's entry, of its tool calls (`hit.in_tool`) or of what was
    /// said: what its snippet is a window of. `None` if the store has no such entry.
    fn search_text(&self, hit: &crate::history::SearchHit) -> Result<Option<String>>;

    /// Where a payload is, by its ref or its hash (`Error::NotFound` if the store has none).
    fn media(&self, name: &MediaName) -> Result<MediaRecord>;

    /// The overview's figures within `filter`, priced by `prices`.
    fn stats(&self, filter: crate::stats::Filter<'_>, prices: &Prices) -> Result<crate::stats::Stats>;

    /// The usage ledger grouped `by`, within `filter`, priced by `prices`.
    fn usage(&self, by: By, filter: Filter<'_>, prices: &Prices) -> Result<Report>;

    /// A history page's media record with its bytes, where the store holds them itself (a team's
    /// hub: [`MediaRecord::held`]); an index's records are read from their transcripts, as they are.
    fn with_bytes(&self, record: &MediaRecord) -> Result<MediaRecord> {
        Ok(record.clone())
    }

    /// A session's files, in the order a JSONL export writes them.
    fn export_files(&self, session_id: &str) -> Result<Vec<crate::transcript::ExportFile>>;

    /// Up to [`crate::transcript::LINES`] lines of session `session_id` in `file` past byte `after`,
    /// in their order, with their payloads' rows.
    fn export_lines(
        &self,
        file: &crate::transcript::ExportFile,
        session_id: &str,
        after: i64,
    ) -> Result<Vec<crate::transcript::Line>>;
}

impl Store for Connection {
    fn export_files(&self, session_id: &str) -> Result<Vec<crate::transcript::ExportFile>> {
        crate::transcript::index_files(self, session_id)
    }

    fn export_lines(
        &self,
        file: &crate::transcript::ExportFile,
        session_id: &str,
        after: i64,
    ) -> Result<Vec<crate::transcript::Line>> {
        crate::transcript::lines_after(self, file.id, session_id, after)
    }

    fn search_text(&self, hit: &crate::history::SearchHit) -> Result<Option<String>> {
        use rusqlite::OptionalExtension;
        let (cursor, in_tool) = (hit.cursor, hit.in_tool);
        let sql = if in_tool {
            "SELECT tool_text FROM entries WHERE id = ?1"
        } else {
            "SELECT text FROM entries WHERE id = ?1"
        };
        Ok(self.query_row(sql, [cursor], |r| r.get::<_, Option<String>>(0)).optional()?.flatten())
    }

    fn sessions(&self, query: &SessionQuery) -> Result<SessionPage> {
        crate::history::sessions(self, query)
    }

    fn session(&self, id: &str) -> Result<Option<SessionSummary>> {
        crate::history::session(self, id)
    }

    fn session_named(&self, given: &str) -> Result<String> {
        crate::history::names::session_named(self, given)
    }

    fn git_branch(&self, session_id: &str) -> Result<Option<String>> {
        crate::history::git_branch(self, session_id)
    }

    fn history(&self, session_id: &str, at: Position, limit: u32, sidechains: bool) -> Result<Option<HistoryPage>> {
        crate::history::history(self, session_id, at, limit, sidechains)
    }

    fn first_cursor(&self, session_id: &str, sidechains: bool) -> Result<Option<i64>> {
        crate::history::first_cursor(self, session_id, sidechains)
    }

    fn outline(&self, session_id: &str, mask: Option<&dyn crate::history::Mask>) -> Result<Option<Outline>> {
        crate::history::outline(self, session_id, mask)
    }

    fn search(&self, query: &Query, scope: Scope<'_>, sort: Sort, offset: u32, limit: u32) -> Result<SearchPage> {
        crate::history::search_page(self, query, scope, sort, offset, limit)
    }

    fn search_sessions(
        &self,
        query: &Query,
        scope: Scope<'_>,
        sort: Sort,
        offset: u32,
        limit: u32,
    ) -> Result<SessionHitsPage> {
        crate::history::search_sessions(self, query, scope, sort, offset, limit)
    }

    fn media(&self, name: &MediaName) -> Result<MediaRecord> {
        crate::index::media_by_name(self, name)
    }

    fn usage(&self, by: By, filter: Filter<'_>, prices: &Prices) -> Result<Report> {
        crate::usage::report(self, by, filter, prices)
    }

    fn stats(&self, filter: crate::stats::Filter<'_>, prices: &Prices) -> Result<crate::stats::Stats> {
        crate::stats::stats(self, filter, prices)
    }
}
