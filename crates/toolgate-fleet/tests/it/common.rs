//! Tools and gateways the tests share: a read tool, a slow read tool, a
//! write tool that answers an id, and an admin-only write.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use toolgate_core::{Caller, Effect, Envelope, FnTool, Tool, ToolContext, ToolOutput, ToolResult, ToolSpec};
use toolgate_gateway::{Gateway, GatewayBuilder};

fn tool<F, Fut>(spec: ToolSpec, f: F) -> Arc<dyn Tool>
where
    F: Fn(ToolContext, Value) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = ToolResult> + Send + 'static,
{
    Arc::new(FnTool::new(spec, move |ctx, params| Box::pin(f(ctx, params))))
}

fn object(props: Value) -> Value {
    json!({"type": "object", "properties": props, "additionalProperties": false})
}

pub(crate) fn builder() -> GatewayBuilder {
    Gateway::builder()
        .tool(tool(
            ToolSpec::new("read_thing", "Reads a thing.", object(json!({}))).with_role("guest"),
            |_ctx, _p| async move { Ok(ToolOutput::json(json!({"ok": true}))) },
        ))
        .tool(tool(
            ToolSpec::new("plan_big_thing", "An expensive read.", object(json!({}))).with_role("guest"),
            |_ctx, _p| async move { Ok(ToolOutput::json(json!({"planned": true}))) },
        ))
        .tool(tool(
            ToolSpec::new("wait_a_moment", "Sleeps `ms` ms.", object(json!({"ms": {"type": "integer"}})))
                .with_role("guest"),
            |_ctx, p| async move {
                tokio::time::sleep(Duration::from_millis(p["ms"].as_u64().unwrap_or(0))).await;
                Ok(ToolOutput::json(json!({})))
            },
        ))
        .tool(tool(
            ToolSpec::new(
                "submit_thing",
                "Creates a thing.",
                object(json!({"title": {"type": "string"}, "api_token": {"type": "string"}})),
            )
            .with_role("member")
            .with_effect(Effect::Write { idempotent: true }),
            |_ctx, p| async move { Ok(ToolOutput::json(json!({"thing_id": 42, "title": p["title"]}))) },
        ))
        .tool(tool(
            ToolSpec::new("purge_things", "Deletes every thing.", object(json!({})))
                .with_role("admin")
                .with_effect(Effect::Write { idempotent: false }),
            |_ctx, _p| async move { Ok(ToolOutput::json(json!({"purged": 3}))) },
        ))
}

pub(crate) async fn call(gateway: &Gateway, caller: &Caller, tool: &str, params: Value) -> Envelope {
    let ctx = ToolContext::new(caller.clone());
    gateway.execute(&ctx, tool, params, &toolgate_gateway::CallOptions::default()).await
}
