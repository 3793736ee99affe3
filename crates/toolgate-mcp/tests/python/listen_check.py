"""`subscriptions/listen` (2026-07-28) through the official MCP Python SDK.

Opens a session with `server/discover` (no `initialize`), listens for
`toolsListChanged`, prints `LISTENING` once acknowledged, then waits (at
most 20 s) for a tools-list-changed event, which the test causes by adding a
tool to the gateway; then checks the new tool is listed.

Usage: listen_check.py URL KEY NEW_TOOL
"""

import sys

import anyio
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.client.subscriptions import listen
from mcp.shared._httpx_utils import create_mcp_http_client


async def main(url: str, key: str, new_tool: str) -> int:
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {key}"})
    async with http, streamable_http_client(url, http_client=http) as (read, write):
        async with ClientSession(read, write) as session:
            await session.discover()
            print(f"  ..  protocol version {session.protocol_version}", flush=True)
            async with listen(session, tools_list_changed=True) as sub:
                print(f"  ..  honored {sub.honored}", flush=True)
                print("LISTENING", flush=True)
                with anyio.fail_after(20):
                    async for event in sub:
                        print(f"  ok  event {type(event).__name__}", flush=True)
                        break
            names = [tool.name for tool in (await session.list_tools()).tools]
            if new_tool not in names:
                print(f"FAIL {new_tool} is not listed after the change: {names}")
                return 1
            print(f"  ok  {new_tool} is listed after the change")
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(anyio.run(main, *sys.argv[1:4]))
