//! Model endpoint failures, with the provider's own message, and which of
//! them are worth another attempt.

use serde_json::Value;

/// What kind of failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModelErrorKind {
    /// 401/403: the key is missing, wrong or lacks access.
    Unauthorized,
    /// 429: too many requests (transient).
    RateLimited,
    /// 5xx (transient).
    Server,
    /// The conversation no longer fits the model's context window.
    ContextTooLong,
    /// Any other 4xx: the request itself is wrong (unknown model, bad field).
    BadRequest,
    /// No answer within the idle timeout (transient).
    Timeout,
    /// The endpoint could not be reached (transient).
    Connect,
    /// The answer could not be read (not SSE, not JSON, cut short).
    Malformed,
}

impl ModelErrorKind {
    /// The snake_case name used in messages.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Unauthorized => "unauthorized",
            Self::RateLimited => "rate_limited",
            Self::Server => "server_error",
            Self::ContextTooLong => "context_too_long",
            Self::BadRequest => "bad_request",
            Self::Timeout => "timeout",
            Self::Connect => "connect",
            Self::Malformed => "malformed",
        }
    }
}

/// A failed model request.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("model {kind}{status}: {message}", kind = kind.as_str(), status = status.map(|s| format!(" (HTTP {s})")).unwrap_or_default())]
pub struct ModelError {
    /// The kind.
    pub kind: ModelErrorKind,
    /// The HTTP status, when there was one.
    pub status: Option<u16>,
    /// The provider's message (secrets removed).
    pub message: String,
}

impl ModelError {
    pub(crate) fn new(kind: ModelErrorKind, message: impl Into<String>) -> Self {
        Self { kind, status: None, message: message.into() }
    }

    /// Whether another attempt may succeed.
    pub fn is_transient(&self) -> bool {
        matches!(
            self.kind,
            ModelErrorKind::RateLimited
                | ModelErrorKind::Server
                | ModelErrorKind::Timeout
                | ModelErrorKind::Connect
        )
    }

    /// An HTTP error answer: the provider's message from its JSON body
    /// (`{"error": {"message"}}` for OpenAI, vLLM and llama.cpp,
    /// `{"error": "..."}` for Ollama), or the body's start.
    pub(crate) fn from_status(status: u16, body: &str) -> Self {
        let message = provider_message(body).unwrap_or_else(|| {
            let text: String = body.trim().chars().take(300).collect();
            if text.is_empty() { format!("HTTP {status} with an empty body") } else { text }
        });
        let lower = message.to_lowercase();
        let code = serde_json::from_str::<Value>(body)
            .ok()
            .and_then(|v| v["error"]["code"].as_str().map(str::to_owned))
            .unwrap_or_default();
        let kind = match status {
            401 | 403 => ModelErrorKind::Unauthorized,
            429 => ModelErrorKind::RateLimited,
            408 | 500..=599 => ModelErrorKind::Server,
            _ if code == "context_length_exceeded"
                || lower.contains("context length")
                || lower.contains("context window")
                || lower.contains("maximum context")
                || lower.contains("exceeds the available context") =>
            {
                ModelErrorKind::ContextTooLong
            }
            _ => ModelErrorKind::BadRequest,
        };
        Self { kind, status: Some(status), message }
    }

    /// The same error with every occurrence of `secret` replaced.
    pub(crate) fn scrub(mut self, secret: Option<&str>) -> Self {
        if let Some(secret) = secret.filter(|s| s.len() >= 4) {
            self.message = self.message.replace(secret, "[redacted]");
        }
        self
    }
}

/// `error.message`, `error` (a string) or `message` of a JSON error body.
pub(crate) fn provider_message(body: &str) -> Option<String> {
    let value: Value = serde_json::from_str(body.trim()).ok()?;
    let text = value["error"]["message"]
        .as_str()
        .or_else(|| value["error"].as_str())
        .or_else(|| value["message"].as_str())
        .or_else(|| value["detail"].as_str())?;
    Some(text.chars().take(500).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_and_bodies_map_to_kinds() {
        let openai = r#"{"error": {"message": "Incorrect API key provided: sk-abc", "type": "invalid_request_error", "code": "invalid_api_key"}}"#;
        let e = ModelError::from_status(401, openai).scrub(Some("sk-abc"));
        assert_eq!(e.kind, ModelErrorKind::Unauthorized);
        assert_eq!(e.message, "Incorrect API key provided: [redacted]");
        assert!(!e.is_transient());
        let ctx = r#"{"error": {"message": "This model's maximum context length is 8192 tokens", "code": "context_length_exceeded"}}"#;
        assert_eq!(ModelError::from_status(400, ctx).kind, ModelErrorKind::ContextTooLong);
        let ollama = r#"{"error": "model \"nope\" not found, try pulling it first"}"#;
        let e = ModelError::from_status(404, ollama);
        assert_eq!(
            (e.kind, e.message.as_str()),
            (ModelErrorKind::BadRequest, "model \"nope\" not found, try pulling it first")
        );
        assert!(ModelError::from_status(503, "<html>down</html>").is_transient());
        assert_eq!(ModelError::from_status(502, "").message, "HTTP 502 with an empty body");
    }
}
