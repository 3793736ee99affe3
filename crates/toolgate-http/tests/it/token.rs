//! `Auth::Token`: a backend that gets a token minted for it, by the `toolgate-oauth` crate's token
//! exchange (RFC 8693) or client-credentials grant against a real token endpoint (axum on
//! 127.0.0.1:0), sent to a real backend (axum on 127.0.0.1:0) that records the
//! `Authorization` header of every request. The backend sees only the minted token, never the
//! caller's sign-in; a source that cannot give a token means no backend request at all.

use std::sync::{Arc, Mutex};

use axum::Router;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::{Value, json};
use toolgate_core::{Caller, Envelope, ErrorCode, Secret, TokenSource, ToolContext};
use toolgate_gateway::{CallOptions, Gateway};
use toolgate_http::{Auth, HttpExecutor, HttpOptions, TokenProvider};
use toolgate_oauth::grant::{ClientCredentials, ClientCredentialsConfig, TokenExchange, TokenExchangeConfig};
use toolgate_schema::RouteTable;

const TABLE: &str = r#"
tool = "query_crm"
description = "Test reads of a backend that takes tokens minted for it."
domain = "crm"

[[routes]]
op = "whoami"
method = "GET"
path = "/whoami/{user}"
summary = "Answers who the token is for (the path names whom the test called for)"

[[routes]]
op = "refuse"
method = "GET"
path = "/refuse"
summary = "Answers 401"
"#;

/// The token endpoint's counts and the backend's records.
#[derive(Default)]
struct Seen {
    /// The `subject_token` of each exchange (or `-` for client credentials).
    exchanges: Mutex<Vec<String>>,
    /// `(path user, Authorization header)` of each backend request.
    backend: Mutex<Vec<(String, Option<String>)>>,
    /// The token endpoint answers 503.
    idp_down: Mutex<bool>,
}

fn form(body: &str) -> Vec<(String, String)> {
    let uri: axum::http::Uri = format!("/?{body}").parse().unwrap();
    axum::extract::Query::<Vec<(String, String)>>::try_from_uri(&uri).unwrap().0
}

/// Tokens per subject: `sign-in-<user>` is exchanged for `crm-token-<user>-<n>`.
async fn token(State(seen): State<Arc<Seen>>, body: String) -> Response {
    if *seen.idp_down.lock().unwrap() {
        return (StatusCode::SERVICE_UNAVAILABLE, "down").into_response();
    }
    let form = form(&body);
    let field = |name: &str| form.iter().find(|(n, _)| n == name).map(|(_, v)| v.clone());
    let n = {
        let mut exchanges = seen.exchanges.lock().unwrap();
        exchanges.push(field("subject_token").unwrap_or_else(|| "-".into()));
        exchanges.len()
    };
    let access_token = match field("grant_type").as_deref() {
        Some("client_credentials") => format!("crm-service-token-{n}"),
        _ => match field("subject_token").as_deref().and_then(|s| s.strip_prefix("sign-in-")) {
            Some(user) => format!("crm-token-{user}-{n}"),
            None => {
                return (StatusCode::BAD_REQUEST, axum::Json(json!({"error": "invalid_grant"})))
                    .into_response();
            }
        },
    };
    axum::Json(json!({"access_token": access_token, "token_type": "Bearer", "expires_in": 3600}))
        .into_response()
}

async fn whoami(State(seen): State<Arc<Seen>>, Path(user): Path<String>, headers: HeaderMap) -> Response {
    let auth = headers.get("authorization").and_then(|v| v.to_str().ok()).map(str::to_owned);
    seen.backend.lock().unwrap().push((user, auth.clone()));
    // Repeats the token it got: the executor must scrub it from the answer.
    axum::Json(json!({"you_sent": auth})).into_response()
}

async fn refuse(State(seen): State<Arc<Seen>>, headers: HeaderMap) -> Response {
    let auth = headers.get("authorization").and_then(|v| v.to_str().ok()).map(str::to_owned);
    seen.backend.lock().unwrap().push(("refuse".into(), auth));
    (StatusCode::UNAUTHORIZED, axum::Json(json!({"error": "token not accepted"}))).into_response()
}

