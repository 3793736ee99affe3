//! Provider exports, each checked against that provider's documented limits.

use regex::Regex;
use serde_json::{Map, Value, json};
use toolgate_core::ToolSpec;
use toolgate_schema::Validator;
use toolgate_schema::export::{self, WRAPPER};

use crate::{all_specs, nutrition, object_schemas};

// ---------------------------------------------------------------------------
// MCP — https://modelcontextprotocol.io/specification/2025-11-25/server/tools
// (Tool object; "Tool names": 1 to 128 characters, A-Z a-z 0-9 _ - . only;
// inputSchema a JSON Schema object with `type: "object"`, 2020-12 by default;
// outputSchema, when present, also `type: "object"`; annotations are hints:
// readOnlyHint, destructiveHint, idempotentHint, openWorldHint booleans).
// ---------------------------------------------------------------------------
fn check_mcp(tool: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    let name = tool["name"].as_str().unwrap_or_default();
    if !Regex::new(r"^[A-Za-z0-9_.-]{1,128}$").unwrap().is_match(name) {
        problems.push(format!("name {name:?}"));
    }
    if tool["inputSchema"]["type"] != "object" {
        problems.push("inputSchema type".into());
    }
    if let Some(out) = tool.get("outputSchema")
        && out["type"] != "object"
    {
        problems.push("outputSchema type".into());
    }
    for (k, v) in tool["annotations"].as_object().into_iter().flatten() {
        if !v.is_boolean() && k != "title" {
            problems.push(format!("annotation {k}"));
        }
    }
    problems
}

// ---------------------------------------------------------------------------
// OpenAI — https://platform.openai.com/docs/guides/structured-outputs#supported-schemas
// and https://platform.openai.com/docs/guides/function-calling (strict mode):
// - function name ^[a-zA-Z0-9_-]{1,64}$
// - root is an object, not `anyOf`; every object has `additionalProperties:
//   false` and lists every property in `required` (optional = nullable)
// - supported: string, number, boolean, integer, object, array, enum, anyOf,
//   $defs/$ref, const; string `pattern` and `format` (date-time, time, date,
//   duration, email, hostname, ipv4, ipv6, uuid); number `multipleOf`,
//   `maximum`, `exclusiveMaximum`, `minimum`, `exclusiveMinimum`; array
//   `minItems`, `maxItems`
// - not supported: allOf, not, dependentRequired, dependentSchemas, if, then,
//   else, oneOf (error "'oneOf' is not permitted"), `default` (error
//   "'default' is not permitted")
// - at most 5,000 object properties in all, 10 levels of nesting, 1,000 enum
//   values, 120,000 characters of property names + definition names + enum
//   and const values
// - `anyOf` object branches must not share an identical first key (error
//   "Objects provided via 'anyOf' must not share identical first keys")
// ---------------------------------------------------------------------------
const OPENAI_KEYWORDS: [&str; 22] = [
    "type",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "enum",
    "const",
    "anyOf",
    "$defs",
    "definitions",
    "$ref",
    "description",
    "title",
    "pattern",
    "format",
    "multipleOf",
    "maximum",
    "exclusiveMaximum",
    "minimum",
    "exclusiveMinimum",
    "minItems",
    "maxItems",
];

fn check_openai(tool: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    let function = &tool["function"];
    let name = function["name"].as_str().unwrap_or_default();
    if !Regex::new(r"^[a-zA-Z0-9_-]{1,64}$").unwrap().is_match(name) {
        problems.push(format!("name {name:?}"));
    }
    if function["strict"] != true {
        problems.push("strict is not true".into());
    }
    let schema = &function["parameters"];
    if schema["type"] != "object" || schema.get("anyOf").is_some() {
        problems.push("root must be an object, not anyOf".into());
    }
    let mut properties = 0;
    let mut enum_values = 0;
    let mut text = 0;
    for (at, map) in object_schemas(schema) {
        for key in map.keys() {
            if !OPENAI_KEYWORDS.contains(&key.as_str()) {
                problems.push(format!("{at}: keyword {key}"));
            }
        }
        if let Some(f) = map.get("format").and_then(Value::as_str)
            && !export::OPENAI_FORMATS.contains(&f)
        {
            problems.push(format!("{at}: format {f}"));
        }
        if let Some(Value::Object(props)) = map.get("properties") {
            properties += props.len();
            text += props.keys().map(String::len).sum::<usize>();
            let keys: Vec<&String> = props.keys().collect();
            let required: Vec<&str> = map
                .get("required")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect();
            if keys.len() != required.len() || keys.iter().any(|k| !required.contains(&k.as_str())) {
                problems.push(format!("{at}: required must list every property"));
            }
        }
        let is_object = map.get("type") == Some(&json!("object")) || map.contains_key("properties");
        if is_object && map.get("additionalProperties") != Some(&json!(false)) {
            problems.push(format!("{at}: additionalProperties must be false"));
        }
        if let Some(Value::Array(values)) = map.get("enum") {
            enum_values += values.len();
            text += values.iter().filter_map(Value::as_str).map(str::len).sum::<usize>();
        }
        if let Some(Value::String(c)) = map.get("const") {
            text += c.len();
        }
        if let Some(Value::Object(defs)) = map.get("$defs") {
            text += defs.keys().map(String::len).sum::<usize>();
        }
        if let Some(Value::Array(branches)) = map.get("anyOf") {
            let firsts: Vec<(&String, &Value)> = branches
                .iter()
                .filter_map(|b| b.get("properties").and_then(Value::as_object)?.iter().next())
                .collect();
            for (i, a) in firsts.iter().enumerate() {
                if firsts[..i].contains(a) {
                    problems.push(format!("{at}: anyOf branches share the first key {:?}", a.0));
                }
            }
        }
    }
    if nesting(schema) > 10 {
        problems.push(format!("nesting {} > 10", nesting(schema)));
    }
    if properties > 5000 || enum_values > 1000 || text > 120_000 {
        problems.push(format!("size: {properties} properties, {enum_values} enum values, {text} chars"));
    }
    problems
}

