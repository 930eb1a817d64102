//! A session's history a page at a time, in conversation order: the newest page, the oldest (read
//! forward), the page before an entry, the entries from one on, or a catch-up on what was indexed since ([`Position`]); and
//! where a session starts ([`first_cursor`]).
//!
//! Each page is one range scan of the index `entries_order` (for a catch-up, of the rows indexed
//! since its cursor when they are few), whatever the ties. Never reads a transcript byte, never
//! shows a copy of an entry.

use rusqlite::{Connection, OptionalExtension, params};

use super::MAX_LIMIT;
use super::entries::{EntryBody, HistoryEntry, Subagent, attach_media, attach_spawners, attach_subagents};
use scrollback_core::codec::order::Order;
use scrollback_core::error::{Error, Result};
use scrollback_core::format::{self, Columns};

/// Where a history page starts. Pages are in conversation order (see [`scrollback_core::codec::order`]); a
/// cursor is an entry's `entries.id`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Position {
    /// The newest page.
    Newest,
    /// The oldest page, read forward as [`Position::From`] its first entry is (its `next` goes on):
    /// the session's start without reading every page in between.
    Start,
    /// The page just before this entry in conversation order.
    Before(i64),
    /// This entry and the ones after it in conversation order (reading forward from a search hit).
    From(i64),
    /// Catching up: the session's entries indexed since the page that gave this `after`, wherever
    /// they stand in the conversation (a sub-agent's file may be indexed after entries that follow
    /// it). Each entry is given exactly once across catch-ups.
    After(i64),
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
    /// For a page read forward ([`Position::From`], [`Position::Start`]): the first entry after it, to pass as `from`
    /// for the next page; `None` at the newest entry (and for other pages).
    pub next: Option<i64>,
}

/// The columns a history row is read with, and the order clause of each direction.
const COLUMNS: &str = "id, line, uuid, parent_uuid, type, role, timestamp, is_sidechain, stored_line(stripped), invalid, sort_at, sort_file, spawned_agent, agent, agent_id";
// Entries of the same place (two files of the same name, at the same instant and line: copies, in
// practice) are ordered by cursor, so that the order is total and pages neither skip nor repeat.
const OLDEST_FIRST: &str = "ORDER BY sort_at, sort_file, line, id";
const NEWEST_FIRST: &str = "ORDER BY sort_at DESC, sort_file DESC, line DESC, id DESC";
/// Entries before a place. A place is compared as values bound to the statement, not as a
/// subquery: so SQLite walks `entries_order` from that place on, whatever the ties on its first
/// columns.
const BEFORE_PLACE: &str = "(sort_at, sort_file, line, id) < (?2, ?3, ?4, ?5)";

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
    let side = if sidechains { "" } else { " AND is_sidechain = 0" };
    let source = IndexPages { conn, session_id, visible: format!("session_id = ?1 AND duplicate = 0{side}") };
    page_of(&source, session_id, at, limit).map(Some)
}

/// What a store gives for a page of one session's history (an index's rows, a hub's): the
/// primitives [`page_of`] makes a page of, so that every store pages alike. Each is of one session,
/// its visible entries (side chains left out unless asked for, copies always).
pub trait PageSource {
    /// The place of entry `cursor`, if it is one of the session's.
    fn place_of(&self, cursor: i64) -> Result<Option<Order>>;
    /// The rows of the page at `at` (`place`: the entry a `Before` or `From` cursor names, and its
    /// cursor), newest or oldest first as the direction reads them: `limit` rows, and one more for a
    /// page read forward (`From`, `Start`), which tells whether another follows. A catch-up
    /// (`After`) reads the rows indexed since its cursor, in the order they were.
    fn rows(&self, at: Position, place: Option<&(Order, i64)>, limit: i64) -> Result<Vec<HistoryEntry>>;
    /// The catch-up mark: the newest row a catch-up from this page need not give again.
    fn high_water(&self) -> Result<Option<i64>>;
    /// Gives the page's entries (in conversation order) what they show beside their line: their
    /// media rows, the sub-agent a call ran, the call that ran a sub-agent's entries.
    fn attach(&self, entries: &mut [HistoryEntry]) -> Result<()>;
    /// Whether a visible entry stands before `oldest` in conversation order.
    fn older_than(&self, oldest: &HistoryEntry) -> Result<bool>;
}

