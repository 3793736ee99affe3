//! The upstreams' MCP surface beside toolgate's own ([`toolgate_mcp_upstream::Federation`]):
//! their prompts after toolgate's, their resources, templates, completions and resource
//! subscriptions, log messages of their calls at the session's level, and the
//! announcements of their changes. Each request is filtered by its caller as tools are.
//!
//! With no upstream configured nothing here is offered: the capabilities stay toolgate's
//! own (tools and prompts).

// Logging and resources/subscribe are deprecated at 2026-07-28 (SEP-2577); earlier
// revisions, which clients and upstreams speak, have them.
#![allow(deprecated)]

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use rmcp::model::{
    CompleteRequestParams, CompleteResult, ContentBlock, GetPromptRequestParams, GetPromptResult,
    ListResourceTemplatesResult, ListResourcesResult, LoggingLevel, PaginatedRequestParams, Prompt,
    ReadResourceRequestParams, ReadResourceResult, ResourceUpdatedNotificationParam, ResourcesCapability,
    ServerCapabilities, SetLevelRequestParams,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, Peer, RoleServer};
use toolgate_core::Caller;
use toolgate_mcp_upstream::Federation;

use super::{McpServer, no_cursor};

/// What one session asked of the federation: its log level and the URIs it subscribed to.
#[derive(Debug, Default)]
pub(crate) struct Session {
    pub(crate) log_level: Arc<Mutex<Option<LoggingLevel>>>,
    subscribed: Mutex<HashSet<String>>,
}

impl McpServer {
    /// The upstreams' surface, when any upstream is configured.
    pub(super) fn federation(&self) -> Option<&Federation> {
        self.inner.federation.as_ref().filter(|f| !f.is_empty())
    }

    /// Serve the prompts, resources, completions and logging of these upstreams.
    pub fn with_federation(mut self, federation: Federation) -> Self {
        Arc::make_mut(&mut self.inner).federation = Some(federation);
        self
    }

    /// The capabilities the upstreams add: resources (with subscriptions), prompts that
    /// change, completions and logging.
    pub(super) fn federated_capabilities(&self, capabilities: &mut ServerCapabilities) {
        if self.federation().is_none() {
            return;
        }
        let mut resources = ResourcesCapability::default();
        resources.subscribe = Some(true);
        resources.list_changed = Some(true);
        capabilities.resources = Some(resources);
        let mut prompts = capabilities.prompts.clone().unwrap_or_default();
        prompts.list_changed = Some(true);
        capabilities.prompts = Some(prompts);
        capabilities.completions = Some(Default::default());
        capabilities.logging = Some(Default::default());
    }

    /// The upstreams' prompts this caller may use.
    pub(super) fn federated_prompts(&self, caller: &Caller) -> Vec<Prompt> {
        self.federation().map(|f| f.prompts(self.gateway(), caller)).unwrap_or_default()
    }

    /// `prompts/get` of an upstream's prompt; `None` when no upstream has it.
    pub(super) async fn federated_prompt(
        &self,
        caller: &Caller,
        request: GetPromptRequestParams,
    ) -> Option<Result<GetPromptResult, McpError>> {
        self.federation()?.get_prompt(self.gateway(), caller, request).await
    }

    pub(super) fn federated_resources(
        &self,
        request: Option<&PaginatedRequestParams>,
        context: &RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        no_cursor(request, "resources/list")?;
        let caller = self.caller(&context.extensions)?;
        let resources = self.federation().map(|f| f.resources(self.gateway(), &caller)).unwrap_or_default();
        Ok(ListResourcesResult::with_all_items(resources))
    }

