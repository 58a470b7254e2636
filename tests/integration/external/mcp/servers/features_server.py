"""An MCP server (the SDK's lowlevel ``Server``) that needs what a full client offers.

Like the reference "everything" server, it lists tools that call back into the client
(``sample_llm`` needs sampling, ``ask_name`` elicitation, ``show_roots`` roots) only to
clients that declare those capabilities, and it runs tools as MCP tasks (revision
2025-11-25): ``slow_report`` and ``stuck_task`` must be called as tasks (a plain call is
refused with -32601, as the spec says), ``maybe_task`` may be, ``failing_task`` fails as a
task. The SDK has the task types but not the flow, so the flow is here: a middleware answers
a task-augmented ``tools/call`` with a ``CreateTaskResult`` and runs the tool in the
background; ``tasks/get``, ``tasks/result`` and ``tasks/cancel`` are request handlers.
``task_states`` reports every task's status (to see that a cancelled call reached the server).

Run as ``python features_server.py`` (stdio) or with ``--port N`` (streamable HTTP).
"""

from __future__ import annotations

import argparse
import json
import uuid
import warnings
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

import anyio
import mcp_types as types
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError

warnings.simplefilter("ignore")

TASK_TOOLS = {"slow_report": "required", "stuck_task": "required", "failing_task": "required", "maybe_task": "optional"}
Ctx = ServerRequestContext[dict[str, Any], Any]


def _now() -> str:
    return datetime.now(timezone.utc).isoformat()


def _text(text: str, *, error: bool = False) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=error)


@dataclass
class TaskState:
    task_id: str
    tool: str
    status: str = "working"
    message: str | None = None
    created: str = field(default_factory=_now)
    result: types.CallToolResult | None = None
    done: anyio.Event = field(default_factory=anyio.Event)
    scope: anyio.CancelScope = field(default_factory=anyio.CancelScope)

    def task(self) -> types.Task:
        return types.Task(
            task_id=self.task_id,
            status=self.status,  # type: ignore[arg-type]
            status_message=self.message,
            created_at=self.created,
            last_updated_at=_now(),
            ttl=60_000,
            poll_interval=20,
        )

    def finish(self, status: str, result: types.CallToolResult | None = None, message: str | None = None) -> None:
        self.status, self.result, self.message = status, result, message
        self.done.set()


TASKS: dict[str, TaskState] = {}


def _tool(name: str, description: str, properties: dict[str, Any] | None = None) -> types.Tool:
    support = TASK_TOOLS.get(name)
    return types.Tool(
        name=name,
        description=description,
        input_schema={"type": "object", "properties": properties or {}},
        execution=types.ToolExecution(task_support=support) if support else None,  # type: ignore[arg-type]
    )


