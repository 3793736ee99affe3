//! Runs route-table operations against an HTTP backend.
//!
//! A route table (see [`toolgate_schema::RouteTable`]) names, per operation, the method and the path
//! template of a backend call. [`HttpExecutor`] is the [`toolgate_gateway::RouteHandler`] that makes that
//! call: the gateway has already found the operation and validated the parameters with the
//! table's schema; the executor fills the path (every value percent-encoded as one segment),
//! sends the caller's credential for this backend, waits at most the configured time and answers
//! `{ok, status, method, path, payload}` or a [`toolgate_core::ToolError`] with the right code.
//!
//! The answer is read by its `Content-Type`: JSON into `payload`; a picture (PNG, JPEG, GIF,
//! WebP) as image content beside `{content: "image", media_type, bytes}` (MCP `ImageContent`);
//! any other file (PDF, `application/octet-stream`, ...) as `{content: "binary", media_type,
//! bytes, base64}`; a file over [`HttpOptions::max_binary_bytes`] (1 MiB by default) is an
//! `EXECUTION_ERROR` that names its size and the limit. A refusal (400, 422) keeps the API's
//! own reasons (RFC 9457 `errors[]`, `invalid-params`, validation lists such as Prism's or
//! FastAPI's) in `details.reasons` as `{at, message}`, at most ten, each clipped, and names the
//! first ones in its message, so the model can fix its call.
//!
//! Use it to serve an HTTP API as tools: the gateway validates, the executor calls.
//!
//! # Example
//!
//! A tiny backend (axum, in-process on `127.0.0.1:0`), one route table, and one call of its
//! operation through the gateway:
//!
//! ```
//! use std::sync::Arc;
//! use serde_json::json;
//! use toolgate_core::{Caller, ToolContext};
//! use toolgate_gateway::{CallOptions, Gateway};
//! use toolgate_http::{Auth, HttpExecutor, HttpOptions};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! // The backend: the weight of one day.
//! let weight = |axum::extract::Path(date): axum::extract::Path<String>| async move {
//!     axum::Json(json!({"date": date, "kg": 71.4}))
//! };
//! let app = axum::Router::new().route("/body/measurements/{date}", axum::routing::get(weight));
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
//! let base_url = format!("http://{}", listener.local_addr()?);
//! tokio::spawn(async move { axum::serve(listener, app).await });
//!
//! let table = toolgate_schema::RouteTable::from_toml_str(r#"
//! tool = "query_weight"
//! description = "Body weight of the caller on one day, in kg. Example: {\"op\": \"get_weight\", \"date\": \"2026-03-01\"}."
//! domain = "body"
//! [[routes]]
//! op = "get_weight"
//! method = "GET"
//! path = "/body/measurements/{date}"
//! summary = "The measurement of one day"
//! fields = [{ name = "date", type = "string", required = true }]
//! "#)?;
//! let options = HttpOptions::default().backend_id("body").auth(Auth::None);
//! let executor = Arc::new(HttpExecutor::new(&base_url, options)?);
//! let gateway = Gateway::builder().tools(executor.tools([table])?).build()?;
//!
//! let ctx = ToolContext::new(Caller::new("alice", "member"));
//! let params = json!({"op": "get_weight", "date": "2026-03-01"});
//! let answer = gateway.execute(&ctx, "query_weight", params, &CallOptions::default()).await;
//! assert!(answer.success, "{answer:?}");
//! let result = answer.result.unwrap();
//! assert_eq!(result["status"], 200);
//! assert_eq!(result["path"], "/body/measurements/2026-03-01");
//! assert_eq!(result["payload"]["kg"], 71.4);
//! # Ok(()) }
//! ```
//!
//! The token is the caller's credential made for this backend: [`toolgate_core::Caller::credentials`]
//! under [`HttpOptions::backend_id`], filed by whoever issued it (a deployment's credential
//! hook). A credential made for another backend is never sent; a caller without one for this
//! backend is refused before any I/O. It never comes from the process environment or the
//! parameters (the gateway refuses injected fields), and it is never logged or returned. A
//! backend that wants one fixed credential instead gets [`Auth::Static`] (the binary reads it
//! from the environment and hands it over as a [`toolgate_core::Secret`]); an open backend gets
//! [`Auth::None`]. A backend that takes tokens from the company's identity provider gets
//! [`Auth::Token`]: a [`toolgate_core::TokenSource`] (e.g. the `toolgate-oauth` crate's token exchange, which
//! trades the caller's sign-in for a token made for this backend alone, or its client-credentials
//! grant) mints the token sent as `Authorization: Bearer`, fetched per call before any I/O to the
//! backend; a source that cannot give one fails the call with its error and nothing is sent, and
//! the caller's own sign-in is never sent. Whatever the backend answers is scrubbed of every
//! credential the request carried before any of it is clipped, kept in an error or returned.
//!
//! TLS goes through rustls: the system roots, plus the PEM bundle of
//! [`HttpOptions::ca_bundle_pem`] for private CAs. A certificate the client cannot trust is
//! answered `UNAVAILABLE` with a message that names the certificate problem and its fix, and
//! is never retried.
//!
//! # Cargo features
//!
//! None. TLS is always rustls with the aws-lc-rs provider (the workspace's one provider), so
//! [`parse_ca_bundle`] and [`certificate_problem`] are always there.

#![deny(missing_docs)]

mod auth;
mod encode;
mod executor;
mod multipart;
mod prepare;
mod response;
mod targets;
mod tls;
mod whole;
mod wire;

pub use auth::{Auth, TokenProvider};
pub use encode::{encode_component, fill_path};
pub use executor::{HttpExecutor, HttpOptions, PROGRESS_STEP_BYTES};
pub use prepare::Prepared;
/// The URL type of [`Prepared::url`] and [`HttpExecutor::base_url`].
pub use reqwest::Url;
pub use tls::{certificate_problem, parse_ca_bundle};

/// Why an executor or its tools could not be built.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The base URL is not a usable `http(s)://` URL.
    #[error("backend base URL {url:?}: {reason}")]
    BaseUrl {
        /// The URL as given (shortened).
        url: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The HTTP client could not be built.
    #[error("cannot build the HTTP client: {0}")]
    Client(#[source] reqwest::Error),
    /// The CA bundle is not usable.
    #[error("[tls] CA bundle: {reason}")]
    CaBundle {
        /// What is wrong with it.
        reason: String,
    },
    /// The authentication settings are not usable (never includes the credential itself).
    #[error("auth: {0}")]
    Auth(String),
    /// A route calls its own server ([`toolgate_schema::Route::server`]) that the executor's
    /// [`HttpOptions::servers`] does not list.
    #[error(
        "op `{op}` of tool `{tool}` is called at its own server {server:?}, which is not declared: list it under the domain's `servers` (`servers = {{ {server:?} = {server:?} }}`, or the URL to call instead) so that its requests, and the domain's credential, may go there"
    )]
    UndeclaredServer {
        /// The tool.
        tool: String,
        /// The operation.
        op: String,
        /// The route's server.
        server: String,
    },
    /// A route table is broken.
    #[error(transparent)]
    Table(#[from] toolgate_schema::Error),
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
