#!/usr/bin/env python3
"""Interop check: the official MCP Python SDK (`pip install mcp`) against a toolgate MCP server.

Usage:
  client_check.py [options] http URL API_KEY      streamable HTTP with `Authorization: Bearer API_KEY`
  client_check.py [options] stdio COMMAND [ARG...]  spawn COMMAND and speak MCP over its stdin/stdout

The server must expose the meta-tools (the default exposure) to a caller who may use
OK_TOOL but not DENIED_TOOL. The defaults fit `cargo run -p toolgate-mcp --example stdio_demo`
and the Rust tests (a `member` key); other deployments pass their own tools and parameters:

  --ok-tool query_weather --ok-params '{"city": "Oslo"}'
  --invalid-params '{"city": "Oslo", "days": 99}'     (parameters OK_TOOL must refuse)
  --denied-tool delete_account --denied-params '{"account": "acme"}'
  --progress-tool count_steps --progress-params '{"steps": 3}'   ('' to skip the progress check)
  --mode legacy|auto   legacy: the `initialize` handshake; auto: `server/discover` first (2026-07-28
                       lifecycle) with the SDK's fallback

Checks: connect, read the instructions (the catalog), list the tools (three meta-tools, each
with an outputSchema and annotations), call get_tool_schema and execute_tool (a success, an
INVALID_PARAMS and a PERMISSION_DENIED), each time checking structuredContent (the envelope)
and isError; progress notifications; the `catalog` prompt. Prints one line per check and exits
0 when all pass, 1 at the first failure.
"""

from __future__ import annotations

import argparse
import re
import json
import sys
from typing import Any

import anyio
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

META_TOOLS = ["execute_tool", "get_skill_guide", "get_tool_schema"]
ENVELOPE_KEYS = ["success", "result", "error", "signals", "metadata"]


class CheckFailed(Exception):
    pass


def expect(condition: bool, what: str, got: Any = None) -> None:
    if not condition:
        detail = "" if got is None else f": got {json.dumps(got, default=str)[:600]}"
        raise CheckFailed(f"{what}{detail}")
    print(f"  ok  {what}")


def envelope(result: Any) -> dict[str, Any]:
    """The envelope in structuredContent, after checking its shape and the text content beside it."""
    content = result.structured_content
    if not isinstance(content, dict) or any(k not in content for k in ENVELOPE_KEYS):
        raise CheckFailed(f"structuredContent is not an envelope: {json.dumps(content, default=str)[:600]}")
    if not result.content or result.content[0].type != "text" or not result.content[0].text:
        raise CheckFailed(f"the result has no text content: {result.content}")
    return content


