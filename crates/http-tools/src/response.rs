//! Turning a backend's answer (or its silence) into a result or a [`ToolError`] written for
//! the model: which code, whether trying again may help, and what the backend said.

use std::borrow::Cow;

use reqwest::StatusCode;
use serde_json::{Value, json};
use tool_core::{ErrorCode, FailureKind, FieldError, Image, ToolError, ToolOutput};

/// What the executor knows about the request when it maps the answer.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Sent<'a> {
    /// `GET`, `POST`, ...
    pub(crate) method: &'a str,
    /// The path as sent (encoded), without the base URL and the query.
    pub(crate) path: &'a str,
    /// Whether the method only reads: only then may a failure be tried again.
    pub(crate) read: bool,
    /// The backend's name for messages, e.g. "the fitness API".
    pub(crate) backend: &'a str,
    /// How much of an unexpected body goes into `details`.
    pub(crate) preview_chars: usize,
    /// The largest binary answer (an image, a PDF) returned ([`crate::HttpOptions::max_binary_bytes`]).
    pub(crate) max_binary_bytes: usize,
    /// Whether the credential sent is the caller's own ([`crate::Auth::BearerFromCaller`]):
    /// only then is a 401/403 the caller's to fix (sign in again); otherwise the backend
    /// refused the credential an operator configured for the domain.
    pub(crate) callers_credential: bool,
    /// The credentials this request carried (the static one, the caller's for this backend):
    /// removed from everything the backend answers before any of it is kept or clipped.
    pub(crate) secrets: &'a [&'a str],
}

impl Sent<'_> {
    fn details(&self, status: Option<StatusCode>) -> serde_json::Map<String, Value> {
        let mut d = serde_json::Map::new();
        if let Some(status) = status {
            d.insert("status".into(), status.as_u16().into());
        }
        d.insert("method".into(), self.method.into());
        d.insert("path".into(), self.path.into());
        d
    }

    /// What a failed write means for the model.
    fn write_outcome_unknown(&self) -> String {
        if self.read { String::new() } else { format!(" {}", tool_core::WRITE_OUTCOME_UNKNOWN) }
    }
}

/// The first `max` characters of `text`, marked when cut.
pub(crate) fn preview(text: &str, max: usize) -> String {
    let mut chars = text.chars();
    let head: String = chars.by_ref().take(max).collect();
    if chars.next().is_some() { format!("{head}… (truncated)") } else { head }
}

/// What stands where a credential the backend repeated was.
pub(crate) const REDACTED: &str = "[redacted]";

/// `text` with every occurrence of each secret replaced by [`REDACTED`].
pub(crate) fn scrub<'t>(text: &'t str, secrets: &[&str]) -> Cow<'t, str> {
    let mut out = Cow::Borrowed(text);
    for secret in secrets.iter().filter(|s| !s.is_empty()) {
        if out.contains(secret) {
            out = Cow::Owned(out.replace(secret, REDACTED));
        }
    }
    out
}

/// Scrubs every string (and object key) of `value` in place; whether anything was replaced.
fn scrub_value(value: &mut Value, secrets: &[&str]) -> bool {
    match value {
        Value::String(s) => match scrub(s, secrets) {
            Cow::Borrowed(_) => false,
            Cow::Owned(clean) => {
                *s = clean;
                true
            }
        },
        Value::Array(items) => items.iter_mut().fold(false, |hit, v| scrub_value(v, secrets) | hit),
        Value::Object(map) => {
            let mut hit = false;
            if map.keys().any(|k| matches!(scrub(k, secrets), Cow::Owned(_))) {
                let entries = std::mem::take(map);
                for (k, v) in entries {
                    map.insert(scrub(&k, secrets).into_owned(), v);
                }
                hit = true;
            }
            map.values_mut().fold(hit, |hit, v| scrub_value(v, secrets) | hit)
        }
        Value::Null | Value::Bool(_) | Value::Number(_) => false,
    }
}

/// The body as JSON: `Null` when empty, `None` when not JSON.
fn parse(body: &[u8]) -> Option<Value> {
    if body.iter().all(u8::is_ascii_whitespace) {
        Some(Value::Null)
    } else {
        serde_json::from_slice(body).ok()
    }
}

