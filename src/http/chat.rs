//! The chat routes: send (record an acceptance), bind a chat to its session, bootstrap (the two
//! records side by side) and retire. Every route that changes state refuses a cross-site request
//! and takes only `Content-Type: application/json`, so that a page the person happens to visit
//! cannot send in their name.

use serde::Deserialize;
use warp::http::StatusCode;
use warp::{Filter, Rejection};

use super::{Api, ApiError, wire};
use crate::accept::send::{MAX_BODY, SendRequest, is_client_id};
use crate::accept::store::{Bound, Outcome};
use crate::events::Event;
use crate::read::history::{self, Position};

/// The most ids one retire request may name.
pub const MAX_RETIRE: usize = 1000;
/// The largest body of a request other than a send.
pub(super) const MAX_SMALL_BODY: u64 = 256 << 10;

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct BindBody {
    session_id: String,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct RetireBody {
    chat_id: String,
    client_message_ids: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct BootstrapParams {
    chat_id: String,
}

fn reject(e: ApiError) -> Rejection {
    warp::reject::custom(e)
}

fn json(value: &serde_json::Value) -> warp::reply::Response {
    warp::reply::Reply::into_response(warp::reply::json(value))
}

/// Passes a request that is not cross-site: no `Sec-Fetch-Site: cross-site`, and no `Origin` other
/// than the `Host` it was sent to. (A request without either, from a program, passes.)
pub(super) fn same_origin() -> impl Filter<Extract = (), Error = Rejection> + Clone {
    warp::header::optional::<String>("origin")
        .and(warp::header::optional::<String>("host"))
        .and(warp::header::optional::<String>("sec-fetch-site"))
        .and_then(|origin: Option<String>, host: Option<String>, site: Option<String>| async move {
            if site.is_some_and(|s| s.eq_ignore_ascii_case("cross-site")) {
                return Err(reject(ApiError::forbidden("a cross-site request is refused here")));
            }
            if let Some(origin) = origin {
                let from = origin.split_once("://").map(|(_, rest)| rest.trim_end_matches('/'));
                let same = match (from, host.as_deref()) {
                    (Some(from), Some(host)) => from.eq_ignore_ascii_case(host),
                    _ => false,
                };
                if !same {
                    return Err(reject(ApiError::forbidden(format!(
                        "Origin {:?} is not this server: a cross-site request is refused here",
                        origin.chars().take(100).collect::<String>()
                    ))));
                }
            }
            Ok(())
        })
        .untuple_one()
}

/// Passes a request that may change state: [`same_origin`], and a JSON body.
pub(super) fn same_site_json() -> impl Filter<Extract = (), Error = Rejection> + Clone {
    same_origin()
        .and(warp::header::optional::<String>("content-type"))
        .and_then(|content_type: Option<String>| async move {
            let json = content_type.as_deref().and_then(|t| t.split(';').next()).map(str::trim);
            if !json.is_some_and(|t| t.eq_ignore_ascii_case("application/json")) {
                return Err(reject(ApiError::new(
                    StatusCode::UNSUPPORTED_MEDIA_TYPE,
                    "unsupported-media-type",
                    "send the body as Content-Type: application/json",
                )));
            }
            Ok(())
        })
        .untuple_one()
}

/// A JSON body of at most `limit` bytes, parsed with the body's own errors as 400s.
pub(super) fn json_body<T: serde::de::DeserializeOwned + Send>(
    limit: u64,
) -> impl Filter<Extract = (T,), Error = Rejection> + Clone {
    warp::body::content_length_limit(limit).and(warp::body::bytes()).and_then(|body: bytes::Bytes| async move {
        serde_json::from_slice::<T>(&body)
            .map_err(|e| reject(ApiError::new(StatusCode::BAD_REQUEST, "bad-body", format!("request body: {e}"))))
    })
}

/// Any other method than POST on a POST route: 405 with `Allow: POST`. (A POST the route itself
/// refused keeps its own answer: this passes it by.)
pub(super) fn post_only() -> impl Filter<Extract = (warp::reply::Response,), Error = Rejection> + Clone {
    only(warp::http::Method::POST, "post-only", "this route takes POST")
}

/// Any other method than `allowed` on a route: a 405 with `code`, which `handle_rejection` turns
/// into its `Allow` header. The allowed method itself passes by, keeping the route's own answer.
pub(super) fn only(
    allowed: warp::http::Method,
    code: &'static str,
    message: &'static str,
) -> impl Filter<Extract = (warp::reply::Response,), Error = Rejection> + Clone {
    warp::method().and_then(move |method: warp::http::Method| {
        let allowed = allowed.clone();
        async move {
            if method == allowed {
                return Err(warp::reject::not_found());
            }
            Err::<warp::reply::Response, _>(reject(ApiError::new(StatusCode::METHOD_NOT_ALLOWED, code, message)))
        }
    })
}

/// The chat routes, under `/api`.
pub(super) fn routes(api: Api) -> impl Filter<Extract = (warp::reply::Response,), Error = Rejection> + Clone {
    let with_api = warp::any().map(move || api.clone());
    let send = warp::path!("chat" / "send")
        .and(warp::post().and(same_site_json()).and(with_api.clone()).and_then(|api: Api| async move {
            // Waits for a turn before the body is read: each may be large.
            api.inner.sends.clone().acquire_owned().await.map(|permit| (api, permit)).map_err(|_| {
                reject(ApiError::new(StatusCode::SERVICE_UNAVAILABLE, "shutting-down", "the server is stopping"))
            })
        }))
        .and(json_body::<SendRequest>(MAX_BODY))
        .and_then(|(api, permit): (Api, tokio::sync::OwnedSemaphorePermit), body: SendRequest| async move {
            let reply = send(api, body).await;
            drop(permit);
            reply
        })
        .or(warp::path!("chat" / "send").and(post_only()))
        .unify();
    let bind = warp::path!("chats" / String / "session")
        .and(warp::post())
        .and(same_site_json())
        .and(json_body::<BindBody>(MAX_SMALL_BODY))
        .and(with_api.clone())
        .and_then(bind)
        .or(warp::path!("chats" / String / "session").and(post_only()).map(|_: String, r| r))
        .unify();
    let bootstrap = warp::path!("chat" / "bootstrap")
        .and(warp::get())
        .and(warp::query::<BootstrapParams>())
        .and(with_api.clone())
        .and_then(bootstrap);
    let retire = warp::path!("chat" / "retire")
        .and(warp::post())
        .and(same_site_json())
        .and(json_body::<RetireBody>(MAX_SMALL_BODY))
        .and(with_api)
        .and_then(retire)
        .or(warp::path!("chat" / "retire").and(post_only()))
        .unify();
    send.or(bind).unify().or(bootstrap).unify().or(retire).unify()
}

fn check_id(what: &str, s: &str) -> Result<(), Rejection> {
    if is_client_id(s) {
        Ok(())
    } else {
        Err(reject(ApiError::new(
            StatusCode::BAD_REQUEST,
            "bad-id",
            format!("{what}: 1 to 128 letters, digits, '.', '_', ':' or '-'"),
        )))
    }
}

/// `POST /api/chat/send`: checks everything, records the message durably, announces it, starts the
/// engine, and only then answers with the record.
async fn send(api: Api, body: SendRequest) -> Result<warp::reply::Response, Rejection> {
    let checked = tokio::task::spawn_blocking(move || body.validate())
        .await
        .map_err(|e| reject(ApiError::internal(format!("worker failed: {e}"))))?
        .map_err(|e| reject(ApiError::from(e)))?;
    let outcome = api.accept(move |store| store.accept(&checked)).await.map_err(reject)?;
    if let Outcome::New(record) = &outcome {
        api.announce(Event::ChatUserMessage(Box::new(record.clone())));
        if api.inner.engine.is_some() {
            let (api, record) = (api.clone(), record.clone());
            tokio::spawn(async move { api.run_engine(record).await });
        }
    }
    Ok(json(&wire::accepted(outcome.record())))
}

/// `POST /api/chats/{chatId}/session`.
async fn bind(chat_id: String, body: BindBody, api: Api) -> Result<warp::reply::Response, Rejection> {
    check_id("chatId", &chat_id)?;
    check_id("sessionId", &body.session_id)?;
    let (chat, session) = (chat_id.clone(), body.session_id.clone());
    let bound = api.accept(move |store| store.bind(&chat, &session)).await.map_err(reject)?;
    if bound == Bound::Now {
        api.announce(Event::SessionBound { chat_id: chat_id.clone(), session_id: body.session_id.clone() });
    }
    Ok(json(&serde_json::json!({ "chatId": chat_id, "sessionId": body.session_id })))
}

/// `GET /api/chat/bootstrap?chatId=`: the chat's pending sends, then the newest history page of its
/// session. Pending is read first: a send the transcript takes up in between is then in both (and
/// the client's reconcile shows it once), never in neither.
async fn bootstrap(p: BootstrapParams, api: Api) -> Result<warp::reply::Response, Rejection> {
    check_id("chatId", &p.chat_id)?;
    let chat = p.chat_id.clone();
    let (session, pending) = api
        .accept(move |store| Ok((store.chat_session(&chat)?.flatten(), store.pending(&chat)?)))
        .await
        .map_err(reject)?;
    let page = match session.clone() {
        Some(session) => {
            api.db(move |conn| history::history(conn, &session, Position::Newest, 100, false)).await.map_err(reject)?
        }
        None => None,
    };
    let page = page.as_ref().map(wire::History::from);
    let (entries, before, after) = match &page {
        Some(page) => (serde_json::to_value(&page.entries).unwrap_or_default(), page.before, page.after),
        None => (serde_json::json!([]), None, None),
    };
    Ok(json(&serde_json::json!({
        "chatId": p.chat_id,
        "sessionId": session,
        "entries": entries,
        "before": before,
        "after": after,
        "pending": pending.iter().map(wire::accepted).collect::<Vec<_>>(),
    })))
}

/// `POST /api/chat/retire`.
async fn retire(body: RetireBody, api: Api) -> Result<warp::reply::Response, Rejection> {
    check_id("chatId", &body.chat_id)?;
    if body.client_message_ids.len() > MAX_RETIRE {
        return Err(reject(ApiError::bad_request(format!("at most {MAX_RETIRE} clientMessageIds at a time"))));
    }
    for id in &body.client_message_ids {
        check_id("clientMessageIds[]", id)?;
    }
    let chat = body.chat_id.clone();
    let retired = api.accept(move |store| store.retire(&chat, &body.client_message_ids)).await.map_err(reject)?;
    if !retired.is_empty() {
        api.announce(Event::ChatRetired { chat_id: body.chat_id.clone(), client_message_ids: retired.clone() });
    }
    Ok(json(&serde_json::json!({ "chatId": body.chat_id, "retired": retired })))
}
