//! `query_weather`: a forecast from the configured HTTP provider, for today and the next two days.
//!
//! Provider contract: `GET {weather_url}?city=<city>&date=<YYYY-MM-DD>` answers
//! 200 with a JSON object (the forecast, passed through), 404 when the city is
//! unknown. One request per day asked, each under the configured time limit
//! (8 s by default). No provider configured: the tool
//! succeeds with an `unavailable` signal rather than failing, because an
//! UNAVAILABLE error is transient and would be retried for nothing.

use std::sync::Arc;

use chrono::{Duration, NaiveDate, Utc};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use tool_core::{Effect, ErrorCode, Signal, Tool, ToolError, ToolOutput, ToolResult, ToolSpec};

use crate::config::ENV_WEATHER_URL;
use crate::shared::{Call, MAX_CITY, Shared, tool};

/// Days after today that are still served.
pub(crate) const DAYS_AHEAD: i64 = 2;
/// Largest provider answer accepted.
const MAX_BODY: usize = 64 * 1024;

/// Parameters of `query_weather`.
#[derive(Debug, Deserialize, JsonSchema)]
struct Input {
    /// The city, e.g. "Hangzhou".
    #[schemars(length(min = 1, max = MAX_CITY), pattern(schema_gen::PLAIN_TEXT))]
    city: String,
    /// One day, YYYY-MM-DD, from today to today + 2. Omit it for today and the next two days (UTC).
    #[schemars(with = "Option<String>", regex(pattern = schema_gen::DATE_PATTERN), extend("format" = "date"))]
    date: Option<NaiveDate>,
}

const DESCRIPTION: &str = "Get the weather forecast for a city. Call it when planning a trip that starts \
within the next two days (e.g. to choose transport or pack). Served: today and the next two days (UTC dates). \
Without `date` it answers all three days: `{city, served: true, days: [{date, forecast}, ...]}`. With a `date` in \
that window it answers `{city, date, served: true, forecast: {...}}` with the provider's forecast (typically \
condition, temperatures in °C, precipitation). A date outside the window returns success with `served: false` and a \
`beyond_range` signal giving the last date served and what to do instead; do not retry it. When no weather provider \
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
            return Ok(ToolOutput::json(json!({"city": city, "date": date.to_string(), "served": false}))
                .with_signal(Signal::BeyondRange {
                    requested: json!(date.to_string()),
                    limit: json!(last.to_string()),
                    instead: format!(
                        "forecasts cover {today} to {last} only; ask again on or after {ask_from}, or plan with the \
                         usual climate for the season and tell the user the forecast is not yet available"
                    ),
                }));
        }
        if date < today {
            return Ok(ToolOutput::json(json!({"city": city, "date": date.to_string(), "served": false}))
                .with_signal(Signal::BeyondRange {
                    requested: json!(date.to_string()),
                    limit: json!(today.to_string()),
                    instead: format!("past weather is not served; ask for a date from {today} to {last}"),
                }));
        }
    }
    let (Some(base), Some(http)) = (shared.config.weather_url.as_deref(), shared.http.as_ref()) else {
        let mut out = json!({"city": city, "available": false});
        if let Some(date) = date {
            out["date"] = json!(date.to_string());
        }
        return Ok(ToolOutput::json(out).with_signal(Signal::Unavailable {
            reason: "no weather provider is configured on this server".into(),
            how_to_enable: format!(
                "an operator sets `weather_url` under [travel] in toolgate.toml (or {ENV_WEATHER_URL}) to the \
                 provider's base URL; until then tell the user the forecast is not available here"
            ),
        }));
    };
    let timeout = shared.config.weather_timeout;
    if let Some(date) = date {
        let forecast = fetch(http, base, city, date, timeout).await?;
        return Ok(ToolOutput::json(
            json!({"city": city, "date": date.to_string(), "served": true, "forecast": forecast}),
        ));
    }
    // The default: the three days served, asked in parallel.
    let day = |n: i64| today + Duration::days(n);
    let (a, b, c) = tokio::join!(
        fetch(http, base, city, day(0), timeout),
        fetch(http, base, city, day(1), timeout),
        fetch(http, base, city, day(2), timeout),
    );
    let days: Vec<Value> = [(day(0), a?), (day(1), b?), (day(2), c?)]
        .into_iter()
        .map(|(date, forecast)| json!({"date": date.to_string(), "forecast": forecast}))
        .collect();
    Ok(ToolOutput::json(json!({"city": city, "served": true, "days": days})))
}

async fn fetch(
    http: &reqwest::Client,
    base: &str,
    city: &str,
    date: NaiveDate,
    timeout: std::time::Duration,
) -> Result<Value, ToolError> {
    let mut url = reqwest::Url::parse(base).map_err(|e| {
        tracing::error!(target: "travel::weather", error = %e, "the weather provider URL does not parse");
        ToolError::unavailable(format!(
            "the weather provider URL configured in {ENV_WEATHER_URL} is not a valid URL"
        ))
        .transient(false)
    })?;
    url.query_pairs_mut().append_pair("city", city).append_pair("date", &date.to_string());
    let unreachable = |e: reqwest::Error| {
        tracing::warn!(target: "travel::weather", error = %e, timeout = e.is_timeout(), "weather provider request failed");
        if e.is_timeout() {
            ToolError::unavailable(format!(
                "the weather provider did not answer within {} s; try again later",
                timeout.as_secs_f64()
            ))
        } else {
            ToolError::unavailable("the weather provider cannot be reached right now; try again later")
        }
    };
    let response = http.get(url).send().await.map_err(unreachable)?;
    let status = response.status();
    if status == reqwest::StatusCode::NOT_FOUND {
        return Err(ToolError::not_found(format!(
            "the weather provider does not know the city {city:?}; check the spelling or use a nearby larger city"
        )));
    }
    if status.is_server_error() || status == reqwest::StatusCode::TOO_MANY_REQUESTS {
        tracing::warn!(target: "travel::weather", %status, "weather provider answered an error");
        return Err(ToolError::unavailable(format!(
            "the weather provider answered HTTP {}; try again later",
            status.as_u16()
        )));
    }
    if !status.is_success() {
        tracing::warn!(target: "travel::weather", %status, "weather provider refused the request");
        return Err(ToolError::execution(format!(
            "the weather provider refused the request (HTTP {})",
            status.as_u16()
        )));
    }
    let body = response.bytes().await.map_err(unreachable)?;
    if body.len() > MAX_BODY {
        return Err(ToolError::execution(
            "the weather provider answered more than 64 KiB; it is not a forecast",
        ));
    }
    match serde_json::from_slice::<Value>(&body) {
        Ok(forecast @ Value::Object(_)) => Ok(forecast),
        _ => Err(ToolError::new(
            ErrorCode::ParseError,
            "the weather provider answered something that is not a JSON object; no forecast available",
        )),
    }
}
