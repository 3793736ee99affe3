//! The agent runtime: a ReAct loop over any OpenAI-compatible Chat
//! Completions endpoint (OpenAI, vLLM, Ollama, llama.cpp's server), with the
//! gateway as its only way to act.
//!
//! ```text
//! run(caller, message)
//!   system prompt = catalog (meta) or rules + skills (direct)
//!   loop: model turn (streamed: token events)
//!         native tool_calls, or calls written as text (toolgate_gateway::fallback)
//!         reads of one turn together, writes in order, through Gateway::execute
//!         results back as tool messages (rendered text, cut short)
//!   until: answer | max_steps | deadline | repeated failure | model error | cancelled
//! ```
//!
//! This is the only crate that knows chat model APIs. Conversations are
//! stored per user ([`ConversationStore`]); the model never sees who the
//! user is beyond what the tools' envelopes say.
//!
//! # Example
//!
//! An agent over a gateway with one tool, configured for a local Ollama
//! server. Nothing is contacted until a run starts; a message the agent
//! cannot take is refused before any model call:
//!
//! ```
//! use std::sync::Arc;
//! use std::time::Duration;
//!
//! use serde_json::json;
//! use toolgate_agent::{Agent, AgentConfig, ConversationStore, Exposure};
//! use toolgate_core::{Caller, FnTool, ToolOutput, ToolSpec};
//! use toolgate_gateway::Gateway;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let schema = json!({"type": "object", "properties": {"city": {"type": "string"}},
//!                     "required": ["city"], "additionalProperties": false});
//! let weather = FnTool::new(ToolSpec::new("query_weather", "Today's weather.", schema), |_ctx, p| {
//!     Box::pin(async move { Ok(ToolOutput::json(json!({"city": p["city"], "sky": "clear"}))) })
//! });
//! let gateway = Gateway::builder().tool(Arc::new(weather)).build()?;
//!
//! let config = AgentConfig::new("http://127.0.0.1:11434/v1", "qwen3:8b")
//!     .exposure(Exposure::Direct)
//!     .max_steps(6)
//!     .deadline(Duration::from_secs(60));
//! assert_eq!(config.max_tool_calls, toolgate_agent::DEFAULT_MAX_TOOL_CALLS);
//!
//! let store = ConversationStore::connect("sqlite::memory:").await?;
//! let agent = Agent::new(gateway, config)?.with_store(store);
//!
//! // `agent.ask(caller, "What is the weather in Oslo?")` runs the loop against the model;
//! // an empty message never reaches it:
//! let refused = agent.ask(Caller::new("ada", "guest"), "   ").await.unwrap_err();
//! assert_eq!(refused.code(), "INVALID_PARAMS");
//! # Ok(())
//! # }
//! ```
//!
//! `examples/embed.rs` runs a whole conversation against any OpenAI-compatible
//! server and prints its [`Event`]s as they stream.
#![deny(missing_docs)]

mod ask;
mod calls;
mod config;
mod event;
pub mod model;
mod redact;
mod run;
mod store;

use toolgate_core::Caller;
use toolgate_gateway::Gateway;

pub use ask::{Asking, UnknownQuestion};
pub use config::{
    AgentConfig, DEFAULT_MAX_LINE_BYTES, DEFAULT_MAX_TOOL_CALLS, DEFAULT_MAX_TURN_BYTES, Exposure,
    ToolCalling,
};
pub use event::{Event, StopReason, Usage};
pub use model::{ChatClient, ModelError, ModelErrorKind};
pub use run::{CallerCheck, EVENT_BUFFER, MAX_MESSAGE_CHARS, Outcome, RunOptions, RunRequest, event_channel};
pub use store::{ConversationStore, MIGRATIONS_TABLE, StoreError, StoredMessage};
/// Cancels a run (re-exported so that callers need no tokio-util of their own).
pub use tokio_util::sync::CancellationToken;

/// Why a run could not start (errors during a run are events).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AgentError {
    /// The request is not usable (an empty or oversized message).
    #[error("{0}")]
    InvalidInput(String),
    /// The conversation store refused or failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl AgentError {
    /// The error code surfaces show (`INVALID_PARAMS`, `NOT_FOUND`,
    /// `PERMISSION_DENIED`, `CONFLICT`, `INTERNAL_ERROR`).
    pub fn code(&self) -> &'static str {
        match self {
            AgentError::InvalidInput(_) => "INVALID_PARAMS",
            AgentError::Store(StoreError::NotFound(_)) => "NOT_FOUND",
            AgentError::Store(StoreError::Conflict(_)) => "CONFLICT",
            AgentError::Store(StoreError::ScopeMismatch(_)) => "PERMISSION_DENIED",
            AgentError::Store(_) => "INTERNAL_ERROR",
        }
    }

    /// A message safe to show: database details stay in the logs.
    pub fn public_message(&self) -> String {
        match self {
            AgentError::Store(StoreError::Database(_)) => {
                tracing::error!(error = %self, "conversation store failed");
                "the conversation store is not available right now".to_owned()
            }
            other => other.to_string(),
        }
    }
}

/// The agent: a gateway, a model client, limits, and optionally a store.
#[derive(Debug, Clone)]
pub struct Agent {
    gateway: Gateway,
    client: ChatClient,
    config: AgentConfig,
    store: Option<ConversationStore>,
    /// Questions of runs that wait for [`Agent::answer`] (shared by clones).
    questions: std::sync::Arc<ask::Questions>,
}

impl Agent {
    /// An agent over `gateway` talking to the configured model. Without a
    /// store, conversations live for one run only.
    pub fn new(gateway: Gateway, config: AgentConfig) -> Result<Self, ModelError> {
        let client = ChatClient::new(&config)?;
        Ok(Self { gateway, client, config, store: None, questions: Default::default() })
    }

    /// Store conversations (and allow continuing them by id).
    pub fn with_store(mut self, store: ConversationStore) -> Self {
        self.store = Some(store);
        self
    }

    /// The configuration.
    pub fn config(&self) -> &AgentConfig {
        &self.config
    }

    /// The store, when there is one.
    pub fn store(&self) -> Option<&ConversationStore> {
        self.store.as_ref()
    }

    /// Run one message to its end and return the outcome, without events.
    pub async fn ask(&self, caller: Caller, message: &str) -> Result<Outcome, AgentError> {
        let (events, mut ignored) = event_channel();
        let request = RunRequest::new(caller, message);
        // The channel is bounded: read it (and drop what is read) while the run works.
        let run = async move { self.run(request, &events, CancellationToken::new()).await };
        let drain = async { while ignored.recv().await.is_some() {} };
        tokio::join!(run, drain).0
    }
}
