"""Worker threads are bounded per registry, counted when abandoned, and never asyncio's own."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest
from pydantic import BaseModel

from tools import BaseTool, LocalToolRegistry, RetryPolicy


class Req(BaseModel):
    n: int = 0


class Hangs(BaseTool[Req, str]):
    """Blocks until released: a tool stuck on I/O that has no timeout of its own."""

    name = "hangs"
    description = "Hangs until released."

    def __init__(self) -> None:
        self.release = threading.Event()
        self.started = 0
        self.lock = threading.Lock()

    def execute_internal(self, request: Req) -> str:
        with self.lock:
            self.started += 1
        self.release.wait(30)
        return "done"


@pytest.fixture
def hangs() -> Any:
    tool = Hangs()
    yield tool
    tool.release.set()


def wait_until(predicate: Any, seconds: float = 10.0) -> bool:
    event = threading.Event()
    for _ in range(int(seconds / 0.01)):
        if predicate():
            return True
        event.wait(0.01)
    return bool(predicate())


def test_timed_out_calls_and_their_retries_never_exceed_the_worker_bound(hangs: Hangs) -> None:
    registry = LocalToolRegistry(max_workers=4, max_workers_per_tool=4, sleep=lambda _: None)
    registry.register(hangs, timeout=0.05, retry=RetryPolicy(max_attempts=3, initial_delay=0, jitter=0))
    results = [registry.call_tool("hangs") for _ in range(5)]
    # Every attempt that timed out holds a worker; never more than the bound.
    assert hangs.started == 4
    workers = registry.stats()["workers"]
    assert workers["abandoned"] == 4 and workers["busy"] == 4 and workers["max_workers"] == 4
    assert results[0].error is not None and results[0].error.type == "timeout"
    # Once every worker is held, calls are refused at once with a message saying so.
    last = results[-1]
    assert last.error is not None and last.error.retryable
    assert "all 4 worker threads are busy (4 still running calls that timed out)" in last.error.message
    assert workers["saturated_total"] >= 1
    hangs.release.set()
    assert wait_until(lambda: registry.stats()["workers"]["busy"] == 0)
    assert registry.stats()["workers"]["abandoned"] == 0
    assert registry.stats()["workers"]["abandoned_total"] == 4
    assert registry.call_tool("hangs").data == "done"


def test_saturation_does_not_open_the_breaker(hangs: Hangs) -> None:
    registry = LocalToolRegistry(max_workers=1, failure_threshold=2)
    registry.register(hangs, timeout=0.05)
    registry.call_tool("hangs")  # times out: one failure of the tool
    for _ in range(5):
        result = registry.call_tool("hangs")
        assert result.error is not None and "busy" in result.error.message
    assert registry.breaker("hangs").consecutive_failures == 1  # type: ignore[union-attr]


def test_hung_async_calls_leave_the_hosts_default_executor_alone(hangs: Hangs) -> None:
    registry = LocalToolRegistry()
    registry.register(hangs)

    async def app() -> int:
        calls = [asyncio.create_task(registry.acall_tool("hangs")) for _ in range(8)]
        assert await asyncio.to_thread(wait_until, lambda: hangs.started == 8)
        # The host's own to_thread work still runs while eight tool calls hang.
        value = await asyncio.wait_for(asyncio.to_thread(lambda: 42), 10)
        hangs.release.set()
        results = await asyncio.gather(*calls)
        assert all(r.data == "done" for r in results)
        return value

    assert asyncio.run(app()) == 42


def test_an_exhausted_registry_answers_async_calls_at_once(hangs: Hangs) -> None:
    registry = LocalToolRegistry(max_workers=2, max_workers_per_tool=2)
    registry.register(hangs)

    async def app() -> list[Any]:
        stuck = [asyncio.create_task(registry.acall_tool("hangs")) for _ in range(2)]
        assert await asyncio.to_thread(wait_until, lambda: hangs.started == 2)
        refused = await asyncio.wait_for(registry.acall_tool("hangs"), 10)
        hangs.release.set()
        await asyncio.gather(*stuck)
        return [refused]

    (refused,) = asyncio.run(app())
    assert refused.error is not None and refused.error.type == "execution_error"
    assert "all 2 worker threads are busy" in refused.error.message


def test_a_tools_own_timeout_error_is_not_mistaken_for_the_deadline() -> None:
    class RaisesTimeout(BaseTool[Req, str]):
        name = "raises_timeout"
        description = "Lets a socket timeout escape."
        timeout = 5.0

        def execute_internal(self, request: Req) -> str:
            raise TimeoutError("socket read timed out")

    registry = LocalToolRegistry()
    registry.register(RaisesTimeout())
    result = registry.call_tool("raises_timeout")
    assert result.error is not None and result.error.type == "execution_error"
    assert registry.stats()["workers"]["abandoned_total"] == 0
