//! What a full-text query may cost: the checks that refuse one before it runs (too long, too many
//! terms, too many prefix terms), the bound on SQLite's steps while it runs, and how a failed one
//! reads ([`Error::BadQuery`] when it is the caller's mistake).
//!
//! Never runs a query it refused, nor lets one hold a connection past [`QUERY_STEPS`].

use rusqlite::Connection;

use scrollback_core::error::{Error, Result};

/// The most terms a full-text query may have.
pub const MAX_TERMS: usize = 32;
/// The most prefix terms (`word*`) a full-text query may have: each expands to every word it
/// begins, the costliest part of a query.
pub const MAX_PREFIX_TERMS: usize = 4;
/// The longest full-text query, in bytes.
pub const MAX_QUERY: usize = 1000;
/// The most SQLite virtual machine steps one full-text query may take (about a second of work on
/// this project's machines) before it is stopped and refused.
pub const QUERY_STEPS: u64 = 50_000_000;

/// Refuses a full-text query over the budget before it runs: too long, too many terms, too many
/// prefix terms. The answer says which.
pub fn check_query(query: &str) -> Result<()> {
    if query.len() > MAX_QUERY {
        return Err(Error::BadQuery(format!("search query: {} bytes; at most {MAX_QUERY}", query.len())));
    }
    // Terms as FTS5 sees them, near enough: white space outside double quotes separates them.
    let mut terms = Vec::new();
    let mut quoted = false;
    let mut term = String::new();
    for c in query.chars() {
        match c {
            '"' => {
                quoted = !quoted;
                term.push(c);
            }
            c if c.is_whitespace() && !quoted => terms.push(std::mem::take(&mut term)),
            c => term.push(c),
        }
    }
    terms.push(term);
    let terms: Vec<&String> =
        terms.iter().filter(|t| !t.is_empty() && !["AND", "OR", "NOT", "NEAR"].contains(&t.as_str())).collect();
    let prefixes = terms.iter().filter(|t| t.trim_end_matches([')', '"']).ends_with('*')).count();
    if terms.len() > MAX_TERMS {
        return Err(Error::BadQuery(format!("search query: {} terms; at most {MAX_TERMS}", terms.len())));
    }
    if prefixes > MAX_PREFIX_TERMS {
        return Err(Error::BadQuery(format!(
            "search query: {prefixes} prefix terms (word*); at most {MAX_PREFIX_TERMS}"
        )));
    }
    Ok(())
}

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
    fn queries_over_the_budget_are_refused_before_they_run() {
        assert!(check_query("harbour photo*").is_ok());
        assert!(check_query("\"a long quoted phrase with many words inside it\" AND other").is_ok());
        let prefixes = ["a*"; MAX_PREFIX_TERMS + 1].join(" ");
        assert!(matches!(check_query(&prefixes), Err(Error::BadQuery(m)) if m.contains("prefix")));
        let terms = ["w"; MAX_TERMS + 1].join(" ");
        assert!(matches!(check_query(&terms), Err(Error::BadQuery(m)) if m.contains("terms")));
        assert!(matches!(check_query(&"x".repeat(MAX_QUERY + 1)), Err(Error::BadQuery(_))));
    }

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
