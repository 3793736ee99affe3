//! The database handle: [`Db`], the fitness tables on the `db` crate's pool
//! (shared with the process's other stores), its migrations, and `on_pool!`,
//! which runs the same query code against whichever pool is behind the handle.

use std::fmt;

use toolgate_db::{DbConfig, MigrationSet};

use crate::error::Result;

/// Table where this crate records its applied migrations; its own, so that other crates
/// using sqlx's default `_sqlx_migrations` in the same database never see ours.
pub(crate) const MIGRATIONS_TABLE: &str = "fit_sqlx_migrations";

/// A connection pool to the fitness database, SQLite or PostgreSQL. Cheap to clone.
#[derive(Clone)]
pub struct Db {
    pub(crate) db: toolgate_db::Db,
}

impl fmt::Debug for Db {
    // The URL may hold a password: show the backend kind only.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Db").field("backend", &self.backend_name()).finish()
    }
}

impl Db {
    /// The fitness tables on an open pool (shared with the process's other
    /// stores): applies this crate's migrations.
    pub async fn open(db: toolgate_db::Db) -> Result<Self> {
        db.migrate(MigrationSet {
            owner: "fitness-api",
            table: MIGRATIONS_TABLE,
            sqlite: sqlx::migrate!("./migrations/sqlite"),
            postgres: sqlx::migrate!("./migrations/postgres"),
        })
        .await?;
        Ok(Self { db })
    }

    /// `"sqlite"` or `"postgres"`.
    pub fn backend_name(&self) -> &'static str {
        self.db.backend().as_str()
    }

    /// Closes every connection of the pool (waits for the ones in use).
    pub async fn close(&self) {
        self.db.close().await
    }
}

/// Runs `$body` with `$pool` bound to the SQLite or the PostgreSQL pool. The body is written
/// once and compiled for each backend, so every query is portable SQL (`$1` placeholders work
/// on both). `?` inside the body yields a `sqlx::Error`, converted with `From` into the
/// enclosing function's error; a dead pooled connection makes the body run again on a fresh
/// one (`toolgate_db::on_pool!`), so a body is one statement, one transaction, or idempotent.
macro_rules! on_pool {
    ($db:expr, |$pool:ident| $body:expr) => {
        ::toolgate_db::on_pool!($db.db, ::sqlx::Error, |$pool| $body)
    };
}
pub(crate) use on_pool;

/// Opens the database at `url` with the default pool settings and applies this crate's
/// migrations.
///
/// - `sqlite:path/to/file.db` (created with mode 0600 if missing; WAL journal, foreign keys
///   on) or `sqlite::memory:`
/// - `postgres://user@host:5432/db` (or `postgresql://`)
pub async fn connect(url: &str) -> Result<Db> {
    connect_with(&DbConfig::new(url)).await
}

/// Opens the database as `config` says and applies this crate's migrations.
pub async fn connect_with(config: &DbConfig) -> Result<Db> {
    Db::open(toolgate_db::Db::connect(config).await?).await
}
