//! `toolgate agent "message"`: run the agent for one message as a user and
//! stream the answer, one line per tool call, a spinner while waiting.

use std::io::{IsTerminal, Write};
use std::process::ExitCode;
use std::time::Duration;

use agent::{CancellationToken, Event, RunRequest, StopReason};
use anyhow::Result;
use tool_core::Caller;
use toolgate::{App, Config};

use super::check_role;

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// What to ask.
    message: String,
    /// The user the agent acts for.
    #[arg(long)]
    user: String,
    /// The user's role.
    #[arg(long)]
    role: String,
    /// Continue a stored conversation (printed at the end of each run).
    #[arg(long)]
    conversation: Option<String>,
}

pub(crate) async fn run(args: Args, app: &App, config: &Config) -> Result<ExitCode> {
    check_role(app.gateway.policy().hierarchy(), &args.role, "")?;
    let agent = app.agent(config).await?;
    let caller = app.with_fitness_credential(Caller::new(args.user, args.role)).await?;
    let request = RunRequest { caller, message: args.message, conversation_id: args.conversation };
    let (tx, mut rx) = agent::event_channel();
    let cancel = CancellationToken::new();
    let ctrl_c = cancel.clone();
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            ctrl_c.cancel();
        }
    });
    let task = tokio::spawn(async move { agent.run(request, &tx, cancel).await });
    let mut out = Printer::new();
    let mut tick = tokio::time::interval(Duration::from_millis(120));
    let mut stop = None;
    loop {
        tokio::select! {
            event = rx.recv() => match event {
                Some(event) => {
                    if let Event::Final { stop_reason, .. } = &event {
                        stop = Some(*stop_reason);
                    }
                    out.event(event);
                }
                None => break,
            },
            _ = tick.tick() => out.spin(),
        }
    }
    out.clear_spinner();
    match task.await? {
        Ok(_) => Ok(if stop == Some(StopReason::Answer) { ExitCode::SUCCESS } else { ExitCode::from(1) }),
        Err(e) => {
            eprintln!("error {}: {}", e.code(), e.public_message());
            Ok(ExitCode::from(1))
        }
    }
}

/// Writes events to the terminal: tokens to stdout as they come, tool
/// calls and the closing line to stderr, the spinner only on a terminal.
struct Printer {
    /// Started calls by id: the name to show and its short parameters.
    calls: std::collections::HashMap<String, (String, String)>,
    spinner: bool,
    spinning: bool,
    frame: usize,
    mid_line: bool,
}

impl Printer {
    fn new() -> Self {
        Self {
            calls: std::collections::HashMap::new(),
            spinner: std::io::stderr().is_terminal(),
            spinning: false,
            frame: 0,
            mid_line: false,
        }
    }

    fn spin(&mut self) {
        if !self.spinner || self.mid_line {
            return;
        }
        const FRAMES: [&str; 4] = ["|", "/", "-", "\\"];
        self.frame = (self.frame + 1) % FRAMES.len();
        eprint!("\r{} thinking", FRAMES[self.frame]);
        let _ = std::io::stderr().flush();
        self.spinning = true;
    }

    fn clear_spinner(&mut self) {
        if self.spinning {
            eprint!("\r           \r");
            self.spinning = false;
        }
    }

    fn end_line(&mut self) {
        if self.mid_line {
            outln!();
            self.mid_line = false;
        }
    }

    fn event(&mut self, event: Event) {
        self.clear_spinner();
        match event {
            Event::Token { text } => {
                out!("{text}");
                self.mid_line = !text.ends_with('\n');
            }
            Event::ToolCallStarted { id, tool, parameters } => {
                // `execute_tool` is shown as the tool it runs, with that tool's parameters.
                let (name, params) = match parameters["tool_name"].as_str() {
                    Some(inner) if tool == gateway::EXECUTE_TOOL => {
                        (format!("{tool} → {inner}"), &parameters["parameters"])
                    }
                    _ => (tool, &parameters),
                };
                let params = if params.is_null() { "{}".to_owned() } else { params.to_string() };
                let params = if params.chars().count() > 80 {
                    format!("{}…", params.chars().take(80).collect::<String>())
                } else {
                    params
                };
                self.calls.insert(id, (name, params));
            }
            Event::ToolCallFinished { id, tool, success, code, signals, duration_ms, .. } => {
                self.end_line();
                let (name, params) = self.calls.remove(&id).unwrap_or((tool, String::new()));
                let outcome = if success { "ok".to_owned() } else { code.unwrap_or_else(|| "failed".into()) };
                let signals =
                    if signals.is_empty() { String::new() } else { format!(" [{}]", signals.join(", ")) };
                eprintln!("  -> {name} {params}: {outcome}{signals} ({duration_ms:.0} ms)");
            }
            Event::Error { code, message } => {
                self.end_line();
                eprintln!("error {code}: {message}");
            }
            Event::Final { conversation_id, stop_reason, usage, steps, .. } => {
                self.end_line();
                eprintln!(
                    "[{} after {steps} step(s), {} tokens; continue with --conversation {conversation_id}]",
                    stop_reason.as_str(),
                    usage.total_tokens
                );
            }
        }
    }
}
