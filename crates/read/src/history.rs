//! Reading history back: session lists, pages of entries, and full-text search.
//!
//! Plain functions of a read-only `&Connection`, returning plain Rust values; how they look on the
//! wire (camelCase JSON, URLs, escaped snippets) is the HTTP layer's business. A page never reads a
//! transcript byte: everything it needs (stored lines, media rows) is in SQLite, and
//! [`HistoryEntry::render`] turns a stored line into what a client shows.

use std::collections::HashMap;
use std::fmt::Write as _;

use rusqlite::{Connection, OptionalExtension, params};

use crate::index::{MEDIA_COLUMNS, media_record};
use crate::media::MediaRecord;
use crate::render::{self, MediaUrls};
use scrollback_core::codec::order::Order;
use scrollback_core::codec::words;
use scrollback_core::error::{Error, Result};
use scrollback_core::format::{self, Columns, Format};

/// The longest page a caller may ask for.
pub const MAX_LIMIT: u32 = 500;

/// The most terms a full-text query may have.
pub const MAX_TERMS: usize = 32;
/// The most prefix terms (`word*`) a full-text query may have: each expands to every word it
/// begins, the costliest part of a query.
pub const MAX_PREFIX_TERMS: usize = 4;
/// The longest full-text query, in bytes.
pub const MAX_QUERY: usize = 1000;
/// The most SQLite virtual machine steps one full-text query may take (about a second of work on
/// this project's machines) before it is stopped and refused.
pub const QUERY_STEPS: u64 = 50_000_000;

/// Refuses a full-text query over the budget before it runs: too long, too many terms, too many
/// prefix terms. The answer says which.
pub fn check_query(query: &str) -> Result<()> {
    if query.len() > MAX_QUERY {
        return Err(Error::BadQuery(format!("search query: {} bytes; at most {MAX_QUERY}", query.len())));
    }
    // Terms as FTS5 sees them, near enough: white space outside double quotes separates them.
    let mut terms = Vec::new();
    let mut quoted = false;
    let mut term = String::new();
    for c in query.chars() {
        match c {
            '"' => {
                quoted = !quoted;
                term.push(c);
            }
            c if c.is_whitespace() && !quoted => terms.push(std::mem::take(&mut term)),
            c => term.push(c),
        }
    }
    terms.push(term);
    let terms: Vec<&String> =
        terms.iter().filter(|t| !t.is_empty() && !["AND", "OR", "NOT", "NEAR"].contains(&t.as_str())).collect();
    let prefixes = terms.iter().filter(|t| t.trim_end_matches([')', '"']).ends_with('*')).count();
    if terms.len() > MAX_TERMS {
        return Err(Error::BadQuery(format!("search query: {} terms; at most {MAX_TERMS}", terms.len())));
    }
    if prefixes > MAX_PREFIX_TERMS {
        return Err(Error::BadQuery(format!(
            "search query: {prefixes} prefix terms (word*); at most {MAX_PREFIX_TERMS}"
        )));
    }
    Ok(())
}

/// Runs `f` with a bound on the work SQLite may do: past [`QUERY_STEPS`] steps the query is
/// interrupted and refused as [`Error::BadQuery`], so that no query can hold a connection for long.
fn within_budget<T>(conn: &Connection, f: impl FnOnce() -> Result<T>) -> Result<T> {
    /// The handler is called every this many steps.
    const EVERY: i32 = 100_000;
    let mut steps = 0u64;
    conn.progress_handler(
        EVERY,
        Some(move || {
            steps += EVERY as u64;
            steps > QUERY_STEPS
        }),
    )?;
    let result = f();
    conn.progress_handler(EVERY, None::<fn() -> bool>)?;
    result.map_err(|e| match &e {
        Error::Sqlite(rusqlite::Error::SqliteFailure(f, _)) if f.code == rusqlite::ErrorCode::OperationInterrupted => {
            Error::BadQuery(
                "search query: it would take too long; narrow it (fewer or longer words, no prefixes)".into(),
            )
        }
        _ => e,
    })
}

