//! Figures of the HTTP layer: one `tools/call` of a read tool over
//! streamable HTTP on loopback, through every check (Host/Origin, bearer key,
//! body limit, session owner, JSON-RPC shape) and rmcp, with sessions and
//! stateless, with an API key and with an OAuth access token (a JWT of a
//! local identity provider, verified once and then cached), plus each
//! credential check alone (cache hit). The client is reqwest
//! with a kept-alive connection, so the figure is one request/response round
//! trip. Whole-server comparisons (against FastMCP) belong to the binary's
//! bench harness.

#[path = "../tests/it/common/demo.rs"]
mod demo;

use std::hint::black_box;
use std::sync::Arc;
use std::time::Duration;

use axum::http::{HeaderMap, HeaderValue, header};
use toolgate_mcp::identity::{Authenticator, KeyAuthenticator, OAuthAuthenticator};

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::{Value, json};
use toolgate_mcp::{Exposure, HttpConfig, HttpState, KeyStore, SessionMode, serve_http};

const PROTOCOL: &str = "2025-06-18";

struct Server {
    url: String,
    key: String,
    session: Option<String>,
    client: reqwest::Client,
}

/// The resource the bench's tokens are made for.
const RESOURCE: &str = "http://127.0.0.1/mcp";

/// An OAuth authenticator for tokens of `idp` (groups `bench` → member).
fn oauth(idp: &toolgate_test_support::idp::Idp) -> OAuthAuthenticator {
    let mut config = toolgate_oauth::resource::ResourceConfig::new(idp.issuer.clone(), RESOURCE);
    config.roles = vec![("bench".into(), "member".into())];
    let hierarchy = ["guest", "member", "manager", "admin"].map(String::from).to_vec();
    OAuthAuthenticator::new(
        toolgate_oauth::resource::Verifier::new(config, reqwest::Client::new(), hierarchy).unwrap(),
    )
}

/// Serve the demo with `sessions`, its calls made with an API key, or with
/// `token` when given (then `oauth` verifies it).
async fn start(keys: KeyStore, sessions: SessionMode, token: Option<(String, OAuthAuthenticator)>) -> Server {
    let mut key = keys.create("bench", "member").await.unwrap().key.expose().to_owned();
    let mut state = HttpState::new(demo::demo().gateway, keys)
        .with_exposure(Exposure::Direct)
        .with_config(HttpConfig { sessions, ..HttpConfig::default() });
    if let Some((token, oauth)) = token {
        key = token;
        state = state.with_authenticator(Arc::new(oauth));
    }
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

    let idp = rt.block_on(toolgate_test_support::idp::Idp::start());
    let token = idp.token("bench", RESOURCE, 3600, json!({"groups": ["bench"]}));

    let mut group = c.benchmark_group("http");
    group.measurement_time(Duration::from_secs(5));
    for (name, sessions, oauth_token) in [
        ("tools_call_stateless", SessionMode::Stateless, None),
        ("tools_call_stateless_oauth", SessionMode::Stateless, Some((token.clone(), oauth(&idp)))),
        ("tools_call_session", SessionMode::Stateful, None),
    ] {
        let server = rt.block_on(start(keys.clone(), sessions, oauth_token));
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
    // The same check through the authenticators the HTTP layer asks: a key,
    // and a token whose verification is cached after the first request.
    let bearer = |credential: &str| {
        let mut headers = HeaderMap::new();
        headers
            .insert(header::AUTHORIZATION, HeaderValue::from_str(&format!("Bearer {credential}")).unwrap());
        headers
    };
    let extensions = axum::http::Extensions::new();
    let by_key = KeyAuthenticator::new(keys.clone());
    let by_token = oauth(&idp);
    for (name, authenticator, headers) in [
        ("authenticate_key_cached", &by_key as &dyn Authenticator, bearer(&key)),
        ("authenticate_token_cached", &by_token as &dyn Authenticator, bearer(&token)),
    ] {
        let first = rt.block_on(authenticator.authenticate(&headers, &extensions));
        assert!(matches!(first, Some(Ok(_))), "{name}: {first:?}");
        group.bench_function(name, |b| {
            b.iter(|| black_box(rt.block_on(authenticator.authenticate(&headers, &extensions))))
        });
    }
    group.finish();
}

criterion_group!(benches, bench_http);
criterion_main!(benches);