/// The body as JSON (`Null` when empty, `None` when not JSON) and as text, each without any of
/// `secrets`: the text is scrubbed as sent, and when a secret hid in the JSON behind escapes
/// (`\u0041`, `\/`) that the text does not show, the text is the scrubbed JSON instead.
fn scrubbed_body(body: &[u8], raw: &str, secrets: &[&str]) -> (Option<Value>, String) {
    let mut parsed = parse(body);
    let mut text = scrub(raw, secrets).into_owned();
    if let Some(value) = parsed.as_mut()
        && scrub_value(value, secrets)
        && serde_json::from_str::<Value>(&text).ok().as_ref() != Some(value)
    {
        text = scrub(&value.to_string(), secrets).into_owned();
    }
    (parsed, text)
}

/// The backend's own words, when its error body has a recognizable shape:
/// `{"error": {"message", "fields": [{"field", "message"}]}}`, `{"error": "..."}`,
/// `{"message": "..."}`, `{"detail": "..."}` or (a problem without a detail) `{"title": "..."}`.
fn backend_message(body: &Value) -> Option<String> {
    let error = &body["error"];
    [&error["message"], error, &body["message"], &body["detail"], &body["title"]]
        .into_iter()
        .find_map(|v| v.as_str())
        .map(str::to_owned)
}

/// `items[0].name` -> `/items/0/name`; `body`, `path`, `query` (the whole request) -> `""`.
fn field_pointer(field: &str) -> String {
    if matches!(field, "" | "body" | "path" | "query") {
        return String::new();
    }
    let mut out = String::new();
    for part in field.split(['.', '[']) {
        let part = part.trim_end_matches(']');
        if !part.is_empty() {
            out.push('/');
            out.push_str(&part.replace('~', "~0").replace('/', "~1"));
        }
    }
    out
}

/// At most this many of the backend's reasons go into `details.reasons` (the rest are counted).
pub(crate) const MAX_REASONS: usize = 10;
/// At most this many characters of one reason's message.
const REASON_CHARS: usize = 200;
/// At most this many characters of where a reason points.
const AT_CHARS: usize = 100;
/// How many reasons the message of a 400/422 names (all of them are in `details.reasons`).
const REASONS_IN_MESSAGE: usize = 3;

/// One reason a backend gave for refusing a request: where (as the backend wrote it: a JSON
/// pointer, `body.name`, `items[0].qty`), and what.
#[derive(Debug, Clone, PartialEq)]
struct Reason {
    at: Option<String>,
    message: String,
}

impl Reason {
    fn to_json(&self) -> Value {
        let mut out = serde_json::Map::new();
        if let Some(at) = &self.at {
            out.insert("at".into(), at.clone().into());
        }
        out.insert("message".into(), self.message.clone().into());
        Value::Object(out)
    }

    /// `at: message`, or the message alone.
    fn said(&self) -> String {
        match &self.at {
            Some(at) => format!("{at}: {}", self.message),
            None => self.message.clone(),
        }
    }
}

/// Keys under which error bodies list their reasons: RFC 9457 `errors` and RFC 7807
/// `invalid-params`, JSON:API `errors`, Prism's `validation`, FastAPI's `detail` list, Zod's
/// `issues`, Zalando's `violations`, ASP.NET's and Rails' `errors` maps, Google's
/// `details[].fieldViolations`, toolgate's own `error.fields`.
const REASON_LISTS: [&str; 14] = [
    "errors",
    "fields",
    "invalid-params",
    "invalid_params",
    "invalidParams",
    "validation",
    "validationErrors",
    "violations",
    "fieldViolations",
    "fieldErrors",
    "field_errors",
    "issues",
    "details",
    "detail",
];
/// Keys of a reason's text, most specific first.
const MESSAGE_KEYS: [&str; 9] =
    ["message", "detail", "msg", "reason", "description", "defaultMessage", "title", "error", "code"];
/// Keys of where a reason points, most specific first.
const AT_KEYS: [&str; 13] = [
    "pointer",
    "instancePath",
    "field",
    "name",
    "param",
    "parameter",
    "property",
    "propertyPath",
    "path",
    "loc",
    "location",
    "dataPath",
    "key",
];

