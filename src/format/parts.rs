//! What an entry says, as a reader takes it in: its text, its thinking, and each tool call as one
//! line naming the tool and what it acted on ([`Part`]). Each format splits its lines into parts
//! ([`crate::format::Format::parts`]); the rule that names a tool call's subject is here, shared,
//! because agents name the same things alike (`command`, `file_path`, `pattern`, `url`).

use serde_json::Value;

use super::str_at;

/// One piece of an entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Part {
    /// What was said.
    Text(String),
    /// The model's visible thinking.
    Thinking(String),
    /// A tool call.
    ToolCall(ToolCall),
    /// What a tool gave back.
    ToolResult {
        /// Its text.
        text: String,
        /// Whether the tool said it failed.
        error: bool,
    },
}

/// A tool call at a glance: the tool, and what it acted on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolCall {
    /// The tool's name as the agent called it.
    pub tool: String,
    /// What it acted on: `$ command` for a shell, a path, a pattern, a query or URL, a sub-agent's
    /// description; else the input, as compact JSON.
    pub subject: String,
    /// For an edit: lines added and removed.
    pub lines: Option<(usize, usize)>,
}

impl ToolCall {
    /// The one line: `Bash $ git status`, `Edit src/lib.rs (+3 -2)`.
    pub fn line(&self) -> String {
        let mut out = self.tool.clone();
        if !self.subject.is_empty() {
            out.push(' ');
            out.push_str(&self.subject);
        }
        if let Some((added, removed)) = self.lines {
            out.push_str(&format!(" (+{added} -{removed})"));
        }
        out
    }
}

/// The longest subject kept: a whole script as a "command" would be no glance.
const SUBJECT_MAX: usize = 300;

fn one_line(s: &str) -> String {
    let line = s.trim().lines().next().unwrap_or("").trim();
    let more = s.trim().lines().nth(1).is_some();
    let mut out: String = line.chars().take(SUBJECT_MAX).collect();
    if more || line.chars().count() > SUBJECT_MAX {
        out.push_str(" …");
    }
    out
}

/// A command given as a string or as a program and its arguments; `bash -lc SCRIPT` is its script.
fn command_text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Array(words) => {
            let words: Vec<&str> = words.iter().filter_map(Value::as_str).collect();
            match words.as_slice() {
                [shell, flag, script] if shell.ends_with("sh") && flag.starts_with('-') && flag.ends_with('c') => {
                    Some((*script).to_owned())
                }
                [] => None,
                _ => Some(words.join(" ")),
            }
        }
        _ => None,
    }
}

fn line_count(s: &str) -> usize {
    if s.is_empty() { 0 } else { s.lines().count() }
}

/// The lines a patch in the `*** Begin Patch` form (Codex's `apply_patch`) adds and removes, and
/// the files it names.
fn patch_summary(patch: &str) -> (Vec<&str>, usize, usize) {
    let (mut files, mut added, mut removed) = (Vec::new(), 0, 0);
    for line in patch.lines() {
        let file = ["*** Update File: ", "*** Add File: ", "*** Delete File: "]
            .iter()
            .find_map(|prefix| line.strip_prefix(prefix));
        match file {
            Some(file) => files.push(file.trim()),
            // A unified diff's file headers are no changed lines.
            None if line.starts_with("+++") || line.starts_with("---") => {}
            None if line.starts_with('+') => added += 1,
            None if line.starts_with('-') => removed += 1,
            None => {}
        }
    }
    (files, added, removed)
}

