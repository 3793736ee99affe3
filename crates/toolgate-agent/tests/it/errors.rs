//! Model failures: a transient 500 retried, a 401 that fails clearly
//! without the key, context too long, a slow stream past the deadline, and
//! a client that goes away.

use std::time::Duration;

use tokio_util::sync::CancellationToken;
use toolgate_agent::{Agent, Event, RunRequest, StopReason};
use toolgate_core::Secret;

use crate::model_server::{ModelServer, Reply, text};
use crate::{config, error_message, member, names, run, test_gateway};

const KEY: &str = "sk-test-4f1c2a9b03d7e611aa";

#[tokio::test]
async fn a_500_is_retried_and_the_run_succeeds() {
    let server = ModelServer::start(vec![
        Reply::Status(500, "{\"error\": {\"message\": \"upstream overloaded\"}}".into()),
        text("Hello."),
    ])
    .await;
    let agent = Agent::new(test_gateway(1), config(&server).api_key(Secret::new(KEY))).unwrap();
    let (outcome, events) = run(&agent, member(), "Hi").await;
    assert_eq!(outcome.unwrap().answer, "Hello.");
    assert_eq!(names(&events), ["token", "final"], "a retried failure is not an event");
    let received = server.received();
    assert_eq!(received.len(), 2);
    assert_eq!(received[1].authorization.as_deref(), Some(format!("Bearer {KEY}").as_str()));
}

#[tokio::test]
async fn a_401_fails_clearly_once_and_never_shows_the_key() {
    let body = format!(
        "{{\"error\": {{\"message\": \"Incorrect API key provided: {KEY}\", \"code\": \"invalid_api_key\"}}}}"
    );
    let server = ModelServer::start(vec![Reply::Status(401, body), text("never")]).await;
    let agent = Agent::new(test_gateway(1), config(&server).api_key(Secret::new(KEY))).unwrap();
    let (outcome, events) = run(&agent, member(), "Hi").await;
    let outcome = outcome.unwrap();
    assert_eq!((outcome.stop_reason, outcome.steps), (StopReason::ModelError, 0));
    assert_eq!(server.received().len(), 1, "401 is not retried");
    let message = error_message(&events);
    assert!(
        message.starts_with("MODEL_ERROR: model unauthorized (HTTP 401): Incorrect API key provided"),
        "{message}"
    );
    let all = serde_json::to_string(&events).unwrap();
    assert!(!all.contains(KEY), "the key leaked into events: {all}");
    assert!(!format!("{:?}", agent.config()).contains(KEY));
}

#[tokio::test]
async fn a_context_that_is_too_long_is_named() {
    let body = "{\"error\": {\"message\": \"This model's maximum context length is 8192 tokens.\", \"code\": \"context_length_exceeded\"}}";
    let server = ModelServer::start(vec![Reply::Status(400, body.into())]).await;
    let agent = Agent::new(test_gateway(1), config(&server)).unwrap();
    let (_, events) = run(&agent, member(), "Hi").await;
    assert!(
        error_message(&events)
            .contains("model context_too_long (HTTP 400): This model's maximum context length")
    );
}

#[tokio::test]
async fn a_slow_stream_ends_at_the_deadline() {
    let server =
        ModelServer::start_with(Vec::new(), Some(Reply::Endless { every: Duration::from_millis(20) })).await;
    let agent = Agent::new(test_gateway(1), config(&server).deadline(Duration::from_millis(400))).unwrap();
    let (outcome, events) = run(&agent, member(), "Hi").await;
    assert_eq!(outcome.unwrap().stop_reason, StopReason::Deadline);
    assert!(
        names(&events).starts_with(&["token"]),
        "tokens streamed before the deadline: {:?}",
        names(&events)
    );
    assert!(matches!(events.last(), Some(Event::Final { stop_reason: StopReason::Deadline, .. })));
}

#[tokio::test]
async fn a_client_that_goes_away_cancels_the_run() {
    let server =
        ModelServer::start_with(Vec::new(), Some(Reply::Endless { every: Duration::from_millis(20) })).await;
    let agent = Agent::new(test_gateway(1), config(&server)).unwrap();
    let (tx, mut rx) = toolgate_agent::event_channel();
    let request = RunRequest::new(member(), "Hi");
    let run = tokio::spawn(async move { agent.run(request, &tx, CancellationToken::new()).await });
    // Read the first token, then go away.
    assert!(matches!(rx.recv().await, Some(Event::Token { .. })));
    drop(rx);
    let outcome = tokio::time::timeout(Duration::from_secs(10), run).await.unwrap().unwrap().unwrap();
    assert_eq!(outcome.stop_reason, StopReason::Cancelled);
}

