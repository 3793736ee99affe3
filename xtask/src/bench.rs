//! `cargo xtask bench mcp`: `tools/call` over streamable HTTP against
//! `toolgate serve --demo` and against an equivalent FastMCP server, in
//! alternating rounds at several concurrencies; requests per second, p50 and
//! p99 latency, and each server's resident memory. Writes
//! `docs/bench-mcp.md` (a measured report, not codegen output).
//!
//! What it does, in order:
//! 1. re-runs itself as a release build when started from a debug one (a
//!    debug hyper client would be measured instead of the servers);
//! 2. `cargo build --release -p toolgate` (a no-op when fresh; `--no-build`
//!    skips it) and checks that `target/release/toolgate` exists;
//! 3. installs FastMCP (pinned) with uvicorn's speed-ups (uvloop, httptools)
//!    into `target/bench-venv` unless already there;
//! 4. starts the servers on 127.0.0.1 (ephemeral ports), each with its own
//!    SQLite file under `target/bench-mcp/`: toolgate `--stateless` (meta
//!    exposure: `execute_tool`), FastMCP `stateless_http=True,
//!    json_response=True` (the compared pair), and for profiling toolgate
//!    with sessions, toolgate `--stateless --expose direct` and FastMCP with
//!    sessions;
//! 5. per round and concurrency, runs every server in turn (toolgate,
//!    FastMCP, toolgate, ...): a reqwest client with one kept-alive
//!    connection per worker and TCP_NODELAY, bounded by a request count and
//!    a time limit, checking every answer (HTTP 200, no JSON-RPC error,
//!    `isError` false, `structuredContent.success` true, the city echoed)
//!    before counting it, and reads VmRSS from /proc after each round;
//! 6. prints a markdown table and writes it to `docs/bench-mcp.md`, keeping
//!    the hand-written notes below the marker line of the existing file.
//!
//! Never part of `cargo test`: it starts processes, needs the Python
//! registry and takes minutes.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};
use tokio::process::{Child, Command};

use crate::workspace_root;

/// FastMCP and the uvicorn speed-ups, pinned so that reruns compare alike.
const PY_PACKAGES: [&str; 3] = ["fastmcp==4.2.3", "uvloop==0.23.0", "httptools==0.9.0"];
/// The MCP protocol revision both servers accept.
const PROTOCOL: &str = "2025-06-18";
/// The demo user whose key toolgate calls carry.
const DEMO_USER: &str = "alice";
/// Everything below this line in `docs/bench-mcp.md` is kept on rewrite.
const NOTES_MARKER: &str =
    "<!-- Notes below this line are written by hand and kept when the harness rewrites the file. -->";
const USAGE: &str = "usage: cargo xtask bench mcp [--requests N] [--seconds S] [--rounds R] [--warmup N] \
[--concurrency 1,16] [--no-build] [--no-write]";

/// Run-time options.
#[derive(Debug, Clone)]
struct Options {
    /// Requests per round (a round also stops at `seconds`).
    requests: u64,
    /// Time limit of a round.
    seconds: u64,
    /// Rounds per server and concurrency.
    rounds: u32,
    /// Uncounted requests per server before the first round.
    warmup: u64,
    /// Concurrencies measured.
    concurrency: Vec<usize>,
    /// Run `cargo build --release -p toolgate` first.
    build: bool,
    /// Write `docs/bench-mcp.md`.
    write: bool,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            requests: 5_000,
            seconds: 10,
            rounds: 3,
            warmup: 300,
            concurrency: vec![1, 16],
            build: true,
            write: true,
        }
    }
}

fn parse_options(args: &[&str]) -> Result<Options> {
    let mut options = Options::default();
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        let mut value = |name: &str| -> Result<&str> {
            args.next().copied().with_context(|| format!("{name} needs a value\n{USAGE}"))
        };
        match *arg {
            "--requests" => options.requests = value("--requests")?.parse().context("--requests")?,
            "--seconds" => options.seconds = value("--seconds")?.parse().context("--seconds")?,
            "--rounds" => options.rounds = value("--rounds")?.parse().context("--rounds")?,
            "--warmup" => options.warmup = value("--warmup")?.parse().context("--warmup")?,
            "--concurrency" => {
                options.concurrency = value("--concurrency")?
                    .split(',')
                    .map(|c| c.trim().parse::<usize>())
                    .collect::<Result<_, _>>()
                    .context("--concurrency takes numbers separated by commas")?;
            }
            "--no-build" => options.build = false,
            "--no-write" => options.write = false,
            other => bail!("unknown argument `{other}`\n{USAGE}"),
        }
    }
    if options.requests == 0 || options.seconds == 0 || options.rounds == 0 {
        bail!("--requests, --seconds and --rounds must be above zero");
    }
    if options.concurrency.is_empty() || options.concurrency.contains(&0) {
        bail!("--concurrency must list numbers above zero");
    }
    Ok(options)
}

