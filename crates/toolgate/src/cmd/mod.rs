//! One module per command: each has its clap arguments and one `run`
//! function. Adding a command is a file here and one line in [`Command`].

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Result, bail};
use clap::Subcommand;
use toolgate::{App, Config};

/// `print!` for a command's output: a reader that went away (`toolgate schema X | head`)
/// ends the command quietly with status 0 instead of a panic and its backtrace.
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::cmd::write_stdout(format_args!($($arg)*))
    };
}

/// `println!` for a command's output, see [`out!`].
macro_rules! outln {
    () => {
        $crate::cmd::write_stdout(format_args!("\n"))
    };
    ($($arg:tt)*) => {
        $crate::cmd::write_stdout(format_args!("{}\n", format_args!($($arg)*)))
    };
}

/// Writes to stdout and flushes, so that a closed pipe is seen here: then the process ends
/// with status 0 (what was asked for was printed as far as anyone reads it); any other
/// failure to write ends it with status 2 and the reason on stderr.
pub(crate) fn write_stdout(args: std::fmt::Arguments<'_>) {
    use std::io::Write;
    let mut stdout = std::io::stdout().lock();
    match stdout.write_fmt(args).and_then(|()| stdout.flush()) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => std::process::exit(0),
        Err(e) => {
            eprintln!("error: cannot write the output: {e}");
            std::process::exit(2)
        }
    }
}

mod agent;
mod audit;
mod budget;
mod call;
mod check;
mod eval;
mod import;
mod inspect;
mod keys;
mod reload;
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
    /// Ask a running server to apply its configuration again (as SIGHUP does); exit 1 if refused.
    Reload(reload::Args),
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
    /// Bytes and tokens a model reads before its first call, per exposure mode and per domain.
    Budget(budget::Args),
    /// Validate the configuration and every route table without serving (exit 0 or 1).
    Check,
    /// Write route tables from an API description.
    Import {
        #[command(subcommand)]
        kind: import::Kind,
    },
    /// Ask the agent (the configured [agent] model driving the tools) as a user; streams the answer.
    Agent(agent::Args),
    /// Run the task suite against a model in each exposure mode and report success, calls and tokens per task.
    Eval(eval::Args),
}

impl Command {
    pub(crate) async fn run(self, globals: Globals) -> Result<ExitCode> {
        match self {
            // These two report their own problems and need no database.
            Command::Check => check::run(&globals),
            Command::Import { kind } => import::run(kind),
            Command::Serve(args) => {
                let mut config = globals.load()?;
                if args.demo
                    && globals.db.is_none()
                    && globals.config.is_none()
                    && std::env::var_os("TOOLGATE_DATABASE_URL").is_none()
                {
                    config.database.url = "sqlite:toolgate-demo.db".into();
                }
                // A reload reads the file again the same way, keeping the database URL the
                // running server was given (it is read only at start).
                let database = config.database.url.clone();
                let reread = move || -> Result<Config> {
                    let mut next = globals.load()?;
                    next.database.url.clone_from(&database);
                    Ok(next)
                };
                serve::run(args, &config, reread).await
            }
            Command::Reload(args) => reload::run(args, &globals.load()?).await,
            Command::Keys { action } => keys::run(action, &globals.load()?).await,
            Command::Audit(args) => audit::run(args, &globals.load()?).await,
            Command::Call(args) => call::run(args, &start(&globals).await?).await,
            Command::Tools(args) => inspect::tools(args, &start(&globals).await?),
            Command::Schema(args) => inspect::schema(args, &start(&globals).await?),
            Command::Guide(args) => inspect::guide(args, &start(&globals).await?),
            Command::Catalog(args) => inspect::catalog(args, &start(&globals).await?),
            Command::Migrate => {
                let config = globals.load()?;
                App::start(&config).await?;
                outln!("migrations applied to {}", toolgate::wiring::redact_url(&config.database.url));
                Ok(ExitCode::SUCCESS)
            }
            Command::Budget(args) => budget::run(args, &start(&globals).await?),
            Command::Agent(args) => {
                let config = globals.load()?;
                agent::run(args, &App::start(&config).await?, &config).await
            }
            Command::Eval(args) => eval::run(args, &globals.load()?).await,
        }
    }
}

async fn start(globals: &Globals) -> Result<App> {
    App::start(&globals.load()?).await
}

/// Refuse a role the hierarchy does not know, naming the ones it does.
pub(crate) fn check_role(hierarchy: &toolgate_authz::RoleHierarchy, role: &str, what: &str) -> Result<()> {
    if hierarchy.rank(role).is_none() {
        bail!("{what}unknown role `{role}`; roles are {}", hierarchy.roles().join(" < "));
    }
    Ok(())
}
