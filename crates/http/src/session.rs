//! One session's routes of the table, a `PUT` under the rules of every change (same origin, a JSON
//! body):
//! - `GET` and `PUT /api/sessions/{id}/marks`: a person's own marks on a session (a title of their
//!   own, pinned to the top of the list), kept in the acceptance record beside the sends
//!   ([`scrollback_accept::Mark`]): primary data, never written into a transcript, kept through a
//!   rebuild;
//! - `GET /api/sessions/{id}/about`: the session as listed, with those marks, and the git branch
//!   its transcript names, for the viewer's header;
//! - `GET /api/sessions/{id}/outline`: its prompts with their turns' tool calls, tokens and times,
//!   for the viewer's outline ([`scrollback_read::history::outline`]);
//! - `GET /api/sessions/{id}/entries/{cursor}/texts`: an entry's texts whole, for the viewer's
//!   "show all" of a text its history page cut ([`scrollback_render::view::VIEW_TEXT_MAX`]).

use bytes::Bytes;
use serde_json::Value;
use warp::filters::BoxedFilter;
use warp::http::{HeaderMap, Method, StatusCode, header};
use warp::{Filter as _, Reply as _};

use super::auth::check_same_origin;
use super::filters::{read_body, segment_id, trim};
use super::{Api, ApiError};

/// The longest title a person may give (in characters).
pub const MAX_TITLE: usize = 200;

/// The largest body a `PUT` may have.
const MAX_BODY: usize = 4096;

/// `/api/sessions/{id}/marks`, `…/about`, `…/outline` and `…/entries/{cursor}/texts`, for the route table.
pub(crate) fn routes(api: &Api) -> BoxedFilter<(warp::reply::Response,)> {
    let with_api = {
        let api = api.clone();
        warp::any().map(move || api.clone())
    };
    let marks = warp::path!("sessions" / String / "marks")
        .and(warp::method())
        .and(warp::header::headers_cloned())
        .and(warp::body::stream())
        .and(with_api.clone())
        .then(|raw: String, method: Method, headers: HeaderMap, body, api: Api| async move {
            json_answer(get_or_put_marks(api, &raw, method, &headers, body).await)
        });
    let about = warp::path!("sessions" / String / "about").and(warp::method()).and(with_api.clone()).then(
        |raw: String, method: Method, api: Api| async move {
            json_answer(match method {
                Method::GET => match segment_id(&raw) {
                    Ok(session_id) => about(api.clone(), session_id).await.map(|mut v| {
                        if let Some(r) = api.mask() {
                            r.redact_value(&mut v, &mut Default::default());
                        }
                        v
                    }),
                    Err(e) => Err(e),
                },
                _ => Err(ApiError::method_not_allowed("GET", "get-only", "this route takes GET")),
            })
        },
    );
    let outline = warp::path!("sessions" / String / "outline").and(warp::method()).and(with_api.clone()).then(
        |raw: String, method: Method, api: Api| async move {
            json_answer(match method {
                Method::GET => outline(api, &raw).await,
                _ => Err(ApiError::method_not_allowed("GET", "get-only", "this route takes GET")),
            })
        },
    );
    let texts = warp::path!("sessions" / String / "entries" / String / "texts").and(warp::method()).and(with_api).then(
        |raw: String, cursor: String, method: Method, api: Api| async move {
            json_answer(match method {
                Method::GET => entry_texts(api, &raw, &cursor).await,
                _ => Err(ApiError::method_not_allowed("GET", "get-only", "this route takes GET")),
            })
        },
    );
    marks.or(about).unify().or(outline).unify().or(texts).unify().boxed()
}

/// A session's prompts with their turns' figures, masked as its history is.
async fn outline(api: Api, raw: &str) -> Result<Value, ApiError> {
    let session_id = segment_id(raw)?;
    let sid = session_id.clone();
    let mask = api.mask().cloned();
    let found = api
        .db(move |store| {
            // Each prompt masked whole, then cut to its first words.
            let Some(outline) =
                store.outline(&sid, mask.as_deref().map(|r| r as &dyn scrollback_read::history::Mask))?
            else {
                return Ok(None);
            };
            serde_json::to_value(super::wire::Outline::from(&outline))
                .map(Some)
                .map_err(|e| scrollback_core::Error::Internal(e.to_string()))
        })
        .await?;
    let Some(mut value) = found else {
        return Err(ApiError::not_found(format!("no session {}", trim(&session_id))));
    };
    if let Some(r) = api.mask() {
        r.redact_value(&mut value, &mut Default::default());
    }
    Ok(value)
}

