"""ToolTracer against the SDK's in-memory exporter: tool, agent and chat spans, propagation."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import Iterator

import pytest
from pytest_mock import MockerFixture

pytest.importorskip("opentelemetry.sdk")

from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode, get_current_span
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from tools import LocalToolRegistry, ToolError, ToolResult
from tools.telemetry import ToolTracer, TracingUnavailableError, gen_ai_tool_type, inject_trace_context


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


def weather(city: str) -> dict[str, object]:
    """Current weather for a city."""
    if city == "Atlantis":
        raise ToolError(f"No weather station in {city}")
    return {"city": city, "temp_c": 21}


@pytest.fixture
def registry() -> LocalToolRegistry:
    registry = LocalToolRegistry()
    registry.register(weather)
    return registry


def traced_call(
    tracer: ToolTracer, registry: LocalToolRegistry, name: str, arguments: str, call_id: str | None
) -> None:
    tool = registry.get_tool(name)
    span = tracer.start(name, tool.description if tool else None, "function", call_id, arguments)
    tracer.end(span, registry.call_tool_raw(name, arguments), "closed")


def only(exporter: InMemorySpanExporter) -> ReadableSpan:
    (span,) = exporter.get_finished_spans()
    return span


def test_success_span(tracer: ToolTracer, registry: LocalToolRegistry, exporter: InMemorySpanExporter) -> None:
    tool = registry.get_tool("weather")
    assert tool is not None
    handle = tracer.start("weather", tool.description, "function", "call_abc", '{"city": "Lisbon"}')
    result = registry.call_tool_raw("weather", '{"city": "Lisbon"}')
    tracer.end(handle, result, "closed")
    span = only(exporter)
    assert span.name == "execute_tool weather"
    assert span.kind is SpanKind.INTERNAL
    assert span.status.status_code is StatusCode.UNSET
    assert dict(span.attributes or {}) == {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "weather",
        "gen_ai.tool.type": "function",
        "gen_ai.tool.description": "Current weather for a city.",
        "gen_ai.tool.call.id": "call_abc",
        "tooldeck.request_id": result.metadata["request_id"],
        "tooldeck.attempts": 1,
        "tooldeck.breaker_state": "closed",
    }


def test_failure_span_has_error_type_and_status(
    tracer: ToolTracer, registry: LocalToolRegistry, exporter: InMemorySpanExporter
) -> None:
    traced_call(tracer, registry, "weather", '{"city": "Atlantis"}', None)
    traced_call(tracer, registry, "weather", '{"town": "Lisbon"}', None)
    failed, invalid = exporter.get_finished_spans()
    for span, error_type in ((failed, "execution_error"), (invalid, "validation_error")):
        assert span.attributes is not None
        assert span.attributes["error.type"] == error_type
        assert span.status.status_code is StatusCode.ERROR
        assert span.status.description is None  # the message may echo arguments: off by default
        assert "gen_ai.tool.call.id" not in span.attributes  # not from a model: no call id
    assert not any(key.endswith(("arguments", "result")) for key in failed.attributes or {})


def test_arguments_and_results_only_when_turned_on(
    provider: TracerProvider, registry: LocalToolRegistry, exporter: InMemorySpanExporter
) -> None:
    tracer = ToolTracer(provider, record_arguments=True, record_results=True)
    traced_call(tracer, registry, "weather", '{"city": "Lisbon"}', "c1")
    traced_call(tracer, registry, "weather", '{"city": "Atlantis"}', "c2")
    ok, failed = exporter.get_finished_spans()
    assert ok.attributes is not None and failed.attributes is not None
    assert ok.attributes["gen_ai.tool.call.arguments"] == '{"city": "Lisbon"}'
    assert ok.attributes["gen_ai.tool.call.result"] == '{"city":"Lisbon","temp_c":21}'
    assert failed.attributes["gen_ai.tool.call.arguments"] == '{"city": "Atlantis"}'
    assert "gen_ai.tool.call.result" not in failed.attributes  # only for successful calls
    assert failed.status.description == "No weather station in Atlantis"


def test_mapping_and_bytes_arguments_are_json_and_clipped(
    provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    tracer = ToolTracer(provider, record_arguments=True, max_content_chars=10)
    for arguments in ({"city": "Lisbon", "days": 3}, b'{"city": "Lisbon"}'):
        tracer.end(tracer.start("weather", arguments=arguments), ToolResult.success(1))
    mapping, raw = exporter.get_finished_spans()
    assert mapping.attributes is not None and raw.attributes is not None
    assert mapping.attributes["gen_ai.tool.call.arguments"] == '{"city":"L'
    assert raw.attributes["gen_ai.tool.call.arguments"] == '{"city": "'


def test_tool_span_is_current_while_the_tool_runs(tracer: ToolTracer, exporter: InMemorySpanExporter) -> None:
    seen = []

    def probe() -> str:
        """Reports the current span."""
        seen.append(get_current_span().get_span_context())
        return "ok"

    registry = LocalToolRegistry()
    registry.register(probe)
    outside = get_current_span()
    handle = tracer.start("probe")
    tracer.end(handle, registry.call_tool("probe"))
    assert get_current_span() is outside  # the previous context is restored
    assert seen[0].span_id == only(exporter).context.span_id


def test_exception_path(tracer: ToolTracer, exporter: InMemorySpanExporter) -> None:
    handle = tracer.start("slow")
    tracer.end_with_exception(handle, asyncio.CancelledError())
    span = only(exporter)
    assert span.attributes is not None and span.attributes["error.type"] == "CancelledError"
    assert span.status.status_code is StatusCode.ERROR


def test_one_question_is_one_trace(
    tracer: ToolTracer, registry: LocalToolRegistry, exporter: InMemorySpanExporter
) -> None:
    with tracer.agent_span("main", conversation_id="conv-1") as agent:
        with tracer.chat_span("smollm2", provider="llama.cpp") as chat:
            tracer.record_chat_response(
                chat, response_model="smollm2-135m", input_tokens=12, output_tokens=3, finish_reasons=["tool_calls"]
            )
        traced_call(tracer, registry, "weather", '{"city": "Lisbon"}', "call_1")
        with tracer.chat_span("smollm2"):
            pass
    chat1, tool, chat2, root = exporter.get_finished_spans()
    assert root.name == "invoke_agent main" and root.kind is SpanKind.INTERNAL
    assert dict(root.attributes or {}) == {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": "main",
        "gen_ai.conversation.id": "conv-1",
    }
    assert chat1.name == "chat smollm2" and chat1.kind is SpanKind.CLIENT
    assert dict(chat1.attributes or {}) == {
        "gen_ai.operation.name": "chat",
        "gen_ai.request.model": "smollm2",
        "gen_ai.provider.name": "llama.cpp",
        "gen_ai.response.model": "smollm2-135m",
        "gen_ai.response.finish_reasons": ("tool_calls",),
        "gen_ai.usage.input_tokens": 12,
        "gen_ai.usage.output_tokens": 3,
    }
    assert {span.context.trace_id for span in (chat1, tool, chat2, root)} == {agent.get_span_context().trace_id}
    assert {span.parent.span_id for span in (chat1, tool, chat2) if span.parent} == {root.context.span_id}


def test_agent_span_records_an_escaping_exception(tracer: ToolTracer, exporter: InMemorySpanExporter) -> None:
    with pytest.raises(KeyError), tracer.agent_span("main"):
        raise KeyError("api_key=secret")
    span = only(exporter)
    assert span.attributes is not None and span.attributes["error.type"] == "KeyError"
    assert span.status.status_code is StatusCode.ERROR
    assert "secret" not in str(span.to_json())  # the class name only, never the text


def test_inject_trace_context_carries_the_current_span(tracer: ToolTracer) -> None:
    meta = {"progressToken": 7}
    assert inject_trace_context(meta) == meta  # no span current: nothing to add
    handle = tracer.start("remote")
    try:
        context = get_current_span().get_span_context()
        injected = tracer.inject_trace_context(meta)
        explicit = inject_trace_context(meta, propagator=TraceContextTextMapPropagator())
    finally:
        tracer.end(handle, ToolResult.success(None))
    expected = f"00-{context.trace_id:032x}-{context.span_id:016x}-{int(context.trace_flags):02x}"
    assert injected == {"progressToken": 7, "traceparent": expected}
    assert explicit == injected
    assert meta == {"progressToken": 7}  # the caller's dict is not modified


def test_unknown_names_do_not_grow_the_attribute_cache(tracer: ToolTracer, exporter: InMemorySpanExporter) -> None:
    for n in range(3000):
        tracer.end(tracer.start(f"made_up_{n}"), ToolResult.failure("unknown_tool", "no such tool"))
    assert len(tracer._cache) <= 1024
    assert exporter.get_finished_spans()[-1].name == "execute_tool made_up_2999"


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        (None, "function"),
        ("builtin", "function"),
        ("function", "function"),
        ("module", "function"),
        ("mcp", "extension"),
        ("http", "extension"),
        ("cli", "extension"),
        ("binary", "extension"),
    ],
)
def test_tool_types(source: str | None, expected: str) -> None:
    assert gen_ai_tool_type(source) == expected


def test_without_opentelemetry_a_tracer_is_a_clear_error(mocker: MockerFixture) -> None:
    mocker.patch.dict(sys.modules, {"opentelemetry": None})
    with pytest.raises(TracingUnavailableError, match=r"pip install -e '\.\[otel\]'"):
        ToolTracer()


def test_importing_the_package_loads_no_opentelemetry() -> None:
    code = (
        "import sys, tools, tools.telemetry\n"
        "from tools.telemetry import inject_trace_context\n"
        "assert inject_trace_context({'a': 1}) == {'a': 1}\n"
        "print(sorted({m.split('.')[0] for m in sys.modules if m.startswith(('opentelemetry', 'rich'))}))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == "[]"
