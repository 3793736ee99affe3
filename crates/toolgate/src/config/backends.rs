//! The sections for what the gateway talks to: `[database]`, `[redis]`,
//! `[fitness]`, `[weather]`, `[skills]` and `[tls]`.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// `[database]`: one pool shared by every store of the process (travel,
/// the in-process fitness API, the API keys); see [`toolgate_db::DbConfig`] for each
/// setting and its default.
pub type DatabaseConfig = toolgate_db::DbConfig;

/// `[tls]`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TlsConfig {
    /// A PEM bundle of certificate authorities trusted besides the system roots (private
    /// CAs); used by HTTP backends and, as `sslrootcert`, by PostgreSQL.
    pub ca_file: Option<PathBuf>,
}

/// `[redis]`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RedisConfig {
    /// `redis://127.0.0.1:6379`; empty: no Redis.
    pub url: Option<String>,
    /// How long a plan stays readable, in seconds (in Redis, or in the
    /// database's plan table when no Redis is configured).
    pub plan_ttl_secs: u64,
}

impl Default for RedisConfig {
    fn default() -> Self {
        Self { url: None, plan_ttl_secs: 24 * 60 * 60 }
    }
}

/// `[fitness]`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct FitnessConfig {
    /// Base URL of the fitness API; empty: run the reference API in-process on the same database.
    pub base_url: Option<String>,
    /// Time limit of one backend request, in milliseconds.
    pub timeout_ms: u64,
    /// In-process API only: how long the one pass-through token per user
    /// lives, in seconds (at least 60); it is replaced before it expires.
    pub token_ttl_secs: u64,
}

impl Default for FitnessConfig {
    fn default() -> Self {
        Self { base_url: None, timeout_ms: 10_000, token_ttl_secs: 3_600 }
    }
}

/// `[weather]`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct WeatherConfig {
    /// Base URL of the weather provider; empty: `query_weather` says how to enable it.
    pub url: Option<String>,
    /// Time limit of one provider request, in milliseconds.
    pub timeout_ms: u64,
    /// An upstream MCP server's forecast tool, `<upstream>__<tool>` (e.g.
    /// `weather__get_forecast`), that `query_weather`'s `beyond_range`
    /// signal names for dates past its own window.
    pub upstream_tool: Option<String>,
}

impl Default for WeatherConfig {
    fn default() -> Self {
        let timeout_ms = u64::try_from(toolgate_travel::WEATHER_TIMEOUT.as_millis()).unwrap_or(8_000);
        Self { url: None, timeout_ms, upstream_tool: None }
    }
}

/// `[skills]`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SkillsConfig {
    /// The folder of `<id>/SKILL.md` files; empty: the skills shipped inside the binary.
    pub dir: Option<PathBuf>,
}

/// `[discovery]`: how `get_tool_schema`'s `query` (and the page's tool search) ranks tools.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DiscoveryConfig {
    /// A sentence-transformers folder (`config.json`, `tokenizer.json`, `model.safetensors`,
    /// e.g. all-MiniLM-L6-v2): queries are then ranked by meaning too, each operation's name
    /// and summary embedded once at start. Empty: by words only (BM25F).
    pub model: Option<PathBuf>,
}

#[cfg(test)]
mod tests {
    use super::super::Config;

    #[test]
    fn the_database_section_is_one_set_of_pool_settings() {
        let config = Config::from_toml(
            "[database]\nurl = \"postgres://u@h/db\"\nmax_connections = 6\nacquire_timeout_ms = 750\n\
             sqlite_synchronous = \"normal\"",
        )
        .unwrap();
        assert_eq!(config.database.max_connections, 6);
        assert_eq!(config.database.acquire_timeout_ms, 750);
        assert_eq!(config.database.sqlite_synchronous, toolgate_db::Synchronous::Normal);
        assert_eq!(config.database.connect_retry_secs, toolgate_db::DbConfig::default().connect_retry_secs);
        let err = Config::from_toml("[database]\nmax_conections = 6").unwrap_err().to_string();
        assert!(err.contains("max_conections"), "{err}");
    }
}
