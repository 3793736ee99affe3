//! Swagger 2.0 to OpenAPI 3.0, as the 3.0 specification's own mapping has it, so that a 2.0
//! document is imported like any other: `host` + `basePath` + `schemes` become `servers`;
//! `definitions`, `securityDefinitions` and `responses` become `components`; a `body`
//! parameter becomes the `requestBody` in every type the operation `consumes` (JSON when it
//! says none); `formData` parameters become one form or (with a `file`, or when the operation
//! consumes it) `multipart/form-data` body; `type: file` is `string` + `format: binary`; a
//! query, path or header parameter's type moves into its `schema`, its `collectionFormat`
//! into `style`/`explode`; `produces` becomes each response's `content`; `x-nullable` is
//! `nullable`, a string `discriminator` its `propertyName`. Every `$ref` is rewritten to where
//! its target now lives, and a parameter reference (`#/parameters/...`) is inlined (a body or
//! form one changes shape).
//!
//! Nothing is fetched; what cannot be mapped (a `tsv` collection, a `$ref` to a parameter that
//! does not exist) is left for the importer to report on that operation.

use serde_json::{Map, Value, json};

/// The keywords of a 2.0 non-body parameter that describe its value: they move into `schema`.
const VALUE_KEYWORDS: [&str; 16] = [
    "type",
    "format",
    "items",
    "enum",
    "default",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "minLength",
    "maxLength",
    "pattern",
    "minItems",
    "maxItems",
    "uniqueItems",
    "multipleOf",
];

const METHODS: [&str; 7] = ["get", "put", "post", "delete", "options", "head", "patch"];

/// Whether `doc` is a Swagger 2.0 document.
pub(crate) fn is_swagger2(doc: &Value) -> bool {
    doc.get("swagger").and_then(Value::as_str) == Some("2.0")
}

/// The OpenAPI 3.0 document equivalent to the Swagger 2.0 `doc`.
pub(crate) fn convert(doc: &Value) -> Value {
    let mut out = Map::new();
    out.insert("openapi".into(), json!("3.0.3"));
    for key in ["info", "tags", "externalDocs", "security"] {
        if let Some(v) = doc.get(key) {
            out.insert(key.into(), refs(v));
        }
    }
    if let Some(server) = server(doc) {
        out.insert("servers".into(), json!([{ "url": server }]));
    }
    let mut components = Map::new();
    if let Some(defs) = doc.get("definitions").and_then(Value::as_object) {
        let schemas = defs.iter().map(|(k, v)| (k.clone(), schema(v))).collect();
        components.insert("schemas".into(), Value::Object(schemas));
    }
    if let Some(defs) = doc.get("securityDefinitions").and_then(Value::as_object) {
        let schemes = defs.iter().map(|(k, v)| (k.clone(), security_scheme(v))).collect();
        components.insert("securitySchemes".into(), Value::Object(schemes));
    }
    let produces = strings(doc.get("produces"));
    if let Some(responses) = doc.get("responses").and_then(Value::as_object) {
        let converted = responses.iter().map(|(k, v)| (k.clone(), response(v, &produces))).collect();
        components.insert("responses".into(), Value::Object(converted));
    }
    if !components.is_empty() {
        out.insert("components".into(), Value::Object(components));
    }
    let mut paths = Map::new();
    for (path, item) in doc.get("paths").and_then(Value::as_object).into_iter().flatten() {
        paths.insert(path.clone(), path_item(doc, item));
    }
    out.insert("paths".into(), Value::Object(paths));
    Value::Object(out)
}

/// `scheme://host/basePath`: `https` when the document lists it (or lists none), else its first
/// scheme; only `basePath` (relative) without a `host`.
fn server(doc: &Value) -> Option<String> {
    let base = doc.get("basePath").and_then(Value::as_str).unwrap_or("").trim_end_matches('/');
    let Some(host) = doc.get("host").and_then(Value::as_str) else {
        return (!base.is_empty()).then(|| base.to_owned());
    };
    let schemes = strings(doc.get("schemes"));
    let scheme = if schemes.is_empty() || schemes.iter().any(|s| s == "https") {
        "https"
    } else {
        schemes[0].as_str()
    };
    Some(format!("{scheme}://{host}{base}"))
}

fn strings(value: Option<&Value>) -> Vec<String> {
    value
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).map(str::to_owned).collect())
        .unwrap_or_default()
}

/// A 2.0 reference rewritten to the 3.0 place of its target.
fn reference(r: &str) -> String {
    for (from, to) in [
        ("#/definitions/", "#/components/schemas/"),
        ("#/responses/", "#/components/responses/"),
        ("#/securityDefinitions/", "#/components/securitySchemes/"),
    ] {
        if let Some(rest) = r.strip_prefix(from) {
            return format!("{to}{rest}");
        }
    }
    r.to_owned()
}

