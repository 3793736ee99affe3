//! Route tables: loading, checks, the generated schema, effect and spec.

use proptest::prelude::*;
use serde_json::json;
use toolgate_core::{Effect, SCHEMA_DIALECT};
use toolgate_schema::{Error, Method, RouteTable, Validator, merge_required, path_variables};

use crate::{big_table, data, measurements, nutrition};

#[test]
fn toml_table_becomes_one_oneof_schema() {
    let table = nutrition();
    insta::assert_json_snapshot!("nutrition_schema", table.schema());
}

#[test]
fn json_table_becomes_one_oneof_schema() {
    insta::assert_json_snapshot!("measurements_schema", measurements().schema());
}

#[test]
fn branches_lock_op_and_merge_required_lists() {
    let schema = measurements().schema();
    assert_eq!(schema["$schema"], SCHEMA_DIALECT);
    assert_eq!(schema["type"], "object");
    let put = &schema["oneOf"][0];
    assert_eq!(put["type"], "object");
    assert_eq!(put["additionalProperties"], false);
    assert_eq!(
        put["properties"]["op"],
        json!({"const": "put_measurement", "description": "Record (or replace) the measurement of one day"})
    );
    // path variable first (after op), then declared required fields, each once
    assert_eq!(put["required"], json!(["op", "date", "weight_kg"]));
    // a date gets a pattern as well as its format
    assert_eq!(put["properties"]["date"]["format"], "date");
    assert_eq!(put["properties"]["date"]["pattern"], r"^\d{4}-\d{2}-\d{2}$");
    // nested objects are closed too
    assert_eq!(put["properties"]["girths"]["items"]["additionalProperties"], false);
    assert_eq!(put["properties"]["girths"]["items"]["required"], json!(["site", "cm"]));
    // property order is the declared order, `op` first
    let keys: Vec<&String> = put["properties"].as_object().unwrap().keys().collect();
    assert_eq!(keys, ["op", "date", "weight_kg", "body_fat_pct", "girths"]);
}

#[test]
fn undeclared_path_variables_become_required_strings() {
    let table = RouteTable::from_toml_str(
        r#"
        tool = "query_orders"
        description = "Orders."
        domain = "shop"
        [[routes]]
        op = "get_order_line"
        method = "GET"
        path = "/orders/{order_id}/lines/{line_no}"
        summary = "One line of an order"
        [[routes.fields]]
        name = "line_no"
        type = "integer"
        minimum = 1
        [[routes.fields]]
        name = "expand"
        type = "boolean"
        required = true
        "#,
    )
    .unwrap();
    let branch = &table.schema()["oneOf"][0];
    assert_eq!(branch["required"], json!(["op", "order_id", "line_no", "expand"]));
    assert_eq!(branch["properties"]["order_id"]["type"], "string");
    assert_eq!(branch["properties"]["line_no"], json!({"type": "integer", "minimum": 1}));
}

#[test]
fn effect_follows_the_methods() {
    assert_eq!(nutrition().effect().unwrap(), Effect::Read);
    assert_eq!(measurements().effect().unwrap(), Effect::Write { idempotent: true });
    let mut table = measurements();
    table.routes[1].method = Method::Post;
    assert_eq!(table.effect().unwrap(), Effect::Write { idempotent: false });
    table.routes[1].method = Method::Get;
    match table.effect().unwrap_err() {
        Error::MixedEffect { reads, writes, .. } => {
            assert_eq!(reads, ["delete_measurement"]);
            assert_eq!(writes, ["put_measurement (PUT)"]);
        }
        other => panic!("unexpected {other}"),
    }
    assert!(table.spec().is_err(), "a mixed table has no spec");
}

#[test]
fn spec_passes_the_toolgate_core_check() {
    for table in [nutrition(), measurements(), big_table(50)] {
        let spec = table.spec().unwrap();
        spec.check().unwrap();
        assert_eq!(spec.name, table.tool);
        assert_eq!(spec.required_role, table.required_role);
        assert_eq!(spec.domain, table.domain);
        assert_eq!(spec.tags, table.tags);
        assert_eq!(spec.input_schema, table.schema());
    }
    let spec = nutrition().spec().unwrap();
    assert_eq!(spec.required_role, "member");
    assert_eq!(spec.effect, Effect::Read);
}

