//! `toolgate serve`: MCP over streamable HTTP (or stdio) for the wired gateway.

use std::io::Write as _;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context, Result, bail};
use toolgate::{App, Config};
use toolgate_core::Caller;

use super::check_role;

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The demo: demo users of each role with fresh API keys, demo data,
    /// and a client configuration to paste (default database: sqlite:toolgate-demo.db).
    #[arg(long)]
    pub(crate) demo: bool,
    /// Where to listen, an IP address and port (default: the configuration's, 127.0.0.1:8377).
    #[arg(long, value_parser = toolgate::config::parse_listen)]
    listen: Option<std::net::SocketAddr>,
    /// Serve MCP on stdin/stdout as `--user`/`--role` instead of HTTP.
    #[arg(long)]
    stdio: bool,
    /// How tools appear: meta (default), direct, or scoped:DOMAIN[,DOMAIN].
    #[arg(long)]
    expose: Option<toolgate_mcp::Exposure>,
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
}

pub(crate) async fn run(
    args: Args,
    config: &Config,
    reread: impl Fn() -> Result<Config> + Send + Sync + 'static,
) -> Result<ExitCode> {
    let app = App::start(config).await?;
    let exposure = args.expose.unwrap_or_else(|| config.server.expose.clone());
    if args.stdio {
        let (Some(user), Some(role)) = (args.user, args.role) else {
            bail!(
                "--stdio needs --user and --role: stdio has no API keys, the identity is whoever starts it"
            );
        };
        check_role(app.gateway.policy().hierarchy(), &role, "")?;
        let caller = app.with_fitness_credential(Caller::new(user, role)).await?;
        let server = toolgate_mcp::McpServer::new(app.gateway.clone(), exposure)
            .with_caller(caller)
            .with_task_limits(app.task_limits)
            .with_federation(app.federation.clone())
            .with_resources(app.resources.clone());
        toolgate_mcp::serve_stdio_with(server).await?;
        return Ok(ExitCode::SUCCESS);
    }
    let keys = toolgate_mcp::KeyStore::open(app.db.clone())
        .await
        .context("opening the key store")?
        .with_cache_ttl(std::time::Duration::from_millis(config.server.key_cache_ms));
    let demo_keys = if args.demo { toolgate::serve::demo_setup(&app, &keys).await? } else { Vec::new() };
    let mut http = config.server.http();
    if args.stateless {
        http.sessions = toolgate_mcp::SessionMode::Stateless;
    }
    http.metrics_token = config.server.metrics_token.clone();
    http.tasks = app.task_limits;
    http.http_rate = config.rate_limits.http();
    if let (Some(audit), Some(days)) = (&app.audit, config.audit.retention_days) {
        toolgate::serve::spawn_audit_retention(audit.clone(), days);
    }
    if let Some(role) = args.allow_anonymous {
        check_role(app.gateway.policy().hierarchy(), &role, "--allow-anonymous: ")?;
        http.anonymous = Some(Caller::new("anonymous", role));
    }
    let listen = args.listen.unwrap_or(config.server.listen);
    let listener =
        tokio::net::TcpListener::bind(&listen).await.with_context(|| format!("listening on {listen}"))?;
    let url = format!("http://{}", listener.local_addr()?);
    if args.demo {
        // The banner is for whoever watches; a closed stdout does not stop the server.
        let _ = write!(std::io::stdout(), "{}", toolgate::serve::demo_banner(&url, &demo_keys));
    }
    let _ = writeln!(
        std::io::stdout(),
        "toolgate serving MCP at {url}/mcp ({exposure} exposure); Ctrl-C stops it"
    );
    tracing::info!(%url, %exposure, instance = %toolgate::wiring::instance_name(config), "serving MCP");
    let _ = std::io::stdout().flush();
    let mut state = toolgate::serve::http_state(&app, keys, exposure, http);
    if config.agent.base_url.is_some() {
        state = state.with_agent(app.agent(config).await?);
        let _ = writeln!(
            std::io::stdout(),
            "chat at {url}/api/chat (and on the web page) with model {}",
            config.agent.model.as_deref().unwrap_or("")
        );
    }
    let reloader = Arc::new(
        toolgate::reload::ConfigReloader::new(
            app.gateway.clone(),
            app.sources.clone(),
            config.clone(),
            reread,
        )
        .with_fleet(app.db.clone(), toolgate::wiring::instance_name(config)),
    );
    state = state
        .with_reloader(reloader.clone())
        .with_probe(Arc::new(toolgate::reload::ReloadProbe(reloader.clone())));
    tokio::spawn(reloader.clone().watch_fleet());
    state = state.with_sources(Arc::new(toolgate::sources::AppSources::new(&app, config)));
    reload_on_hangup(reloader);
    toolgate_mcp::serve_http(listener, state, shutdown_signal()).await?;
    Ok(ExitCode::SUCCESS)
}

/// `SIGHUP`: read the configuration again and apply what can change while serving
/// ([`toolgate::reload`]); a bad one changes nothing and is logged with every problem.
fn reload_on_hangup(reloader: Arc<toolgate::reload::ConfigReloader>) {
    #[cfg(unix)]
    tokio::spawn(async move {
        let Ok(mut hangups) = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup()) else {
            tracing::warn!("SIGHUP cannot be handled here: the configuration is read only at start");
            return;
        };
        while hangups.recv().await.is_some() {
            let _ = reloader.reload_now().await;
        }
    });
    #[cfg(not(unix))]
    let _ = reloader;
}

/// Ctrl-C or SIGTERM.
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
