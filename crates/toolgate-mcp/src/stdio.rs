//! MCP over stdio (or any byte stream), with a fixed caller.
//!
//! # Trust boundary
//!
//! A stdio server has no API key: whoever can start the process and write
//! to its stdin *is* the caller given here (in `toolgate serve --stdio`,
//! from `--user` / `--role` or the configuration). That is the same trust
//! as the local user account that runs it, so give it the role that user
//! should have and never more; an MCP client that starts the server for you
//! acts with that identity. Use HTTP with API keys when callers differ.
//!
//! stdout carries the protocol: the process must send its logs to stderr.

use rmcp::ServiceExt;
use tokio::io::{AsyncRead, AsyncWrite};
use toolgate_core::Caller;
use toolgate_gateway::Gateway;

use crate::error::{Error, Result};
use crate::{Exposure, McpServer};

/// Serve MCP on this process's stdin and stdout as `caller` until the
/// client closes the stream.
pub async fn serve_stdio(gateway: Gateway, caller: Caller, exposure: Exposure) -> Result<()> {
    serve_io(gateway, caller, exposure, rmcp::transport::stdio_pipes()).await
}

/// Serve `server` (built with [`McpServer::with_caller`], and e.g.
/// [`McpServer::with_federation`]) on this process's stdin and stdout until the
/// client closes the stream. A server without a fixed caller refuses every request.
pub async fn serve_stdio_with(server: McpServer) -> Result<()> {
    let running =
        server.serve(rmcp::transport::stdio_pipes()).await.map_err(|e| Error::Mcp(e.to_string()))?;
    running.waiting().await.map_err(|e| Error::Mcp(e.to_string()))?;
    Ok(())
}

/// Serve MCP on any reader and writer (newline-delimited JSON-RPC) as
/// `caller` until the reader ends: a pipe, a socket, or a
/// `tokio::io::duplex` in tests.
pub async fn serve_io<R, W>(gateway: Gateway, caller: Caller, exposure: Exposure, io: (R, W)) -> Result<()>
where
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    let server = McpServer::new(gateway, exposure).with_caller(caller);
    let running = server.serve(io).await.map_err(|e| Error::Mcp(e.to_string()))?;
    running.waiting().await.map_err(|e| Error::Mcp(e.to_string()))?;
    Ok(())
}
