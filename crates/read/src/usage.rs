//! Reports from the usage ledger: tokens and cost grouped by day, week, month, session, project,
//! model or agent, between two dates, priced by a [`Prices`] table.
//!
//! SQLite sums the ledger by the group, the model, the price tier and the long-context size the
//! request was over; each of those sums is priced here. The writer keeps the ledger summed by
//! session and day (`usage_sums`), so a report reads those sums, a few rows per session and day,
//! rather than every response; a bound within a day, or a pricing table with long-context sizes the
//! sums do not keep, is answered from the ledger's rows.

use std::collections::BTreeMap;

use rusqlite::{Connection, OptionalExtension, params};
use serde::Serialize;

use crate::history::time_bound;
use crate::prices::{Priced, Prices};
use scrollback_core::db;
use scrollback_core::error::{Error, Result};
use scrollback_core::format::{Tokens, usage};

/// What a report groups the ledger by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum By {
    /// The UTC day.
    #[default]
    Day,
    /// The week, from Monday (ISO 8601), named by its Monday.
    Week,
    /// The month (`YYYY-MM`).
    Month,
    /// The session.
    Session,
    /// The session's project.
    Project,
    /// The model.
    Model,
    /// The agent.
    Agent,
}

impl By {
    /// Every grouping, by the name the CLI and the API take.
    pub const ALL: [(&'static str, By); 7] = [
        ("day", By::Day),
        ("week", By::Week),
        ("month", By::Month),
        ("session", By::Session),
        ("project", By::Project),
        ("model", By::Model),
        ("agent", By::Agent),
    ];

    /// The grouping called `name`.
    pub fn parse(name: &str) -> Result<By> {
        By::ALL.iter().find(|(n, _)| *n == name).map(|(_, by)| *by).ok_or_else(|| {
            let names: Vec<&str> = By::ALL.iter().map(|(n, _)| *n).collect();
            Error::BadQuery(format!("group by {name:?}: expected one of {}", names.join(", ")))
        })
    }

    fn sql(self) -> &'static str {
        match self {
            By::Day => "u.day",
            By::Week => "date(u.day, '-' || ((strftime('%w', u.day) + 6) % 7) || ' days')",
            By::Month => "substr(u.day, 1, 7)",
            By::Session => "u.session_id",
            By::Project => "s.project",
            By::Model => "u.model",
            By::Agent => "u.agent",
        }
    }

    /// Whether the groups are periods (listed in time order; else the costliest first).
    pub fn is_period(self) -> bool {
        matches!(self, By::Day | By::Week | By::Month)
    }
}

/// Which responses a report covers.
#[derive(Debug, Clone, Copy, Default)]
pub struct Filter<'a> {
    /// From this date (`YYYY-MM-DD`, UTC) or instant (RFC 3339) on.
    pub since: Option<&'a str>,
    /// Up to this date, inclusive, or instant, exclusive.
    pub until: Option<&'a str>,
    /// Only this agent's.
    pub agent: Option<&'a str>,
    /// Only this project's.
    pub project: Option<&'a str>,
    /// Only this session's.
    pub session: Option<&'a str>,
    /// Only this model's.
    pub model: Option<&'a str>,
}

/// One group's tokens and cost.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Row {
    /// The group (a day, a session id, a model…); `None` for responses without one (no model, a
    /// session without a project), and for the total.
    pub key: Option<String>,
    /// The session's title (grouped by session).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The session's project (grouped by session).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub project: Option<String>,
    /// The agents of its responses.
    pub agents: Vec<String>,
    /// The models of its responses.
    pub models: Vec<String>,
    /// Its first and last response's time.
    pub first: Option<String>,
    /// See `first`.
    pub last: Option<String>,
    /// API responses.
    pub responses: u64,
    /// Input neither read from nor written to a cache.
    pub input_tokens: u64,
    /// Output, reasoning included.
    pub output_tokens: u64,
    /// Input read from a cache.
    pub cache_read_tokens: u64,
    /// Input written to a cache (both lifetimes).
    pub cache_write_tokens: u64,
    /// Of `cache_write_tokens`, for an hour.
    pub cache_write_1h_tokens: u64,
    /// Of `output_tokens`, reasoning.
    pub reasoning_tokens: u64,
    /// Every token, each once.
    pub total_tokens: u64,
    /// USD, of the responses that have a price.
    pub cost: f64,
    /// Responses with no price (their model, tier or a bucket has none): not in `cost`.
    pub unpriced_responses: u64,
}

