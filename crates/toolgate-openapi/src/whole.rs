//! Request bodies that are not an object of declared members, as one field whose value is the
//! whole body (route key `body_field`): a JSON array (Petstore's `POST /user/createWithList`,
//! `[User, ...]`) as a field named for its items (`users`), any other JSON body (a free-form
//! object, Box's metadata instances) as `body`, and a raw binary body (`application/octet-stream`,
//! `image/png`: Box's upload-session chunks) as `content`, base64 text the executor decodes
//! and sends with the document's media type (`body_encoding = "binary"`), and a string in
//! another media type (Spotify's base64 `image/jpeg` cover) as `content` sent as it is given
//! (`body_encoding = "text"`).

use serde_json::Value;
use toolgate_schema::{BodyEncoding, Field, FieldType};

use crate::multipart::is_file;
use crate::operation::snake_case;
use crate::schema::{flatten, follow, to_field};

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
    // A title is a name when it is a few words ("A metadata instance update operation":
    // `metadata_instance_update_operations`), without its article.
    let title = schema.get("items").and_then(|i| i.get("title")).and_then(Value::as_str).and_then(|t| {
        let words: Vec<&str> = t.split_whitespace().collect();
        let words = match words.first().map(|w| w.to_ascii_lowercase()) {
            Some(w) if ["a", "an", "the"].contains(&w.as_str()) => &words[1..],
            _ => &words[..],
        };
        (!words.is_empty() && words.len() <= 4).then(|| words.join(" "))
    });
    let name = item.map(|r| r.rsplit('/').next().unwrap_or(r).to_owned()).or(title).map(|n| plural(&n));
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

/// The media type a binary or text body is sent with, from the document's `media`
/// (lowercase, no parameters): itself; `default` for `*/*` and `application/*`; `None` for
/// another wildcard (`image/*`: the document does not say which type).
pub(crate) fn sent_type(media: &str, default: &str) -> Option<String> {
    match media.split_once('/') {
        Some(("*", "*")) | Some(("application", "*")) => Some(default.to_owned()),
        Some((_, "*")) | Some(("*", _)) => None,
        Some(_) => Some(media.to_owned()),
        None => None,
    }
}

/// The body's media type entry sent raw, when the body offers no JSON, form or multipart one:
/// the first whose schema is binary (`format: binary`, a 3.1 `contentMediaType` or
/// `contentEncoding`) or absent, as bytes (`BodyEncoding::Binary`), else the first whose
/// schema is another string (Spotify's base64 `image/jpeg`), as text. Its key (lowercase, no
/// parameters), the entry and the encoding.
pub(crate) fn raw_media<'a>(
    root: &'a Value,
    content: &'a serde_json::Map<String, Value>,
) -> Result<Option<(String, &'a Value, BodyEncoding)>, String> {
    let mut text = None;
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
            return Ok(Some((kind, media, BodyEncoding::Binary)));
        }
        let string = schema.is_some_and(|s| s.get("type") == Some(&Value::from("string")));
        if string && text.is_none() {
            text = Some((kind, media, BodyEncoding::Text));
        }
    }
    Ok(text)
}

/// The field of a binary body (`content`, base64 text sent decoded) or a text body (`content`,
/// a string sent as it is), and the `Content-Type` to send when it is not the encoding's.
/// `media` is the document's entry (`media_type` its key), `about` the requestBody's own
/// description, said when the schema has none.
pub(crate) fn raw_field(
    root: &Value,
    media: &Value,
    media_type: &str,
    encoding: BodyEncoding,
    required: bool,
    about: Option<&str>,
) -> Result<(Field, Option<String>), String> {
    let Some(sent) = sent_type(media_type, encoding.content_type()) else {
        return Err(format!(
            "its {} body is `{media_type}`, which names no one media type to send it as",
            encoding.as_str()
        ));
    };
    let schema = match media.get("schema") {
        Some(schema) => Some(flatten(root, schema, 0)?),
        None => None,
    };
    let own = schema.as_ref().and_then(|s| s.get("description")).and_then(Value::as_str);
    let field = if encoding == BodyEncoding::Text {
        let mut field = to_field("content", schema.as_ref().unwrap_or(&Value::Null), required)?;
        let note = format!(
            "The request body, sent as this text (as `{sent}`; at most the domain's upload limit, 1 MiB unless set)."
        );
        field.description = Some(with_text(note, own.or(about)));
        field
    } else {
        let mut field = Field::new("content", FieldType::String);
        field.required = required;
        field.shape.content_encoding = Some("base64".to_owned());
        let note = format!(
            "The request body: give its bytes base64-encoded (decoded and sent as `{sent}`; at most the domain's upload limit, 1 MiB unless set)."
        );
        field.shape.description = Some(with_text(note, own.or(about)));
        field
    };
    let sent = (sent != encoding.content_type()).then_some(sent);
    Ok((field, sent))
}

/// `note`, then the document's `text` when there is one.
fn with_text(note: String, text: Option<&str>) -> String {
    match text.map(str::trim) {
        Some(d) if !d.is_empty() => format!("{note} {d}"),
        _ => note,
    }
}

#[cfg(test)]
mod tests {
    use super::{plural, sent_type};

    #[test]
    fn item_names_become_plural_field_names() {
        assert_eq!(plural("User"), "users");
        assert_eq!(plural("MetadataTaxonomyLevel"), "metadata_taxonomy_levels");
        assert_eq!(plural("Address"), "addresses");
        assert_eq!(plural("Category"), "categories");
        assert_eq!(plural("Day"), "days");
        assert_eq!(plural("Box"), "boxes");
        assert_eq!(plural("metadata instance update operation"), "metadata_instance_update_operations");
    }

    #[test]
    fn wildcards_but_any_type_have_no_type_to_send() {
        let bytes = "application/octet-stream";
        assert_eq!(sent_type("image/png", bytes).as_deref(), Some("image/png"));
        assert_eq!(sent_type("*/*", bytes).as_deref(), Some(bytes));
        assert_eq!(sent_type("application/*", "text/plain").as_deref(), Some("text/plain"));
        assert_eq!(sent_type("image/*", bytes), None);
    }
}
