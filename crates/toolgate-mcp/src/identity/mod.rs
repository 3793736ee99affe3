//! How a request proves who it is: one [`Authenticator`] per way, tried in
//! order, each answering only for the credentials it knows.
//!
//! Two ship with the crate: API keys ([`KeyAuthenticator`], `Bearer tg_…`)
//! and OAuth access tokens from the company's identity provider
//! ([`OAuthAuthenticator`], any other bearer), plus the opt-in anonymous
//! caller ([`Anonymous`], a request with no `Authorization` header at all).
//! A third way (a client certificate, a header set by a trusted front
//! proxy) is one more implementation given to
//! [`crate::HttpState::with_authenticator`].
//!
//! What an authenticator proves becomes an [`Identity`]: the [`Caller`] the
//! tools see, the principal that sessions, streams, rate limits and
//! revocations are keyed on, and when the proof ends.

use std::fmt;
use std::time::SystemTime;

use axum::http::{Extensions, HeaderMap, header};
use toolgate_core::Caller;

mod anonymous;
mod key;
#[cfg(feature = "oauth")]
mod oauth;

pub use anonymous::Anonymous;
pub use key::KeyAuthenticator;
#[cfg(feature = "oauth")]
pub use oauth::OAuthAuthenticator;

/// Who a request proved to be.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Identity {
    /// The caller the tools see (user, role, tenant, toolset, domains; for a
    /// token its [`Caller::subject_token`], for token exchange only).
    pub caller: Caller,
    /// What sessions, `/trace` streams, rate limits and revocations are keyed
    /// on, stable across requests of the same proof: an API key's id, or
    /// `oauth:` and the token's subject. Safe to log; never a secret.
    pub principal: String,
    /// How it was proved.
    pub proof: Proof,
}

impl Identity {
    /// An identity proved by `proof`, keyed on `principal`.
    pub fn new(caller: Caller, principal: impl Into<String>, proof: Proof) -> Self {
        Self { caller, principal: principal.into(), proof }
    }

    /// When the proof stops being valid (a token's `exp`); `None` for proofs
    /// that last until revoked.
    pub fn expires_at(&self) -> Option<SystemTime> {
        match self.proof {
            Proof::Token { expires_at } => Some(expires_at),
            Proof::Key | Proof::Anonymous | Proof::Other => None,
        }
    }
}

/// How an [`Identity`] was proved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Proof {
    /// An API key of the [`crate::KeyStore`]: valid until revoked; the
    /// principal is the key's id, which the store's revocation feed names.
    Key,
    /// An access token of the identity provider, valid until `expires_at`:
    /// sessions and streams opened with it end then, unless a fresh token of
    /// the same subject has been used meanwhile.
    Token {
        /// The token's `exp`.
        expires_at: SystemTime,
    },
    /// No credential: the configured anonymous caller.
    Anonymous,
    /// Another way, valid for as long as the requests carry it.
    Other,
}

/// Why a request's credential was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Refusal {
    /// `401`: no credential, or not a valid one. The message says which,
    /// never echoing the credential.
    Unauthorized(String),
    /// `403`: a valid credential that may not use this server. With
    /// `insufficient_scope` the client is told to ask for more scope
    /// (`error="insufficient_scope"`); without, it is not (a user whose
    /// groups map to no role would only loop through sign-in again).
    Forbidden {
        /// What is missing, for the user.
        message: String,
        /// Whether more scope would help.
        insufficient_scope: bool,
    },
    /// `503`: the credential could not be checked right now (the key store
    /// or the identity provider did not answer); the client may retry.
    Unavailable(String),
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refusal::Unauthorized(m) | Refusal::Unavailable(m) => f.write_str(m),
            Refusal::Forbidden { message, .. } => f.write_str(message),
        }
    }
}

/// What a `401` tells a client about how to sign in (the parameters of
/// `WWW-Authenticate: Bearer`, RFC 6750 §3 and RFC 9728 §5.1), and the
/// Protected Resource Metadata (RFC 9728) the server publishes for it.
#[derive(Debug, Clone, PartialEq)]
pub struct Challenge {
    /// Where the metadata document is, as a URL (`resource_metadata="…"`).
    pub resource_metadata: String,
    /// The scopes to ask for (`scope="…"`); may be empty.
    pub scopes: Vec<String>,
    /// The paths the metadata document is served at, e.g.
    /// `/.well-known/oauth-protected-resource/mcp`.
    pub metadata_paths: Vec<String>,
    /// The metadata document itself.
    pub metadata: serde_json::Value,
}

/// One way for a request to prove who it is.
///
/// [`authenticate`](Self::authenticate) returns `None` for a request whose
/// credential is not of its kind (the next authenticator is asked), and
/// `Some` with the answer for one that is: a request is never judged by an
/// authenticator that does not know its credential. Implementations never
/// log, trace or echo the credential.
#[toolgate_core::async_trait]
pub trait Authenticator: Send + Sync + fmt::Debug + 'static {
    /// Who the request proves to be, or why it is refused; `None` when its
    /// credential is not of this kind.
    async fn authenticate(
        &self,
        headers: &HeaderMap,
        extensions: &Extensions,
    ) -> Option<Result<Identity, Refusal>>;

    /// How a client signs in this way, if it can be told (OAuth); a `401`
    /// then carries it, and the metadata is served at its paths.
    fn challenge(&self) -> Option<Challenge> {
        None
    }
}

/// What the request's `Authorization` header holds.
#[derive(Debug, PartialEq, Eq)]
pub enum Bearer<'a> {
    /// No header at all.
    Missing,
    /// `Bearer <credential>` (the scheme in any case), the credential trimmed.
    Token(&'a str),
    /// Anything else: another scheme, a bare `Bearer`, several headers, bytes that are not text.
    Malformed,
}

/// Read the `Authorization` header as RFC 6750 §2.1 writes it.
pub fn bearer(headers: &HeaderMap) -> Bearer<'_> {
    let mut values = headers.get_all(header::AUTHORIZATION).iter();
    let (Some(value), None) = (values.next(), values.next()) else {
        return if headers.contains_key(header::AUTHORIZATION) { Bearer::Malformed } else { Bearer::Missing };
    };
    let Some((scheme, token)) = value.to_str().ok().and_then(|v| v.trim().split_once(' ')) else {
        return Bearer::Malformed;
    };
    let token = token.trim();
    if scheme.eq_ignore_ascii_case("bearer") && !token.is_empty() {
        Bearer::Token(token)
    } else {
        Bearer::Malformed
    }
}

#[cfg(test)]
mod tests {
    use axum::http::HeaderValue;

    use super::*;

    #[test]
    fn bearer_credentials_are_read_case_insensitively_and_nothing_else_passes() {
        let mut headers = HeaderMap::new();
        assert_eq!(bearer(&headers), Bearer::Missing);
        headers.insert(header::AUTHORIZATION, HeaderValue::from_static("bearer tg_x"));
        assert_eq!(bearer(&headers), Bearer::Token("tg_x"));
        for bad in ["Basic dXNlcg==", "Bearer", "Bearer ", "Token tg_x", "tg_x", ""] {
            headers.insert(header::AUTHORIZATION, HeaderValue::from_static(bad));
            assert_eq!(bearer(&headers), Bearer::Malformed, "{bad:?}");
        }
        headers.insert(header::AUTHORIZATION, HeaderValue::from_static("Bearer tg_x"));
        headers.append(header::AUTHORIZATION, HeaderValue::from_static("Bearer tg_y"));
        assert_eq!(bearer(&headers), Bearer::Malformed);
    }
}
