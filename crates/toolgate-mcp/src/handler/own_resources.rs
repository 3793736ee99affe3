//! The resources toolgate serves itself ([`toolgate_core::Resources`], e.g. the full
//! itinerary plans of `toolgate://plans/{plan_id}`): a tool's result links to one with a
//! `resource_link` block, `resources/templates/list` lists their templates, and
//! `resources/read` reads one for its caller (another caller's: not found).

use std::sync::Arc;

use rmcp::ErrorData as McpError;
use rmcp::model::{
    ContentBlock, ErrorCode, ReadResourceResult, Resource, ResourceContents, ResourceTemplate,
    ServerCapabilities,
};
use toolgate_core::{Caller, Envelope, Resources};

use super::McpServer;

impl McpServer {
    /// Serve these resources beside the upstreams'.
    pub fn with_resources(mut self, resources: Arc<dyn Resources>) -> Self {
        Arc::make_mut(&mut self.inner).resources = Some(resources);
        self
    }

    pub(crate) fn own_resources(&self) -> Option<&Arc<dyn Resources>> {
        self.inner.resources.as_ref()
    }

    /// The resources capability, when toolgate serves resources of its own.
    pub(crate) fn own_capabilities(&self, capabilities: &mut ServerCapabilities) {
        if self.own_resources().is_some() && capabilities.resources.is_none() {
            capabilities.resources = Some(Default::default());
        }
    }

    /// The `resource_link` blocks a successful result carries.
    pub(crate) fn result_links(&self, envelope: &Envelope) -> Vec<ContentBlock> {
        let (Some(resources), Some(result)) = (self.own_resources(), envelope.result.as_ref()) else {
            return Vec::new();
        };
        if !envelope.success {
            return Vec::new();
        }
        resources
            .link_for(&envelope.metadata.tool, result)
            .map(|link| {
                let mut resource = Resource::new(link.uri, link.name)
                    .with_description(link.description)
                    .with_mime_type(link.mime_type);
                if let Some(size) = link.size {
                    resource = resource.with_size(size);
                }
                ContentBlock::resource_link(resource)
            })
            .into_iter()
            .collect()
    }

    /// The templates of toolgate's own resources.
    pub(crate) fn own_templates(&self) -> Vec<ResourceTemplate> {
        let Some(resources) = self.own_resources() else { return Vec::new() };
        resources
            .templates()
            .into_iter()
            .map(|t| {
                ResourceTemplate::new(t.uri_template, t.name)
                    .with_description(t.description)
                    .with_mime_type(t.mime_type)
            })
            .collect()
    }

    /// `resources/read` of one of toolgate's own resources; `None` when the URI is not one.
    pub(crate) async fn own_read(
        &self,
        caller: &Caller,
        uri: &str,
    ) -> Option<Result<ReadResourceResult, McpError>> {
        let read = self.own_resources()?.read(caller, uri)?;
        Some(match read.await {
            Ok(body) => Ok(ReadResourceResult::new(vec![
                ResourceContents::text(body.text, body.uri).with_mime_type(body.mime_type),
            ])),
            Err(e) if e.code == toolgate_core::ErrorCode::NotFound => {
                Err(McpError::new(ErrorCode::RESOURCE_NOT_FOUND, e.message, None))
            }
            Err(e) => Err(McpError::new(ErrorCode::INTERNAL_ERROR, e.message, None)),
        })
    }
}
