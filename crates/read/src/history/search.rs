//! Full-text search: a [`Query`] (the query language's tree) within a [`Scope`], as hits grouped
//! by session ([`search_sessions`]) or one per entry ([`search_page`]), each with a [`Snippet`].
//!
//! A search runs in two stages, so that its cost is bounded by a number of matches and not by all
//! of them (`docs/search.md`, "How results are ranked"):
//! 1. **Candidates.** The compiled query ([`super::fts`]) walks the full-text index from its newest
//!    rows down and keeps the first [`CANDIDATES`] matches, each with its BM25 score (what was said
//!    weighs more than tool text). Without filters it reads the full-text index alone; with them
//!    it reads each match's row, to keep the first within the scope. The closer forms of a query of
//!    two or more words (together, near) are walked among the candidates only. A rarer query has
//!    fewer matches than that, and all of them are candidates.
//! 2. **Ranking.** Entries whose words are together come first, then near each other, then by
//!    score, then the newer; rows are read in that order until the page is full. Grouped by
//!    session, a session ranks by its best hit, and its hits are counted exactly. Only the page's
//!    hits get a snippet.
//!
//! Never escapes a snippet: how a match is shown is the caller's ([`Snippet::marked`],
//! [`Snippet::segments`]). Every search is bounded by the step budget ([`super::budget`]).

use std::cmp::{Ordering, Reverse};
use std::collections::HashMap;
use std::fmt::Write as _;

use rusqlite::types::Value;
use rusqlite::{Connection, OptionalExtension, params};

use super::MAX_LIMIT;
use super::budget::{fts_error, within_budget};
use super::excerpt::{SNIPPET_FTS_MAX, Words, excerpt};
use super::fts::{self, Compiled};
use super::prefixes;
use super::sessions::{first_said, shown_title};
use scrollback_core::codec::words;
use scrollback_core::error::{Error, Result};
use scrollback_core::query::{self, Query, Role};

/// How many matches a search ranks at most, per tier ([`search_sessions`]): the newest ones. A
/// query with fewer matches than this is ranked whole.
pub const CANDIDATES: usize = 2_000;

/// The weights of `entries_fts`'s columns in the BM25 score: what was said, tool calls' input and
/// output, the names of the tools called.
const WEIGHTS: &str = "1.0, 0.3, 0.5";

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
    /// The tool the entry calls, where it calls one (the first, if several).
    pub tool: Option<String>,
    /// Whether the snippet is of tool calls' input or output (else of what was said).
    pub in_tool: bool,
    /// The matching text around the hit.
    pub snippet: Snippet,
    /// The host whose index holds it, on a team's hub (`None` from a host's own index).
    pub host: Option<String>,
}

/// Text around a full-text hit, with the matched words marked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snippet(String);

/// FTS5 is asked to mark matches with these two private-use characters: where a match opens in a
/// [`Snippet`]'s text.
pub const MATCH_OPEN: char = '\u{E000}';
/// Where a match closes in a [`Snippet`]'s text.
pub const MATCH_CLOSE: char = '\u{E001}';

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

    /// Whether it marks a match.
    pub fn has_match(&self) -> bool {
        self.0.contains(MATCH_OPEN)
    }
}

/// Where a search looks, beside what its query's fields say (both hold). Times are bounds as
/// [`time_bound`](super::time_bound) makes them, compared with each entry's `timestamp` (an entry
/// without one is outside any time bound).
#[derive(Debug, Clone, Copy, Default)]
pub struct Scope<'a> {
    /// Only this session.
    pub session: Option<&'a str>,
    /// Only entries of this agent.
    pub agent: Option<&'a str>,
    /// Only sessions of this project (working directory).
    pub project: Option<&'a str>,
    /// Only entries with this role (`user`, `assistant`): as the query's `role:`.
    pub role: Option<&'a str>,
    /// Only entries written at or after this instant.
    pub since: Option<&'a str>,
    /// Only entries written before this instant.
    pub until: Option<&'a str>,
    /// Leave out sessions whose last entry is at or after this instant (sessions still being
    /// written: the conversation an agent is in).
    pub active_since: Option<&'a str>,
}

/// The order of results.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Sort {
    /// Best first: words near each other, then the score, then the newer.
    #[default]
    Relevance,
    /// Newest first (a session by its newest hit).
    Recent,
    /// Conversation order (of each session, sessions newest first): for stepping through one
    /// session's hits.
    Conversation,
}