/// `{"cursor", "texts"}`: every text of one entry of the session, whole, in the order a view's
/// `more.index` counts them.
async fn entry_texts(api: Api, raw: &str, cursor: &str) -> Result<Value, ApiError> {
    let session_id = segment_id(raw)?;
    let cursor: i64 = cursor
        .parse()
        .ok()
        .filter(|c| *c >= 0)
        .ok_or_else(|| ApiError::bad_request(format!("cursor {:?} is not an entry's cursor", trim(cursor))))?;
    let sid = session_id.clone();
    let texts = api
        .db(move |store| {
            // A cursor not of this session is no entry of it.
            let page = match store.history(&sid, scrollback_read::history::Position::From(cursor), 1, true) {
                Err(scrollback_core::Error::BadQuery(_)) => return Ok(None),
                page => page?,
            };
            let Some(page) = page else { return Ok(None) };
            Ok(page.entries.into_iter().find(|e| e.cursor == cursor).map(|e| match &e.body {
                scrollback_read::history::EntryBody::Stored { stripped, .. } => {
                    let line: Value = serde_json::from_str(stripped).unwrap_or(Value::Null);
                    scrollback_render::view::texts(e.format, &line)
                }
                scrollback_read::history::EntryBody::Invalid(_) => Vec::new(),
            }))
        })
        .await?;
    match texts {
        Some(texts) => {
            let mut answer = serde_json::json!({ "cursor": cursor, "texts": texts });
            // Each text whole, as history masks the text it cut.
            if let Some(r) = api.mask() {
                r.redact_value(&mut answer, &mut Default::default());
            }
            Ok(answer)
        }
        None => Err(ApiError::not_found(format!("no entry {cursor} in session {}", trim(&session_id)))),
    }
}

fn json_answer(answer: Result<Value, ApiError>) -> warp::reply::Response {
    match answer {
        Ok(body) => {
            warp::reply::with_header(body.to_string(), header::CONTENT_TYPE, "application/json").into_response()
        }
        Err(e) => e.response(),
    }
}

/// `GET` a person's marks on a session, or `PUT` a change to them.
async fn get_or_put_marks<S, B>(
    api: Api,
    raw: &str,
    method: Method,
    headers: &HeaderMap,
    body: S,
) -> Result<Value, ApiError>
where
    S: futures_util::Stream<Item = Result<B, warp::Error>>,
    B: warp::Buf,
{
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    let session_id = segment_id(raw)?;
    let change = match method {
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
            Some(parse(&read_body(body, MAX_BODY).await?)?)
        }
        _ => return Err(ApiError::method_not_allowed("GET, PUT", "get-or-put", "this route takes GET and PUT")),
    };
    let sid = session_id.clone();
    let known = api.db(move |store| store.session(&sid)).await?.is_some();
    if !known {
        return Err(ApiError::not_found(format!("no session {}", trim(&session_id))));
    }
    let mark = api
        .inner
        .chats
        .with_store(move |store| match change {
            Some(Change { title, pinned }) => store.set_mark(&session_id, title.as_ref().map(|t| t.as_deref()), pinned),
            None => Ok(store.marks(&[&session_id])?.pop().unwrap_or_else(|| scrollback_accept::Mark {
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

/// The session as listed, with a person's marks, its transcript's git branch and the command that
/// resumes it.
async fn about(api: Api, session_id: String) -> Result<Value, ApiError> {
    let sid = session_id.clone();
    let found = api
        .db(move |store| {
            let Some(summary) = store.session(&sid)? else { return Ok(None) };
            Ok(Some((summary, store.git_branch(&sid)?)))
        })
        .await?;
    let Some((summary, branch)) = found else {
        return Err(ApiError::not_found(format!("no session {}", trim(&session_id))));
    };
    let marks = api.inner.chats.with_store(move |store| store.marks(&[&session_id])).await.map_err(ApiError::from)?;
    let session = super::wire::Session::marked(&summary, marks.first());
    let mut value = serde_json::to_value(&session).map_err(|e| ApiError::internal(e.to_string()))?;
    value["gitBranch"] = branch.map_or(Value::Null, Value::String);
    // The command that resumes it in its agent's CLI, by its format's rule.
    let resume = scrollback_core::format::by_name(&summary.agent).and_then(|f| f.resume_command(&summary.id));
    value["resume"] = resume.map_or(Value::Null, Value::String);
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
    }
}
