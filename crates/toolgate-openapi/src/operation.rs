//! One OpenAPI operation to one route: the op name, the method, the path, and the fields from
//! its path, query and body parameters (a JSON body, else an `application/x-www-form-urlencoded`
//! one, written `body_encoding = "form"`); or the reason it cannot be mapped faithfully.

use serde_json::Value;
use toolgate_core::names::is_injected_field;
use toolgate_schema::{Body, BodyEncoding, Field, FieldType, Location, Method, OP_FIELD, Route};

use crate::schema::{flatten, follow, to_field};

/// An operation as found in the document.
pub(crate) struct Op<'a> {
    pub(crate) path: &'a str,
    pub(crate) method: &'a str,
    pub(crate) item: &'a Value,
    pub(crate) operation: &'a Value,
}

/// `getPetById` → `get_pet_by_id`; anything that is not a letter or digit becomes `_`.
pub(crate) fn snake_case(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    let mut prev_lower = false;
    for c in text.chars() {
        if c.is_ascii_uppercase() {
            if prev_lower {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
            prev_lower = false;
        } else if c.is_ascii_alphanumeric() {
            out.push(c);
            prev_lower = c.is_ascii_lowercase() || c.is_ascii_digit();
        } else {
            if !out.ends_with('_') {
                out.push('_');
            }
            prev_lower = false;
        }
    }
    let out = out.trim_matches('_').to_owned();
    match out.chars().next() {
        Some(c) if c.is_ascii_lowercase() => out,
        Some(_) => format!("op_{out}"),
        None => "op".to_owned(),
    }
}

impl<'a> Op<'a> {
    /// The op name: the operationId in snake_case, or method and path.
    pub(crate) fn name(&self) -> String {
        let raw = match self.operation.get("operationId").and_then(Value::as_str) {
            Some(id) => snake_case(id),
            None => snake_case(&format!("{} {}", self.method, self.path.replace(['{', '}'], ""))),
        };
        raw.chars().take(64).collect::<String>().trim_end_matches('_').to_owned()
    }

    /// The first tag, if any.
    pub(crate) fn tag(&self) -> Option<&str> {
        self.operation.get("tags")?.as_array()?.first()?.as_str()
    }

    /// The routes of the operation: one, or one per branch of a body that is a union of
    /// objects (`crate::union`); or why it cannot be mapped.
    pub(crate) fn routes(&self, root: &'a Value) -> Result<Vec<Route>, String> {
        let Some(branches) = crate::union::branches(root, self.operation)? else {
            return Ok(vec![self.route(root, None)?]);
        };
        let mut out = Vec::with_capacity(branches.len());
        for branch in &branches {
            let mut route = self.route(root, Some(&branch.schema))?;
            if !branch.suffix.is_empty() {
                let base: String = route.op.chars().take(63 - branch.suffix.len().min(40)).collect();
                let suffix: String = branch.suffix.chars().take(40).collect();
                route.op = format!("{}_{suffix}", base.trim_end_matches('_'));
                route.summary =
                    format!("{} (body form {}, one of {})", route.summary, branch.label, branches.len());
            }
            out.push(route);
        }
        Ok(out)
    }

    /// The route, or why it cannot be one; `branch`: the body schema to use instead of the
    /// document's (one branch of a union body).
    fn route(&self, root: &'a Value, branch: Option<&Value>) -> Result<Route, String> {
        let method = match self.method {
            "get" => Method::Get,
            "post" => Method::Post,
            "put" => Method::Put,
            "patch" => Method::Patch,
            "delete" => Method::Delete,
            other => return Err(format!("{} is not a method a route table can call", other.to_uppercase())),
        };
        let mut fields: Vec<Field> = Vec::new();
        // The names of the path and of the query parameters, as the document has them.
        let (mut path_names, mut query_names): (Vec<String>, Vec<String>) = (Vec::new(), Vec::new());
        let writes = matches!(method, Method::Post | Method::Put | Method::Patch);
        for param in self.parameters(root)? {
            let name = param.get("name").and_then(Value::as_str).unwrap_or_default();
            let required = param.get("required").and_then(Value::as_bool).unwrap_or(false);
            let collection_format = crate::servers::check_style(param, root)?;
            let header = match param.get("in").and_then(Value::as_str).unwrap_or_default() {
                "path" | "query" => false,
                "cookie" => return Err(format!("it takes cookie parameter `{name}` (cookies are not sent)")),
                // A header toolgate sets itself (Accept, Content-Type, Authorization) is left to
                // it when optional; a required one is refused by the table's check, said so.
                "header" if !required && RESERVED_HEADERS.contains(&name.to_ascii_lowercase().as_str()) => {
                    continue;
                }
                "header" => true,
                _ => continue,
            };
            let schema = match (param.get("schema"), param.get("content")) {
                (Some(schema), _) => flatten(root, schema, 0)?,
                _ => return Err(format!("parameter `{name}` has no schema")),
            };
            let in_path = param.get("in") == Some(&"path".into());
            let mut field = to_field(name, &schema, required || in_path)?;
            field.shape.collection_format = collection_format;
            if in_path {
                // A path always has a value; `null` is not one.
                field.nullable = false;
                path_names.push(name.to_owned());
            } else {
                query_names.push(name.to_owned());
            }
            if field.description.is_none() {
                field.description =
                    param.get("description").and_then(Value::as_str).map(|d| d.trim().to_owned());
            }
            // A write's query parameters are said to be query ones (its other fields go in the body).
            if writes && param.get("in").and_then(Value::as_str) == Some("query") {
                field.location = Some(Location::Query);
            }
            if header {
                field.location = Some(Location::Header);
            }
            fields.retain(|f| f.name != field.name);
            fields.push(field);
        }
        // No requestBody: the write sends no body (a validating backend refuses `{}` with 415).
        let mut body_kind = Body::None;
        let mut body_encoding = BodyEncoding::Json;
        // The field sent as the whole body, and the body's own `Content-Type`.
        let (mut body_field, mut content_type): (Option<String>, Option<String>) = (None, None);
        if let Some(body) = self.operation.get("requestBody") {
            let body = match body.get("$ref").and_then(Value::as_str) {
                Some(r) => follow(root, r)?,
                None => body,
            };
            if method == Method::Get {
                return Err("GET with a request body (the body is not sent)".to_owned());
            }
            let content = body.get("content").and_then(Value::as_object);
            let offered = |is: fn(&str) -> bool| {
                content.and_then(|c| {
                    c.iter().find(|(media, _)| {
                        is(&media.split(';').next().unwrap_or_default().trim().to_ascii_lowercase())
                    })
                })
            };
            // JSON when the operation takes it, else a urlencoded form (Twilio's writes), else
            // multipart/form-data (file uploads), else raw bytes (`format: binary`) or text (a
            // string schema); other bodies are not sent.
            let json = offered(|m| m == "application/json" || m.ends_with("+json"));
            let form = offered(|m| m == "application/x-www-form-urlencoded");
            let multipart = offered(|m| m == "multipart/form-data");
            let kind = |m: &str| m.split(';').next().unwrap_or_default().trim().to_ascii_lowercase();
            let binary = match (json, form, multipart, content) {
                (None, None, None, Some(content)) => crate::whole::raw_media(root, content)?,
                _ => None,
            };
            let (media_type, media, encoding) = match (json, form, multipart, binary) {
                (Some((m, media)), ..) => (kind(m), media, BodyEncoding::Json),
                (None, Some((m, media)), ..) => (kind(m), media, BodyEncoding::Form),
                (None, None, Some((m, media)), _) => (kind(m), media, BodyEncoding::Multipart),
                (None, None, None, Some((m, media, raw))) => (m, media, raw),
                (None, None, None, None) => {
                    let kinds: Vec<&str> =
                        content.map(|c| c.keys().map(String::as_str).collect()).unwrap_or_default();
                    return Err(format!(
                        "its body is not JSON ({}); only JSON, application/x-www-form-urlencoded, multipart/form-data, binary (`format: binary`) and string bodies are sent",
                        kinds.join(", ")
                    ));
                }
            };
            body_encoding = encoding;
            let body_required = body.get("required").and_then(Value::as_bool).unwrap_or(false);
            body_kind = if body_required { Body::Required } else { Body::Optional };
            // The document's JSON type when it is not plain JSON (`application/json-patch+json`).
            if encoding == BodyEncoding::Json && media_type != "application/json" {
                content_type = Some(media_type.clone());
            }
            if matches!(encoding, BodyEncoding::Binary | BodyEncoding::Text) {
                if method == Method::Delete {
                    return Err(format!(
                        "DELETE with a {} body (only a JSON one is sent)",
                        encoding.as_str()
                    ));
                }
                let about = body.get("description").and_then(Value::as_str);
                let (field, sent) =
                    crate::whole::raw_field(root, media, &media_type, encoding, body_required, about)?;
                body_field = Some(whole_field(&mut fields, field));
                content_type = sent;
            }
            let raw_schema = media.get("schema").unwrap_or(&Value::Null);
            let schema = match branch {
                Some(branch) => branch.clone(),
                None if body_field.is_some() => Value::Null,
                None => flatten(root, raw_schema, 0)?,
            };
            if schema.get("oneOf").is_some() || schema.get("anyOf").is_some() {
                return Err("its body is a oneOf/anyOf union".to_owned());
            }
            let props = schema.get("properties").and_then(Value::as_object);
            let is_object = schema.get("type").is_none_or(|t| t == "object");
            let props = props.filter(|p| is_object && !p.is_empty());
            // A JSON body that is not an object of declared members (an array, a free-form
            // object): one field, sent as the body itself.
            if props.is_none() && encoding == BodyEncoding::Json {
                let about = body.get("description").and_then(Value::as_str);
                let mut field = crate::whole::json_field(root, raw_schema, &schema, body_required, about)?;
                if method == Method::Delete {
                    field.location = Some(Location::Body);
                }
                body_field = Some(whole_field(&mut fields, field));
            }
            let none = serde_json::Map::new();
            let props = match props {
                Some(props) => props,
                None if body_field.is_some() => &none,
                None => {
                    return Err(format!(
                        "its body is not a {} object with declared properties",
                        if encoding == BodyEncoding::Form { "form" } else { "multipart" }
                    ));
                }
            };
            // An optional body keeps its schema's required fields: they are required of the body,
            // which is sent only when the caller gives one of its fields.
            let required: Vec<&str> = schema
                .get("required")
                .and_then(Value::as_array)
                .map(|r| r.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            for (name, prop) in props {
                if prop.get("readOnly") == Some(&Value::Bool(true)) {
                    continue;
                }
                let mut field = to_field(name, prop, required.contains(&name.as_str()))?;
                // A body member named like a path or query parameter (`uuid` in the body of
                // `/agents/{uuid}`): the model sees it as `body_uuid`, the API gets `uuid`.
                if fields.iter().any(|f| f.name == *name) {
                    let mut n = 1;
                    let mut new = format!("body_{name}");
                    while fields.iter().any(|f| f.name == new) || props.contains_key(&new) {
                        n += 1;
                        new = format!("body_{name}_{n}");
                    }
                    let note =
                        format!("Sent in the body as `{name}` (the parameter `{name}` is another one).");
                    field.description = Some(match field.description.take() {
                        Some(d) => format!("{note} {d}"),
                        None => note,
                    });
                    field.wire_name = Some(name.clone());
                    field.location = Some(Location::Body);
                    field.name = new;
                }
                if encoding == BodyEncoding::Form {
                    check_form_field(&field, media)?;
                }
                if encoding == BodyEncoding::Multipart {
                    crate::multipart::file_field(&mut field, prop, media)?;
                }
                // A DELETE's body fields say so (its other fields go in the query); its body is
                // sent as a write's is (`body`: always when required, else when one is given).
                if method == Method::Delete {
                    if encoding != BodyEncoding::Json {
                        return Err(format!(
                            "DELETE with a {} body (only a JSON one is sent)",
                            encoding.as_str()
                        ));
                    }
                    field.location = Some(Location::Body);
                }
                fields.push(field);
            }
            // A required body member the properties do not declare (DigitalOcean's
            // `uptime_create_check` requires `method`): a required field of any value.
            let undeclared: Vec<&str> = required
                .iter()
                .copied()
                .filter(|n| !props.contains_key(*n) && !fields.iter().any(|f| f.name == *n))
                .collect();
            for name in undeclared {
                // A form holds text: such a member of a form (or a multipart body) is a string.
                let ty = if encoding == BodyEncoding::Json { FieldType::Any } else { FieldType::String };
                let mut field = Field::new(name, ty)
                    .required()
                    .describe("Required by the API; the document does not describe it.");
                if method == Method::Delete {
                    field.location = Some(Location::Body);
                }
                fields.push(field);
            }
        }
        let summary = ["summary", "description"]
            .iter()
            .find_map(|k| self.operation.get(*k).and_then(Value::as_str))
            .map(|s| s.lines().next().unwrap_or_default().trim().to_owned())
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| format!("{} {}", method.as_str(), self.path));
        // A DELETE with a requestBody sends it as a write does; one without sends none (it has
        // no body fields), which its default says.
        let body = match body_kind {
            _ if !writes && method != Method::Delete => Body::Required,
            Body::None if method == Method::Delete => Body::Required,
            kind => kind,
        };
        let accept = self.accept();
        let mut path = self.wire_path();
        // The path key's own query fixes those parameters: the model does not set them.
        let probe = Route::new("", method, path.clone(), "");
        let fixed: Vec<String> = probe.fixed_query().into_iter().map(|(k, _)| k).collect();
        fields.retain(|f| !(query_names.contains(&f.name) && fixed.contains(&f.name)));
        // A path variable the document does not declare still needs a name the model may see.
        for var in toolgate_schema::path_variables(probe.path_template()) {
            if !model_may_see(&var) && !fields.iter().any(|f| f.name == var) {
                let mut field = Field::new(var.clone(), FieldType::String).required();
                field.min_length = Some(1);
                path_names.push(var);
                fields.push(field);
            }
        }
        rename(&mut fields, &path_names, &mut path);
        let server = crate::servers::own_server(root, self.item, self.operation)?;
        let security = crate::servers::own_security(root, self.operation)?;
        let mut route = Route::new(self.name(), method, path, summary);
        route.fields = fields;
        (route.body, route.body_encoding, route.body_field) = (body, body_encoding, body_field);
        (route.content_type, route.accept) = (content_type, accept);
        (route.server, route.security) = (server, security);
        Ok(route)
    }

    /// The path as sent: the key without its `#fragment`, which only tells operations apart in
    /// the document (Box's `/files/{file_id}#get_shared_link`); a `?key=value` (OpenAI's
    /// `/assistants?beta=true`) stays, as the route's fixed query.
    fn wire_path(&self) -> String {
        self.path.split_once('#').map_or(self.path, |(path, _)| path).to_owned()
    }

    /// The media types of the operation's success (2xx, `2XX`, `default`) answers, without
    /// parameters, each once; empty when that is only `application/json`, the default.
    fn accept(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        let responses = self.operation.get("responses").and_then(Value::as_object);
        for (status, response) in responses.into_iter().flatten() {
            if !(status.starts_with('2') || status == "default") {
                continue;
            }
            for media in
                response.get("content").and_then(Value::as_object).into_iter().flatten().map(|(m, _)| m)
            {
                let media = media.split(';').next().unwrap_or_default().trim().to_ascii_lowercase();
                let token = |x: &str| {
                    !x.is_empty()
                        && x.bytes().all(|b| b.is_ascii_alphanumeric() || b"!#$&-^_.+*".contains(&b))
                };
                let plain = media.split_once('/').is_some_and(|(t, s)| token(t) && token(s));
                if plain && !out.contains(&media) {
                    out.push(media);
                }
            }
        }
        if out == ["application/json"] { Vec::new() } else { out }
    }

    /// Path-level then operation-level parameters (the latter win), `$ref`s followed.
    fn parameters(&self, root: &'a Value) -> Result<Vec<&'a Value>, String> {
        let mut out: Vec<&Value> = Vec::new();
        let lists = [self.item.get("parameters"), self.operation.get("parameters")];
        for param in lists.into_iter().flatten().filter_map(Value::as_array).flatten() {
            let param = match param.get("$ref").and_then(Value::as_str) {
                Some(r) => follow(root, r)?,
                None => param,
            };
            let key = |p: &Value| (p.get("name").cloned(), p.get("in").cloned());
            out.retain(|p| key(p) != key(param));
            out.push(param);
        }
        Ok(out)
    }
}

/// Add `field`, the whole body, to `fields` under a name no parameter has (`body_items` beside
/// a parameter `items`); the name given.
fn whole_field(fields: &mut Vec<Field>, mut field: Field) -> String {
    let base = field.name.clone();
    let mut name = base.clone();
    let mut n = 1;
    while fields.iter().any(|f| f.name == name) {
        n += 1;
        name = if n == 2 { format!("body_{base}") } else { format!("body_{base}_{n}") };
    }
    field.name = name.clone();
    fields.push(field);
    name
}

/// Headers a parameter may not set (toolgate sends them itself), lowercase.
const RESERVED_HEADERS: [&str; 8] = [
    "accept",
    "content-type",
    "authorization",
    "content-length",
    "host",
    "cookie",
    "user-agent",
    "connection",
];

/// A form body field the executor sends as the document says: a scalar, or an array of scalars
/// as repeated keys (the default `style: form, explode: true` of its `encoding` entry).
fn check_form_field(field: &Field, media: &Value) -> Result<(), String> {
    let name = &field.name;
    let nested = match field.ty {
        FieldType::Object | FieldType::Any => true,
        FieldType::Array => {
            field.items.as_deref().is_some_and(|i| matches!(i.ty, FieldType::Object | FieldType::Array))
        }
        _ => false,
    };
    if nested {
        return Err(format!(
            "its form body field `{name}` is nested (a form holds strings, numbers, booleans and arrays of them)"
        ));
    }
    let Some(encoding) = media.get("encoding").and_then(|e| e.get(name.as_str())) else { return Ok(()) };
    let style = encoding.get("style").and_then(Value::as_str).unwrap_or("form");
    let explode = encoding.get("explode").and_then(Value::as_bool).unwrap_or(true);
    let content_type = encoding.get("contentType").and_then(Value::as_str);
    if style != "form" || (field.ty == FieldType::Array && !explode) || content_type.is_some() {
        return Err(format!(
            "its form body field `{name}` has an `encoding` (style `{style}`, explode {explode}{}) other than repeated keys",
            content_type.map(|c| format!(", contentType `{c}`")).unwrap_or_default()
        ));
    }
    Ok(())
}

/// Whether the model may see `name` as it is: an identifier a table holds, not `op` and not a
/// name toolgate fills in from the call context.
fn model_may_see(name: &str) -> bool {
    let identifier = name.len() <= 64
        && name.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    identifier && name != OP_FIELD && !is_injected_field(name)
}

/// `StartTime<` → `StartTime_lt`, `filter.name` → `filter_name`, `$top` → `top`: the name as an
/// identifier (`<` and `>` said as `lt` and `gt`, so `a<` and `a>` stay apart).
pub(crate) fn identifier(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 4);
    for c in name.chars() {
        match c {
            '<' => out.push_str("_lt_"),
            '>' => out.push_str("_gt_"),
            c if c.is_ascii_alphanumeric() => out.push(c),
            _ => out.push('_'),
        }
    }
    let mut collapsed = String::with_capacity(out.len());
    for c in out.chars() {
        if !(c == '_' && collapsed.ends_with('_')) {
            collapsed.push(c);
        }
    }
    let mut out = collapsed.trim_matches('_').to_owned();
    if out.is_empty() {
        out = "param".to_owned();
    }
    if out.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert_str(0, "n_");
    }
    out.chars().take(56).collect()
}

