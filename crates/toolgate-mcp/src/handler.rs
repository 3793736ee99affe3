//! The MCP face of a gateway: [`McpServer`], an rmcp [`ServerHandler`]
//! written by hand because the tool list is dynamic and per caller.
//!
//! Every request resolves its caller first (the fixed stdio identity, or the
//! identity the HTTP auth layer attached to the request) and every answer is
//! filtered by that caller through the gateway, the same way the catalog,
//! discovery and execution are.

use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CancelTaskParams, CompleteRequestParams,
    CompleteResult, ContentBlock, CustomRequest, CustomResult, DiscoverResult, ErrorCode as RpcCode,
    Extensions, GetPromptRequestParams, GetPromptResponse, GetTaskParams, GetTaskResult, Implementation,
    InitializeRequestParams, InitializeResult, ListPromptsResult, ListResourceTemplatesResult,
    ListResourcesResult, ListToolsResult, PaginatedRequestParams, ReadResourceRequestParams,
    ReadResourceResponse, ServerCapabilities, ServerConfig, SubscribeRequestParams, SubscriptionFilter, Tool,
    UnsubscribeRequestParams, UpdateTaskParams,
};
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext};
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use serde_json::Value;
use toolgate_core::{Caller, Envelope, ToolContext};
use toolgate_gateway::{CallOptions, Filter, Gateway};

use crate::Exposure;
use crate::mcp_shape::{mcp_tool, structured, unwrap_args};
use crate::progress::{self, ProgressChannel};

mod federate;
mod listen;
mod own_resources;
mod prompts;
mod protocol;

use protocol::{KNOWN_METHODS, cancelled, clip, no_cursor};

/// The name of the prompt that carries the caller's catalog.
pub const CATALOG_PROMPT: &str = "catalog";
/// The prefix of the prompts that carry skill guides: `guide:<skill id>`.
pub const GUIDE_PROMPT_PREFIX: &str = "guide:";

/// What the catalog's meta-tool rules mean when each tool is its own MCP tool.
const DIRECT_NOTE: &str = "In this session each tool listed below is an MCP tool of its own: call it by name \
with the parameters of its input schema. Where the rules below say `get_tool_schema` or `execute_tool`, use \
the tool's own schema and call the tool itself; where they say `get_skill_guide`, read the prompt \
`guide:<skill id>`.";

/// The identity an HTTP request was authenticated as. The auth layer puts it
/// in the request's extensions; [`McpServer`] reads it from there.
#[derive(Clone, Debug)]
pub(crate) struct Authenticated {
    pub(crate) caller: Caller,
    /// What sessions, streams, rate limits and revocations are keyed on
    /// ([`crate::identity::Identity::principal`]).
    pub(crate) principal: String,
    pub(crate) proof: crate::identity::Proof,
}

impl Authenticated {
    /// Whether no credential was sent (the configured anonymous caller).
    pub(crate) fn is_anonymous(&self) -> bool {
        self.proof == crate::identity::Proof::Anonymous
    }

    /// When the request's proof ends (a token's `exp`).
    pub(crate) fn expires_at(&self) -> Option<std::time::SystemTime> {
        match self.proof {
            crate::identity::Proof::Token { expires_at } => Some(expires_at),
            _ => None,
        }
    }
}

/// An MCP server for one [`Gateway`]: tools, prompts and instructions for
/// whoever the transport says is calling. Cheap to clone (an `Arc` inside);
/// rmcp makes one per session.
///
/// Over HTTP the caller comes from the API key ([`crate::http_router`] puts
/// it on each request); over stdio it is fixed with [`McpServer::with_caller`].
/// A request with neither is refused, so a server mounted without the auth
/// layer fails closed.
#[derive(Clone, Debug)]
pub struct McpServer {
    inner: Arc<Inner>,
    life: Arc<SessionLife>,
    /// What this session asked of the upstreams' surface ([`federate`]).
    session: Arc<federate::Session>,
}

