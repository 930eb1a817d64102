//! A session's outline: each prompt (a person's words, as the overview counts them) with its time,
//! its first words, how many tool calls followed it until the next prompt, and the turn's figures
//! where the transcript records them (its answers' tokens from the usage ledger, when the last
//! answer came). What a reader jumps by, without loading the history in between.
//!
//! One range scan of the session's rows in conversation order (`entries_order`), the tool calls
//! counted from `tool_events` by key and the tokens read once from `usage`. Side chains (a
//! sub-agent's work) are left out, as history leaves them by default. Never reads a transcript byte.

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

/// The outline of `session_id`; `None` if the store has no such session. With `mask`, each prompt's
/// head is masked before its first words are cut from it.
pub fn outline(conn: &Connection, session_id: &str, mask: Option<&dyn Mask>) -> Result<Option<Outline>> {
    // One snapshot for the rows, their tool calls and their tokens.
    let tx = if conn.is_autocommit() { Some(conn.unchecked_transaction()?) } else { None };
    let answer = outline_in(conn, session_id, mask);
    drop(tx);
    answer
}

fn outline_in(conn: &Connection, session_id: &str, mask: Option<&dyn Mask>) -> Result<Option<Outline>> {
    let exists: bool = conn
        .prepare_cached(
            "SELECT EXISTS (SELECT 1 FROM sessions WHERE id = ?1) OR EXISTS (SELECT 1 FROM entries WHERE session_id = ?1)",
        )?
        .query_row([session_id], |r| r.get(0))?;
    if !exists {
        return Ok(None);
    }
    // Each response's tokens by the entry that stands for it: (input + cache, output).
    let mut tokens: HashMap<i64, Vec<(i64, i64)>> = HashMap::new();
    let mut stmt = conn.prepare_cached(
        "SELECT entry_id, input_tokens + cache_read_tokens + cache_write_tokens, output_tokens
         FROM usage WHERE session_id = ?1",
    )?;
    let mut rows = stmt.query([session_id])?;
    while let Some(r) = rows.next()? {
        tokens.entry(r.get(0)?).or_default().push((r.get(1)?, r.get(2)?));
    }
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT e.id, e.type, e.role, e.timestamp, substr(e.text, 1, {}),
                (SELECT count(*) FROM tool_events t
                 WHERE t.session_id = e.session_id AND t.entry_id = e.id AND t.tool IS NOT NULL)
         FROM entries e
         WHERE e.session_id = ?1 AND e.duplicate = 0 AND e.invalid IS NULL AND e.is_sidechain = 0
         ORDER BY e.sort_at, e.sort_file, e.line, e.id",
        if mask.is_some() { MASKED_HEAD } else { OUTLINE_TEXT * 4 }
    ))?;
    let mut rows = stmt.query(params![session_id])?;
    let mut turns: Vec<Turn> = Vec::new();
    while let Some(r) = rows.next()? {
        let id: i64 = r.get(0)?;
        let (kind, role): (Option<String>, Option<String>) = (r.get(1)?, r.get(2)?);
        let is = |name: &str| kind.as_deref() == Some(name) || role.as_deref() == Some(name);
        let timestamp: Option<String> = r.get(3)?;
        let text: Option<String> = r.get(4)?;
        let calls: i64 = r.get(5)?;
        // A prompt, as the overview counts them: a user entry that says something.
        if is("user")
            && let Some(text) = text.as_deref().filter(|t| !t.is_empty())
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
            continue;
        }
        // What comes before the first prompt belongs to no turn.
        let Some(turn) = turns.last_mut() else { continue };
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
    }
    Ok(Some(Outline { session_id: session_id.to_owned(), turns }))
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
