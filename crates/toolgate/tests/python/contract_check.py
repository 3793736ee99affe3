#!/usr/bin/env python3
"""The call contract of issue 11 through the official MCP Python SDK (`mcp` 2.x, streamable HTTP).

Usage: contract_check.py CONFIG_JSON

CONFIG_JSON (written by the Rust test `tests/it/contract.rs`, which starts `toolgate serve --demo`
with a local weather provider and makes the keys with `toolgate keys create`):

  {"url": "http://127.0.0.1:P",          the demo in meta mode
   "direct_url": "http://127.0.0.1:Q",   a second demo in direct mode
   "keys": {"alice": ..., "info": ..., "nutrition": ...},        keys of the meta demo
   "direct_keys": {"alice": ..., "info": ..., "nutrition": ...}, keys of the direct demo
   "user": "alice", "hang_city": "Hangtown", "flaky_city": "Flaky", "provider_timeout_ms": 1000}

`info` is `--toolset read_only`, `nutrition` is `--domains nutrition`; the weather provider never
answers for `hang_city`, and for `flaky_city` answers 503 once, then never. Checks, each with real
assertions: deadline and retry options and their outcomes; discovery filters; progress
notifications of plan_itinerary and a run_<skill>; result templates (text content vs
structuredContent), nutrition goals in the day's text; the 3-day weather default; key and
session scopes on every surface; a chart as ImageContent decoded as PNG; the live trace's start,
end and cancelled events, the last caused by the SDK abandoning a call (notifications/cancelled).
Prints one line per check, then PASS (exit 0) or FAIL (exit 1).
"""

from __future__ import annotations

import base64
import contextlib
import datetime
import json
import re
import struct
import sys
import time
import zlib
from typing import Any, AsyncIterator

import anyio
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

WRITE_TOOLS = ["update_nutrition", "update_body_data", "submit_travel_approval", "cancel_travel_order"]
# The tools of the nutrition domain: its two route tools and the skill served as a tool.
NUTRITION_TOOLS = ["query_nutrition", "run_daily_nutrition_review", "update_nutrition"]
VALID_OPTIONS = ["timeout_ms", "retries", "retry_delay_ms", "format"]


class CheckFailed(Exception):
    pass


def expect(condition: bool, what: str, got: Any = None) -> None:
    if not condition:
        detail = "" if got is None else f": got {json.dumps(got, default=str)[:800]}"
        raise CheckFailed(f"{what}{detail}")
    print(f"  ok  {what}")


def envelope(result: Any) -> dict[str, Any]:
    content = result.structured_content
    if not isinstance(content, dict) or "success" not in content:
        raise CheckFailed(f"structuredContent is not an envelope: {json.dumps(content, default=str)[:600]}")
    return content


def text_of(result: Any) -> str:
    return "\n".join(block.text for block in result.content if block.type == "text")


@contextlib.asynccontextmanager
async def Mcp(url: str, key: str) -> AsyncIterator[ClientSession]:
    """One SDK session to `url` as `key`, opened with the `initialize` handshake."""
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {key}"})
    async with http, streamable_http_client(url, http_client=http) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            yield session


async def execute(session: ClientSession, tool: str, params: dict, options: dict | None = None, **kw: Any) -> Any:
    args: dict[str, Any] = {"tool_name": tool, "parameters": params}
    if options is not None:
        args["options"] = options
    return await session.call_tool("execute_tool", args, **kw)


async def discover(session: ClientSession, **filters: Any) -> tuple[list[dict], int]:
    found = envelope(await session.call_tool("get_tool_schema", filters))
    expect(found["success"] is True, f"discovery {filters} succeeds", found)
    return found["result"]["tools"], found["metadata"]["total"]


