//! The overview's sums: each line's tool calls and edits (`tool_events`, written with the line), and
//! each session's messages, tool use and response times by hour (`stats_hours`, `tool_hours`,
//! `response_hours`), made again from its rows whenever a batch writes or removes entries of it.
//!
//! A session's sums are derived from its shown entries (copies and hidden ones left out) in
//! conversation order by one walk ([`Walk`]), never added to: whatever the order the lines, copies
//! and rewrites arrived in, the sums are those a fresh index makes. A bulk load makes every
//! session's at its end ([`restat_all`]). Never reads a transcript: the stored lines only.

use std::collections::{BTreeMap, HashMap, VecDeque};

use rusqlite::{Connection, OptionalExtension, params};
use serde_json::Value;

use scrollback_core::db::{RESPONSE_BUCKETS, STATS_PENDING};
use scrollback_core::error::Result;
use scrollback_core::format::{self, Format, Part};

/// One tool call or result of a line, as `tool_events` keeps it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Event {
    /// A call: the tool; a result: `None`.
    tool: Option<String>,
    /// Whether the tool said it failed; `None` for a call whose result is not beside it.
    failed: Option<bool>,
    /// An edit: its file(s), lines added and removed.
    edit: Option<(String, i64, i64)>,
}

/// The calls and results among `parts` (in folds and quoted messages too), in order. A result right
/// after its call (Gemini CLI writes them together) is that call's.
fn events(parts: &[Part], out: &mut Vec<Event>) {
    let mut after_call = false;
    for part in parts {
        match part {
            Part::ToolCall(call) => {
                let edit = (call.lines.is_some() || !call.diff.is_empty()).then(|| {
                    let (added, removed) = call.lines.unwrap_or_else(|| {
                        let count = |op| call.diff.iter().filter(|l| l.op == op).count();
                        (count('+'), count('-'))
                    });
                    (call.subject.clone(), added as i64, removed as i64)
                });
                out.push(Event { tool: Some(call.tool.clone()), failed: None, edit });
                after_call = true;
                continue;
            }
            Part::ToolResult { error, .. } => match out.last_mut() {
                Some(call) if after_call => call.failed = Some(*error),
                _ => out.push(Event { tool: None, failed: Some(*error), edit: None }),
            },
            Part::Group { parts, .. } | Part::Message { parts, .. } => events(parts, out),
            _ => {}
        }
        after_call = false;
    }
}

/// The tool calls and results of the stored line `stripped`, in `format`: what a reading thread
/// finds ahead of the writer. A line that does not parse has none.
pub(crate) fn events_of(format: &dyn Format, stripped: &str) -> Vec<Event> {
    let Ok(line) = serde_json::from_str::<Value>(stripped) else { return Vec::new() };
    let mut found = Vec::new();
    events(&format.parts(&line), &mut found);
    found
}

/// Writes the tool calls and results of the stored line `stripped` (entry `entry_id` of `session`,
/// stamped `timestamp`), in `format`. A line that does not parse has none.
pub(crate) fn record(
    tx: &Connection,
    entry_id: i64,
    session: &str,
    timestamp: Option<&str>,
    format: &dyn Format,
    stripped: &str,
) -> Result<()> {
    record_events(tx, entry_id, session, timestamp, &events_of(format, stripped))
}

/// Writes `found`, the tool calls and results of entry `entry_id` of `session`; an edit is stamped `timestamp`.
pub(crate) fn record_events(
    tx: &Connection,
    entry_id: i64,
    session: &str,
    timestamp: Option<&str>,
    found: &[Event],
) -> Result<()> {
    if found.is_empty() {
        return Ok(());
    }
    let mut insert = tx.prepare_cached(
        "INSERT INTO tool_events (entry_id, ordinal, session_id, tool, failed, path, added, removed, timestamp)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
    )?;
    for (ordinal, e) in found.iter().enumerate() {
        let (path, added, removed) = match &e.edit {
            Some((path, added, removed)) => (Some(path.as_str()), Some(*added), Some(*removed)),
            None => (None, None, None),
        };
        insert.execute(params![
            entry_id,
            ordinal as i64,
            session,
            e.tool,
            e.failed,
            path,
            added,
            removed,
            path.and(timestamp)
        ])?;
    }
    Ok(())
}

