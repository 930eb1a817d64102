//! Each tool's answer as compact text for a model to read, capped at [`TEXT_MAX`] characters, and
//! the same answer as structured content (JSON) for programs. A cut answer says where it stopped
//! and how to go on.

use std::fmt::Write as _;

use rmcp::model::{CallToolResult, ContentBlock as Content};
use serde_json::{Value, json};

use super::TEXT_MAX;
use scrollback_core::format::Part;
use scrollback_read::history::{
    EntryBody, HistoryEntry, HistoryPage, SearchHit, SearchPage, SessionHitsPage, SessionPage, SessionSummary,
};
use scrollback_read::media::MediaRecord;

/// Text that stops growing at [`TEXT_MAX`] characters.
struct Capped {
    text: String,
    chars: usize,
}

impl Capped {
    fn new() -> Capped {
        Capped { text: String::new(), chars: 0 }
    }

    /// Appends `block` whole if it fits beside what is there (leaving `reserve` characters for the
    /// closing lines); `false`, and nothing appended, if it does not.
    fn push(&mut self, block: &str, reserve: usize) -> bool {
        let n = block.chars().count();
        if self.chars + n + reserve > TEXT_MAX {
            return false;
        }
        self.text.push_str(block);
        self.chars += n;
        true
    }

    /// Appends `line` whatever its length (the closing lines, kept short).
    fn close(&mut self, line: &str) {
        self.text.push_str(line);
        self.chars += line.chars().count();
    }
}

/// Room kept for the lines that say how to go on.
const CLOSING: usize = 400;

fn result(text: String, structured: Value) -> CallToolResult {
    let mut r = CallToolResult::success(vec![Content::text(text)]);
    r.structured_content = Some(structured);
    r
}

/// At most `n` characters of `s`, and whether it was cut.
fn cut(s: &str, n: usize) -> (String, bool) {
    match s.char_indices().nth(n) {
        Some((at, _)) => (s[..at].to_owned(), true),
        None => (s.to_owned(), false),
    }
}

fn or_dash(s: Option<&str>) -> &str {
    s.unwrap_or("-")
}

/// `search_history`'s answer.
pub fn hits(query: &str, read_as: &str, page: &SearchPage, offset: u32) -> CallToolResult {
    let mut out = Capped::new();
    let shown_query: String = query.chars().take(200).collect();
    read_note(&mut out, query, read_as, &page.notes);
    if page.hits.is_empty() {
        out.close(&format!("No hits for {shown_query:?}{}.\n", if offset > 0 { " past this cursor" } else { "" }));
    } else {
        out.close(&format!("Hits for {shown_query:?}, best first:\n\n"));
    }
    let mut shown = Vec::new();
    for (i, h) in page.hits.iter().enumerate() {
        let mut block = String::new();
        let _ = writeln!(
            block,
            "{}. session {} \"{}\" ({}, {})",
            offset as usize + i + 1,
            h.session_id,
            or_dash(h.title.as_deref()),
            h.agent,
            or_dash(h.project.as_deref())
        );
        let _ = writeln!(block, "   {}", hit_line(h));
        let _ = writeln!(block, "   {}\n", h.snippet.marked("**", "**").replace('\n', " "));
        if !out.push(&block, CLOSING) {
            break;
        }
        shown.push(h);
    }
    let next = if shown.len() < page.hits.len() { Some(offset + shown.len() as u32) } else { page.next };
    if shown.len() < page.hits.len() {
        out.close(&format!("(cut at {TEXT_MAX} characters after {} hits)\n", shown.len()));
    }
    if let Some(next) = next {
        out.close(&format!("More hits: call search_history again with cursor \"{next}\".\n"));
    }
    let structured = json!({
        "hits": shown.iter().map(|h| json!({
            "sessionId": h.session_id,
            "title": h.title,
            "agent": h.agent,
            "project": h.project,
            "timestamp": h.timestamp,
            "role": h.role,
            "cursor": h.cursor,
            "entryUuid": h.entry_uuid,
            "tool": h.tool,
            "in": if h.in_tool { "tool" } else { "text" },
            "snippet": h.snippet.marked("**", "**"),
        })).collect::<Vec<_>>(),
        "next": next.map(|n| n.to_string()),
        "readAs": read_as,
        "notes": page.notes,
    });
    result(out.text, structured)
}

/// How the query was read, when that differs from how it was written, and the search's notes.
fn read_note(out: &mut Capped, query: &str, read_as: &str, notes: &[String]) {
    if read_as != query.trim() {
        let shown: String = read_as.chars().take(200).collect();
        out.close(&format!("(read as: {shown})\n"));
    }
    for note in notes {
        out.close(&format!("({note})\n"));
    }
}

