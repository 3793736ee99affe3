//! `toolgate eval`: run the task suite against a model, in each exposure
//! mode, and report success, steps, calls by outcome, tokens and time per
//! task (markdown on stdout, a progress line on stderr when it is a
//! terminal, JSON and a PNG chart on request). `--min-success` makes the
//! exit status a CI gate.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use toolgate::Config;
use toolgate::eval::{Mode, Options, Suite, Target};

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The task suite.
    #[arg(long, default_value = "eval/tasks.toml")]
    suite: PathBuf,
    /// Exposure modes, comma-separated: meta, direct, scoped.
    #[arg(long, default_value = "meta,direct,scoped")]
    exposure: String,
    /// Runs per task and exposure (the success rate's interval narrows with more).
    #[arg(long, default_value_t = 1)]
    repeat: u32,
    /// Only these tasks (comma-separated ids).
    #[arg(long)]
    task: Option<String>,
    /// The model (default: [agent] model).
    #[arg(long)]
    model: Option<String>,
    /// The OpenAI-compatible base URL up to /v1 (default: [agent] base_url).
    #[arg(long)]
    base_url: Option<String>,
    /// The environment variable holding the endpoint's API key (default: [agent] api_key).
    #[arg(long)]
    api_key_env: Option<String>,
    /// `native` tool calls or `text` (<tool_call> blocks) (default: [agent] tool_calling).
    #[arg(long, value_parser = ["native", "text"])]
    tool_calling: Option<String>,
    /// Sampling temperature (default: [agent] temperature, else the server's).
    #[arg(long)]
    temperature: Option<f32>,
    /// Runs at once.
    #[arg(long, default_value_t = 2)]
    parallel: usize,
    /// Write the JSON report here.
    #[arg(long)]
    json: Option<PathBuf>,
    /// Write the PNG chart here (default: beside --json, with .png).
    #[arg(long)]
    chart: Option<PathBuf>,
    /// Exit 1 when the overall success rate is below this (0 to 1).
    #[arg(long)]
    min_success: Option<f64>,
}

pub(crate) async fn run(args: Args, config: &Config) -> Result<ExitCode> {
    let suite = Suite::load(&args.suite)?;
    let mut modes = Vec::new();
    for part in args.exposure.split(',').filter(|p| !p.trim().is_empty()) {
        let mode = Mode::parse(part)?;
        if !modes.contains(&mode) {
            modes.push(mode);
        }
    }
    if modes.is_empty() {
        bail!("--exposure names no mode; use meta, direct and/or scoped");
    }
    if let Some(min) = args.min_success
        && !(0.0..=1.0).contains(&min)
    {
        bail!("--min-success must be between 0 and 1, got {min}");
    }
    let target = target(&args, config)?;
    let options = Options {
        modes,
        repeat: args.repeat.max(1),
        only: args
            .task
            .as_deref()
            .map(|t| t.split(',').map(|s| s.trim().to_owned()).collect())
            .unwrap_or_default(),
        parallel: args.parallel.max(1),
    };
    let terminal = std::io::stderr().is_terminal();
    let mut progress = move |p: toolgate::eval::Progress| {
        if terminal {
            const WIDTH: usize = 30;
            let filled = p.done * WIDTH / p.total.max(1);
            eprint!(
                "\r[{}{}] {}/{} {} × {}: {}\x1b[K",
                "#".repeat(filled),
                ".".repeat(WIDTH - filled),
                p.done,
                p.total,
                p.task,
                p.mode.as_str(),
                if p.success { "pass" } else { "FAIL" }
            );
            if p.done == p.total {
                eprintln!();
            }
            let _ = std::io::stderr().flush();
        }
    };
    let report = toolgate::eval::run(&suite, config, &target, &options, &mut progress).await?;
    out!("{}", report.markdown());
    if let Some(path) = &args.json {
        let text = serde_json::to_string_pretty(&report.json())?;
        std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))?;
    }
    let chart = args.chart.clone().or_else(|| args.json.as_ref().map(|j| j.with_extension("png")));
    if let Some(path) = chart {
        let png =
            toolgate::eval::chart::png(&report).map_err(|e| anyhow::anyhow!("drawing the chart: {e}"))?;
        std::fs::write(&path, png).with_context(|| format!("writing {}", path.display()))?;
    }
    let overall = report.overall();
    if let Some(min) = args.min_success
        && overall.success_rate < min
    {
        eprintln!("success {:.1}% is below --min-success {:.1}%", overall.success_rate * 100.0, min * 100.0);
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::SUCCESS)
}

fn target(args: &Args, config: &Config) -> Result<Target> {
    let section = &config.agent;
    let base_url =
        args.base_url.clone().or_else(|| section.base_url.clone()).filter(|u| !u.trim().is_empty());
    let Some(base_url) = base_url else {
        bail!("no model endpoint: pass --base-url (or set [agent] base_url / TOOLGATE_AGENT_BASE_URL)");
    };
    if !(base_url.starts_with("http://") || base_url.starts_with("https://")) {
        bail!("--base-url must start with http:// or https://, got {base_url:?}");
    }
    let model = args.model.clone().or_else(|| section.model.clone()).filter(|m| !m.trim().is_empty());
    let Some(model) = model else { bail!("no model: pass --model (or set [agent] model)") };
    let key_env = args.api_key_env.clone().or_else(|| section.api_key.as_ref().map(|k| k.env.clone()));
    let api_key = match key_env {
        Some(env) => match std::env::var(&env).ok().filter(|v| !v.trim().is_empty()) {
            Some(value) => Some(toolgate_core::Secret::new(value.trim())),
            None => bail!("the API key variable {env} is not set"),
        },
        None => None,
    };
    let tool_calling = match args.tool_calling.as_deref() {
        Some("text") => toolgate_agent::ToolCalling::Text,
        Some(_) => toolgate_agent::ToolCalling::Native,
        None => section.tool_calling,
    };
    Ok(Target {
        base_url,
        model,
        api_key,
        tool_calling,
        temperature: args.temperature.or(section.temperature),
        idle_timeout: Duration::from_secs(section.idle_timeout_secs.max(1)),
        retries: section.retries,
    })
}
