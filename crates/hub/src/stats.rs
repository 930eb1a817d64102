//! The overview on the hub (`GET /api/stats` of `serve --postgres`): the sums each host's index
//! keeps by session and UTC hour, which a push sends with each session's row (`stats_hours`,
//! `tool_hours`, `response_hours`, `usage_hours` and `edits`), grouped by PostgreSQL as an index
//! groups its own ([`StatsSource`]); the read crate makes the overview of the answers
//! ([`scrollback_read::stats::stats_of`]), so that a day's figures on the hub are the sum of the
//! hosts' own. A session is a host's: two hosts' sessions are two, whatever their ids.

use tokio_postgres::Row;

use scrollback_core::error::Result;
use scrollback_read::stats::{
    Bounds, Edit, GroupSum, MessageSum, SessionFigure, SessionSpend, SpendSum, StatsSource, ToolUse,
};

use crate::Pg;
use crate::search::Args;
use crate::store::HubStore;
use crate::usage::{count, sum, token_sums, tokens_at};

/// An hour as the hosts' sums name it, `YYYY-MM-DDTHH` (UTC): a sum whose hour is anything else
/// (a line's own malformed time) is in no figure, as in an index's overview.
const HOUR: &str = r"^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])T([01]\d|2[0-3])$";

/// The hub's sums, read through a connection of `serve --postgres`.
pub(crate) struct HubStats<'a>(pub(crate) &'a HubStore);

/// A query of the sums table `table` (as `h`, joined to its session `s`) within `b`: its `FROM`
/// and `WHERE`, and their parameters, to which the caller may add.
struct Within {
    args: Args,
    from: String,
    /// The local time of `h.hour`, in `b`'s time zone.
    local: String,
}