/// A page of `session_id`'s history at `at`, of at most `limit` entries, from `source`: the one
/// paging algorithm of every store. A `before` or `from` cursor that is not an entry of the session
/// is [`Error::BadQuery`].
pub fn page_of(source: &dyn PageSource, session_id: &str, at: Position, limit: u32) -> Result<HistoryPage> {
    let limit = i64::from(limit.clamp(1, MAX_LIMIT));
    let place = match at {
        Position::Before(c) | Position::From(c) => match source.place_of(c)? {
            Some(place) => Some((place, c)),
            None => return Err(Error::BadQuery(format!("cursor {c} is not an entry of this session"))),
        },
        Position::Newest | Position::Start | Position::After(_) => None,
    };
    let mut entries = source.rows(at, place.as_ref(), limit)?;
    let cursor = match at {
        Position::Newest | Position::Start => None,
        Position::Before(c) | Position::From(c) | Position::After(c) => Some(c),
    };
    let next = match at {
        Position::From(_) | Position::Start if entries.len() as i64 > limit => entries.pop().map(|e| e.cursor),
        _ => None,
    };
    let after = match at {
        // A full catch-up page may leave more behind it: the next one goes on from its last row.
        Position::After(c) if entries.len() as i64 >= limit => entries.last().map(|e| e.cursor).or(Some(c)),
        _ => source.high_water()?.or(cursor),
    };
    entries.sort_by(|a, b| (&a.order, a.cursor).cmp(&(&b.order, b.cursor)));
    source.attach(&mut entries)?;
    let before = match (at, entries.first()) {
        (Position::After(_), _) | (_, None) => None,
        (_, Some(oldest)) => source.older_than(oldest)?.then_some(oldest.cursor),
    };
    Ok(HistoryPage { session_id: session_id.to_owned(), entries, before, after, next })
}

/// An index's rows of one session, as [`page_of`] reads them.
struct IndexPages<'a> {
    conn: &'a Connection,
    session_id: &'a str,
    /// The `WHERE` clause of the session's visible entries (`?1` its id).
    visible: String,
}

impl PageSource for IndexPages<'_> {
    fn place_of(&self, cursor: i64) -> Result<Option<Order>> {
        place_of(self.conn, self.session_id, cursor)
    }

    fn rows(&self, at: Position, place: Option<&(Order, i64)>, limit: i64) -> Result<Vec<HistoryEntry>> {
        page_rows(self.conn, self.session_id, at, place, &self.visible, limit)
    }

    fn high_water(&self) -> Result<Option<i64>> {
        Ok(self.conn.prepare_cached("SELECT max(id) FROM entries")?.query_row([], |r| r.get(0))?)
    }

    fn attach(&self, entries: &mut [HistoryEntry]) -> Result<()> {
        attach_media(self.conn, self.session_id, entries)?;
        attach_subagents(self.conn, self.session_id, entries)?;
        attach_spawners(self.conn, self.session_id, entries)
    }

    fn older_than(&self, oldest: &HistoryEntry) -> Result<bool> {
        let o = &oldest.order;
        Ok(self
            .conn
            .prepare_cached(&format!("SELECT 1 FROM entries WHERE {} AND {BEFORE_PLACE} LIMIT 1", self.visible))?
            .query_row(params![self.session_id, o.at, o.file, o.line, oldest.cursor], |_| Ok(()))
            .optional()?
            .is_some())
    }
}

