//! Validation errors as the model reads them, through one `check` helper.

use std::sync::LazyLock;

use proptest::prelude::*;
use serde_json::{Value, json};
use toolgate_schema::Validator;
use toolgate_test_support::json::Shape;

use crate::{measurements, nutrition};

static NUTRITION: LazyLock<Validator> = LazyLock::new(|| Validator::new(&nutrition().schema()).unwrap());
static MEASUREMENTS: LazyLock<Validator> =
    LazyLock::new(|| Validator::new(&measurements().schema()).unwrap());
static NESTED: LazyLock<Validator> = LazyLock::new(|| {
    Validator::new(&json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "properties": {
            "note": {"type": ["string", "null"]},
            "shape": {"oneOf": [
                {"type": "object", "properties": {"kind": {"const": "circle"}, "r": {"type": "number", "exclusiveMinimum": 0}},
                 "required": ["kind", "r"], "additionalProperties": false},
                {"type": "object", "properties": {"kind": {"const": "square"}, "side": {"type": "number"}},
                 "required": ["kind", "side"], "additionalProperties": false}
            ]},
            "when": {"type": "string", "format": "date-time"},
            "codes": {"type": "array", "items": {"type": "string", "pattern": "^[A-Z]{3}$"}, "uniqueItems": true}
        },
        "additionalProperties": false
    }))
    .unwrap()
});

/// Validate `input`; compare every error, one per line as
/// `pointer: message [expected: ...; actual: ...]`, with `expect` ("" = valid).
#[track_caller]
fn check(validator: &Validator, input: Value, expect: &str) {
    let got = match validator.validate(&input) {
        Ok(()) => String::new(),
        Err(errors) => {
            assert!(!errors.is_empty(), "Err with no error");
            errors
                .iter()
                .map(|e| {
                    format!("{}: {} [expected: {}; actual: {}]", e.pointer, e.message, e.expected, e.actual)
                })
                .collect::<Vec<_>>()
                .join("\n")
        }
    };
    assert_eq!(validator.is_valid(&input), got.is_empty(), "is_valid disagrees with validate");
    let expect = expect.trim();
    assert!(got == expect, "for {input}\n--- got:\n{got}\n--- expected:\n{expect}\n");
}

#[test]
fn valid_calls_pass() {
    check(&NUTRITION, json!({"op": "get_daily_summary", "date": "2026-07-15"}), "");
    check(
        &NUTRITION,
        json!({"op": "list_meals", "date": "2024-02-29", "meal_type": "lunch", "limit": 100}),
        "",
    );
    check(&NUTRITION, json!({"op": "search_foods", "query": "oat", "tags": ["vegan"]}), "");
    check(
        &MEASUREMENTS,
        json!({"op": "put_measurement", "date": "2026-07-15", "weight_kg": 80.5, "girths": [{"site": "waist", "cm": 90}]}),
        "",
    );
    check(&NESTED, json!({"note": null, "shape": {"kind": "circle", "r": 2}, "codes": ["OSL", "CDG"]}), "");
}

#[test]
fn op_missing_unknown_or_not_a_string_is_one_error_listing_the_ops() {
    check(
        &NUTRITION,
        json!({"date": "2026-07-15"}),
        r#"
/op: `op` is missing; it selects the operation. Valid values: get_daily_summary, list_meals, search_foods [expected: one of get_daily_summary, list_meals, search_foods; actual: null]
"#,
    );
    check(
        &NUTRITION,
        json!({"op": "get_summary", "date": "2026-07-15", "extra": 1}),
        r#"
/op: `op` "get_summary" is not an operation of this tool; valid values: get_daily_summary, list_meals, search_foods. Did you mean `get_daily_summary`? [expected: one of get_daily_summary, list_meals, search_foods; actual: "get_summary"]
"#,
    );
    check(
        &NUTRITION,
        json!({"op": "list_meal"}),
        r#"
/op: `op` "list_meal" is not an operation of this tool; valid values: get_daily_summary, list_meals, search_foods. Did you mean `list_meals`? [expected: one of get_daily_summary, list_meals, search_foods; actual: "list_meal"]
"#,
    );
    check(
        &NUTRITION,
        json!({"op": 3}),
        r#"
/op: `op` must be a string naming the operation, got an integer; valid values: get_daily_summary, list_meals, search_foods [expected: one of get_daily_summary, list_meals, search_foods; actual: 3]
"#,
    );
}

