//! A session named by a person: its whole id, or any prefix of it that names one session and no
//! other (`fa812bfe` for `fa812bfe-…`). A prefix shorter than [`MIN_PREFIX`] is refused, and one
//! that names several sessions is an error listing them. The same rule for every command that
//! takes a session; it only reads.

use rusqlite::Connection;

use scrollback_core::error::{Error, Result};

/// The shortest prefix that may name a session: shorter ones name too many to be meant.
pub const MIN_PREFIX: usize = 4;

/// How many candidates an ambiguous prefix lists.
pub const LISTED: usize = 10;

/// The one id of `candidates` that `given` names: `given` itself when it is one of them, else the
/// only one it is a prefix of. Too short a prefix and one that names several are
/// [`Error::BadQuery`], saying why (and the candidates); one that names none is
/// [`Error::UnknownSession`]. `candidates` may hold ids `given` is no prefix of, and repeats.
pub fn pick(given: &str, candidates: impl IntoIterator<Item = String>) -> Result<String> {
    let mut starting: Vec<String> = candidates.into_iter().filter(|c| c.starts_with(given)).collect();
    starting.sort();
    starting.dedup();
    if starting.iter().any(|c| c == given) {
        return Ok(given.to_owned());
    }
    if given.chars().count() < MIN_PREFIX {
        return Err(Error::BadQuery(format!(
            "{given:?} is too short to name a session: give its id, or at least {MIN_PREFIX} characters of it"
        )));
    }
    match starting.len() {
        0 => Err(Error::UnknownSession(format!("{given:?}"))),
        1 => Ok(starting.remove(0)),
        n => {
            let more = if n > LISTED { format!(" and {} more", n - LISTED) } else { String::new() };
            let listed = starting.iter().take(LISTED).map(String::as_str).collect::<Vec<_>>().join(", ");
            let count = if n > LISTED { format!("more than {LISTED}") } else { n.to_string() };
            Err(Error::BadQuery(format!("{given:?} names {count} sessions: {listed}{more}; give more of the id")))
        }
    }
}

/// The sessions of the index whose ids start with `prefix`: enough of them to tell one from
/// several (in id order, by the sessions' key).
pub fn sessions_starting_with(conn: &Connection, prefix: &str) -> Result<Vec<String>> {
    let mut stmt = conn
        .prepare_cached("SELECT id FROM sessions WHERE id >= ?1 AND id < ?1 || char(1114111) ORDER BY id LIMIT ?2")?;
    let ids = stmt.query_map(rusqlite::params![prefix, LISTED as i64 + 1], |r| r.get(0))?;
    Ok(ids.collect::<rusqlite::Result<_>>()?)
}

/// The sessions forgotten in the index whose ids start with `prefix`.
pub fn forgotten_starting_with(conn: &Connection, prefix: &str) -> Result<Vec<String>> {
    let mut stmt = conn.prepare_cached(
        "SELECT DISTINCT session_id FROM forgotten WHERE session_id >= ?1 AND session_id < ?1 || char(1114111)
         ORDER BY session_id LIMIT ?2",
    )?;
    let ids = stmt.query_map(rusqlite::params![prefix, LISTED as i64 + 1], |r| r.get(0))?;
    Ok(ids.collect::<rusqlite::Result<_>>()?)
}

/// The session of the index `given` names (see [`pick`]).
pub fn session_named(conn: &Connection, given: &str) -> Result<String> {
    pick(given, sessions_starting_with(conn, given)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(ids: &[&str]) -> Vec<String> {
        ids.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_prefix_names_the_one_session_it_starts() {
        let all = ids(&["fa812bfe-1", "fa81ffff-2", "0c000000-3", "s"]);
        assert_eq!(pick("fa812", all.clone()).unwrap(), "fa812bfe-1");
        assert_eq!(pick("fa812bfe-1", all.clone()).unwrap(), "fa812bfe-1");
        // A whole id is taken however short it is.
        assert_eq!(pick("s", all.clone()).unwrap(), "s");
        let ambiguous = pick("fa81", all.clone()).unwrap_err().to_string();
        assert!(ambiguous.contains("names 2 sessions: fa812bfe-1, fa81ffff-2"), "{ambiguous}");
        assert!(pick("fa8", all.clone()).unwrap_err().to_string().contains("too short"));
        assert!(matches!(pick("dddd", all), Err(Error::UnknownSession(_))));
    }

    #[test]
    fn the_index_is_asked_by_range_and_lists_a_few() -> Result<()> {
        let conn = Connection::open_in_memory()?;
        conn.execute_batch("CREATE TABLE sessions (id TEXT PRIMARY KEY)")?;
        for n in 0..15 {
            conn.execute("INSERT INTO sessions (id) VALUES (?1)", [format!("abcd{n:02}")])?;
        }
        conn.execute("INSERT INTO sessions (id) VALUES ('abce')", [])?;
        assert_eq!(sessions_starting_with(&conn, "abcd0")?.len(), 10);
        assert_eq!(session_named(&conn, "abce")?, "abce");
        let many = session_named(&conn, "abcd").unwrap_err().to_string();
        assert!(many.contains("more than 10 sessions") && many.contains("and 1 more"), "{many}");
        // LIKE's wildcards are letters here.
        assert!(matches!(session_named(&conn, "ab%_"), Err(Error::UnknownSession(_))));
        Ok(())
    }
}
