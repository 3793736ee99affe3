//! Schemas of typed tools: schemars output with toolgate's post-processing.

use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde_json::{Map, Value};
use toolgate_core::SCHEMA_DIALECT;

use crate::walk::{take, walk_mut};

/// The JSON Schema 2020-12 of `T`'s parameters, post-processed like route
/// tables: `$schema` set to 2020-12, no root `title` (a Rust type name means
/// nothing to the model), every object schema closed (see [`close_objects`]),
/// and a root `oneOf`/`anyOf` of object branches gets `type: object`.
///
/// Injected fields (`user_id`, `session_id`, ...) are not removed: a type
/// that declares one is a mistake that [`toolgate_core::ToolSpec::check`] reports.
///
/// ```
/// #[derive(schemars::JsonSchema, serde::Deserialize)]
/// struct Params { city: String, days: Option<u8> }
/// let schema = toolgate_schema::typed_schema::<Params>();
/// assert_eq!(schema["additionalProperties"], false);
/// assert_eq!(schema["required"], serde_json::json!(["city"]));
/// ```
pub fn typed_schema<T: JsonSchema>() -> Value {
    let mut value = SchemaSettings::draft2020_12().into_generator().into_root_schema_for::<T>().to_value();
    if let Value::Object(root) = &mut value {
        root.insert("$schema".into(), SCHEMA_DIALECT.into());
        take(root, "title");
        let all_objects = ["oneOf", "anyOf"].iter().any(|k| {
            root.get(*k).and_then(Value::as_array).is_some_and(|bs| {
                !bs.is_empty() && bs.iter().all(|b| b.get("type").and_then(Value::as_str) == Some("object"))
            })
        });
        if all_objects && !root.contains_key("type") {
            root.insert("type".into(), "object".into());
        }
    }
    close_objects(&mut value);
    // `$schema` and `type` first, as in route-table schemas
    if let Value::Object(root) = &mut value {
        let mut ordered = Map::with_capacity(root.len());
        for key in ["$schema", "type"] {
            if let Some(v) = take(root, key) {
                ordered.insert(key.to_string(), v);
            }
        }
        ordered.append(root);
        *root = ordered;
    }
    value
}

/// Close every object schema in `schema` (the root, properties, items,
/// `$defs`, union branches, ...) so that unknown keys are errors:
///
/// - an object schema with its own `properties` and no composition gets
///   `additionalProperties: false`;
/// - one whose properties are spread over `allOf`/`anyOf`/`oneOf`/`$ref`
///   gets `unevaluatedProperties: false` (2020-12 sees through composition,
///   `additionalProperties` would reject the composed keys);
/// - one that already says `additionalProperties` (a map type such as
///   `HashMap<String, u32>`) or `unevaluatedProperties` is left as it is,
///   as is a bare union whose branches close themselves.
pub fn close_objects(schema: &mut Value) {
    walk_mut(schema, &mut close_one);
}

fn close_one(map: &mut Map<String, Value>) {
    let typed_object = match map.get("type") {
        Some(Value::String(t)) => t == "object",
        Some(Value::Array(ts)) => ts.iter().any(|t| t == "object"),
        _ => false,
    };
    let has_properties = map.contains_key("properties");
    if !(typed_object || has_properties) {
        return;
    }
    if map.contains_key("additionalProperties") || map.contains_key("unevaluatedProperties") {
        return;
    }
    let composed = ["allOf", "anyOf", "oneOf", "$ref"].iter().any(|k| map.contains_key(*k));
    match (composed, has_properties) {
        (false, _) => {
            map.insert("additionalProperties".into(), false.into());
        }
        (true, true) => {
            map.insert("unevaluatedProperties".into(), false.into());
        }
        (true, false) => {}
    }
}
