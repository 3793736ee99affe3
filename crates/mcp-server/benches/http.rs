//! Figures of the HTTP layer: one `tools/call` of a read tool over
//! streamable HTTP on loopback, through every check (Host/Origin, bearer key,
//! body limit, session owner, JSON-RPC shape) and rmcp, with sessions and
//! stateless, plus the key check alone (cache hit). The client is reqwest
//! with a kept-alive connection, so the figure is one request/response round
//! trip. Whole-server comparisons (against FastMCP) belong to the binary's
//! bench harness.

#[path = "../tests/it/common/demo.rs"]
mod demo;

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use mcp_server::{Exposure, HttpConfig, HttpState, KeyStore, SessionMode, serve_http};
use serde_json::{Value, json};

const PROTOCOL: &str = "2025-06-18";

struct Server {
    url: String,
    key: String,
    session: Option<String>,
    client: reqwest::Client,
}

async fn start(keys: KeyStore, sessions: SessionMode) -> Server {
    let key = keys.create("bench", "member").await.unwrap().key.expose().to_owned();
    let state = HttpState::new(demo::demo().gateway, keys)
        .with_exposure(Exposure::Direct)
        .with_config(HttpConfig { sessions, ..HttpConfig::default() });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    tokio::spawn(serve_http(listener, state, std::future::pending()));
    let client = reqwest::Client::builder().tcp_nodelay(true).pool_max_idle_per_host(1).build().unwrap();
    let mut server = Server { url, key, session: None, client };
    if sessions == SessionMode::Stateful {
        let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": PROTOCOL, "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}}});
        let response = server.post(&init).await;
        server.session = Some(response.headers()["mcp-session-id"].to_str().unwrap().to_owned());
        response.text().await.unwrap();
        server
            .post(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await
            .text()
            .await
            .unwrap();
    }
    server
}

impl Server {
    async fn post(&self, body: &Value) -> reqwest::Response {
        let mut request = self
            .client
            .post(&self.url)
            .header("authorization", format!("Bearer {}", self.key))
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .header("mcp-protocol-version", PROTOCOL)
            .body(body.to_string());
        if let Some(session) = &self.session {
            request = request.header("mcp-session-id", session);
        }
        request.send().await.unwrap()
    }

    async fn call(&self, id: u64) -> String {
        let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "query_weather", "arguments": {"city": "Oslo"}}});
        let text = self.post(&body).await.text().await.unwrap();
        assert!(text.contains("\"isError\":false"), "{text}");
        text
    }
}

fn bench_http(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite:{}", dir.path().join("keys.db").display());
    let keys = rt.block_on(KeyStore::connect(&url)).unwrap();

    let mut group = c.benchmark_group("http");
    group.measurement_time(Duration::from_secs(5));
    for (name, sessions) in
        [("tools_call_stateless", SessionMode::Stateless), ("tools_call_session", SessionMode::Stateful)]
    {
        let server = rt.block_on(start(keys.clone(), sessions));
        let mut id = 0u64;
        group.bench_function(name, |b| {
            b.iter(|| {
                id += 1;
                black_box(rt.block_on(server.call(id)))
            })
        });
    }
    let key = rt.block_on(keys.create("bench", "member")).unwrap().key.expose().to_owned();
    rt.block_on(keys.verify(&key)).unwrap();
    group.bench_function("verify_key_cached", |b| {
        b.iter(|| black_box(rt.block_on(keys.verify(&key)).unwrap()))
    });
    group.finish();
}

criterion_group!(benches, bench_http);
criterion_main!(benches);
