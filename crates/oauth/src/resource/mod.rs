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
mod metadata;

use std::fmt;
use std::sync::{Arc, Mutex, PoisonError, RwLock};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use jsonwebtoken::errors::ErrorKind;
use jsonwebtoken::{Algorithm, Validation};
use serde_json::{Map, Value};

pub use config::{IntrospectionConfig, ResourceConfig};

/// The toolset name that, in [`ResourceConfig::scopes`], narrows nothing: a
/// token with that scope may use every tool its role allows.
pub const ALL_TOOLS: &str = "*";

use cache::TokenCache;
use claims::ClaimMapper;
use jwks::{KeySet, Selection};
use metadata::Discovered;

/// The most verified tokens kept in the cache.
const CACHE_CAPACITY: usize = 10_000;
/// The longest a verified token is trusted without being verified again
/// (and the longest an introspection answer is believed).
const CACHE_TTL: Duration = Duration::from_secs(300);
/// Keys older than this are refetched on the next token that needs them (a
/// key the issuer withdrew stops being trusted).
const JWKS_MAX_AGE: Duration = Duration::from_secs(3600);
/// The longest token accepted (a bearer token is well under this).
const MAX_TOKEN_LEN: usize = 16 * 1024;

/// Who a verified token's caller is.
#[derive(Debug, Clone, PartialEq, Eq)]
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

/// The keys in use.
#[derive(Clone, Default)]
struct Snapshot {
    set: Option<Arc<KeySet>>,
    /// Bumped by every successful fetch.
    generation: u64,
    fetched_at: Option<Instant>,
}

/// What the one fetch at a time knows (behind the refresh lock).
#[derive(Default)]
struct RefreshState {
    discovered: Option<Discovered>,
    /// The last failed attempt and its error.
    last_failure: Option<(Instant, String)>,
    /// The last fetch triggered by an unknown key.
    last_unknown_key: Option<Instant>,
}

