//! What several toolgate instances share, behind the gateway's traits:
//! rate-limit counters in Redis ([`RedisRateStore`], a [`toolgate_gateway::RateStore`])
//! and the append-only audit trail in SQLite or PostgreSQL ([`SqlAudit`], a
//! [`toolgate_gateway::AuditSink`] that can also be read and pruned).
//!
//! The gateway decides what is limited and what is audited; this crate only
//! counts and stores, so an embedder can bring other stores.

mod audit;
mod error;
mod redis_rate;

pub use audit::{AUDIT_MIGRATIONS_TABLE, AuditEntry, AuditQuery, MAX_AUDIT_ROWS, SqlAudit};
pub use error::{Error, Result};
pub use redis_rate::RedisRateStore;