async def run_checks(session: ClientSession, args: argparse.Namespace) -> None:
    if args.mode == "legacy":
        await session.initialize()
    else:
        try:
            await session.discover()
        except Exception as error:  # the SDK's policy: fall back to the handshake
            print(f"  ..  discover refused ({error}); falling back to initialize")
            await session.initialize()
    print(f"  ..  protocol version {session.protocol_version}")

    instructions = session.instructions or ""
    # The catalog lists tool names by domain (`- weather: query_weather, ...`).
    named = lambda tool: re.search(rf"(?<![\w-]){re.escape(tool)}(?![\w-])", instructions) is not None
    expect(named(args.ok_tool), f"the instructions (catalog) name `{args.ok_tool}`", instructions[-600:])
    expect(not named(args.denied_tool), f"the instructions do not name `{args.denied_tool}`")

    listed = await session.list_tools()
    names = sorted(tool.name for tool in listed.tools)
    expect(names == META_TOOLS, "tools/list answers the three meta-tools", names)
    for tool in listed.tools:
        expect(bool(tool.output_schema), f"`{tool.name}` has an outputSchema")
        expect(tool.annotations is not None and tool.annotations.read_only_hint is not None, f"`{tool.name}` has annotations")

    schema = await session.call_tool("get_tool_schema", {"tool_name": args.ok_tool})
    env = envelope(schema)
    expect(schema.is_error is False and env["success"] is True, "get_tool_schema succeeds (envelope in structuredContent, text content)", env)
    expect(env["result"].get("name") == args.ok_tool, "get_tool_schema answers the tool's contract", env["result"])

    ok = await session.call_tool("execute_tool", {"tool_name": args.ok_tool, "parameters": json.loads(args.ok_params)})
    env = envelope(ok)
    expect(ok.is_error is False and env["success"] is True, "execute_tool succeeds", env)
    expect(env["metadata"].get("tool") == args.ok_tool, "the envelope's metadata names the tool", env["metadata"])

    bad = await session.call_tool("execute_tool", {"tool_name": args.ok_tool, "parameters": json.loads(args.invalid_params)})
    env = envelope(bad)
    expect(bad.is_error is True and env["success"] is False, "invalid parameters set isError", env)
    expect(env["error"]["code"] == "INVALID_PARAMS", "the error code is INVALID_PARAMS", env["error"])

    denied = await session.call_tool("execute_tool", {"tool_name": args.denied_tool, "parameters": json.loads(args.denied_params)})
    env = envelope(denied)
    expect(denied.is_error is True, "a forbidden tool sets isError", env)
    expect(env["error"]["code"] == "PERMISSION_DENIED", "the error code is PERMISSION_DENIED", env["error"])

    if args.progress_tool:
        seen: list[tuple[float, float | None, str | None]] = []

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            seen.append((progress, total, message))

        result = await session.call_tool(
            "execute_tool",
            {"tool_name": args.progress_tool, "parameters": json.loads(args.progress_params)},
            progress_callback=on_progress,
        )
        expect(envelope(result)["success"] is True, f"`{args.progress_tool}` succeeds")
        expect(len(seen) > 0, "progress notifications arrive", seen)
        expect(all(b[0] > a[0] for a, b in zip(seen, seen[1:])), "progress increases", seen)

    prompts = await session.list_prompts()
    expect("catalog" in [p.name for p in prompts.prompts], "prompts/list has the catalog", [p.name for p in prompts.prompts])


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ok-tool", default="query_weather")
    parser.add_argument("--ok-params", default='{"city": "Oslo"}')
    parser.add_argument("--invalid-params", default='{"city": "Oslo", "days": 99}')
    parser.add_argument("--denied-tool", default="delete_account")
    parser.add_argument("--denied-params", default='{"account": "acme"}')
    parser.add_argument("--progress-tool", default="count_steps")
    parser.add_argument("--progress-params", default='{"steps": 3}')
    parser.add_argument("--mode", choices=["legacy", "auto"], default="legacy")
    parser.add_argument("transport", choices=["http", "stdio"])
    parser.add_argument("target", nargs=argparse.REMAINDER)
    args = parser.parse_args()

    print(f"client_check: {args.transport} ({args.mode})")
    try:
        with anyio.fail_after(60):
            if args.transport == "http":
                if len(args.target) != 2:
                    parser.error("http needs URL and API_KEY")
                url, key = args.target
                http = create_mcp_http_client(headers={"Authorization": f"Bearer {key}"})
                async with http, streamable_http_client(url, http_client=http) as (read, write):
                    async with ClientSession(read, write) as session:
                        await run_checks(session, args)
            else:
                if not args.target:
                    parser.error("stdio needs a COMMAND")
                params = StdioServerParameters(command=args.target[0], args=args.target[1:])
                async with stdio_client(params) as (read, write):
                    async with ClientSession(read, write) as session:
                        await run_checks(session, args)
    except CheckFailed as failure:
        print(f"FAIL {failure}")
        return 1
    print(f"PASS {args.transport} ({args.mode})")
    return 0


if __name__ == "__main__":
    sys.exit(anyio.run(main))
