//! What a reader sees of an entry beside its line: who said it, and its parts in order
//! ([`scrollback_core::format::parts`]), each text with its Markdown as HTML ([`crate::markdown`])
//! and each tool call at a glance, with an edit's diff. The viewer asks for it with a history page
//! (`view=true`) and lays it out knowing no format; the exports lay a session out from the same
//! parts.

use serde::Serialize;
use serde_json::Value;

use crate::markdown;
use scrollback_core::format::Format;
use scrollback_core::format::parts::{DiffLine, Media, Part, ToolCall, Who};

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
    /// which is shown as it is).
    Text {
        /// The text.
        text: String,
        /// Its HTML.
        #[serde(skip_serializing_if = "Option::is_none")]
        html: Option<String>,
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

/// A tool call at a glance.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Tool {
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
            added: call.lines.map(|l| l.0),
            removed: call.lines.map(|l| l.1),
            tool: call.tool,
            subject: call.subject,
            diff: call.diff,
            input: call.input,
        }
    }
}

impl From<Part> for ViewPart {
    fn from(part: Part) -> ViewPart {
        let all = |parts: Vec<Part>| -> Vec<ViewPart> { parts.into_iter().map(ViewPart::from).collect() };
        match part {
            Part::Text(text) => {
                let html = markdown::to_html(&text);
                ViewPart::Text { text, html }
            }
            Part::Thinking(text) => ViewPart::Thinking { text },
            Part::ToolCall(call) => ViewPart::ToolCall(call.into()),
            Part::ToolResult { text, error, label, media } => ViewPart::ToolResult { text, error, label, media },
            Part::Media(media) => ViewPart::Media(media),
            Part::Note(text) => ViewPart::Note { text },
            Part::Group { title, parts } => ViewPart::Group { title, parts: all(parts) },
            Part::Message { who, parts } => ViewPart::Message { who, parts: all(parts) },
        }
    }
}

/// The view of `line` (rendered), a line of `format`, on a side chain if `is_sidechain`. A line the
/// viewer does not show has no parts either (nor any Markdown rendered for it).
pub fn of(format: &dyn Format, line: &Value, is_sidechain: bool) -> View {
    let Some(who) = format.who(line, is_sidechain) else { return View::default() };
    View { who: Some(who), parts: format.parts(line).into_iter().map(ViewPart::from).collect() }
}