/// A hit's one line of where it is and what it is: time, who, the tool it calls.
fn hit_line(h: &SearchHit) -> String {
    let who = h.role.as_deref().or(h.kind.as_deref());
    let what = match (&h.tool, h.in_tool) {
        (Some(tool), _) => format!("{} · tool call {tool}", or_dash(who)),
        (None, true) => format!("{} · tool output", or_dash(who)),
        (None, false) => or_dash(who).to_owned(),
    };
    format!("{} {} · cursor {}", or_dash(h.timestamp.as_deref()), what, h.cursor)
}

/// `search_history`'s answer grouped by session: each session once, with its best hit and how many
/// others it has.
pub fn session_hits(query: &str, read_as: &str, page: &SessionHitsPage, offset: u32) -> CallToolResult {
    let mut out = Capped::new();
    let shown_query: String = query.chars().take(200).collect();
    read_note(&mut out, query, read_as, &page.notes);
    if page.sessions.is_empty() {
        out.close(&format!("No hits for {shown_query:?}{}.\n", if offset > 0 { " past this cursor" } else { "" }));
    } else {
        out.close(&format!("Sessions with hits for {shown_query:?}, best first, each with its best hit:\n\n"));
    }
    let mut shown = Vec::new();
    for (i, g) in page.sessions.iter().enumerate() {
        let mut block = String::new();
        let others = match g.hits.saturating_sub(1) {
            0 => String::new(),
            n => format!(" · {n} more hit{} in it", if n == 1 { "" } else { "s" }),
        };
        let _ = writeln!(
            block,
            "{}. session {} \"{}\" ({}, {}, last {}){others}",
            offset as usize + i + 1,
            g.session_id,
            or_dash(g.title.as_deref()),
            g.agent,
            or_dash(g.project.as_deref()),
            or_dash(g.last_timestamp.as_deref()),
        );
        let _ = writeln!(block, "   {}", hit_line(&g.best));
        let _ = writeln!(block, "   {}\n", g.best.snippet.marked("**", "**").replace('\n', " "));
        if !out.push(&block, CLOSING) {
            break;
        }
        shown.push(g);
    }
    let next = if shown.len() < page.sessions.len() { Some(offset + shown.len() as u32) } else { page.next };
    if shown.len() < page.sessions.len() {
        out.close(&format!("(cut at {TEXT_MAX} characters after {} sessions)\n", shown.len()));
    }
    if let Some(next) = next {
        out.close(&format!("More sessions: call search_history again with cursor \"{next}\".\n"));
    }
    if !shown.is_empty() {
        out.close("Every hit of one session: call search_history with its session and per_entry true.\n");
    }
    let structured = json!({
        "sessions": shown.iter().map(|g| json!({
            "sessionId": g.session_id,
            "title": g.title,
            "agent": g.agent,
            "project": g.project,
            "lastTimestamp": g.last_timestamp,
            "hits": g.hits,
            "best": {
                "timestamp": g.best.timestamp,
                "role": g.best.role,
                "cursor": g.best.cursor,
                "entryUuid": g.best.entry_uuid,
                "tool": g.best.tool,
                "in": if g.best.in_tool { "tool" } else { "text" },
                "snippet": g.best.snippet.marked("**", "**"),
            },
        })).collect::<Vec<_>>(),
        "next": next.map(|n| n.to_string()),
        "readAs": read_as,
        "notes": page.notes,
    });
    result(out.text, structured)
}

/// `list_sessions`' answer.
pub fn sessions(page: &SessionPage) -> CallToolResult {
    let mut out = Capped::new();
    if page.sessions.is_empty() {
        out.close("No sessions.\n");
    }
    let mut shown = Vec::new();
    for s in &page.sessions {
        let mut block = String::new();
        let _ = writeln!(block, "session {} \"{}\"", s.id, or_dash(s.title.as_deref()));
        let _ = writeln!(
            block,
            "   {} · {} · {} to {} · {} entries, {} photos{}\n",
            s.agent,
            or_dash(s.project.as_deref()),
            or_dash(s.first_timestamp.as_deref()),
            or_dash(s.last_timestamp.as_deref()),
            s.entries,
            s.images,
            if s.gone { " · its transcript is gone (kept here)" } else { "" }
        );
        if !out.push(&block, CLOSING) {
            break;
        }
        shown.push(s);
    }
    // A cut page goes on from the last session shown, as the index's own cursor would.
    let next = if shown.len() < page.sessions.len() {
        out.close(&format!("(cut at {TEXT_MAX} characters after {} sessions)\n", shown.len()));
        None
    } else {
        page.next.clone()
    };
    if let Some(next) = &next {
        out.close(&format!("More sessions: call list_sessions again with cursor \"{next}\".\n"));
    }
    let structured = json!({
        "sessions": shown.iter().map(|s| json!({
            "id": s.id,
            "title": s.title,
            "agent": s.agent,
            "project": s.project,
            "firstTimestamp": s.first_timestamp,
            "lastTimestamp": s.last_timestamp,
            "entries": s.entries,
            "photos": s.images,
            "gone": s.gone,
        })).collect::<Vec<_>>(),
        "next": next,
    });
    result(out.text, structured)
}

