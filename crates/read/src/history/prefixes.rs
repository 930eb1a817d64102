//! A query's prefixes (`migrat*`) spelled out as the words of the index that begin so, at most
//! [`WORDS_PER_PREFIX`] of them, before the query is compiled to FTS5.
//!
//! FTS5 answers a prefix by merging the lists of every word that begins with it, all of them, in
//! one step of SQLite's virtual machine: no step budget can stop it, and `t* a* e* f*` cost seconds
//! that grew with the index. Spelled out, a prefix is an `OR` of words, which FTS5 walks a row at a
//! time within the step budget ([`super::budget`]), like any query. The words are read from the
//! index's vocabulary (an `fts5vocab` table in the connection's `temp` schema), in the order of the
//! index, one budgeted step each.
//!
//! Never hands FTS5 a prefix query.

use rusqlite::{Connection, OptionalExtension};
use unicode_normalization::UnicodeNormalization;

use scrollback_core::error::Result;
use scrollback_core::query::{Query, Term};

/// The most words one prefix stands for; past them, the note says so.
pub const WORDS_PER_PREFIX: usize = 64;

/// `query` with each prefix term replaced by the words of the index it begins (as `OR`), or by its
/// text as a whole word when none does; a note for each prefix that stands for more words than
/// were taken.
pub(crate) fn spell_out(conn: &Connection, query: &mut Query) -> Result<()> {
    if !query.all.iter().flatten().chain(&query.none).any(|t| t.prefix) {
        return Ok(());
    }
    vocabulary(conn)?;
    let mut notes = Vec::new();
    for clause in &mut query.all {
        let mut spelled = Vec::with_capacity(clause.len());
        for term in clause.drain(..) {
            spelled.extend(words_of(conn, term, &mut notes)?);
        }
        *clause = spelled;
    }
    let mut none = Vec::with_capacity(query.none.len());
    for term in query.none.drain(..) {
        none.extend(words_of(conn, term, &mut notes)?);
    }
    query.none = none;
    query.notes.extend(notes);
    Ok(())
}

/// The connection's view of the index's words (`temp.entries_fts_words`), made once per
/// connection: a reader's connection is `query_only`, which the `temp` schema is let past.
fn vocabulary(conn: &Connection) -> Result<()> {
    let made: Option<i64> = conn
        .query_row("SELECT 1 FROM temp.sqlite_master WHERE name = 'entries_fts_words'", [], |r| r.get(0))
        .optional()?;
    if made.is_none() {
        let query_only: bool = conn.query_row("PRAGMA query_only", [], |r| r.get(0))?;
        conn.execute_batch(
            "PRAGMA query_only = OFF;
             CREATE VIRTUAL TABLE temp.entries_fts_words USING fts5vocab(main, entries_fts, row);",
        )?;
        if query_only {
            conn.execute_batch("PRAGMA query_only = ON")?;
        }
    }
    Ok(())
}

/// A word as the index's tokenizer folds it (`unicode61 remove_diacritics 2`): lowercase, without
/// its accents.
fn fold(word: &str) -> String {
    word.nfd().filter(|c| !('\u{300}'..='\u{36F}').contains(c)).flat_map(char::to_lowercase).collect()
}

/// `term` spelled out: itself when it is no prefix; else one term per word of the index its last
/// word begins (the text before that word kept), or its text as a whole word when none does.
fn words_of(conn: &Connection, term: Term, notes: &mut Vec<String>) -> Result<Vec<Term>> {
    if !term.prefix {
        return Ok(vec![term]);
    }
    let whole = Term { prefix: false, ..term.clone() };
    let text = term.text.trim_end_matches(|c: char| !c.is_alphanumeric());
    let start = text
        .rfind(|c: char| !c.is_alphanumeric())
        .map_or(0, |i| i + text[i..].chars().next().map_or(1, char::len_utf8));
    let (head, last) = text.split_at(start);
    let folded = fold(last);
    if folded.is_empty() {
        return Ok(vec![whole]);
    }
    let mut stmt = conn.prepare_cached(
        "SELECT term FROM temp.entries_fts_words WHERE term >= ?1 AND term < ?1 || char(1114111) ORDER BY term LIMIT ?2",
    )?;
    let words: Vec<String> = stmt
        .query_map(rusqlite::params![folded, WORDS_PER_PREFIX as i64 + 1], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    if words.len() > WORDS_PER_PREFIX {
        notes.push(format!(
            "{}* stands for more than {WORDS_PER_PREFIX} words: the first {WORDS_PER_PREFIX} in alphabetical order were \
             searched; add letters to it to reach the others",
            term.text
        ));
    }
    if words.is_empty() {
        return Ok(vec![whole]);
    }
    Ok(words
        .into_iter()
        .take(WORDS_PER_PREFIX)
        .map(|w| Term { text: format!("{head}{w}"), phrase: term.phrase, prefix: false })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use scrollback_core::query::parse;

    fn index(texts: &[&str]) -> Result<Connection> {
        let conn = Connection::open_in_memory()?;
        conn.execute_batch(
            "CREATE TABLE entries (id INTEGER PRIMARY KEY, text TEXT, tool_text TEXT, tools TEXT);
             CREATE VIRTUAL TABLE entries_fts USING fts5(text, tool_text, tools, content=\"entries\",
                 content_rowid='id', tokenize='unicode61 remove_diacritics 2');",
        )?;
        for t in texts {
            conn.execute("INSERT INTO entries (text) VALUES (?1)", [t])?;
        }
        conn.execute_batch("INSERT INTO entries_fts (entries_fts) VALUES ('rebuild'); PRAGMA query_only = ON")?;
        Ok(conn)
    }

    fn texts(query: &Query) -> Vec<Vec<String>> {
        query
            .all
            .iter()
            .map(|c| c.iter().map(|t| format!("{}{}", t.text, if t.prefix { "*" } else { "" })).collect())
            .collect()
    }

    #[test]
    fn prefixes_are_spelled_out_as_the_words_of_the_index() -> Result<()> {
        let conn = index(&["Migrate the migrations", "a Café near foo.bar and foo.baz", "migratory birds"])?;
        let mut q = parse("MIGRAT* caf* foo.ba* nothingsuch*")?;
        spell_out(&conn, &mut q)?;
        assert_eq!(
            texts(&q),
            [vec!["migrate", "migrations", "migratory"], vec!["cafe"], vec!["foo.bar", "foo.baz"], vec!["nothingsuch"],]
        );
        // The reader's connection stays query-only.
        assert!(conn.execute("INSERT INTO entries (text) VALUES ('x')", []).is_err());
        Ok(())
    }

    #[test]
    fn a_prefix_of_countless_words_stands_for_the_first_of_them_and_says_so() -> Result<()> {
        let many: Vec<String> = (0..200).map(|i| format!("t{i:03}x")).collect();
        let conn = index(&[&many.join(" ")])?;
        let mut q = parse("t*")?;
        spell_out(&conn, &mut q)?;
        assert_eq!(q.all[0].len(), WORDS_PER_PREFIX);
        assert_eq!(q.all[0][0].text, "t000x");
        assert!(q.notes.iter().any(|n| n.contains("more than 64 words")), "{:?}", q.notes);
        Ok(())
    }
}
