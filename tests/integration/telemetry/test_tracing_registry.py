"""Tool spans through the registry (``LocalToolRegistry(tracer=...)``), the agent loop and
an MCP server, exported in memory: success, validation error, timeout, circuit open,
unknown tool, retries, async, MCP."""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode, get_current_span

from orchestrator import ToolsNode
from tools import LocalToolRegistry, RetryPolicy, UpstreamError
from tools.telemetry import ToolTracer

SERVERS = Path(__file__).parent / "servers"


def weather(city: str) -> dict[str, Any]:
    """Current weather for a city."""
    return {"city": city, "temp_c": 21}


def attrs(span: ReadableSpan) -> dict[str, Any]:
    return dict(span.attributes or {})


@pytest.fixture
def registry(tracer: ToolTracer) -> LocalToolRegistry:
    registry = LocalToolRegistry(tracer=tracer, failure_threshold=1, reset_timeout=3600)
    registry.register(weather)
    return registry


def test_success_from_a_model_tool_call(registry: LocalToolRegistry, exporter: InMemorySpanExporter) -> None:
    result = registry.call_tool_raw("weather", '{"city": "Lisbon"}', call_id="call_9f2")
    assert result.ok
    (span,) = exporter.get_finished_spans()
    assert span.name == "execute_tool weather"
    assert attrs(span) == {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "weather",
        "gen_ai.tool.type": "function",
        "gen_ai.tool.description": "Current weather for a city.",
        "gen_ai.tool.call.id": "call_9f2",
        "tooldeck.request_id": result.metadata["request_id"],
        "tooldeck.attempts": 1,
        "tooldeck.breaker_state": "closed",
    }
    assert span.status.status_code is StatusCode.UNSET


def test_validation_error(registry: LocalToolRegistry, exporter: InMemorySpanExporter) -> None:
    registry.call_tool_raw("weather", '{"city": 5, "town": "x"}', call_id="c1")
    (span,) = exporter.get_finished_spans()
    assert attrs(span)["error.type"] == "validation_error"
    assert attrs(span)["tooldeck.breaker_state"] == "closed"  # bad input never trips the breaker
    assert span.status.status_code is StatusCode.ERROR
    assert "town" not in str(span.to_json())  # neither arguments nor the message by default


def test_timeout(tracer: ToolTracer, exporter: InMemorySpanExporter) -> None:
    registry = LocalToolRegistry(tracer=tracer)

    @registry.tool
    def slow() -> str:
        """Takes too long."""
        time.sleep(0.5)
        return "late"

    registry.register(slow, name="slow_bounded", timeout=0.05, replace=True)
    registry.call_tool("slow_bounded")
    (span,) = exporter.get_finished_spans()
    assert span.name == "execute_tool slow_bounded"
    assert attrs(span)["error.type"] == "timeout"
    assert span.status.status_code is StatusCode.ERROR


def test_circuit_open_and_breaker_state(registry: LocalToolRegistry, exporter: InMemorySpanExporter) -> None:
    @registry.tool
    def down() -> str:
        """Its backend is down."""
        raise UpstreamError("backend unavailable")

    registry.call_tool("down")
    registry.call_tool("down")
    failed, blocked = exporter.get_finished_spans()
    assert (attrs(failed)["error.type"], attrs(failed)["tooldeck.breaker_state"]) == ("upstream_error", "open")
    assert (attrs(blocked)["error.type"], attrs(blocked)["tooldeck.breaker_state"]) == ("circuit_open", "open")


def test_unknown_tool_span_name_stays_low_cardinality(
    registry: LocalToolRegistry, exporter: InMemorySpanExporter
) -> None:
    registry.call_tool_raw("wether" * 50, "{}", call_id="c7")
    (span,) = exporter.get_finished_spans()
    assert span.name == "execute_tool"
    assert attrs(span) == {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": ("wether" * 50)[:100],
        "gen_ai.tool.call.id": "c7",
        "error.type": "unknown_tool",
        "tooldeck.request_id": attrs(span)["tooldeck.request_id"],
        "tooldeck.attempts": 1,
    }


def test_retries_are_counted_in_one_span(tracer: ToolTracer, exporter: InMemorySpanExporter) -> None:
    registry = LocalToolRegistry(tracer=tracer, sleep=lambda _: None)
    attempts = []

    def flaky() -> str:
        """Works on the third try."""
        attempts.append(1)
        if len(attempts) < 3:
            raise UpstreamError("busy")
        return "ok"

    registry.register(flaky, retry=RetryPolicy(max_attempts=3))
    assert registry.call_tool("flaky").ok
    (span,) = exporter.get_finished_spans()
    assert attrs(span)["tooldeck.attempts"] == 3 and "error.type" not in attrs(span)