#[test]
fn non_objects_get_one_clear_error() {
    check(
        &NUTRITION,
        json!([{"op": "list_meals"}]),
        r#"
: the parameters must be a JSON object with `op` (one of get_daily_summary, list_meals, search_foods) and that operation's fields, got an array [expected: a JSON object; actual: "an array of 1 items"]
"#,
    );
    check(
        &NUTRITION,
        json!(null),
        r#"
: the parameters must be a JSON object with `op` (one of get_daily_summary, list_meals, search_foods) and that operation's fields, got null [expected: a JSON object; actual: null]
"#,
    );
    check(
        &NUTRITION,
        json!("list_meals"),
        r#"
: the parameters must be a JSON object with `op` (one of get_daily_summary, list_meals, search_foods) and that operation's fields, got a string [expected: a JSON object; actual: "list_meals"]
"#,
    );
    check(
        &NESTED,
        json!(42),
        r#"
: the parameters must be an object with fields note, shape, when, codes, got an integer [expected: an object with fields note, shape, when, codes; actual: 42]
"#,
    );
}

#[test]
fn only_the_chosen_branch_is_reported() {
    check(
        &NUTRITION,
        json!({"op": "get_daily_summary", "date": "2026-07-15", "foo": 1}),
        r#"
/foo: `foo` is not a parameter of op `get_daily_summary`; allowed: date. Remove it. [expected: one of the known fields: date; actual: 1]
"#,
    );
    check(
        &NUTRITION,
        json!({"op": "get_daily_summary", "dat": "2026-07-15"}),
        r#"
/date: `date` is required by op `get_daily_summary` but missing; send a date YYYY-MM-DD (e.g. 2026-07-15) [expected: a date YYYY-MM-DD (e.g. 2026-07-15); actual: null]
/dat: `dat` is not a parameter of op `get_daily_summary`; allowed: date. Did you mean `date`? [expected: one of the known fields: date; actual: "2026-07-15"]
"#,
    );
    check(
        &NUTRITION,
        json!({"op": "list_meals", "date": "2026-07-15", "user_id": "u1"}),
        r#"
/user_id: `user_id` is not a parameter of op `list_meals`; allowed: date, meal_type, limit. It is filled in by the system from the caller's identity: remove it. [expected: one of the known fields: date, meal_type, limit; actual: "u1"]
"#,
    );
}

#[test]
fn dates_are_checked_by_shape_and_by_calendar() {
    check(
        &NUTRITION,
        json!({"op": "get_daily_summary", "date": "2026-02-30"}),
        r#"
/date: `date` "2026-02-30" is not a real calendar date; check the month and the day [expected: a date YYYY-MM-DD (e.g. 2026-07-15); actual: "2026-02-30"]
"#,
    );
    check(
        &NUTRITION,
        json!({"op": "get_daily_summary", "date": "15/07/2026"}),
        r#"
/date: `date` must be a date YYYY-MM-DD (e.g. 2026-07-15); got "15/07/2026" [expected: a date YYYY-MM-DD (e.g. 2026-07-15); actual: "15/07/2026"]
"#,
    );
    check(
        &NUTRITION,
        json!({"op": "get_daily_summary", "date": "２０２６-07-15"}),
        r#"
/date: `date` must be a date YYYY-MM-DD (e.g. 2026-07-15); got "２０２６-07-15" [expected: a date YYYY-MM-DD (e.g. 2026-07-15); actual: "２０２６-07-15"]
"#,
    );
    check(
        &NUTRITION,
        json!({"op": "get_daily_summary", "date": 20260715}),
        r#"
/date: `date` must be a date YYYY-MM-DD (e.g. 2026-07-15), got an integer 20260715; send it as a string, in quotes [expected: a date YYYY-MM-DD (e.g. 2026-07-15); actual: 20260715]
"#,
    );
}

