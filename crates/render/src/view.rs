//! What a reader sees of an entry beside its line: who said it, and its parts in order
//! ([`scrollback_core::format::parts`]), each text with its Markdown as HTML ([`crate::markdown`])
//! and each tool call at a glance, with an edit's diff. The viewer asks for it with a history page
//! (`view=true`) and lays it out knowing no format; the exports lay a session out from the same
//! parts.

use serde::Serialize;
use serde_json::Value;

use crate::markdown;
use scrollback_core::format::Format;
use scrollback_core::format::parts::{self, DiffLine, Media, Part, ToolCall, Who};

/// An entry's view.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct View {
    /// Who said it: the byline and the side it stands on; `None` for a line the viewer does not
    /// show.
    pub who: Option<Who>,
    /// What it says, in the line's order (nothing where `who` is `None`).
    pub parts: Vec<ViewPart>,
}

/// One piece of an entry, as the viewer lays it out: `{kind, ...}`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum ViewPart {
    /// What was said, and its Markdown as sanitised HTML (none for a text too long to render,
    /// which is shown as it is). A text over [`VIEW_TEXT_MAX`] characters is cut there, its HTML
    /// the cut text's, and says so in `more`.
    Text {
        /// The text.
        text: String,
        /// Its HTML.
        #[serde(skip_serializing_if = "Option::is_none")]
        html: Option<String>,
        /// For a cut text: how long it is whole, and where it is in [`texts`].
        #[serde(skip_serializing_if = "Option::is_none")]
        more: Option<More>,
    },
    /// The model's visible thinking.
    Thinking {
        /// The thinking.
        text: String,
    },
    /// A tool call at a glance.
    ToolCall(Tool),
    /// What a tool gave back.
    ToolResult {
        /// The id of the call it answers (a [`Tool::id`]), where the format links them.
        #[serde(rename = "callId", skip_serializing_if = "Option::is_none")]
        call_id: Option<String>,
        /// Its text.
        text: String,
        /// Whether the tool said it failed.
        error: bool,
        /// What to call it, where "Result" would not say enough.
        #[serde(skip_serializing_if = "Option::is_none")]
        label: Option<String>,
        /// The photos and files it gave back.
        #[serde(skip_serializing_if = "Vec::is_empty")]
        media: Vec<Media>,
    },
    /// A photo, or a file to download.
    Media(Media),
    /// A command given to the agent's harness (a slash command): a chip.
    Command {
        /// The command (`/compact`).
        name: String,
        /// Its arguments.
        args: String,
    },
    /// What such a command printed.
    Output {
        /// The text.
        text: String,
        /// Whether it is its error output.
        error: bool,
    },
    /// Context the harness added to a message (an IDE selection, a system reminder): folded.
    Context {
        /// What it is.
        label: String,
        /// What it says (plain text).
        text: String,
    },
    /// Plain text about the conversation (never Markdown).
    Note {
        /// The note.
        text: String,
    },
    /// Parts shown folded under a title.
    Group {
        /// What the fold says while it is closed.
        title: String,
        /// What it holds.
        parts: Vec<ViewPart>,
    },
    /// A message quoted inside the entry, with who said it.
    Message {
        /// Who said it.
        who: Who,
        /// What it says.
        parts: Vec<ViewPart>,
    },
}

/// What a cut text left out: `GET /api/sessions/{id}/entries/{cursor}/texts` gives the entry's
/// texts whole, and this one is at `index`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct More {
    /// The whole text's length, in characters.
    pub chars: usize,
    /// Its place among the entry's texts ([`texts`]).
    pub index: usize,
}

/// The most characters of one text a view holds (and renders); a longer one is cut there.
pub const VIEW_TEXT_MAX: usize = 32 * 1024;

/// A tool call at a glance.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Tool {
    /// Its id, where the format gives one: what its result's `callId` names.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The tool's name.
    pub tool: String,
    /// What it acted on (`$ git status`, a path, a pattern, a URL…).
    pub subject: String,
    /// The one line: `Bash $ git status`, `Edit src/lib.rs (+2 -1)`.
    pub line: String,
    /// For an edit: lines added.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub added: Option<usize>,
    /// For an edit: lines removed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub removed: Option<usize>,
    /// For an edit: its diff.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub diff: Vec<DiffLine>,
    /// Its input as the agent gave it.
    pub input: Value,
}

impl From<ToolCall> for Tool {
    fn from(call: ToolCall) -> Tool {
        Tool {
            line: call.line(),
            id: call.id,
            added: call.lines.map(|l| l.0),
            removed: call.lines.map(|l| l.1),
            tool: call.tool,
            subject: call.subject,
            diff: call.diff,
            input: call.input,
        }
    }
}

