//! What an upstream sends toolgate besides answers: its notifications (progress, logs,
//! changed lists) and its requests (elicitation, sampling, roots), for the call they
//! belong to. [`Handler`] is rmcp's client side of a connection; the direct path of a tool
//! call ([`crate::direct`]) hands what arrives on its own event stream to the same
//! [`Link`] functions, so both answer alike.

use std::future::Future;
use std::sync::Arc;

use rmcp::model::{
    ClientCapabilities, ClientConfig, CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams,
    ElicitResult, ElicitationAction, ElicitationCapability, FormElicitationCapability, Implementation,
    ListRootsResult, LoggingMessageNotificationParam, ProgressNotificationParam, ProtocolVersion,
    ResourceUpdatedNotificationParam,
};
use rmcp::service::{InboundStreamOrigin, NotificationContext, RequestContext};
use rmcp::{ClientHandler, ErrorData as McpError, RoleClient};
use tokio::sync::mpsc;
use toolgate_core::{Answer, Question};

use crate::link::{Call, Link};

/// The answer to a question nobody can be asked: an error, not a decline,
/// because nobody said no (an upstream toolgate then gives its model the
/// `need_confirm` signal instead of "the user declined").
pub(crate) fn cannot_ask(why: &str) -> McpError {
    McpError::new(
        rmcp::model::ErrorCode::INVALID_REQUEST,
        format!("toolgate cannot put this question to the person behind the call: {why}"),
        None,
    )
}

impl Link {
    /// Pass an upstream's request to the client of `call`, the call it came with (or why
    /// none can be chosen), until the upstream withdraws it (`withdrawn`), the call ends or
    /// the ask timeout passes.
    pub(crate) async fn relay(
        &self,
        call: Result<Call, &'static str>,
        method: &str,
        params: serde_json::Value,
        withdrawn: impl Future<Output = ()>,
    ) -> Result<serde_json::Value, McpError> {
        let upstream = self.name.as_str();
        let call = call.map_err(|why| {
            tracing::warn!(upstream, method, why, "upstream request nobody can answer");
            cannot_ask(why)
        })?;
        let Some(asker) = call.asker else {
            return Err(cannot_ask("the caller's client cannot be asked"));
        };
        let mut ended = call.ended;
        let timeout = self.ask_timeout;
        let answer = tokio::select! {
            answer = tokio::time::timeout(timeout, asker.relay(method, params)) => answer
                .unwrap_or_else(|_| Err(format!("no answer within {} s", timeout.as_secs()))),
            () = withdrawn => Err("the upstream withdrew the request".to_owned()),
            _ = ended.changed() => Err("the call ended".to_owned()),
        };
        tracing::info!(
            upstream,
            method,
            answered = answer.is_ok(),
            "upstream request passed to the caller's client"
        );
        answer.map_err(|why| cannot_ask(&why))
    }

    /// The upstream's progress for one of our requests, to the route of its token.
    pub(crate) fn progress(&self, params: ProgressNotificationParam) {
        if let Some(throttle) = self.sink(&params.progress_token) {
            throttle.report((params.progress, params.total, params.message));
        }
    }

    /// A log message during `call` goes to that call's client (which filters it by the
    /// level it set); one that no call can be tied to goes to toolgate's log.
    pub(crate) async fn log(
        &self,
        call: Result<Call, &'static str>,
        params: LoggingMessageNotificationParam,
    ) {
        match call {
            Ok(Call { asker: Some(asker), .. }) => {
                let params = serde_json::to_value(&params).unwrap_or_default();
                asker.notify("notifications/message", params).await;
            }
            _ => tracing::debug!(upstream = %self.name, level = ?params.level, "upstream log message"),
        }
    }

    /// The upstream asks the person behind `call`: through that call's asker, within the
    /// ask timeout. No answer in time is a decline; a question nobody can be asked (no
    /// call tied to it, a client without elicitation or one that could not take it) is an
    /// error, since nobody said no. Its content is never logged.
    pub(crate) async fn elicit(
        &self,
        call: Result<Call, &'static str>,
        request: ElicitRequestParams,
        withdrawn: impl Future<Output = ()>,
    ) -> Result<ElicitResult, McpError> {
        let upstream = self.name.as_str();
        let ElicitRequestParams::FormElicitationParams { message, requested_schema, .. } = request else {
            tracing::info!(
                upstream,
                outcome = "declined",
                "upstream asked a question of a mode toolgate does not pass on"
            );
            return Ok(ElicitResult::new(ElicitationAction::Decline));
        };
        let message_len = message.chars().count();
        let call = match call {
            Ok(call) => call,
            Err(why) => {
                tracing::warn!(
                    upstream,
                    message_len,
                    outcome = "refused",
                    why,
                    "upstream asked a question nobody can be asked"
                );
                return Err(cannot_ask(why));
            }
        };
        let Some(asker) = call.asker else {
            tracing::info!(
                upstream,
                message_len,
                outcome = "refused",
                "upstream asked a question; the caller's client cannot be asked"
            );
            return Err(cannot_ask("the caller's client cannot be asked"));
        };
        let schema = serde_json::to_value(&requested_schema).unwrap_or_default();
        let question = Question { message, schema };
        let mut ended = call.ended;
        let timeout = self.ask_timeout;
        let answer = tokio::select! {
            answer = tokio::time::timeout(timeout, asker.ask(&question)) => answer
                .unwrap_or_else(|_| Answer::Unanswered(format!("no answer within {} s", timeout.as_secs()))),
            () = withdrawn => Answer::Unanswered("the upstream withdrew the question".to_owned()),
            _ = ended.changed() => Answer::Unanswered("the call ended".to_owned()),
        };
        let (result, outcome) = match answer {
            Answer::Accept(content) => {
                (ElicitResult::new(ElicitationAction::Accept).with_content(content), "accepted")
            }
            Answer::Decline => (ElicitResult::new(ElicitationAction::Decline), "declined"),
            Answer::Cancel => (ElicitResult::new(ElicitationAction::Cancel), "cancelled"),
            Answer::Unanswered(_) => (ElicitResult::new(ElicitationAction::Decline), "unanswered, declined"),
            Answer::Unreachable(why) => {
                tracing::info!(
                    upstream,
                    message_len,
                    outcome = "unreachable",
                    "upstream asked the caller a question"
                );
                return Err(cannot_ask(&why));
            }
        };
        tracing::info!(upstream, message_len, outcome, "upstream asked the caller a question");
        Ok(result)
    }
}

