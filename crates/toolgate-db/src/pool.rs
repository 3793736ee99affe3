//! [`Db`]: the one pool of a process, over SQLite or PostgreSQL, with the
//! dead-connection bookkeeping that [`on_pool!`](crate::on_pool) relies on.

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use sqlx::pool::PoolConnectionMetadata;
#[cfg(feature = "postgres")]
use sqlx::postgres::{PgConnectOptions, PgPool, PgPoolOptions};
#[cfg(feature = "sqlite")]
use sqlx::sqlite::{
    SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteSynchronous,
};

use crate::classify::{Classify, ErrorClass};
#[cfg(feature = "sqlite")]
use crate::config::Synchronous;
use crate::config::{Backend, DbConfig, redact};
use crate::connect::probe;
use crate::error::{Error, Result};

/// How many times [`on_pool!`](crate::on_pool) runs a body that keeps
/// meeting dead connections. Two would do after a restart (the first
/// failure retires every older connection); the third covers a restart
/// during the retry itself.
pub const STALE_ATTEMPTS: u32 = 3;

/// The concrete pool behind a [`Db`]. Each variant exists only with its
/// cargo feature (`sqlite`, `postgres`); [`on_pool!`](crate::on_pool) matches
/// whichever are built, so code written through it compiles either way.
#[derive(Clone, Debug)]
pub enum Pool {
    /// A SQLite file (WAL) or in-memory database.
    #[cfg(feature = "sqlite")]
    Sqlite(SqlitePool),
    /// A PostgreSQL server.
    #[cfg(feature = "postgres")]
    Postgres(PgPool),
}

/// When a dead connection was last seen, as nanoseconds since `base` (0:
/// never), and whether the server is believed down.
#[derive(Debug)]
struct Health {
    base: Instant,
    stale_seen_at: AtomicU64,
    /// Set when a call could not open any connection within the acquire
    /// timeout; cleared by the first connection that opens again. While set,
    /// each call tries one direct connection first and fails at once when it
    /// is refused, instead of waiting out the acquire timeout again.
    down: AtomicBool,
    /// One direct connection attempt at a time while down: a burst of calls
    /// after a saturated pool timed out must not open a connection each.
    #[cfg(feature = "postgres")]
    probing: tokio::sync::Mutex<()>,
}

impl Health {
    fn now(&self) -> u64 {
        u64::try_from(self.base.elapsed().as_nanos()).unwrap_or(u64::MAX).max(1)
    }

    /// Whether a connection of this age was opened before the last dead
    /// connection was seen, so that it is most likely dead too.
    fn predates_failure(&self, age: Duration) -> bool {
        let seen = self.stale_seen_at.load(Ordering::Relaxed);
        if seen == 0 {
            return false;
        }
        let age = u64::try_from(age.as_nanos()).unwrap_or(u64::MAX);
        self.now().saturating_sub(age) <= seen
    }
}

/// A pool to SQLite or PostgreSQL, shared by every store of a process.
/// Cheap to clone; clones share the pool.
#[derive(Clone)]
pub struct Db {
    pool: Pool,
    health: Arc<Health>,
    max_connections: u32,
}

impl fmt::Debug for Db {
    // The URL may hold a password: show the backend only.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Db")
            .field("backend", &self.backend().as_str())
            .field("max_connections", &self.max_connections)
            .finish()
    }
}

