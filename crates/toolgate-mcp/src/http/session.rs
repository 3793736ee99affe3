//! Steps 4 and 5 on `/mcp`: the session's owner and the session caps, the
//! message check, request ids in progress, and the drain at shutdown, in
//! front of rmcp's streamable HTTP service.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use axum::body::{Body, Bytes};
use axum::extract::Request;
use axum::extract::State;
use axum::http::{Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use rmcp::transport::StreamableHttpService;
use rmcp::transport::streamable_http_server::SessionManager;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use serde_json::{Value, json};

use super::auth::unauthorized;
use super::limits::payload_too_large;
use super::message::{self, rpc_error};
use super::{Drain, HttpConfig, SESSION_HEADER, Shared, admit};
use crate::McpServer;
use crate::handler::Authenticated;

mod sweep;
pub(super) use self::sweep::{close_expired, close_revoked};

/// Who opened a session: user, role, the principal it was opened with (an
/// API key's id, a token's subject), and when its proof ends.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Owner {
    user: String,
    role: String,
    key_id: String,
    /// The latest `exp` of the tokens used in the session; `None` for keys.
    expires: Option<SystemTime>,
}

/// The open MCP sessions: who owns each, and the caps.
#[derive(Debug)]
pub(super) struct SessionOwners {
    inner: Mutex<Owners>,
    manager: Arc<LocalSessionManager>,
    max_total: usize,
    max_per_key: usize,
}

#[derive(Debug, Default)]
struct Owners {
    by_session: HashMap<String, Owner>,
    /// `initialize` calls under way per key: they count against the caps, so
    /// that a burst of them cannot pass the cap together.
    opening: HashMap<String, usize>,
}

impl Owners {
    fn count(&self, key_id: &str) -> usize {
        self.by_session.values().filter(|o| o.key_id == key_id).count()
            + self.opening.get(key_id).copied().unwrap_or(0)
    }

    fn total(&self) -> usize {
        self.by_session.len() + self.opening.values().sum::<usize>()
    }
}

/// A reserved place for a session being opened; given back when dropped.
struct Opening<'a> {
    owners: &'a SessionOwners,
    key_id: String,
}

impl Drop for Opening<'_> {
    fn drop(&mut self) {
        if let Ok(mut inner) = self.owners.inner.lock()
            && let Some(n) = inner.opening.get_mut(&self.key_id)
        {
            *n -= 1;
            if *n == 0 {
                inner.opening.remove(&self.key_id);
            }
        }
    }
}

impl SessionOwners {
    pub(super) fn new(manager: Arc<LocalSessionManager>, config: &HttpConfig) -> Self {
        Self {
            inner: Mutex::default(),
            manager,
            max_total: config.max_sessions,
            max_per_key: config.max_sessions_per_key,
        }
    }

    /// Whether `session` is open for another user or role than `caller`'s.
    fn owned_by_other(&self, session: &str, caller: &Owner) -> bool {
        self.inner.lock().is_ok_and(|inner| {
            inner
                .by_session
                .get(session)
                .is_some_and(|owner| (&owner.user, &owner.role) != (&caller.user, &caller.role))
        })
    }

    /// A request of `session` came with a proof valid until `expires`: a
    /// fresh token of the session's owner extends the session.
    fn extend(&self, session: &str, caller: &Owner) {
        if let Ok(mut inner) = self.inner.lock()
            && let Some(owner) = inner.by_session.get_mut(session)
            && owner.key_id == caller.key_id
            && let (Some(now), Some(new)) = (owner.expires, caller.expires)
            && new > now
        {
            owner.expires = Some(new);
        }
    }

    /// Close the sessions whose proof has expired.
    async fn close_expired(&self) {
        let now = SystemTime::now();
        let closed = self.close_where(|o| o.expires.is_some_and(|at| at <= now), "whose token expired").await;
        if closed > 0 {
            tracing::info!(sessions = closed, "closed MCP sessions whose access token expired");
        }
    }

