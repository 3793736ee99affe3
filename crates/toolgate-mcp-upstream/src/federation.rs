//! [`Federation`]: the rest of the upstreams' MCP surface (prompts, resources and their
//! templates, completions, resource subscriptions), for the MCP server to serve beside
//! toolgate's own.
//!
//! Names: a prompt is `<upstream>__<name>` (its own name with `prefix = false`); a
//! resource keeps its URI, and a read goes to the upstream that listed that URI, else to
//! the one with a template that matches it ([`crate::surface::matches`]). What a caller
//! sees of an upstream is decided as for its tools: the upstream's role, domain
//! (its name) and the caller's toolset, as a read ([`toolgate_gateway::Gateway::policy`]).
//! Every request carries the caller's identity as its tool calls do.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use rmcp::model::{
    ClientRequest, CompleteRequest, CompleteRequestParams, CompleteResult, ContentBlock, GetPromptRequest,
    GetPromptRequestParams, GetPromptResult, Prompt, ReadResourceRequest, ReadResourceRequestParams,
    ReadResourceResult, Reference, Resource, ResourceTemplate, SubscribeRequest, SubscribeRequestParams,
    UnsubscribeRequest, UnsubscribeRequestParams,
};
use rmcp::{ErrorData as McpError, model::ErrorCode};
use serde::de::DeserializeOwned;
use tokio::sync::{broadcast, watch};
use toolgate_core::Caller;
use toolgate_gateway::Gateway;

use crate::link::{Link, State};
use crate::surface::matches;

/// Versions of the federated lists: each change of an upstream's prompts or resources
/// bumps its counter (the MCP server then sends `notifications/*/list_changed`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Lists {
    /// Bumped when any upstream's prompts changed.
    pub prompts: u64,
    /// Bumped when any upstream's resources or resource templates changed.
    pub resources: u64,
}

/// What the links tell the federation.
#[derive(Debug)]
pub(crate) struct Signals {
    pub(crate) lists: watch::Sender<Lists>,
    /// URIs an upstream said were updated (`notifications/resources/updated`).
    pub(crate) updated: broadcast::Sender<String>,
}

impl Default for Signals {
    fn default() -> Self {
        Self { lists: watch::channel(Lists::default()).0, updated: broadcast::channel(256).0 }
    }
}

/// The federated surface of the running upstreams. Cheap to clone.
#[derive(Debug, Clone, Default)]
pub struct Federation {
    pub(crate) links: Arc<RwLock<Vec<Arc<Link>>>>,
    pub(crate) signals: Arc<Signals>,
    /// How many sessions subscribed to each URI (the upstream is subscribed once).
    subscriptions: Arc<Mutex<HashMap<String, usize>>>,
}

/// How long an answer of the federation may take from an upstream.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

impl Federation {
    /// Whether any upstream is configured (the MCP server then offers resources,
    /// completions and logging).
    pub fn is_empty(&self) -> bool {
        self.links.read().unwrap_or_else(|e| e.into_inner()).is_empty()
    }

    /// Changes of the federated lists.
    pub fn lists(&self) -> watch::Receiver<Lists> {
        self.signals.lists.subscribe()
    }

    /// URIs the upstreams report updated.
    pub fn updates(&self) -> broadcast::Receiver<String> {
        self.signals.updated.subscribe()
    }

    fn visible(&self, gateway: &Gateway, caller: &Caller) -> Vec<Arc<Link>> {
        let links = self.links.read().unwrap_or_else(|e| e.into_inner());
        links.iter().filter(|link| link.visible_to(gateway, caller)).cloned().collect()
    }

    /// The prompts of the upstreams this caller may use, under toolgate's names.
    pub fn prompts(&self, gateway: &Gateway, caller: &Caller) -> Vec<Prompt> {
        let mut out = Vec::new();
        for link in self.visible(gateway, caller) {
            for mut prompt in link.surface().prompts {
                prompt.name = link.local_prompt(&prompt.name);
                out.push(prompt);
            }
        }
        out
    }

    /// The resources of the upstreams this caller may use (URIs as the upstreams gave them).
    pub fn resources(&self, gateway: &Gateway, caller: &Caller) -> Vec<Resource> {
        self.visible(gateway, caller).into_iter().flat_map(|link| link.surface().resources).collect()
    }

