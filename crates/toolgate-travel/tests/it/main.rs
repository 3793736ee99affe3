//! travel's integration tests, one binary: real SQLite files always,
//! PostgreSQL and Redis when configured, real HTTP servers on 127.0.0.1.
#![allow(dead_code, unreachable_pub)]

mod common;
mod faults;
mod gateway;
mod ids;
mod never_panics;
mod orders;
mod plan;
mod policy;
mod secrets;
mod skills;
mod weather;
