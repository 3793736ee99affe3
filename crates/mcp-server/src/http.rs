//! The HTTP server: MCP over streamable HTTP at `/mcp`, the live trace at
//! `/trace`, a small JSON API for the web page, and the page itself at `/`.
//!
//! Every request passes, in this order:
//!
//! 1. the Host/Origin check (DNS rebinding): a Host that is not in
//!    [`HttpConfig::allowed_hosts`], or an `Origin` that is neither one of
//!    those hosts nor in [`HttpConfig::allowed_origins`], is `403`;
//! 2. except for `/`, the bearer key: none or a bad one is `401` (with
//!    `WWW-Authenticate: Bearer`), a key store that cannot answer is `503`;
//! 3. the body limit: a `Content-Length` over [`HttpConfig::max_body_bytes`]
//!    is `413` (rmcp enforces the same limit on streamed bodies);
//! 4. on `/mcp` with sessions, the session owner: a session id made by
//!    another user or role is answered `404` like an unknown one;
//! 5. on `POST /mcp` with a JSON content type, the message itself: a body
//!    that is not JSON is `400` with JSON-RPC error `-32700`; one that is
//!    not a single JSON-RPC 2.0 message (bad `jsonrpc`, `id`, `method` or
//!    `params`; a batch) is `400` with `-32600`; a request id that is
//!    already in progress in the same session is `400` with `-32600`
//!    (two answers with one id would be undeliverable).
//!
//! Errors of steps 1-3 are JSON: `{"error": {"code": "UNAUTHORIZED", "message": "..."}}`.
//! What passes goes to rmcp, which answers wrong content types (`415`), a
//! missing `Accept` (`406`), a missing session id (`400`), an unknown or
//! stale one (`404`), an unsupported HTTP method (`405`), and unknown
//! JSON-RPC methods or bad params (JSON-RPC `-32601` / `-32602`).

use std::collections::{HashMap, HashSet};
use std::convert::Infallible;
use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::rejection::QueryRejection;
use axum::extract::{Query, Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, Uri, header, uri::Authority};
use axum::middleware::{self, Next};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::serve::ListenerExt;
use axum::{Json, Router};
use futures::StreamExt;
use gateway::{Filter, Gateway};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use serde_json::{Value, json};
use tokio_stream::wrappers::BroadcastStream;
use tokio_stream::wrappers::errors::BroadcastStreamRecvError;
use tokio_util::sync::CancellationToken;
use tool_core::Caller;

use crate::handler::Authenticated;
use crate::{Exposure, KeyStore, McpServer};

/// Where `toolgate serve` listens unless told otherwise: loopback only.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:8377";

/// The page at `/`: static HTML and plain JS, no build step.
const INDEX_HTML: &str = include_str!("web/index.html");

/// How MCP sessions are kept.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum SessionMode {
    /// `initialize` opens a session (`Mcp-Session-Id`) kept in memory; each
    /// session is bound to the user and role that opened it. Needed for
    /// clients that open the standalone GET stream. The default.
    #[default]
    Stateful,
    /// No sessions: every POST stands alone and plain results are answered
    /// as `application/json`. The fastest mode, and fine for several
    /// instances behind a load balancer.
    Stateless,
}

/// Settings of the HTTP layer.
#[derive(Debug, Clone)]
pub struct HttpConfig {
    /// Hosts a request's `Host` may name: `localhost`, `127.0.0.1`, `[::1]`
    /// by default. An entry without a port allows any port; `host:port`
    /// allows that port only. An `Origin` whose host is listed is allowed too.
    pub allowed_hosts: Vec<String>,
    /// Further origins allowed to call from a browser, written
    /// `scheme://host[:port]` (e.g. `https://console.example.com`).
    pub allowed_origins: Vec<String>,
    /// Largest request body, in bytes (default 1 MiB); larger is `413`.
    pub max_body_bytes: usize,
    /// Sessions or not.
    pub sessions: SessionMode,
    /// The lowest role that may read `/trace`; `None` (default) means the
    /// highest role of the gateway's hierarchy (`admin` by default).
    pub trace_role: Option<String>,
    /// Interval of keep-alive comments on SSE streams (default 15 s).
    pub sse_keep_alive: Option<Duration>,
    /// When set, a request without an `Authorization` header acts as this
    /// caller instead of getting `401` (a bad key is still `401`). Off by
    /// default; meant for local tools that cannot send headers, such as the
    /// MCP conformance suite, on a loopback listener with a low role.
    pub anonymous: Option<Caller>,
}

