//! JSON Schemas of an OpenAPI document to route-table fields: `$ref`s followed, `allOf`
//! merged, then each property mapped to a [`Field`] (or refused with the reason).

use schema_gen::{Field, FieldType, Items};
use serde_json::{Map, Value};

/// Deepest nesting followed; a recursive schema (a tree of itself) ends here.
const MAX_DEPTH: usize = 24;

/// The schema with every local `$ref` replaced by its target and every `allOf` merged into
/// one object schema, recursively through `properties` and `items`.
pub(crate) fn flatten(root: &Value, schema: &Value, depth: usize) -> Result<Value, String> {
    if depth > MAX_DEPTH {
        return Err(format!("a schema nests deeper than {MAX_DEPTH} levels (a recursive $ref?)"));
    }
    let Some(map) = schema.as_object() else { return Ok(schema.clone()) };
    let mut out = Map::new();
    if let Some(reference) = map.get("$ref").and_then(Value::as_str) {
        let target = follow(root, reference)?;
        if let Value::Object(resolved) = flatten(root, target, depth + 1)? {
            out = resolved;
        }
    }
    if let Some(parts) = map.get("allOf").and_then(Value::as_array) {
        for part in parts {
            if let Value::Object(part) = flatten(root, part, depth + 1)? {
                merge(&mut out, part);
            }
        }
    }
    for (key, value) in map {
        match key.as_str() {
            "$ref" | "allOf" => {}
            "properties" => {
                let mut props =
                    out.remove("properties").and_then(|p| p.as_object().cloned()).unwrap_or_default();
                for (name, prop) in value.as_object().into_iter().flatten() {
                    props.insert(name.clone(), flatten(root, prop, depth + 1)?);
                }
                out.insert(key.clone(), Value::Object(props));
            }
            "items" | "additionalProperties" => {
                out.insert(key.clone(), flatten(root, value, depth + 1)?);
            }
            "oneOf" | "anyOf" => {
                let parts = value.as_array().into_iter().flatten();
                let parts: Result<Vec<Value>, String> = parts.map(|p| flatten(root, p, depth + 1)).collect();
                out.insert(key.clone(), Value::Array(parts?));
            }
            "required" => {
                let mut required =
                    out.remove("required").and_then(|r| r.as_array().cloned()).unwrap_or_default();
                for name in value.as_array().into_iter().flatten() {
                    if !required.contains(name) {
                        required.push(name.clone());
                    }
                }
                out.insert(key.clone(), Value::Array(required));
            }
            _ => {
                out.insert(key.clone(), value.clone());
            }
        }
    }
    Ok(Value::Object(out))
}

/// A local reference (`#/components/schemas/Pet`) in `root`.
pub(crate) fn follow<'a>(root: &'a Value, reference: &str) -> Result<&'a Value, String> {
    let Some(pointer) = reference.strip_prefix('#') else {
        return Err(format!(
            "external $ref {reference:?}: a document given as text resolves only references inside it; import its file (`toolgate import openapi FILE`, `openapi_import::import_file`) to read the files beside it"
        ));
    };
    root.pointer(pointer).ok_or_else(|| format!("$ref {reference:?} points to nothing in the document"))
}

/// `allOf` semantics for the parts a table can hold: properties and required lists are
/// unions; any other keyword is taken from the first part that has it.
fn merge(into: &mut Map<String, Value>, part: Map<String, Value>) {
    for (key, value) in part {
        match (key.as_str(), into.get_mut(&key)) {
            ("properties", Some(Value::Object(props))) => {
                if let Value::Object(more) = value {
                    props.extend(more);
                }
            }
            ("required", Some(Value::Array(required))) => {
                for name in value.as_array().into_iter().flatten() {
                    if !required.contains(name) {
                        required.push(name.clone());
                    }
                }
            }
            (_, Some(_)) => {}
            (_, None) => {
                into.insert(key, value);
            }
        }
    }
}

/// The one type of a (flattened) schema: 3.1's `["string", "null"]` and a union with `null`
/// count as the other type; several real types cannot be held by a table.
fn single(schema: &Value, what: &str) -> Result<Value, String> {
    for key in ["oneOf", "anyOf"] {
        if let Some(parts) = schema.get(key).and_then(Value::as_array) {
            let real: Vec<&Value> =
                parts.iter().filter(|p| p.get("type") != Some(&Value::from("null"))).collect();
            if real.len() != 1 {
                return Err(format!(
                    "{what} is a union ({key}) of {} schemas; a table field has one type",
                    real.len()
                ));
            }
            let mut merged = real[0].as_object().cloned().unwrap_or_default();
            for (k, v) in schema.as_object().into_iter().flatten() {
                if k != key {
                    merged.entry(k.clone()).or_insert(v.clone());
                }
            }
            return Ok(Value::Object(merged));
        }
    }
    Ok(schema.clone())
}

