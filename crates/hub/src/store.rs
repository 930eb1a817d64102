//! The hub as a store: what `serve --postgres` reads, behind the same read interface as an index
//! ([`scrollback_read::Store`]), so that the viewer, the API and MCP are not written twice.
//!
//! It reads every host's rows. A session is one host's (`sessions` is keyed by host and id); a
//! session id that two hosts both hold (a transcript copied between machines) is read from the one
//! whose latest entry is newest. A history cursor is the entry's row id in its host's index
//! (`entries.local_id`): the same cursor the host's own server gives. Photos are read from `blobs`
//! and checked against their blake3 before a byte is served ([`scrollback_read::media::open`]).
//!
//! Read-only: every session it opens is `default_transaction_read_only`, and a role with `SELECT`
//! alone is enough. Search is `search.rs`'s, usage reports `usage.rs`'s, the overview
//! `stats.rs`'s; a JSONL export gives each line as its host stored it, its photos put back from
//! `blobs`; a session's outline is `outline.rs`'s; its status is its hosts' and their last pushes
//! ([`Backend::status`]).

use std::cell::RefCell;
use std::path::PathBuf;
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::Instant;

use tokio_postgres::Row;
use tokio_postgres::types::ToSql;

use scrollback_core::codec::order::Order;
use scrollback_core::codec::refs::{ContentHash, MediaName, MediaRef};
use scrollback_core::codec::scan::{Encoding, MediaKind};
use scrollback_core::error::{Error, Result};
use scrollback_core::format::{self, Columns};
use scrollback_core::query::{Query, Role};
use scrollback_read::Store;
use scrollback_read::history::{
    EntryBody, HistoryEntry, HistoryPage, MAX_LIMIT, Outline, PageSource, Position, Scope, SearchHit, SearchPage,
    SessionHitsPage, SessionPage, SessionQuery, SessionSummary, Sort, SpawnedBy, Subagent, page_of,
};
use scrollback_read::media::MediaRecord;
use scrollback_read::pool::Backend;
use scrollback_read::prices::Prices;
use scrollback_read::status::HubStatus;
use scrollback_read::transcript::{AsStore, Lent};
use scrollback_read::transcript::{ExportFile, LINES, Line};
use scrollback_read::usage::{By, Filter, Report};

use crate::Pg;
use crate::connection::Hub;
use crate::{HubConfig, VERSION};

/// Connections to the hub at once, as many as an index's readers: more questions wait their turn.
const CONNECTIONS: usize = 8;

/// The hub's readers: a connection for each question, at most eight at once, each kept for the next
/// question while it is fresh.
pub struct HubReaders {
    config: HubConfig,
    pool: Mutex<Pool>,
    /// Told when a connection is given back.
    freed: Condvar,
}

/// The connections not in use, and how many are.
#[derive(Default)]
struct Pool {
    idle: Vec<(Hub, Instant)>,
    out: usize,
}

impl std::fmt::Debug for HubReaders {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HubReaders").field("hub", &self.config.describe()).finish_non_exhaustive()
    }
}

/// A connection taken from the pool: given back (or its place freed) when dropped, whatever happens
/// to the question it was taken for.
struct Taken<'r> {
    readers: &'r HubReaders,
    hub: Option<Hub>,
}

impl Drop for Taken<'_> {
    fn drop(&mut self) {
        let mut pool = self.readers.pool.lock().unwrap_or_else(PoisonError::into_inner);
        pool.out -= 1;
        if let Some(hub) = self.hub.take().filter(|h| !h.is_closed()) {
            pool.idle.push((hub, Instant::now()));
        }
        self.readers.freed.notify_one();
    }
}

impl HubReaders {
    /// Readers of the hub `config` names, which must hold a hub's schema this build reads (a hub
    /// is made by its first push: `scrollback push`).
    pub fn open(config: HubConfig) -> Result<HubReaders> {
        let readers = HubReaders { config, pool: Mutex::new(Pool::default()), freed: Condvar::new() };
        let mut taken = readers.take()?;
        let hub = taken.hub.as_mut().ok_or_else(|| Error::Internal("a connection taken twice".into()))?;
        let version = hub
            .query_opt("SELECT value FROM hub_meta WHERE key = 'schema_version'", &[])
            .map_err(|e| {
                Error::Hub(format!(
                    "{} holds no hub that can be read ({e}): push to it first",
                    readers.config.describe()
                ))
            })?
            .map(|r| r.try_get::<_, String>(0))
            .transpose()
            .pg()?
            .and_then(|v| v.parse::<i64>().ok());
        match version {
            Some(v) if v <= VERSION => {}
            Some(v) => {
                return Err(Error::Hub(format!(
                    "the hub has schema version {v}; this scrollback reads version {VERSION}"
                )));
            }
            None => return Err(Error::Hub("the hub has no schema version: push to it first".into())),
        }
        drop(taken);
        Ok(readers)
    }

