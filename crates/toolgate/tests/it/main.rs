//! Integration tests of the toolgate binary, one test binary: the CLI, the demo server over
//! MCP, the shipped guides, bring-your-own HTTP systems (import, check, serve) and TLS to
//! the databases.

mod byo;
mod cli;
mod guides;
mod serve;
mod tls;