/// Give every field the model may not see as it is a name it may: a path variable is renamed in
/// the path too (its name is never sent), any other field keeps its name for the backend as its
/// `wire_name`. A name toolgate reserves for the caller's identity (`user_id`) becomes
/// `target_user_id`, described as naming the resource, not the caller.
fn rename(fields: &mut [Field], path_names: &[String], path: &mut String) {
    let taken: Vec<String> = fields.iter().map(|f| f.name.clone()).collect();
    let mut given: Vec<String> = Vec::new();
    for field in fields.iter_mut() {
        let old = field.name.clone();
        if model_may_see(&old) {
            continue;
        }
        // `op` is toolgate's too (it selects the operation), but says nothing about the caller.
        let reserved = is_injected_field(&identifier(&old));
        let base = match (reserved, old == OP_FIELD) {
            (true, _) | (_, true) => format!("target_{}", snake_case(&old)),
            _ => identifier(&old),
        };
        let mut new = base.clone();
        let mut n = 2;
        while !model_may_see(&new) || taken.contains(&new) || given.contains(&new) {
            new = format!("{base}_{n}");
            n += 1;
        }
        given.push(new.clone());
        let note = if reserved {
            format!(
                "Names the resource this operation is about (the API's `{old}`), not the caller: the caller's identity comes from the session."
            )
        } else {
            format!("Sent to the API as `{old}`.")
        };
        field.description = Some(match field.description.take() {
            Some(d) if !d.is_empty() => format!("{note} {d}"),
            _ => note,
        });
        field.name = new.clone();
        if path_names.contains(&old) {
            *path = path.replace(&format!("{{{old}}}"), &format!("{{{new}}}"));
        } else {
            field.wire_name = Some(old);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{identifier, snake_case};

    #[test]
    fn names_a_table_cannot_hold_become_identifiers() {
        assert_eq!(identifier("StartTime<"), "StartTime_lt");
        assert_eq!(identifier("StartTime>"), "StartTime_gt");
        assert_eq!(identifier("filter.name"), "filter_name");
        assert_eq!(identifier("$top"), "top");
        assert_eq!(identifier("page[size]"), "page_size");
        assert_eq!(identifier("2fa"), "n_2fa");
        assert_eq!(identifier("..."), "param");
    }

    #[test]
    fn operation_ids_become_snake_case() {
        assert_eq!(snake_case("getPetById"), "get_pet_by_id");
        assert_eq!(snake_case("list-Workouts v2"), "list_workouts_v2");
        assert_eq!(snake_case("get /pets/petId"), "get_pets_pet_id");
        assert_eq!(snake_case("2fa"), "op_2fa");
        assert_eq!(snake_case("HTTPStatus"), "httpstatus");
    }
}