impl Sort {
    /// The sort a name gives (`relevance`, `recent`, `conversation`).
    pub fn parse(name: &str) -> Option<Sort> {
        match name {
            "relevance" => Some(Sort::Relevance),
            "recent" => Some(Sort::Recent),
            "conversation" => Some(Sort::Conversation),
            _ => None,
        }
    }
}

/// A page of hits, and where the next one starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchPage {
    /// In the order asked for.
    pub hits: Vec<SearchHit>,
    /// Pass as the next page's `offset`: `None` when there is nothing more.
    pub next: Option<u32>,
    /// What the person should know of how the query was read and run.
    pub notes: Vec<String>,
}

/// The hits of one session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionHits {
    /// The session.
    pub session_id: String,
    /// Its title.
    pub title: Option<String>,
    /// Its project.
    pub project: Option<String>,
    /// The agent that wrote it.
    pub agent: String,
    /// Its last entry's time.
    pub last_timestamp: Option<String>,
    /// How many of its entries match (the best one included).
    pub hits: u64,
    /// Its best hit.
    pub best: SearchHit,
}

impl SessionHits {
    /// A session's hits: its best, how many, and its agent and last entry's time as its row has
    /// them (`None`: the session has no row, and its best hit's agent stands).
    pub fn of(best: SearchHit, session: Option<(String, Option<String>)>, hits: u64) -> SessionHits {
        let (agent, last_timestamp) = session.unwrap_or_else(|| (best.agent.clone(), None));
        SessionHits {
            session_id: best.session_id.clone(),
            title: best.title.clone(),
            project: best.project.clone(),
            agent,
            last_timestamp,
            hits,
            best,
        }
    }
}

/// The role a search's scope keeps to (`user`, `assistant`), as the query language's.
pub fn scope_role(role: &str) -> Result<Role> {
    match role {
        "user" => Ok(Role::User),
        "assistant" => Ok(Role::Assistant),
        other => Err(Error::BadQuery(format!("role: {other:?} is neither user nor assistant"))),
    }
}

/// A search's notes: its query's, and one when its candidates were not every match.
pub fn notes_of(query: &[String], complete: bool) -> Vec<String> {
    let mut notes = query.to_vec();
    if !complete {
        notes.push(format!(
            "the query matches more than {CANDIDATES} entries: the newest {CANDIDATES} were ranked; \
             add a word or a filter to reach older ones"
        ));
    }
    notes
}

/// A page of sessions with hits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionHitsPage {
    /// In the order asked for.
    pub sessions: Vec<SessionHits>,
    /// Pass as the next page's `offset`: `None` when there is nothing more.
    pub next: Option<u32>,
    /// What the person should know of how the query was read and run.
    pub notes: Vec<String>,
}

/// A search's answer: sessions with hits, or one hit per entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SearchAnswer {
    /// Grouped by session ([`search_sessions`]).
    Sessions(SessionHitsPage),
    /// One per entry ([`search_page`]).
    Entries(SearchPage),
}

/// The most hits or sessions a search may skip to (an offset deeper than this is refused).
pub const MAX_OFFSET: u32 = 10_000;

/// Full-text search of `query` (the query language), best matches first, one hit per entry. A
/// query impossible as written is [`Error::BadQuery`].
pub fn search(conn: &Connection, query: &str, session: Option<&str>, limit: u32) -> Result<Vec<SearchHit>> {
    search_in(conn, query, Scope { session, ..Scope::default() }, limit)
}

/// [`search`] within `scope`.
pub fn search_in(conn: &Connection, query: &str, scope: Scope<'_>, limit: u32) -> Result<Vec<SearchHit>> {
    Ok(search_page(conn, &query::parse(query)?, scope, Sort::Relevance, 0, limit)?.hits)
}

/// A page of `limit` hits, one per entry, from `offset` in `sort`'s order.
pub fn search_page(
    conn: &Connection,
    query: &Query,
    scope: Scope<'_>,
    sort: Sort,
    offset: u32,
    limit: u32,
) -> Result<SearchPage> {
    check_offset(offset)?;
    within_budget(conn, || match Run::new(conn, query, scope)? {
        None => Ok(SearchPage { hits: Vec::new(), next: None, notes: query.notes.clone() }),
        Some(mut run) => hits_page(&mut run, sort, offset, limit),
    })
}

