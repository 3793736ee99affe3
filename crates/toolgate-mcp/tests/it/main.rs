//! The integration tests of toolgate-mcp, one binary (one link of sqlx, axum
//! and rmcp): a real server on 127.0.0.1:0, real key stores, real clients.

mod admin;
mod batch;
mod chat;
mod common;
mod elicit;
mod harden;
mod http;
mod interop;
mod keys;
mod signin;
mod stateless_cancel;
mod stdio;
mod tasks;
mod watchers;
mod web;
