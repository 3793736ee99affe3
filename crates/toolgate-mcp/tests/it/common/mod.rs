//! Test support: the real server on 127.0.0.1:0 over the demo gateway and
//! an SQLite key store in a tempdir, and raw HTTP helpers (reqwest) that
//! speak streamable HTTP by hand.

#![allow(dead_code, unreachable_pub)]

pub mod demo;

use std::sync::Arc;
use std::sync::atomic::AtomicUsize;
use std::time::Duration;

use reqwest::header::AUTHORIZATION;
use serde_json::{Value, json};
use tokio::sync::oneshot;
use toolgate_mcp::{Exposure, HttpConfig, HttpState, KeyStore, serve_http};
use toolgate_test_support::mcp;

/// A running server and the keys of one user per role.
pub struct TestServer {
    pub base: String,
    /// The address, for raw sockets.
    pub addr: std::net::SocketAddr,
    /// The key store's database, for a second store as another process would open it.
    pub keys_url: String,
    pub keys: KeyStore,
    /// The gateway behind the server, for calls that skip HTTP.
    pub gateway: toolgate_gateway::Gateway,
    pub admin: String,
    pub manager: String,
    pub member: String,
    pub guest: String,
    pub dropped: Arc<AtomicUsize>,
    pub started: Arc<AtomicUsize>,
    pub client: reqwest::Client,
    stop: Option<oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<std::io::Result<()>>>,
    _dir: tempfile::TempDir,
}

impl TestServer {
    pub async fn start(exposure: Exposure, config: HttpConfig) -> Self {
        Self::start_with(exposure, config, |state| state).await
    }

    /// Start with a last say on the state (e.g. a credential hook).
    pub async fn start_with(
        exposure: Exposure,
        config: HttpConfig,
        adjust: impl FnOnce(HttpState) -> HttpState,
    ) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite:{}", dir.path().join("keys.db").display());
        let keys = KeyStore::connect(&url).await.unwrap();
        let admin = keys.create("ada", "admin").await.unwrap().key.expose().to_owned();
        let manager = keys.create("max", "manager").await.unwrap().key.expose().to_owned();
        let member = keys.create("mia", "member").await.unwrap().key.expose().to_owned();
        let guest = keys.create("gus", "guest").await.unwrap().key.expose().to_owned();
        let demo = demo::demo();
        let state = adjust(
            HttpState::new(demo.gateway.clone(), keys.clone()).with_exposure(exposure).with_config(config),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let base = format!("http://{addr}");
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(serve_http(listener, state, async {
            let _ = stopped.await;
        }));
        let client = reqwest::Client::builder().timeout(Duration::from_secs(30)).build().unwrap();
        Self {
            base,
            addr,
            keys_url: url,
            keys,
            gateway: demo.gateway.clone(),
            admin,
            manager,
            member,
            guest,
            dropped: demo.dropped,
            started: demo.started,
            client,
            stop: Some(stop),
            task: Some(task),
            _dir: dir,
        }
    }

    pub async fn default() -> Self {
        Self::start(Exposure::Meta, HttpConfig::default()).await
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// Stop the server and wait until it has finished (graceful shutdown).
    pub async fn stop(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(task) = self.task.take() {
            tokio::time::timeout(Duration::from_secs(20), task)
                .await
                .expect("the server shuts down")
                .unwrap()
                .unwrap();
        }
    }

    /// A POST to /mcp with the usual headers.
    pub async fn post(&self, key: &str, session: Option<&str>, body: &Value) -> Reply {
        self.post_raw(key, session, "application/json", body.to_string()).await
    }

    pub async fn post_raw(
        &self,
        key: &str,
        session: Option<&str>,
        content_type: &str,
        body: String,
    ) -> Reply {
        mcp::post_raw(&self.client, &self.url("/mcp"), Some(key), session, content_type, body).await.unwrap()
    }

    /// `initialize` + `notifications/initialized`; the session id.
    pub async fn open_session(&self, key: &str) -> (String, Value) {
        mcp::open_session(&self.client, &self.url("/mcp"), Some(key)).await
    }

    /// One JSON-RPC request in a session; the whole reply.
    pub async fn request(&self, key: &str, session: &str, id: u64, method: &str, params: Value) -> Reply {
        self.post(key, Some(session), &mcp::request(id, method, params)).await
    }

    /// `tools/call` in a session; the JSON-RPC `result`.
    pub async fn call(&self, key: &str, session: &str, name: &str, arguments: Value) -> Value {
        let reply =
            self.request(key, session, 7, "tools/call", json!({"name": name, "arguments": arguments})).await;
        assert_eq!(reply.status, 200, "{}", reply.text);
        let response = reply.response(7).unwrap_or_else(|| panic!("no response in {}", reply.text));
        assert!(response.get("error").is_none(), "JSON-RPC error: {response}");
        response["result"].clone()
    }

    /// `execute_tool` of `tool` in a session; the JSON-RPC `result`.
    pub async fn execute(&self, key: &str, session: &str, tool: &str, parameters: Value) -> Value {
        self.call(key, session, "execute_tool", json!({"tool_name": tool, "parameters": parameters})).await
    }

    /// A POST to `/mcp` as `key` with the headers every MCP request carries
    /// (in `session`, when given); the body is the caller's to set.
    pub fn mcp_post(&self, key: &str, session: Option<&str>) -> reqwest::RequestBuilder {
        let request = self
            .client
            .post(self.url("/mcp"))
            .header(AUTHORIZATION, format!("Bearer {key}"))
            .header(reqwest::header::ACCEPT, "application/json, text/event-stream")
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .header("mcp-protocol-version", mcp::PROTOCOL);
        match session {
            Some(session) => request.header("mcp-session-id", session),
            None => request,
        }
    }

    /// A GET with a bearer key, its body not read (an SSE stream such as `/trace`).
    pub async fn stream(&self, key: &str, path: &str) -> reqwest::Response {
        self.client.get(self.url(path)).header(AUTHORIZATION, format!("Bearer {key}")).send().await.unwrap()
    }

    /// A GET with a bearer key.
    pub async fn get(&self, key: Option<&str>, path: &str) -> Reply {
        let mut request = self.client.get(self.url(path));
        if let Some(key) = key {
            request = request.header(AUTHORIZATION, format!("Bearer {key}"));
        }
        Reply::read(request.send().await.unwrap()).await.unwrap()
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

pub use toolgate_test_support::mcp::{PROTOCOL, Reply, SseReader, initialize};
