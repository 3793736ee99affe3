//! One migration runner: each crate owns its tables and its migrations (one
//! folder per backend) and records them in a table of its own, so crates
//! sharing a database never see each other's migrations.

use sqlx::migrate::Migrator;

use crate::error::{Error, Result};
use crate::pool::{Db, Pool};

/// One crate's migrations: `sqlx::migrate!("./migrations/sqlite")` and
/// `sqlx::migrate!("./migrations/postgres")` (or the same folder twice when
/// the SQL is portable). Both fields exist whatever backends are built;
/// only the one matching the [`Db`]'s backend runs.
#[derive(Debug)]
pub struct MigrationSet {
    /// The owning crate, for messages.
    pub owner: &'static str,
    /// The table that records which of these migrations ran.
    pub table: &'static str,
    /// The SQLite migrations.
    pub sqlite: Migrator,
    /// The PostgreSQL migrations.
    pub postgres: Migrator,
}

impl Db {
    /// Apply `set` (idempotent; concurrent callers are serialized by sqlx's
    /// lock). Migrations of a newer binary that this one does not know are
    /// tolerated, so an older instance keeps running during a rolling upgrade.
    pub async fn migrate(&self, set: MigrationSet) -> Result<()> {
        let (owner, table) = (set.owner, set.table);
        let result = match self.pool() {
            #[cfg(feature = "sqlite")]
            Pool::Sqlite(pool) => prepare(set.sqlite, table).run(pool).await,
            #[cfg(feature = "postgres")]
            Pool::Postgres(pool) => prepare(set.postgres, table).run(pool).await,
        };
        result.map_err(|source| Error::Migrate { owner, source })
    }
}

fn prepare(mut migrator: Migrator, table: &'static str) -> Migrator {
    migrator.dangerous_set_table_name(table);
    migrator.set_ignore_missing(true);
    migrator
}
