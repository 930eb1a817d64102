//! One request type per question, parsed and checked once: what a person or an agent asked, as
//! the HTTP API's query parameters, MCP's tool arguments or the CLI's options give it, made into the
//! question the store answers. A front end fills the input (each its own names and defaults: the
//! API's `group`, MCP's `per_entry`), and refuses what [`Error::BadQuery`] says in its own way: a
//! 400 with the API's JSON error, a tool error, a usage error (exit 2). The same words are refused
//! with the same message everywhere.
//!
//! - [`SearchInput`] → [`Search`]: a full-text search, its scope, order and page;
//! - [`SessionsInput`] → [`SessionQuery`]: the sessions list;
//! - [`UsageInput`] → [`Usage`]: a report of the usage ledger;
//! - [`StatsInput`] → [`Stats`]: the overview.

use scrollback_core::error::{Error, Result};
use scrollback_core::query::{self, Query, time_bound};

use crate::Store;
use crate::history::{Scope, SearchAnswer, SessionQuery, Sort};
use crate::{stats, usage};

/// The roles a search can be narrowed to.
pub const ROLES: &[&str] = &["user", "assistant"];

/// At most 80 characters of `s`, for a message that quotes what was given.
pub fn trim(s: &str) -> String {
    s.chars().take(80).collect()
}

fn bad(message: String) -> Error {
    Error::BadQuery(message)
}

/// `value` unless it is empty or blank.
fn given(value: Option<String>) -> Option<String> {
    value.filter(|v| !v.trim().is_empty())
}

/// A count: `default` when not given, else between 1 and `max`.
pub fn count(name: &str, value: Option<i64>, default: u32, max: u32) -> Result<u32> {
    match value {
        None => Ok(default),
        Some(n) if (1..=i64::from(max)).contains(&n) => Ok(n as u32),
        Some(n) => Err(bad(format!("{name}: {n} is not between 1 and {max}"))),
    }
}

/// An agent: none when not given, else one of the formats' names.
pub fn agent(value: Option<String>) -> Result<Option<String>> {
    match given(value) {
        Some(a) if scrollback_core::format::by_name(&a).is_none() => {
            Err(bad(format!("agent: {:?} is none of {}", trim(&a), scrollback_core::format::names().join(", "))))
        }
        agent => Ok(agent),
    }
}

/// A `since` (`upper` false) or `until` bound: none when not given, else a date or an RFC 3339
/// time, as [`time_bound`] makes it.
pub fn time(name: &str, value: Option<String>, upper: bool) -> Result<Option<String>> {
    given(value).map(|v| time_bound(&v, upper).map_err(|e| bad(format!("{name}: {e}")))).transpose()
}

/// What was given for a search, each as written; what is not given is `None`.
#[derive(Debug, Clone, Default)]
pub struct SearchInput {
    /// The query, in the query language (docs/search.md).
    pub q: String,
    /// Only this session (its whole id).
    pub session: Option<String>,
    /// Only this agent's entries.
    pub agent: Option<String>,
    /// Only this project's sessions.
    pub project: Option<String>,
    /// Only entries of this role ([`ROLES`]).
    pub role: Option<String>,
    /// From this date or time on.
    pub since: Option<String>,
    /// Up to this date (inclusive) or time.
    pub until: Option<String>,
    /// `relevance`, `recent` or `conversation`.
    pub sort: Option<String>,
    /// `session` (one result a session, its best hit) or `none` (every hit). When not given: one
    /// a session, unless the search is of one session.
    pub group: Option<String>,
    /// Where a page starts: a cursor the last page gave (its `next`).
    pub cursor: Option<String>,
    /// How many results a page holds.
    pub limit: Option<i64>,
    /// Leave out sessions whose last entry is at or after this instant (MCP leaves out the
    /// conversation an agent is in); already an instant, not checked.
    pub active_since: Option<String>,
}

/// A search, checked: [`Search::answer`] asks it of a store.
#[derive(Debug, Clone)]
pub struct Search {
    /// The query as written.
    pub written: String,
    /// The query as parsed.
    pub query: Query,
    /// Only this session.
    pub session: Option<String>,
    /// Only this agent's entries.
    pub agent: Option<String>,
    /// Only this project's sessions.
    pub project: Option<String>,
    /// Only entries of this role.
    pub role: Option<String>,
    /// From this instant on.
    pub since: Option<String>,
    /// Before this instant.
    pub until: Option<String>,
    /// Leave out sessions active since this instant.
    pub active_since: Option<String>,
    /// The order of results.
    pub sort: Sort,
    /// One result a session (`true`) or every hit.
    pub grouped: bool,
    /// Results skipped: where the page starts.
    pub offset: u32,
    /// Results in the page.
    pub limit: u32,
}

