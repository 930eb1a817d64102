//! What the schema's migrations leave to Rust: the steps of old versions that need the formats'
//! parsers or the writer's rules, which SQL cannot run. Each migration that needs one leaves a
//! `pending:` key in `scrollback_meta` (in the transaction of its `user_version` bump:
//! [`scrollback_core::db`]), and [`finish`] runs what is pending, in version order, when the writer
//! next opens the index; a rebuild runs them over the rows it carried over ([`carried_over`]). Each
//! step is one transaction that also clears its key, so a crash midway leaves it to run again.
//!
//! Here: version 4's columns (each entry's order, copies, search text and sub-agent fields, each
//! session's title, branch and counts) and version 12's search columns. The ledger's and the
//! overview's (versions 8 and 13) are their own modules' whole derivations run over the old rows
//! (`usage::backfill`, `stats::backfill`), called from here.

use std::collections::HashMap;
use std::path::Path;

use rusqlite::{Connection, params};

use crate::rows::{kept_title, mark_copies, recount_session};
use scrollback_core::codec::order::Order;
use scrollback_core::db::{BACKFILL_PENDING, SEARCH_PENDING, STATS_PENDING};
use scrollback_core::error::Result;
use scrollback_core::format::{self, title_rank};

/// Runs every step a migration left pending, in version order: at each open of the writer, after
/// the SQL migrations (and an interrupted bulk load's end).
pub(crate) fn finish(conn: &Connection) -> Result<()> {
    backfill_v4(conn)?;
    backfill_search(conn)?;
    crate::usage::backfill(conn)?;
    crate::usage::check_sums(conn)?;
    crate::stats::backfill(conn)?;
    Ok(())
}

/// Derives what a rebuild carried over from the old index (rows of gone transcripts, copied as
/// they were stored): every step, as for an index of the oldest version.
pub(crate) fn carried_over(conn: &Connection) -> Result<()> {
    let mark = |key: &str, what: &str| {
        conn.execute("INSERT OR IGNORE INTO scrollback_meta (key, value) VALUES (?1, ?2)", [key, what])
    };
    mark(BACKFILL_PENDING, "derive the columns of carried-over rows")?;
    backfill_v4(conn)?;
    backfill_search(conn)?;
    mark(crate::usage::BACKFILL_PENDING, "make the ledger of carried-over rows")?;
    crate::usage::backfill(conn)?;
    mark(STATS_PENDING, "make the overview sums of carried-over rows")?;
    crate::stats::backfill(conn)?;
    Ok(())
}

/// Whether a migration left `key` in `scrollback_meta`: work it could not do in SQL, still to do.
fn pending(conn: &Connection, key: &str) -> Result<bool> {
    Ok(conn.query_row("SELECT EXISTS (SELECT 1 FROM scrollback_meta WHERE key = ?1)", [key], |r| r.get(0))?)
}

/// Fills in the columns version 4 added for rows written before it (the migration's pending part,
/// `db::BACKFILL_PENDING`), in one transaction: each entry's order, copies, search text and sub-agent
/// fields (the stored line described again), then each session's title, git branch and counts. Does
/// nothing when nothing is pending. Every row before version 4 is the default format's
/// ([`format::DEFAULT`], Claude Code's): no other format was read then.
fn backfill_v4(conn: &Connection) -> Result<()> {
    if !pending(conn, BACKFILL_PENDING)? {
        return Ok(());
    }
    let started = std::time::Instant::now();
    let tx = conn.unchecked_transaction()?;
    backfill_orders(&tx)?;
    mark_copies(&tx)?;
    let (titles, branches) = describe_again(&tx)?;
    retitle_sessions(&tx, titles, branches)?;
    tx.execute("DELETE FROM scrollback_meta WHERE key = ?1", [BACKFILL_PENDING])?;
    tx.commit()?;
    tracing::info!(
        seconds = started.elapsed().as_secs_f64(),
        "index: rows written before version 4 brought up to date"
    );
    Ok(())
}

/// The order of every entry written before version 4 ([`backfill_v4`]): the file part from each
/// file's path, the time part as the running maximum per file.
fn backfill_orders(tx: &Connection) -> Result<()> {
    let mut stmt = tx.prepare(
        "SELECT DISTINCT f.id, f.path, e.session_id, f.agent FROM files f JOIN entries e ON e.file_id = f.id",
    )?;
    let files: Vec<(i64, String, String, String)> =
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))?.collect::<rusqlite::Result<_>>()?;
    drop(stmt);
    for (file_id, path, session, agent) in &files {
        // The file part by the file's own format (a rebuild brings every format's rows here).
        let own = format::by_name(agent).unwrap_or(format::DEFAULT);
        tx.execute(
            "UPDATE entries SET sort_file = ?1 WHERE file_id = ?2 AND session_id = ?3",
            params![own.file_key(Path::new(path), session), file_id, session],
        )?;
    }
    tx.execute_batch(
        "UPDATE entries SET sort_at = r.at FROM (
             SELECT id, coalesce(max(timestamp) OVER (PARTITION BY file_id ORDER BY line), '') AS at FROM entries
         ) AS r WHERE r.id = entries.id",
    )?;
    Ok(())
}

/// Each session's best title: its rank, the order of the entry it came from, and the title.
type Titles = HashMap<String, (u8, Order, String)>;

/// Each session's git branch: the order of the last entry that names one, and the branch.
type Branches = HashMap<String, (Order, String)>;

