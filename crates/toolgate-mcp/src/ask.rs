//! The person behind an MCP call, asked through elicitation: in a session
//! (2025-06-18 to 2025-11-25) with an `elicitation/create` request
//! ([`PeerAsker`]); at 2026-07-28, which forbids server-to-client requests,
//! with an `input_required` result that the client answers by retrying the
//! call with `inputResponses` ([`Rounds`]). A client that declared no
//! elicitation gets no asker, so a `need_confirm` reaches the model as a signal.

// Sampling, roots and logging are deprecated at 2026-07-28 (SEP-2577); earlier revisions have them.
#![allow(deprecated)]

use std::sync::{Arc, Mutex};

use rmcp::model::{
    CallToolRequestParams, ElicitRequest, ElicitRequestParams, ElicitResult, ElicitationAction,
    ElicitationSchema, InputRequest, InputRequests, InputRequiredResult, LoggingLevel,
    LoggingMessageNotificationParam, ProtocolVersion,
};
use rmcp::service::{ElicitationMode, Peer, RequestContext, RoleServer};
use toolgate_core::{Answer, Asker, Question};

/// The key of toolgate's one question in `inputRequests` / `inputResponses`.
const QUESTION_KEY: &str = "toolgate_question";

/// The `requestState` of a round for `tool`: the retry must name the same tool.
fn round_state(tool: &str) -> String {
    format!("toolgate:ask:{tool}")
}

/// A 2026-07-28 call's rounds: the answer its retry brought (for the first
/// question asked), and the next question, which ends this round as an
/// `input_required` result instead of the call's own.
pub(crate) struct Rounds {
    given: Mutex<Option<Answer>>,
    next: Mutex<Option<Question>>,
}

impl Rounds {
    /// The rounds of this request, when it is 2026-07-28 or later and its
    /// client declared form elicitation; `None` otherwise.
    pub(crate) fn for_request(
        context: &RequestContext<RoleServer>,
        request: &CallToolRequestParams,
    ) -> Option<Arc<Self>> {
        if context.protocol_version()? < ProtocolVersion::V_2026_07_28 {
            return None;
        }
        let elicitation = context.client_capabilities()?.elicitation?;
        if elicitation.form.is_none() && elicitation.url.is_some() {
            return None;
        }
        // An answer counts only for the round it was asked in: the same tool.
        let given = (request.request_state.as_deref() == Some(round_state(&request.name).as_str()))
            .then(|| request.input_responses.as_ref()?.get(QUESTION_KEY).cloned())
            .flatten()
            .map(|answer| match serde_json::from_value::<ElicitResult>(answer) {
                Ok(result) => match result.action {
                    ElicitationAction::Accept => Answer::Accept(result.content.unwrap_or_default()),
                    ElicitationAction::Decline => Answer::Decline,
                    ElicitationAction::Cancel => Answer::Cancel,
                    _ => Answer::Unanswered("an action this server does not know".to_owned()),
                },
                Err(_) => Answer::Unanswered("the client's answer is not an elicitation result".to_owned()),
            });
        Some(Arc::new(Self { given: Mutex::new(given), next: Mutex::default() }))
    }

    /// The `input_required` result of this round, when a question is waiting.
    pub(crate) fn input_required(&self, tool: &str) -> Option<InputRequiredResult> {
        let question = self.next.lock().unwrap_or_else(|e| e.into_inner()).take()?;
        let schema = serde_json::from_value::<ElicitationSchema>(question.schema).ok()?;
        let params = ElicitRequestParams::FormElicitationParams {
            meta: None,
            message: question.message,
            requested_schema: schema,
        };
        let mut requests = InputRequests::new();
        requests.insert(QUESTION_KEY.to_owned(), InputRequest::Elicitation(ElicitRequest::new(params)));
        Some(InputRequiredResult::new(Some(requests), Some(round_state(tool))))
    }
}

#[toolgate_core::async_trait]
impl Asker for Rounds {
    async fn ask(&self, question: &Question) -> Answer {
        if let Some(answer) = self.given.lock().unwrap_or_else(|e| e.into_inner()).take() {
            return answer;
        }
        // Asked in the next round: the call answers `input_required` instead.
        *self.next.lock().unwrap_or_else(|e| e.into_inner()) = Some(question.clone());
        Answer::Unreachable("asked through input_required".to_owned())
    }
}

/// Asks through the session's client, and passes it what upstream MCP servers
/// send during the call (sampling, roots, log messages: [`Asker::relay`]).
pub(crate) struct PeerAsker {
    peer: Peer<RoleServer>,
    /// The lowest level of log messages the session wants (`logging/setLevel`; all when unset).
    log_level: Arc<Mutex<Option<LoggingLevel>>>,
}

impl PeerAsker {
    /// An asker for this request's client, when it can be asked or sent
    /// requests: it declared elicitation, sampling or roots.
    pub(crate) fn for_peer(peer: &Peer<RoleServer>) -> Option<Self> {
        // A 2026-07-28 request has no initialize, hence no peer info.
        let info = peer.peer_info()?;
        let capabilities = &info.capabilities;
        let reachable = peer.supported_elicitation_modes().contains(&ElicitationMode::Form)
            || capabilities.sampling.is_some()
            || capabilities.roots.is_some();
        reachable.then(|| Self { peer: peer.clone(), log_level: Arc::default() })
    }

