//! `cargo xtask bench upstream`: toolgate in front of an MCP server written
//! with the official Python SDK (`bench/sdk_upstream.py`, streamable HTTP),
//! against calling that server directly.
//!
//! The upstream and toolgate share CPU 0 (`taskset`), `wrk` runs on CPU 1.
//! Three loads per round, in turn: `tools/call query_weather` on the
//! upstream itself (direct), `execute_tool bench__query_weather` through
//! toolgate (proxied), and `execute_tool query_weather` on toolgate's own
//! tool (local, the reference of toolgate's CPU per call). CPU per call is
//! utime + stime from /proc over the round divided by the answered calls,
//! for toolgate and the upstream each.
//!
//! Then the upstream is killed and restarted on the same port three times:
//! the time from the new process listening to the first good proxied call,
//! and the message a call got while it was down (it must not name the URL
//! or rmcp/reqwest internals).
//!
//! Last, live reload: three times, a second `[[upstreams]]` entry (the same
//! server under a new name) is written to `toolgate.toml` and toolgate is
//! sent `SIGHUP`; the time from the signal to the first good call of the new
//! upstream's tool. Writes its section of `docs/bench-mcp.md`.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use serde_json::Value;
use tokio::process::{Child, Command};

use super::{proc, servers, setup, wrk};
use crate::workspace_root;

const USAGE: &str = "usage: cargo xtask bench upstream [--seconds S] [--rounds R] [--concurrency 1,16] [--no-build] [--no-write]";
const BEGIN: &str = "<!-- bench upstream: this section is written by `cargo xtask bench upstream` -->";
const END: &str = "<!-- bench upstream: end -->";

#[derive(Debug, Clone)]
struct Options {
    seconds: u64,
    rounds: u32,
    concurrency: Vec<usize>,
    build: bool,
    write: bool,
}

fn parse(args: &[&str]) -> Result<Options> {
    let mut options = Options { seconds: 6, rounds: 3, concurrency: vec![1, 16], build: true, write: true };
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        let mut value =
            |name: &str| args.next().copied().with_context(|| format!("{name} needs a value\n{USAGE}"));
        match *arg {
            "--seconds" => options.seconds = value("--seconds")?.parse().context("--seconds")?,
            "--rounds" => options.rounds = value("--rounds")?.parse().context("--rounds")?,
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
    if options.seconds == 0 || options.rounds == 0 || options.concurrency.contains(&0) {
        bail!("--seconds, --rounds and every concurrency must be above zero");
    }
    Ok(options)
}

pub(super) fn run(args: &[&str]) -> Result<()> {
    let options = parse(args)?;
    if cfg!(debug_assertions) {
        let mut again = vec!["upstream"];
        again.extend_from_slice(args);
        return setup::rerun_in_release(&again);
    }
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    runtime.block_on(bench(options))
}

/// The Python with the `mcp` SDK: `TOOLGATE_PYTHON`, else `python3`.
fn python() -> Result<PathBuf> {
    let python = std::env::var_os("TOOLGATE_PYTHON").map_or_else(|| PathBuf::from("python3"), PathBuf::from);
    let ok = std::process::Command::new(&python)
        .args(["-c", "import mcp.server.mcpserver, uvicorn"])
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        bail!("{} cannot import the MCP Python SDK (`mcp` 2.x); set TOOLGATE_PYTHON", python.display());
    }
    Ok(python)
}

/// A process pinned to CPU 0 that printed `... serving MCP at URL`.
struct Served {
    child: Child,
    pid: u32,
    url: String,
}

async fn spawn(mut command: Command, what: &str, log: &Path) -> Result<Served> {
    command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::from(std::fs::File::create(log)?))
        .kill_on_drop(true);
    let mut child = command.spawn().with_context(|| format!("starting {what}"))?;
    let pid = child.id().context("no pid")?;
    let url = servers::serving_url(child.stdout.take().context("no stdout")?, what).await?;
    Ok(Served { child, pid, url })
}

async fn start_upstream(python: &Path, script: &Path, port: u16, work: &Path) -> Result<Served> {
    let mut command = Command::new("taskset");
    command.args(["-c", "0"]).arg(python).arg(script).args(["--port", &port.to_string()]);
    command.env("PYTHONUNBUFFERED", "1");
    spawn(command, "the SDK upstream", &work.join("upstream.stderr.log")).await
}

/// One `tools/call` answer: HTTP status and body.
async fn call(
    client: &reqwest::Client,
    url: &str,
    bearer: Option<&str>,
    params: &Value,
) -> Result<(u16, String)> {
    let body = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{params}}}"#);
    let answer = servers::post(client, url, bearer, None, body).send().await?;
    let status = answer.status().as_u16();
    Ok((status, answer.text().await?))
}