/// Removes the tool events of the entries `entries` (an SQL condition on `entries`, with `?1`)
/// selects, before those entries are deleted.
pub(crate) fn drop_events(tx: &Connection, entries: &str, param: &dyn rusqlite::ToSql) -> Result<()> {
    tx.execute(
        &format!(
            "DELETE FROM tool_events WHERE (session_id, entry_id) IN (SELECT session_id, id FROM entries WHERE {entries})"
        ),
        [param],
    )?;
    Ok(())
}

/// Removes a session's sums (it was forgotten), and where its walk stopped.
pub(crate) fn drop_session(tx: &Connection, session: &str) -> Result<()> {
    for table in ["stats_hours", "tool_hours", "response_hours", "stats_walks"] {
        tx.prepare_cached(&format!("DELETE FROM {table} WHERE session_id = ?1"))?.execute([session])?;
    }
    Ok(())
}

/// The UTC hour (`YYYY-MM-DDTHH`) of a timestamp, as SQLite's `strftime` gives it (a timestamp with
/// an offset is moved to UTC); `None` for none, or one that is no time.
fn hour_of(timestamp: Option<&str>) -> Option<(String, jiff::Timestamp)> {
    let t: jiff::Timestamp = timestamp?.parse().ok()?;
    Some((t.strftime("%Y-%m-%dT%H").to_string(), t))
}

/// The bucket of a response time of `seconds`.
fn bucket(seconds: f64) -> i64 {
    RESPONSE_BUCKETS.iter().position(|&b| seconds <= f64::from(b)).unwrap_or(RESPONSE_BUCKETS.len()) as i64
}

/// One session's sums, as its entries are walked in conversation order.
#[derive(Debug, Default)]
struct Walk {
    /// Messages and prompts by hour.
    hours: BTreeMap<String, (i64, i64)>,
    /// Calls and failures by hour and tool.
    tools: BTreeMap<(String, String), (i64, i64)>,
    /// Responses by hour, model and bucket.
    responses: BTreeMap<(String, String, i64), i64>,
    /// Calls waiting for their result: the call's hour and tool.
    waiting: VecDeque<(String, String)>,
    /// The last prompt not answered yet: its hour and time.
    prompt: Option<(String, jiff::Timestamp)>,
    /// Responses whose model no usage line has named yet: their hour and bucket.
    unnamed: BTreeMap<(String, i64), i64>,
    /// Of `unnamed`, those a walk that stopped before this one counted under no model already.
    carried: BTreeMap<(String, i64), i64>,
    /// Carried responses a usage line named since: to be taken from those under no model.
    renamed: BTreeMap<(String, i64), i64>,
}

/// One entry as the walk reads it.
struct Row {
    id: i64,
    kind: Option<String>,
    role: Option<String>,
    timestamp: Option<String>,
    said: bool,
    shown: bool,
    sidechain: bool,
}

impl Walk {
    /// Takes in one entry, with its tool events and the model of its usage line, if any.
    fn add(&mut self, row: &Row, events: &[(Option<String>, Option<bool>)], model: Option<&str>) {
        if row.shown {
            let is = |name: &str| row.kind.as_deref() == Some(name) || row.role.as_deref() == Some(name);
            let (user, assistant) = (is("user"), is("assistant"));
            let at = hour_of(row.timestamp.as_deref());
            let prompt = user && row.said && !row.sidechain;
            if let Some((hour, _)) = &at
                && (user || assistant)
            {
                let h = self.hours.entry(hour.clone()).or_default();
                h.0 += 1;
                h.1 += prompt as i64;
            }
            if prompt {
                self.prompt = at.clone();
                // Calls the person interrupted get no result.
                self.waiting.clear();
            } else if assistant
                && !row.sidechain
                && let (Some((hour, asked)), Some((_, answered))) = (self.prompt.as_ref(), &at)
            {
                let seconds = answered.duration_since(*asked).as_secs_f64();
                if seconds >= 0.0 {
                    *self.unnamed.entry((hour.clone(), bucket(seconds))).or_default() += 1;
                }
                self.prompt = None;
            }
            let hour = at.map(|(h, _)| h);
            for (tool, failed) in events {
                match (tool, &hour) {
                    (Some(tool), Some(hour)) => {
                        let t = self.tools.entry((hour.clone(), tool.clone())).or_default();
                        t.0 += 1;
                        t.1 += (*failed == Some(true)) as i64;
                        if failed.is_none() {
                            self.waiting.push_back((hour.clone(), tool.clone()));
                        }
                    }
                    (Some(_), None) => {}
                    (None, _) => {
                        if let Some(call) = self.waiting.pop_front()
                            && *failed == Some(true)
                        {
                            self.tools.entry(call).or_default().1 += 1;
                        }
                    }
                }
            }
        }
        if let Some(model) = model {
            for ((hour, bucket), n) in std::mem::take(&mut self.unnamed) {
                *self.responses.entry((hour, model.to_owned(), bucket)).or_default() += n;
            }
            for (key, n) in std::mem::take(&mut self.carried) {
                *self.renamed.entry(key).or_default() += n;
            }
        }
    }

