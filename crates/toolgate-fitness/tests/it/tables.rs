//! The route tables against the API they describe: every route of the tables exists on
//! fitness-api with the same method, path and fields (name, type, format, required, limits,
//! nested items), and the API has no route the tables miss.

use std::collections::BTreeMap;

use reqwest::Method as HttpMethod;
use serde_json::{Value, json};
use toolgate_core::Effect;
use toolgate_schema::{Field, FieldType, Items, Method, RouteTable, Validator, path_variables};

/// What must agree about one field, in a form both sides can be brought to.
#[derive(Debug, Clone, PartialEq)]
struct Shape {
    ty: String,
    format: Option<String>,
    required: bool,
    limits: BTreeMap<&'static str, f64>,
    items: Option<Box<Shape>>,
    fields: BTreeMap<String, Shape>,
}

const LIMITS: [(&str, &str); 6] = [
    ("minimum", "minimum"),
    ("maximum", "maximum"),
    ("minLength", "min_length"),
    ("maxLength", "max_length"),
    ("minItems", "min_items"),
    ("maxItems", "max_items"),
];

/// An API (schemars) property: `type` without `null`, `$ref`s resolved against the root's `$defs`.
fn api_shape(prop: &Value, required: bool, root: &Value) -> Shape {
    let prop = match prop["$ref"].as_str() {
        Some(r) => &root["$defs"][r.rsplit('/').next().unwrap()],
        None => prop,
    };
    let ty = match &prop["type"] {
        Value::String(t) => t.clone(),
        Value::Array(ts) => {
            let ts: Vec<&str> = ts.iter().filter_map(Value::as_str).filter(|t| *t != "null").collect();
            assert_eq!(ts.len(), 1, "one type besides null: {prop}");
            ts[0].to_owned()
        }
        other => panic!("no type in {other}"),
    };
    let limits = LIMITS.iter().filter_map(|(k, _)| prop[*k].as_f64().map(|v| (*k, v))).collect();
    let items = (ty == "array").then(|| Box::new(api_shape(&prop["items"], false, root)));
    Shape {
        ty,
        format: prop["format"].as_str().map(str::to_owned),
        required,
        limits,
        items,
        fields: api_fields(prop, root),
    }
}

fn api_fields(schema: &Value, root: &Value) -> BTreeMap<String, Shape> {
    let required: Vec<&str> = schema["required"]
        .as_array()
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let Some(props) = schema["properties"].as_object() else { return BTreeMap::new() };
    props
        .iter()
        .map(|(name, p)| (name.clone(), api_shape(p, required.contains(&name.as_str()), root)))
        .collect()
}

fn ty_name(ty: FieldType) -> String {
    ty.as_str().to_owned()
}

fn limits(values: [Option<f64>; 6]) -> BTreeMap<&'static str, f64> {
    LIMITS.iter().zip(values).filter_map(|((k, _), v)| v.map(|v| (*k, v))).collect()
}

fn table_field(f: &Field) -> Shape {
    Shape { required: f.required, ..table_items(&f.shape) }
}

fn table_items(i: &Items) -> Shape {
    Shape {
        ty: ty_name(i.ty),
        format: i.format.clone(),
        required: false,
        limits: limits([
            i.minimum,
            i.maximum,
            i.min_length.map(|n| n as f64),
            i.max_length.map(|n| n as f64),
            i.min_items.map(|n| n as f64),
            i.max_items.map(|n| n as f64),
        ]),
        items: i.items.as_deref().map(|i| Box::new(table_items(i))),
        fields: i.fields.iter().map(|f| (f.name.clone(), table_field(f))).collect(),
    }
}

fn http_method(m: Method) -> HttpMethod {
    HttpMethod::from_bytes(m.as_str().as_bytes()).unwrap()
}

