"""An upstream's elicitation passed through toolgate to the official MCP Python SDK (`mcp` 2.x).

Against `toolgate serve --demo` with one upstream (mcp-upstream's
tests/python/upstream_server.py, itself written with the Python SDK) whose
`ask_name` tool asks its client "What is your name?":
  1. a client whose user accepts with a name is asked that question once (the
     upstream's message and its schema), and the upstream's result carries the name;
  2. a client whose user declines is asked once and the upstream hears "decline";
  3. a client without the elicitation capability is not asked, and the upstream
     does not get a name;
  4. at 2026-07-28 the SDK's `Client` (server/discover) is asked the same question
     once and the upstream gets its answer;
  5. at 2026-07-28 the upstream's sampling and roots requests reach that `Client` as
     `input_required` rounds: `ask_model` (one request), `list_my_roots` (one) and
     `ask_model_about_roots` (two in one call: each asked once, the second round's retry
     carrying the first answer) end with the client's own answers.

Usage: upstream_elicit_check.py URL KEY
"""

import json
import sys
from typing import Any

import anyio
from mcp import Client, ClientSession, types
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client


class CheckFailed(Exception):
    pass


def expect(condition: bool, what: str, got: Any = None) -> None:
    if not condition:
        detail = "" if got is None else f": got {json.dumps(got, default=str)[:800]}"
        raise CheckFailed(f"{what}{detail}")
    print(f"  ok  {what}")


async def ask(url: str, key: str, answer: str | None) -> tuple[dict, list]:
    asked: list = []

    async def elicit(_context: Any, params: Any) -> types.ElicitResult:
        asked.append(params)
        content = {"name": "Ada"} if answer == "accept" else None
        return types.ElicitResult(action=answer, content=content)

    http = create_mcp_http_client(headers={"Authorization": f"Bearer {key}"})
    async with http, streamable_http_client(url, http_client=http) as (read, write):
        callback = elicit if answer is not None else None
        async with ClientSession(read, write, elicitation_callback=callback) as session:
            await session.initialize()
            result = await session.call_tool("execute_tool", {"tool_name": "weather__ask_name", "parameters": {}})
            return result.structured_content, asked


async def main(url: str, key: str) -> None:
    print("--- the user accepts with a name")
    envelope, asked = await ask(url, key, "accept")
    expect(len(asked) == 1, "the user was asked once", [str(a) for a in asked])
    expect(asked[0].message == "What is your name?", "with the upstream's own question", asked[0].message)
    schema = asked[0].requested_schema
    expect("name" in schema.get("properties", {}), "and its schema (a name)", schema)
    expect(envelope["success"] is True and envelope["result"]["action"] == "accept" and envelope["result"]["name"] == "Ada",
           "the upstream got the answer", envelope)

    print("--- the user declines")
    envelope, asked = await ask(url, key, "decline")
    expect(len(asked) == 1, "the user was asked once")
    expect(envelope["result"].get("action") == "decline" and envelope["result"].get("name") is None,
           "the upstream heard decline", envelope)

    print("--- a client that cannot be asked")
    envelope, asked = await ask(url, key, None)
    expect(asked == [], "nobody was asked")
    expect((envelope.get("result") or {}).get("name") is None, "the upstream got no name", envelope)

    print("--- 2026-07-28: the SDK's Client (server/discover) answers the upstream's question")
    asked = []

    async def elicit(_context: Any, params: Any) -> types.ElicitResult:
        asked.append(params)
        return types.ElicitResult(action="accept", content={"name": "Ada"})

    http = create_mcp_http_client(headers={"Authorization": f"Bearer {key}"})
    async with http:
        async with Client(streamable_http_client(url, http_client=http), elicitation_callback=elicit) as client:
            version = client.session.protocol_version
            result = await client.call_tool("execute_tool", {"tool_name": "weather__ask_name", "parameters": {}})
    expect(version == "2026-07-28", "the protocol is 2026-07-28", version)
    expect(len(asked) == 1 and asked[0].message == "What is your name?", "the user was asked the upstream's question once", [str(a) for a in asked])
    envelope = result.structured_content
    expect(envelope["success"] is True and envelope["result"].get("name") == "Ada", "the upstream got the answer", envelope)

    print("--- 2026-07-28: the upstream's sampling and roots requests, answered by the Client")
    sampled: list = []
    listed: list = []

    async def sample(_context: Any, params: Any) -> types.CreateMessageResult:
        sampled.append(params)
        return types.CreateMessageResult(role="assistant", content=types.TextContent(type="text", text="sunny"), model="m")

    async def roots(_context: Any) -> types.ListRootsResult:
        listed.append(True)
        return types.ListRootsResult(roots=[types.Root(uri="file:///srv/forecasts", name="forecasts")])

    http = create_mcp_http_client(headers={"Authorization": f"Bearer {key}"})
    async with http:
        async with Client(streamable_http_client(url, http_client=http), sampling_callback=sample, list_roots_callback=roots) as client:
            version = client.session.protocol_version
            model = await client.call_tool("execute_tool", {"tool_name": "weather__ask_model", "parameters": {"question": "Weather?"}})
            mine = await client.call_tool("execute_tool", {"tool_name": "weather__list_my_roots", "parameters": {}})
            sampled_before, listed_before = len(sampled), len(listed)
            both = await client.call_tool("execute_tool", {"tool_name": "weather__ask_model_about_roots", "parameters": {}})
    expect(version == "2026-07-28", "the protocol is 2026-07-28", version)
    envelope = model.structured_content
    expect(envelope["success"] is True and "sunny" in json.dumps(envelope["result"]), "sampling: the upstream got the client's text", envelope)
    expect(len(sampled) >= 1 and sampled[0].messages[0].content.text == "Weather?", "with the upstream's own message", [str(s) for s in sampled])
    envelope = mine.structured_content
    expect(envelope["success"] is True and "file:///srv/forecasts" in str(envelope["result"]), "roots: the upstream got the client's roots", envelope)
    envelope = both.structured_content
    expect(envelope["success"] is True and "sunny" in json.dumps(envelope["result"]) and "file:///srv/forecasts" in json.dumps(envelope["result"]),
           "two requests in one call: both answers reached the upstream", envelope)
    expect(len(sampled) - sampled_before == 1 and len(listed) - listed_before == 1,
           "and each was asked of the client once", [len(sampled) - sampled_before, len(listed) - listed_before])
    print("PASS")


if __name__ == "__main__":
    try:
        anyio.run(main, sys.argv[1], sys.argv[2])
    except CheckFailed as failure:
        print(f"FAIL {failure}")
        sys.exit(1)