# --- 1. deadline and retry options ---------------------------------------------------------------
async def check_options(s: ClientSession, cfg: dict) -> None:
    hang, flaky = cfg["hang_city"], cfg["flaky_city"]
    ok = await execute(s, "query_weather", {"city": "Oslo"})
    env = envelope(ok)
    expect(env["success"] is True and ok.is_error is False, "query_weather succeeds", env)
    days = env["result"]["days"]
    today = datetime.datetime.now(datetime.timezone.utc).date()
    expected = [str(today + datetime.timedelta(days=n)) for n in range(3)]
    expect([d["date"] for d in days] == expected, "without a date query_weather answers today and the next two days", days)
    expect(all(d["forecast"]["summary"] == "sunny" for d in days), "each day carries the provider's forecast", days)

    started = time.monotonic()
    env = envelope(await execute(s, "query_weather", {"city": hang}, {"timeout_ms": 150, "retries": 0}))
    took = time.monotonic() - started
    expect(env["error"]["code"] == "TIMEOUT", "a hanging provider under timeout_ms 150 answers TIMEOUT", env)
    expect(took < 1.5 and env["error"]["details"]["deadline_ms"] == 150, f"within the caller's time ({took:.2f} s), naming it", env["error"])

    started = time.monotonic()
    env = envelope(await execute(s, "query_weather", {"city": hang}, {"retries": 1, "retry_delay_ms": 10}))
    took = time.monotonic() - started
    details = env["error"].get("details") or {}
    expect(env["error"]["code"] == "TIMEOUT" and env["metadata"]["attempts"] == 2, "every attempt timing out answers TIMEOUT with 2 attempts", env)
    expect(details.get("attempts") == 2 and details.get("stopped") == "retries_exhausted", "the details say how many attempts ran and why it stopped", details)
    expect(took < 5.0, f"inside the default 5 s deadline ({took:.2f} s)")

    today_s = str(today)
    env = envelope(await execute(s, "query_weather", {"city": flaky, "date": today_s}, {"retries": 1, "retry_delay_ms": 10}))
    expect(env["error"]["code"] == "RETRY_EXHAUSTED", "a 503 then a timeout answers RETRY_EXHAUSTED", env)
    expect(env["error"]["details"]["last_error"]["code"] == "TIMEOUT", "with the last error", env["error"]["details"])

    started = time.monotonic()
    spelled = {"timeout": 150, "retries": 0, "retryDelay": 5, "format": "json"}
    env = envelope(await execute(s, "query_weather", {"city": hang}, spelled))
    expect(env["error"]["code"] == "TIMEOUT" and time.monotonic() - started < 1.5, "tool-caller spellings: `timeout` is the call's time", env)
    env = envelope(await execute(s, "query_weather", {"city": hang}, {"timeout": 3000, "retries": 1, "retryDelay": 10}))
    expect(env["metadata"]["attempts"] == 2, "`retries` and `retryDelay` run a second attempt", env["metadata"])

    bad = await execute(s, "query_weather", {"city": "Oslo"}, {"timeoutSeconds": 5})
    env = envelope(bad)
    expect(bad.is_error is True and env["error"]["code"] == "INVALID_PARAMS", "an unknown option is INVALID_PARAMS", env)
    expect(all(v in env["error"]["message"] for v in VALID_OPTIONS), "naming the valid options", env["error"]["message"])


# --- 2. discovery ----------------------------------------------------------------------------------
async def check_discovery(s: ClientSession) -> None:
    tools, total = await discover(s, query="weather")
    expect("query_weather" in [t["name"] for t in tools] and total >= 1, "query `weather` finds query_weather", tools)
    t = next(t for t in tools if t["name"] == "query_weather")
    expect(t["params_schema"]["properties"].get("city") is not None, "with its params_schema", t)
    meta = t["metadata"]
    expect(meta["effect"] == "read" and meta["idempotent"] is True and "weather" in meta["tags"], "and metadata {effect, idempotent, tags}", meta)
    tools, total = await discover(s, domain="nutrition", limit=50)
    names = sorted(t["name"] for t in tools)
    expect(total == len(tools) and {"query_nutrition", "update_nutrition"} <= set(names), "domain `nutrition` finds its tools", names)
    expect(all(t["metadata"]["domain"] == "nutrition" for t in tools), "and only them", names)
    tools, _ = await discover(s, domain="nutrition", effect="write")
    expect([t["name"] for t in tools] == ["update_nutrition"], "effect `write` narrows to the write tool", [t["name"] for t in tools])
    tools, total = await discover(s, limit=1)
    expect(len(tools) == 1 and total > 10, f"limit 1 answers one tool of {total}", tools)


