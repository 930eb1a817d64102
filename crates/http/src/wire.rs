//! The wire format: how the read side's values, the sent messages, the bus's events and the API's
//! errors look in HTTP responses.
//!
//! JSON with camelCase keys; payload URLs under `/api/session-media/` (by ref, each segment
//! percent-encoded) and `/api/media/` (by hash); search snippets as HTML, escaped, with matches in
//! `<mark>`. This is the only place that knows any of it: every JSON body the API writes is built
//! here.

use std::fmt::Write as _;

use serde::Serialize;
use serde_json::value::RawValue;

use scrollback_accept::Accepted;
use scrollback_core::codec::refs::MediaRef;
use scrollback_core::format::Typed;
use scrollback_index::events::Event;
use scrollback_index::forget::Forgotten;
use scrollback_ops::chat::{ChatEvent, ChatState};
use scrollback_ops::status::{Status, WriterState};
use scrollback_read::history::{self, HistoryEntry, HistoryPage, SearchHit, SessionPage, SessionSummary, Snippet};
use scrollback_read::render::MediaUrls;
use scrollback_render::redact::Redactor;

/// The API's media URLs.
#[derive(Debug, Clone, Copy, Default)]
pub struct ApiUrls;

impl MediaUrls for ApiUrls {
    fn by_ref(&self, r: &MediaRef) -> String {
        format!("/api/session-media/{}/{}/{}", encode_segment(&r.session_id), encode_segment(&r.entry_uuid), r.ordinal)
    }

    fn by_hash(&self, blake3: &str) -> String {
        format!("/api/media/{blake3}")
    }
}

/// Percent-encodes a path segment (anything but unreserved characters).
fn encode_segment(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(b as char);
        } else {
            write!(out, "%{b:02X}").unwrap();
        }
    }
    out
}

/// One session, as listed.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Session<'a> {
    id: &'a str,
    project: Option<&'a str>,
    title: Option<&'a str>,
    first_timestamp: Option<&'a str>,
    last_timestamp: Option<&'a str>,
    entries: i64,
    sidechain_entries: i64,
    images: i64,
    gone: bool,
    agent: &'a str,
    forked_from: Option<&'a str>,
    /// The host whose index holds it, on a team's hub.
    #[serde(skip_serializing_if = "Option::is_none")]
    host: Option<&'a str>,
    /// Pinned by a person to the top of the list.
    pinned: bool,
    /// The title the transcript gives, when a person gave the session one of their own (`title`).
    #[serde(skip_serializing_if = "Option::is_none")]
    transcript_title: Option<&'a str>,
}

impl<'a> Session<'a> {
    /// The session with a person's marks on it, if they made any.
    pub fn marked(s: &'a SessionSummary, mark: Option<&'a scrollback_accept::Mark>) -> Self {
        let mut session = Session::from(s);
        // A team's hub holds a person's pins itself (its titles are in `title` already).
        session.pinned = s.pinned.unwrap_or(false);
        if let Some(mark) = mark {
            session.pinned = mark.pinned;
            if let Some(title) = &mark.title {
                session.transcript_title = s.title.as_deref();
                session.title = Some(title);
            }
        }
        session
    }
}

impl<'a> From<&'a SessionSummary> for Session<'a> {
    fn from(s: &'a SessionSummary) -> Self {
        Session {
            id: &s.id,
            project: s.project.as_deref(),
            title: s.title.as_deref(),
            first_timestamp: s.first_timestamp.as_deref(),
            last_timestamp: s.last_timestamp.as_deref(),
            entries: s.entries,
            sidechain_entries: s.sidechain_entries,
            images: s.images,
            gone: s.gone,
            agent: &s.agent,
            forked_from: s.forked_from.as_deref(),
            host: s.host.as_deref(),
            pinned: false,
            transcript_title: None,
        }
    }
}

