//! The usage ledger: one row per API response (the `usage` view), made from the `usage_lines` that
//! state it.
//!
//! Every line that states a response's usage ([`Meta::usage`]) is a `usage_lines` row, keyed by the
//! response's identity, with what its entry does not say (the line's session and time are its
//! entry's; a time is kept only where the response states another, and a model by its number in
//! `usage_models`). Which line of a key stands for it is then derived from all of its lines by
//! one rule, `STANDING`, and kept in `usage_standing` (the line's session and place, and how many
//! lines state the response: the facts are the line's, not copied): the line with the most output
//! tokens stands (an agent may write a line per content block of a streamed response, and only the
//! last has the final output count), ties going to the latest. The rule looks at the lines' contents only, never at the order they were indexed
//! in, so the ledger after any sequence of appends, rewrites and deletions is the one a re-index
//! builds. Keys touched by a batch are settled at its end (`settle`); a bulk load settles all at
//! once at its end (`settle_all`). With the ledger, the writer keeps its sums by session, day,
//! agent, model, tier and context size (`usage_sums`), and the same by hour (`usage_hours`, for the
//! overview), for the reports to read: a settle moves the groups its keys were and are in by the
//! rows that came and went, and sums a group again from the ledger only where that cannot tell its
//! first or last time.
//!
//! A format may state a thread's running total instead of each response's counts
//! ([`format::Usage::running`]), and name the model on a line of its own ([`Meta::model`]). The
//! writer keeps each file's last running total (and the model its lines last named) in
//! `usage_state`, and a response's counts are the increase since the file's previous total
//! ([`Tokens::since`]; a total that went down started again). A fork's copies of its parent's lines
//! move that total on but are not recorded: they were counted in the parent.

use std::collections::{BTreeMap, BTreeSet};

use rusqlite::{Connection, OptionalExtension, Statement, params};

use scrollback_core::error::Result;
use scrollback_core::format::{self, FileContext, Meta, Tokens, hidden};

mod whole;
pub(crate) use whole::settle_all;

/// The `scrollback_meta` key that says the ledger must be made from the stored lines (an index
/// migrated from before version 8, or rows carried over by a rebuild).
pub const BACKFILL_PENDING: &str = "pending:v8-usage";

/// Which line of a response stands, as a window's order (the first stands): the most output
/// tokens, then the most input, then the latest, then by session and place (copies, which tie on
/// everything that is counted).
const STANDING: &str = "u.output_tokens DESC, u.input_tokens + u.cache_read_tokens + u.cache_write_tokens DESC,
     coalesce(u.timestamp, e.timestamp) DESC, e.session_id, e.sort_file, e.line, u.ordinal";

/// What the writer keeps of one file between its lines: the model its lines are answered by, and
/// the running total, for a format that states one ([`format::Usage::running`]).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct FileState {
    model: Option<String>,
    running: Option<Tokens>,
}

/// The usage lines of one file's batch, and the keys they touch.
#[derive(Debug)]
pub(crate) struct Recorder {
    file_id: i64,
    agent: &'static str,
    /// `None` until a line needs it (most files never do).
    state: Option<FileState>,
    loaded: Option<FileState>,
    /// The keys whose ledger rows must be derived again.
    pub(crate) touched: BTreeSet<String>,
    /// The numbers of the models the batch's lines named (`usage_models`).
    models: std::collections::HashMap<String, i64>,
}

impl Recorder {
    /// A recorder for the lines of file `file_id`, written by `agent`.
    pub(crate) fn new(file_id: i64, agent: &'static str) -> Recorder {
        Recorder { file_id, agent, state: None, loaded: None, touched: BTreeSet::new(), models: Default::default() }
    }

    /// The number of `model` in `usage_models`, added there if it is new.
    fn model_id(&mut self, tx: &Connection, model: &str) -> Result<i64> {
        if let Some(&id) = self.models.get(model) {
            return Ok(id);
        }
        tx.prepare_cached("INSERT INTO usage_models (name) VALUES (?1) ON CONFLICT (name) DO NOTHING")?
            .execute([model])?;
        let id = tx.prepare_cached("SELECT id FROM usage_models WHERE name = ?1")?.query_row([model], |r| r.get(0))?;
        self.models.insert(model.to_owned(), id);
        Ok(id)
    }

