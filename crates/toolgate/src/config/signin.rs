//! `[auth.oauth]`: sign-in through the company's identity provider (toolgate
//! as an OAuth 2.1 resource server), and the `auth` forms of `[[domains]]`
//! and `[[upstreams]]` that mint a backend its own token
//! (`token_exchange`, `client_credentials`).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};
use toolgate_core::{Secret, TokenSource};

use super::EnvRef;

/// `[auth]`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AuthSection {
    /// `[auth.oauth]`: accept access tokens of this identity provider beside API keys.
    pub oauth: Option<OAuthSection>,
}

/// `[auth.oauth]`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OAuthSection {
    /// The authorization server, exactly as it writes its own `issuer`
    /// (published byte for byte: clients compare it as a string).
    pub issuer: String,
    /// This server's canonical URI (RFC 8707), e.g. `https://mcp.example.com/mcp`:
    /// tokens must carry it in `aud`, and clients must connect to a URL it is a
    /// path prefix of.
    pub resource: String,
    /// The claim whose value (a string or an array of strings) maps to a role.
    #[serde(default = "groups")]
    pub role_claim: String,
    /// Claim value → role; when several match, the highest role wins.
    #[serde(default)]
    pub roles: BTreeMap<String, String>,
    /// The role of a token whose claim maps to none; absent: such a token is refused (403).
    #[serde(default)]
    pub default_role: Option<String>,
    /// Scope → toolset: a token with that scope sees only that toolset (`"*"`: everything
    /// its role allows). When any is set, a token with none of them is refused with
    /// `insufficient_scope`; the scopes are what clients are told to ask for.
    #[serde(default)]
    pub scopes: BTreeMap<String, String>,
    /// The claim that names the tenant.
    #[serde(default)]
    pub tenant_claim: Option<String>,
    /// The claim that names the user (default `sub`).
    #[serde(default = "sub")]
    pub user_claim: String,
    /// Opaque (non-JWT) tokens are checked here (RFC 7662).
    #[serde(default)]
    pub introspection: Option<IntrospectionSection>,
    /// Clock skew allowed on `exp` and `nbf`, in seconds.
    #[serde(default = "leeway_secs")]
    pub leeway_secs: u64,
}

fn groups() -> String {
    "groups".into()
}

fn sub() -> String {
    "sub".into()
}

fn leeway_secs() -> u64 {
    2
}

/// `introspection = { url, client_id, client_secret = { env = "..." } }`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IntrospectionSection {
    /// The introspection endpoint.
    pub url: String,
    /// toolgate's client id at the identity provider.
    pub client_id: String,
    /// The environment variable holding its secret.
    pub client_secret: EnvRef,
}

/// The `auth` of a domain or upstream that gets a token minted for it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum GrantSection {
    /// The caller's sign-in exchanged for a token of this backend (RFC 8693).
    TokenExchange(TokenExchangeSection),
    /// One service token for every caller (RFC 6749 §4.4).
    ClientCredentials(ClientCredentialsSection),
}

/// `{ kind = "token_exchange", token_url, audience, resource, scope, client_id, client_secret = { env } }`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TokenExchangeSection {
    /// The identity provider's token endpoint.
    pub token_url: String,
    /// The backend's audience.
    #[serde(default)]
    pub audience: Option<String>,
    /// The backend's resource URI (RFC 8707).
    #[serde(default)]
    pub resource: Option<String>,
    /// Scopes to ask for.
    #[serde(default)]
    pub scope: Option<String>,
    /// toolgate's client id.
    pub client_id: String,
    /// The environment variable holding its secret.
    pub client_secret: EnvRef,
}

/// `{ kind = "client_credentials", token_url, client_id, client_secret = { env }, scope, audience, resource }`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClientCredentialsSection {
    /// The identity provider's token endpoint.
    pub token_url: String,
    /// toolgate's client id.
    pub client_id: String,
    /// The environment variable holding its secret.
    pub client_secret: EnvRef,
    /// Scopes to ask for.
    #[serde(default)]
    pub scope: Option<String>,
    /// The backend's audience.
    #[serde(default)]
    pub audience: Option<String>,
    /// The backend's resource URI (RFC 8707).
    #[serde(default)]
    pub resource: Option<String>,
}

/// The client toolgate reaches identity providers with: the system roots and
/// `[tls] ca_file`, short timeouts, and no redirects (a token endpoint that
/// redirects would carry the client secret elsewhere).
pub fn idp_client(ca_bundle_pem: Option<&str>) -> Result<reqwest::Client> {
    let mut builder = reqwest::Client::builder()
        .connect_timeout(Duration::from_secs(5))
        .timeout(Duration::from_secs(10))
        .redirect(reqwest::redirect::Policy::none());
    if let Some(pem) = ca_bundle_pem {
        let certs = toolgate_http::parse_ca_bundle(pem).context("[tls] ca_file")?;
        builder = builder.tls_certs_merge(certs);
    }
    builder.build().context("building the HTTP client for the identity provider")
}

