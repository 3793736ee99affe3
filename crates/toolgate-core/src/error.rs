//! Standard error codes and the error a tool answers with.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::Signal;

/// Declares [`ErrorCode`], its wire names and [`ErrorCode::ALL`] from one
/// list, so a code cannot be left out of `ALL` (the metrics lay out one slot
/// per code by its index).
macro_rules! error_codes {
    ($( $(#[doc = $doc:literal])* $variant:ident = $wire:literal, )+) => {
        /// The standard error codes. Serialized in SCREAMING_SNAKE_CASE, e.g. `INVALID_PARAMS`.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
        #[serde(rename_all = "SCREAMING_SNAKE_CASE")]
        #[non_exhaustive]
        pub enum ErrorCode {
            $( $(#[doc = $doc])* $variant, )+
        }

        impl ErrorCode {
            /// Every code, in declaration order: `ALL[code.index()] == code`.
            pub const ALL: [ErrorCode; [$(ErrorCode::$variant),+].len()] = [$(ErrorCode::$variant),+];

            /// The wire name, e.g. `"INVALID_PARAMS"`.
            pub fn as_str(self) -> &'static str {
                match self {
                    $( ErrorCode::$variant => $wire, )+
                }
            }
        }
    };
}

error_codes! {
    /// No tool of that name is visible to the caller.
    ToolNotFound = "TOOL_NOT_FOUND",
    /// No skill of that id is visible to the caller.
    SkillNotFound = "SKILL_NOT_FOUND",
    /// The parameters do not match the tool's schema or rules.
    InvalidParams = "INVALID_PARAMS",
    /// The caller's role is below the role the tool needs.
    PermissionDenied = "PERMISSION_DENIED",
    /// The call did not finish within its time limit.
    Timeout = "TIMEOUT",
    /// Every allowed attempt failed with a retryable error.
    RetryExhausted = "RETRY_EXHAUSTED",
    /// The tool ran and failed.
    ExecutionError = "EXECUTION_ERROR",
    /// The tool's output was not the JSON it had to be.
    ParseError = "PARSE_ERROR",
    /// The record asked for does not exist (or is not the caller's).
    NotFound = "NOT_FOUND",
    /// The record is in a state that does not allow the change.
    Conflict = "CONFLICT",
    /// A backend the tool needs is not reachable or not configured.
    Unavailable = "UNAVAILABLE",
    /// The write committed but reading it back did not match.
    VerifyFailed = "VERIFY_FAILED",
    /// A bug on our side; the message says nothing more.
    InternalError = "INTERNAL_ERROR",
    /// The caller sent more calls than its rate limit allows; `details.retry_after_ms`
    /// says how long to wait before trying again.
    RateLimited = "RATE_LIMITED",
}

impl ErrorCode {
    /// The code's position in [`ErrorCode::ALL`].
    pub const fn index(self) -> usize {
        self as usize
    }

    /// Whether a failure with this code is, by default, worth trying again
    /// unchanged; a tool may say otherwise per error with [`ToolError::transient`].
    pub fn is_transient(self) -> bool {
        matches!(self, ErrorCode::Timeout | ErrorCode::Unavailable)
    }
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A failed tool call: a code, a message written for the model, optional
/// structured details and any signals that tell the model what to do next.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{code}: {message}")]
#[non_exhaustive]
pub struct ToolError {
    /// The standard code.
    pub code: ErrorCode,
    /// What went wrong and how to fix it, for the model. No SQL, no stack traces, no secrets.
    pub message: String,
    /// Structured details (e.g. the list of field errors).
    pub details: Option<Value>,
    /// Signals that go with the failure.
    pub signals: Vec<Signal>,
    /// Whether trying again unchanged may succeed (e.g. a backend's 5xx).
    /// Only such failures are retried, and only for retry-safe tools.
    pub transient: bool,
    /// Set when the service behind the tool failed (not the caller): the
    /// gateway counts it in `toolgate_backend_errors_total`. Not part of the answer.
    pub backend: Option<crate::BackendFailure>,
}

/// What a failed write whose request reached (or may have reached) its backend means for the
/// model, said in the same words by every tool source (HTTP domains, upstream MCP servers).
pub const WRITE_OUTCOME_UNKNOWN: &str = "The change may or may not have been applied: read the record before trying again, never repeat the write blindly.";

impl ToolError {
    /// An error with a code and message.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            details: None,
            signals: Vec::new(),
            transient: code.is_transient(),
            backend: None,
        }
    }

    /// Mark the failure as the tool's backend's (its domain's service).
    pub fn backend_failure(mut self, kind: crate::FailureKind) -> Self {
        self.backend = Some(crate::BackendFailure { backend: None, kind });
        self
    }

    /// Mark the failure as the named backend's (an upstream server, a database).
    pub fn backend_failure_of(mut self, backend: impl Into<String>, kind: crate::FailureKind) -> Self {
        self.backend = Some(crate::BackendFailure { backend: Some(backend.into()), kind });
        self
    }

    /// Mark whether trying again unchanged may succeed.
    pub fn transient(mut self, transient: bool) -> Self {
        self.transient = transient;
        self
    }

    /// Attach structured details.
    pub fn with_details(mut self, details: Value) -> Self {
        self.details = Some(details);
        self
    }

    /// Attach a signal.
    pub fn with_signal(mut self, signal: Signal) -> Self {
        self.signals.push(signal);
        self
    }

    /// `INVALID_PARAMS` listing every field error at once.
    pub fn invalid_params(errors: Vec<crate::FieldError>) -> Self {
        let message = crate::params::summarize(&errors);
        let details = serde_json::json!({ "errors": errors });
        Self::new(ErrorCode::InvalidParams, message).with_details(details)
    }

    /// `NOT_FOUND` for a record.
    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::NotFound, message)
    }

    /// `CONFLICT` for a state that forbids the change.
    pub fn conflict(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::Conflict, message)
    }

    /// `UNAVAILABLE` for a backend that cannot be reached or is not configured.
    pub fn unavailable(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::Unavailable, message)
    }

    /// `EXECUTION_ERROR` for a tool that ran and failed.
    pub fn execution(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::ExecutionError, message)
    }

    /// `RATE_LIMITED`: try again after `retry_after_ms` milliseconds
    /// (in `details`, so the model can read it). Not transient: the
    /// gateway does not retry it on its own, the caller waits.
    pub fn rate_limited(message: impl Into<String>, retry_after_ms: u64) -> Self {
        Self::new(ErrorCode::RateLimited, message)
            .with_details(serde_json::json!({ "retry_after_ms": retry_after_ms }))
    }

    /// `INTERNAL_ERROR`; the message is kept generic on purpose.
    pub fn internal() -> Self {
        Self::new(
            ErrorCode::InternalError,
            "internal error in the tool; the call did not complete. Try again later or report it.",
        )
    }
}
