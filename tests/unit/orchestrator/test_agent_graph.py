"""AgentGraph: the bounded agent -> tools -> agent loop, with a scripted fake model."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from orchestrator.graph import AgentGraph, run_agent
from orchestrator.llm import ChatModelError, ChatResponse, ToolChoice
from tools import LocalToolRegistry


class ScriptedModel:
    """Replays assistant turns; records what it was given."""

    def __init__(self, *turns: dict[str, Any], strict: bool = False) -> None:
        self.turns = list(turns)
        self.seen: list[dict[str, Any]] = []
        self._strict = strict

    @property
    def supports_strict_tools(self) -> bool:
        return self._strict

    def chat(
        self,
        messages: Sequence[Mapping[str, Any]],
        *,
        tools: Sequence[Mapping[str, Any]] | None = None,
        tool_choice: ToolChoice | None = None,
    ) -> ChatResponse:
        self.seen.append({"messages": [dict(m) for m in messages], "tools": tools, "tool_choice": tool_choice})
        turn = self.turns.pop(0) if len(self.turns) > 1 else self.turns[0]
        return ChatResponse(message={"role": "assistant", **turn})


def add_call(call_id: str, a: int, b: int) -> dict[str, Any]:
    arguments = json.dumps({"a": a, "b": b})
    return {"id": call_id, "type": "function", "function": {"name": "add", "arguments": arguments}}


@pytest.fixture
def registry() -> LocalToolRegistry:
    registry = LocalToolRegistry()

    def add(a: int, b: int = 0) -> int:
        """Add two integers.

        Args:
            a: First addend.
            b: Second addend.
        """
        return a + b

    registry.register(add)
    return registry


def test_loop_runs_tools_then_returns_the_final_answer(registry: LocalToolRegistry) -> None:
    model = ScriptedModel(
        {"content": None, "tool_calls": [add_call("c1", 2, 3), add_call("c2", 1, 1)]},
        {"content": "2+3 is 5 and 1+1 is 2."},
    )
    run = AgentGraph(model, registry, system_prompt="Be brief.").run("What is 2+3 and 1+1?")
    assert run.stop_reason == "final_answer"
    assert run.iterations == 2
    assert run.answer == "2+3 is 5 and 1+1 is 2."
    roles = [m["role"] for m in run.messages]
    assert roles == ["system", "user", "assistant", "tool", "tool", "assistant"]
    assert [(r["tool_call_id"], r["status"]) for r in run.tool_results] == [
        ("c1", "success"),
        ("c2", "success"),
    ]
    second_turn = model.seen[1]["messages"]
    assert [json.loads(m["content"])["data"] for m in second_turn if m["role"] == "tool"] == [5, 2]
    assert [s.node for s in run.steps] == ["agent", "tools", "agent"]
    assert set(run.timings) == {"total_ms", "model_ms", "tools_ms"}
    assert json.loads(json.dumps(run.to_dict()))["answer"] == run.answer


def test_model_gets_registry_schemas_strict_when_supported(registry: LocalToolRegistry) -> None:
    for strict in (False, True):
        model = ScriptedModel({"content": "hi"}, strict=strict)
        AgentGraph(model, registry).run("hi")
        assert model.seen[0]["tools"] == registry.to_openai_tools(strict=strict)
        assert model.seen[0]["tool_choice"] is None


def test_budget_exhaustion_ends_with_a_clear_message(registry: LocalToolRegistry) -> None:
    model = ScriptedModel({"content": None, "tool_calls": [add_call("again", 1, 2)]})
    run = AgentGraph(model, registry, max_iterations=3).run("loop forever")
    assert run.stop_reason == "max_iterations"
    assert run.iterations == 3
    assert len(run.tool_results) == 3  # every call of every turn was answered
    assert run.messages[-1]["role"] == "assistant"
    assert "3 turns" in run.answer
    assert "--max-iterations" in run.answer
    assert "add -> success" in run.answer
    tool_ids = [m["tool_call_id"] for m in run.messages if m["role"] == "tool"]
    assert tool_ids == ["again"] * 3


def test_tool_choice_every_turn_and_initial_only(registry: LocalToolRegistry) -> None:
    forced = {"type": "function", "function": {"name": "add"}}
    model = ScriptedModel({"content": None, "tool_calls": [add_call("c", 1, 1)]}, {"content": "2"})
    AgentGraph(model, registry, initial_tool_choice=forced).run("1+1")
    assert [s["tool_choice"] for s in model.seen] == [forced, None]
    model = ScriptedModel({"content": None, "tool_calls": [add_call("c", 1, 1)]})
    run = AgentGraph(model, registry, tool_choice="required", max_iterations=2).run("1+1")
    assert [s["tool_choice"] for s in model.seen] == ["required", "required"]
    assert run.stop_reason == "max_iterations"


def test_given_tools_replace_the_registry_export(registry: LocalToolRegistry) -> None:
    model = ScriptedModel({"content": "no tools"})
    AgentGraph(model, registry, tools=[], tool_choice="auto").run("hi")
    assert model.seen[0]["tools"] is None
    assert model.seen[0]["tool_choice"] is None


def test_conversation_input_is_copied_not_modified(registry: LocalToolRegistry) -> None:
    history = [{"role": "system", "content": "S"}, {"role": "user", "content": "hi"}]
    model = ScriptedModel({"content": "hello"})
    run = AgentGraph(model, registry, system_prompt="ignored").run(history)
    assert history == [{"role": "system", "content": "S"}, {"role": "user", "content": "hi"}]
    assert [m["content"] for m in run.messages] == ["S", "hi", "hello"]


def test_content_null_final_turn_gives_an_empty_answer(registry: LocalToolRegistry) -> None:
    run = AgentGraph(ScriptedModel({"content": None}), registry).run("hi")
    assert run.stop_reason == "final_answer"
    assert run.answer == ""


def test_model_errors_propagate(registry: LocalToolRegistry) -> None:
    class Broken(ScriptedModel):
        def chat(self, messages: Any, **kwargs: Any) -> ChatResponse:
            raise ChatModelError("endpoint down")

    with pytest.raises(ChatModelError, match="endpoint down"):
        run_agent(Broken({"content": ""}), registry, "hi")


def test_async_run_matches_sync_run(registry: LocalToolRegistry) -> None:
    turns = ({"content": None, "tool_calls": [add_call("c1", 2, 2)]}, {"content": "4"})
    sync_run = AgentGraph(ScriptedModel(*turns), registry).run("2+2")
    async_run = asyncio.run(AgentGraph(ScriptedModel(*turns), registry).arun("2+2"))
    assert async_run.answer == sync_run.answer == "4"
    assert [r["status"] for r in async_run.tool_results] == ["success"]
    assert [m["role"] for m in async_run.messages] == [m["role"] for m in sync_run.messages]


def test_bad_budget_is_rejected(registry: LocalToolRegistry) -> None:
    with pytest.raises(ValueError, match="max_iterations"):
        AgentGraph(ScriptedModel({"content": ""}), registry, max_iterations=0)
