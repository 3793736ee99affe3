//! The seed 003 acceptance cases, end to end through the gateway: discover,
//! discover with a filter, success, timeout, retry exhausted, tool not found,
//! invalid params, execution error, parse error, response time; plus one test
//! per error code and the meta-tools.

use crate::common::{ctx, gateway_with};
use serde_json::{Value, json};
use toolgate_core::{Caller, ErrorCode};
use toolgate_gateway::{CallOptions, EffectFilter, Filter, Format};

fn codes(env: &toolgate_core::Envelope) -> Option<ErrorCode> {
    env.error.as_ref().map(|e| e.code)
}

#[tokio::test]
async fn discover_lists_only_what_the_caller_may_use() {
    let gw = gateway_with(vec![]);
    let member: Vec<String> =
        gw.discover(&Caller::new("u", "member"), &Filter::default()).into_iter().map(|s| s.name).collect();
    assert!(member.contains(&"search_flights".to_string()));
    assert!(!member.contains(&"approve_budget".to_string()), "manager tool leaked to member");
    let manager: Vec<String> =
        gw.discover(&Caller::new("u", "manager"), &Filter::default()).into_iter().map(|s| s.name).collect();
    assert!(manager.contains(&"approve_budget".to_string()));
    let guest: Vec<String> =
        gw.discover(&Caller::new("u", "guest"), &Filter::default()).into_iter().map(|s| s.name).collect();
    assert!(!guest.contains(&"search_flights".to_string()));
    let mut sorted = manager.clone();
    sorted.sort();
    assert_eq!(manager, sorted);
}

#[tokio::test]
async fn discover_with_filter() {
    let gw = gateway_with(vec![]);
    let admin = Caller::new("u", "admin");
    let names = |f: Filter| gw.discover(&admin, &f).into_iter().map(|s| s.name).collect::<Vec<_>>();
    assert_eq!(names(Filter::default().domain("travel")), ["search_flights"]);
    assert_eq!(names(Filter::default().tag("flights")), ["search_flights"]);
    assert_eq!(names(Filter::default().name("FLAKY")), ["fetch_flaky", "fetch_once_flaky"]);
    assert_eq!(
        names(Filter::default().effect(EffectFilter::Write)),
        ["approve_budget", "save_secret", "submit_payment"]
    );
    assert!(names(Filter::default().effect(EffectFilter::Read)).iter().all(|n| n != "submit_payment"));
    assert!(names(Filter::default().domain("nope")).is_empty());
}

#[tokio::test]
async fn success_has_result_metadata_and_rendered_text() {
    let gw = gateway_with(vec![]);
    let env = gw
        .execute(
            &ctx("member"),
            "search_flights",
            json!({"from": "PAR", "to": "OSL", "date": "2026-07-15"}),
            &CallOptions::default(),
        )
        .await;
    assert!(env.success, "{env:?}");
    assert_eq!(env.result.as_ref().unwrap()["count"], 2);
    assert_eq!(env.metadata.tool, "search_flights");
    assert_eq!(env.metadata.attempts, 1);
    assert!(env.error.is_none());
    assert_eq!(gw.render_result(&env), "2 flights from PAR to OSL (AF1, SK2).");
}

#[tokio::test]
async fn timeout() {
    let gw = gateway_with(vec![]);
    let opts = CallOptions::default().timeout_ms(30).retries(0);
    let env = gw.execute(&ctx("guest"), "sleep_briefly", json!({"ms": 5_000}), &opts).await;
    assert_eq!(codes(&env), Some(ErrorCode::Timeout));
    assert_eq!(env.metadata.attempts, 1);
    assert!(env.error.unwrap().message.contains("30 ms"));
}

#[tokio::test]
async fn attempts_that_all_fail_alike_answer_that_failure_with_the_attempts() {
    let gw = gateway_with(vec![]);
    let opts = CallOptions::default().retries(2).retry_delay_ms(1);
    let env = gw.execute(&ctx("guest"), "fetch_flaky", json!({}), &opts).await;
    assert_eq!(codes(&env), Some(ErrorCode::Unavailable));
    assert_eq!(env.metadata.attempts, 3);
    let details = env.error.unwrap().details.unwrap();
    assert_eq!(details["attempts"], 3);
    assert_eq!(details["retryable"], true);
}

#[tokio::test]
async fn a_transient_failure_then_success_counts_two_attempts() {
    let gw = gateway_with(vec![]);
    let env = gw
        .execute(&ctx("guest"), "fetch_once_flaky", json!({}), &CallOptions::default().retry_delay_ms(1))
        .await;
    assert!(env.success, "{env:?}");
    assert_eq!(env.metadata.attempts, 2);
}

