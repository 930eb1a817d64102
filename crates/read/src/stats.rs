//! The overview (`GET /api/stats`, `scrollback stats`): sessions, messages, tokens and cost per day,
//! activity by weekday and hour, the top projects, agents and models, tool use with failure rates,
//! response times per model, the files edited most recently, and the longest and costliest
//! sessions, between two days of a time zone of whole hours, for a project and an agent.
//!
//! Every figure is a small `GROUP BY` over the sums the writer keeps by session and UTC hour
//! (`stats_hours`, `tool_hours`, `response_hours`, `usage_hours`), or an ordered walk of an index
//! (`tool_events_edits`); never the entries, never a transcript. Cost is priced here as the usage
//! report prices it ([`crate::usage`]). A figure with no hour (a line without a timestamp) is in none.

use std::collections::BTreeMap;

use jiff::civil::Date;
use rusqlite::{Connection, OptionalExtension, params};
use serde::Serialize;

use crate::history::{first_said, shown_title};
use crate::prices::Prices;
use crate::usage::{cost, summed_over};
use scrollback_core::db::RESPONSE_BUCKETS;
use scrollback_core::error::{Error, Result};
use scrollback_core::format::{Tokens, usage};

/// How many of each list the overview holds (projects, agents, models, edits, sessions) unless
/// its filter asks for another number ([`Filter::limit`]).
pub const TOP: usize = 10;

/// The most of each list a filter may ask for.
pub const MAX_LIMIT: usize = 1000;

/// Which activity the overview covers.
#[derive(Debug, Clone, Copy, Default)]
pub struct Filter<'a> {
    /// From this day (`YYYY-MM-DD`, in the time zone `tz_hours`) on.
    pub since: Option<&'a str>,
    /// Up to this day, inclusive.
    pub until: Option<&'a str>,
    /// The time zone's offset from UTC, in whole hours (-12 to 14): days and hours are its.
    pub tz_hours: i32,
    /// Only this project's sessions.
    pub project: Option<&'a str>,
    /// Only this agent's sessions.
    pub agent: Option<&'a str>,
    /// How many of each list (1 to [`MAX_LIMIT`]); [`TOP`] when not given.
    pub limit: Option<usize>,
}

/// The filter as the overview applied it.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Applied {
    /// First day, if any.
    pub since: Option<String>,
    /// Last day, if any.
    pub until: Option<String>,
    /// Offset from UTC in hours.
    pub tz_hours: i32,
    /// Project, if any.
    pub project: Option<String>,
    /// Agent, if any.
    pub agent: Option<String>,
}

/// Tokens and cost of some responses.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Spend {
    /// API responses.
    pub responses: u64,
    /// Input, output, cache read and cache write tokens.
    pub tokens: u64,
    /// Output tokens.
    pub output_tokens: u64,
    /// USD, of the priced responses.
    pub cost: f64,
    /// Responses whose model or tier has no price (left out of `cost`).
    pub unpriced_responses: u64,
}

impl Spend {
    fn add(&mut self, responses: u64, tokens: &Tokens, cost: Option<f64>) {
        self.responses += responses;
        self.tokens += tokens.total();
        self.output_tokens += tokens.output;
        match cost {
            Some(c) => self.cost += c,
            None => self.unpriced_responses += responses,
        }
    }
}

/// The figures of one day.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Day {
    /// `YYYY-MM-DD`, in the filter's time zone.
    pub day: String,
    /// Sessions with a message that day.
    pub sessions: u64,
    /// Messages (the `messages` view's rows).
    pub messages: u64,
    /// Of them, a person's prompts.
    pub prompts: u64,
    /// Tokens and cost.
    #[serde(flatten)]
    pub spend: Spend,
}

/// A project, an agent or a model, with its figures.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Top {
    /// Its name (`None`: sessions without a project, responses without a model).
    pub name: Option<String>,
    /// Sessions with a message (not counted for models).
    pub sessions: u64,
    /// Messages (not counted for models).
    pub messages: u64,
    /// Tokens and cost.
    #[serde(flatten)]
    pub spend: Spend,
}

/// One tool's calls.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolUse {
    /// The tool's name as the agent called it.
    pub tool: String,
    /// Calls.
    pub calls: u64,
    /// Of them, those whose result said they failed.
    pub failures: u64,
    /// `failures / calls`.
    pub failure_rate: f64,
}