# --- 3. progress -------------------------------------------------------------------------------------
def candidates(n: int) -> dict:
    """Like travel's own plan tests: `n` outbound, hotels and returns, a mix of fits and breaches."""
    d = "2027-03-10"
    ident = lambda prefix, i: f"{prefix}-{i:0>{32 - len(prefix) - 1}}"
    outbound = [{"id": ident("OUT", i), "mode": "train" if i % 3 == 0 else "flight", "price": 600 + (i * 37) % 900,
                 "duration_minutes": 120 + (i * 13) % 200, "depart": f"{d}T{6 + i % 8:02}:00",
                 "arrive": f"{d}T{8 + i % 8:02}:30", "class": "second" if i % 3 == 0 else "economy"} for i in range(n)]
    hotels = [{"id": ident("HOTEL", i), "name": f"Hotel {i}", "price_per_night": 300 + (i * 53) % 700,
               "check_in": d, "check_out": "2027-03-12"} for i in range(n)]
    returns = [{"id": ident("RET", i), "mode": "train" if i % 2 == 0 else "flight", "price": 500 + (i * 41) % 800,
                "duration_minutes": 100 + (i * 17) % 250, "depart": f"2027-03-12T{12 + i % 9:02}:00",
                "arrive": f"2027-03-12T{14 + i % 9:02}:45", "class": "second" if i % 2 == 0 else "economy"} for i in range(n)]
    transport = {c["id"]: (i * 7 % 11) * 0.9 for i, c in enumerate(outbound)}
    transport.update({c["id"]: (i * 5 % 11) * 0.9 for i, c in enumerate(returns)})
    hotel = {c["id"]: (i * 3 % 11) * 0.9 for i, c in enumerate(hotels)}
    return {"destination": "Shanghai", "candidates": {"outbound": outbound, "hotels": hotels, "return": returns},
            "scores": {"transport_scores": transport, "hotel_scores": hotel}}


async def with_progress(s: ClientSession, tool: str, params: dict) -> tuple[Any, list]:
    seen: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total, message))

    result = await execute(s, tool, params, progress_callback=on_progress)
    return result, seen


async def check_progress(s: ClientSession) -> None:
    plan, seen = await with_progress(s, "plan_itinerary", candidates(12))
    env = envelope(plan)
    expect(env["success"] is True, "plan_itinerary succeeds", env)
    messages = [m for _, _, m in seen]
    expect(len(seen) >= 3 and "policy" in (messages[0] or "") and all("combinations" in (m or "") for m in messages[1:]),
           f"plan_itinerary reports its phases: the policy, then the combinations ({len(seen)} notifications)", seen)
    expect(seen[-1][1] == 12 ** 3 and seen[-1][0] == seen[-1][1], "counting the combinations up to their total", seen[-1])
    expect(all(b[0] > a[0] for a, b in zip(seen, seen[1:])), "progress increases", seen)
    text = text_of(plan)
    expect("| " in text and "|---" in text and "Next:" in text, "the plan's text is its proposals as a table", text[:600])

    today = str(datetime.datetime.now(datetime.timezone.utc).date())
    run, seen = await with_progress(s, "run_daily_nutrition_review", {"date": today})
    expect(envelope(run)["success"] is True, "run_daily_nutrition_review succeeds", envelope(run))
    steps = [m for _, _, m in seen if m and "finished" in m]
    expect(len(steps) == 2 and seen[-1][0] == seen[-1][1] == 2, "run_<skill> reports each of its two steps", seen)