    fn state(&mut self, tx: &Connection) -> Result<&mut FileState> {
        if self.state.is_none() {
            let found = tx
                .prepare_cached("SELECT model, running FROM usage_state WHERE file_id = ?1")?
                .query_row([self.file_id], |r| Ok((r.get::<_, Option<String>>(0)?, r.get::<_, Option<String>>(1)?)))
                .optional()?;
            let state = found
                .map(|(model, running)| FileState { model, running: running.as_deref().and_then(parse_running) })
                .unwrap_or_default();
            self.loaded = Some(state.clone());
            self.state = Some(state);
        }
        Ok(self.state.as_mut().expect("just loaded"))
    }

    /// Records the usage `meta` states, of entry `entry_id` stamped `timestamp` (its session is
    /// its entry's), hidden for `hidden` if it is.
    pub(crate) fn record(
        &mut self,
        tx: &Connection,
        entry_id: i64,
        timestamp: Option<&str>,
        meta: &Meta,
        hidden: Option<&str>,
    ) -> Result<()> {
        if meta.usage.is_empty() && meta.model.is_none() {
            return Ok(());
        }
        if let Some(model) = &meta.model {
            self.state(tx)?.model = Some(model.clone());
        }
        let copy = hidden == Some(hidden::FORK);
        let mut insert = tx.prepare_cached(
            "INSERT INTO usage_lines (entry_id, ordinal, key, agent, model, request_id, timestamp, tier,
                                      input_tokens, output_tokens, cache_read_tokens, cache_write_tokens,
                                      cache_write_1h_tokens, reasoning_tokens)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
        )?;
        for (ordinal, usage) in meta.usage.iter().enumerate() {
            let mut tokens = usage.tokens;
            let mut model = usage.model.clone();
            if usage.running.is_some() || model.is_none() {
                let state = self.state(tx)?;
                if let Some(running) = usage.running {
                    tokens = state.running.and_then(|before| running.since(&before)).unwrap_or(running);
                    state.running = Some(running);
                }
                if model.is_none() {
                    model.clone_from(&state.model);
                }
            }
            let tokens = tokens.clamped();
            if copy || tokens.total() == 0 {
                continue;
            }
            let model = match &model {
                Some(name) => Some(self.model_id(tx, name)?),
                None => None,
            };
            // (The entry's own time is read from the entry.)
            let own_time = usage.timestamp.as_deref().filter(|t| Some(*t) != timestamp);
            insert.execute(params![
                entry_id,
                ordinal as i64,
                usage.key,
                self.agent,
                model,
                usage.request_id,
                own_time,
                usage.tier,
                tokens.input as i64,
                tokens.output as i64,
                tokens.cache_read as i64,
                tokens.cache_write as i64,
                tokens.cache_write_1h as i64,
                tokens.reasoning as i64,
            ])?;
            self.touched.insert(usage.key.clone());
        }
        Ok(())
    }

    /// Saves the file's state if it changed, and settles the touched keys unless `bulk` (a bulk
    /// load settles every key at its end).
    pub(crate) fn finish(self, tx: &Connection, bulk: bool) -> Result<()> {
        if let Some(state) = &self.state
            && self.loaded.as_ref() != Some(state)
        {
            tx.prepare_cached("INSERT OR REPLACE INTO usage_state (file_id, model, running) VALUES (?1, ?2, ?3)")?
                .execute(params![self.file_id, state.model, state.running.map(|t| running_text(&t))])?;
        }
        if !bulk {
            settle(tx, &self.touched)?;
        }
        Ok(())
    }
}

/// A running total as `usage_state.running` keeps it.
fn running_text(t: &Tokens) -> String {
    format!("{}/{}/{}/{}/{}/{}", t.input, t.output, t.cache_read, t.cache_write, t.cache_write_1h, t.reasoning)
}

fn parse_running(s: &str) -> Option<Tokens> {
    let mut n = s.split('/').map(|p| p.parse::<u64>().ok());
    let mut next = || n.next().flatten();
    Some(Tokens {
        input: next()?,
        output: next()?,
        cache_read: next()?,
        cache_write: next()?,
        cache_write_1h: next()?,
        reasoning: next()?,
    })
}