    /// What the walk carries from one entry to the next (calls waiting for their result, the
    /// prompt not answered yet, responses not named yet), as `stats_walks.state` keeps it.
    fn state(&self) -> String {
        serde_json::json!({
            "waiting": self.waiting,
            "prompt": self.prompt.as_ref().map(|(hour, at)| (hour, at.to_string())),
            "unnamed": self.unnamed.iter().map(|((hour, bucket), n)| (hour, bucket, n)).collect::<Vec<_>>(),
        })
        .to_string()
    }

    /// A walk that goes on from `state` ([`Walk::state`]) with no sums of its own yet; `None` for a
    /// state it cannot read.
    fn resumed(state: &str) -> Option<Walk> {
        let state: Value = serde_json::from_str(state).ok()?;
        let pair = |v: &Value| -> Option<(String, Value)> {
            let [a, b] = v.as_array()?.as_slice() else { return None };
            Some((a.as_str()?.to_owned(), b.clone()))
        };
        let mut walk = Walk::default();
        for w in state.get("waiting")?.as_array()? {
            let (hour, tool) = pair(w)?;
            walk.waiting.push_back((hour, tool.as_str()?.to_owned()));
        }
        for u in state.get("unnamed")?.as_array()? {
            let [hour, bucket, n] = u.as_array()?.as_slice() else { return None };
            walk.unnamed.insert((hour.as_str()?.to_owned(), bucket.as_i64()?), n.as_i64()?);
        }
        walk.carried = walk.unnamed.clone();
        walk.prompt = match state.get("prompt")? {
            Value::Null => None,
            p => {
                let (hour, at) = pair(p)?;
                Some((hour, at.as_str()?.parse().ok()?))
            }
        };
        Some(walk)
    }

