//! `save_flight_api_key`: store a flight provider's API key for the caller,
//! sealed with ChaCha20-Poly1305. The key is never returned, logged, traced
//! or echoed in an error (field errors show `[redacted]` instead of values).

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use toolgate_core::{Effect, FieldError, Secret, Tool, ToolOutput, ToolResult, ToolSpec};

use super::verify_failed;
use crate::shared::{Call, Shared, rule, tool};

const REDACTED: &str = "[redacted]";

/// Parameters of `save_flight_api_key`. `api_key` is `writeOnly`, so the
/// typed-tool adapter never echoes any value of this tool in an error.
#[derive(Deserialize, JsonSchema)]
struct Input {
    /// The flight provider, e.g. "amadeus" (letters, digits, '-', '_', '.'; stored lowercase).
    #[schemars(length(min = 1, max = 64), regex(pattern = r"^[A-Za-z0-9][A-Za-z0-9._-]*$"))]
    provider: String,
    /// The API key exactly as the provider issued it. Write-only: it is never shown again.
    #[schemars(length(min = 1, max = 4096), pattern(toolgate_schema::PLAIN_TEXT), extend("writeOnly" = true))]
    api_key: String,
}

impl std::fmt::Debug for Input {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Input").field("provider", &self.provider).finish_non_exhaustive()
    }
}

const DESCRIPTION: &str = "Save the caller's API key for a flight provider so that flight searches can use it. \
Call it only when the user gives you a key and asks to store it. The key is encrypted at rest and is never returned, \
logged or shown again (not even in errors); saving again for the same provider replaces it. Returns `{provider, \
stored: true, replaced, verified}`. UNAVAILABLE (with an `unavailable` signal) when the server has no encryption \
key configured: tell the user an operator must set it. Example: {\"provider\": \"amadeus\", \"api_key\": \
\"<the key the user gave>\"}.";

pub(crate) fn tool_for(shared: &Arc<Shared>) -> Arc<dyn Tool> {
    let spec = ToolSpec::new("save_flight_api_key", DESCRIPTION, json!({}))
        .with_effect(Effect::Write { idempotent: true })
        .with_role("member")
        .with_tags(["travel", "credentials", "secret"]);
    tool(shared, spec, Some(rules), run)
}

fn rules(input: &Input) -> Vec<FieldError> {
    if input.api_key.trim().is_empty() {
        return vec![rule("api_key", "a non-empty string", REDACTED, "`api_key` must not be blank".into())];
    }
    Vec::new()
}

async fn run(call: Call, input: Input) -> ToolResult {
    let (shared, user) = (&*call.shared, call.user.as_str());
    let provider = input.provider.to_lowercase();
    let api_key = Secret::new(input.api_key);
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