/// Why keys are fetched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reason {
    /// No keys yet.
    Initial,
    /// A token names a key the set does not have.
    UnknownKey,
    /// The keys are older than [`JWKS_MAX_AGE`].
    Stale,
    /// [`Verifier::discover`].
    Explicit,
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

    /// A JWT access token (RFC 9068), verified against the issuer's keys.
    async fn verify_jwt(&self, token: &str) -> Result<Verified, Rejection> {
        let config = &self.inner.config;
        let header = jsonwebtoken::decode_header(token).map_err(|_| {
            Rejection::Invalid(
                "the token's JWT header is malformed or names an algorithm toolgate does not know \
                 (alg \"none\" is never accepted)"
                    .to_owned(),
            )
        })?;
        if let Some(typ) = &header.typ
            && !["at+jwt", "application/at+jwt", "jwt"].iter().any(|ok| typ.eq_ignore_ascii_case(ok))
        {
            return Err(Rejection::Invalid(format!(
                "the token's typ {} is not an access token's (at+jwt, RFC 9068)",
                shown(typ)
            )));
        }
        let alg = header.alg;
        let Some((_, validation)) = self.inner.validations.iter().find(|(allowed, _)| *allowed == alg) else {
            return Err(Rejection::Invalid(format!(
                "the token is signed with {alg:?}, which is not accepted (accepted: {:?})",
                config.algorithms
            )));
        };
        if header.crit.is_some() {
            return Err(Rejection::Invalid(
                "the token's header lists critical extensions (crit) that toolgate does not understand"
                    .to_owned(),
            ));
        }
        let kid = header.kid.as_deref();
        let (keys, seen) = self.keys_for_token().await?;
        let data = match keys.select(kid, alg) {
            Selection::Found(key) => decode(token, key, validation, config)?,
            Selection::Unfit(why) => return Err(Rejection::Invalid(why)),
            Selection::Unknown => match self.refresh(Reason::UnknownKey, seen).await {
                Ok(Some(fresh)) => match fresh.set.as_deref().map(|set| set.select(kid, alg)) {
                    Some(Selection::Found(key)) => decode(token, key, validation, config)?,
                    Some(Selection::Unfit(why)) => return Err(Rejection::Invalid(why)),
                    _ => {
                        return Err(Rejection::Invalid(unknown_key(
                            kid,
                            alg,
                            "even after refetching its JWKS",
                        )));
                    }
                },
                Ok(None) => {
                    return Err(Rejection::Invalid(unknown_key(
                        kid,
                        alg,
                        "(its JWKS was refetched a moment ago)",
                    )));
                }
                Err(e) => return Err(Rejection::Unavailable(e)),
            },
        };
        let claims = data.claims;
        if claims.get("iss").and_then(Value::as_str) != Some(config.issuer.as_str()) {
            return Err(Rejection::Invalid(format!("the token's iss is not the issuer {:?}", config.issuer)));
        }
        let expires_at = seconds_claim(&claims, "exp").and_then(as_time).ok_or_else(|| bad_time("exp"))?;
        self.inner.mapper.verified(config, &claims, true, expires_at)
    }

    /// The keys to check a token against and their generation: the current
    /// ones, fetched first when there are none yet (or refreshed when old).
    async fn keys_for_token(&self) -> Result<(Arc<KeySet>, u64), Rejection> {
        let snapshot = self.snapshot();
        let Some(set) = snapshot.set else {
            return match self.refresh(Reason::Initial, snapshot.generation).await {
                Ok(Some(Snapshot { set: Some(set), generation, .. })) => Ok((set, generation)),
                Ok(_) => Err(Rejection::Unavailable("the issuer's keys could not be fetched".to_owned())),
                Err(e) => Err(Rejection::Unavailable(e)),
            };
        };
        if snapshot.fetched_at.is_some_and(|at| at.elapsed() >= JWKS_MAX_AGE) {
            // on failure the old keys stay in use
            if let Ok(Some(Snapshot { set: Some(fresh), generation, .. })) =
                self.refresh(Reason::Stale, snapshot.generation).await
            {
                return Ok((fresh, generation));
            }
        }
        Ok((set, snapshot.generation))
    }

    /// Fetch the keys (and the issuer's metadata when not known yet), one
    /// fetch at a time. `seen` is the generation the caller looked at: when a
    /// fetch succeeded since, its keys are returned without fetching again.
    /// `Ok(None)`: not fetched, the floor forbids it. `Err`: the fetch
    /// failed (now, or within the floor).
    async fn refresh(&self, reason: Reason, seen: u64) -> Result<Option<Snapshot>, String> {
        let mut state = self.inner.refresh.lock().await;
        let current = self.snapshot();
        if reason != Reason::Explicit && current.generation != seen && current.set.is_some() {
            return Ok(Some(current));
        }
        let floor = self.inner.config.jwks_refresh_floor;
        if reason != Reason::Explicit
            && let Some((at, error)) = &state.last_failure
            && at.elapsed() < floor
        {
            return match reason {
                Reason::Initial => Err(format!(
                    "{error} (the last attempt was {} s ago; the next is made {} s after it)",
                    at.elapsed().as_secs(),
                    floor.as_secs()
                )),
                _ => Ok(None),
            };
        }
        if reason == Reason::UnknownKey {
            if state.last_unknown_key.is_some_and(|at| at.elapsed() < floor) {
                return Ok(None);
            }
            state.last_unknown_key = Some(Instant::now());
        }
        if reason == Reason::Explicit {
            state.discovered = None;
        }
        match self.fetch(&mut state).await {
            Ok(set) => {
                state.last_failure = None;
                let mut keys = self.inner.keys.write().unwrap_or_else(PoisonError::into_inner);
                let fresh = Snapshot {
                    set: Some(Arc::new(set)),
                    generation: keys.generation + 1,
                    fetched_at: Some(Instant::now()),
                };
                *keys = fresh.clone();
                Ok(Some(fresh))
            }
            Err(error) => {
                state.last_failure = Some((Instant::now(), error.clone()));
                Err(error)
            }
        }
    }

    /// One fetch of the metadata (unless known) and of the JWKS.
    async fn fetch(&self, state: &mut RefreshState) -> Result<KeySet, String> {
        let client = &self.inner.client;
        let issuer = &self.inner.config.issuer;
        let discovered = match &state.discovered {
            Some(discovered) => discovered.clone(),
            None => {
                let discovered = metadata::discover(client, issuer).await.inspect_err(|error| {
                    tracing::warn!(%issuer, %error, "the issuer's metadata could not be fetched");
                })?;
                state.discovered = Some(discovered.clone());
                discovered
            }
        };
        let Some(jwks_uri) = discovered.jwks_uri else {
            return Err(format!(
                "the metadata of the issuer {issuer:?} has no jwks_uri, so JWT access tokens cannot be verified"
            ));
        };
        let set = metadata::fetch_jwks(client, &jwks_uri).await.inspect_err(|error| {
            tracing::warn!(url = %jwks_uri, %error, "the issuer's JWKS could not be fetched");
            // the metadata may have moved too: discover again next time
            state.discovered = None;
        })?;
        tracing::debug!(url = %jwks_uri, keys = set.len(), "fetched the issuer's JWKS");
        Ok(set)
    }

    /// An opaque token, asked about at the introspection endpoint.
    async fn introspect(&self, token: &str) -> Result<Verified, Rejection> {
        let config = &self.inner.config;
        let Some(introspection) = &config.introspection else {
            return Err(Rejection::Invalid(
                "the token is not a JWT, and no introspection endpoint is configured for opaque tokens"
                    .to_owned(),
            ));
        };
        let claims = introspect::introspect(&self.inner.client, introspection, token).await?;
        match claims.get("iss") {
            None => {}
            Some(Value::String(iss)) if *iss == config.issuer => {}
            Some(_) => {
                return Err(Rejection::Invalid(format!(
                    "the token's iss is not the issuer {:?}",
                    config.issuer
                )));
            }
        }
        let for_us = match claims.get("aud") {
            None => true,
            Some(Value::String(aud)) => *aud == config.resource,
            Some(Value::Array(auds)) => auds.iter().any(|aud| aud.as_str() == Some(config.resource.as_str())),
            Some(_) => false,
        };
        if !for_us {
            return Err(Rejection::Invalid(wrong_audience(config)));
        }
        // whole seconds, as for JWTs (jsonwebtoken)
        let now = SystemTime::now();
        let now_secs = now.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
        let leeway = config.leeway.as_secs();
        let expires_at = match claims.get("exp") {
            None => now + CACHE_TTL,
            Some(_) => {
                let exp = seconds_claim(&claims, "exp").ok_or_else(|| bad_time("exp"))?;
                if exp.saturating_add(leeway) < now_secs {
                    return Err(Rejection::Invalid(EXPIRED.to_owned()));
                }
                as_time(exp).ok_or_else(|| bad_time("exp"))?
            }
        };
        if claims.contains_key("nbf") {
            let nbf = seconds_claim(&claims, "nbf").ok_or_else(|| bad_time("nbf"))?;
            if nbf > now_secs.saturating_add(leeway) {
                return Err(Rejection::Invalid(NOT_YET.to_owned()));
            }
        }
        self.inner.mapper.verified(config, &claims, false, expires_at)
    }
}

