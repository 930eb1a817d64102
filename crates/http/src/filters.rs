//! Request parts every route checks the same way: a bounded query string, a bounded JSON body, a
//! path segment that can be an id, a page's limit, and a 405 that names the one method a route
//! takes.

use warp::http::StatusCode;
use warp::{Filter, Rejection};

use super::ApiError;
use scrollback_core::codec::refs;
use scrollback_read::history;

/// Longest query string accepted.
pub(crate) const MAX_QUERY: usize = 4096;
/// The largest body of a request other than a send.
pub(crate) const MAX_SMALL_BODY: u64 = 256 << 10;

/// No query parameters at all: anything given is a 400.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct NoParams {}

/// Refuses a query string longer than [`MAX_QUERY`] (414), or one that holds a NUL (400).
pub(crate) fn query_cap() -> impl Filter<Extract = (), Error = Rejection> + Clone {
    raw_query()
        .and_then(|q: String| async move {
            if q.len() > MAX_QUERY {
                Err(ApiError::new(
                    StatusCode::URI_TOO_LONG,
                    "query-too-long",
                    format!("the query string is {} bytes; at most {MAX_QUERY}", q.len()),
                )
                .reject())
            } else if q.contains("%00") {
                // SQLite's full-text engine and PostgreSQL refuse a NUL in text (in `q`, `project`,
                // `host`, `model`, …): no parameter may hold one.
                Err(ApiError::bad_request("a query parameter holds a NUL character (%00)").reject())
            } else {
                Ok(())
            }
        })
        .untuple_one()
}

/// A JSON body of at most `limit` bytes, parsed with the body's own errors as 400s (and a body that
/// stopped arriving as 408: [`super::pace`]).
pub(crate) fn json_body<T: serde::de::DeserializeOwned + Send>(
    limit: u64,
) -> impl Filter<Extract = (T,), Error = Rejection> + Clone {
    warp::body::content_length_limit(limit)
        .and(body_bytes(None))
        .and_then(|(body, _): (bytes::Bytes, Budget)| async move { parse_json(&body).map_err(ApiError::reject) })
}

/// `body` as a `T`, or a 400 that says why not.
pub(crate) fn parse_json<T: serde::de::DeserializeOwned>(body: &[u8]) -> Result<T, ApiError> {
    serde_json::from_slice::<T>(body)
        .map_err(|e| ApiError::new(StatusCode::BAD_REQUEST, "bad-body", format!("request body: {e}")))
}

/// The whole body (its length already bounded by `content_length_limit`), each chunk counted
/// against `budget` if one is given: the bytes of that kind of body the server holds at once.
pub(crate) fn body_bytes(
    budget: Option<Budget>,
) -> impl Filter<Extract = ((bytes::Bytes, Budget),), Error = Rejection> + Clone {
    warp::body::stream().and_then(move |stream| collect(stream, budget.clone().unwrap_or_default()))
}

/// [`body_bytes`]' work, on warp's body stream.
async fn collect<S, B>(stream: S, mut budget: Budget) -> Result<(bytes::Bytes, Budget), Rejection>
where
    S: futures_util::Stream<Item = Result<B, warp::Error>>,
    B: warp::Buf,
{
    let body = gather(stream, |_, n| if budget.take(n) { Ok(()) } else { Err(ApiError::busy()) })
        .await
        .map_err(ApiError::reject)?;
    Ok((body, budget))
}

/// The whole body of a route that reads it only on some methods (warp's body stream, handed in
/// unread): at most `max` bytes (413 `too-large` past them), 408 when it stalls, 400 for another
/// failure.
pub(crate) async fn read_body<S, B>(stream: S, max: usize) -> Result<bytes::Bytes, ApiError>
where
    S: futures_util::Stream<Item = Result<B, warp::Error>>,
    B: warp::Buf,
{
    gather(stream, |held, n| {
        if held + n > max as u64 {
            return Err(ApiError::new(StatusCode::PAYLOAD_TOO_LARGE, "too-large", "request body too large"));
        }
        Ok(())
    })
    .await
}

