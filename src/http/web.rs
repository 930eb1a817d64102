//! The files of the viewer (`web/` at the top of the repository), embedded at build time and served
//! outside `/api`: static code, no data, so no token is needed to fetch it.

use warp::http::{HeaderValue, header};
use warp::{Filter, Rejection};

/// The reconcile rule in JavaScript, the same as [`crate::accept::reconcile`].
pub const RECONCILE_JS: &str = include_str!("../../web/reconcile.js");

/// `GET /web/<file>`.
pub(super) fn routes() -> impl Filter<Extract = (warp::reply::Response,), Error = Rejection> + Clone {
    warp::path!("web" / "reconcile.js").and(warp::get()).map(|| module(RECONCILE_JS))
}

fn module(source: &'static str) -> warp::reply::Response {
    let mut res = warp::reply::Response::new(source.into());
    let headers = res.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/javascript; charset=utf-8"));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    headers.insert("x-content-type-options", HeaderValue::from_static("nosniff"));
    res
}