impl Row {
    fn add(&mut self, responses: u64, t: &Tokens, cost: Option<f64>) {
        // (Saturating: counts are clamped on ingest, but an index may hold older rows.)
        self.responses = self.responses.saturating_add(responses);
        self.input_tokens = self.input_tokens.saturating_add(t.input);
        self.output_tokens = self.output_tokens.saturating_add(t.output);
        self.cache_read_tokens = self.cache_read_tokens.saturating_add(t.cache_read);
        self.cache_write_tokens = self.cache_write_tokens.saturating_add(t.cache_write);
        self.cache_write_1h_tokens = self.cache_write_1h_tokens.saturating_add(t.cache_write_1h);
        self.reasoning_tokens = self.reasoning_tokens.saturating_add(t.reasoning);
        self.total_tokens = self.total_tokens.saturating_add(t.total());
        match cost {
            Some(c) => self.cost += c,
            None => self.unpriced_responses += responses,
        }
    }

    fn merge_names(&mut self, agent: &str, model: Option<&str>) {
        if !self.agents.iter().any(|a| a == agent) {
            self.agents.push(agent.to_owned());
            self.agents.sort();
        }
        if let Some(model) = model
            && !self.models.iter().any(|m| m == model)
        {
            self.models.push(model.to_owned());
            self.models.sort();
        }
    }

    fn widen(&mut self, first: Option<String>, last: Option<String>) {
        if first.is_some() && (self.first.is_none() || first < self.first) {
            self.first = first;
        }
        if last > self.last {
            self.last = last;
        }
    }
}

/// A report: its groups, their total, and what priced them.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    /// The grouping.
    pub by: By,
    /// The groups: periods in time order, else the costliest first.
    pub rows: Vec<Row>,
    /// Every response the report covers.
    pub total: Row,
    /// Models that have no price, with their responses.
    pub unpriced_models: BTreeMap<String, u64>,
    /// Where the prices come from, and when they were taken.
    pub prices: PriceSource,
}

/// The pricing table a report used.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PriceSource {
    /// Its source.
    pub source: String,
    /// When it was taken.
    pub taken: String,
}

/// The report of the ledger in `conn` grouped `by`, over `filter`, priced by `prices`.
///
/// It reads the ledger's sums (`usage_sums`) when they can answer: bounds that are whole days, and
/// a table whose long-context sizes are among those the sums keep. Else it sums the ledger's rows.
pub fn report(conn: &Connection, by: By, filter: Filter<'_>, prices: &Prices) -> Result<Report> {
    let sizes = prices.long_context_sizes();
    let summed = conn
        .query_row("SELECT value FROM scrollback_meta WHERE key = ?1", [db::USAGE_SUMS_SIZES], |r| {
            r.get::<_, String>(0)
        })
        .optional()?
        .is_some_and(|made| made == usage::context_sizes_text())
        && sizes.iter().all(|n| usage::CONTEXT_SIZES.contains(n));
    report_from(conn, by, filter, prices, summed)
}

/// [`report`] from the ledger's sums if `summed` (and the bounds are whole days), else from its
/// rows. The two are the same report (tested).
pub fn report_from(conn: &Connection, by: By, filter: Filter<'_>, prices: &Prices, summed: bool) -> Result<Report> {
    let bounds = Bounds::new(&filter)?;
    let summed = summed && bounds.whole_days();
    let sql = report_sql(by, filter.project.is_some(), summed, &prices.long_context_sizes());
    let mut stmt = conn.prepare_cached(&sql)?;
    let mut rows = stmt.query(params![
        bounds.since_day,
        bounds.until_before,
        bounds.until_on,
        filter.agent,
        filter.project,
        filter.session,
        filter.model,
        bounds.since_at,
        bounds.until_at
    ])?;
    let mut sums = Vec::new();
    while let Some(r) = rows.next()? {
        let n = |i: usize| r.get::<_, i64>(i).map(|v| v.max(0) as u64);
        sums.push(LedgerSum {
            key: r.get(0)?,
            agent: r.get(1)?,
            model: r.get(2)?,
            tier: r.get(3)?,
            over: r.get(4)?,
            responses: n(5)?,
            tokens: Tokens {
                input: n(6)?,
                output: n(7)?,
                cache_read: n(8)?,
                cache_write: n(9)?,
                cache_write_1h: n(10)?,
                reasoning: n(11)?,
            },
            first: r.get(12)?,
            last: r.get(13)?,
            title: r.get(14)?,
            project: r.get(15)?,
        });
    }
    Ok(report_of(by, sums, prices))
}

