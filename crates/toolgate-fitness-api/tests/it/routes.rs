//! The published route list: what `routes()` and `route_specs()` say, checked field by field so
//! that a change to a request type shows up here (and in the route tables of crates/toolgate-fitness).

use serde_json::Value;

/// `name:type` for each property of an object schema (sorted by name), `!` after required ones, nested item
/// objects in brackets.
fn fields(schema: &Value, root: &Value) -> String {
    let required: Vec<&str> = schema["required"]
        .as_array()
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let Some(props) = schema["properties"].as_object() else { return String::new() };
    let mut out = Vec::new();
    let mut props: Vec<_> = props.iter().collect();
    props.sort_by_key(|(name, _)| name.as_str());
    for (name, prop) in props {
        let mut ty = match &prop["type"] {
            Value::String(t) => t.clone(),
            Value::Array(ts) => {
                ts.iter().filter_map(Value::as_str).filter(|t| *t != "null").collect::<Vec<_>>().join("|")
            }
            _ => "?".into(),
        };
        if let Some(format) = prop["format"].as_str() {
            ty = format!("{ty}({format})");
        }
        if ty == "array" {
            let items = &prop["items"];
            let items = match items["$ref"].as_str() {
                Some(r) => &root["$defs"][r.rsplit('/').next().unwrap()],
                None => items,
            };
            ty = format!("array[{}]", fields(items, root));
        }
        let bang = if required.contains(&name.as_str()) { "!" } else { "" };
        out.push(format!("{name}{bang}:{ty}"));
    }
    out.join(" ")
}

fn describe() -> String {
    let mut lines = Vec::new();
    for spec in toolgate_fitness_api::route_specs() {
        let mut line = format!("{} {}", spec.method, spec.path);
        if let Some(q) = &spec.query {
            line.push_str(&format!("  ?{}", fields(q, q)));
        }
        if let Some(b) = &spec.body {
            line.push_str(&format!("  {{{}}}", fields(b, b)));
        }
        lines.push(line);
    }
    lines.join("\n")
}

#[test]
fn route_list_is_as_published() {
    let expected = "\
GET /body/measurements  ?from:string(date) to:string(date)
GET /body/measurements/{date}
PUT /body/measurements/{date}  {body_fat_pct:number note:string waist_cm:number weight_kg:number}
DELETE /body/measurements/{date}
GET /nutrition/days/{date}/meals
POST /nutrition/days/{date}/meals  {items!:array[carbs_g:number fat_g:number grams!:number kcal!:number name!:string protein_g:number] name!:string}
GET /nutrition/days/{date}/summary
PUT /nutrition/goals  {carbs_g:number fat_g:number kcal:number protein_g:number}
DELETE /nutrition/meals/{meal_id}
GET /training/workouts  ?from:string(date) to:string(date)
GET /training/workouts/{workout_id}
POST /training/workouts  {date!:string(date) duration_min:integer name!:string notes:string sets:array[exercise!:string reps!:integer weight_kg:number]}
PATCH /training/workouts/{workout_id}  {date:string(date) duration_min:integer name:string notes:string}
DELETE /training/workouts/{workout_id}
POST /training/workouts/{workout_id}/sets  {exercise!:string reps!:integer weight_kg:number}";
    let got = describe();
    assert_eq!(got, expected, "\n{got}\n");
}

#[test]
fn routes_and_specs_agree() {
    let from_specs: Vec<_> =
        toolgate_fitness_api::route_specs().into_iter().map(|s| (s.method, s.path)).collect();
    assert_eq!(toolgate_fitness_api::routes(), from_specs);
}

#[test]
fn every_body_schema_is_closed_and_described() {
    for spec in toolgate_fitness_api::route_specs() {
        for schema in spec.body.iter().chain(&spec.query) {
            assert_eq!(schema["additionalProperties"], false, "{} {}", spec.method, spec.path);
            for (name, prop) in schema["properties"].as_object().unwrap() {
                assert!(prop["description"].as_str().is_some_and(|d| !d.is_empty()), "{} {name}", spec.path);
            }
        }
    }
}
