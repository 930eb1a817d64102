//! `GET /api/sessions/{id}/export?format=html|markdown|jsonl[&redact=true]`: a session as a file to
//! take away ([`scrollback_render::export`]), for the viewer's Export links. A route of the table. The
//! export is written on the blocking pool to an unnamed temporary file, then streamed from it a
//! chunk at a time: memory stays bounded whatever number of photos it inlines, and a photo that
//! fails its check fails the request before a byte is sent. Markdown is one file: its photos are
//! named, not included (the CLI's `scrollback export --format md` writes them to a folder beside it).
//!
//! At most [`CONCURRENT_EXPORTS`] are written at once; one more is a 503 with `Retry-After`, so
//! that exports never take the readers every other route needs. An export holds a pooled reader
//! only while it reads a page, never while it writes ([`scrollback_read::pool::Readers::lent`]),
//! and none while its file is streamed.

use std::io::{Read, Seek, SeekFrom};

use bytes::Bytes;
use serde::Deserialize;
use warp::filters::BoxedFilter;
use warp::http::{HeaderValue, Method, header};
use warp::{Filter as _, Reply as _};

use super::filters::{raw_query, segment_id, trim};
use super::{Api, ApiError};
use scrollback_render::export::Kind;
use scrollback_render::redact::Redactor;

/// Exports written at the same time; one more is refused with a 503.
pub(crate) const CONCURRENT_EXPORTS: usize = 2;

/// The bytes sent per chunk.
const CHUNK: usize = 256 * 1024;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Params {
    format: Option<String>,
    redact: Option<bool>,
}

/// `/api/sessions/{id}/export`, for the route table.
pub(crate) fn routes(api: &Api) -> BoxedFilter<(warp::reply::Response,)> {
    let api = api.clone();
    warp::path!("sessions" / String / "export")
        .and(warp::method())
        .and(raw_query())
        .then(move |raw: String, method: Method, query: String| {
            let api = api.clone();
            async move { run(api, &raw, &method, &query).await.unwrap_or_else(|e| e.response()) }
        })
        .boxed()
}

async fn run(api: Api, raw: &str, method: &Method, query: &str) -> Result<warp::reply::Response, ApiError> {
    if method != Method::GET {
        return Err(ApiError::method_not_allowed("GET", "get-only", "this route takes GET"));
    }
    let session_id = segment_id(raw)?;
    let p: Params = serde_urlencoded::from_str(query).map_err(|e| ApiError::bad_request(format!("query: {e}")))?;
    let kind = match p.format.as_deref().unwrap_or("html") {
        "html" => Kind::Html,
        "md" | "markdown" => Kind::Markdown,
        "jsonl" => Kind::Jsonl,
        other => {
            return Err(ApiError::bad_request(format!("format {:?}: expected html, markdown or jsonl", trim(other))));
        }
    };
    // A server that masks secrets redacts every export: a file of the session is transcript text too.
    let redactor = match (api.mask(), p.redact.unwrap_or(false)) {
        (Some(mask), _) => Some(mask.clone()),
        (None, true) => Some(std::sync::Arc::new(Redactor::shipped().map_err(ApiError::from)?)),
        (None, false) => None,
    };
    // Held while the export is written; given back before its file is streamed.
    let Ok(_turn) = api.inner.exports.clone().try_acquire_owned() else {
        return Err(ApiError::exports_busy());
    };
    let sid = session_id.clone();
    let file = api
        .lent(move |lender| {
            let mut file = tempfile::tempfile()
                .map_err(|e| scrollback_core::Error::io(std::path::Path::new("temporary file"), e))?;
            let written = {
                let mut out = std::io::BufWriter::new(&mut file);
                scrollback_render::export::export(lender, &sid, kind, redactor.as_deref(), &mut out, None)?
            };
            file.seek(SeekFrom::Start(0))
                .map_err(|e| scrollback_core::Error::io(std::path::Path::new("temporary file"), e))?;
            Ok(written.map(|_| file))
        })
        .await?;
    drop(_turn);
    let Some(file) = file else {
        return Err(ApiError::not_found(format!("no session {}", trim(&session_id))));
    };
    let stream = futures_util::stream::unfold(Some(file), |file| async move {
        let mut file = file?;
        let read = tokio::task::spawn_blocking(move || {
            let mut buf = vec![0u8; CHUNK];
            let n = file.read(&mut buf)?;
            buf.truncate(n);
            Ok::<_, std::io::Error>((buf, file))
        })
        .await;
        match read {
            Ok(Ok((buf, _))) if buf.is_empty() => None,
            Ok(Ok((buf, file))) => Some((Ok(Bytes::from(buf)), Some(file))),
            Ok(Err(e)) => Some((Err(Box::new(e) as Box<dyn std::error::Error + Send + Sync>), None)),
            Err(e) => Some((Err(Box::new(e) as Box<dyn std::error::Error + Send + Sync>), None)),
        }
    });
    let name = format!("{session_id}.{}", kind.extension());
    let mut response = warp::reply::stream(stream).into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(kind.media_type()));
    // The id is a checked id: letters, digits and `._:-` only, nothing to quote.
    if let Ok(v) = HeaderValue::from_str(&format!("attachment; filename=\"{name}\"")) {
        headers.insert(header::CONTENT_DISPOSITION, v);
    }
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    Ok(response)
}
