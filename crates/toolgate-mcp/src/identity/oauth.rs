//! OAuth 2.1 access tokens of the company's identity provider: any bearer
//! that is not an API key, verified by [`toolgate_oauth::resource::Verifier`].

use axum::http::{Extensions, HeaderMap};
use toolgate_core::{Caller, Secret};
use toolgate_oauth::resource::{Rejection, Verifier};

use super::{Authenticator, Bearer, Challenge, Identity, Proof, Refusal, bearer};
use crate::KEY_PREFIX;

/// Where RFC 9728 puts the metadata of a resource at the root.
const WELL_KNOWN: &str = "/.well-known/oauth-protected-resource";

/// Proves a request by an access token (`Bearer <JWT or opaque token>`, any
/// bearer not shaped like an API key): verified as [`Verifier`] is
/// configured, its claims become the caller (user, role from the groups,
/// tenant, toolset from the scopes) and the token is kept only as the
/// caller's [`Caller::subject_token`] for token exchange. The principal is
/// `oauth:` and the token's `sub`, so a fresh token of the same subject
/// continues its sessions.
#[derive(Debug, Clone)]
pub struct OAuthAuthenticator {
    verifier: Verifier,
}

impl OAuthAuthenticator {
    /// Verify tokens with `verifier`.
    pub fn new(verifier: Verifier) -> Self {
        Self { verifier }
    }

    /// The verifier.
    pub fn verifier(&self) -> &Verifier {
        &self.verifier
    }
}

#[toolgate_core::async_trait]
impl Authenticator for OAuthAuthenticator {
    async fn authenticate(
        &self,
        headers: &HeaderMap,
        _extensions: &Extensions,
    ) -> Option<Result<Identity, Refusal>> {
        let Bearer::Token(token) = bearer(headers) else { return None };
        if token.starts_with(KEY_PREFIX) {
            return None;
        }
        Some(match self.verifier.verify(token).await {
            Ok(verified) => {
                let mut caller =
                    Caller::new(verified.user_id, verified.role).with_subject_token(Secret::new(token));
                caller.tenant = verified.tenant;
                caller.toolset = verified.toolset;
                let principal = format!("oauth:{}", verified.subject);
                Ok(Identity::new(caller, principal, Proof::Token { expires_at: verified.expires_at }))
            }
            Err(Rejection::Invalid(why)) => Err(Refusal::Unauthorized(why)),
            Err(Rejection::NoRole(why)) => {
                Err(Refusal::Forbidden { message: why, insufficient_scope: false })
            }
            Err(Rejection::InsufficientScope(why)) => {
                Err(Refusal::Forbidden { message: why, insufficient_scope: true })
            }
            Err(Rejection::Unavailable(why)) => Err(Refusal::Unavailable(why)),
            // A kind of rejection added later: by the HTTP status it maps to.
            Err(other) => Err(match other.status() {
                403 => Refusal::Forbidden {
                    message: other.message().to_owned(),
                    insufficient_scope: other.error_code() == Some("insufficient_scope"),
                },
                503 => Refusal::Unavailable(other.message().to_owned()),
                _ => Refusal::Unauthorized(other.message().to_owned()),
            }),
        })
    }

    fn challenge(&self) -> Option<Challenge> {
        // The path form of the configured resource, the root form, and the
        // path form of `/mcp` for clients that connect here directly.
        let mut paths = vec![self.verifier.metadata_path()];
        for path in [WELL_KNOWN.to_owned(), format!("{WELL_KNOWN}/mcp")] {
            if !paths.contains(&path) {
                paths.push(path);
            }
        }
        Some(Challenge {
            resource_metadata: self.verifier.metadata_url(),
            scopes: self.verifier.scopes_supported(),
            metadata_paths: paths,
            metadata: self.verifier.metadata(),
        })
    }
}