/// A tool call from its name and input (an object; a string of JSON is read as one).
pub fn tool_call(tool: &str, input: &Value) -> ToolCall {
    let parsed;
    let input = match input {
        Value::String(s) if s.trim_start().starts_with('{') => {
            parsed = serde_json::from_str::<Value>(s).unwrap_or(Value::Null);
            &parsed
        }
        Value::String(s) => {
            // A free-form input: a patch, or a script.
            let (files, added, removed) = patch_summary(s);
            let subject = if files.is_empty() { one_line(s) } else { files.join(", ") };
            let lines = (!files.is_empty()).then_some((added, removed));
            return ToolCall { tool: tool.to_owned(), subject, lines };
        }
        other => other,
    };
    let key = |k: &str| str_at(input, k);
    let mut call = ToolCall { tool: tool.to_owned(), subject: String::new(), lines: None };
    if let Some(command) = ["command", "cmd"].iter().find_map(|k| input.get(*k)).and_then(command_text) {
        call.subject = format!("$ {}", one_line(&command));
    } else if let Some(pattern) = key("pattern").or(key("query")).filter(|_| key("url").is_none()) {
        call.subject = match ["path", "dir_path", "include", "glob"].iter().find_map(|k| key(k)) {
            Some(path) => format!("{:?} in {path}", one_line(pattern)),
            None => format!("{:?}", one_line(pattern)),
        };
    } else if let Some(path) =
        ["file_path", "path", "absolute_path", "notebook_path", "file", "filename"].iter().find_map(|k| key(k))
    {
        call.subject = one_line(path);
    } else if let Some(url) = key("url") {
        call.subject = one_line(url);
    } else if let Some(description) = key("description").or(key("prompt")) {
        call.subject = one_line(description);
    } else if let Some(patch) = key("patch").or(key("input")) {
        let (files, added, removed) = patch_summary(patch);
        call.subject = if files.is_empty() { one_line(patch) } else { files.join(", ") };
        call.lines = (!files.is_empty()).then_some((added, removed));
    } else if !input.is_null() {
        call.subject = one_line(&input.to_string());
    }
    // Edits: the lines they change.
    if let (Some(old), Some(new)) = (key("old_string"), key("new_string")) {
        call.lines = Some((line_count(new), line_count(old)));
    } else if let Some(Value::Array(edits)) = input.get("edits") {
        let (mut added, mut removed) = (0, 0);
        for edit in edits {
            added += str_at(edit, "new_string").map_or(0, line_count);
            removed += str_at(edit, "old_string").map_or(0, line_count);
        }
        call.lines = Some((added, removed));
    } else if let Some(content) = key("content").filter(|_| call.lines.is_none() && key("file_path").is_some()) {
        call.lines = Some((line_count(content), 0));
    }
    call
}

/// The text of a tool result's content: a string, or its text blocks.
pub fn result_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => {
            blocks.iter().filter_map(|b| str_at(b, "text").or_else(|| b.as_str())).collect::<Vec<_>>().join("\n")
        }
        Value::Null => String::new(),
        Value::Object(o) => match o.get("content").or_else(|| o.get("output")) {
            Some(inner) => result_text(inner),
            None => v.to_string(),
        },
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn each_kind_of_tool_call_names_what_it_acted_on() {
        let line = |tool: &str, input: Value| tool_call(tool, &input).line();
        assert_eq!(line("Bash", json!({"command": "git status", "description": "Status"})), "Bash $ git status");
        assert_eq!(line("shell", json!({"command": ["bash", "-lc", "cargo test"]})), "shell $ cargo test");
        assert_eq!(line("shell", json!(r#"{"command":["ls","-la"]}"#)), "shell $ ls -la");
        assert_eq!(line("Read", json!({"file_path": "src/db.rs"})), "Read src/db.rs");
        assert_eq!(
            line("Edit", json!({"file_path": "src/lib.rs", "old_string": "a\nb", "new_string": "a\nc\nd"})),
            "Edit src/lib.rs (+3 -2)"
        );
        assert_eq!(line("Grep", json!({"pattern": "fn main", "path": "src"})), "Grep \"fn main\" in src");
        assert_eq!(
            line("WebFetch", json!({"url": "https://example.com", "prompt": "x"})),
            "WebFetch https://example.com"
        );
        assert_eq!(line("WebSearch", json!({"query": "rust mcp"})), "WebSearch \"rust mcp\"");
        assert_eq!(line("Task", json!({"description": "Find the bug", "prompt": "…"})), "Task Find the bug");
        let patch = "*** Begin Patch\n*** Update File: src/a.rs\n@@\n-old\n+new\n+more\n*** End Patch";
        assert_eq!(line("apply_patch", json!(patch)), "apply_patch src/a.rs (+2 -1)");
        assert_eq!(line("Unknown", json!({"x": 1})), "Unknown {\"x\":1}");
    }
}
