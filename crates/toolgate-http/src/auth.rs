//! [`Auth`]: how the requests of one backend authenticate.

use std::fmt;
use std::sync::Arc;

use toolgate_core::{Caller, ErrorCode, Secret, TokenSource, ToolError};

/// How an [`crate::HttpExecutor`] authenticates its requests.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Auth {
    /// `Authorization: Bearer <token>` with the caller's credential made for this backend
    /// ([`toolgate_core::Caller::credentials`] under [`crate::HttpOptions::backend_id`]); a call
    /// without one is refused before any I/O, and a credential made for another backend is
    /// never sent.
    #[default]
    BearerFromCaller,
    /// One fixed credential for every caller, sent in `header` (e.g. `X-Api-Key`). The value
    /// is a [`Secret`]: never logged, traced or returned.
    Static {
        /// The header name.
        header: String,
        /// The header value.
        value: Secret,
    },
    /// `Authorization: Bearer <token>` with a token minted for this backend by a
    /// [`TokenSource`]: the caller's own, exchanged for their sign-in (`token_exchange`), or
    /// toolgate's service token (`client_credentials`). It is fetched for each call before
    /// any I/O to the backend; a source that cannot give one fails the call with its error
    /// and nothing is sent. The caller's sign-in itself ([`Caller::subject_token`]) is never
    /// sent.
    Token(TokenProvider),
    /// No credentials (a public or network-protected backend).
    None,
}

/// A [`TokenSource`] as an [`Auth`] holds it: shared (cloning shares the source and its
/// cache), equal only to itself ([`Arc::ptr_eq`]), and `Debug` names its kind, nothing else.
#[derive(Clone)]
pub struct TokenProvider(Arc<dyn TokenSource>);

impl TokenProvider {
    /// Wrap a token source.
    pub fn new(source: Arc<dyn TokenSource>) -> Self {
        Self(source)
    }

    /// The source's kind, as configuration spells it (`token_exchange`, `client_credentials`).
    pub fn kind(&self) -> &'static str {
        self.0.kind()
    }

    /// The source.
    pub fn source(&self) -> &Arc<dyn TokenSource> {
        &self.0
    }

    /// Whether the token is the caller's own (`token_exchange`: minted for this user): a
    /// backend that refuses it refuses the user, who may sign in again. Any other kind is
    /// toolgate's own credential, which only an operator can fix.
    pub fn is_callers(&self) -> bool {
        self.kind() == "token_exchange"
    }

    /// The token to send for `caller`: the source's, checked to be sendable as
    /// `Authorization: Bearer` (one line of visible ASCII). The source's error is returned as
    /// is; an unusable token is `EXECUTION_ERROR` (its value is never shown).
    pub async fn token(&self, caller: &Caller) -> Result<Secret, ToolError> {
        let token = self.0.token(caller).await?;
        let value = token.expose();
        if value.is_empty() || !value.bytes().all(|b| b.is_ascii_graphic()) {
            return Err(ToolError::new(
                ErrorCode::ExecutionError,
                format!(
                    "the `{}` token source gave a token that cannot be sent in an HTTP header, so the call was not made; an operator must check the identity provider. Do not retry.",
                    self.kind()
                ),
            )
            .transient(false));
        }
        Ok(token)
    }
}

impl PartialEq for TokenProvider {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for TokenProvider {}

impl fmt::Debug for TokenProvider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("TokenProvider").field(&self.kind()).finish()
    }
}

impl From<Arc<dyn TokenSource>> for TokenProvider {
    fn from(source: Arc<dyn TokenSource>) -> Self {
        Self::new(source)
    }
}

impl Auth {
    /// The kind, as configuration spells it: `bearer_from_caller`, `static`, `none`, or the
    /// token source's (`token_exchange`, `client_credentials`).
    pub fn kind(&self) -> &'static str {
        match self {
            Auth::BearerFromCaller => "bearer_from_caller",
            Auth::Static { .. } => "static",
            Auth::Token(provider) => provider.kind(),
            Auth::None => "none",
        }
    }

    /// Check the header name and value before any request is made.
    pub(crate) fn check(&self) -> crate::Result<()> {
        if let Auth::Static { header, value } = self {
            if reqwest::header::HeaderName::from_bytes(header.as_bytes()).is_err() {
                return Err(crate::Error::Auth(format!(
                    "header {:?} is not a valid HTTP header name (e.g. `X-Api-Key`)",
                    header.chars().take(64).collect::<String>()
                )));
            }
            let v = value.expose();
            if v.trim().is_empty() || reqwest::header::HeaderValue::from_str(v).is_err() {
                return Err(crate::Error::Auth(format!(
                    "the value for header `{header}` is empty or holds characters a header cannot carry"
                )));
            }
        }
        Ok(())
    }
}
