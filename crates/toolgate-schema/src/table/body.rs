//! How a write sends its body: whether it sends one ([`Body`]) and in which encoding
//! ([`BodyEncoding`]), and the rules a multipart route's fields keep.

use serde::{Deserialize, Serialize};

use super::field::{FieldType, Items, Location};
use super::{Method, Route};

/// Whether a write sends a JSON body (route key `body`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Body {
    /// Always: the body fields given, `{}` when none is.
    #[default]
    Required,
    /// Only when the caller gives at least one body field; then every body field marked
    /// `required` must be given too (they are required of the body, not of the call).
    Optional,
    /// Never: the operation takes no body, and its fields without `in` go into the query.
    None,
}

impl Body {
    pub(super) fn is_required(&self) -> bool {
        *self == Body::Required
    }
}

/// How a write encodes its body (route key `body_encoding`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BodyEncoding {
    /// A JSON object, `Content-Type: application/json`.
    #[default]
    Json,
    /// `application/x-www-form-urlencoded` key/value pairs under the fields' wire names:
    /// scalars and arrays of scalars (repeated keys) only.
    Form,
    /// `multipart/form-data` (RFC 7578), one part per body field under its wire name: a
    /// scalar as text, an object as JSON text (`Content-Type: application/json`), an array as
    /// one part per item, `null` left out; a field with `content_encoding = "base64"` (or an
    /// array of such) is a file: the model gives its content as base64 text, which is decoded
    /// and sent as a file part (`application/octet-stream`, the file name the field's name).
    Multipart,
    /// The raw bytes of the route's [`Route::body_field`] (`application/octet-stream`, or the
    /// route's [`Route::content_type`], e.g. `image/png`): the model gives them as base64 text
    /// (the field is a string with `content_encoding = "base64"`), which is decoded and sent
    /// as the whole body (Box's upload-session chunks, Petstore 2.0's image uploads).
    Binary,
    /// The text of the route's [`Route::body_field`] (a string, sent as it is given, UTF-8)
    /// under the route's [`Route::content_type`] (default `text/plain`): a body the document
    /// declares as a string in another media type (Spotify's playlist cover, base64 text as
    /// `image/jpeg`; a `text/csv` upload).
    Text,
}

impl BodyEncoding {
    /// `"json"`, `"form"`, `"multipart"`, `"binary"` or `"text"`.
    pub fn as_str(self) -> &'static str {
        match self {
            BodyEncoding::Json => "json",
            BodyEncoding::Form => "form",
            BodyEncoding::Multipart => "multipart",
            BodyEncoding::Binary => "binary",
            BodyEncoding::Text => "text",
        }
    }

    /// The `Content-Type` a body in this encoding is sent with (a multipart one adds its
    /// `boundary` parameter).
    pub fn content_type(self) -> &'static str {
        match self {
            BodyEncoding::Json => "application/json",
            BodyEncoding::Form => "application/x-www-form-urlencoded",
            BodyEncoding::Multipart => "multipart/form-data",
            BodyEncoding::Binary => "application/octet-stream",
            BodyEncoding::Text => "text/plain",
        }
    }

    pub(super) fn is_json(&self) -> bool {
        *self == BodyEncoding::Json
    }
}

impl Items {
    /// Whether a value of this shape is a file given as base64 text: a string with
    /// `content_encoding = "base64"` (see [`Items::content_encoding`]).
    pub fn is_base64_file(&self) -> bool {
        self.ty == FieldType::String && self.content_encoding.as_deref() == Some("base64")
    }
}

/// `content_encoding` anywhere in a route's fields: `"base64"` on a string only.
pub(super) fn check_content_encoding(route: &Route, at: &str, problems: &mut Vec<String>) {
    fn walk(shape: &Items, name: &str, at: &str, problems: &mut Vec<String>) {
        if let Some(encoding) = &shape.content_encoding {
            if encoding != "base64" {
                problems.push(format!(
                    "{at}: field `{name}` has `content_encoding = {encoding:?}`; only \"base64\" is taken"
                ));
            } else if shape.ty != FieldType::String {
                problems.push(format!(
                    "{at}: field `{name}` has `content_encoding` but is of type {}; base64 text is a string",
                    shape.ty.as_str()
                ));
            }
        }
        let inner = shape.items.as_deref().into_iter().chain(shape.values.as_deref());
        for child in inner.chain(&shape.one_of).chain(&shape.any_of) {
            walk(child, name, at, problems);
        }
        for field in &shape.fields {
            walk(field, &format!("{name}.{}", field.name), at, problems);
        }
    }
    for field in &route.fields {
        walk(field, &field.name, at, problems);
    }
}

