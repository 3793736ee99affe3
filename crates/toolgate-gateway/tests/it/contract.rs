//! The call contract as the model meets it: nothing it sends is echoed
//! unredacted or unclipped, one total deadline per call, what a failed call
//! answers after retries, option spellings, discovery, and the trace.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use toolgate_core::{ErrorCode, ToolError, ToolOutput, ToolSpec};
use toolgate_gateway::{CallOptions, Gateway, Limits, TraceKind};

use crate::common::{ctx, gateway_builder, gateway_with, object, tool};

const SECRET: &str = "sk-live-canary-5f3a9c";

fn text(env: &toolgate_core::Envelope) -> String {
    env.to_value().to_string()
}

fn details(env: &toolgate_core::Envelope) -> Value {
    env.error.as_ref().and_then(|e| e.details.clone()).unwrap_or(Value::Null)
}

#[tokio::test]
async fn a_secret_beside_tool_name_is_never_echoed() {
    let gw = gateway_with(vec![]);
    let member = ctx("member");
    for (meta, args) in [
        ("execute_tool", json!({"tool_name": "save_secret", "api_key": SECRET})),
        ("execute_tool", json!({"tool_name": "save_secret", "parameters": {}, "token": SECRET})),
        ("get_tool_schema", json!({"tool_name": "save_secret", "api_key": SECRET})),
        ("get_tool_schema", json!({"tool_name": "save_secret", "password": [SECRET]})),
        ("get_skill_guide", json!({"skill_id": "x", "secret": SECRET})),
    ] {
        let env = gw.call_meta(&member, meta, args.clone()).await;
        assert_eq!(env.code(), Some(ErrorCode::InvalidParams), "{meta} {args}: {env:?}");
        assert!(!text(&env).contains("canary"), "{meta} echoed the secret: {}", text(&env));
    }
}

#[tokio::test]
async fn a_bare_string_as_parameters_is_neither_echoed_nor_traced() {
    let gw = gateway_with(vec![]);
    let mut trace = gw.subscribe();
    let env = gw
        .call_meta(&ctx("member"), "execute_tool", json!({"tool_name": "save_secret", "parameters": SECRET}))
        .await;
    assert_eq!(env.code(), Some(ErrorCode::InvalidParams), "{env:?}");
    assert!(!text(&env).contains("canary"), "{}", text(&env));
    assert!(env.error.as_ref().unwrap().message.contains("JSON object"));
    for _ in 0..2 {
        let event = trace.recv().await.unwrap();
        assert!(!serde_json::to_string(&event).unwrap().contains("canary"), "{event:?}");
    }
    // The same object sent as JSON text is read as the object.
    let as_text = json!({"provider": "acme", "api_key": SECRET}).to_string();
    let env = gw
        .call_meta(&ctx("member"), "execute_tool", json!({"tool_name": "save_secret", "parameters": as_text}))
        .await;
    assert!(env.success, "{env:?}");
}

#[tokio::test]
async fn huge_names_come_back_clipped_everywhere() {
    let gw = gateway_with(vec![]);
    let mut trace = gw.subscribe();
    let huge = "q".repeat(921 * 1024);
    // An unknown field with a huge name.
    let env = gw
        .execute(
            &ctx("member"),
            "save_secret",
            json!({"provider": "a", "api_key": "k", huge.clone(): 1}),
            &CallOptions::default(),
        )
        .await;
    assert_eq!(env.code(), Some(ErrorCode::InvalidParams), "{}", &text(&env)[..300]);
    assert!(text(&env).len() < 4_000, "answer is {} bytes", text(&env).len());
    // A huge tool name: in the message, in metadata.tool and in the trace.
    let env = gw.execute(&ctx("member"), &huge, json!({}), &CallOptions::default()).await;
    assert_eq!(env.code(), Some(ErrorCode::ToolNotFound));
    assert!(text(&env).len() < 2_000, "answer is {} bytes", text(&env).len());
    assert!(env.metadata.tool.chars().count() <= 65);
    let via_meta = gw.call_meta(&ctx("member"), "execute_tool", json!({"tool_name": huge})).await;
    assert!(text(&via_meta).len() < 2_000);
    let unknown_meta = gw.call_meta(&ctx("member"), &huge, json!({})).await;
    assert!(text(&unknown_meta).len() < 2_000);
    while let Ok(event) = trace.try_recv() {
        assert!(serde_json::to_string(&event).unwrap().len() < 4_000, "a trace event carried the name");
    }
    // Ten thousand unknown fields: a bounded list of problems.
    let many: serde_json::Map<String, Value> = (0..10_000).map(|i| (format!("f{i}"), json!(i))).collect();
    let env =
        gw.execute(&ctx("member"), "search_flights", Value::Object(many), &CallOptions::default()).await;
    assert_eq!(env.code(), Some(ErrorCode::InvalidParams));
    assert!(details(&env)["errors"].as_array().unwrap().len() <= 21);
}

