//! Faults of a real backend (a small axum server on 127.0.0.1:0): hangs, 5xx, a body that says
//! it is JSON and is not, redirects, refused connections. Only GET is tried again; a failed write is sent once.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{any, get};
use serde_json::{Value, json};
use toolgate_core::{Caller, ErrorCode, ToolContext};
use toolgate_gateway::{CallOptions, Gateway};
use toolgate_http::{HttpExecutor, HttpOptions};
use toolgate_schema::RouteTable;

/// What the test server saw.
#[derive(Default)]
struct Seen {
    hits: Mutex<HashMap<String, u32>>,
    last: Mutex<Option<Value>>,
}

impl Seen {
    fn hit(&self, key: &str) -> u32 {
        let mut hits = self.hits.lock().unwrap();
        let n = hits.entry(key.to_owned()).or_default();
        *n += 1;
        *n
    }

    fn hits(&self, key: &str) -> u32 {
        self.hits.lock().unwrap().get(key).copied().unwrap_or(0)
    }
}

async fn echo(
    State(seen): State<Arc<Seen>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    seen.hit("echo");
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok()).map(str::to_owned);
    let record = json!({
        "method": method.as_str(),
        "path": uri.path(),
        "query": uri.query(),
        "authorization": header("authorization"),
        "content_type": header("content-type"),
        "body": String::from_utf8_lossy(&body),
    });
    *seen.last.lock().unwrap() = Some(record.clone());
    axum::Json(record).into_response()
}

async fn flaky(State(seen): State<Arc<Seen>>, Path(key): Path<String>) -> Response {
    // The first request of each key fails, the next ones succeed.
    if seen.hit(&key) == 1 {
        (StatusCode::INTERNAL_SERVER_ERROR, "database is restarting").into_response()
    } else {
        axum::Json(json!({"key": key, "fine": true})).into_response()
    }
}

async fn failing(State(seen): State<Arc<Seen>>, method: Method) -> Response {
    seen.hit(&format!("fail-{method}"));
    (StatusCode::BAD_GATEWAY, "<html>upstream broke</html>").into_response()
}

async fn hang(State(seen): State<Arc<Seen>>, method: Method) -> Response {
    seen.hit(&format!("hang-{method}"));
    tokio::time::sleep(Duration::from_secs(60)).await;
    axum::Json(json!({"late": true})).into_response()
}

async fn spawn(app: Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("http://{addr}")
}

async fn server() -> (String, Arc<Seen>) {
    let seen = Arc::new(Seen::default());
    let app = Router::new()
        .route("/echo/{id}", any(echo))
        .route("/flaky/{key}", any(flaky))
        .route("/fail", any(failing))
        .route("/hang", any(hang))
        .route(
            "/text",
            get(|| async {
                ([(axum::http::header::CONTENT_TYPE, "application/json")], "plain text, not JSON")
            }),
        )
        .route("/page", get(|| async { axum::response::Html("<html><body>Signed in</body></html>") }))
        .route("/big", get(|| async { axum::Json(json!({"blob": "x".repeat(10_000)})) }))
        .route("/moved", get(|| async { Redirect::temporary("/echo/elsewhere") }))
        .with_state(seen.clone());
    (spawn(app).await, seen)
}

const READS: &str = r#"
tool = "query_things"
description = "Test reads."
domain = "test"

[[routes]]
op = "echo"
method = "GET"
path = "/echo/{id}"
summary = "Echo"
fields = [
  { name = "from", type = "string" },
  { name = "limit", type = "integer" },
  { name = "tags", type = "array", items = { type = "string" } },
]

[[routes]]
op = "flaky"
method = "GET"
path = "/flaky/{key}"
summary = "Fails once"

[[routes]]
op = "fail"
method = "GET"
path = "/fail"
summary = "Always 502"

[[routes]]
op = "hang"
method = "GET"
path = "/hang"
summary = "Never answers"

[[routes]]
op = "text"
method = "GET"
path = "/text"
summary = "Not JSON although it says so"

[[routes]]
op = "page_as_json"
method = "GET"
path = "/page"
summary = "The HTML page from an operation said to answer JSON"

[[routes]]
op = "page"
method = "GET"
path = "/page"
summary = "An HTML page"
accept = ["text/html"]

[[routes]]
op = "big"
method = "GET"
path = "/big"
summary = "Large"

[[routes]]
op = "moved"
method = "GET"
path = "/moved"
summary = "Redirects"
"#;

const WRITES: &str = r#"
tool = "update_things"
description = "Test writes."
domain = "test"

[[routes]]
op = "echo"
method = "POST"
path = "/echo/{id}"
summary = "Echo"
fields = [{ name = "name", type = "string" }, { name = "n", type = "number" }]

