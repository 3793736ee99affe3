//! Opaque tokens asked about at the introspection endpoint (RFC 7662).

use std::time::{Duration, UNIX_EPOCH};

use serde_json::{Value, json};
use toolgate_core::Secret;
use toolgate_oauth::resource::{IntrospectionConfig, Rejection};

use crate::idp::{CLIENT_ID, Idp, RESOURCE, now};
use crate::{accepted, assert_invalid, config_with_introspection, rejected, verifier};

/// A token with characters that need form encoding.
const TOKEN: &str = "opaque/8xLOxBtZp8+token=&x y";

fn active(idp: &Idp, extra: Value) -> Value {
    let mut answer = json!({
        "active": true,
        "iss": idp.issuer,
        "aud": [RESOURCE, "https://other.example.com"],
        "sub": "bob",
        "client_id": "claude",
        "exp": now() + 3600,
        "scope": "tools.read tools.write",
        "groups": ["admins"],
        "tenant": "acme",
    });
    for (name, value) in extra.as_object().unwrap() {
        if value.is_null() {
            answer.as_object_mut().unwrap().remove(name);
        } else {
            answer[name] = value.clone();
        }
    }
    answer
}

#[tokio::test]
async fn an_active_token_is_accepted_and_cached() {
    let idp = Idp::start().await;
    let answer = active(&idp, json!({}));
    let exp = answer["exp"].as_u64().unwrap();
    idp.introspects(TOKEN, answer);
    let mut config = config_with_introspection(&idp);
    config.tenant_claim = Some("tenant".to_owned());
    config.scopes = vec![("tools.write".to_owned(), "writers".to_owned())];
    let verifier = verifier(config);
    let verified = accepted(&verifier, TOKEN).await;
    assert_eq!(verified.subject, "bob");
    assert_eq!(verified.user_id, "bob");
    assert_eq!(verified.role, "admin");
    assert_eq!(verified.tenant.as_deref(), Some("acme"));
    assert_eq!(verified.scopes, ["tools.read", "tools.write"]);
    assert_eq!(verified.toolset.as_deref(), Some("writers"));
    assert_eq!(verified.expires_at, UNIX_EPOCH + Duration::from_secs(exp));
    assert_eq!(idp.introspections(), 1);
    // the second time comes from the cache
    assert_eq!(accepted(&verifier, TOKEN).await, verified);
    assert_eq!(idp.introspections(), 1);
    // opaque tokens need no discovery
    assert_eq!(idp.metadata_requests(), 0);
}

#[tokio::test]
async fn an_inactive_token_is_refused() {
    let idp = Idp::start().await;
    idp.introspects("revoked-token", json!({"active": false}));
    idp.introspects("odd-token", json!({"active": "true", "sub": "x"}));
    let verifier = verifier(config_with_introspection(&idp));
    assert_invalid(&rejected(&verifier, "revoked-token").await, "not active");
    assert_invalid(&rejected(&verifier, "odd-token").await, "not active");
    assert_invalid(&rejected(&verifier, "never-issued").await, "not active");
    // refusals are not cached
    assert_invalid(&rejected(&verifier, "revoked-token").await, "not active");
    assert_eq!(idp.introspections(), 4);
}

#[tokio::test]
async fn answers_are_cached_no_longer_than_the_token_lives() {
    let idp = Idp::start().await;
    // expired a second ago: within the 2 s leeway, so accepted, but never cached
    idp.introspects(TOKEN, active(&idp, json!({"exp": now() - 1})));
    let verifier = verifier(config_with_introspection(&idp));
    accepted(&verifier, TOKEN).await;
    accepted(&verifier, TOKEN).await;
    assert_eq!(idp.introspections(), 2, "asked again: the cached answer ended with the token");

    // the provider now says it is revoked: the next verify sees it
    idp.introspects(TOKEN, json!({"active": false}));
    assert_invalid(&rejected(&verifier, TOKEN).await, "not active");

    // expired beyond the leeway: refused even though active
    idp.introspects("stale-token", active(&idp, json!({"exp": now() - 30})));
    assert_invalid(&rejected(&verifier, "stale-token").await, "expired");
    // not yet valid
    idp.introspects("early-token", active(&idp, json!({"nbf": now() + 60})));
    assert_invalid(&rejected(&verifier, "early-token").await, "not valid yet");

    // without exp: accepted, believed for at most five minutes
    idp.introspects("no-exp-token", active(&idp, json!({"exp": null})));
    let verified = accepted(&verifier, "no-exp-token").await;
    let left = verified.expires_at.duration_since(std::time::SystemTime::now()).unwrap();
    assert!(left <= Duration::from_secs(300) && left > Duration::from_secs(290), "{left:?}");
}