impl Default for HttpConfig {
    fn default() -> Self {
        Self {
            allowed_hosts: vec!["localhost".into(), "127.0.0.1".into(), "[::1]".into()],
            allowed_origins: Vec::new(),
            max_body_bytes: 1024 * 1024,
            sessions: SessionMode::Stateful,
            trace_role: None,
            sse_keep_alive: Some(Duration::from_secs(15)),
            anonymous: None,
        }
    }
}

/// Everything the HTTP server needs. Cheap to clone.
#[derive(Debug, Clone)]
pub struct HttpState {
    /// The gateway that runs the tools.
    pub gateway: Gateway,
    /// Where API keys are checked.
    pub keys: KeyStore,
    /// How tools appear to MCP clients.
    pub exposure: Exposure,
    /// Hosts, origins, limits, sessions.
    pub config: HttpConfig,
    /// Adds backend credentials (the pass-through token) to a verified caller.
    pub credentials: Option<Arc<dyn CredentialHook>>,
    shutdown: CancellationToken,
}

/// Where a deployment gets the pass-through token its tools send to backends
/// for a caller (e.g. a token of the fitness API for that user). The API key
/// that authenticated the request is never forwarded.
#[tool_core::async_trait]
pub trait CredentialHook: Send + Sync + std::fmt::Debug + 'static {
    /// The caller with `token` (and anything else the deployment knows) filled in.
    async fn credentials(&self, caller: Caller) -> Caller;
}

impl HttpState {
    /// State with the default exposure (meta) and configuration.
    pub fn new(gateway: Gateway, keys: KeyStore) -> Self {
        Self {
            gateway,
            keys,
            exposure: Exposure::default(),
            config: HttpConfig::default(),
            credentials: None,
            shutdown: CancellationToken::new(),
        }
    }

    /// Fill in backend credentials for every verified caller.
    pub fn with_credentials(mut self, hook: Arc<dyn CredentialHook>) -> Self {
        self.credentials = Some(hook);
        self
    }

    /// Set the exposure.
    pub fn with_exposure(mut self, exposure: Exposure) -> Self {
        self.exposure = exposure;
        self
    }

    /// Set the configuration.
    pub fn with_config(mut self, config: HttpConfig) -> Self {
        self.config = config;
        self
    }

    /// Cancelling this token ends every MCP session and SSE stream of the
    /// routers built from this state ([`serve_http`] cancels it on shutdown;
    /// an embedding that serves [`http_router`] itself should too, or its
    /// graceful shutdown waits for the streams forever).
    pub fn shutdown_token(&self) -> CancellationToken {
        self.shutdown.clone()
    }
}

/// The parts the middleware and handlers share.
#[derive(Debug)]
struct Shared {
    state: HttpState,
    hosts: Vec<HostRule>,
    origins: HashSet<String>,
    trace_role: String,
    server: McpServer,
}

