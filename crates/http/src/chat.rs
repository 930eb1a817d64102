//! The chat routes: send (record an acceptance), bind a chat to its session, bootstrap (the two
//! records side by side) and retire. The work is [`scrollback_ops::chat`]'s; these routes check the
//! request and shape the answer. Every route that changes state refuses a cross-site request and
//! takes only `Content-Type: application/json`, so that a page the person happens to visit cannot
//! send in their name.

use serde::Deserialize;
use warp::http::StatusCode;
use warp::{Filter, Rejection};

use super::auth::same_site_json;
use super::filters::{Budget, MAX_SMALL_BODY, body_bytes, json_body, parse_json, post_only};
use super::{Api, ApiError, wire};
use scrollback_accept::send::{MAX_BODY, SendRequest, is_client_id};
use scrollback_read::history::Position;

/// The most ids one retire request may name.
pub const MAX_RETIRE: usize = 1000;

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

fn json(value: &serde_json::Value) -> warp::reply::Response {
    warp::reply::Reply::into_response(warp::reply::json(value))
}

/// The chat routes, under `/api`.
pub(super) fn routes(api: Api) -> impl Filter<Extract = (warp::reply::Response,), Error = Rejection> + Clone {
    let api_budget = api.inner.send_budget.clone();
    let with_api = warp::any().map(move || api.clone());
    let send = warp::path!("chat" / "send")
        .and(warp::post())
        .and(same_site_json())
        .and(warp::body::content_length_limit(MAX_BODY))
        .and(with_api.clone())
        .and(body_bytes(Some(api_budget.clone())))
        .and_then(|api: Api, (body, budget): (bytes::Bytes, Budget)| async move {
            // A turn is taken once the body has arrived (a stalled body holds none), and the body's
            // bytes stay counted against the budget until the send has finished with them.
            let permit = api.inner.sends.clone().acquire_owned().await.map_err(|_| {
                ApiError::new(StatusCode::SERVICE_UNAVAILABLE, "shutting-down", "the server is stopping").reject()
            })?;
            let request = parse_json::<SendRequest>(&body).map_err(ApiError::reject);
            drop(body);
            let reply = send(api, request?).await;
            drop((permit, budget));
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
        Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "bad-id",
            format!("{what}: 1 to 128 letters, digits, '.', '_', ':' or '-'"),
        )
        .reject())
    }
}

/// `POST /api/chat/send`: answers with the record once it is stored durably.
async fn send(api: Api, body: SendRequest) -> Result<warp::reply::Response, Rejection> {
    let outcome = api.chats().send(body).await.map_err(|e| ApiError::from(e).reject())?;
    Ok(json(&wire::accepted(outcome.record())))
}

/// `POST /api/chats/{chatId}/session`.
async fn bind(chat_id: String, body: BindBody, api: Api) -> Result<warp::reply::Response, Rejection> {
    check_id("chatId", &chat_id)?;
    check_id("sessionId", &body.session_id)?;
    api.chats().bind(chat_id.clone(), body.session_id.clone()).await.map_err(|e| ApiError::from(e).reject())?;
    Ok(json(&wire::bound(&chat_id, &body.session_id)))
}

/// `GET /api/chat/bootstrap?chatId=`: the chat's pending sends, then the newest history page of its
/// session (see [`scrollback_ops::chat::Chats::state`] for why in that order).
async fn bootstrap(p: BootstrapParams, api: Api) -> Result<warp::reply::Response, Rejection> {
    check_id("chatId", &p.chat_id)?;
    let state = api.chats().state(p.chat_id.clone()).await.map_err(|e| ApiError::from(e).reject())?;
    let Some(session) = state.session_id.clone() else {
        return Ok(json(&wire::bootstrap(&p.chat_id, &state, None)));
    };
    // Made on the readers' thread: the page's views render Markdown, which is no work for the
    // runtime's.
    let body = api
        .db(move |store| {
            let page = store.history(&session, Position::Newest, 100, false)?;
            Ok(wire::bootstrap(&p.chat_id, &state, page.as_ref()))
        })
        .await
        .map_err(ApiError::reject)?;
    Ok(json(&body))
}

/// `POST /api/chat/retire`.
async fn retire(body: RetireBody, api: Api) -> Result<warp::reply::Response, Rejection> {
    check_id("chatId", &body.chat_id)?;
    if body.client_message_ids.len() > MAX_RETIRE {
        return Err(ApiError::bad_request(format!("at most {MAX_RETIRE} clientMessageIds at a time")).reject());
    }
    for id in &body.client_message_ids {
        check_id("clientMessageIds[]", id)?;
    }
    let retired = api
        .chats()
        .retire(body.chat_id.clone(), body.client_message_ids)
        .await
        .map_err(|e| ApiError::from(e).reject())?;
    Ok(json(&wire::retired(&body.chat_id, &retired)))
}
