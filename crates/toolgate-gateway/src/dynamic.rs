//! The tool table, and tools that come and go while the gateway serves
//! (another MCP server's tools, registered under a source name).
//!
//! The table is an immutable snapshot, loaded without a lock (`arc_swap`):
//! a call looks its tool up once and keeps its snapshot to the end,
//! so replacing a source never disturbs calls in flight. Every replacement
//! bumps a version that transports watch to tell their clients
//! (`notifications/tools/list_changed`).

use std::collections::HashMap;
use std::sync::Arc;

use toolgate_core::Tool;

use crate::live::Settings;
use crate::registry::{BuildError, Entry};
use crate::render::Templates;
use crate::{Gateway, live};

/// One snapshot of the registered tools.
#[derive(Default)]
pub(crate) struct Table {
    pub(crate) tools: HashMap<String, Arc<Entry>>,
    /// Tool names in sorted order, for listing.
    pub(crate) order: Vec<String>,
    /// The source of each dynamic tool (static tools have none).
    pub(crate) sources: HashMap<String, String>,
    /// The compiled result templates of these tools: a snapshot's own, so a
    /// replaced tool renders with its new template and calls in flight with
    /// their old one.
    pub(crate) templates: Templates,
    /// The discovery index of these tools, built on the first query ([`crate::rank`]).
    pub(crate) index: std::sync::OnceLock<crate::rank::Index>,
    /// The policy, limits and skills these tools are served under.
    pub(crate) settings: Arc<Settings>,
}

