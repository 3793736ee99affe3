//! "Did you mean": `TOOL_NOT_FOUND` and `SKILL_NOT_FOUND` name up to three
//! close names the caller may use, found by [`toolgate_schema::suggest`] (the one
//! suggestion function of the workspace).

use serde_json::json;
use toolgate_core::{Caller, ErrorCode, ToolError};

use crate::Gateway;
use crate::echo::clip_str;

impl Gateway {
    /// `TOOL_NOT_FOUND` with up to three close names the caller may use; `UNAVAILABLE`
    /// when the name is in the namespace of an upstream not reached yet.
    pub(crate) fn tool_not_found(&self, caller: &Caller, name: &str) -> ToolError {
        if let Some(error) = self.unreachable_error(name) {
            return error;
        }
        let table = self.inner.tools();
        let visible = table.order.iter().filter(|n| {
            table.tools.get(*n).is_some_and(|e| self.inner.policy().visible(caller, e.tool.spec()))
        });
        let suggestions = toolgate_schema::suggest(name, visible.map(String::as_str));
        let mut message = format!("there is no tool named `{}`.", clip_str(name));
        if suggestions.is_empty() {
            message.push_str(" Use only tool names from the catalog.");
        } else {
            message.push_str(&format!(" Did you mean {}?", quoted(&suggestions)));
        }
        ToolError::new(ErrorCode::ToolNotFound, message).with_details(json!({ "suggestions": suggestions }))
    }

    /// `SKILL_NOT_FOUND` with up to three close skill ids the caller may read.
    pub(crate) fn skill_not_found(&self, caller: &Caller, id: &str) -> ToolError {
        let visible = self.visible_skill_briefs(caller);
        let suggestions = toolgate_schema::suggest(id, visible.iter().map(|(id, _)| id.as_str()));
        let mut message = format!("there is no skill `{}`.", clip_str(id));
        if !suggestions.is_empty() {
            message.push_str(&format!(" Did you mean {}?", quoted(&suggestions)));
        }
        ToolError::new(ErrorCode::SkillNotFound, message).with_details(json!({ "suggestions": suggestions }))
    }
}

pub(crate) fn quoted(names: &[String]) -> String {
    names.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", ")
}
