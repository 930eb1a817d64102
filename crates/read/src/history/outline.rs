//! A session's outline: each prompt (a person's words, as the overview counts them) with its time,
//! its first words, how many tool calls followed it until the next prompt, and the turn's figures
//! where the transcript records them (its answers' tokens from the usage ledger, when the last
//! answer came). What a reader jumps by, without loading the history in between.
//!
//! Made once, by [`outline_of`], from what a store answers ([`OutlineSource`]): an index's rows in
//! conversation order with their tool calls and the ledger's tokens, or a team's hub's, which its
//! hosts pushed. Side chains (a sub-agent's work) are left out, as history leaves them by default.
//! Never reads a transcript byte.

use std::collections::HashMap;

use rusqlite::{Connection, params};

use scrollback_core::error::Result;

/// How many characters of a prompt the outline gives (its first words).
pub const OUTLINE_TEXT: usize = 160;

/// How many characters of a prompt are masked before its first words are cut from them, so that a
/// secret that begins among those words is masked whole (a private key is about 3,300).
pub const MASKED_HEAD: usize = 65_536;

/// A session's prompts, in conversation order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outline {
    /// The session.
    pub session_id: String,
    /// Its turns, each opened by a prompt.
    pub turns: Vec<Turn>,
}

/// A prompt and what followed it until the next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Turn {
    /// The prompt's cursor: history `from` (or `before`) it opens the conversation there.
    pub cursor: i64,
    /// The prompt's timestamp, as written.
    pub timestamp: Option<String>,
    /// Its first words (at most [`OUTLINE_TEXT`] characters, runs of white space made one space).
    pub text: String,
    /// The tool calls from the prompt until the next.
    pub tool_calls: i64,
    /// The cursor of the turn's last answer (an assistant entry), if it has one.
    pub answer_cursor: Option<i64>,
    /// The timestamp of the turn's last answer with one, if any.
    pub answered_at: Option<String>,
    /// The responses the usage ledger holds for the turn's entries.
    pub responses: i64,
    /// The context of the turn's last response with tokens: input, cache read and cache write.
    pub context_tokens: Option<i64>,
    /// The turn's output tokens, summed over its responses; `None` where the ledger has none.
    pub output_tokens: Option<i64>,
}

/// What masks a text's secrets before a reader cuts it (the render crate's redactor): a secret that
/// begins among the words kept is masked whole, not cut into a piece that no rule matches.
pub trait Mask: Send + Sync {
    /// `text`, each secret in it masked.
    fn mask<'t>(&self, text: &'t str) -> std::borrow::Cow<'t, str>;
}

/// What an outline is made of, asked of a store: an index answers in its SQL ([`outline`]), a
/// team's hub in PostgreSQL's, and [`outline_of`] makes the outline from the answers for both.
pub trait OutlineSource {
    /// Whether the store holds the session.
    fn holds(&self, session_id: &str) -> Result<bool>;

    /// Each response of the session's usage ledger, by the cursor of the entry that stands for it:
    /// its context (input, cache read and cache write tokens) and its output tokens.
    fn tokens(&self, session_id: &str) -> Result<HashMap<i64, Vec<(i64, i64)>>>;

    /// The session's entries an outline reads (no copies, no invalid lines, no side chains), in
    /// conversation order, each handed to `each`: a user entry's text cut to its first `head`
    /// characters, no other's.
    fn rows(&self, session_id: &str, head: usize, each: &mut dyn FnMut(OutlineRow) -> Result<()>) -> Result<()>;
}

/// An entry as an outline reads it ([`OutlineSource::rows`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutlineRow {
    /// Its cursor.
    pub cursor: i64,
    /// Its type and role, as written.
    pub kind: Option<String>,
    /// Its role.
    pub role: Option<String>,
    /// Its timestamp, as written.
    pub timestamp: Option<String>,
    /// A user entry's first characters of search text; `None` for any other.
    pub head: Option<String>,
    /// Its tool calls.
    pub calls: i64,
}

/// The SQL condition under which an entry's text is read for an outline: a user entry's (as
/// [`outline_of`] tells a prompt), in both stores' dialects.
pub const USER_ENTRY: &str = "(type = 'user' OR role = 'user')";

/// The outline of `session_id` in an index; `None` if it has no such session. With `mask`, each
/// prompt's head is masked before its first words are cut from it.
pub fn outline(conn: &Connection, session_id: &str, mask: Option<&dyn Mask>) -> Result<Option<Outline>> {
    // One snapshot for the rows, their tool calls and their tokens.
    let tx = if conn.is_autocommit() { Some(conn.unchecked_transaction()?) } else { None };
    let answer = outline_of(&IndexOutline(conn), session_id, mask);
    drop(tx);
    answer
}

/// How many characters of a prompt an outline reads: its first words, or with `mask` as many as a
/// secret that begins among them may need ([`MASKED_HEAD`]).
fn head_of(mask: Option<&dyn Mask>) -> usize {
    if mask.is_some() { MASKED_HEAD } else { OUTLINE_TEXT * 4 }
}

