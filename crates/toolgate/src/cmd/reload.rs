//! `toolgate reload`: ask a running `toolgate serve` to apply its configuration again
//! (`POST /api/admin/reload`, the highest role), the same as sending it `SIGHUP` but from
//! anywhere its HTTP port is reachable, with the outcome printed: exit 0 when reloaded, 1
//! when the new configuration was refused (every problem listed, nothing changed).

use std::process::ExitCode;

use anyhow::{Context, Result};
use toolgate::Config;

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The server's base URL (default: http:// and the configuration's listen address).
    #[arg(long)]
    url: Option<String>,
    /// An API key (or access token) of the highest role.
    #[arg(long, env = "TOOLGATE_KEY", hide_env_values = true)]
    key: String,
}

pub(crate) async fn run(args: Args, config: &Config) -> Result<ExitCode> {
    let base = args.url.unwrap_or_else(|| format!("http://{}", config.server.listen));
    let url = format!("{}/api/admin/reload", base.trim_end_matches('/'));
    let response = reqwest::Client::new()
        .post(&url)
        .bearer_auth(args.key.trim())
        .send()
        .await
        .with_context(|| format!("asking {url} to reload (is toolgate serve running there?)"))?;
    let status = response.status();
    let body: serde_json::Value = response.json().await.unwrap_or_default();
    if status.is_success() {
        let changes = &body["changes"];
        let list = |key: &str| {
            changes[key]
                .as_array()
                .map(|a| a.iter().filter_map(|v| v.as_str()).collect::<Vec<_>>().join(", "))
        };
        outln!(
            "reloaded: {} tool(s) added, {} removed, {} kept",
            changes["added"].as_array().map_or(0, Vec::len),
            changes["removed"].as_array().map_or(0, Vec::len),
            changes["kept"].as_array().map_or(0, Vec::len)
        );
        for (what, key) in [
            ("added", "added"),
            ("removed", "removed"),
            ("upstreams stopped", "upstreams_stopped"),
            ("upstreams started", "upstreams_started"),
        ] {
            if let Some(names) = list(key).filter(|n| !n.is_empty()) {
                outln!("{what}: {names}");
            }
        }
        if let Some(sections) = list("need_restart").filter(|n| !n.is_empty()) {
            outln!("changed but read only at start (restart to apply): {sections}");
        }
        for warning in changes["warnings"].as_array().into_iter().flatten().filter_map(|w| w.as_str()) {
            outln!("warning: {warning}");
        }
        return Ok(ExitCode::SUCCESS);
    }
    let message = body.pointer("/error/message").and_then(|m| m.as_str()).unwrap_or("no reason given");
    outln!("not reloaded (HTTP {}): {message}", status.as_u16());
    for problem in body["problems"].as_array().into_iter().flatten().filter_map(|p| p.as_str()) {
        outln!("- {problem}");
    }
    Ok(ExitCode::from(1))
}
