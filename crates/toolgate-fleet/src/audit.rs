//! The audit trail in `toolgate_audit` (SQLite or PostgreSQL): appended by
//! the gateway through [`toolgate_gateway::AuditSink`], read by `toolgate audit` and
//! `/api/audit`, shortened only by retention pruning. There is no update
//! and no delete of a chosen row here, and a trigger refuses UPDATE.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sqlx::QueryBuilder;
use toolgate_gateway::{AuditRecord, AuditSink};

use crate::{Error, Result};

/// The table that records which of this crate's migrations ran.
pub const AUDIT_MIGRATIONS_TABLE: &str = "_toolgate_audit_migrations";

/// The most rows one query answers.
pub const MAX_AUDIT_ROWS: u32 = 1000;

macro_rules! dispatch {
    ($store:expr, |$pool:ident| $body:expr) => {
        match $store.db.pool() {
            toolgate_db::Pool::Sqlite($pool) => $body,
            toolgate_db::Pool::Postgres($pool) => $body,
        }
    };
}

/// The audit trail. Cheap to clone.
#[derive(Clone, Debug)]
pub struct SqlAudit {
    db: toolgate_db::Db,
    instance: String,
}

/// One stored record, as [`SqlAudit::query`] answers it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct AuditEntry {
    /// Increasing with every append.
    pub id: i64,
    /// When the call finished (RFC 3339 UTC).
    pub at: String,
    /// Who called.
    pub user_id: String,
    /// With which role.
    pub role: String,
    /// The API key's id, when a key was used.
    pub key_id: Option<String>,
    /// The tool.
    pub tool: String,
    /// The parameters, secrets redacted.
    pub params: Value,
    /// `OK` or the error code.
    pub outcome: String,
    /// Ids the call created or changed.
    pub ids: Value,
    /// Which toolgate instance served it.
    pub instance: String,
    /// The call's trace id.
    pub trace_id: String,
}

/// A row as stored: JSON as text on both backends.
#[derive(sqlx::FromRow)]
struct Row {
    id: i64,
    at: String,
    user_id: String,
    role: String,
    key_id: Option<String>,
    tool: String,
    params: String,
    outcome: String,
    ids: String,
    instance: String,
    trace_id: String,
}

impl From<Row> for AuditEntry {
    fn from(r: Row) -> Self {
        let json = |text: &str| serde_json::from_str(text).unwrap_or(Value::Null);
        Self {
            id: r.id,
            at: r.at,
            user_id: r.user_id,
            role: r.role,
            key_id: r.key_id,
            tool: r.tool,
            params: json(&r.params),
            outcome: r.outcome,
            ids: json(&r.ids),
            instance: r.instance,
            trace_id: r.trace_id,
        }
    }
}

/// Which records to read. Unset fields do not filter: `AuditQuery::default()`
/// reads the newest 100 records; narrow it with the `with_*` methods.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
#[non_exhaustive]
pub struct AuditQuery {
    /// Only this user's calls.
    pub user: Option<String>,
    /// Only calls of this tool.
    pub tool: Option<String>,
    /// Only this outcome (`OK`, `PERMISSION_DENIED`, ...).
    pub outcome: Option<String>,
    /// Only calls at or after this time (RFC 3339, e.g. `2026-11-30T12:00:00Z`).
    pub since: Option<String>,
    /// At most this many, newest first (default 100, at most [`MAX_AUDIT_ROWS`]).
    pub limit: Option<u32>,
}

impl AuditQuery {
    /// Only this user's calls.
    pub fn with_user(mut self, user: impl Into<String>) -> Self {
        self.user = Some(user.into());
        self
    }

    /// Only calls of this tool.
    pub fn with_tool(mut self, tool: impl Into<String>) -> Self {
        self.tool = Some(tool.into());
        self
    }

    /// Only this outcome (`OK` or an error code such as `PERMISSION_DENIED`).
    pub fn with_outcome(mut self, outcome: impl Into<String>) -> Self {
        self.outcome = Some(outcome.into());
        self
    }

    /// Only calls at or after this RFC 3339 time; a text that is not one makes
    /// [`SqlAudit::query`] fail with [`Error::InvalidQuery`].
    pub fn with_since(mut self, since: impl Into<String>) -> Self {
        self.since = Some(since.into());
        self
    }

    /// At most this many records (clamped to 1..=[`MAX_AUDIT_ROWS`]).
    pub fn with_limit(mut self, limit: u32) -> Self {
        self.limit = Some(limit);
        self
    }
}

/// `2026-11-30T12:00:00Z` as the table writes it (milliseconds, `Z`), so text comparison is time comparison.
fn normalize_time(text: &str) -> Result<String> {
    let time = chrono::DateTime::parse_from_rfc3339(text.trim()).map_err(|e| {
        Error::InvalidQuery(format!("`since` must be an RFC 3339 time such as 2026-11-30T12:00:00Z ({e})"))
    })?;
    Ok(time.with_timezone(&chrono::Utc).to_rfc3339_opts(chrono::SecondsFormat::Millis, true))
}

