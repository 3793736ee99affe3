#!/usr/bin/env python3
"""The official MCP Python SDK client against `toolgate serve` with a declared `[[domains]]` entry.

Usage: byo_check.py URL API_KEY DOMAIN

The key is scoped to DOMAIN (the `[[domains]]` name). Checks that discovery shows exactly that
domain's two tools, tagged with it, then writes a note through the write tool and reads it back
through the read tool, both reaching the real HTTP API behind toolgate. Prints one line per
check and, last, `RESULT <json>` with the two envelopes' results; exits 1 at the first failure.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import anyio
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client


def expect(condition: bool, what: str, got: Any = None) -> None:
    if not condition:
        print(f"FAIL {what}: {got!r}"[:1200])
        sys.exit(1)
    print(f"  ok  {what}")


async def execute(session: ClientSession, tool: str, parameters: dict[str, Any]) -> dict[str, Any]:
    result = await session.call_tool("execute_tool", {"tool_name": tool, "parameters": parameters})
    return result.structured_content or {}


async def main(url: str, key: str, domain: str) -> None:
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {key}"})
    async with http, streamable_http_client(url, http_client=http) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            names = sorted(t.name for t in (await session.list_tools()).tools)
            expect(names == ["execute_tool", "get_skill_guide", "get_tool_schema"], "the meta-tools are listed", names)

            found = (await session.call_tool("get_tool_schema", {"limit": 50})).structured_content or {}
            tools = found.get("result", {}).get("tools", [])
            expect(
                sorted(t["name"] for t in tools) == ["query_notes", "update_notes"],
                "a key scoped to the declared name sees exactly its tools",
                found,
            )
            expect(all(t["metadata"]["domain"] == domain for t in tools), "their domain is the declared name", tools)

            wrote = await execute(session, "update_notes", {"op": "create_note", "text": "call the plumber", "pinned": False})
            expect(wrote.get("success") is True, "the write op succeeds", wrote)
            expect(wrote["result"]["status"] == 201, "the API created the note", wrote)
            note_id = wrote["result"]["payload"]["id"]

            got = await execute(session, "query_notes", {"op": "get_note", "note_id": note_id})
            expect(got.get("success") is True, "the read op succeeds", got)
            expect(got["result"]["payload"]["text"] == "call the plumber", "the read returns what was written", got)
            expect(got["metadata"]["tool"] == "query_notes", "the envelope names the tool", got)

            travel = await execute(session, "query_weather", {"city": "Oslo"})
            expect(travel.get("success") is False, "a tool of another domain is refused to the scoped key", travel)
            print("RESULT " + json.dumps({"write": wrote["result"], "read": got["result"]}))


if __name__ == "__main__":
    anyio.run(main, *sys.argv[1:4])
