//! `POST /api/admin/reload`: apply the configuration again without a restart,
//! for the highest role only (`toolgate reload` calls it). What a reload does
//! is the deployment's ([`Reloader`]); without one the route is `503`.

use std::sync::Arc;

use axum::response::{IntoResponse, Response};
use axum::{Extension, Json, extract::State, http::StatusCode};
use serde_json::{Value, json};

use super::{Shared, error_response};
use crate::handler::Authenticated;

/// Applies a deployment's configuration again while it serves (re-reading its
/// files), all or nothing.
#[tool_core::async_trait]
pub trait Reloader: Send + Sync + std::fmt::Debug + 'static {
    /// Reload: what changed (a JSON object for the operator), or every problem
    /// of the new configuration (then nothing changed).
    async fn reload(&self) -> Result<Value, Vec<String>>;
}

pub(super) async fn reload(State(shared): State<Arc<Shared>>, auth: Extension<Authenticated>) -> Response {
    let highest = shared.state.gateway.policy().hierarchy().highest().to_owned();
    if !shared.state.gateway.policy().role_satisfies(&auth.caller.role, &highest) {
        return error_response(
            StatusCode::FORBIDDEN,
            "PERMISSION_DENIED",
            &format!("reloading the configuration is for role `{highest}`"),
        );
    }
    let Some(reloader) = &shared.state.reloader else {
        return error_response(
            StatusCode::SERVICE_UNAVAILABLE,
            "UNAVAILABLE",
            "this server cannot reload its configuration while it serves",
        );
    };
    tracing::info!(principal = %auth.principal, "reload asked through the admin API");
    match reloader.reload().await {
        Ok(done) => Json(json!({ "reloaded": true, "changes": done })).into_response(),
        Err(problems) => (
            StatusCode::UNPROCESSABLE_ENTITY,
            Json(json!({
                "reloaded": false,
                "error": {
                    "code": "INVALID_PARAMS",
                    "message": format!("the configuration has {} problem(s); nothing changed", problems.len()),
                },
                "problems": problems,
            })),
        )
            .into_response(),
    }
}
