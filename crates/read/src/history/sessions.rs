//! The session list (newest first, filtered, a page at a time), one session as listed, and the git
//! branch a session's transcript names.
//!
//! Reads the `sessions` table, and the full-text index for a text filter (checked and bounded as
//! every full-text query is). Never reads a transcript byte, never writes.

use std::fmt::Write as _;

use rusqlite::{Connection, OptionalExtension};

use super::MAX_LIMIT;
use super::budget::{fts_error, within_budget};
use scrollback_core::error::{Error, Result};
use scrollback_core::query::Role;

/// One session, as listed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionSummary {
    /// The session id.
    pub id: String,
    /// Its working directory.
    pub project: Option<String>,
    /// Its title, or what names it in its place ([`shown_title`]).
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
    /// The host whose index holds it, on a team's hub (`None` from a host's own index).
    pub host: Option<String>,
    /// Pinned by a person, as a team's hub holds their marks (`None` from an index: a person's
    /// marks are the acceptance record's, beside it).
    pub pinned: Option<bool>,
}

/// A page of sessions, newest first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionPage {
    /// The sessions.
    pub sessions: Vec<SessionSummary>,
    /// Pass as `cursor` for the next page; `None` at the end.
    pub next: Option<String>,
    /// Each session's own cursor, in the same order: passed as `cursor`, the sessions after it
    /// (for a front end that shows only part of a page).
    pub cursors: Vec<String>,
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
    /// Only sessions with an entry at or after this instant ([`time_bound`](super::time_bound)).
    pub since: Option<String>,
    /// Only sessions with an entry before this instant ([`time_bound`](super::time_bound)).
    pub until: Option<String>,
    /// Leave out sessions whose last entry is at or after this instant (still being written).
    pub active_since: Option<String>,
    /// Only sessions of this host, on a team's hub (an index holds one host's: it ignores this).
    pub host: Option<String>,
    /// From this cursor on.
    pub cursor: Option<String>,
    /// At most this many.
    pub limit: u32,
}

/// Lists sessions, newest (by last entry) first. A cursor this index never gave, or a text query
/// the full-text engine cannot parse, is [`Error::BadQuery`].
pub fn sessions(conn: &Connection, q: &SessionQuery) -> Result<SessionPage> {
    let limit = q.limit.clamp(1, MAX_LIMIT);
    let cursor = q.cursor.as_deref().map(parse_cursor).transpose()?;
    let mut sql = String::from(
        "SELECT rowid, id, project, title, first_timestamp, last_timestamp, entries, images, sidechain_entries,
                NOT EXISTS (SELECT 1 FROM entries e JOIN files f ON f.id = e.file_id
                            WHERE e.session_id = sessions.id AND f.state = 'live'),
                agent, forked_from, ",
    );
    sql.push_str(FIRST_SAID);
    sql.push_str(" FROM sessions WHERE 1");
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
        // Its title holds the query's words, or one of its entries matches the query as a search
        // finds it: every field of the query applies, on the session or on the entry, as there.
        let mut query = scrollback_core::query::parse(text)?;
        // The words as written, before a prefix is spelled out as the index's words it stands for.
        let words: Vec<String> = query.all.iter().flatten().map(|t| t.text.clone()).collect();
        super::prefixes::spell_out(conn, &mut query)?;
        let f = &query.filters;
        let mut entry = String::new();
        let mut entry_args: Vec<Box<dyn rusqlite::ToSql>> = Vec::new();
        let mut on_entry = |clause: &str, value: Option<&str>| {
            if let Some(v) = value {
                entry.push_str(clause);
                entry_args.push(Box::new(v.to_owned()));
            }
        };
        on_entry(" AND e.agent = ?", f.agent.as_deref());
        on_entry(
            " AND e.role = ?",
            match f.role {
                Some(Role::User) => Some("user"),
                Some(Role::Assistant) => Some("assistant"),
                _ => None,
            },
        );
        on_entry(" AND e.timestamp >= ?", f.after.as_deref());
        on_entry(" AND e.timestamp < ?", f.before.as_deref());
        // A title is no one's words and no tool's: a `role:` or `tool:` query looks at entries only.
        let titled = if f.role.is_some() || f.tool.is_some() { "0 AND " } else { "" };
        // A title holding a word the query excludes does not list its session.
        let unless = " AND instr(lower(coalesce(title, '')), lower(?)) = 0".repeat(query.none.len());
        sql.push_str(&format!(
            " AND ({titled}instr(lower(coalesce(title, '')), lower(?)) > 0{unless} OR id IN (
                 SELECT e.session_id FROM entries_fts JOIN entries e ON e.id = entries_fts.rowid
                 WHERE entries_fts MATCH ? AND e.duplicate = 0{entry}))"
        ));
        args.push(Box::new(if words.is_empty() { text.clone() } else { words.join(" ") }));
        args.extend(query.none.iter().map(|t| Box::new(t.text.clone()) as Box<dyn rusqlite::ToSql>));
        args.push(Box::new(super::fts::compile(&query).all));
        args.extend(entry_args);
        let mut on_session = |clause: &str, value: Option<&str>| {
            if let Some(v) = value {
                sql.push_str(clause);
                args.push(Box::new(v.to_owned()));
            }
        };
        on_session(" AND agent = ?", f.agent.as_deref());
        on_session(" AND instr(project, ?) > 0", f.project.as_deref());
        on_session(" AND coalesce(last_timestamp, '') >= ?", f.after.as_deref());
        on_session(" AND first_timestamp < ?", f.before.as_deref());
        if let Some(prefix) = f.session.as_deref() {
            sql.push_str(" AND id >= ? AND id < ? || char(1114111)");
            args.push(Box::new(prefix.to_owned()));
            args.push(Box::new(prefix.to_owned()));
        }
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
        let rows = stmt.query_map(rusqlite::params_from_iter(args.iter().map(|a| a.as_ref())), listed)?;
        rows.collect::<rusqlite::Result<Vec<(i64, SessionSummary)>>>().map_err(fts_error)
    });
    let mut rows = rows?;
    let more = rows.len() > limit as usize;
    rows.truncate(limit as usize);
    let cursors: Vec<String> =
        rows.iter().map(|(rowid, s)| format!("{}|{rowid}", s.last_timestamp.as_deref().unwrap_or(""))).collect();
    let next = if more { cursors.last().cloned() } else { None };
    Ok(SessionPage { sessions: rows.into_iter().map(|(_, s)| s).collect(), next, cursors })
}