/// `GET /api/sessions`.
#[derive(Debug, Serialize)]
pub struct Sessions<'a> {
    sessions: Vec<Session<'a>>,
    next: Option<&'a str>,
}

impl<'a> From<&'a SessionPage> for Sessions<'a> {
    fn from(p: &'a SessionPage) -> Self {
        Sessions::marked(p, &[])
    }
}

impl<'a> Sessions<'a> {
    /// The page with a person's `marks` on its sessions.
    pub fn marked(p: &'a SessionPage, marks: &'a [scrollback_accept::Mark]) -> Self {
        let mark = |id: &str| marks.iter().find(|m| m.session_id == id);
        Sessions {
            sessions: p.sessions.iter().map(|s| Session::marked(s, mark(&s.id))).collect(),
            next: p.next.as_deref(),
        }
    }
}

/// One history entry: its columns, the stored line rendered with the API's URLs (or why the line
/// is invalid), and what a person typed in it, by its format's rule (what a client's reconcile
/// compares with a pending send).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Entry<'a> {
    cursor: i64,
    /// `[at, file, line]`: compared element by element, the entry's place in the conversation.
    order: (&'a str, i64, i64),
    line: i64,
    uuid: Option<&'a str>,
    parent_uuid: Option<&'a str>,
    #[serde(rename = "type")]
    kind: Option<&'a str>,
    role: Option<&'a str>,
    timestamp: Option<&'a str>,
    is_sidechain: bool,
    agent: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    subagent: Option<Subagent<'a>>,
    /// On a sub-agent's first entry: the entry that ran it.
    #[serde(skip_serializing_if = "Option::is_none")]
    spawned_by: Option<SpawnedBy<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    entry: Option<Box<RawValue>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    invalid: Option<&'a str>,
    /// What a person typed, where the entry is a person's message ([`Format::typed_input`] on the
    /// rendered line, whose image blocks carry their blake3).
    ///
    /// [`Format::typed_input`]: scrollback_core::format::Format::typed_input
    #[serde(skip_serializing_if = "Option::is_none")]
    typed: Option<Typed>,
    /// Who said it and its parts, laid out by the viewer, when the page was asked for with them.
    #[serde(skip_serializing_if = "Option::is_none")]
    view: Option<scrollback_render::view::View>,
}

impl<'a> Entry<'a> {
    /// The entry, with its view if `view`.
    pub fn new(e: &'a HistoryEntry, view: bool) -> Self {
        Entry::masked(e, view, None)
    }

    /// [`Entry::new`], its line's strings masked by `mask` (each whole), so that what was typed
    /// and the view are made of the masked line.
    pub fn masked(e: &'a HistoryEntry, view: bool, mask: Option<&Redactor>) -> Self {
        let mut rendered = e.render(&ApiUrls);
        // Parsed once, for what the person typed and for the view.
        let mut line = rendered.as_deref().and_then(|r| serde_json::from_str::<serde_json::Value>(r).ok());
        if let (Some(r), Some(line)) = (mask, line.as_mut()) {
            r.redact_value(line, &mut Default::default());
            rendered = Some(line.to_string());
        }
        let typed = line
            .as_ref()
            .and_then(|line| e.format.typed_input(e.columns.kind.as_deref(), e.columns.is_sidechain, line));
        let view = match (&line, view) {
            (Some(line), true) => Some(scrollback_render::view::of(e.format, line, e.columns.is_sidechain)),
            _ => None,
        };
        let entry = rendered.map(|rendered| {
            // A stored line is JSON by construction, and rendering keeps it so; should either ever
            // fail, the client gets the text as a string rather than an error.
            RawValue::from_string(rendered).unwrap_or_else(|e| {
                tracing::error!("a rendered line is not JSON: {e}");
                RawValue::from_string(serde_json::Value::Null.to_string()).expect("null is JSON")
            })
        });
        Entry {
            cursor: e.cursor,
            order: (&e.order.at, e.order.file, e.order.line),
            line: e.line,
            uuid: e.columns.uuid.as_deref(),
            parent_uuid: e.columns.parent_uuid.as_deref(),
            kind: e.columns.kind.as_deref(),
            role: e.columns.role.as_deref(),
            timestamp: e.columns.timestamp.as_deref(),
            is_sidechain: e.columns.is_sidechain,
            agent: e.format.name(),
            subagent: e.subagent.as_ref().map(|s| Subagent {
                agent_id: &s.agent_id,
                first: s.first,
                entries: s.entries,
            }),
            spawned_by: e.spawned_by.as_ref().map(|s| SpawnedBy { agent_id: &s.agent_id, cursor: s.cursor }),
            entry,
            invalid: e.invalid(),
            typed,
            view,
        }
    }
}

