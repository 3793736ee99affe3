//! Minted tokens for an HTTP upstream: a Rust rmcp server (in process, streamable HTTP on
//! 127.0.0.1:0) that records the `Authorization` header of every request it gets, and a real
//! OAuth token endpoint (axum on 127.0.0.1:0) behind `toolgate-oauth`'s token exchange and
//! client-credentials grant. Each caller's tool call reaches the upstream with that caller's
//! own exchanged token; nothing else carries it; the caller's sign-in never leaves.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, JsonObject, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use serde_json::{Value, json};
use toolgate_core::{Caller, ErrorCode, Secret, TokenSource, ToolContext};
use toolgate_mcp_upstream::{Transport, UpstreamConfig, Upstreams};
use toolgate_oauth::grant::{ClientCredentials, ClientCredentialsConfig, TokenExchange, TokenExchangeConfig};

use crate::common::{call, front};

/// What reached the upstream: the JSON-RPC method of each request (the HTTP method for one
/// without: a GET, a DELETE, a reply) and its `Authorization` header.
type Log = Arc<Mutex<Vec<(String, Option<String>)>>>;

#[derive(Clone)]
struct Echo;

impl ServerHandler for Echo {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let schema: JsonObject = serde_json::from_value(json!({"type": "object", "properties": {}})).unwrap();
        Ok(ListToolsResult::with_all_items(vec![Tool::new(
            "whoami",
            "Says which Authorization header the call came with.",
            Arc::new(schema),
        )]))
    }

    async fn call_tool(
        &self,
        _request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let parts = context.extensions.get::<axum::http::request::Parts>();
        let auth = parts
            .and_then(|p| p.headers.get("authorization"))
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        Ok(CallToolResult::structured(json!({"authorization": auth})).into())
    }
}

async fn record(State(log): State<Log>, request: Request, next: Next) -> Response {
    let (parts, body) = request.into_parts();
    let bytes = axum::body::to_bytes(body, 1 << 20).await.unwrap_or_default();
    let method = serde_json::from_slice::<Value>(&bytes)
        .ok()
        .and_then(|v| v["method"].as_str().map(str::to_owned))
        .unwrap_or_else(|| parts.method.to_string());
    let auth = parts.headers.get("authorization").and_then(|v| v.to_str().ok()).map(str::to_owned);
    log.lock().unwrap().push((method, auth.clone()));
    // eve's token is refused with a challenge, frank's without one.
    let auth = auth.unwrap_or_default();
    if auth.contains("minted-eve-") {
        return (
            StatusCode::UNAUTHORIZED,
            [("www-authenticate", "Bearer error=\"invalid_token\"")],
            "expired",
        )
            .into_response();
    }
    if auth.contains("minted-frank-") {
        return (StatusCode::FORBIDDEN, "not yours").into_response();
    }
    next.run(Request::from_parts(parts, Body::from(bytes))).await
}

/// The recording upstream's URL and its log: with sessions and event streams (rmcp's
/// default), or stateless with JSON answers (`json`), which toolgate's calls reach by its
/// own POST ([`crate::direct`]).
async fn upstream(json: bool) -> (String, Log) {
    let log: Log = Arc::default();
    let config = match json {
        false => StreamableHttpServerConfig::default(),
        true => {
            StreamableHttpServerConfig::default().with_legacy_session_mode(false).with_json_response(true)
        }
    };
    let service = StreamableHttpService::new(|| Ok(Echo), Arc::new(LocalSessionManager::default()), config);
    let router = axum::Router::new()
        .nest_service("/mcp", service)
        .layer(axum::middleware::from_fn_with_state(log.clone(), record));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, router).await });
    (url, log)
}