/// The statement that picks the standing line of the keys `filter` selects.
fn derive(filter: &str) -> String {
    format!(
        "INSERT INTO usage_standing (session_id, entry_id, ordinal, lines)
         SELECT session_id, entry_id, ordinal, lines
         FROM (SELECT e.session_id, u.entry_id, u.ordinal, row_number() OVER (PARTITION BY u.key ORDER BY {STANDING}) AS standing,
                      count(*) OVER (PARTITION BY u.key) AS lines
               FROM usage_lines u JOIN entries e ON e.id = u.entry_id {filter})
         WHERE standing = 1"
    )
}

/// The ledger row of a key as its sums count it: `None` when it has none.
fn ledger_row(tx: &Connection, key: &str) -> Result<Option<Line>> {
    let mut counted = tx.prepare_cached(&format!(
        "SELECT session_id, agent, model, tier, timestamp, input_tokens, output_tokens, cache_read_tokens,
                cache_write_tokens, cache_write_1h_tokens, reasoning_tokens, day, {hour}
         FROM usage u WHERE u.key = ?1",
        hour = hour_of("u.timestamp"),
    ))?;
    Ok(counted
        .query_row([key], |r| {
            Ok(Line {
                session: r.get(0)?,
                agent: r.get(1)?,
                model: r.get(2)?,
                timestamp: r.get(4)?,
                tier: r.get(3)?,
                tokens: [r.get(5)?, r.get(6)?, r.get(7)?, r.get(8)?, r.get(9)?, r.get(10)?],
                entry_id: 0,
                ordinal: 0,
                day: r.get(11)?,
                hour: r.get(12)?,
            })
        })
        .optional()?)
}

/// Picks the standing line of `keys` again from their lines (a key with no line left has none),
/// and moves the sums its ledger row was and is in by the difference: a response added to a
/// session's day costs its own rows, however many the day holds. A group whose first or last time
/// left with a row it cannot tell again is summed again from the ledger.
pub(crate) fn settle(tx: &Connection, keys: &BTreeSet<String>) -> Result<()> {
    settle_from(tx, keys, &BTreeMap::new())
}

/// [`settle`], where `known` holds the ledger rows some keys had before lines of theirs were
/// dropped (their standing lines may be among them: [`drop_lines`]).
fn settle_from(tx: &Connection, keys: &BTreeSet<String>, known: &BTreeMap<String, Option<Line>>) -> Result<()> {
    if keys.is_empty() {
        return Ok(());
    }
    let mut delete = tx.prepare_cached(
        "DELETE FROM usage_standing
         WHERE (session_id, entry_id, ordinal) IN
               (SELECT e.session_id, u.entry_id, u.ordinal FROM usage_lines u JOIN entries e ON e.id = u.entry_id
                WHERE u.key = ?1)",
    )?;
    let mut insert = tx.prepare_cached(&derive("WHERE u.key = ?1"))?;
    let mut moves = Moves::default();
    for key in keys {
        let before = match known.get(key) {
            Some(before) => before.clone(),
            None => ledger_row(tx, key)?,
        };
        delete.execute([key])?;
        insert.execute([key])?;
        let after = ledger_row(tx, key)?;
        if before.as_ref().map(Line::counted) != after.as_ref().map(Line::counted) {
            if let Some(line) = &before {
                moves.add(line, -1);
            }
            if let Some(line) = &after {
                moves.add(line, 1);
            }
        }
    }
    moves.apply(tx)
}

/// A group of `usage_sums` or `usage_hours`: session, day or hour, agent, model, tier, and the
/// context size the input was over.
type Group = (String, Option<String>, String, Option<String>, Option<String>, i64);

/// How a group's sums move: responses and tokens added (or taken), and the times of the rows that
/// came and went.
#[derive(Default)]
struct Move {
    responses: i64,
    tokens: [i64; 6],
    came: Vec<String>,
    went: Vec<String>,
}

/// The moves of a settle's groups, by day and by hour.
#[derive(Default)]
struct Moves {
    days: std::collections::BTreeMap<Group, Move>,
    hours: std::collections::BTreeMap<Group, Move>,
}

