//! The MCP face of a gateway: [`McpServer`], an rmcp [`ServerHandler`]
//! written by hand because the tool list is dynamic and per caller.
//!
//! Every request resolves its caller first (the fixed stdio identity, or the
//! identity the HTTP auth layer attached to the request) and every answer is
//! filtered by that caller through the gateway, the same way the catalog,
//! discovery and execution are.

use std::borrow::Cow;
use std::sync::{Arc, LazyLock};

use gateway::schema_gen::export;
use gateway::{CallOptions, Filter, Gateway};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, CustomRequest, CustomResult,
    DiscoverResult, ErrorCode as RpcCode, Extensions, GetPromptRequestParams, GetPromptResponse,
    GetPromptResult, Implementation, InitializeRequestParams, InitializeResult, JsonObject,
    ListPromptsResult, ListToolsResult, PaginatedRequestParams, Prompt, PromptMessage, Role,
    ServerCapabilities, ServerConfig, Tool, ToolAnnotations,
};
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use serde_json::Value;
use tool_core::{Caller, Effect, Envelope, ToolContext, ToolSpec};

use crate::Exposure;
use crate::progress::{self, ProgressChannel};

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
    pub(crate) key_id: String,
}

/// The envelope's JSON Schema, as every tool's `outputSchema`.
static ENVELOPE_SCHEMA: LazyLock<Arc<JsonObject>> = LazyLock::new(|| match Envelope::json_schema() {
    Value::Object(map) => Arc::new(map),
    _ => Arc::new(JsonObject::new()),
});

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
}

#[derive(Clone, Debug)]
struct Inner {
    gateway: Gateway,
    exposure: Exposure,
    caller: Option<Caller>,
    info: Implementation,
    meta_tools: Vec<Tool>,
}

impl McpServer {
    /// A server for `gateway`, exposing its tools as `exposure` says.
    pub fn new(gateway: Gateway, exposure: Exposure) -> Self {
        let meta_tools = gateway.meta_specs().iter().filter_map(mcp_tool).collect();
        let info = Implementation::new("toolgate", env!("CARGO_PKG_VERSION"));
        Self { inner: Arc::new(Inner { gateway, exposure, caller: None, info, meta_tools }) }
    }

