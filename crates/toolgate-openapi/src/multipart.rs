//! `multipart/form-data` request bodies (file uploads) as routes with
//! `body_encoding = "multipart"`: a `format: binary` string (3.0), or one with a
//! `contentEncoding` or `contentMediaType` (3.1), is a file the model gives as base64 text
//! (`content_encoding = "base64"`); the other members are text parts, objects JSON parts.

use serde_json::Value;
use toolgate_schema::{Field, FieldType, Items};

/// What a file field's description says, before the document's own text.
const FILE_NOTE: &str = "A file: give its bytes base64-encoded (decoded and uploaded as a file part; at most the domain's upload limit, 1 MiB unless set).";

/// Whether `schema` (a member of a multipart body, or its items) is a file.
pub(crate) fn is_file(schema: &Value) -> bool {
    let string = match schema.get("type") {
        Some(Value::String(t)) => t == "string",
        Some(Value::Array(types)) => types.iter().any(|t| t == "string"),
        _ => false,
    };
    string
        && (schema.get("format").and_then(Value::as_str) == Some("binary")
            || schema.get("contentEncoding").is_some()
            || schema.get("contentMediaType").is_some())
}

fn mark(shape: &mut Items) {
    shape.content_encoding = Some("base64".to_owned());
    shape.format = None;
    shape.pattern = None;
    // Limits of the file's bytes are not limits of its base64 text.
    shape.min_length = None;
    shape.max_length = None;
}

/// Make `field` (from the multipart body member `schema`) a file, or an array of files, when
/// the document says it is binary; then check that what the executor sends for it is what
/// the document's `encoding` entry for it asks. `media` is the body's media type object.
pub(crate) fn file_field(field: &mut Field, schema: &Value, media: &Value) -> Result<(), String> {
    let name = field.name.clone();
    let file = if is_file(schema) && field.ty == FieldType::String {
        mark(&mut field.shape);
        true
    } else if let (Some(items), Some(item_schema)) = (field.shape.items.as_deref_mut(), schema.get("items")) {
        let file = is_file(item_schema) && items.ty == FieldType::String;
        if file {
            mark(items);
        }
        file
    } else {
        false
    };
    if file {
        field.shape.description = Some(match field.shape.description.take() {
            Some(d) if !d.is_empty() => format!("{FILE_NOTE} {d}"),
            _ => FILE_NOTE.to_owned(),
        });
    }
    let Some(encoding) = media.get("encoding").and_then(|e| e.get(name.as_str())) else { return Ok(()) };
    if encoding.get("headers").and_then(Value::as_object).is_some_and(|h| !h.is_empty()) {
        return Err(format!("its multipart part `{name}` needs headers of its own (`encoding.headers`)"));
    }
    // What the executor sends: a file as application/octet-stream, an object as JSON, text
    // as text/plain; any of the document's types (`image/png, image/jpeg`) is taken for a file.
    let Some(types) = encoding.get("contentType").and_then(Value::as_str) else { return Ok(()) };
    let structured = |ty: FieldType| matches!(ty, FieldType::Object | FieldType::Array | FieldType::Any);
    let sent = if file {
        None
    } else if structured(field.items.as_deref().map_or(field.ty, |i| i.ty)) {
        Some("application/json")
    } else {
        Some("text/plain")
    };
    let fits = types
        .split(',')
        .map(|t| t.split(';').next().unwrap_or_default().trim().to_ascii_lowercase())
        .any(|t| match sent {
            None => true,
            Some(sent) => t == sent || t == "*/*" || (sent == "text/plain" && t == "text/*"),
        });
    if fits {
        Ok(())
    } else {
        Err(format!(
            "its multipart part `{name}` is to be sent as {types} (parts are sent as text, JSON or files)"
        ))
    }
}
