//! Tasks as 2025-11-25 defines them: a `tools/call` that carries
//! `params.task` becomes a task (`{"task": {...}}`), polled with `tasks/get`,
//! read with `tasks/result` (which waits for the end), listed with
//! `tasks/list` and ended with `tasks/cancel`; `initialize` advertises the
//! `tasks` capability and `tools/list` marks the tools that may run as tasks
//! (`execution.taskSupport: "optional"`).
//!
//! rmcp models only the 2026-07-28 extension: it drops `params.task`,
//! `capabilities.tasks` and `execution`, and answers `tasks/get` in the later
//! shape. So these requests are answered on the HTTP path, before rmcp
//! ([`answer`]), and the two answers that advertise them are amended after it
//! ([`amend`]). Only requests whose `MCP-Protocol-Version` is 2025-11-25 are
//! touched; the store, the ownership and the bounds are [`super::Tasks`]'s.

use std::sync::Arc;
use std::time::Duration;

use axum::http::request::Parts;
use axum::response::{IntoResponse, Response};
use rmcp::model::Extensions;
use serde_json::{Map, Value, json};

use super::{Refused, Snapshot, State, Tasks};
use crate::McpServer;

/// The one revision whose tasks this module speaks.
const REVISION: &str = "2025-11-25";
const RELATED_TASK: &str = "io.modelcontextprotocol/related-task";

/// Whether the request speaks 2025-11-25 (its `MCP-Protocol-Version`).
pub(crate) fn legacy(parts: &Parts) -> bool {
    parts.headers.get("mcp-protocol-version").is_some_and(|v| v.as_bytes() == REVISION.as_bytes())
}

fn rpc(id: &Value, outcome: Result<Value, (i32, String)>) -> Response {
    let body = match outcome {
        Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
        Err((code, message)) => {
            json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
        }
    };
    axum::Json(body).into_response()
}

fn refusal(why: Refused) -> (i32, String) {
    let code = if why == Refused::NotFound { -32602 } else { -32600 };
    (code, why.to_string())
}

/// The rmcp-shaped extensions the handler reads the caller from.
fn extensions(parts: &Parts) -> Extensions {
    let mut extensions = Extensions::new();
    extensions.insert(parts.clone());
    extensions
}

/// Answer a 2025-11-25 task request here, or `None` to let rmcp answer it.
pub(crate) async fn answer(
    server: &McpServer,
    parts: &Parts,
    bytes: &[u8],
    id: Option<&Value>,
    method: Option<&str>,
) -> Option<Response> {
    let (Some(id), Some(method)) = (id, method) else { return None };
    if !legacy(parts) || !(method == "tools/call" || method.starts_with("tasks/")) {
        return None;
    }
    // Cheap before parsing: a call without the word is a plain call.
    if method == "tools/call" && !bytes.windows(6).any(|w| w == b"\"task\"") {
        return None;
    }
    let request: Value = serde_json::from_slice(bytes).ok()?;
    let params = request.get("params").cloned().unwrap_or(Value::Object(Map::new()));
    let tasks = server.tasks().clone();
    let extensions = extensions(parts);
    let owner = match super::run::owner(server, &extensions) {
        Ok(owner) => owner,
        Err(error) => return Some(rpc(id, Err((error.code.0, error.message.into_owned())))),
    };
    let task_id = params.get("taskId").and_then(Value::as_str).unwrap_or_default();
    let outcome = match method {
        "tools/call" => {
            params.get("task").filter(|t| t.is_object())?;
            let name = params.get("name").and_then(Value::as_str)?;
            let args = params.get("arguments").cloned().unwrap_or(Value::Object(Map::new()));
            let target = super::run::target(server, name, &args)?;
            if !server.gateway().spec(&target).is_some_and(|s| super::run::is_long_running(&s)) {
                return None;
            }
            let caller = match server.caller(&extensions) {
                Ok(caller) => caller,
                Err(error) => return Some(rpc(id, Err((error.code.0, error.message.into_owned())))),
            };
            match super::run::spawn(server, &tasks, &owner, caller, name.to_owned(), args) {
                Ok(snapshot) => Ok(json!({"task": task(&snapshot)})),
                Err(why) => Err(refusal(why)),
            }
        }
        "tasks/get" => tasks.get(&owner, task_id).map(|s| task(&s)).map_err(refusal),
        "tasks/list" => Ok(json!({"tasks": tasks.list(&owner).iter().map(task).collect::<Vec<_>>()})),
        "tasks/cancel" => match tasks.get(&owner, task_id) {
            Ok(s) if !matches!(s.state, State::Working) => Err((
                -32602,
                format!("task {task_id} has already ended ({}); it cannot be cancelled", status(&s.state)),
            )),
            Ok(_) => tasks.cancel(&owner, task_id).map(|s| task(&s)).map_err(refusal),
            Err(why) => Err(refusal(why)),
        },
        "tasks/result" => result(&tasks, &owner, task_id).await,
        _ => return None,
    };
    Some(rpc(id, outcome))
}

