//! Finding the issuer's keys: OpenID Connect Discovery, RFC 8414, the issuer
//! check, and what happens when the provider cannot be reached.

use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use toolgate_oauth::resource::{Rejection, ResourceConfig};

use crate::idp::{Flavor, Idp, Key, RESOURCE};
use crate::{accepted, config, rejected, verifier};

#[track_caller]
fn assert_unavailable(rejection: &Rejection, needle: &str) {
    match rejection {
        Rejection::Unavailable(message) => {
            assert!(message.contains(needle), "{message:?} does not say {needle:?}")
        }
        other => panic!("expected Unavailable, got {other:?}"),
    }
    assert_eq!(rejection.status(), 503);
}

#[tokio::test]
async fn openid_configuration_first_and_lazily() {
    let idp = Idp::start().await;
    let key = Key::generate("k1");
    idp.publish(vec![key.jwk()]);
    let verifier = verifier(config(&idp));
    assert!(idp.requests().is_empty(), "nothing is fetched before the first token");
    accepted(&verifier, &key.sign(&idp.claims())).await;
    assert_eq!(idp.requests(), ["GET /realms/acme/.well-known/openid-configuration", "GET /jwks"]);
}

#[tokio::test]
async fn rfc8414_only_provider_with_a_path() {
    let idp = Idp::start_with(Flavor::Rfc8414Only, "/realms/acme").await;
    let key = Key::generate("k1");
    idp.publish(vec![key.jwk()]);
    let verifier = verifier(config(&idp));
    verifier.discover().await.unwrap();
    assert_eq!(
        idp.requests(),
        [
            "GET /realms/acme/.well-known/openid-configuration",
            "GET /.well-known/oauth-authorization-server/realms/acme",
            "GET /jwks",
        ]
    );
    accepted(&verifier, &key.sign(&idp.claims())).await;
    assert_eq!(idp.requests().len(), 3, "discover() fetched what verify needs");
}

#[tokio::test]
async fn issuers_without_a_path_or_with_a_trailing_slash() {
    for (flavor, path, expected) in [
        (Flavor::Oidc, "", "GET /.well-known/openid-configuration"),
        (Flavor::Rfc8414Only, "", "GET /.well-known/oauth-authorization-server"),
        (Flavor::Oidc, "/realms/acme/", "GET /realms/acme/.well-known/openid-configuration"),
        (Flavor::Rfc8414Only, "/realms/acme/", "GET /.well-known/oauth-authorization-server/realms/acme"),
    ] {
        let idp = Idp::start_with(flavor, path).await;
        let key = Key::generate("k1");
        idp.publish(vec![key.jwk()]);
        let verifier = verifier(config(&idp));
        // the issuer is used as written: a trailing slash stays in `iss`
        accepted(&verifier, &key.sign(&idp.claims())).await;
        assert!(idp.requests().iter().any(|r| r == expected), "{path:?}: {:?}", idp.requests());
        assert_eq!(idp.jwks_fetches(), 1);
    }
}

#[tokio::test]
async fn an_issuer_mismatch_in_the_metadata_is_an_error() {
    let idp = Idp::start().await;
    let key = Key::generate("k1");
    idp.publish(vec![key.jwk()]);
    // the provider's issuer has a trailing slash, the configuration has none
    idp.set_metadata_issuer(&format!("{}/", idp.issuer));
    let verifier = verifier(config(&idp));
    let error = verifier.discover().await.unwrap_err();
    assert!(error.contains(&format!("\"{}/\"", idp.issuer)), "{error}");
    assert!(error.contains(&format!("\"{}\"", idp.issuer)), "{error}");
    assert!(error.contains("byte for byte"), "{error}");
    assert_eq!(idp.jwks_fetches(), 0, "keys of a mismatching issuer are not fetched");
    assert_unavailable(&rejected(&verifier, &key.sign(&idp.claims())).await, "byte for byte");
}

