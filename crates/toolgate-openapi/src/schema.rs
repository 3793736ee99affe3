//! JSON Schemas of an OpenAPI document to route-table fields: `$ref`s followed, `allOf`
//! merged, then each property mapped to a [`Field`] (or refused with the reason).

use serde_json::{Map, Value};
use toolgate_schema::{Field, FieldType, Items};

/// Deepest nesting mapped: a schema that goes on below this many levels (or contains itself,
/// a tree of nodes) is cut there to a free-form value, said in its description.
pub(crate) const MAX_DEPTH: usize = 16;

/// Most schema nodes one parameter or body is expanded to; the rest is cut the same way (a
/// document whose references fan out would otherwise grow without bound).
const MAX_NODES: usize = 20_000;

/// The schema with every local `$ref` replaced by its target and every `allOf` merged into
/// one object schema, recursively through `properties`, `items`, `additionalProperties` and
/// the branches of `oneOf`/`anyOf`; cut to a free-form value where it nests deeper than
/// [`MAX_DEPTH`], repeats a schema it is inside of, or grows beyond [`MAX_NODES`].
pub(crate) fn flatten(root: &Value, schema: &Value, depth: usize) -> Result<Value, String> {
    Flat { root, inside: Vec::new(), nodes: 0 }.node(schema, depth)
}

struct Flat<'a> {
    root: &'a Value,
    /// The `$ref`s being expanded, outermost first.
    inside: Vec<String>,
    nodes: usize,
}

/// What a cut schema's description says: why it was cut, and that toolgate takes `what`
/// (`any JSON object`, `any value`) there as given. The importer's depth cut and the budget's
/// ([`crate::budget`]) say it alike.
pub(crate) fn cut_note(why: &str, what: &str) -> String {
    format!(
        "(Cut: {why}; toolgate takes {what} here as given, so follow the API's documentation for its members.)"
    )
}

/// A description with a cut's note after it (the note alone where there was none).
pub(crate) fn with_note(description: Option<&str>, note: String) -> String {
    match description.map(str::trim) {
        Some(d) if !d.is_empty() => format!("{d} {note}"),
        _ => note,
    }
}

/// What a schema cut at `at` becomes: any JSON object (any value at all when it is not an
/// object), its description saying why.
fn cut(target: &Value, why: &str) -> Value {
    let object = target.get("type").is_none_or(|t| t == "object") || target.get("properties").is_some();
    let note = cut_note(why, if object { "any JSON object" } else { "any value" });
    let description = with_note(target.get("description").and_then(Value::as_str), note);
    let mut out = Map::new();
    if object {
        out.insert("type".into(), "object".into());
        out.insert("additionalProperties".into(), true.into());
    }
    out.insert("description".into(), description.into());
    if target.get("nullable") == Some(&Value::Bool(true)) {
        out.insert("nullable".into(), true.into());
    }
    Value::Object(out)
}