/// Levels of object nesting (the root object is level 1).
fn nesting(schema: &Value) -> usize {
    let Value::Object(map) = schema else { return 0 };
    let own = usize::from(map.contains_key("properties"));
    let mut deepest = 0;
    for key in ["properties", "$defs"] {
        for sub in map.get(key).and_then(Value::as_object).into_iter().flat_map(Map::values) {
            deepest = deepest.max(nesting(sub));
        }
    }
    for sub in map.get("anyOf").and_then(Value::as_array).into_iter().flatten() {
        deepest = deepest.max(nesting(sub));
    }
    if let Some(items) = map.get("items") {
        deepest = deepest.max(nesting(items));
    }
    own + deepest
}

// ---------------------------------------------------------------------------
// Anthropic — https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/implement-tool-use
// (tool `name` must match ^[a-zA-Z0-9_-]{1,64}$; `input_schema` is a JSON
// Schema object with `type: "object"`). The API also answers 400
// "input_schema does not support oneOf, allOf, or anyOf at the top level"
// (reported in anthropics/claude-code#5319 and many MCP servers' issues).
// ---------------------------------------------------------------------------
fn check_anthropic(tool: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    let name = tool["name"].as_str().unwrap_or_default();
    if !Regex::new(r"^[a-zA-Z0-9_-]{1,64}$").unwrap().is_match(name) {
        problems.push(format!("name {name:?}"));
    }
    let keys: Vec<&String> = tool.as_object().unwrap().keys().collect();
    if keys != ["name", "description", "input_schema"] {
        problems.push(format!("keys {keys:?}"));
    }
    let schema = &tool["input_schema"];
    if schema["type"] != "object" {
        problems.push("input_schema type".into());
    }
    for key in ["oneOf", "anyOf", "allOf"] {
        if schema.get(key).is_some() {
            problems.push(format!("top-level {key}"));
        }
    }
    problems
}

// ---------------------------------------------------------------------------
// Gemini — https://ai.google.dev/api/caching#FunctionDeclaration and #Schema
// - function name: starts with a letter or an underscore; a-z, A-Z, 0-9,
//   underscores, dots, colons and dashes; at most 64 characters
// - parameter (property) names: start with a letter or an underscore; a-z,
//   A-Z, 0-9 and underscores; at most 64 characters
// - Schema fields: type, format, title, description, nullable, enum,
//   maxItems, minItems, properties, required, minProperties, maxProperties,
//   minLength, maxLength, pattern, example, anyOf, propertyOrdering,
//   default, items, minimum, maximum (no $schema, $ref, $defs, oneOf, allOf,
//   const, additionalProperties, exclusive bounds)
// - type is one of STRING NUMBER INTEGER BOOLEAN ARRAY OBJECT (one, not a list)
// - enum: values of a STRING with format "enum"
// - format on the Gemini Developer API: STRING "enum" or "date-time",
//   NUMBER "float"/"double", INTEGER "int32"/"int64" (firebase.google.com
//   docs/reference/js/ai.schemashared: "this must be either 'enum' or
//   'date-time', otherwise requests will fail")
// - an OBJECT needs non-empty `properties`; `required` names only its properties
// ---------------------------------------------------------------------------
const GEMINI_KEYWORDS: [&str; 22] = [
    "type",
    "format",
    "title",
    "description",
    "nullable",
    "enum",
    "maxItems",
    "minItems",
    "properties",
    "required",
    "minProperties",
    "maxProperties",
    "minLength",
    "maxLength",
    "pattern",
    "example",
    "anyOf",
    "propertyOrdering",
    "default",
    "items",
    "minimum",
    "maximum",
];

