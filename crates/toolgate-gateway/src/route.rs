//! Route-table tools: one tool per route table, one operation per `oneOf`
//! branch, dispatched by `op` to a [`RouteHandler`] (e.g. an HTTP executor,
//! or plain Rust for an embedded service).

use std::fmt;
use std::sync::Arc;

use serde_json::Value;
use toolgate_core::{Tool, ToolContext, ToolError, ToolResult, ToolSpec};
use toolgate_schema::{Route, RouteTable};

/// Runs one operation of a route table. Parameters have already passed the
/// table's schema, so `route` is the branch their `op` names.
#[async_trait::async_trait]
pub trait RouteHandler: Send + Sync + 'static {
    /// Run `route` with the validated parameters (including `op`).
    async fn handle(&self, ctx: &ToolContext, route: &Route, params: Value) -> ToolResult;
}

/// A route table served as one tool.
pub struct RouteTool {
    table: RouteTable,
    spec: ToolSpec,
    handler: Arc<dyn RouteHandler>,
}

impl fmt::Debug for RouteTool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RouteTool").field("tool", &self.spec.name).finish_non_exhaustive()
    }
}

impl RouteTool {
    /// A tool from a table and the handler that runs its operations.
    pub fn new(table: RouteTable, handler: Arc<dyn RouteHandler>) -> Result<Self, toolgate_schema::Error> {
        let spec = table.spec()?;
        Ok(Self { table, spec, handler })
    }

    /// Replace parts of the spec (timeout, template, examples) before registering.
    pub fn map_spec(mut self, f: impl FnOnce(ToolSpec) -> ToolSpec) -> Self {
        self.spec = f(self.spec);
        self
    }

    /// The route table whose routes this tool dispatches to.
    pub fn table(&self) -> &RouteTable {
        &self.table
    }
}

#[async_trait::async_trait]
impl Tool for RouteTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    async fn call(&self, ctx: &ToolContext, params: Value) -> ToolResult {
        let op = params.get("op").and_then(Value::as_str).unwrap_or_default();
        match self.table.route(op) {
            Some(route) => self.handler.handle(ctx, route, params).await,
            // Unreachable after validation; still an envelope, never a panic.
            None => {
                Err(ToolError::new(toolgate_core::ErrorCode::InvalidParams, format!("unknown op `{op}`")))
            }
        }
    }
}