impl Moves {
    /// Adds (`sign` 1) or takes (-1) the ledger row `line` to or from its groups.
    fn add(&mut self, line: &Line, sign: i64) {
        let over = line.over();
        let group = |at: &Option<String>| {
            (line.session.clone(), at.clone(), line.agent.clone(), line.model.clone(), line.tier.clone(), over)
        };
        for (map, at) in [(&mut self.days, &line.day), (&mut self.hours, &line.hour)] {
            let m = map.entry(group(at)).or_default();
            m.responses += sign;
            for (sum, n) in m.tokens.iter_mut().zip(line.tokens) {
                *sum = sum.saturating_add(sign.saturating_mul(n));
            }
            if let Some(t) = &line.timestamp {
                if sign > 0 { m.came.push(t.clone()) } else { m.went.push(t.clone()) }
            }
        }
    }

    fn apply(self, tx: &Connection) -> Result<()> {
        let over = format::usage::over_sql(&format::usage::CONTEXT_SIZES);
        let of_group = "session_id = ?1 AND {at} IS ?2 AND agent = ?3 AND model IS ?4 AND tier IS ?5";
        for (table, at, moves) in [("usage_sums", "day", &self.days), ("usage_hours", "hour", &self.hours)] {
            let by_day = table == "usage_sums";
            let filter = of_group.replace("{at}", at);
            let mut find = tx.prepare_cached(&format!(
                "SELECT rowid, responses, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens,
                        cache_write_1h_tokens, reasoning_tokens{times}
                 FROM {table} WHERE {filter} AND over = ?6",
                times = if by_day { ", first_timestamp, last_timestamp" } else { "" },
            ))?;
            let mut update = tx.prepare_cached(&format!(
                "UPDATE {table} SET responses = ?2, input_tokens = ?3, output_tokens = ?4, cache_read_tokens = ?5,
                        cache_write_tokens = ?6, cache_write_1h_tokens = ?7, reasoning_tokens = ?8{times}
                 WHERE rowid = ?1",
                times = if by_day { ", first_timestamp = ?9, last_timestamp = ?10" } else { "" },
            ))?;
            let mut remove = tx.prepare_cached(&format!("DELETE FROM {table} WHERE rowid = ?1"))?;
            let mut clear = tx.prepare_cached(&format!("DELETE FROM {table} WHERE {filter} AND over = ?6"))?;
            let u_filter = |at: &str| {
                format!(
                    "WHERE u.session_id = ?1 AND {at} AND u.agent = ?3 AND u.model IS ?4 AND u.tier IS ?5 AND {over} = ?6"
                )
            };
            // An hour's rows are of its day (its first ten characters), found by the session's index.
            let (mut resum, mut resum_unhoured) = if by_day {
                (tx.prepare_cached(&sums(&u_filter("u.day IS ?2")))?, None)
            } else {
                let hour = hour_of("u.timestamp");
                (
                    tx.prepare_cached(&hour_sums(&u_filter(&format!("u.day = substr(?2, 1, 10) AND {hour} = ?2"))))?,
                    Some(tx.prepare_cached(&hour_sums(&u_filter(&format!("?2 IS NULL AND {hour} IS NULL"))))?),
                )
            };
            let mut add = tx.prepare_cached(&insert_group_sql(by_day))?;
            for ((session, at, agent, model, tier, over), m) in moves {
                let key = params![session, at, agent, model, tier, over];
                // (rowid, responses, tokens, first, last)
                type Found = (i64, i64, [i64; 6], Option<String>, Option<String>);
                let found: Option<Found> = find
                    .query_row(key, |r| {
                        Ok((
                            r.get(0)?,
                            r.get(1)?,
                            [r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?, r.get(6)?, r.get(7)?],
                            if by_day { r.get(8)? } else { None },
                            if by_day { r.get(9)? } else { None },
                        ))
                    })
                    .optional()?;
                let Some((rowid, responses, tokens, first, last)) = found else {
                    if m.went.is_empty() && m.responses > 0 && m.tokens.iter().all(|t| *t >= 0) {
                        // A group new with this settle: its rows are the ones that came.
                        let times = by_day.then(|| (m.came.iter().min(), m.came.iter().max()));
                        insert_group(&mut add, key, m.responses, m.tokens, times)?;
                    } else {
                        clear.execute(key)?;
                        match (&mut resum_unhoured, at) {
                            (Some(unhoured), None) => unhoured.execute(key)?,
                            _ => resum.execute(key)?,
                        };
                    }
                    continue;
                };
                let moved = m.moved(responses, tokens, first, last, by_day);
                match moved {
                    Some((0, ..)) if rowid != 0 => {
                        remove.execute([rowid])?;
                    }
                    Some((0, ..)) => {}
                    Some((responses, tokens, first, last)) if rowid != 0 => {
                        let t = tokens;
                        if by_day {
                            update
                                .execute(params![rowid, responses, t[0], t[1], t[2], t[3], t[4], t[5], first, last])?;
                        } else {
                            update.execute(params![rowid, responses, t[0], t[1], t[2], t[3], t[4], t[5]])?;
                        }
                    }
                    // A group that cannot be moved: summed from the ledger.
                    _ => {
                        clear.execute(key)?;
                        match (&mut resum_unhoured, at) {
                            (Some(unhoured), None) => unhoured.execute(key)?,
                            _ => resum.execute(key)?,
                        };
                    }
                }
            }
        }
        Ok(())
    }
}

