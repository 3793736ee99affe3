//! Test harness shared by the travel integration tests: the backends to run
//! on (a SQLite file always, PostgreSQL when TOOLGATE_TEST_PG_URL is set, see toolgate-test-support),
//! unique users, and calls through the tools as `Arc<dyn Tool>`.

use std::sync::Arc;

use serde_json::Value;
use toolgate_core::{Caller, Envelope, Metadata, Tool, ToolContext, ToolError, ToolOutput, ToolResult};
use toolgate_travel::{Store, TravelConfig};

/// One database the suite runs on, with the travel store opened on it.
pub struct Backend(toolgate_test_support::pg::Backend);

impl std::ops::Deref for Backend {
    type Target = toolgate_test_support::pg::Backend;
    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

impl std::fmt::Debug for Backend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl Backend {
    pub async fn store(&self) -> Store {
        toolgate_travel::connect(&self.url).await.unwrap_or_else(|e| panic!("{}: connect: {e}", self.name))
    }

    /// The store and the tools over it with the default configuration.
    pub async fn open(&self) -> (Store, Tools) {
        let store = self.store().await;
        (store.clone(), Tools::new(store, TravelConfig::default()))
    }
}

pub use toolgate_test_support::pg::url as pg_url;
pub use toolgate_test_support::redis::url as redis_url;

/// A fresh SQLite file in a temporary directory.
pub fn sqlite() -> Backend {
    Backend(toolgate_test_support::pg::Backend::sqlite("travel.db"))
}

/// SQLite always; PostgreSQL when configured.
pub fn backends() -> Vec<Backend> {
    toolgate_test_support::pg::Backend::all("travel.db").into_iter().map(Backend).collect()
}

/// A user id nobody else uses (PostgreSQL is shared by concurrent test binaries).
pub fn user(label: &str) -> String {
    toolgate_test_support::unique(label)
}

pub fn ctx(user: &str) -> ToolContext {
    ToolContext::new(Caller::new(user, "member"))
}

/// The travel tools by name.
pub struct Tools(pub Vec<Arc<dyn Tool>>);

impl Tools {
    pub fn new(store: Store, config: TravelConfig) -> Self {
        Tools(toolgate_travel::tools(store, config))
    }

    pub fn get(&self, name: &str) -> Arc<dyn Tool> {
        self.0.iter().find(|t| t.spec().name == name).cloned().unwrap_or_else(|| panic!("no tool {name}"))
    }

    pub async fn call(&self, user: &str, name: &str, params: Value) -> ToolResult {
        self.get(name).call(&ctx(user), params).await
    }

    /// Call and expect success.
    pub async fn ok(&self, user: &str, name: &str, params: Value) -> ToolOutput {
        match self.call(user, name, params.clone()).await {
            Ok(out) => out,
            Err(e) => panic!("{name}({params}) failed: {e:?}"),
        }
    }

    /// Call and expect failure.
    pub async fn err(&self, user: &str, name: &str, params: Value) -> ToolError {
        match self.call(user, name, params.clone()).await {
            Ok(out) => panic!("{name}({params}) succeeded: {out:?}"),
            Err(e) => e,
        }
    }
}

/// The JSON result of a successful output.
pub fn json(out: &ToolOutput) -> &Value {
    match &out.payload {
        toolgate_core::Payload::Json(v) => v,
        other => panic!("not JSON: {other:?}"),
    }
}

/// The envelope a gateway would answer for this result.
pub fn envelope(tool: &str, result: &ToolResult) -> Envelope {
    let meta = Metadata::now(tool, 1.0, 1);
    match result {
        Ok(out) => Envelope::ok(json(out).clone(), out.signals.clone(), meta),
        Err(e) => Envelope::err(e.clone(), meta),
    }
}

/// The pointers of an INVALID_PARAMS error.
pub fn pointers(err: &ToolError) -> Vec<String> {
    assert_eq!(err.code, toolgate_core::ErrorCode::InvalidParams, "{err:?}");
    err.details.as_ref().unwrap()["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["pointer"].as_str().unwrap().to_string())
        .collect()
}

/// A date `days` from today (UTC), as YYYY-MM-DD.
pub fn day(days: i64) -> String {
    (chrono::Utc::now().date_naive() + chrono::Duration::days(days)).to_string()
}

/// Parameters of a valid submit.
pub fn trip(destination: &str, from_day: i64, to_day: i64, purpose: &str) -> Value {
    serde_json::json!({
        "destination": destination,
        "departure_city": "Beijing",
        "departure_date": day(from_day),
        "return_date": day(to_day),
        "purpose": purpose,
    })
}

/// A raw connection pool to the backend, for what the tools must not do
/// (triggers, counting rows, killing sessions).
pub enum Raw {
    Sqlite(sqlx::SqlitePool),
    Postgres(sqlx::PgPool),
}

impl Backend {
    pub async fn raw(&self) -> Raw {
        if self.is_pg() {
            Raw::Postgres(sqlx::PgPool::connect(&self.url).await.unwrap())
        } else {
            Raw::Sqlite(sqlx::SqlitePool::connect(&self.url).await.unwrap())
        }
    }
}

impl Raw {
    /// Run SQL text (several statements allowed).
    pub async fn exec(&self, sql: &str) {
        let sql = sqlx::AssertSqlSafe(sql.to_string());
        match self {
            Raw::Sqlite(p) => {
                sqlx::raw_sql(sql).execute(p).await.unwrap();
            }
            Raw::Postgres(p) => {
                sqlx::raw_sql(sql).execute(p).await.unwrap();
            }
        }
    }

    /// Rows of `table` owned by `user`.
    pub async fn count(&self, table: &str, user: &str) -> i64 {
        let sql = sqlx::AssertSqlSafe(format!("SELECT COUNT(*) FROM {table} WHERE user_id = $1"));
        match self {
            Raw::Sqlite(p) => sqlx::query_scalar(sql).bind(user).fetch_one(p).await.unwrap(),
            Raw::Postgres(p) => sqlx::query_scalar(sql).bind(user).fetch_one(p).await.unwrap(),
        }
    }
}

/// Everything traced by this test binary, at every level and target, as
/// text. One global subscriber (thread-local ones miss events when another
/// thread registered the callsite first); tests look for their own unique
/// markers in it.
#[derive(Clone, Default)]
pub struct Logs(pub Arc<std::sync::Mutex<Vec<u8>>>);

impl Logs {
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap()).into_owned()
    }
}

impl std::io::Write for Logs {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The binary's log capture, installed on first use.
pub fn logs() -> Logs {
    static LOGS: std::sync::OnceLock<Logs> = std::sync::OnceLock::new();
    LOGS.get_or_init(|| {
        let logs = Logs::default();
        let writer = logs.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_max_level(tracing::Level::TRACE)
            .with_ansi(false)
            .with_writer(move || writer.clone())
            .finish();
        tracing::subscriber::set_global_default(subscriber).expect("no other global subscriber in tests");
        logs
    })
    .clone()
}
