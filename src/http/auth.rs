//! Who may ask: listening beyond loopback only with a token; with a token, every `/api` route
//! answers 401 without it (`Authorization: Bearer`, or the `scrollback_token` cookie so that `<img>`
//! works); without one, only loopback Host names are answered (DNS rebinding); a route that changes
//! state refuses a cross-site request and a body that is not JSON.

use std::net::SocketAddr;

use warp::http::StatusCode;
use warp::{Filter, Rejection, Reply as _};

use super::filters::{MAX_SMALL_BODY, json_body, post_only};
use super::{Api, ApiError, wire};
use crate::error::{Error, Result};

/// Refuses to listen beyond loopback without a token ([`Error::UnguardedListen`]).
pub fn check_listen(addr: &SocketAddr, token: Option<&str>) -> Result<()> {
    // A token of only white space guards nothing: it counts as none.
    if !addr.ip().is_loopback() && token.is_none_or(|t| t.trim().is_empty()) {
        return Err(Error::UnguardedListen { addr: *addr });
    }
    Ok(())
}

/// The cookie the viewer keeps the token in, so that `<img>` and the events socket carry it.
pub const TOKEN_COOKIE: &str = "scrollback_token";

#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct LoginBody {
    token: String,
}

/// `POST /api/login {token}`: checks a token and sets it as an `HttpOnly; SameSite=Strict` cookie
/// (the page cannot set an HttpOnly cookie itself). Reachable without a token; a wrong one is a 401.
pub(crate) fn login(api: Api) -> impl Filter<Extract = (warp::reply::Response,), Error = warp::Rejection> + Clone {
    warp::path!("login")
        .and(warp::post())
        .and(same_site_json())
        .and(json_body::<LoginBody>(MAX_SMALL_BODY))
        .and_then(move |body: LoginBody| {
            let api = api.clone();
            async move {
                let Some(token) = api.token() else {
                    return Ok(warp::reply::json(&wire::login(false)).into_response());
                };
                if !constant_time_eq(body.token.as_bytes(), token.as_bytes()) {
                    return Err(ApiError::new(StatusCode::UNAUTHORIZED, "unauthorized", "wrong token").reject());
                }
                let cookie_safe = token.bytes().all(|b| b.is_ascii_graphic() && !b"\",;".contains(&b));
                if !cookie_safe {
                    return Err(ApiError::bad_request(
                        "this token cannot be a cookie (it has spaces, quotes, commas or semicolons): send it as Authorization: Bearer",
                    )
                    .reject());
                }
                let cookie = format!("{TOKEN_COOKIE}={token}; HttpOnly; SameSite=Strict; Path=/; Max-Age=2592000");
                let mut res = warp::reply::json(&wire::login(true)).into_response();
                if let Ok(v) = warp::http::HeaderValue::from_str(&cookie) {
                    res.headers_mut().insert(warp::http::header::SET_COOKIE, v);
                }
                Ok(res)
            }
        })
        .or(warp::path!("login").and(post_only()))
        .unify()
}

