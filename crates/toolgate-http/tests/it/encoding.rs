//! Path values that look like paths never change the path: against the real fitness-api, each
//! one reaches the route it was meant for, whose handler quotes the literal value back in its
//! 400, or is refused before anything is sent. Without encoding, several of these would reach
//! another route (e.g. `../../training/workouts` would list workouts).

use std::sync::Arc;

use serde_json::{Value, json};
use toolgate_core::{Caller, ErrorCode, ToolContext};
use toolgate_gateway::{CallOptions, Gateway};
use toolgate_http::{HttpExecutor, HttpOptions};
use toolgate_schema::RouteTable;

/// Route-table operations on real fitness-api routes whose path variables are plain strings
/// (no date format), so any text reaches the executor.
const TABLE: &str = r#"
tool = "query_raw_paths"
description = "Test table: fitness-api routes with free-text path variables."
domain = "fitness"

[[routes]]
op = "get_measurement"
method = "GET"
path = "/body/measurements/{date}"
summary = "One day's measurement"

[[routes]]
op = "day_summary"
method = "GET"
path = "/nutrition/days/{date}/summary"
summary = "One day's totals"

[[routes]]
op = "get_workout"
method = "GET"
path = "/training/workouts/{workout_id}"
summary = "One workout"
"#;

struct Env {
    gateway: Gateway,
    ctx: ToolContext,
    _server: toolgate_fitness_api::Server,
    _dir: tempfile::TempDir,
}

async fn env() -> Env {
    let dir = tempfile::tempdir().unwrap();
    let db = toolgate_fitness_api::connect(&format!("sqlite:{}", dir.path().join("f.db").display()))
        .await
        .unwrap();
    let token = toolgate_fitness_api::create_user(&db, "alice").await.unwrap();
    let server = toolgate_fitness_api::spawn("127.0.0.1:0", db).await.unwrap();
    let executor =
        Arc::new(HttpExecutor::new(&server.url(), HttpOptions::default().backend_id("fitness")).unwrap());
    let tools = executor.tools([RouteTable::from_toml_str(TABLE).unwrap()]).unwrap();
    let gateway = Gateway::builder().tools(tools).build().unwrap();
    let ctx = ToolContext::new(Caller::new("alice", "guest").with_credential("fitness", token));
    Env { gateway, ctx, _server: server, _dir: dir }
}

impl Env {
    async fn call(&self, params: Value) -> toolgate_core::Envelope {
        self.gateway.execute(&self.ctx, "query_raw_paths", params, &CallOptions::default().retries(0)).await
    }
}

#[tokio::test]
async fn hostile_path_values_reach_their_own_route_as_literal_text() {
    let env = env().await;
    let hostile = [
        "../admin",
        "a/b",
        "%2e%2e",
        "%2E%2E%2Fadmin",
        "../../training/workouts",
        "..%2F..%2Ftraining%2Fworkouts",
        "%2e%2e/%2e%2e/training/workouts",
        "..\\..\\training",
        "x?from=2026-01-01",
        "x#fragment",
        "x;y=1",
        "...",
        " ",
        "é/ü",
        "2026-03-14/../../../training/workouts",
    ];
    for (op, var) in [("get_measurement", "date"), ("day_summary", "date"), ("get_workout", "workout_id")] {
        for value in hostile {
            let got = env.call(json!({ "op": op, var: value })).await;
            let error = got.error.as_ref().unwrap_or_else(|| panic!("{op} {value:?} succeeded: {got:?}"));
            assert_eq!(error.code, ErrorCode::InvalidParams, "{op} {value:?}: {error:?}");
            let details = error.details.as_ref().unwrap();
            // The backend's own 400 for this route's variable, quoting the value it received.
            assert_eq!(details["status"], 400, "{op} {value:?}: {details}");
            let field = &details["backend_error"]["fields"][0];
            assert_eq!(field["field"], var, "{op} {value:?}: {details}");
            let quoted = format!("{value:?}");
            assert!(field["message"].as_str().unwrap().contains(&quoted), "{op} {value:?}: {field}");
        }
    }
}

#[tokio::test]
async fn dot_segments_and_empty_values_are_refused_before_sending() {
    let env = env().await;
    for value in [".", "..", ""] {
        let got = env.call(json!({"op": "get_measurement", "date": value})).await;
        assert_eq!(got.code(), Some(ErrorCode::InvalidParams), "{value:?}: {got:?}");
        let details = got.error.as_ref().unwrap().details.as_ref().unwrap();
        assert!(details.get("status").is_none(), "{value:?} was not sent: {details}");
    }
}

#[tokio::test]
async fn ordinary_values_reach_the_route() {
    let env = env().await;
    let got = env.call(json!({"op": "get_measurement", "date": "2026-03-14"})).await;
    assert_eq!(got.code(), Some(ErrorCode::NotFound), "{got:?}");
    let got = env.call(json!({"op": "day_summary", "date": "2026-03-14"})).await;
    assert!(got.success, "{got:?}");
    let result = got.result.unwrap();
    assert_eq!(result["path"], "/nutrition/days/2026-03-14/summary");
    assert_eq!(result["payload"]["meal_count"], 0);
}