#[test]
fn route_lookup() {
    let table = nutrition();
    assert_eq!(table.route("list_meals").unwrap().path, "/nutrition/days/{date}/meals");
    assert!(table.route("nope").is_none());
    assert_eq!(table.ops().collect::<Vec<_>>(), ["get_daily_summary", "list_meals", "search_foods"]);
}

#[test]
fn defaults_and_lowercase_methods() {
    let table = RouteTable::from_json_str(
        r#"{"tool": "query_x", "description": "X.", "domain": "d",
            "routes": [{"op": "get_x", "method": "get", "path": "/x", "summary": "X"}]}"#,
    )
    .unwrap();
    assert_eq!(table.required_role, "guest");
    assert!(table.tags.is_empty());
    assert_eq!(table.routes[0].method, Method::Get);
    assert_eq!(table.schema()["oneOf"][0]["required"], json!(["op"]));
}

/// Parse `toml`, expect it refused, and expect each of `needles` in the message.
fn check_refused(toml: &str, needles: &[&str]) {
    let err = RouteTable::from_toml_str(toml).unwrap_err().to_string();
    for needle in needles {
        assert!(err.contains(needle), "{needle:?} not in:\n{err}");
    }
}

#[test]
fn every_problem_of_a_table_is_reported_at_once() {
    check_refused(
        r#"
        tool = "Nutrition"
        description = " "
        domain = "nutrition"
        [[routes]]
        op = "get-day"
        method = "GET"
        path = "days/{date}/{bad-var}"
        summary = "A day"
        [[routes.fields]]
        name = "user_id"
        type = "string"
        [[routes.fields]]
        name = "tags"
        type = "array"
        [[routes.fields]]
        name = "n"
        type = "integer"
        minimum = 10
        maximum = 1
        enum = ["a"]
        [[routes.fields]]
        name = "filter"
        type = "object"
        [[routes]]
        op = "get-day"
        method = "GET"
        path = "/x"
        summary = "again"
        "#,
        &[
            "12 problem(s)",
            "`tool = \"Nutrition\"` is not a verb_noun",
            "`description` is empty",
            "`op` must be snake_case",
            "appears twice",
            "must start with `/`",
            "malformed variable",
            "`user_id` comes from the call context",
            "an array needs `items`",
            "`minimum` 10 is above `maximum` 1",
            "`enum` value \"a\" is not of type integer",
            "an object needs `fields`",
        ],
    );
}

#[test]
fn field_rules() {
    let base = |field: &str| {
        format!(
            "tool = \"query_x\"\ndescription = \"X\"\ndomain = \"d\"\n[[routes]]\nop = \"get_x\"\nmethod = \"GET\"\n\
             path = \"/x/{{id}}\"\nsummary = \"X\"\n[[routes.fields]]\n{field}\n"
        )
    };
    check_refused(&base("name = \"op\"\ntype = \"string\""), &["may not be called `op`"]);
    check_refused(
        &base("name = \"id\"\ntype = \"array\"\nitems = { type = \"string\" }"),
        &["path variable `id`"],
    );
    check_refused(
        &base("name = \"a\"\ntype = \"string\"\npattern = \"([\""),
        &["not a valid regular expression"],
    );
    check_refused(
        &base("name = \"a\"\ntype = \"integer\"\nformat = \"date\""),
        &["`format` applies to strings only"],
    );
    check_refused(&base("name = \"a b\"\ntype = \"string\""), &["the name must match"]);
    check_refused(&base("name = \"a\"\ntype = \"string\"\nrequried = true"), &["unknown field `requried`"]);
    check_refused(&base("name = \"a\"\ntype = \"text\""), &["unknown variant `text`"]);
    check_refused(
        &base(
            "name = \"a\"\ntype = \"array\"\nitems = { type = \"object\", fields = [{ name = \"token\", type = \"string\" }] }",
        ),
        &["`token` comes from the call context"],
    );
    check_refused(
        "tool = \"query_x\"\ndescription = \"X\"\ndomain = \"d\"\nroutes = []\n",
        &["`routes` is empty"],
    );
    check_refused("tool = \"query_x\"\ndescription = ", &["not a valid TOML route table", "line 2"]);
}

