"""Fixtures for the telemetry integration tests: in-memory span export and a wired registry.

``TracedRegistry`` is a test-only stand-in for the runner wiring the lead adds to
``tools/_runner.py`` (one ``ToolTracer.start``/``end`` pair around every call path, the
model's call id passed through ``call_tool_raw``). Once the registry takes ``tracer=``,
the tests in ``test_tracing_registry.py`` move to the real registry unchanged except for
the fixture.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import pytest

pytest.importorskip("opentelemetry.sdk")

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from tools import LocalToolRegistry, ToolResult
from tools.telemetry import ToolSpan, ToolTracer, gen_ai_tool_type

Arguments = str | bytes | Mapping[str, Any] | None


class TracedRegistry(LocalToolRegistry):
    """A registry whose call paths open one ``execute_tool`` span per call (test wiring)."""

    def __init__(self, *, tracer: ToolTracer, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.tracer = tracer

    def _start(self, name: str, call_id: str | None, arguments: Arguments) -> ToolSpan:
        entry = self._entries.get(name)
        if entry is None:
            return self.tracer.start_unknown(name, call_id)
        tool_type = gen_ai_tool_type(entry.manual.source if entry.manual is not None else None)
        return self.tracer.start(entry.name, entry.tool.description, tool_type, call_id, arguments)

    def _end(self, span: ToolSpan, name: str, result: ToolResult) -> ToolResult:
        entry = self._entries.get(name)
        self.tracer.end(span, result, entry.breaker.state if entry is not None else None)
        return result

    def call_tool(self, name: str, /, **arguments: Any) -> ToolResult:
        span = self._start(name, None, arguments)
        return self._end(span, name, super().call_tool(name, **arguments))

    def call_tool_raw(self, name: str, /, arguments: Arguments, *, call_id: str | None = None) -> ToolResult:
        span = self._start(name, call_id, arguments)
        return self._end(span, name, super().call_tool_raw(name, arguments))

    async def acall_tool(self, name: str, /, **arguments: Any) -> ToolResult:
        span = self._start(name, None, arguments)
        try:
            result = await super().acall_tool(name, **arguments)
        except BaseException as exc:  # cancellation
            self.tracer.end_with_exception(span, exc)
            raise
        return self._end(span, name, result)

    async def acall_tool_raw(self, name: str, /, arguments: Arguments, *, call_id: str | None = None) -> ToolResult:
        span = self._start(name, call_id, arguments)
        try:
            result = await super().acall_tool_raw(name, arguments)
        except BaseException as exc:
            self.tracer.end_with_exception(span, exc)
            raise
        return self._end(span, name, result)


@pytest.fixture
def exporter() -> InMemorySpanExporter:
    return InMemorySpanExporter()


@pytest.fixture
def provider(exporter: InMemorySpanExporter) -> Iterator[TracerProvider]:
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    yield provider
    provider.shutdown()


@pytest.fixture
def tracer(provider: TracerProvider) -> ToolTracer:
    return ToolTracer(provider)


@pytest.fixture
def traced_registry_cls() -> type[TracedRegistry]:
    return TracedRegistry