/// Held by every clone of one session's [`McpServer`]: when rmcp drops the
/// session's handler (the session was closed or expired), the sender goes
/// and the session's background tasks see their receiver end.
#[derive(Debug, Default)]
struct SessionLife(tokio::sync::watch::Sender<()>);

#[derive(Clone, Debug)]
struct Inner {
    gateway: Gateway,
    exposure: Exposure,
    caller: Option<Caller>,
    info: Implementation,
    meta_tools: Vec<Tool>,
    /// Whether the client may be asked (elicitation): only where a request
    /// from the server can reach it, i.e. not without sessions.
    ask: bool,
    /// The upstreams' prompts, resources and the rest ([`federate`]).
    federation: Option<toolgate_mcp_upstream::Federation>,
    /// The resources toolgate serves itself (`own_resources`).
    resources: Option<Arc<dyn toolgate_core::Resources>>,
    /// The tasks of long-running calls, shared by every session ([`crate::tasks`]).
    tasks: Arc<crate::tasks::Tasks>,
}

impl McpServer {
    /// A server for `gateway`, exposing its tools as `exposure` says.
    pub fn new(gateway: Gateway, exposure: Exposure) -> Self {
        let meta_tools = gateway.meta_specs().iter().filter_map(mcp_tool).collect();
        let info = Implementation::new("toolgate", env!("CARGO_PKG_VERSION"))
            .with_title("toolgate")
            .with_icons(vec![crate::mcp_shape::server_icon()]);
        Self {
            inner: Arc::new(Inner {
                gateway,
                exposure,
                caller: None,
                info,
                meta_tools,
                ask: true,
                federation: None,
                resources: None,
                tasks: Arc::new(crate::tasks::Tasks::new(crate::TaskLimits::default())),
            }),
            life: Arc::default(),
            session: Arc::default(),
        }
    }

    /// A handler for a new session: the same server, with a lifetime of its
    /// own, so what the session starts ends with it (not with the template
    /// the factory clones).
    pub(crate) fn for_session(&self) -> Self {
        Self { inner: self.inner.clone(), life: Arc::default(), session: Arc::default() }
    }

    /// Serve every request as this caller (stdio, or an embedding that
    /// authenticates by other means). Over HTTP leave it unset: the caller
    /// then comes from the request's API key.
    pub fn with_caller(mut self, caller: Caller) -> Self {
        Arc::make_mut(&mut self.inner).caller = Some(caller);
        self
    }

    /// Never ask the client (elicitation): for serving without sessions,
    /// where a request from the server has no way to the client.
    pub(crate) fn without_asking(mut self) -> Self {
        Arc::make_mut(&mut self.inner).ask = false;
        self
    }

    /// How many tasks (long-running calls a 2026-07-28 client asked to run as
    /// tasks) are kept, and for how long ([`crate::TaskLimits`]).
    pub fn with_task_limits(mut self, limits: crate::TaskLimits) -> Self {
        Arc::make_mut(&mut self.inner).tasks = Arc::new(crate::tasks::Tasks::new(limits));
        self
    }

    /// The name and version announced in `serverInfo` (default `toolgate` and this crate's version).
    pub fn with_server_info(mut self, name: impl Into<String>, version: impl Into<String>) -> Self {
        Arc::make_mut(&mut self.inner).info = Implementation::new(name, version);
        self
    }

    /// The gateway behind this server.
    pub fn gateway(&self) -> &Gateway {
        &self.inner.gateway
    }

    /// How tools are exposed.
    pub fn exposure(&self) -> &Exposure {
        &self.inner.exposure
    }

    /// The caller of a request: the fixed one, or the one the HTTP auth layer
    /// attached. Scoped exposure narrows it to its domains.
    pub(crate) fn caller(&self, extensions: &Extensions) -> Result<Caller, McpError> {
        self.caller_from(extensions, |auth| auth.map(|a| a.caller.clone()))
    }

