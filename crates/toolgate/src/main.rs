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
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// mimalloc asks for transparent huge pages for its arena, so an idle
/// server's few MiB of heap sat in 2 MiB pages: 18 MiB resident for about 3
/// MiB in use (issue 16 measured 51 MiB idle RSS, 20 of it anonymous). Off
/// for this process before the heap grows; nothing measurable was lost per
/// call.
fn no_huge_pages() {
    #[cfg(target_os = "linux")]
    if let Err(error) = rustix::thread::disable_transparent_huge_pages(true) {
        // Only memory is at stake; the server runs the same.
        eprintln!("note: transparent huge pages stay on ({error})");
    }
}

fn main() -> ExitCode {
    no_huge_pages();
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