/// `value` with every `$ref` rewritten.
fn refs(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| match (k.as_str(), v) {
                    ("$ref", Value::String(r)) => (k.clone(), Value::String(reference(r))),
                    _ => (k.clone(), refs(v)),
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(refs).collect()),
        other => other.clone(),
    }
}

/// A 2.0 schema as 3.0 reads it: references rewritten, `type: file` a binary string,
/// `x-nullable` as `nullable`, a string `discriminator` as its `propertyName`.
fn schema(value: &Value) -> Value {
    let Value::Object(map) = value else { return refs(value) };
    let mut out = Map::new();
    for (key, v) in map {
        let converted = match key.as_str() {
            "$ref" => Value::String(v.as_str().map(reference).unwrap_or_default()),
            "type" if v == "file" => {
                out.insert("format".into(), json!("binary"));
                json!("string")
            }
            "x-nullable" => {
                out.insert("nullable".into(), v.clone());
                continue;
            }
            "discriminator" if v.is_string() => json!({ "propertyName": v }),
            "properties" | "definitions" | "patternProperties" => match v {
                Value::Object(props) => {
                    Value::Object(props.iter().map(|(k, s)| (k.clone(), schema(s))).collect())
                }
                other => refs(other),
            },
            "items" | "additionalProperties" | "not" => schema(v),
            "allOf" | "anyOf" | "oneOf" => match v {
                Value::Array(parts) => Value::Array(parts.iter().map(schema).collect()),
                other => refs(other),
            },
            _ => refs(v),
        };
        if key == "format" && out.contains_key("format") {
            continue;
        }
        out.insert(key.clone(), converted);
    }
    Value::Object(out)
}

fn security_scheme(value: &Value) -> Value {
    let text = |k: &str| value.get(k).and_then(Value::as_str).unwrap_or_default();
    let description = value.get("description").cloned();
    let mut out = match text("type") {
        "basic" => json!({ "type": "http", "scheme": "basic" }),
        "apiKey" => json!({ "type": "apiKey", "name": text("name"), "in": text("in") }),
        "oauth2" => {
            let flow = match text("flow") {
                "implicit" => "implicit",
                "password" => "password",
                "application" => "clientCredentials",
                _ => "authorizationCode",
            };
            let mut body = Map::new();
            for key in ["authorizationUrl", "tokenUrl"] {
                if let Some(url) = value.get(key) {
                    body.insert(key.into(), url.clone());
                }
            }
            body.insert("scopes".into(), value.get("scopes").cloned().unwrap_or_else(|| json!({})));
            json!({ "type": "oauth2", "flows": { flow: body } })
        }
        _ => refs(value),
    };
    if let (Some(d), Some(map)) = (description, out.as_object_mut()) {
        map.insert("description".into(), d);
    }
    out
}

fn response(value: &Value, produces: &[String]) -> Value {
    if let Some(r) = value.get("$ref").and_then(Value::as_str) {
        return json!({ "$ref": reference(r) });
    }
    let mut out = Map::new();
    out.insert("description".into(), value.get("description").cloned().unwrap_or_else(|| json!("")));
    if let Some(s) = value.get("schema") {
        let media: Vec<&str> = if produces.is_empty() {
            vec!["application/json"]
        } else {
            produces.iter().map(String::as_str).collect()
        };
        let content: Map<String, Value> =
            media.into_iter().map(|m| (m.to_owned(), json!({ "schema": schema(s) }))).collect();
        out.insert("content".into(), Value::Object(content));
    }
    if let Some(headers) = value.get("headers").and_then(Value::as_object) {
        let converted = headers
            .iter()
            .map(|(k, h)| {
                let mut header = Map::new();
                if let Some(d) = h.get("description") {
                    header.insert("description".into(), d.clone());
                }
                header.insert("schema".into(), value_schema(h));
                (k.clone(), Value::Object(header))
            })
            .collect();
        out.insert("headers".into(), Value::Object(converted));
    }
    Value::Object(out)
}

/// The `schema` of a 2.0 non-body parameter (or header): its value keywords.
fn value_schema(param: &Value) -> Value {
    let mut out = Map::new();
    for key in VALUE_KEYWORDS {
        if let Some(v) = param.get(key) {
            out.insert(key.into(), v.clone());
        }
    }
    if param.get("x-nullable") == Some(&Value::Bool(true)) {
        out.insert("nullable".into(), json!(true));
    }
    schema(&Value::Object(out))
}

/// A parameter with a `$ref` to `#/parameters/...` replaced by its target.
fn resolved<'a>(doc: &'a Value, param: &'a Value) -> &'a Value {
    match param.get("$ref").and_then(Value::as_str).and_then(|r| r.strip_prefix("#/parameters/")) {
        Some(name) => doc.pointer(&format!("/parameters/{}", pointer_escape(name))).unwrap_or(param),
        None => param,
    }
}

fn pointer_escape(name: &str) -> String {
    name.replace('~', "~0").replace('/', "~1")
}

