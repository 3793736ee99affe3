//! The OpenAPI 3.1 document of the API, generated from the one route table (`route_specs`):
//! operation ids, tags, path parameters, the query and body schemas (their `$defs` moved to
//! `components/schemas`), bearer security. Served at `GET /openapi.json`; importing it with
//! `toolgate import openapi` gives the fitness route tables back (a test holds that).

use serde_json::{Map, Value, json};

use crate::routes::route_specs;

/// The schema of each path variable, as the handlers parse it.
fn path_parameter(name: &str) -> Value {
    match name {
        "date" => json!({"type": "string", "format": "date", "description": "The day, YYYY-MM-DD."}),
        "meal_id" => json!({"type": "integer", "minimum": 1, "description": "The meal's id."}),
        "workout_id" => json!({"type": "integer", "minimum": 1, "description": "The workout's id."}),
        other => json!({"type": "string", "description": format!("Path parameter `{other}`.")}),
    }
}

/// Moves a schemars schema's `$defs` into `schemas` and points its `$ref`s there.
fn componentize(mut schema: Value, schemas: &mut Map<String, Value>) -> Value {
    fn rewrite(v: &mut Value) {
        match v {
            Value::Object(map) => {
                if let Some(Value::String(r)) = map.get_mut("$ref")
                    && let Some(name) = r.strip_prefix("#/$defs/")
                {
                    *r = format!("#/components/schemas/{name}");
                }
                map.values_mut().for_each(rewrite);
            }
            Value::Array(items) => items.iter_mut().for_each(rewrite),
            _ => {}
        }
    }
    if let Some(Value::Object(defs)) = schema.as_object_mut().and_then(|m| m.remove("$defs")) {
        for (name, mut def) in defs {
            rewrite(&mut def);
            schemas.insert(name, def);
        }
    }
    if let Some(map) = schema.as_object_mut() {
        map.remove("$schema");
    }
    rewrite(&mut schema);
    schema
}

/// The OpenAPI 3.1 document of every route.
pub fn openapi() -> Value {
    let mut paths = Map::new();
    let mut schemas = Map::new();
    for spec in route_specs() {
        let mut parameters: Vec<Value> = Vec::new();
        for var in spec.path.split('/').filter_map(|s| s.strip_prefix('{')?.strip_suffix('}')) {
            parameters
                .push(json!({"name": var, "in": "path", "required": true, "schema": path_parameter(var)}));
        }
        if let Some(query) = &spec.query {
            let required: Vec<&str> = query["required"]
                .as_array()
                .map(|r| r.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            for (name, schema) in query["properties"].as_object().into_iter().flatten() {
                parameters.push(json!({
                    "name": name, "in": "query", "required": required.contains(&name.as_str()), "schema": schema,
                }));
            }
        }
        let mut operation = json!({
            "operationId": spec.operation_id,
            "tags": [spec.tag],
            "summary": spec.summary,
            "parameters": parameters,
            "responses": {
                "200": {"description": "The record(s) as JSON."},
                "default": {"description": "An error: {\"error\": {\"code\", \"message\", \"fields\"}}."}
            },
        });
        if let Some(body) = &spec.body {
            let schema = componentize(body.clone(), &mut schemas);
            operation["requestBody"] =
                json!({"required": true, "content": {"application/json": {"schema": schema}}});
        }
        let item = paths.entry(spec.path.to_owned()).or_insert_with(|| json!({}));
        item[spec.method.as_str().to_ascii_lowercase()] = operation;
    }
    json!({
        "openapi": "3.1.0",
        "info": {"title": "Fitness API", "version": env!("CARGO_PKG_VERSION"),
                 "description": "Body measurements, nutrition and training of the token's user."},
        "security": [{"bearer": []}],
        "paths": paths,
        "components": {
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
            "schemas": schemas,
        },
    })
}
