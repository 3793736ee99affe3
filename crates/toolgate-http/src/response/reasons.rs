//! The backend's own words and reasons when it refuses a request: the shapes error bodies
//! come in (RFC 9457/7807 problems, JSON:API, Prism, FastAPI, ASP.NET/Rails maps, Google,
//! Zod, toolgate's own), turned into messages and field errors pointing into the parameters.

use serde_json::Value;
use toolgate_core::FieldError;

use super::preview;

/// The backend's own words, when its error body has a recognizable shape:
/// `{"error": {"message", "fields": [{"field", "message"}]}}`, `{"error": "..."}`,
/// `{"message": "..."}`, `{"detail": "..."}` or (a problem without a detail) `{"title": "..."}`.
pub(super) fn backend_message(body: &Value) -> Option<String> {
    let error = &body["error"];
    [&error["message"], error, &body["message"], &body["detail"], &body["title"]]
        .into_iter()
        .find_map(|v| v.as_str())
        .map(str::to_owned)
}

/// `items[0].name` -> `/items/0/name`; `body`, `path`, `query` (the whole request) -> `""`.
pub(super) fn field_pointer(field: &str) -> String {
    if matches!(field, "" | "body" | "path" | "query") {
        return String::new();
    }
    let mut out = String::new();
    for part in field.split(['.', '[']) {
        let part = part.trim_end_matches(']');
        if !part.is_empty() {
            out.push('/');
            out.push_str(&part.replace('~', "~0").replace('/', "~1"));
        }
    }
    out
}

/// At most this many of the backend's reasons go into `details.reasons` (the rest are counted).
pub(crate) const MAX_REASONS: usize = 10;
/// At most this many characters of one reason's message.
pub(super) const REASON_CHARS: usize = 200;
/// At most this many characters of where a reason points.
pub(super) const AT_CHARS: usize = 100;
/// How many reasons the message of a 400/422 names (all of them are in `details.reasons`).
pub(super) const REASONS_IN_MESSAGE: usize = 3;

/// One reason a backend gave for refusing a request: where (as the backend wrote it: a JSON
/// pointer, `body.name`, `items[0].qty`), and what.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Reason {
    pub(super) at: Option<String>,
    pub(super) message: String,
}

impl Reason {
    pub(super) fn to_json(&self) -> Value {
        let mut out = serde_json::Map::new();
        if let Some(at) = &self.at {
            out.insert("at".into(), at.clone().into());
        }
        out.insert("message".into(), self.message.clone().into());
        Value::Object(out)
    }

    /// `at: message`, or the message alone.
    pub(super) fn said(&self) -> String {
        match &self.at {
            Some(at) => format!("{at}: {}", self.message),
            None => self.message.clone(),
        }
    }
}

/// Keys under which error bodies list their reasons: RFC 9457 `errors` and RFC 7807
/// `invalid-params`, JSON:API `errors`, Prism's `validation`, FastAPI's `detail` list, Zod's
/// `issues`, Zalando's `violations`, ASP.NET's and Rails' `errors` maps, Google's
/// `details[].fieldViolations`, toolgate's own `error.fields`.
pub(super) const REASON_LISTS: [&str; 14] = [
    "errors",
    "fields",
    "invalid-params",
    "invalid_params",
    "invalidParams",
    "validation",
    "validationErrors",
    "violations",
    "fieldViolations",
    "fieldErrors",
    "field_errors",
    "issues",
    "details",
    "detail",
];
/// Keys of a reason's text, most specific first.
pub(super) const MESSAGE_KEYS: [&str; 9] =
    ["message", "detail", "msg", "reason", "description", "defaultMessage", "title", "error", "code"];
/// Keys of where a reason points, most specific first.
pub(super) const AT_KEYS: [&str; 13] = [
    "pointer",
    "instancePath",
    "field",
    "name",
    "param",
    "parameter",
    "property",
    "propertyPath",
    "path",
    "loc",
    "location",
    "dataPath",
    "key",
];

/// Where a reason points, as text: a string as is (a `#/a` pointer without its `#`), a list
/// (`["body", "items", 0]`) joined with dots, JSON:API's `source` by its pointer or parameter.
pub(super) fn at_text(item: &serde_json::Map<String, Value>) -> Option<String> {
    let from = |v: &Value| -> Option<String> {
        match v {
            Value::String(s) if !s.trim().is_empty() => Some(s.trim().trim_start_matches('#').to_owned()),
            Value::Array(parts) if !parts.is_empty() => Some(
                parts
                    .iter()
                    .map(|p| match p {
                        Value::String(s) => s.clone(),
                        other => other.to_string(),
                    })
                    .collect::<Vec<_>>()
                    .join("."),
            ),
            _ => None,
        }
    };
    let source = item.get("source").and_then(Value::as_object);
    AT_KEYS
        .iter()
        .filter_map(|k| item.get(*k))
        .chain(["pointer", "parameter", "header"].iter().filter_map(|k| source?.get(*k)))
        .find_map(from)
        .map(|at| preview(&at, AT_CHARS))
}

