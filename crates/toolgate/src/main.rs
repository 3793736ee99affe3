//! `toolgate`: serve tools to LLM agents over MCP, or call them from the shell.
//! This file parses the command line and hands it to one function per
//! command (`cmd/`); only the binary knows clap.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;

mod cmd;

/// Stands between LLM agents and business systems: typed tools, one envelope, MCP.
#[derive(Debug, Parser)]
#[command(name = "toolgate", version, about)]
struct Cli {
    /// Configuration file (default: ./toolgate.toml when it exists).
    #[arg(long, global = true, env = "TOOLGATE_CONFIG")]
    config: Option<PathBuf>,
    /// Database URL (overrides the file and TOOLGATE_DATABASE_URL).
    #[arg(long, global = true)]
    db: Option<String>,
    #[command(subcommand)]
    command: cmd::Command,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    init_tracing();
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the runtime: {e}");
            return ExitCode::from(2);
        }
    };
    let globals = cmd::Globals { config: cli.config, db: cli.db };
    match runtime.block_on(cli.command.run(globals)) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}

/// Levels that `TOOLGATE_LOG` cannot raise, because these libraries log
/// whole messages: rmcp prints every request with its tool arguments (API
/// keys given to `save_flight_api_key`, passwords in parameters) at `debug`
/// and notifications at `info`, and its warnings can quote a parameter. Our
/// own crates log ids and codes, never values, so they may go to `trace`.
const LOG_CAPS: &[&str] = &["rmcp=error", "hyper=warn", "hyper_util=warn", "reqwest=warn", "h2=warn"];

fn init_tracing() {
    let mut filter = tracing_subscriber::EnvFilter::try_from_env("TOOLGATE_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    // Added last, a cap replaces a user's directive for the same target.
    for cap in LOG_CAPS {
        if let Ok(directive) = cap.parse() {
            filter = filter.add_directive(directive);
        }
    }
    // Logs go to stderr: stdout carries results (and the MCP stdio stream).
    let _ = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).try_init();
}
