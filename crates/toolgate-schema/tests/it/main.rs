//! Integration tests of toolgate-schema, one binary: route tables, typed schemas,
//! validation errors and provider exports.

mod export;
mod table;
mod typed;
mod validate;

use std::path::PathBuf;

use serde_json::Value;
use toolgate_core::ToolSpec;
use toolgate_schema::RouteTable;

/// A file under `tests/data`.
pub(crate) fn data(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(name)
}

/// The TOML example: three read operations.
pub(crate) fn nutrition() -> RouteTable {
    RouteTable::load(data("nutrition.toml")).unwrap()
}

/// The JSON example: two idempotent writes with a nested array of objects.
pub(crate) fn measurements() -> RouteTable {
    RouteTable::load(data("measurements.json")).unwrap()
}

#[path = "../fixtures/big_table.rs"]
mod big_table_fixture;
pub(crate) use big_table_fixture::big_table;

/// Every spec the tests generate: route tables and typed tools.
pub(crate) fn all_specs() -> Vec<ToolSpec> {
    let mut specs =
        vec![nutrition().spec().unwrap(), measurements().spec().unwrap(), big_table(50).spec().unwrap()];
    specs.extend(typed::specs());
    specs
}

/// Every object schema (with its pointer) in a JSON Schema document.
pub(crate) fn object_schemas(schema: &Value) -> Vec<(String, &serde_json::Map<String, Value>)> {
    fn go<'a>(v: &'a Value, at: String, out: &mut Vec<(String, &'a serde_json::Map<String, Value>)>) {
        let Value::Object(map) = v else { return };
        out.push((at.clone(), map));
        for key in ["properties", "$defs", "definitions", "patternProperties"] {
            if let Some(Value::Object(m)) = map.get(key) {
                for (k, sub) in m {
                    go(sub, format!("{at}/{key}/{k}"), out);
                }
            }
        }
        for key in ["oneOf", "anyOf", "allOf", "prefixItems"] {
            if let Some(Value::Array(a)) = map.get(key) {
                for (i, sub) in a.iter().enumerate() {
                    go(sub, format!("{at}/{key}/{i}"), out);
                }
            }
        }
        for key in ["items", "additionalProperties", "not", "if", "then", "else", "contains"] {
            if let Some(sub) = map.get(key) {
                go(sub, format!("{at}/{key}"), out);
            }
        }
    }
    let mut out = Vec::new();
    go(schema, String::new(), &mut out);
    out
}
