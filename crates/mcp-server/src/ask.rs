//! The person behind an MCP session, asked through elicitation
//! (`elicitation/create`, 2025-06-18 to 2025-11-25): the [`Asker`] a call's
//! context gets when its client declared the capability. Sessions without it,
//! stateless requests and 2026-07-28 (which forbids server-to-client
//! requests) get no asker, so a `need_confirm` reaches the model as a signal.

use rmcp::model::{ElicitRequestParams, ElicitationAction, ElicitationSchema};
use rmcp::service::{ElicitationMode, Peer, RoleServer};
use tool_core::{Answer, Asker, Question};

/// Asks through the session's client.
pub(crate) struct PeerAsker {
    peer: Peer<RoleServer>,
}

impl PeerAsker {
    /// An asker for this request's client, when it can be asked.
    pub(crate) fn for_peer(peer: &Peer<RoleServer>) -> Option<Self> {
        // A 2026-07-28 request has no initialize, hence no peer info.
        peer.peer_info()?;
        peer.supported_elicitation_modes()
            .contains(&ElicitationMode::Form)
            .then(|| Self { peer: peer.clone() })
    }
}

#[tool_core::async_trait]
impl Asker for PeerAsker {
    async fn ask(&self, question: &Question) -> Answer {
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