/// The rmcp client side of one connection.
#[derive(Clone)]
pub(crate) struct Handler {
    pub(crate) link: Arc<Link>,
    /// Tells the supervisor to read a list again.
    pub(crate) refresh: mpsc::UnboundedSender<Refresh>,
}

/// Which list of the upstream changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refresh {
    Tools,
    /// Prompts, resources or resource templates.
    Surface,
}

impl Handler {
    /// Pass an upstream's request to the client of the call it came with ([`Link::relay`]).
    async fn relay(
        &self,
        method: &str,
        params: serde_json::Value,
        context: &RequestContext<RoleClient>,
    ) -> Result<serde_json::Value, McpError> {
        let call = self.link.call_for(context.extensions.get::<InboundStreamOrigin>());
        self.link.relay(call, method, params, context.ct.cancelled()).await
    }
}

impl ClientHandler for Handler {
    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.link.progress(params);
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        tracing::info!(upstream = %self.link.name, "upstream says its tool list changed");
        let _ = self.refresh.send(Refresh::Tools);
    }

    async fn on_prompt_list_changed(&self, _context: NotificationContext<RoleClient>) {
        tracing::info!(upstream = %self.link.name, "upstream says its prompt list changed");
        let _ = self.refresh.send(Refresh::Surface);
    }

    async fn on_resource_list_changed(&self, _context: NotificationContext<RoleClient>) {
        tracing::info!(upstream = %self.link.name, "upstream says its resource list changed");
        let _ = self.refresh.send(Refresh::Surface);
    }

    async fn on_resource_updated(
        &self,
        params: ResourceUpdatedNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let _ = self.link.signals.updated.send(params.uri);
    }

    /// A log message during a call goes to that call's client ([`Link::log`]).
    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        context: NotificationContext<RoleClient>,
    ) {
        self.link.log(self.link.call_for(context.extensions.get::<InboundStreamOrigin>()), params).await;
    }

    /// The upstream asks the client behind the call for a model's answer: passed to that
    /// client as it is, within the ask timeout; one that cannot be tied to a call, or
    /// whose client has no sampling, gets an error.
    async fn create_message(
        &self,
        params: CreateMessageRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, McpError> {
        let params = serde_json::to_value(&params).unwrap_or_default();
        let answer = self.relay("sampling/createMessage", params, &context).await?;
        serde_json::from_value(answer).map_err(|_| cannot_ask("the client's answer is not a sampling result"))
    }

    /// The upstream asks the client behind the call for its roots, as [`Self::create_message`].
    async fn list_roots(&self, context: RequestContext<RoleClient>) -> Result<ListRootsResult, McpError> {
        let answer = self.relay("roots/list", serde_json::json!({}), &context).await?;
        serde_json::from_value(answer).map_err(|_| cannot_ask("the client's answer is not a list of roots"))
    }

    /// The upstream asks the person behind the call it came with ([`Link::elicit`]).
    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, McpError> {
        let call = self.link.call_for(context.extensions.get::<InboundStreamOrigin>());
        self.link.elicit(call, request, context.ct.cancelled()).await
    }

    fn get_info(&self) -> ClientConfig {
        let mut info = ClientConfig::default();
        info.capabilities = ClientCapabilities::default();
        // Sampling and roots: passed to the client behind the call they come with
        // (an error where it has neither).
        info.capabilities.sampling = Some(Default::default());
        info.capabilities.roots = Some(Default::default());
        // Form elicitation: an upstream's question goes to the person behind
        // the call it came with, when their client can be asked, and is
        // declined otherwise.
        let mut elicitation = ElicitationCapability::new();
        elicitation.form = Some(FormElicitationCapability::new());
        info.capabilities.elicitation = Some(elicitation);
        // The `initialize` handshake, which every server version speaks; on
        // it `notifications/tools/list_changed` arrives without a
        // subscription (2026-07-28 servers send it only to `subscriptions/listen`).
        info.protocol_version = ProtocolVersion::LATEST_WITH_INITIALIZE;
        info.client_info = Implementation::new("toolgate", env!("CARGO_PKG_VERSION"));
        info
    }
}
