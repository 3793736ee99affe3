//! The repository layer: one [`Store`] over SQLite (WAL, the embedded
//! default) or PostgreSQL (several gateway instances), chosen by URL.
//!
//! Both backends run the same SQL text (`$1` placeholders work on both) through
//! the [`dispatch!`] macro, which expands the body once per pool type. Only
//! the table definitions differ, in `migrations/sqlite` and
//! `migrations/postgres`.

use std::future::Future;
use std::str::FromStr;
use std::time::Duration;

use sqlx::postgres::{PgConnectOptions, PgPool, PgPoolOptions};
use sqlx::sqlite::{
    SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteSynchronous,
};

use crate::error::{Result, StoreError};

pub(crate) mod bookings;
pub(crate) mod keys;
pub(crate) mod orders;
pub(crate) mod plans;
pub(crate) mod policies;

pub use bookings::{BookingFilter, BookingRow, NewBooking};
pub use orders::{CancelOutcome, NewOrder, OrderRow, SubmitOutcome};
pub use policies::{PolicyRow, city_key};

/// The table that records which travel migrations ran. Travel keeps its own
/// so that it can share a database with other crates' sqlx migrations.
pub const MIGRATIONS_TABLE: &str = "_travel_migrations";

/// Run `$body` with `$pool` bound to the concrete pool of the store's backend.
macro_rules! dispatch {
    ($store:expr, |$pool:ident| $body:expr) => {
        match &$store.backend {
            $crate::store::Backend::Sqlite($pool) => $body,
            $crate::store::Backend::Postgres($pool) => $body,
        }
    };
}
pub(crate) use dispatch;

#[derive(Clone, Debug)]
pub(crate) enum Backend {
    Sqlite(SqlitePool),
    Postgres(PgPool),
}

/// The travel repository: a connection pool to SQLite or PostgreSQL with the
/// travel migrations applied. Cheap to clone.
#[derive(Clone, Debug)]
pub struct Store {
    pub(crate) backend: Backend,
}

/// Which database a [`Store`] talks to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BackendKind {
    /// A SQLite file (WAL).
    Sqlite,
    /// A PostgreSQL server.
    Postgres,
}

impl BackendKind {
    /// `"sqlite"` or `"postgres"`.
    pub fn as_str(self) -> &'static str {
        match self {
            BackendKind::Sqlite => "sqlite",
            BackendKind::Postgres => "postgres",
        }
    }
}

/// Connect to `url` and apply the travel migrations.
///
/// `sqlite:path/to/file.db` (created when missing, WAL journal) or
/// `postgres://user@host:port/db`.
pub async fn connect(url: &str) -> Result<Store> {
    Store::connect(url).await
}

impl Store {
    /// Connect to `url` (see [`connect`]) and apply the travel migrations.
    pub async fn connect(url: &str) -> Result<Self> {
        Self::connect_with_pool_size(url, 16).await
    }