/// `cargo xtask bench <what> [options]`.
pub(crate) fn run(args: &[&str]) -> Result<()> {
    match args {
        ["mcp", rest @ ..] => {
            let options = parse_options(rest)?;
            if cfg!(debug_assertions) && std::env::var_os("TOOLGATE_BENCH_DEBUG_CLIENT").is_none() {
                return rerun_in_release(args);
            }
            let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
            runtime.block_on(bench_mcp(options))
        }
        _ => bail!("{USAGE}"),
    }
}

/// The load generator must be an optimised build: re-run this command as one.
fn rerun_in_release(args: &[&str]) -> Result<()> {
    eprintln!("bench: re-running as a release build (the load generator must be optimised)");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let status = std::process::Command::new(cargo)
        .current_dir(workspace_root())
        .args(["run", "--release", "--quiet", "--package", "xtask", "--", "bench"])
        .args(args)
        .status()
        .context("starting cargo")?;
    if !status.success() {
        bail!("the release run failed ({status})");
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// Servers

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Toolgate,
    FastMcp,
}

/// One server configuration under test.
#[derive(Debug, Clone, Copy)]
struct Variant {
    kind: Kind,
    /// No MCP sessions (one JSON answer per POST).
    stateless: bool,
    /// toolgate `--expose direct` (the tool itself) instead of `execute_tool`.
    direct: bool,
    /// Part of the compared pair (the others are for profiling).
    primary: bool,
}

/// Alternating order: toolgate, FastMCP, toolgate, FastMCP, toolgate.
const VARIANTS: [Variant; 5] = [
    Variant { kind: Kind::Toolgate, stateless: true, direct: false, primary: true },
    Variant { kind: Kind::FastMcp, stateless: true, direct: false, primary: true },
    Variant { kind: Kind::Toolgate, stateless: false, direct: false, primary: false },
    Variant { kind: Kind::FastMcp, stateless: false, direct: false, primary: false },
    Variant { kind: Kind::Toolgate, stateless: true, direct: true, primary: false },
];

impl Variant {
    fn server(self) -> &'static str {
        match self.kind {
            Kind::Toolgate => "toolgate",
            Kind::FastMcp => "FastMCP",
        }
    }

    fn mode(self) -> String {
        let http = if self.stateless { "stateless" } else { "sessions" };
        match self.kind {
            Kind::Toolgate if self.direct => format!("{http}, direct (`query_weather`)"),
            Kind::Toolgate => format!("{http}, meta (`execute_tool`)"),
            Kind::FastMcp => format!("{http}, JSON (`query_weather`)"),
        }
    }

    fn slug(self) -> String {
        let kind = match self.kind {
            Kind::Toolgate => "toolgate",
            Kind::FastMcp => "fastmcp",
        };
        let http = if self.stateless { "stateless" } else { "sessions" };
        let expose = if self.direct { "-direct" } else { "" };
        format!("{kind}-{http}{expose}")
    }

    /// The `tools/call` params.
    fn call_params(self) -> Value {
        let arguments = json!({"city": "Oslo"});
        match self.kind {
            Kind::Toolgate if !self.direct => json!({"name": "execute_tool",
                "arguments": {"tool_name": "query_weather", "parameters": arguments}}),
            _ => json!({"name": "query_weather", "arguments": arguments}),
        }
    }
}

/// Where and how to call one started server.
#[derive(Debug)]
struct Endpoint {
    url: String,
    bearer: Option<String>,
    session: Option<String>,
    /// `tools/call` params, serialised once.
    params: String,
}

/// Unique JSON-RPC ids across the whole run (sessions route answers by id).
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

impl Endpoint {
    fn request(&self, client: &reqwest::Client, body: String) -> reqwest::RequestBuilder {
        let mut request = client
            .post(&self.url)
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .header("mcp-protocol-version", PROTOCOL)
            .body(body);
        if let Some(key) = &self.bearer {
            request = request.bearer_auth(key);
        }
        if let Some(session) = &self.session {
            request = request.header("mcp-session-id", session);
        }
        request
    }

    fn call_body(&self) -> String {
        let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
        format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{}}}"#, self.params)
    }
}