/// One group's sums of the ledger for one agent, model, price tier and long-context size, as a
/// store's query gives them (an index's here, a team's hub's in its own crate).
#[derive(Debug, Clone, Default)]
pub struct LedgerSum {
    /// The group's key (a day, a week's Monday, a month, a session, a project, a model, an agent).
    pub key: Option<String>,
    /// The agent.
    pub agent: String,
    /// The model.
    pub model: Option<String>,
    /// The price tier, other than standard.
    pub tier: Option<String>,
    /// The largest long-context size the requests were over (0: none).
    pub over: i64,
    /// Responses.
    pub responses: u64,
    /// Their tokens.
    pub tokens: Tokens,
    /// The first response's time.
    pub first: Option<String>,
    /// The last response's time.
    pub last: Option<String>,
    /// Grouped by session: its title.
    pub title: Option<String>,
    /// Grouped by session: its project.
    pub project: Option<String>,
}

/// The report of `sums` grouped `by`, each priced by `prices`: periods in time order, else the
/// costliest groups first.
pub fn report_of(by: By, sums: impl IntoIterator<Item = LedgerSum>, prices: &Prices) -> Report {
    let mut report = Sums::default();
    for sum in sums {
        report.add(sum, by, prices);
    }
    report.into_report(by, prices)
}

/// A report's bounds as its query takes them: whole days against the ledger's `day`, an instant
/// against its `timestamp` as well (every store's query takes them so).
#[derive(Debug)]
pub struct Bounds {
    /// On or after this day.
    pub since_day: Option<String>,
    /// At or after this instant, when `since` is not a day's first one.
    pub since_at: Option<String>,
    /// Before this day, when `until` is a whole day.
    pub until_before: Option<String>,
    /// On or before this day, when `until` is an instant.
    pub until_on: Option<String>,
    /// Before this instant, when `until` is not a day's first one.
    pub until_at: Option<String>,
}

impl Bounds {
    /// `filter`'s bounds; a time that means nothing is [`Error::BadQuery`].
    pub fn new(filter: &Filter<'_>) -> Result<Bounds> {
        let since = filter.since.map(|s| time_bound(s, false)).transpose()?;
        let until = filter.until.map(|s| time_bound(s, true)).transpose()?;
        // A bound at a day's first instant is that day; another bound is its day and its instant.
        let whole = |b: &Option<String>| b.as_deref().is_none_or(|b| b.ends_with("T00:00:00.000Z"));
        let day = |b: &Option<String>| b.as_deref().map(|b| b[..10].to_owned());
        let instant = |b: &Option<String>| b.clone().filter(|_| !whole(b));
        let (since_day, since_at) = (day(&since), instant(&since));
        let until_at = instant(&until);
        // Whole days: before the bound's day; an instant: on or before its day, and before it.
        let (until_before, until_on) = if until_at.is_none() { (day(&until), None) } else { (None, day(&until)) };
        Ok(Bounds { since_day, since_at, until_before, until_on, until_at })
    }

    /// Whether both bounds are whole days (or none), which the ledger's sums can answer.
    fn whole_days(&self) -> bool {
        self.since_at.is_none() && self.until_at.is_none()
    }
}

