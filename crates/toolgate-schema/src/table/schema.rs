//! One route, or one field, as JSON Schema 2020-12.

use serde_json::{Map, Value, json};

use super::field::{FieldType, Items};
use super::{Body, DATE_PATTERN, Location, OP_FIELD, Route, merge_required, path_variables};

pub(super) fn route_schema(route: &Route) -> Value {
    let vars = path_variables(route.path_template());
    let mut properties = Map::new();
    properties.insert(OP_FIELD.to_string(), json!({ "const": route.op, "description": route.summary }));
    for var in &vars {
        if !route.fields.iter().any(|f| f.name == *var) {
            properties.insert(
                var.clone(),
                json!({ "type": "string", "minLength": 1, "description": format!("Path parameter `{var}`.") }),
            );
        }
    }
    for field in &route.fields {
        properties.insert(field.name.clone(), shape_schema(&field.shape));
    }
    // The required fields of an optional body are required of the body, not of the call: the
    // executor checks them once any body field is given.
    let optional_body = |name: &str| route.body == Body::Optional && route.location(name) == Location::Body;
    let declared: Vec<String> = route
        .fields
        .iter()
        .filter(|f| f.required && !optional_body(&f.name))
        .map(|f| f.name.clone())
        .collect();
    let mut head = Vec::with_capacity(1 + vars.len());
    head.push(OP_FIELD.to_string());
    head.extend(vars);
    let required = merge_required(&head, &declared);
    json!({
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": false,
    })
}

/// A number as JSON: whole numbers without a fraction (`1`, not `1.0`).
pub(crate) fn number(n: f64) -> Value {
    if n.fract() == 0.0 && n.abs() < 9.0e15 {
        Value::from(n as i64)
    } else {
        serde_json::Number::from_f64(n).map_or(Value::Null, Value::Number)
    }
}

fn shape_schema(shape: &Items) -> Value {
    let mut s = Map::new();
    match (shape.ty, shape.nullable) {
        // Any value, `null` included: no `type` at all.
        (FieldType::Any, _) => None,
        (ty, true) => s.insert("type".into(), json!([ty.as_str(), "null"])),
        (ty, false) => s.insert("type".into(), ty.as_str().into()),
    };
    if let Some(d) = &shape.description {
        s.insert("description".into(), d.as_str().into());
    }
    if let Some(f) = &shape.format {
        s.insert("format".into(), f.as_str().into());
    }
    if let Some(e) = &shape.content_encoding {
        s.insert("contentEncoding".into(), e.as_str().into());
    }
    match (shape.pattern.as_deref(), shape.format.as_deref()) {
        (Some(p), _) => {
            s.insert("pattern".into(), p.into());
        }
        (None, Some("date")) => {
            s.insert("pattern".into(), DATE_PATTERN.into());
        }
        _ => {}
    }
    if let Some(values) = &shape.enum_values {
        let mut values = values.clone();
        // An enum lists every allowed value: a nullable one lists null too.
        if shape.nullable && !values.contains(&Value::Null) {
            values.push(Value::Null);
        }
        s.insert("enum".into(), Value::Array(values));
    }
    if let Some(n) = shape.minimum {
        s.insert("minimum".into(), number(n));
    }
    if let Some(n) = shape.maximum {
        s.insert("maximum".into(), number(n));
    }
    if let Some(n) = shape.min_length {
        s.insert("minLength".into(), n.into());
    }
    if let Some(n) = shape.max_length {
        s.insert("maxLength".into(), n.into());
    }
    if let Some(n) = shape.min_items {
        s.insert("minItems".into(), n.into());
    }
    if let Some(n) = shape.max_items {
        s.insert("maxItems".into(), n.into());
    }
    if let Some(items) = &shape.items {
        s.insert("items".into(), shape_schema(items));
    }
    if shape.ty == FieldType::Object {
        let props: Map<String, Value> =
            shape.fields.iter().map(|f| (f.name.clone(), shape_schema(&f.shape))).collect();
        let required: Vec<&str> =
            shape.fields.iter().filter(|f| f.required).map(|f| f.name.as_str()).collect();
        s.insert("properties".into(), Value::Object(props));
        s.insert("required".into(), json!(required));
        let other = match shape.values.as_deref() {
            None => false.into(),
            // Any value at all: `true`, as a free-form object says it.
            Some(v) if *v == Items::new(FieldType::Any) => true.into(),
            Some(v) => shape_schema(v),
        };
        s.insert("additionalProperties".into(), other);
    }
    // A union's branches: each one also admits `null` when the field does.
    for (key, branches) in [("oneOf", &shape.one_of), ("anyOf", &shape.any_of)] {
        if branches.is_empty() {
            continue;
        }
        let mut list: Vec<Value> = branches.iter().map(shape_schema).collect();
        if shape.nullable && !branches.iter().any(|b| b.nullable || b.ty == FieldType::Any) {
            list.push(json!({ "type": "null" }));
        }
        s.insert(key.into(), Value::Array(list));
    }
    Value::Object(s)
}
