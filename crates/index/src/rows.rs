//! Writing one file's rows: entries, media, failed images, and the sessions they add to.
//!
//! Called by the writer inside the transaction that also moves the file's checkpoint; nothing here
//! commits. Each entry gets its conversation [`Order`] here. Session rows are upserted per batch:
//! counts add up, time ranges widen, a title replaces the one before it by
//! [`title_rank::replaces`] and the two titles' orders (stated again in the upsert's SQL with the same
//! constant), and a git branch replaces the one before it when its entry is not earlier in order
//! (and is found again, from the stored lines, when its entry is hidden or deleted).
//!
//! A line that is a copy of an entry of the same session (the same `uuid` and the same stored line:
//! Claude Code copies entries into another file on resume and fork, and a transcript moved away and
//! back is read again) is kept, marked `duplicate`: of all copies, the one first in conversation
//! order is the one history, search and counts show, whatever order the files were indexed in. Two
//! different lines that share a `uuid` are both shown: neither is a copy, and hiding one would lose
//! it. During a bulk load (no `uuid` index) copies are marked at its end ([`mark_copies`]).

use std::collections::HashMap;
use std::path::Path;

use rusqlite::{Connection, OptionalExtension, Statement, params};

use crate::entry::{Body, Described, Stored};
use crate::{packing, stats, usage};
use scrollback_core::codec::order::{self, Order};
use scrollback_core::error::Result;
use scrollback_core::format::{self, Effect, Format, hidden, title_rank};

/// Deletes a file's entries and everything that hangs off them, shows the next copy of each entry
/// that was shown (unless a bulk load is running: it marks copies at its end), and fixes the
/// sessions' counts and git branches.
pub(crate) fn delete_file_rows(tx: &Connection, file_id: i64, bulk: bool) -> Result<()> {
    let mut stmt = tx.prepare("SELECT DISTINCT session_id FROM entries WHERE file_id = ?1")?;
    let sessions: Vec<String> = stmt.query_map([file_id], |r| r.get(0))?.collect::<rusqlite::Result<_>>()?;
    drop(stmt);
    // The first copy in another file of each shown entry takes its place. (Copies are found by
    // `uuid`: the index on the session would have SQLite walk a whole session per row.)
    if !bulk {
        tx.execute(
            "UPDATE entries SET duplicate = 0 WHERE id IN (
                 SELECT (SELECT o.id FROM entries o INDEXED BY entries_uuid
                         WHERE o.uuid = r.uuid AND o.session_id = r.session_id AND (o.stripped IS r.stripped OR stored_line(o.stripped) IS stored_line(r.stripped))
                           AND o.file_id != r.file_id AND o.hidden IS NULL
                         ORDER BY o.sort_at, o.sort_file, o.line, o.id LIMIT 1)
                 FROM entries r WHERE r.file_id = ?1 AND r.duplicate = 0 AND r.uuid IS NOT NULL)",
            [file_id],
        )?;
    }
    tx.execute("DELETE FROM media WHERE entry_id IN (SELECT id FROM entries WHERE file_id = ?1)", [file_id])?;
    tx.execute("DELETE FROM failed_images WHERE entry_id IN (SELECT id FROM entries WHERE file_id = ?1)", [file_id])?;
    let dropped = usage::drop_lines(tx, "file_id = ?1", &file_id, bulk)?;
    stats::drop_events(tx, "file_id = ?1", &file_id)?;
    tx.execute("DELETE FROM usage_state WHERE file_id = ?1", [file_id])?;
    tx.execute("DELETE FROM entries WHERE file_id = ?1", [file_id])?;
    for session in &sessions {
        recount_session(tx, session)?;
        keep_branch(tx, session, !bulk)?;
    }
    // (A bulk load derives the whole ledger, and the overview's sums, at its end.)
    if !bulk {
        dropped.settle(tx)?;
        stats::restat(tx, sessions.iter().map(String::as_str))?;
    }
    Ok(())
}

/// Recomputes a session's counts and time range from its rows (after rows were removed, or copies
/// marked).
pub(crate) fn recount_session(tx: &Connection, session: &str) -> Result<()> {
    tx.prepare_cached(
        "UPDATE sessions SET
            entries = (SELECT count(*) FROM entries WHERE session_id = ?1 AND duplicate = 0),
            sidechain_entries = (SELECT count(*) FROM entries WHERE session_id = ?1 AND duplicate = 0 AND is_sidechain),
            images = (SELECT count(*) FROM media m JOIN entries e ON e.id = m.entry_id
                      WHERE e.session_id = ?1 AND e.duplicate = 0 AND m.ordinal IS NOT NULL)
                   + (SELECT count(*) FROM failed_images f JOIN entries e ON e.id = f.entry_id
                      WHERE e.session_id = ?1 AND e.duplicate = 0),
            first_timestamp = (SELECT min(timestamp) FROM entries WHERE session_id = ?1),
            last_timestamp = (SELECT max(timestamp) FROM entries WHERE session_id = ?1),
            first_entry = (SELECT min(id) FROM entries WHERE session_id = ?1),
            last_entry = (SELECT max(id) FROM entries WHERE session_id = ?1)
         WHERE id = ?1",
    )?
    .execute([session])?;
    Ok(())
}

