//! Shared helpers: the Python to run, a gateway in front, a progress recorder.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use gateway::{CallOptions, Gateway};
use serde_json::Value;
use tool_core::{Caller, Envelope, ProgressSink, ToolContext};

pub(crate) const SERVER: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/python/upstream_server.py");

/// The Python with the `mcp` package, or why there is none (a failure under
/// `TOOLGATE_REQUIRE_INTEROP=1`, as in mcp-server's interop tests).
pub(crate) fn python() -> Option<String> {
    let mut python = std::env::var("TOOLGATE_PYTHON").unwrap_or_else(|_| "python3".to_owned());
    if python.contains('/') && !python.starts_with('/') {
        python = format!("{}/../../{python}", env!("CARGO_MANIFEST_DIR"));
    }
    let found = std::process::Command::new(&python)
        .args(["-c", "from mcp.server.mcpserver import MCPServer"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    let why = match found {
        Ok(status) if status.success() => return Some(python),
        Ok(_) => format!("`{python}` has no `mcp` 2.x module (pip install mcp)"),
        Err(error) => format!("`{python}` cannot be run ({error})"),
    };
    assert!(
        std::env::var("TOOLGATE_REQUIRE_INTEROP").as_deref() != Ok("1"),
        "TOOLGATE_REQUIRE_INTEROP=1 but {why}"
    );
    eprintln!("skipped: {why}; set TOOLGATE_PYTHON to a Python with `mcp` installed");
    None
}

/// A front gateway with no tools of its own.
pub(crate) fn front() -> Gateway {
    Gateway::builder().build().unwrap()
}

pub(crate) fn member() -> ToolContext {
    ToolContext::new(Caller::new("mia", "member").with_token("sk-caller-secret-token"))
}

pub(crate) async fn call(gateway: &Gateway, ctx: &ToolContext, tool: &str, params: Value) -> Envelope {
    gateway.execute(ctx, tool, params, &CallOptions::default()).await
}

/// Wait until `check` holds, polling; panic with `what` after `within`.
pub(crate) async fn eventually<F, Fut>(within: Duration, what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let start = Instant::now();
    while start.elapsed() < within {
        if check().await {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("not within {within:?}: {what}");
}

/// Files in `dir` whose name starts with `prefix`.
pub(crate) fn markers(dir: &Path, prefix: &str) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with(prefix)))
                .collect()
        })
        .unwrap_or_default()
}

/// One progress report: progress, total, message.
pub(crate) type Report = (f64, Option<f64>, Option<String>);

/// Records every progress report.
#[derive(Default)]
pub(crate) struct Recorder {
    pub(crate) reports: Mutex<Vec<Report>>,
}

impl ProgressSink for Recorder {
    fn report(&self, progress: f64, total: Option<f64>, message: Option<&str>) {
        self.reports.lock().unwrap().push((progress, total, message.map(str::to_owned)));
    }
}

impl Recorder {
    pub(crate) fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }
}