#[tokio::test]
async fn writes_that_are_not_idempotent_are_never_retried() {
    let gw = gateway_with(vec![]);
    let env =
        gw.execute(&ctx("guest"), "submit_payment", json!({}), &CallOptions::default().retries(5)).await;
    assert_eq!(codes(&env), Some(ErrorCode::Unavailable));
    assert_eq!(env.metadata.attempts, 1);
}

#[tokio::test]
async fn tool_not_found_suggests_close_names_the_caller_may_use() {
    let gw = gateway_with(vec![]);
    let env = gw.execute(&ctx("member"), "search_flight", json!({}), &CallOptions::default()).await;
    assert_eq!(codes(&env), Some(ErrorCode::ToolNotFound));
    let error = env.error.unwrap();
    assert_eq!(error.details.unwrap()["suggestions"][0], "search_flights");
    assert!(error.message.contains("`search_flights`"));
    // A guest may not use search_flights, so it is not suggested to a guest.
    let env = gw.execute(&ctx("guest"), "search_flight", json!({}), &CallOptions::default()).await;
    assert!(!env.error.unwrap().details.unwrap()["suggestions"].to_string().contains("search_flights"));
}

#[tokio::test]
async fn invalid_params_name_every_bad_field_at_once() {
    let gw = gateway_with(vec![]);
    let env = gw
        .execute(
            &ctx("member"),
            "search_flights",
            json!({"from": "P", "date": "2026/07/15", "limit": 99, "extra": 1}),
            &CallOptions::default(),
        )
        .await;
    assert_eq!(codes(&env), Some(ErrorCode::InvalidParams));
    assert_eq!(env.metadata.attempts, 0);
    let error = env.error.unwrap();
    let errors = error.details.unwrap()["errors"].as_array().unwrap().clone();
    let pointers: Vec<&str> = errors.iter().map(|e| e["pointer"].as_str().unwrap()).collect();
    for expected in ["/from", "/date", "/limit"] {
        assert!(pointers.contains(&expected), "{expected} missing in {pointers:?}");
    }
    let text = Value::Array(errors).to_string();
    assert!(text.contains("to"), "missing required `to` not reported: {text}");
    assert!(text.contains("extra"), "extra field not reported: {text}");
}

#[tokio::test]
async fn execution_error_passes_through_without_retry() {
    let gw = gateway_with(vec![]);
    let env = gw.execute(&ctx("guest"), "run_report", json!({}), &CallOptions::default()).await;
    assert_eq!(codes(&env), Some(ErrorCode::ExecutionError));
    assert_eq!(env.metadata.attempts, 1);
}

#[tokio::test]
async fn parse_error_when_output_must_be_json_and_raw_returns_text() {
    let gw = gateway_with(vec![]);
    let env = gw.execute(&ctx("guest"), "export_text", json!({}), &CallOptions::default()).await;
    assert_eq!(codes(&env), Some(ErrorCode::ParseError));
    assert!(env.error.unwrap().message.contains("format = \"raw\""));
    let env = gw
        .execute(&ctx("guest"), "export_text", json!({}), &CallOptions::default().format(Format::Raw))
        .await;
    assert!(env.success);
    assert_eq!(env.result.unwrap(), json!("plain words, not JSON"));
}

#[tokio::test]
async fn response_time_is_measured() {
    let gw = gateway_with(vec![]);
    let env = gw.execute(&ctx("guest"), "sleep_briefly", json!({"ms": 25}), &CallOptions::default()).await;
    assert!(env.success);
    assert!(env.metadata.duration_ms >= 25.0, "{}", env.metadata.duration_ms);
    let stamp = chrono_like(&env.metadata.timestamp);
    assert!(stamp, "{}", env.metadata.timestamp);
}

fn chrono_like(s: &str) -> bool {
    s.len() >= 20 && s.as_bytes()[4] == b'-' && s.contains('T') && s.ends_with('Z')
}

#[tokio::test]
async fn a_panicking_tool_is_internal_error_and_the_gateway_keeps_serving() {
    let gw = gateway_with(vec![]);
    let env = gw.execute(&ctx("guest"), "crash_now", json!({}), &CallOptions::default()).await;
    assert_eq!(codes(&env), Some(ErrorCode::InternalError));
    assert!(!env.error.unwrap().message.contains("boom"));
    let env = gw.execute(&ctx("guest"), "whoami_now", json!({}), &CallOptions::default()).await;
    assert!(env.success);
}