/// One model's response times, from the histogram: each percentile is the upper bound of the
/// bucket it falls in (`null` past the last bound).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ResponseTime {
    /// The model (`None`: no usage line named one).
    pub model: Option<String>,
    /// Prompts answered.
    pub responses: u64,
    /// Median, seconds.
    pub p50: Option<u32>,
    /// 90th percentile, seconds.
    pub p90: Option<u32>,
    /// 99th percentile, seconds.
    pub p99: Option<u32>,
    /// Responses per bucket of `bucketSeconds`, and one more: longer than all.
    pub histogram: Vec<u64>,
}

/// A file edit.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Edit {
    /// When.
    pub timestamp: String,
    /// The file (or the files a patch names).
    pub path: String,
    /// The tool.
    pub tool: String,
    /// Lines added.
    pub added: u64,
    /// Lines removed.
    pub removed: u64,
    /// Its session.
    pub session_id: String,
    /// The session's title.
    pub title: Option<String>,
    /// The session's project.
    pub project: Option<String>,
    /// On a team's hub: the host whose session it is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
}

/// A session among the longest or costliest.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionFigure {
    /// Its id.
    pub session_id: String,
    /// Its title.
    pub title: Option<String>,
    /// Its project.
    pub project: Option<String>,
    /// Its agent.
    pub agent: String,
    /// Messages within the filter.
    pub messages: u64,
    /// Its first and last timestamps (all of it).
    pub first_timestamp: Option<String>,
    /// See `first_timestamp`.
    pub last_timestamp: Option<String>,
    /// Tokens and cost within the filter.
    #[serde(flatten)]
    pub spend: Spend,
    /// On a team's hub: the host whose session it is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
}

/// The totals.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Totals {
    /// Sessions with a message.
    pub sessions: u64,
    /// Messages.
    pub messages: u64,
    /// A person's prompts.
    pub prompts: u64,
    /// Tool calls.
    pub tool_calls: u64,
    /// Tool calls that failed.
    pub tool_failures: u64,
    /// Tokens and cost.
    #[serde(flatten)]
    pub spend: Spend,
}

/// The overview.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Stats {
    /// The filter applied.
    pub filter: Applied,
    /// The totals.
    pub totals: Totals,
    /// Every day from the first with activity to the last (or the filter's bounds), in order.
    pub days: Vec<Day>,
    /// Messages by weekday (0 Sunday … 6 Saturday) and hour (0 … 23).
    pub heatmap: Vec<Vec<u64>>,
    /// Messages by hour of the day.
    pub hours: Vec<u64>,
    /// The projects with the most messages.
    pub projects: Vec<Top>,
    /// The agents, most messages first.
    pub agents: Vec<Top>,
    /// The models with the most tokens.
    pub models: Vec<Top>,
    /// Every tool, most calls first.
    pub tools: Vec<ToolUse>,
    /// The histogram's buckets' upper bounds, seconds.
    pub bucket_seconds: Vec<u32>,
    /// Response times per model, most responses first.
    pub response_times: Vec<ResponseTime>,
    /// The files edited most recently.
    pub recent_edits: Vec<Edit>,
    /// The sessions with the most messages.
    pub longest_sessions: Vec<SessionFigure>,
    /// The sessions that cost the most.
    pub costliest_sessions: Vec<SessionFigure>,
}

/// The filter's bounds as a store's queries take them.
#[derive(Debug, Clone)]
pub struct Bounds {
    /// On or after this UTC hour (`YYYY-MM-DDTHH`).
    pub since: Option<String>,
    /// Before this UTC hour.
    pub until: Option<String>,
    /// Only this agent's sessions.
    pub agent: Option<String>,
    /// Only this project's sessions.
    pub project: Option<String>,
    /// The time zone's offset from UTC, in whole hours: days, weekdays and hours are its.
    pub tz_hours: i32,
    /// The pricing table's long-context sizes, which a sum's `over` is read against ([`Self::over`]).
    pub over_sizes: Vec<u64>,
    /// How many of each list ([`Filter::limit`]).
    pub limit: usize,
}

impl Bounds {
    /// SQL of the context size a sum's responses were over, its `column` (`h.over`) read against
    /// the pricing table's sizes: the largest of them it is not under, else 0.
    pub fn over(&self, column: &str) -> String {
        summed_over(&self.over_sizes, column)
    }
}