/// The whole HTTP surface as an axum router (see the module docs for the
/// checks every request goes through). Serve it with [`serve_http`], or
/// with `axum::serve` yourself (then set TCP_NODELAY and cancel
/// [`HttpState::shutdown_token`] on shutdown).
pub fn http_router(state: HttpState) -> Router {
    let hosts = state.config.allowed_hosts.iter().filter_map(|h| HostRule::parse(h)).collect();
    let origins = state.config.allowed_origins.iter().filter_map(|o| normalize_origin(o)).collect();
    let trace_role = state
        .config
        .trace_role
        .clone()
        .unwrap_or_else(|| state.gateway.policy().hierarchy().highest().to_owned());
    let server = McpServer::new(state.gateway.clone(), state.exposure.clone());
    let shared = Arc::new(Shared { state, hosts, origins, trace_role, server });

    let config = &shared.state.config;
    let rmcp_config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(config.sessions == SessionMode::Stateful)
        .with_json_response(true)
        .with_sse_keep_alive(config.sse_keep_alive)
        .with_cancellation_token(shared.state.shutdown.child_token())
        .with_max_request_body_bytes(config.max_body_bytes)
        // Host and Origin are checked for every route by `guard_origin`, with one rule set.
        .disable_allowed_hosts()
        .disable_allowed_origins();
    let factory_server = shared.server.clone();
    let factory = move || Ok(factory_server.clone());
    let mut guard =
        McpGuard { max_body_bytes: config.max_body_bytes, owners: None, in_flight: Arc::default() };
    let mcp = match config.sessions {
        SessionMode::Stateful => {
            let manager = Arc::new(LocalSessionManager::default());
            guard.owners = Some(SessionOwners::new(manager.clone()));
            Router::new().nest_service("/mcp", StreamableHttpService::new(factory, manager, rmcp_config))
        }
        SessionMode::Stateless => {
            let manager = Arc::new(NeverSessionManager::default());
            Router::new().nest_service("/mcp", StreamableHttpService::new(factory, manager, rmcp_config))
        }
    };
    let mcp = mcp.layer(middleware::from_fn_with_state(Arc::new(guard), mcp_guard));

    let protected = Router::new()
        .route("/api/whoami", get(whoami))
        .route("/api/tools", get(tools))
        .route("/api/skills", get(skills))
        .route("/trace", get(trace))
        .fallback(not_found)
        .with_state(shared.clone())
        .merge(mcp)
        .layer(middleware::from_fn_with_state(shared.clone(), authenticate));

    Router::new()
        .route("/", get(index))
        .merge(protected)
        .layer(middleware::from_fn_with_state(shared, guard_origin))
}

/// Serve the router on `listener` (TCP_NODELAY on every accepted socket)
/// until `shutdown` resolves; then end sessions and streams and wait for
/// requests in flight.
pub async fn serve_http<F>(
    listener: tokio::net::TcpListener,
    state: HttpState,
    shutdown: F,
) -> std::io::Result<()>
where
    F: Future<Output = ()> + Send + 'static,
{
    let token = state.shutdown_token();
    let router = http_router(state);
    let listener = listener.tap_io(|tcp| {
        // Small JSON-RPC answers must not wait for Nagle's algorithm.
        if let Err(error) = tcp.set_nodelay(true) {
            tracing::debug!(%error, "could not set TCP_NODELAY");
        }
    });
    axum::serve(listener, router)
        .with_graceful_shutdown(async move {
            shutdown.await;
            token.cancel();
        })
        .await
}

/// A JSON error response of this layer.
fn error_response(status: StatusCode, code: &str, message: &str) -> Response {
    (status, Json(json!({ "error": { "code": code, "message": message } }))).into_response()
}

// ---------------------------------------------------------------------------
// Host and Origin

/// One allowed host: a name or address, and a port or any port.
#[derive(Debug, Clone, PartialEq, Eq)]
struct HostRule {
    host: String,
    port: Option<u16>,
}

impl HostRule {
    fn parse(text: &str) -> Option<Self> {
        let text = text.trim();
        // A bare IPv6 address (`::1`) is written with brackets in a Host header.
        let text = if text.matches(':').count() > 1 && !text.starts_with('[') {
            format!("[{text}]")
        } else {
            text.to_owned()
        };
        let authority: Authority = text.parse().ok()?;
        Some(Self { host: authority.host().to_ascii_lowercase(), port: authority.port_u16() })
    }

    fn allows(&self, host: &str, port: Option<u16>) -> bool {
        self.host == host && self.port.is_none_or(|p| Some(p) == port)
    }
}

fn host_allowed(rules: &[HostRule], authority: &Authority) -> bool {
    let host = authority.host().to_ascii_lowercase();
    rules.iter().any(|rule| rule.allows(&host, authority.port_u16()))
}

