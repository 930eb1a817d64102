//! `POST /mcp`: the MCP server ([`crate::mcp`]) over Streamable HTTP, under the rules of every
//! route: the token when one is set, loopback Host names only without one, a cross-site `Origin`
//! refused, a bounded body. The SDK's service answers statelessly (one JSON answer per POST, no
//! sessions to keep), on the server's own readers.
//!
//! The serve loop hands `/mcp` here before warp's route table: the SDK's future inside the
//! table's nested filter types made the compiler's trait solving take many minutes. The checks are
//! the table's own rules ([`super::auth`]), called as functions.

use std::convert::Infallible;
use std::sync::Arc;

use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt as _, Full, Limited};
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use warp::http::{HeaderValue, Method, Request, Response, StatusCode};

use super::auth::{check_access, check_same_origin};
use super::filters::MAX_SMALL_BODY;
use super::pace::{Paced, RequestBody, stalled};
use super::{Api, ApiError};
use crate::mcp::{Source, Tools};

/// The path the MCP server answers on.
pub const PATH: &str = "/mcp";

/// A response body either side of the serve loop can give.
pub(crate) type AnyBody = BoxBody<Bytes, Box<dyn std::error::Error + Send + Sync>>;

/// The MCP server over HTTP, for the serve loop.
#[derive(Clone)]
pub(crate) struct McpHttp {
    api: Api,
    service: Arc<StreamableHttpService<Tools, NeverSessionManager>>,
}

impl McpHttp {
    pub(crate) fn new(api: &Api) -> McpHttp {
        let tools = Tools::new(Source::with_readers(&api.inner.data_dir, api.inner.readers.clone()));
        // Host and Origin are this server's to check, by its own rules (a token admits any Host).
        let config = StreamableHttpServerConfig::default()
            .with_legacy_session_mode(false)
            .with_json_response(true)
            .with_sse_keep_alive(None)
            .disable_allowed_hosts()
            .disable_allowed_origins()
            .with_max_request_body_bytes(MAX_SMALL_BODY as usize);
        let service =
            StreamableHttpService::new(move || Ok(tools.clone()), Arc::new(NeverSessionManager::default()), config);
        McpHttp { api: api.clone(), service: Arc::new(service) }
    }

    /// Answers one request to [`PATH`].
    async fn answer(self, request: Request<RequestBody>) -> Response<AnyBody> {
        let mut response = match self.checked(request).await {
            Ok(request) => {
                handle(self.service.clone(), request).await.map(|b| b.map_err(|never| match never {}).boxed())
            }
            Err(e) => e.response().map(|b| b.map_err(|e| Box::new(e) as _).boxed()),
        };
        response.headers_mut().insert("x-content-type-options", HeaderValue::from_static("nosniff"));
        response
    }

    /// The request, its body read (within the limit), if every rule lets it through.
    async fn checked(&self, request: Request<RequestBody>) -> Result<Request<Full<Bytes>>, ApiError> {
        let header = |name: &str| request.headers().get(name).and_then(|v| v.to_str().ok());
        check_access(&self.api, request.headers())?;
        check_same_origin(header("origin"), header("host"), header("sec-fetch-site"))?;
        if request.method() != Method::POST {
            return Err(ApiError::method_not_allowed("POST", "post-only", "MCP over HTTP takes POST"));
        }
        let (parts, body) = request.into_parts();
        let body = Limited::new(body, MAX_SMALL_BODY as usize).collect().await.map_err(|e| {
            match e.downcast_ref::<http_body_util::LengthLimitError>() {
                Some(_) => ApiError::new(StatusCode::PAYLOAD_TOO_LARGE, "too-large", "request body too large"),
                None => stalled(e.as_ref()).unwrap_or_else(|| ApiError::bad_request(format!("request body: {e}"))),
            }
        })?;
        Ok(Request::from_parts(parts, Full::new(body.to_bytes())))
    }
}

/// The SDK's answer, to come.
type SdkAnswer = std::pin::Pin<Box<dyn Future<Output = Response<BoxBody<Bytes, Infallible>>> + Send>>;

/// The SDK's answer to a checked request, as a boxed future: the compiler proves it `Send` here,
/// once, in a function of no type parameters.
fn handle(service: Arc<StreamableHttpService<Tools, NeverSessionManager>>, request: Request<Full<Bytes>>) -> SdkAnswer {
    Box::pin(async move { service.handle(request).await })
}

/// The connection's service: `/mcp` to [`McpHttp`], `/api/usage` to [`super::usage`],
/// `/api/sessions/{id}/marks` and `/about` to [`super::session`], `/api/sessions/{id}/export` to
/// [`super::export`], everything else to warp's routes. A named
/// service, not an `async` block around warp's future: proving such a block `Send` made the
/// compiler's trait solving take minutes.
#[derive(Clone)]
pub(crate) struct Dispatch<W> {
    warp: W,
    mcp: McpHttp,
    /// A body's first allowance ([`super::pace`]).
    grace: std::time::Duration,
}

impl<W> Dispatch<W> {
    pub(crate) fn new(warp: W, mcp: &McpHttp, grace: std::time::Duration) -> Dispatch<W> {
        Dispatch { warp, mcp: mcp.clone(), grace }
    }
}

type WarpResult = Result<warp::reply::Response, Infallible>;
type AnyResult = Result<Response<AnyBody>, Infallible>;

fn any_body(result: WarpResult) -> AnyResult {
    result.map(|response| response.map(|body| body.map_err(|e| Box::new(e) as _).boxed()))
}

impl<W> tower_service::Service<Request<hyper::body::Incoming>> for Dispatch<W>
where
    W: tower_service::Service<Request<RequestBody>, Response = warp::reply::Response, Error = Infallible>,
{
    type Response = Response<AnyBody>;
    type Error = Infallible;
    type Future = futures_util::future::Either<
        futures_util::future::Map<W::Future, fn(WarpResult) -> AnyResult>,
        std::pin::Pin<Box<dyn Future<Output = AnyResult> + Send>>,
    >;

    fn poll_ready(&mut self, cx: &mut std::task::Context<'_>) -> std::task::Poll<Result<(), Infallible>> {
        self.warp.poll_ready(cx)
    }

    fn call(&mut self, request: Request<hyper::body::Incoming>) -> Self::Future {
        use futures_util::FutureExt as _;
        // Every body keeps to its deadline, whichever route reads it.
        let grace = self.grace;
        let request = request.map(|body| Paced::new(body, grace));
        if request.uri().path() == PATH {
            let mcp = self.mcp.clone();
            return futures_util::future::Either::Right(Box::pin(async move { Ok(mcp.answer(request).await) }));
        }
        if super::export::is_path(request.uri().path()) {
            let api = self.mcp.api.clone();
            return futures_util::future::Either::Right(Box::pin(async move {
                Ok(super::export::answer(api, request).await)
            }));
        }
        if super::session::is_path(request.uri().path()) {
            let api = self.mcp.api.clone();
            return futures_util::future::Either::Right(Box::pin(async move {
                any_body(Ok(super::session::answer(api, request).await))
            }));
        }
        if request.uri().path() == super::usage::PATH {
            let api = self.mcp.api.clone();
            return futures_util::future::Either::Right(Box::pin(async move {
                any_body(Ok(super::usage::answer(api, request).await))
            }));
        }
        futures_util::future::Either::Left(self.warp.call(request).map(any_body as fn(WarpResult) -> AnyResult))
    }
}