impl Move {
    /// An existing group's sums after this move, from `responses`, `tokens` and (by day) its first
    /// and last times; `None` when the move cannot tell them: a count that would go below zero or
    /// past the largest integer, or a first or last time that left with nothing to stand for it.
    #[allow(clippy::type_complexity)]
    fn moved(
        &self,
        responses: i64,
        tokens: [i64; 6],
        first: Option<String>,
        last: Option<String>,
        by_day: bool,
    ) -> Option<(i64, [i64; 6], Option<String>, Option<String>)> {
        if responses == 0 {
            return None;
        }
        let responses = responses.checked_add(self.responses).filter(|n| *n >= 0)?;
        if responses == 0 {
            return Some((0, [0; 6], None, None));
        }
        let mut sums = tokens;
        for (sum, n) in sums.iter_mut().zip(self.tokens) {
            *sum = sum.checked_add(n).filter(|s| *s >= 0)?;
        }
        if !by_day {
            return Some((responses, sums, None, None));
        }
        let earliest = self.came.iter().min();
        let latest = self.came.iter().max();
        // A time that left as the group's first (or last) is told again only by one that came at
        // or before (after) it: every other row of the group is at or after (before) it.
        let first = match &first {
            Some(f) if self.went.contains(f) => Some(earliest.filter(|e| *e <= f)?.clone()),
            f => f.iter().chain(earliest).min().cloned(),
        };
        let last = match &last {
            Some(l) if self.went.contains(l) => Some(latest.filter(|e| *e >= l)?.clone()),
            l => l.iter().chain(latest).max().cloned(),
        };
        Some((responses, sums, first, last))
    }
}

/// The UTC hour (`YYYY-MM-DDTHH`) of the time `time` (an SQL expression), in SQL: NULL for a time
/// that does not parse (an hour 25, a word, a seven-digit year), which is then in no hour's figure.
fn hour_of(time: &str) -> String {
    format!("strftime('%Y-%m-%dT%H', {time})")
}

/// One line of a response as the rule compares them, with what its ledger row takes from it.
#[derive(Clone)]
struct Line {
    session: String,
    agent: String,
    model: Option<String>,
    timestamp: Option<String>,
    tier: Option<String>,
    tokens: [i64; 6],
    entry_id: i64,
    ordinal: i64,
    /// The UTC day and hour of `timestamp`, as SQLite reads it (`usage.day`, [`hour_of`]).
    day: Option<String>,
    hour: Option<String>,
}

impl Line {
    /// What the ledger's sums take from a row: its groups, time and counts.
    #[allow(clippy::type_complexity)]
    fn counted(&self) -> (&str, &str, Option<&str>, Option<&str>, Option<&str>, Option<&str>, Option<&str>, [i64; 6]) {
        (
            &self.session,
            &self.agent,
            self.model.as_deref(),
            self.tier.as_deref(),
            self.timestamp.as_deref(),
            self.day.as_deref(),
            self.hour.as_deref(),
            self.tokens,
        )
    }

