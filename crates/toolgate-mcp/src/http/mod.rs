//! The HTTP server: MCP over streamable HTTP at `/mcp`, the live trace at
//! `/trace`, a small JSON API for the web page, and the page itself at `/`.
//!
//! Every request passes, in this order:
//!
//! 1. the Host/Origin check (DNS rebinding): two `Host` headers, or an
//!    absolute-form target (`GET http://host/...`) naming another host than
//!    the `Host` header or one not served here, are `400`; a Host that is not in
//!    [`HttpConfig::allowed_hosts`], or an `Origin` that is neither one of
//!    those hosts nor in [`HttpConfig::allowed_origins`], is `403`;
//! 2. except for `/` and `/.well-known/…`, who the request proves to be,
//!    asked of the [`crate::identity::Authenticator`]s in order (API keys,
//!    then [`HttpState::authenticators`], then the anonymous caller): no
//!    credential or a bad one is `401` (with `WWW-Authenticate: Bearer`,
//!    naming the resource metadata when sign-in is configured), a valid one
//!    that may not use the server `403` (`error="insufficient_scope"` only
//!    when more scope would help), a key store or identity provider that
//!    cannot answer `503`;
//!    then (2b) requests per key per interval, when [`HttpConfig::http_rate`]
//!    is set: over it is `429` with `Retry-After`;
//! 3. the body limit: a `Content-Length` over [`HttpConfig::max_body_bytes`]
//!    is `413` (rmcp enforces the same limit on streamed bodies);
//! 4. on `/mcp` with sessions, the session owner: a session id made by
//!    another user or role is answered like an unknown one (`404` with a
//!    JSON-RPC error saying the session is unknown here); an `initialize`
//!    beyond [`HttpConfig::max_sessions_per_key`] or
//!    [`HttpConfig::max_sessions`] is `429` with JSON-RPC error `-32000`;
//! 5. on `POST /mcp` with a JSON content type, the message itself: a body
//!    that is not JSON is `400` with JSON-RPC error `-32700`; one that is
//!    not a single JSON-RPC 2.0 message (bad `jsonrpc`, `id`, `method` or
//!    `params`; a batch; a member named twice in any object) is `400` with `-32600`; a request id that is
//!    already in progress in the same session is `400` with `-32600`
//!    (two answers with one id would be undeliverable).
//!
//! Errors of steps 1-3 are JSON: `{"error": {"code": "UNAUTHORIZED", "message": "..."}}`;
//! on `/mcp` they are JSON-RPC errors (`id` null, the code in `data.code`),
//! which MCP clients can read.
//! What passes goes to rmcp, which answers wrong content types (`415`), a
//! missing `Accept` (`406`), a missing session id (`400`), an unsupported
//! HTTP method (`405`), and unknown
//! JSON-RPC methods or bad params (JSON-RPC `-32601` / `-32602`).
//!
//! One file per step: `origin` (1), `auth` (2; `wellknown` publishes the
//! metadata of its sign-in), `rate` (2b), `limits` (3),
//! `session` (4) with `message` (5). Steps 1-3 are plain checks that
//! [`admit`] runs in this order: one middleware for the page and the API
//! routes, and called directly by the `/mcp` endpoint, which then runs 4
//! and 5 and hands the request to rmcp's service (shared, not cloned per
//! request: the hot path pays for no middleware stack). `serve` holds the
//! connection level (cap, header and idle timeouts, the drain), with
//! `admission` (connections without a valid key yet, capped per peer and in
//! total apart from the cap). `ops`
//! serves `/healthz`, `/readyz` and `/metrics` outside them all (balancers
//! and scrapers name an instance by address and carry no key).

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::AtomicU64;
use std::time::Duration;

use axum::Json;
use axum::Router;
use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get, patch, post};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use serde_json::json;
use tokio_util::sync::CancellationToken;
use toolgate_core::Caller;
use toolgate_gateway::Gateway;

use crate::identity::{Anonymous, Authenticator, KeyAuthenticator};
use crate::{Exposure, KeyStore, McpServer};

mod admin;
mod admin_keys;
mod admission;
mod api;
#[cfg(feature = "audit")]
mod audit;
mod auth;
mod batch;
mod cancel;
#[cfg(feature = "agent")]
mod chat;
mod console;
mod limits;
mod message;
mod ops;
mod origin;
mod page;
mod rate;
mod reload;
mod serve;
mod session;
mod trace;
mod wellknown;