/// How `read_session` shows entries.
#[derive(Debug, Clone)]
pub struct ReadOptions {
    /// Only entries with these roles (all if empty).
    pub roles: Vec<String>,
    /// Show tool calls and results.
    pub include_tools: bool,
    /// The most characters of an entry's text.
    pub max_chars: usize,
}

/// The first lines of a tool result shown.
const RESULT_LINES: usize = 5;

/// One entry's block, or `None` if it says nothing under `options`.
fn entry_block(e: &HistoryEntry, options: &ReadOptions) -> Option<String> {
    let role = e.columns.role.as_deref();
    if !options.roles.is_empty() && !role.is_some_and(|r| options.roles.iter().any(|o| o == r)) {
        return None;
    }
    let (parts, media) = match &e.body {
        EntryBody::Stored { stripped, media } => {
            let line: Value = serde_json::from_str(stripped).unwrap_or(Value::Null);
            (e.format.parts(&line), media)
        }
        EntryBody::Invalid(why) => {
            return Some(format!("[cursor {}] line {} could not be read: {why}\n\n", e.cursor, e.line));
        }
    };
    let mut body = String::new();
    let (said_parts, is_tool_result) = parts_lines(&mut body, &parts, options);
    let said_media = media_lines(&mut body, media);
    if !said_parts && !said_media {
        return None;
    }
    let who = if is_tool_result { "tool" } else { role.or(e.columns.kind.as_deref()).unwrap_or("entry") };
    Some(format!("[cursor {}] {} {}\n{}\n", e.cursor, or_dash(e.columns.timestamp.as_deref()), who, body))
}

/// Writes an entry's parts into `body`: its text and thinking, cut at `options.max_chars` in all,
/// and its tool calls and results if `options` asks for them. Whether it wrote anything, and
/// whether a tool result was among them.
fn parts_lines(body: &mut String, parts: &[Part], options: &ReadOptions) -> (bool, bool) {
    let mut budget = options.max_chars;
    let mut said_anything = false;
    let mut is_tool_result = false;
    write_parts(body, parts, options, &mut budget, &mut said_anything, &mut is_tool_result);
    (said_anything, is_tool_result)
}

/// [`parts_lines`]' work, folded parts and quoted messages included, from what is left of `budget`.
fn write_parts(
    body: &mut String,
    parts: &[Part],
    options: &ReadOptions,
    budget: &mut usize,
    said_anything: &mut bool,
    is_tool_result: &mut bool,
) {
    for part in parts {
        match part {
            Part::Text(t) | Part::Thinking(t) | Part::Note(t) => {
                let (text, was_cut) = cut(t.trim(), *budget);
                *budget = budget.saturating_sub(text.chars().count());
                if matches!(part, Part::Thinking(_)) {
                    body.push_str("(thinking) ");
                }
                body.push_str(&text);
                if was_cut {
                    let _ = write!(body, " … [{} more characters]", t.trim().chars().count() - text.chars().count());
                }
                body.push('\n');
                *said_anything = true;
            }
            Part::ToolCall(call) if options.include_tools => {
                let _ = writeln!(body, "→ {}", call.line());
                *said_anything = true;
            }
            Part::ToolResult { text, error, .. } if options.include_tools => {
                *is_tool_result = true;
                tool_result_lines(body, text, *error, *budget);
                *said_anything = true;
            }
            Part::Command { name, args } => {
                let _ = writeln!(body, "{}", format!("{name} {args}").trim_end());
                *said_anything = true;
            }
            Part::Output { text, .. } | Part::Context { text, .. } if options.include_tools => {
                tool_result_lines(body, text, false, *budget);
                *said_anything = true;
            }
            Part::Output { .. } | Part::Context { .. } => {}
            Part::Group { title, parts } => {
                let _ = writeln!(body, "({title})");
                write_parts(body, parts, options, budget, said_anything, is_tool_result);
            }
            Part::Message { who, parts } => {
                let _ = writeln!(body, "{}:", who.name);
                write_parts(body, parts, options, budget, said_anything, is_tool_result);
            }
            // Photos are listed from the entry's media rows.
            Part::ToolCall(_) | Part::ToolResult { .. } | Part::Media(_) => {}
        }
    }
}

