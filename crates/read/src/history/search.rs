//! Full-text search: hits best first, a page at a time, within a [`Scope`], each with a
//! [`Snippet`] of the text around it.
//!
//! Every query is checked and bounded as the budget says. Never escapes a snippet nor leaves a
//! copy of an entry among the hits: how a match is shown is the caller's ([`Snippet::marked`],
//! [`Snippet::segments`]).

use std::fmt::Write as _;

use rusqlite::{Connection, params};

use super::MAX_LIMIT;
use super::budget::{check_query, fts_error, within_budget};
use scrollback_core::codec::words;
use scrollback_core::error::{Error, Result};

/// One full-text hit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchHit {
    /// The session.
    pub session_id: String,
    /// The entry's uuid.
    pub entry_uuid: Option<String>,
    /// The entry's cursor (for `before`/`after`).
    pub cursor: i64,
    /// Its line number.
    pub line: i64,
    /// `type`.
    pub kind: Option<String>,
    /// The message's role (`user`, `assistant`), where the line has one.
    pub role: Option<String>,
    /// `timestamp`.
    pub timestamp: Option<String>,
    /// The agent that wrote it.
    pub agent: String,
    /// The session's title.
    pub title: Option<String>,
    /// The session's project (its working directory).
    pub project: Option<String>,
    /// The matching text around the hit.
    pub snippet: Snippet,
}

/// Text around a full-text hit, with the matched words marked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snippet(String);

/// FTS5 is asked to mark matches with these two private-use characters.
const MATCH_OPEN: char = '\u{E000}';
const MATCH_CLOSE: char = '\u{E001}';

impl Snippet {
    /// A snippet as FTS5's `snippet()` gives it, matches between `\u{E000}` and `\u{E001}`.
    pub fn from_fts(text: impl Into<String>) -> Snippet {
        Snippet(text.into())
    }

    /// The snippet as pieces of text, each with whether it is a match, in order.
    pub fn segments(&self) -> impl Iterator<Item = (&str, bool)> {
        let mut matched = false;
        self.0.split_inclusive([MATCH_OPEN, MATCH_CLOSE]).filter_map(move |piece| {
            let (text, next) = match piece.strip_suffix(MATCH_OPEN) {
                Some(text) => (text, true),
                None => match piece.strip_suffix(MATCH_CLOSE) {
                    Some(text) => (text, false),
                    None => (piece, matched),
                },
            };
            let segment = (text, matched);
            matched = next;
            (!text.is_empty()).then_some(segment)
        })
    }

    /// The snippet's text with each match between `open` and `close`.
    pub fn marked(&self, open: &str, close: &str) -> String {
        let mut out = String::with_capacity(self.0.len());
        for (text, matched) in self.segments() {
            if matched {
                write!(out, "{open}{text}{close}").unwrap();
            } else {
                out.push_str(text);
            }
        }
        out
    }
}

/// Where a search looks. Times are bounds as [`time_bound`](super::time_bound) makes them,
/// compared with each entry's `timestamp` (an entry without one is outside any time bound).
#[derive(Debug, Clone, Copy, Default)]
pub struct Scope<'a> {
    /// Only this session.
    pub session: Option<&'a str>,
    /// Only entries of this agent.
    pub agent: Option<&'a str>,
    /// Only sessions of this project (working directory).
    pub project: Option<&'a str>,
    /// Only entries with this role (`user`, `assistant`).
    pub role: Option<&'a str>,
    /// Only entries written at or after this instant.
    pub since: Option<&'a str>,
    /// Only entries written before this instant.
    pub until: Option<&'a str>,
    /// Leave out sessions whose last entry is at or after this instant (sessions still being
    /// written: the conversation an agent is in).
    pub active_since: Option<&'a str>,
}

/// A page of hits, and where the next one starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchPage {
    /// Best first.
    pub hits: Vec<SearchHit>,
    /// Pass as the next page's `offset`: `None` when there is nothing more.
    pub next: Option<u32>,
}

