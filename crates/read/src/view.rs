//! What a reader sees of an entry beside its line: each text it says as HTML
//! ([`crate::markdown`]), and each tool call at a glance, with an edit's diff
//! ([`scrollback_core::format::parts`]). The viewer asks for it with a history page (`view=true`), and the
//! exports lay a session out from the same parts.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

use crate::markdown;
use scrollback_core::format::Format;
use scrollback_core::format::parts::{DiffLine, Part, ToolCall};

/// An entry's view.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct View {
    /// The HTML of each text of the entry (user and assistant text, summaries), by the text as the
    /// line has it: a client finds a text block's rendering by its text. A text too long to render
    /// has none, and is shown as it is.
    pub html: BTreeMap<String, String>,
    /// The entry's tool calls, in the line's order.
    pub tools: Vec<Tool>,
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
        }
    }
}

/// The view of `line`, a line of `format`.
pub fn of(format: &dyn Format, line: &Value) -> View {
    let mut view = View::default();
    for part in format.parts(line) {
        match part {
            Part::Text(text) => {
                if !view.html.contains_key(&text)
                    && let Some(html) = markdown::to_html(&text)
                {
                    view.html.insert(text, html);
                }
            }
            Part::ToolCall(call) => view.tools.push(call.into()),
            Part::Thinking(_) | Part::ToolResult { .. } => {}
        }
    }
    view
}