/// Messages and prompts of one day, weekday (0 Sunday) and hour of the time zone.
#[derive(Debug, Clone, Default)]
pub struct MessageSum {
    /// `YYYY-MM-DD`.
    pub day: String,
    /// 0 Sunday … 6 Saturday.
    pub weekday: i64,
    /// 0 … 23.
    pub hour: i64,
    /// Messages.
    pub messages: u64,
    /// Of them, a person's prompts.
    pub prompts: u64,
}

/// Sessions with a message, and messages, of one project and agent.
#[derive(Debug, Clone, Default)]
pub struct GroupSum {
    /// The project.
    pub project: Option<String>,
    /// The agent.
    pub agent: Option<String>,
    /// Sessions with a message.
    pub sessions: u64,
    /// Messages.
    pub messages: u64,
}

/// The ledger summed by day of the time zone, project, agent, model, tier and context size.
#[derive(Debug, Clone, Default)]
pub struct SpendSum {
    /// `YYYY-MM-DD`.
    pub day: String,
    /// The sessions' project.
    pub project: Option<String>,
    /// The sessions' agent.
    pub agent: Option<String>,
    /// The responses' model.
    pub model: Option<String>,
    /// Their price tier.
    pub tier: Option<String>,
    /// The context size they were over ([`Bounds::over`]).
    pub over: i64,
    /// API responses.
    pub responses: u64,
    /// Their tokens.
    pub tokens: Tokens,
}

/// A session's ledger summed by model, tier and context size, with the session's figure (its
/// `spend` and `messages` not filled).
#[derive(Debug, Clone, Default)]
pub struct SessionSpend {
    /// The session.
    pub session: SessionFigure,
    /// The responses' model.
    pub model: Option<String>,
    /// Their price tier.
    pub tier: Option<String>,
    /// The context size they were over.
    pub over: i64,
    /// API responses.
    pub responses: u64,
    /// Their tokens.
    pub tokens: Tokens,
}

/// Where the overview's figures come from: the sums a store keeps by session and UTC hour, each
/// query within `b` (its days, agent and project). An index ([`stats`]) and a team's hub each
/// answer them in their own SQL; [`stats_of`] makes the overview of the answers, the same way for
/// both.
pub trait StatsSource {
    /// Messages and prompts by day, weekday and hour of the time zone.
    fn messages(&self, b: &Bounds) -> Result<Vec<MessageSum>>;
    /// Sessions with a message, by day of the time zone.
    fn sessions_by_day(&self, b: &Bounds) -> Result<Vec<(String, u64)>>;
    /// Sessions with a message, and messages, by project and agent.
    fn projects_and_agents(&self, b: &Bounds) -> Result<Vec<GroupSum>>;
    /// The ledger by day, project, agent, model, tier and context size.
    fn spend(&self, b: &Bounds) -> Result<Vec<SpendSum>>;
    /// Every tool's calls and failures, most calls first (then by name).
    fn tools(&self, b: &Bounds) -> Result<Vec<ToolUse>>;
    /// Responses by model (`""`: none named) and bucket of [`RESPONSE_BUCKETS`].
    fn response_times(&self, b: &Bounds) -> Result<Vec<(String, i64, u64)>>;
    /// The `b.limit` edits latest first.
    fn recent_edits(&self, b: &Bounds) -> Result<Vec<Edit>>;
    /// The `b.limit` sessions with the most messages (their `spend` not filled).
    fn longest(&self, b: &Bounds) -> Result<Vec<SessionFigure>>;
    /// The ledger by session, model, tier and context size: of every session, or of `one`.
    fn session_spend(&self, b: &Bounds, one: Option<&SessionFigure>) -> Result<Vec<SessionSpend>>;
    /// The messages of session `one`.
    fn session_messages(&self, b: &Bounds, one: &SessionFigure) -> Result<u64>;
    /// The start of what was first said in session `one` (a sub-agent's prompt, an answer), which
    /// names a session with no title ([`shown_title`]).
    fn first_said(&self, one: &SessionFigure) -> Result<Option<String>>;
}

/// The UTC hour `YYYY-MM-DDTHH` at which day `day` of the time zone `tz_hours` starts (`plus` days
/// later).
fn utc_hour(name: &str, day: &str, tz_hours: i32, plus: i64) -> Result<String> {
    let date: Date =
        day.parse().map_err(|e| Error::BadQuery(format!("{name}: {day:?} is not a date (YYYY-MM-DD): {e}")))?;
    let start = date
        .checked_add(jiff::Span::new().days(plus))
        .and_then(|d| d.to_datetime(jiff::civil::Time::midnight()).checked_sub(jiff::Span::new().hours(tz_hours)))
        .map_err(|e| Error::BadQuery(format!("{name}: {e}")))?;
    Ok(start.strftime("%Y-%m-%dT%H").to_string())
}

