//! Model endpoint failures, with the provider's own message, and which of
//! them are worth another attempt.

use std::time::{Duration, SystemTime};

use serde_json::Value;

/// Longest message a model error carries, in characters. It is cut here,
/// after secrets were removed (never before: a key straddling a cut would
/// survive in part); text cut earlier (an excerpt, a capped body) is always
/// at least four times longer, so what that first cut split is gone.
pub(crate) const MAX_MESSAGE_CHARS: usize = 500;

/// What kind of failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
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
    /// The answer passed a size limit (a turn, a line of the stream).
    TooLarge,
    /// The model asked to wait (`Retry-After`) longer than the run has left.
    Deadline,
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
            Self::TooLarge => "too_large",
            Self::Deadline => "deadline",
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
    /// How long the provider asked to wait before the next attempt (`Retry-After`).
    pub retry_after: Option<Duration>,
}

impl ModelError {
    pub(crate) fn new(kind: ModelErrorKind, message: impl Into<String>) -> Self {
        Self { kind, status: None, message: message.into(), retry_after: None }
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
    /// `{"error": "..."}` for Ollama), or the body. Not cut yet: [`Self::scrub`]
    /// cuts, once the key is out.
    pub(crate) fn from_status(status: u16, body: &str) -> Self {
        let message = provider_message(body).unwrap_or_else(|| {
            let text = body.trim();
            if text.is_empty() { format!("HTTP {status} with an empty body") } else { text.to_owned() }
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
        Self { kind, status: Some(status), message, retry_after: None }
    }

    /// The error as it may be shown: every occurrence of `secret` replaced
    /// first, then the message cut to [`MAX_MESSAGE_CHARS`].
    pub(crate) fn scrub(mut self, secret: Option<&str>) -> Self {
        if let Some(secret) = secret.filter(|s| s.len() >= 4) {
            self.message = self.message.replace(secret, "[redacted]");
        }
        if let Some((at, _)) = self.message.char_indices().nth(MAX_MESSAGE_CHARS) {
            self.message.truncate(at);
            self.message.push('…');
        }
        self
    }
}

/// A `Retry-After` value: delay seconds or an HTTP date (RFC 9110 10.2.3;
/// its IMF-fixdate form is RFC 2822, which chrono reads), as a wait from
/// `now`; a date in the past is no wait. `None` when unreadable.
pub(crate) fn parse_retry_after(value: &str, now: SystemTime) -> Option<Duration> {
    let value = value.trim();
    if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) {
        return Some(Duration::from_secs(value.parse().unwrap_or(u64::MAX)));
    }
    let at = SystemTime::from(chrono::DateTime::parse_from_rfc2822(value).ok()?);
    Some(at.duration_since(now).unwrap_or(Duration::ZERO))
}

/// `error.message`, `error` (a string) or `message` of a JSON error body.
pub(crate) fn provider_message(body: &str) -> Option<String> {
    let value: Value = serde_json::from_str(body.trim()).ok()?;
    let text = value["error"]["message"]
        .as_str()
        .or_else(|| value["error"].as_str())
        .or_else(|| value["message"].as_str())
        .or_else(|| value["detail"].as_str())?;
    Some(text.to_owned())
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

    #[test]
    fn a_key_across_the_cut_is_removed_before_the_cut() {
        let key = "sk-proj-0123456789abcdefghijklmnopqrstuv";
        for pad in [480, 490, 499, 280, 295] {
            let body = format!("{{\"error\": {{\"message\": \"{}{key} rest\"}}}}", "x".repeat(pad));
            let e = ModelError::from_status(400, &body).scrub(Some(key));
            assert!(!e.message.contains(&key[..8]), "pad {pad}: {}", e.message);
            let raw = format!("{}{key} tail", "y".repeat(pad));
            let e = ModelError::from_status(502, &raw).scrub(Some(key));
            assert!(!e.message.contains(&key[..8]), "pad {pad}: {}", e.message);
            assert!(e.message.chars().count() <= MAX_MESSAGE_CHARS + 1);
        }
    }

    #[test]
    fn retry_after_is_seconds_or_an_http_date() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(784_111_777); // Sun, 06 Nov 1994 08:49:37 GMT
        assert_eq!(parse_retry_after(" 1 ", now), Some(Duration::from_secs(1)));
        assert_eq!(parse_retry_after("0", now), Some(Duration::ZERO));
        assert_eq!(parse_retry_after("Sun, 06 Nov 1994 08:49:40 GMT", now), Some(Duration::from_secs(3)));
        assert_eq!(parse_retry_after("Sun, 06 Nov 1994 08:49:00 GMT", now), Some(Duration::ZERO));
        assert_eq!(parse_retry_after("soon", now), None);
        assert_eq!(parse_retry_after("-1", now), None);
        assert_eq!(parse_retry_after("", now), None);
    }
}
