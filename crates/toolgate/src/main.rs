//! `toolgate`: serve tools to LLM agents over MCP, or call them from the shell.
//! This file parses the command line and hands it to one function per
//! command (`cmd/`); only the binary knows clap.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;

mod cmd;
mod logs;

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

/// malloc/free were about a fifth of the server's CPU per `tools/call`
/// (issue 16); mimalloc's thread-local free lists make them a few
/// instructions each.
///
/// Built with its `no_thp` feature: mimalloc then turns transparent huge
/// pages off for the process when it initializes, before `main`, instead of
/// asking for them for its arena. With them, an idle server's few MiB of
/// heap sat in 2 MiB pages (issue 16 measured 51 MiB idle RSS, 20 of it
/// anonymous, then 4 MiB of huge pages still taken before a `prctl` in
/// `main` could refuse them); nothing measurable was lost per call.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let cli = Cli::parse();
    logs::init();
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