/// Each stored line described again ([`backfill_v4`]): its search text and sub-agent fields where
/// they changed. Returns each session's best title, with its rank and order, and its git branch.
fn describe_again(tx: &Connection) -> Result<(Titles, Branches)> {
    let mut titles = Titles::new();
    let mut branches = Branches::new();
    let mut after = 0i64;
    loop {
        let mut stmt = tx.prepare_cached(
            "SELECT id, session_id, sort_at, sort_file, line, duplicate, stored_line(stripped), agent FROM entries
             WHERE id > ?1 AND stripped IS NOT NULL ORDER BY id LIMIT 1000",
        )?;
        type Row = (i64, String, String, i64, i64, bool, String, String);
        let rows: Vec<Row> = stmt
            .query_map([after], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?, r.get(6)?, r.get(7)?))
            })?
            .collect::<rusqlite::Result<_>>()?;
        drop(stmt);
        let Some(last) = rows.last() else { break };
        after = last.0;
        for (id, session, at, file, line, duplicate, stripped, agent) in rows {
            // Each row by its own format: a rebuild describes the rows of every format here (those
            // written before version 4 are the default's, and say so in `agent`).
            let own = format::by_name(&agent).unwrap_or(format::DEFAULT);
            let Ok(meta) = own.describe(&stripped, line as u64, &format::FileContext::default()) else {
                continue;
            };
            let order = Order { at, file, line };
            if let Some(branch) = meta.git_branch.clone().filter(|_| !duplicate)
                && branches.get(&session).is_none_or(|(old_order, _)| &order >= old_order)
            {
                branches.insert(session.clone(), (order.clone(), branch));
            }
            set_search_text(tx, id, &meta)?;
            if meta.agent_id.is_some() || meta.spawned_agent.is_some() {
                tx.prepare_cached("UPDATE entries SET agent_id = ?1, spawned_agent = ?2 WHERE id = ?3")?
                    .execute(params![meta.agent_id, meta.spawned_agent, id])?;
            }
            let title = meta.title.filter(|_| !duplicate);
            if let Some((rank, title)) = title {
                let best = titles.get(&session);
                if best.is_none_or(|(old, old_order, _)| title_rank::replaces(rank, &order, *old, old_order)) {
                    titles.insert(session, (rank, order, title));
                }
            }
        }
    }
    Ok((titles, branches))
}

/// The search columns of entry `id` set to `meta`'s where they differ (the full-text triggers
/// follow).
fn set_search_text(tx: &Connection, id: i64, meta: &format::Meta) -> Result<()> {
    tx.prepare_cached(
        "UPDATE entries SET text = ?1, tool_text = ?2, tools = ?3
         WHERE id = ?4 AND (text IS NOT ?1 OR tool_text IS NOT ?2 OR tools IS NOT ?3)",
    )?
    .execute(params![meta.text, meta.tool_text, meta.tools, id])?;
    Ok(())
}

/// Splits the search text of rows written before version 12 into the three search columns (the
/// migration's pending part, `db::SEARCH_PENDING`): each stored line described again by its own
/// format, a thousand rows at a time, in one transaction. Does nothing when nothing is pending.
fn backfill_search(conn: &Connection) -> Result<()> {
    if !pending(conn, SEARCH_PENDING)? {
        return Ok(());
    }
    let started = std::time::Instant::now();
    let tx = conn.unchecked_transaction()?;
    let mut after = 0i64;
    loop {
        let mut stmt = tx.prepare_cached(
            "SELECT id, line, stored_line(stripped), agent FROM entries WHERE id > ?1 AND stripped IS NOT NULL ORDER BY id LIMIT 1000",
        )?;
        let rows: Vec<(i64, i64, String, String)> = stmt
            .query_map([after], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))?
            .collect::<rusqlite::Result<_>>()?;
        drop(stmt);
        let Some(last) = rows.last() else { break };
        after = last.0;
        for (id, line, stripped, agent) in rows {
            let own = format::by_name(&agent).unwrap_or(format::DEFAULT);
            if let Ok(meta) = own.describe(&stripped, line as u64, &format::FileContext::default()) {
                set_search_text(&tx, id, &meta)?;
            }
        }
    }
    tx.execute("DELETE FROM scrollback_meta WHERE key = ?1", [SEARCH_PENDING])?;
    tx.commit()?;
    tracing::info!(seconds = started.elapsed().as_secs_f64(), "index: search text split into its three columns");
    Ok(())
}

/// Each session's counts recomputed, and its title and git branch set from `titles` and `branches`
/// (none if it has none there).
fn retitle_sessions(tx: &Connection, mut titles: Titles, mut branches: Branches) -> Result<()> {
    let mut stmt = tx.prepare("SELECT id FROM sessions")?;
    let sessions: Vec<String> = stmt.query_map([], |r| r.get(0))?.collect::<rusqlite::Result<_>>()?;
    drop(stmt);
    for session in sessions {
        recount_session(tx, &session)?;
        let (rank, order, title) = match titles.remove(&session) {
            Some((rank, order, title)) => (rank, Some(order.key()), Some(kept_title(rank, title))),
            None => (0, None, None),
        };
        let (branch_order, branch) = match branches.remove(&session) {
            Some((order, branch)) => (Some(order.key()), Some(branch)),
            None => (None, None),
        };
        tx.execute(
            "UPDATE sessions SET title = ?1, title_rank = ?2, title_order = ?3, git_branch = ?4, git_branch_order = ?5
             WHERE id = ?6",
            params![title, rank, order, branch, branch_order, session],
        )?;
    }
    Ok(())
}
