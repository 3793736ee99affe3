//! The servers under test, each started as its own process pinned to one
//! core: the bare rmcp peer, toolgate, and FastMCP, with or without MCP
//! sessions. Starting one also measures its cold start (spawn to the first
//! answered `tools/call`) and its idle memory.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use serde_json::json;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

use super::proc;

/// The MCP protocol revision every server accepts.
pub(crate) const PROTOCOL: &str = "2025-06-18";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Bare,
    Toolgate,
    FastMcp,
}

/// One server configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Variant {
    pub(crate) kind: Kind,
    pub(crate) sessions: bool,
}

impl Variant {
    pub(crate) fn name(self) -> &'static str {
        match self.kind {
            Kind::Bare => "bare rmcp 3.11",
            Kind::Toolgate => "toolgate",
            Kind::FastMcp => "FastMCP",
        }
    }

    pub(crate) fn mode(self) -> &'static str {
        if self.sessions { "sessions" } else { "stateless" }
    }

    pub(crate) fn slug(self) -> String {
        let kind = match self.kind {
            Kind::Bare => "bare",
            Kind::Toolgate => "toolgate",
            Kind::FastMcp => "fastmcp",
        };
        format!("{kind}-{}", self.mode())
    }

    /// The `tools/call` params: toolgate is called as a model calls it in
    /// meta mode, through `execute_tool`; the others call the tool itself.
    pub(crate) fn call_params(self) -> serde_json::Value {
        let arguments = json!({"city": "Oslo"});
        match self.kind {
            Kind::Toolgate => json!({"name": "execute_tool",
                "arguments": {"tool_name": "query_weather", "parameters": arguments}}),
            _ => json!({"name": "query_weather", "arguments": arguments}),
        }
    }
}

/// Paths of what the servers run.
#[derive(Debug)]
pub(crate) struct Programs {
    pub(crate) toolgate: PathBuf,
    /// This (release) xtask, which serves the bare peer.
    pub(crate) xtask: PathBuf,
    pub(crate) python: PathBuf,
    pub(crate) fastmcp_script: PathBuf,
}

/// A started server.
#[derive(Debug)]
pub(crate) struct Server {
    pub(crate) variant: Variant,
    /// Killed when dropped.
    _child: Child,
    pub(crate) pid: u32,
    pub(crate) url: String,
    pub(crate) bearer: Option<String>,
    pub(crate) session: Option<String>,
    pub(crate) cold_start: Duration,
    /// Every measured start of this server's kind (this one's last).
    pub(crate) cold_starts: Vec<Duration>,
    pub(crate) rss_idle_kib: u64,
    /// Bytes of one answer.
    pub(crate) answer_bytes: usize,
}

impl Server {
    /// Cold start in ms over [`Server::cold_starts`]: (median, min, max).
    pub(crate) fn cold_start_ms(&self) -> (f64, f64, f64) {
        let mut ms: Vec<f64> = self.cold_starts.iter().map(|d| d.as_secs_f64() * 1000.0).collect();
        ms.sort_by(f64::total_cmp);
        let (min, max) = (ms.first().copied().unwrap_or(0.0), ms.last().copied().unwrap_or(0.0));
        (ms.get(ms.len() / 2).copied().unwrap_or(0.0), min, max)
    }
}

/// The body of a `tools/call` with this id.
pub(crate) fn call_body(variant: Variant, id: u64) -> String {
    format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{}}}"#, variant.call_params())
}

pub(crate) fn post(
    client: &reqwest::Client,
    url: &str,
    bearer: Option<&str>,
    session: Option<&str>,
    body: String,
) -> reqwest::RequestBuilder {
    let mut request = client
        .post(url)
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .header("mcp-protocol-version", PROTOCOL)
        .body(body);
    if let Some(key) = bearer {
        request = request.bearer_auth(key);
    }
    if let Some(session) = session {
        request = request.header("mcp-session-id", session);
    }
    request
}

/// A provisioned toolgate database (`toolgate migrate`) with one member
/// key, made before the clock starts: the cold start measured is a restart
/// on a deployment's database, not its first migration or key creation.
pub(crate) fn prepare_toolgate(toolgate: &Path, work: &Path, slug: &str) -> Result<(PathBuf, String)> {
    let db = work.join(format!("{slug}.db"));
    let migrated = std::process::Command::new(toolgate)
        .arg("--db")
        .arg(format!("sqlite:{}", db.display()))
        .arg("migrate")
        .env_remove("TOOLGATE_CONFIG")
        .output()
        .context("running toolgate migrate")?;
    if !migrated.status.success() {
        bail!("toolgate migrate failed: {}", String::from_utf8_lossy(&migrated.stderr));
    }
    let output = std::process::Command::new(toolgate)
        .arg("--db")
        .arg(format!("sqlite:{}", db.display()))
        .args(["keys", "create", "--user", "alice", "--role", "member"])
        .env_remove("TOOLGATE_CONFIG")
        .output()
        .context("running toolgate keys create")?;
    if !output.status.success() {
        bail!("toolgate keys create failed: {}", String::from_utf8_lossy(&output.stderr));
    }
    let line = String::from_utf8_lossy(&output.stdout);
    let key = line.split_whitespace().nth(1).context("keys create printed no key")?.to_owned();
    Ok((db, key))
}

