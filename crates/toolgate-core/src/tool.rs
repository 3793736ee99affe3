//! The object-safe async [`Tool`] trait, its output, and [`FnTool`] for closures.

use std::fmt;
use std::future::Future;
use std::pin::Pin;

use serde_json::Value;

use crate::{Image, Signal, ToolContext, ToolError, ToolSpec};

/// What a tool answers on success.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ToolOutput {
    /// The result itself.
    pub payload: Payload,
    /// Hints for the model that go with the result.
    pub signals: Vec<Signal>,
    /// Images that go with the result (a chart, an upstream's screenshot).
    pub images: Vec<Image>,
}

/// The body of a tool's output: structured JSON, or text a backend returned
/// that is supposed to be JSON (the executor parses it; `PARSE_ERROR` if it is not).
#[derive(Debug, Clone, PartialEq)]
pub enum Payload {
    /// Structured output.
    Json(Value),
    /// Raw text output.
    Text(String),
}

impl ToolOutput {
    /// A JSON result with no signals.
    pub fn json(value: Value) -> Self {
        Self { payload: Payload::Json(value), signals: Vec::new(), images: Vec::new() }
    }

    /// A raw text result with no signals.
    pub fn text(text: impl Into<String>) -> Self {
        Self { payload: Payload::Text(text.into()), signals: Vec::new(), images: Vec::new() }
    }

    /// Add an image.
    pub fn with_image(mut self, image: Image) -> Self {
        self.images.push(image);
        self
    }

    /// Add a signal.
    pub fn with_signal(mut self, signal: Signal) -> Self {
        self.signals.push(signal);
        self
    }
}

/// What a tool call answers.
pub type ToolResult = Result<ToolOutput, ToolError>;

/// What the function of a typed tool may answer: a [`ToolOutput`] (a result
/// with signals) or any serializable value, which becomes a JSON result.
pub trait IntoToolOutput {
    /// The output, or `INTERNAL_ERROR` when the value does not serialize.
    fn into_tool_output(self) -> ToolResult;
}

impl IntoToolOutput for ToolOutput {
    fn into_tool_output(self) -> ToolResult {
        Ok(self)
    }
}

impl<T: serde::Serialize> IntoToolOutput for T {
    fn into_tool_output(self) -> ToolResult {
        serde_json::to_value(self).map(ToolOutput::json).map_err(|_| ToolError::internal())
    }
}

/// A boxed future, as the object-safe trait returns.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// A tool: a contract and an async call. Object-safe, so registries hold
/// `Arc<dyn Tool>`. Implement it with `#[async_trait]`.
///
/// A tool must not panic; the gateway still turns a panic into
/// `INTERNAL_ERROR` and keeps serving.
#[async_trait::async_trait]
pub trait Tool: Send + Sync + 'static {
    /// The contract.
    fn spec(&self) -> &ToolSpec;

    /// Run with parameters that already passed the schema.
    async fn call(&self, ctx: &ToolContext, params: Value) -> ToolResult;

    /// Problems with `params` that a JSON Schema cannot express (a return
    /// date before the departure date, ...), found without running the tool.
    /// An executor that refuses a call on schema errors adds these, so the
    /// model gets every problem in one answer. Empty by default.
    fn check_params(&self, _params: &Value) -> Vec<crate::FieldError> {
        Vec::new()
    }
}

/// A tool made of a spec and an async closure.
pub struct FnTool<F> {
    spec: ToolSpec,
    f: F,
}

impl<F> FnTool<F>
where
    F: Fn(ToolContext, Value) -> BoxFuture<'static, ToolResult> + Send + Sync + 'static,
{
    /// A tool from a spec and a closure returning a boxed future.
    pub fn new(spec: ToolSpec, f: F) -> Self {
        Self { spec, f }
    }
}

impl<F> fmt::Debug for FnTool<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FnTool").field("name", &self.spec.name).finish_non_exhaustive()
    }
}

#[async_trait::async_trait]
impl<F> Tool for FnTool<F>
where
    F: Fn(ToolContext, Value) -> BoxFuture<'static, ToolResult> + Send + Sync + 'static,
{
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    async fn call(&self, ctx: &ToolContext, params: Value) -> ToolResult {
        (self.f)(ctx.clone(), params).await
    }
}