/// A token endpoint: `subject-<user>` is exchanged for `minted-<user>-<n>`, a
/// client-credentials grant gives `service-<n>`; the URL and the number of requests so far.
async fn idp() -> (String, Arc<Mutex<usize>>) {
    let count = Arc::new(Mutex::new(0usize));
    let counted = count.clone();
    let app = axum::Router::new().route(
        "/token",
        axum::routing::post(move |body: String| {
            let count = counted.clone();
            async move {
                let uri: axum::http::Uri = format!("/?{body}").parse().unwrap();
                let form = axum::extract::Query::<Vec<(String, String)>>::try_from_uri(&uri).unwrap().0;
                let field = |name: &str| form.iter().find(|(n, _)| n == name).map(|(_, v)| v.clone());
                let n = {
                    let mut count = count.lock().unwrap();
                    *count += 1;
                    *count
                };
                let token = match (field("grant_type").as_deref(), field("subject_token")) {
                    (Some("client_credentials"), _) => format!("service-{n}"),
                    (_, Some(subject)) if subject.starts_with("subject-") => {
                        format!("minted-{}-{n}", &subject["subject-".len()..])
                    }
                    _ => {
                        return (StatusCode::BAD_REQUEST, axum::Json(json!({"error": "invalid_grant"})))
                            .into_response();
                    }
                };
                axum::Json(json!({"access_token": token, "token_type": "Bearer", "expires_in": 3600}))
                    .into_response()
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/token", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    (url, count)
}

fn exchange(token_url: &str) -> Arc<dyn TokenSource> {
    let config = TokenExchangeConfig {
        token_url: token_url.to_owned(),
        client_id: "toolgate".into(),
        client_secret: Secret::new("upstream-client-secret"),
        audience: Some("echo".into()),
        resource: None,
        scope: None,
    };
    Arc::new(TokenExchange::new(config, reqwest::Client::new(), "the MCP server `echo`"))
}

fn client_credentials(token_url: &str) -> Arc<dyn TokenSource> {
    let config = ClientCredentialsConfig {
        token_url: token_url.to_owned(),
        client_id: "toolgate".into(),
        client_secret: Secret::new("upstream-client-secret"),
        scope: None,
        audience: Some("echo".into()),
        resource: None,
    };
    Arc::new(ClientCredentials::new(config, reqwest::Client::new(), "the MCP server `echo`"))
}

fn config(url: &str, source: Arc<dyn TokenSource>) -> UpstreamConfig {
    let mut config = UpstreamConfig::new(
        "echo",
        Transport::Http { url: url.to_owned(), headers: vec![("X-Upstream-Key".into(), Secret::new("k-1"))] },
    )
    .with_token_source(source);
    config.read_only_tools = vec!["whoami".into()];
    config.connect_timeout = Duration::from_secs(10);
    config
}

/// A signed-in caller (sign-in `subject-<name>`), who also holds an API credential.
fn signed_in(name: &str) -> ToolContext {
    ToolContext::new(
        Caller::new(name, "member")
            .with_subject_token(Secret::new(format!("subject-{name}")))
            .with_credential("echo", format!("sk-{name}-key")),
    )
}

fn authorization(envelope: &toolgate_core::Envelope) -> String {
    assert!(envelope.success, "{envelope:?}");
    envelope.result.as_ref().unwrap()["authorization"].as_str().unwrap_or("none").to_owned()
}

#[tokio::test]
async fn each_callers_call_carries_their_own_exchanged_token_and_no_other_request_does() {
    for json in [false, true] {
        let (token_url, exchanges) = idp().await;
        let (url, log) = upstream(json).await;
        let gateway = front();
        let upstreams = Upstreams::start(&gateway, vec![config(&url, exchange(&token_url))]).await;
        assert!(upstreams.status()[0].connected, "{:?}", upstreams.status());

        // Two callers interleaved on the one shared session, each reaching it with their own token.
        let calls = (0..12).map(|i| {
            let gateway = gateway.clone();
            let user = ["alice", "bob"][i % 2];
            async move {
                (user, authorization(&call(&gateway, &signed_in(user), "echo__whoami", json!({})).await))
            }
        });
        for (user, seen) in futures::future::join_all(calls).await {
            assert!(seen.starts_with(&format!("Bearer minted-{user}-")), "{user}'s call came with {seen}");
        }
        assert_eq!(*exchanges.lock().unwrap(), 2, "one exchange per user, kept");

        let log = log.lock().unwrap().clone();
        let calls: Vec<_> = log.iter().filter(|(method, _)| method == "tools/call").collect();
        assert_eq!(calls.len(), 12);
        assert!(
            calls.iter().all(|(_, auth)| auth.as_deref().is_some_and(|a| a.starts_with("Bearer minted-")))
        );
        // The handshake, the listing, the stream: the configured headers only, no caller's token.
        let others: Vec<_> = log.iter().filter(|(method, _)| method != "tools/call").collect();
        assert!(
            others.iter().any(|(method, _)| method == "initialize")
                && others.iter().any(|(m, _)| m == "tools/list")
        );
        assert!(others.iter().all(|(_, auth)| auth.is_none()), "{others:?}");
        let everything = format!("{log:?}");
        assert!(
            !everything.contains("subject-") && !everything.contains("sk-"),
            "a sign-in or key left: {everything}"
        );
    }
}

#[tokio::test]
async fn a_caller_the_source_refuses_fails_before_anything_is_sent() {
    let (token_url, exchanges) = idp().await;
    let (url, log) = upstream(false).await;
    let gateway = front();
    let _upstreams = Upstreams::start(&gateway, vec![config(&url, exchange(&token_url))]).await;
    let before = log.lock().unwrap().len();

    let api_key = ToolContext::new(
        Caller::new("carol", "member").with_key_id("key-3").with_credential("echo", "sk-carol"),
    );
    let envelope = call(&gateway, &api_key, "echo__whoami", json!({})).await;
    let error = envelope.error.expect("refused");
    assert_eq!(error.code, ErrorCode::PermissionDenied, "{}", error.message);
    assert!(
        error.message.contains("API key") && error.message.contains("identity provider (OAuth)"),
        "{}",
        error.message
    );

    let revoked =
        ToolContext::new(Caller::new("dave", "member").with_subject_token(Secret::new("revoked-dave")));
    let envelope = call(&gateway, &revoked, "echo__whoami", json!({})).await;
    let error = envelope.error.expect("refused");
    assert_eq!(error.code, ErrorCode::PermissionDenied, "{}", error.message);
    assert!(
        error.message.contains("invalid_grant") && !error.message.contains("revoked-dave"),
        "{}",
        error.message
    );

    assert_eq!(*exchanges.lock().unwrap(), 1, "the API-key caller cost no exchange");
    let after: Vec<_> = log.lock().unwrap()[before..].to_vec();
    assert!(
        after.iter().all(|(method, _)| method != "tools/call"),
        "a refused call reached the upstream: {after:?}"
    );
    // The connection was not torn down over one caller's refusal.
    assert!(call(&gateway, &signed_in("alice"), "echo__whoami", json!({})).await.success);
}

#[tokio::test]
async fn an_upstream_that_refuses_a_callers_token_refuses_that_caller_only() {
    for json in [false, true] {
        let (token_url, _) = idp().await;
        let (url, log) = upstream(json).await;
        let gateway = front();
        let _upstreams = Upstreams::start(&gateway, vec![config(&url, exchange(&token_url))]).await;
        for user in ["eve", "frank"] {
            let envelope = call(&gateway, &signed_in(user), "echo__whoami", json!({})).await;
            let error = envelope.error.clone().unwrap_or_else(|| panic!("{user}: {envelope:?}"));
            assert_eq!(error.code, ErrorCode::PermissionDenied, "{user}: {}", error.message);
            assert!(
                error.message.contains("refused the caller's token")
                    && error.message.contains("sign in again"),
                "{}",
                error.message
            );
            assert!(!error.message.contains("minted-"), "{}", error.message);
            assert_eq!(envelope.metadata.attempts, 1, "not retried");
        }
        // The others go on, on the same connection: one caller's refusal is no reason to reconnect.
        assert!(call(&gateway, &signed_in("alice"), "echo__whoami", json!({})).await.success);
        let handshakes = log.lock().unwrap().iter().filter(|(method, _)| method == "initialize").count();
        assert_eq!(handshakes, 1);
    }
}

#[tokio::test]
async fn a_service_token_goes_with_every_request_the_handshake_included() {
    for json in [false, true] {
        let (token_url, grants) = idp().await;
        let (url, log) = upstream(json).await;
        let gateway = front();
        let upstreams = Upstreams::start(&gateway, vec![config(&url, client_credentials(&token_url))]).await;
        assert!(upstreams.status()[0].connected, "{:?}", upstreams.status());
        for user in ["alice", "bob"] {
            assert_eq!(
                authorization(&call(&gateway, &signed_in(user), "echo__whoami", json!({})).await),
                "Bearer service-1"
            );
        }
        let api_key = ToolContext::new(Caller::new("carol", "member").with_key_id("key-3"));
        assert_eq!(
            authorization(&call(&gateway, &api_key, "echo__whoami", json!({})).await),
            "Bearer service-1"
        );
        assert_eq!(*grants.lock().unwrap(), 1, "one service token, kept");
        let log = log.lock().unwrap().clone();
        assert!(log.iter().any(|(method, _)| method == "initialize"));
        assert!(log.iter().all(|(_, auth)| auth.as_deref() == Some("Bearer service-1")), "{log:?}");
    }
}

#[tokio::test]
async fn a_configured_authorization_beside_a_token_source_is_refused() {
    let (token_url, _) = idp().await;
    let (url, log) = upstream(false).await;
    let mut both = config(&url, exchange(&token_url));
    both.transport = Transport::Http {
        url: url.clone(),
        headers: vec![("authorization".into(), Secret::new("Bearer static-upstream-key"))],
    };
    let error = both.check().unwrap_err();
    assert!(
        error.contains("upstream `echo`") && error.contains("remove `authorization` from `headers`"),
        "{error}"
    );
    assert!(!error.contains("static-upstream-key"));

    let gateway = front();
    let upstreams = Upstreams::start(&gateway, vec![both]).await;
    let status = &upstreams.status()[0];
    assert!(!status.connected);
    assert!(
        status.reason.as_deref().is_some_and(|r| r.contains("a request can carry only one")),
        "{status:?}"
    );
    assert!(log.lock().unwrap().is_empty(), "nothing was sent");

    let child = UpstreamConfig::stdio("kid", vec!["true".into()]).with_token_source(exchange(&token_url));
    assert!(child.check().unwrap_err().contains("child process"));
    assert_eq!(config(&url, exchange(&token_url)).check(), Ok(()));
}
