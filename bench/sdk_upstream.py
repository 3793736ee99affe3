"""The upstream of `cargo xtask bench upstream`: an MCP server written with the
official Python SDK (`mcp` 2.x, MCPServer) over streamable HTTP, with one
cheap read, `query_weather` (the same answer as `bench/fastmcp_server.py`).
Called directly by the load generator and through toolgate's `[[upstreams]]`.

Usage: python bench/sdk_upstream.py [--port N] [--stateful]
Binds 127.0.0.1:N (0, the default: a free port), prints
`sdk upstream serving MCP at http://127.0.0.1:PORT/mcp` and serves until
killed. Default: stateless HTTP with JSON answers (one JSON body per POST);
--stateful: MCP sessions (still JSON answers).
"""

import argparse
import datetime
import socket
import sys
import time
from typing import Annotated, Any

import uvicorn
from pydantic import Field

from mcp.server.mcpserver import MCPServer

server = MCPServer("bench-upstream")


@server.tool()
def query_weather(city: Annotated[str, Field(min_length=1, max_length=100)]) -> dict[str, Any]:
    """Get the weather forecast for a city today (the bench's cheap read)."""
    started = time.perf_counter()
    now = datetime.datetime.now(datetime.timezone.utc)
    return {
        "city": city.strip(),
        "date": now.date().isoformat(),
        "available": False,
        "duration_ms": (time.perf_counter() - started) * 1000.0,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--stateful", action="store_true")
    args = parser.parse_args()
    # IPPROTO_TCP: asyncio sets TCP_NODELAY only on sockets whose protocol says TCP
    # (without it every kept-alive answer waits ~40 ms for the client's delayed ACK).
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", args.port))
    sock.listen(1024)
    port = sock.getsockname()[1]
    app = server.streamable_http_app(json_response=True, stateless_http=not args.stateful)
    print(f"sdk upstream serving MCP at http://127.0.0.1:{port}/mcp", flush=True)
    config = uvicorn.Config(app, log_level="warning", access_log=False)
    uvicorn.Server(config).run(sockets=[sock])


if __name__ == "__main__":
    sys.exit(main())
