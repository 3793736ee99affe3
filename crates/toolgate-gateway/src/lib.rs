//! The gateway: one registry of tools and skills, the one execute pipeline,
//! the three meta-tools and the catalog text.
//!
//! A service that gives a model tools builds one [`Gateway`] from
//! [`toolgate_core::Tool`]s (hand-written, typed with [`tool_fn`], or a
//! [`RouteTable`] served by a [`RouteTool`]), hands the model the
//! [`Gateway::catalog`] and the [`Gateway::meta_specs`], and answers each
//! meta-tool call with [`Gateway::call_meta`]. Transports (MCP, HTTP) and
//! agents call the same methods, so every surface behaves alike.
//!
//! # Example
//!
//! A typed tool in a gateway, called through `execute_tool` as a model would:
//!
//! ```
//! use serde_json::json;
//! use toolgate_gateway::toolgate_core::{Caller, ToolContext, ToolSpec};
//! use toolgate_gateway::{EXECUTE_TOOL, Gateway, tool_fn};
//!
//! /// The input type is the one declaration of the parameters: the schema
//! /// the model reads and the check every call passes.
//! #[derive(serde::Deserialize, schemars::JsonSchema)]
//! struct Add {
//!     /// The first number.
//!     a: i64,
//!     /// The second number.
//!     b: i64,
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let spec = ToolSpec::new(
//!     "add_numbers",
//!     "Add two integers. Returns {sum}. Example: {\"a\": 2, \"b\": 3}.",
//!     json!({}), // replaced by the schema of `Add`
//! )
//! .with_domain("math");
//! let add = tool_fn(spec, |_ctx, i: Add| async move { Ok(json!({"sum": i.a + i.b})) });
//! let gateway = Gateway::builder().tool(std::sync::Arc::new(add)).build()?;
//!
//! let ctx = ToolContext::new(Caller::new("ada", "member"));
//! let args = json!({"tool_name": "add_numbers", "parameters": {"a": 2, "b": 3}});
//! let envelope = gateway.call_meta(&ctx, EXECUTE_TOOL, args).await;
//! assert!(envelope.success);
//! assert_eq!(envelope.result, Some(json!({"sum": 5})));
//! println!("{}", serde_json::to_string_pretty(&envelope.to_value())?);
//!
//! // A wrong call is refused before the tool runs, every error at once.
//! let args = json!({"tool_name": "add_numbers", "parameters": {"a": "two"}});
//! let envelope = gateway.call_meta(&ctx, EXECUTE_TOOL, args).await;
//! let error = envelope.error.expect("a refused call carries an error");
//! assert_eq!(error.code.as_str(), "INVALID_PARAMS");
//! # Ok(())
//! # }
//! ```
//!
//! # The pipeline
//!
//! ```text
//! execute(ctx, name, params, options)
//!   lookup            -> TOOL_NOT_FOUND (with up to three close names the caller may use)
//!   authz             -> PERMISSION_DENIED (names the role needed)
//!   rate limits       -> RATE_LIMITED (details.retry_after_ms)
//!   limits            -> INVALID_PARAMS (size, depth, context-injected fields)
//!   validate          -> INVALID_PARAMS (every error at once)
//!   run under timeout -> TIMEOUT; retried only when the tool is safe to retry
//!   envelope          -> {success, result, error, signals, metadata}
//!   trace event       -> subscribers, secrets redacted
//!   audit record      -> the audit sink, for writes and denied calls
//!   metrics           -> atomic counters, rendered on scrape
//!   observer          -> an exporter (OpenTelemetry spans), when one is set
//! ```
//!
//! Every surface (catalog, discovery, schema, guide, execute) filters by the
//! caller through [`toolgate_authz::Policy::decide`], so a tool the caller may not use
//! is not listed, not described and not executable.
//!
//! # Cargo features
//!
//! Both are on by default; a gateway of plain tools may turn them off
//! (`default-features = false`).
//!
//! - `skills`: SKILL.md skills ([`toolgate_skills`], re-exported):
//!   [`GatewayBuilder::skills`], the skills listed in the catalog, their
//!   guides from `get_skill_guide`, and a `run_<skill>` tool for each skill
//!   with an orchestration. Without it the gateway has no skills: the
//!   `get_skill_guide` meta-tool is still listed and answers
//!   `SKILL_NOT_FOUND`, as a gateway given no skills does.
//! - `templates`: [minijinja](https://docs.rs/minijinja) result templates
//!   (`ToolSpec::result_template`), compiled at registration (a broken one is
//!   [`BuildError::Template`]) and used by [`Gateway::render_result`].
//!   Without it templates are ignored, neither compiled nor checked, and a
//!   successful result is rendered as pretty JSON; the envelope is the same.

#![deny(missing_docs)]

mod audit;
mod backend_errors;
mod catalog;
mod confirm;
mod dynamic;
mod echo;
mod execute;
pub mod fallback;
mod live;
mod meta;
mod metrics;
mod missing;
mod observe;
mod options;
mod rank;
mod ratelimit;
mod registry;
mod render;
mod retry;
mod route;
#[cfg(feature = "skills")]
mod skill_tool;
mod suggest;
mod trace;

pub use audit::{AuditRecord, AuditSink};
pub use backend_errors::MAX_BACKENDS;
pub use catalog::{EffectFilter, Filter, NAMED_TOOLS};
pub use live::{Applied, Change, Problem, SKILLS_SOURCE};
pub use meta::{EXECUTE_TOOL, GET_SKILL_GUIDE, GET_TOOL_SCHEMA, MAX_DISCOVERED, META_TOOLS};
pub use metrics::{LATENCY_BUCKETS, MAX_DYNAMIC_TOOLS, ToolStats, label as metric_label};
pub use observe::CallObserver;
pub use options::{CallOptions, Format, Limits, SchemaFormat};
pub use rank::Embedder;
pub use ratelimit::{MemoryRateStore, RateLimits, RateRule, RateStore, RateStoreError, ToolRate, subject};
pub use registry::{BuildError, Gateway, GatewayBuilder};
pub use route::{RouteHandler, RouteTool};
pub use trace::{TraceEvent, TraceKind, redact};

// Re-exported so that an embedding service can depend on `toolgate-gateway`
// (and `toolgate-core`) alone.
pub use toolgate_schema::{PLAIN_TEXT, Route, RouteTable, TypedTool, tool_fn, typed_schema};
#[cfg(feature = "skills")]
pub use toolgate_skills;
pub use {toolgate_core, toolgate_schema};