const EXPIRED: &str = "the token has expired (exp is past, beyond the allowed clock skew)";
const NOT_YET: &str = "the token is not valid yet (nbf is in the future, beyond the allowed clock skew)";

/// Check the signature and the registered claims of `token` with `key`.
fn decode(
    token: &str,
    key: &jsonwebtoken::DecodingKey,
    validation: &Validation,
    config: &ResourceConfig,
) -> Result<jsonwebtoken::TokenData<Map<String, Value>>, Rejection> {
    jsonwebtoken::decode::<Map<String, Value>>(token, key, validation).map_err(|e| {
        Rejection::Invalid(match e.kind() {
            ErrorKind::InvalidSignature => "the signature does not verify with the issuer's key".to_owned(),
            ErrorKind::ExpiredSignature => EXPIRED.to_owned(),
            ErrorKind::ImmatureSignature => NOT_YET.to_owned(),
            ErrorKind::InvalidIssuer => format!("the token's iss is not the issuer {:?}", config.issuer),
            ErrorKind::InvalidAudience => wrong_audience(config),
            ErrorKind::MissingRequiredClaim(claim) => format!("the token has no {claim} claim"),
            ErrorKind::InvalidClaimFormat(claim) => format!("the token's {claim} claim is malformed"),
            ErrorKind::InvalidAlgorithm => "the token's alg does not fit the issuer's key".to_owned(),
            ErrorKind::InvalidEcdsaKey | ErrorKind::InvalidEddsaKey | ErrorKind::InvalidRsaKey(_) => {
                "the issuer's key for this token is not a valid public key".to_owned()
            }
            ErrorKind::InvalidKeyFormat => "the issuer's key does not fit the token's alg".to_owned(),
            _ => {
                "the token is not a well-formed JWT (base64url JSON header and claims, signature)".to_owned()
            }
        })
    })
}