/// Where a reason points, as text: a string as is (a `#/a` pointer without its `#`), a list
/// (`["body", "items", 0]`) joined with dots, JSON:API's `source` by its pointer or parameter.
fn at_text(item: &serde_json::Map<String, Value>) -> Option<String> {
    let from = |v: &Value| -> Option<String> {
        match v {
            Value::String(s) if !s.trim().is_empty() => Some(s.trim().trim_start_matches('#').to_owned()),
            Value::Array(parts) if !parts.is_empty() => Some(
                parts
                    .iter()
                    .map(|p| match p {
                        Value::String(s) => s.clone(),
                        other => other.to_string(),
                    })
                    .collect::<Vec<_>>()
                    .join("."),
            ),
            _ => None,
        }
    };
    let source = item.get("source").and_then(Value::as_object);
    AT_KEYS
        .iter()
        .filter_map(|k| item.get(*k))
        .chain(["pointer", "parameter", "header"].iter().filter_map(|k| source?.get(*k)))
        .find_map(from)
        .map(|at| preview(&at, AT_CHARS))
}

/// The reasons of an error body, in the order given, at most [`MAX_REASONS`]; and how many
/// there were in all.
fn reasons(body: &Value) -> (Vec<Reason>, usize) {
    let mut out: Vec<Reason> = Vec::new();
    let mut total = 0;
    let mut keep = |reason: Reason, out: &mut Vec<Reason>| {
        if !out.contains(&reason) {
            total += 1;
            if out.len() < MAX_REASONS {
                out.push(reason);
            }
        }
    };
    let mut lists: Vec<&Value> = Vec::new();
    for root in [body, &body["error"]].into_iter().filter(|r| r.is_object()) {
        lists.extend(REASON_LISTS.iter().filter_map(|k| root.get(*k)).filter(|l| !l.is_string()));
    }
    // A list's items may hold the list (Google: `details[].fieldViolations`): one level more.
    let mut nested: Vec<&Value> = Vec::new();
    for list in &lists {
        for item in list.as_array().into_iter().flatten().filter_map(Value::as_object) {
            nested.extend(REASON_LISTS.iter().filter_map(|k| item.get(*k)).filter(|l| !l.is_string()));
        }
    }
    lists.extend(nested);
    for list in lists {
        match list {
            Value::Array(items) => {
                for item in items {
                    let reason = match item {
                        Value::String(s) => Some(Reason { at: None, message: s.clone() }),
                        Value::Object(o) => MESSAGE_KEYS
                            .iter()
                            .find_map(|k| o.get(*k).and_then(Value::as_str))
                            .map(|m| Reason { at: at_text(o), message: m.to_owned() }),
                        _ => None,
                    };
                    if let Some(mut reason) = reason.filter(|r| !r.message.trim().is_empty()) {
                        reason.message = preview(reason.message.trim(), REASON_CHARS);
                        keep(reason, &mut out);
                    }
                }
            }
            // `{"name": ["can't be blank"], "age": "too low"}` (Rails, ASP.NET).
            Value::Object(map) => {
                for (at, said) in map {
                    let messages: Vec<&str> = match said {
                        Value::String(s) => vec![s.as_str()],
                        Value::Array(a) => a.iter().filter_map(Value::as_str).collect(),
                        _ => Vec::new(),
                    };
                    for message in messages.into_iter().filter(|m| !m.trim().is_empty()) {
                        let at = at.trim_start_matches('$').trim_start_matches('.');
                        let at = (!at.is_empty()).then(|| preview(at, AT_CHARS));
                        keep(Reason { at, message: preview(message.trim(), REASON_CHARS) }, &mut out);
                    }
                }
            }
            _ => {}
        }
    }
    (out, total)
}

/// A reason's place as a pointer into the parameters: a JSON pointer as is, else the path the
/// backend wrote (`body.items[0].name`, `items.0.name`) without a leading request part.
fn reason_pointer(at: &str) -> String {
    if at.starts_with('/') {
        return at.to_owned();
    }
    let rest = at
        .split_once(['.', '['])
        .filter(|(first, _)| matches!(*first, "body" | "query" | "path" | "header" | "params"))
        .map_or(at, |(_, rest)| rest);
    field_pointer(rest)
}

fn value_at<'a>(params: &'a Value, pointer: &str) -> &'a Value {
    params.pointer(pointer).unwrap_or(&Value::Null)
}

