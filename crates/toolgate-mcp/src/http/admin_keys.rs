//! The API keys, for the highest role: `GET /api/admin/keys` lists them (no
//! secret, no digest), `POST /api/admin/keys` makes one (its secret is in that
//! answer and nowhere else), `PATCH /api/admin/keys/{id}` changes its role or
//! scope, `DELETE /api/admin/keys/{id}` revokes it. Each goes through the
//! [`KeyStore`](crate::KeyStore) as `toolgate keys` does (so a change or a
//! revocation reaches every instance and ends the key's sessions), checks
//! roles and toolsets against the gateway's policy, and is put on the audit
//! trail when there is one. The request's own key cannot be revoked or
//! changed here (an operator would lock themself out of this page).

use std::sync::Arc;

use axum::extract::rejection::JsonRejection;
use axum::extract::{Path, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};
use serde::{Deserialize, Deserializer};
use serde_json::{Value, json};

use super::admin::highest_only;
use super::{Shared, error_response, invalid_params};
use crate::handler::Authenticated;
use crate::{Error, KeyChange, KeyInfo, KeyScope};

/// The body of `POST /api/admin/keys`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct NewKey {
    user_id: String,
    role: String,
    #[serde(default)]
    toolset: Option<String>,
    #[serde(default)]
    domains: Option<Vec<String>>,
}

/// The body of `PATCH /api/admin/keys/{id}`: a field left out stays as it is;
/// `toolset: null` removes the toolset, `domains: null` allows every domain.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Patch {
    #[serde(default)]
    role: Option<String>,
    #[serde(default, deserialize_with = "present")]
    toolset: Option<Option<String>>,
    #[serde(default, deserialize_with = "present")]
    domains: Option<Option<Vec<String>>>,
}

/// A field that is there, `null` or not: `Some(value)`; one left out is the default `None`.
fn present<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Option<Option<T>>, D::Error> {
    Option::<T>::deserialize(d).map(Some)
}

fn key_json(key: &KeyInfo) -> Value {
    json!({
        "id": key.id,
        "user_id": key.user_id,
        "role": key.role,
        "scope": key.scope,
        "created_at": key.created_at,
        "revoked_at": key.revoked_at,
        "active": key.revoked_at.is_none(),
    })
}

/// The role is one of the policy's, the toolset one it defines; `Err` is the `400`.
fn check_names(shared: &Shared, role: Option<&str>, toolset: Option<&str>) -> Result<(), Response> {
    let policy = shared.state.gateway.policy();
    if let Some(role) = role
        && policy.hierarchy().rank(role).is_none()
    {
        let roles = policy.hierarchy().roles().join(" < ");
        return Err(error_response(
            StatusCode::BAD_REQUEST,
            "INVALID_PARAMS",
            &format!("unknown role `{role}`; roles are {roles}"),
        ));
    }
    if let Some(name) = toolset
        && policy.toolset(name).is_none()
    {
        return Err(error_response(
            StatusCode::BAD_REQUEST,
            "INVALID_PARAMS",
            &format!("no toolset `{name}`; define it under [authz.toolsets] or use `read_only`"),
        ));
    }
    Ok(())
}

fn clean_domains(domains: Vec<String>) -> Vec<String> {
    domains.into_iter().map(|s| s.trim().to_owned()).filter(|s| !s.is_empty()).collect()
}

/// The store's refusal (`400`) or failure (`503`, logged).
fn store_error(error: Error) -> Response {
    match error {
        Error::Invalid(why) => error_response(StatusCode::BAD_REQUEST, "INVALID_PARAMS", &why),
        other => {
            tracing::error!(error = %other, "the key store could not answer the admin API");
            error_response(
                StatusCode::SERVICE_UNAVAILABLE,
                "UNAVAILABLE",
                "the key store cannot answer right now",
            )
        }
    }
}

/// A body that is not the JSON the route reads: `400` saying what is expected.
fn bad_body(rejection: JsonRejection, how: &str) -> Response {
    invalid_params(rejection.body_text(), how)
}

/// Refuse the request's own key (`409`).
fn not_own(auth: &Authenticated, id: &str, what: &str) -> Result<(), Response> {
    if auth.caller.key_id.as_deref() == Some(id) {
        return Err(error_response(
            StatusCode::CONFLICT,
            "CONFLICT",
            &format!(
                "`{id}` is the key of this request; {what} it with another key of the highest role, or with `toolgate keys`"
            ),
        ));
    }
    Ok(())
}

/// Put a key operation on the audit trail, when there is one; whether it was.
#[cfg(feature = "audit")]
async fn audit(shared: &Shared, auth: &Authenticated, tool: &str, key_id: &str, params: Value) -> bool {
    let Some(trail) = &shared.state.audit else { return false };
    let record = toolgate_gateway::AuditRecord {
        at: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
        user_id: auth.caller.user_id.clone(),
        role: auth.caller.role.clone(),
        key_id: auth.caller.key_id.clone(),
        tool: tool.to_owned(),
        params,
        outcome: "OK".into(),
        ids: json!({ "key_id": key_id }),
        trace_id: "admin-api".into(),
    };
    match trail.append(&record).await {
        Ok(()) => true,
        Err(error) => {
            tracing::error!(%error, tool, key_id, "a key operation could not be put on the audit trail");
            false
        }
    }
}