/// A multipart route (`body_encoding = "multipart"`): a write that sends a body. Its files
/// are the body fields given as base64 text (a string, or an array of strings, with
/// `content_encoding = "base64"`); any other body field is a text part.
pub(super) fn check_multipart(route: &Route, at: &str, problems: &mut Vec<String>) {
    let writes = matches!(route.method, Method::Post | Method::Put | Method::Patch);
    if !writes || route.body == Body::None {
        problems.push(format!(
            "{at}: `body_encoding = \"multipart\"` applies to a POST, PUT or PATCH that sends a body; this {} sends none, remove `body_encoding`",
            if writes { "route with `body = \"none\"`" } else { route.method.as_str() }
        ));
        return;
    }
    for field in route.fields.iter().filter(|f| route.location(&f.name) == Location::Body) {
        // A file inside an object or a union could not be sent as a part of its own.
        let nested_file = |shape: &Items| {
            shape.fields.iter().any(|f| f.is_base64_file())
                || shape.one_of.iter().chain(&shape.any_of).any(Items::is_base64_file)
        };
        if nested_file(&field.shape) || field.items.as_deref().is_some_and(nested_file) {
            problems.push(format!(
                "{at}: body field `{}` holds a file (`content_encoding`) inside an object or a union; a multipart body sends a file as a part of its own, give it as a field",
                field.name
            ));
        }
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
    fn a_multipart_route_publishes_its_files_as_base64_text_and_round_trips() {
        let t = table(
            r#"
[[routes]]
op = "upload"
method = "POST"
path = "/files"
summary = "Upload a file"
body_encoding = "multipart"
fields = [
  { name = "file", type = "string", content_encoding = "base64", required = true },
  { name = "images", type = "array", items = { type = "string", content_encoding = "base64" } },
  { name = "purpose", type = "string", enum = ["batch"] },
  { name = "attributes", type = "object", fields = [{ name = "name", type = "string" }] },
]
"#,
        )
        .unwrap();
        let route = &t.routes[0];
        assert_eq!(route.body_encoding, BodyEncoding::Multipart);
        assert_eq!(route.body_encoding.as_str(), "multipart");
        assert_eq!(route.body_encoding.content_type(), "multipart/form-data");
        assert!(route.fields[0].is_base64_file());
        assert!(route.fields[1].items.as_deref().unwrap().is_base64_file());
        assert!(!route.fields[2].is_base64_file());
        let schema = t.schema();
        let props = &schema["oneOf"][0]["properties"];
        assert_eq!(props["file"], json!({"type": "string", "contentEncoding": "base64"}));
        assert_eq!(props["images"]["items"], json!({"type": "string", "contentEncoding": "base64"}));
        assert_eq!(schema["oneOf"][0]["required"], json!(["op", "file"]));
        let text = toml::to_string(&t).unwrap();
        assert!(
            text.contains("body_encoding = \"multipart\"") && text.contains("content_encoding = \"base64\"")
        );
        assert_eq!(RouteTable::from_toml_str(&text).unwrap(), t);
    }

    #[test]
    fn content_encodings_other_than_base64_strings_and_multipart_without_a_body_are_refused() {
        let err = table(
            r#"
[[routes]]
op = "a"
method = "POST"
path = "/a"
summary = "s"
body_encoding = "multipart"
fields = [
  { name = "hex", type = "string", content_encoding = "base16" },
  { name = "n", type = "integer", content_encoding = "base64" },
  { name = "meta", type = "object", fields = [{ name = "pic", type = "string", content_encoding = "base64" }] },
]
[[routes]]
op = "b"
method = "GET"
path = "/b"
summary = "s"
body_encoding = "multipart"
[[routes]]
op = "c"
method = "POST"
path = "/c"
summary = "s"
body = "none"
body_encoding = "multipart"
"#,
        )
        .unwrap_err()
        .to_string();
        for expected in [
            "routes[0] (op `a`): field `hex` has `content_encoding = \"base16\"`; only \"base64\" is taken",
            "field `n` has `content_encoding` but is of type integer",
            "body field `meta` holds a file (`content_encoding`) inside an object or a union",
            "routes[1] (op `b`): `body_encoding = \"multipart\"` applies to a POST, PUT or PATCH that sends a body; this GET sends none",
            "routes[2] (op `c`): `body_encoding = \"multipart\"` applies to a POST, PUT or PATCH that sends a body; this route with `body = \"none\"` sends none",
        ] {
            assert!(err.contains(expected), "{expected}: {err}");
        }
    }
}
