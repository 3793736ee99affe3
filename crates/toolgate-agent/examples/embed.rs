//! Your own gateway and any OpenAI-compatible model: `cargo run -p toolgate-agent --example embed -- URL MODEL "question"`.
use std::sync::Arc;

use serde_json::json;
use toolgate_agent::{Agent, AgentConfig, Event, RunRequest};
use toolgate_core::{Caller, FnTool, ToolOutput, ToolSpec};
use toolgate_gateway::Gateway;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let (url, model) = (args.next().ok_or("base URL")?, args.next().ok_or("model")?);
    let message = args.next().unwrap_or_else(|| "What is the weather in Oslo?".into());
    let schema = json!({"type": "object", "properties": {"city": {"type": "string"}},
                        "required": ["city"], "additionalProperties": false});
    let weather =
        FnTool::new(ToolSpec::new("query_weather", "Today's weather in a city.", schema), |_ctx, p| {
            Box::pin(
                async move { Ok(ToolOutput::json(json!({"city": p["city"], "sky": "clear", "temp_c": 21}))) },
            )
        });
    let gateway = Gateway::builder().tool(Arc::new(weather)).build()?;
    let agent = Agent::new(gateway, AgentConfig::new(url, model))?;
    let (tx, mut rx) = toolgate_agent::event_channel();
    let request = RunRequest::new(Caller::new("demo", "guest"), message);
    let run = tokio::spawn(async move { agent.run(request, &tx, Default::default()).await });
    while let Some(event) = rx.recv().await {
        match event {
            Event::Token { text } => print!("{text}"),
            Event::ToolCallFinished { tool, success, .. } => {
                println!("\n[{tool}: {}]", if success { "ok" } else { "failed" })
            }
            Event::Final { stop_reason, .. } => println!("\n[{}]", stop_reason.as_str()),
            _ => {}
        }
    }
    run.await??;
    Ok(())
}