    /// The largest of `format::usage::CONTEXT_SIZES` its input was over, else 0 (`over_sql`).
    fn over(&self) -> i64 {
        let t = &self.tokens;
        let context = i128::from(t[0]) + i128::from(t[2]) + i128::from(t[3]);
        format::usage::CONTEXT_SIZES.iter().rev().find(|&&n| context > i128::from(n)).map_or(0, |&n| n as i64)
    }

    /// The line of a row of [`settle_all`]'s query (its columns after the key).
    fn from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Line> {
        Ok(Line {
            session: r.get(1)?,
            agent: r.get(2)?,
            model: r.get(3)?,
            timestamp: r.get(4)?,
            tier: r.get(5)?,
            tokens: [r.get(6)?, r.get(7)?, r.get(8)?, r.get(9)?, r.get(10)?, r.get(11)?],
            entry_id: r.get(12)?,
            ordinal: r.get(13)?,
            day: r.get(14)?,
            hour: r.get(15)?,
        })
    }

    /// [`STANDING`] as a comparison, up to the line's place: `Less` when `self` stands before
    /// `other`.
    fn standing(&self, other: &Line) -> std::cmp::Ordering {
        let ctx = |l: &Line| l.tokens[0].saturating_add(l.tokens[2]).saturating_add(l.tokens[3]);
        other.tokens[1]
            .cmp(&self.tokens[1])
            .then(ctx(other).cmp(&ctx(self)))
            // (NULL is the least in SQLite as `None` is in Rust: last when descending.)
            .then(other.timestamp.cmp(&self.timestamp))
            .then(self.session.cmp(&other.session))
    }
}

/// The statement that adds a group's row to `usage_sums` (`by_day`, with its first and last times)
/// or `usage_hours`: the group's six columns, then responses and the six token sums ([`insert_group`]).
fn insert_group_sql(by_day: bool) -> String {
    let (table, at, times, values) = if by_day {
        ("usage_sums", "day", ", first_timestamp, last_timestamp", ", ?14, ?15")
    } else {
        ("usage_hours", "hour", "", "")
    };
    format!(
        "INSERT INTO {table} (session_id, {at}, agent, model, tier, over, responses, input_tokens, output_tokens,
                              cache_read_tokens, cache_write_tokens, cache_write_1h_tokens, reasoning_tokens{times})
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13{values})"
    )
}

/// Adds a group's row with `insert` ([`insert_group_sql`]): `group` its six columns, and by day
/// `times`, its first and last times.
fn insert_group(
    insert: &mut Statement<'_>,
    group: &[&dyn rusqlite::ToSql],
    responses: i64,
    tokens: [i64; 6],
    times: Option<(Option<&String>, Option<&String>)>,
) -> Result<()> {
    let mut values: Vec<&dyn rusqlite::ToSql> = group.to_vec();
    values.push(&responses);
    values.extend(tokens.iter().map(|t| t as &dyn rusqlite::ToSql));
    if let Some((first, last)) = &times {
        values.extend([first as &dyn rusqlite::ToSql, last]);
    }
    insert.execute(&values[..])?;
    Ok(())
}

/// The statement that sums the ledger rows `filter` selects into `usage_sums`.
fn sums(filter: &str) -> String {
    format!(
        "INSERT INTO usage_sums (session_id, day, agent, model, tier, over, responses, input_tokens, output_tokens,
                                 cache_read_tokens, cache_write_tokens, cache_write_1h_tokens, reasoning_tokens,
                                 first_timestamp, last_timestamp)
         SELECT u.session_id, u.day, u.agent, u.model, u.tier, {over}, count(*), {tokens}, min(u.timestamp), max(u.timestamp)
         FROM usage u {filter}
         GROUP BY 1, 2, 3, 4, 5, 6",
        over = format::usage::over_sql(&format::usage::CONTEXT_SIZES),
        tokens = format::usage::token_sums_sql("u"),
    )
}

/// The statement that sums the ledger rows `filter` selects into `usage_hours`: as [`sums`], by
/// UTC hour.
fn hour_sums(filter: &str) -> String {
    format!(
        "INSERT INTO usage_hours (session_id, hour, agent, model, tier, over, responses, input_tokens, output_tokens,
                                  cache_read_tokens, cache_write_tokens, cache_write_1h_tokens, reasoning_tokens)
         SELECT u.session_id, {hour}, u.agent,
                u.model, u.tier, {over}, count(*), {tokens}
         FROM usage u {filter}
         GROUP BY 1, 2, 3, 4, 5, 6",
        hour = hour_of("u.timestamp"),
        over = format::usage::over_sql(&format::usage::CONTEXT_SIZES),
        tokens = format::usage::token_sums_sql("u"),
    )
}

