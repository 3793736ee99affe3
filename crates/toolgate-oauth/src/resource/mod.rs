//! Inbound tokens: toolgate as an OAuth 2.1 resource server (the MCP
//! authorization spec, 2025-11-25).
//!
//! A [`Verifier`] checks the bearer token of a request and says who the
//! caller is ([`Verified`]) or why not ([`Rejection`], which maps to 401,
//! 403 or 503):
//!
//! - JWT access tokens (RFC 9068) are verified locally against the issuer's
//!   JWKS, found through its metadata (OpenID Connect Discovery, else RFC
//!   8414) on the first token. An unknown key id refetches the JWKS once, but
//!   never more often than [`ResourceConfig::jwks_refresh_floor`].
//! - Opaque tokens go to the introspection endpoint (RFC 7662) when one is
//!   configured.
//! - Verified tokens are cached by their SHA-256 (never the token itself)
//!   until their `exp` (at most five minutes), so that a client repeating
//!   its token costs a hash and a lookup.
//!
//! [`Verifier::metadata`] is the Protected Resource Metadata (RFC 9728) the
//! server publishes at [`Verifier::metadata_path`], and
//! [`Verifier::challenge`] the `WWW-Authenticate` header pointing at it.
//!
//! Tokens are never logged, never put in an error or a `Debug` output.

mod cache;
mod claims;
mod config;
mod introspect;
mod jwks;
mod jwt;
mod keys;
mod metadata;

use std::fmt;
use std::sync::{Arc, Mutex, PoisonError, RwLock};
use std::time::{Duration, SystemTime};

use jsonwebtoken::{Algorithm, Validation};
use serde_json::Value;

pub use config::{IntrospectionConfig, ResourceConfig};

/// The toolset name that, in [`ResourceConfig::scopes`], narrows nothing: a
/// token with that scope may use every tool its role allows.
pub const ALL_TOOLS: &str = "*";

use cache::TokenCache;
use claims::ClaimMapper;
use jwt::looks_like_jws;
use keys::{Reason, RefreshState, Snapshot};

/// The most verified tokens kept in the cache.
const CACHE_CAPACITY: usize = 10_000;
/// The longest a verified token is trusted without being verified again
/// (and the longest an introspection answer is believed).
const CACHE_TTL: Duration = Duration::from_secs(300);
/// The longest token accepted (a bearer token is well under this).
const MAX_TOKEN_LEN: usize = 16 * 1024;

/// Who a verified token's caller is.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Verified {
    /// The token's `sub`. For an introspected token without `sub`, the user id.
    pub subject: String,
    /// The value of [`ResourceConfig::user_claim`].
    pub user_id: String,
    /// The role (one of the hierarchy given to [`Verifier::new`]): the
    /// highest that a value of [`ResourceConfig::role_claim`] maps to, else
    /// the default role.
    pub role: String,
    /// The value of [`ResourceConfig::tenant_claim`], when configured and present.
    pub tenant: Option<String>,
    /// The toolset the caller is narrowed to by its scopes
    /// ([`ResourceConfig::scopes`]); `None` when no scopes are configured.
    pub toolset: Option<String>,
    /// The token's scopes (`scope` and `scp`), each once.
    pub scopes: Vec<String>,
    /// When the token expires (`exp`). An introspected token without `exp`
    /// gets the time its introspection answer stops being believed.
    pub expires_at: SystemTime,
}

/// Why a token was refused. The messages say what is wrong (for logs and the
/// `error_description`); they never contain the token.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Rejection {
    /// 401 `invalid_token`: malformed, bad signature, unknown key (after a
    /// refetch), wrong `iss`, `aud`, `typ` or `alg`, expired, not yet valid,
    /// inactive (introspection), opaque without introspection.
    #[error("invalid access token: {0}")]
    Invalid(String),
    /// 403 without `insufficient_scope`: the token is genuine but gives no
    /// access: no role is mapped from it and there is no default role, or it
    /// lacks the claim that identifies the user.
    #[error("access denied: {0}")]
    NoRole(String),
    /// 403 `insufficient_scope`: the token carries none of the configured scopes.
    #[error("insufficient scope: {0}")]
    InsufficientScope(String),
    /// 503: the identity provider's metadata, JWKS or introspection endpoint
    /// could not be reached or used.
    #[error("the identity provider is unavailable: {0}")]
    Unavailable(String),
}

