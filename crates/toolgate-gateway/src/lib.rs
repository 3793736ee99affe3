//! The gateway: one registry of tools and skills, the one execute pipeline,
//! the three meta-tools and the catalog text.
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
pub use ratelimit::{MemoryRateStore, RateLimits, RateRule, RateStore, RateStoreError, ToolRate, subject};
pub use registry::{BuildError, Gateway, GatewayBuilder};
pub use route::{RouteHandler, RouteTool};
pub use trace::{TraceEvent, TraceKind, redact};

// Re-exported so that an embedding service can depend on `gateway` (and
// `tool-core`) alone.
pub use toolgate_schema::{PLAIN_TEXT, Route, RouteTable, TypedTool, tool_fn, typed_schema};
pub use {toolgate_core, toolgate_schema, toolgate_skills};
