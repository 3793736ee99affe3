//! `save_flight_api_key`: store a flight provider's API key for the caller,
//! sealed with ChaCha20-Poly1305. The key is never returned, logged, traced
//! or echoed in an error (field errors show `[redacted]` instead of values).

use schemars::JsonSchema;
use serde_json::{Value, json};
use tool_core::{Effect, FieldError, Secret, ToolError, ToolOutput, ToolResult, ToolSpec};

use super::verify_failed;
use crate::common::{Shared, name_errors};
use crate::schema::schema_for;

const MAX_KEY: usize = 4096;
const REDACTED: &str = "[redacted]";

/// Parameters of `save_flight_api_key`.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
#[allow(dead_code)] // schema only: values are read by hand so that none is ever echoed
struct Input {
    /// The flight provider, e.g. "amadeus" (letters, digits, '-', '_', '.'; stored lowercase).
    #[schemars(length(min = 1, max = 64), regex(pattern = r"^[A-Za-z0-9][A-Za-z0-9._-]*$"))]
    provider: String,
    /// The API key exactly as the provider issued it. Write-only: it is never shown again.
    #[schemars(length(min = 1, max = 4096), extend("writeOnly" = true))]
    api_key: String,
}

const DESCRIPTION: &str = "Save the caller's API key for a flight provider so that flight searches can use it. \
Call it only when the user gives you a key and asks to store it. The key is encrypted at rest and is never returned, \
logged or shown again (not even in errors); saving again for the same provider replaces it. Returns `{provider, \
stored: true, replaced, verified}`. UNAVAILABLE (with an `unavailable` signal) when the server has no encryption \
key configured: tell the user an operator must set it. Example: {\"provider\": \"amadeus\", \"api_key\": \
\"<the key the user gave>\"}.";

pub(crate) fn spec() -> ToolSpec {
    ToolSpec::new("save_flight_api_key", DESCRIPTION, schema_for::<Input>())
        .with_effect(Effect::Write { idempotent: true })
        .with_role("member")
        .with_tags(["travel", "credentials", "secret"])
}

fn redacted(mut e: FieldError) -> FieldError {
    if !e.actual.is_null() {
        e.actual = json!(REDACTED);
    }
    e
}

fn problem(field: &str, expected: &str, present: bool, message: String) -> FieldError {
    let actual = if present { json!(REDACTED) } else { Value::Null };
    FieldError::new(tool_core::params::pointer(field), expected, &actual, message)
}

/// Checked parameters; the key stays wrapped in a [`Secret`].
#[derive(Debug)]
pub(crate) struct Parsed {
    provider: String,
    api_key: Secret,
}

pub(crate) fn parse(params: &Value, allowed: &[String]) -> Result<Parsed, ToolError> {
    let Value::Object(map) = params else {
        return Err(ToolError::invalid_params(vec![problem(
            "",
            "a JSON object",
            true,
            "parameters must be a JSON object with provider and api_key".into(),
        )]));
    };
    let mut errors: Vec<FieldError> = name_errors(params, allowed).into_iter().map(redacted).collect();
    let provider = match map.get("provider") {
        None | Some(Value::Null) => {
            errors.push(problem(
                "provider",
                "a provider name",
                false,
                "`provider` is required (e.g. amadeus)".into(),
            ));
            None
        }
        Some(Value::String(s)) => {
            let s = s.trim();
            let ok = !s.is_empty()
                && s.len() <= 64
                && s.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
                && s.as_bytes()[0].is_ascii_alphanumeric();
            if ok {
                Some(s.to_lowercase())
            } else {
                errors.push(FieldError::new(
                    "/provider",
                    "1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit",
                    &json!(s),
                    "`provider` must be a short name like amadeus or sabre",
                ));
                None
            }
        }
        Some(_) => {
            errors.push(problem("provider", "a string", true, "`provider` must be a string".into()));
            None
        }
    };
    let api_key = match map.get("api_key") {
        None | Some(Value::Null) => {
            errors.push(problem("api_key", "the API key", false, "`api_key` is required".into()));
            None
        }
        Some(Value::String(s)) if s.trim().is_empty() => {
            errors.push(problem("api_key", "a non-empty string", true, "`api_key` must not be empty".into()));
            None
        }
        Some(Value::String(s)) if s.chars().count() > MAX_KEY || s.contains('\0') => {
            errors.push(problem(
                "api_key",
                "at most 4096 characters, no NUL",
                true,
                "`api_key` is too long or contains a NUL character; paste the key exactly as issued".into(),
            ));
            None
        }
        Some(Value::String(s)) => Some(Secret::new(s.as_str())),
        Some(_) => {
            errors.push(problem("api_key", "a string", true, "`api_key` must be a string".into()));
            None
        }
    };
    if !errors.is_empty() {
        return Err(ToolError::invalid_params(errors));
    }
    let (Some(provider), Some(api_key)) = (provider, api_key) else { return Err(ToolError::internal()) };
    Ok(Parsed { provider, api_key })
}

pub(crate) async fn run(shared: &Shared, user: &str, input: Parsed) -> ToolResult {
    let Parsed { provider, api_key } = input;
    let cipher = shared.cipher.as_ref().map_err(|e| e.to_tool_error())?;
    let sealed = cipher.seal(user, &provider, &api_key)?;
    let replaced = shared
        .store
        .upsert_api_key(user, &provider, &sealed)
        .await
        .map_err(|e| e.to_tool_error("storing the API key"))?;
    // Read back and open: proves the stored record decrypts to what was given.
    let stored = shared
        .store
        .sealed_api_key(user, &provider)
        .await
        .map_err(|e| e.to_tool_error("reading back the API key"))?;
    let verified = stored.and_then(|s| cipher.open(user, &provider, &s)).is_some_and(|k| k == api_key);
    if !verified {
        return Err(verify_failed(
            "the API key",
            json!({"provider": provider}),
            vec![
                json!({"field": "api_key", "expected": REDACTED, "actual": "does not decrypt to the key given"}),
            ],
        ));
    }
    Ok(ToolOutput::json(
        json!({"provider": provider, "stored": true, "replaced": replaced, "verified": true}),
    ))
}
