//! `POST /api/admin/reload`: apply the configuration again without a restart,
//! for the highest role only (`toolgate reload` calls it); `GET` says how the
//! last reload went (by this route or another way, e.g. `SIGHUP`). What a
//! reload does is the deployment's ([`Reloader`]); without one both are `503`.

use std::sync::Arc;

use axum::response::{IntoResponse, Response};
use axum::{Extension, Json, extract::State, http::StatusCode};
use serde_json::{Value, json};

use super::{Shared, error_response};
use crate::handler::Authenticated;

/// Applies a deployment's configuration again while it serves (re-reading its
/// files), all or nothing.
#[toolgate_core::async_trait]
pub trait Reloader: Send + Sync + std::fmt::Debug + 'static {
    /// Reload: what changed (a JSON object for the operator), or every problem
    /// of the new configuration (then nothing changed).
    async fn reload(&self) -> Result<Value, Vec<String>>;

    /// How the last reload went, however it was asked (a JSON object), if one ran.
    fn last(&self) -> Option<Value> {
        None
    }
}

/// The highest role's check and the reloader, or the refusal.
fn admitted<'a>(shared: &'a Shared, auth: &Authenticated) -> Result<&'a Arc<dyn Reloader>, Response> {
    let highest = shared.state.gateway.policy().hierarchy().highest().to_owned();
    if !shared.state.gateway.policy().role_satisfies(&auth.caller.role, &highest) {
        return Err(error_response(
            StatusCode::FORBIDDEN,
            "PERMISSION_DENIED",
            &format!("reloading the configuration is for role `{highest}`"),
        ));
    }
    shared.state.reloader.as_ref().ok_or_else(|| {
        error_response(
            StatusCode::SERVICE_UNAVAILABLE,
            "UNAVAILABLE",
            "this server cannot reload its configuration while it serves",
        )
    })
}

pub(super) async fn last(State(shared): State<Arc<Shared>>, auth: Extension<Authenticated>) -> Response {
    match admitted(&shared, &auth) {
        Ok(reloader) => Json(json!({ "last": reloader.last() })).into_response(),
        Err(refused) => refused,
    }
}

pub(super) async fn reload(State(shared): State<Arc<Shared>>, auth: Extension<Authenticated>) -> Response {
    let reloader = match admitted(&shared, &auth) {
        Ok(reloader) => reloader,
        Err(refused) => return refused,
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
