//! Stored conversations (SQLite or PostgreSQL, table `agent_conversations`
//! and `agent_messages`): every message of a run, with the envelope of each
//! tool result and the usage of each model turn. A conversation belongs to
//! one user; asking for it as anyone else is `NotFound`, exactly as if it
//! did not exist, so ids leak nothing. It is also bound to the scope it was
//! started with (the caller's role, toolset, domains and tenant): the same
//! user continuing it from another scope, e.g. with a key narrowed to one
//! domain, is `ScopeMismatch`, so results of the wider scope never enter
//! the narrower one's model context.

use serde::Serialize;
use serde_json::Value;

use toolgate_core::Caller;

use crate::model::Message;

/// The table that records which of this crate's migrations ran.
pub const MIGRATIONS_TABLE: &str = "_toolgate_agent_migrations";

/// A storage failure.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// No such conversation for this user.
    #[error("there is no conversation `{0}` for this user")]
    NotFound(String),
    /// The conversation is this user's but was started with another scope.
    #[error(
        "conversation `{0}` was started with another role or scope (toolset, domains) than this key has; \
         continue it with the key it was started with, or start a new conversation"
    )]
    ScopeMismatch(String),
    /// Another run wrote to the conversation at the same time.
    #[error("conversation `{0}` is being continued by another run; try again when it finishes")]
    Conflict(String),
    /// The database failed (connect, query or migration).
    #[error(transparent)]
    Database(#[from] toolgate_db::Error),
}

impl From<sqlx::Error> for StoreError {
    fn from(e: sqlx::Error) -> Self {
        StoreError::Database(toolgate_db::Error::Database(e))
    }
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

/// The conversation store over the deployment's [`toolgate_db::Db`]. Cheap to clone.
#[derive(Debug, Clone)]
pub struct ConversationStore {
    db: toolgate_db::Db,
}

impl ConversationStore {
    /// A store over an open database; applies this crate's migrations.
    pub async fn new(db: toolgate_db::Db) -> Result<Self, StoreError> {
        db.migrate(toolgate_db::MigrationSet {
            owner: "agent",
            table: MIGRATIONS_TABLE,
            sqlite: sqlx::migrate!("./migrations"),
            postgres: sqlx::migrate!("./migrations"),
        })
        .await?;
        Ok(Self { db })
    }

    /// Connect to `sqlite:...` (created when missing) or `postgres://...`
    /// with the default pool settings, and migrate.
    pub async fn connect(url: &str) -> Result<Self, StoreError> {
        Self::new(toolgate_db::Db::connect(&toolgate_db::DbConfig::new(url)).await?).await
    }

    /// A new, empty conversation of `caller`'s user, bound to `caller`'s scope.
    pub async fn create(&self, caller: &Caller) -> Result<String, StoreError> {
        let id = format!("conv_{}", uuid::Uuid::new_v4().simple());
        let now = now();
        let scope = scope_of(caller);
        const SQL: &str = "INSERT INTO agent_conversations (id, user_id, created_at, updated_at, scope) \
                           VALUES ($1, $2, $3, $3, $4)";
        toolgate_db::on_pool!(self.db, toolgate_db::Error, |pool| {
            sqlx::query(SQL).bind(&id).bind(&caller.user_id).bind(&now).bind(&scope).execute(pool).await?;
        });
        Ok(id)
    }

    /// Every message of the conversation, for `caller` to continue it: it
    /// must be the caller's user's (else `NotFound`) and have been started
    /// with the caller's scope (else `ScopeMismatch`).
    pub async fn messages_for(&self, id: &str, caller: &Caller) -> Result<Vec<StoredMessage>, StoreError> {
        const OWNER: &str = "SELECT user_id, scope FROM agent_conversations WHERE id = $1";
        let row: Option<(String, Option<String>)> =
            toolgate_db::on_pool!(self.db, toolgate_db::Error, |pool| sqlx::query_as(OWNER)
                .bind(id)
                .fetch_optional(pool)
                .await?);
        match row {
            Some((user_id, _)) if user_id != caller.user_id => {}
            None => {}
            Some((_, scope)) if scope.as_deref() != Some(scope_of(caller).as_str()) => {
                return Err(StoreError::ScopeMismatch(id.chars().take(80).collect()));
            }
            Some(_) => return self.messages(id, &caller.user_id).await,
        }
        Err(StoreError::NotFound(id.chars().take(80).collect()))
    }

    /// Every message of the conversation, if it is `user_id`'s.
    pub async fn messages(&self, id: &str, user_id: &str) -> Result<Vec<StoredMessage>, StoreError> {
        const OWNER: &str = "SELECT user_id FROM agent_conversations WHERE id = $1";
        let owner: Option<String> =
            toolgate_db::on_pool!(self.db, toolgate_db::Error, |pool| sqlx::query_scalar(OWNER)
                .bind(id)
                .fetch_optional(pool)
                .await?);
        if owner.as_deref() != Some(user_id) {
            return Err(StoreError::NotFound(id.chars().take(80).collect()));
        }
        const SQL: &str = "SELECT seq, role, message, envelope, usage FROM agent_messages \
                           WHERE conversation_id = $1 ORDER BY seq";
        type Row = (i32, String, String, Option<String>, Option<String>);
        let rows: Vec<Row> = toolgate_db::on_pool!(self.db, toolgate_db::Error, |pool| sqlx::query_as(SQL)
            .bind(id)
            .fetch_all(pool)
            .await?);
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
        match self.insert(id, first_seq, items).await {
            Err(toolgate_db::Error::Database(sqlx::Error::Database(e))) if e.is_unique_violation() => {
                Err(StoreError::Conflict(id.to_owned()))
            }
            other => Ok(other?),
        }
    }

    /// One transaction, so a rerun on a fresh connection never doubles rows.
    async fn insert(&self, id: &str, first_seq: i32, items: &[NewMessage]) -> Result<(), toolgate_db::Error> {
        const INSERT: &str = "INSERT INTO agent_messages (conversation_id, seq, role, message, envelope, usage, created_at) \
                              VALUES ($1, $2, $3, $4, $5, $6, $7)";
        const TOUCH: &str = "UPDATE agent_conversations SET updated_at = $1 WHERE id = $2";
        let now = now();
        toolgate_db::on_pool!(self.db, toolgate_db::Error, |pool| {
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
            tx.commit().await?
        });
        Ok(())
    }
}

/// A caller's scope as stored with a conversation: canonical JSON (domains
/// sorted, fields in a fixed order), so equal scopes are equal text.
fn scope_of(caller: &Caller) -> String {
    let domains = caller.domains.as_ref().map(|d| {
        let mut d = d.clone();
        d.sort();
        d.dedup();
        d
    });
    serde_json::json!([caller.role, caller.toolset, domains, caller.tenant]).to_string()
}

fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}