#[tokio::test]
async fn provider_down_is_unavailable_and_retried_no_more_often_than_the_floor() {
    // nothing listens on the port
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let key = Key::generate("k1");
    let issuer = format!("http://127.0.0.1:{port}/realms/acme");
    let mut config = ResourceConfig::new(&issuer, RESOURCE);
    config.default_role = Some("member".to_owned());
    let verifier = crate::verifier(config);
    let claims = serde_json::json!({
        "iss": issuer, "aud": RESOURCE, "sub": "alice", "exp": crate::idp::now() + 60,
    });
    let rejection = rejected(&verifier, &key.sign(&claims)).await;
    assert_unavailable(&rejection, &format!("127.0.0.1:{port}"));
    let error = verifier.discover().await.unwrap_err();
    assert!(error.contains("could not reach"), "{error}");

    // a provider answering 503: one round of discovery, then nothing until the floor has passed
    let idp = Idp::start().await;
    idp.publish(vec![key.jwk()]);
    idp.set_failing(true);
    let verifier = crate::verifier(crate::config(&idp));
    let token = key.sign(&idp.claims());
    assert_unavailable(&rejected(&verifier, &token).await, "no authorization server metadata");
    let tried = idp.requests().len();
    assert_eq!(tried, 3, "the three discovery URLs: {:?}", idp.requests());
    idp.set_failing(false);
    for _ in 0..5 {
        assert_unavailable(&rejected(&verifier, &token).await, "the next is made 30 s after it");
    }
    assert_eq!(idp.requests().len(), tried, "no retry within the floor");
    // discover() tries at once, whatever the floor
    verifier.discover().await.unwrap();
    accepted(&verifier, &token).await;

    // with no floor, the next token retries and succeeds once the provider is back
    let mut config = crate::config(&idp);
    config.jwks_refresh_floor = Duration::ZERO;
    let eager = crate::verifier(config);
    idp.set_failing(true);
    assert_unavailable(&rejected(&eager, &token).await, "503");
    idp.set_failing(false);
    accepted(&eager, &token).await;
}

#[tokio::test]
async fn jwks_down_after_discovery_is_unavailable() {
    let idp = Idp::start().await;
    let key = Key::generate("k1");
    idp.publish(vec![key.jwk()]);
    let mut config = config(&idp);
    config.jwks_refresh_floor = Duration::ZERO;
    let verifier = verifier(config);
    verifier.discover().await.unwrap();
    // a new kid while the provider fails: 503, not 401 (the key may exist)
    idp.set_failing(true);
    let next = Key::generate("k2");
    assert_unavailable(&rejected(&verifier, &next.sign(&idp.claims())).await, "JWKS");
    // tokens with known keys keep working
    accepted(&verifier, &key.sign(&idp.claims())).await;
}

/// Captured log lines.
#[derive(Clone, Default)]
struct Logs(Arc<Mutex<Vec<u8>>>);

impl Write for Logs {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[tokio::test]
async fn failures_are_logged_with_the_url_and_never_the_token() {
    let logs = Logs::default();
    let writer = logs.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::TRACE)
        .with_ansi(false)
        .with_writer(move || writer.clone())
        .finish();
    // With a single registered dispatcher, tracing computes a callsite's
    // interest with the default of whichever thread first hits it: another
    // test's thread (no subscriber) would disable it here too. A second live
    // dispatcher makes it ask every registered one.
    let _second = tracing::Dispatch::new(tracing::subscriber::NoSubscriber::default());
    let _guard = tracing::subscriber::set_default(subscriber);
    tracing::callsite::rebuild_interest_cache();

    let idp = Idp::start().await;
    let key = Key::generate("k1");
    idp.publish(vec![key.jwk()]);
    idp.set_failing(true);
    let mut config = crate::config_with_introspection(&idp);
    config.jwks_refresh_floor = Duration::ZERO;
    let verifier = verifier(config);
    let jwt = key.sign(&idp.claims());
    rejected(&verifier, &jwt).await;
    let opaque = "opaque-token-that-must-not-be-logged";
    rejected(&verifier, opaque).await;
    idp.set_failing(false);
    accepted(&verifier, &jwt).await;
    rejected(&verifier, opaque).await;
    rejected(&verifier, &Key::generate("k9").sign(&idp.claims())).await;

    let text = String::from_utf8(logs.0.lock().unwrap().clone()).unwrap();
    assert!(text.contains("WARN"), "{text}");
    assert!(text.contains(&format!("{}/realms/acme/.well-known/openid-configuration", idp.origin)), "{text}");
    assert!(text.contains(&format!("{}/introspect", idp.origin)), "{text}");
    for secret in [jwt.as_str(), jwt.rsplit('.').next().unwrap(), opaque, crate::idp::CLIENT_SECRET] {
        assert!(!text.contains(secret), "the log shows a secret: {text}");
    }
}
