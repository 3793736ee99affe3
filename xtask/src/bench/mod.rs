//! `cargo xtask bench mcp`: one `tools/call` per request over streamable
//! HTTP against a bare rmcp server, toolgate (every layer on) and FastMCP,
//! with and without MCP sessions; the ratios to the bare server in one run.
//! Writes `docs/bench-mcp.md` (a measured report, not codegen output).
//!
//! How it measures:
//! - each server runs pinned to CPU 0 (`taskset`), the load generator `wrk`
//!   to CPU 1, so neither steals the other's core;
//! - every request has its own JSON-RPC id (a Lua script), and every answer
//!   is checked (HTTP 200 and the server's success marker in the body);
//! - rounds alternate servers; req/s, p50 and p99 are medians over rounds;
//!   server CPU per call is utime + stime from /proc over the round divided
//!   by the calls; RSS idle (after the first call) and peak (VmHWM); cold
//!   start is spawn to the first answered `tools/call`.
//!
//! Never part of `cargo test`: it starts processes, may install FastMCP from
//! the Python registry, and takes minutes.

mod bare;
mod import;
pub(crate) mod link_order;
mod proc;
mod report;
mod servers;
mod setup;
mod upstream;
mod wrk;

use anyhow::{Context, Result, bail};

use crate::workspace_root;
use servers::{Kind, Variant};

const USAGE: &str = "usage: cargo xtask bench mcp|upstream|import; bench mcp [--seconds S] [--rounds R] [--concurrency 1,16] \
[--only bare,toolgate,fastmcp] [--no-build] [--no-write]";

/// Run-time options.
#[derive(Debug, Clone)]
struct Options {
    seconds: u64,
    rounds: u32,
    concurrency: Vec<usize>,
    kinds: Vec<Kind>,
    build: bool,
    write: bool,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            seconds: 8,
            rounds: 3,
            concurrency: vec![1, 16],
            kinds: vec![Kind::Bare, Kind::Toolgate, Kind::FastMcp],
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
            "--seconds" => options.seconds = value("--seconds")?.parse().context("--seconds")?,
            "--rounds" => options.rounds = value("--rounds")?.parse().context("--rounds")?,
            "--concurrency" => {
                options.concurrency = value("--concurrency")?
                    .split(',')
                    .map(|c| c.trim().parse::<usize>())
                    .collect::<Result<_, _>>()
                    .context("--concurrency takes numbers separated by commas")?;
            }
            "--only" => {
                options.kinds = value("--only")?
                    .split(',')
                    .map(|k| match k.trim() {
                        "bare" => Ok(Kind::Bare),
                        "toolgate" => Ok(Kind::Toolgate),
                        "fastmcp" => Ok(Kind::FastMcp),
                        other => bail!("--only: unknown server `{other}` (bare, toolgate, fastmcp)"),
                    })
                    .collect::<Result<_>>()?;
            }
            "--no-build" => options.build = false,
            "--no-write" => options.write = false,
            other => bail!("unknown argument `{other}`\n{USAGE}"),
        }
    }
    if options.seconds == 0 || options.rounds == 0 {
        bail!("--seconds and --rounds must be above zero");
    }
    if options.concurrency.is_empty() || options.concurrency.contains(&0) {
        bail!("--concurrency must list numbers above zero");
    }
    if !options.kinds.contains(&Kind::Bare) {
        bail!("--only must include bare: every ratio is to the bare server");
    }
    Ok(options)
}

/// `cargo xtask bench <what> [options]`.
pub(crate) fn run(args: &[&str]) -> Result<()> {
    match args {
        ["serve-bare"] => bare::serve(false),
        ["serve-bare", "--stateful"] => bare::serve(true),
        ["upstream", rest @ ..] => upstream::run(rest),
        ["import", rest @ ..] => import::run(rest),
        ["mcp", rest @ ..] => {
            let options = parse_options(rest)?;
            if cfg!(debug_assertions) {
                return setup::rerun_in_release(args);
            }
            let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
            runtime.block_on(bench_mcp(options))
        }
        _ => bail!("{USAGE}"),
    }
}

/// Starts per server for the cold-start figure.
const COLD_STARTS: usize = 5;

