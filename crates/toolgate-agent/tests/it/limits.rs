//! What bounds a model: a line of its stream, the size of its turn, the
//! tool calls of one turn, and how long it asks to be left alone
//! (`Retry-After`), all against the real scripted model server.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use toolgate_agent::{Agent, Event, StopReason};
use toolgate_core::{Effect, FnTool, ToolOutput, ToolSpec};
use toolgate_gateway::Gateway;

use crate::model_server::{ModelServer, Reply, calls, text};
use crate::{config, direct, error_message, member, run, test_gateway, tool_messages};

#[tokio::test]
async fn a_line_without_end_is_refused_at_the_line_limit() {
    let server = ModelServer::start(vec![Reply::EndlessLine]).await;
    let mut config = config(&server);
    config.max_line_bytes = 256 * 1024;
    let agent = Agent::new(test_gateway(1), config).unwrap();
    let (outcome, events) = run(&agent, member(), "Hi").await;
    assert_eq!(outcome.unwrap().stop_reason, StopReason::ModelError);
    let message = error_message(&events);
    assert!(
        message.starts_with("MODEL_ERROR: model too_large: the model's stream sent an SSE line longer than 262144 bytes ([agent] max_line_bytes)"),
        "{message}"
    );
    assert_eq!(server.received().len(), 1, "too large is not retried");
    // The agent stopped reading at the limit: the server could hand over
    // little more than that and the socket buffers, not an endless line.
    let sent = server.sent();
    assert!(sent < 32 * 1024 * 1024, "{sent} bytes were read from an endless line");
}

#[tokio::test]
async fn a_turn_past_the_size_limit_stops_with_a_model_error() {
    // Text in many small chunks, then tool-call arguments in one delta.
    let long_text = "word ".repeat(4000);
    let long_call = calls(&[("big", "query_weather", json!({"city": "x".repeat(30_000)}))]);
    for reply in [text(&long_text), long_call] {
        let server = ModelServer::start(vec![reply]).await;
        let mut config = direct(&server);
        config.max_turn_bytes = 10_000;
        let agent = Agent::new(test_gateway(1), config).unwrap();
        let (outcome, events) = run(&agent, member(), "Talk").await;
        let outcome = outcome.unwrap();
        assert_eq!((outcome.stop_reason, outcome.steps), (StopReason::ModelError, 0));
        let message = error_message(&events);
        assert!(
            message.starts_with("MODEL_ERROR: model too_large: the model's turn passed 10000 bytes of text and tool calls ([agent] max_turn_bytes)"),
            "{message}"
        );
        let streamed: usize =
            events.iter().map(|e| if let Event::Token { text } = e { text.len() } else { 0 }).sum();
        assert!(streamed <= 10_000, "{streamed} bytes streamed past the limit");
        assert!(!events.iter().any(|e| matches!(e, Event::ToolCallStarted { .. })), "no call ran");
    }
}

/// A write tool that counts the calls that reach it.
fn counting_gateway(count: Arc<AtomicUsize>) -> Gateway {
    let schema = json!({"type": "object", "properties": {"n": {"type": "integer"}},
                        "required": ["n"], "additionalProperties": false});
    let tool = FnTool::new(
        ToolSpec::new("record_tick", "Record one tick.", schema)
            .with_effect(Effect::Write { idempotent: false }),
        move |_ctx, params: Value| {
            let count = count.clone();
            Box::pin(async move {
                count.fetch_add(1, Ordering::SeqCst);
                Ok(ToolOutput::json(json!({"recorded": params["n"]})))
            })
        },
    );
    Gateway::builder().tool(Arc::new(tool)).build().unwrap()
}

