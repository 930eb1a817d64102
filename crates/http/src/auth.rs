//! Who may ask: listening beyond loopback only with a token of 16 characters or more; with a token,
//! every `/api` route answers 401 without it (`Authorization: Bearer`, or the `scrollback_token`
//! cookie so that `<img>` works), and wrong ones are limited (then 429); token or not, only loopback
//! Host names, `--allow-host` names and (with a token) IP addresses are answered (DNS rebinding); a
//! route that changes state refuses a cross-site request and a body that is not JSON.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use warp::http::StatusCode;
use warp::{Filter, Rejection, Reply as _};

use super::filters::{MAX_SMALL_BODY, json_body, post_only};
use super::{Api, ApiError, wire};
use scrollback_core::error::Result;

/// The shortest token taken: 16 characters of a random token are out of reach of the guesses the
/// limit lets through ([`MAX_WRONG_TOKENS`] a minute).
pub const MIN_TOKEN_CHARS: usize = 16;
/// Wrong tokens taken within [`WRONG_TOKEN_WINDOW`]; then no token is checked (429) until the
/// oldest of them is that old.
pub const MAX_WRONG_TOKENS: usize = 10;
/// The window [`MAX_WRONG_TOKENS`] counts in.
pub const WRONG_TOKEN_WINDOW: Duration = Duration::from_secs(60);

/// Why `serve` will not listen where it was asked: the HTTP boundary's own refusal, which the
/// CLI says as a usage error.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ListenRefused {
    /// Listening there would expose every transcript: beyond loopback, a token is required.
    #[error("refusing to listen on {addr} without --token: anyone who can reach it could read every transcript")]
    Unguarded {
        /// The address asked for.
        addr: SocketAddr,
    },
    /// A token too short to stand a guess.
    #[error(
        "a --token must have at least {min} characters (this one has {chars}): make one with `openssl rand -hex 16`"
    )]
    WeakToken {
        /// Its characters.
        chars: usize,
        /// The least taken.
        min: usize,
    },
}

/// Refuses to listen beyond loopback without a token ([`ListenRefused::Unguarded`]), and a token of
/// fewer than 16 characters (`MIN_TOKEN_CHARS`; [`ListenRefused::WeakToken`]).
pub fn check_listen(addr: &SocketAddr, token: Option<&str>) -> std::result::Result<(), ListenRefused> {
    // A token of only white space guards nothing: it counts as none.
    let token = token.filter(|t| !t.trim().is_empty());
    if !addr.ip().is_loopback() && token.is_none() {
        return Err(ListenRefused::Unguarded { addr: *addr });
    }
    if let Some(token) = token
        && token.chars().count() < MIN_TOKEN_CHARS
    {
        return Err(ListenRefused::WeakToken { chars: token.chars().count(), min: MIN_TOKEN_CHARS });
    }
    Ok(())
}

/// Wrong tokens lately, server-wide: a page in the person's own browser comes from the same
/// address as they do, so the limit is not per address. While it holds, no token is checked at all,
/// the right one included, so that a guess learns nothing.
#[derive(Debug, Default)]
pub(crate) struct Attempts {
    wrong: VecDeque<Instant>,
}

impl Attempts {
    /// Seconds until a token is checked again, if the limit holds now.
    fn locked(&mut self, now: Instant) -> Option<u64> {
        while self.wrong.front().is_some_and(|t| now.duration_since(*t) >= WRONG_TOKEN_WINDOW) {
            self.wrong.pop_front();
        }
        if self.wrong.len() < MAX_WRONG_TOKENS {
            return None;
        }
        let oldest = *self.wrong.front()?;
        Some((WRONG_TOKEN_WINDOW - now.duration_since(oldest)).as_secs().max(1))
    }

    fn wrong(&mut self, now: Instant) {
        self.wrong.push_back(now);
        if self.wrong.len() > MAX_WRONG_TOKENS {
            self.wrong.pop_front();
        }
    }
}