/// The token endpoint's URL and the backend's base URL.
async fn servers(seen: Arc<Seen>) -> (String, String) {
    let idp = Router::new().route("/token", post(token)).with_state(seen.clone());
    let backend =
        Router::new().route("/whoami/{user}", get(whoami)).route("/refuse", get(refuse)).with_state(seen);
    let mut urls = Vec::new();
    for app in [idp, backend] {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        urls.push(format!("http://{}", listener.local_addr().unwrap()));
        tokio::spawn(async move { axum::serve(listener, app).await });
    }
    (format!("{}/token", urls[0]), urls[1].clone())
}

fn exchange(token_url: &str) -> Arc<dyn TokenSource> {
    let config = TokenExchangeConfig {
        token_url: token_url.to_owned(),
        client_id: "toolgate".into(),
        client_secret: Secret::new("crm-client-secret"),
        audience: Some("crm".into()),
        resource: None,
        scope: None,
    };
    Arc::new(TokenExchange::new(config, reqwest::Client::new(), "the CRM"))
}

fn client_credentials(token_url: &str) -> Arc<dyn TokenSource> {
    let config = ClientCredentialsConfig {
        token_url: token_url.to_owned(),
        client_id: "toolgate".into(),
        client_secret: Secret::new("crm-client-secret"),
        scope: None,
        audience: Some("crm".into()),
        resource: None,
    };
    Arc::new(ClientCredentials::new(config, reqwest::Client::new(), "the CRM"))
}

fn gateway(base: &str, source: Arc<dyn TokenSource>) -> Gateway {
    let options = HttpOptions::default()
        .backend_name("the CRM")
        .backend_id("crm")
        .auth(Auth::Token(TokenProvider::new(source)));
    let executor = Arc::new(HttpExecutor::new(base, options).unwrap());
    let tools = executor.tools([RouteTable::from_toml_str(TABLE).unwrap()]).unwrap();
    Gateway::builder().tools(tools).build().unwrap()
}

/// A signed-in user: their sign-in is `sign-in-<name>`; they also hold a credential filed for
/// this very backend, which `Auth::Token` must not send either.
fn signed_in(name: &str) -> ToolContext {
    ToolContext::new(
        Caller::new(name, "member")
            .with_subject_token(Secret::new(format!("sign-in-{name}")))
            .with_credential("crm", format!("filed-credential-{name}")),
    )
}

async fn call(gw: &Gateway, ctx: &ToolContext, params: Value) -> Envelope {
    gw.execute(ctx, "query_crm", params, &CallOptions::default()).await
}

#[tokio::test]
async fn each_caller_reaches_the_backend_with_their_own_exchanged_token_only() {
    let seen = Arc::new(Seen::default());
    let (token_url, base) = servers(seen.clone()).await;
    let gw = gateway(&base, exchange(&token_url));
    let users = ["alice", "bob", "carol"];
    let calls = (0..24).map(|i| {
        let (gw, user) = (gw.clone(), users[i % 3]);
        async move { (user, call(&gw, &signed_in(user), json!({"op": "whoami", "user": user})).await) }
    });
    for (user, envelope) in futures::future::join_all(calls).await {
        assert!(envelope.success, "{user}: {envelope:?}");
        // The backend repeated the token; the answer carries none of it.
        let shown = serde_json::to_string(&envelope).unwrap();
        assert!(!shown.contains("crm-token-"), "the minted token was returned: {shown}");
    }
    let backend = seen.backend.lock().unwrap().clone();
    assert_eq!(backend.len(), 24);
    for (user, auth) in &backend {
        let auth = auth.as_deref().unwrap_or_else(|| panic!("{user}: no Authorization"));
        assert!(auth.starts_with(&format!("Bearer crm-token-{user}-")), "{user} was sent {auth}");
        assert!(!auth.contains("sign-in-") && !auth.contains("filed-credential"), "{auth}");
    }
    let mut exchanges = seen.exchanges.lock().unwrap().clone();
    exchanges.sort();
    assert_eq!(exchanges, ["sign-in-alice", "sign-in-bob", "sign-in-carol"], "one exchange per user");

    // A backend that refuses the exchanged token refuses the user's: theirs to fix.
    let refused = call(&gw, &signed_in("alice"), json!({"op": "refuse"})).await;
    let error = refused.error.unwrap();
    assert_eq!(error.code, ErrorCode::PermissionDenied, "{}", error.message);
    assert!(error.message.contains("sign in again"), "{}", error.message);
}

