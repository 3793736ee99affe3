//! A real fitness-api on 127.0.0.1:0 (SQLite file in a temp dir, or the PostgreSQL of
//! TOOLGATE_TEST_PG_URL) and a gateway serving the six fitness tools against it.

use std::time::Duration;

use fitness_api::{Db, Server};
use gateway::{CallOptions, Gateway};
use serde_json::Value;
use tool_core::{Caller, Envelope, ToolContext};

pub(crate) struct Env {
    pub(crate) db: Db,
    pub(crate) server: Server,
    pub(crate) gateway: Gateway,
    pub(crate) backend: &'static str,
    _dir: Option<tempfile::TempDir>,
}

/// A user id no other test (or concurrent test binary, on a shared PostgreSQL) uses.
pub(crate) fn unique_user(label: &str) -> String {
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos();
    static COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    format!("fit-{label}-{}-{nanos:x}-{n}", std::process::id())
}

pub(crate) fn gateway_for(base_url: &str) -> Gateway {
    let options = fitness::HttpOptions::default().timeout(Duration::from_secs(10));
    let tools = fitness::tools(base_url, options).expect("tools build");
    Gateway::builder().tools(tools).build().expect("gateway builds")
}

impl Env {
    pub(crate) async fn sqlite() -> Env {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite:{}", dir.path().join("fitness.db").display());
        Self::start(&url, Some(dir)).await
    }

    /// None (with a note) when TOOLGATE_TEST_PG_URL is unset; a failure when TOOLGATE_REQUIRE_PG=1.
    pub(crate) async fn postgres() -> Option<Env> {
        match std::env::var("TOOLGATE_TEST_PG_URL") {
            Ok(url) if !url.is_empty() => Some(Self::start(&url, None).await),
            _ => {
                assert!(
                    std::env::var("TOOLGATE_REQUIRE_PG").as_deref() != Ok("1"),
                    "TOOLGATE_REQUIRE_PG=1 but TOOLGATE_TEST_PG_URL is not set"
                );
                eprintln!("skipped: PostgreSQL test (set TOOLGATE_TEST_PG_URL to run it)");
                None
            }
        }
    }

    async fn start(url: &str, dir: Option<tempfile::TempDir>) -> Env {
        let db = fitness_api::connect(url).await.unwrap();
        let backend = db.backend_name();
        let server = fitness_api::spawn("127.0.0.1:0", db.clone()).await.unwrap();
        let gateway = gateway_for(&server.url());
        Env { db, server, gateway, backend, _dir: dir }
    }

    /// A new user of the API and a member's context carrying its token.
    pub(crate) async fn user(&self, label: &str) -> ToolContext {
        let id = unique_user(label);
        let token = fitness_api::create_user(&self.db, &id).await.unwrap();
        ToolContext::new(Caller::new(id, "member").with_token(token))
    }

    pub(crate) async fn call(&self, ctx: &ToolContext, tool: &str, params: Value) -> Envelope {
        self.gateway.execute(ctx, tool, params, &CallOptions::default()).await
    }

    /// A call that must succeed; its `result`.
    pub(crate) async fn ok(&self, ctx: &ToolContext, tool: &str, params: Value) -> Value {
        let env = self.call(ctx, tool, params.clone()).await;
        assert!(env.success, "[{}] {tool} {params} failed: {:?}", self.backend, env.error);
        env.result.unwrap()
    }
}
