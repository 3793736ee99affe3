//! Schemas and values in words, for error messages the model reads.

use serde_json::Value;

use crate::walk::resolve;

/// What `schema` accepts, in a few words: "an integer from 1 to 100",
/// "a date YYYY-MM-DD", "one of \"kg\", \"lb\"".
pub(crate) fn describe(doc: &Value, schema: &Value) -> String {
    describe_at(doc, schema, 0)
}

fn describe_at(doc: &Value, schema: &Value, depth: usize) -> String {
    let schema = resolve(doc, schema);
    let Value::Object(map) = schema else {
        return match schema {
            Value::Bool(false) => "nothing (the value is not allowed)".into(),
            _ => "any value".into(),
        };
    };
    if depth > 3 {
        return "a value of the documented shape".into();
    }
    if let Some(c) = map.get("const") {
        return format!("exactly {}", show(c));
    }
    if let Some(Value::Array(values)) = map.get("enum") {
        return format!("one of {}", list(values));
    }
    for key in ["oneOf", "anyOf"] {
        if let Some(Value::Array(branches)) = map.get(key) {
            let parts: Vec<String> = branches.iter().map(|b| describe_at(doc, b, depth + 1)).collect();
            if !parts.is_empty() {
                return parts.join(" or ");
            }
        }
    }
    let types: Vec<&str> = match map.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    if types.is_empty() {
        return if map.contains_key("properties") { object_words(map) } else { "any value".into() };
    }
    let parts: Vec<String> = types
        .iter()
        .map(|t| match *t {
            "string" => string_words(map),
            "integer" => number_words(map, "an integer"),
            "number" => number_words(map, "a number"),
            "boolean" => "true or false".into(),
            "null" => "null".into(),
            "array" => array_words(doc, map, depth),
            "object" => object_words(map),
            other => format!("a {other}"),
        })
        .collect();
    parts.join(" or ")
}

fn string_words(map: &serde_json::Map<String, Value>) -> String {
    let format = map.get("format").and_then(Value::as_str);
    if let Some(words) = format.and_then(format_words) {
        return words.to_string();
    }
    let min = map.get("minLength").and_then(Value::as_u64);
    let max = map.get("maxLength").and_then(Value::as_u64);
    let mut out = match (min, max) {
        (Some(lo), Some(hi)) if lo == hi => format!("a string of exactly {lo} characters"),
        (Some(lo), Some(hi)) => format!("a string of {lo} to {hi} characters"),
        (Some(1), None) => "a non-empty string".to_string(),
        (Some(lo), None) => format!("a string of at least {lo} characters"),
        (None, Some(hi)) => format!("a string of at most {hi} characters"),
        (None, None) => "a string".to_string(),
    };
    match map.get("pattern").and_then(Value::as_str) {
        Some(crate::PLAIN_TEXT) => out.push_str(&format!(" {}", crate::tool::PLAIN_TEXT_WORDS)),
        Some(p) => out.push_str(&format!(" matching {p}")),
        None => {}
    }
    if let Some(f) = format {
        out.push_str(&format!(" in {f} format"));
    }
    out
}

/// Words for the formats models get wrong most, with an example.
pub(crate) fn format_words(format: &str) -> Option<&'static str> {
    Some(match format {
        "date" => "a date YYYY-MM-DD (e.g. 2026-07-15)",
        "date-time" => "a date-time in RFC 3339 form (e.g. 2026-07-15T09:30:00Z)",
        "time" => "a time in RFC 3339 form with an offset (e.g. 09:30:00Z)",
        "email" => "an email address (e.g. name@example.com)",
        "uuid" => "a UUID (e.g. 123e4567-e89b-12d3-a456-426614174000)",
        "uri" => "an absolute URI (e.g. https://example.com/page)",
        "duration" => "an ISO 8601 duration (e.g. P3D or PT1H30M)",
        _ => return None,
    })
}

