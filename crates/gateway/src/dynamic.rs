//! The tool table, and tools that come and go while the gateway serves
//! (another MCP server's tools, registered under a source name).
//!
//! The table is an immutable snapshot behind a lock held only to clone an
//! `Arc`: a call looks its tool up once and keeps its snapshot to the end,
//! so replacing a source never disturbs calls in flight. Every replacement
//! bumps a version that transports watch to tell their clients
//! (`notifications/tools/list_changed`).

use std::collections::HashMap;
use std::sync::Arc;

use schema_gen::Validator;
use tool_core::Tool;

use crate::registry::{BuildError, Entry};
use crate::{Gateway, meta};

/// One snapshot of the registered tools.
#[derive(Default)]
pub(crate) struct Table {
    pub(crate) tools: HashMap<String, Arc<Entry>>,
    /// Tool names in sorted order, for listing.
    pub(crate) order: Vec<String>,
    /// The source of each dynamic tool (static tools have none).
    pub(crate) sources: HashMap<String, String>,
}

impl Table {
    pub(crate) fn new(tools: HashMap<String, Arc<Entry>>) -> Self {
        let mut order: Vec<String> = tools.keys().cloned().collect();
        order.sort();
        Self { tools, order, sources: HashMap::new() }
    }
}

impl Gateway {
    /// Replace every tool registered under `source` with `tools` (an empty
    /// list removes them). Each tool is checked like a built-in one (name,
    /// description, role, compiled schema); a tool that fails, or whose name
    /// is taken by a tool of another source, is left out and its reason
    /// returned, and the others are registered. Clients are told through
    /// [`Gateway::tools_changed`].
    pub fn replace_source_tools(&self, source: &str, tools: Vec<Arc<dyn Tool>>) -> Vec<BuildError> {
        let mut problems = Vec::new();
        let mut checked = Vec::with_capacity(tools.len());
        for tool in tools {
            match self.check_dynamic(&tool) {
                Ok(validator) => checked.push((tool, validator)),
                Err(error) => problems.push(error),
            }
        }
        let mut table = self.inner.table.write().unwrap_or_else(|e| e.into_inner());
        let mut map: HashMap<String, Arc<Entry>> = table
            .tools
            .iter()
            .filter(|(name, _)| table.sources.get(*name).is_none_or(|s| s != source))
            .map(|(name, entry)| (name.clone(), entry.clone()))
            .collect();
        let mut sources: HashMap<String, String> =
            table.sources.iter().filter(|(_, s)| *s != source).map(|(n, s)| (n.clone(), s.clone())).collect();
        for (tool, validator) in checked {
            let name = tool.spec().name.clone();
            if map.contains_key(&name) {
                problems.push(BuildError::Duplicate(name));
                continue;
            }
            // Its own metrics row (up to a cap), taken here and never on a call.
            let slot = self.inner.metrics.dynamic_slot(&name);
            sources.insert(name.clone(), source.to_owned());
            map.insert(name, Arc::new(Entry { tool, validator, slot }));
        }
        let mut next = Table::new(map);
        next.sources = sources;
        *table = Arc::new(next);
        drop(table);
        self.inner.changes.send_modify(|version| *version += 1);
        problems
    }

    /// A receiver that sees a new value each time the tool list changes.
    pub fn tools_changed(&self) -> tokio::sync::watch::Receiver<u64> {
        self.inner.changes.subscribe()
    }

