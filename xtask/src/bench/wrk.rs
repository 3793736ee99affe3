//! The load generator: `wrk` with a Lua script that gives every request its
//! own JSON-RPC id (sessions route answers by id), checks every answer's
//! body, and prints the figures as one JSON line at the end. wrk is written in
//! C and runs on its own core, so it is not the bottleneck the old reqwest
//! client was.

use std::path::Path;
use std::process::Command;

use anyhow::{Context, Result, bail};
use serde_json::Value;

/// The script: `wrk.method/headers` are set from the command line through
/// environment variables so one script serves every server.
const SCRIPT: &str = r#"
-- Written by `cargo xtask bench mcp`.
local prefix = os.getenv("BENCH_BODY_PREFIX")
local suffix = os.getenv("BENCH_BODY_SUFFIX")
local expect = os.getenv("BENCH_EXPECT")
local threads = {}
local counter = 0
local base = 0
-- Globals, not locals: `done` reads them per thread with `thread:get`,
-- which sees only a thread's globals (a local reads as nil there).
failed = 0
first_failure = nil

function setup(thread)
  thread:set("tid", #threads)
  table.insert(threads, thread)
end

function init(args)
  base = (tid + 1) * 1000000000
  wrk.method = "POST"
  wrk.headers["Content-Type"] = "application/json"
  wrk.headers["Accept"] = "application/json, text/event-stream"
  wrk.headers["MCP-Protocol-Version"] = "2025-06-18"
  local bearer = os.getenv("BENCH_BEARER")
  if bearer and bearer ~= "" then wrk.headers["Authorization"] = "Bearer " .. bearer end
  local session = os.getenv("BENCH_SESSION")
  if session and session ~= "" then wrk.headers["Mcp-Session-Id"] = session end
end

function request()
  counter = counter + 1
  return wrk.format(nil, nil, nil, prefix .. (base + counter) .. suffix)
end

function response(status, headers, body)
  if status ~= 200 or not string.find(body, expect, 1, true) then
    failed = failed + 1
    if first_failure == nil then first_failure = status .. " " .. string.sub(body, 1, 200) end
  end
end

function done(summary, latency, requests)
  local bad = 0
  local why = ""
  for _, t in ipairs(threads) do
    bad = bad + t:get("failed")
    local f = t:get("first_failure")
    if f ~= nil and why == "" then why = f end
  end
  io.write(string.format(
    '{"requests":%d,"duration_us":%d,"socket_errors":%d,"non_2xx":%d,"failed":%d,"p50_us":%d,"p99_us":%d,"first_failure":%q}\n',
    summary.requests, summary.duration,
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout,
    summary.errors.status, bad, latency:percentile(50), latency:percentile(99), why))
end
"#;

/// What one wrk run measured.
#[derive(Debug, Clone)]
pub(crate) struct Run {
    pub(crate) requests: u64,
    pub(crate) seconds: f64,
    /// Socket errors, non-2xx answers and answers without the expected text.
    pub(crate) failed: u64,
    pub(crate) p50_ms: f64,
    pub(crate) p99_ms: f64,
    pub(crate) first_failure: String,
}

impl Run {
    pub(crate) fn rate(&self) -> f64 {
        if self.seconds > 0.0 {
            (self.requests - self.failed.min(self.requests)) as f64 / self.seconds
        } else {
            0.0
        }
    }
}

/// One load round against `url`.
#[derive(Debug)]
pub(crate) struct Load<'a> {
    pub(crate) url: &'a str,
    /// The JSON-RPC body around the id: `prefix ID suffix`.
    pub(crate) prefix: &'a str,
    pub(crate) suffix: &'a str,
    /// Text every successful answer contains.
    pub(crate) expect: &'a str,
    pub(crate) bearer: Option<&'a str>,
    pub(crate) session: Option<&'a str>,
    pub(crate) connections: usize,
    pub(crate) seconds: u64,
    /// The CPU wrk is pinned to.
    pub(crate) cpu: usize,
}

/// Write the script next to the other run files.
pub(crate) fn write_script(work: &Path) -> Result<std::path::PathBuf> {
    let path = work.join("mcp.lua");
    std::fs::write(&path, SCRIPT).with_context(|| format!("writing {}", path.display()))?;
    Ok(path)
}

pub(crate) fn run(script: &Path, load: &Load<'_>) -> Result<Run> {
    let output = Command::new("taskset")
        .arg("-c")
        .arg(load.cpu.to_string())
        .args(["wrk", "-t1", "--latency"])
        .arg(format!("-c{}", load.connections))
        .arg(format!("-d{}s", load.seconds))
        .arg("-s")
        .arg(script)
        .arg(load.url)
        .env("BENCH_BODY_PREFIX", load.prefix)
        .env("BENCH_BODY_SUFFIX", load.suffix)
        .env("BENCH_EXPECT", load.expect)
        .env("BENCH_BEARER", load.bearer.unwrap_or_default())
        .env("BENCH_SESSION", load.session.unwrap_or_default())
        .output()
        .context("starting wrk (apt-get install wrk util-linux)")?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    if !output.status.success() {
        bail!("wrk failed ({}): {}{}", output.status, stdout, String::from_utf8_lossy(&output.stderr));
    }
    let line = stdout.lines().rev().find(|l| l.starts_with('{')).context("wrk printed no summary")?;
    let v: Value = serde_json::from_str(line).with_context(|| format!("wrk's summary `{line}`"))?;
    let n = |k: &str| v[k].as_u64().unwrap_or(0);
    Ok(Run {
        requests: n("requests"),
        seconds: n("duration_us") as f64 / 1e6,
        failed: n("socket_errors") + n("non_2xx") + n("failed"),
        p50_ms: n("p50_us") as f64 / 1000.0,
        p99_ms: n("p99_us") as f64 / 1000.0,
        first_failure: v["first_failure"].as_str().unwrap_or_default().to_owned(),
    })
}
