//! `GET /api/sessions/{id}/export?format=html|jsonl[&redact=true]`: a session as a file to take
//! away ([`crate::read::export`]), for the viewer's Export links. Answered beside warp's route
//! table, under the rules of every route (Host, token). The export is written on the readers'
//! thread to an unnamed temporary file, then streamed from it a chunk at a time: memory stays
//! bounded whatever number of photos it inlines, and a photo that fails its check fails the
//! request before a byte is sent. (Markdown, which needs a folder for its photos, is the CLI's:
//! `scrollback export --format md`.)

use std::io::{Read, Seek, SeekFrom};

use bytes::Bytes;
use http_body_util::{BodyExt as _, StreamBody};
use hyper::body::Frame;
use serde::Deserialize;
use warp::http::{HeaderValue, Method, Request, Response, StatusCode, header};

use super::auth::check_access;
use super::filters::{MAX_QUERY, segment_id, trim};
use super::mcp::AnyBody;
use super::{Api, ApiError};
use crate::read::export::{Kind, export};
use crate::read::redact::Redactor;

const PREFIX: &str = "/api/sessions/";
const SUFFIX: &str = "/export";
/// The bytes sent per chunk.
const CHUNK: usize = 256 * 1024;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Params {
    format: Option<String>,
    redact: Option<bool>,
}

/// Whether `path` is this route's.
pub(crate) fn is_path(path: &str) -> bool {
    path.strip_prefix(PREFIX)
        .and_then(|rest| rest.strip_suffix(SUFFIX))
        .is_some_and(|id| !id.is_empty() && !id.contains('/'))
}

/// The answer to one request to this route.
pub(crate) async fn answer(api: Api, request: Request<super::pace::RequestBody>) -> Response<AnyBody> {
    let mut response = match run(api, request).await {
        Ok(response) => response,
        Err(e) => e.response().map(|b| b.map_err(|e| Box::new(e) as _).boxed()),
    };
    response.headers_mut().insert("x-content-type-options", HeaderValue::from_static("nosniff"));
    response
}

async fn run(api: Api, request: Request<super::pace::RequestBody>) -> Result<Response<AnyBody>, ApiError> {
    check_access(&api, request.headers())?;
    if request.method() != Method::GET {
        return Err(ApiError::method_not_allowed("GET", "get-only", "this route takes GET"));
    }
    let path = request.uri().path();
    let session_id = segment_id(&path[PREFIX.len()..path.len() - SUFFIX.len()])?;
    let query = request.uri().query().unwrap_or("");
    if query.len() > MAX_QUERY {
        return Err(ApiError::new(StatusCode::URI_TOO_LONG, "query-too-long", "the query string is too long"));
    }
    let p: Params = serde_urlencoded::from_str(query).map_err(|e| ApiError::bad_request(format!("query: {e}")))?;
    let kind = match p.format.as_deref().unwrap_or("html") {
        "html" => Kind::Html,
        "jsonl" => Kind::Jsonl,
        other => {
            return Err(ApiError::bad_request(format!(
                "format {:?}: expected html or jsonl (Markdown, with its photos in a folder, is `scrollback export --format md`)",
                trim(other)
            )));
        }
    };
    let redactor = if p.redact.unwrap_or(false) { Some(Redactor::shipped().map_err(ApiError::from)?) } else { None };
    let sid = session_id.clone();
    let file = api
        .db(move |conn| {
            let mut file =
                tempfile::tempfile().map_err(|e| crate::Error::io(std::path::Path::new("temporary file"), e))?;
            let written = {
                let mut out = std::io::BufWriter::new(&mut file);
                export(conn, &sid, kind, redactor.as_ref(), &mut out, None)?
            };
            file.seek(SeekFrom::Start(0)).map_err(|e| crate::Error::io(std::path::Path::new("temporary file"), e))?;
            Ok(written.map(|_| file))
        })
        .await?;
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
            Ok(Ok((buf, file))) => Some((Ok(Frame::data(Bytes::from(buf))), Some(file))),
            Ok(Err(e)) => Some((Err(Box::new(e) as Box<dyn std::error::Error + Send + Sync>), None)),
            Err(e) => Some((Err(Box::new(e) as Box<dyn std::error::Error + Send + Sync>), None)),
        }
    });
    let name = format!("{session_id}.{}", kind.extension());
    let mut response = Response::new(StreamBody::new(stream).boxed());
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(kind.media_type()));
    // The id is a checked id: letters, digits and `._:-` only, nothing to quote.
    if let Ok(v) = HeaderValue::from_str(&format!("attachment; filename=\"{name}\"")) {
        headers.insert(header::CONTENT_DISPOSITION, v);
    }
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    Ok(response)
}