/// The overview of an index within `filter`, priced by `prices`.
pub fn stats(conn: &Connection, filter: Filter<'_>, prices: &Prices) -> Result<Stats> {
    stats_of(&IndexStats(conn), filter, prices)
}

/// The overview of `source`'s figures within `filter`, priced by `prices`.
pub fn stats_of(source: &dyn StatsSource, filter: Filter<'_>, prices: &Prices) -> Result<Stats> {
    if !(-12..=14).contains(&filter.tz_hours) {
        return Err(Error::BadQuery(format!("tz: {} is not an offset from -12 to 14 hours", filter.tz_hours)));
    }
    let limit = filter.limit.unwrap_or(TOP);
    if !(1..=MAX_LIMIT).contains(&limit) {
        return Err(Error::BadQuery(format!("limit: {limit} is not from 1 to {MAX_LIMIT}")));
    }
    let b = Bounds {
        since: filter.since.map(|d| utc_hour("since", d, filter.tz_hours, 0)).transpose()?,
        until: filter.until.map(|d| utc_hour("until", d, filter.tz_hours, 1)).transpose()?,
        agent: filter.agent.map(str::to_owned),
        project: filter.project.map(str::to_owned),
        tz_hours: filter.tz_hours,
        over_sizes: prices.long_context_sizes(),
        limit,
    };
    let mut out = Stats {
        filter: Applied {
            since: filter.since.map(str::to_owned),
            until: filter.until.map(str::to_owned),
            tz_hours: filter.tz_hours,
            project: b.project.clone(),
            agent: b.agent.clone(),
        },
        heatmap: vec![vec![0; 24]; 7],
        hours: vec![0; 24],
        bucket_seconds: RESPONSE_BUCKETS.to_vec(),
        ..Stats::default()
    };
    let mut days: BTreeMap<String, Day> = BTreeMap::new();
    fn day(days: &mut BTreeMap<String, Day>, name: String) -> &mut Day {
        days.entry(name.clone()).or_insert_with(|| Day { day: name, ..Day::default() })
    }

    // Messages: by day, by weekday and hour, in all.
    for m in source.messages(&b)? {
        let d = day(&mut days, m.day);
        d.messages += m.messages;
        d.prompts += m.prompts;
        if let (Ok(w), Ok(h)) = (usize::try_from(m.weekday), usize::try_from(m.hour))
            && w < 7
            && h < 24
        {
            out.heatmap[w][h] += m.messages;
            out.hours[h] += m.messages;
        }
        out.totals.messages += m.messages;
        out.totals.prompts += m.prompts;
    }
    // Sessions: distinct by day, and in all.
    for (name, sessions) in source.sessions_by_day(&b)? {
        day(&mut days, name).sessions = sessions;
    }
    // Projects and agents by messages and sessions.
    let mut projects: BTreeMap<Option<String>, Top> = BTreeMap::new();
    let mut agents: BTreeMap<Option<String>, Top> = BTreeMap::new();
    for g in source.projects_and_agents(&b)? {
        for (map, key) in [(&mut projects, g.project), (&mut agents, g.agent)] {
            let t = map.entry(key.clone()).or_insert_with(|| Top { name: key, ..Top::default() });
            t.sessions += g.sessions;
            t.messages += g.messages;
        }
        out.totals.sessions += g.sessions;
    }
    // Tokens and cost: by day, project, agent and model.
    let mut models: BTreeMap<Option<String>, Top> = BTreeMap::new();
    for s in source.spend(&b)? {
        let c = cost(prices, s.model.as_deref(), s.tier.as_deref(), s.over, s.tokens);
        day(&mut days, s.day).spend.add(s.responses, &s.tokens, c);
        for (map, key) in [(&mut projects, s.project), (&mut agents, s.agent), (&mut models, s.model)] {
            map.entry(key.clone()).or_insert_with(|| Top { name: key, ..Top::default() }).spend.add(
                s.responses,
                &s.tokens,
                c,
            );
        }
        out.totals.spend.add(s.responses, &s.tokens, c);
    }
    out.days = fill_days(days, filter)?;
    out.projects = top(projects, limit, |t| (t.messages, t.spend.tokens));
    out.agents = top(agents, limit, |t| (t.messages, t.spend.tokens));
    out.models = top(models, limit, |t| (t.spend.tokens, t.spend.responses));

    out.tools = source.tools(&b)?;
    out.totals.tool_calls = out.tools.iter().map(|t| t.calls).sum();
    out.totals.tool_failures = out.tools.iter().map(|t| t.failures).sum();

    let mut histograms: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    for (model, bucket, responses) in source.response_times(&b)? {
        let h = histograms.entry(model).or_insert_with(|| vec![0; RESPONSE_BUCKETS.len() + 1]);
        if let Some(slot) = usize::try_from(bucket).ok().and_then(|b| h.get_mut(b)) {
            *slot += responses;
        }
    }
    out.response_times = histograms
        .into_iter()
        .map(|(model, histogram)| {
            let responses = histogram.iter().sum();
            ResponseTime {
                model: Some(model).filter(|m| !m.is_empty()),
                responses,
                p50: percentile(&histogram, 0.5),
                p90: percentile(&histogram, 0.9),
                p99: percentile(&histogram, 0.99),
                histogram,
            }
        })
        .collect();
    out.response_times.sort_by(|a, b| b.responses.cmp(&a.responses).then(a.model.cmp(&b.model)));

    out.recent_edits = source.recent_edits(&b)?;
    out.longest_sessions = source.longest(&b)?;
    out.costliest_sessions = costliest(source.session_spend(&b, None)?, prices, limit);
    // Each list's sessions with the other's figures.
    for s in &mut out.longest_sessions {
        if let Some(found) = costliest(source.session_spend(&b, Some(s))?, prices, 1).pop() {
            s.spend = found.spend;
        }
    }
    for s in &mut out.costliest_sessions {
        s.messages = source.session_messages(&b, s)?;
    }
    // Named as everywhere else, never by an id where it has no title.
    for s in out.longest_sessions.iter_mut().chain(&mut out.costliest_sessions) {
        if s.title.as_deref().is_none_or(|t| t.trim().is_empty()) {
            let said = source.first_said(s)?;
            s.title = shown_title(s.title.take(), said, s.project.as_deref(), s.first_timestamp.as_deref());
        }
    }
    Ok(out)
}

