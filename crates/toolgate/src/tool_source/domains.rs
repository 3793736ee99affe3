//! The `[[domains]]` entries: route tables against declared HTTP systems, served under
//! [`crate::reload::DOMAINS_SOURCE`] and replaced whole on every reload.

use std::sync::Arc;

use toolgate_core::Tool;

use super::{Phase, Prepared, ToolSource};
use crate::config::Config;
use crate::plan::Plan;

/// The `[[domains]]` tools (see the module docs).
#[derive(Debug, Default)]
pub struct Domains;

impl ToolSource for Domains {
    fn name(&self) -> &str {
        crate::reload::DOMAINS_SOURCE
    }

    fn prepare(&self, _config: &Config, plan: &Plan, _phase: Phase) -> Result<Prepared, Vec<String>> {
        let mut tools: Vec<Arc<dyn Tool>> = Vec::new();
        let mut problems = Vec::new();
        for domain in &plan.domains {
            match domain.tools(|spec| spec) {
                Ok(more) => tools.extend(more),
                Err(problem) => problems.push(problem),
            }
        }
        if problems.is_empty() {
            Ok(Prepared { tools: Some(tools), later: Vec::new() })
        } else {
            Err(problems)
        }
    }
}