[[routes]]
op = "remove"
method = "DELETE"
path = "/echo/{id}"
summary = "Echo a delete"

[[routes]]
op = "flaky"
method = "POST"
path = "/flaky/{key}"
summary = "Fails once"

[[routes]]
op = "fail"
method = "POST"
path = "/fail"
summary = "Always 502"

[[routes]]
op = "hang"
method = "POST"
path = "/hang"
summary = "Never answers"
"#;

/// Idempotent writes: the gateway may retry this tool, the executor still marks PUT failures final.
const PUTS: &str = r#"
tool = "replace_things"
description = "Test idempotent writes."
domain = "test"

[[routes]]
op = "flaky"
method = "PUT"
path = "/flaky/{key}"
summary = "Fails once"
"#;

fn gateway(base: &str, timeout: Duration) -> Gateway {
    let options = HttpOptions::default()
        .timeout(timeout)
        .max_response_bytes(4096)
        .backend_name("the test API")
        .backend_id("test");
    let executor = Arc::new(HttpExecutor::new(base, options).unwrap());
    let tables = [READS, WRITES, PUTS].map(|t| RouteTable::from_toml_str(t).unwrap());
    Gateway::builder().tools(executor.tools(tables).unwrap()).build().unwrap()
}

fn ctx(token: &str) -> ToolContext {
    ToolContext::new(Caller::new("alice", "guest").with_credential("test", token))
}

async fn call(gw: &Gateway, tool: &str, params: Value, opts: CallOptions) -> toolgate_core::Envelope {
    gw.execute(&ctx("tok-alice"), tool, params, &opts).await
}

#[tokio::test]
async fn requests_carry_the_callers_token_the_query_and_the_body() {
    let (base, seen) = server().await;
    let gw = gateway(&base, Duration::from_secs(10));
    let read = json!({"op": "echo", "id": "a b", "from": "2026-01-01", "limit": 5, "tags": ["x", "y&z"]});
    let got = call(&gw, "query_things", read, CallOptions::default()).await;
    let result = got.result.clone().unwrap_or_else(|| panic!("{got:?}"));
    assert_eq!(result["ok"], true);
    assert_eq!(result["status"], 200);
    assert_eq!(result["method"], "GET");
    assert_eq!(result["path"], "/echo/a%20b");
    let seen_get = &result["payload"];
    assert_eq!(seen_get["path"], "/echo/a%20b");
    assert_eq!(seen_get["query"], "from=2026-01-01&limit=5&tags=x&tags=y%26z");
    let sent = seen.last.lock().unwrap().clone().unwrap();
    assert_eq!(sent["authorization"], "Bearer tok-alice", "the backend got the caller's token");
    assert_eq!(seen_get["authorization"], "Bearer [redacted]", "and repeating it shows none of it");
    assert_eq!(seen_get["body"], "", "GET sends no body");

    let write = json!({"op": "echo", "id": "7", "name": "squat", "n": 1.5});
    let got = gw.execute(&ctx("tok-bob"), "update_things", write, &CallOptions::default()).await;
    let seen_post = &got.result.as_ref().unwrap()["payload"];
    assert_eq!(seen_post["method"], "POST");
    assert_eq!(seen_post["query"], Value::Null);
    let sent = seen.last.lock().unwrap().clone().unwrap();
    assert_eq!(sent["authorization"], "Bearer tok-bob", "each call carries its own caller's token");
    assert_eq!(seen_post["authorization"], "Bearer [redacted]");
    assert_eq!(seen_post["content_type"], "application/json");
    let body: Value = serde_json::from_str(seen_post["body"].as_str().unwrap()).unwrap();
    assert_eq!(body, json!({"name": "squat", "n": 1.5}), "neither `op` nor path variables go in the body");

    let got = call(&gw, "update_things", json!({"op": "remove", "id": "7"}), CallOptions::default()).await;
    let seen_delete = &got.result.as_ref().unwrap()["payload"];
    assert_eq!(seen_delete["method"], "DELETE");
    assert_eq!(seen_delete["body"], "", "DELETE sends no body");
    assert_eq!(seen.hits("echo"), 3);
}

