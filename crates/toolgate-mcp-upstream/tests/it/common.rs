//! Shared helpers: the Python to run, a gateway in front, a progress recorder.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde_json::Value;
use toolgate_core::{Caller, Envelope, ProgressSink, ToolContext};
use toolgate_gateway::{CallOptions, Gateway};

pub(crate) const SERVER: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/python/upstream_server.py");

/// The Python with the `mcp` 2.x package, or `None` after saying why the test skipped.
pub(crate) fn python() -> Option<String> {
    toolgate_test_support::python::with("from mcp.server.mcpserver import MCPServer")
}

/// A front gateway with no tools of its own.
pub(crate) fn front() -> Gateway {
    Gateway::builder().build().unwrap()
}

pub(crate) fn member() -> ToolContext {
    ToolContext::new(Caller::new("mia", "member").with_credential("fitness", "sk-caller-secret-token"))
}

pub(crate) async fn call(gateway: &Gateway, ctx: &ToolContext, tool: &str, params: Value) -> Envelope {
    gateway.execute(ctx, tool, params, &CallOptions::default()).await
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
