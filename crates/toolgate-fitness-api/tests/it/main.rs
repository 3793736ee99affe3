//! fitness-api integration tests, one binary: every route over real HTTP
//! (`api`), the library surface (`library`), the binary (`binary`), the
//! published route list (`routes`), on SQLite and on PostgreSQL when
//! TOOLGATE_TEST_PG_URL is set.

#[macro_use]
mod common;

mod api;
mod binary;
mod library;
mod routes;
