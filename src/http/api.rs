//! The routes and their handlers.

use std::convert::Infallible;
use std::io::Read;

use bytes::Bytes;
use futures_util::{SinkExt, StreamExt};
use serde::Deserialize;
use warp::http::{HeaderValue, StatusCode, header};
use warp::{Filter, Rejection, Reply};

use super::{Api, ApiError, authorized, handle_rejection, wire};
use crate::error::Error;
use crate::events::Event;
use crate::read::history::{self, Position, SessionQuery};
use crate::read::media::{self, MediaRecord};
use crate::read::refs::{self, ContentHash, MediaName, MediaRef};
use crate::read::store;

/// Longest query string accepted.
const MAX_QUERY: usize = 4096;
/// Media types served inline; anything else is an attachment.
const INLINE: &[&str] = &["image/png", "image/jpeg", "image/gif", "image/webp", "image/avif", "image/bmp"];

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SessionsParams {
    project: Option<String>,
    q: Option<String>,
    cursor: Option<String>,
    limit: Option<u32>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct HistoryParams {
    before: Option<i64>,
    from: Option<i64>,
    after: Option<i64>,
    limit: Option<u32>,
    sidechains: Option<bool>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SearchParams {
    q: String,
    session: Option<String>,
    limit: Option<u32>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct NoParams {}

/// Every route of the API, with authorization and the rejection mapping. Long because it is the
/// route table: each route's filter chain is here, in one place, next to the others.
pub fn routes(api: Api) -> impl Filter<Extract = (impl Reply,), Error = Infallible> + Clone {
    let with_api = {
        let api = api.clone();
        warp::any().map(move || api.clone())
    };
    let query_cap = warp::query::raw()
        .or(warp::any().map(String::new))
        .unify()
        .and_then(|q: String| async move {
            if q.len() > MAX_QUERY {
                Err(warp::reject::custom(ApiError::new(
                    StatusCode::URI_TOO_LONG,
                    "query-too-long",
                    format!("the query string is {} bytes; at most {MAX_QUERY}", q.len()),
                )))
            } else {
                Ok(())
            }
        })
        .untuple_one();

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
        .and(super::chat::same_origin())
        .and(warp::query::<NoParams>())
        .and(with_api.clone())
        .and_then(|s: String, _: NoParams, api: Api| forget_session(s, api))
        .or(warp::path!("sessions" / String)
            .and(super::chat::only(warp::http::Method::DELETE, "delete-only", "this route takes DELETE"))
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
                reject(ApiError::bad_request(format!("ordinal {:?} is not a small number", trim(&o))))
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
            let hash = h.parse::<ContentHash>().map_err(|e| reject(ApiError::from(e)))?;
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
        .and(super::chat::same_origin())
        .and(warp::ws())
        .and(with_api.clone())
        .map(|ws: warp::ws::Ws, api: Api| {
            let receiver = api.inner.bus.subscribe();
            let idle = api.inner.idle_timeout;
            ws.on_upgrade(move |socket| forward_events(socket, receiver, idle)).into_response()
        });
    let openapi = warp::path!("openapi.json")
        .and(warp::get())
        .map(|| warp::reply::json(&super::openapi::document()).into_response());

    let info = warp::path!("info").and(warp::get()).map(|| {
        use crate::accept::send::{MAX_BODY, MAX_IMAGE_BYTES, MAX_IMAGES, MAX_TEXT};
        json(&serde_json::json!({
            "version": env!("CARGO_PKG_VERSION"),
            "limits": { "maxImages": MAX_IMAGES, "maxImageBytes": MAX_IMAGE_BYTES, "maxText": MAX_TEXT, "maxBody": MAX_BODY },
        }))
    });
    let status = warp::path!("status").and(warp::get()).and(warp::query::<NoParams>()).and(with_api.clone()).and_then(
        |_: NoParams, api: Api| async move {
            let data_dir = api.inner.data_dir.clone();
            // A damaged index is what status must still report: its counts are then unknown.
            let index = match api.db(move |conn| crate::read::status::index_status(conn, &data_dir)).await {
                Ok(index) => Some(index),
                Err(_) if api.damage().is_some() => None,
                Err(e) => return Err(reject(e)),
            };
            let accept = api.inner.accept.clone();
            let pending = tokio::task::spawn_blocking(move || accept.pending_count())
                .await
                .map_err(|e| reject(ApiError::internal(format!("worker failed: {e}"))))?
                .map_err(|e| reject(ApiError::from(e)))?;
            let writer = match (&api.inner.writer, api.writer_failure()) {
                (None, _) => serde_json::json!({ "state": "none" }),
                (Some(_), None) => serde_json::json!({ "state": "running" }),
                (Some(_), Some(error)) => serde_json::json!({ "state": "failed", "error": error }),
            };
            Ok::<_, Rejection>(json(&wire::status(index.as_ref(), pending, writer, api.inner.watcher, api.damage())))
        },
    );
    let api_routes = warp::path("api").and(query_cap).and(
        super::login(api.clone())
            .or(authorized(api.clone()).and(
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
                    .or(openapi)
                    .unify()
                    .or(info)
                    .unify()
                    .or(status)
                    .unify()
                    .or(super::chat::routes(api.clone()))
                    .unify(),
            ))
            .unify(),
    );
    super::loopback_host(api).and(api_routes.or(super::web::routes()).unify()).recover(handle_rejection).unify().with(
        warp::log::custom(|info| {
            tracing::debug!(
                method = %info.method(),
                path = info.path(),
                status = info.status().as_u16(),
                elapsed_us = info.elapsed().as_micros() as u64,
                "request"
            );
        }),
    )
}

fn reject(e: ApiError) -> Rejection {
    warp::reject::custom(e)
}

fn trim(s: &str) -> String {
    s.chars().take(80).collect()
}

/// Percent-decodes a path segment; refuses NUL, slashes, dot segments and long ones.
fn segment(raw: &str) -> Result<String, Rejection> {
    let bad = |why: &str| reject(ApiError::bad_request(format!("path segment {:?}: {why}", trim(raw))));
    if raw.len() > refs::MAX_ID * 3 {
        return Err(bad("too long"));
    }
    let bytes = raw.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = bytes.get(i + 1..i + 3).and_then(|h| std::str::from_utf8(h).ok());
            let byte = hex.and_then(|h| u8::from_str_radix(h, 16).ok()).ok_or_else(|| bad("bad percent-encoding"))?;
            out.push(byte);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    let s = String::from_utf8(out).map_err(|_| bad("not UTF-8"))?;
    if !refs::is_id(&s) {
        return Err(bad("not an id"));
    }
    Ok(s)
}

fn json<T: serde::Serialize>(value: &T) -> warp::reply::Response {
    warp::reply::json(value).into_response()
}

async fn list_sessions(p: SessionsParams, api: Api) -> Result<warp::reply::Response, Rejection> {
    let limit = check_limit(p.limit, 50)?;
    let query = SessionQuery {
        project: p.project.filter(|p| !p.is_empty()),
        text: p.q.filter(|q| !q.trim().is_empty()),
        cursor: p.cursor.filter(|c| !c.is_empty()),
        limit,
    };
    let page = if query.text.is_some() {
        api.search_db(move |conn| history::sessions(conn, &query)).await
    } else {
        api.db(move |conn| history::sessions(conn, &query)).await
    }
    .map_err(reject)?;
    Ok(json(&wire::Sessions::from(&page)))
}

fn check_limit(limit: Option<u32>, default: u32) -> Result<u32, Rejection> {
    match limit {
        None => Ok(default),
        Some(n) if (1..=history::MAX_LIMIT).contains(&n) => Ok(n),
        Some(n) => Err(reject(ApiError::bad_request(format!("limit {n}: between 1 and {}", history::MAX_LIMIT)))),
    }
}

async fn session_history(raw_session: String, p: HistoryParams, api: Api) -> Result<warp::reply::Response, Rejection> {
    let session_id = segment(&raw_session)?;
    let limit = check_limit(p.limit, 100)?;
    let at = match (p.before, p.from, p.after) {
        (None, None, None) => Position::Newest,
        (Some(c), None, None) if c >= 0 => Position::Before(c),
        (None, Some(c), None) if c >= 0 => Position::From(c),
        (None, None, Some(c)) if c >= 0 => Position::After(c),
        (None, None, Some(_)) | (None, Some(_), None) | (Some(_), None, None) => {
            return Err(reject(ApiError::bad_request("cursors are not negative")));
        }
        _ => return Err(reject(ApiError::bad_request("give one of before, from and after"))),
    };
    let sidechains = p.sidechains.unwrap_or(false);
    let sid = session_id.clone();
    let page = api.db(move |conn| history::history(conn, &sid, at, limit, sidechains)).await.map_err(reject)?;
    match page {
        Some(page) => Ok(json(&wire::History::from(&page))),
        None => Err(reject(ApiError::not_found(format!("no session {}", trim(&session_id))))),
    }
}

/// `DELETE /api/sessions/{id}`: has the writer forget the session, as `scrollback forget` does.
async fn forget_session(raw_session: String, api: Api) -> Result<warp::reply::Response, Rejection> {
    let session_id = segment(&raw_session)?;
    let Some(writer) = api.inner.reindexer.clone() else {
        return Err(reject(ApiError::writer_stopped(None)));
    };
    if let Some(why) = api.writer_failure() {
        return Err(reject(ApiError::writer_stopped(Some(why))));
    }
    // Known to the index, or to the acceptance record (a chat bound to it before its transcript).
    let sid = session_id.clone();
    let indexed = api
        .db(move |conn| {
            Ok(conn
                .query_row("SELECT EXISTS (SELECT 1 FROM sessions WHERE id = ?1)", [&sid], |r| r.get::<_, bool>(0))?)
        })
        .await
        .map_err(reject)?;
    let sid = session_id.clone();
    let sent = api.accept(move |store| store.forget_session(&sid, true)).await.map_err(reject)?.0;
    if !indexed && sent == 0 {
        return Err(reject(ApiError::not_found(format!("no session {}", trim(&session_id)))));
    }
    let sid = session_id.clone();
    let done = tokio::task::spawn_blocking(move || writer.forget(&sid))
        .await
        .map_err(|e| reject(ApiError::internal(format!("worker failed: {e}"))))?;
    match done {
        Some(Ok(f)) => Ok(json(&serde_json::json!({
            "sessionId": f.session_id,
            "entries": f.entries,
            "photos": f.media,
            "transcripts": f.files,
            "messages": f.messages,
            "freedBytes": f.freed_bytes(),
        }))),
        Some(Err(e)) => Err(reject(ApiError::from(e))),
        None => Err(reject(ApiError::writer_stopped(api.writer_failure()))),
    }
}

async fn search(p: SearchParams, api: Api) -> Result<warp::reply::Response, Rejection> {
    let limit = check_limit(p.limit, 20)?;
    if p.q.trim().is_empty() {
        return Err(reject(ApiError::bad_request("q: an empty search")));
    }
    let hits =
        api.search_db(move |conn| history::search(conn, &p.q, p.session.as_deref(), limit)).await.map_err(reject)?;
    Ok(json(&wire::Hits::new(&hits)))
}

/// Looks a payload up, checks its bytes, and serves it: a transcript payload from the index, else
/// (by hash) an image a person sent, from the acceptance record.
async fn serve_media(
    api: Api,
    name: MediaName,
    if_none_match: Option<String>,
) -> Result<warp::reply::Response, Rejection> {
    let lookup = name.clone();
    let record = match api.db(move |conn| store::media_by_name(conn, &lookup)).await {
        Ok(record) => record,
        Err(e) if e.status == StatusCode::NOT_FOUND => match name {
            MediaName::Hash(hash) => return serve_sent_image(api, hash, if_none_match, e).await,
            MediaName::Ref(_) => return Err(reject(e)),
        },
        Err(e) => return Err(reject(e)),
    };
    let etag = format!("\"{}\"", record.blake3);
    let headers = MediaHeaders {
        media_type: record.media_type.as_deref(),
        blake3: &record.blake3,
        extension: record.extension(),
        etag: &etag,
    };
    if if_none_match.as_deref().is_some_and(|h| etag_matches(h, &etag)) {
        let mut res = warp::reply::with_status(warp::reply::reply(), StatusCode::NOT_MODIFIED).into_response();
        headers.set(&mut res, None);
        return Ok(res);
    }
    if !record.file_live {
        return Err(reject(ApiError::from(Error::Gone { path: record.path.clone(), offset: record.offset })));
    }
    let mut cached = api.inner.cache.lock().ok().and_then(|c| c.get(&record.blake3));
    if cached.is_some() && !record.path.is_file() {
        // Deleted since it was indexed, and the writer has not seen it yet: gone, as it will say.
        api.reindex(record.path.clone());
        cached = None;
    }
    let bytes = match cached {
        Some(bytes) => Some(bytes),
        None if record.decoded_length <= super::CACHE_ENTRY_MAX as u64 => {
            // Small enough to decode whole: read it, check it, keep it for the next request.
            let r = record.clone();
            let read = tokio::task::spawn_blocking(move || -> crate::Result<Vec<u8>> {
                let mut out = Vec::with_capacity(r.decoded_length as usize);
                media::open(&r)?.read_to_end(&mut out).map_err(|e| media::into_error(e, &r))?;
                Ok(out)
            })
            .await
            .map_err(|e| reject(ApiError::internal(e.to_string())))?;
            let bytes = Bytes::from(read.map_err(|e| media_failed(&api, &record, e))?);
            if let Ok(mut cache) = api.inner.cache.lock() {
                cache.put(record.blake3.clone(), bytes.clone());
            }
            Some(bytes)
        }
        None => None,
    };
    let mut res = match bytes {
        Some(bytes) => warp::reply::Response::new(bytes.into()),
        None => {
            // Large: check the whole payload first, then stream it in 64 KiB pieces; a change between
            // the two passes ends the stream with an error instead of a wrong byte.
            let r = record.clone();
            let verified = tokio::task::spawn_blocking(move || media::open(&r)?.verify())
                .await
                .map_err(|e| reject(ApiError::internal(e.to_string())))?;
            verified.map_err(|e| media_failed(&api, &record, e))?;
            let reader = media::open(&record).map_err(|e| media_failed(&api, &record, e))?;
            warp::reply::stream(payload_stream(reader)).into_response()
        }
    };
    headers.set(&mut res, Some(record.decoded_length));
    Ok(res)
}

/// Serves an image a person sent, by its hash: read whole (it is at most
/// [`crate::accept::send::MAX_IMAGE_BYTES`]), checked against the hash, never served otherwise.
async fn serve_sent_image(
    api: Api,
    hash: ContentHash,
    if_none_match: Option<String>,
    not_found: ApiError,
) -> Result<warp::reply::Response, Rejection> {
    let lookup = hash.clone();
    let Some(image) = api.accept(move |store| store.image(&lookup)).await.map_err(reject)? else {
        return Err(reject(not_found));
    };
    let etag = format!("\"{hash}\"");
    let headers = MediaHeaders {
        media_type: Some(&image.media_type),
        blake3: hash.as_str(),
        extension: media::extension(Some(&image.media_type)),
        etag: &etag,
    };
    if if_none_match.as_deref().is_some_and(|h| etag_matches(h, &etag)) {
        let mut res = warp::reply::with_status(warp::reply::reply(), StatusCode::NOT_MODIFIED).into_response();
        headers.set(&mut res, None);
        return Ok(res);
    }
    let cached = api.inner.cache.lock().ok().and_then(|c| c.get(hash.as_str()));
    let bytes = match cached {
        Some(bytes) => bytes,
        None => {
            let path = image.path.clone();
            let read = tokio::task::spawn_blocking(move || std::fs::read(&path))
                .await
                .map_err(|e| reject(ApiError::internal(e.to_string())))?
                .map_err(|e| {
                    tracing::error!(path = %image.path.display(), "a sent image cannot be read: {e}");
                    reject(ApiError::new(
                        StatusCode::CONFLICT,
                        "unreadable",
                        format!("sent image {hash} cannot be read"),
                    ))
                })?;
            if ContentHash::of(&read) != hash {
                tracing::error!(path = %image.path.display(), "a sent image's bytes no longer match its hash");
                return Err(reject(ApiError::new(
                    StatusCode::CONFLICT,
                    "changed",
                    format!("sent image {hash}: its stored bytes no longer match their hash"),
                )));
            }
            let bytes = Bytes::from(read);
            if let Ok(mut cache) = api.inner.cache.lock() {
                cache.put(hash.to_string(), bytes.clone());
            }
            bytes
        }
    };
    let length = bytes.len() as u64;
    let mut res = warp::reply::Response::new(bytes.into());
    headers.set(&mut res, Some(length));
    Ok(res)
}

/// Turns a media failure into its status, and queues a changed file for re-indexing.
fn media_failed(api: &Api, record: &MediaRecord, e: Error) -> Rejection {
    match e {
        // A vault link is not a transcript: nothing re-indexes it, and its bytes are what they are.
        Error::Changed { .. } if record.from_vault => reject(ApiError::from(e)),
        Error::Changed { .. } | Error::Io { .. } => {
            tracing::warn!(path = %record.path.display(), offset = record.offset, "payload changed or unreadable ({e}); re-indexing the file");
            if api.reindex(record.path.clone()) {
                reject(ApiError::from(e))
            } else {
                // Nothing will re-index it: say so, rather than a 409 that never resolves.
                reject(ApiError::writer_stopped(api.writer_failure()))
            }
        }
        e => reject(ApiError::from(e)),
    }
}

/// Streams a payload from a blocking thread, a bounded number of pieces ahead.
///
/// The last piece is held back until the reader has checked the whole payload against its blake3
/// (it does so when the range is used up): a payload that changed since the first, verifying pass
/// then ends the response short of its `Content-Length`, which a client cannot take for a whole
/// photo, instead of after its last byte, which it could.
fn payload_stream(mut reader: media::PayloadReader) -> impl futures_util::Stream<Item = Result<Bytes, std::io::Error>> {
    let (send, receive) = tokio::sync::mpsc::channel::<Result<Bytes, std::io::Error>>(4);
    tokio::task::spawn_blocking(move || {
        let mut buf = vec![0u8; 64 * 1024];
        let mut held: Option<Bytes> = None;
        loop {
            let next = match reader.read(&mut buf) {
                Ok(0) => {
                    if let Some(last) = held {
                        let _ = send.blocking_send(Ok(last));
                    }
                    return;
                }
                Ok(n) => held.replace(Bytes::copy_from_slice(&buf[..n])),
                Err(e) => {
                    let _ = send.blocking_send(Err(e));
                    return;
                }
            };
            if let Some(piece) = next
                && send.blocking_send(Ok(piece)).is_err()
            {
                return;
            }
        }
    });
    tokio_stream::wrappers::ReceiverStream::new(receive)
}

fn etag_matches(header: &str, etag: &str) -> bool {
    header.split(',').map(str::trim).any(|t| t == "*" || t == etag || t.strip_prefix("W/") == Some(etag))
}

/// The headers every media response carries.
struct MediaHeaders<'a> {
    media_type: Option<&'a str>,
    blake3: &'a str,
    extension: &'a str,
    etag: &'a str,
}

impl MediaHeaders<'_> {
    fn set(&self, res: &mut warp::reply::Response, length: Option<u64>) {
        let headers = res.headers_mut();
        let media_type = self.media_type.unwrap_or("application/octet-stream");
        let inline = INLINE.contains(&media_type);
        let content_type = if inline || is_media_type(media_type) { media_type } else { "application/octet-stream" };
        if let Ok(v) = HeaderValue::from_str(content_type) {
            headers.insert(header::CONTENT_TYPE, v);
        }
        if !inline {
            let name = format!("attachment; filename=\"{}.{}\"", &self.blake3[..16], self.extension);
            if let Ok(v) = HeaderValue::from_str(&name) {
                headers.insert(header::CONTENT_DISPOSITION, v);
            }
        }
        if let Some(len) = length {
            headers.insert(header::CONTENT_LENGTH, HeaderValue::from(len));
        }
        if let Ok(v) = HeaderValue::from_str(self.etag) {
            headers.insert(header::ETAG, v);
        }
        headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("private, max-age=31536000, immutable"));
        headers.insert("x-content-type-options", HeaderValue::from_static("nosniff"));
    }
}

/// Whether a recorded media type looks like one (`type/subtype`, token characters): only then is it
/// sent as the `Content-Type`.
fn is_media_type(s: &str) -> bool {
    let token = |p: &str| !p.is_empty() && p.bytes().all(|b| b.is_ascii_alphanumeric() || b"!#$&-^_.+".contains(&b));
    s.split_once('/').is_some_and(|(a, b)| token(a) && token(b))
}

/// Forwards bus events to one WebSocket client until either side closes.
async fn forward_events(
    socket: warp::ws::WebSocket,
    mut events: tokio::sync::broadcast::Receiver<Event>,
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
                    Err(RecvError::Lagged(missed)) => serde_json::json!({ "type": "lagged", "missed": missed }).to_string(),
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