/// Sums the whole ledger again, with today's context sizes.
pub(crate) fn sum_all(tx: &Connection) -> Result<()> {
    tx.execute("DELETE FROM usage_sums", [])?;
    tx.execute(&sums(""), [])?;
    tx.execute("DELETE FROM usage_hours", [])?;
    tx.execute(&hour_sums(""), [])?;
    tx.execute(
        "INSERT OR REPLACE INTO scrollback_meta (key, value) VALUES (?1, ?2)",
        [scrollback_core::db::USAGE_SUMS_SIZES, &format::usage::context_sizes_text()],
    )?;
    Ok(())
}

/// Sums the ledger again if its sums were made with other context sizes than this build's (or
/// never made): at open, before the writer writes.
pub(crate) fn check_sums(conn: &Connection) -> Result<()> {
    let made: Option<String> = conn
        .query_row("SELECT value FROM scrollback_meta WHERE key = ?1", [scrollback_core::db::USAGE_SUMS_SIZES], |r| {
            r.get(0)
        })
        .optional()?;
    if made.as_deref() != Some(format::usage::context_sizes_text().as_str()) {
        let tx = conn.unchecked_transaction()?;
        sum_all(&tx)?;
        tx.commit()?;
    }
    Ok(())
}

/// The responses whose lines [`drop_lines`] removed, with the ledger rows they had: to settle
/// once the entries are gone.
#[derive(Default)]
pub(crate) struct Dropped {
    keys: BTreeSet<String>,
    before: BTreeMap<String, Option<Line>>,
}

impl Dropped {
    /// Settles the responses ([`settle`]).
    pub(crate) fn settle(self, tx: &Connection) -> Result<()> {
        settle_from(tx, &self.keys, &self.before)
    }
}

