//! Issue 9 (10): a PostgreSQL restart leaves every pooled connection dead.
//! The old pool handed each one out again (the next calls all failed); now
//! the first dead connection retires the others and the call runs again on
//! a fresh one, so the very next call succeeds. During an outage each call
//! fails within the acquire timeout with a transient error, and a start
//! while the server is down waits for it (with backoff) when told to.

use std::time::{Duration, Instant};

use sqlx::postgres::PgPoolOptions;
use toolgate_db::{Classify, Db, DbConfig, ErrorClass};

use toolgate_test_support::pg::Throwaway;

async fn select_one(db: &Db) -> Result<i32, toolgate_db::Error> {
    Ok(toolgate_db::on_pool!(db, toolgate_db::Error, |pool| sqlx::query_scalar::<_, i32>("SELECT 1")
        .fetch_one(pool)
        .await?))
}

/// Hold `n` connections at once, so the pool really has `n` open.
async fn fill(db: &Db, n: usize) {
    async fn sleep_briefly(db: &Db) -> Result<(), toolgate_db::Error> {
        toolgate_db::on_pool!(db, toolgate_db::Error, |pool| {
            sqlx::query("SELECT pg_sleep(0.05)").execute(pool).await?;
        });
        Ok(())
    }
    let calls = (0..n).map(|_| sleep_briefly(db));
    for result in futures_join(calls).await {
        result.expect("filling the pool");
    }
}

async fn futures_join<F: std::future::Future>(futures: impl Iterator<Item = F>) -> Vec<F::Output> {
    let handles: Vec<_> = futures.collect();
    let mut out = Vec::new();
    // Poll them together: join_all without a futures dependency.
    let mut pinned: Vec<_> = handles.into_iter().map(Box::pin).collect();
    let mut done: Vec<Option<F::Output>> = pinned.iter().map(|_| None).collect();
    std::future::poll_fn(|cx| {
        let mut pending = false;
        for (slot, fut) in done.iter_mut().zip(pinned.iter_mut()) {
            if slot.is_none() {
                match fut.as_mut().poll(cx) {
                    std::task::Poll::Ready(v) => *slot = Some(v),
                    std::task::Poll::Pending => pending = true,
                }
            }
        }
        if pending { std::task::Poll::Pending } else { std::task::Poll::Ready(()) }
    })
    .await;
    out.extend(done.into_iter().flatten());
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restart_costs_no_call_and_an_outage_fails_fast() {
    let Some(pg) = Throwaway::start() else { return };
    let config = DbConfig::new(pg.url())
        .max_connections(8)
        .acquire_timeout(Duration::from_secs(1))
        .connect_retry(Duration::ZERO);
    let db = Db::connect(&config).await.expect("connect");
    fill(&db, 8).await;
    assert_eq!(db.size(), 8, "eight pooled connections before the restart");

    // The pool as it was before: connections handed out unchecked, no retry.
    let old =
        PgPoolOptions::new().max_connections(8).test_before_acquire(false).connect(&pg.url()).await.unwrap();
    let sleeps = (0..8).map(|_| sqlx::query("SELECT pg_sleep(0.05)").execute(&old));
    for r in futures_join(sleeps).await {
        r.unwrap();
    }

    pg.stop_server("fast");
    pg.start_server();

    let mut old_failures = 0;
    for _ in 0..10 {
        if sqlx::query_scalar::<_, i32>("SELECT 1").fetch_one(&old).await.is_err() {
            old_failures += 1;
        }
    }
    let mut new_failures = 0;
    for i in 0..10 {
        if let Err(e) = select_one(&db).await {
            eprintln!("call {i} after the restart failed: {e}");
            new_failures += 1;
        }
    }
    eprintln!(
        "calls failed after a restart: old pool {old_failures} of 10, toolgate_db::Db {new_failures} of 10"
    );
    assert!(old_failures >= 2, "the old pool should hand out dead connections ({old_failures} failures)");
    assert_eq!(new_failures, 0, "no call may fail after a restart");

    // Outage: the server is stopped. The first call waits out the acquire
    // timeout (1 s) and marks the server down; the following ones fail at
    // once; all with a transient error.
    pg.stop_server("fast");
    let mut took = Vec::new();
    for _ in 0..4 {
        let started = Instant::now();
        let error = select_one(&db).await.expect_err("the server is down");
        took.push(started.elapsed());
        assert_eq!(error.class(), ErrorClass::Unavailable, "{error}");
        assert!(error.class().is_transient());
    }
    eprintln!("outage: calls failed after {took:?}");
    assert!(db.is_down(), "the first timed-out call marks the server down");
    assert!(
        took[0] < Duration::from_secs(4),
        "the first outage call took {:?} (acquire timeout 1 s)",
        took[0]
    );
    for later in &took[1..] {
        assert!(*later < Duration::from_millis(500), "a later outage call waited {later:?}");
    }

    // Starting while the server is down: without retry the cause is named at once...
    let error = Db::connect(&config).await.expect_err("down");
    let text = error.to_string();
    assert!(text.contains("connection refused"), "{text}");
    assert!(!text.contains("pool timed out"), "{text}");
    // ...and with retry the start waits until the server is up.
    let waiting = tokio::spawn({
        let config = config.clone().connect_retry(Duration::from_secs(30));
        async move { Db::connect(&config).await }
    });
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert!(!waiting.is_finished(), "connect must keep retrying while the server is down");
    pg.start_server();
    let db2 = waiting.await.unwrap().expect("connect once the server is up");
    assert_eq!(select_one(&db2).await.unwrap(), 1);
    // The first pool recovers by itself too.
    assert_eq!(select_one(&db).await.unwrap(), 1);
    assert!(!db.is_down());
}