/// A started server process.
#[derive(Debug)]
struct Server {
    variant: Variant,
    /// Killed when dropped.
    _child: Child,
    pid: u32,
    endpoint: Arc<Endpoint>,
    rss_idle_kib: u64,
}

/// Read stdout lines until `found` returns a value (60 s at most); the rest
/// of stdout is drained in the background so the server never blocks on it.
async fn read_until<T, R>(stdout: R, what: &str, mut found: impl FnMut(&str) -> Option<T>) -> Result<Vec<T>>
where
    R: AsyncRead + Unpin + Send + 'static,
{
    let mut lines = BufReader::new(stdout).lines();
    let mut seen = Vec::new();
    let result = tokio::time::timeout(Duration::from_secs(60), async {
        while let Some(line) = lines.next_line().await? {
            if let Some(value) = found(&line) {
                seen.push(value);
                if line.contains("serving MCP at") {
                    return Ok::<_, anyhow::Error>(true);
                }
            }
        }
        Ok(false)
    })
    .await;
    match result {
        Ok(Ok(true)) => {}
        Ok(Ok(false)) => bail!("{what} exited before saying where it serves (see its stderr log)"),
        Ok(Err(e)) => return Err(e.context(format!("reading {what}'s output"))),
        Err(_) => bail!("{what} did not say where it serves within 60 s"),
    }
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    Ok(seen)
}

/// The URL in a `... serving MCP at http://HOST:PORT/mcp ...` line.
fn serving_url(line: &str) -> Option<String> {
    let rest = line.split("serving MCP at ").nth(1)?;
    Some(rest.split_whitespace().next()?.to_owned())
}

async fn start(root: &Path, work: &Path, variant: Variant, client: &reqwest::Client) -> Result<Server> {
    let slug = variant.slug();
    let stderr = std::fs::File::create(work.join(format!("{slug}.stderr.log")))?;
    let mut command = match variant.kind {
        Kind::Toolgate => {
            let db = work.join(format!("{slug}.db"));
            let mut command = Command::new(root.join("target/release/toolgate"));
            command.arg("--db").arg(format!("sqlite:{}", db.display()));
            command.args(["serve", "--demo", "--listen", "127.0.0.1:0"]);
            if variant.stateless {
                command.arg("--stateless");
            }
            if variant.direct {
                command.args(["--expose", "direct"]);
            }
            // A configured weather provider would turn the cheap read into an HTTP call.
            for var in ["TOOLGATE_CONFIG", "TOOLGATE_DATABASE_URL", "TOOLGATE_WEATHER_URL"] {
                command.env_remove(var);
            }
            command.env("TOOLGATE_LOG", "warn");
            command
        }
        Kind::FastMcp => {
            let mut command = Command::new(venv_python(root));
            command.arg(root.join("bench/fastmcp_server.py"));
            if !variant.stateless {
                command.arg("--stateful");
            }
            command.env("PYTHONUNBUFFERED", "1");
            command
        }
    };
    command
        .current_dir(work)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::from(stderr))
        .kill_on_drop(true);
    let mut child = command.spawn().with_context(|| format!("starting {slug}"))?;
    let pid = child.id().context("the server has no pid")?;
    let stdout = child.stdout.take().context("no stdout")?;

    #[derive(Debug)]
    enum Seen {
        Url(String),
        Key(String),
    }
    let seen = read_until(stdout, &slug, |line| {
        if let Some(url) = serving_url(line) {
            return Some(Seen::Url(url));
        }
        let words: Vec<&str> = line.split_whitespace().collect();
        match words.as_slice() {
            [user, _role, key] if *user == DEMO_USER && key.starts_with("tg_") => {
                Some(Seen::Key((*key).into()))
            }
            _ => None,
        }
    })
    .await?;
    let url = seen.iter().find_map(|s| if let Seen::Url(u) = s { Some(u.clone()) } else { None });
    let bearer = seen.iter().find_map(|s| if let Seen::Key(k) = s { Some(k.clone()) } else { None });
    let url = url.context("no URL")?;
    if !url.starts_with("http://127.0.0.1:") {
        bail!("{slug} serves at {url}, not on 127.0.0.1");
    }
    if variant.kind == Kind::Toolgate && bearer.is_none() {
        bail!("{slug} printed no demo key for {DEMO_USER}");
    }
    let params = variant.call_params().to_string();
    let mut endpoint = Endpoint { url, bearer, session: None, params };
    if !variant.stateless {
        endpoint.session =
            Some(open_session(client, &endpoint).await.with_context(|| format!("{slug}: session"))?);
    }
    let rss_idle_kib = rss_kib(pid)?.0;
    Ok(Server { variant, _child: child, pid, endpoint: Arc::new(endpoint), rss_idle_kib })
}

