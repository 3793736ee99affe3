//! OpenAI strict mode: every property required, optional ones nullable, no `allOf`.

use serde_json::{Map, Value, json};

use super::gemini::json_type;
use super::{OPENAI_FORMATS, add_notes, is_object_schema, length_note, type_is};
use crate::walk::take;

pub(super) fn strict_node(node: &Value) -> Value {
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
pub(super) fn nullable(schema: Value) -> Value {
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