/// A page of `limit` sessions with hits, from `offset` in `sort`'s order: each with its best hit
/// and how many of its entries match.
pub fn search_sessions(
    conn: &Connection,
    query: &Query,
    scope: Scope<'_>,
    sort: Sort,
    offset: u32,
    limit: u32,
) -> Result<SessionHitsPage> {
    check_offset(offset)?;
    within_budget(conn, || match Run::new(conn, query, scope)? {
        None => Ok(SessionHitsPage { sessions: Vec::new(), next: None, notes: query.notes.clone() }),
        Some(mut run) => sessions_page(&mut run, sort, offset, limit),
    })
}

/// An offset a search may skip to ([`MAX_OFFSET`]), or the refusal that says why not.
pub fn check_offset(offset: u32) -> Result<()> {
    match offset > MAX_OFFSET {
        true => Err(Error::BadQuery(format!("search offset {offset}: at most {MAX_OFFSET}; narrow the query"))),
        false => Ok(()),
    }
}

/// One search under way in a store (an index's full-text index, a hub's): the primitives
/// [`hits_page`] and [`sessions_page`] make a page of, so that every store pages and groups its
/// hits alike. Only the first stage, its ranking, and reading a hit are the store's.
pub trait SearchSource {
    /// The first stage, ranked in `sort`'s order: the newest [`CANDIDATES`] matches within the
    /// scope, and whether they are every match.
    fn ranked(&mut self, sort: Sort) -> Result<(Vec<Candidate>, bool)>;
    /// A candidate's row: read with it, or now; `None` for an entry left out of search (a copy).
    fn row(&self, c: &Candidate) -> Result<Option<Row>>;
    /// How many entries of a session (of `host`, on a hub) match, all of them.
    fn count_in(&mut self, host: Option<&str>, session: &str) -> Result<u64>;
    /// A candidate as a hit, with its session's agent and last time (none when the session has no
    /// row).
    fn hit(&self, c: &Candidate, row: &Row) -> Result<(SearchHit, Option<SessionRow>)>;
    /// The search's notes: its query's, and one when the candidates were not every match.
    fn notes(&self, complete: bool) -> Vec<String>;
}

/// A page of `limit` hits of `source`, one per entry, from `offset` in `sort`'s order.
pub fn hits_page(source: &mut dyn SearchSource, sort: Sort, offset: u32, limit: u32) -> Result<SearchPage> {
    let limit = limit.clamp(1, MAX_LIMIT);
    let (candidates, complete) = source.ranked(sort)?;
    // The rows in ranking order, as far as the page and one more (the next page's sign).
    let wanted = offset as usize + limit as usize + 1;
    let mut rows = Vec::new();
    for c in &candidates {
        if rows.len() == wanted {
            break;
        }
        if let Some(row) = source.row(c)? {
            rows.push((c, row));
        }
    }
    let next = (rows.len() == wanted).then_some(offset + limit);
    let page = rows.iter().skip(offset as usize).take(limit as usize);
    let hits = page.map(|(c, row)| Ok(source.hit(c, row)?.0)).collect::<Result<Vec<_>>>()?;
    Ok(SearchPage { hits, next, notes: source.notes(complete) })
}

/// A page of `limit` sessions of `source` with hits, from `offset` in `sort`'s order: each with its
/// best hit and how many of its entries match.
pub fn sessions_page(source: &mut dyn SearchSource, sort: Sort, offset: u32, limit: u32) -> Result<SessionHitsPage> {
    let limit = limit.clamp(1, MAX_LIMIT);
    let (candidates, complete) = source.ranked(sort)?;
    // Each session at its best hit, in the order of those, as far as the page and one more (the
    // next page's sign). Where every candidate's row was read with it and they are every match, a
    // session's count is its candidates'; else it is counted.
    let wanted = offset as usize + limit as usize + 1;
    let all_read = candidates.iter().all(|c| c.row.is_some());
    let mut counts: HashMap<(Option<&str>, String), u64> = HashMap::new();
    let mut best: Vec<(&Candidate, Row)> = Vec::new();
    for c in &candidates {
        if best.len() == wanted && !(all_read && complete) {
            break;
        }
        let Some(row) = source.row(c)? else { continue };
        let n = counts.entry((c.host.as_deref(), row.session_id.clone())).or_default();
        if *n == 0 && best.len() < wanted {
            best.push((c, row));
        }
        *n += 1;
    }
    let next = (best.len() == wanted).then_some(offset + limit);
    let mut sessions = Vec::new();
    for (c, row) in best.iter().skip(offset as usize).take(limit as usize) {
        let hits = match all_read && complete {
            true => counts[&(c.host.as_deref(), row.session_id.clone())],
            false => source.count_in(c.host.as_deref(), &row.session_id)?,
        };
        let (hit, session) = source.hit(c, row)?;
        sessions.push(SessionHits::of(hit, session, hits));
    }
    Ok(SessionHitsPage { sessions, next, notes: source.notes(complete) })
}

