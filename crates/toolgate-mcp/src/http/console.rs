//! The console's tool pages: `GET /api/tool?name=...` (the contract as the
//! caller may see it, with its examples and the skills whose guides use
//! it) and `POST /api/call` (run a tool as the connected key; the answer is
//! the envelope and the text a model would read).

use std::sync::Arc;

use axum::extract::rejection::{JsonRejection, QueryRejection};
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};
use serde::Deserialize;
use serde_json::{Value, json};
use toolgate_core::ToolContext;
use toolgate_gateway::CallOptions;

use super::api::caller_of;
use super::{Shared, error_response, invalid_params};
use crate::handler::Authenticated;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ToolQuery {
    name: String,
}

pub(super) async fn tool(
    State(shared): State<Arc<Shared>>,
    auth: Extension<Authenticated>,
    query: Result<Query<ToolQuery>, QueryRejection>,
) -> Response {
    let Ok(Query(query)) = query else {
        return error_response(StatusCode::BAD_REQUEST, "INVALID_PARAMS", "send ?name=TOOL");
    };
    let caller = caller_of(&shared, &auth);
    let gateway = &shared.state.gateway;
    match gateway.tool_schema(&caller, &query.name) {
        Ok(schema) => {
            let guides: Vec<Value> = gateway
                .visible_skills(&caller)
                .into_iter()
                .filter(|s| s.steps.iter().any(|step| step.tool == query.name))
                .map(|s| json!({"id": s.id, "name": s.name}))
                .collect();
            Json(json!({"schema": schema, "guides": guides})).into_response()
        }
        // Not listed, not described: a tool the caller may not use is as unknown as a missing one.
        Err(error) => error_response(StatusCode::NOT_FOUND, &error.code.to_string(), &error.message),
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct CallBody {
    tool: String,
    #[serde(default)]
    parameters: Value,
}

pub(super) async fn call(
    State(shared): State<Arc<Shared>>,
    auth: Extension<Authenticated>,
    body: Result<Json<CallBody>, JsonRejection>,
) -> Response {
    let body = match body {
        Ok(Json(body)) => body,
        Err(rejection) => {
            return invalid_params(rejection.body_text(), "send {\"tool\": \"...\", \"parameters\": {...}}");
        }
    };
    let caller = caller_of(&shared, &auth);
    let ctx = ToolContext::new(caller).with_trace_id(uuid::Uuid::new_v4().to_string());
    let parameters = if body.parameters.is_null() { json!({}) } else { body.parameters };
    let gateway = &shared.state.gateway;
    let envelope = gateway.execute(&ctx, &body.tool, parameters, &CallOptions::default()).await;
    let text = gateway.render_result(&envelope);
    Json(json!({"envelope": envelope, "text": text})).into_response()
}