#[tokio::test]
async fn an_outage_answers_unavailable_at_the_top_with_a_retryable_flag() {
    let gw = gateway_with(vec![]);
    let env = gw
        .execute(
            &ctx("guest"),
            "fetch_flaky",
            json!({}),
            &CallOptions::default().retries(2).retry_delay_ms(1),
        )
        .await;
    assert_eq!(env.code(), Some(ErrorCode::Unavailable), "{env:?}");
    assert_eq!(env.metadata.attempts, 3);
    let d = details(&env);
    assert_eq!((d["attempts"].clone(), d["retryable"].clone()), (json!(3), json!(true)), "{d}");
    assert_eq!(d["stopped"], "retries_exhausted");
    // A write that is not idempotent is not retried, and not retryable.
    let env =
        gw.execute(&ctx("guest"), "submit_payment", json!({}), &CallOptions::default().retries(3)).await;
    assert_eq!((env.code(), env.metadata.attempts), (Some(ErrorCode::Unavailable), 1));
    assert_eq!(details(&env)["stopped"], "not_retry_safe");
    assert_eq!(details(&env)["retryable"], false);
}

#[tokio::test]
async fn a_huge_retry_delay_is_capped_and_never_outlives_the_deadline() {
    let limits = Limits { read_deadline_ms: 2_000, max_retry_delay_ms: 1_000, ..Limits::default() };
    let gw = gateway_builder(vec![]).limits(limits).build().unwrap();
    let opts = CallOptions::default().retries(5).retry_delay_ms(u64::MAX);
    let env = gw.execute(&ctx("guest"), "fetch_flaky", json!({}), &opts).await;
    assert_eq!(env.code(), Some(ErrorCode::Unavailable), "{env:?}");
    // Pauses of 1 s, then 2 s capped to 1 s: the second pause would pass the 2 s deadline.
    assert_eq!(env.metadata.attempts, 2, "{env:?}");
    assert_eq!(details(&env)["stopped"], "deadline");
    // Through the meta-tool, the schema refuses what the code would cap.
    let env = gw
        .call_meta(
            &ctx("guest"),
            "execute_tool",
            json!({"tool_name": "fetch_flaky", "options": {"retry_delay_ms": 1_000_000}}),
        )
        .await;
    assert_eq!(env.code(), Some(ErrorCode::InvalidParams));
}

#[test]
fn the_execute_tool_schema_states_the_codes_limits() {
    let limits =
        Limits { max_retries: 4, max_timeout_ms: 9_000, max_retry_delay_ms: 700, ..Limits::default() };
    let gw = gateway_builder(vec![]).limits(limits.clone()).build().unwrap();
    let spec = gw.meta_specs().into_iter().find(|s| s.name == "execute_tool").unwrap();
    let options = &spec.input_schema["properties"]["options"]["properties"];
    assert_eq!(options["retries"]["maximum"], limits.max_retries);
    assert_eq!(options["timeout_ms"]["maximum"], limits.max_timeout_ms);
    assert_eq!(options["retry_delay_ms"]["maximum"], limits.max_retry_delay_ms);
}

#[tokio::test]
async fn options_in_the_tool_caller_spelling_are_accepted() {
    let gw = gateway_with(vec![]);
    let guest = ctx("guest");
    let env = gw
        .call_meta(
            &guest,
            "execute_tool",
            json!({"tool_name": "sleep_briefly", "parameters": {"ms": 2_000}, "options": {"timeout": 50, "retries": 0, "retryDelay": 1, "format": "json"}}),
        )
        .await;
    assert_eq!(env.code(), Some(ErrorCode::Timeout), "`timeout` was read as the call's time: {env:?}");
    let env = gw
        .call_meta(
            &guest,
            "execute_tool",
            json!({"tool_name": "fetch_flaky", "options": {"retries": 2, "retryDelay": 1}}),
        )
        .await;
    assert_eq!(env.metadata.attempts, 3, "{env:?}");
    let env = gw
        .call_meta(
            &guest,
            "execute_tool",
            json!({"tool_name": "whoami_now", "options": {"timeoutSeconds": 5}}),
        )
        .await;
    assert_eq!(env.code(), Some(ErrorCode::InvalidParams));
    let message = &env.error.unwrap().message;
    for valid in ["timeout_ms", "retries", "retry_delay_ms", "format"] {
        assert!(message.contains(valid), "{message}");
    }
    let env = gw
        .call_meta(
            &guest,
            "execute_tool",
            json!({"tool_name": "whoami_now", "options": {"timeout": 5, "timeout_ms": 6}}),
        )
        .await;
    assert_eq!(env.code(), Some(ErrorCode::InvalidParams), "{env:?}");
}