/// Removes the usage lines of the entries `entries` (an SQL condition on `entries`, with `?1`)
/// selects, and the ledger rows some of them stood for, before those entries are deleted; returns
/// the responses to settle once they are, with their rows before (unless `bulk`: a bulk load
/// settles every response at its end).
pub(crate) fn drop_lines(tx: &Connection, entries: &str, param: &dyn rusqlite::ToSql, bulk: bool) -> Result<Dropped> {
    let select = format!("SELECT id FROM entries WHERE {entries}");
    let keys: BTreeSet<String> = tx
        .prepare(&format!("SELECT DISTINCT key FROM usage_lines WHERE entry_id IN ({select})"))?
        .query_map([param], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    if keys.is_empty() {
        return Ok(Dropped::default());
    }
    let mut before = BTreeMap::new();
    if !bulk {
        for key in &keys {
            before.insert(key.clone(), ledger_row(tx, key)?);
        }
    }
    tx.execute(
        &format!("DELETE FROM usage_standing WHERE (session_id, entry_id) IN (SELECT session_id, id FROM entries WHERE {entries})"),
        [param],
    )?;
    tx.execute(&format!("DELETE FROM usage_lines WHERE entry_id IN ({select})"), [param])?;
    Ok(Dropped { keys, before })
}

/// The SQL condition on `stripped` that keeps the stored lines that may state usage: those with any
/// of every format's usage markers ([`format::Format::usage_markers`]). One condition for every
/// file: a marker of one format in another's line costs a describe, and nothing else.
fn may_state_usage() -> String {
    let mut markers: Vec<&str> = format::FORMATS.iter().flat_map(|f| f.usage_markers().iter().copied()).collect();
    markers.sort_unstable();
    markers.dedup();
    if markers.is_empty() {
        return "0".to_owned();
    }
    let likes: Vec<String> =
        markers.iter().map(|m| format!("stored_line(stripped) LIKE '%{}%'", m.replace('\'', "''"))).collect();
    format!("({})", likes.join(" OR "))
}

/// Makes the ledger from the stored lines, if [`BACKFILL_PENDING`] says it must be: each file's
/// lines described again in order, with the hidden marks the index already holds. In one
/// transaction.
pub(crate) fn backfill(conn: &Connection) -> Result<()> {
    let pending: bool =
        conn.query_row("SELECT EXISTS (SELECT 1 FROM scrollback_meta WHERE key = ?1)", [BACKFILL_PENDING], |r| {
            r.get(0)
        })?;
    if !pending {
        return Ok(());
    }
    let started = std::time::Instant::now();
    let tx = conn.unchecked_transaction()?;
    tx.execute_batch("DELETE FROM usage_lines; DELETE FROM usage_state;")?;
    let files: Vec<(i64, String, String)> = tx
        .prepare("SELECT id, session_id, agent FROM files ORDER BY id")?
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
        .collect::<rusqlite::Result<_>>()?;
    let mut lines = 0u64;
    let usage_filter = may_state_usage();
    for (file_id, session, agent) in files {
        let Some(format) = format::by_name(&agent) else { continue };
        let context = FileContext { session: session.clone(), ..FileContext::default() };
        let mut recorder = Recorder::new(file_id, format.name());
        // (id, line, stored line, timestamp, hidden)
        type Row = (i64, i64, String, Option<String>, Option<String>);
        let rows: Vec<Row> = tx
            .prepare(&format!(
                "SELECT id, line, stored_line(stripped), timestamp, hidden FROM entries
                 WHERE file_id = ?1 AND stripped IS NOT NULL AND {usage_filter}
                 ORDER BY offset"
            ))?
            .query_map([file_id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)))?
            .collect::<rusqlite::Result<_>>()?;
        for (id, line, stripped, timestamp, hidden) in rows {
            let Ok(meta) = format.describe(&stripped, line as u64, &context) else { continue };
            recorder.record(&tx, id, timestamp.as_deref(), &meta, hidden.as_deref())?;
            lines += 1;
        }
        recorder.finish(&tx, true)?;
    }
    settle_all(&tx)?;
    tx.execute("DELETE FROM scrollback_meta WHERE key = ?1", [BACKFILL_PENDING])?;
    tx.commit()?;
    tracing::info!(lines, seconds = started.elapsed().as_secs_f64(), "usage ledger made from the stored lines");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Ledger rows with counts near the 64-bit maximum (an index written before counts were
    /// clamped, or rows edited by hand): summing them must not fail the writer's transaction.
    #[test]
    fn sums_of_counts_near_the_64_bit_maximum_saturate_instead_of_failing() {
        let dir = tempfile::tempdir().unwrap();
        let conn = scrollback_core::db::ConnectionKind::Writer.open(&dir.path().join("index.sqlite3")).unwrap();
        conn.execute_batch(
            "INSERT INTO files (id, path, session_id, dev, inode, fingerprint, fingerprint_len, tail_hash, size, mtime_ns,
                                checkpoint, lines, state, indexed_at)
             VALUES (1, '/t/s.jsonl', 's', 1, 1, '', 0, '', 20, 0, 20, 2, 'live', '2026-03-01T10:00:02Z');
             INSERT INTO entries (id, file_id, session_id, line, offset, length, timestamp)
             VALUES (1, 1, 's', 1, 0, 10, '2026-03-01T10:00:00Z'), (2, 1, 's', 2, 10, 10, '2026-03-01T10:00:01Z');
             INSERT INTO usage_lines (entry_id, ordinal, key, agent, input_tokens, output_tokens,
                                      cache_read_tokens, cache_write_tokens, cache_write_1h_tokens, reasoning_tokens)
             VALUES (1, 0, 'k1', 'claude', 9223372036854775807, 5, 0, 0, 0, 0),
                    (2, 0, 'k2', 'claude', 9223372036854775807, 7, 0, 0, 0, 0);
             INSERT INTO usage_standing (session_id, entry_id, ordinal, lines) VALUES ('s', 1, 0, 1), ('s', 2, 0, 1);",
        )
        .unwrap();
        sum_all(&conn).unwrap();
        let (input, output): (i64, i64) = conn
            .query_row("SELECT input_tokens, output_tokens FROM usage_sums", [], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap();
        assert_eq!((input, output), (i64::MAX, 12), "saturated, and exact below it");
    }
}
