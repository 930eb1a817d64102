//! Word boundaries for scripts written without spaces (Chinese, Japanese), so that full-text search
//! finds a word in them as written.
//!
//! FTS5's `unicode61` tokenizer splits text at spaces and punctuation only: a run of Chinese or
//! Japanese characters is one token, and no word inside it can be found. Unicode's word-boundary
//! rules (UAX #29, as the `unicode-segmentation` crate implements them) do split such runs: each
//! ideograph and each hiragana is a word of its own, a katakana run is one word. [`mark`] writes those
//! boundaries into the text as [`BOUNDARY`] (a zero-width space, a separator to `unicode61` and
//! invisible on screen) wherever two letters meet at one. The same is done to a query, so a word
//! searched as written becomes the phrase of its pieces and matches wherever it appears (a
//! two-character word too). Text in other scripts passes through unchanged: the boundaries UAX #29
//! finds in it are ones `unicode61` already splits at.

use std::borrow::Cow;

use unicode_segmentation::UnicodeSegmentation;

/// The character written at a word boundary between two letters: U+200B ZERO WIDTH SPACE.
pub const BOUNDARY: char = '\u{200B}';

/// Whether `text` may hold a script written without spaces: a UTF-8 lead byte of U+3000..U+9FFF
/// (CJK punctuation, hiragana, katakana, CJK ideographs). A cheap test, so that other text skips
/// the segmentation.
fn may_need_marks(text: &str) -> bool {
    text.bytes().any(|b| (0xE3..=0xE9).contains(&b))
}

/// Whether a piece from the segmentation is a word to `unicode61` (begins with a letter or digit).
fn is_word(piece: &str) -> bool {
    piece.chars().next().is_some_and(char::is_alphanumeric)
}

/// `text` with [`BOUNDARY`] at every UAX #29 word boundary between two words that touch; borrowed
/// unchanged when there is none.
pub fn mark(text: &str) -> Cow<'_, str> {
    if !may_need_marks(text) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + text.len() / 2);
    let mut previous_word = false;
    let mut marked = false;
    for piece in text.split_word_bounds() {
        let word = is_word(piece);
        if word && previous_word {
            out.push(BOUNDARY);
            marked = true;
        }
        out.push_str(piece);
        previous_word = word;
    }
    if marked { Cow::Owned(out) } else { Cow::Borrowed(text) }
}

/// `text` without the marks [`mark`] wrote (for showing indexed text, e.g. in a snippet).
pub fn unmark(text: &str) -> Cow<'_, str> {
    if text.contains(BOUNDARY) { Cow::Owned(text.replace(BOUNDARY, "")) } else { Cow::Borrowed(text) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_without_spaces_are_split_into_words() {
        assert_eq!(mark("数据库"), "数\u{200B}据\u{200B}库");
        // A katakana run is one word; hiragana and ideographs are one each.
        assert_eq!(mark("データベースの索引"), "データベース\u{200B}の\u{200B}索\u{200B}引");
        // Punctuation and spaces are boundaries already.
        assert_eq!(mark("数据，库"), "数据，库".replace("数据", "数\u{200B}据"));
    }

    #[test]
    fn other_text_is_left_as_it_is() {
        for text in ["a photo of the harbour", "데이터베이스 인덱스", "naïve café — “quoted” …", "x1 y2", ""]
        {
            assert!(matches!(mark(text), Cow::Borrowed(t) if t == text), "{text:?}");
        }
        assert_eq!(unmark(&mark("修复数据库索引")), "修复数据库索引");
    }
}
