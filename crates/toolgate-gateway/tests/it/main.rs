//! The integration tests of `toolgate-gateway`, one binary (each module links once).

mod acceptance;
mod bad_input;
mod common;
mod contract;
mod discovery;
mod live;
mod missing;
mod signals_and_exports;
mod skill_runs;
