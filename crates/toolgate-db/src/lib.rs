//! SQLite and PostgreSQL pools and migrations, written once for every store
//! of toolgate (the travel and fitness-api stores, the fleet's audit log, the
//! API keys). Use it when several stores of one process must share one pool,
//! one set of settings and one answer to "is this error worth retrying?".
//!
//! - [`DbConfig`]: one set of pool settings (busy timeout, WAL,
//!   `synchronous`, foreign keys, acquire timeout, connection lifetimes, the
//!   connection budget).
//! - [`Db::connect`]: checks the server with one direct connection first, so
//!   a failure names its cause (refused, authentication, unknown database,
//!   TLS) instead of "pool timed out"; retries with backoff while the server
//!   refuses or starts up, for [`DbConfig::connect_retry_secs`].
//! - One pool per process: every store takes a clone of the same [`Db`], so
//!   an instance never opens more than [`DbConfig::max_connections`].
//! - Dead connections: after a server restart every pooled connection is
//!   dead. The first call that meets one marks the time; every connection
//!   opened before it is dropped on its next acquire instead of being handed
//!   out, and [`on_pool!`] runs the call again on a fresh connection.
//! - [`Db::migrate`]: each owning crate's migrations through one runner,
//!   each with its own bookkeeping table.
//! - [`classify`]: transient (stale connection, unavailable) versus permanent.
//! - [`NoFlush`]: commits that need not wait for the
//!   disk (a cached token, a hint), still atomic and ordered.
//! - [`redis_client`]: Redis clients trusting `[tls] ca_file`, and
//!   [`redis_certificate_problem`] to tell a refused certificate from an outage.
//!
//! # Example
//!
//! One query body, written once, run on whichever backend the URL names
//! (here a SQLite file in a temporary folder):
//!
//! ```
//! use toolgate_db::{Backend, Db, DbConfig};
//!
//! async fn add_note(db: &Db, body: &str) -> Result<i64, toolgate_db::Error> {
//!     Ok(toolgate_db::on_pool!(db, toolgate_db::Error, |pool| {
//!         sqlx::query("CREATE TABLE IF NOT EXISTS notes (body TEXT NOT NULL)").execute(pool).await?;
//!         sqlx::query("INSERT INTO notes (body) VALUES ($1)").bind(body).execute(pool).await?;
//!         sqlx::query_scalar("SELECT count(*) FROM notes").fetch_one(pool).await?
//!     }))
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let dir = tempfile::tempdir()?;
//! let url = format!("sqlite:{}", dir.path().join("app.db").display());
//! let db = Db::connect(&DbConfig::new(url).max_connections(4)).await?;
//! assert_eq!(db.backend(), Backend::Sqlite);
//! assert_eq!(add_note(&db, "first").await?, 1);
//! assert_eq!(add_note(&db, "second").await?, 2);
//! # Ok(()) }
//! ```
//!
//! # Cargo features
//!
//! - `sqlite` (default): the SQLite backend ([`Pool::Sqlite`]).
//! - `postgres` (default): the PostgreSQL backend ([`Pool::Postgres`]), TLS
//!   through rustls with the aws-lc-rs provider.
//! - `redis` (default): [`redis_client`] and [`redis_certificate_problem`].
//!
//! With at least one backend the crate offers the pool: [`Db`], [`Pool`],
//! [`on_pool!`], [`MigrationSet`], [`NoFlush`]. A URL of a backend left out
//! fails [`Db::connect`] with [`Error::BackendNotEnabled`]. With neither
//! backend (`default-features = false`) a pool would have nothing to
//! connect to, so only the shared types build: [`DbConfig`], [`Error`],
//! [`ConnectCause`], [`Backend`], [`redact`] and the classifier
//! ([`classify`], [`Classify`], [`ErrorClass`]), for code that reads
//! settings or classifies errors without opening a database.

#![deny(missing_docs)]

