//! Reference REST backend for the fitness domain: body measurements, nutrition (meals, items,
//! daily totals against the user's daily goals) and training (workouts, sets), each row scoped to the user of a bearer token.
//!
//! ```no_run
//! # async fn demo() -> toolgate_fitness_api::Result<()> {
//! let db = toolgate_fitness_api::connect("sqlite:fitness.db").await?;
//! let token = toolgate_fitness_api::create_user(&db, "alice").await?;
//! let server = toolgate_fitness_api::spawn("127.0.0.1:0", db).await?;
//! // GET {server.url()}/body/measurements with `Authorization: Bearer {token}`
//! # let _ = (token, server); Ok(()) }
//! ```
//!
//! Errors are JSON everywhere: `{"error": {"code", "message", "fields": [{"field", "message"}]}}`
//! with 400 (bad path or query value, malformed JSON), 401 (missing or bad token), 404 (no such
//! record, or another user's), 409 (a duplicate name), 415 (not JSON), 422 (a body that names
//! unknown fields or holds values out of range). SQL and internal causes are never shown.

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

/// The pool settings [`connect_with`] takes (re-exported from the `db` crate).
pub use ::toolgate_db::DbConfig;
pub use auth::{ExpiringToken, create_user, issue_expiring_token, issue_token, revoke_token};
pub use db::{Db, connect, connect_with};
pub use error::{Error, Result};
pub use openapi::openapi;
pub use routes::{RouteSpec, route_specs, router, routes};
pub use seed::{SeedSummary, seed_demo};
pub use server::{Server, serve, spawn};
