"""Cancellation without sessions through the official MCP Python SDK (`mcp` 2.x).

Against a server with `--stateless` sessions (meta mode, `wait_forever` waits an
hour): a 2025-11-25 client calls wait_forever through execute_tool and abandons
the call after 1 s, which makes the SDK send `notifications/cancelled` for it in
a POST of its own; the client then stays connected for 4 s (printing CANCELLED
first) so that the test sees the server stop the call while the client is still
there, and checks a new call is still served.

Usage: stateless_cancel_check.py URL KEY
"""

import sys

import anyio
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client


async def main(url: str, key: str) -> int:
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {key}"})
    async with http, streamable_http_client(url, http_client=http) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            print(f"  ..  protocol version {init.protocol_version}", flush=True)
            with anyio.move_on_after(1.0) as scope:
                await session.call_tool("execute_tool", {"tool_name": "wait_forever", "parameters": {}})
            if not scope.cancelled_caught:
                print("FAIL wait_forever answered instead of waiting", flush=True)
                return 1
            print("CANCELLED", flush=True)
            await anyio.sleep(4.0)
            quick = await session.call_tool("execute_tool", {"tool_name": "wait_forever", "parameters": {"ms": 10}})
            if quick.is_error or not (quick.structured_content or {}).get("success"):
                print(f"FAIL a call after the cancellation: {quick.model_dump()}", flush=True)
                return 1
            print("  ok  a call after the cancellation is served", flush=True)
    print("PASS", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(anyio.run(main, sys.argv[1], sys.argv[2]))
