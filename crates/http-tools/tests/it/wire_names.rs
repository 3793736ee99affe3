//! Names the backend knows but the model does not see: a route's fixed query (OpenAI's
//! `/assistants?beta=true`) is sent with every call, and fields with a `wire_name` (AWS's
//! `StartTime<`, `filter.name`, a body `userId` the model sees as `target_user_id`) are sent
//! under it. A real axum server on 127.0.0.1:0 records the exact target, header and body.

use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, Uri};
use gateway::{CallOptions, Gateway};
use http_tools::{HttpExecutor, HttpOptions};
use schema_gen::RouteTable;
use serde_json::{Value, json};
use tool_core::{Caller, Envelope, ToolContext};

const READS: &str = r#"
tool = "query_wire"
description = "Reads whose names on the wire are not the model's."
domain = "wire"

[[routes]]
op = "list_assistants"
method = "GET"
path = "/assistants?beta=true"
summary = "An OpenAI-like list with a fixed query"
fields = [{ name = "limit", type = "integer" }]

[[routes]]
op = "list_events"
method = "GET"
path = "/events"
summary = "An AWS-like list with operator names"
fields = [
  { name = "StartTime_lt", type = "string", wire_name = "StartTime<" },
  { name = "filter_name", type = "string", wire_name = "filter.name" },
  { name = "trace", type = "string", in = "header", wire_name = "X-Trace-Id" },
]
"#;

const WRITES: &str = r#"
tool = "update_wire"
description = "Writes whose names on the wire are not the model's."
domain = "wire"

[[routes]]
op = "add_member"
method = "POST"
path = "/groups/{group_id}/members?v=2"
summary = "A body field `userId` the model sees as `target_user_id`"
body = "optional"
fields = [{ name = "target_user_id", type = "string", required = true, wire_name = "userId" }]
"#;

/// One request as the backend received it: target, `X-Trace-Id`, body.
type Log = Arc<Mutex<Vec<(String, Option<String>, String)>>>;

async fn record(State(log): State<Log>, uri: Uri, headers: HeaderMap, body: Bytes) -> String {
    let target = uri.path_and_query().map(ToString::to_string).unwrap_or_default();
    let trace = headers.get("x-trace-id").map(|v| v.to_str().unwrap().to_owned());
    log.lock().unwrap().push((target, trace, String::from_utf8(body.to_vec()).unwrap()));
    "{}".to_owned()
}

async fn gateway() -> (Gateway, Log, tokio::task::JoinHandle<()>) {
    let log: Log = Arc::default();
    let app = Router::new().fallback(record).with_state(log.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let server = tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    let executor =
        Arc::new(HttpExecutor::new(&url, HttpOptions::default().auth(http_tools::Auth::None)).unwrap());
    let tables = [READS, WRITES].map(|t| RouteTable::from_toml_str(t).unwrap());
    (Gateway::builder().tools(executor.tools(tables).unwrap()).build().unwrap(), log, server)
}

async fn call(gateway: &Gateway, tool: &str, params: Value) -> Envelope {
    let ctx = ToolContext::new(Caller::new("alice", "member"));
    let envelope = gateway.execute(&ctx, tool, params, &CallOptions::default().retries(0)).await;
    assert!(envelope.success, "{}", serde_json::to_string(&envelope).unwrap());
    envelope
}

fn take(log: &Log) -> (String, Option<String>, String) {
    let mut log = log.lock().unwrap();
    assert_eq!(log.len(), 1, "one request per call: {log:?}");
    log.pop().unwrap()
}

#[tokio::test]
async fn the_fixed_query_is_always_sent_before_the_query_fields() {
    let (gateway, log, _server) = gateway().await;
    let envelope = call(&gateway, "query_wire", json!({"op": "list_assistants"})).await;
    assert_eq!(take(&log).0, "/assistants?beta=true");
    assert_eq!(envelope.result.unwrap()["path"], "/assistants", "the result names the path");
    call(&gateway, "query_wire", json!({"op": "list_assistants", "limit": 5})).await;
    assert_eq!(take(&log).0, "/assistants?beta=true&limit=5");
}

#[tokio::test]
async fn fields_are_sent_under_their_wire_names_in_the_query_header_and_body() {
    let (gateway, log, _server) = gateway().await;
    let params =
        json!({"op": "list_events", "StartTime_lt": "2026-01-01", "filter_name": "a b", "trace": "t-1"});
    call(&gateway, "query_wire", params).await;
    let (target, trace, _) = take(&log);
    assert_eq!(target, "/events?StartTime%3C=2026-01-01&filter.name=a%20b");
    assert_eq!(trace.as_deref(), Some("t-1"));
    call(&gateway, "update_wire", json!({"op": "add_member", "group_id": "g1", "target_user_id": "u2"}))
        .await;
    let (target, _, body) = take(&log);
    assert_eq!((target.as_str(), body.as_str()), ("/groups/g1/members?v=2", r#"{"userId":"u2"}"#));
}
