//! A [`ToolSpec`] in the shape each model provider takes.
//!
//! - [`mcp`]: the MCP `Tool` object, schema as is, annotations from the effect.
//! - [`openai_strict`]: an OpenAI function tool with `strict: true`: every
//!   property required, optional ones nullable, every object closed, only
//!   the keywords strict mode supports (dropped constraints are written into
//!   the description; the gateway still validates the full schema).
//! - [`anthropic`]: `{name, description, input_schema}`.
//! - [`gemini`]: a function declaration with the OpenAPI-subset schema Gemini takes.
//!
//! OpenAI, Anthropic and Gemini refuse a union (`oneOf`/`anyOf`/`allOf`) at
//! the root of a tool's parameters, so a route table's root `oneOf` is moved
//! under one wrapper property, [`WRAPPER`]:
//! `{"type":"object","properties":{"request":{"anyOf":[...]}},"required":["request"],"additionalProperties":false}`.
//! Arguments coming back from those providers go through [`unwrap`] (or
//! [`openai_unwrap`], which also drops the `null`s strict mode makes the
//! model send for optional fields) before validation.

use serde_json::{Map, Value, json};
use toolgate_core::{Effect, ToolSpec};

use self::gemini::gemini_node;
#[cfg(test)]
use self::openai::nullable;
use self::openai::strict_node;
use crate::walk::take;

mod gemini;
mod openai;

/// The property a root union is moved under for OpenAI, Anthropic and Gemini.
pub const WRAPPER: &str = "request";

/// String formats OpenAI strict mode accepts.
pub const OPENAI_FORMATS: [&str; 9] =
    ["date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"];

/// The MCP `Tool` object (`name`, `description`, `inputSchema`, `annotations`,
/// and `outputSchema` when the tool declares an object-typed one).
pub fn mcp(spec: &ToolSpec) -> Value {
    let (read_only, destructive, idempotent) = match spec.effect {
        Effect::Read => (true, false, true),
        Effect::Write { idempotent } => (false, true, idempotent),
    };
    let mut tool = json!({
        "name": spec.name,
        "description": spec.description,
        "inputSchema": spec.input_schema,
        "annotations": {
            "readOnlyHint": read_only,
            "destructiveHint": destructive,
            "idempotentHint": idempotent,
        },
    });
    // MCP requires an output schema to describe an object (structuredContent)
    if let Some(out) =
        spec.output_schema.as_ref().filter(|o| o.get("type").and_then(Value::as_str) == Some("object"))
    {
        tool["outputSchema"] = out.clone();
    }
    tool
}

/// An OpenAI function tool in strict mode (the Chat Completions shape:
/// `{"type":"function","function":{name, description, parameters, strict}}`).
pub fn openai_strict(spec: &ToolSpec) -> Value {
    json!({
        "type": "function",
        "function": {
            "name": spec.name,
            "description": spec.description,
            "parameters": openai_strict_schema(&spec.input_schema),
            "strict": true,
        },
    })
}

/// The same tool in the Responses API shape (`{"type":"function", name, description, parameters, strict}`).
pub fn openai_responses(spec: &ToolSpec) -> Value {
    json!({
        "type": "function",
        "name": spec.name,
        "description": spec.description,
        "parameters": openai_strict_schema(&spec.input_schema),
        "strict": true,
    })
}

/// A schema rewritten for OpenAI strict mode (see the module docs).
pub fn openai_strict_schema(schema: &Value) -> Value {
    let root = wrap_union(schema);
    strict_node(&root)
}

/// Undo the wrapper of a root union: `{"request": {...}}` becomes `{...}`;
/// anything else is returned unchanged.
///
/// The exports wrap every schema whose root is a union and every schema whose
/// only property is `request`, so a lone `request` key always is the wrapper.
pub fn unwrap(params: Value) -> Value {
    match params {
        Value::Object(mut map) if map.len() == 1 && map.get(WRAPPER).is_some_and(Value::is_object) => {
            map.remove(WRAPPER).unwrap_or(Value::Null)
        }
        other => other,
    }
}

