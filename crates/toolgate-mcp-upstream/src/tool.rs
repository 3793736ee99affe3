//! [`UpstreamTool`]: one tool of another MCP server, called through the
//! gateway like any other; its MCP result becomes our output or error.

use std::sync::Arc;

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, CancelledNotification,
    CancelledNotificationParam, ClientNotification, ClientRequest, ContentBlock, GetExtensions,
    ProgressToken, RequestId, ServerResult,
};
use rmcp::service::{PeerRequestOptions, ServiceError};
use rmcp::transport::streamable_http_client::StreamableHttpError;
use rmcp::{Peer, RoleClient};
use serde_json::{Value, json};
use toolgate_core::{
    ErrorCode, FailureKind, Image, Tool, ToolContext, ToolError, ToolOutput, ToolResult, ToolSpec,
    WRITE_OUTCOME_UNKNOWN,
};

use crate::CALLER_META_KEY;
use crate::direct::{Direct, Failure, Route};
use crate::identity::{CallToken, CallerHeaders};
use crate::link::{Link, State};

/// How long a call waits for a connection to an upstream that is down before it answers
/// UNAVAILABLE: long enough for a restarted local upstream's handshake.
const UP_WAIT: std::time::Duration = std::time::Duration::from_secs(1);

/// A tool of an upstream server, registered under our name for it.
pub(crate) struct UpstreamTool {
    pub(crate) spec: ToolSpec,
    /// Its name on the upstream.
    pub(crate) remote: String,
    pub(crate) link: Arc<Link>,
    /// Where the call's `Authorization: Bearer` token comes from ([`crate::UpstreamConfig::auth`]).
    pub(crate) auth: Option<toolgate_http::TokenProvider>,
}

#[async_trait::async_trait]
impl Tool for UpstreamTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    async fn call(&self, ctx: &ToolContext, params: Value) -> ToolResult {
        let (peer, generation) = match self.link.current() {
            (State::Up(peer), generation) if !peer.is_transport_closed() => (peer, generation),
            // Down: the supervisor is asked to connect now, and the call waits a moment for it.
            _ => match self.link.wait_up(UP_WAIT).await {
                Some(up) => up,
                None => {
                    return Err(match self.link.state() {
                        State::Down(reason) => self.unavailable(&reason),
                        State::Up(_) => self.unavailable("the connection just closed"),
                    });
                }
            },
        };
        if let Some(direct) = self.link.direct()
            && let Some(route) = direct.route()
            && let Some(result) = self.call_direct(ctx, &params, (&peer, generation), &direct, &route).await
        {
            return result;
        }
        let mut request = CallToolRequestParams::new(self.remote.clone());
        request.arguments = match params {
            Value::Object(map) => Some(map),
            _ => None,
        };
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(request));
        let (request, options) = as_caller(&self.link, &ctx.caller, request).await?;
        // An error here means the request never reached the connection's writer.
        let handle = peer
            .send_request_with_option(request, options)
            .await
            .map_err(|e| self.failed(&e, generation, Cut::NotSent("the connection had just closed")))?;
        // Progress the upstream reports for this request goes to our caller;
        // if our caller goes away (cancels, times out) the upstream is told.
        let _route = self.link.route_progress(&handle.progress_token, ctx.progress.clone());
        // A question the upstream asks during the call goes to our caller.
        let _in_flight = self.link.track_call(&handle.id, ctx.asker.clone());
        let mut guard = CancelOnDrop { peer: peer.clone(), id: Some(handle.id.clone()) };
        let answer = handle.await_response().await;
        guard.id = None;
        // rmcp hands each notification to a task of its own: let those spawned before the
        // answer (the last progress reports) run before the route closes.
        tokio::task::yield_now().await;
        match answer {
            Ok(ServerResult::CallToolResult(result)) => self.answered(ctx, result),
            Ok(_) => Err(self.not_a_result(None)),
            Err(ServiceError::McpError(error)) => Err(mcp_refusal(&error)),
            Err(error) => {
                let cut = cut_of(&error);
                Err(self.failed(&error, generation, cut))
            }
        }
    }
}