# --- 4. result templates and goals ------------------------------------------------------------------
async def check_templates(s: ClientSession) -> None:
    orders = await execute(s, "query_travel_order", {})
    env = envelope(orders)
    text = text_of(orders)
    expect(env["success"] is True and env["result"]["page"]["total"] > 0, "query_travel_order answers the demo orders", env)
    expect(re.search(r"^\|[-|]+\|$", text, re.M) is not None, "the text content is a markdown table", text[:600])
    first = env["result"]["orders"][0]
    expect(str(first["order_id"]) in text and not text.lstrip().startswith("{"), "naming the orders, not the JSON", text[:600])
    expect(isinstance(first, dict) and "status" in first, "structuredContent keeps the structured result", first)

    today = str(datetime.datetime.now(datetime.timezone.utc).date())
    goals = {"op": "set_goals", "kcal": 2200, "protein_g": 140, "carbs_g": 250, "fat_g": 70}
    env = envelope(await execute(s, "update_nutrition", goals))
    expect(env["success"] is True and env["result"]["payload"]["kcal"] == 2200, "update_nutrition set_goals stores the goals", env)
    day = await execute(s, "query_nutrition", {"op": "day_summary", "date": today})
    env = envelope(day)
    text = text_of(day)
    payload = env["result"]["payload"]
    expect(payload["goals"] == {"kcal": 2200, "protein_g": 140, "carbs_g": 250, "fat_g": 70}, "the day answers its goals", payload)
    expect("| | eaten | goal | left |" in text, "the day's text is totals vs goals", text)
    eaten = payload["totals"]["kcal"]
    left = round(2200 - eaten, 2)
    left_s = str(int(left)) if left == int(left) else str(left)
    expect(re.search(rf"^\| energy \| .* \| 2200 kcal \| {re.escape(left_s)} kcal \|$", text, re.M) is not None,
           f"energy: goal 2200 kcal, {left_s} kcal left", text)


# --- 5. scopes -----------------------------------------------------------------------------------------
def names_write_tool(text: str) -> list[str]:
    return [w for w in WRITE_TOOLS if re.search(rf"(?<![\w-]){w}(?![\w-])", text)]


async def check_scopes(cfg: dict) -> None:
    mcp, keys = cfg["url"] + "/mcp", cfg["keys"]
    async with Mcp(mcp, keys["info"]) as s:
        expect(names_write_tool(s.instructions or "") == [], "read_only key: the catalog names no write tool", s.instructions)
        tools, total = await discover(s, limit=50)
        expect(total == len(tools) and all(t["metadata"]["effect"] == "read" for t in tools), "read_only key: discovery finds reads only", [t["name"] for t in tools])
        for w in ["update_nutrition", "cancel_travel_order"]:
            schema = envelope(await s.call_tool("get_tool_schema", {"tool_name": w}))
            expect(schema["success"] is False, f"read_only key: no schema for {w}", schema)
            run = envelope(await execute(s, w, {}))
            expect(run["error"]["code"] == "PERMISSION_DENIED", f"read_only key: {w} is refused", run)
        expect(envelope(await execute(s, "query_travel_order", {}))["success"] is True, "read_only key: reads work")
    async with Mcp(mcp, keys["nutrition"]) as s:
        tools, _ = await discover(s, limit=50)
        expect(tools and all(t["metadata"]["domain"] == "nutrition" for t in tools), "nutrition key: discovery is nutrition only", [t["name"] for t in tools])
        expect("query_weather" not in (s.instructions or ""), "nutrition key: the catalog has no weather")
        env = envelope(await execute(s, "query_weather", {"city": "Oslo"}))
        expect(env["error"]["code"] == "PERMISSION_DENIED", "nutrition key: weather is refused", env)
    async with Mcp(mcp + "?domains=nutrition,travel", keys["nutrition"]) as s:
        tools, _ = await discover(s, limit=50)
        expect(all(t["metadata"]["domain"] == "nutrition" for t in tools), "a session cannot widen its key's scope", [t["name"] for t in tools])
    async with Mcp(mcp + "?domains=nutrition", keys["alice"]) as s:
        tools, _ = await discover(s, limit=50)
        expect(tools and all(t["metadata"]["domain"] == "nutrition" for t in tools), "?domains=nutrition narrows alice's session", [t["name"] for t in tools])
        env = envelope(await execute(s, "query_travel_order", {}))
        expect(env["error"]["code"] == "PERMISSION_DENIED", "and refuses travel in it", env)

    direct, dkeys = cfg["direct_url"] + "/mcp", cfg["direct_keys"]
    async with Mcp(direct, dkeys["alice"]) as s:
        everything = [t.name for t in (await s.list_tools()).tools]
        expect(all(w in everything for w in WRITE_TOOLS), "direct mode: alice's tools/list has the write tools", everything)
    async with Mcp(direct, dkeys["info"]) as s:
        listed = (await s.list_tools()).tools
        expect(listed and names_write_tool(" ".join(t.name for t in listed)) == [], "direct mode, read_only key: tools/list has no write tool", [t.name for t in listed])
        expect(all(t.annotations and t.annotations.read_only_hint for t in listed), "every listed tool is read-only", [t.name for t in listed])
        called = await s.call_tool("update_nutrition", {"op": "set_goals", "kcal": 1})
        expect(called.is_error is True, "direct mode, read_only key: calling a write tool fails", text_of(called))
    async with Mcp(direct + "?domains=nutrition", dkeys["alice"]) as s:
        listed = sorted(t.name for t in (await s.list_tools()).tools)
        expect(listed == NUTRITION_TOOLS, "direct mode, ?domains=nutrition: tools/list is nutrition only", listed)
    async with Mcp(direct, dkeys["nutrition"]) as s:
        listed = sorted(t.name for t in (await s.list_tools()).tools)
        expect(listed == NUTRITION_TOOLS, "direct mode, nutrition key: tools/list is nutrition only", listed)