impl<'a> From<&'a HistoryEntry> for Entry<'a> {
    fn from(e: &'a HistoryEntry) -> Self {
        Entry::new(e, false)
    }
}

/// The sub-agent an entry's tool call ran, and where its entries are.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Subagent<'a> {
    agent_id: &'a str,
    first: Option<i64>,
    entries: i64,
}

/// The entry whose tool call ran a sub-agent, named on the sub-agent's first entry.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SpawnedBy<'a> {
    agent_id: &'a str,
    cursor: Option<i64>,
}

/// `GET /api/status` of a team's hub (`serve --postgres`): its hosts, when each pushed and what its
/// sessions hold, and the photos' bytes it holds.
pub fn hub_status(hub: &scrollback_read::status::HubStatus) -> serde_json::Value {
    serde_json::json!({
        "store": "hub",
        "version": env!("CARGO_PKG_VERSION"),
        "schemaVersion": hub.schema_version,
        "hosts": hub.hosts.iter().map(|h| serde_json::json!({
            "name": h.name,
            "firstPushAt": h.first_push_at,
            "lastPushAt": h.last_push_at,
            "sessions": h.sessions,
            "entries": h.entries,
            "photos": h.photos,
        })).collect::<Vec<_>>(),
        "blobs": hub.blobs,
        "blobBytes": hub.blob_bytes,
    })
}

/// `GET /api/status` of an index: what it holds and how the server stands.
pub fn status(status: &Status, push: Option<&scrollback_hub::follow::PushStatus>) -> serde_json::Value {
    let s = status.index.as_ref();
    let writer = match &status.writer {
        WriterState::Failed(error) => serde_json::json!({ "state": status.writer.as_str(), "error": error }),
        other => serde_json::json!({ "state": other.as_str() }),
    };
    serde_json::json!({
        "writer": writer,
        "indexDamage": status.index_damage,
        "watcher": status.watcher,
        "transcripts": s.map(|s| serde_json::json!({ "live": s.transcripts_live, "gone": s.transcripts_gone })),
        "roots": status.roots.iter().map(|r| serde_json::json!({
            "agent": r.root.format.name(),
            "dir": r.root.dir.to_string_lossy(),
            "exists": r.exists,
            "transcripts": r.count.map(|c| c.transcripts),
            "sessions": r.count.map(|c| c.sessions),
        })).collect::<Vec<_>>(),
        "dataDir": status.data_dir.to_string_lossy(),
        "version": env!("CARGO_PKG_VERSION"),
        "engine": status.engine,
        "sessions": s.map(|s| s.sessions),
        "agents": s.map(|s| s.agents.iter().map(|(a, n)| (a.clone(), serde_json::json!(n))).collect::<serde_json::Map<_, _>>()),
        "entries": s.map(|s| s.entries),
        "invalidLines": s.map(|s| s.invalid_lines),
        "photos": s.map(|s| s.photos),
        "indexBytes": s.map(|s| s.index_bytes),
        "freeBytes": s.and_then(|s| s.free_bytes),
        "vault": s.map(|s| serde_json::json!({
            "state": if s.vault.off.is_some() { "off" } else { "on" },
            "off": s.vault.off,
            "links": s.vault.links,
            "onlyInVaultBytes": s.vault.only_in_vault_bytes,
            "broken": s.vault.broken,
        })),
        "acceptancesPending": status.sends_pending,
        "push": push.map(|p| serde_json::json!({
            "hub": p.hub,
            "host": p.host,
            "state": p.state,
            "lastPushAt": p.last_push_at,
            "error": p.error,
            "retryInSecs": p.retry_in_secs,
            "entriesSent": p.entries_sent,
            "photosSent": p.photos_sent,
        })),
    })
}