/// One session, as listed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionSummary {
    /// The session id.
    pub id: String,
    /// Its working directory.
    pub project: Option<String>,
    /// Its title.
    pub title: Option<String>,
    /// Earliest entry timestamp.
    pub first_timestamp: Option<String>,
    /// Latest entry timestamp.
    pub last_timestamp: Option<String>,
    /// Entries: what history returns with side chains (invalid lines included, copies of an entry
    /// left out).
    pub entries: i64,
    /// Of `entries`, those on a side chain: history without side chains returns the others.
    pub sidechain_entries: i64,
    /// Image blocks (failed uploads included).
    pub images: i64,
    /// Every transcript of the session is gone: the index holds its only copy.
    pub gone: bool,
    /// The agent that wrote it (`claude`, `codex`, `gemini`).
    pub agent: String,
    /// The session it was forked from, as its transcript says.
    pub forked_from: Option<String>,
}

/// A page of sessions, newest first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionPage {
    /// The sessions.
    pub sessions: Vec<SessionSummary>,
    /// Pass as `cursor` for the next page; `None` at the end.
    pub next: Option<String>,
}

/// Which sessions to list.
#[derive(Debug, Clone, Default)]
pub struct SessionQuery {
    /// Only sessions whose project is this.
    pub project: Option<String>,
    /// Only sessions of this agent.
    pub agent: Option<String>,
    /// Only sessions with an entry matching this full-text query, or whose title contains it.
    pub text: Option<String>,
    /// Only sessions with an entry at or after this instant ([`time_bound`]).
    pub since: Option<String>,
    /// Only sessions with an entry before this instant ([`time_bound`]).
    pub until: Option<String>,
    /// Leave out sessions whose last entry is at or after this instant (still being written).
    pub active_since: Option<String>,
    /// From this cursor on.
    pub cursor: Option<String>,
    /// At most this many.
    pub limit: u32,
}

/// Lists sessions, newest (by last entry) first. A cursor this index never gave, or a text query
/// the full-text engine cannot parse, is [`Error::BadQuery`].
pub fn sessions(conn: &Connection, q: &SessionQuery) -> Result<SessionPage> {
    let limit = q.limit.clamp(1, MAX_LIMIT);
    // The cursor is "<lastTimestamp>|<rowid>" of the last session of the previous page.
    let cursor = match q.cursor.as_deref() {
        None => None,
        Some(c) => match c.rsplit_once('|').and_then(|(ts, id)| Some((ts.to_owned(), id.parse::<i64>().ok()?))) {
            Some(parsed) => Some(parsed),
            None => return Err(Error::BadQuery(format!("cursor {c:?} is not one this server gave"))),
        },
    };
    let mut sql = String::from(
        "SELECT rowid, id, project, title, first_timestamp, last_timestamp, entries, images, sidechain_entries,
                NOT EXISTS (SELECT 1 FROM entries e JOIN files f ON f.id = e.file_id
                            WHERE e.session_id = sessions.id AND f.state = 'live'),
                agent, forked_from
         FROM sessions WHERE 1",
    );
    let mut args: Vec<Box<dyn rusqlite::ToSql>> = Vec::new();
    if let Some(project) = &q.project {
        sql.push_str(" AND project = ?");
        args.push(Box::new(project.clone()));
    }
    if let Some(agent) = &q.agent {
        sql.push_str(" AND agent = ?");
        args.push(Box::new(agent.clone()));
    }
    if let Some(text) = &q.text {
        check_query(text)?;
        sql.push_str(
            " AND (instr(lower(coalesce(title, '')), lower(?)) > 0 OR id IN (
                 SELECT e.session_id FROM entries_fts JOIN entries e ON e.id = entries_fts.rowid
                 WHERE entries_fts MATCH ? AND e.duplicate = 0))",
        );
        args.push(Box::new(text.clone()));
        args.push(Box::new(words::mark(text).into_owned()));
    }
    for (bound, clause) in [
        (&q.since, " AND coalesce(last_timestamp, '') >= ?"),
        (&q.until, " AND first_timestamp < ?"),
        (&q.active_since, " AND coalesce(last_timestamp, '') < ?"),
    ] {
        if let Some(bound) = bound {
            sql.push_str(clause);
            args.push(Box::new(bound.clone()));
        }
    }
    if let Some((ts, rowid)) = &cursor {
        sql.push_str(" AND (coalesce(last_timestamp, ''), rowid) < (?, ?)");
        args.push(Box::new(ts.clone()));
        args.push(Box::new(*rowid));
    }
    write!(sql, " ORDER BY coalesce(last_timestamp, '') DESC, rowid DESC LIMIT {}", limit + 1).unwrap();
    let rows = within_budget(conn, || {
        let mut stmt = conn.prepare(&sql)?;
        let rows = stmt.query_map(rusqlite::params_from_iter(args.iter().map(|a| a.as_ref())), |r| {
            Ok((
                r.get::<_, i64>(0)?,
                SessionSummary {
                    id: r.get(1)?,
                    project: r.get(2)?,
                    title: r.get(3)?,
                    first_timestamp: r.get(4)?,
                    last_timestamp: r.get(5)?,
                    entries: r.get(6)?,
                    images: r.get(7)?,
                    sidechain_entries: r.get(8)?,
                    gone: r.get(9)?,
                    agent: r.get(10)?,
                    forked_from: r.get(11)?,
                },
            ))
        })?;
        rows.collect::<rusqlite::Result<Vec<(i64, SessionSummary)>>>().map_err(fts_error)
    });
    let mut rows = rows?;
    let next = if rows.len() > limit as usize {
        rows.truncate(limit as usize);
        rows.last().map(|(rowid, s)| format!("{}|{rowid}", s.last_timestamp.as_deref().unwrap_or("")))
    } else {
        None
    };
    Ok(SessionPage { sessions: rows.into_iter().map(|(_, s)| s).collect(), next })
}

