//! The resource server against a real identity provider on 127.0.0.1
//! ([`idp::Idp`]): JWT access tokens, discovery, claims to callers,
//! introspection, metadata.

#![allow(unreachable_pub, missing_debug_implementations)]

mod claims;
mod discovery;
mod idp;
mod introspection;
mod jwt;
mod metadata;

use toolgate_core::Secret;
use toolgate_oauth::resource::{IntrospectionConfig, Rejection, ResourceConfig, Verified, Verifier};

use idp::{CLIENT_ID, CLIENT_SECRET, Idp, RESOURCE};

/// Toolgate's roles, lowest first.
pub fn hierarchy() -> Vec<String> {
    ["viewer", "member", "admin"].map(String::from).to_vec()
}

/// A client that ignores proxy settings of the environment.
pub fn client() -> reqwest::Client {
    reqwest::Client::builder().no_proxy().build().unwrap()
}

/// The configuration the tests start from: `groups` staff -> member,
/// admins -> admin, viewers -> viewer; no default role, no scopes.
pub fn config(idp: &Idp) -> ResourceConfig {
    let mut config = ResourceConfig::new(&idp.issuer, RESOURCE);
    config.roles = [("staff", "member"), ("admins", "admin"), ("viewers", "viewer")]
        .map(|(value, role)| (value.to_owned(), role.to_owned()))
        .to_vec();
    config
}

/// [`config`] with introspection at the provider.
pub fn config_with_introspection(idp: &Idp) -> ResourceConfig {
    let mut config = config(idp);
    config.introspection = Some(IntrospectionConfig {
        url: format!("{}/introspect", idp.origin),
        client_id: CLIENT_ID.to_owned(),
        client_secret: Secret::new(CLIENT_SECRET),
    });
    config
}

pub fn verifier(config: ResourceConfig) -> Verifier {
    Verifier::new(config, client(), hierarchy()).unwrap()
}

/// The rejection of `token`, checked not to contain the token.
pub async fn rejected(verifier: &Verifier, token: &str) -> Rejection {
    let rejection = match verifier.verify(token).await {
        Ok(verified) => panic!("the token was accepted: {verified:?}"),
        Err(rejection) => rejection,
    };
    let text = format!("{rejection} {rejection:?}");
    assert!(token.is_empty() || !text.contains(token), "the rejection shows the token: {text}");
    for part in token.split('.').filter(|part| part.len() > 8) {
        assert!(!text.contains(part), "the rejection shows part of the token: {text}");
    }
    rejection
}

/// The accepted caller of `token`.
pub async fn accepted(verifier: &Verifier, token: &str) -> Verified {
    match verifier.verify(token).await {
        Ok(verified) => verified,
        Err(rejection) => panic!("the token was refused: {rejection}"),
    }
}

/// Assert `rejection` is [`Rejection::Invalid`] with a message containing `needle`.
#[track_caller]
pub fn assert_invalid(rejection: &Rejection, needle: &str) {
    match rejection {
        Rejection::Invalid(message) => {
            assert!(message.contains(needle), "{message:?} does not say {needle:?}")
        }
        other => panic!("expected Invalid ({needle}), got {other:?}"),
    }
    assert_eq!(rejection.status(), 401);
}
