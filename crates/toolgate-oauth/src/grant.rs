//! Outbound tokens: what a backend receives instead of the caller's own
//! sign-in, minted for that backend alone. Both grants are
//! [`toolgate_core::TokenSource`]s.
//!
//! | Type | Grant | Whose token |
//! |---|---|---|
//! | [`TokenExchange`] | token exchange (RFC 8693): the caller's access token ([`Caller::subject_token`]) is the subject | the caller's, one per user, for this backend's audience |
//! | [`ClientCredentials`] | client credentials (RFC 6749 §4.4) | toolgate's own service identity, one for the backend |
//!
//! Both authenticate toolgate's client at the token endpoint with
//! `client_secret_basic`, keep what they minted until shortly before it
//! expires (10 % of its life or 30 s early, whichever is less; 60 s when the
//! answer does not say), and mint one at a time per key: 50 concurrent calls
//! of one user make one exchange, and the calls of other users never wait on
//! it. Exchanged tokens are kept per user (tenant and user id) and only for
//! the sign-in they were minted from; one user's token is never handed to
//! another. The caller's own token is never sent to a backend, and no
//! secret (the subject token, the client secret, a minted token) appears in
//! a message, a log line or a `Debug` text.
//!
//! | Failure | Code |
//! |---|---|
//! | the caller has no sign-in to exchange (an API key, stdio) | `PERMISSION_DENIED`, before any request |
//! | the identity provider refuses (HTTP 400/401/403: `invalid_grant`, `invalid_client`, `invalid_target`, ...) | `PERMISSION_DENIED` naming the OAuth `error` code (its description scrubbed and clipped to 200 characters) and what to do |
//! | not reachable, no answer in time, HTTP 5xx or 429 | `UNAVAILABLE`, transient |
//! | an answer without a usable bearer `access_token`; any other status | `EXECUTION_ERROR` |
//!
//! ```no_run
//! # async fn demo(caller: toolgate_core::Caller) -> Result<(), Box<dyn std::error::Error>> {
//! use toolgate_oauth::grant::{TokenExchange, TokenExchangeConfig};
//! use toolgate_core::{Secret, TokenSource};
//!
//! let config = TokenExchangeConfig {
//!     token_url: "https://idp.example.com/oauth2/token".into(),
//!     client_id: "toolgate".into(),
//!     client_secret: Secret::new("from the environment"),
//!     audience: Some("https://crm.example.com".into()),
//!     resource: None,
//!     scope: Some("crm.read".into()),
//! };
//! config.check()?; // at start: a bad configuration stops it, saying what to fix
//! let exchange = TokenExchange::new(config, reqwest::Client::new(), "the CRM");
//! let token = exchange.token(&caller).await?; // the caller's token for the CRM
//! # let _ = token; Ok(()) }
//! ```

mod cache;
mod endpoint;

use std::time::Duration;

use sha2::{Digest, Sha256};
use toolgate_core::{Caller, ErrorCode, Secret, TokenSource, ToolError};

use self::cache::{Cache, Subject};
use self::endpoint::{Endpoint, Grant};

/// `grant_type` of a token exchange (RFC 8693 §2.1).
pub const TOKEN_EXCHANGE_GRANT: &str = "urn:ietf:params:oauth:grant-type:token-exchange";
/// The token type of an OAuth access token (RFC 8693 §3), the subject's and the one asked for.
pub const ACCESS_TOKEN_TYPE: &str = "urn:ietf:params:oauth:token-type:access_token";
/// The token type of a JWT (RFC 8693 §3), accepted as an issued access token too.
pub const JWT_TOKEN_TYPE: &str = "urn:ietf:params:oauth:token-type:jwt";

/// How long one request to the token endpoint may take, unless set otherwise.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);
/// How many users' exchanged tokens are kept, unless set otherwise.
pub const DEFAULT_MAX_USERS: usize = 10_000;

/// Why a grant's configuration cannot be used (never includes a secret).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ConfigError(String);

impl ConfigError {
    /// What is wrong and how to fix it.
    pub fn message(&self) -> &str {
        &self.0
    }
}

/// A token exchange (RFC 8693) as configured for one backend. `Debug`
/// prints the client secret as `[redacted]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenExchangeConfig {
    /// The identity provider's token endpoint, `http(s)://...`.
    pub token_url: String,
    /// toolgate's client id at the identity provider.
    pub client_id: String,
    /// toolgate's client secret (`client_secret_basic`).
    pub client_secret: Secret,
    /// The backend the token is for, as the identity provider names it
    /// (sent as `audience`). At least one of `audience` and `resource` is needed.
    pub audience: Option<String>,
    /// The backend's URI (sent as `resource`, RFC 8707).
    pub resource: Option<String>,
    /// The scope asked for (space-separated), if any.
    pub scope: Option<String>,
}

