//! Every signal kind reaches the envelope (on success and on failure), and a
//! call in OpenAI strict form is unwrapped by the gateway before validation.

use crate::common::{ctx, object, tool};
use serde_json::{Value, json};
use std::sync::Arc;
use toolgate_core::{ErrorCode, Signal, ToolContext, ToolError, ToolOutput, ToolResult, ToolSpec};
use toolgate_gateway::{CallOptions, Gateway, RouteHandler, RouteTable, RouteTool};

fn signal_of(kind: &str) -> Signal {
    match kind {
        "need_confirm" => Signal::NeedConfirm {
            message: "the order is APPROVED; cancelling it needs confirmation".into(),
            confirm_param: "force".into(),
            confirm_value: json!(true),
        },
        "beyond_range" => Signal::BeyondRange {
            requested: json!("2026-12-31"),
            limit: json!("2026-12-01"),
            instead: "ask again within two days of the date".into(),
            use_tool: None,
        },
        "unavailable" => Signal::Unavailable { reason: "no provider".into(), how_to_enable: "set X".into() },
        "related_items" => {
            Signal::RelatedItems { message: "bookings left".into(), items: vec![json!({"id": 1})] }
        }
        _ => Signal::Duplicate { message: "already submitted".into(), existing: json!({"order_id": 9}) },
    }
}

#[tokio::test]
async fn every_signal_kind_reaches_the_envelope() {
    let gw = Gateway::builder()
        .tool(tool(
            ToolSpec::new(
                "emit_signal",
                "Answers with the signal it is asked for.",
                object(json!({"kind": {"type": "string"}, "fail": {"type": "boolean"}}), &["kind", "fail"]),
            ),
            |_ctx, p| async move {
                let signal = signal_of(p["kind"].as_str().unwrap_or_default());
                if p["fail"] == json!(true) {
                    Err(ToolError::conflict("cannot do that now").with_signal(signal))
                } else {
                    Ok(ToolOutput::json(json!({"done": true})).with_signal(signal))
                }
            },
        ))
        .build()
        .unwrap();
    for kind in ["need_confirm", "beyond_range", "unavailable", "related_items", "duplicate"] {
        for fail in [false, true] {
            let env = gw
                .execute(
                    &ctx("guest"),
                    "emit_signal",
                    json!({"kind": kind, "fail": fail}),
                    &CallOptions::default(),
                )
                .await;
            assert_eq!(env.success, !fail);
            assert!(env.has_signal(kind), "{kind}: {env:?}");
            assert_eq!(env.to_value()["signals"][0]["kind"], kind);
            assert!(gw.render_result(&env).contains(&format!("Signal {kind}")));
        }
    }
}

struct Echo;

#[toolgate_core::async_trait]
impl RouteHandler for Echo {
    async fn handle(&self, _ctx: &ToolContext, route: &toolgate_gateway::Route, params: Value) -> ToolResult {
        Ok(ToolOutput::json(json!({"op": route.op, "params": params})))
    }
}

const TABLE: &str = r#"
tool = "query_meals"
description = "Reads meals."
domain = "nutrition"

[[routes]]
op = "list_meals"
method = "GET"
path = "/days/{date}/meals"
summary = "Meals of a day"
[[routes.fields]]
name = "limit"
type = "integer"

[[routes]]
op = "get_meal"
method = "GET"
path = "/meals/{meal_id}"
summary = "One meal"
"#;

#[tokio::test]
async fn openai_strict_calls_are_unwrapped_before_validation() {
    let route_tool = RouteTool::new(RouteTable::from_toml_str(TABLE).unwrap(), Arc::new(Echo)).unwrap();
    let gw = Gateway::builder().tool(Arc::new(route_tool)).build().unwrap();
    let caller = ctx("guest");
    let exported =
        gw.tool_schema_as(&caller.caller, "query_meals", toolgate_gateway::SchemaFormat::Openai).unwrap();
    let params = &exported["function"]["parameters"];
    assert_eq!(params["required"], json!(["request"]), "{exported}");
    // What a strict-mode model sends: the wrapper, and null for an optional field.
    let wrapped = json!({"request": {"op": "list_meals", "date": "2026-07-15", "limit": null}});
    let opts = CallOptions::default().openai_strict(true);
    let env = gw.execute(&caller, "query_meals", wrapped.clone(), &opts).await;
    assert!(env.success, "{env:?}");
    assert_eq!(env.result.unwrap()["params"], json!({"op": "list_meals", "date": "2026-07-15"}));
    // Without the option the wrapper is an unknown field.
    let env = gw.execute(&caller, "query_meals", wrapped, &CallOptions::default()).await;
    assert_eq!(env.code(), Some(ErrorCode::InvalidParams));
    // An unknown op lists the valid ones.
    let env = gw.execute(&caller, "query_meals", json!({"op": "list_all"}), &CallOptions::default()).await;
    let message = env.error.unwrap().message;
    assert!(message.contains("list_meals") && message.contains("get_meal"), "{message}");
}
