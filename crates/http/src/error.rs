//! Errors on their way to becoming responses: every domain error and every warp rejection mapped,
//! in one place, to a status and the API's JSON error body. A 5xx is a bug, except a 503 for a
//! request that needs what is not running (the writer, an intact index, a team's hub) and a 507 for
//! a full disk.

use warp::Reply as _;
use warp::http::{HeaderValue, StatusCode};

use super::wire;
use scrollback_core::error::Error;

/// A domain error on its way to becoming a response.
#[derive(Debug)]
pub struct ApiError {
    pub(crate) status: StatusCode,
    code: &'static str,
    message: String,
    /// For a 405: the one method the route takes (its `Allow` header).
    allow: Option<&'static str>,
    /// For a 429: seconds to wait (its `Retry-After` header).
    retry_after: Option<u64>,
}

impl warp::reject::Reject for ApiError {}

impl ApiError {
    pub(crate) fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> ApiError {
        ApiError { status, code, message: message.into(), allow: None, retry_after: None }
    }

    /// 429: too many wrong tokens lately; ask again in `secs` seconds.
    pub(crate) fn too_many_attempts(secs: u64) -> ApiError {
        ApiError {
            retry_after: Some(secs),
            ..ApiError::new(
                StatusCode::TOO_MANY_REQUESTS,
                "too-many-attempts",
                format!("too many wrong tokens lately: no token is checked for {secs} s"),
            )
        }
    }

    /// 503: as many large bodies as the server holds at once are arriving; ask again in a moment.
    pub(crate) fn busy() -> ApiError {
        ApiError {
            retry_after: Some(2),
            ..ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "busy",
                "the server is reading as many large sends as it holds at once; send again in a moment",
            )
        }
    }

    /// 503: as many exports as the server writes at once are being written; ask again in a moment.
    pub(crate) fn exports_busy() -> ApiError {
        ApiError {
            retry_after: Some(5),
            ..ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "busy",
                "the server is writing as many exports as it writes at once; ask again in a moment",
            )
        }
    }

    pub(crate) fn forbidden(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::FORBIDDEN, "cross-site", message)
    }

    pub(crate) fn bad_request(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::BAD_REQUEST, "bad-request", message)
    }

    pub(crate) fn not_found(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::NOT_FOUND, "not-found", message)
    }

    pub(crate) fn internal(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", message)
    }

    /// 405 for a route that takes only `allow`, with `code` (`post-only`, `delete-only`).
    pub(crate) fn method_not_allowed(allow: &'static str, code: &'static str, message: &'static str) -> ApiError {
        ApiError { allow: Some(allow), ..ApiError::new(StatusCode::METHOD_NOT_ALLOWED, code, message) }
    }

    /// 503: the live writer is not running, so what the request needs (a re-index) cannot happen.
    pub(crate) fn writer_stopped(why: Option<String>) -> ApiError {
        ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "writer-stopped",
            match why {
                Some(why) => format!("the indexer stopped ({why}); restart scrollback"),
                None => "the indexer is not running; restart scrollback".into(),
            },
        )
    }

    /// Its response, for a request that warp does not route (`/mcp`).
    pub(crate) fn response(&self) -> warp::reply::Response {
        let mut res = error_reply(self.status, self.code, &self.message);
        if let Some(allow) = self.allow.filter(|_| self.status == StatusCode::METHOD_NOT_ALLOWED) {
            res.headers_mut().insert(warp::http::header::ALLOW, HeaderValue::from_static(allow));
        }
        if let Some(secs) = self.retry_after {
            res.headers_mut().insert(warp::http::header::RETRY_AFTER, HeaderValue::from(secs));
        }
        res
    }

    /// The rejection that carries it.
    pub(crate) fn reject(self) -> warp::Rejection {
        warp::reject::custom(self)
    }
}

impl From<scrollback_core::codec::refs::RefError> for ApiError {
    /// A media name the caller got wrong: a 400.
    fn from(e: scrollback_core::codec::refs::RefError) -> ApiError {
        ApiError::bad_request(e.to_string())
    }
}

impl From<Error> for ApiError {
    fn from(e: Error) -> ApiError {
        match e {
            Error::BadName(_) | Error::BadQuery(_) => ApiError::bad_request(e.to_string()),
            // Never read: its client has gone.
            Error::Stopped => ApiError::new(StatusCode::SERVICE_UNAVAILABLE, "stopped", e.to_string()),
            Error::BadSend(_) => ApiError::new(StatusCode::BAD_REQUEST, "bad-send", e.to_string()),
            Error::TooLarge(_) => ApiError::new(StatusCode::PAYLOAD_TOO_LARGE, "too-large", e.to_string()),
            Error::Conflict(_) => ApiError::new(StatusCode::CONFLICT, "conflict", e.to_string()),
            Error::NoEngine => ApiError::new(StatusCode::CONFLICT, "no-engine", e.to_string()),
            Error::NotServed(_) => ApiError::new(StatusCode::BAD_REQUEST, "not-served", e.to_string()),
            // `serve --postgres`: the hub is down, slow past its timeout, or refused the reader.
            Error::Hub(_) => {
                tracing::error!("reading the hub: {e}");
                ApiError::new(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "hub-unavailable",
                    "the team's hub cannot be read right now; the server's log says why",
                )
            }
            Error::NotFound(_) | Error::UnknownSession(_) => ApiError::not_found(e.to_string()),
            Error::FailedUpload { .. } => ApiError::new(StatusCode::NOT_FOUND, "failed-upload", e.to_string()),
            // Paths stay in the log: an answer names no file of the machine.
            Error::Gone { offset, .. } => ApiError::new(
                StatusCode::GONE,
                "gone",
                format!("the transcript holding this payload (at byte {offset}) is gone; its history is kept"),
            ),
            Error::Changed { expected, .. } => ApiError::new(
                StatusCode::CONFLICT,
                "changed",
                format!(
                    "the transcript's bytes no longer decode to the recorded blake3 {expected}: it is being re-indexed"
                ),
            ),
            ref e if e.is_out_of_space() => {
                tracing::error!("the data directory is full: {e}");
                ApiError::new(
                    StatusCode::INSUFFICIENT_STORAGE,
                    "disk-full",
                    "the data directory's disk is full: nothing was stored; free some space and try again",
                )
            }
            Error::Io { source, .. } => {
                ApiError::new(StatusCode::CONFLICT, "unreadable", format!("the transcript cannot be read: {source}"))
            }
            Error::Write { ref source, .. } => {
                tracing::error!("the data directory cannot be written: {e}");
                ApiError::new(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "cannot-write",
                    format!("the data directory cannot be written ({source}): nothing was stored"),
                )
            }
            e if e.is_corruption() => ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "index-damaged",
                format!("the index is damaged ({e}): run `scrollback check`, then `scrollback rebuild`"),
            ),
            Error::Schema { found, supported, .. } => ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "index-unavailable",
                format!("the index has schema version {found}; this server reads version {supported}"),
            ),
            e => {
                tracing::error!("request failed: {e}");
                ApiError::internal("the request failed on the server; its log says why")
            }
        }
    }
}

