//! What the import tests share: a document built from its `paths` and `components.schemas`,
//! imported; an operation's table and route; a table's published schema as a validator.

use serde_json::{Value, json};
use toolgate_openapi::Options;
use toolgate_schema::{Route, RouteTable, Validator};

/// Import an OpenAPI `version` document titled `title` with these `paths` and schemas.
pub(crate) fn import_doc(
    version: &str,
    title: &str,
    paths: Value,
    schemas: Value,
) -> toolgate_openapi::Import {
    let text = json!({"openapi": version, "info": {"title": title, "version": "1"}, "paths": paths,
        "components": {"schemas": schemas}})
    .to_string();
    toolgate_openapi::import(&text, &Options::default()).unwrap()
}

/// The table holding `op`, and its route.
pub(crate) fn find<'a>(import: &'a toolgate_openapi::Import, op: &str) -> (&'a RouteTable, &'a Route) {
    let table = import
        .tables
        .iter()
        .find(|t| t.route(op).is_some())
        .unwrap_or_else(|| panic!("{op}: {}", import.summary()));
    (table, table.route(op).unwrap())
}

/// The table as written and read back (through TOML, as `serve` reads it), and a validator of
/// its published schema.
pub(crate) fn validator(table: &RouteTable) -> Validator {
    let back = RouteTable::from_toml_str(&toml::to_string(table).unwrap()).unwrap();
    assert_eq!(&back, table);
    Validator::new(&back.spec().unwrap().input_schema).unwrap()
}
