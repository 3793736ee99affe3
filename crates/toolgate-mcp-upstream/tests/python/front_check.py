#!/usr/bin/env python3
"""The official MCP Python SDK client against a toolgate that serves upstream tools.

Usage: front_check.py URL API_KEY direct|meta

direct: the upstream tools are listed as MCP tools of their own; one is called by name;
        a tool added upstream (weather__add_late_tool) reaches this client as
        notifications/tools/list_changed and then appears in tools/list.
meta:   only the three meta-tools are listed; the upstream tool is reached through
        execute_tool, its envelope in structuredContent.
Prints one line per check; exits 0 when all pass, 1 at the first failure.
"""

from __future__ import annotations

import sys
from typing import Any

import anyio
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client


def expect(condition: bool, what: str, got: Any = None) -> None:
    if not condition:
        print(f"FAIL {what}: {got!r}"[:800])
        sys.exit(1)
    print(f"  ok  {what}")


async def main(url: str, key: str, mode: str) -> None:
    changed = anyio.Event()

    async def on_message(message: Any) -> None:
        root = getattr(message, "root", message)
        if getattr(root, "method", "") == "notifications/tools/list_changed":
            changed.set()

    http = create_mcp_http_client(headers={"Authorization": f"Bearer {key}"})
    async with http, streamable_http_client(url, http_client=http) as (read, write):
        async with ClientSession(read, write, message_handler=on_message) as session:
            await session.initialize()
            names = sorted(t.name for t in (await session.list_tools()).tools)
            if mode == "direct":
                expect("weather__get_forecast" in names, "the upstream tool is listed by its namespaced name", names)
                result = await session.call_tool("weather__get_forecast", {"city": "Oslo", "days": 2})
                envelope = result.structured_content or {}
                expect(envelope.get("success") is True, "a direct call succeeds", envelope)
                expect(envelope["result"]["city"] == "Oslo", "the upstream's structured result is the result", envelope)
                added = await session.call_tool("weather__add_late_tool", {})
                expect((added.structured_content or {}).get("success") is True, "the upstream adds a tool", added)
                with anyio.fail_after(10):
                    await changed.wait()
                expect(True, "notifications/tools/list_changed reached the client")
                names = sorted(t.name for t in (await session.list_tools()).tools)
                expect("weather__late_tool" in names, "the new tool is listed", names)
            else:
                expect(names == ["execute_tool", "get_skill_guide", "get_tool_schema"], "meta mode lists the meta-tools", names)
                result = await session.call_tool(
                    "execute_tool",
                    {"tool_name": "weather__get_forecast", "parameters": {"city": "Oslo", "days": 1}},
                )
                envelope = result.structured_content or {}
                expect(envelope.get("success") is True, "execute_tool reaches the upstream tool", envelope)
                expect(envelope["metadata"]["tool"] == "weather__get_forecast", "the envelope names the tool", envelope)


if __name__ == "__main__":
    anyio.run(main, *sys.argv[1:4])