    /// A new connection whose transactions are read-only.
    fn connect(&self) -> Result<Hub> {
        let mut hub = self.config.connect()?;
        // (JIT compiles a big query in tens of milliseconds, more than a reader's queries take.)
        hub.batch_execute("SET default_transaction_read_only = on; SET jit = off")?;
        Ok(hub)
    }

    /// An idle connection still fresh (the hub ends sessions idle past its timeout), else a new one
    /// if fewer than `CONNECTIONS` are out, else the next given back (waiting at most the hub's
    /// timeout).
    fn take(&self) -> Result<Taken<'_>> {
        let fresh = self.config.timeout() / 2;
        let mut pool = self.pool.lock().unwrap_or_else(PoisonError::into_inner);
        loop {
            while let Some((hub, since)) = pool.idle.pop() {
                if since.elapsed() < fresh && !hub.is_closed() {
                    pool.out += 1;
                    return Ok(Taken { readers: self, hub: Some(hub) });
                }
            }
            if pool.out < CONNECTIONS {
                pool.out += 1;
                drop(pool);
                // (Its place is freed by the drop whether or not it connects.)
                let mut taken = Taken { readers: self, hub: None };
                taken.hub = Some(self.connect()?);
                return Ok(taken);
            }
            let (next, waited) =
                self.freed.wait_timeout(pool, self.config.timeout()).unwrap_or_else(PoisonError::into_inner);
            pool = next;
            if waited.timed_out() && pool.idle.is_empty() && pool.out >= CONNECTIONS {
                return Err(Error::Hub(format!("all {CONNECTIONS} connections to the hub stayed busy")));
            }
        }
    }

    /// One of the pool's connections as a [`HubStore`], given back to the pool when dropped.
    fn lend(&self) -> Result<HubLent<'_>> {
        let mut taken = self.take()?;
        let hub = taken.hub.take().ok_or_else(|| Error::Internal("a connection taken twice".into()))?;
        Ok(HubLent { taken, store: HubStore { hub: RefCell::new(Some(hub)) } })
    }
}

impl Backend for HubReaders {
    fn kind(&self) -> &'static str {
        "hub"
    }

    fn get(&self) -> Result<Lent<'_>> {
        Ok(Lent::new(self.lend()?))
    }

    fn status(&self) -> Result<HubStatus> {
        self.lend()?.store.status()
    }
}

/// A connection taken from the pool as a [`Store`], given back to the pool when dropped.
struct HubLent<'r> {
    taken: Taken<'r>,
    store: HubStore,
}

impl AsStore for HubLent<'_> {
    fn store(&self) -> &dyn Store {
        &self.store
    }
}

impl Drop for HubLent<'_> {
    fn drop(&mut self) {
        // Back to its place in the pool (which `Taken`'s drop, next, gives back).
        self.taken.hub = self.store.hub.get_mut().take();
    }
}

/// One connection to the hub, read as a [`Store`].
pub struct HubStore {
    /// The connection (`None` only once it is given back, as its guard drops).
    hub: RefCell<Option<Hub>>,
}

impl std::fmt::Debug for HubStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HubStore").finish_non_exhaustive()
    }
}

/// The columns a history row is read with ([`history_row`]).
const COLUMNS: &str = "local_id, line, uuid, parent_uuid, type, role, timestamp, is_sidechain, stripped, invalid, \
     sort_at, sort_file, spawned_agent, agent, agent_id";
// Conversation order, as the index's: text compared byte by byte whatever the hub's collation.
const OLDEST_FIRST: &str = r#"ORDER BY sort_at COLLATE "C", sort_file, line, local_id"#;
const NEWEST_FIRST: &str = r#"ORDER BY sort_at COLLATE "C" DESC, sort_file DESC, line DESC, local_id DESC"#;
const BEFORE_PLACE: &str = r#"(sort_at COLLATE "C", sort_file, line, local_id) < ($3, $4, $5, $6)"#;
const FROM_PLACE: &str = r#"(sort_at COLLATE "C", sort_file, line, local_id) >= ($3, $4, $5, $6)"#;

/// The first words said in the session `s` when it has no title, else `NULL`: as an index says
/// them (`scrollback_read::history`'s `first_said`), for [`shown_title`].
///
/// [`shown_title`]: scrollback_read::history::shown_title
macro_rules! first_said {
    () => {
        r#"CASE WHEN s.title IS NULL THEN
            (SELECT substr(e.text, 1, 400) FROM entries e
             WHERE e.host = s.host AND e.session_id = s.id AND NOT e.duplicate AND e.role IN ('user', 'assistant')
               AND btrim(coalesce(e.text, '')) <> ''
             ORDER BY e.sort_at COLLATE "C", e.sort_file, e.line LIMIT 1) END"#
    };
}
pub(crate) use first_said;