    /// Connect with at most `max_connections` pooled connections.
    pub async fn connect_with_pool_size(url: &str, max_connections: u32) -> Result<Self> {
        let store = if url.starts_with("sqlite:") {
            let options = SqliteConnectOptions::from_str(url)?
                .create_if_missing(true)
                .journal_mode(SqliteJournalMode::Wal)
                .synchronous(SqliteSynchronous::Normal)
                .foreign_keys(true)
                .busy_timeout(Duration::from_secs(10));
            // An in-memory database lives in one connection: keep exactly one, forever.
            let memory = url.contains(":memory:") || url.contains("mode=memory");
            let pool = SqlitePoolOptions::new()
                .max_connections(if memory { 1 } else { max_connections.max(1) })
                .min_connections(u32::from(memory))
                .idle_timeout((!memory).then_some(Duration::from_secs(600)))
                .max_lifetime((!memory).then_some(Duration::from_secs(1800)))
                .acquire_timeout(Duration::from_secs(10))
                // A broken connection surfaces as a transient error on use
                // (UNAVAILABLE, retried for idempotent tools) instead of
                // costing a ping on every acquire.
                .test_before_acquire(false)
                .connect_with(options)
                .await?;
            Store { backend: Backend::Sqlite(pool) }
        } else if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            let options = PgConnectOptions::from_str(url)?.application_name("toolgate-travel");
            let pool = PgPoolOptions::new()
                .max_connections(max_connections.max(1))
                .acquire_timeout(Duration::from_secs(10))
                .test_before_acquire(false)
                .connect_with(options)
                .await?;
            Store { backend: Backend::Postgres(pool) }
        } else {
            return Err(StoreError::UnsupportedUrl);
        };
        store.migrate().await?;
        Ok(store)
    }

    /// Apply the travel migrations (idempotent; concurrent callers are serialized by sqlx's lock).
    pub async fn migrate(&self) -> Result<()> {
        match &self.backend {
            Backend::Sqlite(pool) => {
                let mut migrator = sqlx::migrate!("./migrations/sqlite");
                migrator.dangerous_set_table_name(MIGRATIONS_TABLE);
                migrator.set_ignore_missing(true);
                migrator.run(pool).await?;
            }
            Backend::Postgres(pool) => {
                let mut migrator = sqlx::migrate!("./migrations/postgres");
                migrator.dangerous_set_table_name(MIGRATIONS_TABLE);
                migrator.set_ignore_missing(true);
                migrator.run(pool).await?;
            }
        }
        Ok(())
    }

    /// Which database this store talks to.
    pub fn kind(&self) -> BackendKind {
        match self.backend {
            Backend::Sqlite(_) => BackendKind::Sqlite,
            Backend::Postgres(_) => BackendKind::Postgres,
        }
    }

    /// Close the pool; later calls answer UNAVAILABLE.
    pub async fn close(&self) {
        dispatch!(self, |pool| pool.close().await)
    }
}

/// Begin a write transaction. SQLite takes the write lock up front
/// (`BEGIN IMMEDIATE`) so that a read-then-write transaction waits on the busy
/// timeout instead of failing with a stale snapshot; PostgreSQL uses a plain
/// `BEGIN` (READ COMMITTED) and relies on the statements themselves
/// (`ON CONFLICT`, compare-and-set updates) for correctness.
pub(crate) trait BeginWrite {
    type Db: sqlx::Database;
    fn begin_write(&self) -> impl Future<Output = sqlx::Result<sqlx::Transaction<'static, Self::Db>>> + Send;
}

impl BeginWrite for SqlitePool {
    type Db = sqlx::Sqlite;
    fn begin_write(
        &self,
    ) -> impl Future<Output = sqlx::Result<sqlx::Transaction<'static, sqlx::Sqlite>>> + Send {
        self.begin_with("BEGIN IMMEDIATE")
    }
}

impl BeginWrite for PgPool {
    type Db = sqlx::Postgres;
    fn begin_write(
        &self,
    ) -> impl Future<Output = sqlx::Result<sqlx::Transaction<'static, sqlx::Postgres>>> + Send {
        self.begin()
    }
}

/// [`BeginWrite`] on one connection, for a write followed by its read-back
/// on the same connection (one pool acquire instead of two).
pub(crate) trait BeginWriteOn {
    type Db: sqlx::Database;
    fn begin_write_on(
        &mut self,
    ) -> impl Future<Output = sqlx::Result<sqlx::Transaction<'_, Self::Db>>> + Send;
}

impl BeginWriteOn for sqlx::SqliteConnection {
    type Db = sqlx::Sqlite;
    fn begin_write_on(
        &mut self,
    ) -> impl Future<Output = sqlx::Result<sqlx::Transaction<'_, sqlx::Sqlite>>> + Send {
        sqlx::Connection::begin_with(self, "BEGIN IMMEDIATE")
    }
}

impl BeginWriteOn for sqlx::PgConnection {
    type Db = sqlx::Postgres;
    fn begin_write_on(
        &mut self,
    ) -> impl Future<Output = sqlx::Result<sqlx::Transaction<'_, sqlx::Postgres>>> + Send {
        sqlx::Connection::begin(self)
    }
}
