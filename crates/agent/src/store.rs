//! Stored conversations (SQLite or PostgreSQL, table `agent_conversations`
//! and `agent_messages`): every message of a run, with the envelope of each
//! tool result and the usage of each model turn. A conversation belongs to
//! one user; asking for it as anyone else is `NotFound`, exactly as if it
//! did not exist, so ids leak nothing.

use std::str::FromStr;
use std::time::Duration;

use serde::Serialize;
use serde_json::Value;
use sqlx::postgres::{PgConnectOptions, PgPool, PgPoolOptions};
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions};

use crate::model::Message;

/// The table that records which of this crate's migrations ran.
pub const MIGRATIONS_TABLE: &str = "_toolgate_agent_migrations";

/// A storage failure.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// No such conversation for this user.
    #[error("there is no conversation `{0}` for this user")]
    NotFound(String),
    /// Another run wrote to the conversation at the same time.
    #[error("conversation `{0}` is being continued by another run; try again when it finishes")]
    Conflict(String),
    /// The URL is neither `sqlite:` nor `postgres://`.
    #[error("unsupported database URL: use sqlite:... or postgres://...")]
    UnsupportedUrl,
    /// The database failed.
    #[error("database error: {0}")]
    Database(#[from] sqlx::Error),
    /// A migration failed.
    #[error("migration error: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
}

macro_rules! dispatch {
    ($store:expr, |$pool:ident| $body:expr) => {
        match &$store.backend {
            Backend::Sqlite($pool) => $body,
            Backend::Postgres($pool) => $body,
        }
    };
}

#[derive(Debug, Clone)]
enum Backend {
    Sqlite(SqlitePool),
    Postgres(PgPool),
}

/// One stored message with what was recorded beside it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StoredMessage {
    /// Its position in the conversation, from 0.
    pub seq: i32,
    /// `user`, `assistant` or `tool`.
    pub role: String,
    /// The Chat Completions message.
    pub message: Value,
    /// The envelope, for tool results.
    pub envelope: Option<Value>,
    /// The usage, for model turns.
    pub usage: Option<Value>,
}

/// A message to append.
#[derive(Debug, Clone)]
pub(crate) struct NewMessage {
    pub(crate) message: Message,
    pub(crate) envelope: Option<Value>,
    pub(crate) usage: Option<Value>,
}

/// The conversation store. Cheap to clone.
#[derive(Debug, Clone)]
pub struct ConversationStore {
    backend: Backend,
}

impl ConversationStore {
    /// Connect to `sqlite:...` (created when missing) or `postgres://...` and migrate.
    pub async fn connect(url: &str) -> Result<Self, StoreError> {
        let backend = if url.starts_with("sqlite:") {
            let memory = url.contains(":memory:") || url.contains("mode=memory");
            let options = SqliteConnectOptions::from_str(url)?
                .create_if_missing(true)
                .journal_mode(SqliteJournalMode::Wal)
                .busy_timeout(Duration::from_secs(10))
                .foreign_keys(true);
            let pool = SqlitePoolOptions::new()
                .max_connections(if memory { 1 } else { 4 })
                .min_connections(if memory { 1 } else { 0 })
                .idle_timeout(if memory { None } else { Some(Duration::from_secs(600)) })
                .max_lifetime(if memory { None } else { Some(Duration::from_secs(1800)) })
                .connect_with(options)
                .await?;
            Backend::Sqlite(pool)
        } else if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            let options = PgConnectOptions::from_str(url)?.application_name("toolgate-agent");
            let pool = PgPoolOptions::new().max_connections(4).connect_with(options).await?;
            Backend::Postgres(pool)
        } else {
            return Err(StoreError::UnsupportedUrl);
        };
        let store = Self { backend };
        store.migrate().await?;
        Ok(store)
    }

    /// Apply the migrations (idempotent).
    pub async fn migrate(&self) -> Result<(), StoreError> {
        let mut migrator = sqlx::migrate!("./migrations");
        migrator.dangerous_set_table_name(MIGRATIONS_TABLE);
        migrator.set_ignore_missing(true);
        dispatch!(self, |pool| migrator.run(pool).await?);
        Ok(())
    }

    /// A new, empty conversation of `user_id`.
    pub async fn create(&self, user_id: &str) -> Result<String, StoreError> {
        let id = format!("conv_{}", uuid::Uuid::new_v4().simple());
        let now = now();
        const SQL: &str =
            "INSERT INTO agent_conversations (id, user_id, created_at, updated_at) VALUES ($1, $2, $3, $3)";
        dispatch!(self, |pool| {
            sqlx::query(SQL).bind(&id).bind(user_id).bind(&now).execute(pool).await?;
        });
        Ok(id)
    }

    /// Every message of the conversation, if it is `user_id`'s.
    pub async fn messages(&self, id: &str, user_id: &str) -> Result<Vec<StoredMessage>, StoreError> {
        const OWNER: &str = "SELECT user_id FROM agent_conversations WHERE id = $1";
        let owner: Option<String> =
            dispatch!(self, |pool| sqlx::query_scalar(OWNER).bind(id).fetch_optional(pool).await?);
        if owner.as_deref() != Some(user_id) {
            return Err(StoreError::NotFound(id.chars().take(80).collect()));
        }
        const SQL: &str = "SELECT seq, role, message, envelope, usage FROM agent_messages \
                           WHERE conversation_id = $1 ORDER BY seq";
        type Row = (i32, String, String, Option<String>, Option<String>);
        let rows: Vec<Row> = dispatch!(self, |pool| sqlx::query_as(SQL).bind(id).fetch_all(pool).await?);
        let parse = |text: &str| serde_json::from_str(text).unwrap_or(Value::Null);
        Ok(rows
            .into_iter()
            .map(|(seq, role, message, envelope, usage)| StoredMessage {
                seq,
                role,
                message: parse(&message),
                envelope: envelope.as_deref().map(parse),
                usage: usage.as_deref().map(parse),
            })
            .collect())
    }

    /// Append messages at `first_seq`, `first_seq + 1`, ... A position
    /// already taken means another run wrote meanwhile: `Conflict`.
    pub(crate) async fn append(
        &self,
        id: &str,
        first_seq: i32,
        items: &[NewMessage],
    ) -> Result<(), StoreError> {
        const INSERT: &str = "INSERT INTO agent_messages (conversation_id, seq, role, message, envelope, usage, created_at) \
                              VALUES ($1, $2, $3, $4, $5, $6, $7)";
        const TOUCH: &str = "UPDATE agent_conversations SET updated_at = $1 WHERE id = $2";
        let now = now();
        let result: Result<(), sqlx::Error> = dispatch!(self, |pool| {
            let mut tx = pool.begin().await?;
            for (i, item) in items.iter().enumerate() {
                sqlx::query(INSERT)
                    .bind(id)
                    .bind(first_seq + i as i32)
                    .bind(&item.message.role)
                    .bind(item.message.to_wire().to_string())
                    .bind(item.envelope.as_ref().map(Value::to_string))
                    .bind(item.usage.as_ref().map(Value::to_string))
                    .bind(&now)
                    .execute(&mut *tx)
                    .await?;
            }
            sqlx::query(TOUCH).bind(&now).bind(id).execute(&mut *tx).await?;
            tx.commit().await
        });
        match result {
            Err(sqlx::Error::Database(e)) if e.is_unique_violation() => {
                Err(StoreError::Conflict(id.to_owned()))
            }
            other => Ok(other?),
        }
    }
}

fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}
