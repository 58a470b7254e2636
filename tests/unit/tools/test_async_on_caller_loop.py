"""``async def`` tools run on their async caller's loop, with every guarantee of the call path.

From async code an async tool is awaited in the caller's own task (no thread hop): it sees
the caller's loop, thread and context variables, and timeouts, cancellation, the breaker,
metrics and the approvals gate all hold. From sync code it runs on the long-lived tool loop
(one hop). ``run_on_shared_loop = True`` sends it to the tool loop from async code too.
"""

from __future__ import annotations

import asyncio
import contextvars
import threading
from typing import Any

import pytest
from pydantic import BaseModel

from tools import BaseTool, InMemoryMetrics, LocalToolRegistry
from tools.approvals import ApprovalPolicy

caller: contextvars.ContextVar[str] = contextvars.ContextVar("caller", default="none")


class Request(BaseModel):
    text: str = ""


class WhereAmI(BaseTool[Request, dict[str, Any]]):
    name = "where_am_i"
    description = "Report the loop and thread it runs on."

    async def execute_internal(self, request: Request) -> dict[str, Any]:
        return {
            "loop": id(asyncio.get_running_loop()),
            "thread": threading.get_ident(),
            "caller": caller.get(),
        }


class SharedWhereAmI(WhereAmI):
    name = "shared_where_am_i"
    run_on_shared_loop = True


def _registry(*tools: BaseTool[Any, Any], **options: Any) -> LocalToolRegistry:
    registry = LocalToolRegistry(**options)
    for tool in tools:
        registry.register(tool)
    return registry


def test_async_callers_run_the_tool_in_place_on_every_path() -> None:
    tool = WhereAmI()
    registry = _registry(tool)
    bound = registry.get("where_am_i")
    assert bound is not None

    async def app() -> list[dict[str, Any]]:
        caller.set("app")
        here = {"loop": id(asyncio.get_running_loop()), "thread": threading.get_ident(), "caller": "app"}
        results = [
            await registry.acall_tool("where_am_i"),
            await registry.acall_tool_raw("where_am_i", "{}"),
            await bound.acall(),
            await tool.aexecute(),
            await tool.aexecute_raw('{"text": "x"}'),
        ]
        assert [r.data for r in results] == [here] * len(results)
        return [r.data for r in results]

    asyncio.run(app())


def test_sync_callers_hop_once_to_the_tool_loop_and_opted_in_tools_always_do() -> None:
    registry = _registry(WhereAmI(), SharedWhereAmI())
    sync = registry.call_tool("where_am_i").data
    assert sync["thread"] != threading.get_ident()

    async def app() -> tuple[Any, Any]:
        shared = await registry.acall_tool("shared_where_am_i")
        return shared.data, id(asyncio.get_running_loop())

    shared, app_loop = asyncio.run(app())
    assert shared["loop"] != app_loop
    assert shared["loop"] == sync["loop"]  # the one tool loop


def test_a_timeout_cancels_the_coroutine_on_the_caller_loop() -> None:
    class Slow(BaseTool[Request, str]):
        name = "slow"
        description = "Sleeps."
        timeout = 0.05

        async def execute_internal(self, request: Request) -> str:
            try:
                await asyncio.sleep(30)
            except asyncio.CancelledError:
                seen.append("cancelled")
                raise
            return "late"

    seen: list[str] = []
    registry = _registry(Slow())
    result = asyncio.run(registry.acall_tool("slow"))
    assert result.error is not None and result.error.type == "timeout"
    assert seen == ["cancelled"]


def test_cancelling_the_caller_cancels_the_tool_and_frees_the_breaker() -> None:
    seen: list[str] = []

    class Waits(BaseTool[Request, str]):
        name = "waits"
        description = "Waits until cancelled."

        async def execute_internal(self, request: Request) -> str:
            seen.append("started")
            try:
                await asyncio.sleep(30)
            finally:
                seen.append("finally")
            return "never"

    registry = _registry(Waits())

    async def app() -> None:
        task = asyncio.ensure_future(registry.acall_tool("waits"))
        while not seen:
            await asyncio.sleep(0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(app())
    assert seen == ["started", "finally"]
    breaker = registry.breaker("waits")
    assert breaker is not None and breaker.state == "closed"


def test_breaker_and_metrics_count_async_failures_on_the_caller_loop() -> None:
    class Fails(BaseTool[Request, str]):
        name = "fails"
        description = "Always fails."

        async def execute_internal(self, request: Request) -> str:
            raise RuntimeError("upstream said no")

    metrics = InMemoryMetrics()
    registry = _registry(Fails(), metrics=metrics, failure_threshold=2)

    async def app() -> list[str]:
        return [(await registry.acall_tool("fails")).error.type for _ in range(3)]  # type: ignore[union-attr]

    assert asyncio.run(app()) == ["execution_error", "execution_error", "circuit_open"]
    stats = metrics.stats("fails")
    assert (stats.calls, stats.failures) == (3, 3)


def test_the_approvals_gate_holds_for_async_tools_on_the_caller_loop() -> None:
    ran: list[str] = []

    class Deletes(BaseTool[Request, str]):
        name = "delete_everything"
        description = "Deletes everything."

        async def execute_internal(self, request: Request) -> str:
            ran.append(request.text)
            return "gone"

    registry = _registry(Deletes(), policy=ApprovalPolicy("low"))
    result = asyncio.run(registry.acall_tool_raw("delete_everything", '{"text": "all"}'))
    assert result.error is not None and result.error.type == "permission_denied"
    assert ran == []
