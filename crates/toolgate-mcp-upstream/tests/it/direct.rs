//! Tool calls to an HTTP upstream go out as toolgate's own POST (the direct path, not rmcp's
//! client): an rmcp server in process (stateless, JSON answers, an event stream when a tool
//! reports progress) that shows what each call carried, the MCP Python SDK's server
//! (`bench/sdk_upstream.py`, stateless and with sessions), and hand-written servers: one whose
//! tool asks a question on its event stream, one that forgets its session, one that closes a
//! call's stream before answering. The ids the servers saw prove which path a call took: the
//! direct path's start at 2^40, rmcp's own at 0.

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, JsonObject, ListToolsResult,
    NumberOrString, PaginatedRequestParams, ProgressNotificationParam, ServerCapabilities, ServerConfig,
    Tool,
};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use serde_json::{Value, json};
use toolgate_core::{Answer, Asker, ErrorCode, Question, Secret};
use toolgate_mcp_upstream::{IdentityMode, Transport, UpstreamConfig, Upstreams};

use crate::common::{Recorder, call, front, member, python};

/// The `initialize` result of a hand-written server named `name` (2025-11-25, tools only).
fn handshake(name: &str) -> Value {
    json!({"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
        "serverInfo": {"name": name, "version": "1"}})
}

/// A JSON-RPC answer to request `id`.
fn answer(id: &Value, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

/// A front gateway with `config`'s upstream connected.
async fn started(mut config: UpstreamConfig) -> (toolgate_gateway::Gateway, Upstreams) {
    config.connect_timeout = Duration::from_secs(10);
    let gateway = front();
    let upstreams = Upstreams::start(&gateway, vec![config]).await;
    assert!(upstreams.status()[0].connected, "{:?}", upstreams.status());
    (gateway, upstreams)
}

/// `router` served at `/mcp` on a free port of 127.0.0.1; its URL.
async fn serve(router: axum::Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, router).await });
    url
}

/// Shows each call what it carried; counts with progress; fails on request.
#[derive(Clone)]
struct Mirror;

impl ServerHandler for Mirror {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let open = json!({"type": "object", "properties": {"steps": {"type": "integer"}}});
        let Value::Object(open) = open else { unreachable!() };
        let open = Arc::<JsonObject>::new(open);
        let tools = ["mirror", "count_steps", "break_down", "refuse"]
            .map(|name| Tool::new(name, "A tool of the mirror.", open.clone()))
            .to_vec();
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let id = match &context.id {
            NumberOrString::Number(n) => json!(n),
            NumberOrString::String(s) => json!(s.as_ref()),
        };
        match request.name.as_ref() {
            "mirror" => {
                let parts = context.extensions.get::<axum::http::request::Parts>();
                let header = |name: &str| {
                    parts.and_then(|p| p.headers.get(name)).and_then(|v| v.to_str().ok()).map(str::to_owned)
                };
                let meta = serde_json::to_value(&context.meta).unwrap_or_default();
                Ok(CallToolResult::structured(json!({
                    "id": id,
                    "arguments": request.arguments,
                    "caller": meta.get(toolgate_mcp_upstream::CALLER_META_KEY),
                    "user": header("x-toolgate-user"),
                    "authorization": header("authorization"),
                    "version": header("mcp-protocol-version"),
                    "accept": header("accept"),
                }))
                .into())
            }
            "count_steps" => {
                let steps = request.arguments.as_ref().and_then(|a| a.get("steps")).and_then(Value::as_u64);
                let steps = steps.unwrap_or(3);
                if let Some(token) = context.meta.get_progress_token() {
                    for step in 1..=steps {
                        let mut report = ProgressNotificationParam::new(token.clone(), step as f64);
                        report.total = Some(steps as f64);
                        let _ = context.peer.notify_progress(report).await;
                        tokio::time::sleep(Duration::from_millis(60)).await;
                    }
                }
                Ok(CallToolResult::structured(json!({"counted": steps, "id": id})).into())
            }
            "break_down" => Ok(CallToolResult::error(vec![ContentBlock::text("the shelf is locked")]).into()),
            _ => Err(McpError::invalid_params("refused: no such shelf", None)),
        }
    }
}

