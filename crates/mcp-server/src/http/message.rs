//! Step 5 on `POST /mcp`: is the body one well-formed JSON-RPC 2.0 message?
//! Answered here as JSON-RPC errors with status 400, because rmcp answers
//! some of these with `415` or a plain-text `500`.

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

/// A JSON-RPC error answered at the HTTP layer, with status 400.
pub(super) fn rpc_error(id: Value, code: i32, message: &str) -> Response {
    let body = json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}});
    (StatusCode::BAD_REQUEST, Json(body)).into_response()
}

/// Whether the body is one well-formed JSON-RPC 2.0 message; its id when it is a request.
pub(super) fn check_message(message: &Value) -> Result<Option<Value>, (Value, i32, String)> {
    let Value::Object(map) = message else {
        let what = if message.is_array() {
            "batches are not supported; send one message per request"
        } else {
            "a JSON-RPC message is a JSON object"
        };
        return Err((Value::Null, -32600, what.to_owned()));
    };
    let id = map.get("id").cloned();
    let invalid = |why: &str| {
        Err((
            id.clone().filter(|i| i.is_string() || i.is_number()).unwrap_or(Value::Null),
            -32600,
            why.to_owned(),
        ))
    };
    if map.get("jsonrpc") != Some(&json!("2.0")) {
        return invalid("`jsonrpc` must be \"2.0\"");
    }
    if let Some(id) = &id
        && !(id.is_string() || id.is_i64() || id.is_u64())
    {
        return invalid("`id` must be a string or an integer");
    }
    match map.get("method") {
        Some(Value::String(_)) => {
            if map.get("params").is_some_and(|p| !p.is_object()) {
                return invalid("`params` must be an object");
            }
            Ok(id)
        }
        Some(_) => invalid("`method` must be a string"),
        None if id.is_some() && (map.contains_key("result") || map.contains_key("error")) => Ok(None),
        None => {
            invalid("a message needs a `method` (request, notification) or a `result`/`error` (response)")
        }
    }
}
