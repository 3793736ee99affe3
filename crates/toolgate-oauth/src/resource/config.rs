//! What the resource server is configured with ([`ResourceConfig`]) and the
//! checks that refuse a configuration that could not work or would be unsafe.

use std::collections::HashSet;
use std::time::Duration;

use jsonwebtoken::{Algorithm, AlgorithmFamily};
use toolgate_core::Secret;

/// The most clock skew a configuration may allow (`leeway`).
const MAX_LEEWAY: Duration = Duration::from_secs(300);

/// How toolgate verifies the access tokens of its callers: the `[auth.oauth]`
/// table of `toolgate.toml`, built by the binary. [`ResourceConfig::new`]
/// gives the defaults; [`ResourceConfig::check`] (which [`super::Verifier::new`]
/// runs too) refuses what cannot work.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ResourceConfig {
    /// The authorization server's issuer identifier, e.g.
    /// `https://login.example.com/realms/acme`. Used byte for byte: the
    /// discovered metadata's `issuer` and every token's `iss` must equal it
    /// exactly (a trailing slash matters), and the Protected Resource
    /// Metadata names it as written.
    pub issuer: String,
    /// This server's canonical URI (RFC 8707), e.g. `https://mcp.example.com/mcp`.
    /// A token must carry it in `aud` (string equality); the metadata
    /// announces it as written.
    pub resource: String,
    /// The claim whose values map to roles (default `groups`): a string or an
    /// array of strings. A name that is no top-level claim but has dots
    /// (`realm_access.roles`) is looked up as a path of nested objects.
    pub role_claim: String,
    /// Claim value -> role name. When several values map, the highest role
    /// (by the hierarchy given to [`super::Verifier::new`]) wins.
    pub roles: Vec<(String, String)>,
    /// The role of a token whose claim maps to no role. `None`: such a token
    /// is refused ([`super::Rejection::NoRole`], 403 without `insufficient_scope`).
    pub default_role: Option<String>,
    /// Scope -> toolset: a scope narrows the caller to a toolset, or, mapped
    /// to [`super::ALL_TOOLS`] (`"*"`), lets it use everything its role allows
    /// (and beats any narrower scope the token also carries). When not
    /// empty, a token that carries none of these scopes is refused with
    /// [`super::Rejection::InsufficientScope`]; when it carries several, the
    /// first listed here wins. The keys are the metadata's `scopes_supported`.
    pub scopes: Vec<(String, String)>,
    /// The claim (a string) that names the caller's tenant, if tenants are used.
    /// Dotted paths as for `role_claim`.
    pub tenant_claim: Option<String>,
    /// The claim (a string) that identifies the user (default `sub`).
    /// Dotted paths as for `role_claim`.
    pub user_claim: String,
    /// How to ask about opaque (non-JWT) tokens (RFC 7662). `None`: only JWT
    /// access tokens are accepted.
    pub introspection: Option<IntrospectionConfig>,
    /// Clock skew allowed on `exp` and `nbf` (default 2 s; at most 5 min).
    /// Whole seconds count.
    pub leeway: Duration,
    /// The least time between two JWKS fetches triggered by tokens with an
    /// unknown key id, and between two attempts after the identity provider
    /// could not be reached (default 30 s): a flood of bad tokens never
    /// hammers the identity provider.
    pub jwks_refresh_floor: Duration,
    /// The signature algorithms accepted (default: RS256/384/512,
    /// PS256/384/512, ES256/384, EdDSA). Symmetric ones (HS*) are refused by
    /// [`ResourceConfig::check`]; `none` cannot be expressed.
    pub algorithms: Vec<Algorithm>,
}

/// The introspection endpoint (RFC 7662) and toolgate's client credentials
/// for it, sent as HTTP Basic (`client_secret_basic`, RFC 6749 §2.3.1).
/// `Debug` redacts the secret.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IntrospectionConfig {
    /// The endpoint's absolute URL (https unless on a loopback host).
    pub url: String,
    /// Toolgate's client id at the authorization server.
    pub client_id: String,
    /// Toolgate's client secret at the authorization server.
    pub client_secret: Secret,
}