/// The `limit` sessions of `rows` that cost the most (then by tokens), each row's spend added to
/// its session's.
fn costliest(rows: Vec<SessionSpend>, prices: &Prices, limit: usize) -> Vec<SessionFigure> {
    let mut sessions: BTreeMap<(Option<String>, String), SessionFigure> = BTreeMap::new();
    for row in rows {
        let c = cost(prices, row.model.as_deref(), row.tier.as_deref(), row.over, row.tokens);
        let key = (row.session.host.clone(), row.session.session_id.clone());
        sessions.entry(key).or_insert(row.session).spend.add(row.responses, &row.tokens, c);
    }
    let mut v: Vec<SessionFigure> = sessions.into_values().collect();
    v.sort_by(|a, b| {
        b.spend
            .cost
            .total_cmp(&a.spend.cost)
            .then(b.spend.tokens.cmp(&a.spend.tokens))
            .then(a.session_id.cmp(&b.session_id))
            .then(a.host.cmp(&b.host))
    });
    v.truncate(limit);
    v
}

/// An index's sums ([`stats`]), read through its SQLite connection.
struct IndexStats<'a>(&'a Connection);

/// The common conditions on a table of sums `h` joined to its session `s`, with [`IndexStats::p`]'s
/// parameters.
/// An hour that is not one (written by an older writer from a line's malformed time: `2026-01-01T25`,
/// `garbage`) is in no figure, as on a hub: a report never fails on a row's value.
const WHERE: &str = "h.hour IS NOT NULL AND strftime('%Y-%m-%dT%H', h.hour || ':00:00') IS h.hour
                     AND (?1 IS NULL OR h.hour >= ?1) AND (?2 IS NULL OR h.hour < ?2)
                     AND (?3 IS NULL OR s.agent = ?3) AND (?4 IS NULL OR s.project = ?4) AND ?5 IS NOT NULL";

/// A local figure of the hour `h.hour`: `strftime`'s `f` after SQLite's modifier `?5`.
fn local(f: &str) -> String {
    format!("strftime('{f}', h.hour || ':00:00', ?5)")
}