/// `initialize`, then `notifications/initialized`; the session id.
async fn open_session(client: &reqwest::Client, endpoint: &Endpoint) -> Result<String> {
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": PROTOCOL, "capabilities": {},
        "clientInfo": {"name": "toolgate-bench", "version": env!("CARGO_PKG_VERSION")}}});
    let response = endpoint.request(client, init.to_string()).send().await?;
    let status = response.status();
    let session = response
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
        .with_context(|| format!("initialize answered HTTP {status} without mcp-session-id"))?;
    response.bytes().await?;
    let endpoint = Endpoint { session: Some(session.clone()), ..clone_endpoint(endpoint) };
    let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let response = endpoint.request(client, note.to_string()).send().await?;
    if !response.status().is_success() {
        bail!("notifications/initialized answered HTTP {}", response.status());
    }
    response.bytes().await?;
    Ok(session)
}

fn clone_endpoint(e: &Endpoint) -> Endpoint {
    Endpoint {
        url: e.url.clone(),
        bearer: e.bearer.clone(),
        session: e.session.clone(),
        params: e.params.clone(),
    }
}

/// VmRSS and VmHWM of a process, in KiB.
fn rss_kib(pid: u32) -> Result<(u64, u64)> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))
        .with_context(|| format!("reading /proc/{pid}/status (has the server exited?)"))?;
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|n| n.parse::<u64>().ok())
            .unwrap_or(0)
    };
    Ok((field("VmRSS:"), field("VmHWM:")))
}

// ---------------------------------------------------------------------------
// Load

/// The envelope's own `metadata.duration_ms` of a successful answer, or why
/// the answer does not count as a success.
fn check_answer(content_type: &str, body: &[u8]) -> Result<f64, String> {
    let Ok(text) = std::str::from_utf8(body) else { return Err("the body is not UTF-8".into()) };
    let message: Value = if content_type.starts_with("text/event-stream") {
        let found = text
            .lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .filter_map(|d| serde_json::from_str::<Value>(d.trim()).ok())
            .find(|m| m.get("result").is_some() || m.get("error").is_some());
        match found {
            Some(m) => m,
            None => return Err(format!("no JSON-RPC answer in the event stream: {text:.300}")),
        }
    } else {
        match serde_json::from_str(text) {
            Ok(m) => m,
            Err(e) => return Err(format!("not JSON ({e}): {text:.300}")),
        }
    };
    if let Some(error) = message.get("error") {
        return Err(format!("JSON-RPC error: {error}"));
    }
    let result = &message["result"];
    if result["isError"] != json!(false) {
        return Err(format!("isError is not false: {:.300}", result.to_string()));
    }
    let envelope = &result["structuredContent"];
    if envelope["success"] != json!(true) || envelope["result"]["city"] != json!("Oslo") {
        return Err(format!("not a successful envelope for Oslo: {:.300}", envelope.to_string()));
    }
    Ok(envelope["metadata"]["duration_ms"].as_f64().unwrap_or(f64::NAN))
}

/// One call: its duration up to the last byte of the answer and the
/// envelope's own `duration_ms`, or why it failed.
async fn call_once(client: &reqwest::Client, endpoint: &Endpoint) -> Result<(Duration, f64), String> {
    let body = endpoint.call_body();
    let started = Instant::now();
    let response = endpoint.request(client, body).send().await.map_err(|e| format!("request: {e}"))?;
    let status = response.status();
    let content_type =
        response.headers().get("content-type").and_then(|v| v.to_str().ok()).unwrap_or_default().to_owned();
    let bytes = response.bytes().await.map_err(|e| format!("body: {e}"))?;
    let elapsed = started.elapsed();
    if status != reqwest::StatusCode::OK {
        return Err(format!("HTTP {status}: {:.300}", String::from_utf8_lossy(&bytes)));
    }
    check_answer(&content_type, &bytes).map(|inner| (elapsed, inner))
}

/// The result of one round.
#[derive(Debug, Default)]
struct Round {
    ok: u64,
    failed: u64,
    first_failure: Option<String>,
    elapsed: Duration,
    /// Per-request durations in nanoseconds (successes only).
    samples: Vec<u64>,
    /// The envelopes' own `duration_ms` (successes only).
    inner_ms: Vec<f64>,
}

fn client(concurrency: usize) -> Result<reqwest::Client> {
    Ok(reqwest::Client::builder()
        .no_proxy()
        .tcp_nodelay(true)
        .pool_max_idle_per_host(concurrency)
        .timeout(Duration::from_secs(30))
        .build()?)
}

