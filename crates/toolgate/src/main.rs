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
    /// Serve MCP over streamable HTTP at /mcp (or over stdio).
    Serve {
        /// The demo: demo users of each role with fresh API keys, demo data,
        /// and a client configuration to paste (default database: sqlite:toolgate-demo.db).
        #[arg(long)]
        demo: bool,
        /// Where to listen (default: the configuration's, 127.0.0.1:8377).
        #[arg(long)]
        listen: Option<String>,
        /// Serve MCP on stdin/stdout as `--user`/`--role` instead of HTTP.
        #[arg(long)]
        stdio: bool,
        /// How tools appear: meta (default), direct, or scoped:DOMAIN[,DOMAIN].
        #[arg(long)]
        expose: Option<String>,
        /// With --stdio: the user every call acts for.
        #[arg(long, requires = "stdio")]
        user: Option<String>,
        /// With --stdio: that user's role.
        #[arg(long, requires = "stdio")]
        role: Option<String>,
        /// Requests without an Authorization header act as user `anonymous`
        /// with this role (for clients that cannot send headers, such as the
        /// MCP conformance suite). Off by default.
        #[arg(long)]
        allow_anonymous: Option<String>,
        /// Stateless HTTP (no MCP sessions; every POST stands alone).
        #[arg(long)]
        stateless: bool,
    },
    /// Manage API keys (stored hashed).
    Keys {
        #[command(subcommand)]
        action: KeysAction,
    },
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

#[derive(Debug, Subcommand)]
enum KeysAction {
    /// Make a key for a user and role; the key is printed once.
    Create {
        /// The user the key acts for.
        #[arg(long)]
        user: String,
        /// The role it carries.
        #[arg(long)]
        role: String,
    },
    /// List keys (ids, users, roles; never the keys).
    List,
    /// Revoke a key by its id.
    Revoke {
        /// The key's id, from `keys list`.
        id: String,
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
    let mut config = load_config(&cli)?;
    if let Command::Serve { demo: true, .. } = &cli.command
        && cli.db.is_none()
        && std::env::var_os("TOOLGATE_DATABASE_URL").is_none()
        && cli.config.is_none()
    {
        config.database.url = "sqlite:toolgate-demo.db".into();
    }
    if let Command::Keys { action } = &cli.command {
        return keys(&config, action).await;
    }
    let app = App::start(&config).await?;
    let highest = app.gateway.policy().hierarchy().highest().to_owned();
    let as_role = |role: &Option<String>| Caller::new("cli", role.clone().unwrap_or_else(|| highest.clone()));
    match cli.command {
        Command::Serve { demo, listen, stdio, expose, user, role, allow_anonymous, stateless } => {
            let expose = expose.unwrap_or_else(|| config.server.expose.clone());
            let exposure: mcp_server::Exposure =
                expose.parse().map_err(|e| anyhow::anyhow!("--expose {expose}: {e}"))?;
            if stdio {
                let (Some(user), Some(role)) = (user, role) else {
                    bail!(
                        "--stdio needs --user and --role: stdio has no API keys, the identity is whoever starts it"
                    );
                };
                if app.gateway.policy().hierarchy().rank(&role).is_none() {
                    bail!("unknown role `{role}`");
                }
                let mut caller = Caller::new(user.clone(), role);
                caller.token = app.fitness_token(&user).await?;
                mcp_server::serve_stdio(app.gateway.clone(), caller, exposure).await?;
                return Ok(ExitCode::SUCCESS);
            }
            let keys =
                mcp_server::KeyStore::connect(&toolgate::wiring::sqlite_create(&config.database.url)).await?;
            let demo_keys = if demo { toolgate::serve::demo_setup(&app, &keys).await? } else { Vec::new() };
            let mut http = mcp_server::HttpConfig {
                max_body_bytes: config.server.max_body_bytes,
                sessions: if stateless {
                    mcp_server::SessionMode::Stateless
                } else {
                    mcp_server::SessionMode::Stateful
                },
                ..mcp_server::HttpConfig::default()
            };
            http.allowed_hosts.extend(config.server.allowed_hosts.iter().cloned());
            if let Some(role) = allow_anonymous {
                if app.gateway.policy().hierarchy().rank(&role).is_none() {
                    bail!("--allow-anonymous: unknown role `{role}`");
                }
                http.anonymous = Some(Caller::new("anonymous", role));
            }
            let listen = listen.unwrap_or_else(|| config.server.listen.clone());
            let listener = tokio::net::TcpListener::bind(&listen)
                .await
                .with_context(|| format!("listening on {listen}"))?;
            let addr = listener.local_addr()?;
            let url = format!("http://{addr}");
            if demo {
                print!("{}", toolgate::serve::demo_banner(&url, &demo_keys));
            }
            println!("toolgate serving MCP at {url}/mcp ({exposure} exposure); Ctrl-C stops it");
            use std::io::Write as _;
            let _ = std::io::stdout().flush();
            let state = toolgate::serve::http_state(&app, keys, exposure, http);
            mcp_server::serve_http(listener, state, shutdown_signal()).await?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Keys { .. } => unreachable_keys(),
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

/// `keys` needs only the key store, not the whole app.
async fn keys(config: &Config, action: &KeysAction) -> Result<ExitCode> {
    let store = mcp_server::KeyStore::connect(&toolgate::wiring::sqlite_create(&config.database.url)).await?;
    match action {
        KeysAction::Create { user, role } => {
            let policy = authz::Policy::from_config(config.authz.clone())?;
            if policy.hierarchy().rank(role).is_none() {
                bail!("unknown role `{role}`; roles are {}", policy.hierarchy().roles().join(" < "));
            }
            let created = store.create(user, role).await?;
            println!("{}\t{}", created.id, created.key.expose());
            eprintln!("this key is shown once; it is stored only as a hash");
        }
        KeysAction::List => {
            for key in store.list().await? {
                let state = if key.revoked_at.is_some() { "revoked" } else { "active" };
                println!("{}\t{}\t{}\t{}\t{}", key.id, key.user_id, key.role, key.created_at, state);
            }
        }
        KeysAction::Revoke { id } => {
            if !store.revoke(id).await? {
                eprintln!("no active key `{id}`");
                return Ok(ExitCode::from(1));
            }
            println!("revoked {id}");
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn unreachable_keys() -> Result<ExitCode> {
    // `keys` returns before the app starts; kept as an answer, never a panic.
    Ok(ExitCode::from(2))
}

async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {}
        () = term => {}
    }
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or_default()
}