impl Within {
    /// `time` is the column the bounds are on (`h.hour`, or an edit's timestamp).
    fn new(b: &Bounds, table: &str, time: &str) -> Within {
        let mut args = Args::default();
        let mut from =
            format!("{table} h JOIN sessions s ON s.host = h.host AND s.id = h.session_id WHERE {time} IS NOT NULL");
        if time == "h.hour" {
            from.push_str(&format!(" AND h.hour ~ '{HOUR}'"));
        }
        let mut cond = |sql: &str, value: &Option<String>| {
            if let Some(v) = value {
                from.push_str(&sql.replace('?', &args.add(v.clone())));
            }
        };
        cond(&format!(r#" AND {time} COLLATE "C" >= ?"#), &b.since);
        cond(&format!(r#" AND {time} COLLATE "C" < ?"#), &b.until);
        cond(" AND s.agent = ?", &b.agent);
        cond(" AND s.project = ?", &b.project);
        // The offset is a whole number of hours from -12 to 14 (checked by `stats_of`).
        let local = format!("((h.hour || ':00:00')::timestamp + interval '{} hours')", b.tz_hours);
        Within { args, from, local }
    }

    /// `one` session's rows only.
    fn of(mut self, one: &SessionFigure) -> Within {
        let host = self.args.add(one.host.clone().unwrap_or_default());
        let id = self.args.add(one.session_id.clone());
        self.from.push_str(&format!(" AND h.host = {host} AND h.session_id = {id}"));
        self
    }

    fn day(&self) -> String {
        format!("to_char({}, 'YYYY-MM-DD')", self.local)
    }

    fn rows(&self, store: &HubStore, select: &str, rest: &str) -> Result<Vec<Row>> {
        store.query(&format!("SELECT {select} FROM {} {rest}", self.from), &self.args.refs())
    }
}

impl HubStats<'_> {
    /// The ledger by session, model, tier and context size, within `w`.
    fn session_sums(&self, b: &Bounds, w: Within) -> Result<Vec<SessionSpend>> {
        let over = b.over("h.over");
        let rows = w.rows(
            self.0,
            &format!(
                "h.host, h.session_id, h.model, h.tier, ({over})::bigint, {responses}, {tokens},
                 max(s.title), max(s.project), max(s.agent), max(s.first_timestamp), max(s.last_timestamp)",
                responses = sum("h.responses"),
                tokens = token_sums("h"),
            ),
            "GROUP BY 1, 2, 3, 4, 5",
        )?;
        rows.iter()
            .map(|r| {
                Ok(SessionSpend {
                    session: SessionFigure {
                        host: r.try_get(0).pg()?,
                        session_id: r.try_get(1).pg()?,
                        title: r.try_get(12).pg()?,
                        project: r.try_get(13).pg()?,
                        agent: r.try_get::<_, Option<String>>(14).pg()?.unwrap_or_default(),
                        first_timestamp: r.try_get(15).pg()?,
                        last_timestamp: r.try_get(16).pg()?,
                        ..SessionFigure::default()
                    },
                    model: r.try_get(2).pg()?,
                    tier: r.try_get(3).pg()?,
                    over: r.try_get(4).pg()?,
                    responses: count(r, 5)?,
                    tokens: tokens_at(r, 6)?,
                })
            })
            .collect::<Result<_>>()
    }
}

impl StatsSource for HubStats<'_> {
    fn messages(&self, b: &Bounds) -> Result<Vec<MessageSum>> {
        let w = Within::new(b, "stats_hours", "h.hour");
        let select = format!(
            "{day}, extract(dow FROM {local})::bigint, extract(hour FROM {local})::bigint, {messages}, {prompts}",
            day = w.day(),
            local = w.local,
            messages = sum("h.messages"),
            prompts = sum("h.prompts"),
        );
        w.rows(self.0, &select, "GROUP BY 1, 2, 3")?
            .iter()
            .map(|r| {
                Ok(MessageSum {
                    day: r.try_get(0).pg()?,
                    weekday: r.try_get(1).pg()?,
                    hour: r.try_get(2).pg()?,
                    messages: count(r, 3)?,
                    prompts: count(r, 4)?,
                })
            })
            .collect::<Result<_>>()
    }

    fn sessions_by_day(&self, b: &Bounds) -> Result<Vec<(String, u64)>> {
        let w = Within::new(b, "stats_hours", "h.hour");
        let select = format!("{}, count(DISTINCT (h.host, h.session_id))", w.day());
        w.rows(self.0, &select, "GROUP BY 1")?
            .iter()
            .map(|r| Ok((r.try_get(0).pg()?, count(r, 1)?)))
            .collect::<Result<_>>()
    }

    fn projects_and_agents(&self, b: &Bounds) -> Result<Vec<GroupSum>> {
        let w = Within::new(b, "stats_hours", "h.hour");
        let select = format!("s.project, s.agent, count(DISTINCT (h.host, h.session_id)), {}", sum("h.messages"));
        w.rows(self.0, &select, "GROUP BY 1, 2")?
            .iter()
            .map(|r| {
                Ok(GroupSum {
                    project: r.try_get(0).pg()?,
                    agent: r.try_get(1).pg()?,
                    sessions: count(r, 2)?,
                    messages: count(r, 3)?,
                })
            })
            .collect::<Result<_>>()
    }

    fn spend(&self, b: &Bounds) -> Result<Vec<SpendSum>> {
        let w = Within::new(b, "usage_hours", "h.hour");
        let select = format!(
            "{day}, s.project, s.agent, h.model, h.tier, ({over})::bigint, {responses}, {tokens}",
            day = w.day(),
            over = b.over("h.over"),
            responses = sum("h.responses"),
            tokens = token_sums("h"),
        );
        w.rows(self.0, &select, "GROUP BY 1, 2, 3, 4, 5, 6")?
            .iter()
            .map(|r| {
                Ok(SpendSum {
                    day: r.try_get(0).pg()?,
                    project: r.try_get(1).pg()?,
                    agent: r.try_get(2).pg()?,
                    model: r.try_get(3).pg()?,
                    tier: r.try_get(4).pg()?,
                    over: r.try_get(5).pg()?,
                    responses: count(r, 6)?,
                    tokens: tokens_at(r, 7)?,
                })
            })
            .collect::<Result<_>>()
    }

    fn tools(&self, b: &Bounds) -> Result<Vec<ToolUse>> {
        let w = Within::new(b, "tool_hours", "h.hour");
        let select = format!("h.tool, {}, {}", sum("h.calls"), sum("h.failures"));
        w.rows(self.0, &select, r#"GROUP BY 1 ORDER BY 2 DESC, h.tool COLLATE "C""#)?
            .iter()
            .map(|r| {
                Ok({
                    let (calls, failures) = (count(r, 1)?, count(r, 2)?);
                    let failure_rate = if calls == 0 { 0.0 } else { failures as f64 / calls as f64 };
                    ToolUse { tool: r.try_get(0).pg()?, calls, failures, failure_rate }
                })
            })
            .collect::<Result<_>>()
    }

    fn response_times(&self, b: &Bounds) -> Result<Vec<(String, i64, u64)>> {
        let w = Within::new(b, "response_hours", "h.hour");
        let select = format!("h.model, h.bucket::bigint, {}", sum("h.responses"));
        w.rows(self.0, &select, "GROUP BY 1, 2")?
            .iter()
            .map(|r| Ok((r.try_get(0).pg()?, r.try_get(1).pg()?, count(r, 2)?)))
            .collect::<Result<_>>()
    }

    fn recent_edits(&self, b: &Bounds) -> Result<Vec<Edit>> {
        let w = Within::new(b, "edits", "h.timestamp");
        let rows = w.rows(
            self.0,
            "h.timestamp, h.path, h.tool, h.added, h.removed, h.session_id, s.title, s.project, h.host",
            &format!(
                r#"ORDER BY h.timestamp COLLATE "C" DESC, h.local_id DESC, h.ordinal DESC, h.host LIMIT {}"#,
                b.limit
            ),
        )?;
        rows.iter()
            .map(|r| {
                Ok(Edit {
                    timestamp: r.try_get(0).pg()?,
                    path: r.try_get(1).pg()?,
                    tool: r.try_get::<_, Option<String>>(2).pg()?.unwrap_or_default(),
                    added: count(r, 3)?,
                    removed: count(r, 4)?,
                    session_id: r.try_get(5).pg()?,
                    title: r.try_get(6).pg()?,
                    project: r.try_get(7).pg()?,
                    host: r.try_get(8).pg()?,
                })
            })
            .collect::<Result<_>>()
    }

    fn longest(&self, b: &Bounds) -> Result<Vec<SessionFigure>> {
        let w = Within::new(b, "stats_hours", "h.hour");
        let select = format!(
            "h.host, h.session_id, {}, max(s.title), max(s.project), max(s.agent), max(s.first_timestamp),
             max(s.last_timestamp)",
            sum("h.messages")
        );
        let rows = w.rows(
            self.0,
            &select,
            &format!(r#"GROUP BY 1, 2 ORDER BY 3 DESC, h.session_id COLLATE "C", h.host LIMIT {}"#, b.limit),
        )?;
        rows.iter()
            .map(|r| {
                Ok(SessionFigure {
                    host: r.try_get(0).pg()?,
                    session_id: r.try_get(1).pg()?,
                    messages: count(r, 2)?,
                    title: r.try_get(3).pg()?,
                    project: r.try_get(4).pg()?,
                    agent: r.try_get::<_, Option<String>>(5).pg()?.unwrap_or_default(),
                    first_timestamp: r.try_get(6).pg()?,
                    last_timestamp: r.try_get(7).pg()?,
                    ..SessionFigure::default()
                })
            })
            .collect::<Result<_>>()
    }

    fn session_spend(&self, b: &Bounds, one: Option<&SessionFigure>) -> Result<Vec<SessionSpend>> {
        let w = Within::new(b, "usage_hours", "h.hour");
        self.session_sums(
            b,
            match one {
                Some(one) => w.of(one),
                None => w,
            },
        )
    }

    fn session_messages(&self, b: &Bounds, one: &SessionFigure) -> Result<u64> {
        let w = Within::new(b, "stats_hours", "h.hour").of(one);
        match w.rows(self.0, &sum("h.messages"), "")?.first() {
            Some(r) => count(r, 0),
            None => Ok(0),
        }
    }

    fn marked_title(&self, session_id: &str) -> Result<Option<String>> {
        // As the session list takes it (`store::SESSION_COLUMNS`): the latest mark on any host.
        let sql = "SELECT m.title FROM marks m WHERE m.session_id = $1 ORDER BY m.set_at DESC LIMIT 1";
        match self.0.query_opt(sql, &[&session_id])? {
            Some(r) => r.try_get(0).pg(),
            None => Ok(None),
        }
    }

    fn first_said(&self, host: Option<&str>, session_id: &str) -> Result<Option<String>> {
        let sql = concat!("SELECT ", crate::store::first_said!(), " FROM sessions s WHERE s.host = $1 AND s.id = $2");
        match self.0.query_opt(sql, &[&host.unwrap_or_default(), &session_id])? {
            Some(r) => r.try_get(0).pg(),
            None => Ok(None),
        }
    }
}