    /// The resource templates of the upstreams this caller may use.
    pub fn resource_templates(&self, gateway: &Gateway, caller: &Caller) -> Vec<ResourceTemplate> {
        self.visible(gateway, caller).into_iter().flat_map(|link| link.surface().templates).collect()
    }

    /// The upstream that has the prompt `name` (toolgate's name) for this caller, and its name there.
    fn prompt_owner(&self, gateway: &Gateway, caller: &Caller, name: &str) -> Option<(Arc<Link>, String)> {
        self.visible(gateway, caller).into_iter().find_map(|link| {
            let remote = link.remote_prompt(name)?;
            Some((link, remote))
        })
    }

    /// The upstream a resource URI belongs to for this caller: the one that listed it,
    /// else one with a matching template, else the only one that serves resources.
    fn resource_owner(&self, gateway: &Gateway, caller: &Caller, uri: &str) -> Option<Arc<Link>> {
        let links = self.visible(gateway, caller);
        if let Some(link) = links.iter().find(|l| l.surface().resources.iter().any(|r| r.uri == uri)) {
            return Some(link.clone());
        }
        if let Some(link) = links.iter().find(|l| {
            l.surface().templates.iter().any(|t| t.uri_template == uri || matches(&t.uri_template, uri))
        }) {
            return Some(link.clone());
        }
        let mut serving = links.into_iter().filter(|l| l.surface().resources_capable);
        match (serving.next(), serving.next()) {
            (Some(only), None) => Some(only),
            _ => None,
        }
    }

    /// `prompts/get` of an upstream's prompt; `None` when no upstream has `name` for this caller.
    pub async fn get_prompt(
        &self,
        gateway: &Gateway,
        caller: &Caller,
        mut params: GetPromptRequestParams,
    ) -> Option<Result<GetPromptResult, McpError>> {
        let (link, remote) = self.prompt_owner(gateway, caller, &params.name)?;
        params.name = remote;
        let request = ClientRequest::GetPromptRequest(GetPromptRequest::new(params));
        Some(send(&link, caller, request).await)
    }

    /// `resources/read` of an upstream's resource; `None` when no upstream can take `uri`.
    pub async fn read_resource(
        &self,
        gateway: &Gateway,
        caller: &Caller,
        params: ReadResourceRequestParams,
    ) -> Option<Result<ReadResourceResult, McpError>> {
        let link = self.resource_owner(gateway, caller, &params.uri)?;
        let request = ClientRequest::ReadResourceRequest(ReadResourceRequest::new(params));
        Some(send(&link, caller, request).await)
    }

    /// `completion/complete` for an upstream's prompt or resource template; `None` when
    /// no upstream has that reference for this caller.
    pub async fn complete(
        &self,
        gateway: &Gateway,
        caller: &Caller,
        mut params: CompleteRequestParams,
    ) -> Option<Result<CompleteResult, McpError>> {
        let link = match &mut params.r#ref {
            Reference::Prompt(prompt) => {
                let (link, remote) = self.prompt_owner(gateway, caller, &prompt.name)?;
                prompt.name = remote;
                link
            }
            Reference::Resource(resource) => self.resource_owner(gateway, caller, &resource.uri)?,
            _ => return None,
        };
        if !link.surface().completions_capable {
            return Some(Ok(CompleteResult::default()));
        }
        let request = ClientRequest::CompleteRequest(CompleteRequest::new(params));
        Some(send(&link, caller, request).await)
    }

    /// `resources/subscribe`: the owning upstream is subscribed when the first session
    /// subscribes to `uri`. `None` when no upstream can take `uri`.
    pub async fn subscribe(
        &self,
        gateway: &Gateway,
        caller: &Caller,
        uri: &str,
    ) -> Option<Result<(), McpError>> {
        let link = self.resource_owner(gateway, caller, uri)?;
        let first = {
            let mut subs = self.subscriptions.lock().unwrap_or_else(|e| e.into_inner());
            let count = subs.entry(uri.to_owned()).or_default();
            *count += 1;
            *count == 1
        };
        if !first || !link.surface().subscribe_capable {
            return Some(Ok(()));
        }
        let request =
            ClientRequest::SubscribeRequest(SubscribeRequest::new(SubscribeRequestParams::new(uri)));
        Some(send::<rmcp::model::EmptyResult>(&link, caller, request).await.map(|_| ()))
    }

    /// `resources/unsubscribe`: the upstream is unsubscribed when the last session is.
    pub async fn unsubscribe(
        &self,
        gateway: &Gateway,
        caller: &Caller,
        uri: &str,
    ) -> Option<Result<(), McpError>> {
        let link = self.resource_owner(gateway, caller, uri)?;
        let last = {
            let mut subs = self.subscriptions.lock().unwrap_or_else(|e| e.into_inner());
            match subs.get_mut(uri) {
                Some(count) if *count > 1 => {
                    *count -= 1;
                    false
                }
                Some(_) => {
                    subs.remove(uri);
                    true
                }
                None => false,
            }
        };
        if !last || !link.surface().subscribe_capable {
            return Some(Ok(()));
        }
        let request =
            ClientRequest::UnsubscribeRequest(UnsubscribeRequest::new(UnsubscribeRequestParams::new(uri)));
        Some(send::<rmcp::model::EmptyResult>(&link, caller, request).await.map(|_| ()))
    }

    /// The content blocks of an upstream tool's result that toolgate's envelope does not
    /// carry (audio, embedded resources, resource links), for the call traced as `trace_id`.
    pub fn take_content(trace_id: &str) -> Vec<ContentBlock> {
        let mut kept = KEPT.lock().unwrap_or_else(|e| e.into_inner());
        kept.as_mut().and_then(|map| map.remove(trace_id)).map(|(_, blocks)| blocks).unwrap_or_default()
    }
}