/// The mirror, stateless with JSON answers, and a configuration for it.
async fn mirror() -> UpstreamConfig {
    let config =
        StreamableHttpServerConfig::default().with_legacy_session_mode(false).with_json_response(true);
    let service = StreamableHttpService::new(|| Ok(Mirror), Arc::new(LocalSessionManager::default()), config);
    let router = axum::Router::new().nest_service("/mcp", service);
    let url = serve(router).await;
    let mut config = UpstreamConfig::new(
        "mirror",
        Transport::Http { url, headers: vec![("Authorization".into(), Secret::new("Bearer upstream-key"))] },
    );
    config.read_only_tools = vec!["mirror".into(), "count_steps".into()];
    config.connect_timeout = Duration::from_secs(10);
    config
}

#[tokio::test]
async fn a_call_to_a_json_upstream_is_toolgates_own_post_carrying_what_rmcp_would() {
    let gateway = front();
    let mut meta = mirror().await;
    meta.identity = IdentityMode::Meta;
    let mut header = mirror().await;
    header.name = "mirror2".into();
    header.identity = IdentityMode::Header { user: "X-Toolgate-User".into(), role: None };
    let upstreams = Upstreams::start(&gateway, vec![meta, header]).await;
    assert!(upstreams.status().iter().all(|s| s.connected), "{:?}", upstreams.status());

    let ctx = member();
    let mut ids = Vec::new();
    for n in 0..3 {
        let envelope = call(&gateway, &ctx, "mirror__mirror", json!({"steps": n})).await;
        assert!(envelope.success, "{envelope:?}");
        let seen = envelope.result.unwrap();
        assert_eq!(seen["arguments"], json!({"steps": n}));
        assert_eq!(seen["caller"], json!({"user_id": "mia", "role": "member", "tenant": null}));
        assert_eq!(seen["user"], Value::Null, "no identity header in meta mode");
        assert_eq!(seen["authorization"], "Bearer upstream-key");
        assert_eq!(seen["version"], "2025-11-25");
        assert_eq!(seen["accept"], "text/event-stream, application/json");
        ids.push(seen["id"].as_i64().unwrap());
    }
    assert!(ids.iter().all(|id| *id >= 1 << 40), "every call took the direct path: {ids:?}");
    assert!(ids.windows(2).all(|w| w[1] == w[0] + 1), "{ids:?}");

    let envelope = call(&gateway, &ctx, "mirror2__mirror", json!({})).await;
    let seen = envelope.result.unwrap();
    assert_eq!(seen["user"], "mia");
    assert_eq!(seen["caller"], Value::Null, "no caller in _meta in header mode");
    assert!(seen["id"].as_i64().unwrap() >= 1 << 40);
}

#[tokio::test]
async fn progress_on_the_event_stream_of_a_direct_call_reaches_the_caller() {
    let (gateway, _upstreams) = started(mirror().await).await;
    let recorder = Recorder::new();
    let ctx = member().with_progress(recorder.clone());
    let envelope = call(&gateway, &ctx, "mirror__count_steps", json!({"steps": 3})).await;
    assert!(envelope.success, "{envelope:?}");
    let data = envelope.result.unwrap();
    assert_eq!(data["counted"], 3);
    assert!(data["id"].as_i64().unwrap() >= 1 << 40, "{data}");
    let reports = recorder.reports.lock().unwrap().clone();
    let progress: Vec<f64> = reports.iter().map(|r| r.0).collect();
    assert_eq!(progress, [1.0, 2.0, 3.0], "{reports:?}");
    assert!(reports.iter().all(|r| r.1 == Some(3.0)));
}

