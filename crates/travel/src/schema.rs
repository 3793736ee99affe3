//! Input schemas of the travel tools, derived from typed structs in one place.
//!
//! [`schema_for`] is the single switch point to `schema_gen::typed_schema`
//! once that crate lands: today it runs schemars with the same
//! post-processing (inline subschemas, closed objects, optional fields
//! not nullable).

use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde_json::{Map, Value};

/// The JSON Schema (2020-12) of a typed input struct, ready for a `ToolSpec`.
pub(crate) fn schema_for<T: JsonSchema>() -> Value {
    let mut settings = SchemaSettings::draft2020_12();
    settings.inline_subschemas = true;
    let schema = settings.into_generator().into_root_schema_for::<T>();
    let mut value = schema.to_value();
    tidy(&mut value);
    value
}

/// Close every object schema and drop `null` from optional properties: the
/// model should leave a value out, not send `null`.
fn tidy(value: &mut Value) {
    match value {
        Value::Object(map) => {
            if map.contains_key("properties") && !map.contains_key("additionalProperties") {
                map.insert("additionalProperties".into(), Value::Bool(false));
            }
            strip_null(map);
            for child in map.values_mut() {
                tidy(child);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(tidy),
        _ => {}
    }
}

fn strip_null(map: &mut Map<String, Value>) {
    if let Some(Value::Array(types)) = map.get_mut("type") {
        types.retain(|t| t != "null");
        if types.len() == 1 {
            let only = types.remove(0);
            map.insert("type".into(), only);
        }
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(Value::Array(branches)) = map.get_mut(key) {
            branches.retain(|b| b.get("type").and_then(Value::as_str) != Some("null"));
            if branches.len() == 1
                && let Some(Value::Object(only)) = branches.pop()
            {
                map.remove(key);
                for (k, v) in only {
                    map.entry(k).or_insert(v);
                }
            }
        }
    }
    if let Some(Value::Array(values)) = map.get_mut("enum") {
        values.retain(|v| !v.is_null());
    }
}

/// The property names a schema declares at its root.
pub(crate) fn property_names(schema: &Value) -> Vec<String> {
    schema
        .get("properties")
        .and_then(Value::as_object)
        .map(|props| props.keys().cloned().collect())
        .unwrap_or_default()
}
