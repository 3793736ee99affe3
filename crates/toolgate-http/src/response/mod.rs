//! Turning a backend's answer (or its silence) into a result or a [`ToolError`] written for
//! the model: which code, whether trying again may help, and what the backend said.

mod binary;
mod reasons;

use std::borrow::Cow;

use reqwest::StatusCode;
use serde_json::{Value, json};
use toolgate_core::{ErrorCode, FailureKind, ToolError, ToolOutput};

pub(crate) use self::binary::{Media, binary_too_large};
use self::binary::{binary_answer, text_answer};
use self::reasons::{REASON_CHARS, REASONS_IN_MESSAGE, Reason, backend_message, field_errors, reasons};

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
    /// Whether the operation documents an answer that is not JSON (its `Accept` lists such a
    /// type, e.g. Box's `text/html` authorize page): only then is a text answer the result;
    /// from an operation that answers JSON it is a `PARSE_ERROR`, as before.
    pub(crate) text_ok: bool,
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
        if self.read { String::new() } else { format!(" {}", toolgate_core::WRITE_OUTCOME_UNKNOWN) }
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
/// A successful answer is read by its `Content-Type` ([`Media::of`]): JSON into the payload,
/// other text (HTML, plain, CSV, XML) as `{content: "text", media_type, chars, text}` (clipped,
/// said so) unless it is a JSON object or array, an image as image content, another binary
/// base64 in the payload.
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
    // Text that is not JSON is the answer as text; a JSON object or array sent as text (a
    // backend that labels its JSON `text/plain`) is still read as JSON.
    if status.is_success()
        && sent.text_ok
        && matches!(media, Media::Text(_))
        && !body.iter().all(u8::is_ascii_whitespace)
        && !matches!(parsed, Some(Value::Object(_) | Value::Array(_)))
    {
        return Ok(text_answer(sent, status, &media, &text));
    }
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
mod tests;