/// The git branch the session's transcript names last (Claude Code's `gitBranch`, Codex's
/// `session_meta`), if it names one.
pub fn git_branch(conn: &Connection, session_id: &str) -> Result<Option<String>> {
    let branch: Option<String> = conn
        .prepare_cached(
            r#"SELECT coalesce(json_extract(stripped, '$.gitBranch'), json_extract(stripped, '$.payload.git.branch'))
             FROM entries
             WHERE session_id = ?1 AND stripped IS NOT NULL AND duplicate = 0
               AND (instr(stripped, '"gitBranch":"') > 0 OR (type = 'session_meta' AND instr(stripped, '"branch"') > 0))
               AND json_valid(stripped)
             ORDER BY sort_at DESC, line DESC LIMIT 1"#,
        )?
        .query_row([session_id], |r| r.get(0))
        .optional()?
        .flatten();
    Ok(branch.filter(|b| !b.trim().is_empty()))
}

/// One session as listed, by its id; `None` if the index has no such session.
pub fn session(conn: &Connection, id: &str) -> Result<Option<SessionSummary>> {
    Ok(conn
        .prepare_cached(
            "SELECT id, project, title, first_timestamp, last_timestamp, entries, images, sidechain_entries,
                    NOT EXISTS (SELECT 1 FROM entries e JOIN files f ON f.id = e.file_id
                                WHERE e.session_id = sessions.id AND f.state = 'live'),
                    agent, forked_from
             FROM sessions WHERE id = ?1",
        )?
        .query_row([id], |r| {
            Ok(SessionSummary {
                id: r.get(0)?,
                project: r.get(1)?,
                title: r.get(2)?,
                first_timestamp: r.get(3)?,
                last_timestamp: r.get(4)?,
                entries: r.get(5)?,
                images: r.get(6)?,
                sidechain_entries: r.get(7)?,
                gone: r.get(8)?,
                agent: r.get(9)?,
                forked_from: r.get(10)?,
            })
        })
        .optional()?)
}

/// The cursor of a session's first entry in conversation order (side chains included if asked),
/// to read it from its start with [`Position::From`].
pub fn first_cursor(conn: &Connection, session_id: &str, sidechains: bool) -> Result<Option<i64>> {
    let side = if sidechains { "" } else { " AND is_sidechain = 0" };
    Ok(conn
        .prepare_cached(&format!(
            "SELECT id FROM entries WHERE session_id = ?1 AND duplicate = 0{side} {OLDEST_FIRST} LIMIT 1"
        ))?
        .query_row([session_id], |r| r.get(0))
        .optional()?)
}

/// A failed full-text query: [`Error::BadQuery`] with FTS5's reason when the query could not be
/// parsed (the caller's mistake), the database error otherwise.
fn fts_error(e: rusqlite::Error) -> Error {
    match &e {
        rusqlite::Error::SqliteFailure(_, Some(message))
            if ["fts5", "syntax error", "no such column", "unterminated string", "unknown special query"]
                .iter()
                .any(|m| message.contains(m)) =>
        {
            Error::BadQuery(format!("search query: {message}"))
        }
        _ => e.into(),
    }
}

