//! [`Prepared`]: the request an operation makes with its parameters, built before any I/O:
//! the path filled percent-encoded, each field placed in the query, a header or the body, and
//! the body encoded as JSON or as form pairs.

use reqwest::Url;
use serde_json::{Map, Value};
use toolgate_core::params::pointer;
use toolgate_core::{FieldError, ToolError};
use toolgate_schema::{Body, BodyEncoding, Location, Method, OP_FIELD, Route};

use crate::HttpExecutor;
use crate::encode::{encode_component, fill_path, form_body, query_string, scalar_text};
use crate::multipart::{MultipartBody, multipart_body};
use crate::whole::{WholeBody, whole_body};
use crate::wire::sent_value;

/// A request ready to send: what [`HttpExecutor`] derives from an operation and its parameters
/// before any I/O.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Prepared {
    /// The HTTP method.
    pub method: Method,
    /// The full URL: base URL, encoded path and, for GET and DELETE, the query string.
    pub url: Url,
    /// The encoded path as filled from the template (without the base URL's own path and
    /// without the query), as reported in results.
    pub path: String,
    /// The headers of the fields with `in = "header"`, by the name the backend knows (`wire_name`).
    pub headers: Vec<(String, String)>,
    /// The `Accept` header: the media types the operation documents, JSON first
    /// ([`Route::accept_header`]).
    pub accept: String,
    /// The JSON body of POST, PUT and PATCH, and of a DELETE with `in = "body"` fields: the
    /// fields that go in the body ([`Route::location`]); `None` when the route sends none
    /// (`body = "none"`, `body = "optional"` and no body field given, or a DELETE without body
    /// fields), and then no `Content-Type` either.
    /// Its keys are the names sent ([`Route::wire_name`]).
    pub body: Option<Map<String, Value>>,
    /// How [`Prepared::body`] is sent ([`Route::body_encoding`]): a JSON object,
    /// `application/x-www-form-urlencoded` pairs (arrays as repeated keys),
    /// `multipart/form-data` parts (the files, given base64 in [`Prepared::body`], decoded), or
    /// a binary body's bytes ([`Prepared::whole_body`]).
    pub body_encoding: BodyEncoding,
    /// The encoded multipart body of a multipart route.
    multipart: Option<MultipartBody>,
    /// The body of a route with a `body_field`: that field's value as sent.
    whole: Option<WholeBody>,
    /// The `Content-Type` of a JSON body ([`Route::content_type_header`]).
    json_type: String,
}

impl Prepared {
    /// The encoded `multipart/form-data` body of a multipart route that sends a body: its
    /// `Content-Type` (with the boundary) and its bytes, the files decoded.
    pub fn multipart(&self) -> Option<(String, &[u8])> {
        self.multipart.as_ref().map(|m| (m.content_type(), m.bytes.as_slice()))
    }

    /// The body of a route that sends one field's value as its body ([`Route::body_field`]):
    /// its `Content-Type` and bytes (a JSON value as JSON text, a binary body's base64 text
    /// decoded). [`Prepared::body`] holds that one field.
    pub fn whole_body(&self) -> Option<(&str, &[u8])> {
        self.whole.as_ref().map(|w| (w.content_type.as_str(), w.bytes.as_slice()))
    }
}