fn wrong_audience(config: &ResourceConfig) -> String {
    format!("the token is not meant for this server: its aud does not contain {:?}", config.resource)
}

fn unknown_key(kid: Option<&str>, alg: Algorithm, after: &str) -> String {
    match kid {
        Some(kid) => format!("the issuer has no key {} {after}", shown(kid)),
        None => format!("the token names no key (no kid) and the issuer has no {alg:?} key {after}"),
    }
}

/// A NumericDate claim: whole seconds since the epoch (a fraction is dropped).
fn seconds_claim(claims: &Map<String, Value>, name: &str) -> Option<u64> {
    let value = claims.get(name)?;
    match value.as_u64() {
        Some(secs) => Some(secs),
        None => {
            let secs = value.as_f64()?;
            (0.0..1e12).contains(&secs).then_some(secs as u64)
        }
    }
}

/// Seconds since the epoch as a time.
fn as_time(secs: u64) -> Option<SystemTime> {
    UNIX_EPOCH.checked_add(Duration::from_secs(secs))
}

fn bad_time(claim: &str) -> Rejection {
    Rejection::Invalid(format!("the token's {claim} is not a valid time (seconds since 1970)"))
}

/// Whether `token` is a JWS in compact form (three base64url parts, the
/// first a JSON object, so starting with `ey`); anything else is opaque.
fn looks_like_jws(token: &str) -> bool {
    let mut parts = token.split('.');
    let (Some(header), Some(payload), Some(signature), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return false;
    };
    let base64url = |part: &str| part.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    header.starts_with("ey")
        && !payload.is_empty()
        && base64url(header)
        && base64url(payload)
        && base64url(signature)
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
    fn jws_shape() {
        assert!(looks_like_jws("eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln"));
        assert!(looks_like_jws("eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0."), "alg none is a JWS to refuse");
        assert!(!looks_like_jws("opaque-token_123"));
        assert!(!looks_like_jws("ory_at_abc.def"));
        assert!(!looks_like_jws("abc.def.ghi"), "the header of a JWS is a JSON object");
        assert!(!looks_like_jws("eyJh.eyJ.c2ln.more.parts"));
        assert!(!looks_like_jws("eyJh..c2ln"));
        assert!(!looks_like_jws("eyJh.eyJ+.c2ln"));
    }

    #[test]
    fn shown_is_short_and_quoted() {
        assert_eq!(shown("k1"), "\"k1\"");
        assert_eq!(shown("a\"b\n"), "\"a\\\"b\\n\"");
        assert!(shown(&"x".repeat(1000)).len() < 80);
    }
}