impl Search {
    /// Checks `input`: a page holds `default_limit` results unless it says, and at most `max_limit`.
    pub fn parse(input: SearchInput, default_limit: u32, max_limit: u32) -> Result<Search> {
        let query = query::parse(&input.q)?;
        let limit = count("limit", input.limit, default_limit, max_limit)?;
        let role = match given(input.role) {
            Some(r) if !ROLES.contains(&r.as_str()) => {
                return Err(bad(format!("role: {:?} is none of {}", trim(&r), ROLES.join(", "))));
            }
            role => role,
        };
        let sort = match given(input.sort) {
            None => Sort::Relevance,
            Some(s) => Sort::parse(&s)
                .ok_or_else(|| bad(format!("sort: {:?} is none of relevance, recent, conversation", trim(&s))))?,
        };
        let session = given(input.session);
        let grouped = match given(input.group).as_deref() {
            None => session.is_none(),
            Some("session") => true,
            Some("none") => false,
            Some(g) => return Err(bad(format!("group: {:?} is none of session, none", trim(g)))),
        };
        let offset = match given(input.cursor) {
            None => 0,
            Some(c) => c
                .parse::<u32>()
                .ok()
                .filter(|_| c.bytes().all(|b| b.is_ascii_digit()))
                .ok_or_else(|| bad(format!("cursor {:?} is not one this server gave", trim(&c))))?,
        };
        Ok(Search {
            written: input.q,
            query,
            session,
            agent: agent(input.agent)?,
            project: given(input.project),
            role,
            since: time("since", input.since, false)?,
            until: time("until", input.until, true)?,
            active_since: input.active_since,
            sort,
            grouped,
            offset,
            limit,
        })
    }

    /// Where the search looks.
    pub fn scope(&self) -> Scope<'_> {
        Scope {
            session: self.session.as_deref(),
            agent: self.agent.as_deref(),
            project: self.project.as_deref(),
            role: self.role.as_deref(),
            since: self.since.as_deref(),
            until: self.until.as_deref(),
            active_since: self.active_since.as_deref(),
        }
    }

    /// The page of results `store` gives.
    pub fn answer(&self, store: &dyn Store) -> Result<SearchAnswer> {
        store.search_answer(&self.query, self.scope(), self.sort, (self.offset, self.limit), self.grouped)
    }
}

/// What was given for the sessions list, each as written; what is not given is `None`.
#[derive(Debug, Clone, Default)]
pub struct SessionsInput {
    /// Only this project's sessions.
    pub project: Option<String>,
    /// Only this agent's.
    pub agent: Option<String>,
    /// Only sessions an entry or the title of which matches this query.
    pub q: Option<String>,
    /// Only sessions with an entry from this date or time on.
    pub since: Option<String>,
    /// Only sessions with an entry up to this date (inclusive) or time.
    pub until: Option<String>,
    /// Only this host's sessions (a team's hub).
    pub host: Option<String>,
    /// Where the page starts: the last page's `next`.
    pub cursor: Option<String>,
    /// How many sessions a page holds.
    pub limit: Option<i64>,
    /// Leave out sessions active since this instant; already an instant, not checked.
    pub active_since: Option<String>,
}

impl SessionsInput {
    /// The list's question: a page holds `default_limit` sessions unless it says, and at most
    /// `max_limit`. (A cursor is checked by the store that gave it.)
    pub fn parse(self, default_limit: u32, max_limit: u32) -> Result<SessionQuery> {
        Ok(SessionQuery {
            limit: count("limit", self.limit, default_limit, max_limit)?,
            agent: agent(self.agent)?,
            since: time("since", self.since, false)?,
            until: time("until", self.until, true)?,
            project: self.project.filter(|p| !p.is_empty()),
            text: given(self.q),
            host: self.host.filter(|h| !h.is_empty()),
            cursor: self.cursor.filter(|c| !c.is_empty()),
            active_since: self.active_since,
        })
    }
}

/// What was given for a usage report, each as written; what is not given is `None`.
#[derive(Debug, Clone, Default)]
pub struct UsageInput {
    /// What its rows group by: `day` (when not given), `week`, `month`, `session`, `project`,
    /// `model`, `agent`.
    pub by: Option<String>,
    /// From this date (UTC) or time on.
    pub since: Option<String>,
    /// Up to this date (inclusive) or time.
    pub until: Option<String>,
    /// Only this agent's responses.
    pub agent: Option<String>,
    /// Only this project's.
    pub project: Option<String>,
    /// Only this session's (its whole id; the CLI names one by a prefix first).
    pub session: Option<String>,
    /// Only this model's.
    pub model: Option<String>,
}

