//! toolgate's own prompts: `catalog` (the caller's catalog) and `guide:<skill id>` for each
//! skill the caller may read. The upstreams' follow them ([`super::federate`]).

use rmcp::ErrorData as McpError;
use rmcp::model::{GetPromptResult, Prompt, PromptMessage, Role};
use toolgate_core::Caller;

use super::{CATALOG_PROMPT, GUIDE_PROMPT_PREFIX, McpServer, clip};

impl McpServer {
    pub(super) fn prompt_list(&self, caller: &Caller) -> Vec<Prompt> {
        let mut prompts = vec![Prompt::new(
            CATALOG_PROMPT,
            Some("The working rules and the skills and tools this caller may use (the system-prompt text)."),
            None,
        )];
        for skill in self.inner.gateway.visible_skills(caller) {
            prompts.push(
                Prompt::new(
                    format!("{GUIDE_PROMPT_PREFIX}{}", skill.id),
                    Some(skill.description.clone()),
                    None,
                )
                .with_title(skill.title.clone()),
            );
        }
        prompts
    }

    pub(super) fn prompt(&self, caller: &Caller, name: &str) -> Result<GetPromptResult, McpError> {
        if name == CATALOG_PROMPT {
            let text = self.instructions(caller);
            return Ok(GetPromptResult::new(vec![PromptMessage::new_text(Role::User, text)])
                .with_description("The catalog: working rules, skills and tools for this caller."));
        }
        let Some(id) = name.strip_prefix(GUIDE_PROMPT_PREFIX) else {
            return Err(McpError::invalid_params(
                format!(
                    "no prompt named `{}`; use `{CATALOG_PROMPT}` or `{GUIDE_PROMPT_PREFIX}<skill id>`",
                    clip(name)
                ),
                None,
            ));
        };
        match self.inner.gateway.skill_guide(caller, id) {
            Ok(guide) => Ok(GetPromptResult::new(vec![PromptMessage::new_text(Role::User, guide)])
                .with_description(format!("How to carry out the skill `{id}`, step by step."))),
            Err(error) => Err(McpError::invalid_params(
                error.message.clone(),
                Some(serde_json::json!({ "code": error.code, "details": error.details })),
            )),
        }
    }
}
