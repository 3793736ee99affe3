//! JSON-RPC batches, which MCP 2025-03-26 says a server must accept (later
//! revisions removed them; rmcp does not take them): split, each message run
//! on the path of a single one, the answers gathered into one array.

use std::future::Future;
use std::pin::Pin;

use axum::body::Body;
use axum::extract::Request;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use super::SESSION_HEADER;

/// The one revision whose clients may send JSON-RPC batches; later ones removed them.
const BATCH_REVISION: &str = "2025-03-26";

/// Whether a POST may be a batch: its `mcp-protocol-version` header names
/// [`BATCH_REVISION`], and it is sent in a session (or there are no
/// sessions). `initialize`, which opens the session, is never batched.
pub(super) fn allowed(headers: &axum::http::HeaderMap, stateless: bool) -> bool {
    headers.get("mcp-protocol-version").is_some_and(|v| v.as_bytes() == BATCH_REVISION.as_bytes())
        && (stateless || headers.contains_key(SESSION_HEADER))
}

/// A batch (MCP 2025-03-26): each message goes through `one` (the path of a
/// single message) on its own, one after another, as if it had come in a
/// POST of its own with the same headers; the answers to its requests come back as one JSON array
/// (an SSE answer gives its final response), and a batch without requests
/// is answered 202 with no body.
pub(super) async fn answer<'a>(
    parts: &axum::http::request::Parts,
    items: Vec<Value>,
    one: impl Fn(Request) -> Pin<Box<dyn Future<Output = Response> + Send + 'a>>,
) -> Response {
    let mut answers = Vec::with_capacity(items.len());
    for item in items {
        let id = item.get("id").filter(|id| id.is_string() || id.is_number()).cloned();
        let method = item.get("method").and_then(Value::as_str);
        if !item.is_object() {
            let why = "invalid request: each message of a batch is a JSON-RPC message (a JSON object)";
            answers.push(error_entry(Value::Null, -32600, why));
            continue;
        }
        if method == Some("initialize") {
            let why = "invalid request: `initialize` cannot be sent in a batch; send it alone";
            answers.push(error_entry(id.unwrap_or_default(), -32600, why));
            continue;
        }
        let is_request = id.is_some() && method.is_some();
        let mut request = Request::new(Body::from(item.to_string()));
        *request.method_mut() = parts.method.clone();
        *request.uri_mut() = parts.uri.clone();
        *request.version_mut() = parts.version;
        *request.headers_mut() = parts.headers.clone();
        request.headers_mut().remove(header::CONTENT_LENGTH);
        *request.extensions_mut() = parts.extensions.clone();
        let response = one(request).await;
        if response.status() == StatusCode::NOT_FOUND {
            // The session is gone: so is the rest of the batch.
            return response;
        }
        let sse = response
            .headers()
            .get(header::CONTENT_TYPE)
            .is_some_and(|v| v.as_bytes().starts_with(b"text/event-stream"));
        let body = axum::body::to_bytes(response.into_body(), usize::MAX).await.unwrap_or_default();
        let answer = if sse {
            final_response(&body)
        } else {
            serde_json::from_slice::<Value>(&body).ok().filter(Value::is_object)
        };
        match answer {
            Some(answer) => answers.push(answer),
            None if is_request => answers.push(error_entry(
                id.unwrap_or_default(),
                -32603,
                "internal error: this request of the batch got no answer; send it again on its own",
            )),
            None => {}
        }
    }
    if answers.is_empty() {
        return StatusCode::ACCEPTED.into_response();
    }
    let mut response = (StatusCode::OK, axum::Json(Value::Array(answers))).into_response();
    if let Some(session) = parts.headers.get(SESSION_HEADER) {
        response.headers_mut().insert(SESSION_HEADER, session.clone());
    }
    response
}

fn error_entry(id: Value, code: i32, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

/// The last JSON-RPC response (an id, no method) in an SSE body.
fn final_response(body: &[u8]) -> Option<Value> {
    let text = String::from_utf8_lossy(body).replace("\r\n", "\n");
    text.split("\n\n")
        .filter_map(|event| {
            let data: Vec<&str> = event
                .lines()
                .filter_map(|line| line.strip_prefix("data:"))
                .map(|d| d.strip_prefix(' ').unwrap_or(d))
                .collect();
            serde_json::from_str::<Value>(&data.join("\n")).ok()
        })
        .filter(|m| m.get("id").is_some() && m.get("method").is_none())
        .last()
}