/// Where a history page starts. Pages are in conversation order (see [`scrollback_core::codec::order`]); a
/// cursor is an entry's `entries.id`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Position {
    /// The newest page.
    Newest,
    /// The page just before this entry in conversation order.
    Before(i64),
    /// This entry and the ones after it in conversation order (reading forward from a search hit).
    From(i64),
    /// Catching up: the session's entries indexed since the page that gave this `after`, wherever
    /// they stand in the conversation (a sub-agent's file may be indexed after entries that follow
    /// it). Each entry is given exactly once across catch-ups.
    After(i64),
}

/// One entry of a history page.
#[derive(Debug, Clone)]
pub struct HistoryEntry {
    /// This entry's cursor.
    pub cursor: i64,
    /// Where it stands in the conversation: pages are sorted by it (then by cursor), and a client
    /// puts an entry from a catch-up in its place by it.
    pub order: Order,
    /// 1-based line number in its transcript.
    pub line: i64,
    /// Its columns (`uuid`, `type`, role, timestamp, ...).
    pub columns: Columns,
    /// The format of its transcript: how its line is laid out.
    pub format: &'static dyn Format,
    /// The sub-agent this entry's tool call ran, where the transcript says so.
    pub subagent: Option<Subagent>,
    /// The stored line and its payloads, or why the line could not be indexed.
    pub body: EntryBody,
}

/// A sub-agent a tool call ran (a `Task` tool result's `toolUseResult.agentId`), and where its
/// entries are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Subagent {
    /// Its `agentId`.
    pub agent_id: String,
    /// The cursor of its first entry in this session (with side chains), if its transcript is indexed.
    pub first: Option<i64>,
    /// How many entries it has in this session.
    pub entries: i64,
}

/// What an entry holds.
#[derive(Debug, Clone)]
pub enum EntryBody {
    /// The stored line (each payload replaced by the marker) and its media rows, in line order.
    Stored {
        /// The stored line.
        stripped: String,
        /// Its payloads.
        media: Vec<MediaRecord>,
    },
    /// Why the line could not be indexed.
    Invalid(String),
}

impl HistoryEntry {
    /// The stored line rendered for a client, with payload URLs from `urls` (see
    /// [`render::render`]); `None` for an invalid line.
    pub fn render(&self, urls: &impl MediaUrls) -> Option<String> {
        match &self.body {
            EntryBody::Stored { stripped, media } => {
                Some(render::render(stripped, &media.iter().collect::<Vec<_>>(), self.format.block_places(), urls))
            }
            EntryBody::Invalid(_) => None,
        }
    }

    /// Why the line could not be indexed, if it could not.
    pub fn invalid(&self) -> Option<&str> {
        match &self.body {
            EntryBody::Invalid(reason) => Some(reason),
            EntryBody::Stored { .. } => None,
        }
    }
}

/// A page of history.
#[derive(Debug, Clone)]
pub struct HistoryPage {
    /// The session.
    pub session_id: String,
    /// Entries in conversation order.
    pub entries: Vec<HistoryEntry>,
    /// Pass as `before` for the page before this one; `None` at the start of the session (and for a
    /// catch-up).
    pub before: Option<i64>,
    /// Pass as `after` to catch up on what is indexed from now on.
    pub after: Option<i64>,
    /// For a page read forward ([`Position::From`]): the first entry after it, to pass as `from`
    /// for the next page; `None` at the newest entry (and for other pages).
    pub next: Option<i64>,
}

/// The columns a history row is read with, and the order clause of each direction.
const COLUMNS: &str = "id, line, uuid, parent_uuid, type, role, timestamp, is_sidechain, stripped, invalid, sort_at, sort_file, spawned_agent, agent";
// Entries of the same place (two files of the same name, at the same instant and line: copies, in
// practice) are ordered by cursor, so that the order is total and pages neither skip nor repeat.
const OLDEST_FIRST: &str = "ORDER BY sort_at, sort_file, line, id";
const NEWEST_FIRST: &str = "ORDER BY sort_at DESC, sort_file DESC, line DESC, id DESC";
/// Entries before a place. A place is compared as values bound to the statement, not as a
/// subquery: so SQLite walks `entries_order` from that place on, whatever the ties on its first
/// columns.
const BEFORE_PLACE: &str = "(sort_at, sort_file, line, id) < (?2, ?3, ?4, ?5)";

