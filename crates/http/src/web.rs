//! The viewer: the files of `crates/http/web/`, and the style sheet it shares with the HTML export
//! (`crates/render/style.css`), embedded at build time. The page is served at `/`
//! (the overview) and at every view's own URL (`/sessions/...`, `/chats/...`, `/search`, `/usage`,
//! `/status`) with a strict Content-Security-Policy; its modules and style sheet under `/web/`. Static code and no
//! data, so no token is needed to fetch them: the page asks for one when the API does.

use warp::http::{HeaderValue, header};
use warp::path::FullPath;
use warp::{Filter, Rejection};

/// The reconcile rule in JavaScript, the same as [`scrollback_accept::reconcile()`](fn@scrollback_accept::reconcile).
const RECONCILE_JS: &str = include_str!("../web/reconcile.js");

/// The page every view is served from.
const INDEX_HTML: &str = include_str!("../web/index.html");

/// `/web/<name>`: the page's modules and style sheet.
const FILES: &[(&str, &str, &str)] = &[
    ("app.js", "text/javascript; charset=utf-8", include_str!("../web/app.js")),
    ("api.js", "text/javascript; charset=utf-8", include_str!("../web/api.js")),
    ("composer.js", "text/javascript; charset=utf-8", include_str!("../web/composer.js")),
    ("render.js", "text/javascript; charset=utf-8", include_str!("../web/render.js")),
    ("dom.js", "text/javascript; charset=utf-8", include_str!("../web/dom.js")),
    ("reconcile.js", "text/javascript; charset=utf-8", RECONCILE_JS),
    ("usage.js", "text/javascript; charset=utf-8", include_str!("../web/usage.js")),
    ("chart.js", "text/javascript; charset=utf-8", include_str!("../web/chart.js")),
    ("overview.js", "text/javascript; charset=utf-8", include_str!("../web/overview.js")),
    ("conversation.js", "text/javascript; charset=utf-8", include_str!("../web/conversation.js")),
    ("header.js", "text/javascript; charset=utf-8", include_str!("../web/header.js")),
    ("live.js", "text/javascript; charset=utf-8", include_str!("../web/live.js")),
    ("page.js", "text/javascript; charset=utf-8", include_str!("../web/page.js")),
    ("search.js", "text/javascript; charset=utf-8", include_str!("../web/search.js")),
    ("find.js", "text/javascript; charset=utf-8", include_str!("../web/find.js")),
    ("palette.js", "text/javascript; charset=utf-8", include_str!("../web/palette.js")),
    ("server.js", "text/javascript; charset=utf-8", include_str!("../web/server.js")),
    ("sidebar.js", "text/javascript; charset=utf-8", include_str!("../web/sidebar.js")),
    ("status.js", "text/javascript; charset=utf-8", include_str!("../web/status.js")),
    ("keys.js", "text/javascript; charset=utf-8", include_str!("../web/keys.js")),
    ("outline.js", "text/javascript; charset=utf-8", include_str!("../web/outline.js")),
    // The one style sheet of the viewer and the HTML export, kept by the export's crate.
    ("style.css", "text/css; charset=utf-8", scrollback_render::export::STYLE),
];

/// Scripts, styles and connections only from this server; images also from `data:` and `blob:` (a
/// photo being sent); no inline script or style, no frames, no plugins, no base or form elsewhere.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
     img-src 'self' data: blob:; connect-src 'self'; base-uri 'none'; form-action 'self'; \
     frame-ancestors 'none'";

/// Whether `path` is one of the page's views.
fn is_view(path: &str) -> bool {
    let one_segment = |rest: &str| !rest.is_empty() && !rest.contains('/');
    path == "/"
        || path == "/search"
        || path == "/usage"
        || path == "/status"
        || path.strip_prefix("/sessions/").is_some_and(one_segment)
        || path.strip_prefix("/chats/").is_some_and(one_segment)
}

/// The page and its files.
pub(super) fn routes() -> impl Filter<Extract = (warp::reply::Response,), Error = Rejection> + Clone {
    let files = warp::path("web").and(warp::path::param::<String>()).and(warp::path::end()).and(warp::get()).and_then(
        |name: String| async move {
            match FILES.iter().find(|(n, _, _)| *n == name) {
                Some((_, content_type, body)) => Ok(file(content_type, body)),
                None => Err(warp::reject::not_found()),
            }
        },
    );
    // The path first: a request elsewhere (under /api) must get that route's answer, not a 405 of
    // this GET-only one.
    let view = warp::path::full()
        .and_then(|path: FullPath| async move {
            if is_view(path.as_str()) { Ok(()) } else { Err(warp::reject::not_found()) }
        })
        .untuple_one();
    let page = view.and(warp::get()).map(page);
    files.or(page).unify()
}

fn file(content_type: &'static str, body: &'static str) -> warp::reply::Response {
    let mut res = warp::reply::Response::new(body.into());
    let headers = res.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    // Revalidated each time: a new build's files must replace the old ones at once.
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    headers.insert("x-content-type-options", HeaderValue::from_static("nosniff"));
    res
}

fn page() -> warp::reply::Response {
    let mut res = file("text/html; charset=utf-8", INDEX_HTML);
    let headers = res.headers_mut();
    headers.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(CONTENT_SECURITY_POLICY));
    headers.insert("x-frame-options", HeaderValue::from_static("DENY"));
    headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("same-origin"));
    res
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn views_are_pages_and_nothing_else_is() {
        for view in ["/", "/search", "/usage", "/status", "/sessions/abc", "/chats/chat-1"] {
            assert!(is_view(view), "{view}");
        }
        for other in ["/sessions/", "/sessions/a/b", "/chats", "/api", "/web/app.js", "/favicon.ico", "/x"] {
            assert!(!is_view(other), "{other}");
        }
    }

    #[test]
    fn every_script_the_page_imports_is_served() {
        for name in ["app.js", "api.js", "composer.js", "render.js", "dom.js", "reconcile.js", "usage.js", "style.css"]
        {
            assert!(FILES.iter().any(|(n, _, _)| *n == name), "{name}");
        }
        for (_, _, body) in FILES {
            for import in body.lines().filter_map(|l| l.split(" from \"./").nth(1)) {
                let name = import.split('"').next().unwrap();
                assert!(FILES.iter().any(|(n, _, _)| *n == name), "an import of {name} that is not served");
            }
        }
    }
}
