//! `GET /api/stats`: the overview's figures ([`scrollback_read::stats::stats`]), for the viewer's
//! Overview page and anyone else. A route of the table, boxed as each group of routes is.

use serde::Deserialize;
use warp::Filter as _;
use warp::filters::BoxedFilter;
use warp::http::Method;

use super::filters::{get_params, raw_query};
use super::{Api, ApiError};
use scrollback_read::stats::{Filter, MAX_LIMIT};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Params {
    since: Option<String>,
    until: Option<String>,
    tz: Option<String>,
    agent: Option<String>,
    project: Option<String>,
    limit: Option<String>,
}

/// `/api/stats`, for the route table.
pub(crate) fn routes(api: &Api) -> BoxedFilter<(warp::reply::Response,)> {
    let api = api.clone();
    warp::path!("stats")
        .and(warp::method())
        .and(raw_query())
        .then(move |method: Method, query: String| {
            let api = api.clone();
            async move {
                let answer = match get_params::<Params>(&method, &query) {
                    Ok(params) => run(api, params).await,
                    Err(e) => Err(e),
                };
                answer.unwrap_or_else(|e| e.response())
            }
        })
        .boxed()
}

/// The figures as JSON (masked with `--mask-secrets`: titles, projects and edited files' names are
/// transcript text), or the API's error for a parameter it cannot take.
async fn run(api: Api, p: Params) -> Result<warp::reply::Response, ApiError> {
    let nonempty = |v: Option<String>| v.filter(|s| !s.trim().is_empty());
    let agent = scrollback_read::request::agent(p.agent)?;
    let tz_hours = match nonempty(p.tz) {
        None => 0,
        Some(tz) => tz
            .trim()
            .parse::<i32>()
            .ok()
            .filter(|h| (-12..=14).contains(h))
            .ok_or_else(|| ApiError::bad_request("tz: an offset from UTC in whole hours, -12 to 14"))?,
    };
    let limit = match nonempty(p.limit) {
        None => None,
        Some(n) => Some(
            n.trim()
                .parse::<usize>()
                .ok()
                .filter(|n| (1..=MAX_LIMIT).contains(n))
                .ok_or_else(|| ApiError::bad_request(format!("limit: how many of each list, 1 to {MAX_LIMIT}")))?,
        ),
    };
    let (since, until, project) = (nonempty(p.since), nonempty(p.until), nonempty(p.project));
    let prices = api.inner.prices.clone();
    let stats = api
        .db(move |store| {
            let filter = Filter {
                since: since.as_deref(),
                until: until.as_deref(),
                tz_hours,
                project: project.as_deref(),
                agent: agent.as_deref(),
                limit,
            };
            store.stats(filter, &prices)
        })
        .await?;
    Ok(api.masked_json(&stats))
}