    /// Writes the session's sums (`add`: adds them to the sums it has, else they are its first),
    /// and where the walk stopped: `last`, its last entry, with what it carries on from there.
    fn write(mut self, tx: &Connection, session: &str, last: Option<&Place>, add: bool) -> Result<()> {
        match last {
            Some(place) => {
                tx.prepare_cached(
                    "INSERT OR REPLACE INTO stats_walks (session_id, sort_at, sort_file, line, id, state)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                )?
                .execute(params![
                    session,
                    place.at,
                    place.file,
                    place.line,
                    place.id,
                    self.state()
                ])?;
            }
            None if !add => {
                tx.prepare_cached("DELETE FROM stats_walks WHERE session_id = ?1")?.execute([session])?;
            }
            None => {}
        }
        // Responses no usage line has named by the walk's end are counted under no model (those a
        // stopped walk counted so already, `carried`, not again); a walk that goes on later and
        // names them takes them from there (`renamed`).
        for ((hour, bucket), n) in std::mem::take(&mut self.unnamed) {
            let counted = self.carried.get(&(hour.clone(), bucket)).copied().unwrap_or(0);
            if n > counted {
                *self.responses.entry((hour, String::new(), bucket)).or_default() += n - counted;
            }
        }
        if !self.renamed.is_empty() {
            let mut less = tx.prepare_cached(
                "UPDATE response_hours SET responses = responses - ?4
                 WHERE session_id = ?1 AND hour = ?2 AND model = '' AND bucket = ?3",
            )?;
            for ((hour, bucket), n) in &self.renamed {
                less.execute(params![session, hour, bucket, n])?;
            }
            tx.prepare_cached("DELETE FROM response_hours WHERE session_id = ?1 AND model = '' AND responses <= 0")?
                .execute([session])?;
        }
        let on = |keys: &str, sets: &[&str]| {
            if !add {
                return String::new();
            }
            let sets: Vec<String> = sets.iter().map(|c| format!("{c} = {c} + excluded.{c}")).collect();
            format!(" ON CONFLICT ({keys}) DO UPDATE SET {}", sets.join(", "))
        };
        let mut hours = tx.prepare_cached(&format!(
            "INSERT INTO stats_hours (session_id, hour, messages, prompts) VALUES (?1, ?2, ?3, ?4){}",
            on("session_id, hour", &["messages", "prompts"])
        ))?;
        for (hour, (messages, prompts)) in &self.hours {
            hours.execute(params![session, hour, messages, prompts])?;
        }
        let mut tools = tx.prepare_cached(&format!(
            "INSERT INTO tool_hours (session_id, hour, tool, calls, failures) VALUES (?1, ?2, ?3, ?4, ?5){}",
            on("session_id, hour, tool", &["calls", "failures"])
        ))?;
        for ((hour, tool), (calls, failures)) in &self.tools {
            tools.execute(params![session, hour, tool, calls, failures])?;
        }
        let mut responses = tx.prepare_cached(&format!(
            "INSERT INTO response_hours (session_id, hour, model, bucket, responses) VALUES (?1, ?2, ?3, ?4, ?5){}",
            on("session_id, hour, model, bucket", &["responses"])
        ))?;
        for ((hour, model, bucket), n) in &self.responses {
            responses.execute(params![session, hour, model, bucket, n])?;
        }
        Ok(())
    }
}

/// An entry's place in conversation order, its id last (as the walk orders them).
#[derive(Debug)]
pub(crate) struct Place {
    /// `entries.sort_at`.
    pub at: String,
    /// `entries.sort_file`.
    pub file: i64,
    /// `entries.line`.
    pub line: i64,
    /// `entries.id`.
    pub id: i64,
}

/// The columns of an entry the walk reads, after its session (`?1` is the session, if one).
const ROW: &str = "session_id, id, type, role, timestamp, coalesce(text, '') != '', duplicate = 0 AND invalid IS NULL,
                   is_sidechain";

fn row(r: &rusqlite::Row<'_>) -> rusqlite::Result<(String, Row)> {
    Ok((
        r.get(0)?,
        Row {
            id: r.get(1)?,
            kind: r.get(2)?,
            role: r.get(3)?,
            timestamp: r.get(4)?,
            said: r.get(5)?,
            shown: r.get(6)?,
            sidechain: r.get(7)?,
        },
    ))
}

/// The place of a session's last entry in conversation order (where a walk of it stops), if it has
/// one: one step down its index, so that the walk itself reads no more than its sums need.
fn last_place(tx: &Connection, session: &str) -> Result<Option<Place>> {
    Ok(tx
        .prepare_cached(
            "SELECT sort_at, sort_file, line, id FROM entries WHERE session_id = ?1
             ORDER BY sort_at DESC, sort_file DESC, line DESC, id DESC LIMIT 1",
        )?
        .query_row([session], |r| Ok(Place { at: r.get(0)?, file: r.get(1)?, line: r.get(2)?, id: r.get(3)? }))
        .optional()?)
}

/// Tool events by entry.
type Events = HashMap<i64, Vec<(Option<String>, Option<bool>)>>;

/// The tool events of a session's entries, and the model of each that stands for a response in the
/// ledger: the whole session's (`from`: `None`), or its entries' from id `from` on (a walk that goes
/// on: the ledger's rows are kept in session order, by their key).
fn lookups(tx: &Connection, session: &str, from: Option<i64>) -> Result<(Events, HashMap<i64, String>)> {
    let from_on: [&dyn rusqlite::ToSql; 2] = [&session, &from];
    let (events_sql, models_sql, param): (&str, &str, &[&dyn rusqlite::ToSql]) = match from {
        None => (
            "SELECT entry_id, tool, failed FROM tool_events WHERE session_id = ?1 ORDER BY entry_id, ordinal",
            "SELECT entry_id, model FROM usage WHERE session_id = ?1 AND model IS NOT NULL",
            &from_on[..1],
        ),
        Some(_) => (
            "SELECT entry_id, tool, failed FROM tool_events WHERE session_id = ?1 AND entry_id >= ?2
             ORDER BY entry_id, ordinal",
            "SELECT entry_id, model FROM usage WHERE session_id = ?1 AND entry_id >= ?2 AND model IS NOT NULL",
            &from_on,
        ),
    };
    let mut events: Events = HashMap::new();
    let mut stmt = tx.prepare_cached(events_sql)?;
    let mut rows = stmt.query(param)?;
    while let Some(r) = rows.next()? {
        events.entry(r.get(0)?).or_default().push((r.get(1)?, r.get::<_, Option<bool>>(2)?));
    }
    let mut models = HashMap::new();
    let mut stmt = tx.prepare_cached(models_sql)?;
    let mut rows = stmt.query(param)?;
    while let Some(r) = rows.next()? {
        models.insert(r.get(0)?, r.get(1)?);
    }
    Ok((events, models))
}

/// Makes the sums of `sessions` again from their rows.
pub(crate) fn restat<'a>(tx: &Connection, sessions: impl IntoIterator<Item = &'a str>) -> Result<()> {
    for session in sessions {
        drop_session(tx, session)?;
        let (events, models) = lookups(tx, session, None)?;
        let mut walk = Walk::default();
        let mut stmt = tx.prepare_cached(&format!(
            "SELECT {ROW} FROM entries WHERE session_id = ?1 ORDER BY sort_at, sort_file, line, id"
        ))?;
        let mut rows = stmt.query([session])?;
        while let Some(r) = rows.next()? {
            let (_, row) = row(r)?;
            let none = Vec::new();
            walk.add(&row, events.get(&row.id).unwrap_or(&none), models.get(&row.id).map(String::as_str));
        }
        drop(rows);
        drop(stmt);
        walk.write(tx, session, last_place(tx, session)?.as_ref(), false)?;
    }
    Ok(())
}

