//! The `[[upstreams]]` entries: other MCP servers, each under its own supervisor that
//! registers its tools when it has listed them (`upstream:<name>`), so this source
//! registers none itself, only their namespaces. A reload connects new and changed entries
//! and stops removed and changed ones; unchanged ones keep their connections.

use std::sync::Arc;

use toolgate_gateway::Gateway;

use super::{Phase, Prepared, ToolSource};
use crate::config::Config;
use crate::plan::Plan;
use crate::reload::Reloaded;
use crate::upstreams::UpstreamEntry;

/// The upstream MCP servers (see the module docs).
#[derive(Debug, Default)]
pub struct Upstreams {
    /// Set by [`ToolSource::start`] (the supervisors need the gateway).
    running: std::sync::OnceLock<Arc<tokio::sync::Mutex<toolgate_mcp_upstream::Upstreams>>>,
    /// The entries running now, as the configuration wrote them.
    entries: tokio::sync::Mutex<Vec<UpstreamEntry>>,
}

impl Upstreams {
    /// The running upstreams, shared with the rest of the process; `None` before the start.
    pub fn running(&self) -> Option<Arc<tokio::sync::Mutex<toolgate_mcp_upstream::Upstreams>>> {
        self.running.get().cloned()
    }
}

#[toolgate_core::async_trait]
impl ToolSource for Upstreams {
    fn name(&self) -> &str {
        "upstreams"
    }

    fn prepare(&self, _config: &Config, plan: &Plan, _phase: Phase) -> Result<Prepared, Vec<String>> {
        Ok(Prepared { tools: None, later: plan.upstreams.iter().map(|u| u.name.clone()).collect() })
    }

    async fn start(&self, gateway: &Gateway, config: &Config, plan: &Plan) {
        let mut entries = self.entries.lock().await;
        match self.running.get() {
            Some(running) => running.lock().await.add(gateway, plan.upstreams.clone()).await,
            None => {
                let started = toolgate_mcp_upstream::Upstreams::start(gateway, plan.upstreams.clone()).await;
                let _ = self.running.set(Arc::new(tokio::sync::Mutex::new(started)));
            }
        }
        entries.clone_from(&config.upstreams);
    }

    async fn reload(&self, gateway: &Gateway, config: &Config, plan: &Plan, report: &mut Reloaded) {
        let mut entries = self.entries.lock().await;
        let kept = |entry: &UpstreamEntry, among: &[UpstreamEntry]| among.iter().any(|e| e == entry);
        let stop: Vec<String> =
            entries.iter().filter(|e| !kept(e, &config.upstreams)).map(|e| e.name.clone()).collect();
        let start: Vec<String> =
            config.upstreams.iter().filter(|e| !kept(e, &entries)).map(|e| e.name.clone()).collect();
        let Some(running) = self.running.get() else { return };
        let mut running = running.lock().await;
        for name in &stop {
            running.remove(gateway, name);
        }
        let configs: Vec<_> = plan.upstreams.iter().filter(|c| start.contains(&c.name)).cloned().collect();
        if !configs.is_empty() {
            running.add(gateway, configs).await;
        }
        entries.clone_from(&config.upstreams);
        report.upstreams_stopped = stop;
        report.upstreams_started = start;
    }

    async fn stop(&self, gateway: &Gateway) {
        let Some(running) = self.running.get() else { return };
        let mut running = running.lock().await;
        for name in running.names() {
            running.remove(gateway, &name);
        }
        self.entries.lock().await.clear();
    }
}
