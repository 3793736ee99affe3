//! `[[upstreams]]`: other MCP servers whose tools toolgate serves, read from
//! `toolgate.toml` and turned into [`toolgate_mcp_upstream::UpstreamConfig`]s. Secret
//! values (tokens in headers, keys in a child's environment) may be named
//! by environment variable, `{ env = "NAME" }`, and are read here, the only
//! place that reads the environment.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Result, bail};
use serde::{Deserialize, Serialize};
use toolgate_core::Secret;
use toolgate_mcp_upstream::{IdentityMode, Transport, UpstreamConfig};

/// One `[[upstreams]]` entry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UpstreamEntry {
    /// Namespace of its tools (`<name>__<tool>`) and their domain.
    pub name: String,
    /// A child process speaking MCP over stdio: the program and its arguments.
    #[serde(default)]
    pub command: Option<Vec<String>>,
    /// The child's working folder.
    #[serde(default)]
    pub cwd: Option<PathBuf>,
    /// Extra environment variables for the child.
    #[serde(default)]
    pub env: BTreeMap<String, Value>,
    /// A streamable HTTP endpoint instead of a child.
    #[serde(default)]
    pub url: Option<String>,
    /// Headers sent with every HTTP request.
    #[serde(default)]
    pub headers: BTreeMap<String, Value>,
    /// The role its tools require (per-tool overrides in `[authz.overrides]`).
    #[serde(default = "member")]
    pub required_role: String,
    /// Tools known to only read (retried, never confirmed).
    #[serde(default)]
    pub read_only_tools: Vec<String>,
    /// Believe the upstream's readOnlyHint / idempotentHint annotations.
    #[serde(default)]
    pub trust_annotations: bool,
    /// `false`: its tools and prompts keep their own names (no `<name>__`); a name another
    /// source has refuses the start.
    #[serde(default = "prefixed")]
    pub prefix: bool,
    /// Default time limit of one call, in milliseconds.
    #[serde(default = "timeout_ms")]
    pub timeout_ms: u64,
    /// `none` (default); `meta`: the caller's user id, role and tenant in each
    /// call's `_meta`; `{ header = "X-Toolgate-User", role_header = "..." }`:
    /// the caller's user id (and role) as headers of each call (HTTP only).
    #[serde(default)]
    pub identity: Identity,
    /// How long the first connection may take at start, in milliseconds.
    #[serde(default = "connect_timeout_ms")]
    pub connect_timeout_ms: u64,
    /// A token minted for this upstream (HTTP only): `{ kind = "token_exchange", ... }` puts
    /// each signed-in caller's exchanged token on their tool calls, `{ kind =
    /// "client_credentials", ... }` toolgate's service token on every request. Never the
    /// client's own token or an API key.
    #[serde(default)]
    pub auth: Option<crate::config::GrantSection>,
}

fn prefixed() -> bool {
    true
}

/// A value written in the file, or the name of an environment variable holding it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Value {
    /// `"text"`.
    Plain(String),
    /// `{ env = "NAME" }`.
    Env {
        /// The variable's name.
        env: String,
    },
}

/// `identity = "none" | "meta" | { header = "...", role_header = "..." }`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged, expecting = "\"none\", \"meta\" or { header = \"X-Toolgate-User\" }")]
pub enum Identity {
    /// `"none"` or `"meta"`.
    Mode(IdentityKind),
    /// The caller as HTTP headers.
    Header(IdentityHeader),
}

impl Default for Identity {
    fn default() -> Self {
        Identity::Mode(IdentityKind::None)
    }
}

/// `identity = "none" | "meta"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum IdentityKind {
    /// The upstream learns nothing about the caller.
    None,
    /// The caller's user id, role and tenant in `_meta`.
    Meta,
}

/// `identity = { header = "X-Toolgate-User", role_header = "X-Toolgate-Role" }`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IdentityHeader {
    /// The header carrying the caller's user id.
    pub header: String,
    /// The header carrying the caller's role, if wanted.
    #[serde(default)]
    pub role_header: Option<String>,
}

fn member() -> String {
    "member".into()
}

fn timeout_ms() -> u64 {
    30_000
}

