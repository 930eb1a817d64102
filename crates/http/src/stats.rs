//! `GET /api/stats`: the overview's figures ([`scrollback_read::stats::stats`]), for the viewer's
//! Overview page and anyone else. A route of the table, boxed as each group of routes is.

use serde::Deserialize;
use warp::Filter as _;
use warp::filters::BoxedFilter;
use warp::http::Method;

use super::filters::{get_params, raw_query};
use super::{Api, ApiError};
use scrollback_read::request::StatsInput;

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
    let Params { since, until, tz, agent, project, limit } = p;
    let asked = StatsInput { since, until, tz, agent, project, limit }.parse()?;
    let prices = api.inner.prices.clone();
    let mut stats = api.db(move |store| store.stats(asked.filter(), &prices)).await?;
    // A person's marks: their title in place of the transcript's, as in the session list.
    let marks = crate::routes::marks(&api, stats.session_ids().into_iter().map(str::to_owned).collect()).await?;
    stats.retitle(|id| crate::wire::marked_title(&marks, id).map(str::to_owned));
    Ok(api.masked_json(&stats))
}