/// A body's chunks gathered, each first admitted by `admit(bytes held, chunk's bytes)`; a body
/// that stalls is 408 ([`super::pace`]), another failure of the stream 400.
async fn gather<S, B>(
    stream: S,
    mut admit: impl FnMut(u64, u64) -> Result<(), ApiError>,
) -> Result<bytes::Bytes, ApiError>
where
    S: futures_util::Stream<Item = Result<B, warp::Error>>,
    B: warp::Buf,
{
    use futures_util::StreamExt as _;
    let mut stream = std::pin::pin!(stream);
    let mut body = bytes::BytesMut::new();
    while let Some(chunk) = stream.next().await {
        let mut chunk = chunk.map_err(|e| {
            super::pace::stalled(&e).unwrap_or_else(|| ApiError::bad_request(format!("request body: {e}")))
        })?;
        admit(body.len() as u64, chunk.remaining() as u64)?;
        while chunk.has_remaining() {
            let part = chunk.chunk();
            let len = part.len();
            body.extend_from_slice(part);
            chunk.advance(len);
        }
    }
    Ok(body.freeze())
}

/// The raw query string, empty when there is none.
pub(crate) fn raw_query() -> impl Filter<Extract = (String,), Error = std::convert::Infallible> + Clone {
    warp::query::raw().or(warp::any().map(String::new)).unify()
}

/// A share of a shared allowance of bytes, given back when dropped. The default shares in nothing
/// and takes whatever it is asked.
#[derive(Debug, Default)]
pub(crate) struct Budget {
    shared: Option<(std::sync::Arc<std::sync::atomic::AtomicU64>, u64)>,
    mine: u64,
}

impl Clone for Budget {
    /// A new share of the same allowance, holding nothing yet.
    fn clone(&self) -> Budget {
        Budget { shared: self.shared.clone(), mine: 0 }
    }
}

impl Budget {
    /// An allowance of `cap` bytes, shared by every clone.
    pub(crate) fn new(cap: u64) -> Budget {
        Budget { shared: Some((std::sync::Arc::default(), cap)), mine: 0 }
    }

    /// Takes `n` more bytes of the allowance; `false` if that would pass it.
    pub(crate) fn take(&mut self, n: u64) -> bool {
        use std::sync::atomic::Ordering;
        let Some((used, cap)) = &self.shared else { return true };
        let taken = used.fetch_update(Ordering::AcqRel, Ordering::Acquire, |u| u.checked_add(n).filter(|t| t <= cap));
        if taken.is_ok() {
            self.mine += n;
        }
        taken.is_ok()
    }

    /// Bytes of the allowance in use, by every share.
    #[cfg(test)]
    pub(crate) fn in_use(&self) -> u64 {
        self.shared.as_ref().map_or(0, |(used, _)| used.load(std::sync::atomic::Ordering::Acquire))
    }
}

impl Drop for Budget {
    fn drop(&mut self) {
        if let Some((used, _)) = &self.shared {
            used.fetch_sub(self.mine, std::sync::atomic::Ordering::AcqRel);
        }
    }
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

/// A GET route's query string as its `P`: a 405 for another method, a 400 that says why for a
/// query `P` does not take.
pub(crate) fn get_params<P: serde::de::DeserializeOwned>(
    method: &warp::http::Method,
    query: &str,
) -> Result<P, ApiError> {
    if method != warp::http::Method::GET {
        return Err(ApiError::method_not_allowed("GET", "get-only", "this route takes GET"));
    }
    serde_urlencoded::from_str(query).map_err(|e| ApiError::bad_request(format!("query: {e}")))
}

/// At most 80 characters of a value, for an error message (the read side's rule, for one wording).
pub(crate) use scrollback_read::request::trim;

/// Percent-decodes a path segment; refuses NUL, slashes, dot segments and long ones.
pub(crate) fn segment(raw: &str) -> Result<String, Rejection> {
    segment_id(raw).map_err(ApiError::reject)
}

/// [`segment`], for a handler that answers its errors itself.
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

#[cfg(test)]
mod tests {
    use super::Budget;

    #[test]
    fn a_budget_is_shared_by_its_clones_and_given_back_when_dropped() {
        let all = Budget::new(10);
        let mut a = all.clone();
        let mut b = all.clone();
        assert!(a.take(6));
        assert!(!b.take(5), "6 + 5 passes 10");
        assert!(b.take(4));
        assert_eq!(all.in_use(), 10);
        drop(a);
        assert_eq!(all.in_use(), 4);
        assert!(b.take(6));
        drop(b);
        assert_eq!(all.in_use(), 0);
        assert!(Budget::default().take(u64::MAX), "no allowance, no limit");
    }
}
