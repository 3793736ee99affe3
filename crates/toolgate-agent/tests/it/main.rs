//! Integration tests of the agent loop against a scripted OpenAI-compatible
//! model server (a real HTTP server on 127.0.0.1) and a real gateway.

#![allow(unreachable_pub, missing_debug_implementations)]

mod ask;
mod errors;
mod limits;
mod meta;
mod model_server;
mod native;
mod scope;
mod store;
mod text_calls;

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::Barrier;
use tokio_util::sync::CancellationToken;
use toolgate_agent::{Agent, AgentConfig, AgentError, Event, Outcome, RunRequest};
use toolgate_core::{Caller, Effect, FnTool, Tool, ToolError, ToolOutput, ToolSpec};
use toolgate_gateway::Gateway;

use model_server::ModelServer;

/// Two reads and a write. The reads meet at a barrier of `parallel`
/// parties, so a turn whose reads ran one after the other would time out.
fn tools(parallel: usize) -> Vec<Arc<dyn Tool>> {
    let barrier = Arc::new(Barrier::new(parallel.max(1)));
    let city = json!({"type": "object", "properties": {"city": {"type": "string", "minLength": 1}},
                      "required": ["city"], "additionalProperties": false});
    let weather = {
        let barrier = barrier.clone();
        FnTool::new(
            ToolSpec::new("query_weather", "Weather of a city. Example: {\"city\": \"Oslo\"}.", city.clone())
                .with_timeout(Duration::from_secs(5)),
            move |_ctx, params: Value| {
                let barrier = barrier.clone();
                Box::pin(async move {
                    barrier.wait().await;
                    Ok(ToolOutput::json(json!({"city": params["city"], "temp_c": 21})))
                })
            },
        )
    };
    let population = FnTool::new(
        ToolSpec::new("query_population", "Population of a city.", city).with_timeout(Duration::from_secs(5)),
        move |_ctx, params: Value| {
            let barrier = barrier.clone();
            Box::pin(async move {
                barrier.wait().await;
                Ok(ToolOutput::json(json!({"city": params["city"], "population": 700000})))
            })
        },
    );
    let note = FnTool::new(
        ToolSpec::new(
            "record_note",
            "Record a note.",
            json!({"type": "object", "properties": {"text": {"type": "string", "minLength": 1}},
                   "required": ["text"], "additionalProperties": false}),
        )
        .with_effect(Effect::Write { idempotent: false })
        .with_role("member"),
        |ctx: toolgate_core::ToolContext, params: Value| {
            Box::pin(async move {
                if params["text"] == "fail" {
                    return Err(ToolError::unavailable("the notebook is closed"));
                }
                Ok(ToolOutput::json(json!({"saved": params["text"], "by": ctx.caller.user_id})))
            })
        },
    );
    vec![Arc::new(weather), Arc::new(population), Arc::new(note)]
}

pub fn test_gateway(parallel: usize) -> Gateway {
    Gateway::builder().tools(tools(parallel)).build().unwrap()
}

pub fn config(server: &ModelServer) -> AgentConfig {
    let mut config = AgentConfig::new(&server.base_url, "scripted-model");
    config.model_retries = 1;
    config.deadline = Duration::from_secs(20);
    config.idle_timeout = Duration::from_secs(10);
    config
}

pub fn direct(server: &ModelServer) -> AgentConfig {
    config(server).exposure(toolgate_agent::Exposure::Direct)
}

/// Run one message to its end; every event in order.
pub async fn run(agent: &Agent, caller: Caller, message: &str) -> (Result<Outcome, AgentError>, Vec<Event>) {
    run_in(agent, caller, message, None).await
}

pub async fn run_in(
    agent: &Agent,
    caller: Caller,
    message: &str,
    conversation_id: Option<String>,
) -> (Result<Outcome, AgentError>, Vec<Event>) {
    let (tx, mut rx) = toolgate_agent::event_channel();
    let request = RunRequest::new(caller, message).with_conversation_id(conversation_id);
    // The channel is bounded: read it while the run works.
    let run = async move { agent.run(request, &tx, CancellationToken::new()).await };
    let read = async {
        let mut events = Vec::new();
        while let Some(e) = rx.recv().await {
            events.push(e);
        }
        events
    };
    tokio::join!(run, read)
}

/// The events' names, tokens folded into one `token`.
pub fn names(events: &[Event]) -> Vec<&'static str> {
    let mut out: Vec<&'static str> = Vec::new();
    for e in events {
        if e.name() == "token" && out.last() == Some(&"token") {
            continue;
        }
        out.push(e.name());
    }
    out
}

pub fn member() -> Caller {
    Caller::new("mia", "member")
}

/// The `tool` messages of a request: `(tool_call_id, content)`.
/// The first `error` event of a run, as `CODE: message` (empty when none).
pub fn error_message(events: &[Event]) -> String {
    events
        .iter()
        .find_map(|e| {
            if let Event::Error { code, message } = e { Some(format!("{code}: {message}")) } else { None }
        })
        .unwrap_or_default()
}

pub fn tool_messages(messages: &[Value]) -> Vec<(String, String)> {
    messages
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| (m["tool_call_id"].as_str().unwrap().to_owned(), m["content"].as_str().unwrap().to_owned()))
        .collect()
}