fn execute(tool: &str) -> Value {
    serde_json::json!({"name": "execute_tool", "arguments": {"tool_name": tool, "parameters": {"city": "Oslo"}}})
}

/// The three loads: name, target (0 upstream, 1 toolgate), params, expected text.
fn loads() -> [(&'static str, usize, Value, &'static str); 3] {
    [
        (
            "direct",
            0,
            serde_json::json!({"name": "query_weather", "arguments": {"city": "Oslo"}}),
            r#""isError":false"#,
        ),
        ("proxied", 1, execute("bench__query_weather"), r#""success":true"#),
        ("local", 1, execute("query_weather"), r#""success":true"#),
    ]
}

/// What one load measured over the rounds.
#[derive(Debug, Default)]
struct Cell {
    rates: Vec<f64>,
    p99_ms: Vec<f64>,
    toolgate_us: Vec<f64>,
    upstream_us: Vec<f64>,
    failed: u64,
}

fn median(mut values: Vec<f64>) -> f64 {
    if values.is_empty() {
        return f64::NAN;
    }
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn range(values: &[f64]) -> (f64, f64) {
    let min = values.iter().copied().fold(f64::INFINITY, f64::min);
    let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    (min, max)
}

async fn bench(options: Options) -> Result<()> {
    let root = workspace_root();
    let toolgate = setup::release_toolgate(&root, options.build)?;
    let python = python()?;
    let script = root.join("bench/sdk_upstream.py");
    let work = root.join("target/bench-upstream");
    if work.exists() {
        std::fs::remove_dir_all(&work)?;
    }
    std::fs::create_dir_all(&work)?;
    let load_before = proc::loadavg();

    let mut upstream = start_upstream(&python, &script, 0, &work).await?;
    let port: u16 = upstream
        .url
        .rsplit_once(':')
        .and_then(|(_, rest)| rest.split('/').next())
        .and_then(|p| p.parse().ok())
        .context("the upstream's port")?;
    let (db, key) = servers::prepare_toolgate(&toolgate, &work, "toolgate")?;
    let config = work.join("toolgate.toml");
    std::fs::write(
        &config,
        format!(
            "[[upstreams]]\nname = \"bench\"\nurl = \"{}\"\nread_only_tools = [\"query_weather\"]\n",
            upstream.url
        ),
    )?;
    let mut command = Command::new("taskset");
    command.args(["-c", "0"]).arg(&toolgate).arg("--db").arg(format!("sqlite:{}", db.display()));
    command.args(["serve", "--stateless", "--listen", "127.0.0.1:0"]);
    for var in ["TOOLGATE_DATABASE_URL", "TOOLGATE_WEATHER_URL"] {
        command.env_remove(var);
    }
    command.env("TOOLGATE_CONFIG", &config).env("TOOLGATE_LOG", "warn");
    let gate = spawn(command, "toolgate", &work.join("toolgate.stderr.log")).await?;
    let client = reqwest::Client::builder().tcp_nodelay(true).timeout(Duration::from_secs(10)).build()?;
    let proxied = execute("bench__query_weather");
    let ready = Instant::now();
    loop {
        let (status, body) = call(&client, &gate.url, Some(&key), &proxied).await?;
        if status == 200 && body.contains(r#""success":true"#) {
            break;
        }
        if ready.elapsed() > Duration::from_secs(30) {
            bail!(
                "the proxied call never succeeded: HTTP {status}: {}",
                body.chars().take(400).collect::<String>()
            );
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    eprintln!(
        "bench: upstream {} (pid {}), toolgate {} (pid {})",
        upstream.url, upstream.pid, gate.url, gate.pid
    );

    let script_path = wrk::write_script(&work)?;
    let mut cells: Vec<Vec<Cell>> =
        options.concurrency.iter().map(|_| loads().iter().map(|_| Cell::default()).collect()).collect();
    for round in 0..options.rounds {
        for (ci, &connections) in options.concurrency.iter().enumerate() {
            for (li, (name, target, params, expect)) in loads().into_iter().enumerate() {
                let (url, bearer) =
                    if target == 0 { (&upstream.url, None) } else { (&gate.url, Some(key.as_str())) };
                let body = format!(r#"{{"jsonrpc":"2.0","id":0,"method":"tools/call","params":{params}}}"#);
                let (prefix, suffix) = body.split_once(r#""id":0"#).context("no id")?;
                let prefix = format!(r#"{prefix}"id":"#);
                let (gate_before, up_before) = (proc::cpu_us(gate.pid)?, proc::cpu_us(upstream.pid)?);
                let run = wrk::run(
                    &script_path,
                    &wrk::Load {
                        url,
                        prefix: &prefix,
                        suffix,
                        expect,
                        bearer,
                        session: None,
                        connections,
                        seconds: options.seconds,
                        cpu: 1,
                    },
                )?;
                let gate_cpu = proc::cpu_us(gate.pid)?.saturating_sub(gate_before);
                let up_cpu = proc::cpu_us(upstream.pid)?.saturating_sub(up_before);
                let ok = run.requests.saturating_sub(run.failed).max(1) as f64;
                eprintln!(
                    "bench: round {} c={connections} {name}: {:.0} req/s, p99 {:.3} ms, toolgate {:.0} µs/call, upstream {:.0} µs/call, {} failed{}",
                    round + 1,
                    run.rate(),
                    run.p99_ms,
                    gate_cpu as f64 / ok,
                    up_cpu as f64 / ok,
                    run.failed,
                    if run.failed > 0 { format!(" (first: {})", run.first_failure) } else { String::new() }
                );
                let cell = &mut cells[ci][li];
                cell.rates.push(run.rate());
                cell.p99_ms.push(run.p99_ms);
                cell.toolgate_us.push(gate_cpu as f64 / ok);
                cell.upstream_us.push(up_cpu as f64 / ok);
                cell.failed += run.failed;
            }
        }
    }

    // Restarts: kill the upstream, call once while it is down (the message), start it again
    // on the same port and time the first good proxied call from the moment it listens.
    let mut restarts = Vec::new();
    let mut down_message = String::new();
    for _ in 0..3 {
        upstream.child.start_kill()?;
        upstream.child.wait().await?;
        tokio::time::sleep(Duration::from_millis(300)).await;
        let (_, body) = call(&client, &gate.url, Some(&key), &proxied).await?;
        if down_message.is_empty() {
            let v: Value = serde_json::from_str(&body).unwrap_or_default();
            down_message =
                v["result"]["structuredContent"]["error"]["message"].as_str().unwrap_or(&body).to_owned();
        }
        upstream = start_upstream(&python, &script, port, &work).await?;
        let listening = Instant::now();
        loop {
            let (status, body) = call(&client, &gate.url, Some(&key), &proxied).await?;
            if status == 200 && body.contains(r#""success":true"#) {
                break;
            }
            if listening.elapsed() > Duration::from_secs(60) {
                bail!("no good call within 60 s of the restart");
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let ms = listening.elapsed().as_secs_f64() * 1000.0;
        eprintln!("bench: first good call {ms:.0} ms after the upstream listened again");
        restarts.push(ms);
    }
    let reloads = added_by_reload(&client, &gate, &key, &config, &upstream.url).await?;
    let port_text = format!(":{port}");
    let leaks: Vec<String> =
        [port_text.as_str(), "127.0.0.1", "http://", "reqwest", "rmcp", "StreamableHttp", "Client error"]
            .into_iter()
            .filter(|needle| down_message.contains(needle))
            .map(str::to_owned)
            .collect();
    let text = report(&options, &cells, &restarts, &reloads, &down_message, &leaks, &load_before);
    println!("{text}");
    if options.write {
        write(&root, &text)?;
    }
    Ok(())
}

fn report(
    options: &Options,
    cells: &[Vec<Cell>],
    restarts: &[f64],
    reloads: &[f64],
    down_message: &str,
    leaks: &[String],
    load_before: &str,
) -> String {
    let commit = std::process::Command::new("git")
        .args(["rev-parse", "--short", "HEAD"])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_default();
    let mut out = format!(
        "{BEGIN}\n\n## Upstreams: toolgate in front of a Python SDK server\n\n\
         Measured {} by `cargo xtask bench upstream` (`xtask/src/bench/upstream.rs`) at `{commit}`: \
         `bench/sdk_upstream.py` (the MCP Python SDK's MCPServer, streamable HTTP, stateless, JSON answers) \
         and `toolgate serve --stateless` with it as `[[upstreams]] bench` share CPU 0; wrk (one thread) \
         on CPU 1; {} rounds of {} s per load. Load average before: {load_before}, after: {}.\n\n\
         | load | conc. | req/s median [min–max] | × direct | p99 ms | toolgate CPU µs/call | upstream CPU µs/call | failed |\n\
         |---|--:|--:|--:|--:|--:|--:|--:|\n",
        chrono_now(),
        options.rounds,
        options.seconds,
        proc::loadavg(),
    );
    let names = [
        "direct (the upstream itself)",
        "proxied (`bench__query_weather`)",
        "local (toolgate's own `query_weather`)",
    ];
    let mut goals = String::new();
    for (ci, &conc) in options.concurrency.iter().enumerate() {
        let direct = median(cells[ci][0].rates.clone());
        for (li, cell) in cells[ci].iter().enumerate() {
            let rate = median(cell.rates.clone());
            let (min, max) = range(&cell.rates);
            let toolgate =
                if li == 0 { "–".to_owned() } else { format!("{:.0}", median(cell.toolgate_us.clone())) };
            let upstream =
                if li == 2 { "–".to_owned() } else { format!("{:.0}", median(cell.upstream_us.clone())) };
            out.push_str(&format!(
                "| {} | {conc} | {rate:.0} [{min:.0}–{max:.0}] | {:.2} | {:.3} | {toolgate} | {upstream} | {} |\n",
                names[li],
                rate / direct,
                median(cell.p99_ms.clone()),
                cell.failed
            ));
        }
        let ratio = median(cells[ci][1].rates.clone()) / direct;
        let cpu = median(cells[ci][1].toolgate_us.clone()) / median(cells[ci][2].toolgate_us.clone());
        goals.push_str(&format!(
            "- c={conc}: proxied {ratio:.2}× direct (goal ≥ 0.9×: {}); toolgate's CPU per proxied call {cpu:.2}× a local call's (goal ≤ 2×: {})\n",
            if ratio >= 0.9 { "met" } else { "not met" },
            if cpu <= 2.0 { "met" } else { "not met" },
        ));
    }
    let restart_list: Vec<String> = restarts.iter().map(|ms| format!("{ms:.0}")).collect();
    let reload_list: Vec<String> = reloads.iter().map(|ms| format!("{ms:.0}")).collect();
    let slowest = reloads.iter().copied().fold(0.0, f64::max);
    out.push_str(&format!(
        "\n{goals}- Restart: the first good proxied call came {} ms after the restarted upstream listened again \
         (three restarts; goal about 1 s).\n- Live reload: an upstream added to `toolgate.toml` answered its first \
         call {} ms after `SIGHUP` (three reloads; goal ≤ 1,000 ms: {}).\n- While it was down a call answered: \"{}\" — {}.\n\n{END}\n",
        restart_list.join(", "),
        reload_list.join(", "),
        if !reloads.is_empty() && slowest <= 1000.0 { "met" } else { "not met" },
        down_message.replace('\n', " "),
        if leaks.is_empty() {
            "no URL, port or rmcp/reqwest name in it".to_owned()
        } else {
            format!("it names {}", leaks.join(", "))
        }
    ));
    out
}

/// Add an upstream by editing the file and sending `SIGHUP`, three times (each a new name);
/// milliseconds from the signal to the first good call of the new upstream's tool.
async fn added_by_reload(
    client: &reqwest::Client,
    gate: &Served,
    key: &str,
    config: &Path,
    upstream_url: &str,
) -> Result<Vec<f64>> {
    let base = std::fs::read_to_string(config)?;
    let mut times = Vec::new();
    for n in 1..=3 {
        let name = format!("added{n}");
        std::fs::write(
            config,
            format!(
                "{base}\n[[upstreams]]\nname = \"{name}\"\nurl = \"{upstream_url}\"\nread_only_tools = [\"query_weather\"]\n"
            ),
        )?;
        let params = execute(&format!("{name}__query_weather"));
        let signalled = Instant::now();
        let sent = std::process::Command::new("kill").args(["-HUP", &gate.pid.to_string()]).status()?;
        if !sent.success() {
            bail!("kill -HUP {} failed", gate.pid);
        }
        loop {
            let (status, body) = call(client, &gate.url, Some(key), &params).await?;
            if status == 200 && body.contains(r#""success":true"#) {
                break;
            }
            if signalled.elapsed() > Duration::from_secs(30) {
                bail!(
                    "`{name}` was not callable 30 s after SIGHUP: HTTP {status}: {}",
                    body.chars().take(400).collect::<String>()
                );
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        let ms = signalled.elapsed().as_secs_f64() * 1000.0;
        eprintln!("bench: upstream `{name}` added by reload, first good call {ms:.0} ms after SIGHUP");
        times.push(ms);
        std::fs::write(config, &base)?;
    }
    Ok(times)
}

fn chrono_now() -> String {
    std::process::Command::new("date")
        .args(["-u", "+%Y-%m-%d %H:%M UTC"])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_default()
}

/// Replace this harness's section of docs/bench-mcp.md (or add it at the end).
fn write(root: &Path, section: &str) -> Result<()> {
    let path = root.join("docs/bench-mcp.md");
    let old = std::fs::read_to_string(&path).unwrap_or_default();
    let new = match (old.find(BEGIN), old.find(END)) {
        (Some(start), Some(end)) if end > start => {
            format!("{}{}{}", &old[..start], section.trim_end(), &old[end + END.len()..])
        }
        _ => format!("{}\n{}", old.trim_end_matches('\n').to_owned() + "\n", section),
    };
    std::fs::write(&path, new).with_context(|| format!("writing {}", path.display()))?;
    eprintln!("bench: wrote the upstream section of {}", path.display());
    Ok(())
}
