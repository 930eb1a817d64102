//! What a full-text query may cost: the bound on SQLite's steps while it runs, and how a failed one
//! reads ([`Error::BadQuery`] when it is the caller's mistake). How long a query may be, and how
//! many terms and prefixes it may have, is the query language's ([`scrollback_core::query`]).
//!
//! Never lets a query hold a connection past [`QUERY_STEPS`].

use rusqlite::Connection;

use scrollback_core::error::{Error, Result};

/// The most SQLite virtual machine steps one full-text query may take (about a second of work on
/// this project's machines) before it is stopped and refused.
pub const QUERY_STEPS: u64 = 50_000_000;

/// Runs `f` with a bound on the work SQLite may do: past [`QUERY_STEPS`] steps the query is
/// interrupted and refused as [`Error::BadQuery`], so that no query can hold a connection for long.
pub(super) fn within_budget<T>(conn: &Connection, f: impl FnOnce() -> Result<T>) -> Result<T> {
    /// The handler is called every this many steps.
    const EVERY: i32 = 100_000;
    let mut steps = 0u64;
    conn.progress_handler(
        EVERY,
        Some(move || {
            steps += EVERY as u64;
            steps > QUERY_STEPS
        }),
    )?;
    let result = f();
    conn.progress_handler(EVERY, None::<fn() -> bool>)?;
    result.map_err(|e| match &e {
        Error::Sqlite(rusqlite::Error::SqliteFailure(f, _)) if f.code == rusqlite::ErrorCode::OperationInterrupted => {
            Error::BadQuery(
                "search query: it would take too long; narrow it (fewer or longer words, no prefixes)".into(),
            )
        }
        _ => e,
    })
}

/// A failed full-text query: [`Error::BadQuery`] with FTS5's reason when the query could not be
/// parsed (the caller's mistake), the database error otherwise.
pub(super) fn fts_error(e: rusqlite::Error) -> Error {
    match &e {
        rusqlite::Error::SqliteFailure(_, Some(message))
            if ["fts5", "syntax error", "no such column", "unterminated string", "unknown special query"]
                .iter()
                .any(|m| message.contains(m)) =>
        {
            Error::BadQuery(format!("search query: {message}"))
        }
        _ => e.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_query_past_its_steps_is_stopped_and_refused() -> Result<()> {
        let conn = Connection::open_in_memory()?;
        // A query that would run for a very long time: a cross join of a large generated series.
        let slow = within_budget(&conn, || {
            let n: i64 = conn.query_row(
                "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 100000000)
                 SELECT count(*) FROM c",
                [],
                |r| r.get(0),
            )?;
            Ok(n)
        });
        assert!(matches!(slow, Err(Error::BadQuery(m)) if m.contains("too long")));
        // The handler is gone afterwards: the next query runs to its end.
        let n: i64 = conn.query_row(
            "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 10000000) SELECT count(*) FROM c",
            [],
            |r| r.get(0),
        )?;
        assert_eq!(n, 10_000_000);
        Ok(())
    }
}