impl Flat<'_> {
    fn node(&mut self, schema: &Value, depth: usize) -> Result<Value, String> {
        let Some(map) = schema.as_object() else { return Ok(schema.clone()) };
        self.nodes += 1;
        if depth > MAX_DEPTH {
            return Ok(cut(schema, &format!("the document's schema nests deeper than {MAX_DEPTH} levels")));
        }
        if self.nodes > MAX_NODES {
            return Ok(cut(schema, &format!("the document's schema has more than {MAX_NODES} parts")));
        }
        let mut out = Map::new();
        if let Some(reference) = map.get("$ref").and_then(Value::as_str) {
            let target = follow(self.root, reference)?;
            if self.inside.iter().any(|r| r == reference) {
                let name = reference.rsplit('/').next().unwrap_or(reference);
                return Ok(cut(target, &format!("`{name}` contains itself")));
            }
            self.inside.push(reference.to_owned());
            let resolved = self.node(target, depth + 1);
            self.inside.pop();
            if let Value::Object(resolved) = resolved? {
                out = resolved;
            }
        }
        if let Some(parts) = map.get("allOf").and_then(Value::as_array) {
            for part in parts {
                if let Value::Object(part) = self.node(part, depth + 1)? {
                    merge(&mut out, part);
                }
            }
        }
        for (key, value) in map {
            match key.as_str() {
                "$ref" | "allOf" => {}
                "properties" => {
                    let mut props =
                        out.remove("properties").and_then(|p| p.as_object().cloned()).unwrap_or_default();
                    for (name, prop) in self.properties(value)? {
                        props.insert(name.clone(), self.node(prop, depth + 1)?);
                    }
                    out.insert(key.clone(), Value::Object(props));
                }
                "items" | "additionalProperties" => {
                    let value = self.node(value, depth + 1)?;
                    out.insert(key.clone(), value);
                }
                "oneOf" | "anyOf" => {
                    let mut parts = Vec::new();
                    for part in value.as_array().into_iter().flatten() {
                        parts.push(self.node(part, depth + 1)?);
                    }
                    out.insert(key.clone(), Value::Array(parts));
                }
                "required" => {
                    let mut required =
                        out.remove("required").and_then(|r| r.as_array().cloned()).unwrap_or_default();
                    for name in value.as_array().into_iter().flatten() {
                        if !required.contains(name) {
                            required.push(name.clone());
                        }
                    }
                    out.insert(key.clone(), Value::Array(required));
                }
                _ => {
                    out.insert(key.clone(), value.clone());
                }
            }
        }
        Ok(Value::Object(out))
    }
}

impl<'a> Flat<'a> {
    /// The members of a `properties` map. The map may itself be a reference to one
    /// (DigitalOcean's `properties: {$ref: 'models/attributes.yml#/load_balancer_droplet_ids'}`,
    /// a shape its tooling accepts): then the members are the target's, beside any given with
    /// it. A member named `$ref` is only ever a schema (an object), never the reference's text.
    fn properties<'v>(&self, value: &'v Value) -> Result<Vec<(&'v String, &'v Value)>, String>
    where
        'a: 'v,
    {
        let Some(map) = value.as_object() else { return Ok(Vec::new()) };
        let mut out: Vec<(&'v String, &'v Value)> = Vec::new();
        if let Some(reference) = map.get("$ref").and_then(Value::as_str) {
            let target = follow(self.root, reference)?;
            let Some(members) = target.as_object() else {
                return Err(format!(
                    "`properties` refers to {reference:?}, which is not a map of properties"
                ));
            };
            out.extend(members.iter().filter(|(name, _)| !map.contains_key(name.as_str())));
        }
        out.extend(map.iter().filter(|(name, prop)| !(name.as_str() == "$ref" && prop.is_string())));
        Ok(out)
    }
}

/// A local reference (`#/components/schemas/Pet`) in `root`.
pub(crate) fn follow<'a>(root: &'a Value, reference: &str) -> Result<&'a Value, String> {
    let Some(pointer) = reference.strip_prefix('#') else {
        return Err(format!(
            "external $ref {reference:?}: a document given as text resolves only references inside it; import its file (`toolgate import openapi FILE`, `toolgate_openapi::import_file`) to read the files beside it"
        ));
    };
    root.pointer(pointer).ok_or_else(|| format!("$ref {reference:?} points to nothing in the document"))
}

/// `allOf` semantics for the parts a table can hold: properties and required lists are
/// unions; any other keyword is taken from the first part that has it.
fn merge(into: &mut Map<String, Value>, part: Map<String, Value>) {
    for (key, value) in part {
        match (key.as_str(), into.get_mut(&key)) {
            ("properties", Some(Value::Object(props))) => {
                if let Value::Object(more) = value {
                    props.extend(more);
                }
            }
            ("required", Some(Value::Array(required))) => {
                for name in value.as_array().into_iter().flatten() {
                    if !required.contains(name) {
                        required.push(name.clone());
                    }
                }
            }
            (_, Some(_)) => {}
            (_, None) => {
                into.insert(key, value);
            }
        }
    }
}

