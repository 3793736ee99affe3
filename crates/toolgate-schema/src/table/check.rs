//! The rules a route table's paths and fields must keep, each problem said with its fix.

use std::collections::HashSet;

use serde_json::json;
use toolgate_core::names::is_injected_field;

use super::field::{Field, FieldType, Items, Location};
use super::{Body, FIELD_NAME, PATH_VAR, Route};

pub(super) fn check_path(full: &str, at: &str, problems: &mut Vec<String>) {
    let (path, query) = full.split_once('?').map_or((full, None), |(p, q)| (p, Some(q)));
    if !full.starts_with('/') {
        problems.push(format!("{at}: `path` {full:?} must start with `/`"));
    }
    if full.contains('#') {
        problems.push(format!(
            "{at}: `path` {full:?} has a `#fragment`, which is never sent; remove it (name the operation by its `op`)"
        ));
    }
    if full.chars().any(|c| c.is_control() || c.is_whitespace()) {
        problems.push(format!("{at}: `path` {full:?} has a space or control character; percent-encode it"));
    }
    if let Some(query) = query {
        if query.contains(['{', '}']) {
            problems.push(format!(
                "{at}: the fixed query of `path` {full:?} has a `{{variable}}`; variables go in the path part, query values in fields"
            ));
        }
        if query.contains('?') || query.split('&').any(|pair| pair.starts_with('=')) {
            problems.push(format!(
                "{at}: the fixed query of `path` {full:?} is not `key=value&...` (a key is empty or `?` appears twice)"
            ));
        }
    }
    let rest = PATH_VAR.replace_all(path, "");
    if rest.contains('{') || rest.contains('}') {
        problems.push(format!(
            "{at}: `path` {path:?} has a malformed variable; write `{{name}}` with name `[A-Za-z_][A-Za-z0-9_]*`"
        ));
    }
}

pub(super) fn check_field(field: &Field, at: &str, problems: &mut Vec<String>) {
    if !FIELD_NAME.is_match(&field.name) {
        problems.push(format!("{at}: the name must match `[A-Za-z_][A-Za-z0-9_]*` (at most 64 characters)"));
    }
    if is_injected_field(&field.name) {
        problems.push(format!(
            "{at}: `{}` comes from the call context (caller identity), never from the model; remove the field",
            field.name
        ));
    }
    check_shape(&field.shape, at, problems);
}

