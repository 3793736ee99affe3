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
    CallToolRequestParams, CreateMessageRequest, CreateMessageRequestParams, CreateMessageResult,
    ElicitRequest, ElicitRequestParams, ElicitResult, ElicitationAction, ElicitationSchema, InputRequest,
    InputRequests, InputRequiredResult, ListRootsRequest, ListRootsResult, LoggingLevel,
    LoggingMessageNotificationParam, ProtocolVersion,
};
use rmcp::service::{ElicitationMode, Peer, RequestContext, RoleServer};
use serde_json::Value;
use toolgate_core::{Answer, Asker, Question};

/// The prefix of toolgate's keys in `inputRequests` / `inputResponses`: the n-th
/// request of a call is `toolgate_<n>`.
const KEY_PREFIX: &str = "toolgate_";

/// The most requests one call may make of its client across its rounds.
const MOST_REQUESTS: usize = 8;

/// The `requestState` of a round for `tool`, carrying what the client answered in the
/// rounds before (the retry must name the same tool). Each round runs the call again from
/// its start, so the call's n-th request gets the n-th answer; the state carries the answers
/// of earlier rounds because a retry brings only the answers to the last round's requests.
/// The answers are the client's own, given back to it: nothing is in them it did not send.
fn round_state(tool: &str, answers: &[Value]) -> String {
    format!("toolgate:ask:{tool}:{}", Value::Array(answers.to_vec()))
}

/// The answers a retry of `tool` brings: those its `requestState` carries, then the one its
/// `inputResponses` holds for the next request. Nothing when the state is not this tool's.
fn answers_of(tool: &str, request: &CallToolRequestParams) -> Vec<Value> {
    let Some(state) = request.request_state.as_deref() else { return Vec::new() };
    let Some(carried) = state.strip_prefix(&format!("toolgate:ask:{tool}:")) else { return Vec::new() };
    let Ok(Value::Array(mut answers)) = serde_json::from_str::<Value>(carried) else { return Vec::new() };
    answers.truncate(MOST_REQUESTS);
    let key = format!("{KEY_PREFIX}{}", answers.len());
    if let Some(answer) = request.input_responses.as_ref().and_then(|given| given.get(&key)) {
        answers.push(answer.clone());
    }
    answers
}

/// What a 2026-07-28 client can be asked through `input_required`.
#[derive(Debug, Clone, Copy)]
struct Can {
    elicit: bool,
    sample: bool,
    roots: bool,
}

/// A 2026-07-28 call's rounds: the answers its retry brought (the call's n-th request
/// gets the n-th), and the next request, which ends this round as an `input_required`
/// result instead of the call's own.
pub(crate) struct Rounds {
    can: Can,
    answers: Vec<Value>,
    state: Mutex<RoundState>,
}

#[derive(Default)]
struct RoundState {
    /// How many requests the call made so far this round.
    made: usize,
    /// The request this round ends with, once one is not answered.
    next: Option<InputRequest>,
}

/// Where the call's next request stands.
enum Turn {
    /// Answered in an earlier round.
    Answered(Value),
    /// Asked now: this round ends with it.
    Asked,
    /// Not asked: another request ends this round, or the call asked too much.
    Refused(&'static str),
}

impl Rounds {
    /// The rounds of this request, when it is 2026-07-28 or later and its client
    /// declared form elicitation, sampling or roots; `None` otherwise.
    pub(crate) fn for_request(
        context: &RequestContext<RoleServer>,
        request: &CallToolRequestParams,
    ) -> Option<Arc<Self>> {
        if context.protocol_version()? < ProtocolVersion::V_2026_07_28 {
            return None;
        }
        let capabilities = context.client_capabilities()?;
        let can = Can {
            elicit: capabilities.elicitation.as_ref().is_some_and(|e| e.form.is_some() || e.url.is_none()),
            sample: capabilities.sampling.is_some(),
            roots: capabilities.roots.is_some(),
        };
        if !(can.elicit || can.sample || can.roots) {
            return None;
        }
        let answers = answers_of(&request.name, request);
        Some(Arc::new(Self { can, answers, state: Mutex::default() }))
    }

    /// The call's next request: its answer from an earlier round, or `ask` becomes the
    /// request this round ends with.
    fn turn(&self, ask: impl FnOnce() -> InputRequest) -> Turn {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let n = state.made;
        state.made += 1;
        if let Some(answer) = self.answers.get(n) {
            return Turn::Answered(answer.clone());
        }
        if state.next.is_some() {
            return Turn::Refused("another request of this call is waiting for the client");
        }
        if n >= MOST_REQUESTS {
            return Turn::Refused("the call asked its client too many times");
        }
        state.next = Some(ask());
        Turn::Asked
    }

    /// The `input_required` result of this round, when a request is waiting.
    pub(crate) fn input_required(&self, tool: &str) -> Option<InputRequiredResult> {
        let next = self.state.lock().unwrap_or_else(|e| e.into_inner()).next.take()?;
        let mut requests = InputRequests::new();
        requests.insert(format!("{KEY_PREFIX}{}", self.answers.len()), next);
        Some(InputRequiredResult::new(Some(requests), Some(round_state(tool, &self.answers))))
    }
}

#[toolgate_core::async_trait]
impl Asker for Rounds {
    async fn ask(&self, question: &Question) -> Answer {
        if !self.can.elicit {
            return Answer::Unreachable("the client declared no form elicitation".to_owned());
        }
        let Ok(schema) = serde_json::from_value::<ElicitationSchema>(question.schema.clone()) else {
            return Answer::Unreachable("the question's schema is not a flat form".to_owned());
        };
        let params = ElicitRequestParams::FormElicitationParams {
            meta: None,
            message: question.message.clone(),
            requested_schema: schema,
        };
        match self.turn(|| InputRequest::Elicitation(ElicitRequest::new(params))) {
            Turn::Answered(answer) => match serde_json::from_value::<ElicitResult>(answer) {
                Ok(result) => match result.action {
                    ElicitationAction::Accept => Answer::Accept(result.content.unwrap_or_default()),
                    ElicitationAction::Decline => Answer::Decline,
                    ElicitationAction::Cancel => Answer::Cancel,
                    _ => Answer::Unanswered("an action this server does not know".to_owned()),
                },
                Err(_) => Answer::Unanswered("the client's answer is not an elicitation result".to_owned()),
            },
            // Asked in the next round: the call answers `input_required` instead.
            Turn::Asked => Answer::Unreachable("asked through input_required".to_owned()),
            Turn::Refused(why) => Answer::Unreachable(why.to_owned()),
        }
    }