#[tokio::test]
async fn without_a_token_nothing_is_sent() {
    let (base, seen) = server().await;
    let gw = gateway(&base, Duration::from_secs(10));
    let callers = [
        Caller::new("anon", "guest"),
        Caller::new("anon", "guest").with_credential("test", "  "),
        // A credential made for another backend is never this one's.
        Caller::new("anon", "guest").with_credential("fitness", "fit_made-for-the-fitness-api"),
    ];
    for caller in callers {
        let got = gw
            .execute(
                &ToolContext::new(caller),
                "query_things",
                json!({"op": "echo", "id": "1"}),
                &CallOptions::default(),
            )
            .await;
        assert_eq!(got.code(), Some(ErrorCode::PermissionDenied), "{got:?}");
        let message = got.error.unwrap().message;
        assert!(message.contains("the test API needs a credential"), "{message}");
        assert!(message.contains("operator must configure") && message.contains("do not retry"), "{message}");
        assert!(!message.contains("fit_made"), "{message}");
        assert_eq!(got.metadata.attempts, 1, "not retried");
    }
    let bad = ctx("line\nbreak");
    let got =
        gw.execute(&bad, "query_things", json!({"op": "echo", "id": "1"}), &CallOptions::default()).await;
    assert_eq!(got.code(), Some(ErrorCode::PermissionDenied), "{got:?}");
    assert!(!serde_json::to_string(&got).unwrap().contains("line\\nbreak"), "the token is never echoed");
    assert_eq!(seen.hits("echo"), 0);
}

#[tokio::test]
async fn a_get_that_fails_once_succeeds_on_the_second_attempt() {
    let (base, seen) = server().await;
    let gw = gateway(&base, Duration::from_secs(10));
    let got = call(&gw, "query_things", json!({"op": "flaky", "key": "g"}), CallOptions::default()).await;
    assert!(got.success, "{got:?}");
    assert_eq!(got.metadata.attempts, 2);
    assert_eq!(got.result.unwrap()["payload"], json!({"key": "g", "fine": true}));
    assert_eq!(seen.hits("g"), 2);
}

#[tokio::test]
async fn a_failed_post_or_put_is_sent_once() {
    let (base, seen) = server().await;
    let gw = gateway(&base, Duration::from_secs(10));
    let got =
        call(&gw, "update_things", json!({"op": "flaky", "key": "p"}), CallOptions::default().retries(3))
            .await;
    assert_eq!(got.code(), Some(ErrorCode::ExecutionError), "{got:?}");
    assert_eq!(got.metadata.attempts, 1);
    let error = got.error.unwrap();
    assert!(error.message.contains("may or may not have been applied"), "{}", error.message);
    assert_eq!(error.details.as_ref().unwrap()["body"], "database is restarting");
    assert_eq!(seen.hits("p"), 1, "the POST reached the server once");

    let got = call(&gw, "update_things", json!({"op": "fail"}), CallOptions::default().retries(3)).await;
    assert_eq!((got.code(), got.metadata.attempts), (Some(ErrorCode::ExecutionError), 1));
    assert_eq!(seen.hits("fail-POST"), 1);

    // An idempotent tool may be retried by the gateway, but the executor says a PUT's 5xx is final.
    assert!(gw.spec("replace_things").unwrap().effect.is_retry_safe());
    let got =
        call(&gw, "replace_things", json!({"op": "flaky", "key": "u"}), CallOptions::default().retries(3))
            .await;
    assert_eq!((got.code(), got.metadata.attempts), (Some(ErrorCode::ExecutionError), 1));
    assert_eq!(seen.hits("u"), 1);

    // The same failure on a GET is tried again, up to the retries asked for.
    let got =
        call(&gw, "query_things", json!({"op": "fail"}), CallOptions::default().retries(2).retry_delay_ms(1))
            .await;
    // Every attempt failed the same way, so that failure is the answer, with the attempts.
    assert_eq!(got.code(), Some(ErrorCode::ExecutionError), "{got:?}");
    assert_eq!(got.metadata.attempts, 3);
    assert_eq!(got.error.unwrap().details.unwrap()["attempts"], 3);
    assert_eq!(seen.hits("fail-GET"), 3);
}

#[tokio::test]
async fn a_backend_that_hangs_is_a_timeout_within_the_configured_limit() {
    let (base, seen) = server().await;
    let gw = gateway(&base, Duration::from_millis(300));
    let started = Instant::now();
    let got = call(&gw, "query_things", json!({"op": "hang"}), CallOptions::default().retries(0)).await;
    assert_eq!(got.code(), Some(ErrorCode::Timeout), "{got:?}");
    let details = got.error.as_ref().unwrap().details.clone().unwrap();
    assert_eq!(details["timeout_ms"], 300, "the executor's limit answered: {details}");
    assert_eq!(details["path"], "/hang");

    let got = call(&gw, "update_things", json!({"op": "hang"}), CallOptions::default().retries(3)).await;
    assert_eq!(got.code(), Some(ErrorCode::Timeout), "{got:?}");
    assert_eq!(got.metadata.attempts, 1, "a write that timed out is not sent again");
    assert!(got.error.unwrap().message.contains("may or may not have been applied"));
    assert_eq!(seen.hits("hang-POST"), 1);

    // A GET is tried again by default; both attempts time out: TIMEOUT, with the attempts.
    let got = call(&gw, "query_things", json!({"op": "hang"}), CallOptions::default()).await;
    assert_eq!(got.code(), Some(ErrorCode::Timeout), "{got:?}");
    assert_eq!(got.metadata.attempts, 2);
    assert_eq!(got.error.unwrap().details.unwrap()["attempts"], 2);
    // Sanity, not a benchmark: nothing waited for the 60 s the server sleeps.
    assert!(started.elapsed() < Duration::from_secs(30));
}