pub(super) async fn list(State(shared): State<Arc<Shared>>, auth: Extension<Authenticated>) -> Response {
    if let Err(refused) = highest_only(&shared, &auth, "managing API keys") {
        return refused;
    }
    match shared.state.keys.list().await {
        Ok(keys) => {
            let roles = shared.state.gateway.policy().hierarchy().roles().to_vec();
            let keys: Vec<Value> = keys.iter().map(key_json).collect();
            Json(json!({ "keys": keys, "own_key_id": auth.caller.key_id, "roles": roles })).into_response()
        }
        Err(error) => store_error(error),
    }
}

pub(super) async fn create(
    State(shared): State<Arc<Shared>>,
    auth: Extension<Authenticated>,
    body: Result<Json<NewKey>, JsonRejection>,
) -> Response {
    if let Err(refused) = highest_only(&shared, &auth, "managing API keys") {
        return refused;
    }
    let Json(new) = match body {
        Ok(body) => body,
        Err(rejection) => {
            return bad_body(rejection, "send {\"user_id\", \"role\", \"toolset\"?, \"domains\"?: [..]}");
        }
    };
    if let Err(refused) = check_names(&shared, Some(&new.role), new.toolset.as_deref()) {
        return refused;
    }
    let scope = KeyScope { toolset: new.toolset, domains: new.domains.map(clean_domains) };
    let store = &shared.state.keys;
    let created = match store.create_scoped(new.user_id.trim(), &new.role, &scope).await {
        Ok(created) => created,
        Err(error) => return store_error(error),
    };
    let info = match store.active(&created.id).await {
        Ok(Some(info)) => info,
        Ok(None) => return store_error(Error::Mcp("the new key is not in the store".into())),
        Err(error) => return store_error(error),
    };
    let params = json!({ "user_id": info.user_id, "role": info.role, "scope": info.scope });
    let audited = audit(&shared, &auth, "keys.create", &created.id, params).await;
    let body = json!({ "key": key_json(&info), "secret": created.key.expose(), "audited": audited });
    let mut response = (StatusCode::CREATED, Json(body)).into_response();
    // The secret is shown once: never kept by a cache.
    response.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

pub(super) async fn revoke(
    State(shared): State<Arc<Shared>>,
    auth: Extension<Authenticated>,
    Path(id): Path<String>,
) -> Response {
    if let Err(refused) = highest_only(&shared, &auth, "managing API keys") {
        return refused;
    }
    if let Err(refused) = not_own(&auth, &id, "revoke") {
        return refused;
    }
    match shared.state.keys.revoke(&id).await {
        Ok(true) => {
            let audited = audit(&shared, &auth, "keys.revoke", &id, json!({})).await;
            Json(json!({ "revoked": id, "audited": audited })).into_response()
        }
        Ok(false) => no_active_key(&id),
        Err(error) => store_error(error),
    }
}

fn no_active_key(id: &str) -> Response {
    let id: String = id.chars().take(100).collect();
    error_response(StatusCode::NOT_FOUND, "NOT_FOUND", &format!("no active key `{id}`"))
}

pub(super) async fn update(
    State(shared): State<Arc<Shared>>,
    auth: Extension<Authenticated>,
    Path(id): Path<String>,
    body: Result<Json<Patch>, JsonRejection>,
) -> Response {
    if let Err(refused) = highest_only(&shared, &auth, "managing API keys") {
        return refused;
    }
    let Json(patch) = match body {
        Ok(body) => body,
        Err(rejection) => {
            return bad_body(
                rejection,
                "send {\"role\"?, \"toolset\"?: name or null, \"domains\"?: [..] or null}",
            );
        }
    };
    if let Err(refused) = not_own(&auth, &id, "change") {
        return refused;
    }
    let toolset = patch.toolset.as_ref().and_then(|t| t.as_deref());
    if let Err(refused) = check_names(&shared, patch.role.as_deref(), toolset) {
        return refused;
    }
    let change = KeyChange {
        role: patch.role,
        toolset: patch.toolset,
        domains: patch.domains.map(|d| d.map(clean_domains)),
    };
    match shared.state.keys.update(&id, &change).await {
        Ok(Some((before, after))) => {
            let changes = after.changes_from(&before);
            let audited = audit(&shared, &auth, "keys.update", &id, changes.clone()).await;
            Json(json!({ "key": key_json(&after), "changes": changes, "audited": audited })).into_response()
        }
        Ok(None) => no_active_key(&id),
        Err(error) => store_error(error),
    }
}

/// Built without the audit trail (feature `audit`): no key operation is recorded.
#[cfg(not(feature = "audit"))]
async fn audit(_: &Shared, _: &Authenticated, _: &str, _: &str, _: Value) -> bool {
    false
}