/// The most hits a search may skip to (an offset deeper than this is refused: a page that deep
/// costs the whole ranking before it).
pub const MAX_OFFSET: u32 = 10_000;

/// Full-text search, best matches first. A query FTS5 cannot parse is [`Error::BadQuery`].
pub fn search(conn: &Connection, query: &str, session: Option<&str>, limit: u32) -> Result<Vec<SearchHit>> {
    search_in(conn, query, Scope { session, ..Scope::default() }, limit)
}

/// [`search`] within `scope`.
pub fn search_in(conn: &Connection, query: &str, scope: Scope<'_>, limit: u32) -> Result<Vec<SearchHit>> {
    Ok(search_page(conn, query, scope, 0, limit)?.hits)
}

/// [`search_in`], a page of `limit` hits from `offset` in the ranking (ties in rank go by cursor,
/// so that the order is total and pages neither skip nor repeat while the index stands still).
pub fn search_page(conn: &Connection, query: &str, scope: Scope<'_>, offset: u32, limit: u32) -> Result<SearchPage> {
    check_query(query)?;
    if offset > MAX_OFFSET {
        return Err(Error::BadQuery(format!("search offset {offset}: at most {MAX_OFFSET}; narrow the query")));
    }
    let limit = limit.clamp(1, MAX_LIMIT);
    let mut hits = within_budget(conn, || search_unbounded(conn, query, scope, offset, limit + 1))?;
    let next = (hits.len() > limit as usize).then(|| {
        hits.truncate(limit as usize);
        offset + limit
    });
    Ok(SearchPage { hits, next })
}

fn search_unbounded(
    conn: &Connection,
    query: &str,
    scope: Scope<'_>,
    offset: u32,
    limit: u32,
) -> Result<Vec<SearchHit>> {
    let mut stmt = conn.prepare_cached(
        "SELECT e.session_id, e.uuid, e.id, e.line, e.type, e.timestamp,
                snippet(entries_fts, 0, char(57344), char(57345), '…', 16), e.agent, e.role, s.title, s.project
         FROM entries_fts JOIN entries e ON e.id = entries_fts.rowid LEFT JOIN sessions s ON s.id = e.session_id
         WHERE entries_fts MATCH ?1 AND (?2 IS NULL OR e.session_id = ?2) AND e.duplicate = 0
           AND (?4 IS NULL OR e.agent = ?4)
           AND (?5 IS NULL OR s.project = ?5)
           AND (?6 IS NULL OR e.role = ?6)
           AND (?7 IS NULL OR e.timestamp >= ?7)
           AND (?8 IS NULL OR e.timestamp < ?8)
           AND (?9 IS NULL OR coalesce(s.last_timestamp, '') < ?9)
         ORDER BY rank, e.id LIMIT ?3 OFFSET ?10",
    )?;
    let query = words::mark(query);
    let hits = stmt.query_map(
        params![
            query,
            scope.session,
            limit,
            scope.agent,
            scope.project,
            scope.role,
            scope.since,
            scope.until,
            scope.active_since,
            offset
        ],
        |r| {
            Ok(SearchHit {
                session_id: r.get(0)?,
                entry_uuid: r.get(1)?,
                cursor: r.get(2)?,
                line: r.get(3)?,
                kind: r.get(4)?,
                timestamp: r.get(5)?,
                snippet: Snippet(words::unmark(&r.get::<_, String>(6)?).into_owned()),
                agent: r.get(7)?,
                role: r.get(8)?,
                title: r.get(9)?,
                project: r.get(10)?,
            })
        },
    )?;
    hits.collect::<rusqlite::Result<_>>().map_err(fts_error)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snippets_split_into_marked_segments() {
        let s = Snippet(format!("<b>{MATCH_OPEN}x{MATCH_CLOSE}</b> and {MATCH_OPEN}y{MATCH_CLOSE}"));
        let segments: Vec<(&str, bool)> = s.segments().collect();
        assert_eq!(segments, [("<b>", false), ("x", true), ("</b> and ", false), ("y", true)]);
        assert_eq!(s.marked("[", "]"), "<b>[x]</b> and [y]");
    }
}