/// `scheme://host[:port]`, lowercased, without a default port or a trailing slash.
fn normalize_origin(text: &str) -> Option<String> {
    let uri: Uri = text.trim().trim_end_matches('/').parse().ok()?;
    let scheme = uri.scheme_str()?.to_ascii_lowercase();
    let authority = uri.authority()?;
    if uri.path() != "/" && !uri.path().is_empty() {
        return None;
    }
    let default = match scheme.as_str() {
        "http" => 80,
        "https" => 443,
        _ => return None,
    };
    let host = authority.host().to_ascii_lowercase();
    Some(match authority.port_u16() {
        Some(port) if port != default => format!("{scheme}://{host}:{port}"),
        _ => format!("{scheme}://{host}"),
    })
}

async fn guard_origin(State(shared): State<Arc<Shared>>, request: Request, next: Next) -> Response {
    let host = request
        .headers()
        .get(header::HOST)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
        .or_else(|| request.uri().authority().map(ToString::to_string));
    let Some(authority) = host.as_deref().and_then(|h| h.parse::<Authority>().ok()) else {
        return error_response(StatusCode::FORBIDDEN, "FORBIDDEN", "the request has no valid Host header");
    };
    if !host_allowed(&shared.hosts, &authority) {
        tracing::warn!(host = %authority, "refused a request for a foreign Host (possible DNS rebinding)");
        return error_response(StatusCode::FORBIDDEN, "FORBIDDEN", "this Host is not served here");
    }
    if let Some(origin) = request.headers().get(header::ORIGIN)
        && !origin_allowed(&shared, origin)
    {
        tracing::warn!(origin = ?origin, "refused a request from a foreign Origin");
        return error_response(StatusCode::FORBIDDEN, "FORBIDDEN", "this Origin may not call this server");
    }
    next.run(request).await
}

fn origin_allowed(shared: &Shared, origin: &HeaderValue) -> bool {
    let Some(origin) = origin.to_str().ok().and_then(normalize_origin) else {
        // `null`, opaque or malformed origins are never allowed.
        return false;
    };
    if shared.origins.contains(&origin) {
        return true;
    }
    origin
        .split_once("://")
        .and_then(|(_, authority)| authority.parse::<Authority>().ok())
        .is_some_and(|authority| host_allowed(&shared.hosts, &authority))
}

// ---------------------------------------------------------------------------
// Authentication and limits

/// The key of an `Authorization: Bearer <key>` header.
fn bearer(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, key) = value.split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| key.trim())
}

fn unauthorized(message: &str) -> Response {
    let mut response = error_response(StatusCode::UNAUTHORIZED, "UNAUTHORIZED", message);
    response
        .headers_mut()
        .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer realm=\"toolgate\""));
    response
}

async fn authenticate(State(shared): State<Arc<Shared>>, mut request: Request, next: Next) -> Response {
    let verified = match bearer(request.headers()) {
        None => match &shared.state.config.anonymous {
            // Opt-in only (conformance suites and local tools that cannot send headers).
            Some(caller) => crate::keys::VerifiedKey { id: "anonymous".into(), caller: caller.clone() },
            None => return unauthorized("send `Authorization: Bearer <API key>`"),
        },
        Some(key) => match shared.state.keys.verify(key).await {
            Ok(Some(verified)) => verified,
            Ok(None) => return unauthorized("the API key is not valid (unknown, revoked or malformed)"),
            Err(error) => {
                tracing::error!(%error, "the key store could not check an API key");
                return error_response(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "UNAVAILABLE",
                    "the API key could not be checked right now; try again",
                );
            }
        },
    };
    let too_long = request
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok())
        .is_some_and(|len| len > shared.state.config.max_body_bytes as u64);
    if too_long {
        return error_response(
            StatusCode::PAYLOAD_TOO_LARGE,
            "PAYLOAD_TOO_LARGE",
            &format!("the request body is larger than {} bytes", shared.state.config.max_body_bytes),
        );
    }
    // The key itself stays in the Authorization header, which no handler reads;
    // backend credentials, if any, come from the deployment's credential hook.
    let caller = match &shared.state.credentials {
        Some(hook) => hook.credentials(verified.caller).await,
        None => verified.caller,
    };
    request.extensions_mut().insert(Authenticated { caller, key_id: verified.id });
    next.run(request).await
}