impl ViewPart {
    /// `part` as the viewer lays it out, texts cut at [`VIEW_TEXT_MAX`]; `texts` counts the texts
    /// met so far, in the order of [`texts`].
    fn of(part: Part, texts: &mut usize) -> ViewPart {
        let mut all =
            |parts: Vec<Part>| -> Vec<ViewPart> { parts.into_iter().map(|p| ViewPart::of(p, texts)).collect() };
        match part {
            Part::Text(text) => {
                let index = *texts;
                *texts += 1;
                match text.char_indices().nth(VIEW_TEXT_MAX) {
                    Some((at, _)) => {
                        let more = Some(More { chars: text.chars().count(), index });
                        let text = text[..at].to_owned();
                        let html = markdown::to_html(&text);
                        ViewPart::Text { text, html, more }
                    }
                    None => {
                        let html = markdown::to_html(&text);
                        ViewPart::Text { text, html, more: None }
                    }
                }
            }
            Part::Thinking(text) => ViewPart::Thinking { text },
            Part::ToolCall(call) => ViewPart::ToolCall(call.into()),
            Part::ToolResult { call, text, error, label, media } => {
                ViewPart::ToolResult { call_id: call, text: without_escapes(text), error, label, media }
            }
            Part::Command { name, args } => ViewPart::Command { name, args },
            Part::Output { text, error } => ViewPart::Output { text: without_escapes(text), error },
            Part::Context { label, text } => ViewPart::Context { label, text },
            Part::Media(media) => ViewPart::Media(media),
            Part::Note(text) => ViewPart::Note { text },
            Part::Group { title, parts } => ViewPart::Group { title, parts: all(parts) },
            Part::Message { who, parts } => ViewPart::Message { who, parts: all(parts) },
        }
    }
}

/// Every text of `line` whole, in the order the view counts them ([`More::index`]): what a cut
/// text's "show all" fetches.
pub fn texts(format: &dyn Format, line: &Value) -> Vec<String> {
    fn walk(parts: Vec<Part>, out: &mut Vec<String>) {
        for part in parts {
            match part {
                Part::Text(text) => out.push(text),
                Part::Group { parts, .. } | Part::Message { parts, .. } => walk(parts, out),
                _ => {}
            }
        }
    }
    let mut out = Vec::new();
    walk(format.parts(line), &mut out);
    out
}

/// The view of `line` (rendered), a line of `format`, on a side chain if `is_sidechain`. A line the
/// viewer does not show has no parts either (nor any Markdown rendered for it).
pub fn of(format: &dyn Format, line: &Value, is_sidechain: bool) -> View {
    let Some(who) = format.who(line, is_sidechain) else { return View::default() };
    let mut texts = 0;
    let mut parts: Vec<ViewPart> = format.parts(line).into_iter().map(|p| ViewPart::of(p, &mut texts)).collect();
    name_photos(&mut parts);
    View { who: Some(who), parts }
}

/// Where an entry's text refers to its photos by number (`[Image #1]`) and the entry holds photos:
/// each photo is labelled with its number, in order, and each placeholder in the text's HTML
/// becomes a chip that names it (`<span class="image-ref">`), so that neither reads as noise.
fn name_photos(parts: &mut [ViewPart]) {
    let refers = parts.iter().any(|p| matches!(p, ViewPart::Text { text, .. } if parts::has_image_placeholder(text)));
    if !refers || !parts.iter().any(|p| matches!(p, ViewPart::Media(m) if m.image)) {
        return;
    }
    let mut n = 0;
    for part in parts.iter_mut() {
        match part {
            ViewPart::Media(m) if m.image => {
                n += 1;
                m.label = Some(format!("Image #{n}"));
            }
            ViewPart::Text { html: Some(html), .. } => *html = image_chips(html),
            _ => {}
        }
    }
}

/// `html` (sanitised) with each `[Image #N]` in text outside code as a chip. The chip's markup is
/// this function's own, and what it wraps is the placeholder's digits, so the HTML stays as safe as
/// the sanitiser made it. A tag ends at the first `>` outside its quoted attribute values: the
/// sanitiser quotes every value with `"` and leaves `<` and `>` in them as they are, so a `>` in a
/// link's title must not end the tag (a chip put inside the value would break out of it).
fn image_chips(html: &str) -> String {
    let mut out = String::with_capacity(html.len() + 64);
    let mut in_code = 0usize;
    let mut rest = html;
    while !rest.is_empty() {
        if rest.starts_with('<') {
            let mut quoted = false;
            let end = rest
                .char_indices()
                .find(|&(_, c)| {
                    if c == '"' {
                        quoted = !quoted;
                    }
                    c == '>' && !quoted
                })
                .map_or(rest.len(), |(i, _)| i + 1);
            let tag = &rest[..end];
            if tag.starts_with("<code") || tag.starts_with("<pre") {
                in_code += 1;
            } else if tag.starts_with("</code") || tag.starts_with("</pre") {
                in_code = in_code.saturating_sub(1);
            }
            out.push_str(tag);
            rest = &rest[end..];
            continue;
        }
        let end = rest.find('<').unwrap_or(rest.len());
        let text = &rest[..end];
        if in_code > 0 {
            out.push_str(text);
        } else {
            let mut at = 0;
            for (range, n) in parts::image_placeholders(text) {
                out.push_str(&text[at..range.start]);
                out.push_str(&format!("<span class=\"image-ref\" data-image=\"{n}\">Image #{n}</span>"));
                at = range.end;
            }
            out.push_str(&text[at..]);
        }
        rest = &rest[end..];
    }
    out
}