pub(crate) async fn start(programs: &Programs, work: &Path, variant: Variant, cpu: usize) -> Result<Server> {
    let slug = variant.slug();
    let stderr = std::fs::File::create(work.join(format!("{slug}.stderr.log")))?;
    let (mut command, bearer) = match variant.kind {
        Kind::Bare => {
            let mut command = Command::new("taskset");
            command.arg("-c").arg(cpu.to_string()).arg(&programs.xtask).args(["bench", "serve-bare"]);
            if variant.sessions {
                command.arg("--stateful");
            }
            (command, None)
        }
        Kind::Toolgate => {
            let (db, key) = prepare_toolgate(&programs.toolgate, work, &slug)?;
            let mut command = Command::new("taskset");
            command.arg("-c").arg(cpu.to_string()).arg(&programs.toolgate);
            command.arg("--db").arg(format!("sqlite:{}", db.display()));
            command.args(["serve", "--listen", "127.0.0.1:0"]);
            if !variant.sessions {
                command.arg("--stateless");
            }
            // A configured weather provider would turn the cheap read into an HTTP call.
            for var in ["TOOLGATE_CONFIG", "TOOLGATE_DATABASE_URL", "TOOLGATE_WEATHER_URL"] {
                command.env_remove(var);
            }
            command.env("TOOLGATE_LOG", "warn");
            (command, Some(key))
        }
        Kind::FastMcp => {
            let mut command = Command::new("taskset");
            command.arg("-c").arg(cpu.to_string()).arg(&programs.python).arg(&programs.fastmcp_script);
            if variant.sessions {
                command.arg("--stateful");
            }
            command.env("PYTHONUNBUFFERED", "1");
            (command, None)
        }
    };
    command
        .current_dir(work)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::from(stderr))
        .kill_on_drop(true);
    let started = Instant::now();
    let mut child = command.spawn().with_context(|| format!("starting {slug}"))?;
    let pid = child.id().context("the server has no pid")?;
    let stdout = child.stdout.take().context("no stdout")?;
    let url = serving_url(stdout, &slug).await?;
    let client = reqwest::Client::builder().tcp_nodelay(true).build()?;
    let session =
        if variant.sessions { Some(open_session(&client, &url, bearer.as_deref()).await?) } else { None };
    let answer =
        post(&client, &url, bearer.as_deref(), session.as_deref(), call_body(variant, 1)).send().await?;
    let status = answer.status();
    let body = answer.bytes().await?;
    let cold_start = started.elapsed();
    let text = String::from_utf8_lossy(&body);
    if !status.is_success() || !text.contains(r#""isError":false"#) {
        bail!("{slug}: the first call failed: HTTP {status}: {}", text.chars().take(300).collect::<String>());
    }
    let rss_idle_kib = proc::rss_kib(pid)?.0;
    Ok(Server {
        variant,
        _child: child,
        pid,
        url,
        bearer,
        session,
        cold_start,
        cold_starts: vec![cold_start],
        rss_idle_kib,
        answer_bytes: body.len(),
    })
}

/// Read stdout until `... serving MCP at http://HOST:PORT/mcp`; drain the rest.
pub(crate) async fn serving_url(stdout: tokio::process::ChildStdout, what: &str) -> Result<String> {
    let mut lines = BufReader::new(stdout).lines();
    let found = tokio::time::timeout(Duration::from_secs(60), async {
        while let Some(line) = lines.next_line().await? {
            if let Some(rest) = line.split("serving MCP at ").nth(1) {
                return Ok::<_, anyhow::Error>(rest.split_whitespace().next().map(str::to_owned));
            }
        }
        Ok(None)
    })
    .await;
    let url = match found {
        Ok(Ok(Some(url))) => url,
        Ok(Ok(None)) => bail!("{what} exited before saying where it serves (see its stderr log)"),
        Ok(Err(e)) => return Err(e.context(format!("reading {what}'s output"))),
        Err(_) => bail!("{what} did not say where it serves within 60 s"),
    };
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    if !url.starts_with("http://127.0.0.1:") {
        bail!("{what} serves at {url}, not on 127.0.0.1");
    }
    Ok(url)
}

/// `initialize`, then `notifications/initialized`; the session id.
pub(crate) async fn open_session(
    client: &reqwest::Client,
    url: &str,
    bearer: Option<&str>,
) -> Result<String> {
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": PROTOCOL, "capabilities": {},
        "clientInfo": {"name": "toolgate-bench", "version": env!("CARGO_PKG_VERSION")}}});
    let response = post(client, url, bearer, None, init.to_string()).send().await?;
    let status = response.status();
    let session = response
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
        .with_context(|| format!("initialize answered HTTP {status} without mcp-session-id"))?;
    response.bytes().await?;
    let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string();
    let response = post(client, url, bearer, Some(&session), note).send().await?;
    if !response.status().is_success() {
        bail!("notifications/initialized answered HTTP {}", response.status());
    }
    Ok(session)
}
