//! The repository layer: one [`Store`] over SQLite (WAL, the embedded
//! default) or PostgreSQL (several gateway instances), on the pool of the
//! `toolgate-db` crate (shared with the other stores of the process).
//!
//! Both backends run the same SQL text (`$1` placeholders work on both) through
//! the crate-private `dispatch!` macro, which expands the body once per pool type and runs
//! it again on a fresh connection when the one it got was dead. Only the
//! table definitions differ, in `migrations/sqlite` and `migrations/postgres`.

use std::future::Future;

use sqlx::postgres::PgPool;
use sqlx::sqlite::SqlitePool;
use toolgate_db::{Db, DbConfig, MigrationSet};

use crate::error::Result;

mod answered;
pub(crate) mod bookings;
pub(crate) mod ids;
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

/// Run `$body` with `$pool` bound to the concrete pool of the store's backend
/// (`toolgate_db::on_pool!`: `?` converts into [`StoreError`], and a dead connection
/// makes the body run again on a fresh one, so a body is one transaction or
/// idempotent).
macro_rules! dispatch {
    ($store:expr, |$pool:ident| $body:expr) => {
        ::toolgate_db::on_pool!($store.db, $crate::error::StoreError, |$pool| $body)
    };
}
pub(crate) use dispatch;

/// The travel repository: the process's database pool with the travel
/// migrations applied. Cheap to clone.
#[derive(Clone, Debug)]
pub struct Store {
    pub(crate) db: Db,
}

/// Which database a [`Store`] talks to (`sqlite` or `postgres`).
pub type BackendKind = toolgate_db::Backend;

/// Connect to `url` with the default pool settings and apply the travel migrations.
///
/// `sqlite:path/to/file.db` (created when missing, mode 0600, WAL journal) or
/// `postgres://user@host:port/db`.
pub async fn connect(url: &str) -> Result<Store> {
    Store::connect(url).await
}

impl Store {
    /// Connect to `url` (see [`connect`]) and apply the travel migrations.
    pub async fn connect(url: &str) -> Result<Self> {
        Self::open(Db::connect(&DbConfig::new(url)).await?).await
    }

    /// Connect with at most `max_connections` pooled connections.
    pub async fn connect_with_pool_size(url: &str, max_connections: u32) -> Result<Self> {
        Self::open(Db::connect(&DbConfig::new(url).max_connections(max_connections)).await?).await
    }

    /// The travel store on an open pool (shared with the process's other
    /// stores): applies the travel migrations.
    pub async fn open(db: Db) -> Result<Self> {
        let store = Store { db };
        store.migrate().await?;
        Ok(store)
    }

    /// Apply the travel migrations (idempotent; concurrent callers are serialized by sqlx's lock).
    pub async fn migrate(&self) -> Result<()> {
        self.db
            .migrate(MigrationSet {
                owner: "travel",
                table: MIGRATIONS_TABLE,
                sqlite: sqlx::migrate!("./migrations/sqlite"),
                postgres: sqlx::migrate!("./migrations/postgres"),
            })
            .await?;
        Ok(())
    }

    /// Which database this store talks to.
    pub fn kind(&self) -> BackendKind {
        self.db.backend()
    }

    /// The pool under this store.
    pub fn db(&self) -> &Db {
        &self.db
    }

    /// Close the pool; later calls answer UNAVAILABLE.
    pub async fn close(&self) {
        self.db.close().await
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
