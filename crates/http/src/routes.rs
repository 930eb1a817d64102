//! The route table, and the handlers of the read routes (sessions, history, search, status, the
//! events socket) and of forgetting a session. Media are [`super::media`]'s, sends [`super::chat`]'s.

use std::convert::Infallible;

use futures_util::{SinkExt, StreamExt};
use serde::Deserialize;
use warp::filters::BoxedFilter;
use warp::{Filter, Rejection, Reply};

use super::auth::{authorized, login, loopback_host, same_origin};
use super::filters::{NoParams, check_limit, only, query_cap, segment, trim};
use super::media::serve_media;
use super::{Api, ApiError, handle_rejection, wire};
use scrollback_core::codec::refs::{ContentHash, MediaName, MediaRef};
use scrollback_index::events::Event;
use scrollback_ops::chat::ChatEvent;
use scrollback_read::history::{self, Position};
use scrollback_read::pool::Held;
use scrollback_read::request;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SessionsParams {
    project: Option<String>,
    agent: Option<String>,
    q: Option<String>,
    since: Option<String>,
    until: Option<String>,
    cursor: Option<String>,
    limit: Option<u32>,
    /// Only the sessions of this host (a team's hub).
    host: Option<String>,
    /// Only the sessions a person pinned (their latest pin first), in one page.
    pinned: Option<bool>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct HistoryParams {
    before: Option<i64>,
    /// A cursor, or `start`: the session's oldest page.
    from: Option<String>,
    after: Option<i64>,
    limit: Option<u32>,
    sidechains: Option<bool>,
    /// Each entry's texts as HTML and its tool calls at a glance (`render::view`).
    view: Option<bool>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SearchParams {
    q: String,
    session: Option<String>,
    agent: Option<String>,
    project: Option<String>,
    role: Option<String>,
    since: Option<String>,
    until: Option<String>,
    cursor: Option<String>,
    limit: Option<u32>,
    sort: Option<String>,
    group: Option<String>,
}

/// Every route of the API, with authorization and the rejection mapping: the table that joins the
/// groups of routes (`read_routes`, `about_routes` and the other files' groups), each boxed.
pub fn routes(api: Api) -> impl Filter<Extract = (impl Reply,), Error = Infallible> + Clone {
    // Each group of routes is boxed: the table's filter types stay small, and so does the compiler's
    // work proving them (unboxed, one more route made type checking take minutes).
    let reads = read_routes(&api);
    let about = about_routes(&api);
    let api_routes = warp::path("api").and(query_cap()).and(
        login(api.clone())
            .or(authorized(api.clone()).and(read_only(api.clone())).and(
                reads
                    .or(about)
                    .unify()
                    .or(super::chat::routes(api.clone()).boxed())
                    .unify()
                    .or(super::session::routes(&api))
                    .unify()
                    .or(super::export::routes(&api))
                    .unify()
                    .or(super::usage::routes(&api))
                    .unify()
                    .or(super::stats::routes(&api))
                    .unify(),
            ))
            .unify(),
    );
    // `/mcp` is no `/api` route, and has the same rules: the token when one is set (checked once
    // the path is this one's, so that a wrong token is counted once).
    let mcp = warp::path!("mcp").and(authorized(api.clone())).and(super::mcp::answer(&api));
    // The one place every answer passes: the Host check first, the rejections mapped to the API's
    // errors, and the headers every answer carries.
    loopback_host(api.clone())
        .and(api_routes.boxed().or(mcp).unify().or(super::web::routes().boxed()).unify())
        .recover(handle_rejection)
        .unify()
        // No answer is ever sniffed into another type (a JSON body read as HTML, say).
        .with(warp::reply::with::header("x-content-type-options", "nosniff"))
        .with(warp::log::custom(|info| {
            tracing::debug!(
                method = %info.method(),
                path = info.path(),
                status = info.status().as_u16(),
                elapsed_us = info.elapsed().as_micros() as u64,
                "request"
            );
        }))
}

/// On a read-only store (a team's hub), a request that would change something (a send, a mark, a
/// forget) is refused before any route sees it, saying why.
fn read_only(api: Api) -> impl Filter<Extract = (), Error = Rejection> + Clone {
    warp::method()
        .and_then(move |method: warp::http::Method| {
            let store = api.store_kind();
            async move {
                use warp::http::Method;
                if store == "index" || [Method::GET, Method::HEAD, Method::OPTIONS].contains(&method) {
                    return Ok(());
                }
                Err(ApiError::from(scrollback_core::Error::NotServed(format!(
                    "this server reads a team's {store}, which is read-only: send, mark and forget on \
                     the host's own server"
                )))
                .reject())
            }
        })
        .untuple_one()
}

/// The read routes (sessions, history, forgetting a session, media, search, the events socket), for
/// the route table, boxed as one group.
fn read_routes(api: &Api) -> BoxedFilter<(warp::reply::Response,)> {
    let with_api = {
        let api = api.clone();
        warp::any().map(move || api.clone())
    };
    let sessions = warp::path!("sessions")
        .and(warp::get())
        .and(warp::query::<SessionsParams>())
        .and(with_api.clone())
        .and_then(list_sessions);
    let history = warp::path!("sessions" / String / "history")
        .and(warp::get())
        .and(warp::query::<HistoryParams>())
        .and(with_api.clone())
        .and_then(session_history);
    // Forgetting changes state: a cross-site page is refused. (A DELETE is never a "simple" request,
    // so a browser asks before sending one across sites, and this server allows none.)
    let forget = warp::path!("sessions" / String)
        .and(warp::delete())
        .and(same_origin())
        .and(warp::query::<NoParams>())
        .and(with_api.clone())
        .and_then(|s: String, _: NoParams, api: Api| forget_session(s, api))
        .or(warp::path!("sessions" / String)
            .and(only(warp::http::Method::DELETE, "delete-only", "this route takes DELETE"))
            .map(|_: String, res| res))
        .unify();
    let session_media = warp::path!("session-media" / String / String / String)
        .and(warp::get())
        .and(warp::query::<NoParams>())
        .and(warp::header::optional::<String>("if-none-match"))
        .and(with_api.clone())
        .and_then(|s: String, u: String, o: String, _: NoParams, inm: Option<String>, api: Api| async move {
            let session_id = segment(&s)?;
            let entry_uuid = segment(&u)?;
            let ordinal = o.parse::<u32>().ok().filter(|_| o.bytes().all(|b| b.is_ascii_digit())).ok_or_else(|| {
                ApiError::bad_request(format!("ordinal {:?} is not a small number", trim(&o))).reject()
            })?;
            let r = MediaRef { session_id, entry_uuid, ordinal };
            serve_media(api, MediaName::Ref(r), inm).await
        });
    let media_by_hash = warp::path!("media" / String)
        .and(warp::get())
        .and(warp::query::<NoParams>())
        .and(warp::header::optional::<String>("if-none-match"))
        .and(with_api.clone())
        .and_then(|h: String, _: NoParams, inm: Option<String>, api: Api| async move {
            let hash = h.parse::<ContentHash>().map_err(|e| ApiError::from(e).reject())?;
            serve_media(api, MediaName::Hash(hash), inm).await
        });
    let search = warp::path!("search")
        .and(warp::get())
        .and(warp::query::<SearchParams>())
        .and(with_api.clone())
        .and_then(search);
    // A WebSocket is not bound by the same-origin policy: a page elsewhere is refused by its Origin.
    let events = warp::path!("events")
        .and(warp::get())
        .and(same_origin())
        .and(warp::ws())
        .and(with_api.clone())
        .map(events_socket);
    sessions
        .or(history)
        .unify()
        .or(forget)
        .unify()
        .or(session_media)
        .unify()
        .or(media_by_hash)
        .unify()
        .or(search)
        .unify()
        .or(events)
        .unify()
        .boxed()
}

/// `/api/openapi.json`, `/api/info` and `/api/status`, for the route table, boxed as one group.
fn about_routes(api: &Api) -> BoxedFilter<(warp::reply::Response,)> {
    let with_api = {
        let api = api.clone();
        warp::any().map(move || api.clone())
    };
    let openapi = warp::path!("openapi.json")
        .and(warp::get())
        .map(|| warp::reply::json(&super::openapi::document()).into_response());

    let info = warp::path!("info")
        .and(warp::get())
        .and(with_api.clone())
        .map(|api: Api| json(&wire::info(api.chats().has_engine(), api.store_kind())));
    let status = warp::path!("status").and(warp::get()).and(warp::query::<NoParams>()).and(with_api.clone()).and_then(
        |_: NoParams, api: Api| async move {
            let root_list = api.inner.roots.clone();
            // A damaged index is what status must still report: its counts are then unknown.
            let (index, roots) = match api.held(scrollback_ops::status::root_names(&root_list)).await {
                // A team's hub: its hosts and their pushes (it has no index, writer or vault of its own).
                Ok(Held::Other(hub)) => return Ok(json(&wire::hub_status(&hub))),
                Ok(Held::Index { mut index, roots }) => {
                    // The writer turned the vault off but could not record it (a full disk).
                    if index.vault.off.is_none() {
                        index.vault.off = api.inner.health.as_ref().and_then(|h| h.vault_off());
                    }
                    (Some(index), scrollback_ops::status::with_counts(&root_list, roots))
                }
                Err(_) if api.damage().is_some() => {
                    let roots = root_list.iter().map(|r| scrollback_ops::status::RootStatus::new(r, None));
                    (None, roots.collect())
                }
                Err(e) => return Err(e.reject()),
            };
            let sends_pending =
                api.chats().with_store(|store| store.pending_count()).await.map_err(|e| ApiError::from(e).reject())?;
            let status = scrollback_ops::status::Status {
                index,
                sends_pending,
                writer: api.writer_state(),
                watcher: api.inner.watcher,
                index_damage: api.damage(),
                roots,
                data_dir: api.inner.data_dir.clone(),
                engine: api.chats().has_engine(),
            };
            let push = api.inner.push.as_ref().map(|p| p.get());
            Ok::<_, Rejection>(json(&wire::status(&status, push.as_ref())))
        },
    );
    openapi.or(info).unify().or(status).unify().boxed()
}

fn json<T: serde::Serialize>(value: &T) -> warp::reply::Response {
    warp::reply::json(value).into_response()
}

async fn list_sessions(p: SessionsParams, api: Api) -> Result<warp::reply::Response, Rejection> {
    let pinned_only = p.pinned.unwrap_or(false);
    let query = request::SessionsInput {
        project: p.project,
        agent: p.agent,
        q: p.q,
        since: p.since,
        until: p.until,
        host: p.host,
        cursor: p.cursor,
        limit: p.limit.map(i64::from),
        active_since: None,
    }
    .parse(50, history::MAX_LIMIT)
    .map_err(|e| ApiError::from(e).reject())?;
    let page = if pinned_only {
        let pins = api.inner.chats.with_store(|store| store.pinned()).await.map_err(|e| ApiError::from(e).reject())?;
        api.db(move |store| {
            let mut sessions = Vec::new();
            for mark in &pins {
                if let Some(s) = store.session(&mark.session_id)?
                    && query.project.as_ref().is_none_or(|p| s.project.as_ref() == Some(p))
                    && query.agent.as_ref().is_none_or(|a| &s.agent == a)
                {
                    sessions.push(s);
                }
            }
            Ok(history::SessionPage { sessions, next: None, cursors: Vec::new() })
        })
        .await
    } else if query.text.is_some() {
        api.search_db(move |store| store.sessions(&query)).await
    } else {
        api.db(move |store| store.sessions(&query)).await
    }
    .map_err(ApiError::reject)?;
    // A person's marks: their title in place of the transcript's, and whether they pinned it.
    let marks = marks_of(&api, page.sessions.iter().map(|s| s.id.clone()).collect()).await?;
    Ok(api.masked_json(&wire::Sessions::marked(&page, &marks)))
}

/// A person's marks on those of `ids` that have any, from the acceptance record.
async fn marks_of(api: &Api, ids: Vec<String>) -> Result<Vec<scrollback_accept::Mark>, Rejection> {
    marks(api, ids).await.map_err(ApiError::reject)
}

/// [`marks_of`], its error as the API's.
pub(crate) async fn marks(api: &Api, mut ids: Vec<String>) -> Result<Vec<scrollback_accept::Mark>, ApiError> {
    ids.sort();
    ids.dedup();
    api.inner
        .chats
        .with_store(move |store| store.marks(&ids.iter().map(String::as_str).collect::<Vec<_>>()))
        .await
        .map_err(ApiError::from)
}

async fn session_history(raw_session: String, p: HistoryParams, api: Api) -> Result<warp::reply::Response, Rejection> {
    let session_id = segment(&raw_session)?;
    let limit = check_limit(p.limit, 100)?;
    let from = match p.from.as_deref() {
        None => None,
        Some("start") => Some(None),
        Some(c) => Some(Some(
            c.parse::<i64>()
                .map_err(|_| ApiError::bad_request(format!("from: a cursor or start, not {:?}", trim(c))).reject())?,
        )),
    };
    let at = match (p.before, from, p.after) {
        (None, None, None) => Position::Newest,
        (None, Some(None), None) => Position::Start,
        (Some(c), None, None) if c >= 0 => Position::Before(c),
        (None, Some(Some(c)), None) if c >= 0 => Position::From(c),
        (None, None, Some(c)) if c >= 0 => Position::After(c),
        (None, None, Some(_)) | (None, Some(_), None) | (Some(_), None, None) => {
            return Err(ApiError::bad_request("cursors are not negative").reject());
        }
        _ => return Err(ApiError::bad_request("give one of before, from and after").reject()),
    };
    let sidechains = p.sidechains.unwrap_or(false);
    let view = p.view.unwrap_or(false);
    let sid = session_id.clone();
    let mask = api.mask().cloned();
    // Serialised on the readers' thread: a view renders Markdown, which is no work for the runtime's.
    let body = api
        .db(move |store| {
            let page = store.history(&sid, at, limit, sidechains)?;
            // Masked, each line's strings before its view and what was typed are made of it.
            page.map(|page| serde_json::to_string(&wire::History::masked(&page, view, mask.as_deref())))
                .transpose()
                .map_err(|e| scrollback_core::Error::Internal(e.to_string()))
        })
        .await
        .map_err(ApiError::reject)?;
    match body {
        Some(body) => Ok(warp::reply::with_header(body, "content-type", "application/json").into_response()),
        None => Err(ApiError::not_found(format!("no session {}", trim(&session_id))).reject()),
    }
}

/// `DELETE /api/sessions/{id}`: has the writer forget the session, as `scrollback forget` does.
async fn forget_session(raw_session: String, api: Api) -> Result<warp::reply::Response, Rejection> {
    let session_id = segment(&raw_session)?;
    let Some(writer) = api.inner.writer.clone() else {
        return Err(ApiError::writer_stopped(None).reject());
    };
    if let Some(why) = api.writer_failure() {
        return Err(ApiError::writer_stopped(Some(why)).reject());
    }
    let accept = api.chats().store();
    let done = tokio::task::spawn_blocking(move || scrollback_ops::forget::forget_live(&writer, accept, session_id))
        .await
        .map_err(|e| ApiError::internal(format!("worker failed: {e}")).reject())?;
    match done {
        Some(Ok(f)) => Ok(json(&wire::forgotten(&f))),
        Some(Err(e)) => Err(ApiError::from(e).reject()),
        None => Err(ApiError::writer_stopped(api.writer_failure()).reject()),
    }
}

async fn search(p: SearchParams, api: Api) -> Result<warp::reply::Response, Rejection> {
    let input = request::SearchInput {
        q: p.q,
        session: p.session,
        agent: p.agent,
        project: p.project,
        role: p.role,
        since: p.since,
        until: p.until,
        sort: p.sort,
        group: p.group,
        cursor: p.cursor,
        limit: p.limit.map(i64::from),
        active_since: None,
    };
    let asked = request::Search::parse(input, 20, history::MAX_LIMIT).map_err(|e| ApiError::from(e).reject())?;
    let mask = api.mask().cloned();
    let (asked, page) = api
        .search_db(move |store| {
            let mut page = asked.answer(store)?;
            // A snippet is masked from its entry's whole text, before its matches are marked in HTML.
            if let Some(r) = &mask {
                r.mask_answer(&mut page, &|h| store.search_text(h).ok().flatten());
            }
            Ok((asked, page))
        })
        .await
        .map_err(ApiError::reject)?;
    let read = |notes| wire::QueryRead::new(&asked.written, &asked.query, notes);
    match page {
        history::SearchAnswer::Entries(page) => {
            let marks = marks_of(&api, page.hits.iter().map(|h| h.session_id.clone()).collect()).await?;
            Ok(api.masked_json(&wire::Hits::marked(read(&page.notes), &page, &marks)))
        }
        history::SearchAnswer::Sessions(page) => {
            let marks = marks_of(&api, page.sessions.iter().map(|g| g.session_id.clone()).collect()).await?;
            Ok(api.masked_json(&wire::SessionHitsPage::marked(read(&page.notes), &page, &marks)))
        }
    }
}

/// The largest message (and frame) the events socket takes from a client: it sends pongs and a
/// close, nothing more.
pub const EVENTS_INCOMING_MAX: usize = 4 << 10;

/// The events socket's upgrade: the client is sent the index's and the chats' events
/// ([`forward_events`]).
fn events_socket(ws: warp::ws::Ws, api: Api) -> warp::reply::Response {
    let receiver = api.inner.bus.subscribe();
    let chat_receiver = api.inner.chats.subscribe();
    let idle = api.idle_timeout();
    // The client only answers pings: anything longer than a few KB is refused as it comes
    // (the socket is closed), never buffered (tungstenite's default is 64 MB a message).
    ws.max_message_size(EVENTS_INCOMING_MAX)
        .max_frame_size(EVENTS_INCOMING_MAX)
        .on_upgrade(move |socket| forward_events(socket, receiver, chat_receiver, idle))
        .into_response()
}

/// Forwards the index's and the chats' events to one WebSocket client, merged as they come, until
/// either side closes.
async fn forward_events(
    socket: warp::ws::WebSocket,
    mut events: tokio::sync::broadcast::Receiver<Event>,
    mut chat_events: tokio::sync::broadcast::Receiver<ChatEvent>,
    idle: std::time::Duration,
) {
    use tokio::sync::broadcast::error::RecvError;
    let (mut out, mut incoming) = socket.split();
    // A ping every half idle timeout: a browser answers each by itself, so a socket that hears
    // nothing back for a whole timeout has a peer that is gone (its machine asleep, its network
    // down), and is closed. Pings also keep proxies from closing a quiet socket.
    let mut ping = tokio::time::interval(idle / 2);
    ping.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    ping.tick().await;
    let mut heard = tokio::time::Instant::now();
    loop {
        tokio::select! {
            _ = ping.tick() => {
                if heard.elapsed() > idle {
                    tracing::debug!("events socket: no answer to pings; closing it");
                    break;
                }
                if out.send(warp::ws::Message::ping(Vec::new())).await.is_err() {
                    break;
                }
            }
            event = events.recv() => {
                let text = match event {
                    Ok(event) => wire::event(&event).to_string(),
                    Err(RecvError::Lagged(missed)) => wire::lagged(missed).to_string(),
                    Err(RecvError::Closed) => break,
                };
                if out.send(warp::ws::Message::text(text)).await.is_err() {
                    break;
                }
            }
            event = chat_events.recv() => {
                let text = match event {
                    Ok(event) => wire::chat_event(&event).to_string(),
                    Err(RecvError::Lagged(missed)) => wire::lagged(missed).to_string(),
                    Err(RecvError::Closed) => break,
                };
                if out.send(warp::ws::Message::text(text)).await.is_err() {
                    break;
                }
            }
            message = incoming.next() => match message {
                Some(Ok(m)) if !m.is_close() => heard = tokio::time::Instant::now(),
                _ => break,
            },
        }
    }
    let _ = out.close().await;
}
