//! The audit trail's contract: what one record holds and where the gateway
//! hands it. Every write call and every denied call becomes one
//! [`AuditRecord`]; an [`AuditSink`] stores it (append-only, in an I/O crate such as toolgate-fleet).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use toolgate_core::{Envelope, ErrorCode, ToolContext};

/// One audited call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AuditRecord {
    /// When it finished (RFC 3339, UTC).
    pub at: String,
    /// Who called.
    pub user_id: String,
    /// With which role.
    pub role: String,
    /// The id of the API key, when one authenticated the call.
    pub key_id: Option<String>,
    /// The tool as named.
    pub tool: String,
    /// The parameters, secrets redacted.
    pub params: Value,
    /// `OK` or the error code.
    pub outcome: String,
    /// Ids the call created or changed (`order_id`, `id`, ... found in the result).
    pub ids: Value,
    /// The call's trace id.
    pub trace_id: String,
}

impl AuditRecord {
    pub(crate) fn new(ctx: &ToolContext, envelope: &Envelope, params: Value) -> Self {
        Self {
            at: envelope.metadata.timestamp.clone(),
            user_id: ctx.caller.user_id.clone(),
            role: ctx.caller.role.clone(),
            key_id: ctx.caller.key_id.clone(),
            tool: envelope.metadata.tool.clone(),
            params,
            outcome: envelope.code().map_or("OK", ErrorCode::as_str).to_owned(),
            ids: envelope.result.as_ref().map_or(Value::Object(Map::new()), ids_of),
            trace_id: ctx.trace_id.clone(),
        }
    }
}

/// Where audit records go. The gateway awaits `record` before it answers,
/// so a write that was answered is on the trail (only writes and refusals
/// are recorded, so reads never wait for it). A sink that cannot store the
/// record logs that and lets the answer go out: the call already happened.
#[async_trait::async_trait]
pub trait AuditSink: Send + Sync + std::fmt::Debug + 'static {
    /// Store one record.
    async fn record(&self, record: AuditRecord);
}

/// Which calls are audited: writes, and calls refused by authorization.
pub(crate) fn audited(write: bool, code: Option<ErrorCode>) -> bool {
    write || code == Some(ErrorCode::PermissionDenied)
}

/// The identifiers in a result: top-level fields named `id` or `*_id` with a
/// scalar value, and the same one level down (e.g. `{"order": {"order_id": 7}}`).
pub(crate) fn ids_of(result: &Value) -> Value {
    let mut ids = Map::new();
    let mut take = |map: &Map<String, Value>| {
        for (key, value) in map {
            if (key == "id" || key.ends_with("_id")) && (value.is_string() || value.is_number()) {
                ids.entry(key.clone()).or_insert_with(|| value.clone());
            }
        }
    };
    if let Value::Object(map) = result {
        take(map);
        for value in map.values() {
            if let Value::Object(inner) = value {
                take(inner);
            }
        }
    }
    Value::Object(ids)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn ids_are_found_at_the_top_and_one_level_down() {
        let got = ids_of(&json!({"order_id": 7, "user_id": "alice", "order": {"id": "o-1", "x": 1}, "n": 2}));
        assert_eq!(got, json!({"order_id": 7, "user_id": "alice", "id": "o-1"}));
        assert_eq!(ids_of(&json!([1, 2])), json!({}));
    }

    #[test]
    fn writes_and_denials_are_audited_reads_are_not() {
        assert!(audited(true, None));
        assert!(audited(true, Some(ErrorCode::Conflict)));
        assert!(audited(false, Some(ErrorCode::PermissionDenied)));
        assert!(!audited(false, None));
        assert!(!audited(false, Some(ErrorCode::RateLimited)));
    }
}
