//! Serving payloads: a transcript's photo by seeking to its recorded offset, or an image a person
//! sent, from the acceptance record. One response shape for both ([`MediaResponse`]): ETag by
//! blake3, 304, a cache of verified bytes, and headers that never let a browser sniff. Bytes that do
//! not hash to the recorded blake3 are never served: a small payload is decoded whole and checked
//! before its first byte is sent; a large one is checked in a first pass and streamed in a second
//! whose last piece is held back until the hash matches.

use std::io::Read;

use bytes::Bytes;
use warp::Rejection;
use warp::Reply as _;
use warp::http::{HeaderValue, StatusCode, header};

use super::cache::CACHE_ENTRY_MAX;
use super::{Api, ApiError};
use scrollback_core::codec::refs::{ContentHash, MediaName};
use scrollback_core::error::Error;
use scrollback_read::media::{self, MediaRecord};

/// Media types served inline; anything else is an attachment.
const INLINE: &[&str] = &["image/png", "image/jpeg", "image/gif", "image/webp", "image/avif", "image/bmp"];

/// Looks a payload up, checks its bytes, and serves it: a transcript payload from the index, else
/// (by hash) an image a person sent, from the acceptance record.
pub(crate) async fn serve_media(
    api: Api,
    name: MediaName,
    if_none_match: Option<String>,
) -> Result<warp::reply::Response, Rejection> {
    let lookup = name.clone();
    let record = match api.db(move |store| store.media(&lookup)).await {
        Ok(record) => record,
        Err(e) if e.status == StatusCode::NOT_FOUND => match name {
            MediaName::Hash(hash) => return serve_sent_image(api, hash, if_none_match, e).await,
            MediaName::Ref(_) => return Err(e.reject()),
        },
        Err(e) => return Err(e.reject()),
    };
    let response = MediaResponse::new(record.media_type.as_deref(), &record.blake3, record.extension());
    if let Some(res) = response.not_modified(if_none_match.as_deref()) {
        return Ok(res);
    }
    if !record.file_live {
        return Err(ApiError::from(Error::Gone { path: record.path.clone(), offset: record.offset }).reject());
    }
    let mut cached = response.cached(&api);
    if cached.is_some() && record.held.is_none() && !record.path.is_file() {
        // Deleted since it was indexed, and the writer has not seen it yet: gone, as it will say.
        api.reindex(record.path.clone());
        cached = None;
    }
    if let Some(bytes) = cached {
        return Ok(response.whole(bytes));
    }
    if record.decoded_length <= CACHE_ENTRY_MAX as u64 {
        // Small enough to decode whole: read it, check it, keep it for the next request.
        let r = record.clone();
        let read = tokio::task::spawn_blocking(move || -> scrollback_core::Result<Vec<u8>> {
            let mut out = Vec::with_capacity(r.decoded_length as usize);
            media::open(&r)?.read_to_end(&mut out).map_err(|e| media::into_error(e, &r))?;
            Ok(out)
        })
        .await
        .map_err(|e| ApiError::internal(e.to_string()).reject())?;
        let bytes = Bytes::from(read.map_err(|e| media_failed(&api, &record, e))?);
        response.remember(&api, &bytes);
        return Ok(response.whole(bytes));
    }
    // Large: check the whole payload first, then stream it in 64 KiB pieces; a change between the
    // two passes ends the stream with an error instead of a wrong byte.
    let r = record.clone();
    let verified = tokio::task::spawn_blocking(move || media::open(&r)?.verify())
        .await
        .map_err(|e| ApiError::internal(e.to_string()).reject())?;
    verified.map_err(|e| media_failed(&api, &record, e))?;
    // Opening a compressed transcript's payload decodes the stream up to it: off the runtime too.
    let r = record.clone();
    let reader = tokio::task::spawn_blocking(move || media::open(&r))
        .await
        .map_err(|e| ApiError::internal(e.to_string()).reject())?
        .map_err(|e| media_failed(&api, &record, e))?;
    Ok(response.stream(reader, record.decoded_length))
}