    fn check_dynamic(&self, tool: &Arc<dyn Tool>) -> Result<Validator, BuildError> {
        let spec = tool.spec();
        spec.check()?;
        if meta::META_TOOLS.contains(&spec.name.as_str()) {
            return Err(BuildError::Reserved(spec.name.clone()));
        }
        let hierarchy = self.inner.policy.hierarchy();
        if hierarchy.rank(&spec.required_role).is_none() {
            return Err(BuildError::UnknownRole {
                tool: spec.name.clone(),
                role: spec.required_role.clone(),
                known: hierarchy.roles().join(" < "),
            });
        }
        Validator::new(&spec.input_schema)
            .map_err(|e| BuildError::Schema { tool: spec.name.clone(), message: e.to_string() })
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use tool_core::{FnTool, ToolOutput, ToolSpec};

    use super::*;

    fn tool(name: &str, schema: serde_json::Value) -> Arc<dyn Tool> {
        Arc::new(FnTool::new(ToolSpec::new(name, "A tool.", schema), |_ctx, _params| {
            Box::pin(async { Ok(ToolOutput::json(json!("ok"))) })
        }))
    }

    fn closed() -> serde_json::Value {
        json!({"type": "object", "properties": {}, "additionalProperties": false})
    }

    #[test]
    fn a_source_is_replaced_whole_and_bad_tools_are_left_out_with_a_reason() {
        let gateway = Gateway::builder().tool(tool("query_thing", closed())).build().unwrap();
        let mut changes = gateway.tools_changed();
        changes.mark_unchanged();

        let problems = gateway.replace_source_tools(
            "upstream:w",
            vec![
                tool("w__get_forecast", closed()),
                tool("w__open", json!({"type": "object"})),
                tool("query_thing", closed()),
                tool("w__bad_schema", json!({"type": "object", "properties": {"a": {"type": 7}}, "additionalProperties": false})),
            ],
        );
        assert!(changes.has_changed().unwrap());
        let names: Vec<String> = gateway.all_specs().into_iter().map(|s| s.name).collect();
        assert_eq!(names, ["query_thing", "w__get_forecast"]);
        assert_eq!(problems.len(), 3, "{problems:?}");
        assert!(problems.iter().any(|p| matches!(p, BuildError::Duplicate(n) if n == "query_thing")));
        assert!(
            problems.iter().any(|p| matches!(p, BuildError::Schema { tool, .. } if tool == "w__bad_schema"))
        );

        // A second listing replaces the first; another source is untouched.
        assert!(gateway.replace_source_tools("upstream:v", vec![tool("v__ping", closed())]).is_empty());
        assert!(gateway.replace_source_tools("upstream:w", vec![tool("w__later", closed())]).is_empty());
        let names: Vec<String> = gateway.all_specs().into_iter().map(|s| s.name).collect();
        assert_eq!(names, ["query_thing", "v__ping", "w__later"]);
        assert!(gateway.replace_source_tools("upstream:w", Vec::new()).is_empty());
        assert!(gateway.spec("w__later").is_none() && gateway.spec("v__ping").is_some());
    }

    #[tokio::test]
    async fn a_tool_added_while_serving_is_counted_in_its_own_row() {
        let gateway = Gateway::builder().tool(tool("query_thing", closed())).build().unwrap();
        assert!(
            gateway.replace_source_tools("upstream:w", vec![tool("w__get_forecast", closed())]).is_empty()
        );
        let ctx = tool_core::ToolContext::new(tool_core::Caller::new("u1", "guest"));
        let envelope =
            gateway.execute(&ctx, "w__get_forecast", json!({}), &crate::CallOptions::default()).await;
        assert!(envelope.success, "{envelope:?}");
        // Replaced (the upstream listed again): the same row keeps counting.
        assert!(
            gateway.replace_source_tools("upstream:w", vec![tool("w__get_forecast", closed())]).is_empty()
        );
        gateway.execute(&ctx, "w__get_forecast", json!({}), &crate::CallOptions::default()).await;
        let mut out = String::new();
        gateway.render_metrics(&mut out);
        assert!(
            out.contains("toolgate_calls_total{tool=\"w__get_forecast\",role=\"guest\",outcome=\"OK\"} 2\n"),
            "{out}"
        );
        assert!(!out.contains("tool=\"(unknown)\""), "{out}");
    }
}