/// `count` requests (or until `limit`) at `concurrency`, each worker with its
/// own kept-alive connection from the pool.
async fn load(
    client: &reqwest::Client,
    endpoint: &Arc<Endpoint>,
    concurrency: usize,
    count: u64,
    limit: Duration,
) -> Round {
    let issued = Arc::new(AtomicU64::new(0));
    let started = Instant::now();
    let deadline = started + limit;
    let mut workers = Vec::with_capacity(concurrency);
    for _ in 0..concurrency {
        let (client, endpoint, issued) = (client.clone(), endpoint.clone(), issued.clone());
        workers.push(tokio::spawn(async move {
            let mut round = Round::default();
            while issued.fetch_add(1, Ordering::Relaxed) < count && Instant::now() < deadline {
                match call_once(&client, &endpoint).await {
                    Ok((d, inner)) => {
                        round.ok += 1;
                        round.samples.push(u64::try_from(d.as_nanos()).unwrap_or(u64::MAX));
                        round.inner_ms.push(inner);
                    }
                    Err(why) => {
                        round.failed += 1;
                        round.first_failure.get_or_insert(why);
                    }
                }
            }
            round
        }));
    }
    let mut total = Round::default();
    for worker in workers {
        match worker.await {
            Ok(r) => {
                total.ok += r.ok;
                total.failed += r.failed;
                total.samples.extend(r.samples);
                total.inner_ms.extend(r.inner_ms);
                if total.first_failure.is_none() {
                    total.first_failure = r.first_failure;
                }
            }
            Err(e) => {
                total.failed += 1;
                total.first_failure.get_or_insert(format!("worker: {e}"));
            }
        }
    }
    total.elapsed = started.elapsed();
    total
}

// ---------------------------------------------------------------------------
// Figures

/// Everything measured for one server at one concurrency.
#[derive(Debug, Default)]
struct Cell {
    rps: Vec<f64>,
    ok: u64,
    failed: u64,
    first_failure: Option<String>,
    samples: Vec<u64>,
    inner_ms: Vec<f64>,
    rss_after_kib: Vec<u64>,
}

impl Cell {
    fn median_rps(&self) -> f64 {
        let mut v = self.rps.clone();
        v.sort_by(f64::total_cmp);
        match v.len() {
            0 => 0.0,
            n if n % 2 == 1 => v[n / 2],
            n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
        }
    }

    /// The `q` quantile (0..=1) of the per-request durations, in ms
    /// (nearest rank over every sample: exact, no bucketing).
    fn quantile_ms(&self, q: f64) -> f64 {
        let mut v = self.samples.clone();
        v.sort_unstable();
        if v.is_empty() {
            return f64::NAN;
        }
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss, clippy::cast_precision_loss)]
        let rank = ((q * v.len() as f64).ceil() as usize).clamp(1, v.len());
        #[allow(clippy::cast_precision_loss)]
        let ms = v[rank - 1] as f64 / 1e6;
        ms
    }

    /// The median of the envelopes' own `duration_ms`.
    fn inner_median_ms(&self) -> f64 {
        let mut v: Vec<f64> = self.inner_ms.iter().copied().filter(|d| d.is_finite()).collect();
        v.sort_by(f64::total_cmp);
        v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
    }
}

fn mib(kib: u64) -> String {
    #[allow(clippy::cast_precision_loss)]
    let m = kib as f64 / 1024.0;
    format!("{m:.1}")
}

fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".into())
}

fn one_minute_load() -> f64 {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().next().and_then(|n| n.parse().ok()))
        .unwrap_or(f64::NAN)
}

/// The first line a command prints (stdout, else stderr), or "unknown".
fn output_of(program: &Path, args: &[&str]) -> String {
    std::process::Command::new(program)
        .args(args)
        .output()
        .ok()
        .map(|o| {
            let text = if o.stdout.is_empty() { o.stderr } else { o.stdout };
            String::from_utf8_lossy(&text).lines().next().unwrap_or_default().trim().to_owned()
        })
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "unknown".into())
}

fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines().find_map(|l| {
                l.strip_prefix("model name").map(|r| r.trim_start_matches([' ', '\t', ':']).to_owned())
            })
        })
        .unwrap_or_else(|| "unknown CPU".into())
}

// ---------------------------------------------------------------------------
// Set-up

fn venv_python(root: &Path) -> PathBuf {
    root.join("target/bench-venv/bin/python")
}