/// Which user and role opened each MCP session.
#[derive(Debug)]
struct SessionOwners {
    owners: Mutex<HashMap<String, (String, String)>>,
    manager: Arc<LocalSessionManager>,
    prune_at: AtomicUsize,
}

const PRUNE_FLOOR: usize = 1024;

impl SessionOwners {
    fn new(manager: Arc<LocalSessionManager>) -> Self {
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
struct McpGuard {
    max_body_bytes: usize,
    /// Session owners; `None` without sessions.
    owners: Option<SessionOwners>,
    /// (session, request id) of requests being answered, so that a reused id
    /// is refused instead of tangling two answers in one session.
    in_flight: Arc<Mutex<HashSet<(String, String)>>>,
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

/// A JSON-RPC error answered at the HTTP layer, with status 400.
fn rpc_error(id: Value, code: i32, message: &str) -> Response {
    let body = json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}});
    (StatusCode::BAD_REQUEST, Json(body)).into_response()
}

/// Whether the body is one well-formed JSON-RPC 2.0 message; its id when it is a request.
fn check_message(message: &Value) -> Result<Option<Value>, (Value, i32, String)> {
    let Value::Object(map) = message else {
        let what = if message.is_array() {
            "batches are not supported; send one message per request"
        } else {
            "a JSON-RPC message is a JSON object"
        };
        return Err((Value::Null, -32600, what.to_owned()));
    };
    let id = map.get("id").cloned();
    let invalid = |why: &str| {
        Err((
            id.clone().filter(|i| i.is_string() || i.is_number()).unwrap_or(Value::Null),
            -32600,
            why.to_owned(),
        ))
    };
    if map.get("jsonrpc") != Some(&json!("2.0")) {
        return invalid("`jsonrpc` must be \"2.0\"");
    }
    if let Some(id) = &id
        && !(id.is_string() || id.is_i64() || id.is_u64())
    {
        return invalid("`id` must be a string or an integer");
    }
    match map.get("method") {
        Some(Value::String(_)) => {
            if map.get("params").is_some_and(|p| !p.is_object()) {
                return invalid("`params` must be an object");
            }
            Ok(id)
        }
        Some(_) => invalid("`method` must be a string"),
        None if id.is_some() && (map.contains_key("result") || map.contains_key("error")) => Ok(None),
        None => {
            invalid("a message needs a `method` (request, notification) or a `result`/`error` (response)")
        }
    }
}

async fn mcp_guard(State(guard): State<Arc<McpGuard>>, request: Request, next: Next) -> Response {
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
            return error_response(
                StatusCode::PAYLOAD_TOO_LARGE,
                "PAYLOAD_TOO_LARGE",
                &format!("the request body is larger than {} bytes", guard.max_body_bytes),
            );
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

// ---------------------------------------------------------------------------
// Handlers

async fn index() -> Response {
    let mut response = ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], INDEX_HTML).into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(
            "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; \
             img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
        ),
    );
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

async fn not_found(uri: Uri) -> Response {
    let path: String = uri.path().chars().take(100).collect();
    error_response(
        StatusCode::NOT_FOUND,
        "NOT_FOUND",
        &format!(
            "nothing at `{path}`; this server has /mcp, /trace, /api/whoami, /api/tools, /api/skills and /"
        ),
    )
}

/// The request's caller as the MCP session would see it (scoped exposure narrows it).
fn caller_of(shared: &Shared, auth: &Authenticated) -> Caller {
    let mut caller = auth.caller.clone();
    if let Exposure::Scoped(domains) = &shared.state.exposure {
        crate::exposure::narrow(&mut caller, domains);
    }
    caller
}

fn may_trace(shared: &Shared, caller: &Caller) -> bool {
    shared.state.gateway.policy().role_satisfies(&caller.role, &shared.trace_role)
}

async fn whoami(State(shared): State<Arc<Shared>>, auth: axum::Extension<Authenticated>) -> Response {
    let caller = caller_of(&shared, &auth);
    Json(json!({
        "user_id": caller.user_id,
        "role": caller.role,
        "key_id": auth.key_id,
        "exposure": shared.state.exposure.to_string(),
        "can_trace": may_trace(&shared, &caller),
    }))
    .into_response()
}

