//! The compiled-in domains (travel over the database, fitness over its API): built once at
//! start from `[fitness]`, `[weather]` and `[redis]`, which are read only at start, so a
//! reload keeps them as they are.

use std::sync::Arc;

use toolgate_core::Tool;

use super::{Phase, Prepared, ToolSource};
use crate::config::Config;
use crate::plan::Plan;

/// Tools built by the binary itself, under one source name.
pub struct Builtin {
    name: String,
    tools: Vec<Arc<dyn Tool>>,
}

impl Builtin {
    /// `tools` under the source `name` (`builtin:travel`).
    pub fn new(name: impl Into<String>, tools: Vec<Arc<dyn Tool>>) -> Self {
        Self { name: name.into(), tools }
    }
}

impl std::fmt::Debug for Builtin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Builtin").field("name", &self.name).field("tools", &self.tools.len()).finish()
    }
}

impl ToolSource for Builtin {
    fn name(&self) -> &str {
        &self.name
    }

    fn prepare(&self, _config: &Config, _plan: &Plan, phase: Phase) -> Result<Prepared, Vec<String>> {
        let tools = (phase == Phase::Start).then(|| self.tools.clone());
        Ok(Prepared { tools, later: Vec::new() })
    }
}
