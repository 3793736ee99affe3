//! What several toolgate instances share, behind the gateway's traits:
//! rate-limit counters in Redis ([`RedisRateStore`], a [`toolgate_gateway::RateStore`])
//! and the append-only audit trail in SQLite or PostgreSQL ([`SqlAudit`], a
//! [`toolgate_gateway::AuditSink`] that can also be read and pruned).
//!
//! The gateway decides what is limited and what is audited; this crate only
//! counts and stores, so an embedder can bring other stores.
//!
//! # Example
//!
//! A gateway that audits its one write tool into a SQLite file, and the
//! trail read back:
//!
//! ```
//! use std::sync::Arc;
//!
//! use serde_json::json;
//! use toolgate_core::{Caller, Effect, FnTool, ToolContext, ToolOutput, ToolSpec};
//! use toolgate_fleet::{AuditQuery, SqlAudit};
//! use toolgate_gateway::{CallOptions, Gateway};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let dir = tempfile::tempdir()?;
//! let url = format!("sqlite:{}", dir.path().join("audit.db").display());
//! let audit = SqlAudit::connect(&url, "instance-1").await?;
//!
//! let spec = ToolSpec::new(
//!     "add_note",
//!     "Stores a note.",
//!     json!({
//!         "type": "object",
//!         "properties": {"text": {"type": "string"}},
//!         "additionalProperties": false,
//!     }),
//! )
//! .with_role("member")
//! .with_effect(Effect::Write { idempotent: false });
//! let tool = FnTool::new(spec, |_ctx, _params| {
//!     Box::pin(async { Ok(ToolOutput::json(json!({"note_id": 7}))) })
//! });
//! let gateway = Gateway::builder().tool(Arc::new(tool)).audit(Arc::new(audit.clone())).build()?;
//!
//! let ctx = ToolContext::new(Caller::new("ada", "member"));
//! let answer = gateway.execute(&ctx, "add_note", json!({"text": "hi"}), &CallOptions::default()).await;
//! assert!(answer.success);
//!
//! let rows = audit.query(&AuditQuery::default().with_user("ada")).await?;
//! assert_eq!(rows.len(), 1);
//! assert_eq!((rows[0].tool.as_str(), rows[0].outcome.as_str()), ("add_note", "OK"));
//! assert_eq!(rows[0].ids, json!({"note_id": 7}));
//! assert_eq!(rows[0].instance, "instance-1");
//! # Ok(())
//! # }
//! ```
//!
//! A fleet's rate limits in Redis: `RedisRateStore::new("redis://host:6379/0")`
//! handed to `GatewayBuilder::rate_limits`; nothing is contacted until
//! the first limited call.
#![deny(missing_docs)]

mod audit;
mod error;
mod redis_rate;

pub use audit::{AUDIT_MIGRATIONS_TABLE, AuditEntry, AuditQuery, MAX_AUDIT_ROWS, SqlAudit};
pub use error::{Error, Result};
pub use redis_rate::RedisRateStore;