/// The refused fields of a 400/422 as [`FieldError`]s pointing into the parameters: one per
/// reason the backend gave, else one with `fallback`.
fn field_errors(reasons: &[Reason], params: &Value, fallback: &str) -> Vec<FieldError> {
    let mut errors: Vec<FieldError> = reasons
        .iter()
        .map(|reason| match &reason.at {
            Some(at) => {
                let pointer = reason_pointer(at);
                let actual = value_at(params, &pointer);
                FieldError::new(pointer.clone(), "a value the backend accepts", actual, reason.said())
            }
            None => FieldError::new("", "a request the backend accepts", &Value::Null, reason.said()),
        })
        .collect();
    if errors.is_empty() {
        errors.push(FieldError::new("", "a request the backend accepts", &Value::Null, fallback));
    }
    errors
}

/// How a successful answer's body is returned, by its `Content-Type`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Media {
    /// JSON, text, or no type given: parsed as JSON (`PARSE_ERROR` when it is not).
    Text,
    /// A picture MCP clients show (`image/png`, `image/jpeg`, `image/gif`, `image/webp`):
    /// returned as image content beside the result.
    Image(String),
    /// Any other binary (`application/pdf`, `application/octet-stream`, `image/svg+xml`,
    /// `audio/*`, ...): returned base64-encoded in the payload, with its type and size.
    Binary(String),
}

/// Images MCP clients render as image content.
const SHOWN_IMAGES: [&str; 4] = ["image/png", "image/jpeg", "image/gif", "image/webp"];

/// `application/*` subtypes that are text (read as JSON when they are JSON), besides the
/// `+json`, `+xml` and `+yaml` suffixes.
const TEXT_APPLICATION: [&str; 14] = [
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
            return Media::Text;
        };
        let Some((kind, subtype)) = media.split_once('/') else { return Media::Text };
        let textual_suffix = ["+json", "+xml", "+yaml"].iter().any(|s| subtype.ends_with(s));
        match kind {
            _ if SHOWN_IMAGES.contains(&media.as_str()) => Media::Image(media),
            "image" | "audio" | "video" | "font" | "model" | "multipart" => Media::Binary(media),
            "application" if !textual_suffix && !TEXT_APPLICATION.contains(&subtype) => Media::Binary(media),
            _ => Media::Text,
        }
    }

    /// Whether the body is returned as bytes (and so limited by `max_binary_bytes`).
    pub(crate) fn is_binary(&self) -> bool {
        !matches!(self, Media::Text)
    }

    fn media_type(&self) -> &str {
        match self {
            Media::Text => "text",
            Media::Image(m) | Media::Binary(m) => m,
        }
    }
}