/// Keeps a session's git branch that of its last shown entry in conversation order whose format
/// names one, after entries of it were hidden or deleted (and, if `shown`, copies of deleted ones
/// shown in their place, which may stand later in order than the entry the branch came from). The
/// branch stays while its entry is still shown and none was shown; else the session's shown entries
/// are described again, latest first, until one names a branch (most lines of an agent that names
/// one do, so that is the first few).
fn keep_branch(tx: &Connection, session: &str, shown: bool) -> Result<()> {
    let key: Option<String> = tx
        .prepare_cached("SELECT git_branch_order FROM sessions WHERE id = ?1")?
        .query_row([session], |r| r.get(0))
        .optional()?
        .flatten();
    // No shown entry named a branch: neither hiding nor deleting entries, nor showing copies of
    // those, makes one name it.
    let Some(key) = key else { return Ok(()) };
    if !shown && let Some(order) = order_of_key(&key) {
        let stands: bool = tx
            .prepare_cached(
                "SELECT EXISTS (SELECT 1 FROM entries WHERE session_id = ?1 AND sort_at = ?2 AND sort_file = ?3
                                AND line = ?4 AND duplicate = 0 AND stripped IS NOT NULL)",
            )?
            .query_row(params![session, order.at, order.file, order.line], |r| r.get(0))?;
        if stands {
            return Ok(());
        }
    }
    let mut found: Option<(Order, String)> = None;
    let mut stmt = tx.prepare_cached(
        "SELECT stored_line(stripped), agent, sort_at, sort_file, line FROM entries
         WHERE session_id = ?1 AND duplicate = 0 AND stripped IS NOT NULL
         ORDER BY sort_at DESC, sort_file DESC, line DESC, id DESC",
    )?;
    let mut rows = stmt.query([session])?;
    while let Some(row) = rows.next()? {
        let stripped: String = row.get(0)?;
        let agent: String = row.get(1)?;
        let line: i64 = row.get(4)?;
        let own = format::by_name(&agent).unwrap_or(format::DEFAULT);
        let Ok(meta) = own.describe(&stripped, line as u64, &format::FileContext::default()) else { continue };
        if let Some(branch) = meta.git_branch {
            found = Some((Order { at: row.get(2)?, file: row.get(3)?, line }, branch));
            break;
        }
    }
    drop(rows);
    drop(stmt);
    let (branch_order, branch) = match found {
        Some((order, branch)) => (Some(order.key()), Some(branch)),
        None => (None, None),
    };
    tx.execute(
        "UPDATE sessions SET git_branch = ?1, git_branch_order = ?2 WHERE id = ?3",
        params![branch, branch_order, session],
    )?;
    Ok(())
}

/// The order whose [`Order::key`] is `key` (its time part may hold the separator: it is read from
/// the right).
fn order_of_key(key: &str) -> Option<Order> {
    let mut parts = key.rsplitn(3, '\u{1}');
    let (line, file, at) = (parts.next()?, parts.next()?, parts.next()?);
    Some(Order { at: at.to_owned(), file: file.parse().ok()?, line: line.parse().ok()? })
}

/// Marks every copy of an entry that is not the first of its session in conversation order (after a
/// bulk load, which wrote them without the `uuid` index), and recounts the sessions that have one.
/// Only `uuid`s that occur more than once are looked at, each by the `uuid` index.
pub(crate) fn mark_copies(tx: &Connection) -> Result<()> {
    let marked = tx.execute(
        "UPDATE entries SET duplicate = 1 WHERE id IN (
             SELECT later.id FROM entries later INDEXED BY entries_uuid
             JOIN entries earlier INDEXED BY entries_uuid
               ON earlier.uuid = later.uuid AND earlier.session_id = later.session_id
              AND (earlier.stripped IS later.stripped OR stored_line(earlier.stripped) IS stored_line(later.stripped))
              AND (earlier.sort_at, earlier.sort_file, earlier.line, earlier.id)
                < (later.sort_at, later.sort_file, later.line, later.id)
             WHERE later.uuid IN (SELECT uuid FROM entries WHERE uuid IS NOT NULL GROUP BY uuid HAVING count(*) > 1))",
        [],
    )?;
    if marked > 0 {
        let mut stmt = tx.prepare("SELECT DISTINCT session_id FROM entries WHERE duplicate = 1")?;
        let sessions: Vec<String> = stmt.query_map([], |r| r.get(0))?.collect::<rusqlite::Result<_>>()?;
        for session in sessions {
            recount_session(tx, &session)?;
            keep_branch(tx, &session, false)?;
        }
    }
    Ok(())
}