/// A count column's value, 0 for none or less.
fn count(r: &rusqlite::Row<'_>, i: usize) -> rusqlite::Result<u64> {
    r.get::<_, Option<i64>>(i).map(|v| v.unwrap_or(0).max(0) as u64)
}

/// Six token sums from column `i` on.
fn tokens_at(r: &rusqlite::Row<'_>, i: usize) -> rusqlite::Result<Tokens> {
    Ok(Tokens {
        input: count(r, i)?,
        output: count(r, i + 1)?,
        cache_read: count(r, i + 2)?,
        cache_write: count(r, i + 3)?,
        cache_write_1h: count(r, i + 4)?,
        reasoning: count(r, i + 5)?,
    })
}

impl IndexStats<'_> {
    /// The rows of `sql` with `?1` … `?5` of [`WHERE`] bound (the bounds, and SQLite's modifier
    /// from UTC to the time zone), and `?6` to `one` if given.
    fn query<T>(
        &self,
        b: &Bounds,
        sql: &str,
        one: Option<&str>,
        f: impl FnMut(&rusqlite::Row<'_>) -> rusqlite::Result<T>,
    ) -> Result<Vec<T>> {
        let shift = format!("{:+} hours", b.tz_hours);
        let mut stmt = self.0.prepare_cached(sql)?;
        let rows = match one {
            None => stmt.query_map(params![b.since, b.until, b.agent, b.project, shift], f)?,
            Some(one) => stmt.query_map(params![b.since, b.until, b.agent, b.project, shift, one], f)?,
        };
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// The ledger by session, model, tier and context size, of those `and` selects.
    fn session_sums(&self, b: &Bounds, and: &str, one: Option<&str>) -> Result<Vec<SessionSpend>> {
        let sql = format!(
            "SELECT h.session_id, h.model, h.tier, {over}, sum(h.responses), {tokens}, s.title, s.project, s.agent,
                    s.first_timestamp, s.last_timestamp
             FROM usage_hours h JOIN sessions s ON s.id = h.session_id WHERE {WHERE} AND {and} GROUP BY 1, 2, 3, 4",
            over = b.over("h.over"),
            tokens = usage::token_sums_sql("h"),
        );
        self.query(b, &sql, one, |r| {
            Ok(SessionSpend {
                session: SessionFigure {
                    session_id: r.get(0)?,
                    title: r.get(11)?,
                    project: r.get(12)?,
                    agent: r.get(13)?,
                    first_timestamp: r.get(14)?,
                    last_timestamp: r.get(15)?,
                    ..SessionFigure::default()
                },
                model: r.get(1)?,
                tier: r.get(2)?,
                over: r.get(3)?,
                responses: count(r, 4)?,
                tokens: tokens_at(r, 5)?,
            })
        })
    }
}

impl StatsSource for IndexStats<'_> {
    fn messages(&self, b: &Bounds) -> Result<Vec<MessageSum>> {
        let sql = format!(
            "SELECT {day}, CAST({wday} AS INTEGER), CAST({hour} AS INTEGER), sum(h.messages), sum(h.prompts)
             FROM stats_hours h JOIN sessions s ON s.id = h.session_id WHERE {WHERE} GROUP BY 1, 2, 3",
            day = local("%Y-%m-%d"),
            wday = local("%w"),
            hour = local("%H"),
        );
        self.query(b, &sql, None, |r| {
            Ok(MessageSum {
                day: r.get(0)?,
                weekday: r.get(1)?,
                hour: r.get(2)?,
                messages: count(r, 3)?,
                prompts: count(r, 4)?,
            })
        })
    }

    fn sessions_by_day(&self, b: &Bounds) -> Result<Vec<(String, u64)>> {
        let sql = format!(
            "SELECT {day}, count(DISTINCT h.session_id) FROM stats_hours h JOIN sessions s ON s.id = h.session_id
             WHERE {WHERE} GROUP BY 1",
            day = local("%Y-%m-%d")
        );
        self.query(b, &sql, None, |r| Ok((r.get(0)?, count(r, 1)?)))
    }

    fn projects_and_agents(&self, b: &Bounds) -> Result<Vec<GroupSum>> {
        let sql = format!(
            "SELECT s.project, s.agent, count(DISTINCT h.session_id), sum(h.messages)
             FROM stats_hours h JOIN sessions s ON s.id = h.session_id WHERE {WHERE} GROUP BY 1, 2"
        );
        self.query(b, &sql, None, |r| {
            Ok(GroupSum { project: r.get(0)?, agent: r.get(1)?, sessions: count(r, 2)?, messages: count(r, 3)? })
        })
    }

    fn spend(&self, b: &Bounds) -> Result<Vec<SpendSum>> {
        let sql = format!(
            "SELECT {day}, s.project, s.agent, h.model, h.tier, {over}, sum(h.responses), {tokens}
             FROM usage_hours h JOIN sessions s ON s.id = h.session_id WHERE {WHERE} GROUP BY 1, 2, 3, 4, 5, 6",
            tokens = usage::token_sums_sql("h"),
            day = local("%Y-%m-%d"),
            over = b.over("h.over"),
        );
        self.query(b, &sql, None, |r| {
            Ok(SpendSum {
                day: r.get(0)?,
                project: r.get(1)?,
                agent: r.get(2)?,
                model: r.get(3)?,
                tier: r.get(4)?,
                over: r.get(5)?,
                responses: count(r, 6)?,
                tokens: tokens_at(r, 7)?,
            })
        })
    }

    fn tools(&self, b: &Bounds) -> Result<Vec<ToolUse>> {
        let sql = format!(
            "SELECT h.tool, sum(h.calls), sum(h.failures) FROM tool_hours h JOIN sessions s ON s.id = h.session_id
             WHERE {WHERE} GROUP BY 1 ORDER BY 2 DESC, 1"
        );
        self.query(b, &sql, None, |r| {
            let (calls, failures) = (count(r, 1)?, count(r, 2)?);
            Ok(ToolUse { tool: r.get(0)?, calls, failures, failure_rate: ratio(failures, calls) })
        })
    }

    fn response_times(&self, b: &Bounds) -> Result<Vec<(String, i64, u64)>> {
        let sql = format!(
            "SELECT h.model, h.bucket, sum(h.responses) FROM response_hours h JOIN sessions s ON s.id = h.session_id
             WHERE {WHERE} GROUP BY 1, 2"
        );
        self.query(b, &sql, None, |r| Ok((r.get(0)?, r.get(1)?, count(r, 2)?)))
    }

    fn recent_edits(&self, b: &Bounds) -> Result<Vec<Edit>> {
        let mut stmt = self.0.prepare_cached(
            "SELECT t.timestamp, t.path, t.tool, t.added, t.removed, t.session_id, s.title, s.project
             FROM tool_events t INDEXED BY tool_events_edits
             JOIN entries e ON e.id = t.entry_id JOIN sessions s ON s.id = t.session_id
             WHERE t.path IS NOT NULL AND t.timestamp IS NOT NULL AND e.duplicate = 0
               AND (?1 IS NULL OR t.timestamp >= ?1) AND (?2 IS NULL OR t.timestamp < ?2)
               AND (?3 IS NULL OR s.agent = ?3) AND (?4 IS NULL OR s.project = ?4)
             ORDER BY t.timestamp DESC, t.entry_id DESC, t.ordinal DESC LIMIT ?5",
        )?;
        let edits = stmt
            .query_map(params![b.since, b.until, b.agent, b.project, b.limit as i64], |r| {
                Ok(Edit {
                    timestamp: r.get(0)?,
                    path: r.get(1)?,
                    tool: r.get::<_, Option<String>>(2)?.unwrap_or_default(),
                    added: count(r, 3)?,
                    removed: count(r, 4)?,
                    session_id: r.get(5)?,
                    title: r.get(6)?,
                    project: r.get(7)?,
                    host: None,
                })
            })?
            .collect::<rusqlite::Result<_>>()?;
        Ok(edits)
    }

    fn longest(&self, b: &Bounds) -> Result<Vec<SessionFigure>> {
        let sql = format!(
            "SELECT h.session_id, sum(h.messages), s.title, s.project, s.agent, s.first_timestamp, s.last_timestamp
             FROM stats_hours h JOIN sessions s ON s.id = h.session_id WHERE {WHERE}
             GROUP BY h.session_id ORDER BY 2 DESC, 1 LIMIT {limit}",
            limit = b.limit
        );
        self.query(b, &sql, None, |r| {
            Ok(SessionFigure {
                session_id: r.get(0)?,
                messages: count(r, 1)?,
                title: r.get(2)?,
                project: r.get(3)?,
                agent: r.get(4)?,
                first_timestamp: r.get(5)?,
                last_timestamp: r.get(6)?,
                ..SessionFigure::default()
            })
        })
    }

    fn session_spend(&self, b: &Bounds, one: Option<&SessionFigure>) -> Result<Vec<SessionSpend>> {
        match one {
            None => self.session_sums(b, "1", None),
            Some(s) => self.session_sums(b, "h.session_id = ?6", Some(&s.session_id)),
        }
    }

    fn session_messages(&self, b: &Bounds, one: &SessionFigure) -> Result<u64> {
        let sql = format!(
            "SELECT sum(h.messages) FROM stats_hours h JOIN sessions s ON s.id = h.session_id
             WHERE {WHERE} AND h.session_id = ?6"
        );
        Ok(self.query(b, &sql, Some(&one.session_id), |r| count(r, 0))?.into_iter().sum())
    }

    fn first_said(&self, one: &SessionFigure) -> Result<Option<String>> {
        let sql = concat!("SELECT ", first_said!("s"), " FROM sessions s WHERE s.id = ?1");
        let said = self.0.prepare_cached(sql)?.query_row([&one.session_id], |r| r.get(0)).optional()?;
        Ok(said.flatten())
    }
}

