"""A real model: SmolLM2-135M behind llama_cpp.server, through OpenAIChatModel and the graph.

This model is too small for judgement, so the prompts are simple and ``tool_choice`` is
forced; it also tends to call a tool again instead of answering, which the iteration budget
handles. Its responses carry a legacy ``function_call`` with a wrong name: only
``tool_calls`` is read.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import BaseModel, Field

from orchestrator import AgentGraph, OpenAIChatModel, ToolsNode
from tools import BaseTool, LocalToolRegistry

pytestmark = [pytest.mark.llm, pytest.mark.timeout(600)]  # CPU inference on a shared machine


class WeatherRequest(BaseModel):
    city: str = Field(description="City name, e.g. 'Paris'")


class WeatherTool(BaseTool[WeatherRequest, dict[str, Any]]):
    name = "get_weather"
    description = "Current weather for a city."

    def __init__(self) -> None:
        self.cities: list[str] = []

    def execute_internal(self, request: WeatherRequest) -> dict[str, Any]:
        self.cities.append(request.city)
        return {"city": request.city, "temperature_c": 21, "sky": "sunny"}


def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: First integer.
        b: Second integer.
    """
    return a + b


def forced(name: str) -> dict[str, Any]:
    return {"type": "function", "function": {"name": name}}


@pytest.fixture
def model(llama_base_url: str) -> Any:
    with OpenAIChatModel(
        llama_base_url, "smollm2", timeout=120, temperature=0.0, extra_body={"max_tokens": 64}
    ) as model:
        yield model


def test_forced_tool_call_comes_back_as_tool_calls(model: OpenAIChatModel) -> None:
    registry = LocalToolRegistry()
    registry.register(add)
    response = model.chat(
        [{"role": "user", "content": "What is 2 plus 3?"}],
        tools=registry.to_openai_tools(),
        tool_choice=forced("add"),
    )
    assert response.message["role"] == "assistant"
    assert "function_call" not in response.message
    (call,) = response.tool_calls
    assert call["type"] == "function"
    assert call["function"]["name"] == "add"
    assert isinstance(call["id"], str)
    assert call["id"]
    assert isinstance(json.loads(call["function"]["arguments"]), dict)
    raw_message = (response.raw or {})["choices"][0]["message"]
    legacy = raw_message.get("function_call")
    if legacy is not None:  # the server's legacy field, which the client must not trust
        assert legacy.get("name") != "add" or legacy == raw_message.get("function_call")


def test_graph_executes_real_tool_calls_and_ends_within_budget(model: OpenAIChatModel) -> None:
    weather = WeatherTool()
    registry = LocalToolRegistry()
    registry.register(weather)
    graph = AgentGraph(model, registry, tool_choice=forced("get_weather"), max_iterations=2)
    try:
        run = graph.run("What is the weather in Paris?")
    finally:
        graph.tools_node.close()
    # Forced on every turn, the model keeps calling: the budget ends the run with a message.
    assert run.stop_reason == "max_iterations"
    assert run.iterations == 2
    assert run.messages[-1]["role"] == "assistant"
    assert "iteration budget" in run.answer
    assert run.tool_results
    assert all(r["name"] == "get_weather" for r in run.tool_results)
    assert any(r["status"] == "success" for r in run.tool_results)
    assert len(weather.cities) == sum(r["status"] == "success" for r in run.tool_results)
    calls = [c["id"] for m in run.messages if m["role"] == "assistant" for c in m.get("tool_calls", [])]
    answered = [m["tool_call_id"] for m in run.messages if m["role"] == "tool"]
    assert answered == calls  # every call answered exactly once, in order


def test_tools_node_runs_the_models_call_through_the_registry(model: OpenAIChatModel) -> None:
    registry = LocalToolRegistry()
    registry.register(add)
    user = {"role": "user", "content": "Add 20 and 22."}
    response = model.chat([user], tools=registry.to_openai_tools(), tool_choice=forced("add"))
    with ToolsNode(registry) as node:
        update = node({"messages": [user, response.message]})
    (record,) = update["tool_results"]
    assert record["name"] == "add"
    assert record["status"] == "success", update["messages"][0]["content"]
    body = json.loads(update["messages"][0]["content"])
    assert body["data"] == record["arguments"]["a"] + record["arguments"]["b"]
