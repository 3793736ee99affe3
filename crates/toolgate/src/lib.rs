//! The toolgate binary's library half: configuration, wiring of every domain
//! into one gateway, the token budget report. The CLI (`main.rs`) is the only
//! code that knows clap.

pub mod budget;
pub mod config;
pub mod domains;
pub mod eval;
pub mod plan;
pub mod reload;
pub mod serve;
pub mod sources;
pub mod telemetry;
pub mod tool_source;
pub mod upstreams;
pub mod wiring;

pub use config::Config;
pub use wiring::App;