/// The client-credentials grant (RFC 6749 §4.4) as configured for one
/// backend. `Debug` prints the client secret as `[redacted]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientCredentialsConfig {
    /// The identity provider's token endpoint, `http(s)://...`.
    pub token_url: String,
    /// toolgate's client id at the identity provider.
    pub client_id: String,
    /// toolgate's client secret (`client_secret_basic`).
    pub client_secret: Secret,
    /// The scope asked for (space-separated), if any.
    pub scope: Option<String>,
    /// The backend the token is for, as the identity provider names it (sent as `audience`).
    pub audience: Option<String>,
    /// The backend's URI (sent as `resource`, RFC 8707).
    pub resource: Option<String>,
}

/// A set optional value: trimmed, `None` when empty.
fn given(value: &Option<String>) -> Option<&str> {
    value.as_deref().map(str::trim).filter(|v| !v.is_empty())
}

fn check_client(token_url: &str, client_id: &str, client_secret: &Secret) -> Result<(), ConfigError> {
    endpoint::check_url("token_url", token_url).map_err(ConfigError)?;
    if client_id.trim().is_empty() {
        return Err(ConfigError(
            "`client_id` is empty: give toolgate's client id at the identity provider".into(),
        ));
    }
    if client_secret.expose().trim().is_empty() {
        return Err(ConfigError(
            "`client_secret` is empty: give toolgate's client secret (e.g. `client_secret = { env = \"...\" }`)".into(),
        ));
    }
    Ok(())
}

impl TokenExchangeConfig {
    /// Checks the configuration: an http(s) token endpoint without
    /// credentials in it, a client id and secret, and at least one of
    /// `audience` and `resource` (a token exchanged for no audience would be
    /// good for any backend that trusts the identity provider).
    pub fn check(&self) -> Result<(), ConfigError> {
        check_client(&self.token_url, &self.client_id, &self.client_secret)?;
        if given(&self.audience).is_none() && given(&self.resource).is_none() {
            return Err(ConfigError(
                "a token exchange needs `audience` or `resource` (or both): the backend the exchanged token is for, as the identity provider names it"
                    .into(),
            ));
        }
        Ok(())
    }
}

impl ClientCredentialsConfig {
    /// Checks the configuration: an http(s) token endpoint without
    /// credentials in it, a client id and secret.
    pub fn check(&self) -> Result<(), ConfigError> {
        check_client(&self.token_url, &self.client_id, &self.client_secret)
    }
}

/// How messages name a backend: as given, or "the backend".
fn backend_name(backend: String) -> String {
    if backend.trim().is_empty() { "the backend".to_owned() } else { backend }
}

/// The endpoint of a checked configuration, or why the configuration is not usable.
fn endpoint(
    checked: Result<(), ConfigError>,
    token_url: &str,
    client_id: &str,
    client_secret: &Secret,
    client: reqwest::Client,
    backend: &str,
) -> Result<Endpoint, ConfigError> {
    checked?;
    let url = endpoint::check_url("token_url", token_url).map_err(ConfigError)?;
    if url.scheme() == "http" && !url.host_str().is_some_and(is_loopback) {
        tracing::warn!(
            host = url.host_str().unwrap_or(""),
            "token_url is plain http to another host: the client secret and the users' tokens cross the network unencrypted; use https"
        );
    }
    Ok(Endpoint {
        url,
        client_id: client_id.trim().to_owned(),
        client_secret: Secret::new(client_secret.expose().trim()),
        client,
        timeout: DEFAULT_TIMEOUT,
        backend: backend.to_owned(),
    })
}

/// The answer of a source built from a configuration that failed its check: every call
/// fails, saying why, and nothing is sent.
fn misconfigured(backend: &str, problem: &ConfigError) -> ToolError {
    ToolError::new(
        ErrorCode::ExecutionError,
        format!(
            "the call to {backend} was not made: its token settings are not usable ({problem}). Do not retry; an operator must fix this backend's `auth`."
        ),
    )
    .transient(false)
}