# --- 6. images -----------------------------------------------------------------------------------------
def png_facts(data: bytes) -> tuple[int, int, int]:
    """(width, height, distinct bytes of the decompressed pixel rows), after checking the structure."""
    expect(data[:8] == b"\x89PNG\r\n\x1a\n", "the image is a PNG (signature)")
    at, width, height, idat = 8, 0, 0, b""
    while at < len(data):
        length, kind = struct.unpack(">I4s", data[at:at + 8])
        body = data[at + 8:at + 8 + length]
        crc = struct.unpack(">I", data[at + 8 + length:at + 12 + length])[0]
        if zlib.crc32(kind + body) != crc:
            raise CheckFailed(f"bad CRC in PNG chunk {kind!r}")
        if kind == b"IHDR":
            width, height = struct.unpack(">II", body[:8])
        elif kind == b"IDAT":
            idat += body
        at += 12 + length
    return width, height, len(set(zlib.decompress(idat)))


async def check_images(s: ClientSession) -> None:
    today = datetime.datetime.now(datetime.timezone.utc).date()
    chart = await execute(s, "render_weight_chart", {"from": str(today - datetime.timedelta(days=30)), "to": str(today)})
    env = envelope(chart)
    expect(env["success"] is True and env["result"]["points"] >= 2, "render_weight_chart succeeds with the numbers beside", env)
    images = [b for b in chart.content if b.type == "image"]
    expect(len(images) == 1 and images[0].mime_type == "image/png", "one ImageContent, image/png", [b.type for b in chart.content])
    width, height, distinct = png_facts(base64.b64decode(images[0].data))
    expect((width, height) == (640, 320), "IHDR says 640 x 320", (width, height))
    expect(distinct > 2, f"the picture is not blank ({distinct} distinct byte values)")