impl UpstreamTool {
    /// The call by toolgate's own POST ([`crate::direct`]); `None`: it ran nothing and goes
    /// the usual way.
    async fn call_direct(
        &self,
        ctx: &ToolContext,
        params: &Value,
        (peer, generation): (&Peer<RoleClient>, u64),
        direct: &Direct,
        route: &Route,
    ) -> Option<ToolResult> {
        let config = &self.link.config;
        let token = match &config.auth {
            Some(auth) => match auth.token(&ctx.caller).await {
                Ok(token) => Some(token),
                Err(error) => return Some(Err(error)),
            },
            None => None,
        };
        let caller = (config.identity == crate::IdentityMode::Meta).then(
            || json!({"user_id": ctx.caller.user_id, "role": ctx.caller.role, "tenant": ctx.caller.tenant}),
        );
        let names = crate::identity::names_of(config);
        let headers =
            if names.is_empty() { Vec::new() } else { CallerHeaders::new(&names, &ctx.caller).pairs() };
        let request = crate::direct::Request {
            name: &self.remote,
            arguments: params.as_object(),
            caller,
            token: token.as_ref().map(|t| t.expose()),
            headers: &headers,
        };
        let id = direct.next_id();
        let _route = self.link.route_progress(&ProgressToken(id.clone()), ctx.progress.clone());
        let _in_flight = self.link.track_call(&id, ctx.asker.clone());
        let mut guard = CancelOnDrop { peer: peer.clone(), id: Some(id.clone()) };
        let answer = direct.call(&self.link, route, &id, request).await;
        guard.id = None;
        Some(match answer {
            Ok(result) => self.answered(ctx, result),
            Err(Failure::Again) => return None,
            Err(Failure::Refused(status)) => Err(self.refused(status)),
            Err(Failure::Mcp(error)) => Err(mcp_refusal(&error)),
            Err(Failure::NotToolResult(what)) => Err(self.not_a_result(Some(what))),
            Err(Failure::Busy(retry_after)) => Err(self.busy(retry_after)),
            Err(Failure::Rejected(status)) => Err(self.rejected(status)),
            Err(Failure::NotSent(reason)) => {
                tracing::warn!(upstream = %self.link.name, tool = %self.spec.name, reason, "upstream call not sent");
                self.link.failed(generation);
                Err(self.unavailable(reason))
            }
            Err(Failure::Unanswered(what)) => {
                tracing::warn!(upstream = %self.link.name, tool = %self.spec.name, what, "upstream call unanswered");
                self.link.failed(generation);
                Err(self.unanswered(what, true))
            }
            Err(Failure::Failed(status)) => {
                tracing::warn!(upstream = %self.link.name, tool = %self.spec.name, status, "upstream call failed");
                Err(self.unanswered(&format!("answered HTTP {status}"), false))
            }
        })
    }

    /// A tool result of the upstream as ours; what the envelope cannot carry goes beside
    /// it to the MCP server.
    fn answered(&self, ctx: &ToolContext, result: CallToolResult) -> ToolResult {
        let extra = result
            .content
            .iter()
            .filter(|block| !matches!(block, ContentBlock::Text(_) | ContentBlock::Image(_)))
            .cloned()
            .collect();
        crate::federation::keep_content(&ctx.trace_id, extra);
        convert(&self.spec.name, result)
    }

    /// The answer is not a tool result (`what` it was, when known).
    fn not_a_result(&self, what: Option<&str>) -> ToolError {
        let what = what.map(|what| format!(" ({what})")).unwrap_or_default();
        ToolError::new(
            ErrorCode::ExecutionError,
            format!("`{}` answered something that is not a tool result{what}", self.spec.name),
        )
        .backend_failure_of(self.link.name.as_str(), FailureKind::Protocol)
    }
}

/// The upstream's JSON-RPC error for a call.
fn mcp_refusal(error: &rmcp::ErrorData) -> ToolError {
    ToolError::new(
        ErrorCode::ExecutionError,
        format!("the upstream refused the call: {}", clip(&error.message)),
    )
}

/// `request` as `caller` sends it to `link`'s upstream, as its identity mode says: the
/// caller in `_meta`, as headers, and the token for the call (fetched first: a source that
/// cannot give one fails here, and nothing is sent).
pub(crate) async fn as_caller(
    link: &Link,
    caller: &toolgate_core::Caller,
    mut request: ClientRequest,
) -> Result<(ClientRequest, PeerRequestOptions), ToolError> {
    let config = &link.config;
    let mut options = PeerRequestOptions::no_options();
    if config.identity == crate::IdentityMode::Meta {
        let mut meta = rmcp::model::RequestMetaObject::default();
        meta.insert(
            CALLER_META_KEY.into(),
            json!({"user_id": caller.user_id, "role": caller.role, "tenant": caller.tenant}),
        );
        options = options.with_meta(meta);
    }
    let headers = crate::identity::names_of(config);
    let extensions = request.extensions_mut();
    if !headers.is_empty() {
        extensions.insert(CallerHeaders::new(&headers, caller));
    }
    if let Some(auth) = &config.auth {
        let token = auth.token(caller).await?;
        extensions.insert(CallToken(token));
    }
    Ok((request, options))
}

