#!/usr/bin/env python3
"""An upstream MCP server written with the official Python SDK (`mcp` 2.x), over streamable HTTP.

It echoes the HTTP headers of the request that carried each tool call, so the Rust tests of
mcp-upstream can see exactly what toolgate sent upstream per caller. It listens on 127.0.0.1
on a port the system picks and prints `listening <port>` once it accepts connections.
"""

from __future__ import annotations

import socket
from typing import Annotated, Any

import anyio
import uvicorn
from pydantic import Field

from mcp.server.mcpserver import Context, MCPServer

server = MCPServer("header-echo")


@server.tool()
async def whoami(ctx: Context, wait_ms: Annotated[int, Field(ge=0, le=5000)] = 0) -> dict[str, Any]:
    """Returns the headers of the HTTP request that carried this call (after an optional wait)."""
    await anyio.sleep(wait_ms / 1000)
    headers = ctx.headers or {}
    return {"headers": {k.lower(): v for k, v in headers.items()}}


async def main() -> None:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    app = server.streamable_http_app()
    config = uvicorn.Config(app, log_level="warning")
    uv = uvicorn.Server(config)

    async def announce() -> None:
        while not uv.started:
            await anyio.sleep(0.02)
        print(f"listening {sock.getsockname()[1]}", flush=True)

    async with anyio.create_task_group() as tg:
        tg.start_soon(announce)
        await uv.serve(sockets=[sock])


if __name__ == "__main__":
    anyio.run(main)
