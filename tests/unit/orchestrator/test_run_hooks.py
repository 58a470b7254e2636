"""`RunHooks`: an agent run tells its watcher about each model turn and tool call as it happens
(issue 21 items 6 and 7): starts, progress reports from the tools, ends (timeouts, denials
and cancellations included), exactly once each."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest
from pydantic import BaseModel

from orchestrator.graph import AgentGraph, ToolsNode
from orchestrator.graph.hooks import ModelFinished, ModelStarted, RunHooks, ToolFinished, ToolStarted
from tests.unit.orchestrator.approvals_kit import Ledger, ScriptedModel, answer, call, policy, registry, turn
from tools import BaseTool, LocalToolRegistry
from tools.approvals import Deny
from tools.progress import ToolProgress, report_progress


class Recorder(RunHooks):
    """Every hook call, in order (thread-safe)."""

    def __init__(self) -> None:
        self.events: list[tuple[str, Any]] = []
        self._lock = threading.Lock()

    def _add(self, kind: str, event: Any) -> None:
        with self._lock:
            self.events.append((kind, event))

    def on_model_start(self, event: ModelStarted) -> None:
        self._add("model_start", event)

    def on_model_end(self, event: ModelFinished) -> None:
        self._add("model_end", event)

    def on_tool_start(self, event: ToolStarted) -> None:
        self._add("tool_start", event)

    def on_tool_progress(self, event: ToolProgress) -> None:
        self._add("tool_progress", event)

    def on_tool_end(self, event: ToolFinished) -> None:
        self._add("tool_end", event)

    def kinds(self, call_id: str | None = None) -> list[str]:
        return [kind for kind, event in self.events if call_id is None or getattr(event, "call_id", None) == call_id]


class Work(BaseModel):
    steps: int = 2


class Slow(BaseTool[Work, str]):
    name = "slow"
    description = "Works in steps."

    def execute_internal(self, request: Work) -> str:
        for step in range(1, request.steps + 1):
            report_progress(step / request.steps, f"step {step}")
        return "done"


class AsyncSlow(BaseTool[Work, str]):
    name = "aslow"
    description = "Works in steps, asynchronously."

    async def execute_internal(self, request: Work) -> str:
        for step in range(1, request.steps + 1):
            await asyncio.sleep(0)
            report_progress(step / request.steps, f"step {step}")
        return "done"


class Stuck(BaseTool[Work, str]):
    name = "stuck"
    description = "Waits until released."

    def __init__(self) -> None:
        self.release = threading.Event()

    def execute_internal(self, request: Work) -> str:
        self.release.wait(60)
        return "late"


def tool_state(*calls: dict[str, Any]) -> dict[str, Any]:
    assistant = {"role": "assistant", "content": None, "tool_calls": list(calls)}
    return {"messages": [{"role": "user", "content": "go"}, assistant]}


@pytest.fixture
def tools() -> LocalToolRegistry:
    registry = LocalToolRegistry()
    registry.register(Slow())
    registry.register(AsyncSlow())
    return registry


@pytest.mark.parametrize("entry", ["sync", "async"])
def test_each_call_starts_reports_and_ends_once(tools: LocalToolRegistry, entry: str) -> None:
    hooks = Recorder()
    state = tool_state(call("a", "slow", steps=2), call("b", "aslow", steps=2), call("c", "nope"))
    with ToolsNode(tools, hooks=hooks) as node:
        update = node(state) if entry == "sync" else asyncio.run(node.ainvoke(state))
    assert len(update["messages"]) == 3
    for call_id in ("a", "b"):
        assert hooks.kinds(call_id) == ["tool_start", "tool_progress", "tool_progress", "tool_end"]
    assert hooks.kinds("c") == ["tool_start", "tool_end"]
    ends = {event.call_id: event for kind, event in hooks.events if kind == "tool_end"}
    assert (ends["a"].status, ends["a"].error_type) == ("success", None)
    assert (ends["c"].status, ends["c"].error_type) == ("error", "unknown_tool")
    progress = [event for kind, event in hooks.events if kind == "tool_progress" and event.call_id == "a"]
    assert progress == [ToolProgress("slow", "a", 0.5, "step 1"), ToolProgress("slow", "a", 1.0, "step 2")]
    starts = [event for kind, event in hooks.events if kind == "tool_start"]
    assert {s.call_id: s.arguments for s in starts}["a"] == {"steps": 2}


@pytest.mark.parametrize("entry", ["sync", "async"])
def test_a_timed_out_call_ends_once_with_the_timeout(entry: str) -> None:
    stuck = Stuck()
    registry = LocalToolRegistry()
    registry.register(stuck)
    hooks = Recorder()
    state = tool_state(call("s", "stuck"))
    node = ToolsNode(registry, hooks=hooks, call_timeout=0.3)
    try:
        node(state) if entry == "sync" else asyncio.run(node.ainvoke(state))
    finally:
        stuck.release.set()
        node.close()
    assert hooks.kinds("s") == ["tool_start", "tool_end"]
    (end,) = [event for kind, event in hooks.events if kind == "tool_end"]
    assert end.error_type == "timeout"


def test_a_failing_hook_never_fails_the_run(tools: LocalToolRegistry, caplog: pytest.LogCaptureFixture) -> None:
    class Broken(RunHooks):
        def on_tool_start(self, event: ToolStarted) -> None:
            raise RuntimeError("hook bug")

        def on_tool_progress(self, event: ToolProgress) -> None:
            raise RuntimeError("hook bug")

    with ToolsNode(tools, hooks=Broken()) as node:
        update = node(tool_state(call("a", "slow")))
    assert '"status":"success"' in update["messages"][0]["content"]
    assert "run hook" in caplog.text


def test_the_graph_tells_each_model_turn_and_hands_its_hooks_to_its_node(tools: LocalToolRegistry) -> None:
    hooks = Recorder()
    model = ScriptedModel(turn(call("a", "slow", steps=1)), answer("finished"))
    graph = AgentGraph(model, tools, hooks=hooks, max_iterations=4, agent_name="coder")
    try:
        run = graph.run("work")
    finally:
        graph.tools_node.close()
    assert run.answer == "finished"
    assert hooks.kinds() == [
        "model_start", "model_end", "tool_start", "tool_progress", "tool_end", "model_start", "model_end",
    ]  # fmt: skip
    starts = [event for kind, event in hooks.events if kind == "model_start"]
    assert starts == [ModelStarted("coder", 1, 4, "scripted"), ModelStarted("coder", 2, 4, "scripted")]
    ends = [event for kind, event in hooks.events if kind == "model_end"]
    assert [(e.turn, e.tool_calls) for e in ends] == [(1, 1), (2, 0)]


async def test_the_async_graph_tells_the_same(tools: LocalToolRegistry) -> None:
    hooks = Recorder()
    model = ScriptedModel(turn(call("a", "aslow", steps=1)), answer("finished"))
    graph = AgentGraph(model, tools, hooks=hooks)
    try:
        await graph.arun("work")
    finally:
        graph.tools_node.close()
    assert hooks.kinds() == [
        "model_start", "model_end", "tool_start", "tool_progress", "tool_end", "model_start", "model_end",
    ]  # fmt: skip


def test_a_denied_call_starts_and_ends_without_running(tmp_path: Any) -> None:
    ledger = Ledger()
    hooks = Recorder()
    model = ScriptedModel(turn(call("w", "wipe", path="/")), answer("ok"))
    graph = AgentGraph(
        model, registry(ledger, policy("medium", tmp_path)), hooks=hooks, approver=lambda request: Deny("no")
    )
    try:
        graph.run("wipe it")
    finally:
        graph.tools_node.close()
    assert ledger.runs == []
    assert hooks.kinds("w") == ["tool_start", "tool_end"]
    (end,) = [event for kind, event in hooks.events if kind == "tool_end"]
    assert end.error_type == "permission_denied"
