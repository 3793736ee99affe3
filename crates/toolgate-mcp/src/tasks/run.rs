//! The MCP side of tasks: which `tools/call` becomes a task, running it
//! detached from its request, and the answers of `tasks/get`,
//! `tasks/cancel` and `tasks/update` (2026-07-28 tasks extension, as rmcp
//! models it).

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use rmcp::ErrorData as McpError;
use rmcp::model::{
    CallToolRequestParams, CreateTaskResult, DetailedTask, Extensions, GetTaskResult, JsonObject,
    ProtocolVersion, Task, TaskPayload, TaskStatus,
};
use rmcp::service::{RequestContext, RoleServer};
use serde_json::Value;
use toolgate_core::{ToolContext, ToolSpec};

use super::{Refused, Snapshot, State, Tasks};
use crate::McpServer;

/// The tag of a tool that can run long enough to be worth a task
/// (`plan_itinerary`); every skill's `run_<skill>` (tag `skill`) is one too.
pub const LONG_RUNNING_TAG: &str = "long_running";

/// Whether calls of this tool may become tasks.
pub(crate) fn is_long_running(spec: &ToolSpec) -> bool {
    spec.tags.iter().any(|t| t == LONG_RUNNING_TAG || t == "skill")
}

/// Whether this `tools/call` becomes a task: a 2026-07-28 request whose
/// client declared the tasks extension, for a tool that can run long (in
/// meta mode, the tool `execute_tool` names). Anything else is the plain call.
pub(crate) fn wanted(
    server: &McpServer,
    request: &CallToolRequestParams,
    context: &RequestContext<RoleServer>,
) -> bool {
    if !context.protocol_version().is_some_and(|v| v >= ProtocolVersion::V_2026_07_28) {
        return false;
    }
    if !context.client_capabilities().is_some_and(|caps| caps.supports_tasks()) {
        return false;
    }
    let args = request.arguments.as_ref().map(|a| Value::Object(a.clone()));
    target(server, &request.name, args.as_ref().unwrap_or(&Value::Null))
        .and_then(|name| server.gateway().spec(&name))
        .is_some_and(|spec| is_long_running(&spec))
}

/// The tool a `tools/call` of `name` runs: itself in direct mode, the one
/// `execute_tool` names in meta mode.
pub(super) fn target(server: &McpServer, name: &str, args: &Value) -> Option<String> {
    if server.exposure().is_direct() {
        Some(name.to_owned())
    } else if name == toolgate_gateway::EXECUTE_TOOL {
        args.get("tool_name").and_then(Value::as_str).map(str::to_owned)
    } else {
        None
    }
}

/// Whom a task belongs to: the principal of the request (API key id,
/// token subject), or the fixed caller's user (stdio).
pub(super) fn owner(server: &McpServer, extensions: &Extensions) -> Result<String, McpError> {
    if let Some(caller) = server.fixed_caller() {
        return Ok(format!("fixed:{}", caller.user_id));
    }
    extensions
        .get::<axum::http::request::Parts>()
        .and_then(|p| p.extensions.get::<crate::handler::Authenticated>())
        .map(|a| a.principal.clone())
        .ok_or_else(|| {
            McpError::invalid_request(
                "this request carries no authenticated caller; send `Authorization: Bearer <key>`",
                None,
            )
        })
}

/// A refusal as the JSON-RPC error the spec names: an unknown task is an
/// invalid parameter (-32602); a full store is an invalid request.
fn refusal(why: Refused) -> McpError {
    match why {
        Refused::NotFound => McpError::invalid_params(why.to_string(), None),
        Refused::OwnerFull(_) | Refused::ServerFull(_) => McpError::invalid_request(why.to_string(), None),
    }
}

/// Start the call as a task of the caller's principal and answer its handle.
/// The call runs on its own; `tasks/cancel` drops it (the gateway's
/// cancellation: the tool's future goes with it and the trace says so).
pub(crate) fn start(
    server: &McpServer,
    tasks: &Arc<Tasks>,
    request: CallToolRequestParams,
    mut context: RequestContext<RoleServer>,
) -> Result<CreateTaskResult, McpError> {
    let owner = owner(server, &context.extensions)?;
    let caller = server.take_caller(&mut context.extensions)?;
    let args = Value::Object(request.arguments.unwrap_or_default());
    let snapshot = spawn(server, tasks, &owner, caller, request.name.into_owned(), args).map_err(refusal)?;
    Ok(CreateTaskResult::new(task_of(&snapshot)))
}

/// Create `owner`'s task for the call of `name` and run the call on its own.
pub(super) fn spawn(
    server: &McpServer,
    tasks: &Arc<Tasks>,
    owner: &str,
    caller: toolgate_core::Caller,
    name: String,
    args: Value,
) -> Result<Snapshot, Refused> {
    let (snapshot, cancel) = tasks.create(owner, &name)?;
    tracing::info!(task = %snapshot.id, tool = %name, "tools/call runs as a task");
    let detached = server.for_session();
    let tasks = tasks.clone();
    let id = snapshot.id.clone();
    tokio::spawn(async move {
        let ctx = ToolContext::new(caller).with_trace_id(uuid::Uuid::new_v4().simple().to_string());
        let call = detached.invoke(&ctx, &name, args);
        tokio::select! {
            biased;
            () = cancel.cancelled() => {}
            envelope = call => {
                let result = detached.tool_result(envelope);
                let state = match serde_json::to_value(result) {
                    Ok(Value::Object(result)) => State::Completed(result),
                    _ => State::Failed(error_object(-32603, "the tool's result could not be encoded")),
                };
                tasks.finish(&id, state);
            }
        }
    });
    Ok(snapshot)
}