#[tokio::test]
async fn permission_denied_names_the_role_needed() {
    let gw = gateway_with(vec![]);
    let env =
        gw.execute(&ctx("member"), "approve_budget", json!({"amount": 5}), &CallOptions::default()).await;
    assert_eq!(codes(&env), Some(ErrorCode::PermissionDenied));
    let error = env.error.unwrap();
    assert!(error.message.contains("manager"));
    assert_eq!(error.details.unwrap()["required_role"], "manager");
    let err = gw.tool_schema(&Caller::new("u", "member"), "approve_budget").unwrap_err();
    assert_eq!(err.code, ErrorCode::PermissionDenied);
}

#[tokio::test]
async fn every_domain_error_code_reaches_the_envelope() {
    let gw = gateway_with(vec![]);
    for code in [
        ErrorCode::NotFound,
        ErrorCode::Conflict,
        ErrorCode::Unavailable,
        ErrorCode::VerifyFailed,
        ErrorCode::ExecutionError,
        ErrorCode::InternalError,
    ] {
        let env =
            gw.execute(&ctx("guest"), "fail_with", json!({"code": code}), &CallOptions::default()).await;
        assert_eq!(codes(&env), Some(code));
        assert_eq!(env.to_value()["error"]["code"], json!(code.as_str()));
    }
}

#[tokio::test]
async fn the_user_comes_from_the_context_never_from_parameters() {
    let gw = gateway_with(vec![]);
    let env = gw
        .execute(&ctx("guest"), "whoami_now", json!({"user_id": "someone-else"}), &CallOptions::default())
        .await;
    assert_eq!(codes(&env), Some(ErrorCode::InvalidParams));
    assert!(env.error.unwrap().message.contains("taken from the caller's session"));
    let env = gw.execute(&ctx("guest"), "whoami_now", json!({}), &CallOptions::default()).await;
    assert_eq!(env.result.unwrap()["user_id"], "u-1");
}

#[tokio::test]
async fn trace_events_redact_secrets() {
    let gw = gateway_with(vec![]);
    let mut rx = gw.subscribe();
    let env = gw
        .execute(
            &ctx("guest"),
            "save_secret",
            json!({"provider": "acme", "api_key": "sk-live-abcdef"}),
            &CallOptions::default(),
        )
        .await;
    assert!(env.success);
    assert!(!env.to_value().to_string().contains("sk-live-abcdef"));
    let event = rx.recv().await.unwrap();
    assert_eq!(event.tool, "save_secret");
    assert_eq!(event.params["api_key"], "[redacted]");
    assert_eq!(event.params["provider"], "acme");
    assert!(!serde_json::to_string(&event).unwrap().contains("sk-live-abcdef"));
}

#[tokio::test]
async fn meta_tools_discover_describe_and_execute() {
    let gw = gateway_with(vec![]);
    let member = ctx("member");
    let names: Vec<String> = gw.meta_specs().into_iter().map(|s| s.name).collect();
    assert_eq!(names, ["get_skill_guide", "get_tool_schema", "execute_tool"]);

    let env = gw.call_meta(&member, "get_tool_schema", json!({"tool_name": "search_flights"})).await;
    assert!(env.success, "{env:?}");
    insta::assert_json_snapshot!("get_tool_schema_search_flights", env.result.unwrap());

    let env = gw
        .call_meta(
            &member,
            "execute_tool",
            json!({"tool_name": "search_flights", "parameters": {"from": "PAR", "to": "OSL", "date": "2026-07-15"}}),
        )
        .await;
    assert!(env.success, "{env:?}");
    assert_eq!(env.metadata.tool, "search_flights");

    let env = gw
        .call_meta(&member, "execute_tool", json!({"tool_name": "search_flights", "parameters": [1, 2]}))
        .await;
    assert_eq!(codes(&env), Some(ErrorCode::InvalidParams));

    let env = gw.call_meta(&member, "execute_tool", json!({"parameters": {}})).await;
    assert_eq!(codes(&env), Some(ErrorCode::InvalidParams));

    let env = gw
        .call_meta(
            &member,
            "execute_tool",
            json!({"tool_name": "sleep_briefly", "parameters": {"ms": 1}, "options": {"bogus": 1}}),
        )
        .await;
    assert_eq!(codes(&env), Some(ErrorCode::InvalidParams));

    let env = gw.call_meta(&member, "get_skill_guide", json!({"skill_id": "no-such-skill"})).await;
    assert_eq!(codes(&env), Some(ErrorCode::SkillNotFound));

    let env = gw
        .call_meta(&member, "get_tool_schema", json!({"tool_name": "search_flights", "format": "openai"}))
        .await;
    assert!(env.success, "{env:?}");
}

