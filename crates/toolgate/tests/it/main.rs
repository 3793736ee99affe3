//! Integration tests of the toolgate binary, one test binary: the CLI, the demo server over
//! MCP, the shipped guides, bring-your-own HTTP systems (import, check, serve), TLS to
//! the databases, and the fleet behind HAProxy.

mod byo;
mod cli;
mod fleet;
mod guides;
mod serve;
mod tls;
mod upstreams;