/// Whether a `Host` header names this machine's loopback: `localhost` (or a name under it, which
/// browsers resolve to loopback themselves), `127.0.0.0/8` or `[::1]`, with or without a port.
fn is_loopback_host(host: &str) -> bool {
    let name = match host.strip_prefix('[') {
        Some(rest) => rest.split(']').next().unwrap_or(""),
        None => host
            .rsplit_once(':')
            .map_or(host, |(name, port)| if port.bytes().all(|b| b.is_ascii_digit()) { name } else { host }),
    };
    let name = name.trim_end_matches('.').to_ascii_lowercase();
    name == "localhost"
        || name.ends_with(".localhost")
        || name.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// Without a token, answers only requests addressed to a loopback name: a page the person visits
/// cannot reach this server by pointing a name of its own at 127.0.0.1 (DNS rebinding). With a
/// token, the token guards every route instead.
pub(crate) fn loopback_host(api: Api) -> impl Filter<Extract = (), Error = warp::Rejection> + Clone {
    warp::header::optional::<String>("host")
        .and_then(move |host: Option<String>| {
            let api = api.clone();
            async move { check_host(&api, host.as_deref()).map_err(ApiError::reject) }
        })
        .untuple_one()
}

/// [`loopback_host`]'s rule, for a request that warp does not route (`/mcp`).
pub(crate) fn check_host(api: &Api, host: Option<&str>) -> Result<(), ApiError> {
    if api.token().is_some() || host.is_some_and(is_loopback_host) {
        return Ok(());
    }
    Err(ApiError::new(
        StatusCode::FORBIDDEN,
        "bad-host",
        format!(
            "Host {:?} is not a loopback name: without --token this server answers only localhost and 127.0.0.1",
            host.unwrap_or_default().chars().take(100).collect::<String>()
        ),
    ))
}

/// A filter that extracts nothing and rejects with 401 when a token is set and not presented.
pub(crate) fn authorized(api: Api) -> impl Filter<Extract = (), Error = warp::Rejection> + Clone {
    warp::header::optional::<String>("authorization")
        .and(warp::cookie::optional::<String>(TOKEN_COOKIE))
        .and_then(move |header: Option<String>, cookie: Option<String>| {
            let api = api.clone();
            async move { check_token(&api, header.as_deref(), cookie.as_deref()).map_err(ApiError::reject) }
        })
        .untuple_one()
}

/// [`authorized`]'s rule: the `Authorization` header's bearer token, or the token cookie's value.
pub(crate) fn check_token(api: &Api, header: Option<&str>, cookie: Option<&str>) -> Result<(), ApiError> {
    let Some(token) = api.token() else { return Ok(()) };
    let presented = header.and_then(|h| h.strip_prefix("Bearer ")).or(cookie);
    match presented {
        Some(p) if constant_time_eq(p.as_bytes(), token.as_bytes()) => Ok(()),
        _ => Err(ApiError::new(
            StatusCode::UNAUTHORIZED,
            "unauthorized",
            "a token is required: Authorization: Bearer <token>, or the scrollback_token cookie",
        )),
    }
}

/// The value of the cookie `name` in a `Cookie` header.
pub(crate) fn cookie<'h>(header: &'h str, name: &str) -> Option<&'h str> {
    header.split(';').find_map(|pair| pair.trim().strip_prefix(name)?.strip_prefix('='))
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// [`check_host`] and [`check_token`] for a request answered beside warp's table (`/mcp`,
/// `/api/usage`, a session's marks and exports): the rules every route has.
pub(crate) fn check_access(api: &Api, headers: &warp::http::HeaderMap) -> Result<(), ApiError> {
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    check_host(api, header("host"))?;
    let token_cookie = header("cookie").and_then(|c| cookie(c, TOKEN_COOKIE));
    check_token(api, header("authorization"), token_cookie)
}

/// Passes a request that is not cross-site: no `Sec-Fetch-Site: cross-site`, and no `Origin` other
/// than the `Host` it was sent to. (A request without either, from a program, passes.)
pub(crate) fn same_origin() -> impl Filter<Extract = (), Error = Rejection> + Clone {
    warp::header::optional::<String>("origin")
        .and(warp::header::optional::<String>("host"))
        .and(warp::header::optional::<String>("sec-fetch-site"))
        .and_then(|origin: Option<String>, host: Option<String>, site: Option<String>| async move {
            check_same_origin(origin.as_deref(), host.as_deref(), site.as_deref()).map_err(ApiError::reject)
        })
        .untuple_one()
}

/// [`same_origin`]'s rule.
pub(crate) fn check_same_origin(origin: Option<&str>, host: Option<&str>, site: Option<&str>) -> Result<(), ApiError> {
    if site.is_some_and(|s| s.eq_ignore_ascii_case("cross-site")) {
        return Err(ApiError::forbidden("a cross-site request is refused here"));
    }
    if let Some(origin) = origin {
        let from = origin.split_once("://").map(|(_, rest)| rest.trim_end_matches('/'));
        let same = match (from, host) {
            (Some(from), Some(host)) => from.eq_ignore_ascii_case(host),
            _ => false,
        };
        if !same {
            return Err(ApiError::forbidden(format!(
                "Origin {:?} is not this server: a cross-site request is refused here",
                origin.chars().take(100).collect::<String>()
            )));
        }
    }
    Ok(())
}

/// Passes a request that may change state: [`same_origin`], and a JSON body.
pub(crate) fn same_site_json() -> impl Filter<Extract = (), Error = Rejection> + Clone {
    same_origin()
        .and(warp::header::optional::<String>("content-type"))
        .and_then(|content_type: Option<String>| async move {
            let json = content_type.as_deref().and_then(|t| t.split(';').next()).map(str::trim);
            if !json.is_some_and(|t| t.eq_ignore_ascii_case("application/json")) {
                return Err(ApiError::new(
                    StatusCode::UNSUPPORTED_MEDIA_TYPE,
                    "unsupported-media-type",
                    "send the body as Content-Type: application/json",
                )
                .reject());
            }
            Ok(())
        })
        .untuple_one()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_hosts_and_others() {
        for host in [
            "localhost",
            "localhost:7878",
            "127.0.0.1:7878",
            "127.9.9.9",
            "[::1]:7878",
            "app.localhost:80",
            "LOCALHOST.",
        ] {
            assert!(is_loopback_host(host), "{host}");
        }
        for host in [
            "evil.example",
            "evil.example:7878",
            "127.0.0.1.evil.example",
            "localhost.evil.example",
            "[::2]:80",
            "10.0.0.1",
            "",
        ] {
            assert!(!is_loopback_host(host), "{host}");
        }
    }
}