/// How a call failed on the connection: provably before the request left toolgate, or
/// after it may have reached the upstream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Cut {
    /// Nothing reached the upstream; the reason, in plain words.
    NotSent(&'static str),
    /// The request was handed to the connection and no answer came: the upstream may
    /// have run it. What happened, in plain words.
    Unanswered(&'static str),
}

/// What a transport failure after the request was queued means. A send that failed is
/// "not sent" only when provably nothing left: a stdio pipe that refused the write (a
/// child never acts on a request it did not receive whole), or an HTTP connection that
/// could not be opened. Anything else (the connection closed while we waited, an HTTP
/// exchange that broke after it was opened) may have reached the upstream.
fn cut_of(error: &ServiceError) -> Cut {
    const CLOSED: &str = "closed the connection before answering";
    match error {
        ServiceError::TransportSend(error) => {
            let inner: &(dyn std::error::Error + 'static) = error.error.as_ref();
            if inner.downcast_ref::<std::io::Error>().is_some() {
                return Cut::NotSent("its input was closed when the request was written");
            }
            if let Some(StreamableHttpError::Client(client)) =
                inner.downcast_ref::<StreamableHttpError<reqwest::Error>>()
                && client.is_connect()
            {
                return Cut::NotSent("the connection could not be opened");
            }
            Cut::Unanswered("broke the connection while the request was being sent")
        }
        ServiceError::Timeout { .. } => Cut::Unanswered("did not answer in time"),
        _ => Cut::Unanswered(CLOSED),
    }
}

/// The status of an answer refusing the call's credential (HTTP 401 or 403, with or without
/// a `WWW-Authenticate` challenge): the upstream answered, and did not run the call.
fn refused_status(error: &ServiceError) -> Option<u16> {
    let ServiceError::TransportSend(error) = error else { return None };
    let inner: &(dyn std::error::Error + 'static) = error.error.as_ref();
    match inner.downcast_ref::<StreamableHttpError<reqwest::Error>>()? {
        StreamableHttpError::AuthRequired(_) => Some(401),
        StreamableHttpError::InsufficientScope(_) => Some(403),
        StreamableHttpError::UnexpectedServerResponse(text) => {
            [401, 403].into_iter().find(|status| text.starts_with(&format!("HTTP {status} ")))
        }
        _ => None,
    }
}

impl UpstreamTool {
    /// A call that failed on the connection: refused credentials are said so (the connection
    /// is fine, nothing ran); anything else is a cut ([`UpstreamTool::cut`]).
    fn failed(&self, error: &ServiceError, generation: u64, cut: Cut) -> ToolError {
        match refused_status(error) {
            Some(status) => self.refused(status),
            None => self.cut(error, generation, cut),
        }
    }

    /// The upstream refused the call's credential (HTTP 401/403) and ran nothing. Whose
    /// problem that is depends on whose credential it was: the caller's own exchanged token
    /// is theirs (sign in again); toolgate's (`headers`, a service token) is an operator's.
    fn refused(&self, status: u16) -> ToolError {
        let (name, tool) = (&self.link.name, &self.spec.name);
        tracing::warn!(upstream = %name, tool = %tool, status, "upstream refused the call's credential");
        let details = json!({"upstream": name, "status": status, "sent": true});
        if self.auth.as_ref().is_some_and(|auth| auth.is_callers()) {
            return ToolError::new(
                ErrorCode::PermissionDenied,
                format!(
                    "`{tool}`: the MCP server `{name}` refused the caller's token (HTTP {status}) and did not run the call. Do not retry; tell the user to sign in again or ask an operator to check their access to it."
                ),
            )
            .with_details(details)
            .transient(false);
        }
        ToolError::new(
            ErrorCode::ExecutionError,
            format!(
                "`{tool}`: the MCP server `{name}` refused the credential toolgate is configured with (HTTP {status}) and did not run the call. Do not retry and do not ask the user to sign in; an operator must check this upstream's `headers` or `auth`."
            ),
        )
        .with_details(details)
        .transient(false)
    }

    /// The call was not sent: the upstream is not connected (`reason` says why, in plain
    /// words). Trying again later is safe, for a write too.
    fn unavailable(&self, reason: &str) -> ToolError {
        ToolError::new(
            ErrorCode::Unavailable,
            format!(
                "the MCP server `{}` behind `{}` is not reachable ({reason}); the call was not sent. \
                 It is being reconnected: tell the user and try again later.",
                self.link.name, self.spec.name
            ),
        )
        .with_details(json!({"upstream": self.link.name, "reason": reason, "sent": false}))
        .backend_failure_of(self.link.name.as_str(), FailureKind::Unavailable)
    }

    /// The connection broke during the call: ask for a reconnection now, and tell the
    /// model what it means. A write that may have reached the upstream is never called
    /// unsent, and never retryable: only the upstream knows whether it was applied.
    fn cut(&self, error: &ServiceError, generation: u64, cut: Cut) -> ToolError {
        tracing::warn!(upstream = %self.link.name, tool = %self.spec.name, %error, ?cut, "upstream call lost");
        self.link.failed(generation);
        match cut {
            Cut::NotSent(reason) => self.unavailable(reason),
            Cut::Unanswered(what) => self.unanswered(what, true),
        }
    }

    /// The request may have reached the upstream and no answer came (`what` happened, in
    /// plain words; `reconnecting`: the connection is being made again).
    fn unanswered(&self, what: &str, reconnecting: bool) -> ToolError {
        let (name, tool) = (&self.link.name, &self.spec.name);
        let details = json!({"upstream": name, "reason": format!("the upstream {what}"), "sent": true});
        if self.spec.effect.is_read() {
            let again = if reconnecting { "; it is being reconnected" } else { "" };
            return ToolError::new(
                ErrorCode::Unavailable,
                format!(
                    "`{tool}`: the MCP server `{name}` {what}{again}. \
                     This read changed nothing: try it again in a moment."
                ),
            )
            .with_details(details)
            .backend_failure_of(name.as_str(), FailureKind::Unavailable);
        }
        ToolError::new(
            ErrorCode::Unavailable,
            format!(
                "`{tool}`: the MCP server `{name}` {what}, after the request had reached it. \
                 {WRITE_OUTCOME_UNKNOWN}"
            ),
        )
        .with_details(details)
        .transient(false)
        .backend_failure_of(name.as_str(), FailureKind::Unavailable)
    }

    /// The upstream limits calls (HTTP 429) and ran none: safe to try again later.
    fn busy(&self, retry_after: Option<String>) -> ToolError {
        let (name, tool) = (&self.link.name, &self.spec.name);
        let when = match retry_after.as_deref().and_then(|s| s.trim().parse::<u64>().ok()) {
            Some(seconds) => format!("in {seconds} s"),
            None => "later".to_owned(),
        };
        ToolError::new(
            ErrorCode::Unavailable,
            format!(
                "`{tool}`: the MCP server `{name}` is limiting calls (HTTP 429) and did not run this one; try it again {when}."
            ),
        )
        .with_details(json!({"upstream": name, "status": 429, "retry_after": retry_after, "sent": true}))
        .backend_failure_of(name.as_str(), FailureKind::Unavailable)
    }

    /// The upstream refused the request itself (an HTTP 4xx other than a refused
    /// credential or a limit) and ran nothing: trying again will not help.
    fn rejected(&self, status: u16) -> ToolError {
        let (name, tool) = (&self.link.name, &self.spec.name);
        ToolError::new(
            ErrorCode::ExecutionError,
            format!(
                "`{tool}`: the MCP server `{name}` refused the request (HTTP {status}) without running it. Do not retry; an operator must check this upstream."
            ),
        )
        .with_details(json!({"upstream": name, "status": status, "sent": true}))
        .transient(false)
        .backend_failure_of(name.as_str(), FailureKind::Protocol)
    }
}

/// Sends `notifications/cancelled` for a request abandoned before its answer.
struct CancelOnDrop {
    peer: Peer<RoleClient>,
    id: Option<RequestId>,
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        let Some(id) = self.id.take() else { return };
        let peer = self.peer.clone();
        let notification = ClientNotification::CancelledNotification(CancelledNotification::new(
            CancelledNotificationParam::new(Some(id), Some("the caller cancelled".into())),
        ));
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                let _ = peer.send_notification(notification).await;
            });
        }
    }
}