mod classify;
mod config;
mod connect;
mod error;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
mod migrate;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
mod pool;
#[cfg(feature = "redis")]
mod redis_tls;
#[cfg(feature = "sqlite")]
mod sqlite;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
mod unflushed;

pub use classify::{Classify, ErrorClass, classify, classify_code};
pub use config::{Backend, DbConfig, Synchronous, redact};
pub use connect::ConnectCause;
pub use error::{Error, Result};
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub use migrate::MigrationSet;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub use pool::{Db, Pool, STALE_ATTEMPTS};
#[cfg(feature = "redis")]
pub use redis_tls::{redis_certificate_problem, redis_client};
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub use unflushed::{Lowered, NoFlush};

/// Run `$body` with `$pool` bound to the concrete pool behind a [`Db`]
/// (`&SqlitePool` or `&PgPool`): the body is written once and compiled for
/// each backend, so its SQL must be portable (`$1` placeholders work on both).
///
/// While the server is believed down (a call could not open any connection
/// in the acquire timeout), the call first tries one direct connection and
/// fails at once when it is refused.
///
/// `?` inside the body converts into `$err`. When the body fails with an
/// error of class [`ErrorClass::Stale`] (the connection it got was dead), the
/// body runs again on a fresh connection, up to [`STALE_ATTEMPTS`] times in
/// all; any other error returns from the enclosing function (converted with
/// `From`). The body may therefore run more than once: keep writes
/// idempotent or inside one transaction (a dead connection fails before
/// anything commits).
#[cfg(any(feature = "sqlite", feature = "postgres"))]
#[macro_export]
macro_rules! on_pool {
    ($db:expr, $err:ty, |$pool:ident| $body:expr) => {{
        let __db: &$crate::Db = &$db;
        let mut __attempt: u32 = 0;
        if let ::std::result::Result::Err(__error) = __db.check_reachable().await {
            let __error: $err = ::std::convert::From::from(__error);
            return ::std::result::Result::Err(::std::convert::From::from(__error));
        }
        loop {
            __attempt += 1;
            // Boxed: sqlx's futures are large (acquiring a PostgreSQL
            // connection alone is about 14 KB), and a future that holds one
            // inline is copied whole each time it moves (into a tool's box,
            // into a spawned task). On the heap, every caller stays small.
            let __result: ::std::result::Result<_, $err> = ::std::boxed::Box::pin(async {
                ::std::result::Result::Ok($crate::__on_each_pool!(__db.pool(), $pool, $body))
            })
            .await;
            match __result {
                ::std::result::Result::Ok(__value) => break __value,
                ::std::result::Result::Err(__error) => {
                    if __db.retry_after(&__error, __attempt) {
                        continue;
                    }
                    return ::std::result::Result::Err(::std::convert::From::from(__error));
                }
            }
        }
    }};
}

// `on_pool!` expands in the caller's crate, where `cfg(feature = ...)` would
// read the caller's features: the match over the built backends is chosen
// here instead, one definition per combination.

#[cfg(all(feature = "sqlite", feature = "postgres"))]
#[doc(hidden)]
#[macro_export]
macro_rules! __on_each_pool {
    ($pool_of:expr, $pool:ident, $body:expr) => {
        match $pool_of {
            $crate::Pool::Sqlite($pool) => $body,
            $crate::Pool::Postgres($pool) => $body,
        }
    };
}

#[cfg(all(feature = "sqlite", not(feature = "postgres")))]
#[doc(hidden)]
#[macro_export]
macro_rules! __on_each_pool {
    ($pool_of:expr, $pool:ident, $body:expr) => {
        match $pool_of {
            $crate::Pool::Sqlite($pool) => $body,
        }
    };
}

#[cfg(all(feature = "postgres", not(feature = "sqlite")))]
#[doc(hidden)]
#[macro_export]
macro_rules! __on_each_pool {
    ($pool_of:expr, $pool:ident, $body:expr) => {
        match $pool_of {
            $crate::Pool::Postgres($pool) => $body,
        }
    };
}
