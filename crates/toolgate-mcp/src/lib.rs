//! MCP for a [`toolgate_gateway::Gateway`]: streamable HTTP and stdio on rmcp, API-key
//! auth, progress and cancellation, a live trace stream and a small web page.
//!
//! This is the only crate of toolgate that knows MCP and JSON-RPC. It owns no
//! tool: whatever the gateway holds is served, filtered per caller.
//!
//! # Public API (for the `toolgate` binary and other embedders)
//!
//! | Item | What it is |
//! |---|---|
//! | [`Exposure`] | `Meta` (default: the three meta-tools), `Direct` (each permitted tool), `Scoped(domains)`; `"meta" / "direct" / "scoped:a,b"` parse with `FromStr` |
//! | [`McpServer`] | the rmcp `ServerHandler`; `McpServer::new(gateway, exposure)`, `.with_caller(caller)` for a fixed identity |
//! | [`identity`] | how a request proves who it is: the [`identity::Authenticator`] trait, API keys ([`identity::KeyAuthenticator`]), OAuth access tokens ([`identity::OAuthAuthenticator`]), the anonymous caller |
//! | [`KeyStore`] | API keys in `toolgate_api_keys` (SQLite or PostgreSQL): `connect(url)`, `create(user, role)`, `list()`, `revoke(id)`, `update(id, change)`, `verify(key)`, `migrate()` |
//! | [`HttpState`], [`HttpConfig`], [`SessionMode`] | what the HTTP server needs: gateway, keys, exposure, allowed hosts/origins, body limit, sessions, trace role |
//! | [`http_router`] | the whole HTTP surface as an `axum::Router` |
//! | [`serve_http`] | serve that router on a `TcpListener` (TCP_NODELAY) until a shutdown future resolves |
//! | [`serve_stdio`], [`serve_io`] | MCP over stdin/stdout (or any byte streams) as a fixed caller |
//! | [`DEFAULT_LISTEN`] | `127.0.0.1:8377`: loopback unless the operator says otherwise |
//!
//! ```no_run
//! # async fn run(gateway: toolgate_gateway::Gateway) -> Result<(), Box<dyn std::error::Error>> {
//! use toolgate_mcp::{Exposure, HttpConfig, HttpState, KeyStore, serve_http};
//!
//! let keys = KeyStore::connect("sqlite:toolgate.db").await?;
//! let created = keys.create("alice", "member").await?;
//! eprintln!("key for alice (shown once): {}", created.key.expose());
//!
//! let state = HttpState::new(gateway, keys)
//!     .with_exposure("scoped:nutrition".parse()?)
//!     .with_config(HttpConfig { max_body_bytes: 256 * 1024, ..HttpConfig::default() });
//! let listener = tokio::net::TcpListener::bind(toolgate_mcp::DEFAULT_LISTEN).await?;
//! serve_http(listener, state, async { let _ = tokio::signal::ctrl_c().await; }).await?;
//! # Ok(()) }
//! ```
//!
//! A running example: a gateway with one tool served over MCP on an
//! in-memory pipe (as `toolgate serve --stdio` serves stdin/stdout), spoken
//! to line by line as a stdio client would: `initialize`, then `tools/list`.
//!
//! ```
//! use std::sync::Arc;
//!
//! use serde_json::{Value, json};
//! use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
//! use toolgate_core::{Caller, FnTool, ToolOutput, ToolSpec};
//! use toolgate_gateway::Gateway;
//! use toolgate_mcp::{Exposure, serve_io};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let schema = json!({"type": "object", "properties": {"city": {"type": "string"}},
//!                     "required": ["city"], "additionalProperties": false});
//! let weather = FnTool::new(ToolSpec::new("query_weather", "Today's weather.", schema), |_ctx, p| {
//!     Box::pin(async move { Ok(ToolOutput::json(json!({"city": p["city"], "sky": "clear"}))) })
//! });
//! let gateway = Gateway::builder().tool(Arc::new(weather)).build()?;
//!
//! let (client, server) = tokio::io::duplex(64 * 1024);
//! let serving =
//!     tokio::spawn(serve_io(gateway, Caller::new("ada", "member"), Exposure::Direct, tokio::io::split(server)));
//! let (read, mut write) = tokio::io::split(client);
//! let mut lines = BufReader::new(read).lines();
//!
//! for message in [
//!     json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
//!         "protocolVersion": "2025-06-18", "capabilities": {},
//!         "clientInfo": {"name": "doctest", "version": "0"}}}),
//!     json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
//!     json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
//! ] {
//!     write.write_all(format!("{message}\n").as_bytes()).await?;
//! }
//! let mut tools = Value::Null;
//! while let Some(line) = lines.next_line().await? {
//!     let answer: Value = serde_json::from_str(&line)?;
//!     if answer["id"] == 2 {
//!         tools = answer["result"]["tools"].clone();
//!         break;
//!     }
//! }
//! assert_eq!(tools[0]["name"], "query_weather");
//! assert_eq!(tools[0]["annotations"]["readOnlyHint"], true);
//!
//! drop((write, lines)); // the client hangs up: the server ends cleanly
//! serving.await??;
//! # Ok(())
//! # }
//! ```
//!
//! # Cargo features
//!
//! All on by default (the `toolgate` binary uses them all); an embedder
//! serving only its own gateway may turn them off with `default-features = false`:
//!
//! | Feature | What it adds |
//! |---|---|
//! | `agent` | `POST /api/chat` and `/api/chat/answer` (the `toolgate-agent` runtime over SSE), `HttpState::with_agent` |
//! | `audit` | `GET /api/audit` and key operations on the audit trail (`toolgate-fleet`'s `SqlAudit`), `HttpState::with_audit` |
//! | `oauth` | `identity::OAuthAuthenticator` (access tokens of an identity provider, `toolgate-oauth`) |
//!
//! Federation of upstream MCP servers (`toolgate-mcp-upstream`) is always
//! built: its prompts, resources, completions and logging are woven into
//! [`McpServer`]'s handler.
//!
//! # HTTP surface
//!
//! | Route | Who | What |
//! |---|---|---|
//! | `GET /` | anyone | the web page (static HTML + plain JS, embedded); it asks for an API key and calls the routes below with it |
//! | `POST/GET/DELETE /mcp` | any valid key | MCP streamable HTTP (rmcp); the session sees only the key's caller |
//! | `GET /api/whoami` | any valid key | `{user_id, role, key_id, exposure, can_trace, trace_scope}` (`trace_scope`: `all` or `own`) |
//! | `GET /api/tools?name=&domain=&tag=&effect=` | any valid key | the tools this caller may use |
//! | `GET /api/skills` | any valid key | the skills this caller may read |
//! | `GET /api/audit?user=&tool=&outcome=&since=&limit=` | the highest role | the audit trail, newest first (`{records: [...]}`) |
//! | `POST /api/admin/reload` | the highest role | apply the configuration again ([`Reloader`]): `{reloaded: true, changes}`, or `422` with `problems` and nothing changed; `503` without a reloader |
//! | `GET /api/admin/reload` | the highest role | how the last reload went (`{last}`: when, reloaded or not, what changed or every problem) |
//! | `GET /api/admin/sources` | the highest role | each source of tools ([`Sources`]): reachable or not, its last error, tool count, calls, error rate and latency from the metrics |
//! | `GET/POST /api/admin/keys`, `PATCH/DELETE /api/admin/keys/{id}` | the highest role | list the API keys (no secrets), make one (its secret in that answer only), change its role or scope, revoke it; each on the audit trail |
//! | `GET /page.css`, `GET /admin.js` | anyone | the page's stylesheet and its operator section (shown to the highest role) |
//! | `GET /healthz` | anyone, any Host | `{"status": "ok"}` while the process serves |
//! | `GET /readyz` | anyone, any Host | `200` when every [`Probe`] passes (database, Redis, ...), else `503`; `{status, checks}` |
//! | `GET /metrics` | loopback peers, or [`HttpConfig::metrics_token`] | Prometheus text: calls by tool, role and outcome, latency per tool, in flight, sessions, rate-limit refusals, and any [`MetricsSource`] |
//! | `GET /trace` | any valid key (not anonymous): [`HttpConfig::trace_role`] and above (the highest role by default) see every call, others their own | SSE: a `ready` event, then one `trace` event per `toolgate_gateway::TraceEvent` (`kind` `start`, `end` or `cancelled`; secrets redacted); `lagged` when the gateway dropped some; `revoked` before the stream ends for a revoked key; a reader [`HttpConfig::trace_buffer`] events behind is dropped |
//!
//! Every request is checked in this order: one Host and an absolute-form
//! target naming it (`400`), Host/Origin (`403`), bearer key (`401`, except
//! `/`), requests per key ([`HttpConfig::http_rate`]: `429` with
//! `Retry-After`), body size (`413`), session owner and caps (`404`, `429`).
//! `/healthz`, `/readyz` and `/metrics` are outside these checks, and so is
//! `/.well-known/…` (the Protected Resource Metadata, RFC 9728, when an
//! authenticator publishes one; `404` otherwise).
//! Connections are bounded by [`HttpConfig::header_timeout`],
//! [`HttpConfig::idle_timeout`] and [`HttpConfig::max_connections`];
//! [`serve_http`] drains on shutdown within [`HttpConfig::drain_grace`]. Error
//! bodies are `{"error": {"code", "message"}}`, on `/mcp` a JSON-RPC error
//! (`{"jsonrpc": "2.0", "id": null, "error": {"code": -32000, "message", "data": {"code"}}}`)
//! with the same status and headers. See [`http_router`]
//! for the details, and [`KeyStore`] for why keys are stored as SHA-256 digests.
//!
//! # MCP surface
//!
//! * `initialize` / `server/discover`: `instructions` is the gateway's catalog
//!   for this caller (in direct and scoped modes after a short note on how its
//!   meta-tool rules map onto directly called tools).
//! * `tools/list`: in meta mode the three meta-tools; in direct and scoped
//!   modes every tool the caller may use. Annotations come from the tool's
//!   effect (`readOnlyHint` for reads, `destructiveHint` for writes that are
//!   not idempotent, `idempotentHint` for reads and idempotent writes);
//!   `outputSchema` is the envelope's schema.
//! * `tools/call`: the gateway's envelope as `structuredContent`, the rendered
//!   summary as text content, `isError` when `success` is false. Tool
//!   failures (unknown tool, bad parameters, permission) are envelopes, not
//!   JSON-RPC errors, so the model reads them.
//! * Progress: when the request carries `_meta.progressToken`, the tool's
//!   progress reports become `notifications/progress`.
//! * Cancellation: `notifications/cancelled` drops the running call (and the tool's future).
//! * `prompts/list` / `prompts/get`: `catalog`, and `guide:<skill id>` for
//!   each skill the caller may read.
//!
//! # Identity
//!
//! Over HTTP the caller is whoever the request proves to be (see
//! [`identity`]): the user and role stored with an API key (`Bearer tg_…`),
//! or the claims of an access token of the company's identity provider
//! (any other bearer, with [`identity::OAuthAuthenticator`]): user, role
//! through its groups, tenant, toolset through its scopes. A `401` then
//! says where to sign in (`WWW-Authenticate: Bearer resource_metadata=…`).
//! Sessions and `/trace` streams are bound to the principal (key id or
//! token subject) and end when the key is revoked or the token expires
//! (unless a fresh token of the same subject was used). Neither the key nor
//! the token is passed to tools, logged or traced; a token is kept only as
//! the subject of a token exchange ([`toolgate_core::Caller::subject_token`]). Over stdio the
//! caller is fixed by whoever starts the process: see [`serve_stdio`] for
//! why that is a local trust boundary.

#![deny(missing_docs)]

mod ask;
mod error;
mod exposure;
mod handler;
mod http;
pub mod identity;
mod keys;
mod mcp_shape;
mod progress;
mod stdio;
mod tasks;

pub use error::{Error, Result};
pub use exposure::{Exposure, ParseExposureError};
pub use handler::{CATALOG_PROMPT, GUIDE_PROMPT_PREFIX, McpServer};
pub use http::{
    CredentialHook, DEFAULT_LISTEN, HttpConfig, HttpRate, HttpState, MetricsSource, Probe, Reloader,
    SessionMode, SourceState, Sources, http_router, serve_http,
};
pub use keys::{
    CreatedKey, KEY_PREFIX, KeyChange, KeyInfo, KeyScope, KeyStore, MIGRATIONS_TABLE, REVOCATION_POLL,
    VerifiedKey,
};
pub use mcp_shape::tool_listing;
pub use stdio::{serve_io, serve_stdio, serve_stdio_with};
pub use tasks::{LONG_RUNNING_TAG, TaskLimits};

// Re-exported so that an embedder names the same versions this crate uses.
pub use {axum, rmcp};