/// Serves an image a person sent, by its hash: read whole (it is at most
/// [`scrollback_accept::send::MAX_IMAGE_BYTES`]), checked against the hash, never served otherwise.
async fn serve_sent_image(
    api: Api,
    hash: ContentHash,
    if_none_match: Option<String>,
    not_found: ApiError,
) -> Result<warp::reply::Response, Rejection> {
    let lookup = hash.clone();
    let Some(image) =
        api.chats().with_store(move |store| store.image(&lookup)).await.map_err(|e| ApiError::from(e).reject())?
    else {
        return Err(not_found.reject());
    };
    let response =
        MediaResponse::new(Some(&image.media_type), hash.as_str(), media::extension(Some(&image.media_type)));
    if let Some(res) = response.not_modified(if_none_match.as_deref()) {
        return Ok(res);
    }
    if let Some(bytes) = response.cached(&api) {
        return Ok(response.whole(bytes));
    }
    let path = image.path.clone();
    let read = tokio::task::spawn_blocking(move || std::fs::read(&path))
        .await
        .map_err(|e| ApiError::internal(e.to_string()).reject())?
        .map_err(|e| {
            tracing::error!(path = %image.path.display(), "a sent image cannot be read: {e}");
            ApiError::new(StatusCode::CONFLICT, "unreadable", format!("sent image {hash} cannot be read")).reject()
        })?;
    if ContentHash::of(&read) != hash {
        tracing::error!(path = %image.path.display(), "a sent image's bytes no longer match its hash");
        return Err(ApiError::new(
            StatusCode::CONFLICT,
            "changed",
            format!("sent image {hash}: its stored bytes no longer match their hash"),
        )
        .reject());
    }
    let bytes = Bytes::from(read);
    response.remember(&api, &bytes);
    Ok(response.whole(bytes))
}

/// Turns a media failure into its status, and queues a changed file for re-indexing.
fn media_failed(api: &Api, record: &MediaRecord, e: Error) -> Rejection {
    match e {
        // A vault link is not a transcript: nothing re-indexes it, and its bytes are what they are.
        Error::Changed { .. } if record.from_vault => ApiError::from(e).reject(),
        Error::Changed { .. } | Error::Io { .. } => {
            tracing::warn!(path = %record.path.display(), offset = record.offset, "payload changed or unreadable ({e}); re-indexing the file");
            if api.reindex(record.path.clone()) {
                ApiError::from(e).reject()
            } else {
                // Nothing will re-index it: say so, rather than a 409 that never resolves.
                ApiError::writer_stopped(api.writer_failure()).reject()
            }
        }
        e => ApiError::from(e).reject(),
    }
}

/// One media response: its type, hash and file extension, and so its headers, ETag and cache key.
struct MediaResponse<'a> {
    media_type: Option<&'a str>,
    blake3: &'a str,
    extension: &'a str,
    etag: String,
}

impl<'a> MediaResponse<'a> {
    fn new(media_type: Option<&'a str>, blake3: &'a str, extension: &'a str) -> MediaResponse<'a> {
        MediaResponse { media_type, blake3, extension, etag: format!("\"{blake3}\"") }
    }

    /// A 304 if the client holds these bytes already (the ETag is their blake3).
    fn not_modified(&self, if_none_match: Option<&str>) -> Option<warp::reply::Response> {
        let header = if_none_match?;
        let matches = header
            .split(',')
            .map(str::trim)
            .any(|t| t == "*" || t == self.etag || t.strip_prefix("W/") == Some(&self.etag));
        matches.then(|| {
            let mut res = warp::reply::with_status(warp::reply::reply(), StatusCode::NOT_MODIFIED).into_response();
            self.set_headers(&mut res, None);
            res
        })
    }

    /// Verified bytes of this hash kept from an earlier response.
    fn cached(&self, api: &Api) -> Option<Bytes> {
        api.inner.cache.lock().ok().and_then(|c| c.get(self.blake3))
    }

    /// Keeps verified bytes for the next request.
    fn remember(&self, api: &Api, bytes: &Bytes) {
        if let Ok(mut cache) = api.inner.cache.lock() {
            cache.put(self.blake3.to_owned(), bytes.clone());
        }
    }

    /// The response with verified bytes, whole.
    fn whole(&self, bytes: Bytes) -> warp::reply::Response {
        let length = bytes.len() as u64;
        let mut res = warp::reply::Response::new(bytes.into());
        self.set_headers(&mut res, Some(length));
        res
    }

    /// The response streamed from a reader that checks the hash as it goes.
    fn stream(&self, reader: media::PayloadReader, length: u64) -> warp::reply::Response {
        let mut res = warp::reply::stream(payload_stream(reader)).into_response();
        self.set_headers(&mut res, Some(length));
        res
    }

    fn set_headers(&self, res: &mut warp::reply::Response, length: Option<u64>) {
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
            // Opened anyway (a PDF viewer, an HTML file), it runs no script with this origin's rights.
            headers.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static("sandbox"));
        }
        if let Some(len) = length {
            headers.insert(header::CONTENT_LENGTH, HeaderValue::from(len));
        }
        if let Ok(v) = HeaderValue::from_str(&self.etag) {
            headers.insert(header::ETAG, v);
        }
        headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("private, max-age=31536000, immutable"));
        headers.insert("x-content-type-options", HeaderValue::from_static("nosniff"));
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

/// Whether a recorded media type looks like one (`type/subtype`, token characters): only then is it
/// sent as the `Content-Type`.
fn is_media_type(s: &str) -> bool {
    let token = |p: &str| !p.is_empty() && p.bytes().all(|b| b.is_ascii_alphanumeric() || b"!#$&-^_.+".contains(&b));
    s.split_once('/').is_some_and(|(a, b)| token(a) && token(b))
}