impl Rejection {
    /// The HTTP status to answer with: 401, 403 or 503.
    pub fn status(&self) -> u16 {
        match self {
            Rejection::Invalid(_) => 401,
            Rejection::NoRole(_) | Rejection::InsufficientScope(_) => 403,
            Rejection::Unavailable(_) => 503,
        }
    }

    /// The RFC 6750 `error` code for the `WWW-Authenticate` header, if any.
    pub fn error_code(&self) -> Option<&'static str> {
        match self {
            Rejection::Invalid(_) => Some("invalid_token"),
            Rejection::InsufficientScope(_) => Some("insufficient_scope"),
            Rejection::NoRole(_) | Rejection::Unavailable(_) => None,
        }
    }

    /// The message without the kind.
    pub fn message(&self) -> &str {
        match self {
            Rejection::Invalid(m)
            | Rejection::NoRole(m)
            | Rejection::InsufficientScope(m)
            | Rejection::Unavailable(m) => m,
        }
    }
}

/// Verifies access tokens for one resource. Cheap to clone (one `Arc`);
/// clones share the keys and the cache. `Debug` shows no secret.
#[derive(Clone)]
pub struct Verifier {
    inner: Arc<Inner>,
}

struct Inner {
    config: ResourceConfig,
    client: reqwest::Client,
    mapper: ClaimMapper,
    /// One validation per allowed algorithm (jsonwebtoken wants the
    /// algorithms of one validation to be of the key's family).
    validations: Vec<(Algorithm, Validation)>,
    scopes_supported: Vec<String>,
    metadata: Value,
    keys: RwLock<Snapshot>,
    refresh: tokio::sync::Mutex<RefreshState>,
    cache: Mutex<TokenCache>,
}

impl fmt::Debug for Verifier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let config = &self.inner.config;
        let keys = self.snapshot().set.map(|set| set.len());
        f.debug_struct("Verifier")
            .field("issuer", &config.issuer)
            .field("resource", &config.resource)
            .field("algorithms", &config.algorithms)
            .field("introspection", &config.introspection.as_ref().map(|i| &i.url))
            .field("keys", &keys)
            .finish_non_exhaustive()
    }
}

impl Verifier {
    /// A verifier for `config`, fetching with `client`. `hierarchy` is
    /// toolgate's roles, lowest first: when several claim values map to
    /// roles, the highest wins. Refuses a configuration that fails
    /// [`ResourceConfig::check`] or maps to a role not in `hierarchy`.
    /// Fetches nothing yet (see [`Verifier::discover`]).
    pub fn new(
        config: ResourceConfig,
        client: reqwest::Client,
        hierarchy: Vec<String>,
    ) -> Result<Self, String> {
        config.check()?;
        config.check_hierarchy(&hierarchy)?;
        let mapper = ClaimMapper::new(&config, &hierarchy);
        let validations = config
            .algorithms
            .iter()
            .map(|&alg| {
                let mut validation = Validation::new(alg);
                validation.leeway = config.leeway.as_secs();
                validation.set_issuer(&[&config.issuer]);
                validation.set_audience(&[&config.resource]);
                validation.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
                validation.validate_exp = true;
                validation.validate_nbf = true;
                validation.validate_aud = true;
                (alg, validation)
            })
            .collect();
        let mut scopes_supported: Vec<String> = Vec::new();
        for (scope, _) in &config.scopes {
            if !scopes_supported.contains(scope) {
                scopes_supported.push(scope.clone());
            }
        }
        let metadata = metadata::protected_resource(&config, &scopes_supported);
        Ok(Self {
            inner: Arc::new(Inner {
                config,
                client,
                mapper,
                validations,
                scopes_supported,
                metadata,
                keys: RwLock::new(Snapshot::default()),
                refresh: tokio::sync::Mutex::new(RefreshState::default()),
                cache: Mutex::new(TokenCache::new(CACHE_CAPACITY)),
            }),
        })
    }

    /// Fetch the issuer's metadata and JWKS now, whatever was fetched before
    /// (for `toolgate check` and the start-up log). [`Verifier::verify`]
    /// does it lazily too. The error says what failed and where.
    pub async fn discover(&self) -> Result<(), String> {
        let seen = self.snapshot().generation;
        self.refresh(Reason::Explicit, seen).await.map(|_| ())
    }