fn check_gemini(declaration: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    let name = declaration["name"].as_str().unwrap_or_default();
    if !Regex::new(r"^[a-zA-Z_][a-zA-Z0-9_.:-]{0,63}$").unwrap().is_match(name) {
        problems.push(format!("name {name:?}"));
    }
    let param = Regex::new(r"^[a-zA-Z_][a-zA-Z0-9_]{0,63}$").unwrap();
    let schema = &declaration["parameters"];
    if schema["type"] != "OBJECT" {
        problems.push("parameters must be an OBJECT".into());
    }
    for (at, map) in object_schemas(schema) {
        for key in map.keys() {
            if !GEMINI_KEYWORDS.contains(&key.as_str()) {
                problems.push(format!("{at}: keyword {key}"));
            }
        }
        let ty = map.get("type").and_then(Value::as_str);
        match map.get("type") {
            None if map.contains_key("anyOf") => {}
            Some(Value::String(t))
                if ["STRING", "NUMBER", "INTEGER", "BOOLEAN", "ARRAY", "OBJECT"].contains(&t.as_str()) => {}
            other => problems.push(format!("{at}: type {other:?}")),
        }
        if map.contains_key("enum") && (ty != Some("STRING") || map.get("format") != Some(&json!("enum"))) {
            problems.push(format!("{at}: enum outside a STRING with format enum"));
        }
        if let Some(Value::Array(values)) = map.get("enum")
            && !values.iter().all(Value::is_string)
        {
            problems.push(format!("{at}: non-string enum value"));
        }
        if let Some(f) = map.get("format").and_then(Value::as_str) {
            let ok = matches!(
                (ty.unwrap_or(""), f),
                ("STRING", "enum" | "date-time")
                    | ("NUMBER", "float" | "double")
                    | ("INTEGER", "int32" | "int64")
            );
            if !ok {
                problems.push(format!("{at}: format {f} on {ty:?}"));
            }
        }
        if ty == Some("OBJECT") {
            match map.get("properties").and_then(Value::as_object) {
                Some(props) if !props.is_empty() => {
                    for name in props.keys() {
                        if !param.is_match(name) {
                            problems.push(format!("{at}: property name {name:?}"));
                        }
                    }
                    for r in map.get("required").and_then(Value::as_array).into_iter().flatten() {
                        if !r.as_str().is_some_and(|r| props.contains_key(r)) {
                            problems.push(format!("{at}: required {r} is not a property"));
                        }
                    }
                }
                _ => problems.push(format!("{at}: OBJECT without properties")),
            }
        }
    }
    problems
}

#[test]
fn every_export_keeps_within_the_provider_limits() {
    for spec in all_specs() {
        for (provider, problems) in [
            ("mcp", check_mcp(&export::mcp(&spec))),
            ("openai", check_openai(&export::openai_strict(&spec))),
            ("anthropic", check_anthropic(&export::anthropic(&spec))),
            ("gemini", check_gemini(&export::gemini(&spec))),
        ] {
            assert!(problems.is_empty(), "{provider} export of {}:\n{}", spec.name, problems.join("\n"));
        }
    }
}

#[test]
fn the_checks_catch_what_they_claim_to() {
    // a raw route-table schema breaks every rule the exports exist for
    let spec = nutrition().spec().unwrap();
    let raw_openai = json!({"type": "function", "function": {"name": spec.name, "parameters": spec.input_schema, "strict": true}});
    let problems = check_openai(&raw_openai);
    assert!(problems.iter().any(|p| p.contains("keyword oneOf")), "{problems:?}");
    assert!(problems.iter().any(|p| p.contains("keyword $schema")), "{problems:?}");
    assert!(problems.iter().any(|p| p.contains("required must list every property")), "{problems:?}");
    let raw_anthropic = json!({"name": "a b", "description": "", "input_schema": spec.input_schema});
    let problems = check_anthropic(&raw_anthropic);
    assert!(
        problems.contains(&"top-level oneOf".to_string()) && problems.iter().any(|p| p.starts_with("name"))
    );
    let raw_gemini = json!({"name": "9x", "parameters": spec.input_schema});
    let problems = check_gemini(&raw_gemini);
    assert!(problems.iter().any(|p| p.contains("keyword $schema")), "{problems:?}");
    assert!(problems.iter().any(|p| p.contains("keyword const")), "{problems:?}");
    assert!(problems.iter().any(|p| p.contains("keyword additionalProperties")), "{problems:?}");
    assert!(problems.iter().any(|p| p.contains("format date")), "{problems:?}");
    let wide = json!({"type": "object", "properties": (0..5001).map(|i| (format!("p{i}"), json!({"type": "string"}))).collect::<Map<String, Value>>()});
    let tool = export::openai_strict(&ToolSpec::new("query_wide", "Wide.", wide));
    assert!(check_openai(&tool).iter().any(|p| p.starts_with("size")));
}