fn error_object(code: i32, message: &str) -> JsonObject {
    let mut error = JsonObject::new();
    error.insert("code".into(), code.into());
    error.insert("message".into(), message.into());
    error
}

/// `tasks/get`: the task with its result once it has one.
pub(crate) fn get(
    server: &McpServer,
    tasks: &Tasks,
    id: &str,
    extensions: &Extensions,
) -> Result<GetTaskResult, McpError> {
    let owner = owner(server, extensions)?;
    let snapshot = tasks.get(&owner, id).map_err(refusal)?;
    Ok(GetTaskResult::new(detailed(snapshot)))
}

/// `tasks/cancel`: the call is dropped; the next `tasks/get` says `cancelled`
/// (a task that had finished keeps its outcome).
pub(crate) fn cancel(
    server: &McpServer,
    tasks: &Tasks,
    id: &str,
    extensions: &Extensions,
) -> Result<(), McpError> {
    let owner = owner(server, extensions)?;
    let snapshot = tasks.cancel(&owner, id).map_err(refusal)?;
    tracing::info!(task = %snapshot.id, tool = %snapshot.tool, "task cancelled by its client");
    Ok(())
}

/// `tasks/update`: toolgate's tasks never wait for input (a question a
/// task's tool asks gets the `need_confirm` signal), so there is nothing to answer.
pub(crate) fn update(
    server: &McpServer,
    tasks: &Tasks,
    id: &str,
    extensions: &Extensions,
) -> Result<(), McpError> {
    let owner = owner(server, extensions)?;
    tasks.get(&owner, id).map_err(refusal)?;
    Err(McpError::invalid_params(
        "this task asks for no input: it has no outstanding inputRequests to answer",
        None,
    ))
}

fn iso(time: SystemTime) -> String {
    chrono::DateTime::<chrono::Utc>::from(time).to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

fn status_of(state: &State) -> TaskStatus {
    match state {
        State::Working => TaskStatus::Working,
        State::Completed(_) => TaskStatus::Completed,
        State::Failed(_) => TaskStatus::Failed,
        State::Cancelled => TaskStatus::Cancelled,
    }
}

/// The task's base fields.
pub(super) fn task_of(snapshot: &Snapshot) -> Task {
    let mut task = Task::new(
        snapshot.id.clone(),
        status_of(&snapshot.state),
        iso(snapshot.created),
        iso(snapshot.updated),
    )
    .with_ttl_ms(millis(snapshot.ttl))
    .with_poll_interval_ms(millis(snapshot.poll_interval));
    let message = match &snapshot.state {
        State::Working => format!("`{}` is running", snapshot.tool),
        State::Completed(result) if result.get("isError") == Some(&Value::Bool(true)) => {
            format!("`{}` finished with an error; the result says why", snapshot.tool)
        }
        State::Completed(_) => format!("`{}` finished", snapshot.tool),
        State::Failed(_) => format!("`{}` failed", snapshot.tool),
        State::Cancelled => format!("`{}` was cancelled by the client; it did not finish", snapshot.tool),
    };
    task = task.with_status_message(message);
    task
}

fn detailed(snapshot: Snapshot) -> DetailedTask {
    let task = task_of(&snapshot);
    let payload = match snapshot.state {
        State::Working => TaskPayload::Working,
        State::Completed(result) => TaskPayload::Completed { result },
        State::Failed(error) => TaskPayload::Failed { error },
        State::Cancelled => TaskPayload::Cancelled,
    };
    DetailedTask::new(task, payload)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn long_running_tools_are_tagged_or_skills() {
        let schema = json!({"type": "object", "properties": {}, "additionalProperties": false});
        let plain = ToolSpec::new("query_weather", "Reads.", schema.clone());
        assert!(!is_long_running(&plain));
        assert!(is_long_running(&plain.clone().with_tags([LONG_RUNNING_TAG])));
        assert!(is_long_running(&plain.with_tags(["skill", "sequential"])));
    }

    #[test]
    fn a_task_reads_as_the_extension_says() {
        let tasks = Tasks::new(super::super::TaskLimits::default());
        let (snapshot, _) = tasks.create("k", "plan_itinerary").unwrap();
        let handle = serde_json::to_value(CreateTaskResult::new(task_of(&snapshot))).unwrap();
        assert_eq!(handle["resultType"], "task");
        assert_eq!(handle["status"], "working");
        assert_eq!(handle["ttlMs"], 3_600_000);
        assert_eq!(handle["pollIntervalMs"], 500);
        assert!(handle["createdAt"].as_str().unwrap().ends_with('Z'));
        let mut result = JsonObject::new();
        result.insert("isError".into(), false.into());
        tasks.finish(&snapshot.id, State::Completed(result));
        let got = serde_json::to_value(GetTaskResult::new(detailed(tasks.get("k", &snapshot.id).unwrap())))
            .unwrap();
        assert_eq!(got["status"], "completed");
        assert_eq!(got["result"]["isError"], false);
        assert_eq!(got["resultType"], "complete");
    }
}