    /// [`caller`](Self::caller) for a request that is answered once: the
    /// caller moves out of the request instead of being copied.
    pub(crate) fn take_caller(&self, extensions: &mut Extensions) -> Result<Caller, McpError> {
        let taken = extensions
            .get_mut::<axum::http::request::Parts>()
            .and_then(|p| p.extensions.remove::<Authenticated>())
            .map(|a| a.caller);
        self.caller_from(extensions, |_| taken)
    }

    /// The tasks of this server's long-running calls.
    pub(crate) fn tasks(&self) -> &Arc<crate::tasks::Tasks> {
        &self.inner.tasks
    }

    /// The caller every request is served as, when it is fixed (stdio).
    pub(crate) fn fixed_caller(&self) -> Option<&Caller> {
        self.inner.caller.as_ref()
    }

    fn caller_from(
        &self,
        extensions: &Extensions,
        authenticated: impl FnOnce(Option<&Authenticated>) -> Option<Caller>,
    ) -> Result<Caller, McpError> {
        let mut caller = match &self.inner.caller {
            Some(caller) => caller.clone(),
            None => {
                let parts = extensions.get::<axum::http::request::Parts>();
                let Some(mut caller) = authenticated(parts.and_then(|p| p.extensions.get::<Authenticated>()))
                else {
                    return Err(McpError::invalid_request(
                        "this request carries no authenticated caller; send `Authorization: Bearer <key>`",
                        None,
                    ));
                };
                caller.session_id = parts
                    .and_then(|p| p.headers.get("mcp-session-id"))
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_owned);
                // A client may narrow its own session further (`/mcp?domains=a,b`).
                if let Some(domains) = crate::exposure::session_domains(parts.and_then(|p| p.uri.query())) {
                    crate::exposure::narrow(&mut caller, &domains);
                }
                caller
            }
        };
        if let Exposure::Scoped(domains) = &self.inner.exposure {
            crate::exposure::narrow(&mut caller, domains);
        }
        Ok(caller)
    }

    /// The MCP tools this caller sees.
    pub(crate) fn tools_for(&self, caller: &Caller) -> Vec<Tool> {
        if self.inner.exposure.is_direct() {
            self.inner.gateway.discover(caller, &Filter::default()).iter().filter_map(mcp_tool).collect()
        } else {
            self.inner.meta_tools.clone()
        }
    }

    /// The server instructions for this caller: the gateway's catalog, which
    /// is written for the meta-tools; in direct and scoped modes a note first
    /// says how its rules map onto tools that are called directly.
    pub fn instructions(&self, caller: &Caller) -> String {
        let catalog = self.inner.gateway.catalog(caller);
        if self.inner.exposure.is_direct() { format!("{DIRECT_NOTE}\n\n{catalog}") } else { catalog }
    }

    /// Run one `tools/call` to its envelope; `None` when the client cancelled it.
    async fn run(
        &self,
        caller: Caller,
        name: &str,
        args: Value,
        context: &RequestContext<RoleServer>,
        asker: Option<Arc<dyn toolgate_core::Asker>>,
        trace_id: String,
    ) -> Option<Envelope> {
        let mut ctx = ToolContext::new(caller).with_trace_id(trace_id);
        let channel = context.meta.get_progress_token().map(ProgressChannel::new);
        if let Some(channel) = &channel {
            ctx = ctx.with_progress(channel.sink());
        }
        if let Some(asker) = asker {
            ctx = ctx.with_asker(asker);
        }
        let call = self.invoke(&ctx, name, args);
        match channel {
            // Boxed as well: progress is rare, and its driver (notification
            // futures included) would otherwise make every call's future
            // larger by its size.
            Some(channel) => Box::pin(progress::drive(call, channel, &context.peer, &context.ct)).await,
            None => tokio::select! {
                biased;
                () = context.ct.cancelled() => None,
                envelope = call => Some(envelope),
            },
        }
    }

    /// The gateway's call of `name` (a tool in direct mode, a meta-tool
    /// otherwise). Dropping this future (on cancellation) drops the tool's
    /// future with it. Boxed: the gateway's future is large, and rmcp moves
    /// the handler's future (into a spawned task, through its layers) before it runs.
    pub(crate) fn invoke<'a>(
        &'a self,
        ctx: &'a ToolContext,
        name: &'a str,
        args: Value,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = Envelope> + Send + 'a>> {
        let gateway = &self.inner.gateway;
        let direct = self.inner.exposure.is_direct();
        Box::pin(async move {
            if direct {
                let args = unwrap_args(gateway, name, args);
                gateway.execute(ctx, name, args, &CallOptions::default()).await
            } else {
                gateway.call_meta(ctx, name, args).await
            }
        })
    }

    /// An envelope as an MCP result: the rendered text, then its images as
    /// image content, the envelope as structured content (without the
    /// images, which would double the bytes), `isError` when it failed.
    ///
    /// Takes the envelope by value: its result moves into the structured
    /// content instead of being deep-copied by `serde_json::to_value`.
    pub(crate) fn tool_result(&self, mut envelope: Envelope) -> CallToolResult {
        let mut content = vec![ContentBlock::text(self.inner.gateway.render_result(&envelope))];
        content.extend(
            std::mem::take(&mut envelope.images)
                .into_iter()
                .map(|i| ContentBlock::image(i.data, i.mime_type)),
        );
        content.extend(self.result_links(&envelope));
        let mut result =
            if envelope.success { CallToolResult::success(content) } else { CallToolResult::error(content) };
        result.structured_content = Some(structured(envelope));
        result
    }
}

impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerConfig {
        // The tasks extension is a 2026-07-28 one: `initialize` (older revisions) leaves it out.
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_tool_list_changed()
            .enable_prompts()
            .enable_tasks()
            .build();
        let mut capabilities = capabilities;
        self.federated_capabilities(&mut capabilities);
        self.own_capabilities(&mut capabilities);
        ServerConfig::new(capabilities).with_server_info(self.inner.info.clone())
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, McpError> {
        let caller = self.caller(&context.extensions)?;
        context.peer.set_peer_info(request.clone());
        let mut result = self.negotiate_initialize(&request)?;
        crate::tasks::legacy_capabilities(&mut result.capabilities);
        result.instructions = Some(self.instructions(&caller));
        Ok(result)
    }

    /// In direct and scoped modes the tool list follows the gateway's (tools
    /// of upstream MCP servers come and go): each change is announced to this
    /// session with `notifications/tools/list_changed`. The watcher ends with
    /// the session (when rmcp drops its handler), not at the next change:
    /// short sessions must not leave a task each behind.
    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        self.watch_federation(context.peer.clone());
        if !self.inner.exposure.is_direct() {
            return;
        }
        let mut changes = self.inner.gateway.tools_changed();
        changes.mark_unchanged();
        let mut ended = self.life.0.subscribe();
        let peer = context.peer.clone();
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    changed = changes.changed() => {
                        if changed.is_err()
                            || peer.is_transport_closed()
                            || peer.notify_tool_list_changed().await.is_err()
                        {
                            break;
                        }
                    }
                    // Nothing is ever sent: this resolves when the session's handler is dropped.
                    _ = ended.changed() => break,
                }
            }
        });
    }

    /// `subscriptions/listen` (2026-07-28), the way a modern client hears
    /// what `on_initialized`'s watcher tells a legacy session (the `listen` module).
    fn accepted_subscription_filter(&self, requested: &SubscriptionFilter) -> Option<SubscriptionFilter> {
        Some(self.accepted_filter(requested))
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), McpError> {
        self.listen_for(context).await
    }

    async fn discover(&self, context: RequestContext<RoleServer>) -> Result<DiscoverResult, McpError> {
        let caller = self.caller(&context.extensions)?;
        let info = self.get_info().with_instructions(self.instructions(&caller));
        Ok(DiscoverResult::from_server_info(self.supported_protocol_versions().into_owned(), info))
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        no_cursor(request.as_ref(), "tools/list")?;
        let caller = self.caller(&context.extensions)?;
        Ok(ListToolsResult::with_all_items(self.tools_for(&caller)))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        mut context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        if crate::tasks::wanted(self, &request, &context) {
            return crate::tasks::start(self, &self.inner.tasks, request, context).map(Into::into);
        }
        let caller = self.take_caller(&mut context.extensions)?;
        // Who can be asked: a 2026-07-28 client through input_required
        // rounds, a session's client through elicitation/create.
        let rounds = crate::ask::Rounds::for_request(&context, &request);
        let asker: Option<Arc<dyn toolgate_core::Asker>> = match &rounds {
            Some(rounds) => Some(rounds.clone()),
            None if self.inner.ask => {
                self.peer_asker(&context.peer).map(|a| Arc::new(a) as Arc<dyn toolgate_core::Asker>)
            }
            None => None,
        };
        let args = Value::Object(request.arguments.unwrap_or_default());
        let trace_id = uuid::Uuid::new_v4().simple().to_string();
        match self.run(caller, &request.name, args, &context, asker, trace_id.clone()).await {
            Some(envelope) => match rounds.and_then(|r| r.input_required(&request.name)) {
                Some(input_required) => Ok(input_required.into()),
                None => {
                    let mut result = self.tool_result(envelope);
                    result.content.extend(self.federated_content(&trace_id));
                    Ok(result.into())
                }
            },
            None => Err(cancelled()),
        }
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, McpError> {
        crate::tasks::get(self, &self.inner.tasks, &request.task_id, &context.extensions)
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        crate::tasks::cancel(self, &self.inner.tasks, &request.task_id, &context.extensions)
    }

    async fn update_task(
        &self,
        request: UpdateTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        crate::tasks::update(self, &self.inner.tasks, &request.task_id, &context.extensions)
    }

    async fn on_custom_request(
        &self,
        request: CustomRequest,
        _context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, McpError> {
        if let Some((method, shape)) = KNOWN_METHODS.iter().find(|(m, _)| *m == request.method) {
            return Err(McpError::invalid_params(
                format!("the params of `{method}` are malformed; send {shape}"),
                None,
            ));
        }
        Err(McpError::new(
            RpcCode::METHOD_NOT_FOUND,
            format!("unknown method `{}`", clip(&request.method)),
            None,
        ))
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        self.federated_resources(request.as_ref(), &context)
    }

    async fn list_resource_templates(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, McpError> {
        self.federated_templates(request.as_ref(), &context)
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        self.federated_read(request, &context).await.map(Into::into)
    }

    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.federated_subscribe(&request.uri, true, &context).await
    }

    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.federated_subscribe(&request.uri, false, &context).await
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, McpError> {
        self.federated_complete(request, &context).await
    }

    #[allow(deprecated)]
    async fn set_level(
        &self,
        request: rmcp::model::SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.federated_set_level(request)
    }

    async fn list_prompts(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, McpError> {
        no_cursor(request.as_ref(), "prompts/list")?;
        let caller = self.caller(&context.extensions)?;
        let mut prompts = self.prompt_list(&caller);
        prompts.extend(self.federated_prompts(&caller));
        Ok(ListPromptsResult::with_all_items(prompts))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, McpError> {
        let caller = self.caller(&context.extensions)?;
        if request.name != CATALOG_PROMPT
            && !request.name.starts_with(GUIDE_PROMPT_PREFIX)
            && let Some(answer) = self.federated_prompt(&caller, request.clone()).await
        {
            return answer.map(GetPromptResponse::from);
        }
        self.prompt(&caller, &request.name).map(GetPromptResponse::from)
    }
}

#[cfg(test)]
mod tests;