/// Content blocks kept by trace id until the MCP server takes them (at most a minute:
/// a call made without it, by the agent runtime, leaves them behind).
static KEPT: Mutex<Option<HashMap<String, Kept>>> = Mutex::new(None);

/// When blocks were kept, and the blocks.
type Kept = (Instant, Vec<ContentBlock>);

/// Keep `blocks` of the call traced as `trace_id` for [`Federation::take_content`].
pub(crate) fn keep_content(trace_id: &str, blocks: Vec<ContentBlock>) {
    if blocks.is_empty() || trace_id.is_empty() {
        return;
    }
    let mut kept = KEPT.lock().unwrap_or_else(|e| e.into_inner());
    let map = kept.get_or_insert_with(HashMap::new);
    let now = Instant::now();
    map.retain(|_, (at, _)| now.duration_since(*at) < Duration::from_secs(60));
    if map.len() < 4096 {
        map.insert(trace_id.to_owned(), (now, blocks));
    }
}

/// Send `request` to `link`'s upstream as `caller`, and read the answer as `T`.
async fn send<T: DeserializeOwned>(
    link: &Link,
    caller: &Caller,
    request: ClientRequest,
) -> Result<T, McpError> {
    let peer = match link.state() {
        State::Up(peer) if !peer.is_transport_closed() => peer,
        State::Up(_) => return Err(unavailable(&link.name, "the connection just closed")),
        State::Down(reason) => return Err(unavailable(&link.name, &reason)),
    };
    let (request, options) = crate::tool::as_caller(link, caller, request).await.map_err(|error| {
        McpError::new(
            ErrorCode::INTERNAL_ERROR,
            format!("no token for the MCP server `{}`: {}", link.name, error.message),
            None,
        )
    })?;
    let handle = peer
        .send_request_with_option(request, options)
        .await
        .map_err(|_| unavailable(&link.name, "the connection had just closed"))?;
    let answer = tokio::time::timeout(REQUEST_TIMEOUT, handle.await_response())
        .await
        .map_err(|_| unavailable(&link.name, "it did not answer in time"))?;
    match answer {
        Ok(result) => {
            let value = serde_json::to_value(&result).unwrap_or_default();
            serde_json::from_value(value).map_err(|_| {
                McpError::new(
                    ErrorCode::INTERNAL_ERROR,
                    format!(
                        "the MCP server `{}` answered something that is not the expected result",
                        link.name
                    ),
                    None,
                )
            })
        }
        // The upstream's own error (an unknown prompt, a resource it cannot read) as it gave it.
        Err(rmcp::service::ServiceError::McpError(error)) => Err(error),
        Err(_) => Err(unavailable(&link.name, "the connection failed while waiting for the answer")),
    }
}

fn unavailable(name: &str, reason: &str) -> McpError {
    McpError::new(
        ErrorCode::INTERNAL_ERROR,
        format!("the MCP server `{name}` cannot be reached now ({reason}); try again later"),
        Some(serde_json::json!({"code": "UNAVAILABLE", "upstream": name})),
    )
}