/// The columns a session is listed with ([`listed`]), over `sessions s`. Its title is the one a
/// person gave it last on any host (their marks, pushed: the latest `set_at` wins), else the
/// transcript's; it is pinned if their latest mark pins it.
const SESSION_COLUMNS: &str = concat!(
    "s.host, s.id, s.project, coalesce((SELECT m.title FROM marks m WHERE m.session_id = s.id \
     ORDER BY m.set_at DESC LIMIT 1), s.title), s.first_timestamp, s.last_timestamp, s.entries, \
     s.images, s.sidechain_entries, \
     NOT EXISTS (SELECT 1 FROM entries e JOIN files f ON f.host = e.host AND f.file_id = e.file_id
                 WHERE e.host = s.host AND e.session_id = s.id AND f.state = 'live'), \
     s.agent, s.forked_from, coalesce((SELECT m.pinned FROM marks m WHERE m.session_id = s.id \
     ORDER BY m.set_at DESC LIMIT 1), false), ",
    first_said!()
);

fn listed(r: &Row) -> Result<SessionSummary> {
    let (project, first): (Option<String>, Option<String>) = (r.try_get(2).pg()?, r.try_get(4).pg()?);
    Ok(SessionSummary {
        host: Some(r.try_get(0).pg()?),
        id: r.try_get(1).pg()?,
        // Named as an index names it where it has no title ([`scrollback_read::history::shown_title`]).
        title: scrollback_read::history::shown_title(
            r.try_get(3).pg()?,
            r.try_get(13).pg()?,
            project.as_deref(),
            first.as_deref(),
        ),
        project,
        first_timestamp: first,
        last_timestamp: r.try_get(5).pg()?,
        entries: r.try_get(6).pg()?,
        images: r.try_get(7).pg()?,
        sidechain_entries: r.try_get(8).pg()?,
        gone: r.try_get(9).pg()?,
        agent: r.try_get(10).pg()?,
        forked_from: r.try_get(11).pg()?,
        pinned: Some(r.try_get(12).pg()?),
    })
}

fn history_row(r: &Row) -> Result<HistoryEntry> {
    let body = match (r.try_get::<_, Option<String>>(8).pg()?, r.try_get::<_, Option<String>>(9).pg()?) {
        (Some(stripped), None) => EntryBody::Stored { stripped, media: Vec::new() },
        (_, invalid) => EntryBody::Invalid(invalid.unwrap_or_default()),
    };
    let line: i64 = r.try_get(1).pg()?;
    Ok(HistoryEntry {
        cursor: r.try_get(0).pg()?,
        order: Order { at: r.try_get(10).pg()?, file: r.try_get(11).pg()?, line },
        line,
        columns: Columns {
            uuid: r.try_get(2).pg()?,
            parent_uuid: r.try_get(3).pg()?,
            kind: r.try_get(4).pg()?,
            role: r.try_get(5).pg()?,
            timestamp: r.try_get(6).pg()?,
            is_sidechain: r.try_get(7).pg()?,
        },
        format: format::by_name(&r.try_get::<_, String>(13).pg()?).unwrap_or(format::DEFAULT),
        subagent: r.try_get::<_, Option<String>>(12).pg()?.map(|agent_id| Subagent {
            agent_id,
            first: None,
            entries: 0,
        }),
        agent_id: r.try_get(14).pg()?,
        spawned_by: None,
        body,
    })
}

/// The columns a media row is read with ([`media_record`]), over `media m JOIN entries e JOIN files f`.
const MEDIA_COLUMNS: &str = "m.off, f.path, m.length, m.encoding, m.media_type, m.decoded_length, m.blake3, m.kind, \
     m.ordinal, e.session_id, e.uuid, e.local_id, e.off";
const MEDIA_JOIN: &str = "media m JOIN entries e ON e.host = m.host AND e.file_id = m.file_id AND e.off = m.entry_off
     JOIN files f ON f.host = e.host AND f.file_id = e.file_id";

/// A media row as the hub has it. Its bytes are the hub's, not a file's: the path is the host's,
/// never opened here (`file_live` is false until [`HubStore::media`] gives the bytes).
fn media_record(r: &Row) -> Result<MediaRecord> {
    let encoding: String = r.try_get(3).pg()?;
    let kind: String = r.try_get(7).pg()?;
    let bad = |what: &str, value: &str| Error::Hub(format!("the hub holds a media row with {what} {value:?}"));
    Ok(MediaRecord {
        id: 0,
        path: PathBuf::from(r.try_get::<_, String>(1).pg()?),
        file_live: false,
        from_vault: false,
        offset: r.try_get::<_, i64>(0).pg()? as u64,
        length: r.try_get::<_, i64>(2).pg()? as u64,
        encoding: Encoding::parse(&encoding).ok_or_else(|| bad("encoding", &encoding))?,
        media_type: r.try_get(4).pg()?,
        decoded_length: r.try_get::<_, i64>(5).pg()? as u64,
        blake3: r.try_get(6).pg()?,
        kind: MediaKind::parse(&kind).ok_or_else(|| bad("kind", &kind))?,
        ordinal: r.try_get::<_, Option<i32>>(8).pg()?.map(|o| o as u32),
        session_id: r.try_get(9).pg()?,
        entry_uuid: r.try_get(10).pg()?,
        entry_id: r.try_get(11).pg()?,
        line_offset: r.try_get::<_, i64>(12).pg()? as u64,
        held: None,
    })
}

