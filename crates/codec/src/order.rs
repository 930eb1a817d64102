//! Conversation order: where an entry stands in its session, whichever of the session's files it
//! came from and whenever that file was indexed.
//!
//! A session is often several files: the main transcript (`<sessionId>.jsonl`), sub-agent
//! transcripts (`<sessionId>/subagents/agent-*.jsonl`, or `agent-*.jsonl` beside it), a resumed copy.
//! Each entry gets an [`Order`] when it is written, and it never changes:
//! - `at`: the latest `timestamp` of its file up to and including its line (the running maximum, so
//!   that within one file the order is the line order even where a clock stepped back; `""` before
//!   the file's first timestamp);
//! - `file`: 0 for the session's main transcript, else a number derived from the file's name (its
//!   format's `Format::file_key` (in `scrollback-core`): stable, the same wherever the tree is, and
//!   independent of when the file was indexed);
//! - `line`: its line number.
//!
//! History sorts by `(at, file, line)`: side chains and sub-agents land where they happened in time,
//! the main transcript first among entries of the same instant. Timestamps are compared as written
//! (Claude Code writes RFC 3339 UTC with milliseconds, which sorts as text).

/// An entry's place in its session's conversation (see the module documentation).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct Order {
    /// The running maximum of its file's timestamps, `""` before the first one.
    pub at: String,
    /// 0 for the main transcript, else a number from the file's name (below 2^52, so that it is
    /// exact as a JSON number in a browser too).
    pub file: i64,
    /// Its line number in its file.
    pub line: i64,
}

impl Order {
    /// The order as one string that sorts as the order does (fixed-width numbers, separators below
    /// any printable character): how sessions compare where their title came from, in SQL.
    pub fn key(&self) -> String {
        format!("{}\u{1}{:016}\u{1}{:012}", self.at, self.file, self.line)
    }
}

/// The running maximum of a file's timestamps after a line with `timestamp`, from `previous`.
pub fn advance(previous: &str, timestamp: Option<&str>) -> String {
    match timestamp {
        Some(ts) if ts > previous => ts.to_owned(),
        _ => previous.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_sort_as_orders_do() {
        let orders = [
            Order { at: String::new(), file: 0, line: 2 },
            Order { at: "2026-01-01T10:00:00Z".into(), file: 0, line: 1 },
            Order { at: "2026-01-01T10:00:00Z".into(), file: 7, line: 1 },
            Order { at: "2026-01-01T10:00:00.5Z".into(), file: 0, line: 1 },
            Order { at: "2026-01-01T10:00:00Z0".into(), file: 0, line: 1 },
        ];
        for a in &orders {
            for b in &orders {
                assert_eq!(a.cmp(b), a.key().cmp(&b.key()), "{a:?} {b:?}");
            }
        }
        assert_eq!(advance("b", Some("a")), "b");
        assert_eq!(advance("b", Some("c")), "c");
        assert_eq!(advance("b", None), "b");
    }
}
