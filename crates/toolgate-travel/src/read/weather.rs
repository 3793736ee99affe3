//! `query_weather`: a forecast from the configured HTTP provider, for today and the next two days.
//!
//! Provider contract: `GET {weather_url}?city=<city>&date=<YYYY-MM-DD>` answers
//! 200 with a JSON object (the forecast, passed through), 404 when the city is
//! unknown. The request goes through `http-tools` (one request per day asked,
//! each within the configured limit, 8 s by default, and the call's deadline;
//! the body is read streaming up to 64 KiB; the answers map as for every HTTP
//! tool). No provider configured: the tool succeeds with an `unavailable`
//! signal rather than failing, because an UNAVAILABLE error is transient and
//! would be retried for nothing.

use std::sync::Arc;

use chrono::{Duration, NaiveDate, Utc};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use toolgate_core::{
    Effect, ErrorCode, Payload, Signal, Tool, ToolContext, ToolError, ToolOutput, ToolResult, ToolSpec,
};
use toolgate_http::{HttpExecutor, HttpOptions};
use toolgate_schema::{Method, Route};

use crate::config::{ENV_WEATHER_URL, TravelConfig};
use crate::shared::{Call, MAX_CITY, Shared, tool};

/// Days after today that are still served.
pub(crate) const DAYS_AHEAD: i64 = 2;
/// Largest provider answer accepted.
const MAX_BODY: usize = 64 * 1024;

/// Parameters of `query_weather`.
#[derive(Debug, Deserialize, JsonSchema)]
struct Input {
    /// The city, e.g. "Hangzhou".
    #[schemars(length(min = 1, max = MAX_CITY), pattern(toolgate_schema::PLAIN_TEXT))]
    city: String,
    /// One day, YYYY-MM-DD, from today to today + 2. Omit it for today and the next two days (UTC).
    #[schemars(with = "Option<String>", regex(pattern = toolgate_schema::DATE_PATTERN), extend("format" = "date"))]
    date: Option<NaiveDate>,
}

const DESCRIPTION: &str = "Get the weather forecast for a city. Call it when planning a trip that starts \
within the next two days (e.g. to choose transport or pack). Served: today and the next two days (UTC dates). \
Without `date` it answers all three days: `{city, served: true, days: [{date, forecast}, ...]}`. With a `date` in \
that window it answers `{city, date, served: true, forecast: {...}}` with the provider's forecast (typically \
condition, temperatures in °C, precipitation). A date outside the window returns success with `served: false` and a \
`beyond_range` signal giving the last date served and what to do instead (with `use_tool` when this server has \
another forecast tool for later dates: call that one); do not retry query_weather. When no weather provider \
is configured the answer is success with `available: false` and an `unavailable` signal saying how an operator \
enables it. The provider has a few seconds to answer (8 by default). Example: {\"city\": \"Hangzhou\", \"date\": \
\"2026-07-15\"}.";

pub(crate) fn tool_for(shared: &Arc<Shared>) -> Arc<dyn Tool> {
    let spec = ToolSpec::new("query_weather", DESCRIPTION, json!({}))
        .with_effect(Effect::Read)
        .with_role("guest")
        .with_tags(["travel", "weather"])
        .with_timeout(shared.config.weather_timeout + std::time::Duration::from_secs(2))
        .with_example("today and the next two days in Hangzhou", json!({"city": "Hangzhou"}))
        .with_example("a given day", json!({"city": "Hangzhou", "date": "2026-07-15"}));
    tool(shared, spec, None, run)
}

