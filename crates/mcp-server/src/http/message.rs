//! Step 5 on `POST /mcp`: is the body one well-formed JSON-RPC 2.0 message?
//! Answered here as JSON-RPC errors with status 400, because rmcp answers
//! some of these with `415` or a plain-text `500`.

use std::fmt;

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value, json};

/// A JSON-RPC error answered at the HTTP layer, with status 400.
pub(super) fn rpc_error(id: Value, code: i32, message: &str) -> Response {
    let body = json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}});
    (StatusCode::BAD_REQUEST, Json(body)).into_response()
}

/// Whether the body is one well-formed JSON-RPC 2.0 message; its id when it is a request.
pub(super) fn check_message(message: &Value) -> Result<Option<Value>, (Value, i32, String)> {
    let Value::Object(map) = message else {
        let what = if message.is_array() {
            "batches are not supported; send one message per request"
        } else {
            "a JSON-RPC message is a JSON object"
        };
        return Err((Value::Null, -32600, what.to_owned()));
    };
    let id = map.get("id").cloned();
    let invalid = |why: &str| {
        Err((
            id.clone().filter(|i| i.is_string() || i.is_number()).unwrap_or(Value::Null),
            -32600,
            why.to_owned(),
        ))
    };
    if map.get("jsonrpc") != Some(&json!("2.0")) {
        return invalid("`jsonrpc` must be \"2.0\"");
    }
    if let Some(id) = &id
        && !(id.is_string() || id.is_i64() || id.is_u64())
    {
        return invalid("`id` must be a string or an integer");
    }
    match map.get("method") {
        Some(Value::String(_)) => {
            if map.get("params").is_some_and(|p| !p.is_object()) {
                return invalid("`params` must be an object");
            }
            Ok(id)
        }
        Some(_) => invalid("`method` must be a string"),
        None if id.is_some() && (map.contains_key("result") || map.contains_key("error")) => Ok(None),
        None => {
            invalid("a message needs a `method` (request, notification) or a `result`/`error` (response)")
        }
    }
}

/// The body as JSON, refusing a member named twice in any object: serde_json
/// would keep the last one silently while another reader keeps the first, so
/// such a message means different things to different parts.
/// `Err((code, message))`: `-32700` for text that is not JSON, `-32600` for duplicates.
pub(super) fn parse_strict(bytes: &[u8]) -> Result<Value, (i32, String)> {
    let mut deserializer = serde_json::Deserializer::from_slice(bytes);
    let value = StrictValue.deserialize(&mut deserializer).and_then(|v| deserializer.end().map(|()| v));
    value.map_err(|error| {
        let text = error.to_string();
        if text.starts_with(DUPLICATE) {
            (-32600, format!("invalid request: {text}"))
        } else {
            (-32700, format!("parse error: {text}"))
        }
    })
}

const DUPLICATE: &str = "duplicate member";

/// Builds a [`Value`] like serde_json does, but fails on a repeated object member.
struct StrictValue;

impl<'de> DeserializeSeed<'de> for StrictValue {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for StrictValue {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number))
    }

    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }

    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(StrictValue)? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut members = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let value = map.next_value_seed(StrictValue)?;
            if members.contains_key(&key) {
                let shown: String = key.chars().take(64).collect();
                return Err(de::Error::custom(format_args!("{DUPLICATE} `{shown}` in a JSON object")));
            }
            members.insert(key, value);
        }
        Ok(Value::Object(members))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn duplicate_members_are_refused_at_any_depth() {
        assert_eq!(parse_strict(br#"{"a":1,"b":[{"c":2}]}"#).unwrap(), json!({"a":1,"b":[{"c":2}]}));
        assert_eq!(parse_strict(br#"{"id":1,"id":2}"#).unwrap_err().0, -32600);
        assert_eq!(parse_strict(br#"{"p":{"x":1,"x":1}}"#).unwrap_err().0, -32600);
        assert_eq!(parse_strict(br#"{"a":1"#).unwrap_err().0, -32700);
        assert_eq!(parse_strict(br#"{"a":1} x"#).unwrap_err().0, -32700);
    }
}