/// What a batch adds to one session.
#[derive(Debug, Default)]
struct SessionDelta {
    project: Option<String>,
    /// The best title of the batch: its rank, the order of its entry, and the title.
    title: Option<(u8, Order, String)>,
    first: Option<String>,
    last: Option<String>,
    entries: u64,
    sidechain_entries: u64,
    images: u64,
    /// A copy was shown or hidden: the counts are recomputed from the rows instead (and the
    /// overview's sums from the session's every entry).
    recount: bool,
    /// The id of the batch's first row of the session.
    first_id: Option<i64>,
    /// The id of the batch's last row of the session.
    last_id: Option<i64>,
    /// The session it was forked from.
    forked_from: Option<String>,
    /// The git branch the batch's last entry (in order) that names one gives, and that entry's order.
    git_branch: Option<(Order, String)>,
}

/// The file whose rows are written.
#[derive(Debug, Clone, Copy)]
pub(crate) struct FileRows<'a> {
    /// `files.id`.
    pub id: i64,
    /// Its path.
    pub path: &'a Path,
    /// The session its name gives (for lines that name none).
    pub session: &'a str,
    /// Its format: the file keys of its entries' orders.
    pub format: &'static dyn Format,
    /// A bulk load is running: no `uuid` index, so copies are marked at its end.
    pub bulk: bool,
    /// The dictionary stored lines are packed with, if the index has one.
    pub dictionary: Option<&'a scrollback_core::pack::Dictionary>,
}

/// What [`write_entries`] wrote.
#[derive(Debug, Default)]
pub(crate) struct Written {
    /// The entries' row ids, in order, when asked for.
    pub ids: Vec<i64>,
    /// Lines written.
    pub lines: u64,
    /// Payloads (media rows) written.
    pub media: u64,
    /// Invalid lines written.
    pub invalid: u64,
}

