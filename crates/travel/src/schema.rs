//! Input schemas of the travel tools, derived from typed structs in one place.
//!
//! [`schema_for`] is the single switch point: it uses
//! `schema_gen::typed_schema`, the post-processing every typed tool of the
//! workspace gets (2020-12, closed objects, no context-injected fields).

use schemars::JsonSchema;
use serde_json::Value;

/// The JSON Schema (2020-12) of a typed input struct, ready for a `ToolSpec`.
pub(crate) fn schema_for<T: JsonSchema>() -> Value {
    schema_gen::typed_schema::<T>()
}

/// The property names a schema declares at its root.
pub(crate) fn property_names(schema: &Value) -> Vec<String> {
    schema
        .get("properties")
        .and_then(Value::as_object)
        .map(|props| props.keys().cloned().collect())
        .unwrap_or_default()
}