/// Brings the sums of `session` up to date after a batch that only added entries to it, the
/// first of them `first_id` (every entry the batch wrote has an id from there on), and changed
/// none it had: the walk goes on from where the last one stopped (`stats_walks`) over the new
/// entries alone, so that a line appended to a long session costs what it costs in a short one.
/// Where it cannot go on (no walk kept, a new entry placed before where it stopped, an entry after
/// it the batch did not write), the session is walked again whole ([`restat`]); both give the
/// sums a fresh index makes.
pub(crate) fn restat_appended(tx: &Connection, session: &str, first_id: i64) -> Result<()> {
    let kept: Option<(Place, String)> = tx
        .prepare_cached("SELECT sort_at, sort_file, line, id, state FROM stats_walks WHERE session_id = ?1")?
        .query_row([session], |r| {
            Ok((Place { at: r.get(0)?, file: r.get(1)?, line: r.get(2)?, id: r.get(3)? }, r.get(4)?))
        })
        .optional()?;
    let Some((stopped, state)) = kept else { return restat(tx, [session]) };
    let Some(mut walk) = Walk::resumed(&state) else { return restat(tx, [session]) };
    let mut stmt = tx.prepare_cached(&format!(
        "SELECT {ROW} FROM entries
         WHERE session_id = ?1 AND (sort_at, sort_file, line, id) > (?2, ?3, ?4, ?5)
         ORDER BY sort_at, sort_file, line, id"
    ))?;
    let rows: Vec<Row> = stmt
        .query_map(params![session, stopped.at, stopped.file, stopped.line, stopped.id], row)?
        .map(|r| r.map(|(_, row)| row))
        .collect::<rusqlite::Result<_>>()?;
    drop(stmt);
    // Every entry after where the walk stopped must be one the batch wrote, and every entry the
    // batch wrote after it: else the order changed under the walk.
    let new: i64 = tx
        .prepare_cached("SELECT count(*) FROM entries NOT INDEXED WHERE id >= ?2 AND session_id = ?1")?
        .query_row(params![session, first_id], |r| r.get(0))?;
    if rows.iter().any(|row| row.id < first_id) || new != rows.len() as i64 {
        return restat(tx, [session]);
    }
    if rows.is_empty() {
        return Ok(());
    }
    let (events, models) = lookups(tx, session, Some(first_id))?;
    for row in &rows {
        let none = Vec::new();
        walk.add(row, events.get(&row.id).unwrap_or(&none), models.get(&row.id).map(String::as_str));
    }
    walk.write(tx, session, last_place(tx, session)?.as_ref(), true)
}

