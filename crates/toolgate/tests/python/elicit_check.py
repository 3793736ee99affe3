"""Confirmation by elicitation through the official MCP Python SDK (`mcp` 2.x).

Against `toolgate serve --demo` as alice, whose Shenzhen trip is APPROVED:
  1. a session without the elicitation capability gets the `need_confirm`
     signal and the order stays APPROVED;
  2. a session whose user declines is asked once (the question names the
     trip and says it cannot be undone), the result says nothing changed,
     and the order stays APPROVED;
  3. a session whose user accepts is asked once and the order is CANCELLED
     in the same call;
then, as bob (a manager whose Beijing trip is APPROVED), at 2026-07-28,
where the server may not send requests: the question comes as an
`input_required` result that the SDK's `Client` answers by retrying the
call with `inputResponses`; a decline keeps the order, an accept cancels it.
Every state is read back through query_travel_order (the database).

Usage: elicit_check.py URL ALICE_KEY BOB_KEY
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


async def with_session(url: str, key: str, answer: str | None, body) -> tuple[Any, list]:
    """Run `body(session)` in a session whose user answers `answer` (None: no capability)."""
    asked: list = []

    async def elicit(_context: Any, params: Any) -> types.ElicitResult:
        asked.append(params)
        content = {"confirm": True} if answer == "accept" else None
        return types.ElicitResult(action=answer, content=content)

    http = create_mcp_http_client(headers={"Authorization": f"Bearer {key}"})
    async with http, streamable_http_client(url, http_client=http) as (read, write):
        callback = elicit if answer is not None else None
        async with ClientSession(read, write, elicitation_callback=callback) as session:
            await session.initialize()
            return await body(session), asked


async def execute(session: ClientSession, tool: str, params: dict) -> dict:
    result = await session.call_tool("execute_tool", {"tool_name": tool, "parameters": params})
    return result.structured_content


async def approved_to(session: ClientSession, city: str) -> dict:
    listed = await execute(session, "query_travel_order", {"status": "APPROVED", "page_size": 50})
    orders = [o for o in listed["result"]["orders"] if o["destination"] == city]
    expect(len(orders) == 1, f"one APPROVED trip to {city}", listed["result"])
    return orders[0]


async def modern(url: str, key: str, answer: str, tool: str, params: dict) -> tuple[dict, list, str]:
    """One call at 2026-07-28 (`server/discover`, no `initialize`) by a client whose user answers `answer`."""
    asked: list = []

    async def elicit(_context: Any, params: Any) -> types.ElicitResult:
        asked.append(params)
        content = {"confirm": True} if answer == "accept" else None
        return types.ElicitResult(action=answer, content=content)

    http = create_mcp_http_client(headers={"Authorization": f"Bearer {key}"})
    async with http:
        async with Client(streamable_http_client(url, http_client=http), elicitation_callback=elicit) as client:
            version = client.session.protocol_version
            result = await client.call_tool("execute_tool", {"tool_name": tool, "parameters": params})
            return result.structured_content, asked, version


async def status_of(url: str, key: str, order_id: int) -> str:
    async def read(session: ClientSession) -> str:
        found = await execute(session, "query_travel_order", {"order_id": order_id})
        return found["result"]["status"] if "status" in found["result"] else found["result"]["order"]["status"]

    status, _ = await with_session(url, key, None, read)
    return status


async def main(url: str, key: str, bob: str) -> None:
    order, _ = await with_session(url, key, None, lambda s: approved_to(s, "Shenzhen"))
    order_id = order["order_id"]
    cancel = lambda s: execute(s, "cancel_travel_order", {"order_id": order_id})

    print("--- a client without elicitation: the signal, as before")
    envelope, asked = await with_session(url, key, None, cancel)
    expect(asked == [], "nobody was asked")
    expect([s["kind"] for s in envelope["signals"]] == ["need_confirm"], "a need_confirm signal", envelope)
    expect(await status_of(url, key, order_id) == "APPROVED", "the order is still APPROVED")

    print("--- the user declines")
    envelope, asked = await with_session(url, key, "decline", cancel)
    expect(len(asked) == 1, "the user was asked once", [str(a) for a in asked])
    message = asked[0].message
    expect("Shenzhen" in message and "cannot be undone" in message, "the question names the trip and says it cannot be undone", message)
    expect(envelope["result"]["done"] is False and envelope["result"]["confirmation"] == "declined", "the result says the user declined", envelope)
    expect(envelope["signals"] == [], "no signal left for the model to act on", envelope)
    expect(await status_of(url, key, order_id) == "APPROVED", "the order is still APPROVED")

    print("--- the user accepts")
    envelope, asked = await with_session(url, key, "accept", cancel)
    expect(len(asked) == 1, "the user was asked once")
    expect(envelope["success"] is True and envelope["result"].get("cancelled") is True, "the write ran in the same call", envelope)
    expect(await status_of(url, key, order_id) == "CANCELLED", "the order is CANCELLED")

    trip, _ = await with_session(url, bob, None, lambda s: approved_to(s, "Beijing"))
    trip_id = trip["order_id"]
    print("--- 2026-07-28: the user declines the input_required question")
    envelope, asked, version = await modern(url, bob, "decline", "cancel_travel_order", {"order_id": trip_id})
    expect(version == "2026-07-28", "the protocol is 2026-07-28", version)
    expect(len(asked) == 1 and "Beijing" in asked[0].message, "the user was asked once, about the Beijing trip", [str(a) for a in asked])
    expect(envelope["result"]["confirmation"] == "declined", "the result says the user declined", envelope)
    expect(await status_of(url, bob, trip_id) == "APPROVED", "bob's order is still APPROVED")
    print("--- 2026-07-28: the user accepts")
    envelope, asked, _ = await modern(url, bob, "accept", "cancel_travel_order", {"order_id": trip_id})
    expect(len(asked) == 1, "the user was asked once")
    expect(envelope["success"] is True and envelope["result"].get("cancelled") is True, "the write ran on the retry", envelope)
    expect(await status_of(url, bob, trip_id) == "CANCELLED", "bob's order is CANCELLED")
    print("PASS")


if __name__ == "__main__":
    try:
        anyio.run(main, sys.argv[1], sys.argv[2], sys.argv[3])
    except CheckFailed as failure:
        print(f"FAIL {failure}")
        sys.exit(1)