fn is_loopback(host: &str) -> bool {
    host == "localhost"
        || host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// Exchanges each caller's sign-in for a token made for one backend (RFC
/// 8693), kept per user until shortly before it expires. See the
/// [module](self) for the request, the cache and the errors.
#[derive(Debug)]
pub struct TokenExchange {
    backend: String,
    endpoint: Result<Endpoint, ConfigError>,
    audience: Option<String>,
    resource: Option<String>,
    scope: Option<String>,
    cache: Cache<(Option<String>, String)>,
}

impl TokenExchange {
    /// A token exchange with `config`, through `client` (the deployment's, with its TLS
    /// roots). `backend` names the backend in messages, e.g. "the CRM". Check the
    /// configuration first ([`TokenExchangeConfig::check`]): a source made from one that
    /// fails it sends nothing and fails every call with `EXECUTION_ERROR` saying why.
    pub fn new(config: TokenExchangeConfig, client: reqwest::Client, backend: impl Into<String>) -> Self {
        let backend = backend_name(backend.into());
        Self {
            endpoint: endpoint(
                config.check(),
                &config.token_url,
                &config.client_id,
                &config.client_secret,
                client,
                &backend,
            ),
            backend,
            audience: given(&config.audience).map(str::to_owned),
            resource: given(&config.resource).map(str::to_owned),
            scope: given(&config.scope).map(str::to_owned),
            cache: Cache::new(DEFAULT_MAX_USERS),
        }
    }

    /// Set how long one request to the token endpoint may take (default [`DEFAULT_TIMEOUT`]).
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        if let Ok(endpoint) = &mut self.endpoint {
            endpoint.timeout = timeout;
        }
        self
    }

    /// Set how many users' tokens are kept (default [`DEFAULT_MAX_USERS`]);
    /// a full cache lets go of stale tokens first, then of those that expire soonest.
    pub fn with_max_users(mut self, max: usize) -> Self {
        self.cache = Cache::new(max);
        self
    }

    /// How many users' tokens are kept now.
    pub fn cached_users(&self) -> usize {
        self.cache.len()
    }

    /// Refuses a caller that has no sign-in to exchange.
    fn no_sign_in(&self, caller: &Caller) -> ToolError {
        let how = if caller.key_id.is_some() {
            "this caller authenticated with an API key, which has no sign-in to exchange"
        } else {
            "this caller has no sign-in to exchange (it did not authenticate through the identity provider)"
        };
        ToolError::new(
            ErrorCode::PermissionDenied,
            format!(
                "{} accepts only a signed-in user's own credential; {how}: connect through the identity provider (OAuth) and call again. Do not retry as is.",
                self.backend
            ),
        )
        .transient(false)
    }

    async fn exchange(&self, endpoint: &Endpoint, subject: &Secret) -> Result<endpoint::Issued, ToolError> {
        let mut fields = vec![
            ("grant_type", TOKEN_EXCHANGE_GRANT),
            ("subject_token", subject.expose()),
            ("subject_token_type", ACCESS_TOKEN_TYPE),
            ("requested_token_type", ACCESS_TOKEN_TYPE),
        ];
        fields.extend(self.audience.as_deref().map(|a| ("audience", a)));
        fields.extend(self.resource.as_deref().map(|r| ("resource", r)));
        fields.extend(self.scope.as_deref().map(|s| ("scope", s)));
        endpoint.request(Grant::Exchange, &fields, &[subject.expose()]).await
    }
}

#[async_trait::async_trait]
impl TokenSource for TokenExchange {
    fn kind(&self) -> &'static str {
        "token_exchange"
    }

    /// The caller's token for this backend: kept, or exchanged now for the
    /// caller's [`Caller::subject_token`].
    async fn token(&self, caller: &Caller) -> Result<Secret, ToolError> {
        let endpoint = self.endpoint.as_ref().map_err(|problem| misconfigured(&self.backend, problem))?;
        let Some(subject) = caller.subject_token.as_ref().filter(|t| !t.expose().trim().is_empty()) else {
            return Err(self.no_sign_in(caller));
        };
        if caller.user_id.trim().is_empty() {
            return Err(ToolError::new(
                ErrorCode::PermissionDenied,
                format!(
                    "{} needs a token for the signed-in user, and this caller's sign-in names no user: tell the user to sign in again, or an operator must check which claim names the user.",
                    self.backend
                ),
            )
            .transient(false));
        }
        let digest: [u8; 32] = Sha256::digest(subject.expose().as_bytes()).into();
        let subject_hash: Subject = Some(digest);
        let key = (caller.tenant.clone(), caller.user_id.clone());
        self.cache.get(&key, subject_hash, || self.exchange(endpoint, subject)).await
    }
}