/// Makes every session's sums again: one walk over every entry in conversation order, with each
/// session's tool events and models looked up as the walk reaches it (so memory is a session's,
/// not the index's).
pub(crate) fn restat_all(tx: &Connection) -> Result<()> {
    tx.execute_batch(
        "DELETE FROM stats_hours; DELETE FROM tool_hours; DELETE FROM response_hours; DELETE FROM stats_walks;",
    )?;
    let mut stmt = tx.prepare(&format!(
        "SELECT {ROW} FROM entries INDEXED BY entries_order ORDER BY session_id, sort_at, sort_file, line, id"
    ))?;
    let mut rows = stmt.query([])?;
    let mut current: Option<(String, Walk, Events, HashMap<i64, String>)> = None;
    while let Some(r) = rows.next()? {
        let (session, row) = row(r)?;
        if current.as_ref().is_none_or(|(s, ..)| *s != session) {
            if let Some((s, walk, ..)) = current.take() {
                walk.write(tx, &s, last_place(tx, &s)?.as_ref(), false)?;
            }
            let (events, models) = lookups(tx, &session, None)?;
            current = Some((session, Walk::default(), events, models));
        }
        let none = Vec::new();
        let (_, walk, events, models) = current.as_mut().expect("just set");
        walk.add(&row, events.get(&row.id).unwrap_or(&none), models.get(&row.id).map(String::as_str));
    }
    if let Some((s, walk, ..)) = current.take() {
        walk.write(tx, &s, last_place(tx, &s)?.as_ref(), false)?;
    }
    Ok(())
}

/// Makes the tool events and every sum from the stored lines, if [`STATS_PENDING`] says it must
/// be (an index from before version 13, or rows carried over by a rebuild): the lines with tool
/// text described again, a thousand at a time, in one transaction.
pub(crate) fn backfill(conn: &Connection) -> Result<()> {
    let pending: bool =
        conn.query_row("SELECT EXISTS (SELECT 1 FROM scrollback_meta WHERE key = ?1)", [STATS_PENDING], |r| r.get(0))?;
    if !pending {
        return Ok(());
    }
    let started = std::time::Instant::now();
    let tx = conn.unchecked_transaction()?;
    tx.execute("DELETE FROM tool_events", [])?;
    let mut after = 0i64;
    loop {
        let mut stmt = tx.prepare_cached(
            "SELECT id, session_id, timestamp, agent, stored_line(stripped) FROM entries
             WHERE id > ?1 AND stripped IS NOT NULL AND (tool_text IS NOT NULL OR tools IS NOT NULL)
             ORDER BY id LIMIT 1000",
        )?;
        type Line = (i64, String, Option<String>, String, String);
        let rows: Vec<Line> = stmt
            .query_map([after], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)))?
            .collect::<rusqlite::Result<_>>()?;
        drop(stmt);
        let Some(last) = rows.last() else { break };
        after = last.0;
        for (id, session, timestamp, agent, stripped) in rows {
            let own = format::by_name(&agent).unwrap_or(format::DEFAULT);
            record(&tx, id, &session, timestamp.as_deref(), own, &stripped)?;
        }
    }
    restat_all(&tx)?;
    crate::usage::sum_all(&tx)?;
    tx.execute("DELETE FROM scrollback_meta WHERE key = ?1", [STATS_PENDING])?;
    tx.commit()?;
    tracing::info!(seconds = started.elapsed().as_secs_f64(), "index: the overview's sums made from the stored lines");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(tool: &str, input: &str) -> Part {
        Part::ToolCall(format::parts::tool_call(tool, &serde_json::from_str(input).unwrap()))
    }

    fn result(error: bool) -> Part {
        Part::ToolResult { call: None, text: String::new(), error, label: None, media: Vec::new() }
    }

    #[test]
    fn edits_name_their_file_and_a_result_beside_its_call_is_its_own() {
        let parts = [
            call("Edit", r#"{"file_path":"/w/a.rs","old_string":"a\nb\n","new_string":"a\nc\nd\n"}"#),
            result(true),
            call("Bash", r#"{"command":"ls"}"#),
            Part::Text("and".into()),
            result(false),
        ];
        let mut out = Vec::new();
        events(&parts, &mut out);
        assert_eq!(
            out,
            [
                Event { tool: Some("Edit".into()), failed: Some(true), edit: Some(("/w/a.rs".into(), 2, 1)) },
                Event { tool: Some("Bash".into()), failed: None, edit: None },
                Event { tool: None, failed: Some(false), edit: None },
            ]
        );
    }

    #[test]
    fn buckets_hold_the_times_not_over_them() {
        assert_eq!(bucket(0.0), 0);
        assert_eq!(bucket(1.0), 0);
        assert_eq!(bucket(1.5), 1);
        assert_eq!(bucket(1e9), RESPONSE_BUCKETS.len() as i64, "longer than all");
    }
}
