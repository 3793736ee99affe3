//! Step 5 on `POST /mcp`: is the body one well-formed JSON-RPC 2.0 message?
//! Answered here as JSON-RPC errors with status 400, because rmcp answers
//! some of these with `415` or a plain-text `500`.
//!
//! The body is read once, without building it: the members the check needs
//! (`jsonrpc`, `id`, `method`) are kept, everything else is walked only to
//! refuse a member named twice. rmcp then reads the same bytes into its own
//! types. A batch, served to MCP 2025-03-26 sessions only, is split by
//! [`split_batch`] and each of its messages is checked here on its own.

use std::borrow::Cow;
use std::fmt;

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Value, json};

/// A JSON-RPC error answered at the HTTP layer, with status 400.
pub(super) fn rpc_error(id: Value, code: i32, message: &str) -> Response {
    let body = json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}});
    (StatusCode::BAD_REQUEST, Json(body)).into_response()
}

/// A message that passed step 5.
#[derive(Debug, PartialEq)]
pub(super) struct Checked {
    /// The id, when it is a request.
    pub(super) id: Option<Value>,
    /// The method, when it is a request or a notification.
    pub(super) method: Option<String>,
}

/// Why a body was refused: the id to answer with, the JSON-RPC code, the message.
pub(super) type Refusal = (Value, i32, String);

/// Whether the body is one well-formed JSON-RPC 2.0 message: `-32700` for
/// text that is not JSON, `-32600` for a member named twice in any object
/// (serde_json would keep the last one silently while another reader keeps
/// the first, so such a message means different things to different parts),
/// a batch, or a bad `jsonrpc`, `id`, `method` or `params`.
pub(super) fn check(bytes: &[u8]) -> Result<Checked, Refusal> {
    let (kind, members) = walk(bytes)?;
    let invalid = |id: Value, why: &str| Err((id, -32600, format!("invalid request: {why}")));
    match kind {
        Kind::Array => {
            return invalid(Value::Null, "batches are not supported; send one message per request");
        }
        Kind::Other => return invalid(Value::Null, "a JSON-RPC message is a JSON object"),
        Kind::Object => {}
    }
    let Members { jsonrpc, id, method, params, answer } = members;
    let answer_id = id.clone().filter(|i| i.is_string() || i.is_number()).unwrap_or(Value::Null);
    if jsonrpc.as_ref().and_then(Value::as_str) != Some("2.0") {
        return invalid(answer_id, "`jsonrpc` must be \"2.0\"");
    }
    if let Some(id) = &id
        && !(id.is_string() || id.is_i64() || id.is_u64())
    {
        return invalid(answer_id, "`id` must be a string or an integer");
    }
    match method {
        Some(Value::String(method)) => {
            if params.is_some_and(|p| p != Kind::Object) {
                return invalid(answer_id, "`params` must be an object");
            }
            Ok(Checked { id, method: Some(method) })
        }
        Some(_) => invalid(answer_id, "`method` must be a string"),
        None if id.is_some() && answer => Ok(Checked { id: None, method: None }),
        None => invalid(
            answer_id,
            "a message needs a `method` (request, notification) or a `result`/`error` (response)",
        ),
    }
}

/// Reads the body once: what it is, and its top-level members when it is an object.
fn walk(bytes: &[u8]) -> Result<(Kind, Members), Refusal> {
    let mut deserializer = serde_json::Deserializer::from_slice(bytes);
    let mut members = Members::default();
    let top = Walk { top: Some(&mut members) }
        .deserialize(&mut deserializer)
        .and_then(|kind| deserializer.end().map(|()| kind));
    let kind = top.map_err(|error| {
        let text = error.to_string();
        if text.starts_with(DUPLICATE) {
            (Value::Null, -32600, format!("invalid request: {text}"))
        } else {
            (Value::Null, -32700, format!("parse error: {text}"))
        }
    })?;
    Ok((kind, members))
}

/// The most messages one batch may hold.
pub(super) const MAX_BATCH: usize = 32;

/// Whether the body is a JSON array (a batch), by its first byte that is not whitespace.
pub(super) fn is_batch(bytes: &[u8]) -> bool {
    bytes.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'[')
}

/// The messages of a batch (MCP 2025-03-26), each still to be checked on
/// its own by [`check`]: `-32700` for text that is not JSON, `-32600` for a
/// member named twice anywhere, an empty batch, or one longer than [`MAX_BATCH`].
pub(super) fn split_batch(bytes: &[u8]) -> Result<Vec<Value>, Refusal> {
    let invalid = |why: String| Err((Value::Null, -32600, format!("invalid request: {why}")));
    match walk(bytes)?.0 {
        Kind::Array => {}
        _ => return invalid("a batch is a JSON array of JSON-RPC messages".to_owned()),
    }
    let items: Vec<Value> = serde_json::from_slice(bytes)
        .map_err(|error| (Value::Null, -32700, format!("parse error: {error}")))?;
    if items.is_empty() {
        return invalid("the batch is empty; send at least one JSON-RPC message".to_owned());
    }
    if items.len() > MAX_BATCH {
        return invalid(format!(
            "the batch holds {} messages, more than the {MAX_BATCH} allowed; split it into batches of at most {MAX_BATCH}",
            items.len()
        ));
    }
    Ok(items)
}

const DUPLICATE: &str = "duplicate member";

/// What a value is, as far as the check cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Object,
    Array,
    Other,
}

/// The top-level members the check reads (duplicates are refused before
/// any of them is used).
#[derive(Debug, Default)]
struct Members {
    jsonrpc: Option<Value>,
    id: Option<Value>,
    method: Option<Value>,
    params: Option<Kind>,
    /// `result` or `error` is present (a response).
    answer: bool,
}