/// The report's query: over the ledger's sums (`usage_sums`) if `summed`, else over its rows; summed
/// by the group, the agent, the model, the price tier and the largest of `sizes` each sum is over.
fn report_sql(by: By, project_filter: bool, summed: bool, sizes: &[u64]) -> String {
    let (table, responses, first, last, over) = if summed {
        (
            "usage_sums",
            "sum(u.responses)",
            "min(u.first_timestamp)",
            "max(u.last_timestamp)",
            summed_over(sizes, "u.over"),
        )
    } else {
        ("usage", "count(*)", "min(u.timestamp)", "max(u.timestamp)", usage::over_sql(sizes))
    };
    let join_sessions = matches!(by, By::Session | By::Project) || project_filter;
    format!(
        "SELECT {group}, u.agent, u.model, u.tier, {over} AS over, {responses},
                {tokens}, {first}, {last}, {names}
         FROM {table} u {join}
         WHERE (?1 IS NULL OR u.day >= ?1) AND (?2 IS NULL OR u.day < ?2) AND (?3 IS NULL OR u.day <= ?3)
           AND (?4 IS NULL OR u.agent = ?4) AND (?5 IS NULL OR s.project = ?5)
           AND (?6 IS NULL OR u.session_id = ?6) AND (?7 IS NULL OR u.model = ?7) {instants}
         GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5",
        group = by.sql(),
        tokens = usage::token_sums_sql("u"),
        names = if by == By::Session { "max(s.title), max(s.project)" } else { "NULL, NULL" },
        join = if join_sessions {
            "LEFT JOIN sessions s ON s.id = u.session_id"
        } else {
            "JOIN (SELECT NULL AS project) s"
        },
        // (The sums are read only when both are NULL: bounds that are whole days.)
        instants = if summed {
            "AND ?8 IS NULL AND ?9 IS NULL"
        } else {
            "AND (?8 IS NULL OR u.timestamp >= ?8) AND (?9 IS NULL OR u.timestamp < ?9)"
        },
    )
}

/// The context size a sum's responses were over (`column`, one of the sizes the writer's sums keep)
/// as the largest of the pricing table's `sizes` that is not over it.
pub(crate) fn summed_over(sizes: &[u64], column: &str) -> String {
    let arms: String = sizes.iter().rev().map(|n| format!(" WHEN {column} >= {n} THEN {n}")).collect();
    if sizes.is_empty() { "0".to_owned() } else { format!("CASE{arms} ELSE 0 END") }
}

/// What a sum of `tokens` of `model`'s responses in `tier`, whose requests were over the context
/// size `over`, cost at `prices`; `None` when unpriced.
pub(crate) fn cost(prices: &Prices, model: Option<&str>, tier: Option<&str>, over: i64, tokens: Tokens) -> Option<f64> {
    let long = prices
        .model(model.unwrap_or(""))
        .and_then(|m| m.long_context.as_ref())
        .is_some_and(|l| over as u64 >= l.above_tokens && over > 0);
    prices.cost(model, tier, &Priced { tokens, long })
}

/// A report's groups as the query's rows are added, their total, and the models that have no price.
#[derive(Debug, Default)]
struct Sums {
    groups: BTreeMap<Option<String>, Row>,
    total: Row,
    unpriced_models: BTreeMap<String, u64>,
}

impl Sums {
    /// Adds one row of the report's query: a group's sums for one agent, model, tier and
    /// long-context size, priced.
    fn add(&mut self, sum: LedgerSum, by: By, prices: &Prices) {
        let LedgerSum { key, agent, model, tier, over, responses, tokens, first, last, title, project } = sum;
        let cost = cost(prices, model.as_deref(), tier.as_deref(), over, tokens);
        if cost.is_none() {
            let name = match (&model, &tier) {
                (Some(m), Some(t)) => format!("{m} ({t})"),
                (Some(m), None) => m.clone(),
                (None, _) => "(no model)".to_owned(),
            };
            *self.unpriced_models.entry(name).or_default() += responses;
        }
        let row = self.groups.entry(key.clone()).or_insert_with(|| Row { key: key.clone(), ..Row::default() });
        row.add(responses, &tokens, cost);
        row.merge_names(&agent, model.as_deref());
        row.widen(first.clone(), last.clone());
        if by == By::Session {
            row.title = title;
            row.project = project;
        }
        self.total.add(responses, &tokens, cost);
        self.total.merge_names(&agent, model.as_deref());
        self.total.widen(first, last);
    }

    /// The report: periods in time order, else the costliest groups first.
    fn into_report(self, by: By, prices: &Prices) -> Report {
        let mut rows: Vec<Row> = self.groups.into_values().collect();
        if !by.is_period() {
            rows.sort_by(|a, b| {
                b.cost.total_cmp(&a.cost).then(b.total_tokens.cmp(&a.total_tokens)).then(a.key.cmp(&b.key))
            });
        }
        Report {
            by,
            rows,
            total: self.total,
            unpriced_models: self.unpriced_models,
            prices: PriceSource { source: prices.source.clone(), taken: prices.taken.clone() },
        }
    }
}
