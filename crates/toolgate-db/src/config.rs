//! `DbConfig`: the one set of pool settings every store of a process shares
//! (`[database]` in `toolgate.toml`; the binary fills it, libraries never read
//! the environment).

use std::time::Duration;

use serde::{Deserialize, Serialize};

/// How to reach the database and how to pool connections to it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
#[non_exhaustive]
pub struct DbConfig {
    /// `sqlite:path/to/file.db` (created with mode 0600 when missing),
    /// `sqlite::memory:` or `postgres://user@host:port/db`.
    pub url: String,
    /// The most connections the one pool of a process opens; every store
    /// (travel, fitness, keys) draws from it, so this is the instance's
    /// whole PostgreSQL budget. In-memory SQLite always uses one.
    pub max_connections: u32,
    /// How long a call waits for a connection before it fails with
    /// UNAVAILABLE. Once a call found no server in this time, the following
    /// calls fail at once (one refused connection attempt each) until the
    /// server answers again, so only the first call of an outage waits.
    pub acquire_timeout_ms: u64,
    /// At start, how long to keep retrying (with backoff) while the server
    /// refuses connections or is starting up; 0 tries once. Wrong
    /// credentials or an unknown database fail at once.
    pub connect_retry_secs: u64,
    /// A connection idle this long is closed (0: never).
    pub idle_timeout_secs: u64,
    /// A connection older than this is replaced (0: never).
    pub max_lifetime_secs: u64,
    /// SQLite: how long a writer waits for the lock before SQLITE_BUSY.
    pub busy_timeout_ms: u64,
    /// SQLite: `full` (default: an acknowledged write survives a power
    /// loss) or `normal` (faster; the last commits may be lost on power
    /// loss, never on a process crash).
    pub sqlite_synchronous: Synchronous,
}

/// SQLite's `synchronous` pragma, as far as WAL mode makes sense of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Synchronous {
    /// Sync the WAL on every commit.
    #[default]
    Full,
    /// Sync only at checkpoints.
    Normal,
}

impl Default for DbConfig {
    fn default() -> Self {
        Self {
            url: "sqlite:toolgate.db".into(),
            max_connections: 10,
            acquire_timeout_ms: 5_000,
            connect_retry_secs: 10,
            idle_timeout_secs: 600,
            max_lifetime_secs: 1_800,
            busy_timeout_ms: 10_000,
            sqlite_synchronous: Synchronous::Full,
        }
    }
}

impl DbConfig {
    /// The defaults (10 connections, 5 s acquire timeout, 10 s of connect
    /// retries, `synchronous = full`) for `url`.
    pub fn new(url: impl Into<String>) -> Self {
        Self { url: url.into(), ..Self::default() }
    }

    /// The same settings for another URL (`sqlite:…` or `postgres://…`).
    pub fn with_url(mut self, url: impl Into<String>) -> Self {
        self.url = url.into();
        self
    }

    /// The same settings with this SQLite `synchronous` level.
    pub fn with_sqlite_synchronous(mut self, level: Synchronous) -> Self {
        self.sqlite_synchronous = level;
        self
    }

    /// The same settings with at most `n` connections.
    pub fn max_connections(mut self, n: u32) -> Self {
        self.max_connections = n;
        self
    }

    /// The same settings with this acquire timeout.
    pub fn acquire_timeout(mut self, timeout: Duration) -> Self {
        self.acquire_timeout_ms = u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX);
        self
    }

    /// The same settings retrying the first connection for this long.
    pub fn connect_retry(mut self, time: Duration) -> Self {
        self.connect_retry_secs = time.as_secs();
        self
    }

    #[cfg(any(feature = "sqlite", feature = "postgres"))]
    pub(crate) fn acquire_timeout_duration(&self) -> Duration {
        Duration::from_millis(self.acquire_timeout_ms.max(1))
    }

    #[cfg(any(feature = "sqlite", feature = "postgres"))]
    pub(crate) fn idle_timeout(&self) -> Option<Duration> {
        (self.idle_timeout_secs > 0).then(|| Duration::from_secs(self.idle_timeout_secs))
    }

    #[cfg(any(feature = "sqlite", feature = "postgres"))]
    pub(crate) fn max_lifetime(&self) -> Option<Duration> {
        (self.max_lifetime_secs > 0).then(|| Duration::from_secs(self.max_lifetime_secs))
    }
}

/// Which database a [`Db`](crate::Db) talks to (the scheme of its URL).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Backend {
    /// SQLite (`sqlite:` URLs); the pool needs the `sqlite` feature.
    Sqlite,
    /// PostgreSQL (`postgres://` URLs); the pool needs the `postgres` feature.
    Postgres,
}

impl Backend {
    /// `"sqlite"` or `"postgres"`, also the name of the cargo feature that builds it.
    pub fn as_str(self) -> &'static str {
        match self {
            Backend::Sqlite => "sqlite",
            Backend::Postgres => "postgres",
        }
    }
}

/// A database URL without its password, for messages.
pub fn redact(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme), Some(at)) if at > scheme => {
            let userinfo = &url[scheme + 3..at];
            match userinfo.split_once(':') {
                Some((user, _)) => format!("{}{user}:[redacted]{}", &url[..scheme + 3], &url[at..]),
                None => url.to_owned(),
            }
        }
        _ => url.to_owned(),
    }
}
