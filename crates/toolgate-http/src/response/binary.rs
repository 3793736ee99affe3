//! How a successful answer's body is returned by its `Content-Type`: JSON parsed, other text
//! as text (clipped), an image as image content, another binary as base64 (within a size
//! limit).

use serde_json::{Value, json};
use toolgate_core::{ErrorCode, Image, ToolError, ToolOutput};

use reqwest::StatusCode;

use super::{Sent, answered};

/// How a successful answer's body is returned, by its `Content-Type`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Media {
    /// JSON (`application/json`, `*+json`), or no usable type given: parsed as JSON
    /// (`PARSE_ERROR` when it is not).
    Json,
    /// Text that is not JSON (`text/html`, `text/plain`, `text/csv`, `application/xml`,
    /// `*+xml`, YAML, ...): returned as text, clipped at [`TEXT_ANSWER_CHARS`] (a JSON object
    /// or array in it, mislabelled, is read as JSON).
    Text(String),
    /// A picture MCP clients show (`image/png`, `image/jpeg`, `image/gif`, `image/webp`):
    /// returned as image content beside the result.
    Image(String),
    /// Any other binary (`application/pdf`, `application/octet-stream`, `image/svg+xml`,
    /// `audio/*`, ...): returned base64-encoded in the payload, with its type and size.
    Binary(String),
}

/// Images MCP clients render as image content.
pub(super) const SHOWN_IMAGES: [&str; 4] = ["image/png", "image/jpeg", "image/gif", "image/webp"];

/// Most characters of a text answer ([`Media::Text`]) returned; the rest is cut, said so.
pub(crate) const TEXT_ANSWER_CHARS: usize = 50_000;

/// `application/*` subtypes that are text (JSON when `json`), besides the `+json`, `+xml` and
/// `+yaml` suffixes.
pub(super) const TEXT_APPLICATION: [&str; 14] = [
    "json",
    "xml",
    "yaml",
    "x-yaml",
    "javascript",
    "ecmascript",
    "x-www-form-urlencoded",
    "x-ndjson",
    "ndjson",
    "jsonl",
    "x-jsonlines",
    "graphql",
    "sql",
    "csv",
];

impl Media {
    /// The kind of the body a `Content-Type` header announces (parameters ignored).
    pub(crate) fn of(content_type: Option<&str>) -> Self {
        let Some(media) =
            content_type.map(|c| c.split(';').next().unwrap_or_default().trim().to_ascii_lowercase())
        else {
            return Media::Json;
        };
        let Some((kind, subtype)) = media.split_once('/') else { return Media::Json };
        let json = subtype == "json" || subtype.ends_with("+json");
        let textual_suffix = ["+xml", "+yaml"].iter().any(|s| subtype.ends_with(s));
        match kind {
            _ if json => Media::Json,
            _ if SHOWN_IMAGES.contains(&media.as_str()) => Media::Image(media),
            "image" | "audio" | "video" | "font" | "model" | "multipart" => Media::Binary(media),
            "application" if !textual_suffix && !TEXT_APPLICATION.contains(&subtype) => Media::Binary(media),
            "application" | "text" => Media::Text(media),
            // A type of no kind known (`nonsense/x`, `*/*`): read as JSON, as without a type.
            _ => Media::Json,
        }
    }

    /// Whether the body is returned as bytes (and so limited by `max_binary_bytes`).
    pub(crate) fn is_binary(&self) -> bool {
        matches!(self, Media::Image(_) | Media::Binary(_))
    }

    fn media_type(&self) -> &str {
        match self {
            Media::Json => "application/json",
            Media::Text(m) | Media::Image(m) | Media::Binary(m) => m,
        }
    }
}

/// Standard base64 with padding (toolgate_core's, the encoding MCP carries images in).
pub(super) fn base64(bytes: &[u8]) -> String {
    Image::png(bytes).data
}

