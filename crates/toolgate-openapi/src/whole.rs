//! Request bodies that are not an object of declared members, as one field whose value is the
//! whole body (route key `body_field`): a JSON array (Petstore's `POST /user/createWithList`,
//! `[User, ...]`) as a field named for its items (`users`), any other JSON body (a free-form
//! object, Box's metadata instances) as `body`, and a raw binary body (`application/octet-stream`,
//! `image/png`: Box's upload-session chunks) as `content`, base64 text the executor decodes
//! and sends with the document's media type (`body_encoding = "binary"`).

use serde_json::Value;
use toolgate_schema::{Field, FieldType};

use crate::multipart::is_file;
use crate::operation::snake_case;
use crate::schema::{follow, to_field};

/// What a binary body field's description says, before the document's own text.
const BINARY_NOTE: &str = "The request body: give its bytes base64-encoded (decoded and sent as";

/// The schema a reference chain ends at, unflattened (to read the `$ref` name of its items).
fn resolve<'a>(root: &'a Value, mut schema: &'a Value) -> Result<&'a Value, String> {
    for _ in 0..32 {
        match schema.get("$ref").and_then(Value::as_str) {
            Some(r) => schema = follow(root, r)?,
            None => break,
        }
    }
    Ok(schema)
}

/// `User` → `users`, `MetadataTaxonomyLevel` → `metadata_taxonomy_levels`, `Address` →
/// `addresses`, `Category` → `categories`.
fn plural(name: &str) -> String {
    let name = snake_case(name);
    let consonant_y = name.ends_with('y') && name.chars().rev().nth(1).is_some_and(|c| !"aeiou".contains(c));
    if consonant_y {
        format!("{}ies", &name[..name.len() - 1])
    } else if name.ends_with(['s', 'x', 'z']) || name.ends_with("ch") || name.ends_with("sh") {
        format!("{name}es")
    } else {
        format!("{name}s")
    }
}

/// The name of the field that holds a JSON body `schema` (flattened; `raw` as the document
/// has it): an array is named for its items' schema (`users`), else `items`; anything else is
/// `body`.
fn json_name(root: &Value, raw: &Value, schema: &Value) -> Result<String, String> {
    if schema.get("type") != Some(&Value::from("array")) {
        return Ok("body".to_owned());
    }
    let raw = resolve(root, raw)?;
    let item = raw.get("items").and_then(|i| i.get("$ref")).and_then(Value::as_str);
    let title = schema.get("items").and_then(|i| i.get("title")).and_then(Value::as_str);
    let name = item.map(|r| r.rsplit('/').next().unwrap_or(r)).or(title).map(plural);
    // A name the table can hold and that says something: else `items`.
    Ok(name
        .filter(|n| n.len() <= 40 && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or_else(|| "items".to_owned()))
}

/// The field of a JSON body that is not an object with declared properties: the whole body.
/// `raw` is the body's schema as the document has it, `schema` flattened; `about` the
/// requestBody's own description, said when the schema has none.
pub(crate) fn json_field(
    root: &Value,
    raw: &Value,
    schema: &Value,
    required: bool,
    about: Option<&str>,
) -> Result<Field, String> {
    let name = json_name(root, raw, schema)?;
    let mut field = to_field(&name, schema, required)?;
    let what = match field.ty {
        FieldType::Array => "a JSON array".to_owned(),
        FieldType::Object if field.fields.is_empty() => {
            "a JSON object of the members the API takes (the document declares none)".to_owned()
        }
        ty => format!("JSON ({})", ty.as_str()),
    };
    let note = format!("Sent as the request body itself: {what}.");
    field.description = Some(with_text(note, field.description.as_deref().or(about)));
    Ok(field)
}

/// The media type a binary body is sent with, from the document's `media` (lowercase, no
/// parameters): itself, `application/octet-stream` for `*/*` and `application/*`; `None` for
/// another wildcard (`image/*`: the document does not say which type).
pub(crate) fn binary_type(media: &str) -> Option<String> {
    match media.split_once('/') {
        Some(("*", "*")) | Some(("application", "*")) => Some("application/octet-stream".to_owned()),
        Some((_, "*")) | Some(("*", _)) => None,
        Some(_) => Some(media.to_owned()),
        None => None,
    }
}

/// The body's media type entry sent as raw bytes, when the body offers no JSON, form or
/// multipart one: one whose schema is binary (`format: binary`, a 3.1 `contentMediaType` or
/// `contentEncoding`) or absent. Its key (lowercase, no parameters) and the entry.
pub(crate) fn binary_media<'a>(
    root: &'a Value,
    content: &'a serde_json::Map<String, Value>,
) -> Result<Option<(String, &'a Value)>, String> {
    for (key, media) in content {
        let kind = key.split(';').next().unwrap_or_default().trim().to_ascii_lowercase();
        let schema = match media.get("schema") {
            None => None,
            Some(schema) => Some(resolve(root, schema)?),
        };
        let binary = match schema {
            None => true,
            Some(schema) => schema.as_object().is_some_and(|s| s.is_empty()) || is_file(schema),
        };
        if binary {
            return Ok(Some((kind, media)));
        }
    }
    Ok(None)
}

/// `note`, then the document's `text` when there is one.
fn with_text(note: String, text: Option<&str>) -> String {
    match text.map(str::trim) {
        Some(d) if !d.is_empty() => format!("{note} {d}"),
        _ => note,
    }
}

/// The field of a binary body: `content`, base64 text sent decoded as `media_type`; its
/// description the schema's, else `about` (the requestBody's).
pub(crate) fn binary_field(
    schema: Option<&Value>,
    media_type: &str,
    required: bool,
    about: Option<&str>,
) -> Field {
    let mut field = Field::new("content", FieldType::String);
    field.required = required;
    field.shape.content_encoding = Some("base64".to_owned());
    let note = format!("{BINARY_NOTE} `{media_type}`; at most the domain's upload limit, 1 MiB unless set).");
    let own = schema.and_then(|s| s.get("description")).and_then(Value::as_str);
    field.shape.description = Some(with_text(note, own.or(about)));
    field
}

#[cfg(test)]
mod tests {
    use super::{binary_type, plural};

    #[test]
    fn item_names_become_plural_field_names() {
        assert_eq!(plural("User"), "users");
        assert_eq!(plural("MetadataTaxonomyLevel"), "metadata_taxonomy_levels");
        assert_eq!(plural("Address"), "addresses");
        assert_eq!(plural("Category"), "categories");
        assert_eq!(plural("Day"), "days");
        assert_eq!(plural("Box"), "boxes");
    }

    #[test]
    fn wildcards_but_any_type_have_no_type_to_send() {
        assert_eq!(binary_type("image/png").as_deref(), Some("image/png"));
        assert_eq!(binary_type("*/*").as_deref(), Some("application/octet-stream"));
        assert_eq!(binary_type("application/*").as_deref(), Some("application/octet-stream"));
        assert_eq!(binary_type("image/*"), None);
    }
}