impl HttpExecutor {
    /// The request an operation makes with these parameters, without sending it. Parameters
    /// that are not an object, or miss a path variable, are `INVALID_PARAMS`.
    pub fn prepare(&self, route: &Route, params: &Value) -> Result<Prepared, ToolError> {
        let Some(map) = params.as_object() else {
            return Err(ToolError::invalid_params(vec![FieldError::new(
                "",
                "an object",
                params,
                "parameters must be a JSON object",
            )]));
        };
        let path = fill_path(route.path_template(), map)?;
        let mut query = Vec::new();
        // Joined arrays (`collection_format`), already encoded: their separators stay literal.
        let mut joined_query: Vec<(String, String)> = Vec::new();
        let mut headers = Vec::new();
        let mut body = Map::new();
        let mut errors = Vec::new();
        for (key, value) in map.iter().filter(|(k, _)| k.as_str() != OP_FIELD) {
            match route.location(key) {
                Location::Path => {}
                // An object's members under the names the backend knows (`wire_name`).
                Location::Query => match joined(route, key, value) {
                    Some(text) => joined_query.push((encode_component(route.wire_name(key)), text)),
                    None => query.push((route.wire_name(key), sent_value(route, key, value))),
                },
                Location::Body => {
                    body.insert(key.clone(), sent_value(route, key, value));
                }
                Location::Header if value.is_null() => {}
                Location::Header => match header_text(value) {
                    Some(text) if reqwest::header::HeaderValue::from_str(&text).is_ok() => {
                        headers.push((route.wire_name(key).to_owned(), text));
                    }
                    _ => errors.push(FieldError::new(
                        pointer(key),
                        "a string, number or boolean (or an array of them) without line breaks or control characters",
                        value,
                        format!("`{key}` is sent as a request header; give one line of text"),
                    )),
                },
            }
        }
        let body = match (route.method, route.body) {
            (Method::Get, _) | (_, Body::None) => None,
            // A DELETE's body is its `in = "body"` fields (DigitalOcean's DELETE
            // /v2/kubernetes/clusters/{id}/destroy_with_associated_resources/selective), sent as
            // a write's by `body`; a DELETE without such fields sends none.
            (Method::Delete, Body::Required)
                if !route.fields.iter().any(|f| route.location(&f.name) == Location::Body) =>
            {
                None
            }
            (_, Body::Optional) if body.is_empty() => None,
            (_, Body::Optional) => {
                let missing: Vec<&str> = route
                    .fields
                    .iter()
                    .filter(|f| f.required && route.location(&f.name) == Location::Body)
                    .map(|f| f.name.as_str())
                    .filter(|name| !body.contains_key(*name))
                    .collect();
                let given: Vec<&str> = body.keys().map(String::as_str).collect();
                for name in &missing {
                    errors.push(FieldError::new(
                        pointer(name),
                        "a value (required once any body field is given)",
                        &Value::Null,
                        format!(
                            "`{name}` is missing: the request body is sent because {} given, and the body needs {}; give them, or leave out every body field",
                            given.iter().map(|g| format!("`{g}`")).collect::<Vec<_>>().join(", ") + if given.len() == 1 { " is" } else { " are" },
                            missing.iter().map(|m| format!("`{m}`")).collect::<Vec<_>>().join(", ")
                        ),
                    ));
                }
                Some(body)
            }
            (_, Body::Required) => Some(body),
        };
        // A multipart body is encoded here, its files decoded and their size checked, so that a
        // bad file is refused before anything is sent.
        let multipart = match (&body, route.body_encoding) {
            (Some(fields), BodyEncoding::Multipart) => {
                match multipart_body(route, fields, self.options().max_upload_bytes) {
                    Ok(encoded) => Some(encoded),
                    Err(problems) => {
                        errors.extend(problems);
                        None
                    }
                }
            }
            _ => None,
        };
        // A body that is one field's value (an array, a free-form object, a binary body's
        // bytes), decoded and its size checked here too.
        let whole = match (&body, route.body_field.as_deref()) {
            (Some(fields), Some(name)) => {
                match whole_body(route, name, fields, self.options().max_upload_bytes) {
                    Ok(whole) => Some(whole),
                    Err(problem) => {
                        errors.push(problem);
                        None
                    }
                }
            }
            _ => None,
        };
        // The body under the names the backend knows (`wire_name`), checked under the model's.
        let body = body.map(|b| b.into_iter().map(|(k, v)| (route.wire_name(&k).to_owned(), v)).collect());
        if !errors.is_empty() {
            return Err(ToolError::invalid_params(errors));
        }
        // The route's fixed query (`/assistants?beta=true`) first, then the query fields.
        let fixed = route.fixed_query();
        let fixed = fixed.iter().map(|(k, v)| (k.as_str(), Value::from(v.as_str())));
        let mut query = query_string(fixed.chain(query));
        for (key, text) in joined_query {
            if !query.is_empty() {
                query.push('&');
            }
            query.push_str(&format!("{key}={text}"));
        }
        let base = self.base_for(route);
        let base_path = base.path().trim_end_matches('/');
        let full_path = format!("{base_path}{path}");
        let mut url = base.clone();
        url.set_path(&full_path);
        url.set_query((!query.is_empty()).then_some(query.as_str()));
        // Belt and braces: the URL must hold exactly the path we built (no dot segment or
        // other normalization slipped through).
        if url.path() != full_path {
            return Err(ToolError::invalid_params(vec![FieldError::new(
                "",
                "path values that stay within their segment",
                &Value::Null,
                "a path parameter would change the request path; give the value itself",
            )]));
        }
        Ok(Prepared {
            method: route.method,
            url,
            path,
            headers,
            accept: route.accept_header(),
            body,
            body_encoding: route.body_encoding,
            multipart,
            whole,
            json_type: route.content_type_header().to_owned(),
        })
    }
}

