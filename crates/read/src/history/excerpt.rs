//! A snippet of a long text made in one bounded pass, where FTS5's `snippet()` would cost too much.
//!
//! `snippet()` scores a window at each of a column's matches against every other match: its cost
//! grows with the square of the matches, and it runs inside one SQLite step, where no step budget
//! can stop it (`"the " * 20000` took 13 s for `the the`). A column longer than
//! [`SNIPPET_FTS_MAX`] characters gets [`excerpt`] instead: the words around the first of the
//! query's words found in the text's first [`SCAN_MAX`] bytes, matches marked as FTS5 marks them.
//! Its cost is linear in at most [`SCAN_MAX`] bytes, whatever the text holds.
//!
//! Words are compared as `unicode61` folds them for ASCII (case); a word with other letters is
//! compared lowercased, accents kept. Never reads past [`SCAN_MAX`] bytes of a text.

use scrollback_core::codec::words::{self, BOUNDARY};

use super::search::{MATCH_CLOSE, MATCH_OPEN};

/// The longest column (in characters) whose snippet FTS5 makes: it holds at most about a thousand
/// words, so that `snippet()`'s square stays a few milliseconds.
pub(crate) const SNIPPET_FTS_MAX: usize = 2_000;

/// How far into a text [`excerpt`] looks for a match, in bytes.
pub(crate) const SCAN_MAX: usize = 256 * 1024;

/// Words in an excerpt, as FTS5's snippets have (`snippet(…, 16)`).
const WORDS: usize = 16;

/// Words shown before the first match.
const BEFORE: usize = 3;

/// The most bytes of text between two words an excerpt keeps.
const GAP_MAX: usize = 40;

/// A query's words as an excerpt looks for them: lowercased, each with whether it is a prefix.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Words(Vec<(String, bool)>);

impl Words {
    /// The words of `terms` (each a term's text and whether it ends in `*`): each term's pieces
    /// as the tokenizer splits them, the last one a prefix where the term is one.
    pub(crate) fn of<'a>(terms: impl IntoIterator<Item = (&'a str, bool)>) -> Words {
        let mut out = Vec::new();
        for (text, prefix) in terms {
            // A word of a script written without spaces is the phrase of its pieces, as in the index.
            let text = words::mark(text);
            let pieces: Vec<&str> = tokens(&text).map(|(_, t)| t).collect();
            for (i, piece) in pieces.iter().enumerate() {
                out.push((piece.to_lowercase(), prefix && i + 1 == pieces.len()));
            }
        }
        out.sort();
        out.dedup();
        Words(out)
    }

    fn matches(&self, token: &str) -> bool {
        let lower = token.to_lowercase();
        self.0.iter().any(|(w, prefix)| if *prefix { lower.starts_with(w.as_str()) } else { lower == *w })
    }
}

/// The tokens of `text` as `unicode61` finds them (runs of letters and digits), with their byte
/// offsets.
fn tokens(text: &str) -> impl Iterator<Item = (usize, &str)> {
    let mut rest = text.char_indices().peekable();
    std::iter::from_fn(move || {
        while let Some(&(_, c)) = rest.peek() {
            if c.is_alphanumeric() {
                break;
            }
            rest.next();
        }
        let (start, _) = *rest.peek()?;
        let mut end = start;
        while let Some(&(i, c)) = rest.peek() {
            if !c.is_alphanumeric() {
                break;
            }
            end = i + c.len_utf8();
            rest.next();
        }
        Some((start, &text[start..end]))
    })
}

/// The largest char boundary of `text` at or below `at`.
fn floor(text: &str, mut at: usize) -> usize {
    at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// A snippet of `text`: [`WORDS`] words from a few before the first of `words` found in its first
/// [`SCAN_MAX`] bytes (or from its start, when none is), the matches between
/// [`MATCH_OPEN`] and [`MATCH_CLOSE`], `…` where the text goes on.
pub(crate) fn excerpt(text: &str, words: &Words) -> String {
    let scanned = &text[..floor(text, SCAN_MAX)];
    // The tokens of the window: the last few before the first match, and those after it.
    let mut window: Vec<(usize, &str)> = Vec::with_capacity(WORDS + BEFORE);
    let mut found = false;
    for token in tokens(scanned) {
        if !found {
            if words.matches(token.1) {
                found = true;
            } else if window.len() == BEFORE {
                window.remove(0);
            }
        }
        window.push(token);
        if found && window.len() == WORDS {
            break;
        }
    }
    if !found {
        window = tokens(scanned).take(WORDS).collect();
    }
    let Some(&(first, _)) = window.first() else { return String::new() };
    let mut out = String::new();
    if first > 0 {
        out.push('…');
    }
    let mut end = first;
    let mut matched = false;
    for (i, &(at, token)) in window.iter().enumerate() {
        let gap = if i > 0 { &text[end..at] } else { "" };
        let hit = words.matches(token);
        // Matches only word marks apart (the pieces of a word written without spaces) are one mark.
        if hit && matched && !gap.is_empty() && gap.chars().all(|c| c == BOUNDARY) {
            out.pop();
            out.push_str(gap);
        } else {
            out.push_str(&gap[..floor(gap, GAP_MAX)]);
            if hit {
                out.push(MATCH_OPEN);
            }
        }
        out.push_str(token);
        if hit {
            out.push(MATCH_CLOSE);
        }
        matched = hit;
        end = at + token.len();
    }
    if text[end..].chars().any(char::is_alphanumeric) {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn marked(s: &str) -> String {
        s.replace(MATCH_OPEN, "[").replace(MATCH_CLOSE, "]")
    }

    #[test]
    fn an_excerpt_marks_the_words_around_the_first_match() {
        let words = Words::of([("Deep", false), ("lin", true)]);
        let text = "one two three four five deep links go here and there, then more words past the end of it";
        assert_eq!(
            marked(&excerpt(text, &words)),
            "…three four five [deep] [links] go here and there, then more words past the end of…"
        );
        // No match within the scan: the text's start.
        assert_eq!(marked(&excerpt("nothing, here", &words)), "nothing, here");
        assert_eq!(excerpt("", &words), "");
    }

    #[test]
    fn an_excerpt_of_a_huge_text_reads_a_bounded_part_of_it() {
        let words = Words::of([("the", false)]);
        let text = "the ".repeat(400_000);
        let e = marked(&excerpt(&text, &words));
        assert_eq!(e.matches("[the]").count(), WORDS);
        assert!(e.ends_with('…') && !e.starts_with('…'), "{e}");
        // A match past the scanned part is not looked for; a gap is cut.
        let far = format!("{} needle", "-".repeat(SCAN_MAX));
        assert_eq!(excerpt(&far, &Words::of([("needle", false)])), "");
        let gap = format!("a{}b", "-".repeat(1000));
        assert_eq!(excerpt(&gap, &Words::of([("b", false)])).len(), 1 + GAP_MAX + 1 + 2 * MATCH_OPEN.len_utf8());
    }

    #[test]
    fn a_word_written_without_spaces_is_marked_whole() {
        let text = words::mark("这是最新的版本").into_owned();
        let e = marked(&words::unmark(&excerpt(&text, &Words::of([("最新", false)]))));
        assert_eq!(e, "这是[最新]的版本");
    }
}