/// A command's or a tool's output without the terminal's escape sequences (colours, bold, cursor
/// moves) it was printed with, which read as `\x1b[1m` noise on a page (`anstream`'s stripper).
fn without_escapes(text: String) -> String {
    if text.contains('\x1b') { anstream::adapter::strip_str(&text).to_string() } else { text }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A `>` inside a quoted attribute value (a link's title) does not end its tag, so no chip is
    /// put inside the value, where its quotes would end it and let what follows be markup.
    #[test]
    fn a_placeholder_inside_an_attribute_value_is_left_alone() {
        let html = r#"<p><a href="http://x" title="> [Image #1] <img src=x onerror=alert(1)>">a</a> [Image #2]</p>"#;
        let out = image_chips(html);
        assert!(out.contains(r#"title="> [Image #1] <img src=x onerror=alert(1)>""#), "{out}");
        assert!(out.contains(r#"<span class="image-ref" data-image="2">Image #2</span>"#), "{out}");
        assert_eq!(out.matches("image-ref").count(), 1, "{out}");
    }

    #[test]
    fn a_text_that_refers_to_its_photos_by_number_names_them() {
        let line: Value = serde_json::from_str(
            r#"{"type":"user","message":{"role":"user","content":[
                {"type":"image","url":"/api/session-media/s/u/0"},
                {"type":"text","text":"What is in [Image #1]? Not `[Image #1]` in code."}]}}"#,
        )
        .unwrap();
        let view = of(scrollback_core::format::CLAUDE, &line, false);
        match &view.parts[..] {
            [ViewPart::Media(m), ViewPart::Text { html: Some(html), .. }] => {
                assert_eq!(m.label.as_deref(), Some("Image #1"));
                assert!(html.contains(r#"<span class="image-ref" data-image="1">Image #1</span>?"#), "{html}");
                assert!(html.contains("<code>[Image #1]</code>"), "{html}");
            }
            other => panic!("{other:?}"),
        }
    }

    /// What a command or a tool printed in colour reads as its words: `\x1b[1mopusplan\x1b[22m`
    /// is `opusplan`.
    #[test]
    fn a_command_s_and_a_tool_s_colours_are_not_shown_as_escapes() {
        let line: Value = serde_json::from_str(
            r#"{"type":"user","message":{"role":"user","content":[
                {"type":"tool_result","tool_use_id":"t","content":"\u001b[31merror\u001b[0m: \u001b[1mopusplan\u001b[22m"}]}}"#,
        )
        .unwrap();
        let view = of(scrollback_core::format::CLAUDE, &line, false);
        assert!(
            matches!(&view.parts[..], [ViewPart::ToolResult { text, .. }] if text == "error: opusplan"),
            "{view:?}"
        );
        let line: Value = serde_json::from_str(
            r#"{"type":"user","message":{"role":"user","content":"<local-command-stdout>Set model to \u001b[1mopusplan\u001b[22m</local-command-stdout>"}}"#,
        )
        .unwrap();
        let view = of(scrollback_core::format::CLAUDE, &line, false);
        assert!(
            matches!(&view.parts[..], [ViewPart::Output { text, .. }] if text == "Set model to opusplan"),
            "{view:?}"
        );
    }

    /// A long text is cut for the page, and says how long it is whole and which of the entry's
    /// texts it is (for `GET …/entries/{cursor}/texts`); its HTML is the cut text's.
    #[test]
    fn a_long_text_is_cut_for_the_page_and_says_how_much_there_is() {
        let long = "word ".repeat(100_000).trim_end().to_owned();
        let format = scrollback_core::format::by_name("claude").expect("claude");
        let line = serde_json::json!({
            "type": "assistant", "uuid": "a", "timestamp": "2026-01-01T00:00:00Z",
            "message": {"role": "assistant", "content": [{"type": "text", "text": "short"}, {"type": "text", "text": long}]},
        });
        let view = serde_json::to_value(of(format, &line, false)).expect("a view is JSON");
        let parts = view["parts"].as_array().expect("parts");
        assert_eq!(parts[0]["text"], "short");
        assert!(parts[0].get("more").is_none(), "a short text is whole");
        let cut = parts[1]["text"].as_str().expect("text");
        assert!(cut.chars().count() <= VIEW_TEXT_MAX, "{} characters", cut.chars().count());
        assert_eq!(parts[1]["more"]["chars"], long.chars().count());
        assert_eq!(parts[1]["more"]["index"], 1);
        assert!(parts[1]["html"].as_str().expect("html").len() < 4 * VIEW_TEXT_MAX);
        assert_eq!(texts(format, &line), ["short".to_owned(), long.clone()]);
    }
}
