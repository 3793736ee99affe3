//! The opt-in anonymous caller: a request with no `Authorization` header.

use axum::http::{Extensions, HeaderMap};
use toolgate_core::Caller;

use super::{Authenticator, Bearer, Identity, Proof, Refusal, bearer};

/// The principal of anonymous requests.
pub(crate) const ANONYMOUS: &str = "anonymous";

/// Serves a request that carries no `Authorization` header at all as one
/// fixed caller ([`crate::HttpConfig::anonymous`]); a request with any
/// credential, even a bad one, is never anonymous. For local tools that
/// cannot send headers (conformance suites), on loopback, with a low role.
#[derive(Debug, Clone)]
pub struct Anonymous {
    caller: Caller,
}

impl Anonymous {
    /// Requests without credentials act as `caller`.
    pub fn new(caller: Caller) -> Self {
        Self { caller }
    }
}

#[toolgate_core::async_trait]
impl Authenticator for Anonymous {
    async fn authenticate(
        &self,
        headers: &HeaderMap,
        _extensions: &Extensions,
    ) -> Option<Result<Identity, Refusal>> {
        matches!(bearer(headers), Bearer::Missing)
            .then(|| Ok(Identity::new(self.caller.clone(), ANONYMOUS, Proof::Anonymous)))
    }
}
