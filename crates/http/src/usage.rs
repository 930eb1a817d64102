//! `GET /api/usage`: the usage ledger grouped and priced ([`scrollback_read::usage::report`]). A
//! route of the table, boxed as each group of routes is, so that the table's types stay small.

use serde::Deserialize;
use warp::filters::BoxedFilter;
use warp::http::{Method, header};
use warp::{Filter as _, Reply as _};

use super::filters::{get_params, raw_query};
use super::{Api, ApiError};
use scrollback_read::request::UsageInput;

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

/// `/api/usage`, for the route table.
pub(crate) fn routes(api: &Api) -> BoxedFilter<(warp::reply::Response,)> {
    let api = api.clone();
    warp::path!("usage")
        .and(warp::method())
        .and(raw_query())
        .then(move |method: Method, query: String| {
            let api = api.clone();
            async move {
                match get_params::<Params>(&method, &query) {
                    Ok(params) => match run(api, params).await {
                        Ok(body) => {
                            warp::reply::with_header(body, header::CONTENT_TYPE, "application/json").into_response()
                        }
                        Err(e) => e.response(),
                    },
                    Err(e) => e.response(),
                }
            }
        })
        .boxed()
}

/// The report as JSON, or the API's error for a parameter it cannot take.
async fn run(api: Api, p: Params) -> Result<String, ApiError> {
    let Params { by, since, until, agent, project, session, model } = p;
    let asked = UsageInput { by, since, until, agent, project, session, model }.parse()?;
    let prices = api.inner.prices.clone();
    let report = api.db(move |store| store.usage(asked.by, asked.filter(), &prices)).await?;
    serde_json::to_string(&report).map_err(|e| ApiError::from(scrollback_core::Error::Internal(e.to_string())))
}