fn number_words(map: &serde_json::Map<String, Value>, noun: &str) -> String {
    let lo = map.get("minimum");
    let hi = map.get("maximum");
    let xlo = map.get("exclusiveMinimum");
    let xhi = map.get("exclusiveMaximum");
    let mut out = match (lo, hi) {
        (Some(lo), Some(hi)) => format!("{noun} from {lo} to {hi}"),
        (Some(lo), None) => format!("{noun} of at least {lo}"),
        (None, Some(hi)) => format!("{noun} of at most {hi}"),
        (None, None) => noun.to_string(),
    };
    if let Some(x) = xlo {
        out.push_str(&format!(" greater than {x}"));
    }
    if let Some(x) = xhi {
        out.push_str(&format!(" less than {x}"));
    }
    if let Some(m) = map.get("multipleOf") {
        out.push_str(&format!(" (a multiple of {m})"));
    }
    out
}

fn array_words(doc: &Value, map: &serde_json::Map<String, Value>, depth: usize) -> String {
    let mut out = "an array".to_string();
    match (map.get("minItems").and_then(Value::as_u64), map.get("maxItems").and_then(Value::as_u64)) {
        (Some(lo), Some(hi)) => out.push_str(&format!(" of {lo} to {hi} items")),
        (Some(lo), None) => out.push_str(&format!(" of at least {lo} items")),
        (None, Some(hi)) => out.push_str(&format!(" of at most {hi} items")),
        (None, None) => {}
    }
    if let Some(items) = map.get("items").filter(|i| i.is_object()) {
        out.push_str(&format!(", each {}", describe_at(doc, items, depth + 1)));
    }
    out
}

fn object_words(map: &serde_json::Map<String, Value>) -> String {
    match map.get("properties").and_then(Value::as_object) {
        Some(props) if !props.is_empty() => {
            let names: Vec<&str> = props.keys().map(String::as_str).take(12).collect();
            let more = if props.len() > names.len() { ", ..." } else { "" };
            format!("an object with fields {}{more}", names.join(", "))
        }
        _ => "an object".into(),
    }
}

/// A value as the model wrote it, kept short.
pub(crate) fn show(value: &Value) -> String {
    const MAX: usize = 60;
    match value {
        Value::String(s) if s.chars().count() > MAX => {
            let cut: String = s.chars().take(MAX).collect();
            format!("{:?}… ({} characters)", cut, s.chars().count())
        }
        Value::Array(a) => format!("an array of {} items", a.len()),
        Value::Object(o) => format!("an object with {} keys", o.len()),
        other => other.to_string(),
    }
}

/// `"a", "b", "c"`, cut after 30 values.
pub(crate) fn list(values: &[Value]) -> String {
    let mut parts: Vec<String> = values.iter().take(30).map(show).collect();
    if values.len() > 30 {
        parts.push(format!("... ({} in all)", values.len()));
    }
    parts.join(", ")
}

/// The candidate closest to `name` (see [`crate::suggest`]).
pub(crate) fn closest<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<String> {
    crate::suggest(name, candidates).into_iter().next()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn check(schema: Value, expect: &str) {
        assert_eq!(describe(&schema, &schema), expect);
    }

    #[test]
    fn schemas_in_words() {
        check(json!({"type": "integer", "minimum": 1, "maximum": 100}), "an integer from 1 to 100");
        check(json!({"type": "string", "format": "date"}), "a date YYYY-MM-DD (e.g. 2026-07-15)");
        check(json!({"type": "string", "enum": ["kg", "lb"]}), "one of \"kg\", \"lb\"");
        check(json!({"type": ["string", "null"]}), "a string or null");
        check(json!({"type": "string", "minLength": 1}), "a non-empty string");
        check(
            json!({"type": "array", "items": {"type": "number"}, "minItems": 1}),
            "an array of at least 1 items, each a number",
        );
        check(json!({"anyOf": [{"type": "boolean"}, {"const": 3}]}), "true or false or exactly 3");
        check(json!({"type": "object", "properties": {"a": {}, "b": {}}}), "an object with fields a, b");
        check(json!({"$ref": "#/$defs/X", "$defs": {"X": {"type": "number"}}}), "a number");
        check(json!(true), "any value");
    }
}
