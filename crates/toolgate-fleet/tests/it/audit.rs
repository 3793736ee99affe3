//! The audit trail through the gateway, on a SQLite file and on PostgreSQL:
//! writes and refusals are recorded (secrets redacted, ids found), reads are
//! not; queries filter; rows cannot be updated; retention prunes.

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use toolgate_core::{Caller, ErrorCode};
use toolgate_fleet::{AuditQuery, SqlAudit};
use toolgate_test_support::unique;

use crate::common::{builder, call};

async fn trail_holds(url: &str) {
    let instance = unique("instance");
    let audit = SqlAudit::connect(url, instance.clone()).await.unwrap();
    let gateway = builder().audit(Arc::new(audit.clone())).build().unwrap();
    let user = unique("alice");
    let alice = Caller::new(user.clone(), "member").with_key_id("k-1");

    let before = chrono_now();
    assert!(call(&gateway, &alice, "read_thing", json!({})).await.success);
    let written =
        call(&gateway, &alice, "submit_thing", json!({"title": "lamp", "api_token": "sk-very-secret"})).await;
    assert!(written.success, "{written:?}");
    let denied = call(&gateway, &alice, "purge_things", json!({})).await;
    assert_eq!(denied.code(), Some(ErrorCode::PermissionDenied));

    let rows = audit.query(&AuditQuery::default().with_user(&user)).await.unwrap();
    assert_eq!(rows.len(), 2, "reads are not audited: {rows:?}");
    let (purge, submit) = (&rows[0], &rows[1]);
    assert_eq!(purge.tool, "purge_things");
    assert_eq!(purge.outcome, "PERMISSION_DENIED");
    assert_eq!(submit.tool, "submit_thing");
    assert_eq!(submit.outcome, "OK");
    assert_eq!(submit.role, "member");
    assert_eq!(submit.key_id.as_deref(), Some("k-1"));
    assert_eq!(submit.instance, instance);
    assert_eq!(submit.ids, json!({"thing_id": 42}));
    assert_eq!(submit.params, json!({"title": "lamp", "api_token": "[redacted]"}));
    assert!(!serde_json::to_string(&rows).unwrap().contains("sk-very-secret"));
    assert!(submit.id < purge.id);

    let by_tool = AuditQuery::default().with_user(&user).with_tool("submit_thing");
    assert_eq!(audit.query(&by_tool).await.unwrap().len(), 1);
    let since = AuditQuery::default().with_user(&user).with_since(before);
    assert_eq!(audit.query(&since).await.unwrap().len(), 2);
    let later = AuditQuery::default().with_user(&user).with_since("2999-01-01T00:00:00Z");
    assert!(audit.query(&later).await.unwrap().is_empty());
    let bad = AuditQuery::default().with_since("yesterday");
    assert!(audit.query(&bad).await.unwrap_err().to_string().contains("RFC 3339"));
    let one = AuditQuery::default().with_user(&user).with_limit(1);
    assert_eq!(audit.query(&one).await.unwrap().len(), 1);

    // Retention keeps what is younger than the age (the database may be
    // shared with other runs, so only this run's rows are counted)...
    audit.prune_older_than(Duration::from_secs(3600)).await.unwrap();
    let mine = AuditQuery::default().with_user(&user);
    assert_eq!(audit.query(&mine).await.unwrap().len(), 2);
    // ...and deletes what is older, on a database of this test's own.
    if url.starts_with("sqlite:") {
        assert!(audit.prune_older_than(Duration::ZERO).await.unwrap() >= 2);
        assert!(audit.query(&mine).await.unwrap().is_empty());
    }
    audit.ready().await.unwrap();
    audit.close().await;
}

/// A row cannot be changed, even by SQL outside toolgate's API.
async fn updates_are_refused(url: &str) {
    let audit = SqlAudit::connect(url, "i").await.unwrap();
    let gateway = builder().audit(Arc::new(audit.clone())).build().unwrap();
    let user = unique("mallory");
    let caller = Caller::new(user.clone(), "member");
    assert!(call(&gateway, &caller, "submit_thing", json!({"title": "x"})).await.success);
    let sql = format!("UPDATE toolgate_audit SET outcome = 'OK' WHERE user_id = '{user}'");
    let error = if url.starts_with("sqlite:") {
        let pool = sqlx::SqlitePool::connect(url).await.unwrap();
        sqlx::query(sqlx::AssertSqlSafe(sql.clone())).execute(&pool).await.unwrap_err()
    } else {
        let pool = sqlx::PgPool::connect(url).await.unwrap();
        sqlx::query(sqlx::AssertSqlSafe(sql.clone())).execute(&pool).await.unwrap_err()
    };
    assert!(error.to_string().contains("append-only"), "{error}");
}

fn chrono_now() -> String {
    // One second back, in a format other than the table's (no milliseconds, an offset).
    (chrono::Utc::now() - chrono::Duration::seconds(1)).to_rfc3339_opts(chrono::SecondsFormat::Secs, false)
}

#[tokio::test]
async fn the_trail_on_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite:{}", dir.path().join("audit.db").display());
    trail_holds(&url).await;
    updates_are_refused(&url).await;
}

#[tokio::test]
async fn the_trail_on_postgres() {
    let Some(url) = toolgate_test_support::pg::url() else { return };
    trail_holds(&url).await;
    updates_are_refused(&url).await;
}

#[tokio::test]
async fn a_bad_url_is_a_clear_error() {
    let error = SqlAudit::connect("mysql://x", "i").await.unwrap_err();
    assert!(error.to_string().contains("sqlite: or postgres://"));
}