fn check_shape(shape: &Items, at: &str, problems: &mut Vec<String>) {
    let ty = shape.ty;
    if shape.format.is_some() && ty != FieldType::String {
        problems.push(format!("{at}: `format` applies to strings only, the type is {}", ty.as_str()));
    }
    if (shape.minimum.is_some() || shape.maximum.is_some()) && !ty.is_numeric() {
        problems
            .push(format!("{at}: `minimum`/`maximum` apply to numbers only, the type is {}", ty.as_str()));
    }
    for (name, v) in [("minimum", shape.minimum), ("maximum", shape.maximum)] {
        if v.is_some_and(|v| !v.is_finite()) {
            problems.push(format!("{at}: `{name}` must be a finite number"));
        }
    }
    if let (Some(lo), Some(hi)) = (shape.minimum, shape.maximum)
        && lo > hi
    {
        problems.push(format!("{at}: `minimum` {lo} is above `maximum` {hi}"));
    }
    if (shape.pattern.is_some() || shape.min_length.is_some() || shape.max_length.is_some())
        && ty != FieldType::String
    {
        problems.push(format!("{at}: `pattern`/`min_length`/`max_length` apply to strings only"));
    }
    if let (Some(lo), Some(hi)) = (shape.min_length, shape.max_length)
        && lo > hi
    {
        problems.push(format!("{at}: `min_length` {lo} is above `max_length` {hi}"));
    }
    if let Some(pattern) = &shape.pattern
        && crate::validate::compile(&json!({ "pattern": pattern })).is_err()
    {
        problems.push(format!("{at}: `pattern` {pattern:?} is not a valid regular expression"));
    }
    if (shape.min_items.is_some() || shape.max_items.is_some()) && ty != FieldType::Array {
        problems.push(format!("{at}: `min_items`/`max_items` apply to arrays only"));
    }
    if let (Some(lo), Some(hi)) = (shape.min_items, shape.max_items)
        && lo > hi
    {
        problems.push(format!("{at}: `min_items` {lo} is above `max_items` {hi}"));
    }
    if let Some(values) = &shape.enum_values {
        if values.is_empty() {
            problems.push(format!("{at}: `enum` is empty"));
        }
        for v in values {
            let fits = match ty {
                FieldType::String => v.is_string(),
                FieldType::Integer => v.is_i64() || v.is_u64(),
                FieldType::Number => v.is_number(),
                FieldType::Boolean => v.is_boolean(),
                FieldType::Array | FieldType::Object => false,
                FieldType::Any => true,
            };
            if !fits {
                problems.push(format!("{at}: `enum` value {v} is not of type {}", ty.as_str()));
            }
        }
    }
    match ty {
        FieldType::Array => match &shape.items {
            None => problems.push(format!(
                "{at}: an array needs `items` (e.g. `items = {{ type = \"string\" }}`); models need exact types"
            )),
            Some(items) => check_shape(items, &format!("{at} items"), problems),
        },
        _ if shape.items.is_some() => problems.push(format!("{at}: `items` applies to arrays only")),
        _ => {}
    }
    match (&shape.values, ty) {
        (Some(values), FieldType::Object) => check_shape(values, &format!("{at} values"), problems),
        (Some(_), _) => problems.push(format!("{at}: `values` applies to objects only")),
        (None, _) => {}
    }
    for (key, branches) in [("one_of", &shape.one_of), ("any_of", &shape.any_of)] {
        if branches.len() == 1 {
            problems.push(format!("{at}: `{key}` has one branch; give the shape itself instead"));
        }
        for (i, branch) in branches.iter().enumerate() {
            check_shape(branch, &format!("{at} {key}[{i}]"), problems);
        }
    }
    match ty {
        FieldType::Object if shape.fields.is_empty() && shape.values.is_none() => problems.push(format!(
            "{at}: an object needs `fields` (its keys and their types) or `values` (what every key holds; `values = {{ type = \"any\" }}` for a free-form object); models need exact schemas"
        )),
        FieldType::Object => {
            let mut names = HashSet::new();
            let mut sent = HashSet::new();
            for f in &shape.fields {
                if !names.insert(f.name.as_str()) {
                    problems.push(format!("{at}: field `{}` is declared twice", f.name));
                }
                if f.location.is_some() {
                    problems.push(format!(
                        "{at}.{}: `in` applies to a route's own fields, not to the members of an object",
                        f.name
                    ));
                }
                // A member's `wire_name` is the key the object is sent with (Box's
                // `partner_item.tenant_id`, published as `target_tenant_id`).
                if let Some(wire) = &f.wire_name
                    && (wire.is_empty() || wire.len() > 256 || wire.chars().any(char::is_control))
                {
                    problems.push(format!(
                        "{at}.{}: `wire_name` is empty, longer than 256 bytes or has a control character",
                        f.name
                    ));
                }
                if !sent.insert(f.sent_name()) {
                    problems.push(format!(
                        "{at}.{}: another member is sent as `{}` too",
                        f.name,
                        f.sent_name()
                    ));
                }
                check_field(f, &format!("{at}.{}", f.name), problems);
            }
        }
        _ if !shape.fields.is_empty() => problems.push(format!("{at}: `fields` applies to objects only")),
        _ => {}
    }
}

/// Header names a field may not set: the request's framing, its credentials and what the
/// executor sets itself.
pub(super) const RESERVED_HEADERS: [&str; 11] = [
    "authorization",
    "proxy_authorization",
    "cookie",
    "host",
    "content_type",
    "content_length",
    "transfer_encoding",
    "connection",
    "accept",
    "user_agent",
    "te",
];

/// The wire names of a route: each one a name HTTP can carry, sent once per location, never
/// a path variable's (its name is not sent), never a fixed query key; no nullable path variable.
pub(super) fn check_wire_names(route: &Route, vars: &[String], at: &str, problems: &mut Vec<String>) {
    let mut sent = HashSet::new();
    let fixed: Vec<String> = route.fixed_query().into_iter().map(|(k, _)| k).collect();
    for field in &route.fields {
        let location = route.location(&field.name);
        let is_var = vars.contains(&field.name);
        if is_var && field.nullable {
            problems.push(format!(
                "{at}: path variable `{}` cannot be `nullable`; a path needs a value",
                field.name
            ));
        }
        if let Some(wire) = &field.wire_name {
            if is_var {
                problems.push(format!(
                    "{at}: field `{}` is a path variable, whose name is never sent; remove `wire_name` (rename the variable in the path instead)",
                    field.name
                ));
            }
            if wire.is_empty() || wire.len() > 256 || wire.chars().any(char::is_control) {
                problems.push(format!(
                    "{at}: field `{}` has a `wire_name` that is empty, longer than 256 bytes or has a control character",
                    field.name
                ));
            }
            let token = |b: u8| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b);
            if location == Location::Header && !wire.bytes().all(token) {
                problems.push(format!(
                    "{at}: header field `{}` has `wire_name` {wire:?}, which is not a header name",
                    field.name
                ));
            }
        }
        if !is_var && !sent.insert((location, field.sent_name())) {
            problems.push(format!(
                "{at}: field `{}` is sent as `{}`, like another field in the {}; each name is sent once",
                field.name,
                field.sent_name(),
                location.as_str()
            ));
        }
        if location == Location::Query && fixed.iter().any(|k| k == field.sent_name()) {
            problems.push(format!(
                "{at}: query field `{}` is sent as `{}`, which the path's fixed query already sets; remove one",
                field.name,
                field.sent_name()
            ));
        }
    }
}