/// The outline of `session_id` from `source`'s answers; `None` if it holds no such session.
pub fn outline_of(source: &dyn OutlineSource, session_id: &str, mask: Option<&dyn Mask>) -> Result<Option<Outline>> {
    if !source.holds(session_id)? {
        return Ok(None);
    }
    let tokens = source.tokens(session_id)?;
    let mut turns: Vec<Turn> = Vec::new();
    source.rows(session_id, head_of(mask), &mut |row| {
        let OutlineRow { cursor: id, kind, role, timestamp, head, calls } = row;
        let is = |name: &str| kind.as_deref() == Some(name) || role.as_deref() == Some(name);
        // A prompt, as the overview counts them: a user entry that says something.
        if is("user")
            && let Some(text) = head.as_deref().filter(|t| !t.is_empty())
        {
            turns.push(Turn {
                cursor: id,
                timestamp,
                text: match mask {
                    Some(m) => first_words(&m.mask(text)),
                    None => first_words(text),
                },
                tool_calls: calls,
                answer_cursor: None,
                answered_at: None,
                responses: 0,
                context_tokens: None,
                output_tokens: None,
            });
            return Ok(());
        }
        // What comes before the first prompt belongs to no turn.
        let Some(turn) = turns.last_mut() else { return Ok(()) };
        turn.tool_calls += calls;
        if is("assistant") {
            turn.answer_cursor = Some(id);
            if timestamp.is_some() {
                turn.answered_at = timestamp;
            }
        }
        for &(context, output) in tokens.get(&id).into_iter().flatten() {
            turn.responses += 1;
            turn.context_tokens = Some(context);
            turn.output_tokens = Some(turn.output_tokens.unwrap_or(0) + output);
        }
        Ok(())
    })?;
    Ok(Some(Outline { session_id: session_id.to_owned(), turns }))
}

/// An index as an outline's source: one range scan of the session's rows in conversation order
/// (`entries_order`), the tool calls counted from `tool_events` by key, the tokens read once from
/// `usage`.
struct IndexOutline<'c>(&'c Connection);

impl OutlineSource for IndexOutline<'_> {
    fn holds(&self, session_id: &str) -> Result<bool> {
        Ok(self
            .0
            .prepare_cached(
                "SELECT EXISTS (SELECT 1 FROM sessions WHERE id = ?1) OR EXISTS (SELECT 1 FROM entries WHERE session_id = ?1)",
            )?
            .query_row([session_id], |r| r.get(0))?)
    }

    fn tokens(&self, session_id: &str) -> Result<HashMap<i64, Vec<(i64, i64)>>> {
        let mut tokens: HashMap<i64, Vec<(i64, i64)>> = HashMap::new();
        let mut stmt = self.0.prepare_cached(
            "SELECT entry_id, input_tokens + cache_read_tokens + cache_write_tokens, output_tokens
             FROM usage WHERE session_id = ?1",
        )?;
        let mut rows = stmt.query([session_id])?;
        while let Some(r) = rows.next()? {
            tokens.entry(r.get(0)?).or_default().push((r.get(1)?, r.get(2)?));
        }
        Ok(tokens)
    }

    fn rows(&self, session_id: &str, head: usize, each: &mut dyn FnMut(OutlineRow) -> Result<()>) -> Result<()> {
        let mut stmt = self.0.prepare_cached(&format!(
            "SELECT e.id, e.type, e.role, e.timestamp, CASE WHEN {USER_ENTRY} THEN substr(e.text, 1, ?2) END,
                    (SELECT count(*) FROM tool_events t
                     WHERE t.session_id = e.session_id AND t.entry_id = e.id AND t.tool IS NOT NULL)
             FROM entries e
             WHERE e.session_id = ?1 AND e.duplicate = 0 AND e.invalid IS NULL AND e.is_sidechain = 0
             ORDER BY e.sort_at, e.sort_file, e.line, e.id"
        ))?;
        let mut rows = stmt.query(params![session_id, head as i64])?;
        while let Some(r) = rows.next()? {
            each(OutlineRow {
                cursor: r.get(0)?,
                kind: r.get(1)?,
                role: r.get(2)?,
                timestamp: r.get(3)?,
                head: r.get(4)?,
                calls: r.get(5)?,
            })?;
        }
        Ok(())
    }
}

/// The first [`OUTLINE_TEXT`] characters of `text`, its word marks taken out and each run of white
/// space made one space.
fn first_words(text: &str) -> String {
    let clean: String = text.chars().filter(|&c| c != '\u{200b}').collect();
    let spaced = clean.split_whitespace().collect::<Vec<_>>().join(" ");
    if spaced.chars().count() <= OUTLINE_TEXT {
        return spaced;
    }
    let mut cut: String = spaced.chars().take(OUTLINE_TEXT).collect();
    cut.push('…');
    cut
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_words_are_cut_and_spaced() {
        assert_eq!(first_words("  fix\n\tthe b\u{200b}ug  "), "fix the bug");
        let long = "word ".repeat(100);
        let cut = first_words(&long);
        assert_eq!(cut.chars().count(), OUTLINE_TEXT + 1);
        assert!(cut.ends_with('…'));
    }
}
