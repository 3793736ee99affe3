//! Native tool calls: one call, parallel reads, a malformed call corrected,
//! a model that never stops, the same failing call repeated.

use serde_json::json;
use toolgate_agent::{Agent, Event, StopReason};

use crate::model_server::{ModelServer, calls, text};
use crate::{direct, member, names, run, test_gateway, tool_messages};

#[tokio::test]
async fn single_call_then_answer_streams_events_in_order() {
    let server = ModelServer::start(vec![
        calls(&[("call_1", "query_weather", json!({"city": "Oslo"}))]),
        text("It is 21 degrees in Oslo."),
    ])
    .await;
    let agent = Agent::new(test_gateway(1), direct(&server)).unwrap();
    let (outcome, events) = run(&agent, member(), "Weather in Oslo?").await;
    let outcome = outcome.unwrap();
    assert_eq!(outcome.stop_reason, StopReason::Answer);
    assert_eq!(outcome.answer, "It is 21 degrees in Oslo.");
    assert_eq!(outcome.steps, 2);
    assert_eq!(outcome.usage.total_tokens, 230);
    assert_eq!(names(&events), ["tool_call_started", "tool_call_finished", "token", "final"]);
    match &events[1] {
        Event::ToolCallFinished { id, tool, success, result, .. } => {
            assert_eq!((id.as_str(), tool.as_str(), *success), ("call_1", "query_weather", true));
            assert!(result.contains("\"temp_c\":21"), "{result}");
        }
        other => panic!("{other:?}"),
    }
    let tokens: String = events
        .iter()
        .filter_map(|e| if let Event::Token { text } = e { Some(text.as_str()) } else { None })
        .collect();
    assert_eq!(tokens, "It is 21 degrees in Oslo.");
    // What the model received: the tools of a member (direct), then its call answered by id.
    assert_eq!(server.tools_offered(0), ["query_population", "query_weather", "record_note"]);
    let second = server.messages(1);
    assert_eq!(second[0]["role"], "system");
    assert_eq!(second[1], json!({"role": "user", "content": "Weather in Oslo?"}));
    assert_eq!(second[2]["tool_calls"][0]["id"], "call_1");
    assert_eq!(second[2]["tool_calls"][0]["function"]["arguments"], "{\"city\":\"Oslo\"}");
    let answers = tool_messages(&second);
    assert_eq!(answers.len(), 1);
    assert_eq!(answers[0].0, "call_1");
    assert!(answers[0].1.contains("\"temp_c\": 21"), "{}", answers[0].1);
    assert_eq!(server.received()[0].body["stream"], true);
    assert!(server.received()[0].authorization.is_none(), "no key configured, none sent");
}

#[tokio::test]
async fn reads_of_one_turn_run_together() {
    // Both reads wait at a two-party barrier: run one after the other, the
    // first would wait for ever (its 5 s timeout) and fail.
    let server = ModelServer::start(vec![
        calls(&[
            ("c_w", "query_weather", json!({"city": "Rome"})),
            ("c_p", "query_population", json!({"city": "Rome"})),
        ]),
        text("Rome: 21 degrees, 700000 people."),
    ])
    .await;
    let agent = Agent::new(test_gateway(2), direct(&server)).unwrap();
    let (outcome, events) = run(&agent, member(), "Rome?").await;
    assert_eq!(outcome.unwrap().stop_reason, StopReason::Answer);
    let finished: Vec<(String, bool)> = events
        .iter()
        .filter_map(|e| match e {
            Event::ToolCallFinished { id, success, .. } => Some((id.clone(), *success)),
            _ => None,
        })
        .collect();
    assert_eq!(finished.len(), 2);
    assert!(finished.iter().all(|(_, ok)| *ok), "{finished:?}");
    assert_eq!(&names(&events)[..2], ["tool_call_started", "tool_call_started"]);
    let answers: Vec<String> = tool_messages(&server.messages(1)).into_iter().map(|(id, _)| id).collect();
    assert_eq!(answers, ["c_w", "c_p"], "tool messages answer the calls in the model's order");
}

#[tokio::test]
async fn a_malformed_call_gets_invalid_params_back_and_the_model_corrects_itself() {
    let server = ModelServer::start(vec![
        calls(&[("c1", "query_weather", json!({"town": "Oslo"}))]),
        calls(&[("c2", "query_weather", json!("{\"city\": \"Oslo\""))]),
        calls(&[("c3", "query_weather", json!({"city": "Oslo"}))]),
        text("21 degrees."),
    ])
    .await;
    let agent = Agent::new(test_gateway(1), direct(&server)).unwrap();
    let (outcome, events) = run(&agent, member(), "Oslo?").await;
    let outcome = outcome.unwrap();
    assert_eq!((outcome.stop_reason, outcome.steps), (StopReason::Answer, 4));
    let codes: Vec<Option<String>> = events
        .iter()
        .filter_map(|e| if let Event::ToolCallFinished { code, .. } = e { Some(code.clone()) } else { None })
        .collect();
    assert_eq!(codes, [Some("INVALID_PARAMS".into()), Some("INVALID_PARAMS".into()), None]);
    let fed_back = tool_messages(&server.messages(1));
    assert!(fed_back[0].1.starts_with("Error INVALID_PARAMS"), "{fed_back:?}");
    assert!(fed_back[0].1.contains("town"), "the message names the field: {fed_back:?}");
    let fed_back = tool_messages(&server.messages(2));
    assert!(fed_back[1].1.contains("not valid JSON"), "{fed_back:?}");
}

#[tokio::test]
async fn a_model_that_never_stops_ends_at_max_steps() {
    let server = ModelServer::start_with(
        Vec::new(),
        Some(calls(&[("again", "query_weather", json!({"city": "Lima"}))])),
    )
    .await;
    let agent = Agent::new(test_gateway(1), direct(&server).max_steps(3)).unwrap();
    let (outcome, events) = run(&agent, member(), "Loop").await;
    let outcome = outcome.unwrap();
    assert_eq!((outcome.stop_reason, outcome.steps), (StopReason::MaxSteps, 3));
    assert_eq!(server.received().len(), 3);
    assert!(matches!(events.last(), Some(Event::Final { stop_reason: StopReason::MaxSteps, .. })));
}

#[tokio::test]
async fn the_same_failing_call_twice_stops_the_run() {
    let failing = calls(&[("n", "record_note", json!({"text": "fail"}))]);
    let server = ModelServer::start(vec![failing.clone(), failing, text("never reached")]).await;
    let agent = Agent::new(test_gateway(1), direct(&server)).unwrap();
    let (outcome, _events) = run(&agent, member(), "Note it").await;
    let outcome = outcome.unwrap();
    assert_eq!((outcome.stop_reason, outcome.steps), (StopReason::RepeatedFailure, 2));
    assert_eq!(server.received().len(), 2, "the model is not asked a third time");
}
