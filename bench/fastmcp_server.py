"""The FastMCP side of `cargo xtask bench mcp`: the same `query_weather` tool as
toolgate's demo, over streamable HTTP on 127.0.0.1.

The tool does the equivalent minimal work of toolgate's answer when no weather
provider is configured: check the city (1 to 100 characters), take today's
UTC date, and return the same envelope shape (success, result, error,
signals with an `unavailable` signal, metadata with tool, duration, attempts
and timestamp). FastMCP returns the dict as structuredContent (and as JSON
text), like toolgate.

Usage: python bench/fastmcp_server.py [--stateful]
It binds 127.0.0.1 on a free port, prints one line
`fastmcp serving MCP at http://127.0.0.1:PORT/mcp` on stdout, and serves until
killed. Default: stateless_http=True and json_response=True (no sessions, one
JSON answer per POST, like `toolgate serve --stateless`). With --stateful:
MCP sessions (initialize first, then the mcp-session-id header), still JSON
answers.
"""

import argparse
import datetime
import socket
import sys
import time
from typing import Annotated, Any

from pydantic import Field

from fastmcp import FastMCP

mcp = FastMCP("bench")

REASON = "no weather provider is configured on this server"
HOW_TO_ENABLE = (
    "an operator sets TOOLGATE_WEATHER_URL (or TravelConfig::weather_url) to the provider's base URL; "
    "until then tell the user the forecast is not available here"
)


@mcp.tool(annotations={"readOnlyHint": True, "idempotentHint": True})
def query_weather(city: Annotated[str, Field(min_length=1, max_length=100)]) -> dict[str, Any]:
    """Get the weather forecast for a city today (the bench twin of toolgate's tool)."""
    started = time.perf_counter()
    now = datetime.datetime.now(datetime.timezone.utc)
    result = {"city": city.strip(), "date": now.date().isoformat(), "available": False}
    return {
        "success": True,
        "result": result,
        "error": None,
        "signals": [{"kind": "unavailable", "reason": REASON, "how_to_enable": HOW_TO_ENABLE}],
        "metadata": {
            "tool": "query_weather",
            "duration_ms": (time.perf_counter() - started) * 1000.0,
            "attempts": 1,
            "timestamp": now.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
        },
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--stateful", action="store_true", help="MCP sessions instead of stateless HTTP")
    args = parser.parse_args()

    # IPPROTO_TCP, not the default 0: asyncio and uvloop set TCP_NODELAY only
    # on sockets whose protocol says TCP, as they are when uvicorn binds the
    # port itself. With proto 0 every answer on a kept-alive connection waits
    # ~40 ms (Nagle against the client's delayed ACK).
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(1024)
    port = sock.getsockname()[1]
    print(f"fastmcp serving MCP at http://127.0.0.1:{port}/mcp", flush=True)

    mcp.run(
        transport="http",
        host="127.0.0.1",
        port=port,
        path="/mcp",
        show_banner=False,
        log_level="WARNING",
        stateless_http=not args.stateful,
        json_response=True,
        # No per-request access log line (toolgate writes none either).
        uvicorn_config={"access_log": False},
        sockets=[sock],
    )


if __name__ == "__main__":
    sys.exit(main())
