//! Integration tests of the fitness tools: tables against the API, bad input, scoped exposure,
//! skills, and end to end through the gateway, the HTTP executor and a real fitness-api.

mod bad_input;
#[cfg(feature = "charts")]
mod chart;
mod common;
mod e2e;
mod scope;
mod skills;
mod tables;
mod text;
