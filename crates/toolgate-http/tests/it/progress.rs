//! Progress of a large answer (a list over a long date range): reports while the body
//! streams in, growing, against the Content-Length; a small answer reports nothing.

use std::sync::{Arc, Mutex};

use axum::routing::get;
use serde_json::{Value, json};
use toolgate_core::{Caller, ProgressSink, ToolContext};
use toolgate_gateway::{CallOptions, Gateway};
use toolgate_http::{HttpExecutor, HttpOptions, PROGRESS_STEP_BYTES};
use toolgate_schema::RouteTable;

const TABLE: &str = r#"
tool = "query_days"
description = "Test table: days of a range."
domain = "days"

[[routes]]
op = "list_days"
method = "GET"
path = "/days"
summary = "Every day of a range"

[[routes.fields]]
name = "count"
type = "integer"
required = true
"#;

#[derive(Default)]
struct Recorder(Mutex<Vec<(f64, Option<f64>, String)>>);

impl ProgressSink for Recorder {
    fn report(&self, progress: f64, total: Option<f64>, message: Option<&str>) {
        self.0.lock().unwrap().push((progress, total, message.unwrap_or_default().to_owned()));
    }
}

async fn days(
    axum::extract::Query(q): axum::extract::Query<std::collections::HashMap<String, usize>>,
) -> axum::Json<Value> {
    let n = q.get("count").copied().unwrap_or(0);
    let days: Vec<Value> = (0..n)
        .map(|i| json!({"day": i, "weight_kg": 80.5, "note": "a note that makes the row longer"}))
        .collect();
    axum::Json(json!({ "days": days }))
}

async fn call(count: u64) -> (usize, Vec<(f64, Option<f64>, String)>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, axum::Router::new().route("/days", get(days))).await });
    let executor = Arc::new(
        HttpExecutor::new(&base, HttpOptions::default().backend_name("the days API").backend_id("days"))
            .unwrap(),
    );
    let gw = Gateway::builder()
        .tools(executor.tools([RouteTable::from_toml_str(TABLE).unwrap()]).unwrap())
        .build()
        .unwrap();
    let recorder = Arc::new(Recorder::default());
    let ctx = ToolContext::new(Caller::new("a", "guest").with_credential("days", "days-token-0d1e2f"))
        .with_progress(recorder.clone());
    let env = gw
        .execute(&ctx, "query_days", json!({"op": "list_days", "count": count}), &CallOptions::default())
        .await;
    assert!(env.success, "{env:?}");
    let size = serde_json::to_vec(&env.result.unwrap()["payload"]).unwrap().len();
    let reports = recorder.0.lock().unwrap().clone();
    (size, reports)
}

#[tokio::test]
async fn a_large_answer_reports_its_download_and_a_small_one_does_not() {
    let (size, reports) = call(5000).await;
    assert!(size > 4 * PROGRESS_STEP_BYTES, "a large answer: {size} bytes");
    // How many depends on how the body arrives in chunks; more than one in any case.
    assert!(reports.len() >= 2, "{} reports for {size} bytes", reports.len());
    assert!(reports.windows(2).all(|w| w[0].0 < w[1].0), "progress grows: {reports:?}");
    let (last, total, message) = reports.last().unwrap();
    assert_eq!(*total, Some(size as f64), "the Content-Length is the total");
    assert!(*last <= size as f64);
    assert!(message.contains("the days API") && message.contains("GET /days"), "{message}");

    let (_, reports) = call(3).await;
    assert!(reports.is_empty(), "{reports:?}");
}
