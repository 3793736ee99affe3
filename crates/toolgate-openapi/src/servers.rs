//! Where an operation is called and how it authenticates, when that is its own: an
//! operation's or path's `servers` other than the document's, and an operation's `security`
//! other than the document's main scheme (see [`main_scheme`]).

use serde_json::Value;
use toolgate_schema::CollectionFormat;

use crate::auth::shown;

/// Whether `url` is a plain absolute `http(s)://host[:port][/path]` URL. `Err(None)`: not an
/// absolute URL at all (a relative server, left to the user as before); `Err(Some(reason))`:
/// an absolute one that is refused, the reason naming no document text.
pub(crate) fn plain_url(url: &str) -> Result<(), Option<&'static str>> {
    let Some(rest) = url.strip_prefix("https://").or_else(|| url.strip_prefix("http://")) else {
        return Err(if url.contains("://") {
            Some("only http:// and https:// URLs can be a base_url")
        } else {
            None
        });
    };
    let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let host_char = |b: u8| b.is_ascii_alphanumeric() || b".-:[]".contains(&b);
    // RFC 3986 `pchar` and `/`: unreserved, percent-encoded, sub-delims, `:` and `@`.
    let path_char = |b: u8| b.is_ascii_alphanumeric() || b"-._~%!$&'()*+,;=:@/".contains(&b);
    // Told apart below: userinfo, a query or fragment, an unreplaced variable.
    let told = |b: u8| b"@?#{}".contains(&b);
    if !authority.bytes().all(|b| host_char(b) || told(b)) || !path.bytes().all(|b| path_char(b) || told(b)) {
        return Err(Some(
            "it has a character a plain URL does not have (a quote, space, line break, control or non-ASCII character)",
        ));
    }
    if url.contains(['{', '}']) {
        return Err(Some("it has a server variable without a default"));
    }
    if authority.contains('@') {
        return Err(Some("it carries credentials (`user@`), which a base_url may not"));
    }
    if url.contains(['?', '#']) {
        return Err(Some("it has a query or a fragment, which a base_url may not"));
    }
    if authority.is_empty() {
        return Err(Some("it has no host"));
    }
    Ok(())
}

/// `servers[0].url` with its variables replaced by their defaults.
pub(crate) fn server_url(server: &Value) -> Option<String> {
    let mut url = server.get("url")?.as_str()?.to_owned();
    for (name, var) in server.get("variables").and_then(Value::as_object).into_iter().flatten() {
        if let Some(default) = var.get("default").and_then(Value::as_str) {
            url = url.replace(&format!("{{{name}}}"), default);
        }
    }
    Some(url)
}

/// The operation's own base URL: `servers[0]` of the operation, else of its path item, when
/// it is not the document's `servers[0]` (variables replaced by their defaults, no trailing
/// `/`). `Ok(None)`: the domain's base URL. `Err`: why the operation cannot be called.
pub(crate) fn own_server(root: &Value, item: &Value, operation: &Value) -> Result<Option<String>, String> {
    let first = |v: &Value| v.get("servers").and_then(Value::as_array).and_then(|s| s.first()).cloned();
    let Some(server) = first(operation).or_else(|| first(item)) else { return Ok(None) };
    let Some(url) = server_url(&server) else { return Ok(None) };
    let trimmed = url.trim_end_matches('/');
    let document = root.pointer("/servers/0").and_then(server_url);
    if document.as_deref().map(|d| d.trim_end_matches('/')) == Some(trimmed) {
        return Ok(None);
    }
    match plain_url(&url) {
        Ok(()) => Ok(Some(trimmed.to_owned())),
        Err(None) => {
            Err("its own server is a relative URL; only absolute http(s) servers can be called".into())
        }
        Err(Some(reason)) => Err(format!("its own server URL cannot be called: {reason}")),
    }
}

/// The scheme the document's operations use unless they say otherwise: the first of the
/// global `security` requirement, else the first declared scheme. Its credential is the
/// domain's `auth`.
pub(crate) fn main_scheme(root: &Value) -> Option<&str> {
    let schemes = root.pointer("/components/securitySchemes").and_then(Value::as_object)?;
    let global = root
        .get("security")
        .and_then(Value::as_array)
        .and_then(|reqs| reqs.iter().find_map(|r| r.as_object()?.keys().next()))
        .filter(|name| schemes.contains_key(name.as_str()));
    global.map(String::as_str).or_else(|| schemes.keys().next().map(String::as_str))
}