# --- 7. trace --------------------------------------------------------------------------------------------
class Trace:
    """The caller's `/trace` (server-sent events) read in the background."""

    def __init__(self, base: str, key: str) -> None:
        self.base, self.key, self.events, self.ready = base, key, [], anyio.Event()

    async def run(self) -> None:
        # The SDK's own HTTP client (httpx2): a plain GET of server-sent events.
        async with create_mcp_http_client(headers={"Authorization": f"Bearer {self.key}"}) as client:
            async with client.stream("GET", self.base + "/trace", headers={"Accept": "text/event-stream"}) as resp:
                expect(resp.status_code == 200, "GET /trace opens", resp.status_code)
                event = None
                async for line in resp.aiter_lines():
                    if line.startswith("event:"):
                        event = line[6:].strip()
                        if event == "ready":
                            self.ready.set()
                    elif line.startswith("data:") and event == "trace":
                        self.events.append(json.loads(line[5:].strip()))

    async def wait_for(self, what: str, match: Any, seconds: float = 10) -> dict:
        with anyio.move_on_after(seconds):
            while True:
                found = [e for e in self.events if match(e)]
                if found:
                    return found[0]
                await anyio.sleep(0.05)
        raise CheckFailed(f"no trace event: {what}; saw {json.dumps(self.events, default=str)[-1500:]}")


async def check_trace(s: ClientSession, trace: Trace, cfg: dict) -> None:
    env = envelope(await execute(s, "query_weather", {"city": "Bergen"}))
    expect(env["success"] is True, "a call to trace succeeds", env)
    start = await trace.wait_for("start of the Bergen call", lambda e: e["kind"] == "start" and e["params"] == {"city": "Bergen"})
    end = await trace.wait_for("end of the Bergen call", lambda e: e["kind"] == "end" and e["trace_id"] == start["trace_id"])
    expect(start["params"] == {"city": "Bergen"} and start["tool"] == "query_weather", "a start event with the parameters", start)
    expect(end["success"] is True and end["result"]["city"] == "Bergen", "an end event with the result", end)

    # The SDK abandons a call in flight: it sends notifications/cancelled, the server stops the tool.
    expect(s.protocol_version < "2026", f"legacy wire ({s.protocol_version}): the SDK cancels with notifications/cancelled")
    started = time.monotonic()
    with anyio.move_on_after(0.4) as scope:
        await execute(s, "query_weather", {"city": cfg["hang_city"]}, {"timeout_ms": 8000, "retries": 0})
    expect(scope.cancelled_caught, "the call was still running when the SDK cancelled it")
    cancelled = await trace.wait_for("cancelled", lambda e: e["kind"] == "cancelled" and (e["params"] or {}).get("city") == cfg["hang_city"])
    expect(cancelled["success"] is False and cancelled["tool"] == "query_weather", "a cancelled event for it", cancelled)
    expect(time.monotonic() - started < 3, "well before the call's own deadline")
    expect(not any(e["kind"] == "end" and e["trace_id"] == cancelled["trace_id"] for e in trace.events), "and no end event")
    # The session goes on.
    expect(envelope(await execute(s, "query_weather", {"city": "Oslo"}))["success"] is True, "the session still works after the cancel")
    expect(all(e["user_id"] == cfg["user"] for e in trace.events), "a member's trace shows only their own calls", {e["user_id"] for e in trace.events})


async def main() -> int:
    cfg = json.loads(sys.argv[1])
    print("contract_check: toolgate serve --demo through the MCP Python SDK")
    failure = None
    try:
        with anyio.fail_after(90):
            trace = Trace(cfg["url"], cfg["keys"]["alice"])
            async with anyio.create_task_group() as tg:
                tg.start_soon(trace.run)
                with anyio.fail_after(10):
                    await trace.ready.wait()
                async with Mcp(cfg["url"] + "/mcp", cfg["keys"]["alice"]) as s:
                    print(f"  ..  protocol version {s.protocol_version}")
                    await check_options(s, cfg)
                    await check_discovery(s)
                    await check_progress(s)
                    await check_templates(s)
                    await check_images(s)
                    await check_trace(s, trace, cfg)
                await check_scopes(cfg)
                tg.cancel_scope.cancel()
    except* CheckFailed as group:
        # A failure inside task groups (ours, the SDK's) arrives wrapped in exception groups.
        failure = group
        while isinstance(failure, BaseExceptionGroup):
            failure = failure.exceptions[0]
    if failure is not None:
        print(f"FAIL {failure}")
        return 1
    print("PASS contract")
    return 0


if __name__ == "__main__":
    sys.exit(anyio.run(main))
