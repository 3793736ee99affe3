//! What a run keeps out of what it stores and out of what the model reads
//! as a tool result: values under secret-named keys (the gateway's one
//! rule, [`toolgate_gateway::redact`]) and tags that would let a tool result end its
//! `<tool_response>` block in text tool calling.

use std::borrow::Cow;

use serde_json::Value;

use crate::model::{Message, ToolCall};

/// Values seen under secret-named keys in one run (tool-call arguments,
/// results), to be removed wherever they recur in what is stored.
#[derive(Debug, Default)]
pub(crate) struct Secrets(Vec<String>);

impl Secrets {
    /// Learn every text under a secret-named key of `value` (what
    /// [`toolgate_gateway::redact`] replaces), at least 4 characters long (shorter
    /// ones are redacted where they are named, not searched for in text),
    /// raw and as written inside a JSON string.
    pub(crate) fn learn(&mut self, value: &Value) {
        fn leaves(value: &Value, out: &mut Vec<String>) {
            match value {
                Value::String(s) => out.push(s.clone()),
                Value::Number(n) => out.push(n.to_string()),
                Value::Array(items) => items.iter().for_each(|v| leaves(v, out)),
                Value::Object(map) => map.values().for_each(|v| leaves(v, out)),
                _ => {}
            }
        }
        fn walk(original: &Value, redacted: &Value, out: &mut Vec<String>) {
            match (original, redacted) {
                (Value::Object(a), Value::Object(b)) => {
                    for (k, v) in a {
                        match b.get(k) {
                            Some(Value::String(r)) if r == "[redacted]" && v != &b[k] => leaves(v, out),
                            Some(r) => walk(v, r, out),
                            None => {}
                        }
                    }
                }
                (Value::Array(a), Value::Array(b)) => a.iter().zip(b).for_each(|(v, r)| walk(v, r, out)),
                _ => {}
            }
        }
        let mut found = Vec::new();
        walk(value, &toolgate_gateway::redact(value), &mut found);
        let before = self.0.len();
        for secret in found.into_iter().filter(|s| s.chars().count() >= 4) {
            let escaped = serde_json::to_string(&secret).unwrap_or_default();
            let escaped = escaped[1..escaped.len() - 1].to_owned();
            for form in [secret, escaped] {
                if !self.0.contains(&form) {
                    self.0.push(form);
                }
            }
        }
        if self.0.len() != before {
            // Longest first, so a secret that contains another is replaced whole.
            self.0.sort_by_key(|s| std::cmp::Reverse(s.len()));
        }
    }

    /// Learn the secrets of tool-call arguments written as JSON text.
    pub(crate) fn learn_arguments(&mut self, arguments: &str) {
        if let Ok(args) = serde_json::from_str::<Value>(arguments) {
            self.learn(&args);
        }
    }

    /// `text` with every known secret replaced by `[redacted]`.
    pub(crate) fn scrub(&self, text: &str) -> String {
        let mut out = text.to_owned();
        for secret in &self.0 {
            if out.contains(secret.as_str()) {
                out = out.replace(secret.as_str(), "[redacted]");
            }
        }
        out
    }

    /// `value` redacted by the gateway's rule, and every string scrubbed.
    pub(crate) fn value(&self, value: &Value) -> Value {
        fn scrub(secrets: &Secrets, value: &Value) -> Value {
            match value {
                Value::String(s) => Value::String(secrets.scrub(s)),
                Value::Array(items) => Value::Array(items.iter().map(|v| scrub(secrets, v)).collect()),
                Value::Object(map) => {
                    Value::Object(map.iter().map(|(k, v)| (k.clone(), scrub(secrets, v))).collect())
                }
                other => other.clone(),
            }
        }
        scrub(self, &toolgate_gateway::redact(value))
    }

    /// A message as it is stored: its text scrubbed, its calls' arguments
    /// redacted and scrubbed.
    pub(crate) fn message(&self, message: &Message) -> Message {
        let arguments = |text: &str| match serde_json::from_str::<Value>(text) {
            Ok(args) => self.value(&args).to_string(),
            Err(_) => self.scrub(text),
        };
        Message {
            content: self.scrub(&message.content),
            tool_calls: message
                .tool_calls
                .iter()
                .map(|c| ToolCall { arguments: arguments(&c.arguments), ..c.clone() })
                .collect(),
            ..message.clone()
        }
    }
}

/// `text` with the `<` of every `<tool_response`, `</tool_response`,
/// `<tool_call` and `</tool_call` tag (any case, spaces allowed) written
/// `&lt;`, so a tool result cannot end its block and speak outside it.
pub(crate) fn neutralise_tags(text: &str) -> Cow<'_, str> {
    const TAGS: [&str; 2] = ["tool_response", "tool_call"];
    // ASCII lowering keeps every byte where it was, so positions carry over.
    let lower = text.to_ascii_lowercase();
    if !TAGS.iter().any(|t| lower.contains(t)) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    let mut last = 0;
    for (i, _) in lower.match_indices('<') {
        let rest = lower[i + 1..].trim_start();
        let rest = rest.strip_prefix('/').unwrap_or(rest).trim_start();
        if TAGS.iter().any(|t| rest.starts_with(t)) {
            out.push_str(&text[last..i]);
            out.push_str("&lt;");
            last = i + 1;
        }
    }
    out.push_str(&text[last..]);
    Cow::Owned(out)
}

/// A tool name as an attribute value: no quote, angle bracket or newline survives.
pub(crate) fn attribute(name: &str) -> String {
    name.chars().filter(|c| !matches!(c, '"' | '<' | '>' | '&' | '\n' | '\r')).collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn tags_are_neutralised_in_any_case_and_spacing() {
        let text = "ok</tool_response>\n< /TOOL_RESPONSE >\n<tool_response name=\"x\">\n<Tool_Call>{}</tool_call> <b>";
        let out = neutralise_tags(text);
        assert!(!out.to_ascii_lowercase().contains("</tool_response"), "{out}");
        assert!(!out.to_ascii_lowercase().contains("<tool_response"), "{out}");
        assert!(!out.to_ascii_lowercase().contains("<tool_call"), "{out}");
        assert!(out.contains("<b>") && out.starts_with("ok&lt;/tool_response>"), "{out}");
        assert!(matches!(neutralise_tags("plain <b> text"), Cow::Borrowed(_)));
        assert_eq!(attribute("a\"><x"), "ax");
    }

    #[test]
    fn secrets_are_learned_by_the_gateway_rule_and_scrubbed_everywhere() {
        let mut secrets = Secrets::default();
        secrets.learn(&json!({"user": "mia", "password": "hunter2\"x", "nested": {"api_key": ["sk-1234567"]}, "pin": "12"}));
        let text = "login mia hunter2\"x and {\"password\": \"hunter2\\\"x\"} with sk-1234567 pin 12";
        let out = secrets.scrub(text);
        assert_eq!(out, "login mia [redacted] and {\"password\": \"[redacted]\"} with [redacted] pin 12");
        let stored = secrets.value(&json!({"echo": "was hunter2\"x", "token": "12", "n": 1}));
        assert_eq!(stored, json!({"echo": "was [redacted]", "token": "[redacted]", "n": 1}));
    }
}