impl Db {
    /// Connect as `config` says: check the server with one direct connection
    /// (retrying while it refuses or starts up), then open the pool.
    pub async fn connect(config: &DbConfig) -> Result<Self> {
        let url = config.url.as_str();
        let health = Arc::new(Health {
            base: Instant::now(),
            stale_seen_at: AtomicU64::new(0),
            down: AtomicBool::new(false),
            #[cfg(feature = "postgres")]
            probing: tokio::sync::Mutex::new(()),
        });
        if url.starts_with("sqlite:") {
            #[cfg(feature = "sqlite")]
            return Self::connect_sqlite(config, health).await;
            #[cfg(not(feature = "sqlite"))]
            return Err(Error::BackendNotEnabled { backend: Backend::Sqlite, url: redact(url) });
        }
        if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            #[cfg(feature = "postgres")]
            return Self::connect_postgres(config, health).await;
            #[cfg(not(feature = "postgres"))]
            return Err(Error::BackendNotEnabled { backend: Backend::Postgres, url: redact(url) });
        }
        Err(Error::UnsupportedUrl { url: redact(url) })
    }

    /// How long to keep retrying the first connection, and how long each try may take.
    fn first_connection(config: &DbConfig) -> (Duration, Duration) {
        let retry = Duration::from_secs(config.connect_retry_secs);
        (retry, config.acquire_timeout_duration().max(Duration::from_secs(5)))
    }

    #[cfg(feature = "sqlite")]
    async fn connect_sqlite(config: &DbConfig, health: Arc<Health>) -> Result<Self> {
        let url = config.url.as_str();
        let (retry, attempt_timeout) = Self::first_connection(config);
        let options =
            SqliteConnectOptions::from_str(url).map_err(|_| Error::UnsupportedUrl { url: redact(url) })?;
        let memory = url.contains(":memory:") || url.contains("mode=memory");
        let options = options.foreign_keys(true).busy_timeout(Duration::from_millis(config.busy_timeout_ms));
        if memory {
            // An in-memory database lives in one connection: keep exactly one, forever.
            let pool = SqlitePoolOptions::new()
                .max_connections(1)
                .min_connections(1)
                .idle_timeout(None)
                .max_lifetime(None)
                .acquire_timeout(config.acquire_timeout_duration())
                .test_before_acquire(false)
                .connect_with(options)
                .await
                .map_err(|source| Error::Connect {
                    target: redact(url),
                    cause: crate::ConnectCause::of(&source),
                    source,
                })?;
            return Ok(Self { pool: Pool::Sqlite(pool), health, max_connections: 1 });
        }
        let options = options.create_if_missing(true).journal_mode(SqliteJournalMode::Wal).synchronous(
            match config.sqlite_synchronous {
                Synchronous::Full => SqliteSynchronous::Full,
                Synchronous::Normal => SqliteSynchronous::Normal,
            },
        );
        crate::sqlite::create_private(options.get_filename())?;
        let target = options.get_filename().display().to_string();
        probe(&options, &target, retry, attempt_timeout).await?;
        let pool = with_stale_check(SqlitePoolOptions::new(), config, &health).connect_lazy_with(options);
        Ok(Self { pool: Pool::Sqlite(pool), health, max_connections: config.max_connections.max(1) })
    }

    #[cfg(feature = "postgres")]
    async fn connect_postgres(config: &DbConfig, health: Arc<Health>) -> Result<Self> {
        let url = config.url.as_str();
        let (retry, attempt_timeout) = Self::first_connection(config);
        let options =
            PgConnectOptions::from_str(url).map_err(|_| Error::UnsupportedUrl { url: redact(url) })?;
        let target = format!(
            "postgres://{}@{}:{}/{}",
            options.get_username(),
            options.get_host(),
            options.get_port(),
            options.get_database().unwrap_or_default()
        );
        probe(&options, &target, retry, attempt_timeout).await?;
        let pool = with_stale_check(PgPoolOptions::new(), config, &health).connect_lazy_with(options);
        Ok(Self { pool: Pool::Postgres(pool), health, max_connections: config.max_connections.max(1) })
    }

    /// The concrete pool (for [`on_pool!`](crate::on_pool)).
    pub fn pool(&self) -> &Pool {
        &self.pool
    }

    /// Which database this is.
    pub fn backend(&self) -> Backend {
        match self.pool {
            #[cfg(feature = "sqlite")]
            Pool::Sqlite(_) => Backend::Sqlite,
            #[cfg(feature = "postgres")]
            Pool::Postgres(_) => Backend::Postgres,
        }
    }

    /// The connection budget of this pool.
    pub fn max_connections(&self) -> u32 {
        self.max_connections
    }

    /// Connections open right now (idle or in use).
    pub fn size(&self) -> u32 {
        match &self.pool {
            #[cfg(feature = "sqlite")]
            Pool::Sqlite(p) => p.size(),
            #[cfg(feature = "postgres")]
            Pool::Postgres(p) => p.size(),
        }
    }

    /// Close the pool (waits for connections in use); later calls fail with
    /// `PoolClosed`, an UNAVAILABLE error.
    pub async fn close(&self) {
        match &self.pool {
            #[cfg(feature = "sqlite")]
            Pool::Sqlite(p) => p.close().await,
            #[cfg(feature = "postgres")]
            Pool::Postgres(p) => p.close().await,
        }
    }

    /// Whether the server is believed down (the last call could not open a
    /// connection); see [`Db::check_reachable`].
    pub fn is_down(&self) -> bool {
        self.health.down.load(Ordering::Relaxed)
    }

    /// Before a call: nothing (one atomic load) while the server is up.
    /// While it is believed down, one direct connection attempt: refused
    /// fails the call at once (UNAVAILABLE in milliseconds, not the acquire
    /// timeout); a connection that opens ends the outage.
    #[doc(hidden)]
    pub async fn check_reachable(&self) -> Result<(), sqlx::Error> {
        if !self.is_down() {
            return Ok(());
        }
        // Boxed: the probe holds a PostgreSQL connect, a large future, and
        // every call awaits this one; only an outage pays for the box.
        Box::pin(self.probe()).await
    }

    /// Only a PostgreSQL pool is ever marked down (see [`Db::retry_after`]).
    #[cfg(not(feature = "postgres"))]
    async fn probe(&self) -> Result<(), sqlx::Error> {
        Ok(())
    }

    #[cfg(feature = "postgres")]
    async fn probe(&self) -> Result<(), sqlx::Error> {
        #[allow(irrefutable_let_patterns)]
        let Pool::Postgres(pool) = &self.pool else { return Ok(()) };
        let _one_at_a_time = self.health.probing.lock().await;
        if !self.is_down() {
            return Ok(());
        }
        let options = pool.connect_options();
        let timeout = pool.options().get_acquire_timeout();
        match tokio::time::timeout(timeout, sqlx::ConnectOptions::connect(&*options)).await {
            Ok(Ok(conn)) => {
                let _ = sqlx::Connection::close(conn).await;
                self.health.down.store(false, Ordering::Relaxed);
                tracing::info!(target: "db", "database reachable again");
                Ok(())
            }
            Ok(Err(error)) => Err(error),
            Err(_) => Err(sqlx::Error::PoolTimedOut),
        }
    }

    /// Whether the body of [`on_pool!`](crate::on_pool) should run again
    /// after `error` on attempt number `attempt`: yes for a dead connection
    /// ([`ErrorClass::Stale`]), which also retires every connection opened
    /// before now. A pool wait that timed out marks a PostgreSQL server
    /// down (see [`Db::check_reachable`]).
    #[doc(hidden)]
    pub fn retry_after<E: Classify>(&self, error: &E, attempt: u32) -> bool {
        // A saturated pool times out too; then the next call's direct
        // connection opens and clears the mark, at the cost of one handshake.
        if matches!(error.database_error(), Some(sqlx::Error::PoolTimedOut))
            && self.backend() == Backend::Postgres
        {
            if !self.health.down.swap(true, Ordering::Relaxed) {
                tracing::warn!(target: "db", "database unreachable; calls fail at once until it answers again");
            }
            return false;
        }
        if error.class() != ErrorClass::Stale {
            return false;
        }
        self.health.stale_seen_at.store(self.health.now(), Ordering::Relaxed);
        tracing::warn!(target: "db", attempt, "dead database connection; retrying on a fresh one");
        attempt < STALE_ATTEMPTS
    }
}

/// The shared pool options, with the check that drops connections opened
/// before the last dead one was seen. Nothing is pinged: a healthy pool pays
/// nothing per acquire.
fn with_stale_check<DB: sqlx::Database>(
    options: sqlx::pool::PoolOptions<DB>,
    config: &DbConfig,
    health: &Arc<Health>,
) -> sqlx::pool::PoolOptions<DB> {
    let health = health.clone();
    options
        .max_connections(config.max_connections.max(1))
        .min_connections(0)
        .acquire_timeout(config.acquire_timeout_duration())
        .idle_timeout(config.idle_timeout())
        .max_lifetime(config.max_lifetime())
        .test_before_acquire(false)
        .before_acquire(move |_conn, meta: PoolConnectionMetadata| {
            let keep = !health.predates_failure(meta.age);
            Box::pin(async move { Ok(keep) })
        })
}