    /// An upstream's `sampling/createMessage` or `roots/list`: asked of the client in the
    /// next round, and answered from the round that brought its answer.
    async fn relay(&self, method: &str, params: Value) -> Result<Value, String> {
        let request = match method {
            "sampling/createMessage" if self.can.sample => {
                let params = serde_json::from_value::<CreateMessageRequestParams>(params)
                    .map_err(|e| format!("the upstream's sampling request is not valid: {e}"))?;
                InputRequest::CreateMessage(CreateMessageRequest::new(params))
            }
            "roots/list" if self.can.roots => InputRequest::ListRoots(ListRootsRequest::default()),
            "sampling/createMessage" => return Err("the caller's client declared no sampling".to_owned()),
            "roots/list" => return Err("the caller's client declared no roots".to_owned()),
            _ => return Err(format!("toolgate does not pass `{method}` on")),
        };
        let sampling = method == "sampling/createMessage";
        match self.turn(|| request) {
            Turn::Answered(answer) => {
                // The answer of the kind asked, as the client gave it.
                let fits = if sampling {
                    serde_json::from_value::<CreateMessageResult>(answer.clone()).is_ok()
                } else {
                    serde_json::from_value::<ListRootsResult>(answer.clone()).is_ok()
                };
                if fits { Ok(answer) } else { Err(format!("the client's answer is not a `{method}` result")) }
            }
            Turn::Asked => Err("asked of the caller's client through input_required".to_owned()),
            Turn::Refused(why) => Err(why.to_owned()),
        }
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

    fn retry(tool: &str, state: Option<String>, responses: Value) -> CallToolRequestParams {
        let mut request = CallToolRequestParams::new(tool.to_owned());
        request.request_state = state;
        request.input_responses = serde_json::from_value(responses).unwrap();
        request
    }

    /// A retry brings the answers of every earlier round: those its state carries, then
    /// the one its `inputResponses` holds for the request the last round asked.
    #[test]
    fn a_retry_carries_the_answers_of_every_earlier_round() {
        let sampled =
            json!({"role": "assistant", "content": {"type": "text", "text": "sunny"}, "model": "m"});
        let roots = json!({"roots": [{"uri": "file:///srv"}]});
        // Round 2: the first answer, given for `toolgate_0`.
        let second = retry("w__t", Some(round_state("w__t", &[])), json!({"toolgate_0": sampled}));
        assert_eq!(answers_of("w__t", &second), std::slice::from_ref(&sampled));
        // Round 3: the state carries the first answer, the retry brings the second.
        let state = round_state("w__t", std::slice::from_ref(&sampled));
        let third = retry("w__t", Some(state.clone()), json!({"toolgate_1": roots}));
        assert_eq!(answers_of("w__t", &third), [sampled.clone(), roots.clone()]);
        // An answer under another key than the one asked for does not count.
        assert_eq!(
            answers_of("w__t", &retry("w__t", Some(state.clone()), json!({"toolgate_0": roots}))),
            [sampled]
        );
        // Another tool's state, an earlier form of the state, or none: no answers.
        for other in [
            retry("w__other", Some(state), json!({"toolgate_1": roots})),
            retry("w__t", Some("toolgate:ask:w__t".to_owned()), json!({"toolgate_0": roots})),
            retry("w__t", Some("toolgate:ask:w__t:{not json".to_owned()), json!({"toolgate_0": roots})),
            retry("w__t", None, json!({"toolgate_0": roots})),
        ] {
            assert_eq!(answers_of(&other.name, &other), Vec::<Value>::new(), "{:?}", other.request_state);
        }
    }

    /// The n-th request of a call gets the n-th answer; the first one not answered ends the
    /// round, and later ones in that round are refused rather than asked.
    #[test]
    fn each_request_gets_its_own_rounds_answer_and_the_first_unanswered_ends_the_round() {
        let can = Can { elicit: true, sample: true, roots: true };
        let rounds = Rounds { can, answers: vec![json!({"roots": []})], state: Mutex::default() };
        let roots = || InputRequest::ListRoots(ListRootsRequest::default());
        assert!(matches!(rounds.turn(roots), Turn::Answered(answer) if answer == json!({"roots": []})));
        assert!(matches!(rounds.turn(roots), Turn::Asked));
        assert!(matches!(rounds.turn(roots), Turn::Refused(_)));
        let asked = rounds.input_required("w__t").unwrap();
        let asked = serde_json::to_value(asked).unwrap();
        assert_eq!(asked["inputRequests"]["toolgate_1"]["method"], "roots/list", "{asked}");
        assert_eq!(asked["requestState"], round_state("w__t", &[json!({"roots": []})]), "{asked}");
        assert!(rounds.input_required("w__t").is_none(), "asked once");
    }

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
