//! `subscriptions/listen` (2026-07-28): what a modern client may hear, as a legacy session
//! hears it from `on_initialized`'s watchers. In direct and scoped modes the tool list
//! follows the gateway's (`toolsListChanged`); with upstreams configured their prompts and
//! resources change too (`promptsListChanged`, `resourcesListChanged`). Nothing else
//! changes while serving.

use rmcp::ErrorData as McpError;
use rmcp::model::SubscriptionFilter;
use rmcp::service::SubscriptionContext;

use super::McpServer;

impl McpServer {
    /// The part of `requested` this server can keep.
    pub(super) fn accepted_filter(&self, requested: &SubscriptionFilter) -> SubscriptionFilter {
        let mut accepted = SubscriptionFilter::default();
        if self.inner.exposure.is_direct() && requested.tools_list_changed == Some(true) {
            accepted.tools_list_changed = Some(true);
        }
        if self.federation().is_some() {
            if requested.prompts_list_changed == Some(true) {
                accepted.prompts_list_changed = Some(true);
            }
            if requested.resources_list_changed == Some(true) {
                accepted.resources_list_changed = Some(true);
            }
        }
        accepted
    }

    /// Send what the accepted filter asks for until the listener goes away.
    pub(super) async fn listen_for(&self, context: SubscriptionContext) -> Result<(), McpError> {
        let accepted = context.accepted().clone();
        let tools = accepted.tools_list_changed == Some(true);
        let prompts = accepted.prompts_list_changed == Some(true);
        let resources = accepted.resources_list_changed == Some(true);
        let mut tool_changes = self.inner.gateway.tools_changed();
        tool_changes.mark_unchanged();
        let mut lists = self.federation().map(|f| f.lists());
        if let Some(lists) = &mut lists {
            lists.mark_unchanged();
        }
        let mut seen = lists.as_ref().map(|l| *l.borrow()).unwrap_or_default();
        loop {
            tokio::select! {
                () = context.cancelled() => return Ok(()),
                changed = tool_changes.changed(), if tools => {
                    if changed.is_err() || context.sink().notify_tool_list_changed().await.is_err() {
                        return Ok(());
                    }
                }
                changed = async { lists.as_mut()?.changed().await.ok() }, if (prompts || resources) && lists.is_some() => {
                    let (Some(()), Some(now)) = (changed, lists.as_mut().map(|l| *l.borrow_and_update())) else {
                        return Ok(());
                    };
                    if prompts && now.prompts != seen.prompts && context.sink().notify_prompt_list_changed().await.is_err() {
                        return Ok(());
                    }
                    if resources && now.resources != seen.resources && context.sink().notify_resource_list_changed().await.is_err() {
                        return Ok(());
                    }
                    seen = now;
                }
            }
        }
    }
}
