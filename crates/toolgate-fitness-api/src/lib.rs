//! Reference REST backend for the fitness domain: body measurements, nutrition (meals, items,
//! daily totals against the user's daily goals) and training (workouts, sets), each row scoped
//! to the user of a bearer token. It is what the `toolgate-fitness` tools call, and an example of
//! a backend a domain crate can be tested against.
//!
//! Open a database (a SQLite file here; a `postgres://` URL works the same), create a user,
//! serve the API on an ephemeral port, and talk to it with any HTTP client:
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let dir = tempfile::tempdir()?;
//! let url = format!("sqlite:{}", dir.path().join("fitness.db").display());
//! let db = toolgate_fitness_api::connect(&url).await?; // creates the file, runs the migrations
//! let token = toolgate_fitness_api::create_user(&db, "alice").await?;
//! let server = toolgate_fitness_api::spawn("127.0.0.1:0", db).await?;
//!
//! let day = format!("{}/body/measurements/2026-03-14", server.url());
//! let client = reqwest::Client::new();
//! let put = client.put(&day).bearer_auth(&token).json(&serde_json::json!({"weight_kg": 81.4})).send().await?;
//! assert_eq!(put.status(), 201);
//! let stored: serde_json::Value = client.get(&day).bearer_auth(&token).send().await?.json().await?;
//! assert_eq!(stored["weight_kg"], 81.4);
//! // without a token: 401, as JSON
//! assert_eq!(client.get(&day).send().await?.status(), 401);
//!
//! // the OpenAPI document of the same routes
//! assert!(toolgate_fitness_api::openapi()["paths"]["/body/measurements/{date}"]["put"].is_object());
//! server.shutdown().await?;
//! # Ok(()) }
//! ```
//!
//! Errors are JSON everywhere: `{"error": {"code", "message", "fields": [{"field", "message"}]}}`
//! with 400 (bad path or query value, malformed JSON), 401 (missing or bad token), 404 (no such
//! record, or another user's), 409 (a duplicate name), 415 (not JSON), 422 (a body that names
//! unknown fields or holds values out of range). SQL and internal causes are never shown.
//!
//! # Cargo features
//!
//! None: both backends (SQLite and PostgreSQL, through `toolgate-db`) are always built. The
//! `fitness-api` binary (`fitness-api --listen ADDR --db URL [--demo-user ID]`) shares the
//! library's dependencies, so the package's tokio also has `macros` and `rt-multi-thread`
//! for its `#[tokio::main]`.
#![deny(missing_docs)]

mod auth;
mod body;
mod db;
mod error;
mod extract;
mod goals;
mod ids;
mod nutrition;
mod openapi;
mod routes;
mod seed;
mod server;
mod training;
mod validate;

/// The pool settings [`connect_with`] takes (re-exported from `toolgate-db`).
pub use ::toolgate_db::DbConfig;
pub use auth::{ExpiringToken, create_user, issue_expiring_token, issue_token, revoke_token};
pub use db::{Db, connect, connect_with};
pub use error::{Error, Result};
pub use openapi::openapi;
pub use routes::{RouteSpec, route_specs, router, routes};
pub use seed::{SeedSummary, seed_demo};
pub use server::{Server, serve, spawn};
