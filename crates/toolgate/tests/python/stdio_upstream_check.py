"""`toolgate serve --stdio` with an `[[upstreams]]` mounted, through the official MCP Python SDK's
stdio client (`mcp` 2.x), which starts the command itself. The upstream is
`task_upstream.py`, mounted as `reports`, served with `--expose direct`. Twice, once per
lifecycle (the `initialize` handshake, then `server/discover` at 2026-07-28):
  1. tools/list shows the upstream's tools under its namespace;
  2. a call of `reports__echo_word` answers the upstream's result;
  3. at 2026-07-28, a client with the tasks extension gets a task for
     `reports__slow_report` (the upstream marks it `taskSupport`), polled to its result.

Usage: stdio_upstream_check.py TOOLGATE_COMMAND [ARG...]
"""

import json
import sys
import time
from typing import Any, Literal

import anyio
from mcp import Client, StdioServerParameters, types
from mcp.client.extension import ClaimContext, ClientExtension, ResultClaim
from mcp_types import Request, RequestParams, Result
from pydantic import ConfigDict

TASKS = "io.modelcontextprotocol/tasks"
UPSTREAM_TOOLS = ["reports__echo_word", "reports__hold_report", "reports__slow_report"]


class CheckFailed(Exception):
    pass


def expect(condition: bool, what: str, got: Any = None) -> None:
    if not condition:
        detail = "" if got is None else f": got {json.dumps(got, default=str)[:800]}"
        raise CheckFailed(f"{what}{detail}")
    print(f"  ok  {what}", flush=True)


class TaskIdParams(RequestParams):
    task_id: str


class GetTask(Request[TaskIdParams, Literal["tasks/get"]]):
    method: Literal["tasks/get"] = "tasks/get"


class TaskHandle(Result):
    model_config = ConfigDict(extra="allow")
    result_type: Literal["task"]
    task_id: str
    status: str
    poll_interval_ms: int | None = None


class TaskState(Result):
    model_config = ConfigDict(extra="allow")
    result_type: str | None = None
    task_id: str
    status: str
    result: dict[str, Any] | None = None


class Tasks(ClientExtension):
    """Declares the tasks extension and resolves a task handle by polling `tasks/get`."""

    identifier = TASKS

    def __init__(self) -> None:
        self.statuses: list[str] = []

    def claims(self):
        return [ResultClaim(result_type="task", model=TaskHandle, resolve=self.resolve)]

    async def resolve(self, handle: TaskHandle, ctx: ClaimContext) -> types.CallToolResult:
        self.statuses.append(handle.status)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            state = await ctx.session.send_request(GetTask(params=TaskIdParams(task_id=handle.task_id)), TaskState)
            if state.status != self.statuses[-1]:
                self.statuses.append(state.status)
            if state.status == "completed":
                return types.CallToolResult.model_validate(state.result)
            if state.status in ("cancelled", "failed"):
                return types.CallToolResult(content=[types.TextContent(text=state.status)], is_error=True)
            await anyio.sleep((handle.poll_interval_ms or 100) / 1000)
        raise CheckFailed(f"task {handle.task_id} did not end within 20 s: {self.statuses}")


async def check(command: list[str], mode: str) -> None:
    print(f"--- {mode}")
    tasks = Tasks()
    params = StdioServerParameters(command=command[0], args=command[1:])
    async with Client(params, mode=mode, extensions=[tasks]) as c:
        version = c.session.protocol_version
        print(f"  ..  protocol version {version}")
        if mode == "auto":
            expect(version == "2026-07-28", "server/discover reaches 2026-07-28", version)
        listed = await c.list_tools()
        names = sorted(t.name for t in listed.tools if t.name.startswith("reports__"))
        expect(names == UPSTREAM_TOOLS, "tools/list shows the upstream's tools under its namespace", names)

        result = await c.call_tool("reports__echo_word", {"word": "hello"})
        structured = result.structured_content or {}
        expect(result.is_error is False and structured.get("success") is True, "the call succeeds", structured)
        expect(structured["result"] == {"echo": "HELLO"}, "the result is the upstream's", structured)

        if version == "2026-07-28":
            result = await c.call_tool("reports__slow_report", {"city": "Oslo", "ms": 300})
            expect(tasks.statuses[:1] == ["working"] and tasks.statuses[-1] == "completed", "a task: working, then completed", tasks.statuses)
            structured = result.structured_content or {}
            expect(structured.get("result", {}).get("report") == "the report on Oslo", "the task's result is the upstream's", structured)


async def main(command: list[str]) -> int:
    try:
        with anyio.fail_after(90):
            await check(command, "legacy")
            await check(command, "auto")
    except CheckFailed as failure:
        print(f"FAIL {failure}")
        return 1
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(anyio.run(main, sys.argv[1:]))