/// The header that names an MCP session.
const SESSION_HEADER: &str = "mcp-session-id";

pub use admin::{SourceState, Sources};
pub use ops::{MetricsSource, Probe};
pub use rate::HttpRate;
pub use reload::Reloader;
pub use serve::serve_http;

/// Where `toolgate serve` listens unless told otherwise: loopback only.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:8377";

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
    /// Lets a scraper that is not on loopback read `/metrics` with
    /// `Authorization: Bearer <token>`. Unset: loopback only.
    pub metrics_token: Option<String>,
    /// Requests per interval per API key at the transport (`429` with
    /// `Retry-After` over it); counted in [`HttpState::with_rate_store`]'s
    /// store, in memory when none is set. Unset: no transport limit.
    pub http_rate: Option<HttpRate>,
    /// Time a client has to send a request's headers, counted from when the
    /// connection waits for a request, so it also closes silent new
    /// connections and partial headers (slowloris). Default 10 s.
    pub header_timeout: Duration,
    /// A kept-alive connection with no request running and no byte moving
    /// for this long is closed. Keep it above `sse_keep_alive`. Default 60 s.
    pub idle_timeout: Duration,
    /// Most connections open at once; further ones wait in the listen
    /// backlog until one closes. Default 1024.
    pub max_connections: usize,
    /// Most connections open at once that have not yet carried a request
    /// with a valid API key (the rest of [`Self::max_connections`] is kept
    /// for clients with a key); a new one beyond it closes the oldest idle
    /// one of them. Keep it below `max_connections`. Default 512.
    pub max_unauthenticated_connections: usize,
    /// The same per peer IP address: a new connection beyond it closes that
    /// peer's oldest idle one without a key. Default 64.
    pub max_unauthenticated_per_peer: usize,
    /// Most MCP sessions open at once (stateful mode); an `initialize` over
    /// it is refused with a JSON-RPC error. Default 1000.
    pub max_sessions: usize,
    /// Most MCP sessions one API key may hold open. Default 32.
    pub max_sessions_per_key: usize,
    /// A session with no request for this long is closed. Default 5 min.
    pub session_idle: Duration,
    /// On shutdown, how long calls in flight may still finish; what is left
    /// then is answered with a JSON-RPC error. Default 10 s.
    pub drain_grace: Duration,
    /// Trace events a `/trace` reader may fall behind before it is dropped
    /// (it reconnects and gets a fresh stream). Default 256.
    pub trace_buffer: usize,
    /// How many tasks are kept and for how long ([`crate::McpServer::with_task_limits`]).
    pub tasks: crate::TaskLimits,
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
            metrics_token: None,
            http_rate: None,
            header_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(60),
            max_connections: 1024,
            max_unauthenticated_connections: 512,
            max_unauthenticated_per_peer: 64,
            max_sessions: 1000,
            max_sessions_per_key: 32,
            session_idle: Duration::from_secs(300),
            drain_grace: Duration::from_secs(10),
            trace_buffer: 256,
            tasks: crate::TaskLimits::default(),
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
    /// Adds backend credentials (each filed for the backend it was made for) to a verified caller.
    pub credentials: Option<Arc<dyn CredentialHook>>,
    /// Checks behind `/readyz`.
    pub probes: Vec<Arc<dyn Probe>>,
    /// More metrics for `/metrics`.
    pub metrics_sources: Vec<Arc<dyn MetricsSource>>,
    /// The audit trail behind `/api/audit` (feature `audit`).
    #[cfg(feature = "audit")]
    pub audit: Option<toolgate_fleet::SqlAudit>,
    /// Where the transport's request counters live.
    pub rate_store: Option<Arc<dyn toolgate_gateway::RateStore>>,
    /// The agent behind `POST /api/chat`; without one that route is `503` (feature `agent`).
    #[cfg(feature = "agent")]
    pub agent: Option<toolgate_agent::Agent>,
    /// Ways to prove who a request is, asked after the API keys and before
    /// the anonymous caller (e.g. [`crate::identity::OAuthAuthenticator`]).
    pub authenticators: Vec<Arc<dyn Authenticator>>,
    /// What `POST /api/admin/reload` runs; without one that route is `503`.
    pub reloader: Option<Arc<dyn Reloader>>,
    /// What `GET /api/admin/sources` asks about each source of tools; without
    /// one that route lists the gateway's tools by domain, reachability unknown.
    pub sources: Option<Arc<dyn Sources>>,
    /// The upstreams' prompts, resources, completions and logging, served beside toolgate's own.
    pub federation: Option<toolgate_mcp_upstream::Federation>,
    /// The resources toolgate serves itself ([`McpServer::with_resources`]).
    pub resources: Option<std::sync::Arc<dyn toolgate_core::Resources>>,
    shutdown: CancellationToken,
    drain: Drain,
}