    /// Serve every request as this caller (stdio, or an embedding that
    /// authenticates by other means). Over HTTP leave it unset: the caller
    /// then comes from the request's API key.
    pub fn with_caller(mut self, caller: Caller) -> Self {
        Arc::make_mut(&mut self.inner).caller = Some(caller);
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
    fn caller(&self, extensions: &Extensions) -> Result<Caller, McpError> {
        let mut caller = match &self.inner.caller {
            Some(caller) => caller.clone(),
            None => {
                let parts = extensions.get::<axum::http::request::Parts>();
                let Some(auth) = parts.and_then(|p| p.extensions.get::<Authenticated>()) else {
                    return Err(McpError::invalid_request(
                        "this request carries no authenticated caller; send `Authorization: Bearer <key>`",
                        None,
                    ));
                };
                let mut caller = auth.caller.clone();
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
    ) -> Option<Envelope> {
        let mut ctx = ToolContext::new(caller).with_trace_id(uuid::Uuid::new_v4().simple().to_string());
        let channel = context.meta.get_progress_token().map(ProgressChannel::new);
        if let Some(channel) = &channel {
            ctx = ctx.with_progress(channel.sink());
        }
        let gateway = &self.inner.gateway;
        let direct = self.inner.exposure.is_direct();
        // Dropping this future (on cancellation) drops the tool's future with it.
        let call = async {
            if direct {
                let args = unwrap_args(gateway, name, args);
                gateway.execute(&ctx, name, args, &CallOptions::default()).await
            } else {
                gateway.call_meta(&ctx, name, args).await
            }
        };
        match channel {
            Some(channel) => progress::drive(call, channel, &context.peer, &context.ct).await,
            None => tokio::select! {
                biased;
                () = context.ct.cancelled() => None,
                envelope = call => Some(envelope),
            },
        }
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
        let mut result =
            if envelope.success { CallToolResult::success(content) } else { CallToolResult::error(content) };
        result.structured_content = Some(structured(envelope));
        result
    }

    fn prompt_list(&self, caller: &Caller) -> Vec<Prompt> {
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

    fn prompt(&self, caller: &Caller, name: &str) -> Result<GetPromptResult, McpError> {
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

/// The envelope as `structuredContent`: the same JSON as
/// [`Envelope::to_value`], but the result (the bulk of it) is moved, not
/// copied; only the small parts go through serde.
fn structured(envelope: Envelope) -> Value {
    let to_value = |value: Result<Value, serde_json::Error>| value.unwrap_or(Value::Null);
    let mut map = JsonObject::with_capacity(5);
    map.insert("success".to_owned(), Value::Bool(envelope.success));
    map.insert("result".to_owned(), envelope.result.unwrap_or(Value::Null));
    map.insert("error".to_owned(), envelope.error.map_or(Value::Null, |e| to_value(serde_json::to_value(e))));
    map.insert("signals".to_owned(), to_value(serde_json::to_value(envelope.signals)));
    map.insert("metadata".to_owned(), to_value(serde_json::to_value(envelope.metadata)));
    Value::Object(map)
}

/// At most 100 characters of something a client sent, for an error message.
fn clip(text: &str) -> String {
    let mut out: String = text.chars().take(100).collect();
    if out.len() < text.len() {
        out.push('…');
    }
    out
}

/// A tool spec as an MCP tool: schema, annotations from the effect, the
/// envelope as output schema.
///
/// A schema whose root is a union (a route table's `oneOf` per operation) is
/// published wrapped under one `request` property, as the Anthropic export
/// does: clients that forward MCP schemas to model APIs (which refuse a root
/// union) can then use the tool; [`unwrap_args`] undoes it on the way in.
pub(crate) fn mcp_tool(spec: &ToolSpec) -> Option<Tool> {
    let wrapped;
    let published = if export::needs_wrapper(&spec.input_schema) {
        wrapped = export::anthropic(spec)["input_schema"].take();
        &wrapped
    } else {
        &spec.input_schema
    };
    let Value::Object(schema) = published else {
        return None;
    };
    let annotations = ToolAnnotations::new()
        .read_only(spec.effect.is_read())
        .destructive(matches!(spec.effect, Effect::Write { idempotent: false }))
        .idempotent(spec.effect.is_retry_safe());
    Some(
        Tool::new(
            Cow::Owned(spec.name.clone()),
            Cow::Owned(spec.description.clone()),
            Arc::new(schema.clone()),
        )
        .with_raw_output_schema(ENVELOPE_SCHEMA.clone())
        .with_annotations(annotations),
    )
}

/// The JSON object `tools/list` carries for a tool, exactly as this server
/// sends it (for measuring what a model reads, e.g. the token budget).
pub fn tool_listing(spec: &ToolSpec) -> Value {
    mcp_tool(spec).and_then(|tool| serde_json::to_value(tool).ok()).unwrap_or(Value::Null)
}

/// Arguments for a tool whose schema [`mcp_tool`] published wrapped:
/// `{"request": {...}}` becomes `{...}`; anything else is passed as is
/// (a client may also send the unwrapped form).
fn unwrap_args(gateway: &gateway::Gateway, name: &str, args: Value) -> Value {
    match gateway.spec(name) {
        Some(spec) if export::needs_wrapper(&spec.input_schema) => export::unwrap(args),
        _ => args,
    }
}

/// Methods whose params rmcp could not read: it hands them over as custom
/// requests, which would otherwise be answered "method not found".
const KNOWN_METHODS: &[(&str, &str)] = &[
    ("initialize", "{\"protocolVersion\": string, \"capabilities\": object, \"clientInfo\": object}"),
    ("tools/list", "{\"cursor\"?: string}"),
    ("tools/call", "{\"name\": string, \"arguments\"?: object}"),
    ("prompts/list", "{\"cursor\"?: string}"),
    ("prompts/get", "{\"name\": string, \"arguments\"?: object}"),
    ("ping", "{}"),
];

/// The JSON-RPC error for a request the client cancelled (it is not
/// delivered to a client that follows the spec; it ends the handler).
fn cancelled() -> McpError {
    McpError::new(RpcCode::INVALID_REQUEST, "the request was cancelled by the client", None)
}

impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerConfig {
        let capabilities =
            ServerCapabilities::builder().enable_tools().enable_tool_list_changed().enable_prompts().build();
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
        result.instructions = Some(self.instructions(&caller));
        Ok(result)
    }

    /// In direct and scoped modes the tool list follows the gateway's (tools
    /// of upstream MCP servers come and go): each change is announced to this
    /// session with `notifications/tools/list_changed`. The watcher ends with
    /// the session's transport.
    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        if !self.inner.exposure.is_direct() {
            return;
        }
        let mut changes = self.inner.gateway.tools_changed();
        changes.mark_unchanged();
        let peer = context.peer.clone();
        tokio::spawn(async move {
            while changes.changed().await.is_ok() {
                if peer.is_transport_closed() || peer.notify_tool_list_changed().await.is_err() {
                    break;
                }
            }
        });
    }

    async fn discover(&self, context: RequestContext<RoleServer>) -> Result<DiscoverResult, McpError> {
        let caller = self.caller(&context.extensions)?;
        let info = self.get_info().with_instructions(self.instructions(&caller));
        Ok(DiscoverResult::from_server_info(self.supported_protocol_versions().into_owned(), info))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let caller = self.caller(&context.extensions)?;
        Ok(ListToolsResult::with_all_items(self.tools_for(&caller)))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let caller = self.caller(&context.extensions)?;
        let args = Value::Object(request.arguments.unwrap_or_default());
        match self.run(caller, &request.name, args, &context).await {
            Some(envelope) => Ok(self.tool_result(envelope).into()),
            None => Err(cancelled()),
        }
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

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, McpError> {
        let caller = self.caller(&context.extensions)?;
        Ok(ListPromptsResult::with_all_items(self.prompt_list(&caller)))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, McpError> {
        let caller = self.caller(&context.extensions)?;
        self.prompt(&caller, &request.name).map(GetPromptResponse::from)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn images_become_image_content_beside_the_envelope() {
        let server = McpServer::new(Gateway::builder().build().unwrap(), Exposure::Direct);
        let png = tool_core::Image::png(&[0x89, b'P', b'N', b'G']);
        let envelope =
            Envelope::ok(json!({"points": 3}), Vec::new(), tool_core::Metadata::now("render_chart", 1.0, 1))
                .with_images(vec![png.clone()]);
        let result = server.tool_result(envelope.clone());
        assert_eq!(result.content.len(), 2);
        let image = result.content[1].as_image().expect("the second block is an image");
        assert_eq!((image.mime_type.as_str(), image.data.as_str()), ("image/png", png.data.as_str()));
        let structured = result.structured_content.unwrap();
        assert_eq!(structured["result"]["points"], 3);
        assert!(structured.get("images").is_none(), "the bytes are not sent twice");
        assert_eq!(result.is_error, Some(false));
    }

    #[test]
    fn annotations_follow_the_effect() {
        let schema = json!({"type": "object", "properties": {}, "additionalProperties": false});
        let check = |effect: Effect, read_only: bool, destructive: bool, idempotent: bool| {
            let spec = ToolSpec::new("query_thing", "Reads a thing.", schema.clone()).with_effect(effect);
            let tool = mcp_tool(&spec).unwrap();
            let a = tool.annotations.unwrap();
            assert_eq!(a.read_only_hint, Some(read_only), "{effect:?}");
            assert_eq!(a.destructive_hint, Some(destructive), "{effect:?}");
            assert_eq!(a.idempotent_hint, Some(idempotent), "{effect:?}");
            assert_eq!(Value::Object((*tool.output_schema.unwrap()).clone()), Envelope::json_schema());
        };
        check(Effect::Read, true, false, true);
        check(Effect::Write { idempotent: true }, false, false, true);
        check(Effect::Write { idempotent: false }, false, true, false);
    }

    #[test]
    fn structured_content_is_the_envelope_as_json() {
        use tool_core::{ErrorCode, Metadata, Signal, ToolError};
        let signal = Signal::Unavailable { reason: "off".into(), how_to_enable: "turn it on".into() };
        let mut metadata = Metadata::now("query_weather", 1.5, 1);
        metadata.total = Some(7);
        let ok = Envelope::ok(json!({"city": "Oslo", "n": [1, 2]}), vec![signal.clone()], metadata);
        let failed = Envelope::err(
            ToolError::new(ErrorCode::InvalidParams, "bad city").with_details(json!({"field": "city"})),
            Metadata::now("query_weather", 0.2, 0),
        );
        for envelope in [ok, failed] {
            let expected = envelope.to_value();
            let got = structured(envelope);
            assert_eq!(got, expected);
            // The same key order too (serde_json keeps insertion order here).
            assert_eq!(got.to_string(), expected.to_string());
        }
    }

    #[test]
    fn clip_keeps_short_text_and_cuts_long_text() {
        assert_eq!(clip("catalog"), "catalog");
        let long = "x".repeat(500);
        assert_eq!(clip(&long).chars().count(), 101);
    }
}