#[test]
fn every_table_route_is_an_api_route_with_the_same_fields_and_no_api_route_is_missing() {
    let specs = toolgate_fitness_api::route_specs();
    let tables = toolgate_fitness::tables().unwrap();
    let mut covered = vec![false; specs.len()];
    let mut problems = Vec::new();
    for table in &tables {
        for route in &table.routes {
            let at = format!("{} op {} ({} {})", table.tool, route.op, route.method, route.path);
            let found =
                specs.iter().position(|s| s.method == http_method(route.method) && s.path == route.path);
            let Some(i) = found else {
                problems.push(format!("{at}: the API has no such route"));
                continue;
            };
            if covered[i] {
                problems.push(format!("{at}: the route is served by two operations"));
            }
            covered[i] = true;
            let spec = &specs[i];
            let vars = path_variables(&route.path);
            // Path variables are declared, required and scalar; the rest is the query or the body.
            for var in &vars {
                match route.fields.iter().find(|f| f.name == *var) {
                    Some(f) if f.required && !matches!(f.ty, FieldType::Array | FieldType::Object) => {}
                    _ => problems
                        .push(format!("{at}: path variable `{var}` must be declared required and scalar")),
                }
            }
            let ours: BTreeMap<String, Shape> = route
                .fields
                .iter()
                .filter(|f| !vars.contains(&f.name))
                .map(|f| (f.name.clone(), table_field(f)))
                .collect();
            let api_schema = match route.method {
                Method::Get => spec.query.as_ref(),
                _ => spec.body.as_ref(),
            };
            if route.method == Method::Delete && spec.query.is_some() {
                problems.push(format!(
                    "{at}: the API takes a query on DELETE; the executor sends the fields as one"
                ));
            }
            let theirs = api_schema.map(|s| api_fields(s, s)).unwrap_or_default();
            if ours != theirs {
                problems.push(format!("{at}: fields differ\n  table: {ours:?}\n  api:   {theirs:?}"));
            }
        }
    }
    for (spec, covered) in specs.iter().zip(&covered) {
        if !covered {
            problems.push(format!("the API route {} {} is in no route table", spec.method, spec.path));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn read_tools_hold_only_gets_and_write_tools_only_writes() {
    let tables = toolgate_fitness::tables().unwrap();
    let names: Vec<&str> = tables.iter().map(|t| t.tool.as_str()).collect();
    assert_eq!(
        names,
        [
            "query_body_data",
            "update_body_data",
            "query_nutrition",
            "update_nutrition",
            "query_training",
            "update_training"
        ]
    );
    for table in &tables {
        let reads = table.tool.starts_with("query_");
        for route in &table.routes {
            assert_eq!(route.method == Method::Get, reads, "{} {}", table.tool, route.op);
        }
        assert!(toolgate_fitness::DOMAINS.contains(&table.domain.as_str()), "{}", table.domain);
        let effect = table.effect().unwrap();
        let expected = if reads {
            Effect::Read
        } else {
            Effect::Write {
                idempotent: table.routes.iter().all(|r| matches!(r.method, Method::Put | Method::Delete)),
            }
        };
        assert_eq!(effect, expected, "{}", table.tool);
    }
    let effects: BTreeMap<String, Effect> =
        tables.iter().map(|t| (t.tool.clone(), t.effect().unwrap())).collect();
    assert_eq!(effects["update_body_data"], Effect::Write { idempotent: true });
    assert_eq!(effects["update_nutrition"], Effect::Write { idempotent: false });
    assert_eq!(effects["update_training"], Effect::Write { idempotent: false });
}

#[test]
fn tables_parse_from_the_shipped_files_and_match_the_embedded_text() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("routes");
    let mut on_disk: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    on_disk.sort();
    let mut embedded: Vec<String> =
        toolgate_fitness::ROUTE_FILES.iter().map(|(n, _)| format!("{n}.toml")).collect();
    embedded.sort();
    assert_eq!(on_disk, embedded, "every file in routes/ is embedded, and only those");
    for (name, text) in toolgate_fitness::ROUTE_FILES {
        let loaded = RouteTable::load(dir.join(format!("{name}.toml"))).unwrap();
        assert_eq!(loaded, RouteTable::from_toml_str(text).unwrap());
        assert_eq!(loaded.tool, name);
    }
}

#[test]
fn specs_are_complete_and_examples_pass_their_own_schema() {
    let tools =
        toolgate_fitness::tools("http://127.0.0.1:9", toolgate_fitness::HttpOptions::default()).unwrap();
    assert_eq!(
        tools.len(),
        6 + usize::from(cfg!(feature = "charts")),
        "six route tables and render_weight_chart"
    );
    for tool in &tools {
        let spec = tool.spec();
        spec.check().unwrap();
        assert_eq!(spec.required_role, "member");
        assert!(spec.description.contains("Example: {"), "{} has no example in its description", spec.name);
        assert!(
            spec.timeout > std::time::Duration::from_secs(10),
            "the gateway waits a bit longer than the executor"
        );
        let validator = Validator::new(&spec.input_schema).unwrap();
        assert!(!spec.examples.is_empty(), "{}", spec.name);
        for example in &spec.examples {
            validator.validate(&example.parameters).unwrap_or_else(|e| panic!("{}: {e:?}", spec.name));
        }
        // The example in the description is valid too.
        let text = spec.description.rsplit("Example: ").next().unwrap().trim_end_matches('.');
        let params: Value = serde_json::from_str(text).unwrap();
        validator.validate(&params).unwrap_or_else(|e| panic!("{}: {e:?}", spec.name));
        // Every operation has an example (route tables; the chart has no `op`).
        let ops: Vec<&str> = spec.input_schema["oneOf"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|b| b["properties"]["op"]["const"].as_str().unwrap())
            .collect();
        for op in ops {
            assert!(spec.examples.iter().any(|e| e.parameters["op"] == json!(op)), "{} {op}", spec.name);
        }
    }
}

#[test]
fn a_bad_base_url_is_refused_when_the_tools_are_built() {
    for url in ["not a url", "ftp://h", "http://u:p@h", "http://h/?q=1"] {
        let Err(err) = toolgate_fitness::tools(url, toolgate_fitness::HttpOptions::default()) else {
            panic!("{url} accepted")
        };
        assert!(matches!(err, toolgate_fitness::Error::BaseUrl { .. }), "{url}: {err}");
    }
    let Err(err) = toolgate_fitness::tools("http://user:secret@h", toolgate_fitness::HttpOptions::default())
    else {
        panic!()
    };
    assert!(!err.to_string().contains("secret"), "{err}");
    assert!(err.to_string().contains("credentials"), "{err}");
}