/// The JSON error response.
pub(crate) fn error_reply(status: StatusCode, code: &str, message: &str) -> warp::reply::Response {
    let mut res = warp::reply::with_status(warp::reply::json(&wire::error(code, message)), status).into_response();
    res.headers_mut().insert("x-content-type-options", HeaderValue::from_static("nosniff"));
    res
}

/// Maps every rejection to a status and a JSON body.
pub async fn handle_rejection(
    err: warp::Rejection,
) -> std::result::Result<warp::reply::Response, std::convert::Infallible> {
    use warp::reject;
    let mut allow = None;
    let mut retry_after = None;
    let (status, code, message): (StatusCode, &str, String) = if let Some(e) = err.find::<ApiError>() {
        allow = e.allow;
        retry_after = e.retry_after;
        (e.status, e.code, e.message.clone())
    } else if err.is_not_found() {
        (StatusCode::NOT_FOUND, "not-found", "no such route".into())
    } else if let Some(e) = err.find::<reject::InvalidQuery>() {
        (StatusCode::BAD_REQUEST, "bad-query", format!("query string: {e}"))
    } else if err.find::<reject::MethodNotAllowed>().is_some() {
        // warp's own 405s are of routes that take GET: the others say what they take themselves.
        allow = Some("GET");
        (StatusCode::METHOD_NOT_ALLOWED, "method-not-allowed", "method not allowed on this route".into())
    } else if err.find::<reject::PayloadTooLarge>().is_some() {
        (StatusCode::PAYLOAD_TOO_LARGE, "too-large", "request body too large".into())
    } else if err.find::<reject::LengthRequired>().is_some() {
        (StatusCode::LENGTH_REQUIRED, "length-required", "a Content-Length is required".into())
    } else if err.find::<reject::UnsupportedMediaType>().is_some() {
        (StatusCode::UNSUPPORTED_MEDIA_TYPE, "unsupported-media-type", "unsupported content type".into())
    } else if let Some(e) = err.find::<reject::InvalidHeader>() {
        (StatusCode::BAD_REQUEST, "bad-header", e.to_string())
    } else if let Some(e) = err.find::<reject::MissingHeader>() {
        (StatusCode::BAD_REQUEST, "missing-header", e.to_string())
    } else if let Some(e) = err.find::<warp::filters::body::BodyDeserializeError>() {
        (StatusCode::BAD_REQUEST, "bad-body", e.to_string())
    } else if err.find::<warp::ws::MissingConnectionUpgrade>().is_some() {
        (StatusCode::BAD_REQUEST, "not-a-websocket", "this route is a WebSocket: send an upgrade request".into())
    } else {
        tracing::warn!("unhandled rejection: {err:?}");
        (StatusCode::BAD_REQUEST, "bad-request", format!("{err:?}"))
    };
    let mut res = error_reply(status, code, &message);
    if let Some(allow) = allow.filter(|_| status == StatusCode::METHOD_NOT_ALLOWED) {
        // RFC 9110: a 405 lists what is allowed.
        res.headers_mut().insert(warp::http::header::ALLOW, HeaderValue::from_static(allow));
    }
    if let Some(secs) = retry_after {
        res.headers_mut().insert(warp::http::header::RETRY_AFTER, HeaderValue::from(secs));
    }
    Ok(res)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// #22, item 13 (in part): a full disk met on the way to a write that was recorded as an `Io`
    /// error (a folder made or synced) is 507 `disk-full` and names no path, not 409 "unreadable".
    #[test]
    fn a_full_disk_is_507_whatever_the_error_was_called() {
        let full = || std::io::Error::from_raw_os_error(libc::ENOSPC);
        for e in [Error::io("/data/accepted-images/ab", full()), Error::write("/data/accepted-images/ab", full())] {
            let answer = ApiError::from(e);
            assert_eq!(answer.status, StatusCode::INSUFFICIENT_STORAGE);
            assert_eq!(answer.code, "disk-full");
            assert!(!answer.message.contains("/data"), "{}", answer.message);
        }
        let unreadable = ApiError::from(Error::io("/t/s.jsonl", std::io::Error::from(std::io::ErrorKind::NotFound)));
        assert_eq!(unreadable.status, StatusCode::CONFLICT);
    }
}
