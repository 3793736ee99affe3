//! One module per command: each has its clap arguments and one `run`
//! function. Adding a command is a file here and one line in [`Command`].

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Result, bail};
use clap::Subcommand;
use toolgate::{App, Config};

mod agent;
mod audit;
mod call;
mod inspect;
mod keys;
mod serve;

/// The options every command shares.
#[derive(Debug)]
pub(crate) struct Globals {
    pub(crate) config: Option<PathBuf>,
    pub(crate) db: Option<String>,
}

impl Globals {
    /// The configuration: the file (or defaults), the environment, then `--db`.
    pub(crate) fn load(&self) -> Result<Config> {
        let mut config = Config::load(self.config.as_deref())?;
        if let Some(db) = &self.db {
            config.database.url = db.clone();
        }
        Ok(config)
    }
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Serve MCP over streamable HTTP at /mcp (or over stdio).
    Serve(serve::Args),
    /// Read the audit trail: write calls and refused calls, newest first.
    Audit(audit::Args),
    /// Manage API keys (stored hashed).
    Keys {
        #[command(subcommand)]
        action: keys::Action,
    },
    /// Run one tool as a user, print the envelope; exit 0 on success, 1 on failure.
    Call(call::Args),
    /// List the tools a role may use.
    Tools(inspect::ToolsArgs),
    /// Print a tool's schema.
    Schema(inspect::SchemaArgs),
    /// Print a skill's guide.
    Guide(inspect::GuideArgs),
    /// Print the catalog text (the system prompt) for a role.
    Catalog(inspect::RoleArg),
    /// Create the tables (migrations run on every start too).
    Migrate,
    /// Bytes and tokens a model reads before its first call, per exposure mode.
    Budget(inspect::BudgetArgs),
    /// Ask the agent (the configured [agent] model driving the tools) as a user; streams the answer.
    Agent(agent::Args),
}

impl Command {
    pub(crate) async fn run(self, globals: Globals) -> Result<ExitCode> {
        let mut config = globals.load()?;
        match self {
            Command::Serve(args) => {
                if args.demo
                    && globals.db.is_none()
                    && globals.config.is_none()
                    && std::env::var_os("TOOLGATE_DATABASE_URL").is_none()
                {
                    config.database.url = "sqlite:toolgate-demo.db".into();
                }
                serve::run(args, &config).await
            }
            Command::Keys { action } => keys::run(action, &config).await,
            Command::Audit(args) => audit::run(args, &config).await,
            Command::Call(args) => call::run(args, &start(&config).await?).await,
            Command::Tools(args) => inspect::tools(args, &start(&config).await?),
            Command::Schema(args) => inspect::schema(args, &start(&config).await?),
            Command::Guide(args) => inspect::guide(args, &start(&config).await?),
            Command::Catalog(args) => inspect::catalog(args, &start(&config).await?),
            Command::Migrate => {
                start(&config).await?;
                println!("migrations applied to {}", toolgate::wiring::redact_url(&config.database.url));
                Ok(ExitCode::SUCCESS)
            }
            Command::Budget(args) => inspect::budget(args, &start(&config).await?),
            Command::Agent(args) => agent::run(args, &start(&config).await?, &config).await,
        }
    }
}

async fn start(config: &Config) -> Result<App> {
    App::start(config).await
}

/// Refuse a role the hierarchy does not know, naming the ones it does.
pub(crate) fn check_role(hierarchy: &authz::RoleHierarchy, role: &str, what: &str) -> Result<()> {
    if hierarchy.rank(role).is_none() {
        bail!("{what}unknown role `{role}`; roles are {}", hierarchy.roles().join(" < "));
    }
    Ok(())
}
