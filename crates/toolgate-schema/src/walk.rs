//! Visiting every subschema of a JSON Schema document, and resolving local `$ref`s.

use serde_json::{Map, Value};

/// Keywords whose value is a map from names to subschemas.
pub(crate) const SCHEMA_MAPS: [&str; 5] =
    ["properties", "patternProperties", "$defs", "definitions", "dependentSchemas"];
/// Keywords whose value is an array of subschemas.
pub(crate) const SCHEMA_ARRAYS: [&str; 4] = ["oneOf", "anyOf", "allOf", "prefixItems"];
/// Keywords whose value is one subschema.
pub(crate) const SCHEMA_SINGLES: [&str; 10] = [
    "items",
    "additionalProperties",
    "unevaluatedProperties",
    "unevaluatedItems",
    "not",
    "if",
    "then",
    "else",
    "contains",
    "propertyNames",
];

/// Call `f` on every schema object in `schema`, parents before children.
pub(crate) fn walk_mut(schema: &mut Value, f: &mut dyn FnMut(&mut Map<String, Value>)) {
    let Value::Object(map) = schema else { return };
    f(map);
    for key in SCHEMA_MAPS {
        if let Some(Value::Object(children)) = map.get_mut(key) {
            for child in children.values_mut() {
                walk_mut(child, f);
            }
        }
    }
    for key in SCHEMA_ARRAYS {
        if let Some(Value::Array(children)) = map.get_mut(key) {
            for child in children {
                walk_mut(child, f);
            }
        }
    }
    for key in SCHEMA_SINGLES {
        match map.get_mut(key) {
            Some(child @ Value::Object(_)) => walk_mut(child, f),
            // `items` as an array is the pre-2020 tuple form
            Some(Value::Array(children)) if key == "items" => {
                for child in children {
                    walk_mut(child, f);
                }
            }
            _ => {}
        }
    }
}

/// Escape one JSON pointer segment (RFC 6901).
pub(crate) fn escape(segment: &str) -> String {
    segment.replace('~', "~0").replace('/', "~1")
}

/// Undo [`escape`].
pub(crate) fn unescape(segment: &str) -> String {
    segment.replace("~1", "/").replace("~0", "~")
}

/// Follow local `$ref`s (`#/$defs/X`) inside `doc`, at most 16 hops (cycles stop there).
pub(crate) fn resolve<'a>(doc: &'a Value, schema: &'a Value) -> &'a Value {
    let mut current = schema;
    for _ in 0..16 {
        match current.get("$ref").and_then(Value::as_str).and_then(|r| r.strip_prefix('#')) {
            Some(pointer) => match doc.pointer(pointer) {
                Some(target) => current = target,
                None => return current,
            },
            None => return current,
        }
    }
    current
}

/// Remove `key` from `map` keeping the order of the other keys (`Map::remove`
/// swaps the last key into the hole when serde_json preserves order).
pub(crate) fn take(map: &mut Map<String, Value>, key: &str) -> Option<Value> {
    let value = map.get(key).cloned()?;
    map.retain(|k, _| k != key);
    Some(value)
}