/// Writes a tool result's size and its first [`RESULT_LINES`] lines, each cut to 200 characters
/// (or to what is left of `budget`, 40 at least).
fn tool_result_lines(body: &mut String, text: &str, error: bool, budget: usize) {
    let lines: Vec<&str> = text.lines().collect();
    let label = if error { "← ERROR result" } else { "← result" };
    if lines.is_empty() {
        let _ = writeln!(body, "{label}");
    } else {
        let _ = writeln!(body, "{label}, {} lines, {} characters:", lines.len(), text.chars().count());
    }
    for line in lines.iter().take(RESULT_LINES) {
        let (line, _) = cut(line, 200.min(budget.max(40)));
        let _ = writeln!(body, "   {line}");
    }
    if lines.len() > RESULT_LINES {
        let _ = writeln!(body, "   …");
    }
}

/// Lists an entry's payloads in `body`, each once: a photo by its ref (or its blake3), any other
/// payload by its kind, type, size and blake3. Whether it listed any.
fn media_lines(body: &mut String, media: &[MediaRecord]) -> bool {
    let mut said_anything = false;
    let mut seen: Vec<&str> = Vec::new();
    for m in media {
        // The same bytes twice in one line (a tool result that repeats its photo): listed once.
        if seen.contains(&m.blake3.as_str()) {
            continue;
        }
        seen.push(&m.blake3);
        if m.kind != scrollback_core::codec::scan::MediaKind::Image {
            let _ = writeln!(
                body,
                "[{} {}, {} bytes, blake3 {}]",
                m.kind.as_str(),
                or_dash(m.media_type.as_deref()),
                m.decoded_length,
                m.blake3
            );
            said_anything = true;
            continue;
        }
        let name = match m.reference() {
            Some(r) => format!("ref {r}"),
            None => format!("blake3 {}", m.blake3),
        };
        let _ = writeln!(body, "[photo {name}, {}, {} bytes]", or_dash(m.media_type.as_deref()), m.decoded_length);
        said_anything = true;
    }
    said_anything
}

/// `read_session`'s answer from its pages (one, or two around a cursor).
pub fn session(summary: &SessionSummary, pages: &[HistoryPage], options: &ReadOptions) -> CallToolResult {
    let mut out = Capped::new();
    out.close(&format!(
        "Session {} \"{}\" · {} · {} · {} to {} · {} entries, {} photos\n\n",
        summary.id,
        or_dash(summary.title.as_deref()),
        summary.agent,
        or_dash(summary.project.as_deref()),
        or_dash(summary.first_timestamp.as_deref()),
        or_dash(summary.last_timestamp.as_deref()),
        summary.entries,
        summary.images
    ));
    let entries: Vec<&HistoryEntry> = pages.iter().flat_map(|p| p.entries.iter()).collect();
    let mut shown = Vec::new();
    let mut next = pages.last().and_then(|p| p.next);
    for e in &entries {
        let Some(block) = entry_block(e, options) else {
            shown.push(json!({ "cursor": e.cursor, "shown": false }));
            continue;
        };
        if !out.push(&block, CLOSING) {
            out.close(&format!("(cut at {TEXT_MAX} characters: the rest goes on from cursor {})\n", e.cursor));
            next = Some(e.cursor);
            break;
        }
        shown.push(
            json!({ "cursor": e.cursor, "shown": true, "role": e.columns.role, "timestamp": e.columns.timestamp }),
        );
    }
    if entries.is_empty() {
        out.close("(no entries here)\n");
    }
    let before = pages.first().and_then(|p| p.before);
    if let Some(next) = next {
        out.close(&format!("Later entries: read_session with from={next}.\n"));
    } else {
        out.close("This is the end of the session.\n");
    }
    if let Some(before) = before {
        out.close(&format!("Earlier entries: read_session with before={before}.\n"));
    }
    let structured = json!({
        "session": summary.id,
        "entries": shown,
        "next": next,
        "before": before,
    });
    result(out.text, structured)
}