#[tokio::test]
async fn audience_and_issuer_are_checked_when_present() {
    let idp = Idp::start().await;
    idp.introspects("other-aud", active(&idp, json!({"aud": "https://other.example.com"})));
    idp.introspects("other-aud-list", active(&idp, json!({"aud": ["https://other.example.com"]})));
    idp.introspects("other-iss", active(&idp, json!({"iss": "https://evil.example.com"})));
    idp.introspects("no-aud-no-iss", active(&idp, json!({"aud": null, "iss": null})));
    idp.introspects("string-aud", active(&idp, json!({"aud": RESOURCE})));
    idp.introspects("no-sub", active(&idp, json!({"sub": null, "username": "bob"})));
    let mut config = config_with_introspection(&idp);
    config.user_claim = "username".to_owned();
    let verifier = verifier(config);
    assert_invalid(&rejected(&verifier, "other-aud").await, "aud");
    assert_invalid(&rejected(&verifier, "other-aud-list").await, "aud");
    assert_invalid(&rejected(&verifier, "other-iss").await, "iss");
    assert!(matches!(verifier.verify("no-aud-no-iss").await, Err(Rejection::NoRole(_))), "no username");
    let verified = accepted(&verifier, "no-sub").await;
    assert_eq!((verified.subject.as_str(), verified.user_id.as_str()), ("bob", "bob"));
    let mut config = config_with_introspection(&idp);
    config.default_role = Some("viewer".to_owned());
    let verifier = crate::verifier(config);
    accepted(&verifier, "no-aud-no-iss").await;
    accepted(&verifier, "string-aud").await;
}

#[tokio::test]
async fn wrong_client_credentials_or_a_provider_down_are_unavailable() {
    let idp = Idp::start().await;
    idp.introspects(TOKEN, active(&idp, json!({})));
    let mut config = config_with_introspection(&idp);
    config.introspection = Some(IntrospectionConfig {
        url: format!("{}/introspect", idp.origin),
        client_id: CLIENT_ID.to_owned(),
        client_secret: Secret::new("wrong"),
    });
    let verifier = verifier(config);
    let rejection = rejected(&verifier, TOKEN).await;
    assert!(
        matches!(&rejection, Rejection::Unavailable(m) if m.contains("client credentials") && m.contains("401")),
        "{rejection:?}"
    );
    assert_eq!(rejection.status(), 503);

    let verifier = crate::verifier(config_with_introspection(&idp));
    idp.set_failing(true);
    let rejection = rejected(&verifier, TOKEN).await;
    assert!(matches!(&rejection, Rejection::Unavailable(m) if m.contains("503")), "{rejection:?}");
    idp.set_failing(false);
    accepted(&verifier, TOKEN).await;

    // nothing listens there
    let mut config = config_with_introspection(&idp);
    config.introspection.as_mut().unwrap().url = "http://127.0.0.1:1/introspect".to_owned();
    let verifier = crate::verifier(config);
    let rejection = rejected(&verifier, TOKEN).await;
    assert!(
        matches!(&rejection, Rejection::Unavailable(m) if m.contains("could not reach")),
        "{rejection:?}"
    );
}

#[tokio::test]
async fn jwts_are_not_introspected() {
    let idp = Idp::start().await;
    let key = crate::idp::Key::generate("k1");
    idp.publish(vec![key.jwk()]);
    let verifier = verifier(config_with_introspection(&idp));
    accepted(&verifier, &key.sign(&idp.claims())).await;
    assert_eq!(idp.introspections(), 0);
}
