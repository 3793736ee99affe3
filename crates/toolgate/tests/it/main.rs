//! Integration tests of the toolgate binary, one test binary: the CLI, the demo server over
//! MCP, the shipped guides, bring-your-own HTTP systems (import, check, serve), TLS to
//! the databases, the fleet behind HAProxy, and span export and backend metrics.

mod byo;
mod cli;
mod common;
mod fleet;
mod guides;
mod observe;
mod serve;
mod tls;
mod upstreams;
