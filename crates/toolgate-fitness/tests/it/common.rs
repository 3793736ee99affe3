//! A real fitness-api on 127.0.0.1:0 (SQLite file in a temp dir, or the PostgreSQL of
//! TOOLGATE_TEST_PG_URL) and a gateway serving the six fitness tools against it.

use std::time::Duration;

use serde_json::Value;
use toolgate_core::{Caller, Envelope, ToolContext};
use toolgate_fitness_api::{Db, Server};
use toolgate_gateway::{CallOptions, Gateway};

pub(crate) struct Env {
    pub(crate) db: Db,
    pub(crate) server: Server,
    pub(crate) gateway: Gateway,
    pub(crate) backend: &'static str,
    /// Keeps the SQLite file alive.
    _backend: toolgate_test_support::pg::Backend,
}

/// A user id no other test (or concurrent test binary, on a shared PostgreSQL) uses.
pub(crate) fn unique_user(label: &str) -> String {
    toolgate_test_support::unique(&format!("fit-{label}"))
}

pub(crate) fn gateway_for(base_url: &str) -> Gateway {
    let options = toolgate_fitness::HttpOptions::default().timeout(Duration::from_secs(10));
    let tools = toolgate_fitness::tools(base_url, options).expect("tools build");
    Gateway::builder().tools(tools).build().expect("gateway builds")
}

impl Env {
    pub(crate) async fn sqlite() -> Env {
        Self::start(toolgate_test_support::pg::Backend::sqlite("fitness.db")).await
    }

    /// None (with a note) when TOOLGATE_TEST_PG_URL is unset; a failure when TOOLGATE_REQUIRE_PG=1.
    pub(crate) async fn postgres() -> Option<Env> {
        Some(Self::start(toolgate_test_support::pg::Backend::postgres()?).await)
    }

    async fn start(backend: toolgate_test_support::pg::Backend) -> Env {
        let db = toolgate_fitness_api::connect(&backend.url).await.unwrap();
        let server = toolgate_fitness_api::spawn("127.0.0.1:0", db.clone()).await.unwrap();
        let gateway = gateway_for(&server.url());
        Env { backend: db.backend_name(), db, server, gateway, _backend: backend }
    }

    /// A new user of the API and a member's context carrying its token.
    pub(crate) async fn user(&self, label: &str) -> ToolContext {
        let id = unique_user(label);
        let token = toolgate_fitness_api::create_user(&self.db, &id).await.unwrap();
        ToolContext::new(Caller::new(id, "member").with_credential(toolgate_fitness::BACKEND_ID, token))
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