/// [`unwrap`], then drop every `null` object member: strict mode makes the
/// model send `null` for an optional field it has no value for, which means
/// "absent". (A field whose own schema allows `null` and is required cannot
/// survive this; toolgate schemas do not have such fields.)
pub fn openai_unwrap(params: Value) -> Value {
    let mut params = unwrap(params);
    drop_nulls(&mut params, 0);
    params
}

/// The Anthropic tool object `{name, description, input_schema}`.
/// Anthropic rejects `oneOf`/`anyOf`/`allOf` at the top level of
/// `input_schema`, so a root union is wrapped (see [`WRAPPER`]).
pub fn anthropic(spec: &ToolSpec) -> Value {
    json!({
        "name": spec.name,
        "description": spec.description,
        "input_schema": wrap_union(&spec.input_schema),
    })
}

/// A Gemini function declaration `{name, description, parameters}`;
/// `parameters` is the OpenAPI 3.0 subset Gemini takes (see [`gemini_schema`]).
pub fn gemini(spec: &ToolSpec) -> Value {
    json!({
        "name": spec.name,
        "description": spec.description,
        "parameters": gemini_schema(&spec.input_schema),
    })
}

/// A schema rewritten for Gemini's `Schema` object: `$ref`s inlined, types in
/// upper case, `type: [T, "null"]` as `nullable`, `const` as a one-value
/// enum, `oneOf` as `anyOf`, no `$schema`/`additionalProperties`/`$defs`, only
/// the formats Gemini accepts; constraints it cannot express go into the
/// description. A root union is wrapped (see [`WRAPPER`]).
pub fn gemini_schema(schema: &Value) -> Value {
    let root = wrap_union(schema);
    gemini_node(&root, &root, 0)
}

/// Whether the exports move this schema's root under [`WRAPPER`].
pub fn needs_wrapper(schema: &Value) -> bool {
    let Some(root) = schema.as_object() else { return false };
    let union = ["oneOf", "anyOf", "allOf"].iter().any(|k| root.contains_key(*k));
    let lone_wrapper = root
        .get("properties")
        .and_then(Value::as_object)
        .is_some_and(|p| p.len() == 1 && p.contains_key(WRAPPER));
    union || lone_wrapper
}

const META: [&str; 5] = ["$schema", "$id", "$comment", "$defs", "definitions"];

