//! `[[upstreams]]`: other MCP servers whose tools toolgate serves, read from
//! `toolgate.toml` and turned into [`mcp_upstream::UpstreamConfig`]s. Secret
//! values (tokens in headers, keys in a child's environment) may be named
//! by environment variable, `{ env = "NAME" }`, and are read here, the only
//! place that reads the environment.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Result, bail};
use mcp_upstream::{IdentityMode, Transport, UpstreamConfig};
use serde::{Deserialize, Serialize};
use tool_core::Secret;

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
    /// Default time limit of one call, in milliseconds.
    #[serde(default = "timeout_ms")]
    pub timeout_ms: u64,
    /// `none` (default) or `meta`: the caller's user id, role and tenant in each call's `_meta`.
    #[serde(default)]
    pub identity: Identity,
    /// How long the first connection may take at start, in milliseconds.
    #[serde(default = "connect_timeout_ms")]
    pub connect_timeout_ms: u64,
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

/// `identity = "none" | "meta"`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Identity {
    /// The upstream learns nothing about the caller.
    #[default]
    None,
    /// The caller's user id, role and tenant in `_meta`.
    Meta,
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
        if !tool_core::names::is_namespace(&self.name) {
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
        config.timeout = Duration::from_millis(self.timeout_ms);
        config.connect_timeout = Duration::from_millis(self.connect_timeout_ms);
        config.identity = match self.identity {
            Identity::None => IdentityMode::None,
            Identity::Meta => IdentityMode::Meta,
        };
        Ok(config)
    }
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
    }
}
