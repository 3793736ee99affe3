//! SQLite and PostgreSQL pools and migrations, written once for every store
//! of toolgate (travel, fitness-api, the API keys).
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
//! ```no_run
//! # async fn demo() -> Result<(), toolgate_db::Error> {
//! let db = toolgate_db::Db::connect(&toolgate_db::DbConfig::new("sqlite:app.db")).await?;
//! let n: i64 = toolgate_db::on_pool!(db, toolgate_db::Error, |pool| {
//!     sqlx::query_scalar("SELECT 1").fetch_one(pool).await?
//! });
//! # let _ = n; Ok(()) }
//! ```

mod classify;
mod config;
mod connect;
mod error;
mod migrate;
mod pool;
mod redis_tls;
mod sqlite;
mod unflushed;

pub use classify::{Classify, ErrorClass, classify, classify_code};
pub use config::{DbConfig, Synchronous};
pub use connect::ConnectCause;
pub use error::{Error, Result};
pub use migrate::MigrationSet;
pub use pool::{Backend, Db, Pool, STALE_ATTEMPTS, redact};
pub use redis_tls::{redis_certificate_problem, redis_client};
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
                ::std::result::Result::Ok(match __db.pool() {
                    $crate::Pool::Sqlite($pool) => $body,
                    $crate::Pool::Postgres($pool) => $body,
                })
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
