//! `multipart/form-data` bodies (RFC 7578) of the routes with `body_encoding = "multipart"`:
//! one part per body field, a file given as base64 text decoded and sent as a file part, the
//! decoded files together at most [`crate::HttpOptions::max_upload_bytes`].

use std::fmt;
use std::hash::{BuildHasher, Hasher};

use base64::Engine;
use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD};
use serde_json::{Map, Value};
use toolgate_core::FieldError;
use toolgate_core::params::pointer;
use toolgate_schema::{Items, Route};

use crate::encode::scalar_text;

/// A multipart body ready to send: its boundary and its bytes.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct MultipartBody {
    /// The boundary, also sent in `Content-Type`.
    pub(crate) boundary: String,
    /// The whole body, closing delimiter included.
    pub(crate) bytes: Vec<u8>,
}

impl fmt::Debug for MultipartBody {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The bytes are the caller's files: their size only.
        write!(f, "MultipartBody {{ boundary: {:?}, bytes: {} }}", self.boundary, self.bytes.len())
    }
}

impl MultipartBody {
    /// The `Content-Type` header it is sent with.
    pub(crate) fn content_type(&self) -> String {
        format!("multipart/form-data; boundary={}", self.boundary)
    }
}

/// One part: its name (the field's wire name), whether it is a file, its media type and bytes.
struct Part {
    name: String,
    file: bool,
    media_type: Option<&'static str>,
    data: Vec<u8>,
}

/// Base64 text as bytes: the standard or URL-safe alphabet, padded or not, line breaks and
/// spaces ignored (base64 is often wrapped); a `data:...;base64,` prefix is taken off.
pub(crate) fn decode(text: &str) -> Option<Vec<u8>> {
    let text = match text.strip_prefix("data:").and_then(|rest| rest.split_once(";base64,")) {
        Some((_, data)) => data,
        None => text,
    };
    let clean: String = text.chars().filter(|c| !c.is_ascii_whitespace()).collect();
    [STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD]
        .iter()
        .find_map(|engine| engine.decode(&clean).ok())
}

/// The body of a multipart route from the body fields given (by the names the model uses),
/// or every problem at once: a file that is not base64 text, and files over `limit` bytes in all.
pub(crate) fn multipart_body(
    route: &Route,
    body: &Map<String, Value>,
    limit: usize,
) -> Result<MultipartBody, Vec<FieldError>> {
    let mut parts: Vec<Part> = Vec::new();
    let mut errors = Vec::new();
    let mut file_bytes = 0usize;
    for (key, value) in body {
        let name = route.wire_name(key).to_owned();
        let shape = route.fields.iter().find(|f| f.name == *key).map(|f| &f.shape);
        let items = shape.and_then(|s| s.items.as_deref());
        let mut push = |at: String, value: &Value, shape: Option<&Items>, parts: &mut Vec<Part>| {
            if value.is_null() {
                return;
            }
            if shape.is_some_and(Items::is_base64_file) {
                match value.as_str().and_then(decode) {
                    Some(data) => {
                        file_bytes += data.len();
                        parts.push(Part { name: name.clone(), file: true, media_type: None, data });
                    }
                    None => errors.push(FieldError::new(
                        at.clone(),
                        "the file's content as base64 text",
                        value,
                        format!(
                            "`{key}` is a file: give its bytes base64-encoded (e.g. \"aGVsbG8=\" for `hello`)"
                        ),
                    )),
                }
                return;
            }
            let (media_type, data) = match scalar_text(value) {
                Some(text) => (None, text.into_bytes()),
                None => (Some("application/json"), value.to_string().into_bytes()),
            };
            parts.push(Part { name: name.clone(), file: false, media_type, data });
        };
        match value {
            // An array: one part per item, under the same name.
            Value::Array(values) => {
                for (i, item) in values.iter().enumerate() {
                    push(format!("{}/{i}", pointer(key)), item, items, &mut parts);
                }
            }
            value => push(pointer(key), value, shape, &mut parts),
        }
    }
    if file_bytes > limit {
        errors.push(FieldError::new(
            "",
            format!("files of at most {limit} bytes in all"),
            &Value::from(file_bytes),
            format!(
                "the files given are {file_bytes} bytes once decoded, over this domain's upload limit of {limit} bytes; nothing was sent. Send a smaller file"
            ),
        ));
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    Ok(encode(&parts))
}

/// A boundary that occurs in no part, from the process's random hasher keys.
fn boundary(parts: &[Part]) -> String {
    let state = std::collections::hash_map::RandomState::new();
    let mut n: u64 = 0;
    loop {
        let mut hasher = state.build_hasher();
        hasher.write_u64(n);
        let high = hasher.finish();
        hasher.write_u64(high);
        let candidate = format!("toolgate-{high:016x}{:016x}", hasher.finish());
        let needle = candidate.as_bytes();
        let clash = parts.iter().any(|p| p.data.windows(needle.len()).any(|w| w == needle));
        if !clash {
            return candidate;
        }
        n += 1;
    }
}

/// A name in a `Content-Disposition` parameter, as the WHATWG HTML standard writes it: `"`,
/// CR and LF percent-encoded.
fn quoted(name: &str) -> String {
    name.replace('"', "%22").replace('\r', "%0D").replace('\n', "%0A")
}

fn encode(parts: &[Part]) -> MultipartBody {
    let boundary = boundary(parts);
    let mut bytes = Vec::with_capacity(parts.iter().map(|p| p.data.len() + 160).sum::<usize>() + 64);
    for part in parts {
        let name = quoted(&part.name);
        bytes.extend_from_slice(
            format!("--{boundary}\r\nContent-Disposition: form-data; name=\"{name}\"").as_bytes(),
        );
        if part.file {
            bytes.extend_from_slice(
                format!("; filename=\"{name}\"\r\nContent-Type: application/octet-stream").as_bytes(),
            );
        } else if let Some(media_type) = part.media_type {
            bytes.extend_from_slice(format!("\r\nContent-Type: {media_type}").as_bytes());
        }
        bytes.extend_from_slice(b"\r\n\r\n");
        bytes.extend_from_slice(&part.data);
        bytes.extend_from_slice(b"\r\n");
    }
    bytes.extend_from_slice(format!("--{boundary}--\r\n").as_bytes());
    MultipartBody { boundary, bytes }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_in_its_usual_spellings_is_decoded_and_other_text_is_not() {
        for text in ["aGk/Pz8=", "aGk/Pz8", "aGk_Pz8=", "aGk/\nPz8=", "data:text/plain;base64,aGk/Pz8="] {
            assert_eq!(decode(text).as_deref(), Some(&b"hi???"[..]), "{text}");
        }
        assert_eq!(decode("not base64!"), None);
        assert_eq!(decode(""), Some(Vec::new()));
    }

    #[test]
    fn the_boundary_is_in_no_part_and_names_are_escaped() {
        let parts =
            vec![Part { name: "a\"b\r\n".into(), file: false, media_type: None, data: b"x".to_vec() }];
        let body = encode(&parts);
        let text = String::from_utf8(body.bytes.clone()).unwrap();
        assert!(text.starts_with(&format!("--{}\r\n", body.boundary)), "{text}");
        assert!(text.contains("name=\"a%22b%0D%0A\"\r\n\r\nx\r\n"), "{text}");
        assert!(text.ends_with(&format!("--{}--\r\n", body.boundary)), "{text}");
        let debug = format!("{body:?}");
        assert!(
            !debug.contains("x\\r") && debug.ends_with(&format!("bytes: {} }}", body.bytes.len())),
            "{debug}"
        );
    }
}