/// Checks a presented token against `token` under the limit on wrong guesses: 429 while it holds,
/// 401 for a wrong one (counted).
fn check_presented(api: &Api, presented: &str, token: &str, wrong: ApiError) -> Result<(), ApiError> {
    let mut attempts = api.inner.attempts.lock().unwrap_or_else(|e| e.into_inner());
    let now = Instant::now();
    if let Some(secs) = attempts.locked(now) {
        return Err(ApiError::too_many_attempts(secs));
    }
    if constant_time_eq(presented.as_bytes(), token.as_bytes()) {
        return Ok(());
    }
    attempts.wrong(now);
    if attempts.wrong.len() == MAX_WRONG_TOKENS {
        tracing::warn!(
            "{MAX_WRONG_TOKENS} wrong tokens within {} s: no token is checked for a while",
            WRONG_TOKEN_WINDOW.as_secs()
        );
    }
    Err(wrong)
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
                // Answered here, not rejected: a rejection would meet the other `/api` routes'
                // (the token they ask for) and the 429 could be lost among them.
                let wrong = ApiError::new(StatusCode::UNAUTHORIZED, "unauthorized", "wrong token");
                if let Err(e) = check_presented(&api, &body.token, token, wrong) {
                    return Ok::<_, Rejection>(e.response());
                }
                let cookie_safe = token.bytes().all(|b| b.is_ascii_graphic() && !b"\",;".contains(&b));
                if !cookie_safe {
                    return Ok(ApiError::bad_request(
                        "this token cannot be a cookie (it has spaces, quotes, commas or semicolons): send it as Authorization: Bearer",
                    )
                    .response());
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
    let name = host_name(host);
    name == "localhost"
        || name.ends_with(".localhost")
        || name.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// Answers only requests addressed to a loopback name, a name given by `--allow-host`, or (with a
/// token, when the server may listen beyond loopback) an IP address: a page the person visits cannot
/// reach this server by pointing a name of its own at it (DNS rebinding), token or not, so it
/// cannot guess a token from inside their browser either.
pub(crate) fn loopback_host(api: Api) -> impl Filter<Extract = (), Error = warp::Rejection> + Clone {
    warp::header::optional::<String>("host")
        .and_then(move |host: Option<String>| {
            let api = api.clone();
            async move { check_host(&api, host.as_deref()).map_err(ApiError::reject) }
        })
        .untuple_one()
}

/// [`loopback_host`]'s rule.
pub(crate) fn check_host(api: &Api, host: Option<&str>) -> Result<(), ApiError> {
    let allowed = host.is_some_and(|host| {
        let name = host_name(host);
        is_loopback_host(host)
            || api.inner.allow_hosts.contains(&name)
            || (api.token().is_some() && name.parse::<std::net::IpAddr>().is_ok())
    });
    if allowed {
        return Ok(());
    }
    Err(ApiError::new(
        StatusCode::FORBIDDEN,
        "bad-host",
        format!(
            "Host {:?} is not a name of this server: it answers localhost, 127.0.0.1, {}the names given by --allow-host",
            host.unwrap_or_default().chars().take(100).collect::<String>(),
            if api.token().is_some() { "IP addresses and " } else { "" }
        ),
    ))
}

/// A `Host` header's name: without its port or brackets, lower-cased, without a final dot.
fn host_name(host: &str) -> String {
    let name = match host.strip_prefix('[') {
        Some(rest) => rest.split(']').next().unwrap_or(""),
        None => host
            .rsplit_once(':')
            .map_or(host, |(name, port)| if port.bytes().all(|b| b.is_ascii_digit()) { name } else { host }),
    };
    name.trim_end_matches('.').to_ascii_lowercase()
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
    let missing = ApiError::new(
        StatusCode::UNAUTHORIZED,
        "unauthorized",
        "a token is required: Authorization: Bearer <token>, or the scrollback_token cookie",
    );
    match presented {
        Some(p) => check_presented(api, p, token, missing),
        None => Err(missing),
    }
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
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
    fn listening_beyond_loopback_needs_a_token_of_sixteen_characters() {
        let (lan, lo): (SocketAddr, SocketAddr) = ("0.0.0.0:7878".parse().unwrap(), "127.0.0.1:7878".parse().unwrap());
        assert_eq!(check_listen(&lo, None), Ok(()));
        assert_eq!(check_listen(&lan, None), Err(ListenRefused::Unguarded { addr: lan }));
        assert_eq!(check_listen(&lan, Some("   ")), Err(ListenRefused::Unguarded { addr: lan }));
        assert_eq!(check_listen(&lan, Some("short")), Err(ListenRefused::WeakToken { chars: 5, min: MIN_TOKEN_CHARS }));
        assert_eq!(check_listen(&lan, Some("0123456789abcdef")), Ok(()));
        assert_eq!(check_listen(&lo, Some("short")), Err(ListenRefused::WeakToken { chars: 5, min: MIN_TOKEN_CHARS }));
    }

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