/// `GET /api/info`: the version, the send limits, the agents whose transcripts scrollback reads
/// (the format registry's names and display names, in its order), and whether an engine runs sent
/// messages (without one the server takes none, and the viewer offers no composer).
pub fn info(engine: bool, store: &str) -> serde_json::Value {
    use scrollback_accept::send::{MAX_BODY, MAX_IMAGE_BYTES, MAX_IMAGES, MAX_TEXT};
    let agents: Vec<serde_json::Value> = scrollback_core::format::FORMATS
        .iter()
        .map(|f| serde_json::json!({ "name": f.name(), "displayName": f.display_name() }))
        .collect();
    serde_json::json!({
        "version": env!("CARGO_PKG_VERSION"),
        "limits": { "maxImages": MAX_IMAGES, "maxImageBytes": MAX_IMAGE_BYTES, "maxText": MAX_TEXT, "maxBody": MAX_BODY },
        "agents": agents,
        "engine": engine,
        "store": store,
    })
}

/// `DELETE /api/sessions/{id}`: what went.
pub fn forgotten(f: &Forgotten) -> serde_json::Value {
    serde_json::json!({
        "sessionId": f.session_id,
        "entries": f.entries,
        "photos": f.media,
        "transcripts": f.files,
        "messages": f.messages,
        "freedBytes": f.freed_bytes(),
    })
}

/// `POST /api/login`: whether this server requires a token.
pub fn login(required: bool) -> serde_json::Value {
    serde_json::json!({ "required": required })
}

/// Every error answer: `{"error": {"code", "message"}}`.
pub fn error(code: &str, message: &str) -> serde_json::Value {
    serde_json::json!({ "error": { "code": code, "message": message } })
}

/// `POST /api/chats/{chatId}/session`.
pub fn bound(chat_id: &str, session_id: &str) -> serde_json::Value {
    serde_json::json!({ "chatId": chat_id, "sessionId": session_id })
}

/// `POST /api/chat/retire`: the messages retired now.
pub fn retired(chat_id: &str, retired: &[String]) -> serde_json::Value {
    serde_json::json!({ "chatId": chat_id, "retired": retired })
}

/// `GET /api/chat/bootstrap`: the chat's session, its newest history page (if it has a session,
/// each entry with its view, as the viewer shows it) and its pending sends, side by side.
pub fn bootstrap(chat_id: &str, state: &ChatState, page: Option<&HistoryPage>) -> serde_json::Value {
    let page = page.map(|page| History::new(page, true));
    let (entries, before, after) = match &page {
        Some(page) => (serde_json::to_value(&page.entries).unwrap_or_default(), page.before, page.after),
        None => (serde_json::json!([]), None, None),
    };
    serde_json::json!({
        "chatId": chat_id,
        "sessionId": state.session_id,
        "entries": entries,
        "before": before,
        "after": after,
        "pending": state.pending.iter().map(accepted).collect::<Vec<_>>(),
    })
}

/// What the events socket sends a client that fell behind by `missed` events.
pub fn lagged(missed: u64) -> serde_json::Value {
    serde_json::json!({ "type": "lagged", "missed": missed })
}

