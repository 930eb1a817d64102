//! What an entry says, as a reader takes it in: its text, its thinking, its photos and files, each
//! tool call as one line naming the tool and what it acted on, notes about the conversation
//! ([`Part`]), and who said it ([`Who`]). Each format splits its lines into parts
//! ([`crate::format::Format::parts`]) and names who said them ([`crate::format::Format::who`]); the
//! viewer, the exports and the MCP tools lay out the same parts, so none of them knows a format. The
//! rule that names a tool call's subject is here, shared, because agents name the same things alike
//! (`command`, `file_path`, `pattern`, `url`).

use serde::Serialize;
use serde_json::Value;

use super::str_at;

/// One piece of an entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Part {
    /// What was said (Markdown).
    Text(String),
    /// The model's visible thinking.
    Thinking(String),
    /// A tool call.
    ToolCall(ToolCall),
    /// What a tool gave back.
    ToolResult {
        /// The id of the call it answers, where the format links the two (Claude Code's
        /// `tool_use_id`, Codex's `call_id`): the viewer puts it under that call.
        call: Option<String>,
        /// Its text.
        text: String,
        /// Whether the tool said it failed.
        error: bool,
        /// What to call it where "Result" would not say enough (`Response of read_file`).
        label: Option<String>,
        /// The photos and files it gave back.
        media: Vec<Media>,
    },
    /// A photo, or another file, where the line holds one.
    Media(Media),
    /// Plain text, never Markdown: a line about the conversation rather than of it (a title, a
    /// summary, a rewind), or a mention of something not shown (a file by its URI).
    Note(String),
    /// A command the person gave the agent's harness rather than the model (a slash command, a
    /// shell command in the harness's own shell mode): shown as a chip.
    Command {
        /// The command as typed (`/compact`, `!`).
        name: String,
        /// Its arguments (may be empty).
        args: String,
    },
    /// What such a command printed: shown as output, not as anybody's words.
    Output {
        /// The text it printed.
        text: String,
        /// Whether it is what the command printed as an error (its stderr).
        error: bool,
    },
    /// Context the harness put in a message beside what the person typed (an IDE selection, a
    /// file opened in the IDE, a system reminder): shown folded, under what it is.
    Context {
        /// What it is: `IDE selection`, `System reminder`.
        label: String,
        /// What it says (plain text).
        text: String,
    },
    /// Parts shown folded under a title (an MCP tool's result, a checkpoint's messages).
    Group {
        /// What the fold says while it is closed.
        title: String,
        /// What it holds.
        parts: Vec<Part>,
    },
    /// A message quoted inside the entry (one of a checkpoint's), with who said it.
    Message {
        /// Who said it.
        who: Who,
        /// What it says.
        parts: Vec<Part>,
    },
}

/// Who said an entry, as a reader is shown it: the byline, and the side it stands on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Who {
    /// The byline: `You`, `Assistant`, `Codex`, `Tool result`; empty for a note.
    pub name: String,
    /// Which side of the conversation it stands on.
    pub side: Side,
}

impl Who {
    /// `name`, on `side`.
    pub fn new(name: impl Into<String>, side: Side) -> Who {
        Who { name: name.into(), side }
    }

    /// A line about the conversation (its parts are [`Part::Note`]s): no one's words.
    pub fn note() -> Who {
        Who { name: String::new(), side: Side::Note }
    }
}

/// The side of the conversation an entry stands on (the viewer's class for it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Side {
    /// The person's words.
    User,
    /// The agent's words, its tool calls and what they gave back.
    Assistant,
    /// Neither: the agent's notices (info, warnings), notes about the conversation.
    Note,
}

/// A photo or a file in a line, as the rendered line points at it (each image block annotated
/// with its `url`, `mimeType`, `bytes` and `blake3`, or `failed`; each other payload's object with
/// `mediaUrl`, `mediaType` and `mediaBytes`). A client loads only its own server's media URLs.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Media {
    /// A photo to show (else a file to download).
    pub image: bool,
    /// Where its bytes are, where the line says.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// Its media type.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Its size in bytes, decoded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bytes: Option<u64>,
    /// The blake3 (hex) of its bytes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub blake3: Option<String>,
    /// Nothing is behind it (a failed upload, a payload the index does not hold).
    pub failed: bool,
    /// What the entry's text calls it (`Image #1`), where the text refers to its photos by number.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
}

