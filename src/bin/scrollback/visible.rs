//! Text from transcripts (titles, snippets, project paths, models), from a hub's error messages or
//! from a person's paths, made safe to print: a control character a terminal would obey (an escape
//! sequence that recolours, clears, retitles or rewrites the screen, a bell) is shown as a visible
//! stand-in instead, and so is a bidirectional override that would reorder what is read. The
//! commands print their text through here; JSON (`--json`) and files are left as they are.

use std::borrow::Cow;

/// `s` with each control character but newline and tab made visible: C0 as its Unicode control
/// picture (ESC as `␛`, BEL as `␇`), DEL as `␡`, C1 and the bidirectional controls as `\u{…}`.
pub(crate) fn visible(s: &str) -> Cow<'_, str> {
    if !s.chars().any(needs_showing) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            c if !needs_showing(c) => out.push(c),
            '\u{0}'..='\u{1f}' => out.push(char::from_u32(0x2400 + c as u32).unwrap_or('?')),
            '\u{7f}' => out.push('\u{2421}'),
            c => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
        }
    }
    Cow::Owned(out)
}

/// `s` on one line: newlines, carriage returns and tabs as spaces, then [`visible`].
pub(crate) fn one_line(s: &str) -> String {
    visible(&s.replace(['\n', '\r', '\t'], " ")).into_owned()
}

fn needs_showing(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t') || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_bells_and_overrides_are_shown_not_obeyed() {
        assert_eq!(visible("plain, tabs\tand\nlines"), "plain, tabs\tand\nlines");
        assert_eq!(visible("\u{1b}[31mred\u{7}\u{7f}"), "␛[31mred␇␡");
        assert_eq!(visible("a\u{9b}2Jb\u{202e}c"), "a\\u{9b}2Jb\\u{202e}c");
        assert_eq!(one_line("a\r\nb\tc\u{1b}"), "a  b c␛");
    }
}