fn connect_timeout_ms() -> u64 {
    10_000
}

impl UpstreamEntry {
    /// The typed configuration, reading `{ env = ... }` values through `var`.
    pub fn resolve(&self, var: &dyn Fn(&str) -> Option<String>) -> Result<UpstreamConfig> {
        self.resolve_with(None, var)
    }

    /// [`UpstreamEntry::resolve`], reaching the identity provider of its `auth` with the
    /// `[tls] ca_file` roots too.
    pub fn resolve_with(
        &self,
        ca_bundle_pem: Option<&str>,
        var: &dyn Fn(&str) -> Option<String>,
    ) -> Result<UpstreamConfig> {
        if !toolgate_core::names::is_namespace(&self.name) {
            bail!(
                "upstream name `{}` must be lowercase letters, digits and single underscores, starting with a letter (at most 32)",
                self.name
            );
        }
        let values = |map: &BTreeMap<String, Value>| -> Result<Vec<(String, Secret)>> {
            map.iter()
                .map(|(key, value)| {
                    let value = match value {
                        Value::Plain(text) => text.clone(),
                        Value::Env { env } => var(env).ok_or_else(|| {
                            anyhow::anyhow!(
                                "upstream `{}`: `{key}` names the variable {env}, which is not set",
                                self.name
                            )
                        })?,
                    };
                    Ok((key.clone(), Secret::new(value)))
                })
                .collect()
        };
        let transport = match (&self.command, &self.url) {
            (Some(command), None) if !command.is_empty() => {
                Transport::Stdio { command: command.clone(), env: values(&self.env)?, cwd: self.cwd.clone() }
            }
            (None, Some(url)) if url.starts_with("http://") || url.starts_with("https://") => {
                Transport::Http { url: url.clone(), headers: values(&self.headers)? }
            }
            _ => {
                bail!("upstream `{}` needs either `command = [...]` or `url = \"http(s)://...\"`", self.name)
            }
        };
        let mut config = UpstreamConfig::new(self.name.clone(), transport);
        config.required_role = self.required_role.clone();
        config.read_only_tools = self.read_only_tools.clone();
        config.trust_annotations = self.trust_annotations;
        config.prefix = self.prefix;
        config.timeout = Duration::from_millis(self.timeout_ms);
        config.connect_timeout = Duration::from_millis(self.connect_timeout_ms);
        config.identity = match &self.identity {
            Identity::Mode(IdentityKind::None) => IdentityMode::None,
            Identity::Mode(IdentityKind::Meta) => IdentityMode::Meta,
            Identity::Header(h) => {
                IdentityMode::Header { user: h.header.clone(), role: h.role_header.clone() }
            }
        };
        if let Some(grant) = &self.auth {
            let client = crate::config::idp_client(ca_bundle_pem)?;
            config = config.with_token_source(grant.source(&self.name, client, var)?);
        }
        config.check().map_err(anyhow::Error::msg)?;
        Ok(config)
    }
}

/// `[weather] upstream_tool` must name a tool of a configured upstream
/// (`<upstream>__<tool>`): a typo found here stops the start, instead of a
/// signal pointing every model at a tool that can never exist.
pub fn check_weather_tool(tool: &str, upstreams: &[UpstreamConfig]) -> Result<()> {
    let namespace = tool.split_once(toolgate_core::names::NAMESPACE_SEPARATOR).map(|(ns, _)| ns);
    match namespace {
        Some(ns)
            if toolgate_core::names::is_namespaced_tool_name(tool)
                && upstreams.iter().any(|u| u.name == ns) =>
        {
            Ok(())
        }
        _ => {
            let names: Vec<&str> = upstreams.iter().map(|u| u.name.as_str()).collect();
            bail!(
                "[weather] upstream_tool `{tool}` is not a tool of a configured upstream; write `<upstream>__<tool>` with one of the [[upstreams]] names ({}), e.g. `weather__get_forecast`",
                if names.is_empty() { "none configured".to_owned() } else { names.join(", ") }
            )
        }
    }
}