/// A page of a session's history, in conversation order. Side chains (sub-agent transcripts) are
/// left out unless asked for; copies of an entry are always left out. A `before` or `from` cursor
/// that is not an entry of this session is [`Error::BadQuery`].
pub fn history(
    conn: &Connection,
    session_id: &str,
    at: Position,
    limit: u32,
    sidechains: bool,
) -> Result<Option<HistoryPage>> {
    // One snapshot for the page and the catch-up mark, so that nothing indexed between the two
    // reads is skipped.
    let tx = if conn.is_autocommit() { Some(conn.unchecked_transaction()?) } else { None };
    let page = history_in(conn, session_id, at, limit, sidechains);
    drop(tx);
    page
}

fn history_in(
    conn: &Connection,
    session_id: &str,
    at: Position,
    limit: u32,
    sidechains: bool,
) -> Result<Option<HistoryPage>> {
    let exists: bool = conn
        .prepare_cached(
            "SELECT EXISTS (SELECT 1 FROM sessions WHERE id = ?1) OR EXISTS (SELECT 1 FROM entries WHERE session_id = ?1)",
        )?
        .query_row([session_id], |r| r.get(0))?;
    if !exists {
        return Ok(None);
    }
    let limit = limit.clamp(1, MAX_LIMIT) as i64;
    let side = if sidechains { "" } else { " AND is_sidechain = 0" };
    let visible = format!("session_id = ?1 AND duplicate = 0{side}");
    let place = match at {
        Position::Before(c) | Position::From(c) => match place_of(conn, session_id, c)? {
            Some(place) => Some((place, c)),
            None => return Err(Error::BadQuery(format!("cursor {c} is not an entry of this session"))),
        },
        Position::Newest | Position::After(_) => None,
    };
    let mut entries = page_rows(conn, session_id, at, place.as_ref(), &visible, limit)?;
    let cursor = match at {
        Position::Newest => None,
        Position::Before(c) | Position::From(c) | Position::After(c) => Some(c),
    };
    let next = match at {
        Position::From(_) if entries.len() as i64 > limit => entries.pop().map(|e| e.cursor),
        _ => None,
    };
    let high_water: Option<i64> = conn.prepare_cached("SELECT max(id) FROM entries")?.query_row([], |r| r.get(0))?;
    let after = match at {
        // A full catch-up page may leave more behind it: the next one goes on from its last row.
        Position::After(c) if entries.len() as i64 >= limit => entries.last().map(|e| e.cursor).or(Some(c)),
        _ => high_water.or(cursor),
    };
    entries.sort_by(|a, b| (&a.order, a.cursor).cmp(&(&b.order, b.cursor)));
    attach_media(conn, session_id, &mut entries)?;
    attach_subagents(conn, session_id, &mut entries)?;
    let before = match (at, entries.first()) {
        (Position::After(_), _) | (_, None) => None,
        (_, Some(oldest)) => {
            let o = &oldest.order;
            let older_exists = conn
                .prepare_cached(&format!("SELECT 1 FROM entries WHERE {visible} AND {BEFORE_PLACE} LIMIT 1"))?
                .query_row(params![session_id, o.at, o.file, o.line, oldest.cursor], |_| Ok(()))
                .optional()?
                .is_some();
            older_exists.then_some(oldest.cursor)
        }
    };
    Ok(Some(HistoryPage { session_id: session_id.to_owned(), entries, before, after, next }))
}

