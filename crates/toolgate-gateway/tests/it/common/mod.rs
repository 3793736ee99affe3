//! Tools and a gateway shared by the integration tests: real tools, real
//! timers, real panics; nothing about the pipeline is stubbed.
#![allow(dead_code, unreachable_pub)]

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use toolgate_core::{
    Caller, Effect, ErrorCode, FnTool, Tool, ToolContext, ToolError, ToolOutput, ToolResult, ToolSpec,
};
use toolgate_gateway::Gateway;

pub fn object(props: Value, required: &[&str]) -> Value {
    json!({"type": "object", "properties": props, "required": required, "additionalProperties": false})
}

pub fn tool<F, Fut>(spec: ToolSpec, f: F) -> Arc<dyn Tool>
where
    F: Fn(ToolContext, Value) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = ToolResult> + Send + 'static,
{
    Arc::new(FnTool::new(spec, move |ctx, params| Box::pin(f(ctx, params))))
}

/// The five-field read tool used by the acceptance cases and the benchmark.
pub fn search_flights() -> ToolSpec {
    ToolSpec::new(
        "search_flights",
        "Find flights between two cities on a date. Returns up to `limit` flights.",
        object(
            json!({
                "from": {"type": "string", "minLength": 3, "description": "IATA code, e.g. PAR"},
                "to": {"type": "string", "minLength": 3},
                "date": {"type": "string", "format": "date", "pattern": "^\\d{4}-\\d{2}-\\d{2}$"},
                "limit": {"type": "integer", "minimum": 1, "maximum": 50},
                "cabin": {"type": "string", "enum": ["economy", "business"]}
            }),
            &["from", "to", "date"],
        ),
    )
    .with_domain("travel")
    .with_tags(["flights", "search"])
    .with_role("member")
    .with_result_template("{{ result.count }} flights from {{ result.from }} to {{ result.to }}{% if result.legs | length > 1 %} ({{ result.legs | join(\", \") }}){% endif %}.")
}

pub fn gateway_with(extra: Vec<Arc<dyn Tool>>) -> Gateway {
    gateway_builder(extra).build().expect("gateway builds")
}

pub fn gateway_builder(extra: Vec<Arc<dyn Tool>>) -> toolgate_gateway::GatewayBuilder {
    let flaky_calls = Arc::new(AtomicU32::new(0));
    let write_calls = Arc::new(AtomicU32::new(0));
    let mut tools = vec![
        tool(search_flights(), |_ctx, p| async move {
            Ok(ToolOutput::json(
                json!({"from": p["from"], "to": p["to"], "count": 2, "legs": ["AF1", "SK2"]}),
            ))
        }),
        tool(
            ToolSpec::new(
                "sleep_briefly",
                "Sleeps for `ms` milliseconds.",
                object(json!({"ms": {"type": "integer"}}), &["ms"]),
            ),
            |_ctx, p| async move {
                tokio::time::sleep(Duration::from_millis(p["ms"].as_u64().unwrap_or(0))).await;
                Ok(ToolOutput::json(json!({"slept_ms": p["ms"]})))
            },
        ),
        tool(
            ToolSpec::new("fetch_flaky", "Always unavailable.", object(json!({}), &[])),
            |_ctx, _p| async move { Err(ToolError::unavailable("backend is down")) },
        ),
        {
            let calls = flaky_calls.clone();
            tool(
                ToolSpec::new("fetch_once_flaky", "Fails once, then works.", object(json!({}), &[])),
                move |_ctx, _p| {
                    let n = calls.fetch_add(1, Ordering::SeqCst);
                    async move {
                        if n == 0 {
                            Err(ToolError::execution("HTTP 500").transient(true))
                        } else {
                            Ok(ToolOutput::json(json!({"ok": true})))
                        }
                    }
                },
            )
        },
        {
            let calls = write_calls.clone();
            tool(
                ToolSpec::new("submit_payment", "Pays; not idempotent.", object(json!({}), &[]))
                    .with_effect(Effect::Write { idempotent: false }),
                move |_ctx, _p| {
                    calls.fetch_add(1, Ordering::SeqCst);
                    async move { Err(ToolError::unavailable("bank is down")) }
                },
            )
        },
        tool(
            ToolSpec::new("run_report", "Fails with an execution error.", object(json!({}), &[])),
            |_ctx, _p| async move { Err(ToolError::execution("the report engine rejected the query")) },
        ),
        tool(
            ToolSpec::new("export_text", "Answers text that is not JSON.", object(json!({}), &[])),
            |_ctx, _p| async move { Ok(ToolOutput::text("plain words, not JSON")) },
        ),
        tool(ToolSpec::new("crash_now", "Panics.", object(json!({}), &[])), |_ctx, _p| async move {
            #[allow(clippy::panic)]
            if true {
                panic!("boom");
            }
            Ok(ToolOutput::json(json!(null)))
        }),
        tool(
            ToolSpec::new(
                "approve_budget",
                "Approves a budget.",
                object(json!({"amount": {"type": "number"}}), &["amount"]),
            )
            .with_role("manager")
            .with_domain("finance")
            .with_effect(Effect::Write { idempotent: true }),
            |_ctx, p| async move { Ok(ToolOutput::json(json!({"approved": p["amount"]}))) },
        ),
        tool(
            ToolSpec::new("whoami_now", "Says who the caller is, from the context.", object(json!({}), &[])),
            |ctx, _p| async move {
                Ok(ToolOutput::json(json!({"user_id": ctx.caller.user_id, "role": ctx.caller.role})))
            },
        ),
        tool(
            ToolSpec::new(
                "save_secret",
                "Stores a key.",
                object(
                    json!({"provider": {"type": "string"}, "api_key": {"type": "string"}}),
                    &["provider", "api_key"],
                ),
            )
            .with_effect(Effect::Write { idempotent: true }),
            |_ctx, p| async move { Ok(ToolOutput::json(json!({"provider": p["provider"], "saved": true}))) },
        ),
        tool(
            ToolSpec::new(
                "fail_with",
                "Answers the error code it is given.",
                object(json!({"code": {"type": "string"}}), &["code"]),
            ),
            |_ctx, p| async move {
                let code: ErrorCode =
                    serde_json::from_value(p["code"].clone()).map_err(|_| ToolError::internal())?;
                Err(ToolError::new(code, format!("failed with {code}")).transient(false))
            },
        ),
    ];
    tools.extend(extra);
    Gateway::builder().tools(tools)
}

pub fn ctx(role: &str) -> ToolContext {
    ToolContext::new(Caller::new("u-1", role)).with_trace_id("t-1")
}
