//! Write tools: idempotent (`Effect::Write { idempotent: true }`), verified by
//! reading back what they wrote, and scoped to the caller's records.

pub(crate) mod api_key;
pub(crate) mod cancel;
pub(crate) mod submit;

use serde_json::{Value, json};
use toolgate_core::{ErrorCode, ToolError};

/// `VERIFY_FAILED`: the write committed, but reading it back did not match.
pub(crate) fn verify_failed(what: &str, record: Value, mismatches: Vec<Value>) -> ToolError {
    let listed = Value::Array(mismatches.clone());
    tracing::error!(target: "toolgate_travel::verify", what, record = %record, mismatches = %listed, "read-back mismatch");
    let fields: Vec<String> = mismatches
        .iter()
        .filter_map(|m| m.get("field").and_then(Value::as_str).map(str::to_string))
        .collect();
    ToolError::new(
        ErrorCode::VerifyFailed,
        format!(
            "{what} was committed, but reading it back did not match what was written ({}). Do not repeat the \
             call: show the stored record to the user and ask a travel administrator to check it.",
            if fields.is_empty() { "record missing".to_string() } else { format!("fields: {}", fields.join(", ")) }
        ),
    )
    .with_details(json!({"record": record, "mismatches": mismatches}))
}