/// FastMCP (pinned) in `target/bench-venv`, installed from the Python registry when missing.
fn ensure_venv(root: &Path) -> Result<()> {
    let python = venv_python(root);
    let pins: Vec<String> = PY_PACKAGES
        .iter()
        .filter_map(|p| p.split_once("=="))
        .map(|(name, version)| format!("importlib.metadata.version({name:?}) == {version:?}"))
        .collect();
    let check = format!("import importlib.metadata, sys; sys.exit(0 if {} else 1)", pins.join(" and "));
    let ready = python.exists()
        && std::process::Command::new(&python).args(["-c", &check]).status().is_ok_and(|s| s.success());
    if ready {
        return Ok(());
    }
    let venv = root.join("target/bench-venv");
    if !python.exists() {
        let system = std::env::var("PYTHON").unwrap_or_else(|_| "python3".into());
        eprintln!("bench: creating {} with {system}", venv.display());
        let status = std::process::Command::new(&system)
            .args(["-m", "venv"])
            .arg(&venv)
            .status()
            .with_context(|| format!("running {system} -m venv (install Python 3.10+ or set PYTHON)"))?;
        if !status.success() {
            bail!("{system} -m venv failed");
        }
    }
    eprintln!("bench: pip install {}", PY_PACKAGES.join(" "));
    let status = std::process::Command::new(&python)
        .args(["-m", "pip", "install", "--quiet", "--disable-pip-version-check"])
        .args(PY_PACKAGES)
        .status()
        .context("running pip")?;
    if !status.success() {
        bail!("pip install {} failed", PY_PACKAGES.join(" "));
    }
    Ok(())
}

fn ensure_toolgate(root: &Path, build: bool) -> Result<PathBuf> {
    let binary = root.join("target/release/toolgate");
    if build {
        eprintln!("bench: cargo build --release -p toolgate");
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let status = std::process::Command::new(cargo)
            .current_dir(root)
            .args(["build", "--release", "--package", "toolgate"])
            .status()
            .context("starting cargo")?;
        if !status.success() {
            bail!("cargo build --release -p toolgate failed");
        }
    }
    if !binary.exists() {
        bail!("{} is missing: run `cargo build --release -p toolgate` first", binary.display());
    }
    Ok(binary)
}

// ---------------------------------------------------------------------------
// The run

