//! One OpenAPI operation to one route: the op name, the method, the path, and the fields from
//! its path, query and JSON-body parameters; or the reason it cannot be mapped faithfully.

use schema_gen::{Body, Field, Location, Method, Route};
use serde_json::Value;

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

    /// The route, or why it cannot be one.
    pub(crate) fn route(&self, root: &'a Value) -> Result<Route, String> {
        let method = match self.method {
            "get" => Method::Get,
            "post" => Method::Post,
            "put" => Method::Put,
            "patch" => Method::Patch,
            "delete" => Method::Delete,
            other => return Err(format!("{} is not a method a route table can call", other.to_uppercase())),
        };
        let mut fields: Vec<Field> = Vec::new();
        let writes = matches!(method, Method::Post | Method::Put | Method::Patch);
        for param in self.parameters(root)? {
            let name = param.get("name").and_then(Value::as_str).unwrap_or_default();
            let required = param.get("required").and_then(Value::as_bool).unwrap_or(false);
            match param.get("in").and_then(Value::as_str).unwrap_or_default() {
                "path" | "query" => {}
                "cookie" => return Err(format!("it takes cookie parameter `{name}` (cookies are not sent)")),
                "header" if required => return Err(format!("it needs header parameter `{name}`")),
                // An optional header changes nothing a model must know about.
                _ => continue,
            }
            let schema = match (param.get("schema"), param.get("content")) {
                (Some(schema), _) => flatten(root, schema, 0)?,
                _ => return Err(format!("parameter `{name}` has no schema")),
            };
            let mut field = to_field(name, &schema, required || param.get("in") == Some(&"path".into()))?;
            if field.description.is_none() {
                field.description =
                    param.get("description").and_then(Value::as_str).map(|d| d.trim().to_owned());
            }
            // A write's query parameters are said to be query ones (its other fields go in the body).
            if writes && param.get("in").and_then(Value::as_str) == Some("query") {
                field.location = Some(Location::Query);
            }
            fields.retain(|f| f.name != field.name);
            fields.push(field);
        }
        // No requestBody: the write sends no body (a validating backend refuses `{}` with 415).
        let mut body_kind = Body::None;
        if let Some(body) = self.operation.get("requestBody") {
            let body = match body.get("$ref").and_then(Value::as_str) {
                Some(r) => follow(root, r)?,
                None => body,
            };
            if matches!(method, Method::Get | Method::Delete) {
                return Err(format!("{} with a request body (the body is not sent)", method.as_str()));
            }
            let content = body.get("content").and_then(Value::as_object);
            let json = content.and_then(|c| {
                c.iter().find(|(media, _)| {
                    let media = media.split(';').next().unwrap_or_default().trim();
                    media == "application/json" || media.ends_with("+json")
                })
            });
            let Some((_, media)) = json else {
                let kinds: Vec<&str> =
                    content.map(|c| c.keys().map(String::as_str).collect()).unwrap_or_default();
                return Err(format!("its body is not JSON ({})", kinds.join(", ")));
            };
            let schema = flatten(root, media.get("schema").unwrap_or(&Value::Null), 0)?;
            if schema.get("oneOf").is_some() || schema.get("anyOf").is_some() {
                return Err("its body is a oneOf/anyOf union".to_owned());
            }
            let props = schema.get("properties").and_then(Value::as_object);
            let is_object = schema.get("type").is_none_or(|t| t == "object");
            let Some(props) = props.filter(|p| is_object && !p.is_empty()) else {
                return Err("its body is not a JSON object with declared properties".to_owned());
            };
            // An optional body keeps its schema's required fields: they are required of the body,
            // which is sent only when the caller gives one of its fields.
            let body_required = body.get("required").and_then(Value::as_bool).unwrap_or(false);
            body_kind = if body_required { Body::Required } else { Body::Optional };
            let required: Vec<&str> = schema
                .get("required")
                .and_then(Value::as_array)
                .map(|r| r.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            for (name, prop) in props {
                if prop.get("readOnly") == Some(&Value::Bool(true)) {
                    continue;
                }
                if fields.iter().any(|f| f.name == *name) {
                    return Err(format!("body field `{name}` has the name of a path or query parameter"));
                }
                fields.push(to_field(name, prop, required.contains(&name.as_str()))?);
            }
        }
        let summary = ["summary", "description"]
            .iter()
            .find_map(|k| self.operation.get(*k).and_then(Value::as_str))
            .map(|s| s.lines().next().unwrap_or_default().trim().to_owned())
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| format!("{} {}", method.as_str(), self.path));
        let body = if writes { body_kind } else { Body::Required };
        let accept = self.accept();
        Ok(Route { op: self.name(), method, path: self.path.to_owned(), summary, fields, body, accept })
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

#[cfg(test)]
mod tests {
    use super::snake_case;

    #[test]
    fn operation_ids_become_snake_case() {
        assert_eq!(snake_case("getPetById"), "get_pet_by_id");
        assert_eq!(snake_case("list-Workouts v2"), "list_workouts_v2");
        assert_eq!(snake_case("get /pets/petId"), "get_pets_pet_id");
        assert_eq!(snake_case("2fa"), "op_2fa");
        assert_eq!(snake_case("HTTPStatus"), "httpstatus");
    }
}