/// A catch-up reads every row indexed since its cursor, whatever its session, when there are at
/// most this many (else the session's rows).
const RECENT_ROWS: i64 = 4096;

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
        (Position::Start, _) => conn
            .prepare_cached(&format!("SELECT {COLUMNS} FROM entries WHERE {visible} {OLDEST_FIRST} LIMIT ?2 + 1"))?
            .query_map(params![session_id, limit], history_row)?
            .collect::<rusqlite::Result<_>>()?,
        (Position::After(c), _) => {
            // Two exact plans: the rows indexed since the cursor, all sessions', when there are few
            // (a follower's usual catch-up: a handful), else the session's rows in `entries_order`.
            // The cursor is the caller's: any number, so the difference saturates.
            let newest: i64 = conn.query_row("SELECT coalesce(max(id), 0) FROM entries", [], |r| r.get(0))?;
            let sql = if newest.saturating_sub(c) <= RECENT_ROWS {
                format!("SELECT {COLUMNS} FROM entries WHERE id > ?2 AND +{visible} ORDER BY id LIMIT ?3")
            } else {
                format!("SELECT {COLUMNS} FROM entries WHERE {visible} AND id > ?2 ORDER BY id LIMIT ?3")
            };
            conn.prepare_cached(&sql)?
                .query_map(params![session_id, c, limit], history_row)?
                .collect::<rusqlite::Result<_>>()?
        }
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
        (Position::Before(_) | Position::From(_), None) => {
            return Err(Error::Internal("a page from a cursor with no place".into()));
        }
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
        agent_id: r.get(14)?,
        spawned_by: None,
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A catch-up gives each entry of its session indexed since the cursor once, whichever plan
    /// reads them: the rows since the cursor, or the session's rows when others' came in between.
    #[test]
    fn a_catch_up_gives_the_session_s_new_entries_by_either_plan() -> Result<()> {
        let conn = Connection::open_in_memory()?;
        scrollback_core::db::register_stored_line(&conn)?;
        conn.execute_batch(scrollback_core::db::SCHEMA)?;
        conn.execute_batch(
            "INSERT INTO files (id, path, session_id, dev, inode, fingerprint, fingerprint_len, tail_hash, size,
                                mtime_ns, checkpoint, lines, state, indexed_at)
             VALUES (1, '/t/a.jsonl', 'a', 0, 0, '', 0, '', 0, 0, 0, 0, 'live', ''),
                    (2, '/t/b.jsonl', 'b', 0, 1, '', 0, '', 0, 0, 0, 0, 'live', '');",
        )?;
        let mut offset = 0;
        let mut add = |session: &str, duplicate: bool| -> Result<i64> {
            offset += 3;
            conn.execute(
                "INSERT INTO entries (file_id, session_id, line, offset, length, stripped, duplicate)
                 VALUES (?1, ?2, ?3, ?3, 2, '{}', ?4)",
                params![if session == "a" { 1 } else { 2 }, session, offset, duplicate],
            )?;
            Ok(conn.last_insert_rowid())
        };
        let seen = add("a", false)?;
        for _ in 0..RECENT_ROWS + 10 {
            add("b", false)?;
        }
        let new = [add("a", false)?, add("a", false)?];
        add("a", true)?;
        let cursors = |c: i64| -> Result<Vec<i64>> {
            let page = history(&conn, "a", Position::After(c), 100, false)?.expect("session a");
            Ok(page.entries.iter().map(|e| e.cursor).collect())
        };
        assert_eq!(cursors(seen)?, new, "the session's rows, past {RECENT_ROWS} of another's");
        assert_eq!(cursors(new[0])?, [new[1]], "the rows since the cursor");
        assert_eq!(cursors(new[1])?, Vec::<i64>::new(), "nothing new");
        // A cursor is the caller's number: the farthest ones read as any other.
        assert_eq!(cursors(i64::MIN)?, [seen, new[0], new[1]], "a cursor before every entry");
        assert_eq!(cursors(i64::MAX)?, Vec::<i64>::new(), "a cursor past every entry");
        Ok(())
    }
}
