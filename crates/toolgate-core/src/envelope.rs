//! The one result shape ([`Envelope`]) and the typed [`Signal`]s in it.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::{ErrorCode, Image, ToolError};

/// A typed hint that tells the model what to do next. Serialized with a
/// snake_case `kind` tag, e.g. `{"kind": "need_confirm", ...}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Signal {
    /// Nothing was changed: the action needs explicit confirmation.
    NeedConfirm {
        /// What the user must confirm, in words.
        message: String,
        /// The parameter that confirms it, e.g. `force`.
        confirm_param: String,
        /// The value that confirms it, e.g. `true`.
        confirm_value: Value,
    },
    /// The request asked for more than is served.
    BeyondRange {
        /// What was asked for.
        requested: Value,
        /// The last value that is served.
        limit: Value,
        /// What to use instead.
        instead: String,
        /// A tool that serves the request instead, when this deployment has
        /// one (e.g. another MCP server's `weather__get_forecast`); the model
        /// may call it with the same request.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        use_tool: Option<String>,
    },
    /// A capability is not available here.
    Unavailable {
        /// Why it is not available.
        reason: String,
        /// How an operator enables it.
        how_to_enable: String,
    },
    /// Records related to the result that the model should tell the user about.
    RelatedItems {
        /// What the items are, in words.
        message: String,
        /// The items.
        items: Vec<Value>,
    },
    /// An idempotent write found an identical earlier record and returned it.
    Duplicate {
        /// What happened, in words.
        message: String,
        /// The existing record.
        existing: Value,
    },
}

impl Signal {
    /// The wire name of the signal's kind.
    pub fn kind(&self) -> &'static str {
        match self {
            Signal::NeedConfirm { .. } => "need_confirm",
            Signal::BeyondRange { .. } => "beyond_range",
            Signal::Unavailable { .. } => "unavailable",
            Signal::RelatedItems { .. } => "related_items",
            Signal::Duplicate { .. } => "duplicate",
        }
    }
}

/// The error part of a failed envelope.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ErrorBody {
    /// The standard code.
    pub code: ErrorCode,
    /// What went wrong and how to fix it.
    pub message: String,
    /// Structured details, when there are any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<Value>,
}

/// Facts about the call itself.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Metadata {
    /// The tool that was called (as the caller named it).
    pub tool: String,
    /// Wall time of the whole call, in milliseconds (fractional).
    pub duration_ms: f64,
    /// How many times the tool ran (0 when it never ran, e.g. invalid params).
    pub attempts: u32,
    /// When the call finished, RFC 3339 in UTC.
    pub timestamp: String,
    /// For a listing (tool discovery): how many items matched in all, when
    /// the result shows only a page of them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<u64>,
}

impl Metadata {
    /// Metadata stamped with the current time.
    pub fn now(tool: impl Into<String>, duration_ms: f64, attempts: u32) -> Self {
        Self {
            tool: tool.into(),
            duration_ms,
            attempts,
            timestamp: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
            total: None,
        }
    }
}

/// The one result shape of every tool call, success or failure.
///
/// ```json
/// {"success": true, "result": {...}, "error": null, "signals": [], "metadata": {...}}
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Envelope {
    /// Whether the call succeeded.
    pub success: bool,
    /// The result on success (`null` on failure).
    pub result: Option<Value>,
    /// The error on failure (`null` on success).
    pub error: Option<ErrorBody>,
    /// Typed hints for the model, on success and on failure.
    pub signals: Vec<Signal>,
    /// Facts about the call.
    pub metadata: Metadata,
    /// Images that go with the result (MCP `ImageContent`); absent when none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub images: Vec<Image>,
}

impl Envelope {
    /// A successful envelope.
    pub fn ok(result: Value, signals: Vec<Signal>, metadata: Metadata) -> Self {
        Self { success: true, result: Some(result), error: None, signals, metadata, images: Vec::new() }
    }

    /// A failed envelope built from a tool error.
    pub fn err(error: ToolError, metadata: Metadata) -> Self {
        Self {
            success: false,
            result: None,
            error: Some(ErrorBody { code: error.code, message: error.message, details: error.details }),
            signals: error.signals,
            metadata,
            images: Vec::new(),
        }
    }

