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
use tool_core::{Effect, ToolSpec};

use crate::walk::{resolve, take};

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

fn is_object_schema(map: &Map<String, Value>) -> bool {
    map.contains_key("properties")
        || match map.get("type") {
            Some(Value::String(t)) => t == "object",
            Some(Value::Array(ts)) => ts.iter().any(|t| t == "object"),
            _ => false,
        }
}

fn type_is(map: &Map<String, Value>, ty: &str) -> bool {
    match map.get("type") {
        Some(Value::String(t)) => t == ty,
        Some(Value::Array(ts)) => ts.iter().any(|t| t == ty),
        _ => false,
    }
}

/// Append notes (constraints the provider cannot express) to a description.
fn add_notes(out: &mut Map<String, Value>, notes: &[String]) {
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

fn length_note(map: &Map<String, Value>, what: &str, min_key: &str, max_key: &str) -> Option<String> {
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

// ----- OpenAI strict -----

fn strict_node(node: &Value) -> Value {
    let Value::Object(map) = node else { return node.clone() };
    let mut out = Map::new();
    let mut notes = Vec::new();
    for (key, value) in map {
        match key.as_str() {
            "type" | "enum" | "const" | "$ref" | "title" | "description" | "pattern" | "minimum"
            | "maximum" | "exclusiveMinimum" | "exclusiveMaximum" | "multipleOf" | "minItems"
            | "maxItems" => {
                out.insert(key.clone(), value.clone());
            }
            "format" => match value.as_str() {
                Some(f) if type_is(map, "string") && OPENAI_FORMATS.contains(&f) => {
                    out.insert(key.clone(), value.clone());
                }
                Some(f) if type_is(map, "string") => notes.push(format!("format: {f}")),
                _ => {} // numeric formats (int32, double) say nothing the type does not
            },
            "items" if value.is_object() => {
                out.insert(key.clone(), strict_node(value));
            }
            "anyOf" | "oneOf" => {
                if let Value::Array(branches) = value {
                    let list = out.entry("anyOf").or_insert_with(|| Value::Array(Vec::new()));
                    if let Value::Array(list) = list {
                        list.extend(branches.iter().map(strict_node));
                    }
                }
            }
            "$defs" | "definitions" => {
                if let Value::Object(defs) = value {
                    let defs: Map<String, Value> =
                        defs.iter().map(|(k, v)| (k.clone(), strict_node(v))).collect();
                    out.insert(key.clone(), Value::Object(defs));
                }
            }
            "uniqueItems" if value == &Value::Bool(true) => notes.push("items must be unique".into()),
            "default" => notes.push(format!("default {value}")),
            _ => {} // unsupported in strict mode; the gateway still enforces it
        }
    }
    if let Some(note) = length_note(map, "characters", "minLength", "maxLength") {
        notes.push(note);
    }
    // a bare `const`/`enum` gets the type of its values, as strict mode wants a type
    if !out.contains_key("type") && !out.contains_key("anyOf") && !out.contains_key("$ref") {
        let sample =
            map.get("const").or_else(|| map.get("enum").and_then(Value::as_array).and_then(|v| v.first()));
        if let Some(sample) = sample {
            out.insert("type".into(), json_type(sample).into());
        }
    }
    if let Some(Value::Array(parts)) = map.get("allOf") {
        merge_all_of(map, parts, &mut out);
    }
    if is_object_schema(map) || out.contains_key("properties") {
        let props = take(&mut out, "properties").or_else(|| map.get("properties").cloned());
        let props = props.and_then(|p| p.as_object().cloned()).unwrap_or_default();
        let required: Vec<&str> = map
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let mut strict_props = Map::new();
        for (name, sub) in &props {
            let sub = strict_node(sub);
            let sub = if required.contains(&name.as_str()) { sub } else { nullable(sub) };
            strict_props.insert(name.clone(), sub);
        }
        let all: Vec<Value> = strict_props.keys().map(|k| Value::String(k.clone())).collect();
        out.insert("properties".into(), Value::Object(strict_props));
        out.insert("required".into(), Value::Array(all));
        out.insert("additionalProperties".into(), false.into());
    }
    add_notes(&mut out, &notes);
    Value::Object(out)
}

/// Fold the object parts of an `allOf` into `out` (strict mode has no `allOf`).
fn merge_all_of(map: &Map<String, Value>, parts: &[Value], out: &mut Map<String, Value>) {
    let mut props = map.get("properties").and_then(Value::as_object).cloned().unwrap_or_default();
    for part in parts {
        if let Some(p) = part.get("properties").and_then(Value::as_object) {
            for (k, v) in p {
                props.entry(k.clone()).or_insert_with(|| v.clone());
            }
        }
    }
    if !props.is_empty() {
        out.insert("properties".into(), Value::Object(props));
        out.entry("type").or_insert_with(|| "object".into());
    }
}

/// Let a schema also accept `null`.
fn nullable(schema: Value) -> Value {
    let Value::Object(mut map) = schema else { return schema };
    let null_branch = json!({ "type": "null" });
    if let Some(Value::Array(branches)) = map.get_mut("anyOf") {
        if !branches.iter().any(|b| b == &null_branch) {
            branches.push(null_branch);
        }
        return Value::Object(map);
    }
    let plain = !map.contains_key("$ref") && !map.contains_key("const");
    match map.get_mut("type") {
        Some(Value::String(t)) if plain => {
            let t = std::mem::take(t);
            map.insert("type".into(), json!([t, "null"]));
        }
        Some(Value::Array(ts)) if plain => {
            if !ts.iter().any(|t| t == "null") {
                ts.push("null".into());
            }
        }
        _ => {
            let description = take(&mut map, "description");
            let mut out = Map::new();
            if let Some(d) = description {
                out.insert("description".into(), d);
            }
            out.insert("anyOf".into(), json!([Value::Object(map), null_branch]));
            return Value::Object(out);
        }
    }
    if let Some(Value::Array(values)) = map.get_mut("enum")
        && !values.iter().any(Value::is_null)
    {
        values.push(Value::Null);
    }
    Value::Object(map)
}

// ----- Gemini -----

/// Formats Gemini accepts, per type.
fn gemini_format_ok(ty: &str, format: &str) -> bool {
    matches!(
        (ty, format),
        ("STRING", "enum" | "date-time") | ("NUMBER", "float" | "double") | ("INTEGER", "int32" | "int64")
    )
}

fn gemini_node(doc: &Value, node: &Value, depth: usize) -> Value {
    let node = resolve(doc, node);
    let Value::Object(map) = node else {
        return json!({ "type": "STRING", "description": "Any value, written as text." });
    };
    if depth > 24 {
        return json!({ "type": "OBJECT", "description": "A nested value (recursive structure, see the tool description)." });
    }
    let mut out = Map::new();
    let mut notes = Vec::new();
    let mut nullable = false;
    let mut types: Vec<String> = match map.get("type") {
        Some(Value::String(t)) => vec![t.clone()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).map(str::to_string).collect(),
        _ => Vec::new(),
    };
    if types.iter().any(|t| t == "null") {
        nullable = true;
        types.retain(|t| t != "null");
    }
    if types.is_empty() {
        if let Some(c) = map.get("const") {
            types.push(json_type(c).into());
        } else if let Some(first) =
            map.get("enum").and_then(Value::as_array).and_then(|v| v.iter().find(|x| !x.is_null()))
        {
            types.push(json_type(first).into());
        } else if map.contains_key("properties") {
            types.push("object".into());
        }
    }
    if types.len() > 1 {
        // several types: Gemini has no type arrays, so one branch per type
        let branches: Vec<Value> = types
            .iter()
            .map(|t| {
                let mut one = map.clone();
                one.insert("type".into(), t.clone().into());
                take(&mut one, "description");
                gemini_node(doc, &Value::Object(one), depth + 1)
            })
            .collect();
        out.insert("anyOf".into(), Value::Array(branches));
    } else if let Some(t) = types.first() {
        out.insert("type".into(), t.to_uppercase().into());
    }
    let ty = out.get("type").and_then(Value::as_str).unwrap_or("").to_string();
    if let Some(d) = map.get("description") {
        out.insert("description".into(), d.clone());
    }
    if let Some(c) = map.get("const") {
        match c {
            Value::String(_) => {
                out.insert("format".into(), "enum".into());
                out.insert("enum".into(), json!([c]));
            }
            other => notes.push(format!("must be exactly {other}")),
        }
    }
    if let Some(Value::Array(values)) = map.get("enum") {
        if values.iter().any(Value::is_null) {
            nullable = true;
        }
        let values: Vec<&Value> = values.iter().filter(|v| !v.is_null()).collect();
        if ty == "STRING" && values.iter().all(|v| v.is_string()) {
            out.insert("format".into(), "enum".into());
            out.insert("enum".into(), json!(values));
        } else {
            let shown: Vec<String> = values.iter().map(|v| v.to_string()).collect();
            notes.push(format!("one of {}", shown.join(", ")));
        }
    }
    if let Some(f) = map.get("format").and_then(Value::as_str)
        && !out.contains_key("format")
    {
        if gemini_format_ok(&ty, f) {
            out.insert("format".into(), f.into());
        } else if ty == "STRING" {
            notes.push(match f {
                "date" => "a date YYYY-MM-DD".to_string(),
                other => format!("format: {other}"),
            });
        }
    }
    for key in [
        "minimum",
        "maximum",
        "minItems",
        "maxItems",
        "minLength",
        "maxLength",
        "minProperties",
        "maxProperties",
    ] {
        if let Some(v) = map.get(key) {
            out.insert(key.into(), v.clone());
        }
    }
    if let Some(p) = map.get("pattern") {
        out.insert("pattern".into(), p.clone());
    }
    if let Some(x) = map.get("exclusiveMinimum") {
        notes.push(format!("greater than {x}"));
    }
    if let Some(x) = map.get("exclusiveMaximum") {
        notes.push(format!("less than {x}"));
    }
    if let Some(x) = map.get("multipleOf") {
        notes.push(format!("a multiple of {x}"));
    }
    if map.get("uniqueItems") == Some(&Value::Bool(true)) {
        notes.push("items must be unique".into());
    }
    if let Some(items) = map.get("items").filter(|i| i.is_object() || i.is_boolean()) {
        out.insert("items".into(), gemini_node(doc, items, depth + 1));
    }
    let mut branches: Vec<Value> = Vec::new();
    for key in ["anyOf", "oneOf"] {
        if let Some(Value::Array(bs)) = map.get(key) {
            for b in bs {
                let resolved = resolve(doc, b);
                if resolved.get("type").and_then(Value::as_str) == Some("null") {
                    nullable = true;
                } else {
                    branches.push(gemini_node(doc, b, depth + 1));
                }
            }
        }
    }
    let mut props: Map<String, Value> =
        map.get("properties").and_then(Value::as_object).cloned().unwrap_or_default();
    let mut required: Vec<Value> = map.get("required").and_then(Value::as_array).cloned().unwrap_or_default();
    if let Some(Value::Array(parts)) = map.get("allOf") {
        for part in parts {
            let part = resolve(doc, part);
            if let Some(p) = part.get("properties").and_then(Value::as_object) {
                for (k, v) in p {
                    props.entry(k.clone()).or_insert_with(|| v.clone());
                }
            }
            if let Some(Value::Array(r)) = part.get("required") {
                required.extend(r.iter().cloned());
            }
        }
    }
    match branches.len() {
        0 => {}
        1 if !out.contains_key("type") && props.is_empty() => {
            // `anyOf: [X, null]`: X made nullable
            if let Some(Value::Object(only)) = branches.pop() {
                for (k, v) in only {
                    out.entry(k).or_insert(v);
                }
            }
        }
        _ => {
            out.insert("anyOf".into(), Value::Array(branches));
        }
    }
    if !props.is_empty() {
        let order: Vec<Value> = props.keys().map(|k| Value::String(k.clone())).collect();
        let props: Map<String, Value> =
            props.iter().map(|(k, v)| (k.clone(), gemini_node(doc, v, depth + 1))).collect();
        out.insert("properties".into(), Value::Object(props));
        out.insert("propertyOrdering".into(), Value::Array(order));
        out.entry("type").or_insert_with(|| "OBJECT".into());
    }
    if !required.is_empty() {
        let mut unique: Vec<Value> = Vec::with_capacity(required.len());
        for r in required {
            if !unique.contains(&r) {
                unique.push(r);
            }
        }
        out.insert("required".into(), Value::Array(unique));
    }
    if let Some(note) = length_note(map, "characters", "minLength", "maxLength").filter(|_| ty != "STRING") {
        notes.push(note);
    }
    if nullable {
        out.insert("nullable".into(), true.into());
    }
    add_notes(&mut out, &notes);
    Value::Object(out)
}

fn json_type(v: &Value) -> &'static str {
    match v {
        Value::String(_) => "string",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
        Value::Null => "null",
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