/// The two stages of a graceful shutdown, as the handlers see them.
#[derive(Debug, Clone, Default)]
pub(crate) struct Drain {
    /// Shutdown began: streams that are not calls (`/trace`, the standalone
    /// GET stream) end, calls in flight go on.
    pub(crate) started: CancellationToken,
    /// The grace period is over: what is still running is answered with a
    /// JSON-RPC error.
    pub(crate) expired: CancellationToken,
}

/// Where a deployment gets the credentials its tools send to backends for a
/// caller, each filed under the backend it was made for (e.g. a token of the
/// fitness API for that user, under `fitness`): only that backend's tools
/// receive it. The API key that authenticated the request is never forwarded.
#[toolgate_core::async_trait]
pub trait CredentialHook: Send + Sync + std::fmt::Debug + 'static {
    /// The caller with its `credentials` (and anything else the deployment knows) filled in.
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
            probes: Vec::new(),
            metrics_sources: Vec::new(),
            #[cfg(feature = "audit")]
            audit: None,
            rate_store: None,
            #[cfg(feature = "agent")]
            agent: None,
            authenticators: Vec::new(),
            reloader: None,
            sources: None,
            federation: None,
            resources: None,
            shutdown: CancellationToken::new(),
            drain: Drain::default(),
        }
    }

    /// Fill in backend credentials for every verified caller.
    pub fn with_credentials(mut self, hook: Arc<dyn CredentialHook>) -> Self {
        self.credentials = Some(hook);
        self
    }

    /// Also accept requests this authenticator proves (asked after the API
    /// keys, in the order added). One that can tell clients how to sign in
    /// (OAuth) makes `401`s carry its `WWW-Authenticate` challenge and
    /// publishes its Protected Resource Metadata under `/.well-known/`.
    pub fn with_authenticator(mut self, authenticator: Arc<dyn Authenticator>) -> Self {
        self.authenticators.push(authenticator);
        self
    }

    /// Serve `POST /api/admin/reload` (the highest role) with this reloader.
    pub fn with_reloader(mut self, reloader: Arc<dyn Reloader>) -> Self {
        self.reloader = Some(reloader);
        self
    }

    /// Serve the upstreams' prompts, resources, completions and logging ([`McpServer::with_federation`]).
    pub fn with_federation(mut self, federation: toolgate_mcp_upstream::Federation) -> Self {
        self.federation = Some(federation);
        self
    }

    /// Serve toolgate's own resources ([`McpServer::with_resources`]).
    pub fn with_resources(mut self, resources: std::sync::Arc<dyn toolgate_core::Resources>) -> Self {
        self.resources = Some(resources);
        self
    }

    /// Serve `GET /api/admin/sources` (the highest role) with these sources.
    pub fn with_sources(mut self, sources: Arc<dyn Sources>) -> Self {
        self.sources = Some(sources);
        self
    }

    /// Add a readiness check to `/readyz`.
    pub fn with_probe(mut self, probe: Arc<dyn Probe>) -> Self {
        self.probes.push(probe);
        self
    }

    /// Add metrics to `/metrics`.
    pub fn with_metrics_source(mut self, source: Arc<dyn MetricsSource>) -> Self {
        self.metrics_sources.push(source);
        self
    }

    /// Serve this audit trail at `/api/audit`, and put key operations on it.
    #[cfg(feature = "audit")]
    pub fn with_audit(mut self, audit: toolgate_fleet::SqlAudit) -> Self {
        self.audit = Some(audit);
        self
    }

    /// Count the transport's requests per key here (Redis for a fleet).
    pub fn with_rate_store(mut self, store: Arc<dyn toolgate_gateway::RateStore>) -> Self {
        self.rate_store = Some(store);
        self
    }

    /// Serve `POST /api/chat` with this agent (its gateway should be this state's).
    #[cfg(feature = "agent")]
    pub fn with_agent(mut self, agent: toolgate_agent::Agent) -> Self {
        self.agent = Some(agent);
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
    hosts: Vec<origin::HostRule>,
    origins: HashSet<String>,
    trace_role: String,
    server: McpServer,
    /// The session manager, for the sessions gauge (stateful mode only).
    sessions: Option<Arc<LocalSessionManager>>,
    /// Requests refused with `429`.
    http_limited: AtomicU64,
    /// Steps 4 and 5 of `/mcp`.
    guard: session::McpGuard,
    /// rmcp's streamable HTTP service behind them.
    mcp: session::McpService,
    /// Step 2's authenticators.
    auth: auth::Chain,
}

