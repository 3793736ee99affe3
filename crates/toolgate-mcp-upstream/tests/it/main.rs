//! Integration tests of mcp-upstream against real MCP servers: a Python
//! server written with the official SDK over stdio, and a toolgate MCP
//! server (mcp-server, in process, on 127.0.0.1:0) over streamable HTTP,
//! also behind a TLS front with a certificate from a test CA.

mod bounds;
mod common;
mod cut;
mod direct;
mod elicit;
mod federate;
mod front;
mod http;
mod identity;
mod reach;
mod restart;
mod stdio;
mod token;
