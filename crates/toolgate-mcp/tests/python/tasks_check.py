"""Tasks (the 2026-07-28 tasks extension) through the official MCP Python SDK (`mcp` 2.x).

The SDK has no tasks client of its own at 2026-07-28; it has the extension
hooks one is written with: a `ClientExtension` that declares
`io.modelcontextprotocol/tasks` and claims the `resultType: "task"` answer of
`tools/call`, resolving it by polling `tasks/get` (or cancelling it with
`tasks/cancel`) through the SDK's own session. Against the test server
(meta mode, `wait_forever` is a long-running tool):
  1. a client with the extension gets a task for `wait_forever` (300 ms),
     polls it from `working` to `completed`, and its result is the tool's;
  2. a second one's task (an hour) is not found by another key, then is
     cancelled: `tasks/get` says `cancelled` (the test then checks that the
     tool's future was dropped);
  3. a client without the extension gets the plain result of the same call.

Usage: tasks_check.py URL KEY OTHER_KEY
"""

import json
import sys
import time
from typing import Any, ClassVar, Literal

import anyio
from mcp import Client, types
from mcp.client.extension import ClaimContext, ClientExtension, ResultClaim
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp_types import Request, RequestParams, Result
from pydantic import ConfigDict

TASKS = "io.modelcontextprotocol/tasks"


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
    name_param: ClassVar[str | None] = "taskId"


class CancelTask(Request[TaskIdParams, Literal["tasks/cancel"]]):
    method: Literal["tasks/cancel"] = "tasks/cancel"
    name_param: ClassVar[str | None] = "taskId"


class TaskHandle(Result):
    model_config = ConfigDict(extra="allow")
    result_type: Literal["task"]
    task_id: str
    status: str
    ttl_ms: int | None = None
    poll_interval_ms: int | None = None


class TaskState(Result):
    model_config = ConfigDict(extra="allow")
    result_type: str | None = None
    task_id: str
    status: str
    status_message: str | None = None
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None


class Ack(Result):
    model_config = ConfigDict(extra="allow")
    result_type: str | None = None


class Tasks(ClientExtension):
    """Resolves a task handle: polls it to the end, or cancels it first (`cancel`)."""

    identifier = TASKS

    def __init__(self, cancel: bool = False, other: Client | None = None) -> None:
        self.cancel = cancel
        self.other = other
        self.handles: list[TaskHandle] = []
        self.statuses: list[str] = []
        self.foreign_error: str | None = None

    def claims(self):
        return [ResultClaim(result_type="task", model=TaskHandle, resolve=self.resolve)]

    async def resolve(self, handle: TaskHandle, ctx: ClaimContext) -> types.CallToolResult:
        self.handles.append(handle)
        self.statuses.append(handle.status)
        task = TaskIdParams(task_id=handle.task_id)
        if self.cancel:
            if self.other is not None:
                try:
                    await self.other.session.send_request(GetTask(params=task), TaskState)
                except Exception as error:  # the SDK's MCPError
                    self.foreign_error = str(error)
            await ctx.session.send_request(CancelTask(params=task), Ack)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            state = await ctx.session.send_request(GetTask(params=task), TaskState)
            if state.status != self.statuses[-1]:
                self.statuses.append(state.status)
            if state.status == "completed":
                return types.CallToolResult.model_validate(state.result)
            if state.status in ("cancelled", "failed"):
                text = state.status_message or state.status
                return types.CallToolResult(content=[types.TextContent(text=text)], is_error=True)
            await anyio.sleep((handle.poll_interval_ms or 100) / 1000)
        raise CheckFailed(f"task {handle.task_id} did not end within 20 s: {self.statuses}")


def client(url: str, key: str, extensions: list[ClientExtension] | None) -> tuple[Any, Client]:
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {key}"})
    return http, Client(streamable_http_client(url, http_client=http), extensions=extensions)


async def main(url: str, key: str, other_key: str) -> None:
    print("--- a task polled to its result")
    tasks = Tasks()
    http, c = client(url, key, [tasks])
    async with http, c:
        expect(c.session.protocol_version == "2026-07-28", "the protocol is 2026-07-28", c.session.protocol_version)
        result = await c.call_tool("execute_tool", {"tool_name": "wait_forever", "parameters": {"ms": 300}})
    expect(len(tasks.handles) == 1, "the call answered with a task handle")
    handle = tasks.handles[0]
    expect(handle.ttl_ms is not None and handle.ttl_ms > 0 and handle.poll_interval_ms, "the handle says its ttl and poll interval", handle.model_dump())
    expect(tasks.statuses[0] == "working" and tasks.statuses[-1] == "completed", "working, then completed", tasks.statuses)
    structured = result.structured_content or {}
    expect(structured.get("success") is True and structured["result"].get("waited") is True, "the task's result is the tool's", structured)

    print("--- a task cancelled (and hidden from another key)")
    other_http, other = client(url, other_key, [Tasks()])
    async with other_http, other:
        tasks = Tasks(cancel=True, other=other)
        http, c = client(url, key, [tasks])
        async with http, c:
            started = time.monotonic()
            result = await c.call_tool("execute_tool", {"tool_name": "wait_forever", "parameters": {}})
            took = time.monotonic() - started
    expect(tasks.foreign_error is not None and "no task" in tasks.foreign_error, "another key is told there is no such task", tasks.foreign_error)
    expect(tasks.statuses[-1] == "cancelled", "tasks/get says cancelled", tasks.statuses)
    expect(result.is_error and "cancelled" in result.content[0].text, "the status message says it was cancelled", result.model_dump())
    expect(took < 10, f"the hour-long call ended at once ({took:.2f} s)")
    print(f"CANCELLED {tasks.handles[0].task_id}", flush=True)

    print("--- a client that does not ask gets the plain call")
    http, c = client(url, key, None)
    async with http, c:
        result = await c.call_tool("execute_tool", {"tool_name": "wait_forever", "parameters": {"ms": 10}})
    structured = result.structured_content or {}
    expect(structured.get("success") is True and structured["result"].get("waited") is True, "a plain result", structured)
    print("PASS")


if __name__ == "__main__":
    try:
        anyio.run(main, sys.argv[1], sys.argv[2], sys.argv[3])
    except CheckFailed as failure:
        print(f"FAIL {failure}")
        sys.exit(1)
