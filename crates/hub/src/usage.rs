//! Usage reports on the hub: the ledger every host pushed (`usage`), summed by PostgreSQL as an
//! index sums its own (`scrollback_read::usage`: the same groups, bounds and long-context sizes),
//! each sum priced by the read crate ([`report_of`]), so that a day's cost on the hub is the sum of
//! the hosts' own.

use tokio_postgres::Row;

use scrollback_core::error::Result;
use scrollback_core::format::{Tokens, usage};
use scrollback_read::prices::Prices;
use scrollback_read::usage::{Bounds, By, Filter, LedgerSum, Report, report_of};

use crate::Pg;
use crate::search::Args;
use crate::store::HubStore;

/// A group's key, as an index's report makes it (a week is its Monday's day).
fn group(by: By) -> &'static str {
    match by {
        By::Day => "u.day",
        By::Week => {
            r#"CASE WHEN u.day ~ '^\d{4}-\d{2}-\d{2}$'
                    THEN to_char(u.day::date - (extract(isodow FROM u.day::date)::int - 1), 'YYYY-MM-DD') END"#
        }
        By::Month => "substr(u.day, 1, 7)",
        By::Session => "u.session_id",
        By::Project => "s.project",
        By::Model => "u.model",
        By::Agent => "u.agent",
    }
}

/// The six token columns of `alias`, each summed ([`sum`]).
pub(crate) fn token_sums(alias: &str) -> String {
    ["input", "output", "cache_read", "cache_write", "cache_write_1h", "reasoning"]
        .map(|c| sum(&format!("{alias}.{c}_tokens")))
        .join(", ")
}

/// A count column's value (none, or less than none, is 0).
pub(crate) fn count(r: &Row, i: usize) -> Result<u64> {
    Ok(r.try_get::<_, Option<i64>>(i).pg()?.unwrap_or(0).max(0) as u64)
}

/// The six token sums of [`token_sums`], from column `i` on.
pub(crate) fn tokens_at(r: &Row, i: usize) -> Result<Tokens> {
    Ok(Tokens {
        input: count(r, i)?,
        output: count(r, i + 1)?,
        cache_read: count(r, i + 2)?,
        cache_write: count(r, i + 3)?,
        cache_write_1h: count(r, i + 4)?,
        reasoning: count(r, i + 5)?,
    })
}

/// A sum of a count column that cannot overflow (PostgreSQL sums `bigint` as `numeric`), at most
/// the largest `bigint`.
pub(crate) fn sum(column: &str) -> String {
    format!("least(coalesce(sum({column}), 0), 9223372036854775807)::bigint")
}

/// The report of the hub's ledger grouped `by`, within `filter`, priced by `prices`.
pub(crate) fn report(store: &HubStore, by: By, filter: Filter<'_>, prices: &Prices) -> Result<Report> {
    let bounds = Bounds::new(&filter)?;
    let mut args = Args::default();
    let mut conditions = String::new();
    let mut cond = |sql: &str, value: Option<&str>| {
        if let Some(v) = value {
            conditions.push_str(&sql.replace('?', &args.add(v.to_owned())));
        }
    };
    cond(r#" AND u.day COLLATE "C" >= ?"#, bounds.since_day.as_deref());
    cond(r#" AND u.day COLLATE "C" < ?"#, bounds.until_before.as_deref());
    cond(r#" AND u.day COLLATE "C" <= ?"#, bounds.until_on.as_deref());
    cond(" AND u.agent = ?", filter.agent);
    cond(" AND s.project = ?", filter.project);
    cond(" AND u.session_id = ?", filter.session);
    cond(" AND u.model = ?", filter.model);
    cond(r#" AND u.timestamp COLLATE "C" >= ?"#, bounds.since_at.as_deref());
    cond(r#" AND u.timestamp COLLATE "C" < ?"#, bounds.until_at.as_deref());
    let names = if by == By::Session { "max(s.title), max(s.project)" } else { "NULL::text, NULL::text" };
    let sql = format!(
        r#"SELECT {group}, u.agent, u.model, u.tier, ({over})::bigint AS over, count(*), {tokens},
                  min(u.timestamp COLLATE "C"), max(u.timestamp COLLATE "C"), {names}
           FROM usage u LEFT JOIN sessions s ON s.host = u.host AND s.id = u.session_id
           WHERE true{conditions}
           GROUP BY 1, 2, 3, 4, 5"#,
        group = group(by),
        over = usage::over_sql(&prices.long_context_sizes()),
        tokens = token_sums("u"),
    );
    let rows = store.query(&sql, &args.refs())?;
    let sums = rows.iter().map(|r| {
        Ok(LedgerSum {
            key: r.try_get(0).pg()?,
            agent: r.try_get(1).pg()?,
            model: r.try_get(2).pg()?,
            tier: r.try_get(3).pg()?,
            over: r.try_get(4).pg()?,
            responses: count(r, 5)?,
            tokens: tokens_at(r, 6)?,
            first: r.try_get(12).pg()?,
            last: r.try_get(13).pg()?,
            title: r.try_get(14).pg()?,
            project: r.try_get(15).pg()?,
        })
    });
    Ok(report_of(by, sums.collect::<Result<Vec<_>>>()?, prices))
}