/// `tasks/result`: waits for the task to end, then its call's result (with
/// the related-task `_meta`), or the error that ended it.
async fn result(tasks: &Arc<Tasks>, owner: &str, id: &str) -> Result<Value, (i32, String)> {
    let mut ended = tasks.ended();
    loop {
        let snapshot = tasks.get(owner, id).map_err(refusal)?;
        match snapshot.state {
            State::Working => {
                // Checked again at least every second, in case it expired meanwhile.
                let _ = tokio::time::timeout(Duration::from_secs(1), ended.changed()).await;
            }
            State::Completed(mut result) => {
                result.insert("_meta".into(), json!({RELATED_TASK: {"taskId": id}}));
                return Ok(Value::Object(result));
            }
            State::Failed(error) => {
                let code = error.get("code").and_then(Value::as_i64).unwrap_or(-32603) as i32;
                let message = error.get("message").and_then(Value::as_str).unwrap_or("the task failed");
                return Err((code, message.to_owned()));
            }
            State::Cancelled => {
                return Err((-32800, format!("task {id} was cancelled; it has no result")));
            }
        }
    }
}

fn status(state: &State) -> &'static str {
    match state {
        State::Working => "working",
        State::Completed(_) => "completed",
        State::Failed(_) => "failed",
        State::Cancelled => "cancelled",
    }
}

/// A task as 2025-11-25 writes it.
fn task(snapshot: &Snapshot) -> Value {
    let base = super::run::task_of(snapshot);
    json!({
        "taskId": base.task_id,
        "status": status(&snapshot.state),
        "statusMessage": base.status_message,
        "createdAt": base.created_at,
        "lastUpdatedAt": base.last_updated_at,
        "ttl": base.ttl_ms,
        "pollInterval": base.poll_interval_ms,
    })
}

/// Amend rmcp's answer to a 2025-11-25 `initialize` (the `tasks` capability)
/// or `tools/list` (`execution.taskSupport` on tools that may run as tasks).
/// `None`: leave the answer as it is.
pub(crate) fn amend(server: &McpServer, legacy_request: bool, method: &str, body: &[u8]) -> Option<Vec<u8>> {
    let mut answer: Value = serde_json::from_slice(body).ok()?;
    let result = answer.get_mut("result")?.as_object_mut()?;
    match method {
        "initialize" if result.get("protocolVersion").and_then(Value::as_str) == Some(REVISION) => {
            let capabilities = result.get_mut("capabilities")?.as_object_mut()?;
            capabilities.insert(
                "tasks".into(),
                json!({"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}),
            );
        }
        "tools/list" if legacy_request => {
            let mut changed = false;
            for tool in result.get_mut("tools")?.as_array_mut()? {
                let Some(name) = tool.get("name").and_then(Value::as_str) else { continue };
                if server.gateway().spec(name).is_some_and(|s| super::run::is_long_running(&s)) {
                    tool.as_object_mut()?.insert("execution".into(), json!({"taskSupport": "optional"}));
                    changed = true;
                }
            }
            if !changed {
                return None;
            }
        }
        _ => return None,
    }
    serde_json::to_vec(&answer).ok()
}

/// An event stream with each `data:` line `amend` changes replaced; `None`
/// when it changed none.
pub(crate) fn amend_events(body: &[u8], amend: impl Fn(&[u8]) -> Option<Vec<u8>>) -> Option<Vec<u8>> {
    let text = std::str::from_utf8(body).ok()?;
    let mut out = Vec::with_capacity(body.len() + 128);
    let mut changed = false;
    for line in text.split_inclusive('\n') {
        let content = line.trim_end_matches(['\r', '\n']);
        let end = &line[content.len()..];
        match content.strip_prefix("data:").and_then(|data| amend(data.trim_start().as_bytes())) {
            Some(new) => {
                out.extend_from_slice(b"data: ");
                out.extend_from_slice(&new);
                out.extend_from_slice(end.as_bytes());
                changed = true;
            }
            None => out.extend_from_slice(line.as_bytes()),
        }
    }
    changed.then_some(out)
}