/// The whole HTTP surface as an axum router (see the module docs for the
/// checks every request goes through). Serve it with [`serve_http`], or
/// with `axum::serve` yourself: then set TCP_NODELAY, cancel
/// [`HttpState::shutdown_token`] on shutdown, run
/// [`KeyStore::watch_revocations`] so that keys revoked by other processes
/// end their sessions, and know that the connection limits
/// ([`HttpConfig::header_timeout`], [`HttpConfig::idle_timeout`],
/// [`HttpConfig::max_connections`], [`HttpConfig::max_unauthenticated_connections`],
/// [`HttpConfig::max_unauthenticated_per_peer`]) and the drain are [`serve_http`]'s.
pub fn http_router(mut state: HttpState) -> Router {
    if state.config.http_rate.is_some() && state.rate_store.is_none() {
        state.rate_store = Some(Arc::new(toolgate_gateway::MemoryRateStore::new()));
    }
    let hosts = state.config.allowed_hosts.iter().filter_map(|h| origin::HostRule::parse(h)).collect();
    let origins = state.config.allowed_origins.iter().filter_map(|o| origin::normalize_origin(o)).collect();
    let trace_role = state
        .config
        .trace_role
        .clone()
        .unwrap_or_else(|| state.gateway.policy().hierarchy().highest().to_owned());
    let mut server =
        McpServer::new(state.gateway.clone(), state.exposure.clone()).with_task_limits(state.config.tasks);
    if let Some(federation) = &state.federation {
        server = server.with_federation(federation.clone());
    }
    if let Some(resources) = &state.resources {
        server = server.with_resources(resources.clone());
    }
    let server =
        if state.config.sessions == SessionMode::Stateful { server } else { server.without_asking() };
    let config = &state.config;
    let rmcp_config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(config.sessions == SessionMode::Stateful)
        .with_json_response(true)
        .with_sse_keep_alive(config.sse_keep_alive)
        .with_cancellation_token(state.shutdown.child_token())
        .with_max_request_body_bytes(config.max_body_bytes)
        // Host and Origin are checked for every route by `origin::check`, with one rule set.
        .disable_allowed_hosts()
        .disable_allowed_origins();
    let mut authenticators: Vec<Arc<dyn Authenticator>> =
        vec![Arc::new(KeyAuthenticator::new(state.keys.clone()))];
    authenticators.extend(state.authenticators.iter().cloned());
    if let Some(caller) = &state.config.anonymous {
        authenticators.push(Arc::new(Anonymous::new(caller.clone())));
    }
    let expiring = !state.authenticators.is_empty();
    let chain = auth::Chain::new(authenticators);
    let factory_server = server.clone();
    let factory = move || Ok(factory_server.for_session());
    let mut guard = session::McpGuard {
        max_body_bytes: config.max_body_bytes,
        owners: None,
        in_flight: Arc::default(),
        stateless_calls: None,
        drain: state.drain.clone(),
        server: server.clone(),
    };
    let (mcp, sessions) = match config.sessions {
        SessionMode::Stateful => {
            let mut manager = LocalSessionManager::default();
            manager.session_config.keep_alive = Some(config.session_idle);
            let manager = Arc::new(manager);
            let owners = Arc::new(session::SessionOwners::new(manager.clone(), config));
            session::close_revoked(&owners, &state.keys, &state.shutdown);
            if expiring {
                session::close_expired(&owners, &state.shutdown);
            }
            guard.owners = Some(owners);
            let service = StreamableHttpService::new(factory, manager.clone(), rmcp_config);
            (session::McpService::Stateful(service), Some(manager))
        }
        SessionMode::Stateless => {
            let manager = Arc::new(NeverSessionManager::default());
            guard.stateless_calls = Some(Arc::default());
            (session::McpService::Stateless(StreamableHttpService::new(factory, manager, rmcp_config)), None)
        }
    };
    let shared = Arc::new(Shared {
        state,
        hosts,
        origins,
        trace_role,
        server,
        sessions,
        http_limited: AtomicU64::new(0),
        guard,
        mcp,
        auth: chain,
    });

    let protected = Router::new().route("/api/whoami", get(api::whoami));
    #[cfg(feature = "agent")]
    let protected =
        protected.route("/api/chat", post(chat::chat)).route("/api/chat/answer", post(chat::answer));
    #[cfg(feature = "audit")]
    let protected = protected.route("/api/audit", get(audit::audit));
    let protected = protected
        .route("/api/tools", get(api::tools))
        .route("/api/skills", get(api::skills))
        .route("/api/tool", get(console::tool))
        .route("/api/call", post(console::call))
        .route("/trace", get(trace::trace))
        .route("/api/admin/reload", post(reload::reload).get(reload::last))
        .route("/api/admin/sources", get(admin::sources))
        .route("/api/admin/keys", get(admin_keys::list).post(admin_keys::create))
        .route("/api/admin/keys/{id}", patch(admin_keys::update).delete(admin_keys::revoke))
        .fallback(api::not_found)
        .with_state(shared.clone())
        .layer(middleware::from_fn_with_state(shared.clone(), admitted)); // 1-3

    let page = Router::new()
        .route("/", get(page::index))
        .route("/favicon.ico", get(page::favicon))
        .route("/page.css", get(page::stylesheet))
        .route("/admin.js", get(page::admin_script))
        // RFC 9728 metadata needs no credential: it says where to get one.
        .route("/.well-known/{*rest}", get(wellknown::metadata))
        .with_state(shared.clone())
        .layer(middleware::from_fn_with_state(shared.clone(), origin_checked)); // 1

    // Balancers and scrapers name the instance by address and carry no key.
    let ops = Router::new()
        .route("/healthz", get(ops::healthz))
        .route("/readyz", get(ops::readyz))
        .route("/metrics", get(ops::metrics))
        .with_state(shared.clone());

    Router::new()
        .route("/mcp", any(session::endpoint)) // 1-3 through `admit`, then 4, 5 and rmcp
        .with_state(shared)
        .merge(page)
        .merge(protected)
        .merge(ops)
}

