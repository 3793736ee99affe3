//! Sign-in with an identity provider beside API keys: the Protected Resource
//! Metadata, the `401`/`403` challenges MCP clients follow, access tokens
//! as callers, and sessions and streams bound to the token's subject and
//! its expiry. The provider is a real HTTP server (discovery + JWKS) whose
//! key signs the tokens; the end-to-end flow with a real provider and the
//! SDKs' OAuth clients is in the toolgate crate's tests.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use toolgate_mcp::identity::OAuthAuthenticator;
use toolgate_mcp::{Exposure, HttpConfig};
use toolgate_test_support::idp::{Idp, SigningKey};

use crate::common::TestServer;

/// The resource the tokens are made for.
const RESOURCE: &str = "http://127.0.0.1/mcp";

async fn server_with_oauth(
    idp: &Idp,
    adjust: impl FnOnce(&mut toolgate_oauth::resource::ResourceConfig),
) -> TestServer {
    let mut config = toolgate_oauth::resource::ResourceConfig::new(idp.issuer.clone(), RESOURCE);
    config.roles = vec![("tg-admins".into(), "admin".into()), ("tg-members".into(), "member".into())];
    adjust(&mut config);
    let hierarchy = ["guest", "member", "manager", "admin"].map(String::from).to_vec();
    let verifier =
        toolgate_oauth::resource::Verifier::new(config, reqwest::Client::new(), hierarchy).unwrap();
    TestServer::start_with(Exposure::Meta, HttpConfig::default(), move |state| {
        state.with_authenticator(Arc::new(OAuthAuthenticator::new(verifier)))
    })
    .await
}

fn www_authenticate(reply: &toolgate_test_support::mcp::Reply) -> String {
    reply.headers.get("www-authenticate").and_then(|v| v.to_str().ok()).unwrap_or_default().to_owned()
}

#[tokio::test]
async fn without_sign_in_the_metadata_paths_are_404_and_a_401_names_only_the_realm() {
    let server = TestServer::default().await;
    for path in ["/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"] {
        let reply = server.get(None, path).await;
        assert_eq!(reply.status, 404, "{path}: {}", reply.text);
    }
    let reply = toolgate_test_support::mcp::post_raw(
        &server.client,
        &server.url("/mcp"),
        None,
        None,
        "application/json",
        toolgate_test_support::mcp::initialize(1).to_string(),
    )
    .await
    .unwrap();
    assert_eq!(reply.status, 401);
    assert_eq!(www_authenticate(&reply), "Bearer realm=\"toolgate\"");
    // MCP clients read the body as JSON-RPC.
    let body = reply.json();
    assert_eq!(body["jsonrpc"], "2.0", "{body}");
    assert_eq!(body["error"]["data"]["code"], "UNAUTHORIZED", "{body}");
    assert!(body["error"]["message"].as_str().unwrap().contains("Authorization"), "{body}");
}

#[tokio::test]
async fn the_metadata_is_public_and_every_401_points_at_it() {
    let idp = Idp::start().await;
    let server =
        server_with_oauth(&idp, |c| c.scopes = vec![("tools:read".into(), "read_only".into())]).await;
    for path in ["/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"] {
        let reply = server.get(None, path).await;
        assert_eq!(reply.status, 200, "{path}: {}", reply.text);
        assert_eq!(
            reply.json(),
            json!({
                "resource": RESOURCE,
                "authorization_servers": [idp.issuer],
                "scopes_supported": ["tools:read"],
                "bearer_methods_supported": ["header"],
            }),
        );
    }
    assert_eq!(server.get(None, "/.well-known/oauth-authorization-server").await.status, 404);
    for credential in [None, Some("not-a-token"), Some("tg_0000")] {
        let reply = match credential {
            Some(c) => server.post(c, None, &toolgate_test_support::mcp::initialize(1)).await,
            None => server.get(None, "/api/whoami").await,
        };
        assert_eq!(reply.status, 401, "{credential:?}: {}", reply.text);
        assert_eq!(
            www_authenticate(&reply),
            "Bearer resource_metadata=\"http://127.0.0.1/.well-known/oauth-protected-resource/mcp\", scope=\"tools:read\"",
            "{credential:?}"
        );
    }
}

#[tokio::test]
async fn a_token_is_a_caller_with_the_role_of_its_groups_and_api_keys_still_work() {
    let idp = Idp::start().await;
    let server = server_with_oauth(&idp, |_| {}).await;
    let alice = idp.token("alice", RESOURCE, 300, json!({"groups": ["tg-members", "tg-admins"]}));
    let bob = idp.token("bob", RESOURCE, 300, json!({"groups": "tg-members"}));
    for (token, user, role) in
        [(&alice, "alice", "admin"), (&bob, "bob", "member"), (&server.guest, "gus", "guest")]
    {
        let whoami = server.get(Some(token), "/api/whoami").await;
        assert_eq!(whoami.status, 200, "{}", whoami.text);
        assert_eq!(
            (whoami.json()["user_id"].clone(), whoami.json()["role"].clone()),
            (json!(user), json!(role))
        );
    }
    let (session, _) = server.open_session(&bob).await;
    let listed = server.request(&bob, &session, 2, "tools/list", json!({})).await;
    assert_eq!(listed.status, 200, "{}", listed.text);
    assert!(!listed.response(2).unwrap()["result"]["tools"].as_array().unwrap().is_empty());
    // The session is bob's: alice's token cannot use it.
    let stolen = server.request(&alice, &session, 3, "tools/list", json!({})).await;
    assert_eq!(stolen.status, 404, "{}", stolen.text);
}