/// A session list's cursor: "<lastTimestamp>|<rowid>" of the last session of the previous page.
/// One this index never gave is [`Error::BadQuery`].
fn parse_cursor(c: &str) -> Result<(String, i64)> {
    match c.rsplit_once('|').and_then(|(ts, id)| Some((ts.to_owned(), id.parse::<i64>().ok()?))) {
        Some(parsed) => Ok(parsed),
        None => Err(Error::BadQuery(format!("cursor {c:?} is not one this server gave"))),
    }
}

/// One row of the session list: its `rowid` (the cursor's second half) and the session.
fn listed(r: &rusqlite::Row<'_>) -> rusqlite::Result<(i64, SessionSummary)> {
    let said: Option<String> = r.get(12)?;
    Ok((
        r.get::<_, i64>(0)?,
        SessionSummary {
            id: r.get(1)?,
            title: r.get(3)?,
            project: r.get(2)?,
            first_timestamp: r.get(4)?,
            last_timestamp: r.get(5)?,
            entries: r.get(6)?,
            images: r.get(7)?,
            sidechain_entries: r.get(8)?,
            gone: r.get(9)?,
            agent: r.get(10)?,
            forked_from: r.get(11)?,
            host: None,
            pinned: None,
        }
        .titled(said),
    ))
}

impl SessionSummary {
    /// The session with what names it where it has no title ([`shown_title`]).
    fn titled(mut self, said: Option<String>) -> SessionSummary {
        self.title = shown_title(self.title.take(), said, self.project.as_deref(), self.first_timestamp.as_deref());
        self
    }
}

/// The SQL of the first words said in the session `$s` names (its alias in the query) when it has
/// no title, else `NULL`: the start of the first entry, in conversation order, in which someone
/// said something (a sub-agent's prompt, an answer: a session with a person's words has them as
/// its title).
macro_rules! first_said {
    ($s:literal) => {
        concat!(
            "CASE WHEN ",
            $s,
            ".title IS NULL THEN
                (SELECT substr(e.text, 1, 400) FROM entries e
                 WHERE e.session_id = ",
            $s,
            ".id AND e.duplicate = 0 AND e.role IN ('user', 'assistant')
                   AND trim(coalesce(e.text, '')) <> ''
                 ORDER BY e.sort_at, e.sort_file, e.line LIMIT 1) END"
        )
    };
}
pub(crate) use first_said;

