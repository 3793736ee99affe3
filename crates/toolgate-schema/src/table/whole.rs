//! A route whose body is one field's value ([`Route::body_field`]: a JSON array, a free-form
//! object, the bytes of a binary body) and the `Content-Type` a body is sent with
//! ([`Route::content_type`]): the rules they keep.

use super::field::{FieldType, Location};
use super::{Body, BodyEncoding, Method, Route};

/// Whether `media` is a media type `type/subtype` a request can be sent with: tokens, no
/// wildcard, no parameters.
fn is_media_type(media: &str) -> bool {
    let token =
        |x: &str| !x.is_empty() && x.bytes().all(|b| b.is_ascii_alphanumeric() || b"!#$&-^_.+".contains(&b));
    media.split_once('/').is_some_and(|(t, s)| token(t) && token(s))
}

/// Whether `media` is a JSON media type: `application/json` or a `+json` one.
fn is_json(media: &str) -> bool {
    let media = media.to_ascii_lowercase();
    media == "application/json" || media.ends_with("+json")
}

/// `body_field`, `body_encoding = "binary"` and `content_type` of one route.
pub(super) fn check_whole_body(route: &Route, at: &str, problems: &mut Vec<String>) {
    let writes = matches!(route.method, Method::Post | Method::Put | Method::Patch);
    // A DELETE sends a body only of `in = "body"` fields, which a `body_field` is then.
    let sends_body = route.body != Body::None && (writes || route.method == Method::Delete);
    let binary = route.body_encoding == BodyEncoding::Binary;
    let text = route.body_encoding == BodyEncoding::Text;
    if (binary || text) && !(writes && route.body != Body::None) {
        problems.push(format!(
            "{at}: `body_encoding = \"{}\"` applies to a POST, PUT or PATCH that sends a body; this {} sends none, remove `body_encoding`",
            route.body_encoding.as_str(),
            if writes { "route with `body = \"none\"`" } else { route.method.as_str() }
        ));
    }
    if let Some(media) = &route.content_type {
        if !is_media_type(media) {
            problems.push(format!(
                "{at}: `content_type = {media:?}` is not a media type `type/subtype` (without wildcards or parameters)"
            ));
        }
        match route.body_encoding {
            BodyEncoding::Json if !is_json(media) => problems.push(format!(
                "{at}: `content_type = {media:?}` is not a JSON type (`application/json`, `*+json`), and the body is sent as JSON; use `body_encoding = \"binary\"` to send other bytes"
            )),
            BodyEncoding::Form | BodyEncoding::Multipart => problems.push(format!(
                "{at}: `content_type` applies to JSON and binary bodies; a `body_encoding = \"{}\"` body is sent as {}",
                route.body_encoding.as_str(),
                route.body_encoding.content_type()
            )),
            _ => {}
        }
        if !sends_body {
            problems.push(format!("{at}: `content_type` is set but the route sends no body; remove it"));
        }
    }
    let Some(name) = &route.body_field else {
        if binary {
            problems.push(format!(
                "{at}: `body_encoding = \"binary\"` sends the bytes of one field; name it with `body_field` (a string with `content_encoding = \"base64\"`)"
            ));
        }
        if text {
            problems.push(format!(
                "{at}: `body_encoding = \"text\"` sends the text of one field; name it with `body_field` (a string)"
            ));
        }
        return;
    };
    if matches!(route.body_encoding, BodyEncoding::Form | BodyEncoding::Multipart) {
        problems.push(format!(
            "{at}: `body_field` applies to JSON and binary bodies; a `body_encoding = \"{}\"` body is made of its fields, remove `body_field`",
            route.body_encoding.as_str()
        ));
    }
    let Some(field) = route.fields.iter().find(|f| f.name == *name) else {
        problems.push(format!("{at}: `body_field = {name:?}` names no field of the route; declare it"));
        return;
    };
    if !sends_body || route.location(name) != Location::Body {
        problems.push(format!(
            "{at}: `body_field = {name:?}` is not sent in the body (it goes in the {}); a route that sends its body as one field's value is a POST, PUT or PATCH with a body, or a DELETE whose field has `in = \"body\"`",
            route.location(name).as_str()
        ));
    }
    let others: Vec<&str> = route
        .fields
        .iter()
        .filter(|f| f.name != *name && route.location(&f.name) == Location::Body)
        .map(|f| f.name.as_str())
        .collect();
    if !others.is_empty() {
        problems.push(format!(
            "{at}: `body_field = {name:?}` is the whole body, yet {} would go in the body too; give {} `in = \"query\"` or `in = \"header\"`, or remove `body_field`",
            others.iter().map(|o| format!("`{o}`")).collect::<Vec<_>>().join(", "),
            if others.len() == 1 { "it" } else { "them" }
        ));
    }
    if route.body == Body::Required && !field.required {
        problems.push(format!(
            "{at}: `body_field = {name:?}` is the body, which the route always sends (`body = \"required\"`); mark the field `required = true`, or set `body = \"optional\"`"
        ));
    }
    if text && (field.ty != FieldType::String || field.content_encoding.is_some() || field.nullable) {
        problems.push(format!(
            "{at}: `body_field = {name:?}` of a text body must be a string without `content_encoding` (not nullable): it is sent as it is given"
        ));
    }
    if binary && (!field.is_base64_file() || field.nullable) {
        problems.push(format!(
            "{at}: `body_field = {name:?}` of a binary body must be a string with `content_encoding = \"base64\"` (not nullable): the model gives the bytes as base64 text"
        ));
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::RouteTable;
    use super::*;

    fn table(routes: &str) -> crate::Result<RouteTable> {
        super::super::tests::table_of("update_x", routes)
    }

    #[test]
    fn a_whole_body_field_and_a_binary_body_publish_their_shapes_and_round_trip() {
        let t = table(
            r#"
[[routes]]
op = "create_users"
method = "POST"
path = "/user/createWithList"
summary = "Create users"
body_field = "users"
fields = [
  { name = "users", type = "array", required = true, items = { type = "object", fields = [{ name = "id", type = "integer" }] } },
]
[[routes]]
op = "patch_meta"
method = "PUT"
path = "/meta/{id}"
summary = "Patch"
body = "optional"
body_field = "body"
content_type = "application/json-patch+json"
fields = [{ name = "id", type = "string" }, { name = "body", type = "object", values = { type = "any" } }]
[[routes]]
op = "upload"
method = "PUT"
path = "/chunks/{id}"
summary = "Upload a chunk"
body_encoding = "binary"
body_field = "content"
content_type = "image/png"
fields = [
  { name = "id", type = "string" },
  { name = "content", type = "string", content_encoding = "base64", required = true },
  { name = "digest", type = "string", in = "header", wire_name = "Digest" },
]
[[routes]]
op = "set_cover"
method = "PUT"
path = "/covers/{id}"
summary = "A cover, base64 text as image/jpeg"
body_encoding = "text"
body_field = "image"
content_type = "image/jpeg"
fields = [{ name = "id", type = "string" }, { name = "image", type = "string", required = true }]
"#,
        )
        .unwrap();
        let [users, meta, upload, cover] = &t.routes[..] else { panic!() };
        assert_eq!((cover.body_encoding.as_str(), cover.content_type_header()), ("text", "image/jpeg"));
        assert_eq!(users.body_field.as_deref(), Some("users"));
        assert_eq!(users.content_type_header(), "application/json");
        assert_eq!(meta.content_type_header(), "application/json-patch+json");
        assert_eq!(upload.body_encoding, BodyEncoding::Binary);
        assert_eq!(upload.body_encoding.as_str(), "binary");
        assert_eq!(upload.content_type_header(), "image/png");
        let schema = t.schema();
        assert_eq!(schema["oneOf"][0]["required"], json!(["op", "users"]));
        assert_eq!(schema["oneOf"][0]["properties"]["users"]["type"], "array");
        assert_eq!(
            schema["oneOf"][2]["properties"]["content"],
            json!({"type": "string", "contentEncoding": "base64"})
        );
        let text = toml::to_string(&t).unwrap();
        for key in ["body_field = \"users\"", "content_type = \"image/png\"", "body_encoding = \"binary\""] {
            assert!(text.contains(key), "{key}: {text}");
        }
        assert_eq!(RouteTable::from_toml_str(&text).unwrap(), t);
    }

    #[test]
    fn whole_bodies_and_content_types_that_cannot_be_sent_are_refused_with_their_fix() {
        let err = table(
            r#"
[[routes]]
op = "a"
method = "POST"
path = "/a"
summary = "s"
body_field = "missing"
[[routes]]
op = "b"
method = "POST"
path = "/b"
summary = "s"
body_field = "items"
fields = [{ name = "items", type = "array", items = { type = "string" } }, { name = "extra", type = "string" }]
[[routes]]
op = "c"
method = "PUT"
path = "/c"
summary = "s"
body_encoding = "binary"
fields = [{ name = "content", type = "string", content_encoding = "base64", required = true }]
[[routes]]
op = "d"
method = "PUT"
path = "/d"
summary = "s"
body_encoding = "binary"
body_field = "content"
content_type = "image/*"
fields = [{ name = "content", type = "string", required = true }]
[[routes]]
op = "e"
method = "POST"
path = "/e"
summary = "s"
content_type = "text/plain"
[[routes]]
op = "f"
method = "POST"
path = "/f"
summary = "s"
body_encoding = "form"
body_field = "n"
content_type = "application/json"
fields = [{ name = "n", type = "string", required = true }]
[[routes]]
op = "h"
method = "PUT"
path = "/h"
summary = "s"
body_encoding = "text"
body_field = "n"
fields = [{ name = "n", type = "integer", required = true }]
[[routes]]
op = "g"
method = "POST"
path = "/g"
summary = "s"
body = "none"
body_encoding = "binary"
body_field = "content"
fields = [{ name = "content", type = "string", content_encoding = "base64" }]
"#,
        )
        .unwrap_err()
        .to_string();
        for expected in [
            "routes[0] (op `a`): `body_field = \"missing\"` names no field of the route; declare it",
            "routes[1] (op `b`): `body_field = \"items\"` is the whole body, yet `extra` would go in the body too",
            "routes[1] (op `b`): `body_field = \"items\"` is the body, which the route always sends (`body = \"required\"`); mark the field `required = true`",
            "routes[2] (op `c`): `body_encoding = \"binary\"` sends the bytes of one field; name it with `body_field`",
            "routes[3] (op `d`): `content_type = \"image/*\"` is not a media type",
            "routes[3] (op `d`): `body_field = \"content\"` of a binary body must be a string with `content_encoding = \"base64\"`",
            "routes[4] (op `e`): `content_type = \"text/plain\"` is not a JSON type",
            "routes[5] (op `f`): `content_type` applies to JSON and binary bodies; a `body_encoding = \"form\"` body is sent as application/x-www-form-urlencoded",
            "routes[5] (op `f`): `body_field` applies to JSON and binary bodies",
            "routes[6] (op `h`): `body_field = \"n\"` of a text body must be a string without `content_encoding`",
            "routes[7] (op `g`): `body_encoding = \"binary\"` applies to a POST, PUT or PATCH that sends a body; this route with `body = \"none\"` sends none",
            "routes[7] (op `g`): `body_field = \"content\"` is not sent in the body (it goes in the query)",
        ] {
            assert!(err.contains(expected), "{expected}: {err}");
        }
    }
}
