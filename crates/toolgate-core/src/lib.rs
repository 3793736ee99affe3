//! Contracts of toolgate: the types every other crate speaks.
//!
//! This crate is deliberately small and boring: traits and plain data, no I/O,
//! no runtime. A tool is a [`Tool`] with a [`ToolSpec`]; it runs with a
//! [`ToolContext`] (who is calling, progress, deadline) and answers
//! [`ToolOutput`] or [`ToolError`]. Whoever executes tools turns that into one
//! [`Envelope`], the only result shape the model ever sees.

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
