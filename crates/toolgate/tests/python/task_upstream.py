#!/usr/bin/env python3
"""An upstream MCP server (the official Python SDK, `mcp` 2.x, MCPServer) whose
tool listing marks two tools as able to run as tasks (`execution.taskSupport`, 2025-11-25):
`slow_report` ("optional") and `hold_report` ("required"); `echo_word` has no `execution`.

The SDK runs every call plainly (it dispatches no task methods); toolgate wraps the proxied
call in a task of its own. MARKER_DIR (environment) is where `hold_report` leaves a file when
its call is cancelled (the upstream heard `notifications/cancelled`).

Over stdio by default; with `--http`, over streamable HTTP (answers as event streams, the SDK's
default) on 127.0.0.1 at a port the system picks, printing `listening <port>` once it accepts;
with `--http-json` the same with every answer a plain JSON body (`json_response=True`).
"""

from __future__ import annotations

import os
import socket
import sys
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
    """Works until cancelled; leaves a marker file when it starts and when it is cancelled."""
    (MARKERS / f"started-{label}").write_text("started")
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


async def serve_http(json_response: bool) -> None:
    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    uv = uvicorn.Server(uvicorn.Config(server.streamable_http_app(json_response=json_response), log_level="warning"))

    async def announce() -> None:
        while not uv.started:
            await anyio.sleep(0.02)
        print(f"listening {sock.getsockname()[1]}", flush=True)

    async with anyio.create_task_group() as tg:
        tg.start_soon(announce)
        await uv.serve(sockets=[sock])


if __name__ == "__main__":
    if sys.argv[1:] in (["--http"], ["--http-json"]):
        anyio.run(serve_http, sys.argv[1] == "--http-json")
    else:
        server.run()
