//! `query_weather`: a forecast from the configured HTTP provider, for today and the next two days.
//!
//! Provider contract: `GET {weather_url}?city=<city>&date=<YYYY-MM-DD>` answers
//! 200 with a JSON object (the forecast, passed through), 404 when the city is
//! unknown. One request, 8 s time limit. No provider configured: the tool
//! succeeds with an `unavailable` signal rather than failing, because an
//! UNAVAILABLE error is transient and would be retried for nothing.

use chrono::{Duration, NaiveDate, Utc};
use schemars::JsonSchema;
use serde_json::{Value, json};
use tool_core::{Effect, ErrorCode, Params, Signal, ToolError, ToolOutput, ToolResult, ToolSpec};

use crate::common::{MAX_CITY, Shared, text};
use crate::config::{ENV_WEATHER_URL, WEATHER_TIMEOUT};
use crate::schema::schema_for;

/// Days after today that are still served.
pub(crate) const DAYS_AHEAD: i64 = 2;
/// Largest provider answer accepted.
const MAX_BODY: usize = 64 * 1024;

/// Parameters of `query_weather`.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
#[allow(dead_code)] // schema only: values are read with tool_core::Params
struct Input {
    /// The city, e.g. "Hangzhou".
    #[schemars(length(min = 1, max = 100))]
    city: String,
    /// The day, YYYY-MM-DD, from today to today + 2 (default today, UTC).
    #[schemars(regex(pattern = r"^\d{4}-\d{2}-\d{2}$"), extend("format" = "date"))]
    date: Option<String>,
}

const DESCRIPTION: &str = "Get the weather forecast for a city on one day. Call it when planning a trip that starts \
within the next two days (e.g. to choose transport or pack). Served: today and the next two days (UTC dates). A date \
outside that window returns success with `served: false` and a `beyond_range` signal giving the last date served and \
what to do instead; do not retry it. When no weather provider is configured the answer is success with \
`available: false` and an `unavailable` signal saying how an operator enables it. Otherwise returns `{city, date, \
served: true, forecast: {...}}` with the provider's forecast (typically condition, temperatures in °C, precipitation). \
The provider has 8 seconds to answer. Example: {\"city\": \"Hangzhou\", \"date\": \"2026-07-15\"}.";

pub(crate) fn spec() -> ToolSpec {
    ToolSpec::new("query_weather", DESCRIPTION, schema_for::<Input>())
        .with_effect(Effect::Read)
        .with_role("guest")
        .with_tags(["travel", "weather"])
        .with_timeout(WEATHER_TIMEOUT + std::time::Duration::from_secs(2))
        .with_example("today in Hangzhou", json!({"city": "Hangzhou"}))
        .with_example("a given day", json!({"city": "Hangzhou", "date": "2026-07-15"}))
}

/// Checked parameters.
#[derive(Debug)]
pub(crate) struct Parsed {
    city: String,
    date: Option<NaiveDate>,
}

pub(crate) fn parse(mut p: Params<'_>) -> Result<Parsed, ToolError> {
    let city = text(&mut p, "city", true, MAX_CITY);
    let date = p.optional_date("date");
    p.finish()?;
    let Some(city) = city else { return Err(ToolError::internal()) };
    Ok(Parsed { city: city.to_string(), date })
}

pub(crate) async fn run(shared: &Shared, input: Parsed) -> ToolResult {
    let Parsed { city, date } = input;
    let city = city.as_str();
    let today = Utc::now().date_naive();
    let date = date.unwrap_or(today);
    let last = today + Duration::days(DAYS_AHEAD);
    if date > last {
        let ask_from = date - Duration::days(DAYS_AHEAD);
        let instead = match &shared.config.long_range_tool {
            Some(tool) => format!(
                "forecasts here cover {today} to {last} only; call `{tool}` for {date} instead (read its schema first)"
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
    let (Some(base), Some(http)) = (shared.config.weather_url.as_deref(), shared.http.as_ref()) else {
        return Ok(ToolOutput::json(json!({"city": city, "date": date.to_string(), "available": false})).with_signal(
            Signal::Unavailable {
                reason: "no weather provider is configured on this server".into(),
                how_to_enable: format!(
                    "an operator sets {ENV_WEATHER_URL} (or TravelConfig::weather_url) to the provider's base URL; \
                     until then tell the user the forecast is not available here"
                ),
            },
        ));
    };
    let forecast = fetch(http, base, city, date).await?;
    Ok(ToolOutput::json(
        json!({"city": city, "date": date.to_string(), "served": true, "forecast": forecast}),
    ))
}

async fn fetch(http: &reqwest::Client, base: &str, city: &str, date: NaiveDate) -> Result<Value, ToolError> {
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
                WEATHER_TIMEOUT.as_secs()
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
            ErrorCode::ExecutionError,
            "the weather provider answered something that is not a JSON object; no forecast available",
        )),
    }
}