/// The operation's own security: the schemes its `security` accepts, in order, when that is
/// not just the main scheme. `Ok(None)`: the domain's `auth`. `Ok(Some([]))`: no credential
/// (the operation requires none). `Err`: a requirement toolgate cannot meet (two schemes at
/// once, a scheme the document does not declare).
pub(crate) fn own_security(root: &Value, operation: &Value) -> Result<Option<Vec<String>>, String> {
    let Some(requirements) = operation.get("security").and_then(Value::as_array) else { return Ok(None) };
    let declared = root.pointer("/components/securitySchemes").and_then(Value::as_object);
    let mut schemes = Vec::new();
    let mut anonymous = requirements.is_empty();
    for requirement in requirements {
        let names: Vec<&String> = requirement.as_object().map(|o| o.keys().collect()).unwrap_or_default();
        match names.as_slice() {
            [] => anonymous = true,
            [name] => {
                if !declared.is_some_and(|d| d.contains_key(name.as_str())) {
                    return Err(format!(
                        "its security names scheme `{}`, which the document does not declare",
                        shown(name)
                    ));
                }
                schemes.push((*name).clone());
            }
            several => {
                // Every alternative needing two credentials at once: one is all a request carries.
                let list: Vec<&str> = several.iter().map(|n| shown(n)).collect();
                if requirements.len() == 1 {
                    return Err(format!(
                        "its security needs several credentials at once ({}); one is sent",
                        list.join(" and ")
                    ));
                }
            }
        }
    }
    if schemes.is_empty() {
        return if anonymous {
            Ok(Some(Vec::new()))
        } else {
            Err("no security alternative it offers can be met with one credential".into())
        };
    }
    if schemes.len() == 1 && main_scheme(root) == Some(schemes[0].as_str()) {
        return Ok(None);
    }
    Ok(Some(schemes))
}

/// How a query parameter's array is written, from its `style` and `explode`: `None` for
/// repeated keys (`form` exploded, the default) and for what is not an array; the
/// [`CollectionFormat`] that joins it for `form` without explode (comma-separated, Swagger
/// 2.0's default `csv`), `spaceDelimited` and `pipeDelimited`. An object in any style but
/// exploded `form`, and `deepObject`, is refused with the reason: it would reach the API as
/// another request.
pub(crate) fn check_style(param: &Value, root: &Value) -> Result<Option<CollectionFormat>, String> {
    if param.get("in").and_then(Value::as_str) != Some("query") {
        return Ok(None);
    }
    let mut schema = param.get("schema");
    // One reference deep is enough to see an array or object type.
    if let Some(r) = schema.and_then(|s| s.get("$ref")).and_then(Value::as_str) {
        schema = crate::schema::follow(root, r).ok();
    }
    let ty = schema.and_then(|s| s.get("type")).and_then(Value::as_str);
    if !matches!(ty, Some("array" | "object")) {
        return Ok(None);
    }
    let style = param.get("style").and_then(Value::as_str).unwrap_or("form");
    let explode = param.get("explode").and_then(Value::as_bool).unwrap_or(style == "form");
    let format = match (ty, style, explode) {
        (_, "form", true) => return Ok(None),
        (Some("array"), "form", false) => CollectionFormat::Csv,
        (Some("array"), "spaceDelimited", _) => CollectionFormat::Ssv,
        (Some("array"), "pipeDelimited", _) => CollectionFormat::Pipes,
        _ => {
            let name = param.get("name").and_then(Value::as_str).unwrap_or_default();
            return Err(format!(
                "its query parameter `{}` is an {} sent with style `{}`{}; an object is sent only as exploded `form` (its members as keys), an array also comma-, space- or pipe-separated",
                shown(name),
                ty.unwrap_or_default(),
                shown(style),
                if explode { "" } else { " without explode" }
            ));
        }
    };
    Ok(Some(format))
}
