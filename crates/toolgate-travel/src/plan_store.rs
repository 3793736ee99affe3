//! Where full plans live between `plan_itinerary` and `review_planner_result`:
//! the `travel_plans` table by default, or Redis (one key per plan, with a
//! TTL). Either way a plan is visible only to the user who made it.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use redis::aio::MultiplexedConnection;
use serde_json::{Value, json};
use tokio::sync::Mutex;
use toolgate_core::ToolError;

use crate::config::{ENV_REDIS_URL, PlanStoreConfig};
use crate::store::Store;

const REDIS_PREFIX: &str = "toolgate:travel:plan:";
const REDIS_CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// The plan store.
#[derive(Clone)]
pub(crate) enum PlanStore {
    Sql { store: Store, ttl: Duration },
    Redis(Arc<RedisPlans>),
}

pub(crate) struct RedisPlans {
    client: Result<redis::Client, String>,
    conn: Mutex<Option<MultiplexedConnection>>,
    ttl: Duration,
}

impl fmt::Debug for PlanStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PlanStore::Sql { ttl, .. } => write!(f, "PlanStore::Sql(ttl={}s)", ttl.as_secs()),
            PlanStore::Redis(r) => write!(f, "PlanStore::Redis(ttl={}s)", r.ttl.as_secs()),
        }
    }
}

fn unavailable(what: &str) -> ToolError {
    ToolError::unavailable(format!(
        "the plan store (Redis) cannot be reached, so {what}; try again in a moment"
    ))
}

impl PlanStore {
    pub(crate) fn new(config: &PlanStoreConfig, store: Store) -> Self {
        match config {
            PlanStoreConfig::Sql { ttl } => PlanStore::Sql { store, ttl: *ttl },
            PlanStoreConfig::Redis { url, ttl, ca_pem } => {
                let client = toolgate_db::redis_client(url, ca_pem.as_deref()).map_err(|e| {
                    tracing::error!(target: "toolgate_travel::plans", error = %e, "the Redis URL for the plan store does not parse");
                    format!("the Redis URL in {ENV_REDIS_URL} is not valid")
                });
                PlanStore::Redis(Arc::new(RedisPlans { client, conn: Mutex::new(None), ttl: *ttl }))
            }
        }
    }

    /// `"sql"` or `"redis"`.
    pub(crate) fn backend(&self) -> &'static str {
        match self {
            PlanStore::Sql { .. } => "sql",
            PlanStore::Redis(_) => "redis",
        }
    }

    pub(crate) fn ttl(&self) -> Duration {
        match self {
            PlanStore::Sql { ttl, .. } => *ttl,
            PlanStore::Redis(r) => r.ttl,
        }
    }

    /// Keep a plan for its user.
    pub(crate) async fn save(&self, plan_id: &str, user_id: &str, body: &str) -> Result<(), ToolError> {
        match self {
            PlanStore::Sql { store, ttl } => {
                let expires = chrono::Utc::now()
                    + chrono::Duration::from_std(*ttl).unwrap_or(chrono::Duration::days(1));
                store
                    .save_plan(plan_id, user_id, body, expires)
                    .await
                    .map_err(|e| e.to_tool_error("saving the plan"))
            }
            PlanStore::Redis(r) => {
                let value = json!({"user_id": user_id, "body": body}).to_string();
                let key = format!("{REDIS_PREFIX}{plan_id}");
                let ttl = r.ttl.as_secs().max(1);
                r.run("the plan was not saved", |mut conn| async move {
                    redis::cmd("SET")
                        .arg(&key)
                        .arg(&value)
                        .arg("EX")
                        .arg(ttl)
                        .query_async::<()>(&mut conn)
                        .await
                })
                .await
            }
        }
    }

    /// The plan, if it exists, has not expired and belongs to `user_id`.
    pub(crate) async fn load(&self, plan_id: &str, user_id: &str) -> Result<Option<String>, ToolError> {
        match self {
            PlanStore::Sql { store, .. } => {
                store.load_plan(plan_id, user_id).await.map_err(|e| e.to_tool_error("reading the plan"))
            }
            PlanStore::Redis(r) => {
                let key = format!("{REDIS_PREFIX}{plan_id}");
                let raw: Option<String> = r
                    .run("the plan could not be read", |mut conn| async move {
                        redis::cmd("GET").arg(&key).query_async::<Option<String>>(&mut conn).await
                    })
                    .await?;
                let Some(raw) = raw else { return Ok(None) };
                let wrapper: Value = serde_json::from_str(&raw).unwrap_or(Value::Null);
                if wrapper.get("user_id").and_then(Value::as_str) != Some(user_id) {
                    return Ok(None);
                }
                Ok(wrapper.get("body").and_then(Value::as_str).map(str::to_string))
            }
        }
    }
}

impl RedisPlans {
    /// Run one command on the shared connection, connecting (again) when needed.
    async fn run<T, F, Fut>(&self, what: &str, f: F) -> Result<T, ToolError>
    where
        F: FnOnce(MultiplexedConnection) -> Fut,
        Fut: std::future::Future<Output = redis::RedisResult<T>>,
    {
        // A URL that does not parse will not parse on retry either.
        let client = self
            .client
            .as_ref()
            .map_err(|why| ToolError::unavailable(format!("{why}, so {what}")).transient(false))?;
        let conn = {
            let mut guard = self.conn.lock().await;
            match guard.as_ref() {
                Some(conn) => conn.clone(),
                None => {
                    let fresh = tokio::time::timeout(
                        REDIS_CONNECT_TIMEOUT,
                        client.get_multiplexed_async_connection(),
                    )
                    .await
                    .map_err(|_| {
                        tracing::warn!(target: "toolgate_travel::plans", "connecting to Redis timed out");
                        unavailable(what)
                    })?
                    .map_err(|e| {
                        tracing::warn!(target: "toolgate_travel::plans", error = %e, "connecting to Redis failed");
                        // A refused certificate will be refused again: say so, and do not retry.
                        match toolgate_db::redis_certificate_problem(&e) {
                            Some(problem) => {
                                ToolError::unavailable(format!("{problem}; {what}")).transient(false)
                            }
                            None => unavailable(what),
                        }
                    })?;
                    *guard = Some(fresh.clone());
                    fresh
                }
            }
        };
        match f(conn).await {
            Ok(v) => Ok(v),
            Err(e) => {
                tracing::warn!(target: "toolgate_travel::plans", error = %e, "Redis command failed");
                if e.is_io_error() || e.is_connection_dropped() || e.is_timeout() {
                    *self.conn.lock().await = None;
                }
                Err(unavailable(what))
            }
        }
    }
}