#[tokio::test]
async fn a_direct_calls_failures_read_as_the_upstream_meant_them() {
    let (gateway, _upstreams) = started(mirror().await).await;
    let ctx = member();
    let envelope = call(&gateway, &ctx, "mirror__break_down", json!({})).await;
    let error = envelope.error.unwrap();
    assert_eq!(error.code, ErrorCode::ExecutionError);
    assert_eq!(error.message, "the shelf is locked");
    let envelope = call(&gateway, &ctx, "mirror__refuse", json!({})).await;
    let error = envelope.error.unwrap();
    assert_eq!(error.code, ErrorCode::ExecutionError);
    assert_eq!(error.message, "the upstream refused the call: refused: no such shelf");
    // The connection is still the same: a refusal is no reason to reconnect.
    let envelope = call(&gateway, &ctx, "mirror__mirror", json!({})).await;
    assert!(envelope.success, "{envelope:?}");
}

/// `bench/sdk_upstream.py` on a free port, killed on drop; its URL.
struct Sdk(std::process::Child, String);

impl Drop for Sdk {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn sdk_upstream(python: &str, stateful: bool) -> Sdk {
    use std::io::BufRead;
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../../bench/sdk_upstream.py");
    let mut command = std::process::Command::new(python);
    command.arg(script).stdout(std::process::Stdio::piped());
    if stateful {
        command.arg("--stateful");
    }
    let mut child = command.spawn().unwrap();
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    let url = line.trim().rsplit(' ').next().unwrap().to_owned();
    assert!(url.starts_with("http://127.0.0.1:"), "{line}");
    Sdk(child, url)
}

#[tokio::test]
async fn the_python_sdks_json_server_answers_direct_calls_with_and_without_a_session() {
    let Some(python) = python() else { return };
    for stateful in [false, true] {
        let sdk = sdk_upstream(&python, stateful);
        let gateway = front();
        let mut config = UpstreamConfig::http("weather", sdk.1.clone());
        config.read_only_tools = vec!["query_weather".into()];
        config.connect_timeout = Duration::from_secs(20);
        let upstreams = Upstreams::start(&gateway, vec![config]).await;
        assert!(upstreams.status()[0].connected, "{:?}", upstreams.status());
        let ctx = member();
        for city in ["Oslo", "Lima", "Pune"] {
            let envelope = call(&gateway, &ctx, "weather__query_weather", json!({"city": city})).await;
            assert!(envelope.success, "stateful {stateful}: {envelope:?}");
            assert_eq!(envelope.result.unwrap()["city"], city);
        }
        drop(upstreams);
    }
}

/// A hand-written streamable HTTP server (2025-11-25): JSON answers, except that its one tool,
/// `ask_name`, answers on an event stream with an `elicitation/create` first, and sends the
/// tool result once the client has POSTed its answer. What that answer was is its result.
async fn questioner() -> String {
    use axum::body::{Body, Bytes};
    use axum::http::StatusCode;
    use axum::response::IntoResponse;
    type Waiting = Arc<std::sync::Mutex<Option<tokio::sync::oneshot::Sender<Value>>>>;
    let waiting: Waiting = Arc::default();
    let handle = move |body: axum::Json<Value>| {
        let waiting = waiting.clone();
        async move {
            let message = body.0;
            let id = message["id"].clone();
            let json = |value: Value| axum::Json(value).into_response();
            match message["method"].as_str() {
                Some("initialize") => json(answer(&id, handshake("questioner"))),
                Some("tools/list") => json(json!({"jsonrpc": "2.0", "id": id, "result": {"tools": [{
                    "name": "ask_name", "description": "Asks the user for a name.",
                    "inputSchema": {"type": "object"}}]}})),
                Some("tools/call") => {
                    let (tx, rx) = tokio::sync::oneshot::channel();
                    *waiting.lock().unwrap() = Some(tx);
                    let question = json!({"jsonrpc": "2.0", "id": "q-1", "method": "elicitation/create",
                        "params": {"mode": "form", "message": "What is your name?", "requestedSchema": {
                            "type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}}});
                    let first = format!("event: message\ndata: {question}\n\n");
                    let last = async move {
                        let answer = rx.await.unwrap_or(Value::Null);
                        let result = json!({"jsonrpc": "2.0", "id": id, "result": {
                            "content": [], "structuredContent": {"heard": answer, "call_id": id}}});
                        Ok::<_, std::io::Error>(Bytes::from(format!("event: message\ndata: {result}\n\n")))
                    };
                    let events =
                        futures::stream::iter([Ok(Bytes::from(first))]).chain(futures::stream::once(last));
                    ([("content-type", "text/event-stream")], Body::from_stream(events)).into_response()
                }
                None if id == "q-1" => {
                    if let Some(tx) = waiting.lock().unwrap().take() {
                        let _ = tx.send(message);
                    }
                    StatusCode::ACCEPTED.into_response()
                }
                None => StatusCode::ACCEPTED.into_response(),
                Some(_) => json(json!({"jsonrpc": "2.0", "id": id,
                    "error": {"code": -32601, "message": "method not found"}})),
            }
        }
    };
    let router = axum::Router::new().route("/mcp", axum::routing::post(handle));
    serve(router).await
}

/// Answers every question with the name Ada, and counts them.
#[derive(Default)]
struct Ada(std::sync::atomic::AtomicUsize);

#[toolgate_core::async_trait]
impl Asker for Ada {
    async fn ask(&self, question: &Question) -> Answer {
        assert_eq!(question.message, "What is your name?");
        self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        Answer::Accept(json!({"name": "Ada"}))
    }
}

#[tokio::test]
async fn a_question_on_a_direct_calls_event_stream_goes_to_the_person_and_back() {
    let (gateway, _upstreams) = started(UpstreamConfig::http("questions", questioner().await)).await;
    let ada = Arc::new(Ada::default());
    let envelope = call(&gateway, &member().with_asker(ada.clone()), "questions__ask_name", json!({})).await;
    assert!(envelope.success, "{envelope:?}");
    let result = envelope.result.unwrap();
    assert!(result["call_id"].as_i64().unwrap() >= 1 << 40, "the direct path: {result}");
    let heard = &result["heard"];
    assert_eq!(heard["id"], "q-1");
    assert_eq!(heard["result"]["action"], "accept", "{heard}");
    assert_eq!(heard["result"]["content"], json!({"name": "Ada"}));
    assert_eq!(ada.0.load(std::sync::atomic::Ordering::SeqCst), 1);

    // A caller whose client cannot be asked: the upstream hears an error, not a decline.
    let envelope = call(&gateway, &member(), "questions__ask_name", json!({})).await;
    let heard = &envelope.result.unwrap()["heard"];
    assert!(heard["error"]["message"].as_str().unwrap().contains("cannot put this question"), "{heard}");
}

/// A hand-written server with sessions and JSON answers that forgets its first session at the
/// first call (404, nothing run); each answer says which session and request id it ran under.
async fn forgetful() -> (String, Arc<std::sync::atomic::AtomicUsize>) {
    use axum::http::{HeaderMap, StatusCode};
    use axum::response::IntoResponse;
    use std::sync::atomic::{AtomicUsize, Ordering};
    let sessions = Arc::new(AtomicUsize::new(0));
    let runs = Arc::new(AtomicUsize::new(0));
    let counted = runs.clone();
    let handle = move |headers: HeaderMap, body: axum::Json<Value>| {
        let (sessions, runs) = (sessions.clone(), counted.clone());
        async move {
            let id = body.0["id"].clone();
            let session =
                headers.get("mcp-session-id").and_then(|v| v.to_str().ok()).unwrap_or("").to_owned();
            let json = |value: Value| axum::Json(value).into_response();
            match body.0["method"].as_str() {
                Some("initialize") => {
                    let n = sessions.fetch_add(1, Ordering::SeqCst) + 1;
                    let answer = answer(&id, handshake("forgetful"));
                    ([("mcp-session-id", format!("s-{n}"))], axum::Json(answer)).into_response()
                }
                _ if session == "s-1" && body.0["method"] == "tools/call" => {
                    StatusCode::NOT_FOUND.into_response()
                }
                Some("tools/list") => json(json!({"jsonrpc": "2.0", "id": id, "result": {"tools": [{
                    "name": "which_session", "description": "Says its session.", "inputSchema": {"type": "object"}}]}})),
                Some("tools/call") => {
                    runs.fetch_add(1, Ordering::SeqCst);
                    json(json!({"jsonrpc": "2.0", "id": id, "result": {
                        "content": [], "structuredContent": {"session": session, "id": id}}}))
                }
                None => StatusCode::ACCEPTED.into_response(),
                Some(_) => json(json!({"jsonrpc": "2.0", "id": id,
                    "error": {"code": -32601, "message": "method not found"}})),
            }
        }
    };
    let router = axum::Router::new().route(
        "/mcp",
        axum::routing::post(handle)
            .get(|| async { StatusCode::METHOD_NOT_ALLOWED })
            .delete(|| async { StatusCode::OK }),
    );
    let url = serve(router).await;
    (url, runs)
}

#[tokio::test]
async fn a_session_the_upstream_forgot_runs_nothing_and_the_call_goes_through_a_new_one() {
    let (url, runs) = forgetful().await;
    let (gateway, _upstreams) = started(UpstreamConfig::http("forgetful", url)).await;
    let ctx = member();
    // Refused unrun under s-1 on the direct path, then sent by rmcp, which opens s-2.
    let first = call(&gateway, &ctx, "forgetful__which_session", json!({})).await;
    assert!(first.success, "{first:?}");
    let first = first.result.unwrap();
    assert_eq!(first["session"], "s-2", "{first}");
    assert!(first["id"].as_i64().unwrap() < 1 << 40, "rmcp's own request: {first}");
    assert_eq!(runs.load(std::sync::atomic::Ordering::SeqCst), 1, "run once");
    // And the next call takes the direct path in the new session.
    let second = call(&gateway, &ctx, "forgetful__which_session", json!({})).await.result.unwrap();
    assert_eq!(second["session"], "s-2", "{second}");
    assert!(second["id"].as_i64().unwrap() >= 1 << 40, "{second}");
    assert_eq!(runs.load(std::sync::atomic::Ordering::SeqCst), 2);
}

/// A hand-written server that answers with event streams only (as the Python and TypeScript
/// SDKs do by default) and closes a call's stream after its first event (an id and a short
/// `retry`, SEP-1699); the answer comes on the stream resumed with `Last-Event-ID`.
async fn resumer() -> String {
    use axum::http::{HeaderMap, StatusCode};
    use axum::response::IntoResponse;
    type Pending = Arc<std::sync::Mutex<Option<Value>>>;
    let pending: Pending = Arc::default();
    let event_stream = |events: String| ([("content-type", "text/event-stream")], events).into_response();
    let held = pending.clone();
    let post = move |body: axum::Json<Value>| {
        let pending = held.clone();
        async move {
            let id = body.0["id"].clone();
            let on_stream = |result: Value| {
                let message = answer(&id, result);
                event_stream(format!("event: message\ndata: {message}\n\n"))
            };
            match body.0["method"].as_str() {
                Some("initialize") => on_stream(handshake("resumer")),
                Some("tools/list") => on_stream(json!({"tools": [{"name": "slow_answer",
                    "description": "Answers on a resumed stream.", "inputSchema": {"type": "object"}}]})),
                Some("tools/call") => {
                    *pending.lock().unwrap() = Some(id.clone());
                    event_stream("id: call-1\nretry: 50\ndata: \n\n".into())
                }
                // Notifications (no id) and answers are taken without a body.
                _ if id.is_null() || body.0.get("method").is_none() => StatusCode::ACCEPTED.into_response(),
                Some(_) => on_stream(json!({})),
                None => StatusCode::ACCEPTED.into_response(),
            }
        }
    };
    let get = move |headers: HeaderMap| {
        let pending = pending.clone();
        async move {
            let from = headers.get("last-event-id").and_then(|v| v.to_str().ok()).map(str::to_owned);
            let (Some(from), Some(id)) = (from, pending.lock().unwrap().take()) else {
                return StatusCode::METHOD_NOT_ALLOWED.into_response();
            };
            let result = json!({"jsonrpc": "2.0", "id": id, "result": {"content": [],
                "structuredContent": {"resumed_from": from, "call_id": id}}});
            event_stream(format!("id: call-2\nevent: message\ndata: {result}\n\n"))
        }
    };
    let router = axum::Router::new().route("/mcp", axum::routing::post(post).get(get));
    serve(router).await
}

#[tokio::test]
async fn an_event_stream_closed_before_the_answer_is_resumed_from_its_last_event() {
    let (gateway, _upstreams) = started(UpstreamConfig::http("resumer", resumer().await)).await;
    for _ in 0..2 {
        let envelope = call(&gateway, &member(), "resumer__slow_answer", json!({})).await;
        assert!(envelope.success, "{envelope:?}");
        let result = envelope.result.unwrap();
        assert_eq!(result["resumed_from"], "call-1", "{result}");
        assert!(result["call_id"].as_i64().unwrap() >= 1 << 40, "the direct path: {result}");
    }
}

/// A hand-written server (2025-11-25, JSON answers) whose tools answer a call with an HTTP
/// status instead of a result: `limit` 429 with `Retry-After: 7`, `reject` 400, `crash` 500,
/// `accept` 202, `moved` 307 to `/elsewhere` (which counts every request it gets); `ok` a
/// result. Each call it sees is counted by tool.
async fn statuses() -> (String, Arc<std::sync::Mutex<Vec<String>>>) {
    use axum::http::StatusCode;
    use axum::response::IntoResponse;
    let seen: Arc<std::sync::Mutex<Vec<String>>> = Arc::default();
    let log = seen.clone();
    let handle = move |body: axum::Json<Value>| {
        let log = log.clone();
        async move {
            let id = body.0["id"].clone();
            let json = |value: Value| axum::Json(value).into_response();
            match body.0["method"].as_str() {
                Some("initialize") => json(answer(&id, handshake("statuses"))),
                Some("tools/list") => {
                    let tools: Vec<Value> = ["limit", "reject", "crash", "accept", "moved", "ok"]
                        .iter()
                        .map(|name| json!({"name": name, "description": "A status.", "inputSchema": {"type": "object"}}))
                        .collect();
                    json(json!({"jsonrpc": "2.0", "id": id, "result": {"tools": tools}}))
                }
                Some("tools/call") => {
                    let name = body.0["params"]["name"].as_str().unwrap_or_default().to_owned();
                    log.lock().unwrap().push(name.clone());
                    match name.as_str() {
                        "limit" => (StatusCode::TOO_MANY_REQUESTS, [("retry-after", "7")], "slow down")
                            .into_response(),
                        "reject" => (StatusCode::BAD_REQUEST, "body-of-the-400").into_response(),
                        "crash" => (StatusCode::INTERNAL_SERVER_ERROR, "body-of-the-500").into_response(),
                        "accept" => StatusCode::ACCEPTED.into_response(),
                        "moved" => {
                            (StatusCode::TEMPORARY_REDIRECT, [("location", "/elsewhere")]).into_response()
                        }
                        _ => json(json!({"jsonrpc": "2.0", "id": id, "result": {
                            "content": [], "structuredContent": {"fine": true}}})),
                    }
                }
                None => StatusCode::ACCEPTED.into_response(),
                Some(_) if id.is_null() => StatusCode::ACCEPTED.into_response(),
                Some(_) => json(json!({"jsonrpc": "2.0", "id": id,
                    "error": {"code": -32601, "message": "method not found"}})),
            }
        }
    };
    let elsewhere = seen.clone();
    let router = axum::Router::new()
        .route("/mcp", axum::routing::post(handle).get(|| async { StatusCode::METHOD_NOT_ALLOWED }))
        .route(
            "/elsewhere",
            axum::routing::any(move || {
                elsewhere.lock().unwrap().push("elsewhere".into());
                async { StatusCode::OK }
            }),
        );
    (serve(router).await, seen)
}

#[tokio::test]
async fn http_statuses_answering_a_direct_call_say_whether_it_ran_and_what_to_do() {
    let (url, seen) = statuses().await;
    let mut config = UpstreamConfig::new(
        "statuses",
        Transport::Http { url, headers: vec![("Authorization".into(), Secret::new("Bearer upstream-key"))] },
    );
    config.read_only_tools = ["limit", "reject", "crash", "accept", "moved", "ok"].map(String::from).to_vec();
    let (gateway, _upstreams) = started(config).await;
    let ctx = member();
    let error = |envelope: toolgate_core::Envelope| envelope.error.unwrap_or_else(|| panic!("succeeded"));

    let limited = error(call(&gateway, &ctx, "statuses__limit", json!({})).await);
    assert_eq!(limited.code, ErrorCode::Unavailable);
    assert!(
        limited.message.contains("HTTP 429") && limited.message.contains("in 7 s"),
        "{}",
        limited.message
    );
    assert_eq!(limited.details.as_ref().unwrap()["retry_after"], "7");

    let rejected = error(call(&gateway, &ctx, "statuses__reject", json!({})).await);
    assert_eq!(rejected.code, ErrorCode::ExecutionError);
    assert!(
        rejected.message.contains("HTTP 400") && rejected.message.contains("Do not retry"),
        "{}",
        rejected.message
    );
    assert!(!rejected.message.contains("body-of"), "the body is not passed on: {}", rejected.message);

    let crashed = error(call(&gateway, &ctx, "statuses__crash", json!({})).await);
    assert_eq!(crashed.code, ErrorCode::Unavailable);
    assert!(crashed.message.contains("answered HTTP 500"), "{}", crashed.message);
    assert!(crashed.message.contains("This read changed nothing"), "{}", crashed.message);
    assert!(
        !crashed.message.contains("body-of") && !crashed.message.contains("reconnected"),
        "{}",
        crashed.message
    );

    let accepted = error(call(&gateway, &ctx, "statuses__accept", json!({})).await);
    assert_eq!(accepted.code, ErrorCode::ExecutionError);
    assert!(accepted.message.contains("not a tool result"), "{}", accepted.message);

    // A redirect is not followed: the configured key never goes to another address.
    let moved = error(call(&gateway, &ctx, "statuses__moved", json!({})).await);
    assert_eq!(moved.code, ErrorCode::ExecutionError);
    assert!(moved.message.contains("HTTP 307"), "{}", moved.message);

    // None of them tore the connection down: the next call is answered on it.
    let envelope = call(&gateway, &ctx, "statuses__ok", json!({})).await;
    assert_eq!(envelope.result.unwrap()["fine"], true);
    // A refusal is not retried; the limit and the failure are (these are reads, and both
    // are transient), by the gateway's read policy.
    let seen = seen.lock().unwrap().clone();
    let once = [("reject", 1), ("accept", 1), ("moved", 1), ("ok", 1), ("elsewhere", 0)];
    for (name, times) in once.into_iter().chain([("limit", 2), ("crash", 2)]) {
        assert_eq!(seen.iter().filter(|s| *s == name).count(), times, "{name}: {seen:?}");
    }
}
