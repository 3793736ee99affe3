//! SQLite: the file is created readable by its owner only, acknowledged
//! writes are synced (`synchronous=FULL`), and migrations run through the
//! one runner into the owner's own table.

use toolgate_db::{Db, DbConfig};

async fn scalar(db: &Db, sql: &str) -> Result<i64, toolgate_db::Error> {
    Ok(toolgate_db::on_pool!(db, toolgate_db::Error, |pool| sqlx::query_scalar(sqlx::AssertSqlSafe(
        sql.to_owned()
    ))
    .fetch_one(pool)
    .await?))
}

async fn exec(db: &Db, sql: &str) -> Result<(), toolgate_db::Error> {
    toolgate_db::on_pool!(db, toolgate_db::Error, |pool| {
        sqlx::query(sqlx::AssertSqlSafe(sql.to_owned())).execute(pool).await?;
    });
    Ok(())
}

async fn pragma(db: &Db, name: &str) -> i64 {
    scalar(db, &format!("PRAGMA {name}")).await.unwrap()
}

#[tokio::test]
async fn the_file_is_private_and_writes_are_synced() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("app.db");
    let db = Db::connect(&DbConfig::new(format!("sqlite:{}", path.display()))).await.unwrap();
    exec(&db, "CREATE TABLE t (x INTEGER)").await.unwrap();
    assert_eq!(pragma(&db, "synchronous").await, 2, "synchronous=FULL");
    assert_eq!(pragma(&db, "foreign_keys").await, 1);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        for file in [path.clone(), dir.path().join("app.db-wal")] {
            let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o600, "{} has mode {mode:o}", file.display());
        }
    }
}

#[tokio::test]
async fn normal_sync_is_a_setting() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = DbConfig::new(format!("sqlite:{}", dir.path().join("n.db").display()));
    config.sqlite_synchronous = toolgate_db::Synchronous::Normal;
    let db = Db::connect(&config).await.unwrap();
    assert_eq!(pragma(&db, "synchronous").await, 1);
}

#[tokio::test]
async fn a_missing_folder_is_a_clear_error() {
    let error = Db::connect(&DbConfig::new("sqlite:/nonexistent-dir-tg/x.db")).await.expect_err("no folder");
    assert!(error.to_string().contains("/nonexistent-dir-tg/x.db"), "{error}");
}

#[tokio::test]
async fn migrations_record_in_the_owners_table() {
    let db = Db::connect(&DbConfig::new("sqlite::memory:")).await.unwrap();
    let set = || toolgate_db::MigrationSet {
        owner: "test",
        table: "_test_migrations",
        sqlite: sqlx::migrate!("./tests/it/migrations"),
        postgres: sqlx::migrate!("./tests/it/migrations"),
    };
    db.migrate(set()).await.unwrap();
    db.migrate(set()).await.unwrap();
    assert_eq!(scalar(&db, "SELECT count(*) FROM _test_migrations").await.unwrap(), 1);
    assert_eq!(scalar(&db, "SELECT count(*) FROM notes").await.unwrap(), 0);
}

/// One query on a connection of its own, as the stores run transactions.
async fn scalar_on_connection(db: &Db, sql: &str) -> Result<i64, toolgate_db::Error> {
    Ok(toolgate_db::on_pool!(db, toolgate_db::Error, |pool| {
        let mut connection = pool.acquire().await?;
        sqlx::query_scalar(sqlx::AssertSqlSafe(sql.to_owned())).fetch_one(&mut *connection).await?
    }))
}

/// A query's future holds `on_pool!`'s work on the heap: a caller's own
/// future stays smaller than acquiring one PostgreSQL connection (about
/// 14 KB in a release build), though the caller could reach either backend.
/// Held inline it would be copied whole each time the caller's future moves
/// (into a tool's box, into a spawned task).
#[tokio::test]
async fn a_query_future_is_smaller_than_acquiring_a_connection() {
    let db = Db::connect(&DbConfig::new("sqlite::memory:")).await.unwrap();
    let query = scalar_on_connection(&db, "SELECT 41 + 1");
    let ours = std::mem::size_of_val(&query);
    // Never polled: a lazy pool connects on first use, so nothing is reached.
    let pg = sqlx::PgPool::connect_lazy("postgres://nobody@127.0.0.1:1/none").unwrap();
    let acquire = std::mem::size_of_val(&pg.acquire());
    assert!(ours < acquire / 2, "one query through on_pool! is {ours} bytes; acquiring alone is {acquire}");
    assert_eq!(query.await.unwrap(), 42);
}
