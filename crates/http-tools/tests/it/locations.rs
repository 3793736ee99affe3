//! Where each field of a call goes (path, query, header, body), whether a write sends a body at
//! all, and what it asks for with `Accept`: a real axum server on 127.0.0.1:0 records every
//! request it receives (method, target, headers, body bytes) and answers `{}`.

use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, Method, Uri};
use gateway::{CallOptions, Gateway};
use http_tools::{HttpExecutor, HttpOptions};
use schema_gen::RouteTable;
use serde_json::{Value, json};
use tool_core::{Caller, Envelope, ErrorCode, ToolContext};

const TABLE: &str = r#"
tool = "update_things"
description = "Test writes whose fields go to different places."
domain = "test"

[[routes]]
op = "cancel_batch"
method = "POST"
path = "/batches/{batch_id}/cancel"
summary = "An OpenAI-like write without a request body"
body = "none"

[[routes]]
op = "legacy_ping"
method = "POST"
path = "/ping"
summary = "A write of a table written before `body` existed: it still sends `{}`"

[[routes]]
op = "seek"
method = "PUT"
path = "/me/player/seek"
summary = "A Spotify-like write whose parameters are query ones"
body = "none"
fields = [
  { name = "position_ms", type = "integer", required = true, in = "query" },
  { name = "device_id", type = "string" },
]

[[routes]]
op = "post_tasks"
method = "POST"
path = "/tasks"
summary = "A Box-like write with an optional body that has a required field"
body = "optional"
fields = [
  { name = "item", type = "string", required = true },
  { name = "message", type = "string" },
  { name = "X_Trace", type = "string", in = "header" },
  { name = "dry_run", type = "boolean", in = "query" },
]

[[routes]]
op = "login_user"
method = "POST"
path = "/user/login"
summary = "A Petstore-like operation documented with XML and JSON answers"
accept = ["application/xml", "application/json"]
"#;

/// One request as the backend received it.
#[derive(Debug, Clone)]
struct Seen {
    method: String,
    target: String,
    content_type: Option<String>,
    accept: Option<String>,
    trace: Option<String>,
    body: String,
}

type Log = Arc<Mutex<Vec<Seen>>>;

async fn record(State(log): State<Log>, method: Method, uri: Uri, headers: HeaderMap, body: Bytes) -> String {
    let header = |name: &str| headers.get(name).map(|v| v.to_str().unwrap().to_owned());
    log.lock().unwrap().push(Seen {
        method: method.to_string(),
        target: uri.path_and_query().map(ToString::to_string).unwrap_or_default(),
        content_type: header("content-type"),
        accept: header("accept"),
        trace: header("x_trace"),
        body: String::from_utf8(body.to_vec()).unwrap(),
    });
    "{}".to_owned()
}

struct Env {
    gateway: Gateway,
    log: Log,
    _server: tokio::task::JoinHandle<()>,
}

async fn env() -> Env {
    let log: Log = Arc::default();
    let app = Router::new().fallback(record).with_state(log.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let server = tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    let executor =
        Arc::new(HttpExecutor::new(&url, HttpOptions::default().auth(http_tools::Auth::None)).unwrap());
    let tools = executor.tools([RouteTable::from_toml_str(TABLE).unwrap()]).unwrap();
    let gateway = Gateway::builder().tools(tools).build().unwrap();
    Env { gateway, log, _server: server }
}

impl Env {
    async fn call(&self, params: Value) -> Envelope {
        let ctx = ToolContext::new(Caller::new("alice", "member"));
        self.gateway.execute(&ctx, "update_things", params, &CallOptions::default().retries(0)).await
    }

    /// The one request the last call made.
    fn take(&self) -> Seen {
        let mut log = self.log.lock().unwrap();
        assert_eq!(log.len(), 1, "one request per call: {log:?}");
        log.pop().unwrap()
    }
}

fn ok(envelope: &Envelope) {
    assert!(envelope.success, "{}", serde_json::to_string(envelope).unwrap());
}

#[tokio::test]
async fn a_write_without_a_request_body_sends_no_body_and_no_content_type() {
    let env = env().await;
    ok(&env.call(json!({"op": "cancel_batch", "batch_id": "batch_1"})).await);
    let seen = env.take();
    assert_eq!((seen.method.as_str(), seen.target.as_str()), ("POST", "/batches/batch_1/cancel"));
    assert_eq!(seen.body, "", "no `{{}}` body");
    assert_eq!(seen.content_type, None, "no Content-Type without a body");
    // A table that does not say `body` keeps what it did: the JSON object of its fields.
    ok(&env.call(json!({"op": "legacy_ping"})).await);
    let seen = env.take();
    assert_eq!((seen.body.as_str(), seen.content_type.as_deref()), ("{}", Some("application/json")));
}

#[tokio::test]
async fn query_fields_of_a_write_go_in_the_query_not_the_body() {
    let env = env().await;
    ok(&env.call(json!({"op": "seek", "position_ms": 25000, "device_id": "a b"})).await);
    let seen = env.take();
    assert_eq!(seen.method, "PUT");
    // `device_id` has no `in`: with `body = "none"` a write's plain fields go in the query too.
    assert_eq!(seen.target, "/me/player/seek?position_ms=25000&device_id=a%20b");
    assert_eq!((seen.body.as_str(), seen.content_type), ("", None));
    // Query and header fields of a write with a body stay out of the body.
    ok(&env.call(json!({"op": "post_tasks", "item": "file_1", "dry_run": true, "X_Trace": "t-1"})).await);
    let seen = env.take();
    assert_eq!(seen.target, "/tasks?dry_run=true");
    assert_eq!(seen.trace.as_deref(), Some("t-1"));
    assert_eq!(serde_json::from_str::<Value>(&seen.body).unwrap(), json!({"item": "file_1"}));
}

#[tokio::test]
async fn an_optional_body_is_sent_whole_or_not_at_all() {
    let env = env().await;
    // A body field without the body's required `item`: refused, naming it; nothing sent.
    let refused = env.call(json!({"op": "post_tasks", "message": "please review"})).await;
    assert!(!refused.success);
    let error = refused.error.as_ref().unwrap();
    assert_eq!(error.code, ErrorCode::InvalidParams);
    let text = serde_json::to_string(error).unwrap();
    assert!(text.contains("`item` is missing") && text.contains("`message`"), "{text}");
    assert!(text.contains("/item"), "the pointer names the missing field: {text}");
    assert!(env.log.lock().unwrap().is_empty(), "nothing was sent");
    // No body field at all: no body.
    ok(&env.call(json!({"op": "post_tasks", "dry_run": false})).await);
    let seen = env.take();
    assert_eq!(
        (seen.target.as_str(), seen.body.as_str(), seen.content_type),
        ("/tasks?dry_run=false", "", None)
    );
    // The whole body: sent.
    ok(&env.call(json!({"op": "post_tasks", "item": "file_1", "message": "please review"})).await);
    let seen = env.take();
    assert_eq!(
        serde_json::from_str::<Value>(&seen.body).unwrap(),
        json!({"item": "file_1", "message": "please review"})
    );
}

#[tokio::test]
async fn accept_names_the_documented_media_types_json_first() {
    let env = env().await;
    ok(&env.call(json!({"op": "login_user"})).await);
    assert_eq!(env.take().accept.as_deref(), Some("application/json, application/xml;q=0.5"));
    ok(&env.call(json!({"op": "cancel_batch", "batch_id": "b"})).await);
    assert_eq!(env.take().accept.as_deref(), Some("application/json"), "none documented: JSON");
}
