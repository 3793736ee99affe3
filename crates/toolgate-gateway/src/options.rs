//! Per-call options and gateway-wide limits.

use serde::{Deserialize, Serialize};

/// How the result is returned.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Format {
    /// The tool's output must be JSON; text that is not JSON is `PARSE_ERROR`.
    #[default]
    Json,
    /// Text output is returned as a string, unparsed.
    Raw,
}

/// Which provider's dialect a schema is exported in.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SchemaFormat {
    /// MCP (the schema as it validates).
    #[default]
    Mcp,
    /// OpenAI strict function calling.
    Openai,
    /// Anthropic tool use.
    Anthropic,
    /// Gemini function declarations.
    Gemini,
}

/// Per-call options (`execute_tool`'s `options`). Unset fields take the
/// tool's or the gateway's defaults. `execute_tool` also accepts the
/// spellings of other tool-calling conventions: `timeout` for `timeout_ms`
/// and `retryDelay` for `retry_delay_ms` (both in milliseconds).
///
/// Build one with `CallOptions::default()` and the setters (more options may come).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct CallOptions {
    /// The total time of the call in milliseconds: every attempt and every
    /// pause between them (capped by [`Limits::max_timeout_ms`]). Default:
    /// [`Limits::read_deadline_ms`] for read tools, the tool's own time limit
    /// for writes. No single attempt runs longer than the tool's time limit.
    #[serde(default)]
    pub timeout_ms: Option<u64>,
    /// Extra attempts after a transient failure (capped by
    /// [`Limits::max_retries`]); only read tools and idempotent writes are retried.
    #[serde(default)]
    pub retries: Option<u32>,
    /// The pause before the first retry, in milliseconds; it doubles before
    /// each further retry (backoff: d, 2d, 4d, ...), each pause capped by
    /// [`Limits::max_retry_delay_ms`]. A retry that would not start with at
    /// least as much time left as the last attempt took is not started.
    #[serde(default)]
    pub retry_delay_ms: Option<u64>,
    /// `json` (default) or `raw`.
    #[serde(default)]
    pub format: Format,
    /// The parameters come wrapped as the OpenAI strict export asks; unwrap them first.
    #[serde(default)]
    pub openai_strict: bool,
}

impl CallOptions {
    /// Set the total time of the call.
    pub fn timeout_ms(mut self, ms: u64) -> Self {
        self.timeout_ms = Some(ms);
        self
    }

    /// Set the retries.
    pub fn retries(mut self, retries: u32) -> Self {
        self.retries = Some(retries);
        self
    }

    /// Set the pause before the first retry.
    pub fn retry_delay_ms(mut self, ms: u64) -> Self {
        self.retry_delay_ms = Some(ms);
        self
    }

    /// Set the format.
    pub fn format(mut self, format: Format) -> Self {
        self.format = format;
        self
    }

    /// Say whether the parameters come wrapped as the OpenAI strict export asks.
    pub fn openai_strict(mut self, wrapped: bool) -> Self {
        self.openai_strict = wrapped;
        self
    }
}

/// Gateway-wide limits on what a call may carry and ask for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Limits {
    /// Largest parameter object, in bytes of JSON text (approximate for values built in Rust).
    pub max_param_bytes: usize,
    /// Deepest nesting of arrays and objects in parameters.
    pub max_depth: usize,
    /// Largest total time a call may ask for.
    pub max_timeout_ms: u64,
    /// Total time of a read call that does not say, retries and pauses included.
    pub read_deadline_ms: u64,
    /// Most retries a call may ask for.
    pub max_retries: u32,
    /// Retries when a call does not say (only for retry-safe tools).
    pub default_retries: u32,
    /// Pause before the first retry when a call does not say.
    pub default_retry_delay_ms: u64,
    /// Longest pause between two attempts, whatever a call asks for.
    pub max_retry_delay_ms: u64,
    /// How long a person may take to answer a confirmation (elicitation);
    /// then the call ends as declined, nothing changed. Not counted in the
    /// write's own deadline.
    pub confirm_timeout_ms: u64,
    /// Ask the person for required values a call left out (elicitation, when
    /// the client can be asked) instead of refusing it: flat primitive fields
    /// only, never identity fields, secrets or `writeOnly` ones. Off unless set.
    pub ask_for_missing: bool,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_param_bytes: 1024 * 1024,
            max_depth: 32,
            max_timeout_ms: 120_000,
            read_deadline_ms: 5_000,
            max_retries: 5,
            default_retries: 1,
            default_retry_delay_ms: 50,
            max_retry_delay_ms: 2_000,
            confirm_timeout_ms: 300_000,
            ask_for_missing: false,
        }
    }
}
