//! The whole ledger made again from its lines at once, as a bulk load ends ([`settle_all`]): one
//! sorted read of every line, the standing line of each response picked and its sums added up in
//! memory, where the live writer settles the keys a batch touched (`super::settle`).

use rusqlite::{Connection, Statement, params};

use super::{Line, hour_of, insert_group, insert_group_sql};
use scrollback_core::error::Result;
use scrollback_core::format;

/// Derives the whole ledger again from its lines, and its sums: one pass over the lines sorted by
/// key ([`lines_in_key_order`]), the standing line of each key picked here by the same order as
/// `STANDING` (a window over every line made SQLite sort them all, several times slower), each
/// ledger row added to its day's and its hour's sums as it is written (two `GROUP BY`s over the
/// ledger afterwards took as long again). The sums are those [`super::sums`] and [`super::hour_sums`] make.
pub(crate) fn settle_all(tx: &Connection) -> Result<()> {
    // Its reads and writes are in order, so the page cache is of little use here, and SQLite's
    // sorter keeps a page cache's worth of lines in memory before it spills: both at a quarter for
    // this job keep the writer's peak memory where the passes have it.
    let cache: i64 = tx.query_row("PRAGMA cache_size", [], |r| r.get(0))?;
    tx.execute_batch(&format!("PRAGMA cache_size = {}", -(LEDGER_CACHE_KIB as i64)))?;
    let settled = settle_all_within(tx);
    tx.execute_batch(&format!("PRAGMA cache_size = {cache}"))?;
    settled
}

/// Every ledger line, in key order, with its entry's session, its time, day and hour, and its
/// model's name: [`settle_all`]'s one read of the lines. One scan of the lines, each entry looked
/// up in the order of its id (`CROSS JOIN` keeps the lines outside: the other way round reads every
/// entry), and SQLite's sorter. SQLite would rather walk `usage_lines_key` (a lookup into the table
/// for each line, in key order, took longer than the sort), with `NOT INDEXED` and `+u.key` too:
/// a range of the primary key (every entry id is positive) keeps it on the table's own order.
fn lines_in_key_order() -> String {
    let t = "coalesce(u.timestamp, e.timestamp)";
    format!(
        "SELECT u.key, e.session_id, u.agent, m.name, {t}, u.tier, u.input_tokens,
                u.output_tokens, u.cache_read_tokens, u.cache_write_tokens, u.cache_write_1h_tokens,
                u.reasoning_tokens, u.entry_id, u.ordinal,
                coalesce(date({t}), substr({t}, 1, 10)), {hour}
         FROM usage_lines u CROSS JOIN entries e ON e.id = u.entry_id
         LEFT JOIN usage_models m ON m.id = u.model
         WHERE u.entry_id > 0
         ORDER BY +u.key",
        hour = hour_of(t),
    )
}

/// The page cache (and so the sorter's memory) while [`settle_all`] works, in KiB.
const LEDGER_CACHE_KIB: u32 = 4096;

fn settle_all_within(tx: &Connection) -> Result<()> {
    let started = std::time::Instant::now();
    tx.execute("DELETE FROM usage_standing", [])?;
    // The day and hour of each line's time, as SQLite reads times (only the standing line's are
    // used).
    let mut lines = tx.prepare(&lines_in_key_order())?;
    // The place of a line in its session, for the rare tie on everything counted (copies of one
    // line in a session's files): looked up then, not joined for every line (a lookup per line
    // into `entries`, in key order, was most of the time).
    let mut place = tx.prepare("SELECT sort_file, line FROM entries WHERE id = ?1")?;
    // Which line stands for each response, in key order, then into `usage_standing` in its own
    // order: inserted in key order, every row landed anywhere in that table, a page read back
    // each. Through a scratch table, so that SQLite's sorter, not memory, holds them.
    tx.execute_batch(
        "DROP TABLE IF EXISTS temp.standing_in_key_order;
         CREATE TEMP TABLE standing_in_key_order (session_id, entry_id, ordinal, lines);",
    )?;
    let mut insert = tx.prepare(
        "INSERT INTO temp.standing_in_key_order (session_id, entry_id, ordinal, lines) VALUES (?1, ?2, ?3, ?4)",
    )?;
    let mut sums = Sums::default();
    let mut rows = lines.query([])?;
    let mut current: Option<(String, Line, i64)> = None;
    while let Some(r) = rows.next()? {
        let key: String = r.get(0)?;
        let line = Line::from_row(r)?;
        match &mut current {
            Some((k, best, count)) if *k == key => {
                *count += 1;
                if stands(&mut place, &line, best)? {
                    *best = line;
                }
            }
            _ => {
                if let Some((_, best, count)) = current.take() {
                    insert.execute(params![best.session, best.entry_id, best.ordinal, count])?;
                    sums.add(best);
                }
                current = Some((key, line, 1));
            }
        }
    }
    if let Some((_, best, count)) = current.take() {
        insert.execute(params![best.session, best.entry_id, best.ordinal, count])?;
        sums.add(best);
    }
    drop((rows, insert));
    tx.execute_batch(
        "INSERT INTO usage_standing (session_id, entry_id, ordinal, lines)
         SELECT session_id, entry_id, ordinal, lines FROM temp.standing_in_key_order
         ORDER BY session_id, entry_id, ordinal;
         DROP TABLE temp.standing_in_key_order;",
    )?;
    tracing::debug!(seconds = started.elapsed().as_secs_f64(), "ledger made");
    tx.execute("DELETE FROM usage_sums", [])?;
    tx.execute("DELETE FROM usage_hours", [])?;
    sums.write(tx)?;
    tx.execute(
        "INSERT OR REPLACE INTO scrollback_meta (key, value) VALUES (?1, ?2)",
        [scrollback_core::db::USAGE_SUMS_SIZES, &format::usage::context_sizes_text()],
    )?;
    Ok(())
}