/// A session list's cursor on the hub: its last entry's time, host and id, as JSON.
fn session_cursor(s: &SessionSummary) -> String {
    serde_json::json!([s.last_timestamp.as_deref().unwrap_or(""), s.host.as_deref().unwrap_or(""), s.id]).to_string()
}

fn parse_session_cursor(c: &str) -> Result<(String, String, String)> {
    serde_json::from_str(c).map_err(|_| Error::BadQuery(format!("cursor {c:?} is not one this server gave")))
}

impl HubStore {
    /// Runs `f` on the connection.
    fn on_hub<T>(&self, f: impl FnOnce(&mut Hub) -> Result<T>) -> Result<T> {
        match self.hub.borrow_mut().as_mut() {
            Some(hub) => f(hub),
            None => Err(Error::Internal("a hub connection used after it was given back".into())),
        }
    }

    pub(crate) fn query(&self, sql: &str, params: &[&(dyn ToSql + Sync)]) -> Result<Vec<Row>> {
        self.on_hub(|hub| hub.query(sql, params))
    }

    pub(crate) fn query_opt(&self, sql: &str, params: &[&(dyn ToSql + Sync)]) -> Result<Option<Row>> {
        self.on_hub(|hub| hub.query_opt(sql, params))
    }

    /// Runs `sql`, statements that return no rows (a transaction's start or end).
    pub(crate) fn batch(&self, sql: &str) -> Result<()> {
        self.on_hub(|hub| hub.batch_execute(sql))
    }

    /// The host a session is read from: the one whose latest entry is newest, if two hold it.
    pub(crate) fn host_of(&self, session_id: &str) -> Result<Option<String>> {
        self.query_opt(
            r#"SELECT host FROM sessions WHERE id = $1
                   ORDER BY coalesce(last_timestamp, '') COLLATE "C" DESC, host LIMIT 1"#,
            &[&session_id],
        )?
        .map(|r| r.try_get(0))
        .transpose()
        .pg()
    }

    /// The place of entry `cursor` of the session, if it is one.
    fn place_of(&self, host: &str, session_id: &str, cursor: i64) -> Result<Option<Order>> {
        self.query_opt(
            "SELECT sort_at, sort_file, line FROM entries WHERE host = $1 AND session_id = $2 AND local_id = $3",
            &[&host, &session_id, &cursor],
        )?
        .map(|r| Ok::<_, Error>(Order { at: r.try_get(0).pg()?, file: r.try_get(1).pg()?, line: r.try_get(2).pg()? }))
        .transpose()
    }

    fn page_rows(
        &self,
        (host, session_id): (&str, &str),
        at: Position,
        place: Option<&(Order, i64)>,
        side: &str,
        limit: i64,
    ) -> Result<Vec<HistoryEntry>> {
        let visible = format!("host = $1 AND session_id = $2 AND NOT duplicate{side}");
        let rows = match (at, place) {
            (Position::Newest, _) => self.query(
                &format!("SELECT {COLUMNS} FROM entries WHERE {visible} {NEWEST_FIRST} LIMIT $3"),
                &[&host, &session_id, &limit],
            )?,
            (Position::Start, _) => self.query(
                &format!("SELECT {COLUMNS} FROM entries WHERE {visible} {OLDEST_FIRST} LIMIT $3"),
                &[&host, &session_id, &(limit + 1)],
            )?,
            (Position::After(c), _) => self.query(
                &format!("SELECT {COLUMNS} FROM entries WHERE {visible} AND local_id > $3 ORDER BY local_id LIMIT $4"),
                &[&host, &session_id, &c, &limit],
            )?,
            (Position::Before(_), Some((o, c))) => self.query(
                &format!("SELECT {COLUMNS} FROM entries WHERE {visible} AND {BEFORE_PLACE} {NEWEST_FIRST} LIMIT $7"),
                &[&host, &session_id, &o.at, &o.file, &o.line, c, &limit],
            )?,
            (Position::From(_), Some((o, c))) => self.query(
                &format!("SELECT {COLUMNS} FROM entries WHERE {visible} AND {FROM_PLACE} {OLDEST_FIRST} LIMIT $7"),
                &[&host, &session_id, &o.at, &o.file, &o.line, c, &(limit + 1)],
            )?,
            (Position::Before(_) | Position::From(_), None) => {
                return Err(Error::Internal("a page from a cursor with no place".into()));
            }
        };
        rows.iter().map(history_row).collect()
    }