async fn bench_mcp(options: Options) -> Result<()> {
    let root = workspace_root();
    let load_before = loadavg();
    let toolgate = ensure_toolgate(&root, options.build)?;
    ensure_venv(&root)?;
    let work = root.join("target/bench-mcp");
    if work.exists() {
        std::fs::remove_dir_all(&work).with_context(|| format!("clearing {}", work.display()))?;
    }
    std::fs::create_dir_all(&work)?;

    let setup_client = client(1)?;
    let mut servers = Vec::new();
    for variant in VARIANTS {
        let server = start(&root, &work, variant, &setup_client).await?;
        eprintln!(
            "bench: {} at {} (pid {}, {} MiB idle)",
            variant.slug(),
            server.endpoint.url,
            server.pid,
            mib(server.rss_idle_kib)
        );
        servers.push(server);
    }
    for server in &servers {
        let warm = load(&setup_client, &server.endpoint, 1, options.warmup, Duration::from_secs(60)).await;
        if let Some(why) = warm.first_failure {
            bail!("{}: the warm-up call failed: {why}", server.variant.slug());
        }
    }

    let limit = Duration::from_secs(options.seconds);
    let mut cells: BTreeMap<(usize, usize), Cell> = BTreeMap::new();
    let mut max_load = one_minute_load();
    for round in 1..=options.rounds {
        for &concurrency in &options.concurrency {
            for (index, server) in servers.iter().enumerate() {
                let client = client(concurrency)?;
                // Open the connections first (uncounted), then measure.
                let _ = load(&client, &server.endpoint, concurrency, 2 * concurrency as u64, limit).await;
                let result = load(&client, &server.endpoint, concurrency, options.requests, limit).await;
                let (rss, _) = rss_kib(server.pid)?;
                #[allow(clippy::cast_precision_loss)]
                let rps = result.ok as f64 / result.elapsed.as_secs_f64();
                eprintln!(
                    "bench: round {round} c={concurrency:<3} {:<26} {:>6} ok {:>3} failed {rps:>9.0} req/s  RSS {} MiB",
                    server.variant.slug(),
                    result.ok,
                    result.failed,
                    mib(rss)
                );
                let cell = cells.entry((index, concurrency)).or_default();
                cell.rps.push(rps);
                cell.ok += result.ok;
                cell.failed += result.failed;
                if cell.first_failure.is_none() {
                    cell.first_failure = result.first_failure;
                }
                cell.samples.extend(result.samples);
                cell.inner_ms.extend(result.inner_ms);
                cell.rss_after_kib.push(rss);
                max_load = max_load.max(one_minute_load());
            }
        }
    }
    let load_after = loadavg();
    let peaks: Vec<u64> = servers.iter().map(|s| rss_kib(s.pid).map(|r| r.1).unwrap_or(0)).collect();

    let versions = Versions {
        toolgate: output_of(&toolgate, &["--version"]),
        commit: output_of(
            Path::new("git"),
            &["-C", &root.display().to_string(), "describe", "--always", "--dirty"],
        ),
        rustc: output_of(Path::new("rustc"), &["--version"]),
        python: output_of(&venv_python(&root), &["--version"]),
        python_packages: output_of(
            &venv_python(&root),
            &[
                "-c",
                "import importlib.metadata as m; print(', '.join(f'{p} {m.version(p)}' for p in \
                 ['fastmcp', 'mcp', 'uvicorn', 'starlette', 'uvloop', 'httptools', 'pydantic']))",
            ],
        ),
        kernel: std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default().trim().to_owned(),
    };
    let report = Report {
        options: &options,
        servers: &servers,
        cells: &cells,
        peaks: &peaks,
        versions,
        load_before,
        load_after,
        max_load,
    };
    let table = report.markdown();
    println!("{table}");
    if options.write {
        let path = root.join("docs/bench-mcp.md");
        let notes = std::fs::read_to_string(&path)
            .ok()
            .and_then(|old| old.split_once(NOTES_MARKER).map(|(_, notes)| notes.to_owned()))
            .unwrap_or_else(|| "\n".into());
        std::fs::write(&path, format!("{table}\n{NOTES_MARKER}{notes}"))
            .with_context(|| format!("writing {}", path.display()))?;
        eprintln!("bench: wrote {}", path.display());
    }
    let failed: u64 = cells.values().map(|c| c.failed).sum();
    if failed > 0 {
        for ((index, concurrency), cell) in &cells {
            if let Some(why) = &cell.first_failure {
                eprintln!("bench: {} c={concurrency}: {why}", servers[*index].variant.slug());
            }
        }
        bail!("{failed} calls failed (not counted); see above");
    }
    Ok(())
}

#[derive(Debug)]
struct Versions {
    toolgate: String,
    commit: String,
    rustc: String,
    python: String,
    python_packages: String,
    kernel: String,
}

#[derive(Debug)]
struct Report<'a> {
    options: &'a Options,
    servers: &'a [Server],
    cells: &'a BTreeMap<(usize, usize), Cell>,
    peaks: &'a [u64],
    versions: Versions,
    load_before: String,
    load_after: String,
    max_load: f64,
}