impl ResourceConfig {
    /// The defaults for `issuer` and `resource`: roles from `groups` (none
    /// mapped yet, no default role), no scopes, no tenant, the user from
    /// `sub`, no introspection, 2 s leeway, 30 s refresh floor, the
    /// asymmetric algorithms.
    pub fn new(issuer: impl Into<String>, resource: impl Into<String>) -> Self {
        Self {
            issuer: issuer.into(),
            resource: resource.into(),
            role_claim: "groups".to_owned(),
            roles: Vec::new(),
            default_role: None,
            scopes: Vec::new(),
            tenant_claim: None,
            user_claim: "sub".to_owned(),
            introspection: None,
            leeway: Duration::from_secs(2),
            jwks_refresh_floor: Duration::from_secs(30),
            algorithms: default_algorithms(),
        }
    }

    /// Refuse a configuration that cannot work or would be unsafe: `resource`
    /// and `issuer` must be absolute http(s) URLs without query, fragment or
    /// user info, https unless the host is a loopback one; claim, role, scope
    /// and toolset names must not be empty; the algorithms must be asymmetric.
    /// The role hierarchy is checked by [`super::Verifier::new`].
    pub fn check(&self) -> Result<(), String> {
        check_url("resource", &self.resource, false)?;
        check_url("issuer", &self.issuer, false)?;
        if self.role_claim.is_empty() {
            return Err("role_claim must not be empty (the default is \"groups\")".to_owned());
        }
        if self.user_claim.is_empty() {
            return Err("user_claim must not be empty (the default is \"sub\")".to_owned());
        }
        if self.tenant_claim.as_deref() == Some("") {
            return Err("tenant_claim must not be empty: leave it out to use no tenant".to_owned());
        }
        let mut seen = HashSet::new();
        for (value, role) in &self.roles {
            if value.is_empty() || role.is_empty() {
                return Err(format!(
                    "roles: {value:?} = {role:?}: neither the claim value nor the role may be empty"
                ));
            }
            if !seen.insert(value.as_str()) {
                return Err(format!("roles: the claim value {value:?} is mapped twice"));
            }
        }
        if self.default_role.as_deref() == Some("") {
            return Err("default_role must not be empty: leave it out to refuse unmapped tokens".to_owned());
        }
        let mut seen = HashSet::new();
        for (scope, toolset) in &self.scopes {
            if scope.is_empty() || !scope.bytes().all(is_scope_char) {
                return Err(format!(
                    "scopes: {scope:?} is not a scope name (RFC 6749 §3.3: printable ASCII without \
                     spaces, quotes or backslashes)"
                ));
            }
            if toolset.is_empty() {
                return Err(format!("scopes: the scope {scope:?} maps to an empty toolset name"));
            }
            if !seen.insert(scope.as_str()) {
                return Err(format!("scopes: the scope {scope:?} is listed twice"));
            }
        }
        if self.leeway > MAX_LEEWAY {
            return Err(format!(
                "leeway is {} s: at most {} s of clock skew may be allowed",
                self.leeway.as_secs(),
                MAX_LEEWAY.as_secs()
            ));
        }
        if self.algorithms.is_empty() {
            return Err(
                "algorithms must name at least one signature algorithm (e.g. RS256, ES256)".to_owned()
            );
        }
        if let Some(alg) = self.algorithms.iter().find(|alg| alg.family() == AlgorithmFamily::Hmac) {
            return Err(format!(
                "algorithms: {alg:?} is symmetric (a shared secret) and is never accepted for access \
                 tokens; list only RS*, PS*, ES256, ES384 or EdDSA"
            ));
        }
        if let Some(introspection) = &self.introspection {
            check_url("introspection.url", &introspection.url, true)?;
            if introspection.client_id.is_empty() {
                return Err("introspection.client_id must not be empty".to_owned());
            }
            if introspection.client_secret.expose().is_empty() {
                return Err("introspection.client_secret must not be empty".to_owned());
            }
        }
        Ok(())
    }

    /// Check the role names against `hierarchy` (lowest..highest): not
    /// empty, no name twice, every mapped role and the default role in it.
    pub(crate) fn check_hierarchy(&self, hierarchy: &[String]) -> Result<(), String> {
        if hierarchy.is_empty() {
            return Err("the role hierarchy is empty: toolgate needs its roles, lowest first".to_owned());
        }
        let mut seen = HashSet::new();
        for role in hierarchy {
            if !seen.insert(role.as_str()) {
                return Err(format!("the role hierarchy names {role:?} twice"));
            }
        }
        let known = |role: &str| seen.contains(role);
        for (value, role) in &self.roles {
            if !known(role) {
                return Err(format!(
                    "roles: {value:?} maps to {role:?}, which is no role of toolgate (known: {})",
                    hierarchy.join(", ")
                ));
            }
        }
        if let Some(role) = &self.default_role
            && !known(role)
        {
            return Err(format!(
                "default_role {role:?} is no role of toolgate (known: {})",
                hierarchy.join(", ")
            ));
        }
        Ok(())
    }
}