/// The reasons of an error body, in the order given, at most [`MAX_REASONS`]; and how many
/// there were in all.
pub(super) fn reasons(body: &Value) -> (Vec<Reason>, usize) {
    let mut out: Vec<Reason> = Vec::new();
    let mut total = 0;
    let mut keep = |reason: Reason, out: &mut Vec<Reason>| {
        if !out.contains(&reason) {
            total += 1;
            if out.len() < MAX_REASONS {
                out.push(reason);
            }
        }
    };
    let mut lists: Vec<&Value> = Vec::new();
    for root in [body, &body["error"]].into_iter().filter(|r| r.is_object()) {
        lists.extend(REASON_LISTS.iter().filter_map(|k| root.get(*k)).filter(|l| !l.is_string()));
    }
    // A list's items may hold the list (Google: `details[].fieldViolations`): one level more.
    let mut nested: Vec<&Value> = Vec::new();
    for list in &lists {
        for item in list.as_array().into_iter().flatten().filter_map(Value::as_object) {
            nested.extend(REASON_LISTS.iter().filter_map(|k| item.get(*k)).filter(|l| !l.is_string()));
        }
    }
    lists.extend(nested);
    for list in lists {
        match list {
            Value::Array(items) => {
                for item in items {
                    let reason = match item {
                        Value::String(s) => Some(Reason { at: None, message: s.clone() }),
                        Value::Object(o) => MESSAGE_KEYS
                            .iter()
                            .find_map(|k| o.get(*k).and_then(Value::as_str))
                            .map(|m| Reason { at: at_text(o), message: m.to_owned() }),
                        _ => None,
                    };
                    if let Some(mut reason) = reason.filter(|r| !r.message.trim().is_empty()) {
                        reason.message = preview(reason.message.trim(), REASON_CHARS);
                        keep(reason, &mut out);
                    }
                }
            }
            // `{"name": ["can't be blank"], "age": "too low"}` (Rails, ASP.NET).
            Value::Object(map) => {
                for (at, said) in map {
                    let messages: Vec<&str> = match said {
                        Value::String(s) => vec![s.as_str()],
                        Value::Array(a) => a.iter().filter_map(Value::as_str).collect(),
                        _ => Vec::new(),
                    };
                    for message in messages.into_iter().filter(|m| !m.trim().is_empty()) {
                        let at = at.trim_start_matches('$').trim_start_matches('.');
                        let at = (!at.is_empty()).then(|| preview(at, AT_CHARS));
                        keep(Reason { at, message: preview(message.trim(), REASON_CHARS) }, &mut out);
                    }
                }
            }
            _ => {}
        }
    }
    (out, total)
}

/// A reason's place as a pointer into the parameters: a JSON pointer as is, else the path the
/// backend wrote (`body.items[0].name`, `items.0.name`) without a leading request part.
pub(super) fn reason_pointer(at: &str) -> String {
    if at.starts_with('/') {
        return at.to_owned();
    }
    let rest = at
        .split_once(['.', '['])
        .filter(|(first, _)| matches!(*first, "body" | "query" | "path" | "header" | "params"))
        .map_or(at, |(_, rest)| rest);
    field_pointer(rest)
}

pub(super) fn value_at<'a>(params: &'a Value, pointer: &str) -> &'a Value {
    params.pointer(pointer).unwrap_or(&Value::Null)
}

/// The refused fields of a 400/422 as [`FieldError`]s pointing into the parameters: one per
/// reason the backend gave, else one with `fallback`.
pub(super) fn field_errors(reasons: &[Reason], params: &Value, fallback: &str) -> Vec<FieldError> {
    let mut errors: Vec<FieldError> = reasons
        .iter()
        .map(|reason| match &reason.at {
            Some(at) => {
                let pointer = reason_pointer(at);
                let actual = value_at(params, &pointer);
                FieldError::new(pointer.clone(), "a value the backend accepts", actual, reason.said())
            }
            None => FieldError::new("", "a request the backend accepts", &Value::Null, reason.said()),
        })
        .collect();
    if errors.is_empty() {
        errors.push(FieldError::new("", "a request the backend accepts", &Value::Null, fallback));
    }
    errors
}