/// Object member names seen so far; a short list is searched in place.
#[derive(Default)]
struct Seen<'de>(Vec<Cow<'de, str>>);

impl<'de> Seen<'de> {
    fn insert<E: de::Error>(&mut self, key: Cow<'de, str>) -> Result<(), E> {
        if self.0.contains(&key) {
            let shown: String = key.chars().take(64).collect();
            return Err(E::custom(format_args!("{DUPLICATE} `{shown}` in a JSON object")));
        }
        self.0.push(key);
        Ok(())
    }
}

/// A member name, borrowed from the body when it has no escapes.
struct Key<'de>(Cow<'de, str>);

impl<'de> de::Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl<'de> Visitor<'de> for KeyVisitor {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a member name")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E>(self, v: String) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(v)))
            }
        }
        deserializer.deserialize_str(KeyVisitor)
    }
}

/// Walks a value without keeping it, refusing a member named twice at any
/// depth (what serde's `IgnoredAny` cannot see). At the top level it also
/// keeps the members the check reads.
struct Walk<'a> {
    top: Option<&'a mut Members>,
}

impl<'de> DeserializeSeed<'de> for Walk<'_> {
    type Value = Kind;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Kind, D::Error> {
        deserializer.deserialize_any(self)
    }
}

const NESTED: Walk<'static> = Walk { top: None };

impl<'de> Visitor<'de> for Walk<'_> {
    type Value = Kind;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<Kind, E> {
        Ok(Kind::Other)
    }

    fn visit_i64<E>(self, _: i64) -> Result<Kind, E> {
        Ok(Kind::Other)
    }

    fn visit_u64<E>(self, _: u64) -> Result<Kind, E> {
        Ok(Kind::Other)
    }

    fn visit_f64<E>(self, _: f64) -> Result<Kind, E> {
        Ok(Kind::Other)
    }

    fn visit_str<E>(self, _: &str) -> Result<Kind, E> {
        Ok(Kind::Other)
    }

    fn visit_unit<E>(self) -> Result<Kind, E> {
        Ok(Kind::Other)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Kind, A::Error> {
        while seq.next_element_seed(NESTED)?.is_some() {}
        Ok(Kind::Array)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Kind, A::Error> {
        let mut seen = Seen::default();
        let mut top = self.top;
        while let Some(Key(key)) = map.next_key::<Key<'de>>()? {
            match (&mut top, &*key) {
                // Kept as they are: a value of another type than the check
                // wants is refused for its type, whatever it holds.
                (Some(members), "jsonrpc") => members.jsonrpc = Some(map.next_value()?),
                (Some(members), "id") => members.id = Some(map.next_value()?),
                (Some(members), "method") => members.method = Some(map.next_value()?),
                (Some(members), "params") => members.params = Some(map.next_value_seed(NESTED)?),
                (Some(members), "result" | "error") => {
                    map.next_value_seed(NESTED)?;
                    members.answer = true;
                }
                _ => {
                    map.next_value_seed(NESTED)?;
                }
            }
            seen.insert(key)?;
        }
        Ok(Kind::Object)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(body: &str) -> i32 {
        check(body.as_bytes()).unwrap_err().1
    }

    #[test]
    fn duplicate_members_are_refused_at_any_depth() {
        let ok = check(br#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":1,"b":[{"c":2}]}}"#).unwrap();
        assert_eq!(ok, Checked { id: Some(json!(1)), method: Some("m".into()) });
        assert_eq!(code(r#"{"jsonrpc":"2.0","id":1,"id":2,"method":"m"}"#), -32600);
        assert_eq!(code(r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"p":{"x":1,"x":1}}}"#), -32600);
        // The same name written with an escape is the same name.
        assert_eq!(code(r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"x":1,"\u0078":2}}"#), -32600);
        assert_eq!(code(r#"{"a":1"#), -32700);
        assert_eq!(code(r#"{"a":1} x"#), -32700);
        assert!(check(br#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":1,"b":{"a":1}}}"#).is_ok());
    }

    #[test]
    fn the_shape_of_a_message_is_checked_with_the_id_to_answer() {
        let refused = |body: &str| check(body.as_bytes()).unwrap_err();
        assert_eq!(refused(r#"[{"jsonrpc":"2.0","id":1,"method":"m"}]"#).1, -32600);
        assert_eq!(refused("3").1, -32600);
        let (id, code, why) = refused(r#"{"jsonrpc":"1.0","id":"a","method":"m"}"#);
        assert_eq!((id, code), (json!("a"), -32600));
        assert!(why.contains("jsonrpc"), "{why}");
        assert!(refused(r#"{"jsonrpc":"2.0","id":1.5,"method":"m"}"#).2.contains("`id`"));
        assert_eq!(refused(r#"{"jsonrpc":"2.0","id":{"x":1},"method":"m"}"#).0, Value::Null);
        assert!(refused(r#"{"jsonrpc":"2.0","id":1,"method":7}"#).2.contains("`method`"));
        assert!(refused(r#"{"jsonrpc":"2.0","id":1,"method":"m","params":[1]}"#).2.contains("`params`"));
        assert!(refused(r#"{"jsonrpc":"2.0","id":1}"#).2.contains("needs a `method`"));
        let note = check(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#).unwrap();
        assert_eq!(note, Checked { id: None, method: Some("notifications/initialized".into()) });
        let answer = check(br#"{"jsonrpc":"2.0","id":"s-1","result":{}}"#).unwrap();
        assert_eq!(answer, Checked { id: None, method: None });
    }
}