    /// Log messages below the session's `level` are not passed on.
    pub(crate) fn with_log_level(mut self, level: Arc<Mutex<Option<LoggingLevel>>>) -> Self {
        self.log_level = level;
        self
    }
}

/// The rank of a log level (debug lowest).
pub(crate) fn rank(level: LoggingLevel) -> u8 {
    match level {
        LoggingLevel::Debug => 0,
        LoggingLevel::Info => 1,
        LoggingLevel::Notice => 2,
        LoggingLevel::Warning => 3,
        LoggingLevel::Error => 4,
        LoggingLevel::Critical => 5,
        LoggingLevel::Alert => 6,
        LoggingLevel::Emergency => 7,
    }
}

#[toolgate_core::async_trait]
impl Asker for PeerAsker {
    async fn ask(&self, question: &Question) -> Answer {
        if !self.peer.supported_elicitation_modes().contains(&ElicitationMode::Form) {
            return Answer::Unreachable("the client declared no form elicitation".to_owned());
        }
        let schema = match serde_json::from_value::<ElicitationSchema>(question.schema.clone()) {
            Ok(schema) => schema,
            Err(_) => return Answer::Unreachable("the question's schema is not a flat form".to_owned()),
        };
        let params = ElicitRequestParams::FormElicitationParams {
            meta: None,
            message: question.message.clone(),
            requested_schema: schema,
        };
        match self.peer.create_elicitation(params).await {
            Ok(result) => match result.action {
                ElicitationAction::Accept => Answer::Accept(result.content.unwrap_or_default()),
                ElicitationAction::Decline => Answer::Decline,
                ElicitationAction::Cancel => Answer::Cancel,
                // An action of a later revision: not a yes.
                _ => Answer::Unanswered(
                    "the client answered with an action this server does not know".to_owned(),
                ),
            },
            // The client answered with an error (it could not take the
            // question: e.g. a toolgate whose own caller cannot be asked), or
            // went away: nobody was asked, so the caller goes on without.
            Err(_) => Answer::Unreachable("the client could not take the question".to_owned()),
        }
    }

    /// An upstream's `sampling/createMessage` or `roots/list`, sent as it is to a client
    /// that declared the capability; its answer as it gave it.
    async fn relay(&self, method: &str, params: serde_json::Value) -> Result<serde_json::Value, String> {
        let capabilities = self.peer.peer_info().map(|info| info.capabilities.clone()).unwrap_or_default();
        let refused = |e: rmcp::ServiceError| format!("the client could not answer `{method}`: {e}");
        match method {
            "sampling/createMessage" if capabilities.sampling.is_some() => {
                let params = serde_json::from_value(params)
                    .map_err(|e| format!("the upstream's sampling request is not valid: {e}"))?;
                let result = self.peer.create_message(params).await.map_err(refused)?;
                serde_json::to_value(result).map_err(|e| e.to_string())
            }
            "roots/list" if capabilities.roots.is_some() => {
                let result = self.peer.list_roots().await.map_err(refused)?;
                serde_json::to_value(result).map_err(|e| e.to_string())
            }
            "sampling/createMessage" => Err("the caller's client declared no sampling".to_owned()),
            "roots/list" => Err("the caller's client declared no roots".to_owned()),
            _ => Err(format!("toolgate does not pass `{method}` on")),
        }
    }

    /// An upstream's log message during the call, at or above the session's level.
    async fn notify(&self, method: &str, params: serde_json::Value) {
        if method != "notifications/message" {
            return;
        }
        let Ok(message) = serde_json::from_value::<LoggingMessageNotificationParam>(params) else { return };
        let least = *self.log_level.lock().unwrap_or_else(|e| e.into_inner());
        if least.is_some_and(|least| rank(message.level) < rank(least)) {
            return;
        }
        let _ = self.peer.notify_logging_message(message).await;
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// The gateway's questions are forms elicitation can carry: a confirmation,
    /// and missing values of each primitive kind (the keywords the gateway keeps).
    #[test]
    fn the_gateways_questions_are_elicitation_forms() {
        let missing = json!({
            "type": "object",
            "properties": {
                "return_date": {"type": "string", "format": "date", "title": "return date", "description": "Last day."},
                "nights": {"type": "integer", "minimum": 1, "maximum": 30, "title": "nights"},
                "budget": {"type": "number", "minimum": 0, "title": "budget"},
                "window_seat": {"type": "boolean", "default": false, "title": "window seat"},
                "class": {"type": "string", "enum": ["economy", "business"], "title": "class"},
                "note": {"type": "string", "minLength": 1, "maxLength": 200, "title": "note"}
            },
            "required": ["return_date", "nights"]
        });
        for schema in [Question::confirm("cancel order 7").schema, missing] {
            let parsed = serde_json::from_value::<ElicitationSchema>(schema.clone());
            assert!(parsed.is_ok(), "{schema}: {parsed:?}");
        }
    }
}
