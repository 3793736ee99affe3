//! Steps 4 and 5 on `/mcp`: the session's owner, the message check, and
//! request ids in progress, in front of rmcp's streamable HTTP service.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use axum::extract::{Request, State};
use axum::http::{Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use serde_json::Value;

use super::auth::unauthorized;
use super::limits::payload_too_large;
use super::message::{check_message, rpc_error};
use crate::handler::Authenticated;

/// Which user and role opened each MCP session.
#[derive(Debug)]
pub(super) struct SessionOwners {
    owners: Mutex<HashMap<String, (String, String)>>,
    manager: Arc<LocalSessionManager>,
    prune_at: AtomicUsize,
}

const PRUNE_FLOOR: usize = 1024;

impl SessionOwners {
    pub(super) fn new(manager: Arc<LocalSessionManager>) -> Self {
        Self { owners: Mutex::default(), manager, prune_at: AtomicUsize::new(PRUNE_FLOOR) }
    }

    fn owner(&self, session: &str) -> Option<(String, String)> {
        self.owners.lock().ok()?.get(session).cloned()
    }

    async fn insert(&self, session: String, owner: (String, String)) {
        let len = match self.owners.lock() {
            Ok(mut owners) => {
                owners.insert(session, owner);
                owners.len()
            }
            Err(_) => return,
        };
        if len > self.prune_at.load(Ordering::Relaxed) {
            // Forget sessions rmcp has closed (idle timeout, DELETE, errors).
            let live: HashSet<String> =
                self.manager.sessions.read().await.keys().map(|id| id.to_string()).collect();
            if let Ok(mut owners) = self.owners.lock() {
                owners.retain(|id, _| live.contains(id));
                self.prune_at.store((owners.len() * 2).max(PRUNE_FLOOR), Ordering::Relaxed);
            }
        }
    }

    fn remove(&self, session: &str) {
        if let Ok(mut owners) = self.owners.lock() {
            owners.remove(session);
        }
    }
}

/// What `/mcp` checks before rmcp sees a request.
#[derive(Debug)]
pub(super) struct McpGuard {
    pub(super) max_body_bytes: usize,
    /// Session owners; `None` without sessions.
    pub(super) owners: Option<SessionOwners>,
    /// (session, request id) of requests being answered, so that a reused id
    /// is refused instead of tangling two answers in one session.
    pub(super) in_flight: Arc<Mutex<HashSet<(String, String)>>>,
}

/// Removes a request id from the in-flight set when its answer is done (or dropped).
struct InFlight {
    set: Arc<Mutex<HashSet<(String, String)>>>,
    key: (String, String),
}

impl Drop for InFlight {
    fn drop(&mut self) {
        if let Ok(mut set) = self.set.lock() {
            set.remove(&self.key);
        }
    }
}

const SESSION_HEADER: &str = "mcp-session-id";

pub(super) async fn mcp_guard(State(guard): State<Arc<McpGuard>>, request: Request, next: Next) -> Response {
    let Some(caller) = request
        .extensions()
        .get::<Authenticated>()
        .map(|a| (a.caller.user_id.clone(), a.caller.role.clone()))
    else {
        return unauthorized("send `Authorization: Bearer <API key>`");
    };
    let session = request.headers().get(SESSION_HEADER).and_then(|v| v.to_str().ok()).map(str::to_owned);
    if let (Some(owners), Some(session)) = (&guard.owners, &session)
        && owners.owner(session).is_some_and(|owner| owner != caller)
    {
        // Answered like an unknown session, so it does not reveal that the id exists.
        return (StatusCode::NOT_FOUND, "Not Found: Session not found").into_response();
    }
    let method = request.method().clone();
    let json_body =
        request.headers().get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).is_some_and(|v| {
            v.split(';').next().is_some_and(|t| t.trim().eq_ignore_ascii_case("application/json"))
        });
    let mut in_flight = None;
    let request = if method == Method::POST && json_body {
        // rmcp would answer malformed JSON with 415; JSON-RPC and MCP say 400 with a parse error.
        let (parts, body) = request.into_parts();
        let Ok(bytes) = axum::body::to_bytes(body, guard.max_body_bytes).await else {
            return payload_too_large(guard.max_body_bytes);
        };
        let message: Value = match serde_json::from_slice(&bytes) {
            Ok(message) => message,
            Err(error) => return rpc_error(Value::Null, -32700, &format!("parse error: {error}")),
        };
        let id = match check_message(&message) {
            Ok(id) => id,
            Err((id, code, why)) => return rpc_error(id, code, &format!("invalid request: {why}")),
        };
        if let (Some(session), Some(id), true) = (&session, &id, guard.owners.is_some()) {
            let key = (session.clone(), id.to_string());
            let fresh = guard.in_flight.lock().map(|mut set| set.insert(key.clone())).unwrap_or(true);
            if !fresh {
                return rpc_error(
                    id.clone(),
                    -32600,
                    "invalid request: this id is already in use by a request in progress in this session; use a new id",
                );
            }
            in_flight = Some(InFlight { set: guard.in_flight.clone(), key });
        }
        Request::from_parts(parts, axum::body::Body::from(bytes))
    } else {
        request
    };
    let response = next.run(request).await;
    if let Some(owners) = &guard.owners {
        match &session {
            None => {
                if let Some(new) = response.headers().get(SESSION_HEADER).and_then(|v| v.to_str().ok()) {
                    owners.insert(new.to_owned(), caller).await;
                }
            }
            Some(session) if method == Method::DELETE && response.status().is_success() => {
                owners.remove(session)
            }
            Some(_) => {}
        }
    }
    match in_flight {
        // The id stays taken until the (possibly streamed) answer is finished or dropped.
        Some(in_flight) => {
            let (parts, body) = response.into_parts();
            let stream = body.into_data_stream().map(move |chunk| {
                let _held = &in_flight;
                chunk
            });
            Response::from_parts(parts, axum::body::Body::from_stream(stream))
        }
        None => response,
    }
}
