"""Sync/async bridging and thread safety of the call path."""

from __future__ import annotations

import asyncio
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from pydantic import BaseModel

from tools import BaseTool, InMemoryMetrics, LocalToolRegistry, ToolError


class Req(BaseModel):
    n: int = 0


class ThreadRecorder(BaseTool[Req, Any]):
    """Returns its thread once ``parties`` calls are running at once (a barrier, not a sleep:
    calls run one after the other would time out instead of passing by luck)."""

    name = "recorder"

    def __init__(self, parties: int = 2) -> None:
        self.barrier = threading.Barrier(parties, timeout=30)

    def execute_internal(self, request: Req) -> Any:
        self.barrier.wait()
        return threading.get_ident()


class LoopBound(BaseTool[Req, Any]):
    name = "loop_bound"
    run_in_thread = False

    def execute_internal(self, request: Req) -> Any:
        return threading.get_ident()


async def test_sync_tools_run_in_worker_threads_without_blocking_the_loop() -> None:
    registry = LocalToolRegistry()
    registry.register(ThreadRecorder())
    registry.register(LoopBound())
    ticks = 0

    async def ticker() -> None:  # runs while both calls wait in their threads
        nonlocal ticks
        for _ in range(20):
            await asyncio.sleep(0)
            ticks += 1

    results = await asyncio.gather(registry.acall_tool("recorder"), registry.acall_tool("recorder"), ticker())
    loop_thread = threading.get_ident()
    workers = {results[0].data, results[1].data}
    assert loop_thread not in workers and len(workers) == 2
    assert ticks > 0
    assert (await registry.acall_tool("loop_bound")).data == loop_thread


async def test_sync_call_of_async_tool_inside_running_loop() -> None:
    class AsyncTool(BaseTool[Req, Any]):
        name = "async_tool"

        async def execute_internal(self, request: Req) -> Any:
            await asyncio.sleep(0)
            return request.n * 2

    registry = LocalToolRegistry()
    registry.register(AsyncTool())
    assert registry("async_tool", n=21)["data"] == 42  # no deadlock, no "loop already running"


def test_concurrent_calls_keep_breaker_and_metrics_exact() -> None:
    class AlwaysFails(BaseTool[Req, Any]):
        name = "fails"

        def execute_internal(self, request: Req) -> Any:
            raise ToolError("no", trips_breaker=True)

    class Works(BaseTool[Req, Any]):
        name = "works"

        def execute_internal(self, request: Req) -> Any:
            return request.n

    metrics = InMemoryMetrics()
    registry = LocalToolRegistry(metrics=metrics, failure_threshold=10_000)
    registry.register(AlwaysFails())
    registry.register(Works())

    def hammer(i: int) -> list[str]:
        ids = []
        for j in range(50):
            ids.append(registry.call_tool("fails").metadata["request_id"])
            ids.append(registry.call_tool_raw("works", f'{{"n": {i * 100 + j}}}').metadata["request_id"])
        return ids

    with ThreadPoolExecutor(16) as pool:
        ids = [rid for chunk in pool.map(hammer, range(16)) for rid in chunk]
    assert len(set(ids)) == 16 * 100
    assert registry.breaker("fails").consecutive_failures == 800  # type: ignore[union-attr]
    assert metrics.stats("fails").calls == 800 and metrics.stats("fails").failures == 800
    assert metrics.stats("works").successes == 800
    assert metrics.degraded_tools() == ["fails"]


def test_breaker_opens_exactly_once_under_contention() -> None:
    class AlwaysFails(BaseTool[Req, Any]):
        name = "fails"

        def __init__(self) -> None:
            self.calls = 0
            self.lock = threading.Lock()

        def execute_internal(self, request: Req) -> Any:
            with self.lock:
                self.calls += 1
            time.sleep(0.001)
            raise ToolError("no", trips_breaker=True)

    registry = LocalToolRegistry(failure_threshold=5, reset_timeout=3600)
    tool = AlwaysFails()
    registry.register(tool)
    with ThreadPoolExecutor(8) as pool:
        outs = list(pool.map(lambda _: registry("fails")["error_type"], range(200)))
    assert outs.count("circuit_open") >= 200 - 8 - 5
    assert tool.calls <= 5 + 8  # only calls admitted before the breaker opened ran
