//! Test support: the real server on 127.0.0.1:0 over the demo gateway and
//! an SQLite key store in a tempdir, and raw HTTP helpers (reqwest) that
//! speak streamable HTTP by hand.

#![allow(dead_code, unreachable_pub)]

pub mod demo;

use std::sync::Arc;
use std::sync::atomic::AtomicUsize;
use std::time::Duration;

use mcp_server::{Exposure, HttpConfig, HttpState, KeyStore, serve_http};
use reqwest::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, HeaderMap};
use serde_json::{Value, json};
use tokio::sync::oneshot;

pub const PROTOCOL: &str = "2025-06-18";

/// A running server and the keys of one user per role.
pub struct TestServer {
    pub base: String,
    /// The address, for raw sockets.
    pub addr: std::net::SocketAddr,
    /// The key store's database, for a second store as another process would open it.
    pub keys_url: String,
    pub keys: KeyStore,
    /// The gateway behind the server, for calls that skip HTTP.
    pub gateway: gateway::Gateway,
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
        let mut request = self
            .client
            .post(self.url("/mcp"))
            .header(AUTHORIZATION, format!("Bearer {key}"))
            .header(ACCEPT, "application/json, text/event-stream")
            .header(CONTENT_TYPE, content_type)
            .body(body);
        if let Some(session) = session {
            request = request.header("mcp-session-id", session).header("mcp-protocol-version", PROTOCOL);
        }
        Reply::read(request.send().await.unwrap()).await
    }

    /// `initialize` + `notifications/initialized`; the session id.
    pub async fn open_session(&self, key: &str) -> (String, Value) {
        let reply = self.post(key, None, &initialize(1)).await;
        assert_eq!(reply.status, 200, "{}", reply.text);
        let session = reply.headers.get("mcp-session-id").expect("a session id").to_str().unwrap().to_owned();
        let result = reply.response(1).expect("an initialize result")["result"].clone();
        let ack = self
            .post(key, Some(&session), &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        assert_eq!(ack.status, 202, "{}", ack.text);
        (session, result)
    }

    /// One JSON-RPC request in a session; the whole reply.
    pub async fn request(&self, key: &str, session: &str, id: u64, method: &str, params: Value) -> Reply {
        self.post(
            key,
            Some(session),
            &json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}),
        )
        .await
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

    /// A GET with a bearer key.
    pub async fn get(&self, key: Option<&str>, path: &str) -> Reply {
        let mut request = self.client.get(self.url(path));
        if let Some(key) = key {
            request = request.header(AUTHORIZATION, format!("Bearer {key}"));
        }
        Reply::read(request.send().await.unwrap()).await
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

pub fn initialize(id: u64) -> Value {
    json!({
        "jsonrpc": "2.0", "id": id, "method": "initialize",
        "params": {"protocolVersion": PROTOCOL, "capabilities": {}, "clientInfo": {"name": "raw-test", "version": "0"}}
    })
}

/// An HTTP reply read to its end.
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub headers: HeaderMap,
    pub text: String,
}

impl Reply {
    pub async fn read(response: reqwest::Response) -> Self {
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        let text = response.text().await.unwrap();
        Self { status, headers, text }
    }

    pub fn json(&self) -> Value {
        serde_json::from_str(&self.text).unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.text))
    }

    /// Every JSON-RPC message in the body: one JSON document, or SSE `data:` lines.
    pub fn messages(&self) -> Vec<Value> {
        if let Ok(value) = serde_json::from_str::<Value>(&self.text) {
            return match value {
                Value::Array(items) => items,
                other => vec![other],
            };
        }
        sse_events(&self.text).into_iter().filter_map(|(_, data)| serde_json::from_str(&data).ok()).collect()
    }

    /// The response to request `id`.
    pub fn response(&self, id: u64) -> Option<Value> {
        self.messages().into_iter().find(|m| m["id"] == json!(id) && m.get("method").is_none())
    }
}

/// The (event, data) pairs of an SSE body.
pub fn sse_events(text: &str) -> Vec<(String, String)> {
    let mut events = Vec::new();
    for block in text.replace("\r\n", "\n").split("\n\n") {
        let mut event = "message".to_owned();
        let mut data = Vec::new();
        for line in block.lines() {
            if let Some(rest) = line.strip_prefix("event:") {
                event = rest.trim().to_owned();
            } else if let Some(rest) = line.strip_prefix("data:") {
                data.push(rest.strip_prefix(' ').unwrap_or(rest).to_owned());
            }
        }
        if !data.is_empty() {
            events.push((event, data.join("\n")));
        }
    }
    events
}

/// Reads SSE events from a streaming response, one at a time.
pub struct SseReader {
    response: reqwest::Response,
    buffer: String,
}

impl SseReader {
    pub fn new(response: reqwest::Response) -> Self {
        Self { response, buffer: String::new() }
    }

    /// The next event (waits up to `within`); `None` at the end of the stream.
    pub async fn next(&mut self, within: Duration) -> Option<(String, String)> {
        tokio::time::timeout(within, async {
            loop {
                let normalized = self.buffer.replace("\r\n", "\n");
                if let Some(cut) = normalized.find("\n\n") {
                    let block = normalized[..cut].to_owned();
                    self.buffer = normalized[cut + 2..].to_owned();
                    if let Some(event) = sse_events(&format!("{block}\n\n")).into_iter().next() {
                        return Some(event);
                    }
                    continue;
                }
                match self.response.chunk().await.ok()? {
                    Some(bytes) => self.buffer.push_str(&String::from_utf8_lossy(&bytes)),
                    None => return None,
                }
            }
        })
        .await
        .expect("an SSE event in time")
    }
}
