"""``orchestrator.testing``: `TestModel` calls every offered tool once with generated arguments and
summarises the results; `FunctionModel` plays the model's turns from a function (issue 21 item 2)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Literal

import pytest
from pydantic import BaseModel, Field

from orchestrator import AgentGraph, ChatModel, ChatModelResponseError, ChatResponse
from orchestrator.testing import FunctionModel, TestModel
from tools import BaseTool, LocalToolRegistry, ToolError


class Forecast(BaseModel):
    city: str = Field(min_length=2, description="City name")
    days: int = Field(3, ge=1, le=7)
    units: Literal["metric", "imperial"] = "metric"


class ForecastTool(BaseTool[Forecast, dict[str, Any]]):
    name = "forecast"
    description = "The weather forecast for a city."

    def __init__(self) -> None:
        self.calls: list[Forecast] = []

    def execute_internal(self, request: Forecast) -> dict[str, Any]:
        self.calls.append(request)
        return {"city": request.city, "days": request.days}


@pytest.fixture
def registry() -> LocalToolRegistry:
    registry = LocalToolRegistry()
    registry.register(ForecastTool())

    @registry.tool
    def add(a: int, b: int) -> int:
        """Add two integers.

        Args:
            a: First.
            b: Second.
        """
        return a + b

    @registry.tool
    def fail(reason: str) -> str:
        """Always fails.

        Args:
            reason: Why.
        """
        raise ToolError(f"failed on purpose: {reason}")

    return registry


def test_it_is_a_chat_model() -> None:
    assert isinstance(TestModel(), ChatModel)
    assert isinstance(FunctionModel(lambda messages, tools: "hi"), ChatModel)


def test_every_tool_is_called_once_with_valid_arguments_then_summarised(registry: LocalToolRegistry) -> None:
    run = AgentGraph(TestModel(), registry).run("try my tools")
    assert run.stop_reason == "final_answer"
    assert run.iterations == 2
    assert [r["name"] for r in run.tool_results] == ["forecast", "add", "fail"]
    assert [(r["status"], r["error_type"]) for r in run.tool_results] == [
        ("success", None),
        ("success", None),
        ("error", "execution_error"),
    ]
    assert run.tool_results[0]["arguments"] == {"city": "city-example"}
    assert run.answer.splitlines() == [
        "I called 3 tool(s):",
        '- forecast({"city": "city-example"}) -> success: {"city": "city-example", "days": 3}',
        '- add({"a": 1, "b": 1}) -> success: 2',
        '- fail({"reason": "reason-example"}) -> error (execution_error): failed on purpose: reason-example',
    ]


def test_calls_are_deterministic_and_seeds_vary_them(registry: LocalToolRegistry) -> None:
    def arguments(seed: int) -> list[Any]:
        return [r["arguments"] for r in AgentGraph(TestModel(seed=seed), registry).run("go").tool_results]

    assert arguments(0) == arguments(0)
    assert arguments(5) != arguments(0)
    for seed in range(10):  # every seed's calls pass validation
        statuses = [r["error_type"] for r in AgentGraph(TestModel(seed=seed), registry).run("go").tool_results]
        assert statuses == [None, None, "execution_error"], seed


def test_only_the_named_tools_and_tool_choice(registry: LocalToolRegistry) -> None:
    named = AgentGraph(TestModel(call_tools=["add", "not_offered"]), registry).run("go")
    assert [r["name"] for r in named.tool_results] == ["add"]
    forced = AgentGraph(TestModel(), registry, initial_tool_choice={"type": "function", "function": {"name": "fail"}})
    assert [r["name"] for r in forced.run("go").tool_results] == ["fail"]
    none = AgentGraph(TestModel(), registry, tool_choice="none").run("go")
    assert none.tool_results == []
    assert none.answer == "I called no tools: the tools offered are forecast, add, fail."


def test_without_tools_it_says_so_and_a_fixed_answer_wins() -> None:
    empty = LocalToolRegistry()
    assert AgentGraph(TestModel(), empty).run("go").answer == "I called no tools: no tools were offered."
    assert AgentGraph(TestModel(answer="fixed"), empty).run("go").answer == "fixed"


def test_a_new_question_calls_the_tools_again(registry: LocalToolRegistry) -> None:
    first = AgentGraph(TestModel(), registry).run("one")
    again = AgentGraph(TestModel(), registry).run([*first.messages, {"role": "user", "content": "two"}])
    assert len(again.tool_results) == 3


def test_function_model_plays_turns_and_is_checked_like_a_server(registry: LocalToolRegistry) -> None:
    seen_tools: list[list[str]] = []

    def script(messages: Sequence[Mapping[str, Any]], tools: Sequence[Mapping[str, Any]]) -> Any:
        seen_tools.append([t["function"]["name"] for t in tools])
        if messages[-1]["role"] == "user":
            return {"tool_calls": [{"function": {"name": "add", "arguments": {"a": 20, "b": 22}}}]}
        result = json.loads(messages[-1]["content"])
        return f"the sum is {result['data']}"

    run = AgentGraph(FunctionModel(script, name="scripted"), registry).run("add")
    assert run.answer == "the sum is 42"
    assert run.tool_results[0]["arguments"] == {"a": 20, "b": 22}
    assert run.tool_results[0]["tool_call_id"] == "call_1_0"  # a missing id is generated
    assert seen_tools[0] == ["forecast", "add", "fail"]


def test_function_model_passes_chat_responses_and_refuses_garbage() -> None:
    canned = ChatResponse(message={"role": "assistant", "content": "canned"})
    assert FunctionModel(lambda m, t: canned).chat([]) is canned
    with pytest.raises(ChatModelResponseError, match="returned int"):
        FunctionModel(lambda m, t: 7).chat([])  # type: ignore[arg-type, return-value]
    nameless = FunctionModel(lambda m, t: {"tool_calls": [{"function": {"arguments": "{}"}}]}).chat([])
    assert nameless.tool_calls == []  # dropped, as from a server
