//! Everything the gateway repeats back (names, values, field errors, traced
//! parameters) passes through here: secrets are redacted and sizes clipped,
//! so no input, however large or sensitive, comes back larger or readable.

use serde_json::{Map, Value};
use toolgate_core::FieldError;
use toolgate_core::params::type_name;

use crate::trace::is_secret;

/// Longest name (tool, skill, field) repeated in a message or in metadata.
pub(crate) const MAX_NAME: usize = 64;
/// Longest string value repeated in a trace.
const MAX_VALUE: usize = 200;
/// Longest field-error message, JSON pointer and `expected` text.
const MAX_MESSAGE: usize = 600;
const MAX_POINTER: usize = 200;
/// Most field errors in one answer: ten thousand unknown fields must not
/// make an answer ten thousand lines long.
pub(crate) const MAX_ERRORS: usize = 20;

/// `s` cut to `max` characters, with `…` when cut.
pub(crate) fn clip_to(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", &s[..at]),
        None => s.to_owned(),
    }
}

/// A name as the caller sent it, cut to [`MAX_NAME`] characters.
pub(crate) fn clip_str(name: &str) -> String {
    clip_to(name, MAX_NAME)
}

/// Every `` `quoted` `` span of a message cut to [`MAX_NAME`], then the
/// whole message to [`MAX_MESSAGE`].
fn clip_message(message: &str) -> String {
    if message.len() <= MAX_NAME {
        return message.to_owned();
    }
    let mut out = String::with_capacity(message.len().min(MAX_MESSAGE * 4));
    for (i, part) in message.split('`').enumerate() {
        if i > 0 {
            out.push('`');
        }
        if i % 2 == 1 {
            out.push_str(&clip_str(part))
        } else {
            out.push_str(&clip_to(part, MAX_MESSAGE))
        }
        if out.len() > MAX_MESSAGE * 4 {
            break;
        }
    }
    clip_to(&out, MAX_MESSAGE)
}

/// A JSON pointer with each segment cut to [`MAX_NAME`].
fn clip_pointer(pointer: &str) -> String {
    let clipped: Vec<String> = pointer.split('/').map(clip_str).collect();
    clip_to(&clipped.join("/"), MAX_POINTER)
}

/// Field errors made safe to answer: an error about a secret-looking field
/// (`api_key`, `token`, ...) never repeats its value (not in `actual`, not
/// in the message, which may quote it); names, pointers and messages are
/// clipped; at most [`MAX_ERRORS`] errors, the last one saying how many more.
pub(crate) fn field_errors(errors: Vec<FieldError>) -> Vec<FieldError> {
    let total = errors.len();
    let mut out: Vec<FieldError> = errors.into_iter().take(MAX_ERRORS).map(field_error).collect();
    if total > MAX_ERRORS {
        out.push(FieldError::new(
            "",
            "fewer problems",
            &Value::Null,
            format!("{} more problems are not listed; fix these first", total - MAX_ERRORS),
        ));
    }
    out
}

fn field_error(mut e: FieldError) -> FieldError {
    let secret = e.pointer.split('/').any(is_secret)
        || e.message.split('`').skip(1).step_by(2).any(|quoted| is_secret(&clip_str(quoted)));
    e.pointer = clip_pointer(&e.pointer);
    e.expected = clip_to(&e.expected, MAX_MESSAGE);
    if secret && !matches!(e.actual, Value::Null) {
        let field = e.pointer.rsplit('/').next().unwrap_or_default().to_owned();
        e.actual = Value::String("[redacted]".into());
        e.message =
            format!("`{field}` is not valid (expected {}); its value is not repeated here", e.expected);
    } else {
        e.actual = toolgate_core::params::shorten(&e.actual);
        e.message = clip_message(&e.message);
    }
    e
}

/// The answer to parameters that are not an object. The value is not
/// repeated: a bare string may be a pasted secret, and nothing says it is not.
pub(crate) fn not_an_object(params: &Value) -> FieldError {
    FieldError::new(
        "",
        "a JSON object of the tool's parameters",
        &Value::String(format!("{} (not repeated here)", type_name(params))),
        format!(
            "parameters must be a JSON object such as {{\"field\": value}}, got {}; read the tool's schema with get_tool_schema",
            type_name(params)
        ),
    )
}

/// Parameters as a trace shows them: secret-looking keys redacted, long
/// strings and names clipped, and anything that is not an object (a bare
/// string may be a pasted secret) only described. Call it only on values
/// that passed the depth limit.
pub(crate) fn traced(params: &Value) -> Value {
    match params {
        Value::Object(_) => clip_value(&crate::trace::redact(params)),
        other => Value::String(format!("[{} not shown]", type_name(other))),
    }
}

fn clip_value(value: &Value) -> Value {
    match value {
        Value::String(s) => Value::String(clip_to(s, MAX_VALUE)),
        Value::Array(items) => Value::Array(items.iter().map(clip_value).collect()),
        Value::Object(map) => {
            let out: Map<String, Value> = map.iter().map(|(k, v)| (clip_str(k), clip_value(v))).collect();
            Value::Object(out)
        }
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn clipping_keeps_short_text_and_cuts_long_text() {
        assert_eq!(clip_to("abc", 3), "abc");
        assert_eq!(clip_to("abcd", 3), "abc…");
        assert_eq!(clip_to("ééééé", 2), "éé…");
        let long = "x".repeat(900_000);
        let message = format!("`{long}` is not a parameter; allowed: date");
        let clipped = clip_message(&message);
        assert!(clipped.len() < 200, "{}", clipped.len());
        assert!(clipped.ends_with("allowed: date"));
    }

    #[test]
    fn non_objects_are_never_repeated() {
        let e = not_an_object(&json!("sk-live-0123456789"));
        assert!(!serde_json::to_string(&e).unwrap().contains("sk-live"));
        assert_eq!(traced(&json!("sk-live-0123456789")), json!("[a string not shown]"));
        assert_eq!(traced(&json!({"api_key": "sk", "n": 1}))["api_key"], "[redacted]");
    }

    #[test]
    fn errors_are_capped() {
        let many: Vec<FieldError> =
            (0..50).map(|i| FieldError::new(format!("/f{i}"), "x", &Value::Null, "m")).collect();
        let out = field_errors(many);
        assert_eq!(out.len(), MAX_ERRORS + 1);
        assert!(out[MAX_ERRORS].message.contains("30 more"));
    }
}