/// Whether a word holds something the tokenizer drops (`C++`, `claude-code`, `foo.bar`): FTS5
/// matches its pieces (`c`; `claude` then `code`), and an entry that holds it as written ranks
/// above one that holds only the pieces.
fn punctuated(word: &str) -> bool {
    word.chars().any(|c| !c.is_alphanumeric())
}

/// Whether a word's punctuation is part of the name it writes, at an end the tokenizer drops it
/// from (`C++`, `C#`, `F#`, `g++`, `.NET`, `.env`): its pieces alone (`c`, `net`) would find every
/// entry with the bare letter or word, so an entry must hold it as written.
fn written_as_is(word: &str) -> bool {
    let named = |w: &str| w.chars().any(char::is_alphanumeric);
    let ends_in_mark = word.ends_with(['+', '#']) && named(word.trim_end_matches(['+', '#']));
    let begins_with_dot = word.strip_prefix('.').is_some_and(|w| w.starts_with(char::is_alphanumeric));
    ends_in_mark || begins_with_dot
}

/// A match, as a store's first stage keeps it ([`SearchSource::ranked`]).
#[derive(Debug)]
pub struct Candidate {
    /// On a team's hub: the host whose entry it is.
    pub host: Option<String>,
    /// Its entry's id (its cursor).
    pub id: i64,
    /// The first of the query's forms it matches: 0 the words together in order, 1 near each
    /// other, 2 anywhere in the entry (a query of one word or with OR has only the last; a hub has
    /// no "near").
    pub tier: u8,
    /// Whether the entry holds the query's punctuated words as written (`C++`, not only `C`).
    pub literal: bool,
    /// The store's score: an index's BM25, lower is better (FTS5's sign); a hub's rank, negated.
    pub score: f64,
    /// Its row, where the first stage read it (with filters, a punctuated word, or an order that
    /// needs it); else read when the ranking reaches it ([`SearchSource::row`]).
    pub row: Option<Row>,
}

/// A session's agent and the time of its last entry, as its row has them.
pub type SessionRow = (String, Option<String>);

/// What a candidate's entry row says of it.
#[derive(Debug, Clone)]
pub struct Row {
    /// Its session.
    pub session_id: String,
    /// Its time.
    pub timestamp: Option<String>,
    /// Conversation order within the session (`sort_at`, `sort_file`, `line`).
    pub order: (String, i64, i64),
}

/// The candidates in `sort`'s order: by `relevance` (each store's score is its own), by recency the
/// newer first, or in conversation order (each session's hits in its order, the session with the
/// newest hit first); a hub's host, then the id, breaks ties. Recent and conversation orders have
/// every candidate's row.
pub fn order(candidates: &mut [Candidate], sort: Sort, relevance: impl Fn(&Candidate, &Candidate) -> Ordering) {
    let row = |c: &Candidate| {
        c.row.clone().unwrap_or(Row { session_id: String::new(), timestamp: None, order: Default::default() })
    };
    match sort {
        Sort::Relevance => candidates.sort_by(relevance),
        Sort::Recent => candidates.sort_by_cached_key(|c| (Reverse(row(c).timestamp), c.host.clone(), Reverse(c.id))),
        Sort::Conversation => {
            let mut newest: HashMap<(Option<String>, String), Option<String>> = HashMap::new();
            for c in candidates.iter() {
                let r = row(c);
                let n = newest.entry((c.host.clone(), r.session_id.clone())).or_default();
                if r.timestamp > *n {
                    *n = r.timestamp;
                }
            }
            candidates.sort_by_cached_key(|c| {
                let r = row(c);
                let key = (c.host.clone(), r.session_id);
                (Reverse(newest[&key].clone()), key, r.order, c.id)
            })
        }
    }
}