/// `a / b`, 0 for no `b`.
fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 { 0.0 } else { a as f64 / b as f64 }
}

/// The upper bound of the bucket the `q` quantile of `histogram` falls in; `None` for none, or
/// past the last bound.
pub fn percentile(histogram: &[u64], q: f64) -> Option<u32> {
    let total: u64 = histogram.iter().sum();
    if total == 0 {
        return None;
    }
    // The rank of the quantile, 1-based: the smallest whose share is at least q.
    let rank = ((q * total as f64).ceil() as u64).max(1);
    let mut seen = 0;
    for (i, count) in histogram.iter().enumerate() {
        seen += count;
        if seen >= rank {
            return RESPONSE_BUCKETS.get(i).copied();
        }
    }
    None
}

/// The first `limit` of `map` by `key`, largest first (then by name).
fn top(map: BTreeMap<Option<String>, Top>, limit: usize, key: impl Fn(&Top) -> (u64, u64)) -> Vec<Top> {
    let mut v: Vec<Top> = map.into_values().collect();
    v.sort_by(|a, b| key(b).cmp(&key(a)).then(a.name.cmp(&b.name)));
    v.truncate(limit);
    v
}

/// Every day from the first to the last of `days` (or the filter's bounds, when given and within a
/// year of the other), the days without activity as zeros, so that a chart's axis has each day.
fn fill_days(mut days: BTreeMap<String, Day>, filter: Filter<'_>) -> Result<Vec<Day>> {
    let parse = |s: &str| s.parse::<Date>().ok();
    let first = filter.since.and_then(parse).or_else(|| days.keys().next().and_then(|d| parse(d)));
    let last = filter.until.and_then(parse).or_else(|| days.keys().next_back().and_then(|d| parse(d)));
    if let (Some(first), Some(last)) = (first, last)
        && first <= last
        && first.until(last).is_ok_and(|span| span.get_days() <= 3660)
    {
        let mut day = first;
        while day <= last {
            let name = day.to_string();
            days.entry(name.clone()).or_insert_with(|| Day { day: name, ..Day::default() });
            day = match day.tomorrow() {
                Ok(next) => next,
                Err(_) => break,
            };
        }
    }
    Ok(days.into_values().collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_percentile_is_the_bound_of_its_bucket() {
        let mut h = vec![0; RESPONSE_BUCKETS.len() + 1];
        assert_eq!(percentile(&h, 0.5), None);
        h[0] = 5; // up to 1 s
        h[3] = 4; // up to 5 s
        h[RESPONSE_BUCKETS.len()] = 1; // longer than all
        assert_eq!(percentile(&h, 0.5), Some(1));
        assert_eq!(percentile(&h, 0.9), Some(5));
        assert_eq!(percentile(&h, 0.99), None);
    }

    #[test]
    fn days_of_a_time_zone_start_at_its_midnight_in_utc() {
        assert_eq!(utc_hour("since", "2026-11-30", 0, 0).unwrap(), "2026-11-30T00");
        assert_eq!(utc_hour("since", "2026-11-30", 2, 0).unwrap(), "2026-11-29T22");
        assert_eq!(utc_hour("until", "2026-11-30", -5, 1).unwrap(), "2026-12-01T05");
        assert!(utc_hour("since", "30/11/2026", 0, 0).is_err());
    }
}