async fn run(call: Call, input: Input) -> ToolResult {
    let Input { city, date } = input;
    let shared = &*call.shared;
    let city = city.as_str();
    let today = Utc::now().date_naive();
    let last = today + Duration::days(DAYS_AHEAD);
    if let Some(date) = date {
        if date > last {
            let ask_from = date - Duration::days(DAYS_AHEAD);
            let use_tool = shared.config.weather_upstream_tool.clone();
            let instead = match &use_tool {
                Some(tool) => format!(
                    "forecasts here cover {today} to {last} only; call `{tool}` for {date} in {city} instead"
                ),
                None => format!(
                    "forecasts cover {today} to {last} only; ask again on or after {ask_from}, or plan with the \
                     usual climate for the season and tell the user the forecast is not yet available"
                ),
            };
            return Ok(ToolOutput::json(json!({"city": city, "date": date.to_string(), "served": false}))
                .with_signal(Signal::BeyondRange {
                    requested: json!(date.to_string()),
                    limit: json!(last.to_string()),
                    instead,
                    use_tool,
                }));
        }
        if date < today {
            return Ok(ToolOutput::json(json!({"city": city, "date": date.to_string(), "served": false}))
                .with_signal(Signal::BeyondRange {
                    requested: json!(date.to_string()),
                    limit: json!(today.to_string()),
                    instead: format!("past weather is not served; ask for a date from {today} to {last}"),
                    use_tool: None,
                }));
        }
    }
    let Some(provider) = shared.weather.as_ref() else {
        let mut out = json!({"city": city, "available": false});
        if let Some(date) = date {
            out["date"] = json!(date.to_string());
        }
        return Ok(ToolOutput::json(out).with_signal(Signal::Unavailable {
            reason: "no weather provider is configured on this server".into(),
            how_to_enable: format!(
                "an operator sets `url` under [weather] in toolgate.toml (or {ENV_WEATHER_URL}) to the \
                 provider's base URL; until then tell the user the forecast is not available here"
            ),
        }));
    };
    let provider = provider.as_ref().map_err(|why| ToolError::unavailable(why.clone()).transient(false))?;
    let (ctx, timeout) = (&call.ctx, shared.config.weather_timeout);
    if let Some(date) = date {
        let forecast = fetch(provider, ctx, city, date, timeout).await?;
        return Ok(ToolOutput::json(
            json!({"city": city, "date": date.to_string(), "served": true, "forecast": forecast}),
        ));
    }
    // The default: the three days served, asked in parallel.
    let day = |n: i64| today + Duration::days(n);
    let (a, b, c) = tokio::join!(
        fetch(provider, ctx, city, day(0), timeout),
        fetch(provider, ctx, city, day(1), timeout),
        fetch(provider, ctx, city, day(2), timeout),
    );
    let days: Vec<Value> = [(day(0), a?), (day(1), b?), (day(2), c?)]
        .into_iter()
        .map(|(date, forecast)| json!({"date": date.to_string(), "forecast": forecast}))
        .collect();
    Ok(ToolOutput::json(json!({"city": city, "served": true, "days": days})))
}

/// The provider as an http-tools executor: its deadline, streamed size
/// limit and answer mapping (`PARSE_ERROR` for a body that is not JSON, 5xx,
/// timeouts, refused connections) are the ones every HTTP tool has.
pub(crate) struct Provider {
    executor: HttpExecutor,
    route: Route,
}

impl std::fmt::Debug for Provider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Provider").field("url", &self.executor.base_url().as_str()).finish()
    }
}

/// The provider of `config`: `None` without a URL, an error message for a URL that cannot be used.
pub(crate) fn provider(config: &TravelConfig) -> Option<Result<Provider, String>> {
    let url = config.weather_url.as_deref()?;
    let options = HttpOptions::default()
        .timeout(config.weather_timeout)
        .backend_name("the weather provider")
        .max_response_bytes(MAX_BODY);
    let route = Route::new("get_forecast", Method::Get, "", "The forecast of one city on one day");
    Some(HttpExecutor::new(url, options).map(|executor| Provider { executor, route }).map_err(|e| {
        tracing::error!(target: "toolgate_travel::weather", error = %e, "the weather provider URL cannot be used");
        format!("the weather provider URL configured in {ENV_WEATHER_URL} (or [weather] url) cannot be used")
    }))
}

async fn fetch(
    provider: &Provider,
    ctx: &ToolContext,
    city: &str,
    date: NaiveDate,
    timeout: std::time::Duration,
) -> Result<Value, ToolError> {
    let params = json!({"city": city, "date": date.to_string()});
    let prepared = provider.executor.prepare(&provider.route, &params)?;
    // The configured limit, cut short by the call's own deadline.
    let left = ctx.deadline.map(|d| d.saturating_duration_since(std::time::Instant::now()));
    let budget = left.map_or(timeout, |left| timeout.min(left.saturating_sub(left / 20)));
    // The provider takes no credentials: the caller's token is never sent to it.
    let answer = provider.executor.send(prepared, None, budget, &params).await.map_err(|mut e| {
        tracing::warn!(target: "toolgate_travel::weather", code = e.code.as_str(), "weather provider request failed");
        // Counted as the provider's failure, not the travel domain's.
        if let Some(failure) = &mut e.backend {
            failure.backend = Some("weather".into());
        }
        if e.code == ErrorCode::NotFound {
            ToolError::not_found(format!(
                "the weather provider does not know the city {city:?}; check the spelling or use a nearby larger city"
            ))
        } else {
            e
        }
    })?;
    match answer.payload {
        Payload::Json(mut v) => match v["payload"].take() {
            forecast @ Value::Object(_) => Ok(forecast),
            _ => Err(ToolError::new(
                ErrorCode::ParseError,
                "the weather provider answered JSON that is not an object; no forecast available",
            )),
        },
        Payload::Text(_) => Err(ToolError::internal()),
    }
}