impl Report<'_> {
    fn cell(&self, primary_kind: Kind, concurrency: usize) -> Option<&Cell> {
        let index = self.servers.iter().position(|s| s.variant.primary && s.variant.kind == primary_kind)?;
        self.cells.get(&(index, concurrency))
    }

    fn markdown(&self) -> String {
        let o = self.options;
        let cores = std::thread::available_parallelism().map(usize::from).unwrap_or(0);
        let mut out = String::new();
        let _ = writeln!(out, "# MCP benchmark: toolgate against FastMCP\n");
        let _ = writeln!(
            out,
            "A measured report (not generated by codegen). Measured {} by `cargo xtask bench mcp` \
             (`xtask/src/bench.rs`); rerun it with:\n\n```sh\ncargo build --release -p toolgate\n\
             cargo xtask bench mcp   # options: --requests N --seconds S --rounds R --concurrency 1,16\n```\n\n\
             The harness rewrites everything above the notes marker and keeps the notes.\n",
            chrono::Utc::now().format("%Y-%m-%d %H:%M UTC")
        );
        let _ = writeln!(out, "## Set-up\n");
        let _ = writeln!(
            out,
            "- Machine: {cores} cores ({}), shared with other jobs; Linux {}. Load average (1, 5, 15 min) \
             {} before, {} after, 1-min peak {:.2} during the rounds. Client and servers run on the same cores.",
            cpu_model(),
            self.versions.kernel,
            self.load_before,
            self.load_after,
            self.max_load
        );
        let _ = writeln!(
            out,
            "- toolgate: `{}`, release build of `{}` (`-dirty`: with uncommitted changes in the tree), {}.",
            self.versions.toolgate, self.versions.commit, self.versions.rustc
        );
        let _ = writeln!(out, "- FastMCP: {}; {}.", self.versions.python, self.versions.python_packages);
        let _ = writeln!(
            out,
            "- Call: `tools/call` over streamable HTTP on 127.0.0.1, HTTP/1.1 keep-alive, TCP_NODELAY, one \
             connection per client worker. toolgate: `toolgate serve --demo` (SQLite), meta exposure \
             `execute_tool` with `{{\"tool_name\": \"query_weather\", \"parameters\": {{\"city\": \"Oslo\"}}}}` \
             and the demo member's bearer key, so every layer is on: Host/Origin check, API-key check, body \
             limit, rmcp, gateway pipeline (policy, validation, timeout, retry, envelope, trace event). FastMCP: \
             `bench/fastmcp_server.py`, the same tool returning the same envelope shape, no auth."
        );
        let _ = writeln!(
            out,
            "- Rounds: {} per server and concurrency, alternating servers (toolgate, FastMCP, toolgate, ...); a \
             round is {} requests or {} s, whichever comes first, after {} uncounted warm-up calls per server. \
             Only answers with HTTP 200, `isError: false` and an envelope with `success: true` count. req/s is \
             the median of the rounds (range in brackets); p50/p99 are exact percentiles over every counted \
             request of all rounds (time to the last byte of the answer); in-tool p50 is the median of the \
             envelope's own `metadata.duration_ms` (toolgate: the gateway pipeline from policy check to \
             envelope; FastMCP: the tool function's body only); RSS is VmRSS of the server process \
             idle after start, and the largest after a round.\n",
            o.rounds, o.requests, o.seconds, o.warmup
        );
        let _ = writeln!(out, "## Results\n");
        let _ = writeln!(
            out,
            "| server | HTTP mode, exposure | conc. | counted (failed) | req/s median [min–max] | p50 ms | p99 ms | \
             in-tool p50 ms | RSS idle → max MiB |"
        );
        let _ = writeln!(out, "|---|---|--:|--:|--:|--:|--:|--:|--:|");
        for (index, server) in self.servers.iter().enumerate() {
            for &concurrency in &o.concurrency {
                let Some(cell) = self.cells.get(&(index, concurrency)) else { continue };
                let min = cell.rps.iter().copied().fold(f64::INFINITY, f64::min);
                let max = cell.rps.iter().copied().fold(0.0, f64::max);
                let bold = if server.variant.primary { "**" } else { "" };
                let _ = writeln!(
                    out,
                    "| {bold}{}{bold} | {} | {concurrency} | {} ({}) | {bold}{:.0}{bold} [{min:.0}–{max:.0}] | {:.3} | \
                     {:.3} | {:.3} | {} → {} |",
                    server.variant.server(),
                    server.variant.mode(),
                    cell.ok,
                    cell.failed,
                    cell.median_rps(),
                    cell.quantile_ms(0.50),
                    cell.quantile_ms(0.99),
                    cell.inner_median_ms(),
                    mib(server.rss_idle_kib),
                    mib(cell.rss_after_kib.iter().copied().max().unwrap_or(0)),
                );
            }
        }
        let _ = writeln!(out);
        let peaks: Vec<String> = self
            .servers
            .iter()
            .zip(self.peaks)
            .map(|(s, p)| format!("{} {} MiB", s.variant.slug(), mib(*p)))
            .collect();
        let _ = writeln!(out, "Peak RSS (VmHWM) at the end: {}.\n", peaks.join(", "));
        let _ = writeln!(out, "## Goals\n");
        for &concurrency in &o.concurrency {
            if let (Some(t), Some(f)) =
                (self.cell(Kind::Toolgate, concurrency), self.cell(Kind::FastMcp, concurrency))
            {
                let ratio = t.median_rps() / f.median_rps();
                let verdict = if ratio >= 10.0 { "met" } else { "missed" };
                let _ = writeln!(
                    out,
                    "- ≥ 10× FastMCP's req/s with every layer on, concurrency {concurrency}: toolgate {:.0} / \
                     FastMCP {:.0} = **{ratio:.1}×**: {verdict}.",
                    t.median_rps(),
                    f.median_rps()
                );
            }
        }
        if let Some(t) = self.cell(Kind::Toolgate, 1) {
            let p99 = t.quantile_ms(0.99);
            let verdict = if p99 < 2.0 { "met" } else { "missed" };
            let _ = writeln!(
                out,
                "- p99 < 2 ms at concurrency 1 for a read tool: toolgate **{p99:.3} ms**: {verdict}."
            );
        }
        out
    }
}
