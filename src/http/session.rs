//! One session's routes answered beside warp's route table (as `/api/usage` is), under the rules of
//! every route (Host, token), and a `PUT` under those of every change (same origin, a JSON body):
//! - `GET` and `PUT /api/sessions/{id}/marks`: a person's own marks on a session (a title of their
//!   own, pinned to the top of the list), kept in the acceptance record beside the sends
//!   ([`crate::accept::Mark`]): primary data, never written into a transcript, kept through a
//!   rebuild;
//! - `GET /api/sessions/{id}/about`: the session as listed, with those marks, and the git branch
//!   its transcript names, for the viewer's header.

use bytes::Bytes;
use http_body_util::{BodyExt as _, Limited};
use serde_json::Value;
use warp::Reply as _;
use warp::http::{HeaderValue, Method, Request, StatusCode, header};

use super::auth::{check_access, check_same_origin};
use super::filters::{segment_id, trim};
use super::{Api, ApiError};
use crate::read::history;

/// The paths' start: `/api/sessions/{id}/marks`, `/api/sessions/{id}/about`.
pub const PREFIX: &str = "/api/sessions/";
/// The ends of the paths this module answers.
const SUFFIXES: [&str; 2] = ["/marks", "/about"];

/// The longest title a person may give (in characters).
pub const MAX_TITLE: usize = 200;

/// The largest body a `PUT` may have.
const MAX_BODY: usize = 4096;

/// The session id segment and the route's end, if `path` is one of this module's.
fn split(path: &str) -> Option<(&str, &'static str)> {
    let rest = path.strip_prefix(PREFIX)?;
    SUFFIXES
        .iter()
        .find_map(|end| rest.strip_suffix(end).filter(|id| !id.is_empty() && !id.contains('/')).map(|id| (id, *end)))
}

/// Whether `path` is one of this module's routes.
pub(crate) fn is_path(path: &str) -> bool {
    split(path).is_some()
}

/// The answer to one request to this route.
pub(crate) async fn answer(api: Api, request: Request<super::pace::RequestBody>) -> warp::reply::Response {
    let mut response = match run(api, request).await {
        Ok(body) => {
            warp::reply::with_header(body.to_string(), header::CONTENT_TYPE, "application/json").into_response()
        }
        Err(e) => e.response(),
    };
    response.headers_mut().insert("x-content-type-options", HeaderValue::from_static("nosniff"));
    response
}

async fn run(api: Api, request: Request<super::pace::RequestBody>) -> Result<Value, ApiError> {
    let header = |name: &str| request.headers().get(name).and_then(|v| v.to_str().ok());
    check_access(&api, request.headers())?;
    let Some((raw, end)) = split(request.uri().path()) else {
        return Err(ApiError::not_found("no such route"));
    };
    let session_id = segment_id(raw)?;
    if end == "/about" {
        if request.method() != Method::GET {
            return Err(ApiError::method_not_allowed("GET", "get-only", "this route takes GET"));
        }
        return about(api, session_id).await;
    }
    let change = match *request.method() {
        Method::GET => None,
        Method::PUT => {
            check_same_origin(header("origin"), header("host"), header("sec-fetch-site"))?;
            let json = header("content-type").and_then(|t| t.split(';').next()).map(str::trim);
            if !json.is_some_and(|t| t.eq_ignore_ascii_case("application/json")) {
                return Err(ApiError::new(
                    StatusCode::UNSUPPORTED_MEDIA_TYPE,
                    "unsupported-media-type",
                    "send the body as Content-Type: application/json",
                ));
            }
            let body = Limited::new(request.into_body(), MAX_BODY).collect().await.map_err(|e| {
                match e.downcast_ref::<http_body_util::LengthLimitError>() {
                    Some(_) => ApiError::new(StatusCode::PAYLOAD_TOO_LARGE, "too-large", "request body too large"),
                    None => super::pace::stalled(e.as_ref())
                        .unwrap_or_else(|| ApiError::bad_request(format!("request body: {e}"))),
                }
            })?;
            Some(parse(&body.to_bytes())?)
        }
        _ => return Err(ApiError::method_not_allowed("GET, PUT", "get-or-put", "this route takes GET and PUT")),
    };
    let sid = session_id.clone();
    let known = api.db(move |conn| history::session(conn, &sid)).await?.is_some();
    if !known {
        return Err(ApiError::not_found(format!("no session {}", trim(&session_id))));
    }
    let mark = api
        .inner
        .chats
        .with_store(move |store| match change {
            Some(Change { title, pinned }) => store.set_mark(&session_id, title.as_ref().map(|t| t.as_deref()), pinned),
            None => Ok(store.marks(&[&session_id])?.pop().unwrap_or_else(|| crate::accept::Mark {
                session_id: session_id.clone(),
                title: None,
                pinned: false,
                updated_at: None,
            })),
        })
        .await
        .map_err(ApiError::from)?;
    serde_json::to_value(&mark).map_err(|e| ApiError::internal(e.to_string()))
}

