//! What a run reports while it works: tokens, tool calls as they start and
//! finish, errors, and one final event that says why it stopped.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Why a run stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum StopReason {
    /// The model answered.
    Answer,
    /// It used every step it was given.
    MaxSteps,
    /// The run's deadline passed.
    Deadline,
    /// The model endpoint failed (after retries when the failure was transient).
    ModelError,
    /// The same call failed the same way again; asking again would not help.
    RepeatedFailure,
    /// The client went away or cancelled.
    Cancelled,
}

impl StopReason {
    /// The snake_case name.
    pub fn as_str(self) -> &'static str {
        match self {
            StopReason::Answer => "answer",
            StopReason::MaxSteps => "max_steps",
            StopReason::Deadline => "deadline",
            StopReason::ModelError => "model_error",
            StopReason::RepeatedFailure => "repeated_failure",
            StopReason::Cancelled => "cancelled",
        }
    }
}

/// Tokens the model reported, summed over the run's turns.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Prompt tokens.
    pub prompt_tokens: u64,
    /// Completion tokens.
    pub completion_tokens: u64,
    /// Their sum.
    pub total_tokens: u64,
}

impl Usage {
    pub(crate) fn add(&mut self, other: Usage) {
        self.prompt_tokens += other.prompt_tokens;
        self.completion_tokens += other.completion_tokens;
        self.total_tokens += other.total_tokens;
    }
}

/// One event of a run. The JSON form carries its name in `event`
/// (`token`, `tool_call_started`, `tool_call_finished`, `elicitation`,
/// `elicitation_answered`, `final`, `error`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Event {
    /// A piece of the model's text as it streams.
    Token {
        /// The text.
        text: String,
    },
    /// A tool call is about to run.
    ToolCallStarted {
        /// The call's id (the model's, or one made up for text calls).
        id: String,
        /// The tool the model called.
        tool: String,
        /// Its parameters, secrets redacted.
        parameters: Value,
    },
    /// A tool call finished.
    ToolCallFinished {
        /// The call's id.
        id: String,
        /// The tool the model called.
        tool: String,
        /// Whether the envelope says success.
        success: bool,
        /// The error code, when it failed.
        code: Option<String>,
        /// The kinds of the signals.
        signals: Vec<String>,
        /// The envelope's duration.
        duration_ms: f64,
        /// The result (or the error message), redacted and cut short.
        result: String,
    },
    /// A tool call asks the person running the agent (a confirmation, or
    /// missing values): show `message` and a form of `requested_schema`.
    /// A run started with [`Asking::Events`](crate::Asking::Events) waits
    /// for [`Agent::answer`](crate::Agent::answer) with this `id`.
    Elicitation {
        /// The question's id, to answer it with.
        id: String,
        /// The tool call that asks (a `tool_call_started` event's id).
        call_id: String,
        /// What will happen, in words a person reads.
        message: String,
        /// JSON Schema of the answer: `type: object` with primitive properties
        /// (a confirmation is `{"confirm": true}`).
        requested_schema: Value,
    },
    /// The question `id` is over: `outcome` is `accepted`, `declined`,
    /// `cancelled`, `unanswered` (its time ran out, or the run stopped) or
    /// `unreachable` (nobody could be asked: the model gets the signal).
    ElicitationAnswered {
        /// The question's id.
        id: String,
        /// How it ended.
        outcome: String,
    },
    /// Something went wrong; a `final` follows when the run had started.
    Error {
        /// `MODEL_ERROR`, `NOT_FOUND`, `INVALID_PARAMS`, `INTERNAL_ERROR`.
        code: String,
        /// What happened, for a person (the provider's message for model errors).
        message: String,
    },
    /// The run ended.
    Final {
        /// The conversation, to continue it.
        conversation_id: String,
        /// The answer (may be empty when the run did not reach one).
        answer: String,
        /// Why it stopped.
        stop_reason: StopReason,
        /// Tokens used.
        usage: Usage,
        /// Model turns taken.
        steps: u32,
    },
}

impl Event {
    /// The event's name, as in the SSE `event:` field.
    pub fn name(&self) -> &'static str {
        match self {
            Event::Token { .. } => "token",
            Event::ToolCallStarted { .. } => "tool_call_started",
            Event::ToolCallFinished { .. } => "tool_call_finished",
            Event::Elicitation { .. } => "elicitation",
            Event::ElicitationAnswered { .. } => "elicitation_answered",
            Event::Error { .. } => "error",
            Event::Final { .. } => "final",
        }
    }
}
