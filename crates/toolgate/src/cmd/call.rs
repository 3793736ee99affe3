//! `toolgate call`: run one tool as a user and print the envelope.

use std::process::ExitCode;

use anyhow::{Context, Result};
use toolgate::App;
use toolgate_core::{Caller, ToolContext};
use toolgate_gateway::CallOptions;

use super::check_role;

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The tool's name.
    tool: String,
    /// Parameters as a JSON object.
    #[arg(long, default_value = "{}")]
    params: String,
    /// The user the call acts for.
    #[arg(long)]
    user: String,
    /// The user's role.
    #[arg(long)]
    role: String,
    /// Call options as JSON, e.g. '{"timeout_ms": 500}'.
    #[arg(long)]
    options: Option<String>,
}

pub(crate) async fn run(args: Args, app: &App) -> Result<ExitCode> {
    check_role(app.gateway.policy().hierarchy(), &args.role, "")?;
    let options: CallOptions = match args.options {
        Some(text) => serde_json::from_str(&text).context("--options is not valid call options JSON")?,
        None => CallOptions::default(),
    };
    let caller = app.with_fitness_credential(Caller::new(args.user, args.role)).await?;
    let ctx = ToolContext::new(caller).with_trace_id(uuid::Uuid::new_v4().to_string());
    let envelope = app.gateway.execute_json(&ctx, &args.tool, &args.params, &options).await;
    outln!("{}", serde_json::to_string_pretty(&envelope)?);
    Ok(if envelope.success { ExitCode::SUCCESS } else { ExitCode::from(1) })
}
