//! The token exchange (RFC 8693) against the test identity provider.

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use toolgate_core::{Caller, ErrorCode, Secret, TokenSource};
use toolgate_oauth::grant::{TokenExchange, TokenExchangeConfig};

use crate::idp::{self, CLIENT_ID, CLIENT_SECRET, Mode};

fn config(url: &str) -> TokenExchangeConfig {
    TokenExchangeConfig {
        token_url: url.to_owned(),
        client_id: CLIENT_ID.to_owned(),
        client_secret: Secret::new(CLIENT_SECRET),
        audience: Some("crm".into()),
        resource: Some("https://crm.example.com/api".into()),
        scope: Some("crm.read crm.write".into()),
    }
}

fn exchange(url: &str) -> TokenExchange {
    TokenExchange::new(config(url), reqwest::Client::new(), "the CRM")
}

/// A signed-in user: their sign-in is `subject-<user>` (the provider mints `minted-<user>-...`).
fn user(name: &str) -> Caller {
    Caller::new(name, "member").with_subject_token(Secret::new(format!("subject-{name}")))
}

#[tokio::test]
async fn the_exchange_sends_the_rfc_8693_form_with_basic_client_authentication() {
    let idp = idp::start().await;
    let source = exchange(&idp.url);
    assert_eq!(source.kind(), "token_exchange");
    let token = source.token(&user("alice")).await.unwrap();
    assert_eq!(token.expose(), "minted-alice-for-crm-1");

    let seen = idp.requests();
    assert_eq!(seen.len(), 1);
    let request = &seen[0];
    // client_secret_basic: id and secret form-urlencoded, then Basic; decoded back by the provider.
    assert_eq!(request.basic, Some((CLIENT_ID.to_owned(), CLIENT_SECRET.to_owned())));
    assert_eq!(request.content_type.as_deref(), Some("application/x-www-form-urlencoded"));
    assert_eq!(request.field("grant_type"), Some("urn:ietf:params:oauth:grant-type:token-exchange"));
    assert_eq!(request.field("subject_token"), Some("subject-alice"));
    assert_eq!(request.field("subject_token_type"), Some("urn:ietf:params:oauth:token-type:access_token"));
    assert_eq!(request.field("requested_token_type"), Some("urn:ietf:params:oauth:token-type:access_token"));
    assert_eq!(request.field("audience"), Some("crm"));
    assert_eq!(request.field("resource"), Some("https://crm.example.com/api"));
    assert_eq!(request.field("scope"), Some("crm.read crm.write"));
    let mut names = request.names();
    names.sort_unstable();
    assert_eq!(
        names,
        [
            "audience",
            "grant_type",
            "requested_token_type",
            "resource",
            "scope",
            "subject_token",
            "subject_token_type"
        ],
        "the client's credentials go in the Authorization header only"
    );

    // Without `resource` and `scope`, neither is sent.
    let mut bare = config(&idp.url);
    bare.resource = None;
    bare.scope = Some("  ".into());
    TokenExchange::new(bare, reqwest::Client::new(), "the CRM").token(&user("bob")).await.unwrap();
    let request = idp.requests().pop().unwrap();
    assert_eq!(request.field("resource"), None);
    assert_eq!(request.field("scope"), None);
    assert_eq!(request.field("audience"), Some("crm"));
}

#[tokio::test]
async fn a_users_token_is_kept_per_user_and_per_sign_in() {
    let idp = idp::start().await;
    let source = exchange(&idp.url);
    let first = source.token(&user("alice")).await.unwrap();
    let again = source.token(&user("alice")).await.unwrap();
    assert_eq!(first, again);
    assert_eq!(idp.count(), 1, "kept: no second exchange");

    // Another user, the same user id in another tenant, the same user signed in anew: each its own.
    let bob = source.token(&user("bob")).await.unwrap();
    assert_eq!(bob.expose(), "minted-bob-for-crm-2");
    let other_tenant = source.token(&user("alice").with_tenant("globex")).await.unwrap();
    assert_eq!(other_tenant.expose(), "minted-alice-for-crm-3");
    assert_eq!(idp.count(), 3);
    let signed_in_anew = Caller::new("alice", "member").with_subject_token(Secret::new("subject-alice2"));
    assert_eq!(source.token(&signed_in_anew).await.unwrap().expose(), "minted-alice2-for-crm-4");
    assert_eq!(source.cached_users(), 3, "one slot per user: the new sign-in replaced the old");

    // Back to the first sign-in: it is not handed the second one's token.
    assert_eq!(source.token(&user("alice")).await.unwrap().expose(), "minted-alice-for-crm-5");
}

