//! `toolgate`: serve tools to LLM agents over MCP, or call them from the shell.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use clap::{Parser, Subcommand, ValueEnum};
use gateway::{CallOptions, Filter, SchemaFormat};
use tool_core::{Caller, ToolContext};
use toolgate::{App, Config};

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
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run one tool as a user, print the envelope; exit 0 on success, 1 on failure.
    Call {
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
    },
    /// List the tools a role may use.
    Tools {
        /// Only names containing this text.
        #[arg(long)]
        filter: Option<String>,
        /// As this role (default: the highest).
        #[arg(long)]
        role: Option<String>,
    },
    /// Print a tool's schema.
    Schema {
        /// The tool's name.
        tool: String,
        /// The dialect.
        #[arg(long, value_enum, default_value_t = Format::Mcp)]
        format: Format,
    },
    /// Print a skill's guide.
    Guide {
        /// The skill id.
        skill: String,
        /// As this role (default: the highest).
        #[arg(long)]
        role: Option<String>,
    },
    /// Print the catalog text (the system prompt) for a role.
    Catalog {
        /// As this role (default: the highest).
        #[arg(long)]
        role: Option<String>,
    },
    /// Create the tables (migrations run on every start too).
    Migrate,
    /// Bytes and tokens a model reads before its first call, per exposure mode.
    Budget {
        /// Print markdown instead of plain text.
        #[arg(long)]
        markdown: bool,
    },
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum Format {
    Mcp,
    Openai,
    Anthropic,
    Gemini,
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
    match runtime.block_on(run(cli)) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}

fn init_tracing() {
    let filter = tracing_subscriber::EnvFilter::try_from_env("TOOLGATE_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    // Logs go to stderr: stdout carries results (and the MCP stdio stream).
    let _ = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).try_init();
}

fn load_config(cli: &Cli) -> Result<Config> {
    let mut config = Config::load(cli.config.as_deref())?;
    if let Some(db) = &cli.db {
        config.database.url = db.clone();
    }
    Ok(config)
}

async fn run(cli: Cli) -> Result<ExitCode> {
    let config = load_config(&cli)?;
    let app = App::start(&config).await?;
    let highest = app.gateway.policy().hierarchy().highest().to_owned();
    let as_role = |role: &Option<String>| Caller::new("cli", role.clone().unwrap_or_else(|| highest.clone()));
    match cli.command {
        Command::Call { tool, params, user, role, options } => {
            if app.gateway.policy().hierarchy().rank(&role).is_none() {
                bail!(
                    "unknown role `{role}`; roles are {}",
                    app.gateway.policy().hierarchy().roles().join(" < ")
                );
            }
            let options: CallOptions = match options {
                Some(text) => {
                    serde_json::from_str(&text).context("--options is not valid call options JSON")?
                }
                None => CallOptions::default(),
            };
            let mut caller = Caller::new(user.clone(), role);
            caller.token = app.fitness_token(&user).await?;
            let ctx = ToolContext::new(caller).with_trace_id(uuid::Uuid::new_v4().to_string());
            let envelope = app.gateway.execute_json(&ctx, &tool, &params, &options).await;
            println!("{}", serde_json::to_string_pretty(&envelope)?);
            Ok(if envelope.success { ExitCode::SUCCESS } else { ExitCode::from(1) })
        }
        Command::Tools { filter, role } => {
            let filter = Filter { name: filter, ..Filter::default() };
            for spec in app.gateway.discover(&as_role(&role), &filter) {
                println!(
                    "{:<32} {:<6} {:<10} {:<8} {}",
                    spec.name,
                    spec.effect.label(),
                    spec.domain,
                    spec.required_role,
                    first_line(&spec.description)
                );
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Schema { tool, format } => {
            let format = match format {
                Format::Mcp => SchemaFormat::Mcp,
                Format::Openai => SchemaFormat::Openai,
                Format::Anthropic => SchemaFormat::Anthropic,
                Format::Gemini => SchemaFormat::Gemini,
            };
            match app.gateway.tool_schema_as(&as_role(&None), &tool, format) {
                Ok(schema) => {
                    println!("{}", serde_json::to_string_pretty(&schema)?);
                    Ok(ExitCode::SUCCESS)
                }
                Err(e) => {
                    eprintln!("{}: {}", e.code, e.message);
                    Ok(ExitCode::from(1))
                }
            }
        }
        Command::Guide { skill, role } => match app.gateway.skill_guide(&as_role(&role), &skill) {
            Ok(guide) => {
                println!("{guide}");
                Ok(ExitCode::SUCCESS)
            }
            Err(e) => {
                eprintln!("{}: {}", e.code, e.message);
                Ok(ExitCode::from(1))
            }
        },
        Command::Catalog { role } => {
            println!("{}", app.gateway.catalog(&as_role(&role)));
            Ok(ExitCode::SUCCESS)
        }
        Command::Migrate => {
            println!("migrations applied to {}", toolgate::wiring::redact_url(&config.database.url));
            Ok(ExitCode::SUCCESS)
        }
        Command::Budget { markdown } => {
            let report = toolgate::budget::report(&app.gateway)?;
            println!("{}", if markdown { report.markdown() } else { report.text() });
            Ok(ExitCode::SUCCESS)
        }
    }
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or_default()
}
