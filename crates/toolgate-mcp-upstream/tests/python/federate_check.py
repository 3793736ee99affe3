#!/usr/bin/env python3
"""The official MCP Python SDK client against a toolgate whose upstream has prompts,
resources, completions and tools that sample, list roots and log.

Usage: federate_check.py URL MEMBER_KEY GUEST_KEY

The member sees the upstream's prompt (weather__summary) beside toolgate's catalog, gets it,
reads its resource and a templated one, completes the prompt's argument, answers its
sampling request and roots request, receives its log messages at the level set (info, not
debug) and hears notifications/prompts/list_changed when the upstream adds a prompt, as does a
2026-07-28 client through subscriptions/listen. The
guest (below the upstream's role) sees none of it and cannot read it.
Prints one line per check; exits 0 when all pass, 1 at the first failure.
"""

from __future__ import annotations

import sys
from typing import Any

import anyio
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.client.subscriptions import listen
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.types import (
    CreateMessageResult,
    ListRootsResult,
    PromptReference,
    Root,
    TextContent,
)


def expect(condition: bool, what: str, got: Any = None) -> None:
    if not condition:
        print(f"FAIL {what}: {got!r}"[:800])
        sys.exit(1)
    print(f"  ok  {what}")


async def member(url: str, key: str) -> None:
    logs: list[Any] = []
    prompts_changed = anyio.Event()
    sampled: list[Any] = []

    async def on_message(message: Any) -> None:
        root = getattr(message, "root", message)
        if getattr(root, "method", "") == "notifications/prompts/list_changed":
            prompts_changed.set()

    async def on_log(params: Any) -> None:
        logs.append(params)

    async def on_sampling(context: Any, params: Any) -> CreateMessageResult:
        sampled.append(params)
        return CreateMessageResult(role="assistant", content=TextContent(type="text", text="sunny"), model="test")

    async def on_roots(context: Any) -> ListRootsResult:
        return ListRootsResult(roots=[Root(uri="file:///srv/forecasts", name="forecasts")])

    http = create_mcp_http_client(headers={"Authorization": f"Bearer {key}"})
    async with streamable_http_client(url, http_client=http) as (read, write):
        async with ClientSession(
            read,
            write,
            message_handler=on_message,
            logging_callback=on_log,
            sampling_callback=on_sampling,
            list_roots_callback=on_roots,
        ) as session:
            init = await session.initialize()
            caps = init.capabilities
            expect(caps.resources is not None and caps.completions is not None, "resources and completions offered", caps)

            names = [p.name for p in (await session.list_prompts()).prompts]
            expect("catalog" in names and "weather__summary" in names, "the upstream's prompt beside toolgate's", names)
            got = await session.get_prompt("weather__summary", {"city": "Oslo"})
            text = got.messages[0].content.text
            expect("Oslo" in text, "prompts/get reaches the upstream with its arguments", text)

            uris = [str(r.uri) for r in (await session.list_resources()).resources]
            expect("weather://stations" in uris, "the upstream's resource is listed", uris)
            read_back = await session.read_resource("weather://stations")
            expect("Blindern" in read_back.contents[0].text, "resources/read", read_back)
            templates = [t.uri_template for t in (await session.list_resource_templates()).resource_templates]
            expect("weather://city/{name}" in templates, "the upstream's template is listed", templates)
            report = await session.read_resource("weather://city/Bergen")
            expect(report.contents[0].text == "report of Bergen", "a templated URI goes to its upstream", report)

            done = await session.complete(PromptReference(type="ref/prompt", name="weather__summary"), {"name": "city", "value": "Os"})
            expect(sorted(done.completion.values) == ["Osaka", "Oslo"], "completion/complete", done)

            await session.set_logging_level("info")
            result = await session.call_tool("weather__log_twice", {})
            await anyio.sleep(0.3)
            lines = [str(p.data) for p in logs]
            expect("info line" in lines and "debug line" not in lines, "log messages at the level set", lines)

            result = await session.call_tool("weather__ask_model", {"question": "Weather?"})
            expect(not result.is_error and "sunny" in str(result.structured_content), "sampling answered by this client", result)
            expect(len(sampled) == 1, "the sampling request reached this client once", sampled)
            result = await session.call_tool("weather__list_my_roots", {})
            expect("file:///srv/forecasts" in str(result.structured_content), "roots answered by this client", result)

            # A 2026-07-28 client listening (subscriptions/listen, no initialize) hears it too.
            ready, heard = anyio.Event(), anyio.Event()
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(modern_listener, url, key, ready, heard)
                with anyio.fail_after(30):
                    await ready.wait()
                await session.call_tool("weather__add_late_prompt", {})
                with anyio.fail_after(10):
                    await prompts_changed.wait()
                    await heard.wait()
            expect(heard.is_set(), "subscriptions/listen: promptsListChanged from the upstream")
            names = [p.name for p in (await session.list_prompts()).prompts]
            expect("weather__late" in names, "notifications/prompts/list_changed, then the new prompt", names)


async def modern_listener(url: str, key: str, ready: anyio.Event, heard: anyio.Event) -> None:
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {key}"})
    async with http, streamable_http_client(url, http_client=http) as (read, write):
        async with ClientSession(read, write) as session:
            await session.discover()
            async with listen(session, prompts_list_changed=True) as sub:
                print(f"  ..  honored {sub.honored}", flush=True)
                ready.set()
                async for _event in sub:
                    heard.set()
                    break


async def guest(url: str, key: str) -> None:
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {key}"})
    async with streamable_http_client(url, http_client=http) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            names = [p.name for p in (await session.list_prompts()).prompts]
            expect(not any(n.startswith("weather__") for n in names), "a guest sees none of the upstream's prompts", names)
            uris = (await session.list_resources()).resources
            expect(uris == [], "nor its resources", uris)
            try:
                await session.read_resource("weather://stations")
                expect(False, "a guest cannot read the upstream's resource")
            except Exception as error:  # the SDK raises the JSON-RPC error
                expect(True, f"a guest cannot read the upstream's resource ({type(error).__name__})")
            try:
                await session.get_prompt("weather__summary", {"city": "Oslo"})
                expect(False, "a guest cannot get the upstream's prompt")
            except Exception as error:
                expect(True, f"a guest cannot get the upstream's prompt ({type(error).__name__})")


async def main(url: str, member_key: str, guest_key: str) -> None:
    await member(url, member_key)
    await guest(url, guest_key)


if __name__ == "__main__":
    anyio.run(main, *sys.argv[1:4])
