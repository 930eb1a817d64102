//! Each tool's answer as compact text for a model to read, capped at [`TEXT_MAX`] characters, and
//! the same answer as structured content (JSON) for programs. A cut answer says where it stopped
//! and how to go on, and always goes on: a cursor it gives is past what it showed.
//!
//! The frame: what a transcript wrote can never pass for the lines this module writes around it.
//! Every line of an entry's content (and of a search snippet) starts with [`FENCE`], which no
//! line of the frame does, and an entry's header says how many such lines follow. A one-line field
//! from a transcript (a title, a project, a timestamp or role that is not a plain word) is quoted
//! with its quotes, backslashes, line breaks and control characters escaped. Control characters
//! (and Unicode's line and paragraph separators) inside content are escaped too, so a line is only
//! ever broken at `\n`. Each field is cut to [`FIELD_MAX`] characters (a snippet to
//! [`SNIPPET_MAX`], a tool call's line to [`CALL_MAX`]), in the text and in the structured
//! content alike.

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

/// The start of every line of transcript content in an answer; no line of the frame starts
/// with it.
pub const FENCE: &str = "│ ";
/// The most characters of a title, a project or any other one-line field from a transcript.
pub const FIELD_MAX: usize = 200;
/// The most characters of a search hit's snippet.
pub const SNIPPET_MAX: usize = 600;
/// The most characters of a tool call's line.
pub const CALL_MAX: usize = 500;
/// The most characters of a timestamp, a role or an id shown bare.
const WORD_MAX: usize = 80;

/// At most [`FIELD_MAX`] characters of `s`, ending in `…` if cut: a field of the structured
/// content.
fn short(s: &str) -> String {
    short_to(s, FIELD_MAX)
}

fn short_to(s: &str, n: usize) -> String {
    match cut(s, n) {
        (c, true) => c + "…",
        (c, false) => c,
    }
}

fn short_opt(s: Option<&str>) -> Option<String> {
    s.map(short)
}

/// A one-line field from a transcript, quoted: cut to [`FIELD_MAX`] characters (a `…` after the
/// closing quote says so), its quotes, backslashes, line breaks and control characters escaped,
/// so that it ends at its closing quote and never starts a line.
fn quoted(s: &str) -> String {
    let (c, was_cut) = cut(s, FIELD_MAX);
    let mut q = format!("{c:?}");
    if was_cut {
        q.push('…');
    }
    q
}

/// [`quoted`], or `-` for none.
fn quoted_or_dash(s: Option<&str>) -> String {
    s.map_or_else(|| "-".to_owned(), quoted)
}

/// A timestamp, a role, a kind, an id or a tool name: bare if it is a plain word (letters,
/// digits and `:.+-_/@`, at most [`WORD_MAX`] characters), else [`quoted`]; `-` for none.
fn word(s: Option<&str>) -> String {
    match s {
        None => "-".to_owned(),
        Some(w)
            if !w.is_empty()
                && w.chars().count() <= WORD_MAX
                && w.chars().all(|c| c.is_alphanumeric() || ":.+-_/@".contains(c)) =>
        {
            w.to_owned()
        }
        Some(w) => quoted(w),
    }
}

/// Whether `c` is escaped inside content: a control character other than a line break or a tab,
/// or a character some readers take for a line break.
fn escaped(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t') || matches!(c, '\u{2028}' | '\u{2029}')
}

/// Transcript content as lines inside the fence: `\r\n` read as `\n`, control characters
/// escaped as `\u{…}`, each line after the first starting with [`FENCE`] once joined.
fn content_lines(text: &str) -> Vec<String> {
    let text = text.replace("\r\n", "\n");
    text.split('\n')
        .map(|line| {
            let mut out = String::with_capacity(line.len());
            for c in line.chars() {
                if escaped(c) {
                    let _ = write!(out, "\\u{{{:x}}}", c as u32);
                } else {
                    out.push(c);
                }
            }
            out
        })
        .collect()
}