    pub(super) fn federated_templates(
        &self,
        request: Option<&PaginatedRequestParams>,
        context: &RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, McpError> {
        no_cursor(request, "resources/templates/list")?;
        let caller = self.caller(&context.extensions)?;
        let mut templates = self.own_templates();
        templates.extend(
            self.federation().map(|f| f.resource_templates(self.gateway(), &caller)).unwrap_or_default(),
        );
        Ok(ListResourceTemplatesResult::with_all_items(templates))
    }

    pub(super) async fn federated_read(
        &self,
        request: ReadResourceRequestParams,
        context: &RequestContext<RoleServer>,
    ) -> Result<ReadResourceResult, McpError> {
        let caller = self.caller(&context.extensions)?;
        let uri = request.uri.clone();
        if let Some(answer) = self.own_read(&caller, &uri).await {
            return answer;
        }
        match self.federation() {
            Some(f) => f
                .read_resource(self.gateway(), &caller, request)
                .await
                .unwrap_or_else(|| Err(no_resource(&uri))),
            None => Err(no_resource(&uri)),
        }
    }

    pub(super) async fn federated_complete(
        &self,
        request: CompleteRequestParams,
        context: &RequestContext<RoleServer>,
    ) -> Result<CompleteResult, McpError> {
        let caller = self.caller(&context.extensions)?;
        match self.federation() {
            // Toolgate's own prompts take no arguments: nothing to complete.
            Some(f) => f
                .complete(self.gateway(), &caller, request)
                .await
                .unwrap_or_else(|| Ok(CompleteResult::default())),
            None => Err(McpError::method_not_found::<rmcp::model::CompleteRequestMethod>()),
        }
    }

    pub(super) async fn federated_subscribe(
        &self,
        uri: &str,
        subscribe: bool,
        context: &RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        let caller = self.caller(&context.extensions)?;
        let Some(federation) = self.federation() else { return Err(no_resource(uri)) };
        let mut subscribed = self.session.subscribed.lock().unwrap_or_else(|e| e.into_inner()).clone();
        if subscribe == subscribed.contains(uri) {
            return Ok(());
        }
        let answer = if subscribe {
            federation.subscribe(self.gateway(), &caller, uri).await
        } else {
            federation.unsubscribe(self.gateway(), &caller, uri).await
        };
        answer.unwrap_or_else(|| Err(no_resource(uri)))?;
        if subscribe {
            subscribed.insert(uri.to_owned());
        } else {
            subscribed.remove(uri);
        }
        *self.session.subscribed.lock().unwrap_or_else(|e| e.into_inner()) = subscribed;
        Ok(())
    }

    pub(super) fn federated_set_level(&self, request: SetLevelRequestParams) -> Result<(), McpError> {
        if self.federation().is_none() {
            return Err(McpError::method_not_found::<rmcp::model::SetLevelRequestMethod>());
        }
        *self.session.log_level.lock().unwrap_or_else(|e| e.into_inner()) = Some(request.level);
        Ok(())
    }

    /// The asker of a session's call: its client, with the session's log level.
    pub(super) fn peer_asker(&self, peer: &Peer<RoleServer>) -> Option<crate::ask::PeerAsker> {
        crate::ask::PeerAsker::for_peer(peer).map(|a| a.with_log_level(self.session.log_level.clone()))
    }

    /// The blocks of an upstream tool's result the envelope cannot carry, traced as `trace_id`.
    pub(super) fn federated_content(&self, trace_id: &str) -> Vec<ContentBlock> {
        if self.federation().is_none() {
            return Vec::new();
        }
        Federation::take_content(trace_id)
    }

    /// Tell this session's client when the upstreams' prompts or resources change, and
    /// when a resource it subscribed to is updated, until the session ends.
    pub(super) fn watch_federation(&self, peer: Peer<RoleServer>) {
        let Some(federation) = self.federation() else { return };
        let mut lists = federation.lists();
        lists.mark_unchanged();
        let mut seen = *lists.borrow();
        let mut updates = federation.updates();
        let mut ended = self.life.0.subscribe();
        let session = self.session.clone();
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    changed = lists.changed() => {
                        if changed.is_err() || peer.is_transport_closed() {
                            break;
                        }
                        let now = *lists.borrow_and_update();
                        if now.prompts != seen.prompts && peer.notify_prompt_list_changed().await.is_err() {
                            break;
                        }
                        if now.resources != seen.resources && peer.notify_resource_list_changed().await.is_err() {
                            break;
                        }
                        seen = now;
                    }
                    uri = updates.recv() => match uri {
                        Ok(uri) => {
                            let wanted = session.subscribed.lock().unwrap_or_else(|e| e.into_inner()).contains(&uri);
                            if wanted
                                && peer.notify_resource_updated(ResourceUpdatedNotificationParam::new(uri)).await.is_err()
                            {
                                break;
                            }
                        }
                        Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
                        Err(_) => break,
                    },
                    _ = ended.changed() => break,
                }
            }
        });
    }
}

fn no_resource(uri: &str) -> McpError {
    McpError::new(
        rmcp::model::ErrorCode::RESOURCE_NOT_FOUND,
        format!("no resource `{}` that this caller may read", super::clip(uri)),
        None,
    )
}
