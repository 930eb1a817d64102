//! Request parts every route checks the same way: a bounded query string, a bounded JSON body, a
//! path segment that can be an id, a page's limit, and a 405 that names the one method a route
//! takes.

use warp::http::StatusCode;
use warp::{Filter, Rejection};

use super::ApiError;
use crate::codec::refs;
use crate::read::history;

/// Longest query string accepted.
pub(crate) const MAX_QUERY: usize = 4096;
/// The largest body of a request other than a send.
pub(crate) const MAX_SMALL_BODY: u64 = 256 << 10;

/// No query parameters at all: anything given is a 400.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct NoParams {}

/// Refuses a query string longer than [`MAX_QUERY`] (414).
pub(crate) fn query_cap() -> impl Filter<Extract = (), Error = Rejection> + Clone {
    warp::query::raw()
        .or(warp::any().map(String::new))
        .unify()
        .and_then(|q: String| async move {
            if q.len() > MAX_QUERY {
                Err(ApiError::new(
                    StatusCode::URI_TOO_LONG,
                    "query-too-long",
                    format!("the query string is {} bytes; at most {MAX_QUERY}", q.len()),
                )
                .reject())
            } else {
                Ok(())
            }
        })
        .untuple_one()
}

/// A JSON body of at most `limit` bytes, parsed with the body's own errors as 400s.
pub(crate) fn json_body<T: serde::de::DeserializeOwned + Send>(
    limit: u64,
) -> impl Filter<Extract = (T,), Error = Rejection> + Clone {
    warp::body::content_length_limit(limit).and(warp::body::bytes()).and_then(|body: bytes::Bytes| async move {
        serde_json::from_slice::<T>(&body)
            .map_err(|e| ApiError::new(StatusCode::BAD_REQUEST, "bad-body", format!("request body: {e}")).reject())
    })
}

/// Any other method than POST on a POST route: 405 with `Allow: POST`. (A POST the route itself
/// refused keeps its own answer: this passes it by.)
pub(crate) fn post_only() -> impl Filter<Extract = (warp::reply::Response,), Error = Rejection> + Clone {
    only(warp::http::Method::POST, "post-only", "this route takes POST")
}

/// Any other method than `allowed` on a route: a 405 with `code` and `Allow: <allowed>`. The
/// allowed method itself passes by, keeping the route's own answer.
pub(crate) fn only(
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
            let allow = if allowed == warp::http::Method::DELETE { "DELETE" } else { "POST" };
            Err::<warp::reply::Response, _>(ApiError::method_not_allowed(allow, code, message).reject())
        }
    })
}

/// At most 80 characters of `s`, for an error message.
pub(crate) fn trim(s: &str) -> String {
    s.chars().take(80).collect()
}

/// Percent-decodes a path segment; refuses NUL, slashes, dot segments and long ones.
pub(crate) fn segment(raw: &str) -> Result<String, Rejection> {
    segment_id(raw).map_err(ApiError::reject)
}

/// [`segment`], for a route answered beside warp's table.
pub(crate) fn segment_id(raw: &str) -> Result<String, ApiError> {
    let bad = |why: &str| ApiError::bad_request(format!("path segment {:?}: {why}", trim(raw)));
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

/// A page's `limit`: `default` when not given, else between 1 and [`history::MAX_LIMIT`].
pub(crate) fn check_limit(limit: Option<u32>, default: u32) -> Result<u32, Rejection> {
    match limit {
        None => Ok(default),
        Some(n) if (1..=history::MAX_LIMIT).contains(&n) => Ok(n),
        Some(n) => Err(ApiError::bad_request(format!("limit {n}: between 1 and {}", history::MAX_LIMIT)).reject()),
    }
}