/// The branches of a (flattened) schema's `oneOf` or `anyOf` that are not `null`, with the key,
/// when it has one.
fn union(schema: &Value) -> Option<(&'static str, Vec<&Value>)> {
    ["oneOf", "anyOf"].into_iter().find_map(|key| {
        let parts = schema.get(key)?.as_array()?;
        Some((key, parts.iter().filter(|p| p.get("type") != Some(&Value::from("null"))).collect()))
    })
}

/// A schema with one of its keys left out and others put in.
fn with(schema: &Value, without: &str, put: &[(&str, Value)]) -> Value {
    let mut map = schema.as_object().cloned().unwrap_or_default();
    map.remove(without);
    for (k, v) in put {
        map.insert((*k).to_owned(), v.clone());
    }
    Value::Object(map)
}

fn field_type(schema: &Value, what: &str) -> Result<FieldType, String> {
    let name = match schema.get("type") {
        Some(Value::String(t)) => t.clone(),
        Some(Value::Array(types)) => {
            let real: Vec<&str> = types.iter().filter_map(Value::as_str).filter(|t| *t != "null").collect();
            match real.as_slice() {
                [one] => (*one).to_owned(),
                _ => return Err(format!("{what} has several types ({})", real.join(", "))),
            }
        }
        _ if schema.get("properties").is_some() => "object".to_owned(),
        _ if schema.get("items").is_some() => "array".to_owned(),
        _ if schema.get("additionalProperties").is_some() => "object".to_owned(),
        _ => {
            match schema.get("enum").and_then(Value::as_array).and_then(|v| v.first()).or(schema.get("const"))
            {
                Some(Value::String(_)) => "string".to_owned(),
                // No type named: any value (a free-form field, or one a union's branches describe).
                _ => return Ok(FieldType::Any),
            }
        }
    };
    Ok(match name.as_str() {
        "string" => FieldType::String,
        "integer" => FieldType::Integer,
        "number" => FieldType::Number,
        "boolean" => FieldType::Boolean,
        "array" => FieldType::Array,
        "object" => FieldType::Object,
        other => return Err(format!("{what} has type {other:?}")),
    })
}

/// Whether a (flattened) schema admits `null`: 3.0's `nullable: true`, 3.1's
/// `type: [T, "null"]`, a `oneOf`/`anyOf` with a `{"type": "null"}` branch, or `null` in its enum.
fn admits_null(schema: &Value) -> bool {
    let is_null = |t: &Value| t == "null";
    schema.get("nullable") == Some(&Value::Bool(true))
        || schema.get("type").and_then(Value::as_array).is_some_and(|ts| ts.iter().any(is_null))
        || ["oneOf", "anyOf"].iter().any(|k| {
            schema.get(*k).and_then(Value::as_array).is_some_and(|parts| {
                parts
                    .iter()
                    .any(|p| p.get("type").is_some_and(is_null) || p.get("nullable") == Some(&true.into()))
            })
        })
        || schema.get("enum").and_then(Value::as_array).is_some_and(|v| v.iter().any(Value::is_null))
}

