//! `NoFlush`: a connection's durability is lowered only between `no_flush`
//! and `restore_flush`, on SQLite and on PostgreSQL, and what was written
//! in between is there.

use toolgate_db::{Db, DbConfig, NoFlush, Pool};
use toolgate_test_support::pg;

#[tokio::test]
async fn durability_is_lowered_only_in_between_and_the_write_stays() {
    let dir = tempfile::tempdir().unwrap();
    let mut urls = vec![format!("sqlite:{}", dir.path().join("app.db").display())];
    urls.extend(pg::url());
    for url in urls {
        let db = Db::connect(&DbConfig::new(url.clone())).await.unwrap();
        match db.pool() {
            Pool::Sqlite(pool) => {
                let mut conn = pool.acquire().await.unwrap();
                assert_eq!(sqlite_level(&mut conn).await, 2);
                let lowered = conn.no_flush().await.unwrap();
                assert_eq!(sqlite_level(&mut conn).await, 1, "NORMAL while lowered");
                sqlx::query("CREATE TABLE t (x INTEGER)").execute(&mut *conn).await.unwrap();
                sqlx::query("INSERT INTO t VALUES (7)").execute(&mut *conn).await.unwrap();
                conn.restore_flush(lowered).await.unwrap();
                assert_eq!(sqlite_level(&mut conn).await, 2, "FULL again");
                let x: i64 = sqlx::query_scalar("SELECT x FROM t").fetch_one(pool).await.unwrap();
                assert_eq!(x, 7);
            }
            Pool::Postgres(pool) => {
                let mut conn = pool.acquire().await.unwrap();
                let own = pg_level(&mut conn).await;
                let lowered = conn.no_flush().await.unwrap();
                assert_eq!(pg_level(&mut conn).await, "off");
                conn.restore_flush(lowered).await.unwrap();
                assert_eq!(pg_level(&mut conn).await, own, "{url}: the session's own level again");
            }
        }
    }
}

async fn sqlite_level(conn: &mut sqlx::pool::PoolConnection<sqlx::Sqlite>) -> i64 {
    sqlx::query_scalar("PRAGMA synchronous").fetch_one(&mut **conn).await.unwrap()
}

async fn pg_level(conn: &mut sqlx::pool::PoolConnection<sqlx::Postgres>) -> String {
    sqlx::query_scalar("SHOW synchronous_commit").fetch_one(&mut **conn).await.unwrap()
}