/// `request` with the body of a prepared request, if it has one, encoded as its
/// `body_encoding` says: a JSON object, `application/x-www-form-urlencoded` pairs, or the
/// multipart body encoded by [`HttpExecutor::prepare`], each with its `Content-Type`; a route
/// with a `body_field` sends that field's value (JSON text, or a binary body's bytes).
pub(crate) fn with_body(request: reqwest::RequestBuilder, prepared: &Prepared) -> reqwest::RequestBuilder {
    use reqwest::header::CONTENT_TYPE;
    if prepared.body.is_some()
        && let Some(whole) = &prepared.whole
    {
        return request.header(CONTENT_TYPE, whole.content_type.as_str()).body(whole.bytes.clone());
    }
    match (prepared.body.as_ref(), prepared.body_encoding) {
        (None, _) => request,
        // Only ever with a `body_field` (the table's check), sent above.
        (Some(_), BodyEncoding::Binary | BodyEncoding::Text) => request,
        (Some(body), BodyEncoding::Json) if prepared.json_type != BodyEncoding::Json.content_type() => {
            request
                .header(CONTENT_TYPE, prepared.json_type.as_str())
                .body(serde_json::to_vec(body).expect("a JSON object serializes"))
        }
        (Some(body), BodyEncoding::Json) => request.json(body),
        (Some(body), BodyEncoding::Form) => request
            .header(reqwest::header::CONTENT_TYPE, BodyEncoding::Form.content_type())
            .body(form_body(body)),
        (Some(_), BodyEncoding::Multipart) => match &prepared.multipart {
            Some(encoded) => request
                .header(reqwest::header::CONTENT_TYPE, encoded.content_type())
                .body(encoded.bytes.clone()),
            None => request,
        },
    }
}

/// A query array whose field says how to join it ([`toolgate_schema::CollectionFormat`]): its
/// items as text, each percent-encoded, joined by the separator as OpenAPI writes it (`a,b`,
/// `a%20b`, `a|b` as `a%7Cb`); `None` for any other field or value (sent as given: repeated
/// keys, a null left out).
/// A header's text: a scalar as it is, an array of scalars comma-separated (OpenAPI's
/// `simple` style, `a,b`); `None` for anything else.
fn header_text(value: &Value) -> Option<String> {
    match value {
        Value::Array(items) => items.iter().map(scalar_text).collect::<Option<Vec<_>>>().map(|t| t.join(",")),
        other => scalar_text(other),
    }
}

fn joined(route: &Route, name: &str, value: &Value) -> Option<String> {
    let separator = route
        .fields
        .iter()
        .find(|f| f.name == name)
        .and_then(|f| f.shape.collection_format)
        .and_then(toolgate_schema::CollectionFormat::separator)?;
    let items = value.as_array()?;
    let separator = match separator {
        ',' => ",".to_owned(),
        other => encode_component(&other.to_string()),
    };
    Some(
        items
            .iter()
            .filter_map(scalar_text)
            .map(|t| encode_component(&t))
            .collect::<Vec<_>>()
            .join(&separator),
    )
}
