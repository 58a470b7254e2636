"""One hung tool cannot starve the others: each tool holds at most its share of the workers.

A real tool that hangs (blocked on an event, as on a dead socket) is called again and again
and times out each time; its abandoned threads count against its own share (half the pool
by default), so once that share is full its calls are refused at once while a healthy tool
keeps running on the rest of the pool, from sync and from async callers.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from pydantic import BaseModel

from tools import BaseTool, LocalToolRegistry


class Req(BaseModel):
    n: int = 0


class Hangs(BaseTool[Req, str]):
    name = "hangs"
    description = "Blocks until released."

    def __init__(self) -> None:
        self.release = threading.Event()
        self.started = 0
        self._lock = threading.Lock()

    def execute_internal(self, request: Req) -> str:
        with self._lock:
            self.started += 1
        self.release.wait(60)
        return "done"


class Healthy(BaseTool[Req, int]):
    name = "healthy"
    description = "Answers at once."

    def execute_internal(self, request: Req) -> int:
        return request.n * 2


@pytest.fixture
def hangs() -> Iterator[Hangs]:
    tool = Hangs()
    yield tool
    tool.release.set()


def _wait_until(predicate: Any, seconds: float = 30.0) -> bool:
    event = threading.Event()
    for _ in range(int(seconds / 0.01)):
        if predicate():
            return True
        event.wait(0.01)
    return bool(predicate())


def test_a_hanging_tool_fills_its_own_share_and_a_healthy_tool_keeps_running(hangs: Hangs) -> None:
    registry = LocalToolRegistry(max_workers=4)  # half the pool per tool: 2
    registry.register(hangs, timeout=0.05)
    registry.register(Healthy(), timeout=30)
    hung = [registry.call_tool("hangs") for _ in range(6)]
    assert [r.error.type for r in hung if r.error] == ["timeout", "timeout"] + ["execution_error"] * 4
    assert hangs.started == 2  # the refused calls never ran
    refused = hung[-1].error
    assert refused is not None and refused.retryable
    assert "'hangs' cannot run right now: it already has 2 calls running" in refused.message
    assert "(2 of them timed out and are still running)" in refused.message
    workers = registry.stats()["workers"]
    assert workers["max_per_tool"] == 2 and workers["by_tool"] == {"hangs": 2} and workers["abandoned"] == 2
    assert [registry.call_tool("healthy", n=i).data for i in range(20)] == [i * 2 for i in range(20)]
    breaker = registry.breaker("hangs")
    assert breaker is not None and breaker.consecutive_failures == 2  # refusals are not the tool's failures
    hangs.release.set()
    assert _wait_until(lambda: registry.stats()["workers"]["by_tool"] == {})
    assert registry.call_tool("hangs").data == "done"


def test_async_callers_get_the_same_shares(hangs: Hangs) -> None:
    registry = LocalToolRegistry(max_workers=4)
    registry.register(hangs)
    registry.register(Healthy())

    async def app() -> tuple[Any, list[Any]]:
        stuck = [asyncio.create_task(registry.acall_tool("hangs")) for _ in range(2)]
        assert await asyncio.to_thread(_wait_until, lambda: hangs.started == 2)
        refused = await asyncio.wait_for(registry.acall_tool("hangs"), 30)
        healthy: list[Any] = []
        for i in range(0, 8, 2):  # two at a time: the healthy tool's own share
            healthy += await asyncio.gather(
                registry.acall_tool("healthy", n=i), registry.acall_tool("healthy", n=i + 1)
            )
        hangs.release.set()
        await asyncio.gather(*stuck)
        return refused, [r.data for r in healthy]

    refused, healthy = asyncio.run(app())
    assert refused.error is not None and "it already has 2 calls running" in refused.error.message
    assert healthy == [i * 2 for i in range(8)]


def test_a_cancelled_async_call_counts_against_its_tool_until_its_thread_ends(hangs: Hangs) -> None:
    registry = LocalToolRegistry(max_workers=2)  # one worker per tool
    registry.register(hangs)
    registry.register(Healthy())

    async def app() -> Any:
        task = asyncio.create_task(registry.acall_tool("hangs"))
        assert await asyncio.to_thread(_wait_until, lambda: hangs.started == 1)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return await registry.acall_tool("hangs")

    refused = asyncio.run(app())
    assert refused.error is not None and "(1 of them timed out and are still running)" in refused.error.message
    assert registry.call_tool("healthy", n=3).data == 6
    assert registry.stats()["workers"]["by_tool"] == {"hangs": 1}


def test_the_share_is_configurable_and_checked() -> None:
    assert LocalToolRegistry(max_workers=1).stats()["workers"]["max_per_tool"] == 1
    assert LocalToolRegistry(max_workers=8, max_workers_per_tool=8).stats()["workers"]["max_per_tool"] == 8
    for bad in (0, 9):
        with pytest.raises(ValueError, match="max_workers_per_tool"):
            LocalToolRegistry(max_workers=8, max_workers_per_tool=bad)