/// Steps 1-3, in this order, for every route but `/` and the ops routes:
/// Host/Origin, the key (which puts the caller in the request), the
/// transport's rate limit, the declared body size. `Err` is the answer.
async fn admit(shared: &Shared, mut request: Request) -> Result<Request, Response> {
    origin::check(shared, &request)?;
    auth::check(shared, &mut request).await?;
    rate::check(shared, request.extensions()).await?;
    limits::check(shared, &request)?;
    Ok(request)
}

/// [`admit`] as a middleware.
async fn admitted(State(shared): State<Arc<Shared>>, request: Request, next: Next) -> Response {
    match admit(&shared, request).await {
        Ok(request) => next.run(request).await,
        Err(refused) => refused,
    }
}

/// Step 1 alone, for the page (which needs no key).
async fn origin_checked(State(shared): State<Arc<Shared>>, request: Request, next: Next) -> Response {
    match origin::check(&shared, &request) {
        Ok(()) => next.run(request).await,
        Err(refused) => refused,
    }
}

/// A JSON error response of this layer.
fn error_response(status: StatusCode, code: &str, message: &str) -> Response {
    (status, Json(json!({ "error": { "code": code, "message": message } }))).into_response()
}

/// The 400 answer to a query or body that could not be read: what was wrong
/// (axum's words), then how to write it.
fn invalid_params(problem: String, how: &str) -> Response {
    error_response(StatusCode::BAD_REQUEST, "INVALID_PARAMS", &format!("{problem}; {how}"))
}