async def list_tools(ctx: Ctx, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
    caps = ctx.session.client_capabilities or types.ClientCapabilities()
    tools = [
        _tool("echo", "Return the text.", {"text": {"type": "string"}}),
        _tool("slow_report", "Write a report (a task).", {"topic": {"type": "string"}, "steps": {"type": "integer"}}),
        _tool("stuck_task", "Never finishes (a task)."),
        _tool("failing_task", "Fails (a task)."),
        _tool("maybe_task", "Says how it ran.", {"x": {"type": "string"}}),
        _tool("task_states", "Every task's status."),
    ]
    if caps.sampling is not None:
        tools.append(_tool("sample_llm", "Ask the client's model.", {"prompt": {"type": "string"}}))
    if caps.elicitation is not None:
        tools.append(_tool("ask_name", "Ask the user's name."))
    if caps.roots is not None:
        tools.append(_tool("show_roots", "The client's roots."))
    return types.ListToolsResult(tools=tools)


async def _sample(ctx: Ctx, args: Mapping[str, Any]) -> types.CallToolResult:
    reply = await ctx.session.create_message(
        [types.SamplingMessage(role="user", content=types.TextContent(type="text", text=str(args.get("prompt"))))],
        max_tokens=50,
        system_prompt="Answer in one word.",
        model_preferences=types.ModelPreferences(hints=[types.ModelHint(name="small-model")]),
        related_request_id=ctx.request_id,
    )
    text = reply.content.text if isinstance(reply.content, types.TextContent) else "?"
    return _text(f"{reply.model} said: {text}")


async def _ask(ctx: Ctx, args: Mapping[str, Any]) -> types.CallToolResult:
    schema = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
    answer = await ctx.session.elicit_form("What is your name?", schema, related_request_id=ctx.request_id)
    return _text(json.dumps({"action": answer.action, "content": answer.content}))


async def _roots(ctx: Ctx, args: Mapping[str, Any]) -> types.CallToolResult:
    roots = await ctx.session.list_roots()
    return _text(json.dumps([{"uri": str(root.uri), "name": root.name} for root in roots.roots]))


async def _task_states(ctx: Ctx, args: Mapping[str, Any]) -> types.CallToolResult:
    return _text(json.dumps({state.tool: state.status for state in TASKS.values()}))


async def _maybe(ctx: Ctx, args: Mapping[str, Any]) -> types.CallToolResult:
    return _text(f"{args.get('x')} ran directly")


DIRECT: dict[str, Callable[[Ctx, Mapping[str, Any]], Awaitable[types.CallToolResult]]] = {
    "echo": lambda ctx, args: _echo(args),
    "sample_llm": _sample,
    "ask_name": _ask,
    "show_roots": _roots,
    "task_states": _task_states,
    "maybe_task": _maybe,
}


async def _echo(args: Mapping[str, Any]) -> types.CallToolResult:
    return _text(str(args.get("text")))


async def call_tool(ctx: Ctx, params: types.CallToolRequestParams) -> types.CallToolResult:
    handler = DIRECT.get(params.name)
    if handler is None:
        raise MCPError(code=types.INVALID_PARAMS, message=f"Unknown tool {params.name}")
    return await handler(ctx, params.arguments or {})


async def _run_task(state: TaskState, args: Mapping[str, Any], ctx: Ctx, token: str | int | None) -> None:
    with state.scope:
        if state.tool == "slow_report":
            steps = int(args.get("steps", 3))
            for step in range(1, steps + 1):
                await anyio.sleep(0.02)  # work being done
                if token is not None:
                    await ctx.session.send_progress_notification(token, step, steps, f"section {step}")
            state.finish("completed", _text(f"report on {args.get('topic')}: {steps} sections"))
        elif state.tool == "failing_task":
            state.finish("failed", _text("the report failed: disk full", error=True), "disk full")
        elif state.tool == "maybe_task":
            state.finish("completed", _text(f"{args.get('x')} ran as a task"))
        else:  # stuck_task
            await anyio.sleep_forever()
    if state.scope.cancelled_caught and not state.done.is_set():
        state.finish("cancelled", None, "cancelled by the client")


async def task_middleware(ctx: Ctx, call_next: CallNext) -> HandlerResult:
    params = ctx.params if isinstance(ctx.params, Mapping) else {}
    if ctx.method != "tools/call" or params.get("name") not in TASK_TOOLS:
        return await call_next(ctx)
    if "task" not in params:
        if TASK_TOOLS[params["name"]] == "required":
            raise MCPError(code=types.METHOD_NOT_FOUND, message=f"Tool {params['name']} must be called as a task")
        return await call_next(ctx)
    state = TaskState(uuid.uuid4().hex, params["name"])
    TASKS[state.task_id] = state
    token = (params.get("_meta") or {}).get("progressToken")
    ctx.lifespan_context["tasks"].start_soon(_run_task, state, params.get("arguments") or {}, ctx, token)
    return types.CreateTaskResult(task=state.task()).model_dump(by_alias=True, mode="json", exclude_none=True)


def _state(task_id: str) -> TaskState:
    state = TASKS.get(task_id)
    if state is None:
        raise MCPError(code=types.INVALID_PARAMS, message=f"No task {task_id}")
    return state


async def get_task(ctx: Ctx, params: types.GetTaskRequestParams) -> types.GetTaskResult:
    return types.GetTaskResult(**_state(params.task_id).task().model_dump())


async def task_result(ctx: Ctx, params: types.GetTaskPayloadRequestParams) -> types.CallToolResult:
    state = _state(params.task_id)
    await state.done.wait()
    if state.result is None:
        raise MCPError(code=types.INTERNAL_ERROR, message=f"Task {params.task_id} was {state.status}")
    return state.result


async def cancel_task(ctx: Ctx, params: types.CancelTaskRequestParams) -> types.CancelTaskResult:
    state = _state(params.task_id)
    state.scope.cancel()
    if not state.done.is_set():
        state.finish("cancelled", None, "cancelled by the client")
    return types.CancelTaskResult(**state.task().model_dump())


@asynccontextmanager
async def lifespan(_: Server[Any]) -> AsyncIterator[dict[str, Any]]:
    async with anyio.create_task_group() as group:
        yield {"tasks": group}
        group.cancel_scope.cancel()


class TaskServer(Server[dict[str, Any]]):
    """Declares task-augmented ``tools/call`` (the SDK derives no ``tasks`` capability)."""

    def get_capabilities(self, *args: Any, **kwargs: Any) -> types.ServerCapabilities:
        capabilities = super().get_capabilities(*args, **kwargs)
        tasks = types.ServerTasksCapability(
            cancel=types.TasksCancelCapability(),
            requests=types.ServerTasksRequestsCapability(
                tools=types.TasksToolsCapability(call=types.TasksCallCapability())
            ),
        )
        return capabilities.model_copy(update={"tasks": tasks})


def build() -> TaskServer:
    server = TaskServer(
        "tooldeck-features", version="1.0.0", lifespan=lifespan, on_list_tools=list_tools, on_call_tool=call_tool
    )
    server.middleware.append(task_middleware)
    server.add_request_handler("tasks/get", types.GetTaskRequestParams, get_task)
    server.add_request_handler("tasks/result", types.GetTaskPayloadRequestParams, task_result)
    server.add_request_handler("tasks/cancel", types.CancelTaskRequestParams, cancel_task)
    return server


async def _stdio() -> None:
    from mcp.server.stdio import stdio_server

    server = build()
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    if args.port:
        import uvicorn

        uvicorn.run(
            build().streamable_http_app(host="127.0.0.1"), host="127.0.0.1", port=args.port, log_level="warning"
        )
    else:
        anyio.run(_stdio)
