//! Skills with an orchestration block, served as the tools `run_<skill>`;
//! their steps run through the gateway's own pipeline.

use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock, Weak};
use std::time::Duration;

use serde_json::Value;
use toolgate_core::{Envelope, Tool, ToolContext, ToolError, ToolResult, ToolSpec};
use toolgate_skills::{Skill, StepRunner};

use crate::registry::Inner;
use crate::{CallOptions, Gateway};

/// A skill with an orchestration block, served as the tool `run_<skill>`.
pub(crate) struct SkillTool {
    skill: Skill,
    spec: ToolSpec,
    gateway: Arc<OnceLock<Weak<Inner>>>,
}

impl SkillTool {
    pub(crate) fn new(
        skill: &Skill,
        tools: &BTreeMap<String, ToolSpec>,
        gateway: Arc<OnceLock<Weak<Inner>>>,
    ) -> Option<Self> {
        let spec = skill.tool_spec_with(&|name: &str| tools.get(name).cloned())?;
        Some(Self { skill: skill.clone(), spec, gateway })
    }
}

#[async_trait::async_trait]
impl Tool for SkillTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    async fn call(&self, ctx: &ToolContext, params: Value) -> ToolResult {
        let Some(inner) = self.gateway.get().and_then(Weak::upgrade) else {
            return Err(ToolError::unavailable("the gateway that runs this skill is shutting down"));
        };
        let runner = Gateway { inner };
        toolgate_skills::orchestrate(&self.skill, &runner, ctx, params).await
    }
}

#[async_trait::async_trait]
impl StepRunner for Gateway {
    async fn run_step(&self, ctx: &ToolContext, tool: &str, params: Value, timeout: Duration) -> Envelope {
        let opts = CallOptions::default().timeout_ms(timeout.as_millis() as u64);
        self.execute(ctx, tool, params, &opts).await
    }
}
