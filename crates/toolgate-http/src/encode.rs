//! Building the request target: path variables percent-encoded so that no value can change
//! the path, and the query string of reads.

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
use serde_json::{Map, Value};
use toolgate_core::{FieldError, ToolError, params::pointer};

/// Every byte but the RFC 3986 unreserved ones (`A-Z a-z 0-9 - . _ ~`) is encoded, so `/`,
/// `?`, `#`, `%`, `;` and non-ASCII text reach the backend as data inside one segment.
pub(crate) const COMPONENT: &AsciiSet = &NON_ALPHANUMERIC.remove(b'-').remove(b'.').remove(b'_').remove(b'~');

/// `value` as one percent-encoded path segment or query component.
///
/// ```
/// assert_eq!(toolgate_http::encode_component("../admin"), "..%2Fadmin");
/// assert_eq!(toolgate_http::encode_component("%2e%2e"), "%252e%252e");
/// assert_eq!(toolgate_http::encode_component("a b/ü"), "a%20b%2F%C3%BC");
/// ```
pub fn encode_component(value: &str) -> String {
    utf8_percent_encode(value, COMPONENT).to_string()
}

/// The text a scalar parameter stands for in a path or query: strings as they are, numbers
/// and booleans as JSON writes them. `None` for null, arrays and objects.
pub(crate) fn scalar_text(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Null | Value::Array(_) | Value::Object(_) => None,
    }
}

fn path_error(name: &str, value: &Value, message: String) -> FieldError {
    FieldError::new(pointer(name), "a non-empty string, number or boolean", value, message)
}

/// Fills the `{variables}` of `template` from `params`, each value percent-encoded as one
/// segment. Every problem is reported at once as `INVALID_PARAMS`: a missing variable, a value
/// that is not a scalar, an empty value, and `.` or `..` (which a URL would resolve as a
/// relative step instead of sending them as data).
///
/// ```
/// let params = serde_json::json!({"date": "a/b", "op": "get"});
/// let path = toolgate_http::fill_path("/days/{date}/summary", params.as_object().unwrap()).unwrap();
/// assert_eq!(path, "/days/a%2Fb/summary");
/// ```
pub fn fill_path(template: &str, params: &Map<String, Value>) -> Result<String, ToolError> {
    let mut out = String::with_capacity(template.len() + 16);
    let mut errors = Vec::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        let Some(close) = rest[open..].find('}').map(|c| open + c) else { break };
        out.push_str(&rest[..open]);
        let name = &rest[open + 1..close];
        match params.get(name) {
            None => errors.push(path_error(
                name,
                &Value::Null,
                format!("`{name}` is missing; it is part of the path, give it"),
            )),
            Some(value) => match scalar_text(value) {
                None => errors.push(path_error(
                    name,
                    value,
                    format!("`{name}` goes into the URL path; give a string, number or boolean"),
                )),
                Some(text) if text.is_empty() => {
                    errors.push(path_error(name, value, format!("`{name}` is empty; give a value")))
                }
                Some(text) if text == "." || text == ".." => errors.push(path_error(
                    name,
                    value,
                    format!("`{name}` cannot be {text:?}; give the actual value"),
                )),
                Some(text) => out.push_str(&encode_component(&text)),
            },
        }
        rest = &rest[close + 1..];
    }
    out.push_str(rest);
    if errors.is_empty() { Ok(out) } else { Err(ToolError::invalid_params(errors)) }
}

/// `key=value&...` of the fields a request sends as its query, in the order given; null values
/// (an optional parameter that is not given) are left out, arrays repeat the key, objects are
/// sent as JSON text. The keys are the names sent ([`toolgate_schema::Route::wire_name`]); a route's
/// fixed query ([`toolgate_schema::Route::fixed_query`]) comes first.
pub(crate) fn query_string<K: AsRef<str>, V: std::borrow::Borrow<Value>>(
    fields: impl IntoIterator<Item = (K, V)>,
) -> String {
    pairs(fields, encode_component)
}

/// The bytes the WHATWG `application/x-www-form-urlencoded` serializer encodes: all but ASCII
/// alphanumerics and `*-._` (the space is left here and written `+`).
const FORM: &AsciiSet = &NON_ALPHANUMERIC.remove(b'*').remove(b'-').remove(b'.').remove(b'_').remove(b' ');

/// `value` as the WHATWG URL standard's `application/x-www-form-urlencoded` serializer writes
/// it (what browsers and `URLSearchParams` send): ASCII alphanumerics and `*-._` as they are,
/// a space as `+`, every other byte of its UTF-8 percent-encoded.
pub(crate) fn encode_form_component(value: &str) -> String {
    utf8_percent_encode(value, FORM).to_string().replace(' ', "+")
}

