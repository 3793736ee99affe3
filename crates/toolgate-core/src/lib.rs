//! Contracts of toolgate: the types every other crate speaks.
//!
//! This crate is deliberately small and boring: traits and plain data, no I/O,
//! no runtime. A tool is a [`Tool`] with a [`ToolSpec`]; it runs with a
//! [`ToolContext`] (who is calling, progress, deadline) and answers
//! [`ToolOutput`] or [`ToolError`]. Whoever executes tools turns that into one
//! [`Envelope`], the only result shape the model ever sees.
//!
//! # Example
//!
//! A tool written by hand: its contract (a [`ToolSpec`], checked with
//! [`ToolSpec::check`]) and its async call, which reads the caller from the
//! [`ToolContext`] and its parameters with [`Params`]. The result and a failure
//! each become an [`Envelope`].
//!
//! ```
//! use serde_json::{Value, json};
//! use toolgate_core::{
//!     Caller, Effect, Envelope, ErrorCode, Metadata, Params, Payload, Tool, ToolContext, ToolOutput,
//!     ToolResult, ToolSpec, async_trait,
//! };
//!
//! struct QueryGreeting {
//!     spec: ToolSpec,
//! }
//!
//! #[async_trait]
//! impl Tool for QueryGreeting {
//!     fn spec(&self) -> &ToolSpec {
//!         &self.spec
//!     }
//!
//!     async fn call(&self, ctx: &ToolContext, params: Value) -> ToolResult {
//!         let mut p = Params::new(&params)?;
//!         let name = p.required_str("name");
//!         p.finish()?; // INVALID_PARAMS listing every problem at once
//!         let greeting = format!("Hello, {}!", name.unwrap_or_default());
//!         // Who is calling comes from the context, never from the parameters.
//!         Ok(ToolOutput::json(json!({ "greeting": greeting, "for": ctx.caller.user_id })))
//!     }
//! }
//!
//! let schema = json!({
//!     "type": "object",
//!     "properties": {"name": {"type": "string", "description": "Who to greet"}},
//!     "required": ["name"],
//!     "additionalProperties": false
//! });
//! let spec = ToolSpec::new("query_greeting", "Greet someone by name.", schema)
//!     .with_effect(Effect::Read)
//!     .with_domain("demo");
//! spec.check().expect("a valid contract");
//! let tool = QueryGreeting { spec };
//!
//! let ctx = ToolContext::new(Caller::new("u-42", "member")).with_trace_id("trace-1");
//! let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
//!
//! // Success: the result goes into an envelope with the call's metadata.
//! let output = runtime.block_on(tool.call(&ctx, json!({"name": "Ada"}))).unwrap();
//! let Payload::Json(result) = output.payload else { unreachable!("the tool answers JSON") };
//! let envelope = Envelope::ok(result, output.signals, Metadata::now("query_greeting", 0.4, 1));
//! let wire = envelope.to_value();
//! assert_eq!(wire["success"], true);
//! assert_eq!(wire["result"]["greeting"], "Hello, Ada!");
//! assert_eq!(wire["result"]["for"], "u-42");
//!
//! // Failure: the same shape, with a code and a message written for the model.
//! let error = runtime.block_on(tool.call(&ctx, json!({}))).unwrap_err();
//! let envelope = Envelope::err(error, Metadata::now("query_greeting", 0.1, 1));
//! assert_eq!(envelope.code(), Some(ErrorCode::InvalidParams));
//! assert_eq!(envelope.to_value()["error"]["code"], "INVALID_PARAMS");
//! assert!(envelope.error.unwrap().message.contains("/name"));
//! ```
//!
//! # Cargo features
//!
//! None: the crate is always the whole contract, with no I/O and no runtime.
#![deny(missing_docs)]

mod ask;
mod backend;
mod context;
mod envelope;
mod error;
mod image;
pub mod names;
pub mod nesting;
pub mod params;
mod resource;
mod spec;
mod tool;

pub use ask::{Answer, Asker, Question};
pub use backend::{BackendFailure, FailureKind};
pub use context::{Caller, Credentials, NoProgress, ProgressSink, Secret, TokenSource, ToolContext};
pub use envelope::{Envelope, ErrorBody, Metadata, Signal};
pub use error::{ErrorCode, ToolError, WRITE_OUTCOME_UNKNOWN};
pub use image::Image;
pub use params::{FieldError, Params};
pub use resource::{ResourceLink, ResourceTemplate, ResourceText, Resources};
pub use spec::{Effect, SpecError, ToolExample, ToolIcon, ToolSpec};
pub use tool::{BoxFuture, FnTool, IntoToolOutput, Payload, Tool, ToolOutput, ToolResult};

/// Implement [`Tool`] (and other async traits of toolgate) with this attribute.
pub use async_trait::async_trait;

/// The JSON Schema dialect every schema in toolgate is written in.
pub const SCHEMA_DIALECT: &str = "https://json-schema.org/draft/2020-12/schema";