/// `lines` fenced, each on its own line starting with [`FENCE`], in at most `room` characters
/// (a line that does not fit is cut, and the ones after it left out). The fenced text, how many
/// lines it holds and whether it was cut.
fn fence(lines: &[String], room: usize) -> (String, usize, bool) {
    let mut out = String::new();
    let mut used = 0;
    let prefix = FENCE.chars().count() + 1;
    for (n, line) in lines.iter().enumerate() {
        let len = line.chars().count() + prefix;
        if used + len > room {
            let left = room.saturating_sub(used + prefix);
            if left > 0 {
                let (part, _) = cut(line, left);
                let _ = writeln!(out, "{FENCE}{part}");
                return (out, n + 1, true);
            }
            return (out, n, true);
        }
        let _ = writeln!(out, "{FENCE}{line}");
        used += len;
    }
    (out, lines.len(), false)
}

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

/// A hit's snippet, fenced: one line (its line breaks read as spaces), at most [`SNIPPET_MAX`]
/// characters, matched words in `**bold**`.
fn snippet_block(h: &SearchHit) -> String {
    let marked = h.snippet.marked("**", "**").replace(['\n', '\r'], " ");
    let (text, _, _) = fence(&content_lines(&short_to(&marked, SNIPPET_MAX)), usize::MAX);
    text
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
    let mut skipped = 0;
    for (i, h) in page.hits.iter().enumerate() {
        let mut block = String::new();
        let _ = writeln!(
            block,
            "{}. session {} {} ({}, {})",
            offset as usize + i + 1,
            word(Some(&h.session_id)),
            quoted_or_dash(h.title.as_deref()),
            word(Some(&h.agent)),
            quoted_or_dash(h.project.as_deref())
        );
        let _ = writeln!(block, "   {}", hit_line(h));
        block.push_str(&snippet_block(h));
        block.push('\n');
        if !out.push(&block, CLOSING) {
            // Every field is bounded, so a first hit always fits; were it ever not to, it is
            // passed over rather than handed back forever.
            if shown.is_empty() {
                out.close(&format!("(hit {} is too long to show)\n", offset as usize + 1));
                skipped = 1;
            }
            break;
        }
        shown.push(h);
    }
    let taken = shown.len() + skipped;
    let next = if taken < page.hits.len() { Some(offset + taken as u32) } else { page.next };
    if taken < page.hits.len() {
        out.close(&format!("(cut at {TEXT_MAX} characters after {} hits)\n", shown.len()));
    }
    if let Some(next) = next {
        out.close(&format!("More hits: call search_history again with cursor \"{next}\".\n"));
    }
    let structured = json!({
        "hits": shown.iter().map(|h| json!({
            "sessionId": short(&h.session_id),
            "title": short_opt(h.title.as_deref()),
            "agent": h.agent,
            "project": short_opt(h.project.as_deref()),
            "timestamp": short_opt(h.timestamp.as_deref()),
            "role": short_opt(h.role.as_deref()),
            "cursor": h.cursor,
            "entryUuid": short_opt(h.entry_uuid.as_deref()),
            "tool": short_opt(h.tool.as_deref()),
            "in": if h.in_tool { "tool" } else { "text" },
            "snippet": short_to(&h.snippet.marked("**", "**"), SNIPPET_MAX),
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
        out.close(&format!("(read as: {shown:?})\n"));
    }
    for note in notes {
        out.close(&format!("({})\n", short(note)));
    }
}

/// A hit's one line of where it is and what it is: time, who, the tool it calls.
fn hit_line(h: &SearchHit) -> String {
    let who = word(h.role.as_deref().or(h.kind.as_deref()));
    let what = match (&h.tool, h.in_tool) {
        (Some(tool), _) => format!("{who} · tool call {}", word(Some(tool))),
        (None, true) => format!("{who} · tool output"),
        (None, false) => who,
    };
    format!("{} {} · cursor {}", word(h.timestamp.as_deref()), what, h.cursor)
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
    let mut skipped = 0;
    for (i, g) in page.sessions.iter().enumerate() {
        let mut block = String::new();
        let others = match g.hits.saturating_sub(1) {
            0 => String::new(),
            n => format!(" · {n} more hit{} in it", if n == 1 { "" } else { "s" }),
        };
        let _ = writeln!(
            block,
            "{}. session {} {} ({}, {}, last {}){others}",
            offset as usize + i + 1,
            word(Some(&g.session_id)),
            quoted_or_dash(g.title.as_deref()),
            word(Some(&g.agent)),
            quoted_or_dash(g.project.as_deref()),
            word(g.last_timestamp.as_deref()),
        );
        let _ = writeln!(block, "   {}", hit_line(&g.best));
        block.push_str(&snippet_block(&g.best));
        block.push('\n');
        if !out.push(&block, CLOSING) {
            if shown.is_empty() {
                out.close(&format!("(session {} is too long to show)\n", offset as usize + 1));
                skipped = 1;
            }
            break;
        }
        shown.push(g);
    }
    let taken = shown.len() + skipped;
    let next = if taken < page.sessions.len() { Some(offset + taken as u32) } else { page.next };
    if taken < page.sessions.len() {
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
            "sessionId": short(&g.session_id),
            "title": short_opt(g.title.as_deref()),
            "agent": g.agent,
            "project": short_opt(g.project.as_deref()),
            "lastTimestamp": short_opt(g.last_timestamp.as_deref()),
            "hits": g.hits,
            "best": {
                "timestamp": short_opt(g.best.timestamp.as_deref()),
                "role": short_opt(g.best.role.as_deref()),
                "cursor": g.best.cursor,
                "entryUuid": short_opt(g.best.entry_uuid.as_deref()),
                "tool": short_opt(g.best.tool.as_deref()),
                "in": if g.best.in_tool { "tool" } else { "text" },
                "snippet": short_to(&g.best.snippet.marked("**", "**"), SNIPPET_MAX),
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
    let mut skipped = 0;
    for s in &page.sessions {
        let mut block = String::new();
        let _ = writeln!(block, "session {} {}", word(Some(&s.id)), quoted_or_dash(s.title.as_deref()));
        let _ = writeln!(
            block,
            "   {} · {} · {} to {} · {} entries, {} photos{}\n",
            word(Some(&s.agent)),
            quoted_or_dash(s.project.as_deref()),
            word(s.first_timestamp.as_deref()),
            word(s.last_timestamp.as_deref()),
            s.entries,
            s.images,
            if s.gone { " · its transcript is gone (kept here)" } else { "" }
        );
        if !out.push(&block, CLOSING) {
            if shown.is_empty() {
                out.close("(the first session is too long to show)\n");
                skipped = 1;
            }
            break;
        }
        shown.push(s);
    }
    // A cut page goes on after the last session it took, by that session's own cursor.
    let taken = shown.len() + skipped;
    let next = if taken < page.sessions.len() {
        out.close(&format!("(cut at {TEXT_MAX} characters after {} sessions)\n", shown.len()));
        page.cursors.get(taken - 1).cloned()
    } else {
        page.next.clone()
    };
    if let Some(next) = &next {
        out.close(&format!("More sessions: call list_sessions again with cursor {next:?}.\n"));
    }
    let structured = json!({
        "sessions": shown.iter().map(|s| json!({
            "id": short(&s.id),
            "title": short_opt(s.title.as_deref()),
            "agent": s.agent,
            "project": short_opt(s.project.as_deref()),
            "firstTimestamp": short_opt(s.first_timestamp.as_deref()),
            "lastTimestamp": short_opt(s.last_timestamp.as_deref()),
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
    /// Masks each of an entry's strings whole (`--mask-secrets`), before any of it is cut.
    pub mask: Option<std::sync::Arc<scrollback_render::redact::Redactor>>,
}

/// The first lines of a tool result shown.
const RESULT_LINES: usize = 5;

/// One entry as the frame shows it: a header line, then its content, fenced.
struct Block {
    /// `[cursor N] <time> <who>`, without the count of lines.
    header: String,
    /// The content's lines, escaped, not yet fenced.
    lines: Vec<String>,
}

impl Block {
    /// The entry in at most `room` characters (all of it if it fits): its header with how many
    /// fenced lines follow, the lines, a blank line. Whether it was cut.
    fn render(&self, room: usize) -> (String, bool) {
        // The header's count and its note take at most this many characters.
        const COUNT: usize = 64;
        let room_for_lines = room.saturating_sub(self.header.chars().count() + COUNT + 2);
        let (fenced, n, was_cut) = fence(&self.lines, room_for_lines);
        let plural = |n: usize| if n == 1 { "" } else { "s" };
        let count = if was_cut {
            format!("{n} of {} lines (cut to fit this answer)", self.lines.len())
        } else {
            format!("{n} line{}", plural(n))
        };
        (format!("{} · {count}\n{fenced}\n", self.header), was_cut)
    }
}

/// One entry's block, or `None` if it says nothing under `options`.
fn entry_block(e: &HistoryEntry, options: &ReadOptions) -> Option<Block> {
    let role = e.columns.role.as_deref();
    if !options.roles.is_empty() && !role.is_some_and(|r| options.roles.iter().any(|o| o == r)) {
        return None;
    }
    let (parts, media) = match &e.body {
        EntryBody::Stored { stripped, media } => {
            let mut line: Value = serde_json::from_str(stripped).unwrap_or(Value::Null);
            if let Some(r) = &options.mask {
                r.redact_value(&mut line, &mut Default::default());
            }
            (e.format.parts(&line), media)
        }
        EntryBody::Invalid(why) => {
            return Some(Block {
                header: format!("[cursor {}] line {} could not be read", e.cursor, e.line),
                lines: content_lines(&short_to(why, SNIPPET_MAX)),
            });
        }
    };
    let mut body = String::new();
    let (said_parts, is_tool_result) = parts_lines(&mut body, &parts, options);
    let said_media = media_lines(&mut body, media);
    if !said_parts && !said_media {
        return None;
    }
    let who = if is_tool_result {
        "tool".to_owned()
    } else {
        word(Some(role.or(e.columns.kind.as_deref()).unwrap_or("entry")))
    };
    Some(Block {
        header: format!("[cursor {}] {} {who}", e.cursor, word(e.columns.timestamp.as_deref())),
        lines: content_lines(body.strip_suffix('\n').unwrap_or(&body)),
    })
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
                let _ = writeln!(body, "→ {}", short_to(&call.line(), CALL_MAX));
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
                let _ = writeln!(body, "({})", short(title));
                write_parts(body, parts, options, budget, said_anything, is_tool_result);
            }
            Part::Message { who, parts } => {
                let _ = writeln!(body, "{}:", short(&who.name));
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
                word(m.media_type.as_deref()),
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
        let _ = writeln!(body, "[photo {name}, {}, {} bytes]", word(m.media_type.as_deref()), m.decoded_length);
        said_anything = true;
    }
    said_anything
}

/// `read_session`'s answer from its pages (one, or two around a cursor).
pub fn session(summary: &SessionSummary, pages: &[HistoryPage], options: &ReadOptions) -> CallToolResult {
    let mut out = Capped::new();
    out.close(&format!(
        "Session {} {} · {} · {} · {} to {} · {} entries, {} photos\n\n",
        word(Some(&summary.id)),
        quoted_or_dash(summary.title.as_deref()),
        word(Some(&summary.agent)),
        quoted_or_dash(summary.project.as_deref()),
        word(summary.first_timestamp.as_deref()),
        word(summary.last_timestamp.as_deref()),
        summary.entries,
        summary.images
    ));
    let entries: Vec<&HistoryEntry> = pages.iter().flat_map(|p| p.entries.iter()).collect();
    let mut shown = Vec::new();
    let mut any_shown = false;
    let mut next = pages.last().and_then(|p| p.next);
    for (i, e) in entries.iter().enumerate() {
        let Some(block) = entry_block(e, options) else {
            shown.push(json!({ "cursor": e.cursor, "shown": false }));
            continue;
        };
        let entry = |cut: bool| {
            json!({
                "cursor": e.cursor,
                "shown": true,
                "cut": cut,
                "role": short_opt(e.columns.role.as_deref()),
                "timestamp": short_opt(e.columns.timestamp.as_deref()),
            })
        };
        let (whole, _) = block.render(usize::MAX);
        if out.push(&whole, CLOSING) {
            shown.push(entry(false));
            any_shown = true;
            continue;
        }
        if any_shown {
            out.close(&format!("(cut at {TEXT_MAX} characters: the rest goes on from cursor {})\n", e.cursor));
            next = Some(e.cursor);
            break;
        }
        // The first entry does not fit whole: it is cut to the room there is, and the answer
        // goes on after it, so that reading on always moves.
        let (part, _) = block.render(TEXT_MAX.saturating_sub(out.chars + CLOSING));
        out.close(&part);
        shown.push(entry(true));
        next = entries.get(i + 1).map(|e| e.cursor).or(next);
        break;
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
        "session": short(&summary.id),
        "entries": shown,
        "next": next,
        "before": before,
    });
    result(out.text, structured)
}