    /// Close (at rmcp, and forget) every session whose owner matches; how many.
    async fn close_where(&self, matches: impl Fn(&Owner) -> bool, why: &str) -> usize {
        let sessions: Vec<String> = match self.inner.lock() {
            Ok(mut inner) => {
                let ids: Vec<String> =
                    inner.by_session.iter().filter(|(_, o)| matches(o)).map(|(id, _)| id.clone()).collect();
                for id in &ids {
                    inner.by_session.remove(id);
                }
                ids
            }
            Err(_) => return 0,
        };
        for id in &sessions {
            if let Err(error) = self.manager.close_session(&id.as_str().into()).await {
                tracing::debug!(%error, "could not close a session {why}");
            }
        }
        sessions.len()
    }

    /// Forget sessions rmcp has closed (idle expiry, DELETE, errors).
    async fn prune(&self) {
        let live: HashSet<String> =
            self.manager.sessions.read().await.keys().map(|id| id.to_string()).collect();
        if let Ok(mut inner) = self.inner.lock() {
            inner.by_session.retain(|id, _| live.contains(id));
        }
    }

    /// A place for one more session of `key_id`, or why there is none.
    async fn reserve(&self, key_id: &str) -> Result<Opening<'_>, String> {
        for pruned in [false, true] {
            if pruned {
                self.prune().await;
            }
            let Ok(mut inner) = self.inner.lock() else { break };
            let full = if inner.count(key_id) >= self.max_per_key {
                Some(format!(
                    "this API key (or signed-in user) already has {} open MCP sessions, the most allowed; close one \
                     (HTTP DELETE with its Mcp-Session-Id) or reuse it",
                    self.max_per_key
                ))
            } else if inner.total() >= self.max_total {
                Some("the server has as many open MCP sessions as it allows; try again later".to_owned())
            } else {
                None
            };
            match full {
                Some(why) if pruned => return Err(why),
                Some(_) => continue,
                None => {
                    *inner.opening.entry(key_id.to_owned()).or_default() += 1;
                    return Ok(Opening { owners: self, key_id: key_id.to_owned() });
                }
            }
        }
        Err("the session table is unavailable".to_owned())
    }

    fn insert(&self, session: String, owner: Owner) {
        if let Ok(mut inner) = self.inner.lock() {
            inner.by_session.insert(session, owner);
        }
    }

    fn remove(&self, session: &str) {
        if let Ok(mut inner) = self.inner.lock() {
            inner.by_session.remove(session);
        }
    }

    /// Close every session opened with `key_id`.
    async fn close_key(&self, key_id: &str) {
        self.close_where(|o| o.key_id == key_id, "of a revoked key").await;
        if !key_id.is_empty() {
            tracing::info!(key_id, "closed the MCP sessions of a revoked key");
        }
    }
}

/// What `/mcp` checks before rmcp sees a request.
#[derive(Debug)]
pub(super) struct McpGuard {
    pub(super) max_body_bytes: usize,
    /// Session owners; `None` without sessions.
    pub(super) owners: Option<Arc<SessionOwners>>,
    /// (session, request id) of requests being answered, so that a reused id
    /// is refused instead of tangling two answers in one session.
    pub(super) in_flight: Arc<Mutex<HashSet<(String, String)>>>,
    /// Requests being answered without sessions; `None` with sessions (rmcp
    /// routes a session's `notifications/cancelled` itself).
    pub(super) stateless_calls: Option<Arc<super::cancel::StatelessCalls>>,
    pub(super) drain: Drain,
    /// The server, for 2025-11-25 tasks (answered here: rmcp does not model them).
    pub(super) server: crate::McpServer,
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

/// The JSON-RPC code of errors about the transport's state (sessions, shutdown).
const SERVER_ERROR: i32 = -32000;

fn json_rpc(status: StatusCode, id: Value, code: i32, message: &str) -> Response {
    let body = json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}});
    (status, axum::Json(body)).into_response()
}

fn unknown_session(id: Value) -> Response {
    json_rpc(
        StatusCode::NOT_FOUND,
        id,
        SERVER_ERROR,
        "unknown session: this Mcp-Session-Id is not open on this server (it expired, was closed, or was \
         opened on another instance); send `initialize` without a session id to open a new one",
    )
}

const SHUTTING_DOWN: &str = "the server is shutting down and this call did not finish within the grace period; \
     it may or may not have taken effect: check before repeating a write, or repeat it if it is idempotent";

/// rmcp's streamable HTTP service, with or without sessions. Called through
/// [`StreamableHttpService::handle`] on a shared reference: its `tower`
/// face would clone the service (configuration, cancellation token) per request.
pub(super) enum McpService {
    Stateful(StreamableHttpService<McpServer, LocalSessionManager>),
    Stateless(StreamableHttpService<McpServer, NeverSessionManager>),
}

