#!/usr/bin/env python3
"""An upstream MCP server (the official Python SDK, `mcp` 2.x, MCPServer) over stdio whose
tool listing marks two tools as able to run as tasks (`execution.taskSupport`, 2025-11-25):
`slow_report` ("optional") and `hold_report` ("required"); `echo_word` has no `execution`.

The SDK runs every call plainly (it dispatches no task methods); toolgate wraps the proxied
call in a task of its own. MARKER_DIR (environment) is where `hold_report` leaves a file when
its call is cancelled (the upstream heard `notifications/cancelled`).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Any

import anyio
from pydantic import Field

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolExecution

MARKERS = Path(os.environ.get("MARKER_DIR", "."))
TASK_SUPPORT = {"slow_report": "optional", "hold_report": "required"}


class TaskServer(MCPServer):
    async def list_tools(self):
        tools = await super().list_tools()
        for tool in tools:
            if tool.name in TASK_SUPPORT:
                tool.execution = ToolExecution(task_support=TASK_SUPPORT[tool.name])
        return tools


server = TaskServer("report-upstream")


@server.tool()
async def slow_report(city: str, ms: Annotated[int, Field(ge=0, le=10_000)] = 300) -> dict[str, Any]:
    """Writes a report on a city, taking `ms` milliseconds."""
    await anyio.sleep(ms / 1000)
    return {"city": city, "report": f"the report on {city}", "took_ms": ms}


@server.tool()
async def hold_report(label: str) -> str:
    """Works until cancelled; leaves a marker file when it is."""
    try:
        await anyio.sleep(3600)
    finally:
        with anyio.CancelScope(shield=True):
            (MARKERS / f"cancelled-{label}").write_text("cancelled")
    return "never"


@server.tool()
def echo_word(word: str) -> dict[str, str]:
    """Returns the word, upper-cased."""
    return {"echo": word.upper()}


if __name__ == "__main__":
    server.run()
