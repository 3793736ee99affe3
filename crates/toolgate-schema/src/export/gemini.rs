//! Gemini's OpenAPI-subset `Schema` object.

use serde_json::{Map, Value, json};

use super::{add_notes, length_note};
use crate::walk::{resolve, take};

/// Formats Gemini accepts, per type.
fn gemini_format_ok(ty: &str, format: &str) -> bool {
    matches!(
        (ty, format),
        ("STRING", "enum" | "date-time") | ("NUMBER", "float" | "double") | ("INTEGER", "int32" | "int64")
    )
}

pub(super) fn gemini_node(doc: &Value, node: &Value, depth: usize) -> Value {
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

pub(super) fn json_type(v: &Value) -> &'static str {
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