/// Strings a sum is grouped by, each kept once ([`Sums`] holds tens of thousands of groups).
#[derive(Default)]
struct Names {
    ids: std::collections::HashMap<String, u32>,
    names: Vec<String>,
}

impl Names {
    fn id(&mut self, name: Option<&str>) -> u32 {
        let Some(name) = name else { return 0 };
        if let Some(&id) = self.ids.get(name) {
            return id;
        }
        self.names.push(name.to_owned());
        let id = self.names.len() as u32;
        self.ids.insert(name.to_owned(), id);
        id
    }

    fn name(&self, id: u32) -> Option<&str> {
        id.checked_sub(1).map(|i| self.names[i as usize].as_str())
    }
}

/// The group of a ledger row in `usage_sums` (by day) or `usage_hours` (by hour): session, day or
/// hour, agent, model, tier ([`Names`]' ids, 0 for none), and the context size its input was over.
type SumKey = (u32, u32, u32, u32, u32, i64);

/// One group's sums: responses, and the six token counts, as [`format::usage::sum_sql`] gives
/// them (exact, else the largest integer).
#[derive(Default)]
struct Sum {
    responses: i64,
    tokens: [i64; 6],
}

impl Sum {
    fn add(&mut self, line: &Line) {
        self.responses += 1;
        for (sum, n) in self.tokens.iter_mut().zip(line.tokens) {
            *sum = sum.saturating_add(n);
        }
    }
}

/// The ledger's sums by day (with their first and last times) and by hour, made in memory as
/// [`settle_all`] writes the ledger: a group per session, day or hour, model and tier, tens of
/// thousands for a year of heavy use.
#[derive(Default)]
struct Sums {
    names: Names,
    days: std::collections::HashMap<SumKey, (Sum, Option<String>, Option<String>)>,
    hours: std::collections::HashMap<SumKey, Sum>,
}

impl Sums {
    fn add(&mut self, line: Line) {
        let over = line.over();
        let n = &mut self.names;
        let (session, agent) = (n.id(Some(&line.session)), n.id(Some(&line.agent)));
        let (model, tier) = (n.id(line.model.as_deref()), n.id(line.tier.as_deref()));
        let (day, hour) = (n.id(line.day.as_deref()), n.id(line.hour.as_deref()));
        let (sum, first, last) = self.days.entry((session, day, agent, model, tier, over)).or_default();
        sum.add(&line);
        if let Some(t) = &line.timestamp {
            if first.as_ref().is_none_or(|f| t < f) {
                *first = Some(t.clone());
            }
            if last.as_ref().is_none_or(|l| t > l) {
                *last = Some(t.clone());
            }
        }
        self.hours.entry((session, hour, agent, model, tier, over)).or_default().add(&line);
    }

    fn write(self, tx: &Connection) -> Result<()> {
        let n = &self.names;
        let mut days = tx.prepare(&insert_group_sql(true))?;
        for ((session, day, agent, model, tier, over), (sum, first, last)) in &self.days {
            let group = params![n.name(*session), n.name(*day), n.name(*agent), n.name(*model), n.name(*tier), over];
            insert_group(&mut days, group, sum.responses, sum.tokens, Some((first.as_ref(), last.as_ref())))?;
        }
        let mut hours = tx.prepare(&insert_group_sql(false))?;
        for ((session, hour, agent, model, tier, over), sum) in &self.hours {
            let group = params![n.name(*session), n.name(*hour), n.name(*agent), n.name(*model), n.name(*tier), over];
            insert_group(&mut hours, group, sum.responses, sum.tokens, None)?;
        }
        Ok(())
    }
}

/// Whether `line` stands before `best` by [`STANDING`]: [`Line::standing`], then, on a tie on
/// everything counted, the lines' places, looked up with `place`.
fn stands(place: &mut Statement<'_>, line: &Line, best: &Line) -> Result<bool> {
    Ok(match line.standing(best) {
        std::cmp::Ordering::Less => true,
        std::cmp::Ordering::Greater => false,
        std::cmp::Ordering::Equal => {
            let mut at = |id: i64| place.query_row([id], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?)));
            let (a, b) = (at(line.entry_id)?, at(best.entry_id)?);
            (a, line.ordinal) < (b, best.ordinal)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bulk load reads the ledger's lines in one scan, sorted: through the key index, each
    /// line was a lookup into the table in key order (4 of the 6.5 s the ledger took at 20,000
    /// sessions), and SQLite takes that index for `ORDER BY u.key` even with `NOT INDEXED`. Each
    /// line's entry is looked up by its id, the lines outside: never a scan of every entry.
    #[test]
    fn the_whole_ledger_is_made_from_one_scan_of_its_lines_never_through_the_key_index() {
        let dir = tempfile::tempdir().unwrap();
        let conn = scrollback_core::db::ConnectionKind::Writer.open(&dir.path().join("index.sqlite3")).unwrap();
        let plan: Vec<String> = conn
            .prepare(&format!("EXPLAIN QUERY PLAN {}", lines_in_key_order()))
            .unwrap()
            .query_map([], |r| r.get::<_, String>(3))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap();
        assert_eq!(
            plan,
            [
                "SEARCH u USING PRIMARY KEY (entry_id>?)",
                "SEARCH e USING INTEGER PRIMARY KEY (rowid=?)",
                "SEARCH m USING INTEGER PRIMARY KEY (rowid=?) LEFT-JOIN",
                "USE TEMP B-TREE FOR ORDER BY"
            ],
            "one scan, then SQLite's sorter"
        );
    }
}