/// `GET /api/sessions/{id}/history`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct History<'a> {
    session_id: &'a str,
    entries: Vec<Entry<'a>>,
    before: Option<i64>,
    after: Option<i64>,
    next: Option<i64>,
}

impl<'a> From<&'a HistoryPage> for History<'a> {
    fn from(p: &'a HistoryPage) -> Self {
        History::new(p, false)
    }
}

impl<'a> History<'a> {
    /// The page, with each entry's view if `view`.
    pub fn new(p: &'a HistoryPage, view: bool) -> Self {
        History::masked(p, view, None)
    }

    /// [`History::new`], each entry's line masked by `mask` (`--mask-secrets`) before its view is made.
    pub fn masked(p: &'a HistoryPage, view: bool, mask: Option<&Redactor>) -> Self {
        History {
            session_id: &p.session_id,
            entries: p.entries.iter().map(|e| Entry::masked(e, view, mask)).collect(),
            before: p.before,
            after: p.after,
            next: p.next,
        }
    }
}

/// `GET /api/sessions/{id}/outline`: a session's prompts, each with its turn's figures.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Outline<'a> {
    session_id: &'a str,
    turns: Vec<Turn<'a>>,
}

/// A prompt of an outline and what followed it until the next.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Turn<'a> {
    cursor: i64,
    timestamp: Option<&'a str>,
    text: &'a str,
    tool_calls: i64,
    answer_cursor: Option<i64>,
    answered_at: Option<&'a str>,
    responses: i64,
    context_tokens: Option<i64>,
    output_tokens: Option<i64>,
}

impl<'a> From<&'a history::Outline> for Outline<'a> {
    fn from(o: &'a history::Outline) -> Self {
        Outline {
            session_id: &o.session_id,
            turns: o
                .turns
                .iter()
                .map(|t| Turn {
                    cursor: t.cursor,
                    timestamp: t.timestamp.as_deref(),
                    text: &t.text,
                    tool_calls: t.tool_calls,
                    answer_cursor: t.answer_cursor,
                    answered_at: t.answered_at.as_deref(),
                    responses: t.responses,
                    context_tokens: t.context_tokens,
                    output_tokens: t.output_tokens,
                })
                .collect(),
        }
    }
}

/// One search hit, its snippet as escaped HTML.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Hit<'a> {
    session_id: &'a str,
    entry_uuid: Option<&'a str>,
    cursor: i64,
    line: i64,
    #[serde(rename = "type")]
    kind: Option<&'a str>,
    timestamp: Option<&'a str>,
    agent: &'a str,
    role: Option<&'a str>,
    title: Option<&'a str>,
    project: Option<&'a str>,
    /// The tool the entry calls, where it calls one.
    tool: Option<&'a str>,
    /// `text`: the snippet is of what was said; `tool`: of a tool call's input or output.
    #[serde(rename = "in")]
    within: &'static str,
    snippet: String,
    /// The host whose index holds it, on a team's hub.
    #[serde(skip_serializing_if = "Option::is_none")]
    host: Option<&'a str>,
}

impl<'a> From<&'a SearchHit> for Hit<'a> {
    fn from(h: &'a SearchHit) -> Self {
        Hit {
            session_id: &h.session_id,
            entry_uuid: h.entry_uuid.as_deref(),
            cursor: h.cursor,
            line: h.line,
            kind: h.kind.as_deref(),
            timestamp: h.timestamp.as_deref(),
            agent: &h.agent,
            role: h.role.as_deref(),
            title: h.title.as_deref(),
            project: h.project.as_deref(),
            tool: h.tool.as_deref(),
            within: if h.in_tool { "tool" } else { "text" },
            snippet: snippet_html(&h.snippet),
            host: h.host.as_deref(),
        }
    }
}

/// How a search's query was read: as given, in its canonical form, and what the reader should know.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct QueryRead<'a> {
    q: &'a str,
    read_as: String,
    notes: &'a [String],
}