/// RS*, PS*, ES256/384 and EdDSA: every asymmetric algorithm jsonwebtoken verifies.
pub(crate) fn default_algorithms() -> Vec<Algorithm> {
    use Algorithm::*;
    vec![RS256, RS384, RS512, PS256, PS384, PS512, ES256, ES384, EdDSA]
}

/// RFC 6749 §3.3 scope-token characters: %x21 / %x23-5B / %x5D-7E.
fn is_scope_char(b: u8) -> bool {
    matches!(b, 0x21 | 0x23..=0x5B | 0x5D..=0x7E)
}

/// `value` (called `what` in errors) is an absolute http(s) URL: the scheme
/// spelled in lower case, a host, no user info, no fragment, no query unless
/// `query_ok`, no whitespace; https unless the host is a loopback one.
pub(crate) fn check_url(what: &str, value: &str, query_ok: bool) -> Result<(), String> {
    if value.is_empty() {
        return Err(format!("{what} is empty: give an absolute https URL"));
    }
    if value.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(format!("{what} {value:?} contains whitespace or control characters"));
    }
    if value.contains(['"', '\\', '<', '>']) {
        return Err(format!("{what} {value:?} contains a quote, a backslash or angle brackets"));
    }
    if !(value.starts_with("https://") || value.starts_with("http://")) {
        return Err(format!("{what} {value:?} must be an absolute URL starting with https://"));
    }
    let url = reqwest::Url::parse(value).map_err(|e| format!("{what} {value:?} is not a URL: {e}"))?;
    let Some(host) = url.host_str().filter(|h| !h.is_empty()) else {
        return Err(format!("{what} {value:?} has no host"));
    };
    if !url.username().is_empty() || url.password().is_some() {
        return Err(format!("{what} {value:?} must not contain user info"));
    }
    if value.contains('#') {
        return Err(format!("{what} {value:?} must not have a fragment (#...)"));
    }
    if !query_ok && value.contains('?') {
        return Err(format!("{what} {value:?} must not have a query (?...)"));
    }
    let loopback = host.eq_ignore_ascii_case("localhost")
        || host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback());
    if url.scheme() != "https" && !loopback {
        return Err(format!("{what} {value:?} must use https (plain http only on a loopback host)"));
    }
    Ok(())
}

/// `value` split into its origin (`scheme://authority`) and the rest (path,
/// query), as written. `value` passed [`check_url`].
pub(crate) fn split_origin(value: &str) -> (&str, &str) {
    let after_scheme = value.find("://").map_or(0, |i| i + 3);
    match value[after_scheme..].find(['/', '?']) {
        Some(i) => value.split_at(after_scheme + i),
        None => (value, ""),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origin_and_path_as_written() {
        assert_eq!(split_origin("https://h.example/realms/acme"), ("https://h.example", "/realms/acme"));
        assert_eq!(split_origin("https://h.example"), ("https://h.example", ""));
        assert_eq!(split_origin("https://h.example/"), ("https://h.example", "/"));
        assert_eq!(split_origin("http://127.0.0.1:8080/x/"), ("http://127.0.0.1:8080", "/x/"));
        assert_eq!(split_origin("https://h.example?a=b"), ("https://h.example", "?a=b"));
    }

    #[test]
    fn urls_are_checked() {
        assert!(check_url("x", "https://h.example/p", false).is_ok());
        assert!(check_url("x", "http://127.0.0.1:9/p", false).is_ok());
        assert!(check_url("x", "http://[::1]:9/p", false).is_ok());
        assert!(check_url("x", "http://localhost/p", false).is_ok());
        for bad in [
            "",
            "h.example/p",
            "http://h.example/p",
            "https://h.example/p#f",
            "https://h.example/p?q",
            "https://u:p@h.example/p",
            "https://h.example/p ",
            "ftp://h.example/p",
            "HTTPS://h.example/p",
        ] {
            assert!(check_url("x", bad, false).is_err(), "{bad:?} passed");
        }
        assert!(check_url("x", "https://h.example/p?q", true).is_ok());
    }
}