/// Inserts described lines of one file and adds them to their sessions; returns what it wrote, with
/// the rows' ids if `want_ids`.
pub(crate) fn write_entries(
    tx: &Connection,
    file: FileRows<'_>,
    lines: &[Described],
    want_ids: bool,
    shown: &mut Shown,
) -> Result<Written> {
    let mut insert_entry = tx.prepare_cached(
        "INSERT INTO entries (file_id, session_id, line, offset, length, uuid, parent_uuid, type, role, timestamp,
                              is_sidechain, stripped, text, invalid, sort_at, sort_file, duplicate, agent_id,
                              spawned_agent, agent, hidden, tool_text, tools)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21,
                 ?22, ?23)",
    )?;
    // The running maximum of the file's timestamps goes on from its last row.
    let mut at: String = tx
        .prepare_cached("SELECT sort_at FROM entries WHERE file_id = ?1 ORDER BY offset DESC LIMIT 1")?
        .query_row([file.id], |r| r.get(0))
        .optional()?
        .unwrap_or_default();
    let mut file_keys: HashMap<&str, i64> = HashMap::new();
    let mut sessions: HashMap<&str, SessionDelta> = HashMap::new();
    let mut written = Written { ids: Vec::with_capacity(if want_ids { lines.len() } else { 0 }), ..Written::default() };
    let mut recorder = usage::Recorder::new(file.id, file.format.name());
    // The lowest id of the rows the batch's lines hid, if they hid any: a session with a row hidden
    // that an earlier batch wrote (its walk may have read it as shown) has its overview's sums made
    // from its every entry; one whose hidden rows are all the batch's own (a message written again
    // within the batch) has its walk go on, which reads them as hidden.
    let mut hid: Option<i64> = None;
    for d in lines {
        let session = d.session(file.session);
        let stored = match &d.body {
            Body::Stored(stored) => Some(stored),
            Body::Invalid(_) => None,
        };
        let meta = stored.map(|s| &s.meta);
        let columns = meta.map(|m| &m.columns);
        at = order::advance(&at, columns.and_then(|c| c.timestamp.as_deref()));
        let sort_file = *file_keys.entry(session).or_insert_with(|| file.format.file_key(file.path, session));
        let order = Order { at: at.clone(), file: sort_file, line: d.line as i64 };
        let delta = sessions.entry(session).or_default();
        let hidden = meta.and_then(|m| m.hidden);
        // A rewrite of a message hides the earlier writes (below), whatever they hold.
        let rewrites = meta.is_some_and(|m| m.effect == Some(Effect::Rewrites));
        let duplicate = hidden.is_some()
            || match (file.bulk || rewrites, columns.and_then(|c| c.uuid.as_deref())) {
                (false, Some(uuid)) => {
                    let copy = mark_copy(tx, session, uuid, stored.map(|s| s.stripped.as_str()), &order)?;
                    delta.recount |= copy != Copies::None;
                    copy == Copies::Later
                }
                _ => false,
            };
        insert_row(&mut insert_entry, file, d, session, &order, duplicate)?;
        let entry_id = tx.last_insert_rowid();
        delta.first_id.get_or_insert(entry_id);
        delta.last_id = Some(entry_id);
        let uuid = columns.and_then(|c| c.uuid.as_deref());
        if let Some(effect) = meta.and_then(|m| m.effect.as_ref())
            && let Some(lowest) = shown.apply(tx, file.id, entry_id, uuid, effect)?
        {
            hid = Some(hid.map_or(lowest, |h: i64| h.min(lowest)));
        }
        shown.written(d.line as i64, entry_id, uuid, meta.filter(|m| m.hidden.is_none()).map(|m| &m.columns));
        if want_ids {
            written.ids.push(entry_id);
        }
        written.lines += 1;
        if !duplicate {
            delta.entries += 1;
        }
        let Some(stored) = stored else {
            written.invalid += 1;
            continue;
        };
        written.media += insert_payloads(tx, entry_id, d.offset, stored)?;
        recorder.record(tx, entry_id, stored.meta.columns.timestamp.as_deref(), &stored.meta, hidden)?;
        // (Found by the thread that read the line: `batch::produce`.)
        if let Some(found) = &stored.events {
            stats::record_events(tx, entry_id, session, stored.meta.columns.timestamp.as_deref(), found)?;
        }
        delta.add(stored, order, duplicate);
    }
    // The sessions whose overview's sums the batch changed, each with its first new row where the
    // batch only appended to it (its walk goes on from there). (A bulk load makes every session's
    // sums at its end.)
    let touched: Vec<(String, Option<i64>)> = if file.bulk {
        Vec::new()
    } else {
        sessions
            .iter()
            .map(|(s, d)| {
                let walked_hid = |first: &i64| hid.is_some_and(|lowest| lowest < *first);
                ((*s).to_owned(), d.first_id.filter(|first| !walked_hid(first) && !d.recount))
            })
            .collect()
    };
    upsert_sessions(tx, sessions, file.format.name())?;
    // (After the batch's own counts: an entry it hid may be one it wrote, of a session new with it.)
    shown.uncount(tx)?;
    recorder.finish(tx, file.bulk)?;
    for (session, appended_from) in &touched {
        match appended_from {
            Some(first) => stats::restat_appended(tx, session, *first)?,
            None => stats::restat(tx, [session.as_str()])?,
        }
    }
    Ok(written)
}

/// Inserts the entry row of line `d` of `file` in `session`, at `order`, with `insert` (the
/// statement [`write_entries`] prepared).
fn insert_row(
    insert: &mut Statement<'_>,
    file: FileRows<'_>,
    d: &Described,
    session: &str,
    order: &Order,
    duplicate: bool,
) -> Result<()> {
    let (stored, invalid) = match &d.body {
        Body::Stored(stored) => (Some(stored), None),
        Body::Invalid(reason) => (None, Some(reason)),
    };
    let meta = stored.map(|s| &s.meta);
    let columns = meta.map(|m| &m.columns);
    insert.execute(params![
        file.id,
        session,
        d.line as i64,
        d.offset as i64,
        d.length as i64,
        columns.and_then(|c| c.uuid.as_deref()),
        columns.and_then(|c| c.parent_uuid.as_deref()),
        columns.and_then(|c| c.kind.as_deref()),
        columns.and_then(|c| c.role.as_deref()),
        columns.and_then(|c| c.timestamp.as_deref()),
        columns.is_some_and(|c| c.is_sidechain),
        stored.map(|s| packing::stored_value(file.dictionary, &s.stripped, s.packed.as_ref())),
        meta.and_then(|m| m.text.as_deref()),
        invalid,
        order.at,
        order.file,
        duplicate,
        meta.and_then(|m| m.agent_id.as_deref()),
        meta.and_then(|m| m.spawned_agent.as_deref()),
        file.format.name(),
        meta.and_then(|m| m.hidden),
        meta.and_then(|m| m.tool_text.as_deref()),
        meta.and_then(|m| m.tools.as_deref()),
    ])?;
    Ok(())
}

