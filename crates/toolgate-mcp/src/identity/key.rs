//! API keys of the [`KeyStore`]: `Authorization: Bearer tg_…`.

use axum::http::{Extensions, HeaderMap};

use super::{Authenticator, Bearer, Identity, Proof, Refusal, bearer};
use crate::{KEY_PREFIX, KeyStore};

/// Proves a request by its API key (`Bearer tg_…`, see [`KeyStore`]); any
/// other credential is left to the next authenticator. The principal is the
/// key's id, so revoking the key ends its sessions and streams.
#[derive(Debug, Clone)]
pub struct KeyAuthenticator {
    keys: KeyStore,
}

impl KeyAuthenticator {
    /// Check keys against `keys`.
    pub fn new(keys: KeyStore) -> Self {
        Self { keys }
    }
}

#[toolgate_core::async_trait]
impl Authenticator for KeyAuthenticator {
    async fn authenticate(
        &self,
        headers: &HeaderMap,
        _extensions: &Extensions,
    ) -> Option<Result<Identity, Refusal>> {
        let Bearer::Token(key) = bearer(headers) else { return None };
        if !key.starts_with(KEY_PREFIX) {
            return None;
        }
        // Shared with the key cache: the one copy of the caller is made here.
        Some(match self.keys.verify_shared(key).await {
            Ok(Some(verified)) => {
                // Rate limits count per key and the audit trail names it (the id, never the key).
                let caller = verified.caller.clone().with_key_id(verified.id.clone());
                Ok(Identity::new(caller, verified.id.clone(), Proof::Key))
            }
            Ok(None) => {
                Err(Refusal::Unauthorized("the API key is not valid (unknown, revoked or malformed)".into()))
            }
            Err(error) => {
                tracing::error!(%error, "the key store could not check an API key");
                Err(Refusal::Unavailable("the API key could not be checked right now; try again".into()))
            }
        })
    }
}
