//! `query_weather` against a real HTTP provider on 127.0.0.1:0 (axum).

mod common;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use common::{Tools, day, json, pointers, user};
use serde_json::json;
use tool_core::{ErrorCode, Signal};
use travel::TravelConfig;

type Seen = Arc<Mutex<Vec<HashMap<String, String>>>>;

async fn forecast(State(seen): State<Seen>, Query(q): Query<HashMap<String, String>>) -> Response {
    seen.lock().unwrap().push(q.clone());
    match q.get("city").map(String::as_str) {
        Some("Atlantis") => (StatusCode::NOT_FOUND, "no such city").into_response(),
        Some("Brokenville") => (StatusCode::INTERNAL_SERVER_ERROR, "boom").into_response(),
        Some("Textville") => "sunny, probably".into_response(),
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

    // No date: today.
    let out = tools.ok(&u, "query_weather", json!({"city": "Hangzhou"})).await;
    assert_eq!(json(&out)["date"], day(0));
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
            [Signal::BeyondRange { requested, limit: l, instead }] => {
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
async fn beyond_the_window_names_the_long_range_tool_when_one_is_configured() {
    let (url, _seen) = provider().await;
    let b = common::sqlite();
    let config = TravelConfig::default().with_weather_url(url).with_long_range_tool("weather__get_forecast");
    let tools = Tools::new(b.store().await, config);
    let out = tools.ok(&user("w"), "query_weather", json!({"city": "Hangzhou", "date": day(30)})).await;
    match &out.signals[..] {
        [Signal::BeyondRange { instead, .. }] => {
            assert!(instead.contains("`weather__get_forecast`"), "{instead}")
        }
        other => panic!("{other:?}"),
    }
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
    assert_eq!(err.code, ErrorCode::Unavailable);
    assert!(err.transient);
    let err = tools.err(&u, "query_weather", json!({"city": "Textville"})).await;
    assert_eq!(err.code, ErrorCode::ExecutionError);

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
            assert!(how_to_enable.contains(travel::ENV_WEATHER_URL));
        }
        other => panic!("{other:?}"),
    }
    let err = tools.err(&user("w"), "query_weather", json!({"city": "", "date": "2026-02-30"})).await;
    assert_eq!(pointers(&err), ["/city", "/date"]);
}
