"""``tools.progress``: a running tool reports progress to whoever runs its call (issue 21 item 7).

Each call sees its own context (a context variable set for that call only, which follows it
into the registry's worker threads and onto the tool event loop), never another call's;
nothing is reported when nobody listens; reports reach the call's span as events.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from pydantic import BaseModel

from tools import BaseTool, LocalToolRegistry
from tools.progress import ToolProgress, current_call, listening, report_progress
from tools.telemetry import ToolTracer


class Steps(BaseModel):
    steps: int = 3


class SyncCounter(BaseTool[Steps, str]):
    name = "sync_counter"
    description = "Counts, reporting progress."

    def execute_internal(self, request: Steps) -> str:
        for step in range(1, request.steps + 1):
            report_progress(step / request.steps, f"step {step}")
        return current_call().tool


class AsyncCounter(BaseTool[Steps, str]):
    name = "async_counter"
    description = "Counts asynchronously, reporting progress."

    async def execute_internal(self, request: Steps) -> str:
        context = current_call()
        for step in range(1, request.steps + 1):
            await asyncio.sleep(0)
            context.report_progress(step / request.steps, f"step {step}")
        return context.tool


def collect() -> tuple[list[ToolProgress], Any]:
    seen: list[ToolProgress] = []
    return seen, seen.append


@pytest.mark.parametrize("tool", [SyncCounter(), AsyncCounter()], ids=["sync", "async"])
@pytest.mark.parametrize("timeout", [None, 30.0], ids=["inline", "worker-thread"])
def test_reports_reach_the_listener_of_the_call(tool: BaseTool[Any, Any], timeout: float | None) -> None:
    registry = LocalToolRegistry(default_timeout=timeout)
    registry.register(tool)
    seen, listener = collect()
    with listening(listener, tool=tool.name, call_id="c1", min_interval=0.0):
        result = registry.call_tool(tool.name, steps=3)
    assert result.data == tool.name
    assert seen == [ToolProgress(tool.name, "c1", n / 3, f"step {n}") for n in (1, 2, 3)]
    registry.close()


async def test_async_callers_get_reports_too() -> None:
    registry = LocalToolRegistry()
    registry.register(SyncCounter())
    registry.register(AsyncCounter())
    seen, listener = collect()

    async def one(name: str) -> None:
        with listening(listener, tool=name, min_interval=0.0):
            await registry.acall_tool(name, steps=2)

    await asyncio.gather(one("sync_counter"), one("async_counter"))
    assert sorted((p.tool, p.fraction) for p in seen) == [
        ("async_counter", 0.5),
        ("async_counter", 1.0),
        ("sync_counter", 0.5),
        ("sync_counter", 1.0),
    ]
    registry.close()


def test_parallel_calls_never_see_each_others_context() -> None:
    registry = LocalToolRegistry(default_timeout=30.0)
    registry.register(SyncCounter())
    seen: dict[str, list[ToolProgress]] = {f"call-{i}": [] for i in range(8)}
    start = threading.Barrier(8)

    def run(call_id: str) -> None:
        start.wait()
        with listening(seen[call_id].append, tool="sync_counter", call_id=call_id, min_interval=0.0):
            registry.call_tool("sync_counter", steps=5)

    threads = [threading.Thread(target=run, args=(call_id,)) for call_id in seen]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for call_id, reports in seen.items():
        assert [r.call_id for r in reports] == [call_id] * 5
    registry.close()


def test_without_a_listener_reports_go_nowhere_and_cost_nothing() -> None:
    registry = LocalToolRegistry()
    registry.register(SyncCounter())
    assert registry.call_tool("sync_counter", steps=1000).data == ""  # the detached context
    report_progress(0.5, "outside any call")  # never raises


def test_values_are_bounded() -> None:
    seen, listener = collect()
    with listening(listener, tool="t", min_interval=0.0) as context:
        context.report_progress(7.5, "  many   spaces\nand lines  ")
        context.report_progress(float("nan"), None)
        context.report_progress(-3)
        context.report_progress(None, "x" * 2000)
        context.report_progress("half", "bad fraction")  # type: ignore[arg-type]
    assert [(p.fraction, p.message) for p in seen] == [
        (1.0, "many spaces and lines"),
        (None, None),
        (0.0, None),
        (None, "x" * 500),
        (None, "bad fraction"),
    ]


def test_reports_closer_than_the_interval_are_dropped_but_not_the_last_or_a_new_message() -> None:
    now = [100.0]
    seen, listener = collect()
    with listening(listener, tool="t", min_interval=1.0, clock=lambda: now[0]) as context:
        context.report_progress(0.1, "copying")
        context.report_progress(0.2, "copying")  # too soon: dropped
        now[0] += 1.5
        context.report_progress(0.3, "copying")
        context.report_progress(0.4, "checking")  # a new message: passed on
        context.report_progress(1.0, "checking")  # the end: passed on
    assert [p.fraction for p in seen] == [0.1, 0.3, 0.4, 1.0]


def test_a_failing_listener_never_fails_the_call(caplog: pytest.LogCaptureFixture) -> None:
    registry = LocalToolRegistry()
    registry.register(SyncCounter())

    def broken(report: ToolProgress) -> None:
        raise RuntimeError("listener bug")

    with listening(broken, tool="sync_counter", min_interval=0.0):
        result = registry.call_tool("sync_counter", steps=2)
    assert result.status == "success"
    assert "progress listener failed for tool 'sync_counter'" in caplog.text


@pytest.fixture
def exporter() -> Iterator[InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    exporter.provider = provider  # type: ignore[attr-defined]
    yield exporter
    provider.shutdown()


@pytest.mark.parametrize("tool", [SyncCounter(), AsyncCounter()], ids=["sync", "async"])
def test_reports_become_events_of_the_calls_span(exporter: InMemorySpanExporter, tool: BaseTool[Any, Any]) -> None:
    registry = LocalToolRegistry(tracer=ToolTracer(exporter.provider), default_timeout=30.0)  # type: ignore[attr-defined]
    registry.register(tool)
    assert registry.call_tool(tool.name, steps=2).status == "success"  # nobody listens: the span still hears
    (span,) = exporter.get_finished_spans()
    assert span.name == f"execute_tool {tool.name}"
    events = [(e.name, dict(e.attributes or {})) for e in span.events]
    assert events == [
        ("tooldeck.progress", {"tooldeck.progress.fraction": 0.5, "tooldeck.progress.message": "step 1"}),
        ("tooldeck.progress", {"tooldeck.progress.fraction": 1.0, "tooldeck.progress.message": "step 2"}),
    ]
    registry.close()
