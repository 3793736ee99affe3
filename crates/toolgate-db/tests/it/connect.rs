//! The first connection names its cause: refused, unknown database, a bad
//! URL, never "pool timed out", and never the password.

use std::time::Duration;

use toolgate_db::{ConnectCause, Db, DbConfig, Error};

use toolgate_test_support::{pg, process::free_port};

fn quick(url: String) -> DbConfig {
    DbConfig::new(url).connect_retry(Duration::ZERO).acquire_timeout(Duration::from_millis(500))
}

#[tokio::test]
async fn a_refused_connection_says_so_without_the_password() {
    let url = format!("postgres://alice:s3cret-pw@127.0.0.1:{}/app", free_port());
    let error = Db::connect(&quick(url)).await.expect_err("nothing listens there");
    assert!(matches!(&error, Error::Connect { cause: ConnectCause::Refused, .. }), "{error:?}");
    let text = error.to_string();
    assert!(text.contains("connection refused") && text.contains("127.0.0.1"), "{text}");
    assert!(!text.contains("s3cret-pw") && !format!("{error:?}").contains("s3cret-pw"), "{text}");
}

#[tokio::test]
async fn an_unknown_database_is_named_and_not_retried() {
    let Some(url) = pg::url() else { return };
    let (base, _) = url.rsplit_once('/').expect("a database in the URL");
    let config = quick(format!("{base}/tg_no_such_database")).connect_retry(Duration::from_secs(30));
    let started = std::time::Instant::now();
    let error = Db::connect(&config).await.expect_err("no such database");
    assert!(matches!(&error, Error::Connect { cause: ConnectCause::UnknownDatabase, .. }), "{error:?}");
    assert!(error.to_string().contains("does not exist"), "{error}");
    assert!(started.elapsed() < Duration::from_secs(10), "a permanent cause must not be retried for 30 s");
}

#[tokio::test]
async fn an_unsupported_url_is_refused_with_the_password_redacted() {
    let error = Db::connect(&quick("mysql://bob:hunter2@h/db".into())).await.expect_err("mysql");
    let text = error.to_string();
    assert!(text.contains("unsupported database URL") && !text.contains("hunter2"), "{text}");
}
