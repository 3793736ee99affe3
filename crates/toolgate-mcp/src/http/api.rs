//! The small JSON API the web page reads: `/api/whoami`, `/api/tools`,
//! `/api/skills`, and the JSON `404` for every other path.

use std::sync::Arc;

use axum::extract::rejection::QueryRejection;
use axum::extract::{Query, State};
use axum::http::{StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};
use serde_json::{Value, json};
use toolgate_core::Caller;
use toolgate_gateway::Filter;

use super::{Shared, error_response, invalid_params};
use crate::Exposure;
use crate::handler::Authenticated;

pub(super) async fn not_found(uri: Uri) -> Response {
    let path: String = uri.path().chars().take(100).collect();
    error_response(
        StatusCode::NOT_FOUND,
        "NOT_FOUND",
        &format!(
            "nothing at `{path}`; this server has /mcp, /trace, /api/whoami, /api/tools, /api/tool, /api/skills, /api/call, /api/chat, /api/chat/answer, /api/audit, /api/admin/reload, /api/admin/sources, /api/admin/keys and /"
        ),
    )
}

/// The request's caller as the MCP session would see it (scoped exposure narrows it).
pub(super) fn caller_of(shared: &Shared, auth: &Authenticated) -> Caller {
    let mut caller = auth.caller.clone();
    if let Exposure::Scoped(domains) = &shared.state.exposure {
        crate::exposure::narrow(&mut caller, domains);
    }
    caller
}

pub(super) fn may_trace(shared: &Shared, caller: &Caller) -> bool {
    shared.state.gateway.policy().role_satisfies(&caller.role, &shared.trace_role)
}

pub(super) async fn whoami(State(shared): State<Arc<Shared>>, auth: Extension<Authenticated>) -> Response {
    let caller = caller_of(&shared, &auth);
    let admin = super::admin::highest_only(&shared, &auth, "").is_ok();
    Json(json!({
        "user_id": caller.user_id,
        "role": caller.role,
        "key_id": auth.caller.key_id,
        "exposure": shared.state.exposure.to_string(),
        // Every key may follow its own calls on /trace; `all` also sees everyone else's.
        "can_trace": !auth.is_anonymous(),
        "trace_scope": if may_trace(&shared, &caller) { "all" } else { "own" },
        // The operator's section of the page (sources, keys, audit, reload), and which of
        // the last two this server has (the page asks only for those).
        "admin": admin,
        "admin_sections": admin.then(|| json!({
            "audit": has_audit(&shared),
            "reload": shared.state.reloader.is_some(),
        })),
    }))
    .into_response()
}

pub(super) async fn tools(
    State(shared): State<Arc<Shared>>,
    auth: Extension<Authenticated>,
    filter: Result<Query<Filter>, QueryRejection>,
) -> Response {
    let filter = match filter {
        Ok(Query(filter)) => filter,
        Err(rejection) => {
            return invalid_params(
                rejection.body_text(),
                "filters are name, domain, tag, effect (read|write) and text (ranked by relevance)",
            );
        }
    };
    let caller = caller_of(&shared, &auth);
    let tools: Vec<Value> = shared
        .state
        .gateway
        .search(&caller, &filter)
        .into_iter()
        .map(|spec| {
            json!({
                "name": spec.name,
                "description": spec.description,
                "effect": spec.effect.label(),
                "idempotent": spec.effect.is_retry_safe(),
                "domain": spec.domain,
                "required_role": spec.required_role,
                "tags": spec.tags,
            })
        })
        .collect();
    Json(json!({ "tools": tools, "mcp_tools": shared.server.tools_for(&caller).len() })).into_response()
}

pub(super) async fn skills(State(shared): State<Arc<Shared>>, auth: Extension<Authenticated>) -> Response {
    let caller = caller_of(&shared, &auth);
    let skills: Vec<Value> = shared
        .state
        .gateway
        .visible_skills(&caller)
        .into_iter()
        .map(|skill| {
            json!({
                "id": skill.id,
                "name": skill.name,
                "description": skill.description,
                "required_role": skill.required_role,
                "steps": skill.steps.iter().map(|s| json!({"title": s.title, "tool": s.tool})).collect::<Vec<_>>(),
            })
        })
        .collect();
    Json(json!({ "skills": skills })).into_response()
}

/// Whether this server keeps an audit trail (never without the feature `audit`).
fn has_audit(shared: &Shared) -> bool {
    #[cfg(feature = "audit")]
    return shared.state.audit.is_some();
    #[cfg(not(feature = "audit"))]
    {
        let _ = shared;
        false
    }
}
