//! Test harness: a real fitness-api server on 127.0.0.1:0 over a real database (a SQLite file
//! in a temp dir, or the PostgreSQL of TOOLGATE_TEST_PG_URL), and a real HTTP client.

#![allow(dead_code, unreachable_pub)]

use reqwest::Method;
use serde_json::Value;
use toolgate_fitness_api::{Db, Server};

#[derive(Debug)]
pub struct Harness {
    pub db: Db,
    pub server: Server,
    pub client: reqwest::Client,
    pub backend: &'static str,
    pub url: String,
    /// Keeps the SQLite file alive.
    _backend: toolgate_test_support::pg::Backend,
}

/// A user id no other test (or concurrent test binary, on a shared PostgreSQL) uses.
pub fn unique_user(label: &str) -> String {
    toolgate_test_support::unique(&format!("t-{label}"))
}

impl Harness {
    pub async fn sqlite() -> Harness {
        Self::start(toolgate_test_support::pg::Backend::sqlite("fitness.db")).await
    }

    /// None (with a note) when TOOLGATE_TEST_PG_URL is unset; a failure when TOOLGATE_REQUIRE_PG=1.
    pub async fn postgres() -> Option<Harness> {
        Some(Self::start(toolgate_test_support::pg::Backend::postgres()?).await)
    }

    async fn start(backend: toolgate_test_support::pg::Backend) -> Harness {
        let db = toolgate_fitness_api::connect(&backend.url).await.unwrap();
        let server = toolgate_fitness_api::spawn("127.0.0.1:0", db.clone()).await.unwrap();
        let url = backend.url.clone();
        Harness {
            backend: db.backend_name(),
            db,
            server,
            client: reqwest::Client::new(),
            url,
            _backend: backend,
        }
    }

    /// Run `sql` with `(i64, &str)` bound as `$1, $2` on a connection of the test's own,
    /// beside the API (to play the clock, or to look at rows the API does not show).
    pub async fn raw_exec(&self, sql: &'static str, a: i64, b: &str) {
        if self.url.starts_with("sqlite:") {
            let pool = sqlx::SqlitePool::connect(&self.url).await.unwrap();
            sqlx::query(sql).bind(a).bind(b).execute(&pool).await.unwrap();
        } else {
            let pool = sqlx::PgPool::connect(&self.url).await.unwrap();
            sqlx::query(sql).bind(a).bind(b).execute(&pool).await.unwrap();
        }
    }

    /// `SELECT count(*) ...` with one text parameter, on a connection of the test's own.
    pub async fn raw_count(&self, sql: &'static str, a: &str) -> i64 {
        if self.url.starts_with("sqlite:") {
            let pool = sqlx::SqlitePool::connect(&self.url).await.unwrap();
            sqlx::query_scalar(sql).bind(a).fetch_one(&pool).await.unwrap()
        } else {
            let pool = sqlx::PgPool::connect(&self.url).await.unwrap();
            sqlx::query_scalar(sql).bind(a).fetch_one(&pool).await.unwrap()
        }
    }

    /// A new user and its token.
    pub async fn user(&self, label: &str) -> String {
        toolgate_fitness_api::create_user(&self.db, &unique_user(label)).await.unwrap()
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{}", self.server.url(), path)
    }

    /// Sends a request and answers (status, JSON body). Every answer must be JSON.
    pub async fn call(
        &self,
        token: Option<&str>,
        method: Method,
        path: &str,
        body: Option<Value>,
    ) -> (u16, Value) {
        let mut req = self.client.request(method.clone(), self.url(path));
        if let Some(t) = token {
            req = req.bearer_auth(t);
        }
        if let Some(b) = &body {
            req = req.json(b);
        }
        let resp = req.send().await.unwrap();
        let status = resp.status().as_u16();
        let text = resp.text().await.unwrap();
        let json: Value = serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("{method} {path} answered {status} with non-JSON {text:?}: {e}"));
        assert!(status < 500, "{method} {path} answered {status}: {json}");
        (status, json)
    }

    pub async fn get(&self, token: &str, path: &str) -> (u16, Value) {
        self.call(Some(token), Method::GET, path, None).await
    }
    pub async fn post(&self, token: &str, path: &str, body: Value) -> (u16, Value) {
        self.call(Some(token), Method::POST, path, Some(body)).await
    }
    pub async fn put(&self, token: &str, path: &str, body: Value) -> (u16, Value) {
        self.call(Some(token), Method::PUT, path, Some(body)).await
    }
    pub async fn patch(&self, token: &str, path: &str, body: Value) -> (u16, Value) {
        self.call(Some(token), Method::PATCH, path, Some(body)).await
    }
    pub async fn delete(&self, token: &str, path: &str) -> (u16, Value) {
        self.call(Some(token), Method::DELETE, path, None).await
    }
}

/// Asserts an error answer: status, `error.code`, and that the message (or a listed field)
/// names `field` when one is given.
#[track_caller]
pub fn assert_error(answer: &(u16, Value), status: u16, code: &str, field: Option<&str>) {
    let (got, body) = answer;
    assert_eq!(*got, status, "{body}");
    assert_eq!(body["error"]["code"], code, "{body}");
    let message = body["error"]["message"].as_str().unwrap_or_default();
    assert!(!message.is_empty(), "{body}");
    if let Some(field) = field {
        let listed = body["error"]["fields"]
            .as_array()
            .is_some_and(|fs| fs.iter().any(|f| f["field"] == field && f["message"].as_str().is_some()));
        assert!(listed && message.contains(field), "field {field} not named in {body}");
    }
}

/// Runs each scenario `async fn name(h: &Harness)` on SQLite, and on PostgreSQL when configured.
macro_rules! on_both_backends {
    ($($name:ident),* $(,)?) => {
        mod sqlite {
            $(
                #[tokio::test]
                async fn $name() {
                    let h = crate::common::Harness::sqlite().await;
                    super::$name(&h).await;
                }
            )*
        }
        mod postgres {
            $(
                #[tokio::test]
                async fn $name() {
                    let Some(h) = crate::common::Harness::postgres().await else { return };
                    super::$name(&h).await;
                }
            )*
        }
    };
}
