//! Asking the person behind a call: the seam beside progress. A tool (or the
//! gateway on its behalf, for a `need_confirm`) puts a [`Question`] to the
//! call's [`Asker`]; the MCP server answers it with elicitation, an agent
//! through its user. A call whose client cannot be asked has no asker, and
//! the signal reaches the model as before.

use serde_json::{Value, json};

/// A question for the person: a message and the flat object schema of the
/// answer (primitive properties only, as MCP elicitation allows).
#[derive(Debug, Clone, PartialEq)]
pub struct Question {
    /// What will happen, in words a person reads.
    pub message: String,
    /// JSON Schema of the answer: `type: object` with primitive properties.
    pub schema: Value,
}

impl Question {
    /// A yes/no confirmation: the answer is `{"confirm": true}` to go ahead.
    pub fn confirm(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            schema: json!({
                "type": "object",
                "properties": {
                    "confirm": {"type": "boolean", "title": "Go ahead", "description": "Yes to do it, no to leave everything as it is.", "default": false}
                },
                "required": ["confirm"]
            }),
        }
    }
}

/// What the person answered.
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    /// They answered; the content matches the question's schema.
    Accept(Value),
    /// They said no.
    Decline,
    /// They dismissed the question without choosing.
    Cancel,
    /// No answer came (the time ran out, or the client went away); why, in words.
    Unanswered(String),
    /// Nobody could be asked after all: the client refused the question or
    /// could not take it (an error, not an answer). Whoever asked goes on as
    /// if there had been no asker (a `need_confirm` reaches the model).
    Unreachable(String),
}

impl Answer {
    /// Whether this is a confirmation: accepted with `confirm: true`.
    pub fn confirms(&self) -> bool {
        matches!(self, Answer::Accept(content) if content.get("confirm") == Some(&Value::Bool(true)))
    }
}

/// Puts questions to the person behind a call.
#[async_trait::async_trait]
pub trait Asker: Send + Sync {
    /// Ask, and wait for the answer. The caller bounds the wait.
    async fn ask(&self, question: &Question) -> Answer;

    /// Pass a request of another server (an MCP server behind toolgate asking
    /// during the call: `sampling/createMessage`, `roots/list`) to the client
    /// behind the call, and wait for its answer (the result's JSON). `Err`
    /// says why it could not be answered: this asker cannot pass requests on
    /// (the default), or the client lacks the capability or refused.
    async fn relay(&self, method: &str, params: Value) -> Result<Value, String> {
        let _ = params;
        Err(format!("the client behind this call cannot be sent `{method}`"))
    }

    /// Pass a notification of another server (`notifications/message`) to the
    /// client behind the call; dropped by default.
    async fn notify(&self, method: &str, params: Value) {
        let _ = (method, params);
    }
}