fn secret(what: &str, env: &EnvRef, var: &dyn Fn(&str) -> Option<String>) -> Result<Secret> {
    match var(&env.env).map(|v| v.trim().to_owned()).filter(|v| !v.is_empty()) {
        Some(value) => Ok(Secret::new(value)),
        None => bail!("{what} names the environment variable {}, which is not set", env.env),
    }
}

impl OAuthSection {
    /// The verifier's configuration; `var` reads the environment.
    pub fn to_config(
        &self,
        var: &dyn Fn(&str) -> Option<String>,
    ) -> Result<toolgate_oauth::resource::ResourceConfig> {
        let mut config =
            toolgate_oauth::resource::ResourceConfig::new(self.issuer.clone(), self.resource.clone());
        config.role_claim.clone_from(&self.role_claim);
        config.roles = self.roles.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
        config.default_role.clone_from(&self.default_role);
        config.scopes = self.scopes.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
        config.tenant_claim.clone_from(&self.tenant_claim);
        config.user_claim.clone_from(&self.user_claim);
        config.leeway = Duration::from_secs(self.leeway_secs);
        if let Some(introspection) = &self.introspection {
            config.introspection = Some(toolgate_oauth::resource::IntrospectionConfig {
                url: introspection.url.clone(),
                client_id: introspection.client_id.clone(),
                client_secret: secret(
                    "[auth.oauth] introspection.client_secret",
                    &introspection.client_secret,
                    var,
                )?,
            });
        }
        config.check().map_err(anyhow::Error::msg).context("in [auth.oauth]")?;
        Ok(config)
    }

    /// Why clients that follow `resource` would be refused at the door, if they would: its
    /// host must be one a request's `Host` may name (`[server] allowed_hosts` beside the
    /// loopback names; an entry without a port allows any port).
    pub fn host_warning(&self, extra_allowed: &[String]) -> Option<String> {
        let url = reqwest::Url::parse(&self.resource).ok()?;
        let host = url.host_str()?.to_ascii_lowercase();
        let with_port = url.port().map(|p| format!("{host}:{p}"));
        let defaults = toolgate_mcp::HttpConfig::default().allowed_hosts;
        let allowed = defaults.iter().chain(extra_allowed).any(|entry| {
            let entry = entry.to_ascii_lowercase();
            entry == host || with_port.as_ref() == Some(&entry)
        });
        (!allowed).then(|| {
            format!(
                "[auth.oauth] resource {:?} names the host `{host}`, which is not in [server] allowed_hosts, so clients that connect to it are refused (403): add \"{host}\" to allowed_hosts",
                self.resource
            )
        })
    }

    /// The verifier, checking its roles against the hierarchy (`lowest..highest`)
    /// and its toolsets with `known_toolset` (the policy's, built-in ones included).
    pub fn verifier(
        &self,
        client: reqwest::Client,
        hierarchy: Vec<String>,
        known_toolset: &dyn Fn(&str) -> bool,
        var: &dyn Fn(&str) -> Option<String>,
    ) -> Result<toolgate_oauth::resource::Verifier> {
        for toolset in self.scopes.values() {
            if toolset != toolgate_oauth::resource::ALL_TOOLS && !known_toolset(toolset) {
                bail!(
                    "in [auth.oauth] scopes: toolset `{toolset}` is not defined; define it in [authz.toolsets] or map the scope to one that is"
                );
            }
        }
        let config = self.to_config(var)?;
        toolgate_oauth::resource::Verifier::new(config, client, hierarchy)
            .map_err(anyhow::Error::msg)
            .context("in [auth.oauth]")
    }
}

