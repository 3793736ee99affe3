//! `query_weather` against a real HTTP provider on 127.0.0.1:0 (axum).

use crate::common;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::common::{Tools, day, json, pointers, user};
use axum::Router;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::json;
use toolgate_core::{ErrorCode, Signal};
use toolgate_travel::TravelConfig;

type Seen = Arc<Mutex<Vec<HashMap<String, String>>>>;

async fn forecast(State(seen): State<Seen>, Query(q): Query<HashMap<String, String>>) -> Response {
    seen.lock().unwrap().push(q.clone());
    match q.get("city").map(String::as_str) {
        Some("Atlantis") => (StatusCode::NOT_FOUND, "no such city").into_response(),
        Some("Brokenville") => (StatusCode::INTERNAL_SERVER_ERROR, "boom").into_response(),
        Some("Textville") => "sunny, probably".into_response(),
        Some("Lockedville") => (StatusCode::UNAUTHORIZED, "api key required").into_response(),
        Some("Forbiddenville") => (StatusCode::FORBIDDEN, "plan does not include forecasts").into_response(),
        Some(city) => axum::Json(json!({
            "city": city,
            "date": q.get("date"),
            "condition": "light rain",
            "temp_min_c": 14,
            "temp_max_c": 21,
            "precipitation_mm": 3.5
        }))
        .into_response(),
        None => StatusCode::BAD_REQUEST.into_response(),
    }
}

/// A weather provider on an ephemeral local port; returns its URL and what it saw.
async fn provider() -> (String, Seen) {
    let seen: Seen = Arc::default();
    let app = Router::new().route("/forecast", get(forecast)).with_state(seen.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (format!("http://{addr}/forecast"), seen)
}

#[tokio::test]
async fn forecasts_come_from_the_configured_provider() {
    let (url, seen) = provider().await;
    let b = common::sqlite();
    let tools = Tools::new(b.store().await, TravelConfig::default().with_weather_url(url));
    let u = user("w");
    let out = tools.ok(&u, "query_weather", json!({"city": "北京 Beijing", "date": day(2)})).await;
    let r = json(&out);
    assert_eq!(r["served"], true);
    assert_eq!(r["forecast"]["condition"], "light rain");
    assert_eq!(r["date"], day(2));
    assert!(out.signals.is_empty());
    let asked = seen.lock().unwrap().last().cloned().unwrap();
    assert_eq!(asked["city"], "北京 Beijing", "the city reaches the provider intact (URL-encoded)");
    assert_eq!(asked["date"], day(2));

    // No date: today and the next two days, one provider request each.
    seen.lock().unwrap().clear();
    let out = tools.ok(&u, "query_weather", json!({"city": "Hangzhou"})).await;
    let days = json(&out)["days"].as_array().unwrap().clone();
    let dates: Vec<&str> = days.iter().map(|d| d["date"].as_str().unwrap()).collect();
    assert_eq!(dates, [day(0), day(1), day(2)]);
    assert!(days.iter().all(|d| d["forecast"]["condition"] == "light rain"), "{days:?}");
    let mut asked: Vec<String> = seen.lock().unwrap().iter().map(|q| q["date"].clone()).collect();
    asked.sort();
    assert_eq!(asked, [day(0), day(1), day(2)]);
}

#[test]
fn the_provider_timeout_defaults_to_8_seconds() {
    assert_eq!(TravelConfig::default().weather_timeout, Duration::from_secs(8));
    assert_eq!(toolgate_travel::WEATHER_TIMEOUT, Duration::from_secs(8));
}

/// A provider that accepts connections and never answers.
async fn hanging_provider() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((socket, _)) = listener.accept().await {
            held.push(socket);
        }
    });
    format!("http://{addr}/forecast")
}

#[tokio::test]
async fn a_hanging_provider_times_out_after_the_configured_limit() {
    let url = hanging_provider().await;
    let b = common::sqlite();
    let config =
        TravelConfig::default().with_weather_url(url).with_weather_timeout(Duration::from_millis(300));
    let tools = Tools::new(b.store().await, config);
    let started = Instant::now();
    let err = tools.err(&user("w"), "query_weather", json!({"city": "Hangzhou", "date": day(1)})).await;
    let took = started.elapsed();
    assert_eq!(err.code, ErrorCode::Timeout, "{err:?}");
    assert!(err.transient, "a timeout may be tried again");
    assert!(err.message.contains("within 300 ms"), "{}", err.message);
    assert!(took >= Duration::from_millis(300), "waited the limit: {took:?}");
    assert!(took < Duration::from_secs(5), "and not the default 8 s: {took:?}");
    // The tool's own gateway timeout follows the configured limit.
    let spec = tools.get("query_weather").spec().clone();
    assert!(spec.timeout < Duration::from_secs(8), "{:?}", spec.timeout);
}

#[tokio::test]
async fn dates_beyond_the_window_get_a_beyond_range_signal_without_a_request() {
    let (url, seen) = provider().await;
    let b = common::sqlite();
    let tools = Tools::new(b.store().await, TravelConfig::default().with_weather_url(url));
    let u = user("w");
    for (asked, limit) in [(day(3), day(2)), (day(30), day(2)), (day(-1), day(0))] {
        let out = tools.ok(&u, "query_weather", json!({"city": "Hangzhou", "date": asked})).await;
        assert_eq!(json(&out)["served"], false);
        match &out.signals[..] {
            [Signal::BeyondRange { requested, limit: l, instead, use_tool: None }] => {
                assert_eq!(requested, &json!(asked));
                assert_eq!(l, &json!(limit));
                assert!(!instead.is_empty());
            }
            other => panic!("{other:?}"),
        }
    }
    assert!(seen.lock().unwrap().is_empty(), "nothing out of range was asked of the provider");
}