impl Table {
    /// A snapshot of `tools`, their result templates compiled (a bad one is the error).
    pub(crate) fn new(
        tools: HashMap<String, Arc<Entry>>,
        settings: Arc<Settings>,
    ) -> Result<Self, BuildError> {
        let mut order: Vec<String> = tools.keys().cloned().collect();
        order.sort();
        let mut templates = Templates::default();
        for name in &order {
            if let Some(source) = &tools[name].tool.spec().result_template {
                templates
                    .add(name, source)
                    .map_err(|message| BuildError::Template { tool: name.clone(), message })?;
            }
        }
        Ok(Self {
            tools,
            order,
            sources: HashMap::new(),
            templates,
            index: std::sync::OnceLock::new(),
            settings,
        })
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
        let _writer = self.inner.writer.lock().unwrap_or_else(|e| e.into_inner());
        let table = self.inner.tools();
        let mut problems = Vec::new();
        let mut checked = Vec::with_capacity(tools.len());
        // Templates the next snapshot cannot compile leave their tools out too.
        for tool in tools {
            match live::checked(&table.settings.policy, &tool) {
                Ok(validator) => checked.push((tool, validator)),
                Err(error) => problems.push(error),
            }
        }
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
            // Its own metrics row (up to a cap), taken here and never on a call; a tool
            // served before under this name keeps its row.
            let slot =
                table.tools.get(&name).map_or_else(|| self.inner.metrics.dynamic_slot(&name), |e| e.slot);
            sources.insert(name.clone(), source.to_owned());
            map.insert(name, Arc::new(Entry { tool, validator, slot }));
        }
        // Every template compiled above (and in the snapshot before), so this holds.
        let mut next = match Table::new(map, table.settings.clone()) {
            Ok(next) => next,
            Err(error) => {
                problems.push(error);
                return problems;
            }
        };
        next.sources = sources;
        self.inner.publish(next);
        self.inner.changes.send_modify(|version| *version += 1);
        problems
    }

    /// The source `name` was registered under, if it has one
    /// ([`Gateway::replace_source_tools`], [`crate::GatewayBuilder::source_tools`]).
    pub fn source_of(&self, name: &str) -> Option<String> {
        self.inner.tools().sources.get(name).cloned()
    }

    /// What [`Gateway::replace_source_tools`] would refuse of `tools` for
    /// `source`, without changing anything: for a change that must be taken
    /// whole or not at all (a reloaded configuration).
    pub fn check_source_tools(&self, source: &str, tools: &[Arc<dyn Tool>]) -> Vec<BuildError> {
        let table = self.inner.tools();
        let mut problems = Vec::new();
        let mut names = std::collections::HashSet::new();
        for tool in tools {
            let name = &tool.spec().name;
            if let Err(error) = live::checked(&table.settings.policy, tool) {
                problems.push(error);
                continue;
            }
            let elsewhere =
                table.tools.contains_key(name) && table.sources.get(name).is_none_or(|s| s != source);
            if elsewhere || !names.insert(name.clone()) {
                problems.push(BuildError::Duplicate(name.clone()));
            }
        }
        problems
    }

    /// Mark the tool source `namespace` (an upstream MCP server) as not reached since start
    /// (`Some(reason)`), or reached (`None`). While it is marked, a call to any
    /// `<namespace>__<tool>` answers `UNAVAILABLE` with the reason instead of
    /// `TOOL_NOT_FOUND` (its tools are not known yet, but the model must learn that the
    /// server is down, not that it invented a name), and the catalog says so.
    pub fn set_unreachable(&self, namespace: &str, reason: Option<&str>) {
        let mut map = self.inner.unreachable.write().unwrap_or_else(|e| e.into_inner());
        match reason {
            Some(reason) => map.insert(namespace.to_owned(), reason.to_owned()),
            None => map.remove(namespace),
        };
    }

    /// The sources not reached since start, with the reason, by namespace.
    pub fn unreachable(&self) -> Vec<(String, String)> {
        let map = self.inner.unreachable.read().unwrap_or_else(|e| e.into_inner());
        map.iter().map(|(n, r)| (n.clone(), r.clone())).collect()
    }

    /// `UNAVAILABLE` for a call to a tool of a source not reached yet; `None` otherwise.
    pub(crate) fn unreachable_error(&self, name: &str) -> Option<toolgate_core::ToolError> {
        let (namespace, _) = name.split_once(toolgate_core::names::NAMESPACE_SEPARATOR)?;
        let map = self.inner.unreachable.read().unwrap_or_else(|e| e.into_inner());
        let reason = map.get(namespace)?;
        Some(
            toolgate_core::ToolError::unavailable(format!(
                "the MCP server `{namespace}` has not been reached since toolgate started ({reason}); its tools appear once it answers. Tell the user it is unavailable and try again later."
            ))
            .with_details(serde_json::json!({"upstream": namespace, "reason": reason})),
        )
    }

    /// A receiver that sees a new value each time the tool list changes.
    pub fn tools_changed(&self) -> tokio::sync::watch::Receiver<u64> {
        self.inner.changes.subscribe()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use toolgate_core::{FnTool, ToolOutput, ToolSpec};

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

    fn templated(name: &str, template: &str) -> Arc<dyn Tool> {
        let mut spec = ToolSpec::new(name, "A tool.", closed());
        spec.result_template = Some(template.to_owned());
        Arc::new(FnTool::new(spec, |_ctx, _params| Box::pin(async { Ok(ToolOutput::json(json!({"n": 7}))) })))
    }

    #[tokio::test]
    async fn tools_built_under_a_source_are_replaced_whole_with_their_templates_and_checked_first() {
        let gateway = Gateway::builder()
            .tool(tool("query_static", closed()))
            .source_tools(
                "config:domains",
                [templated("query_a", "old {{ result.n }}"), tool("query_b", closed())],
            )
            .build()
            .unwrap();
        assert_eq!(gateway.source_of("query_a").as_deref(), Some("config:domains"));
        assert_eq!(gateway.source_of("query_static"), None);
        let ctx = toolgate_core::ToolContext::new(toolgate_core::Caller::new("u1", "guest"));
        let render = |gateway: &Gateway| {
            let gateway = gateway.clone();
            let ctx = ctx.clone();
            async move {
                let envelope =
                    gateway.execute(&ctx, "query_a", json!({}), &crate::CallOptions::default()).await;
                gateway.render_result(&envelope)
            }
        };
        assert_eq!(render(&gateway).await, "old 7");

        // A dry run names what would be refused, and changes nothing.
        let refused = gateway.check_source_tools(
            "config:domains",
            &[tool("query_static", closed()), templated("query_c", "{% if %}"), tool("query_a", closed())],
        );
        assert_eq!(refused.len(), 2, "{refused:?}");
        assert!(refused.iter().any(|p| matches!(p, BuildError::Duplicate(n) if n == "query_static")));
        assert!(refused.iter().any(|p| matches!(p, BuildError::Template { tool, .. } if tool == "query_c")));
        assert!(gateway.spec("query_b").is_some());

        // The source replaced: its new template renders, its dropped tool is gone, others stay.
        let next = vec![templated("query_a", "new {{ result.n }}")];
        assert!(gateway.check_source_tools("config:domains", &next).is_empty());
        assert!(gateway.replace_source_tools("config:domains", next).is_empty());
        assert_eq!(render(&gateway).await, "new 7");
        assert!(gateway.spec("query_b").is_none() && gateway.spec("query_static").is_some());
    }

    #[tokio::test]
    async fn a_tool_added_while_serving_is_counted_in_its_own_row() {
        let gateway = Gateway::builder().tool(tool("query_thing", closed())).build().unwrap();
        assert!(
            gateway.replace_source_tools("upstream:w", vec![tool("w__get_forecast", closed())]).is_empty()
        );
        let ctx = toolgate_core::ToolContext::new(toolgate_core::Caller::new("u1", "guest"));
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

    #[tokio::test]
    async fn a_source_not_reached_yet_answers_unavailable_and_is_in_the_catalog() {
        let gateway = Gateway::builder().tool(tool("query_thing", closed())).build().unwrap();
        let caller = toolgate_core::Caller::new("mia", "member");
        let ctx = toolgate_core::ToolContext::new(caller.clone());
        let call = |name: &'static str| {
            let gateway = gateway.clone();
            let ctx = ctx.clone();
            async move { gateway.execute(&ctx, name, json!({}), &crate::CallOptions::default()).await }
        };
        assert_eq!(call("w__get_forecast").await.code(), Some(toolgate_core::ErrorCode::ToolNotFound));

        gateway.set_unreachable("w", Some("connection refused"));
        let down = call("w__get_forecast").await;
        assert_eq!(down.code(), Some(toolgate_core::ErrorCode::Unavailable), "{down:?}");
        let message = &down.error.as_ref().unwrap().message;
        assert!(message.contains("`w`") && message.contains("connection refused"), "{message}");
        // Another namespace, or a name without one, is still simply unknown.
        assert_eq!(call("v__get_forecast").await.code(), Some(toolgate_core::ErrorCode::ToolNotFound));
        assert_eq!(call("wget_forecast").await.code(), Some(toolgate_core::ErrorCode::ToolNotFound));
        assert!(gateway.catalog(&caller).contains("`w` (another MCP server): not reached since start"));

        gateway.set_unreachable("w", None);
        assert_eq!(call("w__get_forecast").await.code(), Some(toolgate_core::ErrorCode::ToolNotFound));
        assert!(!gateway.catalog(&caller).contains("Unavailable now"));
    }
}