#[tokio::test]
async fn a_token_is_refreshed_shortly_before_it_expires() {
    let idp = idp::start().await;
    // One second: kept for 0.9 s (10 % early).
    idp.set(Mode::Issue(Some(json!(1))));
    let source = exchange(&idp.url);
    let first = source.token(&user("alice")).await.unwrap();
    assert_eq!(source.token(&user("alice")).await.unwrap(), first);
    assert_eq!(idp.count(), 1);
    tokio::time::sleep(Duration::from_millis(950)).await;
    let second = source.token(&user("alice")).await.unwrap();
    assert_ne!(second, first, "a fresh token after expiry");
    assert_eq!(idp.count(), 2);

    // `expires_in: 0`: used once, never kept.
    idp.set(Mode::Issue(Some(json!(0))));
    let bob = user("bob");
    source.token(&bob).await.unwrap();
    source.token(&bob).await.unwrap();
    assert_eq!(idp.count(), 4);

    // No `expires_in`: kept (a minute).
    idp.set(Mode::Issue(None));
    let carol = user("carol");
    let kept = source.token(&carol).await.unwrap();
    assert_eq!(source.token(&carol).await.unwrap(), kept);
    assert_eq!(idp.count(), 5);
}

#[tokio::test]
async fn fifty_concurrent_calls_of_one_user_make_one_exchange() {
    let idp = idp::start().await;
    let source = exchange(&idp.url);
    let alice = user("alice");
    // All 50 are polled before the first exchange can have an answer (it needs the network).
    let tokens = futures::future::join_all((0..50).map(|_| source.token(&alice))).await;
    assert_eq!(idp.count(), 1, "one exchange for 50 calls");
    for token in tokens {
        assert_eq!(token.unwrap().expose(), "minted-alice-for-crm-1");
    }

    // On separate tasks of a multi-threaded runtime too.
    let source = Arc::new(exchange(&idp.url));
    let bob = user("bob");
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..50 {
        let (source, bob) = (source.clone(), bob.clone());
        tasks.spawn(async move { source.token(&bob).await });
    }
    while let Some(token) = tasks.join_next().await {
        assert_eq!(token.unwrap().unwrap().expose(), "minted-bob-for-crm-2");
    }
    assert_eq!(idp.count(), 2);
}

#[tokio::test]
async fn interleaved_users_never_get_each_others_token_nor_wait_on_each_other() {
    let idp = idp::start().await;
    let source = Arc::new(exchange(&idp.url));
    let calls = (0..40).map(|i| {
        let name = ["alice", "bob", "carol", "dave"][i % 4];
        let source = source.clone();
        async move { (name, source.token(&user(name)).await.unwrap()) }
    });
    for (name, token) in futures::future::join_all(calls).await {
        let expose = token.expose();
        assert!(expose.starts_with(&format!("minted-{name}-for-crm-")), "{name} got {expose}");
    }
    assert_eq!(idp.count(), 4, "one exchange per user");

    // A user whose exchange hangs holds up nobody else.
    let slow = {
        let source = source.clone();
        tokio::spawn(async move { source.token(&user("slow")).await })
    };
    idp.slow_arrived.notified().await;
    let quick = tokio::time::timeout(Duration::from_secs(5), source.token(&user("erin"))).await;
    assert!(quick.expect("erin waited for slow's exchange").is_ok());
    assert!(!slow.is_finished());
    idp.slow_release.notify_one();
    assert_eq!(slow.await.unwrap().unwrap().expose(), "minted-slow-for-crm-5");
}

#[tokio::test]
async fn a_caller_without_a_sign_in_is_refused_before_any_request() {
    let idp = idp::start().await;
    let source = exchange(&idp.url);
    let mut api_key = Caller::new("alice", "member").with_credential("crm", "sk-live-apikey");
    api_key.key_id = Some("key-7".into());
    let error = source.token(&api_key).await.unwrap_err();
    assert_eq!(error.code, ErrorCode::PermissionDenied);
    assert!(!error.transient);
    for expect in
        ["the CRM accepts only a signed-in user's own credential", "API key", "identity provider (OAuth)"]
    {
        assert!(error.message.contains(expect), "{}", error.message);
    }
    assert!(!error.message.contains("sk-live-apikey"));
    let stdio = Caller::new("alice", "member");
    assert_eq!(source.token(&stdio).await.unwrap_err().code, ErrorCode::PermissionDenied);
    let empty = Caller::new("alice", "member").with_subject_token(Secret::new("  "));
    assert_eq!(source.token(&empty).await.unwrap_err().code, ErrorCode::PermissionDenied);
    let nobody = Caller::new("", "member").with_subject_token(Secret::new("subject-x"));
    assert_eq!(source.token(&nobody).await.unwrap_err().code, ErrorCode::PermissionDenied);
    assert_eq!(idp.count(), 0, "nothing was sent");
}