#[tokio::test]
async fn a_shorter_call_timeout_cuts_the_request_short_and_the_executor_answers_it() {
    let (base, _seen) = server().await;
    let gw = gateway(&base, Duration::from_secs(30));
    let got =
        call(&gw, "query_things", json!({"op": "hang"}), CallOptions::default().retries(0).timeout_ms(300))
            .await;
    assert_eq!(got.code(), Some(ErrorCode::Timeout), "{got:?}");
    let details = got.error.unwrap().details.unwrap();
    assert_eq!(details["path"], "/hang", "the executor's own answer (it names the request): {details}");
    assert!(details["timeout_ms"].as_u64().unwrap() <= 300);
}

#[tokio::test]
async fn odd_answers_get_their_own_codes() {
    let (base, seen) = server().await;
    let gw = gateway(&base, Duration::from_secs(10));
    let got = call(&gw, "query_things", json!({"op": "text"}), CallOptions::default()).await;
    assert_eq!(got.code(), Some(ErrorCode::ParseError), "{got:?}");
    assert_eq!(got.metadata.attempts, 1);
    assert_eq!(got.error.unwrap().details.unwrap()["preview"], "plain text, not JSON");

    // Text that does not claim to be JSON (an HTML page), from an operation that documents
    // it (`accept`), is the answer, as text; from one that answers JSON it is not.
    let got = call(&gw, "query_things", json!({"op": "page_as_json"}), CallOptions::default()).await;
    assert_eq!(got.code(), Some(ErrorCode::ParseError), "{got:?}");
    let got = call(&gw, "query_things", json!({"op": "page"}), CallOptions::default()).await;
    assert!(got.success, "{got:?}");
    assert_eq!(
        got.result.unwrap()["payload"],
        json!({"content": "text", "media_type": "text/html", "chars": 35, "text": "<html><body>Signed in</body></html>"})
    );

    let got = call(&gw, "query_things", json!({"op": "big"}), CallOptions::default()).await;
    assert_eq!(got.code(), Some(ErrorCode::ExecutionError), "{got:?}");
    assert!(got.error.unwrap().message.contains("more than 4096 bytes"));

    let got = call(&gw, "query_things", json!({"op": "moved"}), CallOptions::default()).await;
    assert_eq!(got.code(), Some(ErrorCode::ExecutionError), "{got:?}");
    assert!(got.error.unwrap().message.contains("redirect"));
    assert_eq!(seen.hits("echo"), 0, "the redirect was not followed");
}

#[tokio::test]
async fn a_closed_port_is_unavailable_and_only_reads_are_tried_again() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    drop(listener);
    let gw = gateway(&base, Duration::from_secs(5));
    let got =
        call(&gw, "update_things", json!({"op": "echo", "id": "1"}), CallOptions::default().retries(3)).await;
    assert_eq!(got.code(), Some(ErrorCode::Unavailable), "{got:?}");
    assert_eq!(got.metadata.attempts, 1);
    assert!(got.error.unwrap().message.contains("nothing was sent"));
    let got =
        call(&gw, "query_things", json!({"op": "echo", "id": "1"}), CallOptions::default().retry_delay_ms(1))
            .await;
    // Down for every attempt: UNAVAILABLE at the top, and the model may try later.
    assert_eq!(got.code(), Some(ErrorCode::Unavailable), "{got:?}");
    assert_eq!(got.metadata.attempts, 2);
    assert_eq!(got.error.unwrap().details.unwrap()["retryable"], true);
}

#[tokio::test]
async fn a_base_url_with_a_prefix_keeps_it() {
    let seen = Arc::new(Seen::default());
    let app = Router::new().route("/api/v1/echo/{id}", any(echo)).with_state(seen.clone());
    let base = spawn(app).await;
    let gw = gateway(&format!("{base}/api/v1/"), Duration::from_secs(5));
    let got = call(&gw, "query_things", json!({"op": "echo", "id": "x/y"}), CallOptions::default()).await;
    let result = got.result.unwrap_or_else(|| panic!("{:?}", got.error));
    assert_eq!(result["path"], "/echo/x%2Fy");
    assert_eq!(result["payload"]["path"], "/api/v1/echo/x%2Fy");
}
