//! `GET /api/usage`: the usage ledger grouped and priced ([`crate::read::usage::report`]), under
//! the rules of every route (the token when one is set, loopback Host names only without one, the
//! query's cap), answered beside warp's route table as `/mcp` is: one more route in the table's
//! nested filter types made the compiler's trait solving take many minutes.

use serde::Deserialize;
use warp::Reply as _;
use warp::http::{HeaderValue, Method, Request, StatusCode, header};

use super::auth::check_access;
use super::filters::MAX_QUERY;
use super::{Api, ApiError};
use crate::read::history::time_bound;
use crate::read::usage::{By, Filter, report};

/// The route's path.
pub const PATH: &str = "/api/usage";

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Params {
    by: Option<String>,
    since: Option<String>,
    until: Option<String>,
    agent: Option<String>,
    project: Option<String>,
    session: Option<String>,
    model: Option<String>,
}

/// The answer to one request to [`PATH`].
pub(crate) async fn answer(api: Api, request: Request<super::pace::RequestBody>) -> warp::reply::Response {
    let mut response = match checked(&api, &request) {
        Ok(params) => match run(api, params).await {
            Ok(body) => warp::reply::with_header(body, header::CONTENT_TYPE, "application/json").into_response(),
            Err(e) => e.response(),
        },
        Err(e) => e.response(),
    };
    response.headers_mut().insert("x-content-type-options", HeaderValue::from_static("nosniff"));
    response
}

fn checked(api: &Api, request: &Request<super::pace::RequestBody>) -> Result<Params, ApiError> {
    check_access(api, request.headers())?;
    if request.method() != Method::GET {
        return Err(ApiError::method_not_allowed("GET", "get-only", "this route takes GET"));
    }
    let query = request.uri().query().unwrap_or("");
    if query.len() > MAX_QUERY {
        return Err(ApiError::new(
            StatusCode::URI_TOO_LONG,
            "query-too-long",
            format!("the query string is {} bytes; at most {MAX_QUERY}", query.len()),
        ));
    }
    serde_urlencoded::from_str(query).map_err(|e| ApiError::bad_request(format!("query: {e}")))
}

/// The report as JSON, or the API's error for a parameter it cannot take.
async fn run(api: Api, p: Params) -> Result<String, ApiError> {
    let nonempty = |v: Option<String>| v.filter(|s| !s.trim().is_empty());
    let by = match nonempty(p.by) {
        None => By::Day,
        Some(name) => By::parse(&name).map_err(|e| ApiError::bad_request(e.to_string()))?,
    };
    let agent = nonempty(p.agent);
    if let Some(a) = &agent
        && crate::format::by_name(a).is_none()
    {
        return Err(ApiError::bad_request(format!(
            "agent: {:?} is none of {}",
            a.chars().take(60).collect::<String>(),
            crate::format::names().join(", ")
        )));
    }
    let bound = |name: &str, value: Option<String>, upper: bool| {
        nonempty(value)
            .map(|v| time_bound(&v, upper).map_err(|e| ApiError::bad_request(format!("{name}: {e}"))))
            .transpose()
    };
    let since = bound("since", p.since, false)?;
    let until = bound("until", p.until, true)?;
    let (project, session, model) = (nonempty(p.project), nonempty(p.session), nonempty(p.model));
    let prices = api.inner.prices.clone();
    let report = api
        .db(move |conn| {
            let filter = Filter {
                since: since.as_deref(),
                until: until.as_deref(),
                agent: agent.as_deref(),
                project: project.as_deref(),
                session: session.as_deref(),
                model: model.as_deref(),
            };
            report(conn, by, filter, &prices)
        })
        .await?;
    serde_json::to_string(&report).map_err(|e| ApiError::from(crate::Error::Internal(e.to_string())))
}
