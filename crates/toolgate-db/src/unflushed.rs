//! Commits that need not wait for the disk: writes whose loss in a crash
//! costs nothing but a repeat (a cached pass-through token, the `answered`
//! hint of a submit). They stay atomic and ordered: a later commit that
//! does wait flushes them too.
//!
//! [`NoFlush::no_flush`] lowers a pooled connection's durability until
//! [`NoFlush::restore_flush`]: SQLite (always WAL here) `synchronous =
//! NORMAL` (durable at the next checkpoint, never corrupt; in-process, the
//! pragmas cost no round trip), PostgreSQL `synchronous_commit = off` then
//! `RESET` (a statement that is its own transaction can instead carry
//! `set_config('synchronous_commit', 'off', true)`, which the server reads at
//! commit). A connection whose level could not be restored is closed, never
//! handed out weaker.

use std::future::Future;

#[cfg(feature = "postgres")]
use sqlx::Postgres;
#[cfg(feature = "sqlite")]
use sqlx::Sqlite;
use sqlx::pool::PoolConnection;

/// What puts a connection's durability back.
#[must_use = "restore the connection's durability with `restore_flush`"]
#[derive(Debug)]
pub struct Lowered(Option<&'static str>);

/// Lowering and restoring a pooled connection's durability (see the module docs).
pub trait NoFlush {
    /// Commits on this connection stop waiting for the disk.
    fn no_flush(&mut self) -> impl Future<Output = sqlx::Result<Lowered>> + Send;
    /// The connection's own durability again; on failure it is closed when dropped.
    fn restore_flush(&mut self, lowered: Lowered) -> impl Future<Output = sqlx::Result<()>> + Send;
}

#[cfg(feature = "sqlite")]
impl NoFlush for PoolConnection<Sqlite> {
    async fn no_flush(&mut self) -> sqlx::Result<Lowered> {
        let level: i64 = sqlx::query_scalar("PRAGMA synchronous").fetch_one(&mut **self).await?;
        let restore = match level {
            2 => Some("PRAGMA synchronous = FULL"),
            3 => Some("PRAGMA synchronous = EXTRA"),
            _ => None, // already NORMAL or OFF
        };
        if restore.is_some() {
            sqlx::query("PRAGMA synchronous = NORMAL").execute(&mut **self).await?;
        }
        Ok(Lowered(restore))
    }

    async fn restore_flush(&mut self, lowered: Lowered) -> sqlx::Result<()> {
        restore(self, lowered).await
    }
}

#[cfg(feature = "postgres")]
impl NoFlush for PoolConnection<Postgres> {
    async fn no_flush(&mut self) -> sqlx::Result<Lowered> {
        sqlx::query("SET synchronous_commit = off").execute(&mut **self).await?;
        Ok(Lowered(Some("RESET synchronous_commit")))
    }

    async fn restore_flush(&mut self, lowered: Lowered) -> sqlx::Result<()> {
        restore(self, lowered).await
    }
}

async fn restore<DB: sqlx::Database>(conn: &mut PoolConnection<DB>, lowered: Lowered) -> sqlx::Result<()>
where
    for<'c> &'c mut DB::Connection: sqlx::Executor<'c, Database = DB>,
    for<'q> <DB as sqlx::Database>::Arguments: sqlx::IntoArguments<DB>,
{
    let Some(statement) = lowered.0 else { return Ok(()) };
    let restored = sqlx::query(statement).execute(&mut **conn).await;
    if restored.is_err() {
        conn.close_on_drop();
    }
    restored.map(drop)
}
