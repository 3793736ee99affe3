#!/usr/bin/env python3
"""An upstream MCP server written with the official Python SDK (`mcp` 2.x, MCPServer), over stdio.

The Rust tests of mcp-upstream start it as a child process and register its tools in a
gateway. It has one tool per behaviour the tests check. MARKER_DIR (environment) is a
folder where tools leave files the tests read (a call that was cancelled, a process start).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Annotated, Any

import anyio
from pydantic import BaseModel, Field

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.prompts.base import Prompt
from mcp.server.mcpserver.utilities.types import Image
from mcp.types import Completion, SamplingMessage, TextContent

MARKERS = Path(os.environ.get("MARKER_DIR", "."))
server = MCPServer("weather-upstream")

# A 2x2 PNG (red, green / blue, white), so the image path carries real bytes.
PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000002000000020802000000fdd49a73"
    "0000001649444154789c63f8cfc0f01f0418fe83c0ffff0c0c0c00003c0f07fa7e9d1b"
    "2c0000000049454e44ae426082"
)

(MARKERS / f"started-{os.getpid()}").write_text("started")


@server.tool()
def get_forecast(city: str, days: Annotated[int, Field(ge=1, le=7)] = 1) -> dict[str, Any]:
    """Forecast for a city, one entry per day (1 to 7 days)."""
    return {"city": city, "days": [{"day": i + 1, "high_c": 20 + i} for i in range(days)]}


@server.tool()
def fail_always(reason: str) -> str:
    """Always fails with the given reason."""
    raise ToolError(f"the weather service refused: {reason}")


@server.tool()
async def count_slowly(steps: Annotated[int, Field(ge=1, le=20)], ctx: Context) -> dict[str, int]:
    """Counts to `steps`, reporting progress at each step."""
    for i in range(steps):
        await ctx.report_progress(i + 1, steps, f"step {i + 1} of {steps}")
        await anyio.sleep(0.05)
    return {"counted": steps}


@server.tool()
async def wait_forever(label: str) -> str:
    """Waits until cancelled; leaves a marker file when it is."""
    try:
        await anyio.sleep(3600)
    finally:
        with anyio.CancelScope(shield=True):
            (MARKERS / f"cancelled-{label}").write_text("cancelled")
    return "never"


@server.tool()
async def crash_now() -> str:
    """Exits the whole process in the middle of the call."""
    await anyio.sleep(0.1)
    os._exit(3)


@server.tool()
async def hold_write(label: str) -> str:
    """A long write: leaves a marker once it has begun, then waits (the tests kill the process)."""
    (MARKERS / f"began-{label}").write_text("began")
    await anyio.sleep(3600)
    return "written"


@server.tool()
async def hold_read(label: str) -> str:
    """A long read: leaves a marker once it has begun, then waits (the tests kill the process)."""
    (MARKERS / f"began-{label}").write_text("began")
    await anyio.sleep(3600)
    return "read"


class Name(BaseModel):
    name: str


@server.tool()
async def ask_name(ctx: Context) -> dict[str, Any]:
    """Asks the user for a name (elicitation) and returns the answer."""
    result = await ctx.elicit("What is your name?", schema=Name)
    return {"action": result.action, "name": result.data.name if result.action == "accept" else None}


@server.tool()
def echo_meta(ctx: Context) -> dict[str, Any]:
    """Returns the request's _meta and environment facts, for identity checks."""
    params = ctx.request_context.params or {}
    meta = params.get("_meta") if isinstance(params, dict) else None
    return {"meta": json.loads(json.dumps(meta, default=str)) if meta else None}


@server.tool(structured_output=False)
def draw_swatch() -> list[Any]:
    """Returns a small PNG swatch with a caption."""
    return ["a 2x2 swatch", Image(data=PNG, format="png")]


@server.tool()
def lookup_account(user_id: str) -> str:
    """Has a parameter the gateway must refuse to publish (user_id)."""
    return user_id


def late_tool(word: str) -> str:
    """A tool that appears only after add_late_tool."""
    return word.upper()


@server.tool()
async def add_late_tool(ctx: Context) -> str:
    """Registers late_tool and tells the client the list changed."""
    server.add_tool(late_tool)
    await ctx.request_context.session.send_tool_list_changed()
    return "added"


# The rest of the MCP surface, which toolgate federates: a prompt with an argument, a
# resource, a resource template, completions, and tools that sample, list roots and log.


@server.prompt()
def summary(city: str) -> str:
    """Asks for a weather summary of a city."""
    return f"Summarise the weather in {city}."


@server.resource("weather://stations", mime_type="text/plain")
def stations() -> str:
    """The weather stations."""
    return "Oslo Blindern, Bergen Florida"


@server.resource("weather://city/{name}", mime_type="text/plain")
def city_report(name: str) -> str:
    """The report of one city."""
    return f"report of {name}"


@server.completion()
async def complete(ref: Any, argument: Any, context: Any) -> Completion | None:
    cities = ["Oslo", "Bergen", "Osaka"]
    return Completion(values=[c for c in cities if c.startswith(argument.value)])


@server.tool()
async def ask_model(question: str, ctx: Context) -> str:
    """Asks the client's model (sampling) and returns its text."""
    result = await ctx.request_context.session.create_message(
        messages=[SamplingMessage(role="user", content=TextContent(type="text", text=question))], max_tokens=20
    )
    return result.content.text if isinstance(result.content, TextContent) else "no text"


@server.tool()
async def list_my_roots(ctx: Context) -> list[str]:
    """Returns the client's roots."""
    result = await ctx.request_context.session.list_roots()
    return [str(root.uri) for root in result.roots]


@server.tool()
async def ask_model_about_roots(ctx: Context) -> dict[str, Any]:
    """Asks the client's model (sampling), then lists the client's roots: two requests in one call."""
    sampled = await ctx.request_context.session.create_message(
        messages=[SamplingMessage(role="user", content=TextContent(type="text", text="Which roots?"))], max_tokens=20
    )
    roots = await ctx.request_context.session.list_roots()
    text = sampled.content.text if isinstance(sampled.content, TextContent) else "no text"
    return {"model": text, "roots": [str(root.uri) for root in roots.roots]}


@server.tool()
async def log_twice(ctx: Context) -> str:
    """Sends a debug and an info log message."""
    await ctx.debug("debug line")
    await ctx.info("info line")
    return "logged"


def late(topic: str) -> str:
    """A prompt that appears only after add_late_prompt."""
    return f"late {topic}"


@server.tool()
async def add_late_prompt(ctx: Context) -> str:
    """Registers the prompt `late` and tells the client the prompt list changed."""
    server.add_prompt(Prompt.from_function(late))
    await ctx.request_context.session.send_prompt_list_changed()
    return "added"


if __name__ == "__main__":
    server.run("stdio")
    sys.exit(0)