/// The kinds of entry a rewind or a checkpoint acts on are messages (and checkpoints): not the
/// metadata, updates, rewinds, nor invalid lines (no kind), nor those hidden already.
const NOT_MESSAGES: [&str; 3] = ["session", "update", "rewind"];

/// What one pass over a file knows of its entries that an agent's replay may still hide (Gemini's
/// rewinds, checkpoints and rewritten messages), so that each replay touches only the rows it hides:
/// the shown messages in line order, a stack that a rewind pops from its target on (each entry is
/// pushed once and popped at most once: linear in the file, however many rewinds), the first line
/// of each message id, and the shown write of each id.
///
/// A pass reads it from the file's rows at its first rewind or checkpoint, once (the rows it wrote
/// itself included: they are in its transaction), and keeps it from then on; a rewrite before then
/// is one lookup by the `uuid` index. So a file none of whose lines replays anything (every format
/// but Gemini CLI's) costs no memory for it: kept from a file's start, it took 18 MB of peak RSS
/// for a session of 200,000 lines (docs/benchmarks.md).
#[derive(Debug, Default)]
pub(crate) struct Shown {
    known: Option<Known>,
    /// What the entries hidden since the last [`Shown::uncount`] took from their sessions' counts:
    /// (entries, side-chain entries, images) by session.
    hidden: HashMap<String, [i64; 3]>,
}

#[derive(Debug, Default)]
struct Known {
    /// (line, id) of each shown message, in line order (some may since be hidden as rewritten:
    /// hiding them again changes nothing).
    stack: Vec<(i64, i64)>,
    /// The first line of each message id in the file.
    first_line: HashMap<String, i64>,
    /// The shown write of each message id.
    latest: HashMap<String, i64>,
}

impl Shown {
    /// A pass's: what the file's rows hold is read when a replay first needs it.
    pub(crate) fn new() -> Shown {
        Shown { known: None, hidden: HashMap::new() }
    }

    /// What the rows of file `file_id` before entry `entry_id` (the one replaying, just written,
    /// which [`Shown::written`] notes after its replay) hold, read once.
    fn known(&mut self, tx: &Connection, file_id: i64, entry_id: i64) -> Result<&mut Known> {
        if self.known.is_none() {
            let mut known = Known::default();
            let mut stmt = tx.prepare_cached(&format!(
                "SELECT line, id, uuid, hidden IS NULL AND type NOT IN ({}) FROM entries WHERE file_id = ?1 AND id != ?2
                 ORDER BY offset",
                NOT_MESSAGES.map(|k| format!("'{k}'")).join(", ")
            ))?;
            let mut rows = stmt.query(params![file_id, entry_id])?;
            while let Some(row) = rows.next()? {
                let (line, id, uuid, message): (i64, i64, Option<String>, Option<bool>) =
                    (row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?);
                known.written(line, id, uuid.as_deref(), message == Some(true));
            }
            self.known = Some(known);
        }
        Ok(self.known.as_mut().expect("just read"))
    }

    /// Notes the entry `id` at `line` just written, with `uuid`, of `columns` if it is valid and
    /// not hidden by its own line.
    fn written(&mut self, line: i64, id: i64, uuid: Option<&str>, columns: Option<&format::Columns>) {
        let Some(known) = &mut self.known else { return };
        let message = columns.and_then(|c| c.kind.as_deref()).is_some_and(|k| !NOT_MESSAGES.contains(&k));
        known.written(line, id, uuid, message);
    }

    /// What `effect`, of the entry `entry_id` (with `uuid`) of file `file_id`, does to the file's
    /// entries before it; returns the lowest id of those it hid, if it hid any.
    fn apply(
        &mut self,
        tx: &Connection,
        file_id: i64,
        entry_id: i64,
        uuid: Option<&str>,
        effect: &Effect,
    ) -> Result<Option<i64>> {
        let mut ids = Vec::new();
        let reason = match effect {
            Effect::Rewrites => {
                let Some(uuid) = uuid else { return Ok(None) };
                match &self.known {
                    Some(known) => ids.extend(known.latest.get(uuid).copied().filter(|old| *old != entry_id)),
                    None => ids = tx
                        .prepare_cached(
                            "SELECT id FROM entries WHERE file_id = ?1 AND uuid = ?2 AND id != ?3 AND hidden IS NULL",
                        )?
                        .query_map(params![file_id, uuid, entry_id], |r| r.get(0))?
                        .collect::<rusqlite::Result<_>>()?,
                }
                hidden::REWRITTEN
            }
            Effect::RewindTo(target) => {
                let known = self.known(tx, file_id, entry_id)?;
                // An id the file does not have undoes every message, as the CLI does.
                let from = known.first_line.get(target.as_str()).copied().unwrap_or(0);
                while let Some(&(line, id)) = known.stack.last()
                    && line >= from
                {
                    known.stack.pop();
                    ids.push(id);
                }
                hidden::REWOUND
            }
            Effect::ReplacesAll => {
                ids.extend(self.known(tx, file_id, entry_id)?.stack.drain(..).map(|(_, id)| id));
                hidden::REPLACED
            }
        };
        let mut lowest: Option<i64> = None;
        for id in ids {
            if self.hide(tx, id, reason)? {
                lowest = Some(lowest.map_or(id, |l| l.min(id)));
            }
        }
        Ok(lowest)
    }