#[tokio::test]
async fn a_malformed_stream_is_a_model_error() {
    let server = ModelServer::start(vec![Reply::Sse(vec![serde_json::json!("not an object")])]).await;
    let agent = Agent::new(test_gateway(1), config(&server)).unwrap();
    let (outcome, events) = run(&agent, member(), "Hi").await;
    assert_eq!(outcome.unwrap().stop_reason, StopReason::ModelError);
    assert!(error_message(&events).contains("model malformed"), "{}", error_message(&events));
}

#[tokio::test]
async fn a_server_that_ignores_stream_is_read_as_one_completion() {
    let call = serde_json::json!({"choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
        "role": "assistant", "content": null, "tool_calls": [{"id": "j1", "type": "function",
        "function": {"name": "query_weather", "arguments": "{\"city\": \"Oslo\"}"}}]}}],
        "usage": {"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10}});
    let answer = serde_json::json!({"choices": [{"index": 0, "finish_reason": "stop",
        "message": {"role": "assistant", "content": "Sunny."}}]});
    let server = ModelServer::start(vec![Reply::Json(call), Reply::Json(answer)]).await;
    let agent = Agent::new(test_gateway(1), crate::direct(&server)).unwrap();
    let (outcome, events) = run(&agent, member(), "Oslo?").await;
    let outcome = outcome.unwrap();
    assert_eq!((outcome.answer.as_str(), outcome.usage.total_tokens), ("Sunny.", 10));
    assert_eq!(names(&events), ["tool_call_started", "tool_call_finished", "token", "final"]);
}

#[tokio::test]
async fn a_model_that_goes_quiet_times_out_and_is_retried_once() {
    // Headers come at once, then nothing for longer than the idle timeout.
    let server =
        ModelServer::start_with(Vec::new(), Some(Reply::Endless { every: Duration::from_secs(5) })).await;
    let mut config = config(&server);
    config.idle_timeout = Duration::from_millis(200);
    let agent = Agent::new(test_gateway(1), config).unwrap();
    let (outcome, events) = run(&agent, member(), "Hi").await;
    assert_eq!(outcome.unwrap().stop_reason, StopReason::ModelError);
    assert!(error_message(&events).starts_with("MODEL_ERROR: model timeout"), "{}", error_message(&events));
    assert_eq!(server.received().len(), 2, "a timeout is transient: one retry (model_retries = 1)");
}

/// Every substring of `key` of 8 characters that appears in `text`.
fn key_pieces(text: &str, key: &str) -> Vec<String> {
    (0..=key.len() - 8).map(|i| key[i..i + 8].to_owned()).filter(|piece| text.contains(piece)).collect()
}

#[tokio::test]
async fn a_key_across_the_message_cut_never_reaches_events_in_part() {
    // 34 characters, as in the report; placed across the 500th character of a
    // provider message and across the 300th of a body that is not JSON.
    const LONG_KEY: &str = "sk-live-7Hq2Zp9Xw4Lm0Rt6Yb3Nc8Vd1K";
    assert_eq!(LONG_KEY.len(), 34);
    let json = format!(
        "{{\"error\": {{\"message\": \"{}{LONG_KEY} was refused\"}}}}",
        "m".repeat(500 - LONG_KEY.len() / 2)
    );
    let raw = format!("{}{LONG_KEY} was refused", "r".repeat(300 - LONG_KEY.len() / 2));
    for (status, body) in [(400, json), (401, raw)] {
        let server = ModelServer::start(vec![Reply::Status(status, body)]).await;
        let agent = Agent::new(test_gateway(1), config(&server).api_key(Secret::new(LONG_KEY))).unwrap();
        let (outcome, events) = run(&agent, member(), "Hi").await;
        assert_eq!(outcome.unwrap().stop_reason, StopReason::ModelError);
        let message = error_message(&events);
        assert!(message.contains("[redacted]"), "the key was replaced before the cut: {message}");
        let all = serde_json::to_string(&events).unwrap();
        assert_eq!(key_pieces(&all, LONG_KEY), Vec::<String>::new(), "HTTP {status}: {all}");
    }
}
