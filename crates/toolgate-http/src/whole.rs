//! Bodies sent as one field's value ([`toolgate_schema::Route::body_field`]): a JSON array or
//! any other JSON value as JSON text, a binary body (`body_encoding = "binary"`) as the bytes
//! of its base64 text, a text body (`"text"`) as its text; a binary or text body at most
//! [`crate::HttpOptions::max_upload_bytes`].

use std::fmt;

use serde_json::{Map, Value};
use toolgate_core::FieldError;
use toolgate_core::params::pointer;
use toolgate_schema::{BodyEncoding, Route};

use crate::multipart::decode;

/// The bytes of a body sent as one field's value.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct WholeBody {
    /// Its `Content-Type`.
    pub(crate) content_type: String,
    /// The body.
    pub(crate) bytes: Vec<u8>,
}

impl fmt::Debug for WholeBody {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The bytes may be the caller's file: their size only.
        write!(f, "WholeBody {{ content_type: {:?}, bytes: {} }}", self.content_type, self.bytes.len())
    }
}

/// The body of a route with a `body_field` (`name`) from the body fields given, by the names
/// the model uses; or why it cannot be sent: the field missing, a binary body that is not
/// base64 text, a text body that is not a string, either over `limit` bytes (once decoded).
pub(crate) fn whole_body(
    route: &Route,
    name: &str,
    body: &Map<String, Value>,
    limit: usize,
) -> Result<WholeBody, FieldError> {
    let content_type = route.content_type_header().to_owned();
    let Some(value) = body.get(name) else {
        return Err(FieldError::new(
            pointer(name),
            "a value",
            &Value::Null,
            format!("`{name}` is missing: it is the request body, give it"),
        ));
    };
    let bytes = match (route.body_encoding, value.as_str()) {
        (BodyEncoding::Binary, text) => text.and_then(decode).ok_or_else(|| {
            FieldError::new(
                pointer(name),
                "the body's bytes as base64 text",
                value,
                format!(
                    "`{name}` is the request body's bytes: give them base64-encoded (e.g. \"aGVsbG8=\" for `hello`)"
                ),
            )
        })?,
        (BodyEncoding::Text, Some(text)) => text.as_bytes().to_vec(),
        (BodyEncoding::Text, None) => {
            return Err(FieldError::new(
                pointer(name),
                "a string",
                value,
                format!("`{name}` is the request body's text: give it as a string"),
            ));
        }
        _ => {
            let bytes = serde_json::to_vec(value).expect("a JSON value serializes");
            return Ok(WholeBody { content_type, bytes });
        }
    };
    if bytes.len() > limit {
        let size = bytes.len();
        return Err(FieldError::new(
            pointer(name),
            format!("at most {limit} bytes (once decoded)"),
            &Value::from(size),
            format!(
                "`{name}` is {size} bytes (once decoded), over this domain's upload limit of {limit} bytes; nothing was sent. Send a smaller one"
            ),
        ));
    }
    Ok(WholeBody { content_type, bytes })
}