/// An index's relevance: the tier, then the entries that hold a punctuated word as written, then
/// BM25, scores within a tenth of each other a tie, which the newer row wins (rows get higher ids
/// as they are indexed, and a first index reads the oldest files first).
fn by_relevance(a: &Candidate, b: &Candidate) -> Ordering {
    let (sa, sb) = ((a.score * 10.0).round() as i64, (b.score * 10.0).round() as i64);
    a.tier.cmp(&b.tier).then(b.literal.cmp(&a.literal)).then(sa.cmp(&sb)).then(b.id.cmp(&a.id))
}

/// One search under way: the compiled query and the SQL of its scope.
struct Run<'c> {
    conn: &'c Connection,
    compiled: Compiled,
    notes: Vec<String>,
    /// `AND …` conditions on `e` (entries) and `s` (sessions), each placeholder written `?X`
    /// ([`Run::numbered`]), and their arguments in order.
    conditions: String,
    args: Vec<Value>,
    /// Whether the conditions name `s`.
    sessions: bool,
    /// The rowids the scope's one session has (its entries' first and last id), to narrow the walk.
    range: Option<(i64, i64)>,
    /// The query's words, for the excerpt of a column too long for `snippet()`.
    words: Words,
    /// The query's first word whose punctuation the tokenizer drops (`c++`, `claude-code`),
    /// lowercased: an entry that holds it as written ranks first within its tier.
    literal: Option<String>,
}