impl GrantSection {
    /// The kind, as configuration spells it.
    pub fn kind(&self) -> &'static str {
        match self {
            GrantSection::TokenExchange(_) => "token_exchange",
            GrantSection::ClientCredentials(_) => "client_credentials",
        }
    }

    /// The token source for `backend` (a domain's or upstream's name).
    pub fn source(
        &self,
        backend: &str,
        client: reqwest::Client,
        var: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Arc<dyn TokenSource>> {
        let what = format!("`{backend}` auth.client_secret");
        Ok(match self {
            GrantSection::TokenExchange(s) => {
                let config = toolgate_oauth::grant::TokenExchangeConfig {
                    token_url: s.token_url.clone(),
                    client_id: s.client_id.clone(),
                    client_secret: secret(&what, &s.client_secret, var)?,
                    audience: s.audience.clone(),
                    resource: s.resource.clone(),
                    scope: s.scope.clone(),
                };
                config.check().map_err(anyhow::Error::msg).with_context(|| format!("`{backend}` auth"))?;
                Arc::new(toolgate_oauth::grant::TokenExchange::new(config, client, backend))
            }
            GrantSection::ClientCredentials(s) => {
                let config = toolgate_oauth::grant::ClientCredentialsConfig {
                    token_url: s.token_url.clone(),
                    client_id: s.client_id.clone(),
                    client_secret: secret(&what, &s.client_secret, var)?,
                    scope: s.scope.clone(),
                    audience: s.audience.clone(),
                    resource: s.resource.clone(),
                };
                config.check().map_err(anyhow::Error::msg).with_context(|| format!("`{backend}` auth"))?;
                Arc::new(toolgate_oauth::grant::ClientCredentials::new(config, client, backend))
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;

    const HIERARCHY: [&str; 4] = ["guest", "member", "manager", "admin"];

    fn verifier(
        toml: &str,
        var: &dyn Fn(&str) -> Option<String>,
    ) -> Result<toolgate_oauth::resource::Verifier> {
        let config = Config::from_toml(toml)?;
        let section = config.auth.oauth.expect("[auth.oauth]");
        let policy = toolgate_authz::Policy::from_config(config.authz.clone())?;
        let known = |name: &str| policy.toolset(name).is_some();
        section.verifier(reqwest::Client::new(), HIERARCHY.map(String::from).to_vec(), &known, var)
    }

    #[test]
    fn the_section_of_the_issue_parses_into_a_verifier_publishing_its_strings() {
        let toml = r#"
            [authz.toolsets.travel]
            domains = ["travel"]

            [auth.oauth]
            issuer = "https://login.example.com/realms/acme"
            resource = "https://mcp.example.com/mcp"
            role_claim = "groups"
            roles = { "tg-admins" = "admin", "tg-members" = "member" }
            scopes = { "tools:read" = "read_only", "tools:travel" = "travel", "tools" = "*" }
            tenant_claim = "tenant"
            introspection = { url = "https://login.example.com/introspect", client_id = "toolgate", client_secret = { env = "TG_INTROSPECT" } }
        "#;
        let secret = |name: &str| (name == "TG_INTROSPECT").then(|| "hunter2".to_owned());
        let verifier = verifier(toml, &secret).unwrap();
        assert_eq!(verifier.metadata()["resource"], "https://mcp.example.com/mcp");
        assert_eq!(verifier.metadata()["authorization_servers"][0], "https://login.example.com/realms/acme");
        assert_eq!(verifier.metadata_path(), "/.well-known/oauth-protected-resource/mcp");
        assert_eq!(verifier.config().leeway, Duration::from_secs(2));
        assert_eq!(verifier.config().user_claim, "sub");
        assert!(!format!("{verifier:?}").contains("hunter2"), "the introspection secret is never printed");
    }

    #[test]
    fn a_resource_whose_host_the_server_refuses_is_warned_about() {
        let section = |resource: &str| {
            let toml = format!("[auth.oauth]\nissuer = \"https://idp.example\"\nresource = \"{resource}\"\n");
            Config::from_toml(&toml).unwrap().auth.oauth.unwrap()
        };
        let warning = section("https://mcp.example.com/mcp").host_warning(&[]).unwrap();
        assert!(warning.contains("allowed_hosts") && warning.contains("mcp.example.com"), "{warning}");
        assert_eq!(section("https://MCP.example.com/mcp").host_warning(&["mcp.example.com".into()]), None);
        assert_eq!(
            section("https://mcp.example.com:8443/mcp").host_warning(&["mcp.example.com:8443".into()]),
            None
        );
        assert!(
            section("https://mcp.example.com:8443/mcp").host_warning(&["mcp.example.com:9".into()]).is_some()
        );
        assert_eq!(section("http://127.0.0.1:8377/mcp").host_warning(&[]), None);
    }

    #[test]
    fn a_section_that_cannot_work_is_refused_with_the_reason() {
        let refused = |toml: &str, expect: &str| {
            let err = format!("{:#}", verifier(toml, &|_| None).unwrap_err());
            assert!(err.contains(expect), "{err}");
        };
        let base = "[auth.oauth]\nissuer = \"https://idp.example\"\nresource = \"https://mcp.example/mcp\"\n";
        refused(&format!("{base}roles = {{ g = \"owner\" }}"), "owner");
        refused(&format!("{base}scopes = {{ \"tools:read\" = \"nope\" }}"), "toolset `nope` is not defined");
        refused(
            &format!(
                "{base}introspection = {{ url = \"https://idp.example/i\", client_id = \"c\", client_secret = {{ env = \"UNSET_SECRET\" }} }}"
            ),
            "UNSET_SECRET",
        );
        refused("[auth.oauth]\nissuer = \"https://idp.example\"\nresource = \"mcp.example/mcp\"", "resource");
        assert!(
            Config::from_toml(&format!("{base}client_secret = \"inline\"")).is_err(),
            "unknown keys are refused"
        );
        assert!(
            Config::from_toml("[auth.oauth]\nissuer = \"https://idp.example\"").is_err(),
            "resource is required"
        );
    }
}