impl<'a> QueryRead<'a> {
    /// `q` as `query` reads it, with `notes`.
    pub fn new(q: &'a str, query: &scrollback_core::query::Query, notes: &'a [String]) -> Self {
        QueryRead { q, read_as: query.to_string(), notes }
    }
}

/// The title a person gave `session`, where they did (`marks`).
pub(crate) fn marked_title<'a>(marks: &'a [scrollback_accept::Mark], session: &str) -> Option<&'a str> {
    marks.iter().find(|m| m.session_id == session).and_then(|m| m.title.as_deref())
}

/// `GET /api/search` with `group=none` (or a session): one hit per entry.
#[derive(Debug, Serialize)]
pub struct Hits<'a> {
    query: QueryRead<'a>,
    hits: Vec<Hit<'a>>,
    /// Pass as `cursor` for the next page; absent at the end.
    #[serde(skip_serializing_if = "Option::is_none")]
    next: Option<String>,
}

impl<'a> Hits<'a> {
    /// The page, each hit's title the one a person gave its session, where they did (`marks`).
    pub fn marked(query: QueryRead<'a>, page: &'a history::SearchPage, marks: &'a [scrollback_accept::Mark]) -> Self {
        let hits = page
            .hits
            .iter()
            .map(|h| {
                let mut hit = Hit::from(h);
                if let Some(title) = marked_title(marks, &h.session_id) {
                    hit.title = Some(title);
                }
                hit
            })
            .collect();
        Hits { query, hits, next: page.next.map(|n| n.to_string()) }
    }
}

/// One session's hits in a grouped search.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionHits<'a> {
    session_id: &'a str,
    title: Option<&'a str>,
    project: Option<&'a str>,
    agent: &'a str,
    last_timestamp: Option<&'a str>,
    pinned: bool,
    /// How many of its entries match, the best one included.
    hits: u64,
    best: Hit<'a>,
}

/// `GET /api/search` grouped by session (the default).
#[derive(Debug, Serialize)]
pub struct SessionHitsPage<'a> {
    query: QueryRead<'a>,
    sessions: Vec<SessionHits<'a>>,
    /// Pass as `cursor` for the next page; absent at the end.
    #[serde(skip_serializing_if = "Option::is_none")]
    next: Option<String>,
}

impl<'a> SessionHitsPage<'a> {
    /// The page, each session's title the one a person gave it, where they did (`marks`).
    pub fn marked(
        query: QueryRead<'a>,
        page: &'a history::SessionHitsPage,
        marks: &'a [scrollback_accept::Mark],
    ) -> Self {
        let sessions = page
            .sessions
            .iter()
            .map(|g| {
                let mark = marks.iter().find(|m| m.session_id == g.session_id);
                let title = marked_title(marks, &g.session_id).or(g.title.as_deref());
                let mut best = Hit::from(&g.best);
                best.title = title;
                SessionHits {
                    session_id: &g.session_id,
                    title,
                    project: g.project.as_deref(),
                    agent: &g.agent,
                    last_timestamp: g.last_timestamp.as_deref(),
                    pinned: mark.is_some_and(|m| m.pinned),
                    hits: g.hits,
                    best,
                }
            })
            .collect();
        SessionHitsPage { query, sessions, next: page.next.map(|n| n.to_string()) }
    }
}

/// A snippet as HTML: its text escaped, each match in `<mark>`. The only markup it can hold.
pub fn snippet_html(snippet: &Snippet) -> String {
    let mut out = String::new();
    for (text, matched) in snippet.segments() {
        if matched {
            out.push_str("<mark>");
        }
        out.push_str(&scrollback_render::markdown::escape(text));
        if matched {
            out.push_str("</mark>");
        }
    }
    out
}

