//! The seam for sources of tools: route-table domains, MCP upstreams and the compiled-in
//! domains are each a [`ToolSource`], kept in one [`Sources`] registry that `App::start` and
//! reload both go through, so a new kind of source (gRPC, a database) is one module (or a
//! crate with a small impl of this trait) and one line in [`Sources::register`]'s caller.
//!
//! A source's life: [`ToolSource::prepare`] checks the plan and builds what the source will
//! serve (pure: files at most, no network), every source's problems are collected at once;
//! the tools go into the gateway in one step (at the build, or one [`toolgate_gateway::Change`] on
//! reload); then [`ToolSource::start`] (at start) or [`ToolSource::reload`] (on reload) does
//! what needs I/O (connect, spawn, stop what is gone); [`ToolSource::stop`] at the end.

mod builtin;
mod domains;
mod upstreams;

#[cfg(test)]
mod tests;

use std::sync::Arc;

pub use builtin::Builtin;
pub use domains::Domains;
use toolgate_core::Tool;
use toolgate_gateway::{Gateway, GatewayBuilder};
pub use upstreams::Upstreams;

use crate::config::Config;
use crate::plan::Plan;
use crate::reload::Reloaded;

/// When [`ToolSource::prepare`] is asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Before the gateway is built.
    Start,
    /// A configuration read again while serving.
    Reload,
}

/// What a source will serve, as [`ToolSource::prepare`] found it.
#[derive(Default)]
pub struct Prepared {
    /// The tools to serve under the source's name, replacing what it served; `None`: keep
    /// what is served (a source whose configuration is read only at start).
    pub tools: Option<Vec<Arc<dyn Tool>>>,
    /// Namespaces whose tools the source registers later itself (`<namespace>__<tool>`):
    /// skills may name them before they are listed.
    pub later: Vec<String>,
}

impl std::fmt::Debug for Prepared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Prepared")
            .field("tools", &self.tools.as_ref().map(Vec::len))
            .field("later", &self.later)
            .finish()
    }
}

/// A source of tools (and, through the gateway, of the prompts and resources built on them)
/// that is started, reloaded and stopped with the configuration.
#[toolgate_core::async_trait]
pub trait ToolSource: Send + Sync + std::fmt::Debug {
    /// The gateway source its tools are registered under (`config:domains`).
    fn name(&self) -> &str;

    /// Check `plan` and build what this source will serve; every problem at once.
    fn prepare(&self, config: &Config, plan: &Plan, phase: Phase) -> Result<Prepared, Vec<String>>;

    /// The gateway serves the prepared tools: start what needs I/O (connect, spawn).
    async fn start(&self, _gateway: &Gateway, _config: &Config, _plan: &Plan) {}

    /// A reloaded configuration was applied to the gateway: bring what runs in line with it
    /// (connect what is new, stop what is gone, keep what is unchanged); say what in `report`.
    async fn reload(&self, _gateway: &Gateway, _config: &Config, _plan: &Plan, _report: &mut Reloaded) {}

    /// The process stops serving: end what the source runs.
    async fn stop(&self, _gateway: &Gateway) {}
}

/// Every source of a serving process, in registration order.
#[derive(Debug, Clone, Default)]
pub struct Sources {
    list: Vec<Arc<dyn ToolSource>>,
}

/// Tools replacing a source's, by source name (a [`toolgate_gateway::Change`]'s `sources`).
pub type Replaced = Vec<(String, Vec<Arc<dyn Tool>>)>;

/// What every source prepared, by source name.
#[derive(Debug, Default)]
pub struct PreparedAll(Vec<(String, Prepared)>);

impl Sources {
    /// No source yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Add a source.
    pub fn register(mut self, source: Arc<dyn ToolSource>) -> Self {
        self.list.push(source);
        self
    }

    /// The sources, in registration order.
    pub fn iter(&self) -> impl Iterator<Item = &Arc<dyn ToolSource>> {
        self.list.iter()
    }

    /// Every source's [`ToolSource::prepare`]; every problem of every source at once.
    pub fn prepare(&self, config: &Config, plan: &Plan, phase: Phase) -> Result<PreparedAll, Vec<String>> {
        let mut problems = Vec::new();
        let mut prepared = Vec::with_capacity(self.list.len());
        for source in &self.list {
            match source.prepare(config, plan, phase) {
                Ok(p) => prepared.push((source.name().to_owned(), p)),
                Err(more) => problems.extend(more),
            }
        }
        if problems.is_empty() { Ok(PreparedAll(prepared)) } else { Err(problems) }
    }

    /// Start every source once the gateway is built.
    pub async fn start(&self, gateway: &Gateway, config: &Config, plan: &Plan) {
        for source in &self.list {
            source.start(gateway, config, plan).await;
        }
    }

    /// Bring every source in line with an applied configuration.
    pub async fn reload(&self, gateway: &Gateway, config: &Config, plan: &Plan, report: &mut Reloaded) {
        for source in &self.list {
            source.reload(gateway, config, plan, report).await;
        }
    }

    /// Stop every source, the last registered first.
    pub async fn stop(&self, gateway: &Gateway) {
        for source in self.list.iter().rev() {
            source.stop(gateway).await;
        }
    }
}

impl PreparedAll {
    /// The gateway's build with these tools, each under its source, and the later namespaces.
    pub fn build_into(self, mut builder: GatewayBuilder) -> GatewayBuilder {
        for (name, prepared) in self.0 {
            if let Some(tools) = prepared.tools {
                builder = builder.source_tools(&name, tools);
            }
            builder = builder.later_namespaces(prepared.later);
        }
        builder
    }

    /// The sources to replace in a [`toolgate_gateway::Change`], and the later namespaces.
    pub fn into_change(self) -> (Replaced, Vec<String>) {
        let mut sources = Vec::new();
        let mut later = Vec::new();
        for (name, prepared) in self.0 {
            if let Some(tools) = prepared.tools {
                sources.push((name, tools));
            }
            later.extend(prepared.later);
        }
        (sources, later)
    }

    /// The tools a source prepared (none when it keeps what it serves).
    pub fn tools_of(&self, source: &str) -> Vec<String> {
        self.0
            .iter()
            .filter(|(name, _)| name == source)
            .filter_map(|(_, p)| p.tools.as_ref())
            .flatten()
            .map(|t| t.spec().name.clone())
            .collect()
    }
}
