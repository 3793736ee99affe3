//! The database handle: one `Db` over SQLite or PostgreSQL, its migrations, and `on_pool!`,
//! which runs the same query code against whichever pool is behind the handle.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use sqlx::postgres::{PgPool, PgPoolOptions};
use sqlx::sqlite::{
    SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteSynchronous,
};

use crate::error::{Error, Result};

/// Table where this crate records its applied migrations; its own, so that other crates
/// using sqlx's default `_sqlx_migrations` in the same database never see ours.
pub(crate) const MIGRATIONS_TABLE: &str = "fit_sqlx_migrations";

/// A connection pool to the fitness database, SQLite or PostgreSQL. Cheap to clone.
#[derive(Clone)]
pub struct Db {
    pub(crate) backend: Backend,
}

#[derive(Clone)]
pub(crate) enum Backend {
    Sqlite(SqlitePool),
    Postgres(PgPool),
}

impl fmt::Debug for Db {
    // The URL may hold a password: show the backend kind only.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Db").field("backend", &self.backend_name()).finish()
    }
}

impl Db {
    /// `"sqlite"` or `"postgres"`.
    pub fn backend_name(&self) -> &'static str {
        match self.backend {
            Backend::Sqlite(_) => "sqlite",
            Backend::Postgres(_) => "postgres",
        }
    }

    /// Closes every connection of the pool (waits for the ones in use).
    pub async fn close(&self) {
        match &self.backend {
            Backend::Sqlite(p) => p.close().await,
            Backend::Postgres(p) => p.close().await,
        }
    }
}

/// Runs `$body` with `$pool` bound to the SQLite or the PostgreSQL pool. The body is written
/// once and compiled for each backend, so every query is portable SQL (`$1` placeholders work
/// on both).
macro_rules! on_pool {
    ($db:expr, |$pool:ident| $body:expr) => {
        match &$db.backend {
            $crate::db::Backend::Sqlite($pool) => $body,
            $crate::db::Backend::Postgres($pool) => $body,
        }
    };
}
pub(crate) use on_pool;

/// Opens the database at `url` and applies this crate's migrations.
///
/// - `sqlite:path/to/file.db` (created if missing; WAL journal, foreign keys on) or `sqlite::memory:`
/// - `postgres://user@host:5432/db` (or `postgresql://`)
pub async fn connect(url: &str) -> Result<Db> {
    let backend = if url.starts_with("sqlite:") {
        let memory = url.contains(":memory:") || url.contains("mode=memory");
        let options = SqliteConnectOptions::from_str(url)?
            .create_if_missing(true)
            .foreign_keys(true)
            .busy_timeout(Duration::from_secs(5));
        let options = if memory {
            options
        } else {
            options.journal_mode(SqliteJournalMode::Wal).synchronous(SqliteSynchronous::Normal)
        };
        // An in-memory database lives in one connection: a bigger pool would see empty databases.
        let pool = SqlitePoolOptions::new()
            .max_connections(if memory { 1 } else { 8 })
            .min_connections(if memory { 1 } else { 0 })
            .idle_timeout(if memory { None } else { Some(Duration::from_secs(600)) })
            .max_lifetime(if memory { None } else { Some(Duration::from_secs(1800)) })
            .connect_with(options)
            .await?;
        Backend::Sqlite(pool)
    } else if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        let pool = PgPoolOptions::new()
            .max_connections(16)
            .acquire_timeout(Duration::from_secs(10))
            .connect(url)
            .await?;
        Backend::Postgres(pool)
    } else {
        return Err(Error::UnsupportedUrl);
    };
    let db = Db { backend };
    migrate(&db).await?;
    Ok(db)
}

async fn migrate(db: &Db) -> Result<()> {
    match &db.backend {
        Backend::Sqlite(pool) => {
            let mut migrator = sqlx::migrate!("./migrations/sqlite");
            migrator.dangerous_set_table_name(MIGRATIONS_TABLE);
            migrator.run(pool).await?;
        }
        Backend::Postgres(pool) => {
            let mut migrator = sqlx::migrate!("./migrations/postgres");
            migrator.dangerous_set_table_name(MIGRATIONS_TABLE);
            migrator.run(pool).await?;
        }
    }
    Ok(())
}