    /// Hides the entry `id` for `reason`, unless it is hidden already; whether it did. What it took
    /// from its session's counts (if it was counted: not a copy) is kept for [`Shown::uncount`].
    fn hide(&mut self, tx: &Connection, id: i64, reason: &str) -> Result<bool> {
        let found: Option<(String, bool, bool)> = tx
            .prepare_cached("SELECT session_id, duplicate, is_sidechain FROM entries WHERE id = ?1 AND hidden IS NULL")?
            .query_row([id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .optional()?;
        let Some((session, duplicate, sidechain)) = found else { return Ok(false) };
        tx.prepare_cached("UPDATE entries SET duplicate = 1, hidden = ?2 WHERE id = ?1")?
            .execute(params![id, reason])?;
        if !duplicate {
            let images: i64 = tx
                .prepare_cached(
                    "SELECT (SELECT count(*) FROM media WHERE entry_id = ?1 AND ordinal IS NOT NULL)
                          + (SELECT count(*) FROM failed_images WHERE entry_id = ?1)",
                )?
                .query_row([id], |r| r.get(0))?;
            let counts = self.hidden.entry(session).or_default();
            counts[0] += 1;
            counts[1] += sidechain as i64;
            counts[2] += images;
        }
        Ok(true)
    }

    /// Takes what the entries hidden since the last call counted from their sessions' rows (and
    /// finds a session's git branch again if its entry was among them).
    fn uncount(&mut self, tx: &Connection) -> Result<()> {
        let mut update = tx.prepare_cached(
            "UPDATE sessions SET entries = entries - ?2, sidechain_entries = sidechain_entries - ?3,
                                 images = images - ?4 WHERE id = ?1",
        )?;
        for (session, [entries, sidechain, images]) in self.hidden.drain() {
            update.execute(params![session, entries, sidechain, images])?;
            keep_branch(tx, &session, false)?;
        }
        Ok(())
    }
}

impl Known {
    fn written(&mut self, line: i64, id: i64, uuid: Option<&str>, message: bool) {
        if let Some(uuid) = uuid {
            self.first_line.entry(uuid.to_owned()).or_insert(line);
            if message {
                self.latest.insert(uuid.to_owned(), id);
            }
        }
        if message {
            self.stack.push((line, id));
        }
    }
}

/// The media rows of entry `entry_id` (its payloads, by their offsets in the file: the line's
/// `line_offset` plus theirs in the line) and its failed images; returns the payloads written.
fn insert_payloads(tx: &Connection, entry_id: i64, line_offset: u64, stored: &Stored) -> Result<u64> {
    if stored.spans.is_empty() && stored.failed_images.is_empty() {
        return Ok(0);
    }
    let mut insert_media = tx.prepare_cached(
        "INSERT INTO media (entry_id, ordinal, kind, offset, length, encoding, media_type, decoded_length, blake3)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
    )?;
    for span in &stored.spans {
        insert_media.execute(params![
            entry_id,
            span.ordinal,
            span.kind.as_str(),
            (line_offset + span.offset) as i64,
            span.len as i64,
            span.encoding.as_str(),
            span.media_type,
            span.decoded_len as i64,
            span.blake3.to_hex().as_str(),
        ])?;
    }
    let mut insert_failed =
        tx.prepare_cached("INSERT INTO failed_images (entry_id, ordinal, reason) VALUES (?1, ?2, ?3)")?;
    for failed in &stored.failed_images {
        insert_failed.execute(params![entry_id, failed.ordinal, failed.reason])?;
    }
    Ok(stored.spans.len() as u64)
}

/// What an entry is among the entries of its session with its `uuid`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Copies {
    /// The only one.
    None,
    /// Not the first in order: it is written hidden.
    Later,
    /// Before the one shown until now, which is hidden instead.
    Earlier,
}

/// Looks for the shown copy of the line `stripped` with `uuid` in `session`, and hides it if the new
/// one at `order` comes before it.
fn mark_copy(tx: &Connection, session: &str, uuid: &str, stripped: Option<&str>, order: &Order) -> Result<Copies> {
    let shown: Option<(i64, String, i64, i64)> = tx
        .prepare_cached(
            "SELECT id, sort_at, sort_file, line FROM entries INDEXED BY entries_uuid
             WHERE uuid = ?1 AND session_id = ?2 AND duplicate = 0 AND stored_line(stripped) IS ?3",
        )?
        .query_row(params![uuid, session, stripped], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
        .optional()?;
    let Some((id, at, file, line)) = shown else { return Ok(Copies::None) };
    if (Order { at, file, line }) <= *order {
        return Ok(Copies::Later);
    }
    tx.prepare_cached("UPDATE entries SET duplicate = 1 WHERE id = ?1")?.execute([id])?;
    Ok(Copies::Earlier)
}

impl SessionDelta {
    /// Adds one valid entry of the session, at `order`; a `duplicate` adds nothing but its place.
    fn add(&mut self, stored: &Stored, order: Order, duplicate: bool) {
        let meta = &stored.meta;
        if duplicate {
            return;
        }
        self.sidechain_entries += meta.columns.is_sidechain as u64;
        self.images += stored.image_blocks as u64;
        if self.project.is_none() {
            self.project.clone_from(&meta.cwd);
        }
        if self.forked_from.is_none() {
            self.forked_from.clone_from(&meta.forked_from);
        }
        if let Some(branch) = &meta.git_branch
            && self.git_branch.as_ref().is_none_or(|(old_order, _)| &order >= old_order)
        {
            self.git_branch = Some((order.clone(), branch.clone()));
        }
        if let Some((rank, title)) = &meta.title
            && self
                .title
                .as_ref()
                .is_none_or(|(old, old_order, _)| title_rank::replaces(*rank, &order, *old, old_order))
        {
            self.title = Some((*rank, order, title.clone()));
        }
        if let Some(ts) = &meta.columns.timestamp {
            if self.first.as_ref().is_none_or(|f| ts < f) {
                self.first = Some(ts.clone());
            }
            if self.last.as_ref().is_none_or(|l| ts > l) {
                self.last = Some(ts.clone());
            }
        }
    }
}

/// A title of rank `rank` as a session's row keeps it: one made of a person's first words reads as
/// they do, not as they were marked up ([`format::plain_title`]). (Made once for the title a batch
/// or a rebuild keeps, not for every line that could title its session.)
pub(crate) fn kept_title(rank: u8, title: String) -> String {
    // Whatever a format made, a row's title is never longer than `TITLE_MAX_CHARS`.
    let title = if rank == title_rank::FIRST_USER_TEXT { format::plain_title(&title) } else { title };
    if title.len() > format::TITLE_MAX_CHARS { format::bounded_title(&title) } else { title }
}

/// Adds each session's delta to its row, creating the row if it is new.
fn upsert_sessions(tx: &Connection, sessions: HashMap<&str, SessionDelta>, agent: &str) -> Result<()> {
    let mut upsert = tx.prepare_cached(&format!(
        "INSERT INTO sessions (id, project, title, title_rank, title_order, first_timestamp, last_timestamp, entries,
                               sidechain_entries, images, agent, forked_from, git_branch, git_branch_order,
                               first_entry, last_entry)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)
         ON CONFLICT (id) DO UPDATE SET
            project = coalesce(sessions.project, excluded.project),
            forked_from = coalesce(sessions.forked_from, excluded.forked_from),
            title = CASE WHEN {replaces} THEN excluded.title ELSE sessions.title END,
            title_order = CASE WHEN {replaces} THEN excluded.title_order ELSE sessions.title_order END,
            title_rank = CASE WHEN {replaces} THEN excluded.title_rank ELSE sessions.title_rank END,
            git_branch = CASE WHEN {later_branch} THEN excluded.git_branch ELSE sessions.git_branch END,
            git_branch_order = CASE WHEN {later_branch} THEN excluded.git_branch_order
                                    ELSE sessions.git_branch_order END,
            first_timestamp = coalesce(min(sessions.first_timestamp, excluded.first_timestamp),
                                       sessions.first_timestamp, excluded.first_timestamp),
            last_timestamp = coalesce(max(sessions.last_timestamp, excluded.last_timestamp),
                                      sessions.last_timestamp, excluded.last_timestamp),
            first_entry = coalesce(min(sessions.first_entry, excluded.first_entry),
                                   sessions.first_entry, excluded.first_entry),
            last_entry = coalesce(max(sessions.last_entry, excluded.last_entry),
                                  sessions.last_entry, excluded.last_entry),
            entries = sessions.entries + excluded.entries,
            sidechain_entries = sessions.sidechain_entries + excluded.sidechain_entries,
            images = sessions.images + excluded.images",
        // Whether the batch's title replaces the session's: `title_rank::replaces`, in SQL. (SQLite
        // evaluates every assignment against the row as it was, so the order of the assignments is
        // free.)
        // Below `latest` a title from the main transcript wins first: `main(o)` reads an order key's
        // file (`Order::key`: `<at>\x01<file, 16 digits>\x01<line, 12 digits>`) at its fixed place from
        // the end.
        replaces = format!(
            "(excluded.title IS NOT NULL AND (excluded.title_rank > sessions.title_rank
               OR (excluded.title_rank = sessions.title_rank AND (sessions.title_order IS NULL
                   OR CASE WHEN excluded.title_rank >= {latest} THEN excluded.title_order >= sessions.title_order
                           WHEN {main_new} <> {main_old} THEN {main_new}
                           ELSE excluded.title_order < sessions.title_order END))))",
            latest = title_rank::LATEST_WINS_FROM,
            main_new = "(substr(excluded.title_order, -29, 16) = '0000000000000000')",
            main_old = "(substr(sessions.title_order, -29, 16) = '0000000000000000')",
        ),
        // Whether the batch's git branch replaces the session's: its entry is not earlier in order.
        later_branch = "(excluded.git_branch_order IS NOT NULL
            AND (sessions.git_branch_order IS NULL OR excluded.git_branch_order >= sessions.git_branch_order))"
    ))?;
    for (id, d) in sessions {
        if !scrollback_core::codec::refs::is_id(id) {
            // Only a transcript's own name can bring such an id here (a line's is refused as
            // invalid): its invalid lines stay as rows, but no session is listed that no route opens.
            continue;
        }
        let (rank, order, title) = match d.title {
            Some((rank, order, title)) => (rank, Some(order.key()), Some(kept_title(rank, title))),
            None => (0, None, None),
        };
        let (branch_order, branch) = match d.git_branch {
            Some((order, branch)) => (Some(order.key()), Some(branch)),
            None => (None, None),
        };
        upsert.execute(params![
            id,
            d.project,
            title,
            rank,
            order,
            d.first,
            d.last,
            d.entries as i64,
            d.sidechain_entries as i64,
            d.images as i64,
            agent,
            d.forked_from,
            branch,
            branch_order,
            d.first_id,
            d.last_id,
        ])?;
        if d.recount {
            recount_session(tx, id)?;
            keep_branch(tx, id, false)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicU64, Ordering};

    /// Counts the SQLite virtual-machine steps `f` takes on `conn` (deterministic, unlike time).
    fn steps(conn: &Connection, f: impl FnOnce()) -> u64 {
        let count = Arc::new(AtomicU64::new(0));
        let c = count.clone();
        conn.progress_handler(
            100,
            Some(move || {
                c.fetch_add(100, Ordering::Relaxed);
                false
            }),
        )
        .unwrap();
        f();
        conn.progress_handler(100, None::<fn() -> bool>).unwrap();
        count.load(Ordering::Relaxed)
    }

    #[test]
    fn copies_are_marked_in_steps_proportional_to_the_rows_not_their_square() {
        let dir = tempfile::tempdir().unwrap();
        let conn = scrollback_core::db::ConnectionKind::Writer.open(&dir.path().join("index.sqlite3")).unwrap();
        conn.execute_batch(
            "INSERT INTO files (id, path, session_id, dev, inode, fingerprint, fingerprint_len, tail_hash, size,
                                mtime_ns, checkpoint, lines, state, indexed_at)
             VALUES (1, '/t/s.jsonl', 's', 0, 0, '', 0, '', 0, 0, 0, 0, 'live', '');",
        )
        .unwrap();
        let mut per_row = Vec::new();
        for n in [2_000i64, 8_000] {
            conn.execute("DELETE FROM entries", []).unwrap();
            // One session, every line at the same instant, each uuid once but for ten copies.
            conn.execute(
                "WITH RECURSIVE k(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM k WHERE x < ?1)
                 INSERT INTO entries (file_id, session_id, line, offset, length, uuid, stripped, sort_at)
                 SELECT 1, 's', x, x, 1, 'u' || (CASE WHEN x <= 10 THEN 0 ELSE x END), '{}', 't' FROM k",
                [n],
            )
            .unwrap();
            per_row.push(steps(&conn, || mark_copies(&conn).unwrap()) / n as u64);
            let hidden: i64 =
                conn.query_row("SELECT count(*) FROM entries WHERE duplicate = 1", [], |r| r.get(0)).unwrap();
            assert_eq!(hidden, 9, "ten copies of one entry: nine hidden");
        }
        // Four times the rows costs about four times the steps, not sixteen.
        assert!(per_row[1] < 2 * per_row[0] + 50, "steps per row: {per_row:?}");
    }
}