impl<'c> Run<'c> {
    /// The search of `query` within `scope`; `None` when the scope holds nothing (a session prefix
    /// no session has).
    fn new(conn: &'c Connection, query: &Query, scope: Scope<'_>) -> Result<Option<Run<'c>>> {
        let mut query = query.clone();
        if let Some(role) = scope.role {
            let role = scope_role(role)?;
            if query.filters.role.is_some_and(|r| r != role) {
                return Ok(None);
            }
            query.filters.role = Some(role);
        }
        prefixes::spell_out(conn, &mut query)?;
        let mut run = Run {
            conn,
            compiled: fts::compile(&query),
            notes: query.notes.clone(),
            conditions: String::new(),
            args: Vec::new(),
            sessions: false,
            range: None,
            words: Words::of(query.all.iter().flatten().map(|t| (t.text.as_str(), t.prefix))),
            literal: query
                .all
                .iter()
                .flatten()
                .find(|t| !t.phrase && punctuated(&t.text))
                .map(|t| t.text.to_lowercase()),
        };
        let f = &query.filters;
        let cond = |run: &mut Run, sql: &str, value: Option<&str>| {
            if let Some(v) = value {
                run.conditions.push_str(sql);
                run.args.push(Value::Text(v.to_owned()));
            }
        };
        // A word whose punctuation names something (`C++`), alone in its clause: found as written.
        for clause in &query.all {
            if let [term] = &clause[..]
                && written_as_is(&term.text)
            {
                // SQLite's `lower` folds ASCII only: so does the word.
                let written = term.text.to_ascii_lowercase();
                let sql = " AND instr(lower(coalesce(e.text, '') || ' ' || coalesce(e.tool_text, '')), ?X) > 0";
                cond(&mut run, sql, Some(&written));
            }
        }
        cond(&mut run, " AND e.agent = ?X", scope.agent);
        cond(&mut run, " AND e.agent = ?X", f.agent.as_deref());
        match f.role {
            Some(Role::User) => cond(&mut run, " AND e.role = ?X", Some("user")),
            Some(Role::Assistant) => cond(&mut run, " AND e.role = ?X", Some("assistant")),
            _ => {}
        }
        cond(&mut run, " AND e.timestamp >= ?X", scope.since);
        cond(&mut run, " AND e.timestamp >= ?X", f.after.as_deref());
        cond(&mut run, " AND e.timestamp < ?X", scope.until);
        cond(&mut run, " AND e.timestamp < ?X", f.before.as_deref());
        if scope.project.is_some() || f.project.is_some() || scope.active_since.is_some() {
            run.sessions = true;
        }
        cond(&mut run, " AND s.project = ?X", scope.project);
        cond(&mut run, " AND instr(s.project, ?X) > 0", f.project.as_deref());
        cond(&mut run, " AND coalesce(s.last_timestamp, '') < ?X", scope.active_since);
        // The session: named whole, or by the beginning of its id.
        let mut ids: Option<Vec<String>> = scope.session.map(|s| vec![s.to_owned()]);
        if let Some(prefix) = f.session.as_deref() {
            let mut stmt = conn.prepare_cached(
                "SELECT id FROM sessions WHERE id >= ?1 AND id < ?1 || char(1114111) ORDER BY id LIMIT 101",
            )?;
            let found: Vec<String> = stmt.query_map([prefix], |r| r.get(0))?.collect::<rusqlite::Result<_>>()?;
            ids = Some(match ids {
                Some(given) => given.into_iter().filter(|g| g.starts_with(prefix)).collect(),
                None if found.len() > 100 => {
                    let sql = format!(" AND substr(e.session_id, 1, {}) = ?X", prefix.chars().count());
                    cond(&mut run, &sql, Some(prefix));
                    Vec::new()
                }
                None => found,
            });
            if ids.as_ref().is_some_and(Vec::is_empty) && !run.conditions.contains("substr(e.session_id") {
                return Ok(None);
            }
        }
        if let Some(ids) = ids.filter(|ids| !ids.is_empty()) {
            run.conditions.push_str(" AND e.session_id IN (");
            for (i, id) in ids.iter().enumerate() {
                run.conditions.push_str(if i == 0 { "?X" } else { ", ?X" });
                run.args.push(Value::Text(id.clone()));
            }
            run.conditions.push(')');
            if let [one] = &ids[..] {
                run.range = Some(run.conn.query_row(
                    "SELECT coalesce(min(id), 0), coalesce(max(id), -1) FROM entries WHERE session_id = ?1",
                    [one],
                    |r| Ok((r.get(0)?, r.get(1)?)),
                )?);
            }
        }
        Ok(Some(run))
    }

    /// The `FROM … WHERE` of a walk of the full-text index for `?1`, within the scope. The index
    /// is the outer loop (`CROSS JOIN`): it is walked once, in rowid order, and each match's row
    /// read by its id; with the entries outer, SQLite would ask the index once per row of a session.
    fn tables_and_conditions(&self) -> String {
        let mut sql = String::from("FROM entries_fts CROSS JOIN entries e ON e.id = entries_fts.rowid");
        if self.sessions {
            sql.push_str(" LEFT JOIN sessions s ON s.id = e.session_id");
        }
        sql.push_str(" WHERE entries_fts MATCH ?1 AND e.duplicate = 0");
        if let Some((first, last)) = self.range {
            write!(sql, " AND entries_fts.rowid BETWEEN {first} AND {last}").unwrap();
        }
        sql.push_str(&self.conditions);
        sql
    }

    /// The arguments of [`Self::tables_and_conditions`]'s SQL after `match_expr`, numbered as it numbers them.
    fn args_with(&self, match_expr: &str) -> Vec<Value> {
        let mut args = vec![Value::Text(match_expr.to_owned())];
        args.extend(self.args.iter().cloned());
        args
    }

    /// `sql` with its placeholders after `?1`, written `?X`, numbered in order from `?2`.
    fn numbered(sql: &str) -> String {
        let mut out = String::with_capacity(sql.len());
        let mut n = 1;
        let mut rest = sql;
        while let Some(at) = rest.find("?X") {
            n += 1;
            out.push_str(&rest[..at]);
            write!(out, "?{n}").unwrap();
            rest = &rest[at + 2..];
        }
        out.push_str(rest);
        out
    }

    /// The first stage: the newest [`CANDIDATES`] matches, each with its score and tier, and
    /// whether they are every match of the query. Without filters or punctuated words, and ranked
    /// by relevance, the full-text index alone is read: each row is read later, when the ranking
    /// reaches it ([`Run::row`]), so that a page reads a few rows, not thousands.
    fn candidates(&self, sort: Sort) -> Result<(Vec<Candidate>, bool)> {
        let lean =
            sort == Sort::Relevance && self.conditions.is_empty() && self.literal.is_none() && self.range.is_none();
        let (mut out, complete) = match lean {
            true => self.walk_lean()?,
            false => self.walk_joined()?,
        };
        if sort == Sort::Relevance && !self.compiled.closer.is_empty() {
            // The closer tiers, among the candidates only: their walks start no lower than the
            // oldest candidate's row.
            let lowest = out.iter().map(|c| c.id).min().unwrap_or(0);
            let mut tiers: HashMap<i64, u8> = HashMap::new();
            for (tier, expr) in self.compiled.closer.iter().enumerate().rev() {
                let sql = format!("SELECT rowid FROM entries_fts WHERE entries_fts MATCH ?1 AND rowid >= {lowest}");
                let mut stmt = self.conn.prepare_cached(&sql)?;
                let rows = stmt.query_map([expr], |r| r.get::<_, i64>(0))?;
                for id in rows {
                    tiers.insert(id.map_err(fts_error)?, tier as u8);
                }
            }
            for c in &mut out {
                if let Some(&tier) = tiers.get(&c.id) {
                    c.tier = tier;
                }
            }
        }
        Ok((out, complete))
    }

    /// The newest matches from the full-text index alone, with their scores.
    fn walk_lean(&self) -> Result<(Vec<Candidate>, bool)> {
        let last = self.compiled.closer.len() as u8;
        let sql = format!(
            "SELECT rowid, bm25(entries_fts, {WEIGHTS}) FROM entries_fts WHERE entries_fts MATCH ?1
             ORDER BY rowid DESC LIMIT {}",
            CANDIDATES + 1
        );
        let mut stmt = self.conn.prepare_cached(&sql)?;
        let rows = stmt.query_map([&self.compiled.all], |r| {
            Ok(Candidate { host: None, id: r.get(0)?, score: r.get(1)?, tier: last, literal: false, row: None })
        })?;
        let mut out = rows.collect::<rusqlite::Result<Vec<_>>>().map_err(fts_error)?;
        let complete = out.len() <= CANDIDATES;
        out.truncate(CANDIDATES);
        Ok((out, complete))
    }

    /// The newest matches within the scope, with their rows and scores.
    fn walk_joined(&self) -> Result<(Vec<Candidate>, bool)> {
        let last = self.compiled.closer.len() as u8;
        let literal = match &self.literal {
            Some(_) => "instr(lower(coalesce(e.text, '') || ' ' || coalesce(e.tool_text, '')), ?X) > 0",
            None => "0",
        };
        let sql = Self::numbered(&format!(
            "SELECT {literal}, e.id, e.session_id, e.timestamp, bm25(entries_fts, {WEIGHTS}), e.sort_at, e.sort_file,
                    e.line {} ORDER BY entries_fts.rowid DESC LIMIT {}",
            self.tables_and_conditions(),
            CANDIDATES + 1
        ));
        let mut args = self.args_with(&self.compiled.all);
        if let Some(literal) = &self.literal {
            args.insert(1, Value::Text(literal.clone()));
        }
        let mut stmt = self.conn.prepare_cached(&sql)?;
        let rows = stmt.query_map(rusqlite::params_from_iter(args), |r| {
            Ok(Candidate {
                host: None,
                literal: r.get(0)?,
                id: r.get(1)?,
                score: r.get(4)?,
                tier: last,
                row: Some(Row {
                    session_id: r.get(2)?,
                    timestamp: r.get(3)?,
                    order: (r.get(5)?, r.get(6)?, r.get(7)?),
                }),
            })
        })?;
        let mut out = rows.collect::<rusqlite::Result<Vec<_>>>().map_err(fts_error)?;
        let complete = out.len() <= CANDIDATES;
        out.truncate(CANDIDATES);
        Ok((out, complete))
    }
}