#[test]
fn files_load_by_extension() {
    assert_eq!(RouteTable::load(data("nutrition.toml")).unwrap().tool, "query_nutrition");
    assert_eq!(RouteTable::load(data("measurements.json")).unwrap().tool, "record_measurement");
    let err = RouteTable::load(data("nutrition.yaml")).unwrap_err().to_string();
    assert!(err.contains("must end in .toml or .json"), "{err}");
    let err = RouteTable::load(data("missing.toml")).unwrap_err().to_string();
    assert!(err.contains("cannot read route table"), "{err}");
}

#[test]
fn every_generated_schema_is_a_valid_2020_12_schema() {
    for spec in crate::all_specs() {
        let schema = &spec.input_schema;
        if let Err(e) = jsonschema::draft202012::meta::validate(schema) {
            panic!("{}: not a 2020-12 schema: {e}", spec.name);
        }
        Validator::new(schema).unwrap();
        for export in [
            toolgate_schema::export::openai_strict_schema(schema),
            toolgate_schema::export::anthropic(&spec)["input_schema"].clone(),
        ] {
            if let Err(e) = jsonschema::draft202012::meta::validate(&export) {
                panic!("{}: export is not a 2020-12 schema: {e}\n{export:#}", spec.name);
            }
        }
    }
}

#[test]
fn a_table_survives_a_serde_round_trip() {
    for table in [nutrition(), measurements()] {
        let text = serde_json::to_string(&table).unwrap();
        assert_eq!(RouteTable::from_json_str(&text).unwrap(), table);
        let text = toml::to_string(&table).unwrap();
        assert_eq!(RouteTable::from_toml_str(&text).unwrap(), table);
    }
}

/// A path segment: plain text, or a `{variable}` from a small pool (so repeats happen).
fn segment() -> impl Strategy<Value = (String, Option<String>)> {
    prop_oneof![
        "[a-z0-9._-]{0,8}".prop_map(|s| (s, None)),
        prop::sample::select(vec!["id", "date", "user_no", "x1", "_a", "Order"])
            .prop_map(|v| (format!("{{{v}}}"), Some(v.to_string()))),
    ]
}

proptest! {
    #[test]
    fn path_variables_are_found_in_order_once(segments in prop::collection::vec(segment(), 0..8)) {
        let path: String = segments.iter().map(|(s, _)| format!("/{s}")).collect();
        let mut expected: Vec<String> = Vec::new();
        for v in segments.iter().filter_map(|(_, v)| v.clone()) {
            if !expected.contains(&v) {
                expected.push(v);
            }
        }
        prop_assert_eq!(path_variables(&path), expected);
    }

    #[test]
    fn path_variables_never_panic_and_name_real_variables(path in any::<String>()) {
        for v in path_variables(&path) {
            let braced = format!("{{{v}}}");
            prop_assert!(path.contains(&braced));
            prop_assert!(v.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_'));
        }
    }

    #[test]
    fn merge_keeps_order_and_drops_duplicates(
        first in prop::collection::vec("[a-e]", 0..8),
        second in prop::collection::vec("[a-h]", 0..8),
    ) {
        let merged = merge_required(&first, &second);
        // no duplicates
        let mut seen = std::collections::HashSet::new();
        prop_assert!(merged.iter().all(|n| seen.insert(n.clone())));
        // nothing lost, nothing invented
        for n in first.iter().chain(&second) {
            prop_assert!(merged.contains(n));
        }
        prop_assert!(merged.iter().all(|n| first.contains(n) || second.contains(n)));
        // order: first occurrence in first ++ second
        let mut expected: Vec<String> = Vec::new();
        for n in first.iter().chain(&second) {
            if !expected.contains(n) {
                expected.push(n.clone());
            }
        }
        prop_assert_eq!(merged, expected);
    }

    #[test]
    fn generated_branches_require_op_then_path_variables(vars in prop::collection::vec("[a-z]{1,6}", 1..5)) {
        let path: String = vars.iter().map(|v| format!("/x/{{{v}}}")).collect();
        let table = RouteTable::from_json_str(&json!({
            "tool": "query_x", "description": "X", "domain": "d",
            "routes": [{"op": "get_x", "method": "GET", "path": path, "summary": "X"}]
        }).to_string());
        // a generated name may collide with a reserved one (op, uid); those are refused
        if let Ok(table) = table {
            let mut expected = vec!["op".to_string()];
            expected.extend(path_variables(&path));
            prop_assert_eq!(&table.schema()["oneOf"][0]["required"], &json!(expected));
        }
    }
}