    /// Verify `token` (the bearer token of a request, without `Bearer `) and
    /// say who its caller is.
    pub async fn verify(&self, token: &str) -> Result<Verified, Rejection> {
        if token.is_empty() {
            return Err(Rejection::Invalid("the bearer token is empty".to_owned()));
        }
        if token.len() > MAX_TOKEN_LEN {
            return Err(Rejection::Invalid(format!(
                "the bearer token is {} bytes long, more than the {MAX_TOKEN_LEN} accepted",
                token.len()
            )));
        }
        let key = cache::hash(token);
        let now = SystemTime::now();
        if let Some(verified) = self.lock_cache().get(&key, now) {
            return Ok(verified);
        }
        let verified = if looks_like_jws(token) {
            self.verify_jwt(token).await?
        } else {
            self.introspect(token).await?
        };
        let until = verified.expires_at.min(now + CACHE_TTL);
        self.lock_cache().insert(key, verified.clone(), until, now);
        Ok(verified)
    }

    /// The Protected Resource Metadata (RFC 9728): `resource`,
    /// `authorization_servers` (the issuer), `scopes_supported` (the keys of
    /// [`ResourceConfig::scopes`], left out when there are none) and
    /// `bearer_methods_supported` (`["header"]`); strings exactly as
    /// configured.
    pub fn metadata(&self) -> Value {
        self.inner.metadata.clone()
    }

    /// Where the metadata lives: the resource's origin, then
    /// `/.well-known/oauth-protected-resource`, then the resource's path
    /// without a terminating slash (RFC 9728 §3.1; a path `/` or none adds
    /// nothing).
    pub fn metadata_url(&self) -> String {
        metadata::protected_resource_url(&self.inner.config.resource)
    }

    /// The path of [`Verifier::metadata_url`]: what the server must route.
    pub fn metadata_path(&self) -> String {
        metadata::protected_resource_path(&self.inner.config.resource)
    }

    /// The scopes toolgate accepts (the keys of [`ResourceConfig::scopes`], in order).
    pub fn scopes_supported(&self) -> Vec<String> {
        self.inner.scopes_supported.clone()
    }

    /// The configuration.
    pub fn config(&self) -> &ResourceConfig {
        &self.inner.config
    }

    /// The `WWW-Authenticate` header value for a 401 or 403: `Bearer
    /// resource_metadata="…"` (MCP authorization spec), with `error` for
    /// `rejection`'s kind when it has one, and `scope` (the supported scopes)
    /// when there are scopes and the request had no token or too few scopes.
    pub fn challenge(&self, rejection: Option<&Rejection>) -> String {
        let mut header = format!("Bearer resource_metadata=\"{}\"", self.metadata_url());
        if let Some(code) = rejection.and_then(Rejection::error_code) {
            header.push_str(&format!(", error=\"{code}\""));
        }
        let wants_scope = matches!(rejection, None | Some(Rejection::InsufficientScope(_)));
        if wants_scope && !self.inner.scopes_supported.is_empty() {
            header.push_str(&format!(", scope=\"{}\"", self.inner.scopes_supported.join(" ")));
        }
        header
    }

    fn snapshot(&self) -> Snapshot {
        self.inner.keys.read().unwrap_or_else(PoisonError::into_inner).clone()
    }

    fn lock_cache(&self) -> std::sync::MutexGuard<'_, TokenCache> {
        self.inner.cache.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// A value from a token (a kid, a typ, a group name) fit for a message:
/// quoted, escaped, at most 64 characters.
pub(crate) fn shown(value: &str) -> String {
    const MAX: usize = 64;
    if value.chars().count() <= MAX {
        format!("{value:?}")
    } else {
        let cut: String = value.chars().take(MAX).collect();
        format!("{cut:?}...")
    }
}

/// A reqwest error without its URL (the caller names it), with its causes.
pub(crate) fn http_error(error: &reqwest::Error) -> String {
    let mut text = if error.is_timeout() { "timed out".to_owned() } else { String::new() };
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        if !text.is_empty() {
            text.push_str(": ");
        }
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    if text.is_empty() { "request failed".to_owned() } else { text }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shown_is_short_and_quoted() {
        assert_eq!(shown("k1"), "\"k1\"");
        assert_eq!(shown("a\"b\n"), "\"a\\\"b\\n\"");
        assert!(shown(&"x".repeat(1000)).len() < 80);
    }
}