/// The rows of a page at `at` (from `place`, the entry a cursor names, and its cursor), newest or
/// oldest first as the direction reads them: one index range scan of `limit` rows (one more for a
/// page read forward, which tells whether another follows).
fn page_rows(
    conn: &Connection,
    session_id: &str,
    at: Position,
    place: Option<&(Order, i64)>,
    visible: &str,
    limit: i64,
) -> Result<Vec<HistoryEntry>> {
    let rows = match (at, place) {
        (Position::Newest, _) => conn
            .prepare_cached(&format!("SELECT {COLUMNS} FROM entries WHERE {visible} {NEWEST_FIRST} LIMIT ?2"))?
            .query_map(params![session_id, limit], history_row)?
            .collect::<rusqlite::Result<_>>()?,
        (Position::After(c), _) => conn
            .prepare_cached(&format!("SELECT {COLUMNS} FROM entries WHERE {visible} AND id > ?2 ORDER BY id LIMIT ?3"))?
            .query_map(params![session_id, c, limit], history_row)?
            .collect::<rusqlite::Result<_>>()?,
        (Position::Before(_), Some((o, c))) => conn
            .prepare_cached(&format!(
                "SELECT {COLUMNS} FROM entries WHERE {visible} AND {BEFORE_PLACE} {NEWEST_FIRST} LIMIT ?6"
            ))?
            .query_map(params![session_id, o.at, o.file, o.line, c, limit], history_row)?
            .collect::<rusqlite::Result<_>>()?,
        (Position::From(_), Some((o, c))) => conn
            .prepare_cached(&format!(
                "SELECT {COLUMNS} FROM entries WHERE {visible} AND (sort_at, sort_file, line, id) >= (?2, ?3, ?4, ?5)
                 {OLDEST_FIRST} LIMIT ?6 + 1"
            ))?
            .query_map(params![session_id, o.at, o.file, o.line, c, limit], history_row)?
            .collect::<rusqlite::Result<_>>()?,
        (Position::Before(_) | Position::From(_), None) => unreachable!("a place was found above"),
    };
    Ok(rows)
}

/// One row of a history query ([`COLUMNS`]).
fn history_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<HistoryEntry> {
    let body = match (r.get::<_, Option<String>>(8)?, r.get::<_, Option<String>>(9)?) {
        (Some(stripped), None) => EntryBody::Stored { stripped, media: Vec::new() },
        (_, invalid) => EntryBody::Invalid(invalid.unwrap_or_default()),
    };
    let line: i64 = r.get(1)?;
    Ok(HistoryEntry {
        cursor: r.get(0)?,
        order: Order { at: r.get(10)?, file: r.get(11)?, line },
        line,
        columns: Columns {
            uuid: r.get(2)?,
            parent_uuid: r.get(3)?,
            kind: r.get(4)?,
            role: r.get(5)?,
            timestamp: r.get(6)?,
            is_sidechain: r.get(7)?,
        },
        // An agent this build does not know (an index a newer one wrote) is laid out as the
        // default format's.
        format: format::by_name(&r.get::<_, String>(13)?).unwrap_or(format::DEFAULT),
        subagent: r.get::<_, Option<String>>(12)?.map(|agent_id| Subagent { agent_id, first: None, entries: 0 }),
        body,
    })
}

/// The place of entry `cursor` of `session_id`, if it is one.
fn place_of(conn: &Connection, session_id: &str, cursor: i64) -> Result<Option<Order>> {
    Ok(conn
        .prepare_cached("SELECT sort_at, sort_file, line FROM entries WHERE id = ?1 AND session_id = ?2")?
        .query_row(params![cursor, session_id], |r| Ok(Order { at: r.get(0)?, file: r.get(1)?, line: r.get(2)? }))
        .optional()?)
}

/// Gives each entry that ran a sub-agent where that sub-agent's entries are. (The sub-agent's rows
/// are read by `entries_agent` and the first found here: an `ORDER BY` would have SQLite walk the
/// whole session in order instead.)
fn attach_subagents(conn: &Connection, session_id: &str, entries: &mut [HistoryEntry]) -> Result<()> {
    for subagent in entries.iter_mut().filter_map(|e| e.subagent.as_mut()) {
        let mut stmt = conn.prepare_cached(
            "SELECT id, sort_at, sort_file, line FROM entries WHERE session_id = ?1 AND agent_id = ?2 AND duplicate = 0",
        )?;
        let rows = stmt.query_map(params![session_id, subagent.agent_id], |r| {
            Ok((Order { at: r.get(1)?, file: r.get(2)?, line: r.get(3)? }, r.get::<_, i64>(0)?))
        })?;
        let mut count = 0;
        let mut first: Option<(Order, i64)> = None;
        for row in rows {
            let row = row?;
            count += 1;
            if first.as_ref().is_none_or(|f| row < *f) {
                first = Some(row);
            }
        }
        (subagent.first, subagent.entries) = (first.map(|(_, id)| id), count);
    }
    Ok(())
}