    /// Each stored entry's media rows, in line order.
    fn attach_media(&self, host: &str, session_id: &str, entries: &mut [HistoryEntry]) -> Result<()> {
        let cursors: Vec<i64> = entries.iter().map(|e| e.cursor).collect();
        if cursors.is_empty() {
            return Ok(());
        }
        let rows = self.query(
            &format!(
                "SELECT {MEDIA_COLUMNS} FROM {MEDIA_JOIN}
                 WHERE e.host = $1 AND e.session_id = $2 AND e.local_id = ANY($3) ORDER BY e.local_id, m.off"
            ),
            &[&host, &session_id, &cursors],
        )?;
        let mut by_entry: std::collections::HashMap<i64, Vec<MediaRecord>> = std::collections::HashMap::new();
        for row in &rows {
            let m = media_record(row)?;
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

    /// Where each sub-agent a page's entries ran is (its first entry, how many it has), and on a
    /// sub-agent's first entry, the entry that ran it: as an index's pages say.
    fn attach_subagents(&self, host: &str, session_id: &str, entries: &mut [HistoryEntry]) -> Result<()> {
        let first_of = |agent_id: &str| -> Result<(Option<i64>, i64)> {
            let row = self.query_opt(
                &format!(
                    "SELECT local_id, count(*) OVER () FROM entries
                     WHERE host = $1 AND session_id = $2 AND agent_id = $3 AND NOT duplicate {OLDEST_FIRST} LIMIT 1"
                ),
                &[&host, &session_id, &agent_id],
            )?;
            match row {
                Some(r) => Ok((Some(r.try_get(0).pg()?), r.try_get(1).pg()?)),
                None => Ok((None, 0)),
            }
        };
        for subagent in entries.iter_mut().filter_map(|e| e.subagent.as_mut()) {
            (subagent.first, subagent.entries) = first_of(&subagent.agent_id)?;
        }
        let mut agents: Vec<String> = entries.iter().filter_map(|e| e.agent_id.clone()).collect();
        agents.sort();
        agents.dedup();
        for agent_id in agents {
            let (Some(first), _) = first_of(&agent_id)? else { continue };
            let Some(entry) = entries.iter_mut().find(|e| e.cursor == first) else { continue };
            let cursor = self
                .query_opt(
                    "SELECT local_id FROM entries
                     WHERE host = $1 AND session_id = $2 AND spawned_agent = $3 AND NOT duplicate
                     ORDER BY local_id LIMIT 1",
                    &[&host, &session_id, &agent_id],
                )?
                .map(|r| r.try_get(0))
                .transpose()
                .pg()?;
            entry.spawned_by = Some(SpawnedBy { agent_id, cursor });
        }
        Ok(())
    }

    fn media_by_ref(&self, r: &MediaRef) -> Result<Option<MediaRecord>> {
        let ordinal = r.ordinal as i32;
        let row = self.query_opt(
            &format!(
                "SELECT {MEDIA_COLUMNS} FROM {MEDIA_JOIN}
                 WHERE e.session_id = $1 AND e.uuid = $2 AND m.ordinal = $3
                 ORDER BY f.state = 'live' DESC, e.local_id DESC, e.host LIMIT 1"
            ),
            &[&r.session_id, &r.entry_uuid, &ordinal],
        )?;
        if let Some(row) = row {
            return Ok(Some(media_record(&row)?));
        }
        let failed = self.query_opt(
            "SELECT fi.reason FROM entries e
             JOIN failed_images fi ON fi.host = e.host AND fi.file_id = e.file_id AND fi.entry_off = e.off
             WHERE e.session_id = $1 AND e.uuid = $2 AND fi.ordinal = $3 LIMIT 1",
            &[&r.session_id, &r.entry_uuid, &ordinal],
        )?;
        match failed {
            Some(row) => Err(Error::FailedUpload { what: r.to_string(), reason: row.try_get(0).pg()? }),
            None => Ok(None),
        }
    }

    fn media_by_hash(&self, hash: &ContentHash) -> Result<Option<MediaRecord>> {
        let row = self.query_opt(
            &format!(
                "SELECT {MEDIA_COLUMNS} FROM {MEDIA_JOIN} WHERE m.blake3 = $1
                 ORDER BY f.state = 'live' DESC, e.host, e.local_id DESC LIMIT 1"
            ),
            &[&hash.as_str()],
        )?;
        row.map(|r| media_record(&r)).transpose()
    }
}

impl Store for HubStore {
    fn sessions(&self, q: &SessionQuery) -> Result<SessionPage> {
        let limit = i64::from(q.limit.clamp(1, MAX_LIMIT));
        let cursor = q.cursor.as_deref().map(parse_session_cursor).transpose()?;
        let mut sql = format!("SELECT {SESSION_COLUMNS} FROM sessions s WHERE true");
        let mut args = crate::search::Args::default();
        let bind = |sql: &mut String, args: &mut crate::search::Args, clause: &str, value: String| {
            sql.push_str(&clause.replace('?', &args.add(value)));
        };
        if let Some(text) = &q.text {
            // Its title holds the query's words, or one of its entries matches the query as a search
            // finds it: every field of the query applies, on the session or on the entry, as there.
            let query = scrollback_core::query::parse(text)?;
            let words: Vec<&str> = query.all.iter().flatten().map(|t| t.text.as_str()).collect();
            let title = args.add(if words.is_empty() { text.clone() } else { words.join(" ") });
            let compiled = crate::search::compile(&query, &mut args, false);
            let f = &query.filters;
            let mut entry = String::new();
            for (value, clause) in [
                (f.agent.as_deref(), " AND e.agent = ?"),
                (
                    match f.role {
                        Some(Role::User) => Some("user"),
                        Some(Role::Assistant) => Some("assistant"),
                        _ => None,
                    },
                    " AND e.role = ?",
                ),
                (f.after.as_deref(), r#" AND e.timestamp COLLATE "C" >= ?"#),
                (f.before.as_deref(), r#" AND e.timestamp COLLATE "C" < ?"#),
            ] {
                if let Some(value) = value {
                    bind(&mut entry, &mut args, clause, value.to_owned());
                }
            }
            // A title is no one's words and no tool's: a `role:` or `tool:` query looks at entries only.
            let titled = if f.role.is_some() || f.tool.is_some() { "false AND " } else { "" };
            // A title holding a word the query excludes does not list its session.
            let unless: String = query
                .none
                .iter()
                .map(|t| format!(" AND strpos(lower(coalesce(s.title, '')), lower({})) = 0", args.add(t.text.clone())))
                .collect();
            sql.push_str(&format!(
                " AND ({titled}strpos(lower(coalesce(s.title, '')), lower({title})) > 0{unless} OR EXISTS (
                     SELECT 1 FROM entries e WHERE e.host = s.host AND e.session_id = s.id AND NOT e.duplicate
                     AND {}{entry}))",
                compiled.matches
            ));
            for (value, clause) in [
                (f.agent.as_deref(), " AND s.agent = ?"),
                (f.project.as_deref(), " AND strpos(s.project, ?) > 0"),
                (f.session.as_deref(), " AND starts_with(s.id, ?)"),
                (f.after.as_deref(), r#" AND coalesce(s.last_timestamp, '') COLLATE "C" >= ?"#),
                (f.before.as_deref(), r#" AND s.first_timestamp COLLATE "C" < ?"#),
            ] {
                if let Some(value) = value {
                    bind(&mut sql, &mut args, clause, value.to_owned());
                }
            }
        }
        for (value, clause) in [
            (&q.project, " AND s.project = ?"),
            (&q.agent, " AND s.agent = ?"),
            (&q.host, " AND s.host = ?"),
            (&q.since, r#" AND coalesce(s.last_timestamp, '') COLLATE "C" >= ?"#),
            (&q.until, r#" AND s.first_timestamp COLLATE "C" < ?"#),
            (&q.active_since, r#" AND coalesce(s.last_timestamp, '') COLLATE "C" < ?"#),
        ] {
            if let Some(value) = value {
                bind(&mut sql, &mut args, clause, value.clone());
            }
        }
        if let Some((ts, host, id)) = cursor {
            bind(
                &mut sql,
                &mut args,
                r#" AND (coalesce(s.last_timestamp, '') COLLATE "C", s.host COLLATE "C", s.id COLLATE "C") < (?"#,
                ts,
            );
            bind(&mut sql, &mut args, ", ?", host);
            bind(&mut sql, &mut args, ", ?)", id);
        }
        sql.push_str(&format!(
            r#" ORDER BY coalesce(s.last_timestamp, '') COLLATE "C" DESC, s.host COLLATE "C" DESC, s.id COLLATE "C" DESC LIMIT {}"#,
            limit + 1
        ));
        let mut sessions: Vec<SessionSummary> =
            self.query(&sql, &args.refs())?.iter().map(listed).collect::<Result<_>>()?;
        let more = sessions.len() as i64 > limit;
        sessions.truncate(limit as usize);
        let cursors: Vec<String> = sessions.iter().map(session_cursor).collect();
        let next = if more { cursors.last().cloned() } else { None };
        Ok(SessionPage { sessions, next, cursors })
    }

    fn session(&self, id: &str) -> Result<Option<SessionSummary>> {
        let Some(host) = self.host_of(id)? else { return Ok(None) };
        self.query_opt(
            &format!("SELECT {SESSION_COLUMNS} FROM sessions s WHERE s.host = $1 AND s.id = $2"),
            &[&host, &id],
        )?
        .as_ref()
        .map(listed)
        .transpose()
    }

    fn session_named(&self, given: &str) -> Result<String> {
        let ids = self.query(
            r#"SELECT DISTINCT id COLLATE "C" FROM sessions WHERE starts_with(id, $1) ORDER BY 1 LIMIT $2"#,
            &[&given, &(scrollback_read::history::names::LISTED as i64 + 1)],
        )?;
        let ids = ids.iter().map(|r| r.try_get::<_, String>(0)).collect::<Result<Vec<_>, _>>().pg()?;
        scrollback_read::history::names::pick(given, ids)
    }

    fn git_branch(&self, session_id: &str) -> Result<Option<String>> {
        let Some(host) = self.host_of(session_id)? else { return Ok(None) };
        let row =
            self.query_opt("SELECT git_branch FROM sessions WHERE host = $1 AND id = $2", &[&host, &session_id])?;
        Ok(row.map(|r| r.try_get(0)).transpose().pg()?.flatten())
    }

    fn history(&self, session_id: &str, at: Position, limit: u32, sidechains: bool) -> Result<Option<HistoryPage>> {
        let Some(host) = self.host_of(session_id)? else { return Ok(None) };
        let host = host.as_str();
        // One snapshot for the page and its catch-up mark, as an index reads them.
        self.on_hub(|hub| hub.batch_execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"))?;
        let side = if sidechains { "" } else { " AND NOT is_sidechain" };
        let page = page_of(&HubPages { store: self, host, session_id, side }, session_id, at, limit);
        let end = self.on_hub(|hub| hub.batch_execute("COMMIT"));
        let page = page?;
        end?;
        Ok(Some(page))
    }

    fn first_cursor(&self, session_id: &str, sidechains: bool) -> Result<Option<i64>> {
        let Some(host) = self.host_of(session_id)? else { return Ok(None) };
        let side = if sidechains { "" } else { " AND NOT is_sidechain" };
        self.query_opt(
            &format!(
                "SELECT local_id FROM entries WHERE host = $1 AND session_id = $2 AND NOT duplicate{side}
                     {OLDEST_FIRST} LIMIT 1"
            ),
            &[&host, &session_id],
        )?
        .map(|r| r.try_get(0))
        .transpose()
        .pg()
    }

    fn outline(&self, session_id: &str, mask: Option<&dyn scrollback_read::history::Mask>) -> Result<Option<Outline>> {
        crate::outline::outline(self, session_id, mask)
    }

    fn search(&self, query: &Query, scope: Scope<'_>, sort: Sort, offset: u32, limit: u32) -> Result<SearchPage> {
        crate::search::search_page(self, query, scope, sort, offset, limit)
    }

    fn search_sessions(
        &self,
        query: &Query,
        scope: Scope<'_>,
        sort: Sort,
        offset: u32,
        limit: u32,
    ) -> Result<SessionHitsPage> {
        crate::search::search_sessions(self, query, scope, sort, offset, limit)
    }

    fn search_text(&self, hit: &SearchHit) -> Result<Option<String>> {
        let column = if hit.in_tool { "tool_text" } else { "text" };
        let Some(host) = &hit.host else { return Ok(None) };
        Ok(self
            .query_opt(
                &format!("SELECT {column} FROM entries WHERE host = $1 AND session_id = $2 AND local_id = $3"),
                &[host, &hit.session_id, &hit.cursor],
            )?
            .map(|r| r.try_get(0))
            .transpose()
            .pg()?
            .flatten())
    }

    fn media(&self, name: &MediaName) -> Result<MediaRecord> {
        let found = match name {
            MediaName::Ref(r) => self.media_by_ref(r)?,
            MediaName::Hash(h) => self.media_by_hash(h)?,
        };
        let Some(mut record) = found else {
            return Err(Error::NotFound(match name {
                MediaName::Ref(r) => r.to_string(),
                MediaName::Hash(h) => h.to_string(),
            }));
        };
        // The bytes, as pushed: checked against the blake3 when read (`media::open`).
        let Some(blob) = self.query_opt("SELECT bytes FROM blobs WHERE blake3 = $1", &[&record.blake3])? else {
            return Err(Error::NotFound(format!("{} (its host has not pushed its bytes yet)", record.blake3)));
        };
        record.held = Some(Arc::from(blob.try_get::<_, Vec<u8>>(0).pg()?));
        record.file_live = true;
        Ok(record)
    }

    fn stats(
        &self,
        filter: scrollback_read::stats::Filter<'_>,
        prices: &Prices,
    ) -> Result<scrollback_read::stats::Stats> {
        scrollback_read::stats::stats_of(&crate::stats::HubStats(self), filter, prices)
    }

    fn usage(&self, by: By, filter: Filter<'_>, prices: &Prices) -> Result<Report> {
        crate::usage::report(self, by, filter, prices)
    }

    fn export_files(&self, session_id: &str) -> Result<Vec<ExportFile>> {
        let Some(host) = self.host_of(session_id)? else { return Ok(Vec::new()) };
        let rows = self.query(
            "SELECT f.file_id FROM files f
             WHERE f.host = $1 AND f.file_id IN (SELECT file_id FROM entries WHERE host = $1 AND session_id = $2)
             ORDER BY (SELECT min(sort_file) FROM entries e WHERE e.host = $1 AND e.file_id = f.file_id AND e.session_id = $2),
                      f.file_id",
            &[&host, &session_id],
        )?;
        rows.iter()
            .map(|r| Ok(ExportFile { id: r.try_get(0).pg()?, host: Some(host.clone()), transcript: None }))
            .collect::<Result<_>>()
    }

    fn export_lines(&self, file: &ExportFile, session_id: &str, after: i64) -> Result<Vec<Line>> {
        let host = file.host.as_deref().unwrap_or_default();
        let rows = self.query(
            "SELECT off, length, stripped FROM entries
             WHERE host = $1 AND file_id = $2 AND session_id = $3 AND off > $4 ORDER BY off LIMIT $5",
            &[&host, &file.id, &session_id, &after, &LINES],
        )?;
        let mut lines: Vec<Line> = rows
            .iter()
            .map(|r| {
                Ok(Line {
                    offset: r.try_get(0).pg()?,
                    length: r.try_get(1).pg()?,
                    stored: r.try_get(2).pg()?,
                    media: Vec::new(),
                })
            })
            .collect::<Result<_>>()?;
        let Some(last) = lines.last().map(|l| l.offset) else { return Ok(lines) };
        let at: std::collections::HashMap<i64, usize> = lines.iter().enumerate().map(|(i, l)| (l.offset, i)).collect();
        let media = self.query(
            &format!(
                "SELECT {MEDIA_COLUMNS} FROM {MEDIA_JOIN}
                 WHERE m.host = $1 AND m.file_id = $2 AND e.session_id = $3 AND m.entry_off > $4 AND m.entry_off <= $5
                 ORDER BY m.off"
            ),
            &[&host, &file.id, &session_id, &after, &last],
        )?;
        for r in &media {
            let m = media_record(r)?;
            if let Some(&i) = at.get(&(m.line_offset as i64)) {
                lines[i].media.push(m);
            }
        }
        Ok(lines)
    }

    fn with_bytes(&self, record: &MediaRecord) -> Result<MediaRecord> {
        self.media(&MediaName::Hash(record.blake3.parse()?)).map(|held| MediaRecord {
            held: held.held,
            file_live: true,
            ..record.clone()
        })
    }
}

/// A hub's rows of one host's session, as the read engine's [`page_of`] reads them.
struct HubPages<'a> {
    store: &'a HubStore,
    host: &'a str,
    session_id: &'a str,
    /// ` AND NOT is_sidechain` unless side chains are asked for.
    side: &'static str,
}

impl PageSource for HubPages<'_> {
    fn place_of(&self, cursor: i64) -> Result<Option<Order>> {
        self.store.place_of(self.host, self.session_id, cursor)
    }

    fn rows(&self, at: Position, place: Option<&(Order, i64)>, limit: i64) -> Result<Vec<HistoryEntry>> {
        self.store.page_rows((self.host, self.session_id), at, place, self.side, limit)
    }

    /// The session's newest row on the hub (a host's row ids only grow).
    fn high_water(&self) -> Result<Option<i64>> {
        Ok(self
            .store
            .query_opt(
                "SELECT max(local_id) FROM entries WHERE host = $1 AND session_id = $2",
                &[&self.host, &self.session_id],
            )?
            .map(|r| r.try_get(0))
            .transpose()
            .pg()?
            .flatten())
    }

    fn attach(&self, entries: &mut [HistoryEntry]) -> Result<()> {
        self.store.attach_media(self.host, self.session_id, entries)?;
        self.store.attach_subagents(self.host, self.session_id, entries)
    }

    fn older_than(&self, oldest: &HistoryEntry) -> Result<bool> {
        let o = &oldest.order;
        let older = self.store.query_opt(
            &format!(
                "SELECT 1 FROM entries WHERE host = $1 AND session_id = $2 AND NOT duplicate{}
                 AND {BEFORE_PLACE} LIMIT 1",
                self.side
            ),
            &[&self.host, &self.session_id, &o.at, &o.file, &o.line, &oldest.cursor],
        )?;
        Ok(older.is_some())
    }
}