/// An MCP tool result as our output: `isError` is `EXECUTION_ERROR` with the
/// upstream's text; `structuredContent` is the result; otherwise the text
/// (parsed when it is JSON); images are kept beside it.
pub(crate) fn convert(tool: &str, result: CallToolResult) -> ToolResult {
    let mut texts = Vec::new();
    let mut images = Vec::new();
    for block in &result.content {
        match block {
            ContentBlock::Text(text) => texts.push(text.text.clone()),
            ContentBlock::Image(image) => {
                images.push(Image::from_base64(image.mime_type.clone(), image.data.clone()));
            }
            _ => {}
        }
    }
    let text = texts.join("\n");
    if result.is_error == Some(true) {
        let message =
            if text.trim().is_empty() { format!("`{tool}` failed without saying why") } else { clip(&text) };
        return Err(ToolError::new(ErrorCode::ExecutionError, message));
    }
    let value = match result.structured_content {
        Some(value) => value,
        None => serde_json::from_str(&text).unwrap_or(Value::String(text)),
    };
    let mut output = ToolOutput::json(value);
    output.images = images;
    Ok(output)
}

/// At most 2,000 characters of an upstream's message.
fn clip(text: &str) -> String {
    let mut out: String = text.chars().take(2000).collect();
    if out.len() < text.len() {
        out.push('…');
    }
    out
}