#[test]
fn route_table_exports() {
    let spec = nutrition().spec().unwrap();
    insta::assert_json_snapshot!("nutrition_mcp", export::mcp(&spec));
    insta::assert_json_snapshot!("nutrition_openai", export::openai_strict(&spec));
    insta::assert_json_snapshot!("nutrition_anthropic", export::anthropic(&spec));
    insta::assert_json_snapshot!("nutrition_gemini", export::gemini(&spec));
}

#[test]
fn typed_tool_exports() {
    let spec = &crate::typed::specs()[0];
    insta::assert_json_snapshot!("search_flights_mcp", export::mcp(spec));
    insta::assert_json_snapshot!("search_flights_openai", export::openai_strict(spec));
    insta::assert_json_snapshot!("search_flights_anthropic", export::anthropic(spec));
    insta::assert_json_snapshot!("search_flights_gemini", export::gemini(spec));
}

#[test]
fn mcp_annotations_follow_the_effect() {
    let read = export::mcp(&nutrition().spec().unwrap());
    assert_eq!(
        read["annotations"],
        json!({"readOnlyHint": true, "destructiveHint": false, "idempotentHint": true})
    );
    let write = export::mcp(&crate::measurements().spec().unwrap());
    assert_eq!(
        write["annotations"],
        json!({"readOnlyHint": false, "destructiveHint": true, "idempotentHint": true})
    );
    assert_eq!(write["inputSchema"], crate::measurements().schema(), "MCP gets the schema as is");
}

/// What a strict-mode model sends for a call is accepted by the strict schema,
/// and after `openai_unwrap` by the original one.
#[test]
fn strict_arguments_round_trip_through_unwrap() {
    let spec = nutrition().spec().unwrap();
    let strict = export::openai_strict_schema(&spec.input_schema);
    let original = Validator::new(&spec.input_schema).unwrap();
    let strict_v = Validator::new(&strict).unwrap();
    let sent = json!({WRAPPER: {"op": "list_meals", "date": "2026-07-15", "meal_type": null, "limit": 5}});
    assert!(strict_v.is_valid(&sent), "{:?}", strict_v.validate(&sent));
    let back = export::openai_unwrap(sent);
    assert_eq!(back, json!({"op": "list_meals", "date": "2026-07-15", "limit": 5}));
    assert!(original.is_valid(&back), "{:?}", original.validate(&back));
    // strict mode really requires the optional fields (as null)
    assert!(!strict_v.is_valid(&json!({WRAPPER: {"op": "list_meals", "date": "2026-07-15"}})));

    // a typed tool is not wrapped; its nullable optionals unwrap the same way
    let spec = &crate::typed::specs()[0];
    let strict = Validator::new(&export::openai_strict_schema(&spec.input_schema)).unwrap();
    let sent = json!({"origin": "OSL", "destination": "CDG", "date": "2026-07-15", "cabin": null, "limit": null,
                      "passengers": [{"age": 30, "assistance": false}]});
    assert!(strict.is_valid(&sent), "{:?}", strict.validate(&sent));
    let back = export::openai_unwrap(sent);
    assert!(Validator::new(&spec.input_schema).unwrap().is_valid(&back));
}

#[test]
fn anthropic_and_gemini_wrap_the_union_and_unwrap_restores_it() {
    let spec = nutrition().spec().unwrap();
    let anthropic = export::anthropic(&spec);
    let inner = &anthropic["input_schema"]["properties"][WRAPPER];
    assert_eq!(inner["anyOf"], spec.input_schema["oneOf"], "the branches travel unchanged");
    let wrapped = Validator::new(&anthropic["input_schema"]).unwrap();
    let call = json!({"op": "get_daily_summary", "date": "2026-07-15"});
    assert!(wrapped.is_valid(&json!({WRAPPER: call.clone()})));
    assert_eq!(export::unwrap(json!({WRAPPER: call.clone()})), call);

    let gemini = export::gemini(&spec);
    let op = &gemini["parameters"]["properties"][WRAPPER]["anyOf"][0]["properties"]["op"];
    assert_eq!(
        op,
        &json!({"type": "STRING", "description": "Calories and macros eaten on one day", "format": "enum", "enum": ["get_daily_summary"]})
    );
    assert!(export::needs_wrapper(&spec.input_schema));
    assert!(!export::needs_wrapper(&crate::typed::specs()[0].input_schema));
    // a lone `request` property is wrapped too, so unwrap is never ambiguous
    let lone = json!({"type": "object", "properties": {WRAPPER: {"type": "object", "properties": {"a": {"type": "string"}}}}});
    assert!(export::needs_wrapper(&lone));
}
