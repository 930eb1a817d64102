//! An index's source of the overview's figures ([`StatsSource`]): small `GROUP BY`s over the sums
//! its writer keeps by session and hour.

use rusqlite::{Connection, OptionalExtension, params};

use super::*;
use crate::history::first_said;

/// An index's sums ([`stats`]), read through its SQLite connection.
pub(super) struct IndexStats<'a>(pub(super) &'a Connection);

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

    fn first_said(&self, _host: Option<&str>, session_id: &str) -> Result<Option<String>> {
        let sql = concat!("SELECT ", first_said!("s"), " FROM sessions s WHERE s.id = ?1");
        let said = self.0.prepare_cached(sql)?.query_row([session_id], |r| r.get(0)).optional()?;
        Ok(said.flatten())
    }
}
