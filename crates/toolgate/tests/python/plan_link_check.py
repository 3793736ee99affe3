"""A full itinerary plan as a resource link, through the official MCP Python SDK (`mcp` 2.x).

Against `toolgate serve --demo`:
  1. at 2025-11-25, alice's `plan_itinerary` result carries the summary text and a
     `resource_link` block to `toolgate://plans/<plan_id>`; the template is listed by
     `resources/templates/list`; `resources/read` of the link gives the whole plan
     (every proposal, the top combinations, the request), more than the summary;
  2. bob reading alice's link, and anyone reading a plan that never existed, gets
     "resource not found" (-32002) and no plan;
  3. at 2026-07-28 (`server/discover`, the SDK's `Client`) alice reads the same link.

Usage: plan_link_check.py URL ALICE_KEY BOB_KEY
"""

import json
import sys
from typing import Any

import anyio
from mcp import Client, ClientSession, MCPError, types
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

RESOURCE_NOT_FOUND = -32002

PLAN = {
    "destination": "Shanghai",
    "candidates": {
        "outbound": [
            {"id": "MU5101", "mode": "flight", "price": 1200, "duration_minutes": 135,
             "depart": "2027-03-10T08:00", "arrive": "2027-03-10T10:15", "class": "economy"},
            {"id": "G101", "mode": "train", "price": 553, "duration_minutes": 290,
             "depart": "2027-03-10T07:00", "arrive": "2027-03-10T11:50", "class": "second"},
        ],
        "hotels": [
            {"id": "H1", "price_per_night": 550, "check_in": "2027-03-10", "check_out": "2027-03-12"},
            {"id": "H2", "price_per_night": 380, "check_in": "2027-03-10", "check_out": "2027-03-12"},
        ],
        "return": [
            {"id": "G2", "mode": "train", "price": 553, "duration_minutes": 290,
             "depart": "2027-03-12T15:00", "arrive": "2027-03-12T19:50", "class": "second"},
        ],
    },
    "scores": {"transport_scores": {"MU5101": 8, "G101": 6, "G2": 7}, "hotel_scores": {"H1": 6, "H2": 7}},
}


class CheckFailed(Exception):
    pass


def expect(condition: bool, what: str, got: Any = None) -> None:
    if not condition:
        detail = "" if got is None else f": got {json.dumps(got, default=str)[:800]}"
        raise CheckFailed(f"{what}{detail}")
    print(f"  ok  {what}")


async def session_of(url: str, key: str, body):
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {key}"})
    async with http, streamable_http_client(url, http_client=http) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            return await body(session)


async def not_found(session: ClientSession, uri: str) -> Any:
    try:
        got = await session.read_resource(uri)
    except MCPError as e:
        return e.error.code
    return got.model_dump()


async def main(url: str, alice: str, bob: str) -> None:
    print("--- 2025-11-25: the plan's result links to the full plan")

    async def plan(session: ClientSession):
        result = await session.call_tool("execute_tool", {"tool_name": "plan_itinerary", "parameters": PLAN})
        templates = await session.list_resource_templates()
        return result, templates

    result, templates = await session_of(url, alice, plan)
    expect(not result.is_error, "plan_itinerary succeeded", result.model_dump())
    summary = result.structured_content["result"]
    plan_id = summary["plan_id"]
    texts = [c for c in result.content if isinstance(c, types.TextContent)]
    links = [c for c in result.content if isinstance(c, types.ResourceLink)]
    expect(len(texts) == 1 and plan_id in texts[0].text, "the summary text names the plan", [c.model_dump() for c in result.content])
    expect(len(links) == 1, "one resource_link block", [c.model_dump() for c in result.content])
    uri = str(links[0].uri)
    expect(uri == f"toolgate://plans/{plan_id}", "the link is toolgate://plans/<plan_id>", uri)
    expect(links[0].mime_type == "application/json", "the link says application/json", links[0].model_dump())
    listed = [t.uri_template for t in templates.resource_templates]
    expect("toolgate://plans/{plan_id}" in listed, "resources/templates/list has toolgate://plans/{plan_id}", listed)

    async def read(session: ClientSession):
        return await session.read_resource(uri)

    contents = (await session_of(url, alice, read)).contents
    expect(len(contents) == 1 and contents[0].mime_type == "application/json", "one JSON content", [c.model_dump() for c in contents])
    full = json.loads(contents[0].text)
    expect(full["plan_id"] == plan_id, "the resource is that plan", full.get("plan_id"))
    expect(len(full["proposals"]) == len(summary["proposals"]) and "top" in full and full["request"]["destination"] == "Shanghai",
           "the full plan: proposals, top combinations and the request", list(full))
    expect(len(contents[0].text) > len(json.dumps(summary)), "the full plan is larger than the summary", len(contents[0].text))

    print("--- another user, and a plan that never existed: not found")
    code = await session_of(url, bob, lambda s: not_found(s, uri))
    expect(code == RESOURCE_NOT_FOUND, "bob reading alice's plan gets -32002", code)
    code = await session_of(url, alice, lambda s: not_found(s, "toolgate://plans/plan_00000000000000000000000000000000"))
    expect(code == RESOURCE_NOT_FOUND, "a plan that never existed gets -32002", code)
    code = await session_of(url, alice, lambda s: not_found(s, "toolgate://plans/../../etc/passwd"))
    expect(code == RESOURCE_NOT_FOUND, "a malformed plan id gets -32002", code)

    print("--- 2026-07-28: the same link read by the modern client")
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {alice}"})
    async with http:
        async with Client(streamable_http_client(url, http_client=http)) as client:
            version = client.session.protocol_version
            got = await client.read_resource(uri)
    expect(version == "2026-07-28", "the protocol is 2026-07-28", version)
    expect(json.loads(got.contents[0].text)["plan_id"] == plan_id, "the full plan is read at 2026-07-28", got.model_dump())
    print("PASS")


if __name__ == "__main__":
    try:
        anyio.run(main, sys.argv[1], sys.argv[2], sys.argv[3])
    except CheckFailed as failure:
        print(f"FAIL {failure}")
        sys.exit(1)