    /// The same envelope with these images beside its result.
    pub fn with_images(mut self, images: Vec<Image>) -> Self {
        self.images = images;
        self
    }

    /// The error code, when the call failed.
    pub fn code(&self) -> Option<ErrorCode> {
        self.error.as_ref().map(|e| e.code)
    }

    /// Whether any signal of this kind is present.
    pub fn has_signal(&self, kind: &str) -> bool {
        self.signals.iter().any(|s| s.kind() == kind)
    }

    /// The envelope as a JSON value.
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    /// The JSON Schema (2020-12) of the envelope, used as MCP `outputSchema`.
    ///
    /// Kept deliberately small: it is sent once per listed tool, and every
    /// byte of it is read by the model before its first call.
    pub fn json_schema() -> Value {
        serde_json::json!({
            "type": "object",
            "required": ["success", "result", "error", "signals", "metadata"],
            "properties": {
                "success": {"type": "boolean"},
                "result": {},
                "error": {
                    "type": ["object", "null"],
                    "properties": {"code": {"type": "string"}, "message": {"type": "string"}, "details": {}}
                },
                "signals": {"type": "array", "items": {"type": "object", "properties": {"kind": {"type": "string"}}}},
                "metadata": {"type": "object"}
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn check_signal(signal: Signal, kind: &str) {
        let v = serde_json::to_value(&signal).unwrap();
        assert_eq!(v["kind"], kind);
        assert_eq!(signal.kind(), kind);
        let back: Signal = serde_json::from_value(v).unwrap();
        assert_eq!(back, signal);
    }

    #[test]
    fn every_signal_kind_round_trips_with_snake_case_tag() {
        check_signal(
            Signal::NeedConfirm {
                message: "cancel an approved order".into(),
                confirm_param: "force".into(),
                confirm_value: json!(true),
            },
            "need_confirm",
        );
        check_signal(
            Signal::BeyondRange {
                requested: json!("2026-12-09"),
                limit: json!("2026-12-01"),
                instead: "ask again closer to the date".into(),
                use_tool: None,
            },
            "beyond_range",
        );
        check_signal(
            Signal::BeyondRange {
                requested: json!("2026-12-09"),
                limit: json!("2026-12-01"),
                instead: "call weather__get_forecast".into(),
                use_tool: Some("weather__get_forecast".into()),
            },
            "beyond_range",
        );
        let without = serde_json::to_value(Signal::BeyondRange {
            requested: json!(1),
            limit: json!(0),
            instead: "x".into(),
            use_tool: None,
        })
        .unwrap();
        assert!(without.get("use_tool").is_none(), "absent, not null: {without}");
        check_signal(
            Signal::Unavailable { reason: "no provider".into(), how_to_enable: "set X".into() },
            "unavailable",
        );
        check_signal(
            Signal::RelatedItems { message: "bookings left".into(), items: vec![json!({"id": 1})] },
            "related_items",
        );
        check_signal(
            Signal::Duplicate { message: "exists".into(), existing: json!({"order_id": 7}) },
            "duplicate",
        );
    }

    #[test]
    fn every_error_code_serializes_to_its_wire_name() {
        for (i, code) in ErrorCode::ALL.into_iter().enumerate() {
            assert_eq!(code.index(), i, "{code}: ALL is in declaration order");
            let v = serde_json::to_value(code).unwrap();
            assert_eq!(v, json!(code.as_str()));
            let back: ErrorCode = serde_json::from_value(v).unwrap();
            assert_eq!(back, code);
        }
    }

    #[test]
    fn failed_envelope_carries_code_details_and_signals() {
        let err = ToolError::conflict("order is CANCELLED")
            .with_signal(Signal::RelatedItems { message: "m".into(), items: vec![] });
        let env = Envelope::err(err, Metadata::now("cancel_booking", 1.5, 1));
        let v = env.to_value();
        assert_eq!(v["success"], false);
        assert_eq!(v["result"], Value::Null);
        assert_eq!(v["error"]["code"], "CONFLICT");
        assert_eq!(v["signals"][0]["kind"], "related_items");
        assert_eq!(v["metadata"]["attempts"], 1);
        assert!(v["metadata"]["timestamp"].as_str().unwrap().ends_with('Z'));
    }
}
