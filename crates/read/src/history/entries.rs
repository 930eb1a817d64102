//! An entry of a history page: what it holds ([`HistoryEntry`], [`EntryBody`]), how a client sees
//! its line, and what a page attaches to it once read (its media rows, where the sub-agent it ran
//! is).
//!
//! Never reads a transcript byte: the stored line and its media rows are all in SQLite.

use std::collections::HashMap;

use rusqlite::{Connection, OptionalExtension, params};

use crate::index::{MEDIA_COLUMNS, media_record};
use crate::media::MediaRecord;
use crate::render::{self, MediaUrls};
use scrollback_core::codec::order::Order;
use scrollback_core::error::Result;
use scrollback_core::format::{Columns, Format};

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
    /// The sub-agent whose transcript this entry is in (its `agentId`), if it is one's.
    pub agent_id: Option<String>,
    /// On a sub-agent's first entry: the entry whose tool call ran it (its parent, in the session).
    pub spawned_by: Option<SpawnedBy>,
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

/// The entry whose tool call ran a sub-agent, as its first entry names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpawnedBy {
    /// The sub-agent's `agentId`.
    pub agent_id: String,
    /// The cursor of the entry that ran it (the tool result that names it), if it is indexed.
    pub cursor: Option<i64>,
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

/// Gives each entry that ran a sub-agent where that sub-agent's entries are. (The sub-agent's rows
/// are read by `entries_agent` and the first found here: an `ORDER BY` would have SQLite walk the
/// whole session in order instead.)
pub(super) fn attach_subagents(conn: &Connection, session_id: &str, entries: &mut [HistoryEntry]) -> Result<()> {
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

/// Gives each sub-agent's first entry on a page the entry that ran it, so that a reader goes from
/// the sub-agent back to its parent as from the parent to it ([`attach_subagents`]). The first
/// entry is found as there (through `entries_agent`); the one that ran it is looked for only when
/// that first entry is on the page.
pub(super) fn attach_spawners(conn: &Connection, session_id: &str, entries: &mut [HistoryEntry]) -> Result<()> {
    let mut agents: Vec<String> = entries.iter().filter_map(|e| e.agent_id.clone()).collect();
    agents.sort();
    agents.dedup();
    for agent_id in agents {
        let mut stmt = conn.prepare_cached(
            "SELECT id, sort_at, sort_file, line FROM entries WHERE session_id = ?1 AND agent_id = ?2 AND duplicate = 0",
        )?;
        let rows = stmt.query_map(params![session_id, agent_id], |r| {
            Ok((Order { at: r.get(1)?, file: r.get(2)?, line: r.get(3)? }, r.get::<_, i64>(0)?))
        })?;
        let mut first: Option<(Order, i64)> = None;
        for row in rows {
            let row = row?;
            if first.as_ref().is_none_or(|f| row < *f) {
                first = Some(row);
            }
        }
        let Some((_, first)) = first else { continue };
        let Some(entry) = entries.iter_mut().find(|e| e.cursor == first) else { continue };
        let cursor = conn
            .prepare_cached(
                "SELECT id FROM entries WHERE session_id = ?1 AND spawned_agent = ?2 AND duplicate = 0 ORDER BY id LIMIT 1",
            )?
            .query_row(params![session_id, agent_id], |r| r.get(0))
            .optional()?;
        entry.spawned_by = Some(SpawnedBy { agent_id, cursor });
    }
    Ok(())
}

/// Gives each stored entry of a page its media rows, read in one query.
pub(super) fn attach_media(conn: &Connection, session_id: &str, entries: &mut [HistoryEntry]) -> Result<()> {
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
