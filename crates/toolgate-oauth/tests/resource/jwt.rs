//! JWT access tokens (RFC 9068) verified against the provider's JWKS.

use std::time::{Duration, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::{Value, json};
use toolgate_oauth::resource::Verifier;

use crate::idp::{Idp, Key, RESOURCE, now};
use crate::{accepted, assert_invalid, client, config, hierarchy, rejected, verifier};

/// A provider publishing one key, and a verifier for it.
async fn setup() -> (Idp, Key, Verifier) {
    let idp = Idp::start().await;
    let key = Key::generate("k1");
    idp.publish(vec![key.jwk()]);
    let verifier = verifier(config(&idp));
    (idp, key, verifier)
}

fn with(mut claims: Value, name: &str, value: Value) -> Value {
    claims[name] = value;
    claims
}

fn without(mut claims: Value, name: &str) -> Value {
    claims.as_object_mut().unwrap().remove(name);
    claims
}

#[tokio::test]
async fn good_token_with_string_or_array_audience() {
    let (idp, key, verifier) = setup().await;
    let claims = idp.claims();
    let exp = claims["exp"].as_u64().unwrap();
    let verified = accepted(&verifier, &key.sign(&claims)).await;
    assert_eq!(verified.subject, "alice");
    assert_eq!(verified.user_id, "alice");
    assert_eq!(verified.role, "member");
    assert_eq!(verified.tenant, None);
    assert_eq!(verified.toolset, None);
    assert_eq!(verified.scopes, ["openid", "tools.read"]);
    assert_eq!(verified.expires_at, UNIX_EPOCH + Duration::from_secs(exp));

    let array = with(idp.claims(), "aud", json!(["https://other.example.com", RESOURCE]));
    assert_eq!(accepted(&verifier, &key.sign(&array)).await.role, "member");
    // one discovery, one JWKS fetch for both
    assert_eq!(idp.jwks_fetches(), 1);
    assert_eq!(idp.metadata_requests(), 1);
}

#[tokio::test]
async fn another_audience_is_refused() {
    let (idp, key, verifier) = setup().await;
    for aud in [
        json!("https://other.example.com/mcp"),
        json!(["https://other.example.com/mcp"]),
        json!("https://mcp.example.com/mcp/"),
        json!("https://mcp.example.com"),
        json!([]),
    ] {
        let token = key.sign(&with(idp.claims(), "aud", aud.clone()));
        assert_invalid(&rejected(&verifier, &token).await, "aud");
    }
    let token = key.sign(&without(idp.claims(), "aud"));
    assert_invalid(&rejected(&verifier, &token).await, "no aud claim");
}

#[tokio::test]
async fn expiry_with_leeway() {
    let (idp, key, verifier) = setup().await;
    let now = now();
    let expired = key.sign(&with(idp.claims(), "exp", json!(now - 10)));
    assert_invalid(&rejected(&verifier, &expired).await, "expired");
    // within the 2 s leeway
    let just_expired = key.sign(&with(idp.claims(), "exp", json!(now - 1)));
    accepted(&verifier, &just_expired).await;
    // a token within leeway is not cached past its exp: verified again, still accepted
    accepted(&verifier, &just_expired).await;

    let no_exp = key.sign(&without(idp.claims(), "exp"));
    assert_invalid(&rejected(&verifier, &no_exp).await, "no exp claim");
    let bad_exp = key.sign(&with(idp.claims(), "exp", json!("tomorrow")));
    assert_invalid(&rejected(&verifier, &bad_exp).await, "exp");

    // a larger leeway is honoured
    let mut config = config(&idp);
    config.leeway = Duration::from_secs(30);
    let lenient = crate::verifier(config);
    accepted(&lenient, &expired).await;
}

#[tokio::test]
async fn not_before_is_honoured() {
    let (idp, key, verifier) = setup().await;
    let future = key.sign(&with(idp.claims(), "nbf", json!(now() + 60)));
    assert_invalid(&rejected(&verifier, &future).await, "not valid yet");
    let within_leeway = key.sign(&with(idp.claims(), "nbf", json!(now() + 1)));
    accepted(&verifier, &within_leeway).await;
    let past = key.sign(&with(idp.claims(), "nbf", json!(now() - 60)));
    accepted(&verifier, &past).await;
}

#[tokio::test]
async fn signature_by_another_key_with_the_same_kid_is_refused() {
    let (idp, _key, verifier) = setup().await;
    let impostor = Key::generate("k1");
    let token = impostor.sign(&idp.claims());
    assert_invalid(&rejected(&verifier, &token).await, "signature");
    // a known kid never triggers a refetch
    assert_eq!(idp.jwks_fetches(), 1);

    // a tampered payload fails too
    let (idp, key, verifier) = setup().await;
    let good = key.sign(&idp.claims());
    let mut parts: Vec<String> = good.split('.').map(str::to_owned).collect();
    let mut claims: Value = serde_json::from_slice(&URL_SAFE_NO_PAD.decode(&parts[1]).unwrap()).unwrap();
    claims["groups"] = json!(["admins"]);
    parts[1] = URL_SAFE_NO_PAD.encode(serde_json::to_vec(&claims).unwrap());
    let tampered = parts.join(".");
    assert_invalid(&rejected(&verifier, &tampered).await, "signature");
}

fn b64(value: &Value) -> String {
    URL_SAFE_NO_PAD.encode(serde_json::to_vec(value).unwrap())
}

#[tokio::test]
async fn alg_none_is_refused() {
    let (idp, key, verifier) = setup().await;
    let claims = b64(&idp.claims());
    for header in [
        json!({"alg": "none", "typ": "at+jwt"}),
        json!({"alg": "none", "typ": "at+jwt", "kid": "k1"}),
        json!({"alg": "None", "kid": "k1"}),
    ] {
        let unsigned = format!("{}.{claims}.", b64(&header));
        assert_invalid(&rejected(&verifier, &unsigned).await, "alg \"none\" is never accepted");
        // with a signature copied from a good token
        let good = key.sign(&idp.claims());
        let signature = good.rsplit('.').next().unwrap();
        let signed = format!("{}.{claims}.{signature}", b64(&header));
        assert_invalid(&rejected(&verifier, &signed).await, "alg \"none\"");
    }
    let missing_alg = format!("{}.{claims}.", b64(&json!({"typ": "at+jwt"})));
    assert_invalid(&rejected(&verifier, &missing_alg).await, "malformed");
}

#[tokio::test]
async fn hs256_with_the_public_key_as_secret_is_refused() {
    let (idp, key, verifier) = setup().await;
    let public = serde_json::to_vec(&key.jwk()).unwrap();
    let x = key.jwk()["x"].as_str().unwrap().to_owned();
    for secret in [public, x.into_bytes()] {
        let mut header = Header::new(Algorithm::HS256);
        header.kid = Some("k1".to_owned());
        header.typ = Some("at+jwt".to_owned());
        let token = jsonwebtoken::encode(&header, &idp.claims(), &EncodingKey::from_secret(&secret)).unwrap();
        assert_invalid(&rejected(&verifier, &token).await, "HS256");
    }
    // and a configuration cannot allow it
    let mut config = config(&idp);
    config.algorithms.push(Algorithm::HS256);
    let error = Verifier::new(config, client(), hierarchy()).unwrap_err();
    assert!(error.contains("HS256") && error.contains("symmetric"), "{error}");
}

#[tokio::test]
async fn an_algorithm_outside_the_allow_list_is_refused() {
    let (idp, key, _) = setup().await;
    let mut config = config(&idp);
    config.algorithms = vec![Algorithm::RS256];
    let rs_only = crate::verifier(config);
    let token = key.sign(&idp.claims());
    assert_invalid(&rejected(&rs_only, &token).await, "ES256");
    assert_eq!(idp.jwks_fetches(), 0, "refused before any key was needed");
}

#[tokio::test]
async fn wrong_issuer_is_refused() {
    let (idp, key, verifier) = setup().await;
    for iss in [
        json!(format!("{}/", idp.issuer)),
        json!("https://evil.example.com/realms/acme"),
        json!(idp.issuer.to_uppercase()),
        json!([idp.issuer]),
        json!(42),
    ] {
        let token = key.sign(&with(idp.claims(), "iss", iss.clone()));
        assert_invalid(&rejected(&verifier, &token).await, "iss");
    }
    let token = key.sign(&without(idp.claims(), "iss"));
    assert_invalid(&rejected(&verifier, &token).await, "no iss claim");
}

#[tokio::test]
async fn typ_must_be_an_access_tokens() {
    let (idp, key, verifier) = setup().await;
    let sign = |typ: Option<&str>| {
        let mut header = Header::new(Algorithm::ES256);
        header.kid = Some("k1".to_owned());
        header.typ = typ.map(str::to_owned);
        key.sign_with(&header, &idp.claims())
    };
    for ok in [Some("at+jwt"), Some("AT+JWT"), Some("application/at+jwt"), Some("JWT"), Some("jwt"), None] {
        accepted(&verifier, &sign(ok)).await;
    }
    for bad in ["id+jwt", "JOSE", "dpop+jwt", "logout+jwt", ""] {
        assert_invalid(&rejected(&verifier, &sign(Some(bad))).await, "typ");
    }
}

#[tokio::test]
async fn unknown_kid_refetches_once_and_accepts_a_rotated_key() {
    let (idp, key, verifier) = setup().await;
    accepted(&verifier, &key.sign(&idp.claims())).await;
    assert_eq!(idp.jwks_fetches(), 1);

    // the provider rotates to k2
    let next = Key::generate("k2");
    idp.publish(vec![key.jwk(), next.jwk()]);
    let verified = accepted(&verifier, &next.sign(&idp.claims())).await;
    assert_eq!(verified.subject, "alice");
    assert_eq!(idp.jwks_fetches(), 2, "one refetch for the new kid");
    assert_eq!(idp.metadata_requests(), 1, "the metadata is not fetched again");

    // now k2 is known: no fetch; a third unknown kid within the floor: no fetch either
    accepted(&verifier, &next.sign(&idp.claims())).await;
    let stranger = Key::generate("k3");
    let refused = rejected(&verifier, &stranger.sign(&idp.claims())).await;
    assert_invalid(&refused, "no key \"k3\"");
    assert_eq!(idp.jwks_fetches(), 2);

    // with no floor, an unknown kid refetches at once, and still refuses
    let mut config = config(&idp);
    config.jwks_refresh_floor = Duration::ZERO;
    let eager = crate::verifier(config);
    accepted(&eager, &key.sign(&idp.claims())).await;
    assert_eq!(idp.jwks_fetches(), 3);
    let refused = rejected(&eager, &stranger.sign(&idp.claims())).await;
    assert_invalid(&refused, "even after refetching");
    assert_eq!(idp.jwks_fetches(), 4);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_flood_of_unknown_kids_does_not_hammer_the_provider() {
    let (idp, key, verifier) = setup().await;
    accepted(&verifier, &key.sign(&idp.claims())).await;
    assert_eq!(idp.jwks_fetches(), 1);
    let tokens: Vec<String> = (0..50)
        .map(|i| {
            let mut header = Header::new(Algorithm::ES256);
            header.kid = Some(format!("bogus-{i}"));
            header.typ = Some("at+jwt".to_owned());
            key.sign_with(&header, &idp.claims())
        })
        .collect();
    let tasks: Vec<_> = tokens
        .into_iter()
        .map(|token| {
            let verifier = verifier.clone();
            tokio::spawn(async move { verifier.verify(&token).await })
        })
        .collect();
    for task in tasks {
        let rejection = task.await.unwrap().unwrap_err();
        assert_invalid(&rejection, "no key");
    }
    assert!(idp.jwks_fetches() <= 2, "{} JWKS fetches for 50 bad tokens", idp.jwks_fetches());
    assert_eq!(idp.metadata_requests(), 1);

    // a flood on a cold verifier: one discovery, one JWKS fetch (plus at most one refetch)
    let cold = crate::verifier(config(&idp));
    let before = idp.jwks_fetches();
    let tasks: Vec<_> = (0..50)
        .map(|i| {
            let cold = cold.clone();
            let stranger = Key::generate(&format!("cold-{i}"));
            let token = stranger.sign(&idp.claims());
            tokio::spawn(async move { cold.verify(&token).await })
        })
        .collect();
    for task in tasks {
        assert_invalid(&task.await.unwrap().unwrap_err(), "no key");
    }
    assert!(idp.jwks_fetches() - before <= 2, "{} JWKS fetches", idp.jwks_fetches() - before);
    assert_eq!(idp.metadata_requests(), 2);
}

#[tokio::test]
async fn without_kid_the_only_fitting_key_is_used() {
    let idp = Idp::start().await;
    let key = Key::generate("k1");
    idp.publish(vec![key.jwk_without_kid()]);
    let verifier = verifier(config(&idp));
    let mut header = Header::new(Algorithm::ES256);
    header.typ = Some("at+jwt".to_owned());
    let token = key.sign_with(&header, &idp.claims());
    accepted(&verifier, &token).await;

    // two keys fit: which one is meant cannot be known
    let idp = Idp::start().await;
    let other = Key::generate("k2");
    idp.publish(vec![key.jwk_without_kid(), other.jwk_without_kid()]);
    let verifier = crate::verifier(config(&idp));
    let token = key.sign_with(&header, &idp.claims());
    assert_invalid(&rejected(&verifier, &token).await, "no kid");
}

#[tokio::test]
async fn a_key_for_another_algorithm_is_not_used() {
    let idp = Idp::start().await;
    let key = Key::generate("k1");
    let mut jwk = key.jwk();
    jwk["alg"] = json!("ES384");
    idp.publish(vec![jwk]);
    let verifier = verifier(config(&idp));
    assert_invalid(&rejected(&verifier, &key.sign(&idp.claims())).await, "not a ES256 key");

    // an encryption key and a symmetric key are never used for signatures
    let idp = Idp::start().await;
    let mut enc = key.jwk();
    enc["use"] = json!("enc");
    idp.publish(vec![enc, json!({"kty": "oct", "kid": "k1", "k": "c2VjcmV0", "alg": "HS256"})]);
    let verifier = crate::verifier(config(&idp));
    assert_invalid(&rejected(&verifier, &key.sign(&idp.claims())).await, "no key \"k1\"");
}

#[tokio::test]
async fn malformed_and_incomplete_tokens_are_refused() {
    let (idp, key, verifier) = setup().await;
    assert_invalid(&rejected(&verifier, "").await, "empty");
    assert_invalid(&rejected(&verifier, &"a".repeat(20_000)).await, "bytes long");
    assert_invalid(&rejected(&verifier, "eyJub3QganNvbg.eyJ9.c2ln").await, "malformed");
    // an opaque token, with no introspection configured
    assert_invalid(&rejected(&verifier, "2YotnFZFEjr1zWsicMWpAA").await, "no introspection");

    let no_sub = key.sign(&without(idp.claims(), "sub"));
    assert_invalid(&rejected(&verifier, &no_sub).await, "sub");
    let mut header = Header::new(Algorithm::ES256);
    header.kid = Some("k1".to_owned());
    header.crit = Some(vec!["exp".to_owned()]);
    let critical = key.sign_with(&header, &idp.claims());
    assert_invalid(&rejected(&verifier, &critical).await, "crit");
    // a garbled signature
    let good = key.sign(&idp.claims());
    let garbled = format!("{}AAAA", &good[..good.len() - 4]);
    assert_invalid(&rejected(&verifier, &garbled).await, "signature");
}

#[tokio::test]
async fn cached_tokens_skip_the_signature_check() {
    let (idp, key, verifier) = setup().await;
    let token = key.sign(&idp.claims());
    accepted(&verifier, &token).await;
    // the provider withdraws k1 and the verifier learns of it
    let next = Key::generate("k2");
    idp.publish(vec![next.jwk()]);
    verifier.discover().await.unwrap();
    // the token verified before is still known (from the cache, for at most 5 minutes) ...
    assert_eq!(accepted(&verifier, &token).await.subject, "alice");
    // ... a new token with k1 is checked and refused
    let fresh = key.sign(&idp.claims());
    assert_invalid(&rejected(&verifier, &fresh).await, "no key \"k1\"");
    // a clone shares the cache
    assert_eq!(accepted(&verifier.clone(), &token).await.subject, "alice");
}

#[tokio::test]
async fn debug_shows_no_secret() {
    let (idp, key, verifier) = setup().await;
    let token = key.sign(&idp.claims());
    accepted(&verifier, &token).await;
    let mut config = crate::config_with_introspection(&idp);
    config.leeway = Duration::from_secs(1);
    let with_secret = crate::verifier(config);
    for shown in [format!("{verifier:?}"), format!("{with_secret:?}"), format!("{:?}", with_secret.config())]
    {
        assert!(!shown.contains(crate::idp::CLIENT_SECRET), "{shown}");
        assert!(!shown.contains(&token), "{shown}");
        assert!(shown.contains(&idp.issuer), "{shown}");
    }
}