/// A binary answer larger than [`Sent::max_binary_bytes`]: `bytes` when its size is known.
pub(crate) fn binary_too_large(
    sent: &Sent<'_>,
    status: StatusCode,
    media: &Media,
    bytes: Option<u64>,
) -> ToolError {
    let mut details = sent.details(Some(status));
    details.insert("media_type".into(), media.media_type().into());
    if let Some(bytes) = bytes {
        details.insert("bytes".into(), bytes.into());
    }
    details.insert("limit_bytes".into(), (sent.max_binary_bytes as u64).into());
    let size = match bytes {
        Some(bytes) => format!("{bytes} bytes"),
        None => format!("more than {} bytes", sent.max_binary_bytes),
    };
    ToolError::new(
        ErrorCode::ExecutionError,
        format!(
            "{} answered {} {} with {size} of {}, more than the {} bytes a file may have to be returned here; it was not returned. Do not retry as is: ask for a smaller one if the operation offers that (a thumbnail, fewer pages), or tell the user to get the file from the service directly.",
            sent.backend,
            sent.method,
            sent.path,
            media.media_type(),
            sent.max_binary_bytes
        ),
    )
    .with_details(Value::Object(details))
    .transient(false)
}

/// A successful binary answer: an image as image content, anything else base64 in the payload.
pub(super) fn binary_answer(
    sent: &Sent<'_>,
    status: StatusCode,
    media: &Media,
    body: &[u8],
) -> Result<ToolOutput, ToolError> {
    if body.len() > sent.max_binary_bytes {
        return Err(binary_too_large(sent, status, media, Some(body.len() as u64)));
    }
    // Bytes cannot be scrubbed without breaking the file: one that repeats a credential of the
    // request is withheld whole.
    if sent.secrets.iter().any(|s| !s.is_empty() && body.windows(s.len()).any(|w| w == s.as_bytes())) {
        let mut details = sent.details(Some(status));
        details.insert("media_type".into(), media.media_type().into());
        return Err(ToolError::new(
            ErrorCode::ExecutionError,
            format!(
                "{} answered {} {} with a {} file that contains the credential the request carried, so it was withheld. Do not retry; tell the user and an operator.",
                sent.backend,
                sent.method,
                sent.path,
                media.media_type()
            ),
        )
        .with_details(Value::Object(details))
        .transient(false));
    }
    let mut payload = json!({"media_type": media.media_type(), "bytes": body.len()});
    let output = match media {
        Media::Image(mime) => {
            payload["content"] = json!("image");
            payload["note"] = json!("the image is attached to this result as image content");
            ToolOutput::json(answered(sent, status, payload))
                .with_image(Image::from_base64(mime, base64(body)))
        }
        _ => {
            payload["content"] = json!("binary");
            payload["base64"] = json!(base64(body));
            ToolOutput::json(answered(sent, status, payload))
        }
    };
    Ok(output)
}

/// A successful answer in text that is not JSON (an HTML page, plain text, CSV, XML): the text
/// as the backend sent it (already scrubbed of the request's credentials), its first
/// [`TEXT_ANSWER_CHARS`] characters when longer, said so.
pub(super) fn text_answer(sent: &Sent<'_>, status: StatusCode, media: &Media, text: &str) -> ToolOutput {
    let chars = text.chars().count();
    let mut payload = json!({"content": "text", "media_type": media.media_type(), "chars": chars});
    if chars > TEXT_ANSWER_CHARS {
        let head: String = text.chars().take(TEXT_ANSWER_CHARS).collect();
        payload["text"] = json!(head);
        payload["truncated"] = json!(true);
        payload["note"] = json!(format!(
            "the answer is {chars} characters long; only the first {TEXT_ANSWER_CHARS} are here. Ask for less if the operation offers a way (a filter, a page, a range)."
        ));
    } else {
        payload["text"] = json!(text);
    }
    ToolOutput::json(answered(sent, status, payload))
}
