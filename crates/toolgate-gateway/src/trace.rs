//! Trace events: a `start` and an `end` (or `cancelled`) event per
//! execution, and an `asked` one when the person behind it was asked to
//! confirm, sent to subscribers with secrets redacted and sizes clipped.

use std::time::Instant;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use tokio::sync::broadcast;
use toolgate_core::{Envelope, ErrorCode, ToolContext};

use crate::echo;

/// Which moment of a call an event reports.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum TraceKind {
    /// The call was received (before lookup and validation).
    Start,
    /// The call answered; `success`, `code`, `result` say how.
    #[default]
    End,
    /// The caller went away (the request was cancelled or its connection
    /// closed) before the call answered; the tool was stopped.
    Cancelled,
    /// The person behind the call was asked to confirm a write (elicitation);
    /// `result` holds the question and the answer's outcome (`confirmed`,
    /// `declined`, `cancelled`, `unanswered`), never what they typed.
    Asked,
}

/// What one moment of one execution looked like, for logs and the live trace stream.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct TraceEvent {
    /// `start`, `end`, `cancelled` or `asked`.
    #[serde(default)]
    pub kind: TraceKind,
    /// The call's trace id.
    pub trace_id: String,
    /// The tool as the caller named it (clipped).
    pub tool: String,
    /// Who called.
    pub user_id: String,
    /// With which role.
    pub role: String,
    /// The parameters, secrets redacted, long strings clipped (`null` when
    /// they were refused before reading).
    pub params: Value,
    /// Whether it succeeded (`false` on `start` and `cancelled`).
    pub success: bool,
    /// The error code, when it failed.
    pub code: Option<ErrorCode>,
    /// On `end`: the result (or the error's code and message), secrets
    /// redacted and cut to a few kilobytes.
    #[serde(default)]
    pub result: Value,
    /// The kinds of the signals it carried.
    pub signals: Vec<String>,
    /// Wall time in milliseconds (so far, for `cancelled`; 0 on `start`).
    pub duration_ms: f64,
    /// How many attempts ran.
    pub attempts: u32,
    /// When it happened.
    pub timestamp: String,
    /// Images the result carried (a chart), for the web page; absent when none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub images: Vec<toolgate_core::Image>,
}

/// Largest result shown in a trace event, in bytes of JSON text.
const MAX_TRACED_RESULT: usize = 4096;

/// The trace of one call: sends `start` when made, `end` when told, and
/// `cancelled` when dropped before that (the call's future was dropped).
pub(crate) struct CallTrace {
    sender: broadcast::Sender<TraceEvent>,
    started: Instant,
    /// The `start` event, kept to build the later ones; `None` once ended.
    event: Option<TraceEvent>,
}

impl CallTrace {
    pub(crate) fn start(
        sender: broadcast::Sender<TraceEvent>,
        ctx: &ToolContext,
        tool: &str,
        params: Value,
    ) -> Self {
        let event = TraceEvent {
            kind: TraceKind::Start,
            trace_id: ctx.trace_id.clone(),
            tool: tool.to_owned(),
            user_id: ctx.caller.user_id.clone(),
            role: ctx.caller.role.clone(),
            params,
            success: false,
            code: None,
            result: Value::Null,
            signals: Vec::new(),
            duration_ms: 0.0,
            attempts: 0,
            timestamp: now(),
            images: Vec::new(),
        };
        let _ = sender.send(event.clone());
        Self { sender, started: Instant::now(), event: Some(event) }
    }

    /// The person was asked `question`, and `outcome` is how they answered.
    pub(crate) fn asked(&self, question: &str, outcome: &str) {
        let Some(start) = &self.event else { return };
        let mut event = start.clone();
        event.kind = TraceKind::Asked;
        event.result = json!({ "question": echo::clip_to(question, 500), "outcome": outcome });
        event.duration_ms = self.started.elapsed().as_secs_f64() * 1000.0;
        event.timestamp = now();
        let _ = self.sender.send(event);
    }

    pub(crate) fn end(mut self, envelope: &Envelope) {
        let Some(mut event) = self.event.take() else { return };
        event.kind = TraceKind::End;
        event.success = envelope.success;
        event.code = envelope.code();
        event.result = match (&envelope.result, &envelope.error) {
            (_, Some(error)) => json!({ "code": error.code, "message": echo::clip_to(&error.message, 500) }),
            (Some(result), None) => traced_result(result),
            (None, None) => Value::Null,
        };
        event.signals = envelope.signals.iter().map(|s| s.kind().to_owned()).collect();
        event.duration_ms = envelope.metadata.duration_ms;
        event.attempts = envelope.metadata.attempts;
        event.timestamp = envelope.metadata.timestamp.clone();
        event.images = envelope.images.clone();
        let _ = self.sender.send(event);
    }
}

impl Drop for CallTrace {
    fn drop(&mut self) {
        if let Some(mut event) = self.event.take() {
            event.kind = TraceKind::Cancelled;
            event.duration_ms = self.started.elapsed().as_secs_f64() * 1000.0;
            event.timestamp = now();
            let _ = self.sender.send(event);
        }
    }
}

fn now() -> String {
    toolgate_core::Metadata::now("", 0.0, 0).timestamp
}

/// A result as a trace shows it: secrets redacted; when its JSON is larger
/// than a few kilobytes, a preview of it instead.
fn traced_result(result: &Value) -> Value {
    let redacted = redact_bounded(result, 0);
    let text = redacted.to_string();
    if text.len() <= MAX_TRACED_RESULT {
        redacted
    } else {
        json!({ "truncated": true, "bytes": text.len(), "preview": echo::clip_to(&text, 1000) })
    }
}

/// [`redact`] for values the gateway did not check (a tool's result): stops
/// descending past a depth instead of recursing without bound.
fn redact_bounded(value: &Value, depth: usize) -> Value {
    if depth > 32 {
        return Value::String("[nested too deep]".into());
    }
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| {
                    let v = if is_secret(k) {
                        Value::String("[redacted]".into())
                    } else {
                        redact_bounded(v, depth + 1)
                    };
                    (k.clone(), v)
                })
                .collect::<Map<String, Value>>(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(|v| redact_bounded(v, depth + 1)).collect()),
        other => other.clone(),
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