fn path_item(doc: &Value, item: &Value) -> Value {
    let mut out = Map::new();
    let shared: Vec<&Value> = item
        .get("parameters")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|p| resolved(doc, p))
        .collect();
    for method in METHODS {
        if let Some(op) = item.get(method) {
            out.insert(method.into(), operation(doc, op, &shared));
        }
    }
    for key in ["summary", "description"] {
        if let Some(v) = item.get(key) {
            out.insert(key.into(), v.clone());
        }
    }
    Value::Object(out)
}

fn operation(doc: &Value, op: &Value, shared: &[&Value]) -> Value {
    let mut out = Map::new();
    for key in ["tags", "summary", "description", "operationId", "deprecated", "security", "externalDocs"] {
        if let Some(v) = op.get(key) {
            out.insert(key.into(), refs(v));
        }
    }
    let consumes = match op.get("consumes") {
        Some(c) => strings(Some(c)),
        None => strings(doc.get("consumes")),
    };
    let produces = match op.get("produces") {
        Some(p) => strings(Some(p)),
        None => strings(doc.get("produces")),
    };
    // The operation's parameters override the path's of the same name and location.
    let own: Vec<&Value> = op
        .get("parameters")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|p| resolved(doc, p))
        .collect();
    let key = |p: &Value| (p.get("name").cloned(), p.get("in").cloned());
    let mut params: Vec<&Value> =
        shared.iter().copied().filter(|s| !own.iter().any(|o| key(o) == key(s))).collect();
    params.extend(own);
    let mut parameters = Vec::new();
    let mut form = Map::new();
    let mut form_required = Vec::new();
    let mut has_file = false;
    for p in params {
        match p.get("in").and_then(Value::as_str) {
            Some("body") => {
                let media: Vec<&str> =
                    match consumes.iter().filter(|c| !c.contains("form")).collect::<Vec<_>>() {
                        types if types.is_empty() => vec!["application/json"],
                        types => types.into_iter().map(String::as_str).collect(),
                    };
                let schema = p.get("schema").map(schema).unwrap_or_else(|| json!({}));
                let content: Map<String, Value> =
                    media.into_iter().map(|m| (m.to_owned(), json!({ "schema": schema }))).collect();
                let mut body = json!({ "content": content, "required": p.get("required").cloned().unwrap_or(json!(false)) });
                if let Some(d) = p.get("description") {
                    body["description"] = d.clone();
                }
                out.insert("requestBody".into(), body);
            }
            Some("formData") => {
                let name = p.get("name").and_then(Value::as_str).unwrap_or_default().to_owned();
                has_file |= p.get("type") == Some(&json!("file"));
                let mut s = value_schema(p);
                if let (Some(d), Some(map)) = (p.get("description"), s.as_object_mut()) {
                    map.insert("description".into(), d.clone());
                }
                if p.get("required") == Some(&Value::Bool(true)) {
                    form_required.push(json!(name));
                }
                form.insert(name, s);
            }
            Some(location) => parameters.push(parameter(p, location)),
            None => parameters.push(refs(p)),
        }
    }
    if !form.is_empty() {
        let media = if has_file || consumes.iter().any(|c| c.starts_with("multipart/form-data")) {
            "multipart/form-data"
        } else {
            "application/x-www-form-urlencoded"
        };
        let mut schema = json!({ "type": "object", "properties": form });
        if !form_required.is_empty() {
            schema["required"] = Value::Array(form_required.clone());
        }
        out.insert(
            "requestBody".into(),
            json!({ "required": !form_required.is_empty(), "content": { media: { "schema": schema } } }),
        );
    }
    if !parameters.is_empty() {
        out.insert("parameters".into(), Value::Array(parameters));
    }
    let responses: Map<String, Value> = op
        .get("responses")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .map(|(code, r)| (code.clone(), response(r, &produces)))
        .collect();
    out.insert("responses".into(), Value::Object(responses));
    Value::Object(out)
}

/// A query, path or header parameter: its value keywords in `schema`, its
/// `collectionFormat` (default `csv`) as `style` and `explode`.
fn parameter(p: &Value, location: &str) -> Value {
    let mut out = Map::new();
    for key in ["name", "in", "description", "required", "deprecated", "allowEmptyValue"] {
        if let Some(v) = p.get(key) {
            out.insert(key.into(), v.clone());
        }
    }
    out.insert("in".into(), json!(location));
    out.insert("schema".into(), value_schema(p));
    if p.get("type") == Some(&json!("array")) {
        let (style, explode) = match p.get("collectionFormat").and_then(Value::as_str).unwrap_or("csv") {
            "multi" => ("form", true),
            "ssv" => ("spaceDelimited", false),
            "pipes" => ("pipeDelimited", false),
            "tsv" => ("x-tsv", false),
            _ if location == "query" => ("form", false),
            _ => ("simple", false),
        };
        out.insert("style".into(), json!(style));
        out.insert("explode".into(), json!(explode));
    }
    Value::Object(out)
}