#[tokio::test]
async fn a_configured_upstream_tool_is_named_for_later_dates_only() {
    let (url, seen) = provider().await;
    let b = common::sqlite();
    let config =
        TravelConfig::default().with_weather_url(url).with_weather_upstream_tool("weather__get_forecast");
    let tools = Tools::new(b.store().await, config);
    let u = user("w");
    let out = tools.ok(&u, "query_weather", json!({"city": "Hangzhou", "date": day(9)})).await;
    match &out.signals[..] {
        [Signal::BeyondRange { use_tool: Some(tool), instead, .. }] => {
            assert_eq!(tool, "weather__get_forecast");
            assert!(instead.contains("call `weather__get_forecast`"), "{instead}");
            assert!(instead.contains(&day(9)) && instead.contains("Hangzhou"), "{instead}");
        }
        other => panic!("{other:?}"),
    }
    // Past dates: no forecast tool serves them, so none is named.
    let out = tools.ok(&u, "query_weather", json!({"city": "Hangzhou", "date": day(-1)})).await;
    assert!(matches!(&out.signals[..], [Signal::BeyondRange { use_tool: None, .. }]), "{:?}", out.signals);
    assert!(seen.lock().unwrap().is_empty());
}

#[tokio::test]
async fn provider_failures_map_to_the_right_codes() {
    let (url, _) = provider().await;
    let b = common::sqlite();
    let tools = Tools::new(b.store().await, TravelConfig::default().with_weather_url(url));
    let u = user("w");
    let err = tools.err(&u, "query_weather", json!({"city": "Atlantis"})).await;
    assert_eq!(err.code, ErrorCode::NotFound);
    let err = tools.err(&u, "query_weather", json!({"city": "Brokenville"})).await;
    assert_eq!(err.code, ErrorCode::ExecutionError, "a 5xx, as every HTTP tool answers it: {err:?}");
    assert!(err.transient, "a read may be tried again");
    let err = tools.err(&u, "query_weather", json!({"city": "Textville"})).await;
    assert_eq!(err.code, ErrorCode::ParseError, "a body that is not JSON");
    // The provider's credential is the operator's, never the user's: no "sign in again".
    for (city, status) in [("Lockedville", 401), ("Forbiddenville", 403)] {
        let err = tools.err(&u, "query_weather", json!({"city": city})).await;
        assert_eq!(err.code, ErrorCode::ExecutionError, "{status}: {err:?}");
        assert!(!err.transient, "{status}: {err:?}");
        assert!(
            err.message.contains(&format!("HTTP {status}"))
                && err.message.contains("operator must check")
                && !err.message.contains("caller's credentials"),
            "{status}: {}",
            err.message
        );
    }

    // A provider that is not listening.
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let tools = Tools::new(
        b.store().await,
        TravelConfig::default().with_weather_url(format!("http://127.0.0.1:{port}/forecast")),
    );
    let err = tools.err(&u, "query_weather", json!({"city": "Hangzhou"})).await;
    assert_eq!(err.code, ErrorCode::Unavailable);

    // A URL that cannot be used is said once, and not worth retrying.
    let tools = Tools::new(b.store().await, TravelConfig::default().with_weather_url("ftp://example.org/w"));
    let err = tools.err(&u, "query_weather", json!({"city": "Hangzhou"})).await;
    assert_eq!(err.code, ErrorCode::Unavailable);
    assert!(!err.transient && err.message.contains("weather"), "{err:?}");
}

#[tokio::test]
async fn a_provider_answer_larger_than_64_kib_is_refused_while_streaming() {
    async fn huge() -> String {
        "x".repeat(200 * 1024)
    }
    let app = Router::new().route("/forecast", get(huge));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    let b = common::sqlite();
    let config = TravelConfig::default().with_weather_url(format!("http://{addr}/forecast"));
    let tools = Tools::new(b.store().await, config);
    let err = tools.err(&user("w"), "query_weather", json!({"city": "Hangzhou", "date": day(0)})).await;
    assert_eq!(err.code, ErrorCode::ExecutionError, "{err:?}");
    assert!(err.message.contains("65536 bytes"), "{}", err.message);
}

#[tokio::test]
async fn no_provider_answers_an_unavailable_signal() {
    let b = common::sqlite();
    let tools = Tools::new(b.store().await, TravelConfig::default());
    let out = tools.ok(&user("w"), "query_weather", json!({"city": "Hangzhou", "date": day(1)})).await;
    assert_eq!(json(&out)["available"], false);
    match &out.signals[..] {
        [Signal::Unavailable { reason, how_to_enable }] => {
            assert!(reason.contains("no weather provider"));
            assert!(
                how_to_enable.contains("`url` under [weather]")
                    && how_to_enable.contains(toolgate_travel::ENV_WEATHER_URL)
            );
        }
        other => panic!("{other:?}"),
    }
    let err = tools.err(&user("w"), "query_weather", json!({"city": "", "date": "2026-02-30"})).await;
    assert_eq!(pointers(&err), ["/city", "/date"]);
}
