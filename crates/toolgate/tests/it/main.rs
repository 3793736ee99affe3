//! Integration tests of the toolgate binary, one test binary: the CLI, the demo server over
//! MCP, the call contract through the official MCP Python SDK, the web page's trace images in
//! Chromium, the shipped guides, bring-your-own HTTP systems (import, check, serve), TLS to
//! the databases, the fleet behind HAProxy, and span export and backend metrics.

mod budget_cmd;
mod byo;
mod chat_page;
mod cli;
mod common;
mod contract;
mod credentials;
mod discovery_model;
mod discovery_rank;
mod elicit;
mod elicit_ts;
mod eval;
mod fleet;
mod guides;
mod observe;
mod operator_page;
mod page;
mod plan_link;
mod prism;
mod reload;
mod serve;
mod signin;
mod stdio_upstream;
mod tls;
mod upstream_elicit;
mod upstream_tasks;
mod upstreams;
