//! `POST /mcp`: the MCP server ([`scrollback_mcp`]) over Streamable HTTP, a route of the table like
//! any other: the table's Host and token checks, a cross-site `Origin` refused, a bounded body. The
//! SDK's service answers statelessly (one JSON answer per POST, no sessions to keep), on the
//! server's own readers.

use std::convert::Infallible;
use std::sync::Arc;

use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt as _, Full};
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use warp::filters::BoxedFilter;
use warp::http::{HeaderMap, Method, Request, Response};
use warp::{Filter as _, Reply as _};

use super::auth::check_same_origin;
use super::filters::{MAX_SMALL_BODY, raw_query, read_body};
use super::{Api, ApiError};
use scrollback_mcp::{Source, Tools};

/// The SDK's service, as this server runs it.
type Service = StreamableHttpService<Tools, NeverSessionManager>;

/// The answer to a request to `/mcp`, for the route table (which has matched the path and checked
/// Host and token before it).
pub(crate) fn answer(api: &Api) -> BoxedFilter<(warp::reply::Response,)> {
    let service = Arc::new(service(api));
    warp::method()
        .and(warp::path::full())
        .and(raw_query())
        .and(warp::header::headers_cloned())
        .and(warp::body::stream())
        .then(move |method, path: warp::path::FullPath, query: String, headers, body| {
            let service = service.clone();
            async move {
                match checked(method, path.as_str(), &query, headers, body).await {
                    Ok(request) => sdk_answer(service, request).await,
                    Err(e) => e.response(),
                }
            }
        })
        .boxed()
}

fn service(api: &Api) -> Service {
    let source = Source::with_readers(&api.inner.data_dir, api.inner.readers.clone());
    let tools = Tools::new(source.masking(api.mask().cloned()));
    // Host and Origin are this server's to check, by its own rules (a token admits any Host).
    let config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(false)
        .with_json_response(true)
        .with_sse_keep_alive(None)
        .disable_allowed_hosts()
        .disable_allowed_origins()
        .with_max_request_body_bytes(MAX_SMALL_BODY as usize);
    StreamableHttpService::new(move || Ok(tools.clone()), Arc::new(NeverSessionManager::default()), config)
}

/// The request as the SDK takes it, its body read (within the limit), if every rule lets it through.
async fn checked<S, B>(
    method: Method,
    path: &str,
    query: &str,
    headers: HeaderMap,
    body: S,
) -> Result<Request<Full<Bytes>>, ApiError>
where
    S: futures_util::Stream<Item = Result<B, warp::Error>>,
    B: warp::Buf,
{
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    check_same_origin(header("origin"), header("host"), header("sec-fetch-site"))?;
    if method != Method::POST {
        return Err(ApiError::method_not_allowed("POST", "post-only", "MCP over HTTP takes POST"));
    }
    let body = read_body(body, MAX_SMALL_BODY as usize).await?;
    let uri = if query.is_empty() { path.to_owned() } else { format!("{path}?{query}") };
    let mut request = Request::builder()
        .method(method)
        .uri(uri)
        .body(Full::new(body))
        .map_err(|e| ApiError::bad_request(format!("request: {e}")))?;
    *request.headers_mut() = headers;
    Ok(request)
}

/// The SDK's answer, to come.
type SdkAnswer = std::pin::Pin<Box<dyn Future<Output = Response<BoxBody<Bytes, Infallible>>> + Send>>;

/// The SDK's answer to a checked request, as a boxed future: the compiler proves it `Send` here,
/// once, in a function of no type parameters.
fn handle(service: Arc<Service>, request: Request<Full<Bytes>>) -> SdkAnswer {
    Box::pin(async move { service.handle(request).await })
}

/// The SDK's answer, its body gathered: in JSON mode it is one JSON document (or nothing).
async fn sdk_answer(service: Arc<Service>, request: Request<Full<Bytes>>) -> warp::reply::Response {
    let (parts, body) = handle(service, request).await.into_parts();
    let body = match body.collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(never) => match never {},
    };
    Response::from_parts(parts, body).into_response()
}