fn wrap_union(schema: &Value) -> Value {
    let Some(root) = schema.as_object().filter(|_| needs_wrapper(schema)) else {
        return schema.clone();
    };
    let mut inner: Map<String, Value> = root
        .iter()
        .filter(|(k, _)| !META.contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    // `{type: object, oneOf: [object branches]}`: the branches say it all
    let only_union =
        inner.keys().all(|k| matches!(k.as_str(), "type" | "oneOf" | "anyOf" | "description" | "title"));
    if only_union {
        take(&mut inner, "type");
        take(&mut inner, "title");
        if let Some(branches) = take(&mut inner, "oneOf") {
            inner.insert("anyOf".into(), branches);
        }
    }
    let by_op = inner
        .get("anyOf")
        .and_then(Value::as_array)
        .is_some_and(|bs| bs.iter().all(|b| b.pointer("/properties/op/const").is_some()));
    if !inner.contains_key("description") {
        let text = if by_op {
            "The request: exactly one of these shapes; its `op` names the operation."
        } else {
            "The request: exactly one of these shapes."
        };
        inner.insert("description".into(), text.into());
    }
    let mut out = Map::new();
    if let Some(v) = root.get("$schema") {
        out.insert("$schema".into(), v.clone());
    }
    out.insert("type".into(), "object".into());
    out.insert("properties".into(), json!({ WRAPPER: Value::Object(inner) }));
    out.insert("required".into(), json!([WRAPPER]));
    out.insert("additionalProperties".into(), false.into());
    for key in ["$defs", "definitions"] {
        if let Some(v) = root.get(key) {
            out.insert(key.into(), v.clone());
        }
    }
    Value::Object(out)
}

fn drop_nulls(value: &mut Value, depth: usize) {
    if depth > 64 {
        return; // deeper than any schema we publish; leave it for the validator to refuse
    }
    match value {
        Value::Object(map) => {
            map.retain(|_, v| !v.is_null());
            for v in map.values_mut() {
                drop_nulls(v, depth + 1);
            }
        }
        Value::Array(items) => {
            for v in items {
                drop_nulls(v, depth + 1);
            }
        }
        _ => {}
    }
}

pub(super) fn is_object_schema(map: &Map<String, Value>) -> bool {
    map.contains_key("properties")
        || match map.get("type") {
            Some(Value::String(t)) => t == "object",
            Some(Value::Array(ts)) => ts.iter().any(|t| t == "object"),
            _ => false,
        }
}

pub(super) fn type_is(map: &Map<String, Value>, ty: &str) -> bool {
    match map.get("type") {
        Some(Value::String(t)) => t == ty,
        Some(Value::Array(ts)) => ts.iter().any(|t| t == ty),
        _ => false,
    }
}

/// Append notes (constraints the provider cannot express) to a description.
pub(super) fn add_notes(out: &mut Map<String, Value>, notes: &[String]) {
    if notes.is_empty() {
        return;
    }
    let text = notes.join("; ");
    let description = match out.get("description").and_then(Value::as_str) {
        Some(d) if !d.is_empty() => format!("{d} ({text})"),
        _ => {
            let mut chars = text.chars();
            chars.next().map(|c| c.to_uppercase().chain(chars).collect()).unwrap_or_default()
        }
    };
    out.insert("description".into(), description.into());
}

pub(super) fn length_note(
    map: &Map<String, Value>,
    what: &str,
    min_key: &str,
    max_key: &str,
) -> Option<String> {
    let lo = map.get(min_key).and_then(Value::as_u64);
    let hi = map.get(max_key).and_then(Value::as_u64);
    match (lo, hi) {
        (Some(lo), Some(hi)) if lo == hi => Some(format!("exactly {lo} {what}")),
        (Some(lo), Some(hi)) => Some(format!("{lo} to {hi} {what}")),
        (Some(1), None) if what == "characters" => Some("not empty".into()),
        (Some(lo), None) => Some(format!("at least {lo} {what}")),
        (None, Some(hi)) => Some(format!("at most {hi} {what}")),
        (None, None) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nullable_forms() {
        assert_eq!(nullable(json!({"type": "string"})), json!({"type": ["string", "null"]}));
        assert_eq!(
            nullable(json!({"type": "string", "enum": ["a"]})),
            json!({"type": ["string", "null"], "enum": ["a", null]})
        );
        assert_eq!(nullable(json!({"type": ["string", "null"]})), json!({"type": ["string", "null"]}));
        assert_eq!(
            nullable(json!({"$ref": "#/$defs/X", "description": "d"})),
            json!({"description": "d", "anyOf": [{"$ref": "#/$defs/X"}, {"type": "null"}]})
        );
        assert_eq!(
            nullable(json!({"anyOf": [{"type": "string"}]})),
            json!({"anyOf": [{"type": "string"}, {"type": "null"}]})
        );
    }

    #[test]
    fn unwrap_only_takes_the_lone_wrapper() {
        assert_eq!(unwrap(json!({"request": {"op": "x"}})), json!({"op": "x"}));
        assert_eq!(unwrap(json!({"request": {"op": "x"}, "b": 1})), json!({"request": {"op": "x"}, "b": 1}));
        assert_eq!(unwrap(json!({"request": 3})), json!({"request": 3}));
        assert_eq!(
            openai_unwrap(json!({"request": {"op": "x", "a": null, "b": [{"c": null}]}})),
            json!({"op": "x", "b": [{}]})
        );
    }
}