#[test]
fn types_ranges_enums_and_lengths() {
    check(
        &NUTRITION,
        json!({"op": "list_meals", "date": "2026-07-15", "limit": "5"}),
        r#"
/limit: `limit` must be an integer from 1 to 100, got a string "5"; send it as a JSON number, without quotes [expected: an integer from 1 to 100; actual: "5"]
"#,
    );
    check(
        &NUTRITION,
        json!({"op": "list_meals", "date": "2026-07-15", "limit": 2.5}),
        r#"
/limit: `limit` must be an integer from 1 to 100, got a number 2.5; send a whole number [expected: an integer from 1 to 100; actual: 2.5]
"#,
    );
    check(
        &NUTRITION,
        json!({"op": "list_meals", "date": "2026-07-15", "limit": null}),
        r#"
/limit: `limit` must be an integer from 1 to 100, got null; send a value, or leave the field out if it is optional [expected: an integer from 1 to 100; actual: null]
"#,
    );
    check(
        &NUTRITION,
        json!({"op": "list_meals", "date": "2026-07-15", "meal_type": "Lunch", "limit": 0}),
        r#"
/meal_type: `meal_type` must be one of "breakfast", "lunch", "dinner", "snack"; got "Lunch"; did you mean "lunch"? [expected: one of "breakfast", "lunch", "dinner", "snack"; actual: "Lunch"]
/limit: `limit` must be at least 1; got 0 [expected: an integer from 1 to 100; actual: 0]
"#,
    );
    check(
        &NUTRITION,
        json!({"op": "search_foods", "query": "a", "tags": ["keto", "vegan", "vegan", "x"]}),
        r#"
/query: `query` must be at least 2 characters long; it has 1 [expected: a string of 2 to 100 characters; actual: "a"]
/tags: `tags` may have at most 3 items; it has 4 [expected: an array of at most 3 items, each one of "vegan", "vegetarian", "gluten_free"; actual: "an array of 4 items"]
/tags/0: `tags[0]` must be one of "vegan", "vegetarian", "gluten_free"; got "keto" [expected: one of "vegan", "vegetarian", "gluten_free"; actual: "keto"]
/tags/3: `tags[3]` must be one of "vegan", "vegetarian", "gluten_free"; got "x" [expected: one of "vegan", "vegetarian", "gluten_free"; actual: "x"]
"#,
    );
    check(
        &NUTRITION,
        json!({"op": "search_foods", "tags": "vegan"}),
        r#"
/query: `query` is required by op `search_foods` but missing; send a string of 2 to 100 characters [expected: a string of 2 to 100 characters; actual: null]
/tags: `tags` must be an array of at most 3 items, each one of "vegan", "vegetarian", "gluten_free", got a string "vegan"; send a JSON array, e.g. ["a", "b"] [expected: an array of at most 3 items, each one of "vegan", "vegetarian", "gluten_free"; actual: "vegan"]
"#,
    );
    check(
        &NUTRITION,
        json!({"op": "search_foods", "query": "x".repeat(500)}),
        r#"
/query: `query` must be at most 100 characters long; it has 500, shorten it [expected: a string of 2 to 100 characters; actual: "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx… (500 chars)"]
"#,
    );
}

#[test]
fn nested_objects_name_the_full_path() {
    check(
        &MEASUREMENTS,
        json!({"op": "put_measurement", "date": "2026-07-15", "weight_kg": 500,
               "girths": [{"site": "waist", "cm": 90}, {"site": "neck", "cm": 5, "side": "left"}]}),
        r#"
/weight_kg: `weight_kg` must be at most 400; got 500 [expected: a number from 20 to 400; actual: 500]
/girths/1/site: `girths[1].site` must be one of "waist", "hip", "chest", "arm", "thigh"; got "neck" [expected: one of "waist", "hip", "chest", "arm", "thigh"; actual: "neck"]
/girths/1/cm: `girths[1].cm` must be at least 10; got 5 [expected: a number from 10 to 300; actual: 5]
/girths/1/side: `side` is not a field of `girths[1]`; allowed: site, cm. Did you mean `site`? [expected: one of the known fields: site, cm; actual: "left"]
"#,
    );
    check(
        &MEASUREMENTS,
        json!({"op": "put_measurement", "date": "2026-07-15", "girths": [{}]}),
        r#"
/weight_kg: `weight_kg` is required by op `put_measurement` but missing; send a number from 20 to 400 [expected: a number from 20 to 400; actual: null]
/girths/0/site: `girths[0].site` is required but missing; send one of "waist", "hip", "chest", "arm", "thigh" [expected: one of "waist", "hip", "chest", "arm", "thigh"; actual: null]
/girths/0/cm: `girths[0].cm` is required but missing; send a number from 10 to 300 [expected: a number from 10 to 300; actual: null]
"#,
    );
}

