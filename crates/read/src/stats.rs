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
use rusqlite::Connection;
use serde::Serialize;

use crate::history::shown_title;
use crate::prices::Prices;
use crate::usage::{cost, summed_over};
use scrollback_core::db::RESPONSE_BUCKETS;
use scrollback_core::error::{Error, Result};
use scrollback_core::format::{Tokens, usage};

mod index;
use index::IndexStats;

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

impl Stats {
    /// The ids of the sessions it names (the longest, the costliest, the recent edits'), for a
    /// person's marks.
    pub fn session_ids(&self) -> Vec<&str> {
        let sessions = self.longest_sessions.iter().chain(&self.costliest_sessions).map(|s| s.session_id.as_str());
        sessions.chain(self.recent_edits.iter().map(|e| e.session_id.as_str())).collect()
    }

    /// Each session it names under the title a person gave it, where `title_of` has one: an index's
    /// front ends give a person's marks as they do to the session list (a hub's are its own).
    pub fn retitle(&mut self, title_of: impl Fn(&str) -> Option<String>) {
        for s in self.longest_sessions.iter_mut().chain(&mut self.costliest_sessions) {
            if let Some(title) = title_of(&s.session_id) {
                s.title = Some(title);
            }
        }
        for e in &mut self.recent_edits {
            if let Some(title) = title_of(&e.session_id) {
                e.title = Some(title);
            }
        }
    }
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
    /// The start of what was first said in session `session_id` (of `host`, on a team's hub): a
    /// sub-agent's prompt, an answer, which names a session with no title ([`shown_title`]).
    fn first_said(&self, host: Option<&str>, session_id: &str) -> Result<Option<String>>;
    /// The title a person gave a session, where this store keeps their marks (a team's hub). An
    /// index's marks are in the acceptance record, which its front ends apply ([`Stats::retitle`]).
    fn marked_title(&self, _session_id: &str) -> Result<Option<String>> {
        Ok(None)
    }
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
    name_sessions(source, &mut out)?;
    Ok(out)
}

/// Names each session the overview lists (the longest, the costliest, and each recent edit's) as
/// the session list names it: a person's title where the store keeps their marks, else the
/// transcript's, else its first words said, else its project and day ([`shown_title`]); never its id.
fn name_sessions(source: &dyn StatsSource, out: &mut Stats) -> Result<()> {
    let mut names = Names { source, named: BTreeMap::new() };
    for s in out.longest_sessions.iter_mut().chain(&mut out.costliest_sessions) {
        let (project, first) = (s.project.as_deref(), s.first_timestamp.as_deref());
        s.title = names.name(&s.host, &s.session_id, s.title.take(), project, first)?;
    }
    for e in &mut out.recent_edits {
        e.title = names.name(&e.host, &e.session_id, e.title.take(), e.project.as_deref(), None)?;
    }
    Ok(())
}

/// The names [`name_sessions`] gave so far, by host and session: a session listed twice is asked
/// about once.
struct Names<'a> {
    source: &'a dyn StatsSource,
    named: BTreeMap<(Option<String>, String), Option<String>>,
}

impl Names<'_> {
    /// What names session `id` of `host`, whose transcript's title is `title`.
    fn name(
        &mut self,
        host: &Option<String>,
        id: &str,
        title: Option<String>,
        project: Option<&str>,
        first: Option<&str>,
    ) -> Result<Option<String>> {
        let key = (host.clone(), id.to_owned());
        if let Some(known) = self.named.get(&key) {
            return Ok(known.clone());
        }
        let shown = match self.source.marked_title(id)? {
            Some(marked) => Some(marked),
            None => {
                let untitled = title.as_deref().is_none_or(|t| t.trim().is_empty());
                let said = if untitled { self.source.first_said(host.as_deref(), id)? } else { None };
                shown_title(title, said, project, first)
            }
        };
        self.named.insert(key, shown.clone());
        Ok(shown)
    }
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