/// One measured cell: a server at one concurrency, over all rounds.
#[derive(Debug, Default)]
struct Cell {
    runs: Vec<wrk::Run>,
    cpu_us_per_call: Vec<f64>,
}

async fn bench_mcp(options: Options) -> Result<()> {
    let root = workspace_root();
    let load_before = proc::loadavg();
    let programs = setup::programs(&root, options.build, options.kinds.contains(&Kind::FastMcp))?;
    let work = root.join("target/bench-mcp");
    if work.exists() {
        std::fs::remove_dir_all(&work).with_context(|| format!("clearing {}", work.display()))?;
    }
    std::fs::create_dir_all(&work)?;
    let script = wrk::write_script(&work)?;

    let mut variants = Vec::new();
    for sessions in [false, true] {
        for &kind in &options.kinds {
            variants.push(Variant { kind, sessions });
        }
    }
    let mut servers = Vec::new();
    for &variant in &variants {
        // One start is one disk flush away from twice its time: each server
        // is started COLD_STARTS times and the report gives the median; the
        // last one stays up for the load.
        let mut cold_starts = Vec::with_capacity(COLD_STARTS);
        let mut server = servers::start(&programs, &work, variant, 0).await?;
        cold_starts.push(server.cold_start);
        for _ in 1..COLD_STARTS {
            drop(server);
            server = servers::start(&programs, &work, variant, 0).await?;
            cold_starts.push(server.cold_start);
        }
        server.cold_starts = cold_starts;
        let ms = server.cold_start_ms();
        eprintln!(
            "bench: {} at {} (pid {}, cold start median {:.1} ms [{:.1}–{:.1}], {} KiB idle, {} B per answer)",
            variant.slug(),
            server.url,
            server.pid,
            ms.0,
            ms.1,
            ms.2,
            server.rss_idle_kib,
            server.answer_bytes
        );
        servers.push(server);
    }

    let mut cells: Vec<Vec<Cell>> =
        servers.iter().map(|_| options.concurrency.iter().map(|_| Cell::default()).collect()).collect();
    for round in 0..options.rounds {
        for (ci, &connections) in options.concurrency.iter().enumerate() {
            // Rotate the starting server each round so none always runs first.
            for k in 0..servers.len() {
                let si = (k + round as usize) % servers.len();
                let server = &servers[si];
                let body = servers::call_body(server.variant, 0);
                let (prefix, suffix) = body.split_once(r#""id":0"#).context("call body without id")?;
                let prefix = format!(r#"{prefix}"id":"#);
                let expect = if server.variant.kind == Kind::Toolgate {
                    r#""success":true"#
                } else {
                    r#""isError":false"#
                };
                let cpu_before = proc::cpu_us(server.pid)?;
                let run = wrk::run(
                    &script,
                    &wrk::Load {
                        url: &server.url,
                        prefix: &prefix,
                        suffix,
                        expect,
                        bearer: server.bearer.as_deref(),
                        session: server.session.as_deref(),
                        connections,
                        seconds: options.seconds,
                        cpu: 1,
                    },
                )?;
                let cpu = proc::cpu_us(server.pid)?.saturating_sub(cpu_before);
                let ok = run.requests.saturating_sub(run.failed).max(1);
                eprintln!(
                    "bench: round {} c={connections} {}: {:.0} req/s, p50 {:.3} ms, p99 {:.3} ms, {} failed{}",
                    round + 1,
                    server.variant.slug(),
                    run.rate(),
                    run.p50_ms,
                    run.p99_ms,
                    run.failed,
                    if run.failed > 0 { format!(" (first: {})", run.first_failure) } else { String::new() }
                );
                cells[si][ci].cpu_us_per_call.push(cpu as f64 / ok as f64);
                cells[si][ci].runs.push(run);
            }
        }
    }
    let load_after = proc::loadavg();
    let report = report::Report {
        options: &options,
        servers: &servers,
        cells: &cells,
        load_before,
        load_after,
        versions: setup::versions(&root, &programs),
    };
    let text = report.markdown()?;
    println!("{text}");
    if options.write {
        report::write(&root, &text)?;
    }
    Ok(())
}