/// A real HTTP server on 127.0.0.1: each request takes the next behaviour
/// from `plan` (`hang` never answers, a number is that status), the last one repeating.
async fn backend(plan: &'static [&'static str]) -> (String, Arc<AtomicU32>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let hits = Arc::new(AtomicU32::new(0));
    let seen = hits.clone();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let n = seen.fetch_add(1, Ordering::SeqCst) as usize;
            let step = plan[n.min(plan.len() - 1)];
            tokio::spawn(async move {
                let mut buf = [0u8; 1024];
                let _ = socket.read(&mut buf).await;
                if step == "hang" {
                    tokio::time::sleep(Duration::from_secs(60)).await;
                } else {
                    let reply =
                        format!("HTTP/1.1 {step} X\r\ncontent-length: 2\r\nconnection: close\r\n\r\n{{}}");
                    let _ = socket.write_all(reply.as_bytes()).await;
                }
            });
        }
    });
    (addr.to_string(), hits)
}

/// A read tool that GETs the backend: a 503 is UNAVAILABLE (transient).
fn http_read(addr: String, timeout: Duration) -> Arc<dyn toolgate_core::Tool> {
    let spec =
        ToolSpec::new("query_backend", "Reads the backend.", object(json!({}), &[])).with_timeout(timeout);
    tool(spec, move |_ctx, _p| {
        let addr = addr.clone();
        async move {
            let mut socket =
                TcpStream::connect(&addr).await.map_err(|_| ToolError::unavailable("cannot connect"))?;
            socket
                .write_all(b"GET / HTTP/1.1\r\nhost: x\r\n\r\n")
                .await
                .map_err(|_| ToolError::unavailable("write"))?;
            let mut answer = String::new();
            socket.read_to_string(&mut answer).await.map_err(|_| ToolError::unavailable("read"))?;
            if answer.starts_with("HTTP/1.1 200") {
                Ok(ToolOutput::json(json!({"ok": true})))
            } else {
                Err(ToolError::unavailable("the backend answered 503"))
            }
        }
    })
}

