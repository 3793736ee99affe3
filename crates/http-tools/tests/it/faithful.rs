//! Tables imported from real APIs, sent as those APIs expect: a `null` of a nullable body field
//! is sent as JSON `null` (DigitalOcean `tags: null`) and an optional query `null` is not sent;
//! a path variable renamed for the model (`user_id` → `target_user_id`) fills the same path.
//! A real axum server on 127.0.0.1:0 records the exact target and body of every request.

use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{Method, Uri};
use gateway::{CallOptions, Gateway};
use http_tools::{HttpExecutor, HttpOptions};
use schema_gen::RouteTable;
use serde_json::{Value, json};
use tool_core::{Caller, Envelope, ToolContext};

const READS: &str = r#"
tool = "query_real"
description = "Reads of tables imported from real APIs."
domain = "real"

[[routes]]
op = "list_user_posts"
method = "GET"
path = "/users/{target_user_id}/posts"
summary = "The posts of one user (a path `user_id` renamed for the model)"
fields = [
  { name = "target_user_id", type = "string", required = true },
  { name = "page", type = "integer", nullable = true },
]
"#;

const WRITES: &str = r#"
tool = "update_real"
description = "Writes of tables imported from real APIs."
domain = "real"

[[routes]]
op = "create_droplet"
method = "POST"
path = "/v2/droplets"
summary = "A DigitalOcean-like create whose tags may be null"
fields = [
  { name = "name", type = "string", required = true },
  { name = "tags", type = "array", items = { type = "string" }, nullable = true },
  { name = "dry_run", type = "boolean", in = "query", nullable = true },
]
"#;

/// One request as the backend received it: method, path and query, body.
type Log = Arc<Mutex<Vec<(String, String, String)>>>;

async fn record(State(log): State<Log>, method: Method, uri: Uri, body: Bytes) -> String {
    let target = uri.path_and_query().map(ToString::to_string).unwrap_or_default();
    log.lock().unwrap().push((method.to_string(), target, String::from_utf8(body.to_vec()).unwrap()));
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
    let tables = [READS, WRITES].map(|t| RouteTable::from_toml_str(t).unwrap());
    let gateway = Gateway::builder().tools(executor.tools(tables).unwrap()).build().unwrap();
    Env { gateway, log, _server: server }
}

impl Env {
    async fn call(&self, tool: &str, params: Value) -> Envelope {
        let ctx = ToolContext::new(Caller::new("alice", "member"));
        self.gateway.execute(&ctx, tool, params, &CallOptions::default().retries(0)).await
    }

    /// The one request the last call made: method, target, body.
    fn take(&self) -> (String, String, String) {
        let mut log = self.log.lock().unwrap();
        assert_eq!(log.len(), 1, "one request per call: {log:?}");
        log.pop().unwrap()
    }
}

fn ok(envelope: &Envelope) {
    assert!(envelope.success, "{}", serde_json::to_string(envelope).unwrap());
}

#[tokio::test]
async fn a_null_body_field_is_sent_as_null_and_a_null_query_field_is_not_sent() {
    let env = env().await;
    ok(&env
        .call("update_real", json!({"op": "create_droplet", "name": "web-1", "tags": null, "dry_run": null}))
        .await);
    let (method, target, body) = env.take();
    assert_eq!(
        (method.as_str(), target.as_str()),
        ("POST", "/v2/droplets"),
        "a null query field is not given"
    );
    assert_eq!(body, r#"{"name":"web-1","tags":null}"#, "null is sent, not dropped");
    ok(&env
        .call("update_real", json!({"op": "create_droplet", "name": "web-1", "tags": ["a"], "dry_run": true}))
        .await);
    let (_, target, body) = env.take();
    assert_eq!(
        (target.as_str(), body.as_str()),
        ("/v2/droplets?dry_run=true", r#"{"name":"web-1","tags":["a"]}"#)
    );
}

#[tokio::test]
async fn a_renamed_path_variable_fills_the_same_path_and_the_caller_field_is_still_refused() {
    let env = env().await;
    ok(&env
        .call("query_real", json!({"op": "list_user_posts", "target_user_id": "u 1", "page": null}))
        .await);
    assert_eq!(env.take().1, "/users/u%201/posts");
    let refused = env.call("query_real", json!({"op": "list_user_posts", "user_id": "u1"})).await;
    assert!(!refused.success, "`user_id` is the caller's, never a parameter");
    assert!(env.log.lock().unwrap().is_empty(), "nothing was sent");
}