impl SqlAudit {
    /// Connect to `url` (`sqlite:file.db`, `sqlite::memory:`, `postgres://...`)
    /// with its own pool and apply the migrations (for the CLI and tests;
    /// a server shares its one pool through [`SqlAudit::open`]).
    pub async fn connect(url: &str, instance: impl Into<String>) -> Result<Self> {
        if !(url.starts_with("sqlite:") || url.starts_with("postgres://") || url.starts_with("postgresql://"))
        {
            return Err(Error::UnsupportedUrl);
        }
        let db = toolgate_db::Db::connect(&toolgate_db::DbConfig::new(url)).await?;
        Self::open(db, instance).await
    }

    /// The audit trail on the process's pool; applies the migrations.
    /// `instance` names this process in every record.
    pub async fn open(db: toolgate_db::Db, instance: impl Into<String>) -> Result<Self> {
        let audit = Self { db, instance: instance.into() };
        audit.migrate().await?;
        Ok(audit)
    }

    /// Apply the migrations (idempotent).
    pub async fn migrate(&self) -> Result<()> {
        self.db
            .migrate(toolgate_db::MigrationSet {
                owner: "audit",
                table: AUDIT_MIGRATIONS_TABLE,
                sqlite: sqlx::migrate!("./migrations/sqlite"),
                postgres: sqlx::migrate!("./migrations/postgres"),
            })
            .await?;
        Ok(())
    }

    /// This process's name in the records.
    pub fn instance(&self) -> &str {
        &self.instance
    }

    /// Append one record.
    pub async fn append(&self, record: &AuditRecord) -> Result<()> {
        let params = record.params.to_string();
        let ids = record.ids.to_string();
        let sql = "INSERT INTO toolgate_audit \
                   (at, user_id, role, key_id, tool, params, outcome, ids, instance, trace_id) \
                   VALUES ";
        dispatch!(self, |pool| {
            let mut q = QueryBuilder::new(sql);
            q.push("(")
                .push_bind(&record.at)
                .push(", ")
                .push_bind(&record.user_id)
                .push(", ")
                .push_bind(&record.role)
                .push(", ")
                .push_bind(&record.key_id)
                .push(", ")
                .push_bind(&record.tool)
                .push(", ")
                .push_bind(&params)
                .push(", ")
                .push_bind(&record.outcome)
                .push(", ")
                .push_bind(&ids)
                .push(", ")
                .push_bind(&self.instance)
                .push(", ")
                .push_bind(&record.trace_id)
                .push(")");
            q.build().execute(pool).await?;
        });
        Ok(())
    }

    /// Records matching `query`, newest first.
    pub async fn query(&self, query: &AuditQuery) -> Result<Vec<AuditEntry>> {
        let since = query.since.as_deref().map(normalize_time).transpose()?;
        let limit = i64::from(query.limit.unwrap_or(100).clamp(1, MAX_AUDIT_ROWS));
        let rows = dispatch!(self, |pool| {
            let mut q = QueryBuilder::new(
                "SELECT id, at, user_id, role, key_id, tool, params, outcome, ids, instance, trace_id \
                 FROM toolgate_audit WHERE 1 = 1",
            );
            if let Some(user) = &query.user {
                q.push(" AND user_id = ").push_bind(user);
            }
            if let Some(tool) = &query.tool {
                q.push(" AND tool = ").push_bind(tool);
            }
            if let Some(outcome) = &query.outcome {
                q.push(" AND outcome = ").push_bind(outcome);
            }
            if let Some(since) = &since {
                q.push(" AND at >= ").push_bind(since);
            }
            q.push(" ORDER BY id DESC LIMIT ").push_bind(limit);
            q.build_query_as::<Row>().fetch_all(pool).await?
        });
        Ok(rows.into_iter().map(AuditEntry::from).collect())
    }

    /// Retention: delete the records older than `age`; how many went.
    pub async fn prune_older_than(&self, age: Duration) -> Result<u64> {
        let age = chrono::Duration::from_std(age).unwrap_or(chrono::Duration::MAX);
        let cutoff = chrono::Utc::now()
            .checked_sub_signed(age)
            .unwrap_or(chrono::DateTime::<chrono::Utc>::MIN_UTC)
            .to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
        let deleted = dispatch!(self, |pool| {
            let mut q = QueryBuilder::new("DELETE FROM toolgate_audit WHERE at < ");
            q.push_bind(&cutoff);
            q.build().execute(pool).await?.rows_affected()
        });
        Ok(deleted)
    }

    /// Whether the database answers and the table exists (for `/readyz`).
    pub async fn ready(&self) -> Result<()> {
        dispatch!(self, |pool| {
            sqlx::query("SELECT 1 FROM toolgate_audit LIMIT 1").fetch_optional(pool).await?;
        });
        Ok(())
    }

    /// The (shared) pool's connections: (open, idle, most allowed), for `/metrics`.
    pub fn pool_use(&self) -> (u32, u32, u32) {
        let idle = dispatch!(self, |pool| pool.num_idle() as u32);
        (self.db.size(), idle, self.db.max_connections())
    }

    /// Close the pool (shared: only when the process is done with it).
    pub async fn close(&self) {
        self.db.close().await
    }
}

#[async_trait::async_trait]
impl AuditSink for SqlAudit {
    async fn record(&self, record: AuditRecord) {
        if let Err(error) = self.append(&record).await {
            // The call already happened; its answer goes out, the operator reads this.
            tracing::error!(%error, tool = %record.tool, user = %record.user_id, "an audit record was not stored");
        }
    }
}