/// A form route (`body_encoding = "form"`): a write with a body, whose body fields are scalars
/// or arrays of scalars.
pub(super) fn check_form(route: &Route, writes: bool, at: &str, problems: &mut Vec<String>) {
    if !writes || route.body == Body::None {
        problems.push(format!(
            "{at}: `body_encoding = \"form\"` applies to a POST, PUT or PATCH that sends a body; this {} sends none, remove `body_encoding`",
            if writes { "route with `body = \"none\"`" } else { route.method.as_str() }
        ));
        return;
    }
    for field in route.fields.iter().filter(|f| route.location(&f.name) == Location::Body) {
        let nested = match field.ty {
            FieldType::Object => Some("an object"),
            FieldType::Any => Some("of any type"),
            FieldType::Array => match field.items.as_deref().map(|i| i.ty) {
                Some(FieldType::Object) => Some("an array of objects"),
                Some(FieldType::Array) => Some("an array of arrays"),
                _ => None,
            },
            _ => None,
        };
        if let Some(what) = nested {
            problems.push(format!(
                "{at}: body field `{}` is {what}, which a form body (`body_encoding = \"form\"`) cannot hold: it takes strings, numbers, booleans and arrays of them; give each member as a field of its own, or remove `body_encoding` to send JSON",
                field.name
            ));
        }
    }
}

/// A route's own `server` (a plain absolute http(s) URL: no credentials, query or fragment,
/// nothing a URL does not hold) and `security` (scheme names, each a plain token).
pub(super) fn check_server_and_security(route: &Route, at: &str, problems: &mut Vec<String>) {
    if let Some(server) = &route.server
        && let Err(reason) = plain_server(server)
    {
        problems.push(format!(
            "{at}: `server` {:?} is not a plain absolute URL ({reason}); write `https://host[:port][/prefix]`",
            server.chars().take(120).collect::<String>()
        ));
    }
    for scheme in route.security.iter().flatten() {
        let plain = !scheme.is_empty()
            && scheme.len() <= 64
            && scheme.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b));
        if !plain {
            problems.push(format!(
                "{at}: `security` names {:?}, which is not a scheme name (letters, digits, `-`, `_`, `.`; at most 64)",
                scheme.chars().take(64).collect::<String>()
            ));
        }
    }
}

/// Why `url` is not a plain `http(s)://host[:port][/path]` URL.
fn plain_server(url: &str) -> std::result::Result<(), &'static str> {
    let rest = url.strip_prefix("https://").or_else(|| url.strip_prefix("http://")).ok_or("not http(s)")?;
    let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    if authority.is_empty() {
        return Err("no host");
    }
    if authority.contains('@') {
        return Err("it carries credentials");
    }
    if url.contains(['?', '#']) {
        return Err("it has a query or a fragment");
    }
    let host_char = |b: u8| b.is_ascii_alphanumeric() || b".-:[]".contains(&b);
    let path_char = |b: u8| b.is_ascii_alphanumeric() || b"-._~%!$&'()*+,;=:@/".contains(&b);
    if !authority.bytes().all(host_char) || !path.bytes().all(path_char) {
        return Err("a character a plain URL does not have");
    }
    Ok(())
}

/// `collection_format` only on a query array of scalars (anywhere else nothing joins it).
pub(super) fn check_collection_format(route: &Route, at: &str, problems: &mut Vec<String>) {
    for field in &route.fields {
        let Some(format) = field.shape.collection_format else { continue };
        let scalars = field.ty == FieldType::Array && field.items.as_deref().is_some_and(Items::is_scalar);
        if !scalars || route.location(&field.name) != Location::Query {
            problems.push(format!(
                "{at}: field `{}` has `collection_format = {:?}`, which applies to an array of strings, numbers or booleans in the query only",
                field.name,
                format!("{format:?}").to_ascii_lowercase()
            ));
        }
    }
    fn nested(items: &Items, at: &str, problems: &mut Vec<String>) {
        for f in &items.fields {
            if f.shape.collection_format.is_some() {
                problems.push(format!(
                    "{at}: member `{}` has `collection_format`, which applies to a query field only",
                    f.name
                ));
            }
            nested(&f.shape, at, problems);
        }
    }
    for field in &route.fields {
        nested(&field.shape, at, problems);
    }
}