/// toolgate's own token for one backend by the client-credentials grant
/// (RFC 6749 §4.4): one for every caller, kept until shortly before it
/// expires and minted by one request at a time. See the [module](self).
#[derive(Debug)]
pub struct ClientCredentials {
    backend: String,
    endpoint: Result<Endpoint, ConfigError>,
    scope: Option<String>,
    audience: Option<String>,
    resource: Option<String>,
    cache: Cache<()>,
}

impl ClientCredentials {
    /// The grant with `config`, through `client`. `backend` names the backend in messages.
    /// Check the configuration first ([`ClientCredentialsConfig::check`]): a source made
    /// from one that fails it sends nothing and fails every call with `EXECUTION_ERROR`
    /// saying why.
    pub fn new(config: ClientCredentialsConfig, client: reqwest::Client, backend: impl Into<String>) -> Self {
        let backend = backend_name(backend.into());
        Self {
            endpoint: endpoint(
                config.check(),
                &config.token_url,
                &config.client_id,
                &config.client_secret,
                client,
                &backend,
            ),
            backend,
            scope: given(&config.scope).map(str::to_owned),
            audience: given(&config.audience).map(str::to_owned),
            resource: given(&config.resource).map(str::to_owned),
            cache: Cache::new(1),
        }
    }

    /// Set how long one request to the token endpoint may take (default [`DEFAULT_TIMEOUT`]).
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        if let Ok(endpoint) = &mut self.endpoint {
            endpoint.timeout = timeout;
        }
        self
    }

    async fn mint(&self, endpoint: &Endpoint) -> Result<endpoint::Issued, ToolError> {
        let mut fields = vec![("grant_type", "client_credentials")];
        fields.extend(self.scope.as_deref().map(|s| ("scope", s)));
        fields.extend(self.audience.as_deref().map(|a| ("audience", a)));
        fields.extend(self.resource.as_deref().map(|r| ("resource", r)));
        endpoint.request(Grant::ClientCredentials, &fields, &[]).await
    }
}

#[async_trait::async_trait]
impl TokenSource for ClientCredentials {
    fn kind(&self) -> &'static str {
        "client_credentials"
    }

    /// toolgate's token for this backend, whoever calls.
    async fn token(&self, _caller: &Caller) -> Result<Secret, ToolError> {
        let endpoint = self.endpoint.as_ref().map_err(|problem| misconfigured(&self.backend, problem))?;
        self.cache.get(&(), None, || self.mint(endpoint)).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exchange() -> TokenExchangeConfig {
        TokenExchangeConfig {
            token_url: "https://idp.example.com/token".into(),
            client_id: "toolgate".into(),
            client_secret: Secret::new("s3cr3t-client"),
            audience: Some("crm".into()),
            resource: None,
            scope: None,
        }
    }

    #[test]
    fn a_configuration_is_checked_and_says_what_to_fix() {
        assert_eq!(exchange().check(), Ok(()));
        type Change = fn(&mut TokenExchangeConfig);
        let cases: [(Change, &str); 6] = [
            (|c| c.audience = Some("  ".into()), "needs `audience` or `resource`"),
            (|c| c.token_url = "ftp://idp/token".into(), "http(s)://"),
            (|c| c.token_url = "not a url".into(), "is not a URL"),
            (|c| c.token_url = "https://u:p@idp/token".into(), "credentials"),
            (|c| c.client_id = String::new(), "`client_id` is empty"),
            (|c| c.client_secret = Secret::new(" "), "`client_secret` is empty"),
        ];
        for (change, expect) in cases {
            let mut config = exchange();
            change(&mut config);
            let error = config.check().unwrap_err();
            assert!(error.message().contains(expect), "{error}");
            assert!(!error.message().contains("s3cr3t"), "{error}");
        }
        let mut resource_only = exchange();
        resource_only.audience = None;
        resource_only.resource = Some("https://crm.example.com".into());
        assert_eq!(resource_only.check(), Ok(()));
        let source = TokenExchange::new(exchange(), reqwest::Client::new(), "the CRM");
        let shown = format!("{source:?} {:?}", exchange());
        assert!(!shown.contains("s3cr3t") && shown.contains("[redacted]"), "{shown}");
    }

    #[test]
    fn loopback_hosts_are_known() {
        assert!(is_loopback("127.0.0.1") && is_loopback("[::1]") && is_loopback("localhost"));
        assert!(!is_loopback("idp.example.com") && !is_loopback("10.0.0.1"));
    }
}