impl SearchSource for Run<'_> {
    fn ranked(&mut self, sort: Sort) -> Result<(Vec<Candidate>, bool)> {
        let (mut candidates, complete) = self.candidates(sort)?;
        order(&mut candidates, sort, by_relevance);
        Ok((candidates, complete))
    }

    /// A candidate's row: read with it, or now; `None` for a copy (left out of search).
    fn row(&self, c: &Candidate) -> Result<Option<Row>> {
        if let Some(row) = &c.row {
            return Ok(Some(row.clone()));
        }
        let row = self
            .conn
            .prepare_cached(
                "SELECT session_id, timestamp, sort_at, sort_file, line FROM entries WHERE id = ?1 AND duplicate = 0",
            )?
            .query_row([c.id], |r| {
                Ok(Row { session_id: r.get(0)?, timestamp: r.get(1)?, order: (r.get(2)?, r.get(3)?, r.get(4)?) })
            })
            .optional()?;
        Ok(row)
    }

    /// The entries of `session` that match, all of them: counted among the ids between its first
    /// and last entry's, which its row keeps (a min and a max over a long session's entries would
    /// read all of them at each search).
    fn count_in(&mut self, _: Option<&str>, session: &str) -> Result<u64> {
        let kept: Option<(Option<i64>, Option<i64>)> = self
            .conn
            .prepare_cached("SELECT first_entry, last_entry FROM sessions WHERE id = ?1")?
            .query_row([session], |r| Ok((r.get(0)?, r.get(1)?)))
            .optional()?;
        let (first, last): (i64, i64) = match kept {
            Some((Some(first), Some(last))) => (first, last),
            _ => self.conn.query_row(
                "SELECT coalesce(min(id), 0), coalesce(max(id), -1) FROM entries WHERE session_id = ?1",
                [session],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )?,
        };
        let sql = Self::numbered(&format!(
            "SELECT count(*) {} AND entries_fts.rowid BETWEEN {first} AND {last} AND e.session_id = ?X",
            self.tables_and_conditions()
        ));
        let mut args = self.args_with(&self.compiled.all);
        args.push(Value::Text(session.to_owned()));
        let n: i64 = self.conn.prepare_cached(&sql)?.query_row(rusqlite::params_from_iter(args), |r| r.get(0))?;
        Ok(n as u64)
    }

    /// A candidate as a hit: its columns, its session's title and project, and its snippet (of what
    /// was said where the words are there, else of tool text); with its session's agent and last
    /// time (none when the session has no row).
    fn hit(&self, c: &Candidate, row: &Row) -> Result<(SearchHit, Option<SessionRow>)> {
        let mut stmt = self.conn.prepare_cached(concat!(
            "SELECT e.uuid, e.line, e.type, e.timestamp, e.agent, e.role, e.tools, s.title, s.project,
                    CASE WHEN length(e.text) <= ?3 THEN snippet(entries_fts, 0, char(57344), char(57345), '…', 16)
                         ELSE e.text END,
                    CASE WHEN length(e.tool_text) <= ?3 THEN snippet(entries_fts, 1, char(57344), char(57345), '…', 16)
                         ELSE e.tool_text END,
                    s.agent, s.last_timestamp, length(e.text) > ?3, length(e.tool_text) > ?3,
                    s.first_timestamp, ",
            first_said!("s"),
            " FROM entries_fts CROSS JOIN entries e ON e.id = entries_fts.rowid LEFT JOIN sessions s ON s.id = e.session_id
             WHERE entries_fts MATCH ?1 AND entries_fts.rowid = ?2"
        ))?;
        let hit = stmt
            .query_row(params![self.compiled.all, c.id, SNIPPET_FTS_MAX as i64], |r| {
                // A long column's snippet is an excerpt (`snippet()`'s cost is the square of its matches).
                let snippet = |column: usize, long: usize| -> rusqlite::Result<Snippet> {
                    let text = r.get::<_, Option<String>>(column)?.unwrap_or_default();
                    let text = match r.get::<_, Option<bool>>(long)?.unwrap_or(false) {
                        true => excerpt(&text, &self.words),
                        false => text,
                    };
                    Ok(Snippet(words::unmark(&text).into_owned()))
                };
                let said = snippet(9, 13)?;
                let tool = snippet(10, 14)?;
                let in_tool = !said.has_match() && (tool.has_match() || said.0.is_empty());
                let tools: Option<String> = r.get(6)?;
                let project: Option<String> = r.get(8)?;
                let first: Option<String> = r.get(15)?;
                let title = shown_title(r.get(7)?, r.get(16)?, project.as_deref(), first.as_deref());
                let session = r.get::<_, Option<String>>(11)?.map(|agent| (agent, r.get(12).ok().flatten()));
                let hit = SearchHit {
                    session_id: row.session_id.clone(),
                    entry_uuid: r.get(0)?,
                    cursor: c.id,
                    line: r.get(1)?,
                    kind: r.get(2)?,
                    timestamp: r.get(3)?,
                    agent: r.get(4)?,
                    role: r.get(5)?,
                    tool: tools.and_then(|t| t.lines().next().map(str::to_owned)),
                    title,
                    project,
                    in_tool,
                    snippet: if in_tool { tool } else { said },
                    host: None,
                };
                Ok((hit, session))
            })
            .map_err(fts_error)?;
        Ok(hit)
    }

    /// The notes of this search: the query's, and one when the candidates were not every match.
    fn notes(&self, complete: bool) -> Vec<String> {
        notes_of(&self.notes, complete)
    }
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

    #[test]
    fn placeholders_are_numbered_in_order() {
        assert_eq!(Run::numbered("a = ?1 AND b = ?X AND c < ?X"), "a = ?1 AND b = ?2 AND c < ?3");
    }
}
