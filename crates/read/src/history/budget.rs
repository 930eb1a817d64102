//! What a full-text query may cost: the bound on SQLite's steps while it runs, and how a failed one
//! reads ([`Error::BadQuery`] when it is the caller's mistake). How long a query may be, and how
//! many terms and prefixes it may have, is the query language's ([`scrollback_core::query`]).
//!
//! A search whose caller has gone (an HTTP client that left) is stopped too: the readers' pool
//! ([`crate::pool::Readers::search`]) gives the blocking thread a [`Stop`] flag, which the same
//! handler reads.
//!
//! Never lets a query hold a connection past [`QUERY_STEPS`], nor past its caller.

use std::cell::RefCell;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use rusqlite::Connection;

use scrollback_core::error::{Error, Result};

/// The most SQLite virtual machine steps one full-text query may take (about a second of work on
/// this project's machines) before it is stopped and refused.
pub const QUERY_STEPS: u64 = 50_000_000;

/// Set when the caller of the searches run on this thread has gone: they stop at their next
/// `EVERY` steps.
#[derive(Debug, Clone, Default)]
pub struct Stop(Arc<AtomicBool>);

impl Stop {
    /// Stops the searches this flag was given to.
    pub fn stop(&self) {
        self.0.store(true, Ordering::Relaxed);
    }

    /// Whether [`Stop::stop`] was called.
    pub fn stopped(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }

    /// Runs `f` with this flag as the one the full-text queries `f` runs on this thread read.
    pub fn watching<T>(&self, f: impl FnOnce() -> T) -> T {
        let previous = STOP.with(|s| s.replace(Some(self.clone())));
        let out = f();
        STOP.with(|s| *s.borrow_mut() = previous);
        out
    }

    /// The flag the current thread's queries read, if any.
    pub fn current() -> Option<Stop> {
        STOP.with(|s| s.borrow().clone())
    }
}

thread_local! {
    static STOP: RefCell<Option<Stop>> = const { RefCell::new(None) };
}

/// The progress handler is called every this many steps.
const EVERY: i32 = 100_000;

/// Runs `f` with a bound on the work SQLite may do: past [`QUERY_STEPS`] steps the query is
/// interrupted and refused as [`Error::BadQuery`], so that no query can hold a connection for long;
/// once this thread's [`Stop`] is set, it is interrupted and [`Error::Stopped`].
pub(super) fn within_budget<T>(conn: &Connection, f: impl FnOnce() -> Result<T>) -> Result<T> {
    let stop = Stop::current();
    if stop.as_ref().is_some_and(Stop::stopped) {
        return Err(Error::Stopped);
    }
    let mut steps = 0u64;
    let watched = stop.clone();
    conn.progress_handler(
        EVERY,
        Some(move || {
            steps += EVERY as u64;
            steps > QUERY_STEPS || watched.as_ref().is_some_and(Stop::stopped)
        }),
    )?;
    let result = f();
    conn.progress_handler(EVERY, None::<fn() -> bool>)?;
    result.map_err(|e| match &e {
        Error::Sqlite(rusqlite::Error::SqliteFailure(f, _)) if f.code == rusqlite::ErrorCode::OperationInterrupted => {
            match stop.as_ref().is_some_and(Stop::stopped) {
                true => Error::Stopped,
                false => Error::BadQuery(
                    "search query: it would take too long; narrow it (fewer or longer words, no prefixes)".into(),
                ),
            }
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

    #[test]
    fn a_query_whose_caller_left_is_stopped() -> Result<()> {
        let conn = Connection::open_in_memory()?;
        let stop = Stop::default();
        let count = |to: i64| {
            within_budget(&conn, || {
                let n: i64 = conn.query_row(
                    "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < ?1) SELECT count(*) FROM c",
                    [to],
                    |r| r.get(0),
                )?;
                Ok(n)
            })
        };
        // Watched but not stopped, a query runs to its end; stopped from another thread while it
        // runs, it ends at its next check.
        assert_eq!(stop.watching(|| count(1000))?, 1000);
        let stopped = std::thread::scope(|scope| {
            let stopper = stop.clone();
            scope.spawn(move || {
                std::thread::sleep(std::time::Duration::from_millis(50));
                stopper.stop();
            });
            stop.watching(|| count(i64::MAX))
        });
        assert!(matches!(stopped, Err(Error::Stopped)), "{stopped:?}");
        // Stopped before it starts, a query does not start; unwatched, the flag is nothing to it.
        assert!(matches!(stop.watching(|| count(10)), Err(Error::Stopped)));
        assert_eq!(count(10)?, 10);
        Ok(())
    }
}