/// A schema's type and limits, as a field's shape or an array's items.
fn parse(schema: &Value, what: &str) -> Result<Items, String> {
    let nullable = admits_null(schema);
    if let Some((key, real)) = union(schema) {
        // One real branch (beside `null`): that branch, with the schema's own keywords.
        if let [one] = real.as_slice() {
            let mut merged = one.as_object().cloned().unwrap_or_default();
            for (k, v) in schema.as_object().into_iter().flatten() {
                if k != key {
                    merged.entry(k.clone()).or_insert(v.clone());
                }
            }
            let mut shape = parse(&Value::Object(merged), what)?;
            shape.nullable |= nullable;
            return Ok(shape);
        }
        // Several: the schema's own keywords (any value when they name no type), and the branches.
        let mut shape = parse(&with(schema, key, &[]), what)?;
        let branches = real
            .iter()
            .enumerate()
            .map(|(i, b)| parse(b, &format!("branch {} of {what}", i + 1)))
            .collect::<Result<Vec<_>, _>>()?;
        shape.nullable |= nullable;
        if key == "oneOf" {
            shape.one_of = branches
        } else {
            shape.any_of = branches
        }
        return Ok(shape);
    }
    // 3.1's `type: [string, integer]`: any value of one of those types.
    if let Some(Value::Array(types)) = schema.get("type") {
        let real: Vec<&Value> = types.iter().filter(|t| *t != "null").collect();
        if real.len() > 1 {
            let branches = real
                .iter()
                .map(|t| parse(&with(schema, "description", &[("type", (*t).clone())]), what))
                .collect::<Result<Vec<_>, _>>()?;
            let mut shape = Items::new(FieldType::Any);
            shape.nullable = nullable;
            shape.description = describe(schema);
            shape.any_of = branches
                .into_iter()
                .map(|mut b| {
                    b.nullable = false;
                    b
                })
                .collect();
            return Ok(shape);
        }
    }
    let schema = schema.clone();
    let ty = field_type(&schema, what)?;
    let num = |k: &str| schema.get(k).and_then(Value::as_f64);
    let count = |k: &str| schema.get(k).and_then(Value::as_u64);
    // Exclusive bounds: 3.0 says `exclusiveMinimum: true` beside `minimum`, 3.1 gives the bound
    // itself. Whole numbers move to the next allowed value; other numbers keep the bound.
    let bound = |key: &str, exclusive: &str, step: f64| match (num(key), schema.get(exclusive)) {
        (Some(v), Some(Value::Bool(true))) if ty == FieldType::Integer => Some(v + step),
        (_, Some(Value::Number(n))) if ty == FieldType::Integer => n.as_f64().map(|v| v + step),
        (_, Some(Value::Number(n))) => n.as_f64(),
        (v, _) => v,
    };
    let numeric = matches!(ty, FieldType::Integer | FieldType::Number);
    let text = ty == FieldType::String;
    let fields = match ty {
        FieldType::Object => {
            let props = schema.get("properties").and_then(Value::as_object);
            let props = props.cloned().unwrap_or_default();
            let required: Vec<&str> = schema
                .get("required")
                .and_then(Value::as_array)
                .map(|r| r.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            // A member the table cannot name as it is (`pg_partman_bgw.role`, or Box's
            // `partner_item.tenant_id`, a name toolgate reserves for the caller's identity) gets
            // a name it can, and is sent under its own (`wire_name`), its type and `required` kept.
            let taken: Vec<&str> = props.keys().map(String::as_str).filter(|n| member_name(n)).collect();
            let mut given: Vec<String> = Vec::new();
            let mut fields = Vec::new();
            for (name, p) in props.iter().filter(|(_, p)| p.get("readOnly") != Some(&Value::Bool(true))) {
                let field = to_field(name, p, required.contains(&name.as_str()))?;
                fields.push(named(field, &taken, &mut given));
            }
            // A required name the properties do not declare (Box's `actionable_by.id`): a
            // required field of any value, so the call still has to give it.
            for name in required.iter().filter(|n| !props.contains_key(**n)) {
                let field = Field::new(*name, FieldType::Any)
                    .required()
                    .describe("Required by the API; the document does not describe it.");
                fields.push(named(field, &taken, &mut given));
            }
            fields
        }
        _ => Vec::new(),
    };
    // What the keys besides the declared ones hold: any value (`true`, or nothing said and no
    // properties declared: a free-form object), the schema given, or nothing else (`false`, or
    // nothing said beside declared properties, as the table always had it).
    let values = match (ty, schema.get("additionalProperties")) {
        (FieldType::Object, Some(Value::Bool(false))) if fields.is_empty() => {
            return Err(format!("{what} is an object that admits no key at all"));
        }
        (FieldType::Object, Some(Value::Bool(false))) => None,
        (FieldType::Object, Some(Value::Object(v))) if !v.is_empty() => {
            Some(Box::new(parse(&Value::Object(v.clone()), &format!("the values of {what}"))?))
        }
        (FieldType::Object, Some(_)) => Some(Box::new(Items::new(FieldType::Any))),
        (FieldType::Object, None) if fields.is_empty() => Some(Box::new(Items::new(FieldType::Any))),
        _ => None,
    };
    let items = match ty {
        FieldType::Array => match schema.get("items") {
            Some(items) => Some(Box::new(parse(items, &format!("the items of {what}"))?)),
            // Items not described: any values.
            None => Some(Box::new(Items::new(FieldType::Any))),
        },
        _ => None,
    };
    let mut out = Items::new(ty);
    out.nullable = nullable;
    out.format = schema.get("format").and_then(Value::as_str).filter(|_| text).map(str::to_owned);
    // `content_encoding` is set for a multipart body's files (`crate::multipart`), where it
    // changes what is sent; `collection_format` by the parameter's style.
    // 3.1's `const: card` is the one-value enum it means.
    out.enum_values = schema
        .get("enum")
        .and_then(Value::as_array)
        .cloned()
        .or_else(|| schema.get("const").map(|c| vec![c.clone()]))
        .map(|v| v.into_iter().filter(|v| !v.is_null()).collect::<Vec<_>>())
        .filter(|v| !v.is_empty());
    out.description = describe(&schema);
    out.minimum = bound("minimum", "exclusiveMinimum", 1.0).filter(|_| numeric);
    out.maximum = bound("maximum", "exclusiveMaximum", -1.0).filter(|_| numeric);
    out.items = items;
    out.pattern = schema.get("pattern").and_then(Value::as_str).filter(|_| text).map(str::to_owned);
    out.min_length = count("minLength").filter(|_| text);
    out.max_length = count("maxLength").filter(|_| text);
    out.min_items = count("minItems").filter(|_| ty == FieldType::Array);
    out.max_items = count("maxItems").filter(|_| ty == FieldType::Array);
    out.fields = fields;
    out.values = values;
    Ok(out)
}

/// Whether an object member may be a table field as it is named: an identifier, not one
/// toolgate fills in from the call context.
fn member_name(name: &str) -> bool {
    name.len() <= 64
        && name.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !toolgate_core::names::is_injected_field(name)
}

/// `field`, a member of an object, under a name the table may hold when its own is not one
/// (not an identifier, or one toolgate fills in from the call context): `tenant_id` becomes
/// `target_tenant_id`, `pg_partman_bgw.role` `pg_partman_bgw_role` (numbered when taken), the
/// name the API knows kept as its `wire_name` and said in its description.
fn named(mut field: Field, taken: &[&str], given: &mut Vec<String>) -> Field {
    let old = field.name.clone();
    if member_name(&old) {
        return field;
    }
    let reserved = toolgate_core::names::is_injected_field(&crate::operation::identifier(&old));
    let base = if reserved {
        format!("target_{}", crate::operation::snake_case(&old))
    } else {
        crate::operation::identifier(&old)
    };
    let mut new = base.clone();
    let mut n = 2;
    while !member_name(&new) || taken.contains(&new.as_str()) || given.contains(&new) {
        new = format!("{base}_{n}");
        n += 1;
    }
    given.push(new.clone());
    let note = if reserved {
        format!("The API's `{old}` of this object (not the caller's identity, which comes from the session).")
    } else {
        format!("Sent to the API as `{old}`.")
    };
    field.description = Some(match field.description.take() {
        Some(d) if !d.is_empty() => format!("{note} {d}"),
        _ => note,
    });
    field.name = new;
    field.wire_name = Some(old);
    field
}

/// A schema's description, else its title.
fn describe(schema: &Value) -> Option<String> {
    schema
        .get("description")
        .or_else(|| schema.get("title"))
        .and_then(Value::as_str)
        .map(|d| d.trim().to_owned())
        .filter(|d| !d.is_empty())
}

/// A named property as a field.
pub(crate) fn to_field(name: &str, schema: &Value, required: bool) -> Result<Field, String> {
    let mut field = Field::new(name, FieldType::Any);
    field.required = required;
    field.shape = parse(schema, &format!("field `{name}`"))?;
    Ok(field)
}