/// The session as listed, with a person's marks, and its transcript's git branch.
async fn about(api: Api, session_id: String) -> Result<Value, ApiError> {
    let sid = session_id.clone();
    let found = api
        .db(move |conn| {
            let Some(summary) = history::session(conn, &sid)? else { return Ok(None) };
            Ok(Some((summary, history::git_branch(conn, &sid)?)))
        })
        .await?;
    let Some((summary, branch)) = found else {
        return Err(ApiError::not_found(format!("no session {}", trim(&session_id))));
    };
    let marks = api.inner.chats.with_store(move |store| store.marks(&[&session_id])).await.map_err(ApiError::from)?;
    let session = super::wire::Session::marked(&summary, marks.first());
    let mut value = serde_json::to_value(&session).map_err(|e| ApiError::internal(e.to_string()))?;
    value["gitBranch"] = branch.map_or(Value::Null, Value::String);
    Ok(value)
}

/// What a `PUT` changes: `title` (a string, or `null` to give back the transcript's), `pinned`.
#[derive(Debug, PartialEq)]
struct Change {
    title: Option<Option<String>>,
    pinned: Option<bool>,
}

fn parse(body: &Bytes) -> Result<Change, ApiError> {
    let value: Value =
        serde_json::from_slice(body).map_err(|e| ApiError::bad_request(format!("the body is not JSON: {e}")))?;
    let Value::Object(map) = value else {
        return Err(ApiError::bad_request("the body is a JSON object: {\"title\": …, \"pinned\": …}"));
    };
    let mut change = Change { title: None, pinned: None };
    for (key, value) in map {
        match (key.as_str(), value) {
            ("title", Value::Null) => change.title = Some(None),
            ("title", Value::String(t)) => {
                let t = t.trim();
                if t.chars().count() > MAX_TITLE {
                    return Err(ApiError::bad_request(format!("title: at most {MAX_TITLE} characters")));
                }
                if t.chars().any(char::is_control) {
                    return Err(ApiError::bad_request("title: no control characters"));
                }
                change.title = Some((!t.is_empty()).then(|| t.to_owned()));
            }
            ("pinned", Value::Bool(p)) => change.pinned = Some(p),
            ("title", _) => return Err(ApiError::bad_request("title: a string, or null")),
            ("pinned", _) => return Err(ApiError::bad_request("pinned: true or false")),
            (other, _) => return Err(ApiError::bad_request(format!("unknown field {:?}", trim(other)))),
        }
    }
    Ok(change)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_change_is_read_strictly() {
        let p = |s: &str| parse(&Bytes::from(s.to_owned()));
        assert_eq!(
            p(r#"{"title": " Mine ", "pinned": true}"#).unwrap(),
            Change { title: Some(Some("Mine".into())), pinned: Some(true) }
        );
        assert_eq!(p(r#"{"title": null}"#).unwrap(), Change { title: Some(None), pinned: None });
        assert_eq!(p(r#"{"title": ""}"#).unwrap(), Change { title: Some(None), pinned: None });
        for bad in
            [r#"[]"#, r#"{"pinned": 1}"#, r#"{"title": 3}"#, r#"{"colour": "red"}"#, "nope", r#"{"title": "a\u0007"}"#]
        {
            assert!(p(bad).is_err(), "{bad}");
        }
        assert!(p(&format!(r#"{{"title": "{}"}}"#, "x".repeat(MAX_TITLE + 1))).is_err());
        assert!(is_path("/api/sessions/abc/marks") && is_path("/api/sessions/abc/about"));
        assert!(
            !is_path("/api/sessions/a/b/marks") && !is_path("/api/sessions/abc") && !is_path("/api/sessions//marks")
        );
    }
}
