//! The life of one upstream connection: connect, read the tools into the
//! gateway, follow `list_changed`, and when the connection dies (a crashed
//! child, a server gone) mark it down and reconnect with backoff. A
//! restarted child is a new process spawned from the same command.

use std::collections::HashMap;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use reqwest::header::{HeaderName, HeaderValue};
use rmcp::service::{ClientInitializeError, QuitReason, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::{StreamableHttpClientTransportConfig, StreamableHttpError};
use rmcp::{RoleClient, ServiceExt};
use tokio::sync::{mpsc, oneshot};
use toolgate_core::Tool;
use toolgate_gateway::Gateway;

use crate::direct::Direct;
use crate::handler::{Handler, Refresh};
use crate::identity::{self, HeaderClient};
use crate::link::{Link, State};
use crate::task_support::ChildTransport;
use crate::tool::UpstreamTool;
use crate::{Transport, UpstreamConfig, spec};

type Service = RunningService<RoleClient, Handler>;

/// Run one upstream until the task is aborted. `ready` fires after the first
/// connection attempt, whatever its outcome.
pub(crate) async fn supervise(
    config: UpstreamConfig,
    gateway: Gateway,
    link: Arc<Link>,
    ready: oneshot::Sender<()>,
) {
    let mut ready = Some(ready);
    let mut failures: u32 = 0;
    loop {
        let (refresh_tx, mut refresh_rx) = mpsc::unbounded_channel();
        let handler = Handler { link: link.clone(), refresh: refresh_tx };
        let attempt = tokio::time::Instant::now();
        let connected = tokio::time::timeout(config.connect_timeout, connect(&config, handler)).await;
        match connected {
            Ok(Ok(service)) => {
                failures = 0;
                let peer = service.peer().clone();
                link.set(State::Up(peer.clone()));
                gateway.set_unreachable(&config.name, None);
                tracing::info!(upstream = %config.name, "upstream connected");
                refresh(&config, &gateway, &link, &service).await;
                if let Some(ready) = ready.take() {
                    let _ = ready.send(());
                }
                let reason = follow(&config, &gateway, &link, service, &mut refresh_rx).await;
                tracing::warn!(upstream = %config.name, %reason, "upstream connection ended");
                link.set(State::Down(reason));
            }
            Ok(Err(reason)) => {
                tracing::warn!(upstream = %config.name, %reason, "upstream connection failed");
                not_reached(&config, &gateway, &reason);
                link.set(State::Down(reason));
            }
            Err(_) => {
                let reason = format!("no answer within {} ms", config.connect_timeout.as_millis());
                tracing::warn!(upstream = %config.name, %reason, "upstream connection failed");
                not_reached(&config, &gateway, &reason);
                link.set(State::Down(reason));
            }
        }
        if let Some(ready) = ready.take() {
            let _ = ready.send(());
        }
        let pause = backoff(&config, failures);
        failures = failures.saturating_add(1);
        // A call that finds the upstream down cuts the pause short (a restarted
        // upstream is reached at once, not seconds later), but attempts stay at
        // least EAGER_GAP apart however many calls come.
        tokio::select! {
            () = tokio::time::sleep(pause) => {}
            () = link.wanted.notified() => tokio::time::sleep_until(attempt + EAGER_GAP).await,
        }
    }
}

/// A failed attempt: while none of the upstream's tools is registered (it was never reached,
/// or never listed any), calls to its namespace answer UNAVAILABLE with `reason` and the
/// catalog names it. Once reached, its listed tools answer for it instead.
fn not_reached(config: &UpstreamConfig, gateway: &Gateway, reason: &str) {
    let source = source(&config.name);
    if !gateway.all_specs().iter().any(|s| gateway.source_of(&s.name).as_deref() == Some(source.as_str())) {
        gateway.set_unreachable(&config.name, Some(reason));
    }
}

/// Follow a live connection until it ends; the reason it ended.
async fn follow(
    config: &UpstreamConfig,
    gateway: &Gateway,
    link: &Arc<Link>,
    service: Service,
    refresh_rx: &mut mpsc::UnboundedReceiver<Refresh>,
) -> String {
    let token = service.cancellation_token();
    let peer = service.peer().clone();
    let mut waiting = std::pin::pin!(service.waiting());
    loop {
        tokio::select! {
            quit = &mut waiting => return ended(&config.transport, quit),
            // A call saw the transport fail (a refused POST, a closed pipe):
            // start over, which also fails the other calls in flight at once
            // instead of leaving them to their deadlines.
            () = link.reconnect.notified() => {
                token.cancel();
                return "the connection was lost during a call".into();
            }
            Some(first) = refresh_rx.recv() => {
                let (mut tools, mut surface) = (first == Refresh::Tools, first == Refresh::Surface);
                while let Ok(more) = refresh_rx.try_recv() {
                    tools |= more == Refresh::Tools;
                    surface |= more == Refresh::Surface;
                }
                if tools {
                    refresh_peer(config, gateway, link, &peer).await;
                }
                if surface {
                    link.refresh_surface(&peer).await;
                }
            }
        }
    }
}

/// Why a connection ended, in words for the model (the supervisor's own shutdown aside).
fn ended(transport: &Transport, quit: Result<QuitReason, tokio::task::JoinError>) -> String {
    match (quit, transport) {
        (Ok(QuitReason::Closed), Transport::Stdio { .. }) => {
            "the upstream closed the connection (its process ended or closed its output)".into()
        }
        (Ok(QuitReason::Closed), Transport::Http { .. }) => "the upstream closed the connection".into(),
        (Ok(QuitReason::Cancelled), _) => "the connection was shut down".into(),
        (Ok(_) | Err(_), _) => "the connection failed inside toolgate".into(),
    }
}

async fn refresh(config: &UpstreamConfig, gateway: &Gateway, link: &Arc<Link>, service: &Service) {
    refresh_peer(config, gateway, link, service.peer()).await;
    link.refresh_surface(service.peer()).await;
}

/// Read the upstream's tools and put them in the gateway under our names;
/// a tool whose name or schema we cannot use is left out with a logged reason.
async fn refresh_peer(
    config: &UpstreamConfig,
    gateway: &Gateway,
    link: &Arc<Link>,
    peer: &rmcp::Peer<RoleClient>,
) {
    // Bounded: an answer rmcp cannot read (JSON nested past serde_json's 128 levels, e.g. one
    // deep schema) is lost without an error, and the listing would wait forever, holding up
    // the start and every later refresh.
    let listed = match tokio::time::timeout(config.connect_timeout, peer.list_all_tools()).await {
        Ok(Ok(tools)) => tools,
        Ok(Err(error)) => {
            tracing::warn!(upstream = %config.name, %error, "could not list the upstream's tools; keeping the old list");
            return;
        }
        Err(_) => {
            tracing::warn!(
                upstream = %config.name, timeout_ms = config.connect_timeout.as_millis() as u64,
                "the upstream's tool list did not arrive in time (or could not be read: JSON nested \
                 deeper than 128 levels is dropped unread); keeping the old list"
            );
            return;
        }
    };
    if listed.len() > spec::MAX_TOOLS {
        tracing::warn!(
            upstream = %config.name, offered = listed.len(),
            "the upstream offers more than {} tools; the rest are left out", spec::MAX_TOOLS
        );
    }
    let mut tools: Vec<Arc<dyn Tool>> = Vec::with_capacity(listed.len().min(spec::MAX_TOOLS));
    for tool in listed.iter().take(spec::MAX_TOOLS) {
        match spec::spec_for(config, tool, link.task_tools.supports(&tool.name)) {
            Ok(spec) => tools.push(Arc::new(UpstreamTool {
                spec,
                remote: tool.name.to_string(),
                link: link.clone(),
                auth: config.auth.clone(),
            })),
            Err(reason) => tracing::warn!(upstream = %config.name, %reason, "upstream tool left out"),
        }
    }
    let count = tools.len();
    let mut collisions = Vec::new();
    for problem in gateway.replace_source_tools(&source(&config.name), tools) {
        if let toolgate_gateway::BuildError::Duplicate(name) = &problem {
            let other = gateway.source_of(name).unwrap_or_else(|| "toolgate's own tools".into());
            collisions.push(format!(
                "upstream `{}`: its tool `{name}` has the name of a tool of {} ; with `prefix = false` its names must be unique: rename one, or set `prefix = true`",
                config.name,
                other.strip_prefix("upstream:").map_or(other.clone(), |u| format!("the upstream `{u}`"))
            ));
        }
        tracing::warn!(upstream = %config.name, %problem, "upstream tool left out");
    }
    *link.collisions.lock().unwrap_or_else(|e| e.into_inner()) = collisions;
    tracing::info!(upstream = %config.name, offered = listed.len(), usable = count, "upstream tools registered");
}

/// The gateway's source name for an upstream's tools.
pub(crate) fn source(name: &str) -> String {
    format!("upstream:{name}")
}

/// The shortest time between two connection attempts that calls asked for.
const EAGER_GAP: Duration = Duration::from_millis(100);

fn backoff(config: &UpstreamConfig, failures: u32) -> Duration {
    let factor = 2u32.saturating_pow(failures.min(16));
    config.backoff_min.saturating_mul(factor).min(config.backoff_max)
}

async fn connect(config: &UpstreamConfig, handler: Handler) -> Result<Service, String> {
    // A token source beside a configured `Authorization`, or on a child process, never connects.
    crate::config::check_auth(config)?;
    match &config.transport {
        Transport::Stdio { command, env, cwd } => {
            handler.link.set_direct(None);
            let Some((program, args)) = command.split_first() else {
                return Err("the command is empty".into());
            };
            let mut cmd = tokio::process::Command::new(program);
            cmd.args(args);
            for (key, value) in env {
                cmd.env(key, value.expose());
            }
            if let Some(cwd) = cwd {
                cmd.current_dir(cwd);
            }
            // Not rmcp's TokioChildProcess: the output is tapped for what rmcp drops of the
            // tool listing (`execution.taskSupport`).
            let transport = ChildTransport::spawn(cmd, handler.link.task_tools.clone())
                .map_err(|e| format!("could not start `{program}`: {e}"))?;
            handler.serve(transport).await.map_err(|e| handshake_problem(&config.name, &e))
        }
        Transport::Http { url, headers } => {
            let mut custom = HashMap::new();
            for (name, value) in headers {
                let name =
                    HeaderName::from_str(name).map_err(|_| format!("`{name}` is not a header name"))?;
                let mut value = HeaderValue::from_str(value.expose())
                    .map_err(|_| format!("the value of header `{name}` is not valid"))?;
                value.set_sensitive(true);
                custom.insert(name, value);
            }
            let transport_config =
                StreamableHttpClientTransportConfig::with_uri(url.as_str()).custom_headers(custom.clone());
            let client = http_client(config)?;
            let failed = |e: ClientInitializeError| {
                certificate_problem(&e, &config.name).unwrap_or_else(|| handshake_problem(&config.name, &e))
            };
            identity::header_names(&config.identity, headers)?;
            // The caller's headers and token are added per call, and toolgate's own token
            // to every request, by the client under the transport (which also reads the
            // tool listings for what rmcp drops). The client follows no redirect
            // (`http_client`), so neither reaches another address than the configured one.
            let service = config.auth.clone().filter(|auth| !auth.is_callers());
            let tasks = handler.link.task_tools.clone();
            // Tool calls go out by toolgate's own POST once the handshake allows it, on the
            // same connection pool.
            let direct = Arc::new(Direct::new(client.clone(), url, &custom, handler.refresh.clone())?);
            handler.link.set_direct(Some(direct.clone()));
            let transport = StreamableHttpClientTransport::with_client(
                HeaderClient { inner: client, service, tasks, direct },
                transport_config,
            );
            handler.serve(transport).await.map_err(failed)
        }
    }
}

/// Why the MCP handshake failed, in plain words (the reason calls to the upstream's tools
/// answer with): no rmcp type name or Debug text; the whole error goes to the log.
fn handshake_problem(name: &str, error: &ClientInitializeError) -> String {
    tracing::warn!(upstream = %name, %error, "the MCP handshake failed");
    match error {
        ClientInitializeError::ConnectionClosed(_) => {
            "the MCP handshake failed: the server closed the connection before answering".into()
        }
        ClientInitializeError::TransportError { error, .. } => {
            format!("the MCP handshake failed: {}", connection_problem(error.error.as_ref()))
        }
        ClientInitializeError::JsonRpcError(data) => {
            let message: String = data.message.chars().take(300).collect();
            format!("the MCP handshake failed: the server refused it ({message})")
        }
        ClientInitializeError::NoCompatibleProtocolVersion { .. } => {
            "the MCP handshake failed: the server speaks no protocol version toolgate knows".into()
        }
        _ => "the MCP handshake failed: the server's answer was not a valid MCP handshake".into(),
    }
}

/// What went wrong on the way to the upstream, in words for the model: what happened and
/// what it suggests, never the URL, an address or a type name of rmcp or reqwest (their
/// Display says `Client error: error sending request for url (http://…)`).
fn connection_problem(error: &(dyn std::error::Error + 'static)) -> String {
    let http = match error.downcast_ref::<StreamableHttpError<reqwest::Error>>() {
        Some(StreamableHttpError::Client(client)) => client,
        Some(StreamableHttpError::UnexpectedServerResponse(text)) => {
            let status = text.strip_prefix("HTTP ").and_then(|t| t.split_whitespace().next()).unwrap_or("");
            return match status.parse::<u16>() {
                Ok(status) => format!("it answered HTTP {status} instead of an MCP answer"),
                Err(_) => "its answer was not an MCP answer".into(),
            };
        }
        Some(StreamableHttpError::AuthRequired(_)) => return "it asks for authorization (HTTP 401)".into(),
        Some(StreamableHttpError::InsufficientScope(_)) => {
            return "it refused the configured credential (HTTP 403)".into();
        }
        Some(_) => return "the exchange with it broke off".into(),
        None if error.downcast_ref::<std::io::Error>().is_some() => {
            return "its input or output failed".into();
        }
        None => return "the connection failed".into(),
    };
    let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(http);
    while let Some(error) = cause {
        if let Some(io) = error.downcast_ref::<std::io::Error>() {
            use std::io::ErrorKind::*;
            match io.kind() {
                ConnectionRefused => {
                    return "nothing accepts connections at its address (connection refused): it is not running or not listening there".into();
                }
                TimedOut => return "the connection timed out".into(),
                ConnectionReset | ConnectionAborted | BrokenPipe | UnexpectedEof => {
                    return "it closed the connection".into();
                }
                _ => {}
            }
        }
        cause = error.source();
    }
    if http.is_timeout() {
        "it did not answer in time".into()
    } else if http.is_connect() {
        "the connection could not be opened (its host may be unknown or unreachable)".into()
    } else {
        "the HTTP exchange with it failed".into()
    }
}

/// The HTTP client of a streamable-HTTP upstream: system roots plus `[tls] ca_file`, and no
/// redirects, so the configured headers (tokens) never follow a redirect to another host.
/// Connections are kept and reused, as the HTTP domains' are: one connection per call cost
/// the upstream a handshake per call and left a TIME_WAIT socket on our side for each
/// (40 calls, 40 connections; now none after the handshake). rmcp's own client keeps none,
/// because a server that writes an answer in parts without TCP_NODELAY then waits for our
/// delayed ACK (about 40 ms a call); servers on asyncio, Node, Go and toolgate itself set it.
fn http_client(config: &UpstreamConfig) -> Result<reqwest::Client, String> {
    let mut builder = reqwest::Client::builder()
        .tcp_nodelay(true)
        .pool_idle_timeout(std::time::Duration::from_secs(60))
        .redirect(reqwest::redirect::Policy::none());
    if let Some(pem) = &config.ca_bundle_pem {
        let certs = toolgate_http::parse_ca_bundle(pem).map_err(|e| e.to_string())?;
        builder = builder.tls_certs_merge(certs);
    }
    builder.build().map_err(|e| format!("the HTTP client could not be built: {e}"))
}

/// The certificate sentence when the handshake failed because the upstream's certificate was
/// refused: rmcp wraps the reqwest error without a source chain, so unwrap it by hand.
fn certificate_problem(error: &ClientInitializeError, name: &str) -> Option<String> {
    let ClientInitializeError::TransportError { error, .. } = error else { return None };
    let inner: &(dyn std::error::Error + 'static) = error.error.as_ref();
    let inner = match inner.downcast_ref::<StreamableHttpError<reqwest::Error>>() {
        Some(StreamableHttpError::Client(client)) => client as &(dyn std::error::Error + 'static),
        _ => inner,
    };
    toolgate_http::certificate_problem(inner, &format!("the MCP server `{name}`"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_up_to_the_cap() {
        let mut config = UpstreamConfig::stdio("w", vec!["x".into()]);
        config.backoff_min = Duration::from_millis(100);
        config.backoff_max = Duration::from_millis(1000);
        let pauses: Vec<u128> = (0..6).map(|n| backoff(&config, n).as_millis()).collect();
        assert_eq!(pauses, [100, 200, 400, 800, 1000, 1000]);
        assert_eq!(backoff(&config, u32::MAX).as_millis(), 1000);
    }
}