/// A usage report, checked: [`Usage::filter`] is what the store is asked.
#[derive(Debug, Clone)]
pub struct Usage {
    /// What its rows group by.
    pub by: usage::By,
    /// From this instant on.
    pub since: Option<String>,
    /// Before this instant.
    pub until: Option<String>,
    /// Only this agent's.
    pub agent: Option<String>,
    /// Only this project's.
    pub project: Option<String>,
    /// Only this session's.
    pub session: Option<String>,
    /// Only this model's.
    pub model: Option<String>,
}

impl UsageInput {
    /// The report's question.
    pub fn parse(self) -> Result<Usage> {
        Ok(Usage {
            by: given(self.by).map(|b| usage::By::parse(&b)).transpose()?.unwrap_or(usage::By::Day),
            since: time("since", self.since, false)?,
            until: time("until", self.until, true)?,
            agent: agent(self.agent)?,
            project: given(self.project),
            session: given(self.session),
            model: given(self.model),
        })
    }
}

impl Usage {
    /// Which responses the report covers.
    pub fn filter(&self) -> usage::Filter<'_> {
        usage::Filter {
            since: self.since.as_deref(),
            until: self.until.as_deref(),
            agent: self.agent.as_deref(),
            project: self.project.as_deref(),
            session: self.session.as_deref(),
            model: self.model.as_deref(),
        }
    }
}

/// What was given for the overview, each as written; what is not given is `None`.
#[derive(Debug, Clone, Default)]
pub struct StatsInput {
    /// From this day (in the time zone `tz`) on.
    pub since: Option<String>,
    /// Up to this day, inclusive.
    pub until: Option<String>,
    /// The time zone's offset from UTC in whole hours, -12 to 14 (0 when not given).
    pub tz: Option<String>,
    /// Only this agent's sessions.
    pub agent: Option<String>,
    /// Only this project's.
    pub project: Option<String>,
    /// How many of each list (1 to [`stats::MAX_LIMIT`]).
    pub limit: Option<String>,
}

/// The overview, checked: [`Stats::filter`] is what the store is asked. (Its days are checked by
/// the overview itself, which reads them in its time zone.)
#[derive(Debug, Clone)]
pub struct Stats {
    /// From this day on.
    pub since: Option<String>,
    /// Up to this day, inclusive.
    pub until: Option<String>,
    /// The time zone's offset from UTC, in whole hours.
    pub tz_hours: i32,
    /// Only this agent's sessions.
    pub agent: Option<String>,
    /// Only this project's.
    pub project: Option<String>,
    /// How many of each list.
    pub limit: Option<usize>,
}

impl StatsInput {
    /// The overview's question.
    pub fn parse(self) -> Result<Stats> {
        let tz_hours = match given(self.tz) {
            None => 0,
            Some(tz) => tz
                .trim()
                .parse::<i32>()
                .ok()
                .filter(|h| (-12..=14).contains(h))
                .ok_or_else(|| bad("tz: an offset from UTC in whole hours, -12 to 14".to_owned()))?,
        };
        let limit = match given(self.limit) {
            None => None,
            Some(n) => Some(
                n.trim()
                    .parse::<usize>()
                    .ok()
                    .filter(|n| (1..=stats::MAX_LIMIT).contains(n))
                    .ok_or_else(|| bad(format!("limit: how many of each list, 1 to {}", stats::MAX_LIMIT)))?,
            ),
        };
        Ok(Stats {
            since: given(self.since),
            until: given(self.until),
            tz_hours,
            agent: agent(self.agent)?,
            project: given(self.project),
            limit,
        })
    }
}