impl Media {
    /// An image block of a rendered line.
    pub fn image(block: &Value) -> Media {
        Media {
            image: true,
            url: str_at(block, "url").map(str::to_owned),
            mime_type: str_at(block, "mimeType").map(str::to_owned),
            bytes: block.get("bytes").and_then(Value::as_u64),
            blake3: str_at(block, "blake3").map(str::to_owned),
            failed: block.get("failed") == Some(&Value::Bool(true)),
            label: None,
        }
    }

    /// A file: the object of a rendered line that holds its payload (`mediaUrl`, `mediaType`,
    /// `mediaBytes`; the type as the agent wrote it, `media_type` or `mimeType`, where the render
    /// gave none).
    pub fn file(object: &Value) -> Media {
        let url = str_at(object, "mediaUrl").map(str::to_owned);
        Media {
            image: false,
            failed: url.is_none(),
            url,
            mime_type: ["mediaType", "media_type", "mimeType"]
                .iter()
                .find_map(|k| str_at(object, k))
                .map(str::to_owned),
            bytes: object.get("mediaBytes").and_then(Value::as_u64),
            blake3: None,
            label: None,
        }
    }
}

/// A tool call at a glance: the tool, and what it acted on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolCall {
    /// Its id, where the format gives one (what its result names, [`Part::ToolResult::call`]).
    pub id: Option<String>,
    /// For an edit (or a patch, or a file written whole): its diff, line by line; empty for any
    /// other call.
    pub diff: Vec<DiffLine>,
    /// The tool's name as the agent called it.
    pub tool: String,
    /// What it acted on: `$ command` for a shell, a path, a pattern, a query or URL, a sub-agent's
    /// description; else the input, as compact JSON.
    pub subject: String,
    /// For an edit: lines added and removed.
    pub lines: Option<(usize, usize)>,
    /// Its input as the agent gave it (a string of JSON read as the value it spells).
    pub input: Value,
}

impl ToolCall {
    /// The one line: `Bash $ git status`, `Edit src/lib.rs (+2 -1)`.
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

/// One line of an edit's diff.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct DiffLine {
    /// `' '` kept, `'+'` added, `'-'` removed, `'@'` a file's or an edit's heading.
    pub op: char,
    /// The line, without its end.
    pub text: String,
}

/// The most diff lines kept of one call (the rest is said to be left out).
const DIFF_MAX: usize = 2_000;

/// The diff from `old` to `new`, line by line.
fn diff_lines(out: &mut Vec<DiffLine>, old: &str, new: &str) {
    for change in similar::TextDiff::from_lines(old, new).iter_all_changes() {
        let op = match change.tag() {
            similar::ChangeTag::Equal => ' ',
            similar::ChangeTag::Insert => '+',
            similar::ChangeTag::Delete => '-',
        };
        out.push(DiffLine { op, text: change.value().trim_end_matches(['\n', '\r']).to_owned() });
    }
}

/// A patch in the `*** Begin Patch` form, or a unified diff, as diff lines.
fn patch_lines(out: &mut Vec<DiffLine>, patch: &str) {
    for line in patch.lines() {
        if line.starts_with("*** Begin Patch") || line.starts_with("*** End Patch") {
            continue;
        }
        let (op, text) = match line.as_bytes().first() {
            _ if line.starts_with("*** ")
                || line.starts_with("@@")
                || line.starts_with("+++ ")
                || line.starts_with("--- ") =>
            {
                ('@', line.trim_start_matches("*** "))
            }
            Some(b'+') => ('+', &line[1..]),
            Some(b'-') => ('-', &line[1..]),
            Some(b' ') => (' ', &line[1..]),
            _ => (' ', line),
        };
        out.push(DiffLine { op, text: text.to_owned() });
    }
}