impl McpService {
    /// Boxed: rmcp's request future is several kilobytes, and held inline
    /// it would be copied with every layer's future that wraps it.
    async fn handle(&self, request: Request) -> Response {
        match self {
            Self::Stateful(service) => Box::pin(service.handle(request)).await.map(Body::new),
            Self::Stateless(service) => Box::pin(service.handle(request)).await.map(Body::new),
        }
    }
}

impl std::fmt::Debug for McpService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Stateful(_) => "McpService::Stateful",
            Self::Stateless(_) => "McpService::Stateless",
        })
    }
}

/// `/mcp`: steps 1-3 ([`admit`]), then 4 and 5, then rmcp.
pub(super) async fn endpoint(State(shared): State<Arc<Shared>>, request: Request) -> Response {
    match admit(&shared, request).await {
        Ok(request) => mcp_guard(&shared.guard, &shared.mcp, request).await,
        Err(refused) => as_json_rpc(refused).await,
    }
}

/// A refusal of steps 1-3 as MCP clients read it: the same status and
/// headers (`WWW-Authenticate`, `Retry-After`), with a JSON-RPC error body
/// whose `data.code` is the layer's error code (`UNAUTHORIZED`, ...).
async fn as_json_rpc(refused: Response) -> Response {
    let (mut parts, body) = refused.into_parts();
    let bytes = axum::body::to_bytes(body, 64 * 1024).await.unwrap_or_default();
    let error: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    let code = error.pointer("/error/code").and_then(Value::as_str).unwrap_or("REFUSED");
    let message =
        error.pointer("/error/message").and_then(Value::as_str).unwrap_or("the request was refused");
    let body = json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": {"code": SERVER_ERROR, "message": message, "data": {"code": code}},
    });
    parts.headers.remove(header::CONTENT_LENGTH);
    Response::from_parts(parts, Body::from(body.to_string()))
}

async fn mcp_guard(guard: &McpGuard, mcp: &McpService, request: Request) -> Response {
    let mut split = None;
    let response = guard_one(guard, mcp, request, Some(&mut split)).await;
    match split {
        Some((parts, items)) => {
            super::batch::answer(&parts, items, |request| Box::pin(guard_one(guard, mcp, request, None)))
                .await
        }
        None => response,
    }
}

/// A batch's request head and messages, for [`batch`].
type Split = (axum::http::request::Parts, Vec<Value>);

/// rmcp's JSON answer to `initialize` or `tools/list`, with what 2025-11-25
/// tasks add to it ([`crate::tasks::amend_legacy`]).
async fn amend_answer(guard: &McpGuard, method: &str, legacy: bool, response: Response) -> Response {
    let kind =
        response.headers().get(header::CONTENT_TYPE).map(|v| v.as_bytes().to_vec()).unwrap_or_default();
    let sse = kind.starts_with(b"text/event-stream");
    if !(sse || kind.starts_with(b"application/json")) {
        return response;
    }
    // Both answers end their body (an event stream after the one answer).
    let (mut parts, body) = response.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, usize::MAX).await else {
        return Response::from_parts(parts, Body::empty());
    };
    let amended = if sse {
        crate::tasks::amend_events(&bytes, |data| {
            crate::tasks::amend_legacy(&guard.server, legacy, method, data)
        })
    } else {
        crate::tasks::amend_legacy(&guard.server, legacy, method, &bytes)
    };
    match amended {
        Some(amended) => {
            parts.headers.remove(header::CONTENT_LENGTH);
            Response::from_parts(parts, Body::from(amended))
        }
        None => Response::from_parts(parts, Body::from(bytes)),
    }
}

