//! The client-credentials grant against the test identity provider: one
//! service token for every caller.

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use toolgate_core::{Caller, ErrorCode, Secret, TokenSource};
use toolgate_oauth::grant::{ClientCredentials, ClientCredentialsConfig};

use crate::idp::{self, CLIENT_ID, CLIENT_SECRET, Mode};

fn config(url: &str) -> ClientCredentialsConfig {
    ClientCredentialsConfig {
        token_url: url.to_owned(),
        client_id: CLIENT_ID.to_owned(),
        client_secret: Secret::new(CLIENT_SECRET),
        scope: Some("inventory.read".into()),
        audience: Some("inventory".into()),
        resource: Some("https://inventory.example.com".into()),
    }
}

fn service(url: &str) -> ClientCredentials {
    ClientCredentials::new(config(url), reqwest::Client::new(), "the inventory")
}

#[tokio::test]
async fn one_service_token_for_every_caller_refreshed_once_at_a_time() {
    let idp = idp::start().await;
    let source = Arc::new(service(&idp.url));
    assert_eq!(source.kind(), "client_credentials");
    let callers = [
        Caller::new("alice", "member").with_subject_token(Secret::new("subject-alice")),
        Caller::new("bob", "member"),
    ];
    let tokens = futures::future::join_all((0..50).map(|i| source.token(&callers[i % 2]))).await;
    assert_eq!(idp.count(), 1, "one request for 50 calls of two callers");
    assert!(tokens.into_iter().all(|t| t.unwrap().expose() == "service-1"));

    let request = &idp.requests()[0];
    assert_eq!(request.basic, Some((CLIENT_ID.to_owned(), CLIENT_SECRET.to_owned())));
    assert_eq!(request.field("grant_type"), Some("client_credentials"));
    assert_eq!(request.field("scope"), Some("inventory.read"));
    assert_eq!(request.field("audience"), Some("inventory"));
    assert_eq!(request.field("resource"), Some("https://inventory.example.com"));
    assert_eq!(request.field("subject_token"), None, "a caller's sign-in is never sent");
    assert_eq!(request.names().len(), 4);

    // Expiry: an answer that lives one second is kept 0.9 s.
    idp.set(Mode::Issue(Some(json!("1"))));
    let short = service(&idp.url);
    let first = short.token(&callers[0]).await.unwrap();
    assert_eq!(short.token(&callers[1]).await.unwrap(), first);
    assert_eq!(idp.count(), 2);
    tokio::time::sleep(Duration::from_millis(950)).await;
    assert_ne!(short.token(&callers[0]).await.unwrap(), first);
    assert_eq!(idp.count(), 3);
}

#[tokio::test]
async fn its_failures_are_mapped_like_the_exchange() {
    let idp = idp::start().await;
    let mut wrong = config(&idp.url);
    wrong.client_secret = Secret::new("wrong-client-secret");
    let error = ClientCredentials::new(wrong, reqwest::Client::new(), "the inventory")
        .token(&Caller::new("alice", "member"))
        .await
        .unwrap_err();
    assert_eq!(error.code, ErrorCode::PermissionDenied);
    assert!(error.message.contains("`invalid_client`"), "{}", error.message);
    assert!(error.message.contains("Do not ask the user to sign in again"), "{}", error.message);
    assert!(!format!("{error:?}").contains("wrong-client-secret"));

    idp.set(Mode::Down);
    let error = service(&idp.url).token(&Caller::new("alice", "member")).await.unwrap_err();
    assert_eq!(error.code, ErrorCode::Unavailable);
    assert!(error.transient);

    let source = service(&idp.url);
    assert!(!format!("{source:?}").contains(CLIENT_SECRET));
    // A configuration that fails its check: said at start, and a source made from it anyway
    // sends nothing and fails every call saying why.
    idp.set(Mode::Issue(Some(json!(3600))));
    let before = idp.count();
    let mut bad = config("file:///etc/passwd");
    assert!(bad.check().unwrap_err().message().contains("http(s)://"));
    bad.token_url = idp.url.clone();
    bad.client_id = " ".into();
    let problem = bad.check().unwrap_err();
    assert!(problem.message().contains("client_id"), "{problem}");
    let error = ClientCredentials::new(bad, reqwest::Client::new(), "the inventory")
        .token(&Caller::new("alice", "member"))
        .await
        .unwrap_err();
    assert_eq!(error.code, ErrorCode::ExecutionError);
    assert!(
        error.message.contains(problem.message()) && error.message.contains("operator"),
        "{}",
        error.message
    );
    assert!(!error.message.contains(CLIENT_SECRET));
    assert_eq!(idp.count(), before, "nothing was sent");
}
