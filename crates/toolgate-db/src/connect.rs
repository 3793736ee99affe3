//! The first connection: made directly (not through the pool, which would
//! only say "pool timed out"), its failure named in words, and retried with
//! backoff while the server refuses or is starting up.

use std::fmt;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
use std::io::ErrorKind;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
use std::time::{Duration, Instant};

#[cfg(any(feature = "sqlite", feature = "postgres"))]
use sqlx::{ConnectOptions, Connection};

#[cfg(any(feature = "sqlite", feature = "postgres"))]
use crate::error::{Error, Result};

/// Why the first connection failed, in words an operator can act on.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ConnectCause {
    /// Nothing listens there (or a firewall refused).
    Refused,
    /// The host name does not resolve or the network is unreachable.
    Unreachable(String),
    /// The server refused the user or password.
    Auth,
    /// The database named in the URL does not exist.
    UnknownDatabase,
    /// The TLS handshake failed.
    Tls(String),
    /// The server is starting up or has no free connection slot.
    Busy,
    /// No answer in time.
    Timeout,
    /// Anything else (the driver's message; it never holds the password).
    Other(String),
}

impl ConnectCause {
    /// Whether waiting may help (the server may come up): only these are retried at start.
    pub fn is_transient(&self) -> bool {
        matches!(
            self,
            ConnectCause::Refused | ConnectCause::Busy | ConnectCause::Timeout | ConnectCause::Unreachable(_)
        )
    }

    #[cfg(any(feature = "sqlite", feature = "postgres"))]
    pub(crate) fn of(error: &sqlx::Error) -> Self {
        match error {
            sqlx::Error::Io(io) => match io.kind() {
                ErrorKind::ConnectionRefused => ConnectCause::Refused,
                ErrorKind::TimedOut => ConnectCause::Timeout,
                _ => ConnectCause::Unreachable(io.to_string()),
            },
            sqlx::Error::Tls(e) => ConnectCause::Tls(e.to_string()),
            sqlx::Error::PoolTimedOut => ConnectCause::Timeout,
            sqlx::Error::Database(db) => match db.code().as_deref().unwrap_or_default() {
                "28P01" | "28000" => ConnectCause::Auth,
                "3D000" => ConnectCause::UnknownDatabase,
                "57P03" | "53300" => ConnectCause::Busy,
                _ => ConnectCause::Other(db.message().to_owned()),
            },
            other => ConnectCause::Other(other.to_string()),
        }
    }
}

impl fmt::Display for ConnectCause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConnectCause::Refused => {
                f.write_str("connection refused (is the server running and listening there?)")
            }
            ConnectCause::Unreachable(why) => write!(f, "cannot reach the server ({why})"),
            ConnectCause::Auth => {
                f.write_str("authentication failed (check the user and password in the URL)")
            }
            ConnectCause::UnknownDatabase => {
                f.write_str("the database does not exist (create it, or fix the name in the URL)")
            }
            ConnectCause::Tls(why) => write!(f, "TLS failed ({why}; check sslmode and the certificates)"),
            ConnectCause::Busy => f.write_str("the server is starting up or has no free connection slot"),
            ConnectCause::Timeout => f.write_str("no answer in time"),
            ConnectCause::Other(why) => f.write_str(why),
        }
    }
}

/// Open one connection with `options`, retrying transient failures with
/// backoff (100 ms doubling to 2 s) until `retry_for` has passed. Each try
/// waits at most `attempt_timeout`.
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub(crate) async fn probe<O: ConnectOptions>(
    options: &O,
    target: &str,
    retry_for: Duration,
    attempt_timeout: Duration,
) -> Result<()>
where
    O::Connection: Sized,
{
    let started = Instant::now();
    let mut backoff = Duration::from_millis(100);
    loop {
        let result = match tokio::time::timeout(attempt_timeout, options.connect()).await {
            Ok(result) => result,
            Err(_) => Err(sqlx::Error::PoolTimedOut),
        };
        let error = match result {
            Ok(conn) => {
                // Only a check: the pool opens its own connections.
                let _ = conn.close().await;
                return Ok(());
            }
            Err(error) => error,
        };
        let cause = ConnectCause::of(&error);
        let left = retry_for.saturating_sub(started.elapsed());
        if !cause.is_transient() || left.is_zero() {
            return Err(Error::Connect { target: target.to_owned(), cause, source: error });
        }
        tracing::warn!(target: "db", server = target, %cause, retry_in_ms = backoff.as_millis() as u64, "database not reachable yet");
        tokio::time::sleep(backoff.min(left)).await;
        backoff = (backoff * 2).min(Duration::from_secs(2));
    }
}