/// Gives each stored entry of a page its media rows, read in one query.
fn attach_media(conn: &Connection, session_id: &str, entries: &mut [HistoryEntry]) -> Result<()> {
    let (Some(from), Some(to)) = (entries.iter().map(|e| e.cursor).min(), entries.iter().map(|e| e.cursor).max())
    else {
        return Ok(());
    };
    let mut by_entry: HashMap<i64, Vec<MediaRecord>> = HashMap::new();
    for m in media_of_entries(conn, session_id, from, to)? {
        by_entry.entry(m.entry_id).or_default().push(m);
    }
    for entry in entries {
        if let EntryBody::Stored { media, .. } = &mut entry.body
            && let Some(own) = by_entry.remove(&entry.cursor)
        {
            *media = own;
        }
    }
    Ok(())
}

/// The media rows of a session's entries with cursors in `from..=to`, in cursor and line order.
fn media_of_entries(conn: &Connection, session_id: &str, from: i64, to: i64) -> Result<Vec<MediaRecord>> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {MEDIA_COLUMNS}
         FROM media m JOIN entries e ON e.id = m.entry_id JOIN files f ON f.id = e.file_id
         WHERE m.entry_id BETWEEN ?1 AND ?2 AND e.session_id = ?3 ORDER BY m.entry_id, m.offset"
    ))?;
    let rows = stmt.query_map(params![from, to, session_id], media_record)?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

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

/// Where a search looks. Times are bounds as [`time_bound`] makes them, compared with each
/// entry's `timestamp` (an entry without one is outside any time bound).
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

/// A time bound as the index compares it (`2026-01-31T09:00:00.000Z`), from RFC 3339 or a date
/// (`YYYY-MM-DD`): a date as a lower bound is its first instant (UTC), as an `upper` bound the
/// first instant of the day after, so that "until 2026-01-31" takes in that whole day.
pub fn time_bound(text: &str, upper: bool) -> Result<String> {
    let text = text.trim();
    if let Ok(date) = text.parse::<jiff::civil::Date>()
        && text.len() == 10
    {
        let day = if upper { date.tomorrow().map_err(|e| Error::BadQuery(format!("{text:?}: {e}")))? } else { date };
        return Ok(format!("{day}T00:00:00.000Z"));
    }
    match text.parse::<jiff::Timestamp>() {
        Ok(ts) => Ok(ts.strftime("%Y-%m-%dT%H:%M:%S%.3fZ").to_string()),
        Err(_) => Err(Error::BadQuery(format!(
            "{:?} is not a date (YYYY-MM-DD) or an RFC 3339 time (2026-01-31T09:00:00Z)",
            text.chars().take(60).collect::<String>()
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queries_over_the_budget_are_refused_before_they_run() {
        assert!(check_query("harbour photo*").is_ok());
        assert!(check_query("\"a long quoted phrase with many words inside it\" AND other").is_ok());
        let prefixes = ["a*"; MAX_PREFIX_TERMS + 1].join(" ");
        assert!(matches!(check_query(&prefixes), Err(Error::BadQuery(m)) if m.contains("prefix")));
        let terms = ["w"; MAX_TERMS + 1].join(" ");
        assert!(matches!(check_query(&terms), Err(Error::BadQuery(m)) if m.contains("terms")));
        assert!(matches!(check_query(&"x".repeat(MAX_QUERY + 1)), Err(Error::BadQuery(_))));
    }

    #[test]
    fn a_query_past_its_steps_is_stopped_and_refused() -> Result<()> {
        let conn = Connection::open_in_memory()?;
        // A query that would run for a very long time: a cross join of a large generated series.
        let slow = within_budget(&conn, || {
            let n: i64 = conn.query_row(
                "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 100000000)
                 SELECT count(*) FROM c",
                [],
                |r| r.get(0),
            )?;
            Ok(n)
        });
        assert!(matches!(slow, Err(Error::BadQuery(m)) if m.contains("too long")));
        // The handler is gone afterwards: the next query runs to its end.
        let n: i64 = conn.query_row(
            "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 10000000) SELECT count(*) FROM c",
            [],
            |r| r.get(0),
        )?;
        assert_eq!(n, 10_000_000);
        Ok(())
    }

    #[test]
    fn snippets_split_into_marked_segments() {
        let s = Snippet(format!("<b>{MATCH_OPEN}x{MATCH_CLOSE}</b> and {MATCH_OPEN}y{MATCH_CLOSE}"));
        let segments: Vec<(&str, bool)> = s.segments().collect();
        assert_eq!(segments, [("<b>", false), ("x", true), ("</b> and ", false), ("y", true)]);
        assert_eq!(s.marked("[", "]"), "<b>[x]</b> and [y]");
    }
}
