//! The agent's typed configuration (the binary reads `[agent]` and builds it).

use std::time::Duration;

use serde::{Deserialize, Serialize};
use toolgate_core::Secret;

/// What the model is offered as tools.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Exposure {
    /// The three meta-tools, with the catalog as the system prompt.
    #[default]
    Meta,
    /// Every tool the caller may use, each as its own function.
    Direct,
}

/// How the model writes tool calls.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolCalling {
    /// `tools` is sent and native `tool_calls` are read; calls written as
    /// text are still understood.
    #[default]
    Native,
    /// No `tools` field (for servers that refuse it): the specs go into the
    /// system prompt and the model writes `<tool_call>` blocks.
    Text,
}

/// Default of [`AgentConfig::max_turn_bytes`]: 4 MiB of text and tool-call arguments per model turn.
pub const DEFAULT_MAX_TURN_BYTES: usize = 4 * 1024 * 1024;
/// Default of [`AgentConfig::max_line_bytes`]: 1 MiB per line (or event) of the model's stream.
pub const DEFAULT_MAX_LINE_BYTES: usize = 1024 * 1024;
/// Default of [`AgentConfig::max_tool_calls`]: tool calls run per model turn.
pub const DEFAULT_MAX_TOOL_CALLS: usize = 16;

/// Everything the agent needs to know about its model and its limits.
#[derive(Clone)]
#[non_exhaustive]
pub struct AgentConfig {
    /// The OpenAI-compatible base URL, up to and including `/v1`
    /// (e.g. `https://api.openai.com/v1`, `http://127.0.0.1:11434/v1`).
    pub base_url: String,
    /// The model name sent in every request.
    pub model: String,
    /// The bearer key, when the endpoint wants one. Never logged or echoed.
    pub api_key: Option<Secret>,
    /// Most model turns in one run.
    pub max_steps: u32,
    /// Sampling temperature; `None` leaves the server's default.
    pub temperature: Option<f32>,
    /// Meta-tools or direct tools.
    pub exposure: Exposure,
    /// Native or text tool calls.
    pub tool_calling: ToolCalling,
    /// The whole run's time limit.
    pub deadline: Duration,
    /// Longest wait for the model's next byte (connect, first byte, between chunks).
    pub idle_timeout: Duration,
    /// Extra attempts after a transient model error (HTTP 429/5xx, timeouts).
    pub model_retries: u32,
    /// Longest tool result the model reads, in characters (the rest is cut).
    pub max_result_chars: usize,
    /// Most bytes of text plus tool-call arguments in one model turn; past
    /// it the turn ends as a model error (`too_large`) and the run stops.
    pub max_turn_bytes: usize,
    /// Longest line (and SSE event) of the model's stream, in bytes; a
    /// longer one is refused as a model error (`too_large`) before it is buffered whole.
    pub max_line_bytes: usize,
    /// Most tool calls run from one model turn; the calls past it are not
    /// run and are answered with an error telling the model so.
    pub max_tool_calls: usize,
    /// Send `stream_options.include_usage` (OpenAI, vLLM, llama.cpp and Ollama
    /// accept it; turn it off for a server that refuses unknown fields).
    pub stream_usage: bool,
    /// Text put before the generated system prompt.
    pub instructions: Option<String>,
}

impl std::fmt::Debug for AgentConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentConfig")
            .field("base_url", &self.base_url)
            .field("model", &self.model)
            .field("api_key", &self.api_key.as_ref().map(|_| "[redacted]"))
            .field("max_steps", &self.max_steps)
            .field("exposure", &self.exposure)
            .field("tool_calling", &self.tool_calling)
            .field("deadline", &self.deadline)
            .field("max_turn_bytes", &self.max_turn_bytes)
            .field("max_line_bytes", &self.max_line_bytes)
            .field("max_tool_calls", &self.max_tool_calls)
            .finish_non_exhaustive()
    }
}

impl AgentConfig {
    /// A configuration with the defaults: meta exposure, native calls, 12
    /// steps, a 5-minute deadline, 60 s idle timeout, 2 retries, and the
    /// `DEFAULT_MAX_*` stream and tool-call limits.
    pub fn new(base_url: impl Into<String>, model: impl Into<String>) -> Self {
        Self {
            base_url: base_url.into(),
            model: model.into(),
            api_key: None,
            max_steps: 12,
            temperature: None,
            exposure: Exposure::Meta,
            tool_calling: ToolCalling::Native,
            deadline: Duration::from_secs(300),
            idle_timeout: Duration::from_secs(60),
            model_retries: 2,
            max_result_chars: 4000,
            max_turn_bytes: DEFAULT_MAX_TURN_BYTES,
            max_line_bytes: DEFAULT_MAX_LINE_BYTES,
            max_tool_calls: DEFAULT_MAX_TOOL_CALLS,
            stream_usage: true,
            instructions: None,
        }
    }

    /// Set the API key.
    pub fn api_key(mut self, key: Secret) -> Self {
        self.api_key = Some(key);
        self
    }

    /// Set the exposure.
    pub fn exposure(mut self, exposure: Exposure) -> Self {
        self.exposure = exposure;
        self
    }

    /// Set the step limit.
    pub fn max_steps(mut self, steps: u32) -> Self {
        self.max_steps = steps;
        self
    }

    /// Set the run's deadline.
    pub fn deadline(mut self, deadline: Duration) -> Self {
        self.deadline = deadline;
        self
    }
}