#[tokio::test]
async fn catalog_text_for_two_roles() {
    let gw = gateway_with(vec![]);
    insta::assert_snapshot!("catalog_member", gw.catalog(&Caller::new("u", "member")));
    let manager = gw.catalog(&Caller::new("u", "manager"));
    assert!(manager.contains("approve_budget"));
    assert!(!gw.catalog(&Caller::new("u", "member")).contains("approve_budget"));
}

#[tokio::test]
async fn plain_text_tool_calls_go_through_the_same_path() {
    let gw = gateway_with(vec![]);
    let text = "Let me look.\n```json\n{\"name\": \"search_flights\", \"arguments\": {\"from\": \"PAR\", \"to\": \"OSL\", \"date\": \"2026-07-15\"}}\n```";
    let env = gw.execute_text(&ctx("member"), text, &CallOptions::default()).await;
    assert!(env.success, "{env:?}");
    let env = gw.execute_text(&ctx("guest"), text, &CallOptions::default()).await;
    assert_eq!(codes(&env), Some(ErrorCode::PermissionDenied));
    let env = gw
        .execute_text(
            &ctx("member"),
            "<tool_call>{\"name\": \"a_b\"}</tool_call><tool_call>{\"name\": \"c_d\"}</tool_call>",
            &CallOptions::default(),
        )
        .await;
    assert_eq!(codes(&env), Some(ErrorCode::ParseError));
}

struct TripDates;

#[toolgate_core::async_trait]
impl toolgate_core::Tool for TripDates {
    fn spec(&self) -> &toolgate_core::ToolSpec {
        static SPEC: std::sync::OnceLock<toolgate_core::ToolSpec> = std::sync::OnceLock::new();
        SPEC.get_or_init(|| {
            toolgate_core::ToolSpec::new(
                "check_trip_dates",
                "Checks a trip's dates.",
                crate::common::object(
                    json!({"depart": {"type": "string"}, "back": {"type": "string"}, "city": {"type": "string", "minLength": 1}}),
                    &["depart", "back", "city"],
                ),
            )
        })
    }

    async fn call(&self, _ctx: &toolgate_core::ToolContext, _params: Value) -> toolgate_core::ToolResult {
        Ok(toolgate_core::ToolOutput::json(json!({"ok": true})))
    }

    fn check_params(&self, params: &Value) -> Vec<toolgate_core::FieldError> {
        let (d, b) = (params["depart"].as_str().unwrap_or(""), params["back"].as_str().unwrap_or(""));
        if !d.is_empty() && !b.is_empty() && b < d {
            vec![toolgate_core::FieldError::new(
                "/back",
                "a date on or after depart",
                &json!(b),
                "`back` is before `depart`",
            )]
        } else {
            vec![]
        }
    }
}

#[tokio::test]
async fn cross_field_checks_join_the_schema_errors_in_one_answer() {
    let gw = gateway_with(vec![std::sync::Arc::new(TripDates)]);
    let env = gw
        .execute(
            &ctx("guest"),
            "check_trip_dates",
            json!({"depart": "2026-07-20", "back": "2026-07-10", "city": ""}),
            &CallOptions::default(),
        )
        .await;
    assert_eq!(codes(&env), Some(ErrorCode::InvalidParams));
    let errors = env.error.unwrap().details.unwrap()["errors"].clone();
    let pointers: Vec<&str> =
        errors.as_array().unwrap().iter().map(|e| e["pointer"].as_str().unwrap()).collect();
    assert_eq!(pointers, ["/city", "/back"]);
}

#[tokio::test]
async fn invalid_params_never_repeat_a_secret() {
    let gw = gateway_with(vec![]);
    for params in [
        json!({"provider": "acme", "api_key": 12345678}),
        json!({"provider": "acme", "apikey": "sk-live-zzz", "api_key": "x"}),
        json!({"provider": "acme", "api_key": "sk-live-zzz", "token": "sk-live-zzz"}),
    ] {
        let env = gw.execute(&ctx("guest"), "save_secret", params.clone(), &CallOptions::default()).await;
        assert_eq!(codes(&env), Some(ErrorCode::InvalidParams), "{params}");
        let text = env.to_value().to_string();
        assert!(!text.contains("sk-live-zzz") && !text.contains("12345678"), "{text}");
    }
}