/// The `application/x-www-form-urlencoded` body of the fields a form route sends, in the order
/// given, under the names sent: like [`query_string`] (nulls left out, arrays as repeated
/// keys, numbers and booleans as JSON writes them), encoded by [`encode_form_component`].
pub(crate) fn form_body<K: AsRef<str>, V: std::borrow::Borrow<Value>>(
    fields: impl IntoIterator<Item = (K, V)>,
) -> String {
    pairs(fields, encode_form_component)
}

fn pairs<K: AsRef<str>, V: std::borrow::Borrow<Value>>(
    fields: impl IntoIterator<Item = (K, V)>,
    encode: fn(&str) -> String,
) -> String {
    let mut out = String::new();
    let mut push = |key: &str, text: &str| {
        if !out.is_empty() {
            out.push('&');
        }
        out.push_str(&encode(key));
        out.push('=');
        out.push_str(&encode(text));
    };
    for (key, value) in fields {
        let (key, value) = (key.as_ref(), value.borrow());
        match value {
            Value::Null => {}
            Value::Array(items) => {
                for item in items {
                    match scalar_text(item) {
                        Some(text) => push(key, &text),
                        None if item.is_null() => {}
                        None => push(key, &item.to_string()),
                    }
                }
            }
            Value::Object(_) => push(key, &value.to_string()),
            scalar => push(key, &scalar_text(scalar).unwrap_or_default()),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn fill(template: &str, params: Value) -> Result<String, ToolError> {
        fill_path(template, params.as_object().unwrap())
    }

    #[test]
    fn values_that_look_like_paths_stay_inside_their_segment() {
        for (value, encoded) in [
            ("../admin", "..%2Fadmin"),
            ("a/b", "a%2Fb"),
            ("%2e%2e", "%252e%252e"),
            ("..%2f", "..%252f"),
            ("x?y=1#z", "x%3Fy%3D1%23z"),
            ("a\\b", "a%5Cb"),
            ("é", "%C3%A9"),
            ("2026-01-02", "2026-01-02"),
            ("...", "..."),
        ] {
            assert_eq!(
                fill("/d/{v}/x", json!({ "v": value })).unwrap(),
                format!("/d/{encoded}/x"),
                "{value}"
            );
        }
        assert_eq!(fill("/w/{id}", json!({"id": 42})).unwrap(), "/w/42");
        assert_eq!(fill("/w/{a}/{b}", json!({"a": true, "b": -1.5})).unwrap(), "/w/true/-1.5");
    }

    #[test]
    fn missing_empty_dot_and_structured_values_are_refused_together() {
        let err = fill("/{a}/{b}/{c}/{d}/{e}", json!({"b": "", "c": "..", "d": [1], "e": "."})).unwrap_err();
        assert_eq!(err.code, toolgate_core::ErrorCode::InvalidParams);
        let pointers: Vec<String> = err.details.unwrap()["errors"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["pointer"].as_str().unwrap().to_owned())
            .collect();
        assert_eq!(pointers, ["/a", "/b", "/c", "/d", "/e"]);
    }

    #[test]
    fn dot_segments_encoded_or_not_are_what_a_url_would_resolve() {
        // Why `.` and `..` are refused rather than encoded: URLs treat `%2e` as a dot too.
        let url = reqwest::Url::parse("http://h/a/%2e%2e/b").unwrap();
        assert_eq!(url.path(), "/b");
    }

    #[test]
    fn query_strings_encode_keys_and_values() {
        let params =
            json!({"from": "2026-01-01", "q": "a&b=c d", "n": null, "tags": ["x", "y/z"], "f": {"k": 1}});
        let q = query_string(params.as_object().unwrap().iter());
        assert_eq!(q, "from=2026-01-01&q=a%26b%3Dc%20d&tags=x&tags=y%2Fz&f=%7B%22k%22%3A1%7D");
    }

    #[test]
    fn form_bodies_follow_the_whatwg_serializer() {
        let params = json!({"To": "+1 555", "Body": "hello world", "n": null, "MediaUrl": ["a", null, "b"],
            "k": 1.5, "ok": true, "s": "*-._~!'()/é\n"});
        let body = form_body(params.as_object().unwrap().iter());
        assert_eq!(
            body,
            "To=%2B1+555&Body=hello+world&MediaUrl=a&MediaUrl=b&k=1.5&ok=true&s=*-._%7E%21%27%28%29%2F%C3%A9%0A"
        );
        assert_eq!(form_body([("a b", json!("c"))]), "a+b=c");
        assert_eq!(encode_form_component("+1 555~ü&a=b"), "%2B1+555%7E%C3%BC%26a%3Db");
    }
}