/// Steps 4 and 5 and rmcp for one message. With `split`, a batch the
/// session may send is put there (answered with a placeholder) instead of
/// refused; without it (the messages of a batch) it is refused.
async fn guard_one(
    guard: &McpGuard,
    mcp: &McpService,
    request: Request,
    split: Option<&mut Option<Split>>,
) -> Response {
    let Some(auth) = request.extensions().get::<Authenticated>() else {
        return as_json_rpc(unauthorized("send `Authorization: Bearer <API key>`")).await;
    };
    // Who opens or uses a session; not needed (nor copied) without sessions.
    let caller = guard.owners.is_some().then(|| Owner {
        user: auth.caller.user_id.clone(),
        role: auth.caller.role.clone(),
        key_id: auth.principal.clone(),
        expires: auth.expires_at(),
    });
    let session = request.headers().get(SESSION_HEADER).and_then(|v| v.to_str().ok()).map(str::to_owned);
    if let (Some(owners), Some(session), Some(caller)) = (&guard.owners, &session, &caller)
        && owners.owned_by_other(session, caller)
    {
        // Answered like an unknown session, so it does not reveal that the id exists.
        return unknown_session(Value::Null);
    }
    if let (Some(owners), Some(session), Some(caller)) = (&guard.owners, &session, &caller)
        && caller.expires.is_some()
    {
        owners.extend(session, caller);
    }
    let method = request.method().clone();
    let json_body =
        request.headers().get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).is_some_and(|v| {
            v.split(';').next().is_some_and(|t| t.trim().eq_ignore_ascii_case("application/json"))
        });
    let mut in_flight = None;
    let mut request_id = None;
    let mut opening = None;
    let mut registered = None;
    let mut amend = None;
    let request = if method == Method::POST && json_body {
        // rmcp would answer malformed JSON with 415; JSON-RPC and MCP say 400 with a parse error.
        let (parts, body) = request.into_parts();
        let Ok(bytes) = axum::body::to_bytes(body, guard.max_body_bytes).await else {
            return as_json_rpc(payload_too_large(guard.max_body_bytes)).await;
        };
        if let Some(split) = split
            && message::is_batch(&bytes)
            && super::batch::allowed(&parts.headers, guard.owners.is_none())
        {
            return match message::split_batch(&bytes) {
                Ok(items) => {
                    *split = Some((parts, items));
                    StatusCode::ACCEPTED.into_response()
                }
                Err((id, code, why)) => rpc_error(id, code, &why),
            };
        }
        let (id, method) = match message::check(&bytes) {
            Ok(checked) => (checked.id, checked.method),
            Err((id, code, why)) => return rpc_error(id, code, &why),
        };
        if let Some(answer) =
            crate::tasks::answer_legacy(&guard.server, &parts, &bytes, id.as_ref(), method.as_deref()).await
        {
            return answer;
        }
        if let Some(m @ ("initialize" | "tools/list")) = method.as_deref() {
            amend = Some((m.to_owned(), crate::tasks::is_legacy(&parts)));
        }
        if let Some(calls) = &guard.stateless_calls
            && let Some(auth) = parts.extensions.get::<Authenticated>()
        {
            if method.as_deref() == Some("notifications/cancelled") {
                if let Some(target) = super::cancel::cancelled_request(&bytes) {
                    calls.cancel(&auth.principal, &target);
                }
            } else if let Some(id) = &id {
                registered = Some(calls.register(&auth.principal, id));
            }
        }
        if let (Some(owners), Some(caller), None, Some(id)) = (&guard.owners, &caller, &session, &id)
            && method.as_deref() == Some("initialize")
        {
            match owners.reserve(&caller.key_id).await {
                Ok(place) => opening = Some(place),
                Err(why) => {
                    tracing::info!(key_id = %caller.key_id, "refused a session over the cap");
                    return json_rpc(StatusCode::TOO_MANY_REQUESTS, id.clone(), SERVER_ERROR, &why);
                }
            }
        }
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
        request_id = id;
        Request::from_parts(parts, Body::from(bytes))
    } else {
        request
    };
    let cancelled = registered.as_ref().map(|r| r.token.clone());
    let cancelled = async move {
        match cancelled {
            Some(token) => token.cancelled_owned().await,
            None => std::future::pending().await,
        }
    };
    let response = tokio::select! {
        response = mcp.handle(request) => response,
        // Dropping rmcp's future before its first message cancels the handler.
        () = cancelled => return json_rpc(StatusCode::OK, request_id.unwrap_or_default(), -32600, super::cancel::CANCELLED),
        // Past the grace period a call that has not answered gets an error, not a cut connection.
        () = guard.drain.expired.cancelled(), if request_id.is_some() => {
            return json_rpc(StatusCode::SERVICE_UNAVAILABLE, request_id.unwrap_or_default(), SERVER_ERROR, SHUTTING_DOWN);
        }
    };
    if let Some(owners) = &guard.owners {
        match &session {
            None => {
                if let (Some(new), Some(caller)) =
                    (response.headers().get(SESSION_HEADER).and_then(|v| v.to_str().ok()), caller)
                {
                    owners.insert(new.to_owned(), caller);
                }
                drop(opening);
            }
            Some(session) if method == Method::DELETE && response.status().is_success() => {
                owners.remove(session);
                // rmcp answers 202; a DELETE that ended the session has nothing
                // more to say, and SDK clients expect 200 or 204 (the Python
                // SDK logs a 202 as a failed termination).
                return StatusCode::NO_CONTENT.into_response();
            }
            Some(session) if response.status() == StatusCode::NOT_FOUND => {
                // rmcp's answer is a bare text 404; a client deserves JSON that says what happened.
                owners.remove(session);
                return unknown_session(request_id.unwrap_or(Value::Null));
            }
            Some(_) => {}
        }
    }
    let response = match amend {
        Some((method, legacy)) => amend_answer(guard, &method, legacy, response).await,
        None => response,
    };
    let sse = response
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(b"text/event-stream"));
    if method == Method::GET && sse {
        // The standalone stream is not a call: it ends when shutdown begins.
        let (parts, body) = response.into_parts();
        let stream = body.into_data_stream().take_until(guard.drain.started.clone().cancelled_owned());
        return Response::from_parts(parts, Body::from_stream(stream));
    }
    if in_flight.is_none() && !(sse && request_id.is_some()) {
        return response;
    }
    // A stateless call's event stream ends when the client cancels it.
    let stop = registered.as_ref().map(|r| r.token.clone());
    let stop = Box::pin(async move {
        match stop {
            Some(token) => token.cancelled_owned().await,
            None => std::future::pending().await,
        }
    });
    // The id stays taken until the (possibly streamed) answer is finished or
    // dropped; an SSE answer still open when the grace period ends gets the
    // JSON-RPC error as its last event instead of simply stopping.
    let (parts, body) = response.into_parts();
    let expired = guard.drain.expired.clone();
    let tail = request_id.filter(|_| sse).map(|id| {
        let error =
            json!({"jsonrpc": "2.0", "id": id, "error": {"code": SERVER_ERROR, "message": SHUTTING_DOWN}});
        Bytes::from(format!("event: message\ndata: {error}\n\n"))
    });
    // Fused: `first_events` may have seen the end already.
    let mut body = body.into_data_stream().take_until(stop).fuse();
    let head = if sse { first_events(&mut body).await } else { Vec::new() };
    let state = (body, tail, (in_flight, registered), false);
    let stream = futures::stream::unfold(state, move |(mut body, tail, held, done)| {
        let expired = expired.clone();
        async move {
            if done {
                return None;
            }
            tokio::select! {
                chunk = body.next() => chunk.map(|chunk| (chunk, (body, tail, held, false))),
                () = expired.cancelled(), if tail.is_some() => {
                    let last = tail.clone().unwrap_or_default();
                    Some((Ok(last), (body, None, held, true)))
                }
            }
        }
    });
    let stream = futures::stream::iter(head).chain(stream);
    let mut response = Response::from_parts(parts, Body::from_stream(stream));
    response.headers_mut().remove(header::CONTENT_LENGTH);
    response
}

/// How long the headers of a call's event stream may wait for its first
/// event after rmcp's priming event.
const COALESCE: std::time::Duration = std::time::Duration::from_millis(5);

/// The first events of a call's SSE answer: rmcp's priming event (an event
/// id, no data), and the one after it when it comes within [`COALESCE`]. A
/// fast call's headers, priming event, answer and end then leave in one
/// write instead of two (one packet and one wake-up of the client fewer
/// per call); a slow call's headers wait at most those few milliseconds,
/// and a progress notification ends the wait like any event.
async fn first_events<S>(body: &mut S) -> Vec<S::Item>
where
    S: futures::Stream + Unpin,
{
    let mut head = Vec::with_capacity(2);
    if let Some(first) = body.next().await {
        head.push(first);
        if let Ok(Some(second)) = tokio::time::timeout(COALESCE, body.next()).await {
            head.push(second);
        }
    }
    head
}

#[cfg(test)]
mod tests;