/// [`first_said`] of the `sessions` table unaliased.
const FIRST_SAID: &str = first_said!("sessions");

/// The words a session is named by where a title is expected, never its id: its title; else the
/// first words said in it (`FIRST_SAID`); else its project's name and its first day
/// (`lighthouse · 2026-11-30`). `None` only for a session with none of these.
pub fn shown_title(
    title: Option<String>,
    said: Option<String>,
    project: Option<&str>,
    first: Option<&str>,
) -> Option<String> {
    if let Some(title) = title.filter(|t| !t.trim().is_empty()) {
        return Some(title);
    }
    if let Some(said) = said.as_deref().and_then(first_words) {
        return Some(said);
    }
    let day = first.and_then(|t| t.get(..10));
    let name = project.map(project_name);
    match (name, day) {
        (Some(name), Some(day)) => Some(format!("{name} · {day}")),
        (Some(name), None) => Some(name),
        (None, Some(day)) => Some(format!("Session of {day}")),
        (None, None) => None,
    }
}

/// At most the first 80 characters of `text`'s first line, cut at a word, its whitespace one
/// space (and without the word marks the index puts in text written without spaces).
fn first_words(text: &str) -> Option<String> {
    const MAX: usize = 80;
    let line = text.lines().map(str::trim).find(|l| !l.is_empty())?;
    let words: String = line.replace('\u{200B}', "").split_whitespace().collect::<Vec<_>>().join(" ");
    if words.chars().count() <= MAX {
        return Some(words);
    }
    let cut: String = words.chars().take(MAX).collect();
    let at = cut.rfind(' ').filter(|&at| at > MAX / 2).unwrap_or(cut.len());
    Some(format!("{}…", cut[..at].trim_end()))
}

/// A project as a person names it: its directory's last name; a folder Gemini CLI named by the
/// SHA-256 of the directory (nothing recorded the directory) as `gemini project` and its first
/// eight hex digits.
pub fn project_name(project: &str) -> String {
    if project.len() == 64 && project.bytes().all(|b| b.is_ascii_hexdigit()) {
        return format!("gemini project {}", &project[..8]);
    }
    project
        .trim_end_matches(['/', '\\'])
        .rsplit(['/', '\\'])
        .next()
        .filter(|n| !n.is_empty())
        .unwrap_or(project)
        .to_owned()
}

/// One session as listed, by its id; `None` if the index has no such session.
pub fn session(conn: &Connection, id: &str) -> Result<Option<SessionSummary>> {
    Ok(conn
        .prepare_cached(&format!(
            "SELECT id, project, title, first_timestamp, last_timestamp, entries, images, sidechain_entries,
                    NOT EXISTS (SELECT 1 FROM entries e JOIN files f ON f.id = e.file_id
                                WHERE e.session_id = sessions.id AND f.state = 'live'),
                    agent, forked_from, {FIRST_SAID}
             FROM sessions WHERE id = ?1"
        ))?
        .query_row([id], |r| {
            Ok(SessionSummary {
                id: r.get(0)?,
                title: r.get(2)?,
                project: r.get(1)?,
                first_timestamp: r.get(3)?,
                last_timestamp: r.get(4)?,
                entries: r.get(5)?,
                images: r.get(6)?,
                sidechain_entries: r.get(7)?,
                gone: r.get(8)?,
                agent: r.get(9)?,
                forked_from: r.get(10)?,
                host: None,
                pinned: None,
            }
            .titled(r.get(11)?))
        })
        .optional()?)
}

/// The git branch the session's transcript names last in conversation order (each line's format
/// says which it names, [`Meta::git_branch`](scrollback_core::format::Meta::git_branch)), if it
/// names one: an empty or blank one is none.
pub fn git_branch(conn: &Connection, session_id: &str) -> Result<Option<String>> {
    let branch: Option<String> = conn
        .prepare_cached("SELECT git_branch FROM sessions WHERE id = ?1")?
        .query_row([session_id], |r| r.get(0))
        .optional()?
        .flatten();
    Ok(branch.filter(|b| !b.trim().is_empty()))
}