/// The diff an edit's input describes, if it is one: `old_string`/`new_string` (Claude Code's
/// `Edit`, Gemini CLI's `replace`), `edits` (`MultiEdit`), a patch (Codex's `apply_patch`), or a
/// file written whole (`content` beside a `file_path`).
fn edit_diff(input: &Value, patch: Option<&str>) -> Vec<DiffLine> {
    let mut out = Vec::new();
    if let Some(patch) = patch {
        patch_lines(&mut out, patch);
    } else if let (Some(old), Some(new)) = (str_at(input, "old_string"), str_at(input, "new_string")) {
        diff_lines(&mut out, old, new);
    } else if let Some(Value::Array(edits)) = input.get("edits") {
        for (i, edit) in edits.iter().enumerate() {
            out.push(DiffLine { op: '@', text: format!("edit {} of {}", i + 1, edits.len()) });
            diff_lines(&mut out, str_at(edit, "old_string").unwrap_or(""), str_at(edit, "new_string").unwrap_or(""));
        }
    } else if let (Some(content), Some(_)) = (str_at(input, "content"), str_at(input, "file_path")) {
        diff_lines(&mut out, "", content);
    }
    if out.len() > DIFF_MAX {
        let left = out.len() - DIFF_MAX;
        out.truncate(DIFF_MAX);
        out.push(DiffLine { op: '@', text: format!("({left} more lines not shown)") });
    }
    out
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
    let given = input;
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
            let diff = if files.is_empty() { Vec::new() } else { edit_diff(&Value::Null, Some(s)) };
            return ToolCall { id: None, tool: tool.to_owned(), subject, lines, diff, input: input.clone() };
        }
        other => other,
    };
    let key = |k: &str| str_at(input, k);
    let mut call = ToolCall {
        id: None,
        tool: tool.to_owned(),
        subject: String::new(),
        lines: None,
        diff: Vec::new(),
        // JSON that does not parse is kept as the text it is.
        input: if input.is_null() { given.clone() } else { input.clone() },
    };
    let mut patch = None;
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
    if let Some(text) = key("patch").or(key("input")).filter(|p| !patch_summary(p).0.is_empty()) {
        patch = Some(text);
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
    if call.lines.is_some() {
        call.diff = edit_diff(input, patch);
        // What the diff adds and removes, where there is one (lines an edit keeps are no change).
        let counted = |op| call.diff.iter().filter(|d| d.op == op).count();
        if !call.diff.is_empty() && !call.diff.last().is_some_and(|d| d.text.ends_with("more lines not shown)")) {
            call.lines = Some((counted('+'), counted('-')));
        }
    }
    call
}

/// A tool call with its `id` (the one its result names).
pub fn tool_call_with_id(tool: &str, input: &Value, id: Option<&str>) -> ToolCall {
    ToolCall { id: id.map(str::to_owned), ..tool_call(tool, input) }
}

/// Photos an entry's text refers to by number: `[Image #1]`, `[Image #2]` (the placeholders Claude
/// Code and Codex write where a photo was pasted). Whether `text` holds one.
pub fn has_image_placeholder(text: &str) -> bool {
    image_placeholders(text).next().is_some()
}

/// The placeholders `[Image #N]` in `text`: each one's byte range and number.
pub fn image_placeholders(text: &str) -> impl Iterator<Item = (std::ops::Range<usize>, u32)> + '_ {
    text.match_indices("[Image #").filter_map(move |(at, open)| {
        let rest = &text[at + open.len()..];
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 || digits > 4 || rest.as_bytes().get(digits) != Some(&b']') {
            return None;
        }
        let n = rest[..digits].parse().ok()?;
        Some((at..at + open.len() + digits + 1, n))
    })
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
            "Edit src/lib.rs (+2 -1)"
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

    #[test]
    fn edits_carry_their_diff() {
        let ops = |call: ToolCall| call.diff.iter().map(|d| format!("{}{}", d.op, d.text)).collect::<Vec<_>>();
        let edit = tool_call("Edit", &json!({"file_path": "a.rs", "old_string": "a\nb\n", "new_string": "a\nc\nd\n"}));
        assert_eq!(ops(edit), [" a", "-b", "+c", "+d"]);
        let patch = "*** Begin Patch\n*** Update File: src/a.rs\n@@\n-old\n+new\n keep\n*** End Patch";
        assert_eq!(
            ops(tool_call("apply_patch", &json!(patch))),
            ["@Update File: src/a.rs", "@@@", "-old", "+new", " keep"]
        );
        assert_eq!(ops(tool_call("Write", &json!({"file_path": "n.txt", "content": "x\ny"}))), ["+x", "+y"]);
        assert!(tool_call("Bash", &json!({"command": "ls"})).diff.is_empty());
    }
}