#[tokio::test]
async fn only_max_tool_calls_of_one_turn_run_and_the_model_hears_about_the_rest() {
    let count = Arc::new(AtomicUsize::new(0));
    let ids: Vec<String> = (0..10).map(|i| format!("t{i}")).collect();
    let many: Vec<(&str, &str, Value)> =
        ids.iter().enumerate().map(|(i, id)| (id.as_str(), "record_tick", json!({"n": i}))).collect();
    let server = ModelServer::start(vec![calls(&many), text("Recorded four.")]).await;
    let mut config = direct(&server);
    config.max_tool_calls = 4;
    let agent = Agent::new(counting_gateway(count.clone()), config).unwrap();
    let (outcome, events) = run(&agent, member(), "Tick ten times").await;
    assert_eq!(outcome.unwrap().stop_reason, StopReason::Answer);
    assert_eq!(count.load(Ordering::SeqCst), 4, "only the cap reached the tool");
    let started = events.iter().filter(|e| matches!(e, Event::ToolCallStarted { .. })).count();
    assert_eq!(started, 4);
    // Every call of the turn is answered (the API wants each id answered), in order.
    let answers = tool_messages(&server.messages(1));
    assert_eq!(answers.iter().map(|(id, _)| id.as_str()).collect::<Vec<_>>(), ids);
    for (id, content) in &answers[..4] {
        assert!(content.contains("\"recorded\""), "{id}: {content}");
    }
    for (id, content) in &answers[4..] {
        assert!(
            content.starts_with("Error RATE_LIMITED: not run: this turn asked for 10 tool calls and at most 4 run per turn ([agent] max_tool_calls)"),
            "{id}: {content}"
        );
    }
}

#[tokio::test]
async fn retry_after_is_waited_for() {
    let server = ModelServer::start(vec![
        Reply::RetryAfter(429, "1".into()),
        Reply::RetryAfter(503, "1".into()),
        text("Hello."),
    ])
    .await;
    let mut config = config(&server);
    config.model_retries = 2;
    let agent = Agent::new(test_gateway(1), config).unwrap();
    let (outcome, _) = run(&agent, member(), "Hi").await;
    let outcome = outcome.unwrap();
    assert_eq!((outcome.stop_reason, outcome.answer.as_str()), (StopReason::Answer, "Hello."));
    let at: Vec<_> = server.received().iter().map(|r| r.at).collect();
    assert_eq!(at.len(), 3);
    for pair in at.windows(2) {
        let gap = pair[1] - pair[0];
        assert!(gap >= Duration::from_millis(950), "retried after {gap:?}, Retry-After said 1 s");
    }
}

#[tokio::test]
async fn retry_after_past_the_deadline_stops_now_with_the_deadline() {
    let server = ModelServer::start(vec![Reply::RetryAfter(429, "3600".into()), text("never")]).await;
    let agent = Agent::new(test_gateway(1), config(&server)).unwrap();
    let (outcome, events) = run(&agent, member(), "Hi").await;
    assert_eq!(outcome.unwrap().stop_reason, StopReason::Deadline);
    assert_eq!(server.received().len(), 1, "no second request");
    let message = error_message(&events);
    assert!(
        message.starts_with("MODEL_ERROR: model deadline (HTTP 429): the model answered HTTP 429 and asks to retry after 3600.0 s (Retry-After), but the run's deadline is"),
        "{message}"
    );
}

#[tokio::test]
async fn a_consumer_that_does_not_read_stalls_the_model_stream() {
    let server = ModelServer::start(vec![Reply::Flood]).await;
    let mut config = config(&server);
    config.max_turn_bytes = usize::MAX / 2;
    let agent = Agent::new(test_gateway(1), config).unwrap();
    let (tx, rx) = toolgate_agent::event_channel();
    let request = toolgate_agent::RunRequest::new(member(), "Talk");
    let run =
        tokio::spawn(async move { agent.run(request, &tx, toolgate_agent::CancellationToken::new()).await });
    // Nobody reads `rx`: the run fills the channel, then stops reading the
    // model, and the server stops being able to send. Wait until it stopped.
    let mut last = usize::MAX;
    for _ in 0..50 {
        tokio::time::sleep(Duration::from_millis(200)).await;
        let now = server.sent();
        if now == last {
            break;
        }
        last = now;
    }
    let sent = server.sent();
    assert_eq!(sent, last, "the model stream never stalled ({sent} bytes sent)");
    // The channel's events, the socket buffers, not a flood held in memory.
    assert!(sent < 64 * 1024 * 1024, "{sent} bytes were taken from the model");
    assert!(!run.is_finished());
    drop(rx);
    let outcome = tokio::time::timeout(Duration::from_secs(10), run).await.unwrap().unwrap().unwrap();
    assert_eq!(outcome.stop_reason, StopReason::Cancelled);
}