#[tokio::test]
async fn a_refused_exchange_is_permission_denied_naming_the_oauth_error() {
    let idp = idp::start().await;
    let source = exchange(&idp.url);
    let revoked = Caller::new("mallory", "member").with_subject_token(Secret::new("revoked-sub-9f8e7d"));
    // The callers that waited for the refused exchange get its answer: one request.
    let errors = futures::future::join_all((0..10).map(|_| source.token(&revoked))).await;
    assert_eq!(idp.count(), 1);
    for error in errors {
        let error = error.unwrap_err();
        assert_eq!(error.code, ErrorCode::PermissionDenied);
        assert!(!error.transient);
        assert!(error.message.contains("`invalid_grant`"), "{}", error.message);
        assert!(error.message.contains("sign in again"), "{}", error.message);
        assert!(error.message.contains("[redacted] has been revoked"), "scrubbed echo: {}", error.message);
        assert!(!error.message.contains("revoked-sub-9f8e7d"), "{}", error.message);
        assert_eq!(error.details.as_ref().unwrap()["oauth_error"], "invalid_grant");
    }
    // A later call asks again (a refusal is not kept).
    assert!(source.token(&revoked).await.is_err());
    assert_eq!(idp.count(), 2);

    // A wrong client secret: the operator's to fix, said so.
    let mut wrong = config(&idp.url);
    wrong.client_secret = Secret::new("not-the-secret");
    let error =
        TokenExchange::new(wrong, reqwest::Client::new(), "the CRM").token(&user("alice")).await.unwrap_err();
    assert_eq!(error.code, ErrorCode::PermissionDenied);
    assert!(
        error.message.contains("`invalid_client`") && error.message.contains("operator"),
        "{}",
        error.message
    );
    assert!(!error.message.contains("not-the-secret"));
}

#[tokio::test]
async fn an_unreachable_or_failing_provider_is_unavailable_and_transient() {
    let idp = idp::start().await;
    let source = exchange(&idp.url);
    idp.set(Mode::Down);
    let error = source.token(&user("alice")).await.unwrap_err();
    assert_eq!(error.code, ErrorCode::Unavailable);
    assert!(error.transient);
    assert!(error.message.contains("HTTP 503"), "{}", error.message);
    assert!(error.backend.is_some(), "counted as a backend failure");

    // Back up: the failure was not kept.
    idp.set(Mode::Issue(Some(json!(3600))));
    assert!(source.token(&user("alice")).await.is_ok());

    idp.set(Mode::NoToken);
    let error = source.token(&user("bob")).await.unwrap_err();
    assert_eq!(error.code, ErrorCode::ExecutionError);
    assert!(error.message.contains("without an `access_token`"), "{}", error.message);

    idp.set(Mode::Hang);
    let hanging = exchange(&idp.url).with_timeout(Duration::from_millis(300));
    let error = hanging.token(&user("carol")).await.unwrap_err();
    assert_eq!(error.code, ErrorCode::Unavailable);
    assert!(error.transient);
    assert!(error.message.contains("did not answer within 300 ms"), "{}", error.message);

    // Nothing listens on this port.
    let closed = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/token", closed.local_addr().unwrap());
    drop(closed);
    let error = exchange(&url).token(&user("dave")).await.unwrap_err();
    assert_eq!(error.code, ErrorCode::Unavailable);
    assert!(error.transient);
    assert!(error.message.contains("could not be reached"), "{}", error.message);
}

#[tokio::test]
async fn no_secret_appears_in_any_message_or_debug_text() {
    let idp = idp::start().await;
    let source = exchange(&idp.url);
    let minted = source.token(&user("alice")).await.unwrap();
    let mut texts = vec![format!("{source:?}"), format!("{:?}", config(&idp.url)), format!("{minted:?}")];
    let revoked = Caller::new("m", "member").with_subject_token(Secret::new("revoked-zz-subject"));
    for mode in [Mode::Issue(Some(json!(3600))), Mode::Down, Mode::NoToken] {
        idp.set(mode);
        let error = source.token(&revoked).await.unwrap_err();
        texts.push(format!("{error:?} {error}"));
    }
    texts.push(format!("{source:?}"));
    let all = texts.join("\n");
    for secret in [CLIENT_SECRET, "subject-alice", "revoked-zz-subject", minted.expose()] {
        assert!(!all.contains(secret), "`{secret}` leaked:\n{all}");
    }
}