#[tokio::test]
async fn every_attempt_timing_out_answers_timeout_with_the_attempts() {
    let (addr, hits) = backend(&["hang"]).await;
    let gw = gateway_with(vec![http_read(addr, Duration::from_millis(150))]);
    let env = gw
        .execute(
            &ctx("guest"),
            "query_backend",
            json!({}),
            &CallOptions::default().retries(1).retry_delay_ms(1),
        )
        .await;
    assert_eq!(env.code(), Some(ErrorCode::Timeout), "{env:?}");
    assert_eq!(env.metadata.attempts, 2);
    assert_eq!(details(&env)["attempts"], 2);
    assert_eq!(details(&env)["stopped"], "retries_exhausted");
    assert_eq!(hits.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn a_mix_of_failures_answers_retry_exhausted_with_the_last_error() {
    let (addr, hits) = backend(&["hang", "503"]).await;
    let gw = gateway_with(vec![http_read(addr, Duration::from_millis(150))]);
    let env = gw
        .execute(
            &ctx("guest"),
            "query_backend",
            json!({}),
            &CallOptions::default().retries(1).retry_delay_ms(1),
        )
        .await;
    assert_eq!(env.code(), Some(ErrorCode::RetryExhausted), "{env:?}");
    let d = details(&env);
    assert_eq!(d["last_error"]["code"], "UNAVAILABLE", "{d}");
    assert_eq!((d["attempts"].clone(), d["retryable"].clone()), (json!(2), json!(true)));
    assert_eq!(hits.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn a_retry_that_cannot_finish_inside_the_deadline_is_not_started() {
    let (addr, hits) = backend(&["hang"]).await;
    let gw = gateway_with(vec![http_read(addr, Duration::from_millis(200))]);
    // 300 ms in all: the first attempt uses 200, and 100 are not enough for another.
    let env = gw
        .execute(
            &ctx("guest"),
            "query_backend",
            json!({}),
            &CallOptions::default().timeout_ms(300).retries(3).retry_delay_ms(1),
        )
        .await;
    assert_eq!(env.code(), Some(ErrorCode::Timeout), "{env:?}");
    assert_eq!(env.metadata.attempts, 1);
    assert_eq!(details(&env)["stopped"], "deadline");
    assert_eq!(details(&env)["deadline_ms"], 300);
    assert_eq!(hits.load(Ordering::SeqCst), 1);
    // Without options a read gets the gateway's read deadline, whatever the tool's own limit.
    let limits = Limits { read_deadline_ms: 250, ..Limits::default() };
    let (addr, _) = backend(&["hang"]).await;
    let gw = gateway_builder(vec![http_read(addr, Duration::from_secs(30))]).limits(limits).build().unwrap();
    let env = gw.execute(&ctx("guest"), "query_backend", json!({}), &CallOptions::default()).await;
    assert_eq!(env.code(), Some(ErrorCode::Timeout), "{env:?}");
    assert_eq!((details(&env)["deadline_ms"].clone(), env.metadata.attempts), (json!(250), 1));
}

#[tokio::test]
async fn discovery_filters_by_text_domain_tag_and_effect_for_this_caller() {
    let gw = gateway_with(vec![]);
    let member = ctx("member");
    let env = gw.call_meta(&member, "get_tool_schema", json!({"query": "flights"})).await;
    assert!(env.success, "{env:?}");
    let tools = env.result.as_ref().unwrap()["tools"].as_array().unwrap().clone();
    assert_eq!(tools.len(), 1);
    assert_eq!(tools[0]["name"], "search_flights");
    assert_eq!(tools[0]["params_schema"]["required"], json!(["from", "to", "date"]));
    assert_eq!(
        tools[0]["metadata"],
        json!({"effect": "read", "idempotent": true, "required_role": "member", "domain": "travel", "tags": ["flights", "search"]})
    );
    assert_eq!(env.metadata.total, Some(1));
    let by = |args: Value| {
        let gw = gw.clone();
        async move {
            let env = gw.call_meta(&ctx("member"), "get_tool_schema", args).await;
            let names: Vec<String> = env.result.unwrap()["tools"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| t["name"].as_str().unwrap().to_owned())
                .collect();
            (names, env.metadata.total.unwrap())
        }
    };
    assert_eq!(by(json!({"tag": "search"})).await.0, ["search_flights"]);
    assert_eq!(by(json!({"domain": "travel", "effect": "read"})).await.0, ["search_flights"]);
    let (writes, _) = by(json!({"effect": "write"})).await;
    assert!(
        writes.contains(&"save_secret".to_owned()) && !writes.contains(&"search_flights".to_owned()),
        "{writes:?}"
    );
    let (page, total) = by(json!({"limit": 2})).await;
    assert_eq!(page.len(), 2);
    assert!(total > 2);
    // The manager's tool is not found by a member, whatever the filter.
    assert!(by(json!({"query": "budget"})).await.0.is_empty());
    let env = gw.call_meta(&ctx("guest"), "get_tool_schema", json!({"query": "flights"})).await;
    assert_eq!(env.metadata.total, Some(0), "a guest does not see a member tool");
}

#[tokio::test]
async fn the_trace_has_start_end_and_cancelled_events() {
    let gw = gateway_with(vec![]);
    let mut trace = gw.subscribe();
    let env = gw.execute(&ctx("guest"), "whoami_now", json!({}), &CallOptions::default()).await;
    assert!(env.success);
    let start = trace.recv().await.unwrap();
    let end = trace.recv().await.unwrap();
    assert_eq!((start.kind, end.kind), (TraceKind::Start, TraceKind::End));
    assert_eq!(start.trace_id, end.trace_id);
    assert_eq!(end.result["user_id"], "u-1", "the end event carries the result");

    let call = {
        let gw = gw.clone();
        tokio::spawn(async move {
            gw.execute(&ctx("guest"), "sleep_briefly", json!({"ms": 10_000}), &CallOptions::default()).await
        })
    };
    assert_eq!(trace.recv().await.unwrap().kind, TraceKind::Start);
    call.abort();
    let cancelled = trace.recv().await.unwrap();
    assert_eq!(cancelled.kind, TraceKind::Cancelled);
    assert_eq!(cancelled.tool, "sleep_briefly");
}

#[tokio::test]
async fn a_large_result_is_truncated_and_redacted_in_the_trace() {
    let big =
        tool(ToolSpec::new("read_big", "Answers a lot.", object(json!({}), &[])), |_ctx, _p| async move {
            Ok(ToolOutput::json(json!({"token": SECRET, "rows": vec!["x".repeat(100); 1_000]})))
        });
    let small = tool(
        ToolSpec::new("read_small", "Answers a secret.", object(json!({}), &[])),
        |_ctx, _p| async move { Ok(ToolOutput::json(json!({"session_token": SECRET, "n": 1}))) },
    );
    let gw: Gateway = gateway_with(vec![big, small]);
    let mut trace = gw.subscribe();
    for name in ["read_big", "read_small"] {
        let env = gw.execute(&ctx("guest"), name, json!({}), &CallOptions::default()).await;
        assert!(env.success);
        let _start = trace.recv().await.unwrap();
        let end = trace.recv().await.unwrap();
        let shown = serde_json::to_string(&end).unwrap();
        assert!(!shown.contains("canary"), "{name}: {shown}");
        assert!(shown.len() < 6_000, "{name}: {} bytes", shown.len());
    }
}