async def test_async_tool_spans_nest(tracer: ToolTracer, exporter: InMemorySpanExporter) -> None:
    registry = LocalToolRegistry(tracer=tracer)
    otel = tracer._tracer

    async def lookup(key: str) -> str:
        """An async tool that opens its own span."""
        with otel.start_as_current_span("db query"):
            await asyncio.sleep(0)
        return key

    registry.register(lookup)
    assert (await registry.acall_tool_raw("lookup", '{"key": "k"}', call_id="a1")).ok
    inner, outer = exporter.get_finished_spans()
    assert outer.name == "execute_tool lookup" and attrs(outer)["gen_ai.tool.call.id"] == "a1"
    assert inner.parent is not None and inner.parent.span_id == outer.context.span_id


def test_agent_chat_and_tools_are_one_trace_when_run_inline(
    registry: LocalToolRegistry, tracer: ToolTracer, exporter: InMemorySpanExporter
) -> None:
    node = ToolsNode(registry)
    state = {"messages": [_assistant(("c1", "weather", '{"city": "Lisbon"}'))]}
    with tracer.agent_span("main"):
        with tracer.chat_span("offline"):
            pass
        node(state)  # one call: runs inline, in the caller's context
    chat, tool, agent = exporter.get_finished_spans()
    assert tool.name == "execute_tool weather"
    assert {chat.context.trace_id, tool.context.trace_id} == {agent.context.trace_id}
    assert tool.parent is not None and tool.parent.span_id == agent.context.span_id


def test_parallel_tool_calls_stay_in_the_agent_trace(
    registry: LocalToolRegistry, tracer: ToolTracer, exporter: InMemorySpanExporter
) -> None:
    node = ToolsNode(registry)
    state = {"messages": [_assistant(("c1", "weather", '{"city": "Lisbon"}'), ("c2", "weather", '{"city": "Porto"}'))]}
    with tracer.agent_span("main"):
        node(state)
    spans = exporter.get_finished_spans()
    agent = spans[-1]
    tools = [span for span in spans if span.name == "execute_tool weather"]
    assert len(tools) == 2
    assert {span.context.trace_id for span in tools} == {agent.context.trace_id}


def test_spans_inside_a_tool_with_a_timeout_are_children(tracer: ToolTracer, exporter: InMemorySpanExporter) -> None:
    registry = LocalToolRegistry(tracer=tracer)
    seen = []

    def probe() -> str:
        """Reports the current span."""
        seen.append(get_current_span().get_span_context().span_id)
        return "ok"

    registry.register(probe, timeout=30)
    registry.call_tool("probe")
    (span,) = exporter.get_finished_spans()
    assert seen == [span.context.span_id]


@pytest.mark.mcp
def test_mcp_call_carries_the_trace_to_the_server(tracer: ToolTracer, exporter: InMemorySpanExporter) -> None:
    pytest.importorskip("mcp")
    from tools.external.mcp import MCPToolset

    registry = LocalToolRegistry(tracer=tracer)
    with MCPToolset([sys.executable, str(SERVERS / "trace_server.py")], call_timeout=30) as toolset:
        for tool in toolset.tools():
            registry.register(tool)
        result = registry.call_tool_raw("trace_context", "{}", call_id="call_mcp")
    assert result.ok, result
    (span,) = exporter.get_finished_spans()
    assert span.name == "execute_tool trace_context"
    context = span.context
    received = result.data if isinstance(result.data, dict) else {}
    version, trace_id, parent_id, _flags = str(received.get("traceparent", "---")).split("-")
    assert (version, trace_id) == ("00", f"{context.trace_id:032x}")
    # No global provider in this test, so the SDK's own client span is a no-op and the
    # server's parent is the tool span itself.
    assert parent_id == f"{context.span_id:016x}"


@pytest.mark.mcp
def test_mcp_tools_are_extensions(tracer: ToolTracer, exporter: InMemorySpanExporter) -> None:
    pytest.importorskip("mcp")
    from tools.external.mcp import MCPToolset

    registry = LocalToolRegistry(tracer=tracer)
    with MCPToolset([sys.executable, str(SERVERS / "trace_server.py")], call_timeout=30) as toolset:
        for tool in toolset.tools():
            registry.register(tool)
        registry.call_tool_raw("trace_context", "{}")
    (span,) = exporter.get_finished_spans()
    assert attrs(span)["gen_ai.tool.type"] == "extension"


def _assistant(*calls: tuple[str, str, str]) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}
            for call_id, name, arguments in calls
        ],
    }