impl Stats {
    /// Which activity the overview covers.
    pub fn filter(&self) -> stats::Filter<'_> {
        stats::Filter {
            since: self.since.as_deref(),
            until: self.until.as_deref(),
            tz_hours: self.tz_hours,
            project: self.project.as_deref(),
            agent: self.agent.as_deref(),
            limit: self.limit,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn search(input: SearchInput) -> std::result::Result<Search, String> {
        Search::parse(input, 20, 500).map_err(|e| e.to_string())
    }

    #[test]
    fn a_search_takes_its_defaults_and_its_given_words() {
        let s = search(SearchInput { q: "retry upload".into(), ..Default::default() }).unwrap();
        assert_eq!((s.sort, s.grouped, s.offset, s.limit), (Sort::Relevance, true, 0, 20));
        assert_eq!(s.written, "retry upload");
        // One session's search lists every hit unless it says otherwise.
        let s = search(SearchInput { q: "x".into(), session: Some("s1".into()), ..Default::default() }).unwrap();
        assert!(!s.grouped);
        let s = search(SearchInput {
            q: "x".into(),
            session: Some("s1".into()),
            group: Some("session".into()),
            sort: Some("recent".into()),
            cursor: Some("40".into()),
            limit: Some(5),
            role: Some("user".into()),
            since: Some("2026-01-31".into()),
            agent: Some("codex".into()),
            project: Some(String::new()),
            ..Default::default()
        })
        .unwrap();
        assert_eq!((s.sort, s.grouped, s.offset, s.limit), (Sort::Recent, true, 40, 5));
        assert_eq!(s.scope().since, Some("2026-01-31T00:00:00.000Z"));
        assert_eq!((s.scope().role, s.scope().agent, s.scope().project), (Some("user"), Some("codex"), None));
    }

    #[test]
    fn what_a_search_cannot_take_is_refused_with_what_was_wrong() {
        let refused = |input: SearchInput| search(SearchInput { q: "x".into(), ..input }).unwrap_err();
        assert!(refused(SearchInput { role: Some("tool".into()), ..Default::default() }).starts_with("role: \"tool\""));
        assert!(refused(SearchInput { sort: Some("best".into()), ..Default::default() }).starts_with("sort:"));
        assert!(refused(SearchInput { group: Some("day".into()), ..Default::default() }).starts_with("group:"));
        for cursor in ["+5", "-1", "x", "99999999999"] {
            let message = refused(SearchInput { cursor: Some(cursor.into()), ..Default::default() });
            assert!(message.starts_with("cursor"), "{cursor}: {message}");
        }
        for limit in [0, 501, -3] {
            assert!(refused(SearchInput { limit: Some(limit), ..Default::default() }).starts_with("limit:"));
        }
        assert!(refused(SearchInput { agent: Some("vim".into()), ..Default::default() }).starts_with("agent:"));
        assert!(refused(SearchInput { until: Some("yesterday".into()), ..Default::default() }).starts_with("until:"));
        // A quoted value is cut, however long it was.
        let long = "r".repeat(10_000);
        assert!(refused(SearchInput { role: Some(long), ..Default::default() }).len() < 200);
    }

    #[test]
    fn the_sessions_list_takes_its_defaults_and_refuses_what_it_cannot_take() {
        let q = SessionsInput { q: Some("  ".into()), cursor: Some(String::new()), ..Default::default() }
            .parse(50, 500)
            .unwrap();
        assert_eq!((q.limit, q.text, q.cursor), (50, None, None));
        let q = SessionsInput { since: Some("2026-02-01".into()), limit: Some(3), ..Default::default() }
            .parse(50, 500)
            .unwrap();
        assert_eq!((q.since.as_deref(), q.limit), (Some("2026-02-01T00:00:00.000Z"), 3));
        let refused = |input: SessionsInput| input.parse(20, 100).unwrap_err().to_string();
        assert!(refused(SessionsInput { limit: Some(101), ..Default::default() }).starts_with("limit:"));
        assert!(refused(SessionsInput { agent: Some("vim".into()), ..Default::default() }).starts_with("agent:"));
        assert!(refused(SessionsInput { since: Some("soon".into()), ..Default::default() }).starts_with("since:"));
    }

    #[test]
    fn a_usage_report_and_the_overview_take_their_defaults_and_refuse_what_they_cannot_take() {
        let u = UsageInput { since: Some("2026-02-01".into()), ..Default::default() }.parse().unwrap();
        assert_eq!((u.by, u.filter().since), (usage::By::Day, Some("2026-02-01T00:00:00.000Z")));
        assert!(UsageInput { by: Some("hour".into()), ..Default::default() }.parse().is_err());
        assert!(UsageInput { agent: Some("vim".into()), ..Default::default() }.parse().is_err());
        let st = StatsInput { tz: Some("-5".into()), limit: Some("3".into()), ..Default::default() }.parse().unwrap();
        assert_eq!((st.filter().tz_hours, st.filter().limit), (-5, Some(3)));
        for tz in ["15", "+1.5", "UTC"] {
            let e = StatsInput { tz: Some(tz.into()), ..Default::default() }.parse().unwrap_err().to_string();
            assert!(e.starts_with("tz:"), "{tz}: {e}");
        }
        let e = StatsInput { limit: Some("0".into()), ..Default::default() }.parse().unwrap_err().to_string();
        assert!(e.starts_with("limit:"), "{e}");
    }
}