#[tokio::test]
async fn a_source_that_gives_no_token_means_no_backend_request() {
    let seen = Arc::new(Seen::default());
    let (token_url, base) = servers(seen.clone()).await;
    let gw = gateway(&base, exchange(&token_url));

    // An API-key caller has no sign-in to exchange: refused by the source, as it said.
    let api_key = ToolContext::new(
        Caller::new("alice", "member").with_key_id("key-1").with_credential("crm", "sk-apikey-crm"),
    );
    let envelope = call(&gw, &api_key, json!({"op": "whoami", "user": "alice"})).await;
    let error = envelope.error.unwrap();
    assert_eq!(error.code, ErrorCode::PermissionDenied);
    assert!(
        error.message.contains("API key") && error.message.contains("identity provider (OAuth)"),
        "{}",
        error.message
    );
    assert!(seen.exchanges.lock().unwrap().is_empty());

    // The token endpoint is down: UNAVAILABLE from the source, still nothing sent.
    *seen.idp_down.lock().unwrap() = true;
    let envelope = call(&gw, &signed_in("bob"), json!({"op": "whoami", "user": "bob"})).await;
    let error = envelope.error.unwrap();
    assert_eq!(error.code, ErrorCode::Unavailable, "{}", error.message);
    assert!(error.message.contains("identity provider"), "{}", error.message);
    let shown = serde_json::to_string(&envelope.metadata).unwrap() + &error.message;
    assert!(!shown.contains("sign-in-bob") && !shown.contains("crm-client-secret"), "{shown}");

    // Bad parameters cost no exchange either.
    *seen.idp_down.lock().unwrap() = false;
    let envelope = call(&gw, &signed_in("carol"), json!({"op": "whoami"})).await;
    assert_eq!(envelope.error.unwrap().code, ErrorCode::InvalidParams);
    assert!(
        seen.exchanges.lock().unwrap().is_empty(),
        "no exchange for a call that was never going to be made"
    );

    assert!(seen.backend.lock().unwrap().is_empty(), "the backend got no request");
}

#[tokio::test]
async fn a_service_token_goes_to_the_backend_for_every_caller_and_is_toolgates_own() {
    let seen = Arc::new(Seen::default());
    let (token_url, base) = servers(seen.clone()).await;
    let gw = gateway(&base, client_credentials(&token_url));
    let api_key = ToolContext::new(Caller::new("dave", "member").with_key_id("key-2"));
    for (ctx, user) in [(signed_in("alice"), "alice"), (api_key, "dave")] {
        let envelope = call(&gw, &ctx, json!({"op": "whoami", "user": user})).await;
        assert!(envelope.success, "{envelope:?}");
    }
    let backend = seen.backend.lock().unwrap().clone();
    let sent: Vec<&str> = backend.iter().map(|(_, auth)| auth.as_deref().unwrap()).collect();
    assert_eq!(sent, ["Bearer crm-service-token-1", "Bearer crm-service-token-1"]);
    assert_eq!(seen.exchanges.lock().unwrap().clone(), ["-"], "one grant, no subject sent");

    // A refused service token is the operator's to fix, not the user's.
    let refused = call(&gw, &signed_in("alice"), json!({"op": "refuse"})).await;
    let error = refused.error.unwrap();
    assert_eq!(error.code, ErrorCode::ExecutionError, "{}", error.message);
    assert!(error.message.contains("do not ask the user to sign in"), "{}", error.message);
}

#[test]
fn a_token_provider_is_equal_only_to_itself_and_shows_no_secret() {
    let source = exchange("http://127.0.0.1:9/token");
    let one = TokenProvider::new(source.clone());
    assert_eq!(one, TokenProvider::new(source));
    assert_ne!(one, TokenProvider::new(exchange("http://127.0.0.1:9/token")));
    let auth = Auth::Token(one);
    assert_eq!(auth.kind(), "token_exchange");
    assert_eq!(
        Auth::Token(TokenProvider::new(client_credentials("http://127.0.0.1:9/t"))).kind(),
        "client_credentials"
    );
    let shown = format!("{auth:?} {:?}", HttpOptions::default().auth(auth.clone()));
    assert_eq!(format!("{auth:?}"), "Token(TokenProvider(\"token_exchange\"))");
    assert!(!shown.contains("crm-client-secret"), "{shown}");
}