/// An accepted message: `{clientMessageId, chatId, sessionId, text, images, acceptedAt, state}`,
/// with `engineError` when the engine failed for it; each image `{blake3, url, mimeType, bytes}`.
pub fn accepted(a: &Accepted) -> serde_json::Value {
    let images: Vec<serde_json::Value> = a
        .images
        .iter()
        .map(|i| {
            serde_json::json!({
                "blake3": i.blake3,
                "url": ApiUrls.by_hash(&i.blake3),
                "mimeType": i.media_type,
                "bytes": i.bytes,
            })
        })
        .collect();
    let mut v = serde_json::json!({
        "clientMessageId": a.client_message_id,
        "chatId": a.chat_id,
        "sessionId": a.session_id,
        "text": a.text,
        "images": images,
        "acceptedAt": a.accepted_at,
        "state": a.state.as_str(),
    });
    if let Some(error) = &a.engine_error {
        v["engineError"] = error.as_str().into();
    }
    v
}

/// A chat event as the events WebSocket sends it.
pub fn chat_event(e: &ChatEvent) -> serde_json::Value {
    match e {
        ChatEvent::UserMessage(a) => serde_json::json!({ "type": "chat-user-message", "message": accepted(a) }),
        ChatEvent::SessionBound { chat_id, session_id } => {
            serde_json::json!({ "type": "session-bound", "chatId": chat_id, "sessionId": session_id })
        }
        ChatEvent::EngineFailed { chat_id, client_message_id, error } => serde_json::json!({
            "type": "engine-failed",
            "chatId": chat_id,
            "clientMessageId": client_message_id,
            "error": error,
        }),
        ChatEvent::Retired { chat_id, client_message_ids } => serde_json::json!({
            "type": "chat-retired",
            "chatId": chat_id,
            "clientMessageIds": client_message_ids,
        }),
    }
}

/// An index event as the events WebSocket sends it.
pub fn event(e: &Event) -> serde_json::Value {
    match e {
        Event::EntriesAppended { session_id, file_id, from_line, to_line, replaced } => serde_json::json!({
            "type": "entries-appended",
            "sessionId": session_id,
            "fileId": file_id,
            "fromLine": from_line,
            "toLine": to_line,
            "replaced": replaced,
        }),
        Event::SessionGone { session_id, file_id } => {
            serde_json::json!({ "type": "session-gone", "sessionId": session_id, "fileId": file_id })
        }
        Event::WriterFailed { error } => serde_json::json!({ "type": "writer-failed", "error": error }),
        Event::SessionForgotten { session_id } => {
            serde_json::json!({ "type": "session-forgotten", "sessionId": session_id })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snippets_are_escaped_html_with_marks() {
        let hit = "<b>\u{E000}x\u{E001}</b> & 'q'";
        let snippet: Snippet = history::Snippet::from_fts(hit);
        assert_eq!(snippet_html(&snippet), "&lt;b&gt;<mark>x</mark>&lt;/b&gt; &amp; &#39;q&#39;");
    }

    #[test]
    fn ref_urls_encode_each_segment() {
        let r = MediaRef { session_id: "a b".into(), entry_uuid: "u/1".into(), ordinal: 2 };
        assert_eq!(ApiUrls.by_ref(&r), "/api/session-media/a%20b/u%2F1/2");
    }

    #[test]
    fn events_serialize_as_the_api_documents() {
        let e =
            Event::EntriesAppended { session_id: "s".into(), file_id: 3, from_line: 4, to_line: 9, replaced: false };
        let expected: serde_json::Value = serde_json::from_str(
            r#"{"type":"entries-appended","sessionId":"s","fileId":3,"fromLine":4,"toLine":9,"replaced":false}"#,
        )
        .unwrap();
        assert_eq!(event(&e), expected);
        let g = Event::SessionGone { session_id: "s".into(), file_id: 3 };
        let expected: serde_json::Value =
            serde_json::from_str(r#"{"type":"session-gone","sessionId":"s","fileId":3}"#).unwrap();
        assert_eq!(event(&g), expected);
    }
}