/// Names of upstream tools this deployment relies on (`[weather]
/// upstream_tool`, skill steps and bindings) that a connected upstream did
/// not list: each a warning, since the upstream may add the tool later
/// (`list_changed`). Names of an upstream still down are not judged yet.
pub fn unlisted_tools(
    gateway: &toolgate_gateway::Gateway,
    upstreams: &toolgate_mcp_upstream::Upstreams,
    weather_tool: Option<&str>,
) -> Vec<String> {
    let connected: Vec<String> =
        upstreams.status().into_iter().filter(|s| s.connected).map(|s| s.name).collect();
    let mut named: Vec<(String, String)> =
        weather_tool.map(|t| ("[weather] upstream_tool".to_owned(), t.to_owned())).into_iter().collect();
    for skill in gateway.skill_set().iter() {
        let steps = skill.steps.iter().map(|s| s.tool.clone());
        let bound = skill.orchestration.iter().flat_map(|o| o.bindings.iter().map(|b| b.tool.clone()));
        named.extend(steps.chain(bound).map(|tool| (format!("skill `{}`", skill.id), tool)));
    }
    let mut problems = Vec::new();
    for (user, tool) in named {
        let Some((ns, _)) = tool.split_once(toolgate_core::names::NAMESPACE_SEPARATOR) else { continue };
        if connected.iter().any(|c| c == ns) && gateway.spec(&tool).is_none() {
            let problem = format!(
                "{user} names `{tool}`, which upstream `{ns}` does not list; fix the name (calls to it answer NOT_FOUND)"
            );
            if !problems.contains(&problem) {
                problems.push(problem);
            }
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Config;

    #[test]
    fn two_upstreams_parse_and_resolve_with_secrets_from_the_environment() {
        let config = Config::from_toml(
            r#"
            [[upstreams]]
            name = "weather"
            command = ["python3", "-m", "weather_server"]
            env = { WEATHER_KEY = { env = "W_KEY" } }
            read_only_tools = ["get_forecast"]

            [[upstreams]]
            name = "stock"
            url = "http://127.0.0.1:9000/mcp"
            headers = { Authorization = { env = "STOCK_TOKEN" } }
            required_role = "manager"
            identity = "meta"

            [[upstreams]]
            name = "crm"
            url = "http://127.0.0.1:9001/mcp"
            identity = { header = "X-Toolgate-User", role_header = "X-Toolgate-Role" }
            "#,
        )
        .unwrap();
        let env = |name: &str| match name {
            "W_KEY" => Some("k-1".to_owned()),
            "STOCK_TOKEN" => Some("Bearer t-2".to_owned()),
            _ => None,
        };
        let weather = config.upstreams[0].resolve(&env).unwrap();
        let Transport::Stdio { command, env: vars, .. } = &weather.transport else { panic!("stdio") };
        assert_eq!(command, &["python3", "-m", "weather_server"]);
        assert_eq!(vars[0].1.expose(), "k-1");
        assert_eq!(weather.read_only_tools, ["get_forecast"]);
        let stock = config.upstreams[1].resolve(&env).unwrap();
        let Transport::Http { headers, .. } = &stock.transport else { panic!("http") };
        assert_eq!(headers[0].1.expose(), "Bearer t-2");
        assert_eq!(stock.required_role, "manager");
        assert_eq!(stock.identity, IdentityMode::Meta);
        // The secret is never printed.
        assert!(!format!("{stock:?}").contains("t-2"));
        let crm = config.upstreams[2].resolve(&env).unwrap();
        assert_eq!(
            crm.identity,
            IdentityMode::Header { user: "X-Toolgate-User".into(), role: Some("X-Toolgate-Role".into()) }
        );
    }

    #[test]
    fn the_weather_upstream_tool_must_belong_to_a_configured_upstream() {
        let weather = UpstreamConfig::stdio("weather", vec!["x".into()]);
        assert!(check_weather_tool("weather__get_forecast", std::slice::from_ref(&weather)).is_ok());
        for bad in ["stock__get_forecast", "get_forecast", "weather__", "Weather__get_forecast"] {
            let err = check_weather_tool(bad, std::slice::from_ref(&weather)).unwrap_err().to_string();
            assert!(err.contains(&format!("`{bad}` is not a tool of a configured upstream")), "{err}");
            assert!(err.contains("(weather)"), "{err}");
        }
        let err = check_weather_tool("weather__get_forecast", &[]).unwrap_err().to_string();
        assert!(err.contains("none configured"), "{err}");
    }

    #[test]
    fn bad_entries_say_what_is_wrong() {
        let check = |toml: &str, expect: &str| {
            let config = Config::from_toml(toml).unwrap();
            let err = config.upstreams[0].resolve(&|_| None).unwrap_err().to_string();
            assert!(err.contains(expect), "{err}");
        };
        check("[[upstreams]]\nname = \"Bad Name\"\ncommand = [\"x\"]", "lowercase");
        check("[[upstreams]]\nname = \"w\"", "either `command");
        check("[[upstreams]]\nname = \"w\"\ncommand = [\"x\"]\nurl = \"http://h\"", "either `command");
        check(
            "[[upstreams]]\nname = \"w\"\nurl = \"http://h\"\nheaders = { A = { env = \"NOPE\" } }",
            "NOPE",
        );
        // An identity header is never a credential one, and needs HTTP.
        check(
            "[[upstreams]]\nname = \"w\"\nurl = \"http://h\"\nidentity = { header = \"Authorization\" }",
            "reserved",
        );
        check(
            "[[upstreams]]\nname = \"w\"\ncommand = [\"x\"]\nidentity = { header = \"X-User\" }",
            "HTTP upstream",
        );
        let typo =
            Config::from_toml("[[upstreams]]\nname = \"w\"\nurl = \"http://h\"\nidentity = \"headers\"");
        assert!(typo.unwrap_err().to_string().contains("\"none\", \"meta\" or"));
    }

    const EXCHANGE: &str = r#"auth = { kind = "token_exchange", token_url = "https://login.example.com/token", audience = "https://crm.internal/", client_id = "toolgate", client_secret = { env = "TG_SECRET" } }"#;

    #[test]
    fn an_http_upstream_takes_a_minted_token_and_no_authorization_header_beside_it() {
        let secret = |name: &str| (name == "TG_SECRET").then(|| "s3cret".to_owned());
        let config =
            Config::from_toml(&format!("[[upstreams]]\nname = \"crm\"\nurl = \"http://h/mcp\"\n{EXCHANGE}"))
                .unwrap();
        let crm = config.upstreams[0].resolve(&secret).unwrap();
        assert_eq!(crm.auth.as_ref().map(|a| a.kind()), Some("token_exchange"));
        assert!(!format!("{crm:?}").contains("s3cret"), "the client secret is never printed");
        let refused = |toml: String, expect: &str| {
            let config = Config::from_toml(&toml).unwrap();
            let err = format!("{:#}", config.upstreams[0].resolve(&secret).unwrap_err());
            assert!(err.contains(expect), "{err}");
            assert!(!err.contains("s3cret"), "{err}");
        };
        refused(
            format!(
                "[[upstreams]]\nname = \"crm\"\nurl = \"http://h/mcp\"\nheaders = {{ Authorization = \"Bearer x\" }}\n{EXCHANGE}"
            ),
            "Authorization",
        );
        refused(format!("[[upstreams]]\nname = \"crm\"\ncommand = [\"x\"]\n{EXCHANGE}"), "HTTP");
        let unset =
            Config::from_toml(&format!("[[upstreams]]\nname = \"crm\"\nurl = \"http://h/mcp\"\n{EXCHANGE}"))
                .unwrap();
        let err = format!("{:#}", unset.upstreams[0].resolve(&|_| None).unwrap_err());
        assert!(err.contains("TG_SECRET") && err.contains("not set"), "{err}");
        let unknown = Config::from_toml(
            "[[upstreams]]\nname = \"crm\"\nurl = \"http://h/mcp\"\nauth = { kind = \"token_exchange\", token_url = \"https://l/t\", audience = \"a\", client_id = \"c\", client_secret = { env = \"S\" }, secret = \"inline\" }",
        );
        assert!(unknown.is_err(), "an unknown key (an inline secret) is refused");
    }
}
