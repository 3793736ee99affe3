//! Trace events: one per execution, sent to subscribers with secrets redacted.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use tool_core::{Envelope, ErrorCode, ToolContext};

/// What one execution looked like, for logs and the live trace stream.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TraceEvent {
    /// The call's trace id.
    pub trace_id: String,
    /// The tool as the caller named it.
    pub tool: String,
    /// Who called.
    pub user_id: String,
    /// With which role.
    pub role: String,
    /// The parameters, secrets redacted (`null` when they were refused before reading).
    pub params: Value,
    /// Whether it succeeded.
    pub success: bool,
    /// The error code, when it failed.
    pub code: Option<ErrorCode>,
    /// The kinds of the signals it carried.
    pub signals: Vec<String>,
    /// Wall time in milliseconds.
    pub duration_ms: f64,
    /// How many attempts ran.
    pub attempts: u32,
    /// When it finished.
    pub timestamp: String,
    /// Images the result carried (a chart), for the web page; absent when none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub images: Vec<tool_core::Image>,
}

impl TraceEvent {
    pub(crate) fn new(ctx: &ToolContext, envelope: &Envelope, params: Value) -> Self {
        Self {
            trace_id: ctx.trace_id.clone(),
            tool: envelope.metadata.tool.clone(),
            user_id: ctx.caller.user_id.clone(),
            role: ctx.caller.role.clone(),
            params,
            success: envelope.success,
            code: envelope.code(),
            signals: envelope.signals.iter().map(|s| s.kind().to_owned()).collect(),
            duration_ms: envelope.metadata.duration_ms,
            attempts: envelope.metadata.attempts,
            timestamp: envelope.metadata.timestamp.clone(),
            images: envelope.images.clone(),
        }
    }
}

/// Whether a parameter name holds a secret.
pub(crate) fn is_secret(key: &str) -> bool {
    let k: String =
        key.chars().filter(|c| c.is_ascii_alphanumeric()).flat_map(|c| c.to_lowercase()).collect();
    ["key", "token", "secret", "password", "passwd", "credential", "authorization", "cookie"]
        .iter()
        .any(|w| k.contains(w))
}

/// A copy of `value` in which every value under a secret-looking key
/// (`api_key`, `token`, `password`, ...) is replaced by `"[redacted]"`.
/// Call it only on values that passed the depth limit.
pub fn redact(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut out = Map::with_capacity(map.len());
            for (k, v) in map {
                let v = if is_secret(k) { Value::String("[redacted]".into()) } else { redact(v) };
                out.insert(k.clone(), v);
            }
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(items.iter().map(redact).collect()),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn secrets_are_redacted_at_any_depth() {
        let v = json!({"provider": "acme", "api_key": "sk-1", "nested": [{"Auth-Token": "t"}], "monkey": 1});
        let r = redact(&v);
        assert_eq!(r["api_key"], "[redacted]");
        assert_eq!(r["nested"][0]["Auth-Token"], "[redacted]");
        assert_eq!(r["provider"], "acme");
        assert!(!r.to_string().contains("sk-1"));
    }
}