async fn tools(
    State(shared): State<Arc<Shared>>,
    auth: axum::Extension<Authenticated>,
    filter: Result<Query<Filter>, QueryRejection>,
) -> Response {
    let filter = match filter {
        Ok(Query(filter)) => filter,
        Err(rejection) => {
            return error_response(
                StatusCode::BAD_REQUEST,
                "INVALID_PARAMS",
                &format!("{}; filters are name, domain, tag and effect (read|write)", rejection.body_text()),
            );
        }
    };
    let caller = caller_of(&shared, &auth);
    let tools: Vec<Value> = shared
        .state
        .gateway
        .discover(&caller, &filter)
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

async fn skills(State(shared): State<Arc<Shared>>, auth: axum::Extension<Authenticated>) -> Response {
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

async fn trace(State(shared): State<Arc<Shared>>, auth: axum::Extension<Authenticated>) -> Response {
    let caller = caller_of(&shared, &auth);
    if !may_trace(&shared, &caller) {
        return error_response(
            StatusCode::FORBIDDEN,
            "PERMISSION_DENIED",
            &format!("the trace is for role `{}` and above", shared.trace_role),
        );
    }
    // Subscribe before answering, so every call after the `ready` event is seen.
    let events = BroadcastStream::new(shared.state.gateway.subscribe()).map(|item| {
        Ok::<_, Infallible>(match item {
            Ok(event) => {
                Event::default().event("trace").json_data(&event).unwrap_or_else(|_| Event::default())
            }
            Err(BroadcastStreamRecvError::Lagged(missed)) => {
                Event::default().event("lagged").data(missed.to_string())
            }
        })
    });
    let ready =
        futures::stream::once(async { Ok::<_, Infallible>(Event::default().event("ready").data("{}")) });
    let stream = ready.chain(events).take_until(shared.state.shutdown.clone().cancelled_owned());
    let mut keep_alive = KeepAlive::new();
    if let Some(interval) = shared.state.config.sse_keep_alive {
        keep_alive = keep_alive.interval(interval);
    }
    Sse::new(stream).keep_alive(keep_alive).into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(list: &[&str]) -> Vec<HostRule> {
        list.iter().filter_map(|h| HostRule::parse(h)).collect()
    }

    #[test]
    fn hosts_match_with_and_without_ports() {
        let rules = rules(&["localhost", "127.0.0.1", "::1", "api.example.com:8443"]);
        let ok = |h: &str| host_allowed(&rules, &h.parse::<Authority>().unwrap());
        assert!(ok("localhost"));
        assert!(ok("LOCALHOST:8080"));
        assert!(ok("127.0.0.1:1"));
        assert!(ok("[::1]:9000"));
        assert!(ok("api.example.com:8443"));
        assert!(!ok("api.example.com"));
        assert!(!ok("api.example.com:443"));
        assert!(!ok("evil.example"));
        assert!(!ok("localhost.evil.example"));
        assert!(!ok("127.0.0.2"));
    }

    #[test]
    fn origins_are_normalized() {
        assert_eq!(normalize_origin("http://LOCALHOST:80/").as_deref(), Some("http://localhost"));
        assert_eq!(normalize_origin("https://a.example:8443").as_deref(), Some("https://a.example:8443"));
        assert_eq!(normalize_origin("null"), None);
        assert_eq!(normalize_origin("file:///etc"), None);
        assert_eq!(normalize_origin("https://a.example/path"), None);
    }

    #[test]
    fn bearer_keys_are_read_case_insensitively() {
        let mut headers = HeaderMap::new();
        assert_eq!(bearer(&headers), None);
        headers.insert(header::AUTHORIZATION, HeaderValue::from_static("bearer tg_x"));
        assert_eq!(bearer(&headers), Some("tg_x"));
        headers.insert(header::AUTHORIZATION, HeaderValue::from_static("Basic dXNlcg=="));
        assert_eq!(bearer(&headers), None);
    }
}