#[test]
fn nested_unions_report_the_meant_branch() {
    check(
        &NESTED,
        json!({"shape": {"kind": "circle", "r": 0}}),
        r#"
/shape/r: `shape.r` must be greater than 0; got 0 [expected: a number greater than 0; actual: 0]
"#,
    );
    check(
        &NESTED,
        json!({"shape": {"kind": "square"}}),
        r#"
/shape/side: `shape.side` is required but missing; send a number [expected: a number; actual: null]
"#,
    );
    check(
        &NESTED,
        json!({"shape": {"kind": "triangle"}}),
        r#"
/shape/kind: `shape.kind` must be one of "circle", "square"; got "triangle" [expected: one of "circle", "square"; actual: "triangle"]
"#,
    );
    check(
        &NESTED,
        json!({"shape": 5, "note": 3}),
        r#"
/shape: `shape` must be an object with fields kind, r or an object with fields kind, side; got 5 [expected: an object with fields kind, r or an object with fields kind, side; actual: 5]
/note: `note` must be a string or null, got an integer 3; send it as a string, in quotes [expected: a string or null; actual: 3]
"#,
    );
    check(
        &NESTED,
        json!({"when": "tomorrow", "codes": ["osl", "OSL", "OSL"]}),
        r#"
/when: `when` must be a date-time in RFC 3339 form (e.g. 2026-07-15T09:30:00Z); got "tomorrow" [expected: a date-time in RFC 3339 form (e.g. 2026-07-15T09:30:00Z); actual: "tomorrow"]
/codes: `codes` has duplicate items; send each item once [expected: an array, each a string matching ^[A-Z]{3}$; actual: "an array of 3 items"]
/codes/0: `codes[0]` must match the pattern ^[A-Z]{3}$; got "osl" [expected: a string matching ^[A-Z]{3}$; actual: "osl"]
"#,
    );
}

/// Any JSON value: scalars, long and odd strings, nested arrays and objects.
fn any_json() -> impl Strategy<Value = Value> {
    toolgate_test_support::json::value(Shape {
        text: ".*",
        words: &["2026-07-15", "2026-02-30", "lunch", "get_daily_summary", "list_meals", ""],
        keys: ".{0,12}",
        key_words: &["op", "date", "limit", "meal_type", "query", "tags", "girths", "cm", "shape", "kind"],
        depth: 4,
        size: 64,
        width: 8,
    })
}

/// An object that picks a real op, so the branch paths are exercised.
fn op_object() -> impl Strategy<Value = Value> {
    (
        prop::sample::select(vec![
            "get_daily_summary",
            "list_meals",
            "search_foods",
            "put_measurement",
            "delete_measurement",
        ]),
        prop::collection::btree_map(
            prop::sample::select(vec![
                "date",
                "limit",
                "meal_type",
                "query",
                "tags",
                "weight_kg",
                "girths",
                "x",
            ]),
            any_json(),
            0..5,
        ),
    )
        .prop_map(|(op, fields)| {
            let mut map: serde_json::Map<String, Value> =
                fields.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
            map.insert("op".into(), op.into());
            Value::Object(map)
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn any_json_gets_errors_never_a_panic(value in prop_oneof![any_json(), op_object()]) {
        for v in [&*NUTRITION, &*MEASUREMENTS, &*NESTED] {
            let result = v.validate(&value);
            prop_assert_eq!(result.is_ok(), v.is_valid(&value));
            if let Err(errors) = result {
                prop_assert!(!errors.is_empty());
                for e in &errors {
                    prop_assert!(e.pointer.is_empty() || e.pointer.starts_with('/'), "{}", e.pointer);
                    prop_assert!(!e.message.is_empty());
                    prop_assert!(!e.expected.is_empty());
                }
            }
        }
        let _ = toolgate_schema::export::openai_unwrap(value.clone());
        let _ = toolgate_schema::export::unwrap(value);
    }
}

#[test]
fn deep_and_huge_values_do_not_panic() {
    // serde_json refuses to parse more than 128 levels; values built in code
    // can be deeper, up to what serde_json itself can drop (about 1,000 in
    // debug builds), so that is the depth checked here
    let mut deep = json!("x");
    for _ in 0..1_000 {
        deep = json!({ "op": deep });
    }
    assert!(NUTRITION.validate(&deep).is_err());
    let deep_list = (0..1_000).fold(json!(1), |acc, _| json!([acc]));
    assert!(NESTED.validate(&json!({"codes": deep_list})).is_err());
    let huge = "y".repeat(10 * 1024 * 1024);
    let errors = NUTRITION.validate(&json!({"op": "search_foods", "query": huge})).unwrap_err();
    assert!(errors[0].message.len() < 300, "{}", errors[0].message.len());
    let _ = toolgate_schema::export::openai_unwrap(deep);
}