fn field_type(schema: &Value, what: &str) -> Result<FieldType, String> {
    let name = match schema.get("type") {
        Some(Value::String(t)) => t.clone(),
        Some(Value::Array(types)) => {
            let real: Vec<&str> = types.iter().filter_map(Value::as_str).filter(|t| *t != "null").collect();
            match real.as_slice() {
                [one] => (*one).to_owned(),
                _ => return Err(format!("{what} has several types ({})", real.join(", "))),
            }
        }
        _ if schema.get("properties").is_some() => "object".to_owned(),
        _ if schema.get("items").is_some() => "array".to_owned(),
        _ => match schema.get("enum").and_then(Value::as_array).and_then(|v| v.first()) {
            Some(Value::String(_)) => "string".to_owned(),
            _ => return Err(format!("{what} has no type")),
        },
    };
    Ok(match name.as_str() {
        "string" => FieldType::String,
        "integer" => FieldType::Integer,
        "number" => FieldType::Number,
        "boolean" => FieldType::Boolean,
        "array" => FieldType::Array,
        "object" => FieldType::Object,
        other => return Err(format!("{what} has type {other:?}")),
    })
}

/// Whether a (flattened) schema admits `null`: 3.0's `nullable: true`, 3.1's
/// `type: [T, "null"]`, a `oneOf`/`anyOf` with a `{"type": "null"}` branch, or `null` in its enum.
fn admits_null(schema: &Value) -> bool {
    let is_null = |t: &Value| t == "null";
    schema.get("nullable") == Some(&Value::Bool(true))
        || schema.get("type").and_then(Value::as_array).is_some_and(|ts| ts.iter().any(is_null))
        || ["oneOf", "anyOf"].iter().any(|k| {
            schema.get(*k).and_then(Value::as_array).is_some_and(|parts| {
                parts
                    .iter()
                    .any(|p| p.get("type").is_some_and(is_null) || p.get("nullable") == Some(&true.into()))
            })
        })
        || schema.get("enum").and_then(Value::as_array).is_some_and(|v| v.iter().any(Value::is_null))
}

/// A schema's type and limits, as a field's shape or an array's items.
fn parse(schema: &Value, what: &str) -> Result<Items, String> {
    let nullable = admits_null(schema);
    let schema = single(schema, what)?;
    let nullable = nullable || admits_null(&schema);
    let ty = field_type(&schema, what)?;
    let num = |k: &str| schema.get(k).and_then(Value::as_f64);
    let count = |k: &str| schema.get(k).and_then(Value::as_u64);
    // Exclusive bounds: 3.0 says `exclusiveMinimum: true` beside `minimum`, 3.1 gives the bound
    // itself. Whole numbers move to the next allowed value; other numbers keep the bound.
    let bound = |key: &str, exclusive: &str, step: f64| match (num(key), schema.get(exclusive)) {
        (Some(v), Some(Value::Bool(true))) if ty == FieldType::Integer => Some(v + step),
        (_, Some(Value::Number(n))) if ty == FieldType::Integer => n.as_f64().map(|v| v + step),
        (_, Some(Value::Number(n))) => n.as_f64(),
        (v, _) => v,
    };
    let numeric = matches!(ty, FieldType::Integer | FieldType::Number);
    let text = ty == FieldType::String;
    let fields = match ty {
        FieldType::Object => {
            let props = schema.get("properties").and_then(Value::as_object);
            let Some(props) = props.filter(|p| !p.is_empty()) else {
                return Err(format!("{what} is a free-form object (no declared properties)"));
            };
            let required: Vec<&str> = schema
                .get("required")
                .and_then(Value::as_array)
                .map(|r| r.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            props
                .iter()
                .filter(|(_, p)| p.get("readOnly") != Some(&Value::Bool(true)))
                .map(|(name, p)| to_field(name, p, required.contains(&name.as_str())))
                .collect::<Result<Vec<_>, _>>()?
        }
        _ => Vec::new(),
    };
    let items = match ty {
        FieldType::Array => match schema.get("items") {
            Some(items) => Some(Box::new(parse(items, &format!("the items of {what}"))?)),
            None => return Err(format!("{what} is an array without `items`")),
        },
        _ => None,
    };
    Ok(Items {
        ty,
        nullable,
        format: schema.get("format").and_then(Value::as_str).filter(|_| text).map(str::to_owned),
        enum_values: schema
            .get("enum")
            .and_then(Value::as_array)
            .map(|v| v.iter().filter(|v| !v.is_null()).cloned().collect::<Vec<_>>())
            .filter(|v| !v.is_empty()),
        description: schema
            .get("description")
            .or_else(|| schema.get("title"))
            .and_then(Value::as_str)
            .map(|d| d.trim().to_owned())
            .filter(|d| !d.is_empty()),
        minimum: bound("minimum", "exclusiveMinimum", 1.0).filter(|_| numeric),
        maximum: bound("maximum", "exclusiveMaximum", -1.0).filter(|_| numeric),
        items,
        pattern: schema.get("pattern").and_then(Value::as_str).filter(|_| text).map(str::to_owned),
        min_length: count("minLength").filter(|_| text),
        max_length: count("maxLength").filter(|_| text),
        min_items: count("minItems").filter(|_| ty == FieldType::Array),
        max_items: count("maxItems").filter(|_| ty == FieldType::Array),
        fields,
    })
}

/// A named property as a field.
pub(crate) fn to_field(name: &str, schema: &Value, required: bool) -> Result<Field, String> {
    Ok(Field {
        name: name.to_owned(),
        required,
        location: None,
        wire_name: None,
        shape: parse(schema, &format!("field `{name}`"))?,
    })
}
