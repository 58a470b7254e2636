"""One question is one trace: AgentGraph opens ``invoke_agent`` around the run and ``chat``
around each model request; the registry's ``execute_tool`` spans (sync workers, async tasks)
are children of the agent span. A paused run and its resume are two traces that share the
run id as ``gen_ai.conversation.id``."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("opentelemetry.sdk")

from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from orchestrator.graph import AgentGraph
from tests.unit.orchestrator.approvals_kit import ScriptedModel, answer, call, turn
from tools import LocalToolRegistry
from tools.approvals import ApprovalPolicy, ApprovalsStore, Approve
from tools.routing import ToolCategory, ToolManual
from tools.telemetry import ToolTracer


@pytest.fixture
def exporter() -> Iterator[InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    exporter.provider = provider  # type: ignore[attr-defined]
    yield exporter
    provider.shutdown()


def _graph(tracer: ToolTracer, policy: ApprovalPolicy | None = None) -> AgentGraph:
    registry = LocalToolRegistry(tracer=tracer, policy=policy)

    def look(path: str) -> str:
        """Look at a path.

        Args:
            path: The path.
        """
        return f"seen {path}"

    def note(path: str) -> str:
        """Write a note.

        Args:
            path: The path.
        """
        return f"noted {path}"

    registry.register(
        look, manual=ToolManual(name="look", category=ToolCategory.FILE_READ, risk="safe", mutating=False)
    )
    registry.register(note, manual=ToolManual(name="note", category=ToolCategory.FILE_WRITE, risk="moderate"))
    model = ScriptedModel(turn(call("c0", "look", path="a"), call("c1", "note", path="b")), answer("ok"))
    return AgentGraph(model, registry, tracer=tracer, provider="scripted-provider")


def _by_name(spans: tuple[ReadableSpan, ...]) -> dict[str, list[ReadableSpan]]:
    out: dict[str, list[ReadableSpan]] = {}
    for span in spans:
        out.setdefault(span.name, []).append(span)
    return out


def _check_one_trace(spans: tuple[ReadableSpan, ...], tools: list[str]) -> ReadableSpan:
    named = _by_name(spans)
    (agent,) = named["invoke_agent main"]
    assert agent.parent is None
    assert agent.context is not None
    trace_id = agent.context.trace_id
    assert {s.context.trace_id for s in spans if s.context is not None} == {trace_id}
    for span in spans:
        if span is not agent:
            assert span.parent is not None and span.parent.span_id == agent.context.span_id, span.name
    assert sorted(name.removeprefix("execute_tool ") for name in named if name.startswith("execute_tool")) == tools
    return agent


def test_a_run_is_one_trace(exporter: InMemorySpanExporter) -> None:
    tracer = ToolTracer(exporter.provider)  # type: ignore[attr-defined]
    run = _graph(tracer).run("go")
    spans = exporter.get_finished_spans()
    agent = _check_one_trace(spans, ["look", "note"])
    assert dict(agent.attributes or {}) == {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": "main",
        "gen_ai.conversation.id": run.run_id,
    }
    chats = _by_name(spans)["chat scripted"]
    assert len(chats) == 2
    assert dict(chats[0].attributes or {}) == {
        "gen_ai.operation.name": "chat",
        "gen_ai.request.model": "scripted",
        "gen_ai.provider.name": "scripted-provider",
        "gen_ai.response.model": "scripted",
        "gen_ai.response.finish_reasons": ("stop",),
    }


def test_an_async_run_is_one_trace(exporter: InMemorySpanExporter) -> None:
    tracer = ToolTracer(exporter.provider)  # type: ignore[attr-defined]
    asyncio.run(_graph(tracer).arun("go"))
    _check_one_trace(exporter.get_finished_spans(), ["look", "note"])


def test_a_paused_run_and_its_resume_share_the_conversation_id(exporter: InMemorySpanExporter, tmp_path: Path) -> None:
    tracer = ToolTracer(exporter.provider)  # type: ignore[attr-defined]
    graph = _graph(tracer, ApprovalPolicy("medium", ApprovalsStore(tmp_path / "approvals.json")))
    paused = graph.run("go")
    first = exporter.get_finished_spans()
    _check_one_trace(first, ["look"])
    exporter.clear()
    assert paused.state is not None
    graph.resume(paused.state, {"c1": Approve()})
    second = exporter.get_finished_spans()
    agent = _check_one_trace(second, ["note"])
    assert agent.attributes is not None and agent.attributes["gen_ai.conversation.id"] == paused.run_id
    assert len(_by_name(second)["chat scripted"]) == 1