/// Standard base64 with padding (tool_core's, the encoding MCP carries images in).
fn base64(bytes: &[u8]) -> String {
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
fn binary_answer(
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

/// The result of a successful call.
fn answered(sent: &Sent<'_>, status: StatusCode, payload: Value) -> Value {
    json!({
        "ok": true,
        "status": status.as_u16(),
        "method": sent.method,
        "path": sent.path,
        "payload": payload,
    })
}

/// Maps the answer of a request that got one. `body` is the raw response body.
///
/// A successful answer is read by its `Content-Type` ([`Media::of`]): JSON (or text) into the
/// payload, an image as image content, another binary base64 in the payload.
pub(crate) fn map_answer(
    sent: &Sent<'_>,
    status: StatusCode,
    content_type: Option<&str>,
    body: &[u8],
    params: &Value,
) -> Result<ToolOutput, ToolError> {
    let media = Media::of(content_type);
    if status.is_success() && media.is_binary() && !body.is_empty() {
        return binary_answer(sent, status, &media, body);
    }
    // A success answer is scrubbed only when a secret (or an escape that may hide one) is in
    // it, so a large clean payload is not walked; anything else always is.
    let raw = String::from_utf8_lossy(body);
    let clean = sent.secrets.iter().all(|s| s.is_empty())
        || (status.is_success()
            && !body.contains(&b'\\')
            && !sent.secrets.iter().any(|s| !s.is_empty() && raw.contains(s)));
    let (parsed, text): (Option<Value>, Cow<'_, str>) = if clean {
        (parse(body), raw)
    } else {
        let (parsed, text) = scrubbed_body(body, &raw, sent.secrets);
        (parsed, Cow::Owned(text))
    };
    // Removed first, then clipped: a secret across the cut leaves no part of itself.
    let text = || preview(&text, sent.preview_chars);
    if status.is_success() {
        let Some(payload) = parsed else {
            let mut details = sent.details(Some(status));
            details.insert("preview".into(), text().into());
            return Err(ToolError::new(
                ErrorCode::ParseError,
                format!(
                    "{} answered {} {} with a body that is not JSON; the result cannot be read. Tell the user the backend answered something unexpected.",
                    sent.backend, sent.method, sent.path
                ),
            )
            .with_details(Value::Object(details))
            .backend_failure(FailureKind::Protocol));
        };
        return Ok(ToolOutput::json(answered(sent, status, payload)));
    }
    let said = parsed.as_ref().and_then(backend_message);
    let mut details = sent.details(Some(status));
    if let Some(v) = parsed.as_ref().map(|v| &v["error"]).filter(|v| v.is_object()) {
        details.insert("backend_error".into(), v.clone());
    }
    // The backend's own reasons (already scrubbed, clipped here), for every refusal.
    let (reasons, all_reasons) = parsed.as_ref().map(reasons).unwrap_or_default();
    if !reasons.is_empty() {
        details.insert("reasons".into(), reasons.iter().map(Reason::to_json).collect());
        if all_reasons > reasons.len() {
            details.insert("reasons_omitted".into(), (all_reasons - reasons.len()).into());
        }
    }
    let said_or = |default: &str| said.clone().unwrap_or_else(|| default.to_owned());
    let error = match status.as_u16() {
        400 | 422 => {
            // A body that is not JSON may still say why (`name is required`); a page is not read.
            let plain = text();
            let plain = plain.trim();
            if parsed.is_none() && !plain.is_empty() {
                details.insert("body".into(), plain.into());
            }
            let said = said.clone().or_else(|| {
                (parsed.is_none() && !plain.is_empty() && !plain.starts_with('<'))
                    .then(|| plain.lines().next().unwrap_or_default().to_owned())
            });
            let said = said.map(|s| preview(s.trim(), REASON_CHARS));
            let fallback = said.clone().unwrap_or_else(|| "the backend refused the request".to_owned());
            let mut e = ToolError::invalid_params(field_errors(&reasons, params, &fallback));
            let mut message = format!("{} refused the parameters (HTTP {})", sent.backend, status.as_u16());
            if let Some(said) = &said {
                message.push_str(&format!(": {}", said.trim_end_matches('.')));
            }
            // A reason the backend's own summary already says is not said twice.
            let unsaid: Vec<String> = reasons
                .iter()
                .map(Reason::said)
                .filter(|r| {
                    let bare = r.split_once(": ").map_or(r.as_str(), |(_, m)| m);
                    said.as_deref().is_none_or(|s| !s.contains(r.as_str()) && !s.contains(bare))
                })
                .collect();
            if !unsaid.is_empty() {
                let named: Vec<String> = unsaid.iter().take(REASONS_IN_MESSAGE).cloned().collect();
                let more = all_reasons - (reasons.len() - unsaid.len()) - named.len();
                message.push_str(&format!(
                    "{} {}",
                    if said.is_some() { ". Its reasons:" } else { ":" },
                    named.join("; ")
                ));
                if more > 0 {
                    message.push_str(&format!(" (and {more} more, see details.reasons)"));
                }
            } else if said.is_none() && reasons.is_empty() {
                message.push_str(": the backend gave no reason");
            }
            e.message = format!("{message}. Fix the named parameters and call again.");
            if let Some(Value::Object(d)) = &mut e.details {
                d.extend(details);
            }
            return Err(e.transient(false));
        }
        401 | 403 if sent.callers_credential => ToolError::new(
            ErrorCode::PermissionDenied,
            format!(
                "{} refused the caller's credentials (HTTP {}). Do not retry; tell the user to sign in again or ask an operator to check their access.",
                sent.backend,
                status.as_u16()
            ),
        ),
        // The credential is toolgate's own (static, or none at all): the user cannot fix it.
        401 | 403 => ToolError::new(
            ErrorCode::ExecutionError,
            format!(
                "{} refused the credential toolgate is configured with (HTTP {}). Do not retry and do not ask the user to sign in; tell the user the service is not reachable with toolgate's configuration, and that an operator must check this domain's credential.",
                sent.backend,
                status.as_u16()
            ),
        )
        .transient(false),
        404 => ToolError::new(
            ErrorCode::NotFound,
            format!(
                "{} found nothing at {} {}: {}. Check the identifiers (list the records first to find the right one).",
                sent.backend,
                sent.method,
                sent.path,
                said_or("not found")
            ),
        ),
        409 => ToolError::new(
            ErrorCode::Conflict,
            format!(
                "{} refused the change because it conflicts with an existing record: {}. Read the current records, then decide with the user.",
                sent.backend,
                said_or("conflict")
            ),
        ),
        429 => ToolError::new(
            ErrorCode::Unavailable,
            format!(
                "{} is rate limiting requests (HTTP 429). Wait a moment before calling again.",
                sent.backend
            ),
        )
        .transient(sent.read)
        .backend_failure(FailureKind::Http5xx),
        code if status.is_server_error() => {
            details.insert("body".into(), text().into());
            ToolError::new(
                ErrorCode::ExecutionError,
                format!(
                    "{} failed with HTTP {code} on {} {}.{} Tell the user the service has a problem if it persists.",
                    sent.backend,
                    sent.method,
                    sent.path,
                    sent.write_outcome_unknown()
                ),
            )
            .transient(sent.read)
            .backend_failure(FailureKind::Http5xx)
        }
        code if status.is_redirection() => ToolError::new(
            ErrorCode::ExecutionError,
            format!(
                "{} answered a redirect (HTTP {code}) that is not followed; the backend's base URL is probably wrong. Tell an operator.",
                sent.backend
            ),
        ),
        code => {
            details.insert("body".into(), text().into());
            ToolError::new(
                ErrorCode::ExecutionError,
                format!(
                    "{} refused {} {} with HTTP {code}: {}.",
                    sent.backend,
                    sent.method,
                    sent.path,
                    said_or("no reason given")
                ),
            )
        }
    };
    Err(error.with_details(Value::Object(details)))
}

/// Maps a request that got no (complete) answer.
pub(crate) fn map_failure(sent: &Sent<'_>, error: &reqwest::Error, timeout_ms: u128) -> ToolError {
    let details = Value::Object(sent.details(None));
    // Before `is_connect`: a refused certificate is a connect error too, but retrying it is
    // pointless and "cannot be reached" would send the operator looking for an outage.
    if let Some(problem) = crate::tls::cert_problem(error) {
        let mut details = details;
        details["reason"] = json!("certificate");
        return ToolError::unavailable(problem.explain(sent.backend))
            .with_details(details)
            .transient(false)
            .backend_failure(FailureKind::Tls);
    }
    if error.is_timeout() {
        let mut details = details;
        details["timeout_ms"] = json!(timeout_ms as u64);
        return ToolError::new(
            ErrorCode::Timeout,
            format!(
                "{} did not answer {} {} within {timeout_ms} ms.{} Try again later.",
                sent.backend,
                sent.method,
                sent.path,
                sent.write_outcome_unknown()
            ),
        )
        .with_details(details)
        .transient(sent.read)
        .backend_failure(FailureKind::Timeout);
    }
    if error.is_connect() {
        return ToolError::unavailable(format!(
            "{} cannot be reached (connection refused or failed); nothing was sent. Try again later or tell the user the service is down.",
            sent.backend
        ))
        .with_details(details)
        .transient(sent.read)
        .backend_failure(FailureKind::Unavailable);
    }
    ToolError::new(
        ErrorCode::Unavailable,
        format!(
            "the connection to {} broke during {} {}.{} Try again later.",
            sent.backend,
            sent.method,
            sent.path,
            sent.write_outcome_unknown()
        ),
    )
    .with_details(details)
    .transient(sent.read)
    .backend_failure(FailureKind::Unavailable)
}

#[cfg(test)]
mod tests {
    use super::*;

    const GET: Sent<'static> = Sent {
        method: "GET",
        path: "/x/1",
        read: true,
        backend: "the API",
        preview_chars: 20,
        max_binary_bytes: 64,
        callers_credential: false,
        secrets: &[],
    };
    const POST: Sent<'static> = Sent {
        method: "POST",
        path: "/x",
        read: false,
        backend: "the API",
        preview_chars: 20,
        max_binary_bytes: 64,
        callers_credential: false,
        secrets: &[],
    };

    fn map(sent: &Sent<'_>, status: u16, body: &str) -> Result<Value, ToolError> {
        let output = map_answer(
            sent,
            StatusCode::from_u16(status).unwrap(),
            None,
            body.as_bytes(),
            &json!({"items": [{"name": ""}]}),
        )?;
        match output.payload {
            tool_core::Payload::Json(value) => Ok(value),
            other => panic!("not JSON: {other:?}"),
        }
    }

    #[test]
    fn content_types_decide_how_a_body_is_returned() {
        let image = |m: &str| Media::Image(m.to_owned());
        let binary = |m: &str| Media::Binary(m.to_owned());
        assert_eq!(Media::of(Some("image/PNG")), image("image/png"));
        assert_eq!(Media::of(Some("image/jpeg; q=1")), image("image/jpeg"));
        assert_eq!(Media::of(Some("image/svg+xml")), binary("image/svg+xml"));
        assert_eq!(Media::of(Some("application/pdf")), binary("application/pdf"));
        assert_eq!(Media::of(Some("application/octet-stream")), binary("application/octet-stream"));
        assert_eq!(Media::of(Some("audio/mpeg")), binary("audio/mpeg"));
        for text in [
            None,
            Some("application/json; charset=utf-8"),
            Some("application/problem+json"),
            Some("application/vnd.api+json"),
            Some("application/xml"),
            Some("text/plain"),
            Some("nonsense"),
        ] {
            assert_eq!(Media::of(text), Media::Text, "{text:?}");
        }
    }

    #[test]
    fn binaries_come_back_as_images_or_base64_within_the_limit() {
        let ok = StatusCode::OK;
        let png = map_answer(&GET, ok, Some("image/png"), b"\x89PNG", &Value::Null).unwrap();
        assert_eq!(png.images, vec![Image::from_base64("image/png", "iVBORw==")]);
        let pdf = map_answer(&GET, ok, Some("application/pdf"), b"foobar", &Value::Null).unwrap();
        let tool_core::Payload::Json(result) = pdf.payload else { panic!() };
        assert_eq!(
            result["payload"],
            json!({"content": "binary", "media_type": "application/pdf", "bytes": 6, "base64": "Zm9vYmFy"})
        );
        let big = map_answer(&GET, ok, Some("application/pdf"), &[0; 65], &Value::Null).unwrap_err();
        assert_eq!(big.code, ErrorCode::ExecutionError);
        assert_eq!(big.details.as_ref().unwrap()["bytes"], 65);
        assert_eq!(big.details.as_ref().unwrap()["limit_bytes"], 64);
        // A file that repeats the request's credential is withheld whole.
        let keyed = Sent { secrets: &["sk_123"], ..GET };
        let leak = map_answer(&keyed, ok, Some("application/pdf"), b"%PDF sk_123", &Value::Null).unwrap_err();
        assert!(!format!("{leak:?}").contains("sk_123"));
        assert_eq!(leak.code, ErrorCode::ExecutionError);
        // An error answer is not a file: the error mapping reads it.
        let refused = map_answer(&GET, StatusCode::NOT_FOUND, Some("application/pdf"), b"{}", &Value::Null);
        assert_eq!(refused.unwrap_err().code, ErrorCode::NotFound);
    }

    #[test]
    fn success_wraps_the_payload() {
        let ok = map(&GET, 200, r#"{"a": 1}"#).unwrap();
        assert_eq!(
            ok,
            json!({"ok": true, "status": 200, "method": "GET", "path": "/x/1", "payload": {"a": 1}})
        );
        assert_eq!(map(&POST, 204, "").unwrap()["payload"], Value::Null);
        let err = map(&GET, 200, "<html>").unwrap_err();
        assert_eq!(err.code, ErrorCode::ParseError);
        assert!(!err.transient);
        assert_eq!(err.details.unwrap()["preview"], "<html>");
    }

    #[test]
    fn statuses_map_to_codes_and_only_reads_are_transient() {
        let cases = [
            (404, ErrorCode::NotFound, false, false),
            (409, ErrorCode::Conflict, false, false),
            (400, ErrorCode::InvalidParams, false, false),
            (422, ErrorCode::InvalidParams, false, false),
            // The operator's credential (GET and POST carry no caller's one): not the user's to fix.
            (401, ErrorCode::ExecutionError, false, false),
            (403, ErrorCode::ExecutionError, false, false),
            (415, ErrorCode::ExecutionError, false, false),
            (429, ErrorCode::Unavailable, true, false),
            (500, ErrorCode::ExecutionError, true, false),
            (503, ErrorCode::ExecutionError, true, false),
            (302, ErrorCode::ExecutionError, false, false),
        ];
        for (status, code, get_transient, post_transient) in cases {
            let g = map(&GET, status, "{}").unwrap_err();
            let p = map(&POST, status, "{}").unwrap_err();
            assert_eq!((g.code, p.code), (code, code), "{status}");
            assert_eq!((g.transient, p.transient), (get_transient, post_transient), "{status}");
        }
        let callers = Sent { callers_credential: true, ..GET };
        for status in [401, 403] {
            let e = map(&callers, status, "{}").unwrap_err();
            assert_eq!((e.code, e.transient), (ErrorCode::PermissionDenied, false), "{status}");
        }
    }

    #[test]
    fn refused_fields_point_into_the_parameters() {
        let body = r#"{"error": {"code": "invalid_params", "message": "invalid request: items[0].name: empty",
            "fields": [{"field": "items[0].name", "message": "empty"}, {"field": "body", "message": "give one"}]}}"#;
        let err = map(&POST, 422, body).unwrap_err();
        assert_eq!(err.code, ErrorCode::InvalidParams);
        assert!(err.message.contains("invalid request: items[0].name: empty"), "{}", err.message);
        let details = err.details.unwrap();
        assert_eq!(details["errors"][0]["pointer"], "/items/0/name");
        assert_eq!(details["errors"][0]["actual"], "");
        assert_eq!(details["errors"][1]["pointer"], "");
        assert_eq!(details["status"], 422);
    }

    #[test]
    fn server_errors_carry_a_truncated_body_and_warn_about_writes() {
        let err = map(&POST, 500, &"x".repeat(100)).unwrap_err();
        let body = err.details.as_ref().unwrap()["body"].as_str().unwrap().to_owned();
        assert!(body.starts_with(&"x".repeat(20)) && body.ends_with("(truncated)"), "{body}");
        assert!(err.message.contains("may or may not have been applied"));
        assert!(!map(&GET, 500, "").unwrap_err().message.contains("may or may not"));
    }

    #[test]
    fn reasons_are_read_from_the_common_shapes() {
        let said = |body: Value| -> Vec<(Option<String>, String)> {
            reasons(&body).0.into_iter().map(|r| (r.at, r.message)).collect()
        };
        let one = |at: &str, message: &str| vec![(Some(at.to_owned()), message.to_owned())];
        // JSON:API: where in `source`.
        let jsonapi = json!({"errors": [{"status": "422", "title": "Invalid", "detail": "is too short",
            "source": {"pointer": "/data/attributes/name"}}]});
        assert_eq!(said(jsonapi), one("/data/attributes/name", "is too short"));
        // Google APIs: `error.details[].fieldViolations`.
        let google = json!({"error": {"code": 400, "message": "Invalid argument", "status": "INVALID_ARGUMENT",
            "details": [{"@type": "type.googleapis.com/google.rpc.BadRequest",
                "fieldViolations": [{"field": "name", "description": "must be set"}]}]}});
        assert_eq!(said(google), one("name", "must be set"));
        // Zod: a path list; plain strings in `errors`.
        assert_eq!(
            said(json!({"issues": [{"path": ["items", 0, "qty"], "message": "too small"}]})),
            one("items.0.qty", "too small")
        );
        assert_eq!(
            said(json!({"errors": ["name is required"]})),
            vec![(None, "name is required".to_owned())]
        );
        // Nothing to read: no reasons.
        assert!(said(json!({"detail": "bad", "errors": 3})).is_empty());
        assert!(said(json!([1, 2])).is_empty());
        assert_eq!(reason_pointer("body.items[0].name"), "/items/0/name");
        assert_eq!(reason_pointer("items.0.qty"), "/items/0/qty");
        assert_eq!(reason_pointer("/age"), "/age");
        assert_eq!(reason_pointer("body"), "");
    }

    #[test]
    fn field_names_become_pointers() {
        assert_eq!(field_pointer("sets[12].reps"), "/sets/12/reps");
        assert_eq!(field_pointer("name"), "/name");
        assert_eq!(field_pointer("body"), "");
        assert_eq!(field_pointer("a/b"), "/a~1b");
    }
}