#[tokio::test]
async fn bad_tokens_are_401_unmapped_groups_403_and_a_missing_scope_403_insufficient_scope() {
    let idp = Idp::start().await;
    let server =
        server_with_oauth(&idp, |c| c.scopes = vec![("tools:read".into(), "read_only".into())]).await;
    let groups = json!({"groups": ["tg-members"], "scope": "openid tools:read"});
    let other_key = SigningKey::generate("k1");
    let none_header = base64url(br#"{"alg":"none","typ":"at+jwt"}"#);
    let none_claims = base64url(idp.claims("alice", RESOURCE, 300, groups.clone()).to_string().as_bytes());
    let cases = [
        ("another audience", idp.token("alice", "http://127.0.0.1/other", 300, groups.clone())),
        ("expired", idp.token("alice", RESOURCE, -30, groups.clone())),
        ("signed by another key", other_key.sign(&idp.claims("alice", RESOURCE, 300, groups.clone()))),
        ("alg none", format!("{none_header}.{none_claims}.")),
    ];
    for (what, token) in &cases {
        let reply = server.post(token, None, &toolgate_test_support::mcp::initialize(1)).await;
        assert_eq!(reply.status, 401, "{what}: {}", reply.text);
        assert!(www_authenticate(&reply).contains("resource_metadata="), "{what}");
        assert!(!reply.text.contains(token.as_str()), "{what}: the token is echoed");
    }
    let nobody = idp.token("mallory", RESOURCE, 300, json!({"groups": ["nobody"], "scope": "tools:read"}));
    let reply = server.post(&nobody, None, &toolgate_test_support::mcp::initialize(1)).await;
    assert_eq!(reply.status, 403, "{}", reply.text);
    assert!(!www_authenticate(&reply).contains("insufficient_scope"), "would loop clients through sign-in");
    assert_eq!(reply.json()["jsonrpc"], "2.0");
    let unscoped = idp.token("alice", RESOURCE, 300, json!({"groups": ["tg-members"], "scope": "openid"}));
    let reply = server.post(&unscoped, None, &toolgate_test_support::mcp::initialize(1)).await;
    assert_eq!(reply.status, 403, "{}", reply.text);
    let challenge = www_authenticate(&reply);
    assert!(challenge.starts_with("Bearer error=\"insufficient_scope\""), "{challenge}");
    assert!(challenge.contains("scope=\"tools:read\""), "{challenge}");
}

fn base64url(bytes: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

#[tokio::test]
async fn a_session_ends_with_its_token_unless_a_fresh_token_of_the_subject_continues_it() {
    let idp = Idp::start().await;
    let server = server_with_oauth(&idp, |c| c.leeway = Duration::ZERO).await;
    let groups = json!({"groups": ["tg-members"]});
    let short = idp.token("bob", RESOURCE, 2, groups.clone());
    let (ending, _) = server.open_session(&short).await;
    let (continued, _) = server.open_session(&short).await;
    let fresh = idp.token("bob", RESOURCE, 300, groups.clone());
    let reply = server.request(&fresh, &continued, 2, "tools/list", json!({})).await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    tokio::time::sleep(Duration::from_millis(3500)).await;
    let reply = server.request(&fresh, &ending, 3, "tools/list", json!({})).await;
    assert_eq!(reply.status, 404, "the session of the expired token is closed: {}", reply.text);
    let reply = server.request(&fresh, &continued, 4, "tools/list", json!({})).await;
    assert_eq!(reply.status, 200, "the session a fresh token used goes on: {}", reply.text);
}

#[tokio::test]
async fn a_trace_stream_ends_when_its_token_expires() {
    let idp = Idp::start().await;
    let server = server_with_oauth(&idp, |c| c.leeway = Duration::ZERO).await;
    let token = idp.token("alice", RESOURCE, 2, json!({"groups": ["tg-admins"]}));
    let mut stream = toolgate_test_support::mcp::SseReader::new(server.stream(&token, "/trace").await);
    let (event, _) = stream.next(Duration::from_secs(5)).await.expect("ready");
    assert_eq!(event, "ready");
    let mut last = None;
    while let Some((event, _)) = stream.next(Duration::from_secs(5)).await {
        last = Some(event);
    }
    assert_eq!(last.as_deref(), Some("expired"));
}

#[tokio::test]
async fn an_unreachable_provider_is_503_and_never_401() {
    let idp = Idp::start().await;
    let token = idp.token("alice", RESOURCE, 300, json!({"groups": ["tg-admins"]}));
    let mut config = toolgate_oauth::resource::ResourceConfig::new("http://127.0.0.1:9", RESOURCE);
    config.roles = vec![("tg-admins".into(), "admin".into())];
    let hierarchy = ["guest", "member", "manager", "admin"].map(String::from).to_vec();
    let verifier =
        toolgate_oauth::resource::Verifier::new(config, reqwest::Client::new(), hierarchy).unwrap();
    let server = TestServer::start_with(Exposure::Meta, HttpConfig::default(), move |state| {
        state.with_authenticator(Arc::new(OAuthAuthenticator::new(verifier)))
    })
    .await;
    let reply = server.get(Some(&token), "/api/whoami").await;
    assert_eq!(reply.status, 503, "{}", reply.text);
    let _: Value = reply.json();
}
