//! Any JSON value as parameters gets an envelope, never a panic.

use crate::common::{ctx, gateway_with};
use proptest::prelude::*;
use serde_json::{Value, json};
use toolgate_core::ErrorCode;
use toolgate_gateway::CallOptions;
use toolgate_test_support::json::Shape;

fn arb_json() -> impl Strategy<Value = Value> {
    toolgate_test_support::json::value(Shape::default())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]
    #[test]
    fn any_json_gets_an_envelope(params in arb_json(), tool in prop_oneof![Just("search_flights"), Just("whoami_now"), Just("nope_tool")]) {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let gw = gateway_with(vec![]);
        let env = rt.block_on(gw.execute(&ctx("member"), tool, params.clone(), &CallOptions::default()));
        // The envelope is well formed: exactly one of result and error.
        prop_assert_eq!(env.success, env.error.is_none());
        prop_assert_eq!(env.success, env.result.is_some());
        if tool == "search_flights" && !env.success {
            let code = env.code().unwrap();
            prop_assert!(code == ErrorCode::InvalidParams, "unexpected {:?}", code);
        }
        let meta = rt.block_on(gw.call_meta(&ctx("member"), "execute_tool", json!({"tool_name": tool, "parameters": params})));
        prop_assert_eq!(meta.success, meta.error.is_none());
    }
}

#[tokio::test]
async fn huge_strings_are_refused_by_the_size_limit() {
    let gw = gateway_with(vec![]);
    let big = "x".repeat(10 * 1024 * 1024);
    let env = gw
        .execute(
            &ctx("member"),
            "search_flights",
            json!({"from": big, "to": "OSL", "date": "2026-07-15"}),
            &CallOptions::default(),
        )
        .await;
    assert_eq!(env.code(), Some(ErrorCode::InvalidParams));
    let message = &env.error.as_ref().unwrap().message;
    assert!(message.contains("larger than"), "{message}");
    assert!(env.to_value().to_string().len() < 4096, "the envelope echoes the huge value");
}

#[test]
fn hundred_thousand_deep_nesting_gets_an_envelope() {
    // Building and dropping a 100,000-deep value recurses in serde_json's
    // Drop, so this test runs on a thread with a large stack; the gateway
    // itself checks depth without recursion.
    let handle = std::thread::Builder::new()
        .stack_size(512 * 1024 * 1024)
        .spawn(|| {
            let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
            let gw = gateway_with(vec![]);
            let mut deep = json!(0);
            for _ in 0..100_000 {
                deep = Value::Array(vec![deep]);
            }
            let env = rt.block_on(gw.execute(
                &ctx("member"),
                "whoami_now",
                json!({"a": deep}),
                &CallOptions::default(),
            ));
            assert_eq!(env.code(), Some(ErrorCode::InvalidParams));
            assert!(env.error.unwrap().message.contains("nested deeper"));

            // As text, the JSON parser refuses it before the gateway sees a value.
            let text = format!("{{\"a\": {}0{}}}", "[".repeat(100_000), "]".repeat(100_000));
            let env =
                rt.block_on(gw.execute_json(&ctx("member"), "whoami_now", &text, &CallOptions::default()));
            assert_eq!(env.code(), Some(ErrorCode::InvalidParams));
        })
        .unwrap();
    handle.join().unwrap();
}

#[tokio::test]
async fn invalid_utf16_escapes_and_broken_json_text_are_invalid_params() {
    let gw = gateway_with(vec![]);
    for text in
        [r#"{"from": "\ud800"}"#, r#"{"from": "\udc00\ud800"}"#, "{\"from\": ", "", "nul\u{0}l", "[1,2"]
    {
        let env = gw.execute_json(&ctx("member"), "search_flights", text, &CallOptions::default()).await;
        assert_eq!(env.code(), Some(ErrorCode::InvalidParams), "{text}");
        assert!(env.error.unwrap().message.contains("not valid JSON"));
    }
    // A valid surrogate pair is fine and reaches validation.
    let env = gw
        .execute_json(
            &ctx("member"),
            "search_flights",
            r#"{"from": "\ud83d\ude00\ud83d\ude00\ud83d\ude00", "to": "OSL", "date": "2026-07-15"}"#,
            &CallOptions::default(),
        )
        .await;
    assert!(env.success, "{env:?}");
}

#[tokio::test]
async fn configurable_limits_answer_invalid_params() {
    let limits =
        toolgate_gateway::Limits { max_param_bytes: 64, max_depth: 2, ..toolgate_gateway::Limits::default() };
    let gw = toolgate_gateway::Gateway::builder()
        .limits(limits)
        .tools(vec![crate::common::tool(
            toolgate_core::ToolSpec::new(
                "echo_value",
                "Echo.",
                json!({"type": "object", "additionalProperties": false, "properties": {"v": {}}}),
            ),
            |_c, p| async move { Ok(toolgate_core::ToolOutput::json(p)) },
        )])
        .build()
        .unwrap();
    let run = |v: Value| {
        let gw = gw.clone();
        async move { gw.execute(&ctx("guest"), "echo_value", json!({"v": v}), &CallOptions::default()).await }
    };
    assert!(run(json!("short")).await.success);
    assert_eq!(run(json!("x".repeat(100))).await.code(), Some(ErrorCode::InvalidParams));
    assert_eq!(run(json!([[1]])).await.code(), Some(ErrorCode::InvalidParams));
    assert!(run(json!([1])).await.success);
}
