//! `GET /api/audit?user=&tool=&outcome=&since=&limit=`: the audit trail,
//! newest first, for the highest role only. Read-only: there is no route
//! that changes or deletes a record.

use std::sync::Arc;

use axum::extract::rejection::QueryRejection;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};
use serde_json::json;
use toolgate_fleet::{AuditQuery, Error as FleetError};

use super::{Shared, error_response, invalid_params};
use crate::handler::Authenticated;

pub(super) async fn audit(
    State(shared): State<Arc<Shared>>,
    auth: Extension<Authenticated>,
    query: Result<Query<AuditQuery>, QueryRejection>,
) -> Response {
    let highest = shared.state.gateway.policy().hierarchy().highest().to_owned();
    if !shared.state.gateway.policy().role_satisfies(&auth.caller.role, &highest) {
        return error_response(
            StatusCode::FORBIDDEN,
            "PERMISSION_DENIED",
            &format!("the audit trail is for role `{highest}`"),
        );
    }
    let Some(trail) = &shared.state.audit else {
        return error_response(
            StatusCode::NOT_FOUND,
            "NOT_FOUND",
            "this server keeps no audit trail (it is kept when toolgate serve has a database)",
        );
    };
    let query = match query {
        Ok(Query(query)) => query,
        Err(rejection) => {
            return invalid_params(
                rejection.body_text(),
                "filters are user, tool, outcome, since (RFC 3339) and limit",
            );
        }
    };
    match trail.query(&query).await {
        Ok(records) => Json(json!({ "records": records })).into_response(),
        Err(FleetError::InvalidQuery(why)) => error_response(StatusCode::BAD_REQUEST, "INVALID_PARAMS", &why),
        Err(error) => {
            tracing::error!(%error, "the audit trail could not be read");
            error_response(
                StatusCode::SERVICE_UNAVAILABLE,
                "UNAVAILABLE",
                "the audit trail cannot be read right now",
            )
        }
    }
}
