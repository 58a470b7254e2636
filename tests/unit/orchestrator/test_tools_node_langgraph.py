"""ToolsNode as a node of a LangGraph StateGraph (langgraph is in the test extra)."""

from __future__ import annotations

import asyncio
import json
import operator
from typing import Annotated, Any, TypedDict

import pytest

from orchestrator import ToolsNode
from tools import LocalToolRegistry

langgraph_graph = pytest.importorskip("langgraph.graph")


class State(TypedDict):
    messages: Annotated[list[Any], operator.add]
    tool_results: Annotated[list[Any], operator.add]


def registry_with_add() -> LocalToolRegistry:
    registry = LocalToolRegistry()

    def add(a: int, b: int) -> int:
        """Add two integers.

        Args:
            a: First addend.
            b: Second addend.
        """
        return a + b

    registry.register(add)
    return registry


def scripted_agent(state: State) -> dict[str, Any]:
    """First turn: two tool calls; second turn: answer from the tool messages."""
    tool_messages = [m for m in state["messages"] if m["role"] == "tool"]
    if not tool_messages:
        calls = [
            {
                "id": "c1",
                "type": "function",
                "function": {"name": "add", "arguments": '{"a":1,"b":2}'},
            },
            {"id": "c2", "type": "function", "function": {"name": "nope", "arguments": "{}"}},
        ]
        return {"messages": [{"role": "assistant", "content": None, "tool_calls": calls}]}
    total = json.loads(tool_messages[0]["content"])["data"]
    return {"messages": [{"role": "assistant", "content": f"The sum is {total}."}]}


def route(state: State) -> str:
    last = state["messages"][-1]
    return "tools" if last.get("tool_calls") else langgraph_graph.END


def build_graph(node: ToolsNode) -> Any:
    graph = langgraph_graph.StateGraph(State)
    graph.add_node("agent", scripted_agent)
    graph.add_node("tools", node)
    graph.add_edge(langgraph_graph.START, "agent")
    graph.add_conditional_edges("agent", route, ["tools", langgraph_graph.END])
    graph.add_edge("tools", "agent")
    return graph.compile()


def test_tools_node_in_a_langgraph_state_graph() -> None:
    with ToolsNode(registry_with_add()) as node:
        app = build_graph(node)
        final = app.invoke({"messages": [{"role": "user", "content": "1+2?"}], "tool_results": []})
    assert [m["role"] for m in final["messages"]] == [
        "user",
        "assistant",
        "tool",
        "tool",
        "assistant",
    ]
    assert final["messages"][-1]["content"] == "The sum is 3."
    assert [m["tool_call_id"] for m in final["messages"] if m["role"] == "tool"] == ["c1", "c2"]
    assert [(r["name"], r["status"], r["error_type"]) for r in final["tool_results"]] == [
        ("add", "success", None),
        ("nope", "error", "unknown_tool"),
    ]


def test_tools_node_async_in_a_langgraph_state_graph() -> None:
    with ToolsNode(registry_with_add()) as node:
        graph = langgraph_graph.StateGraph(State)
        graph.add_node("agent", scripted_agent)
        graph.add_node("tools", node.ainvoke)
        graph.add_edge(langgraph_graph.START, "agent")
        graph.add_conditional_edges("agent", route, ["tools", langgraph_graph.END])
        graph.add_edge("tools", "agent")
        app = graph.compile()
        start = {"messages": [{"role": "user", "content": "1+2?"}], "tool_results": []}
        final = asyncio.run(app.ainvoke(start))
    assert final["messages"][-1]["content"] == "The sum is 3."


def test_tools_node_with_messages_state_and_langchain_messages() -> None:
    messages_state = pytest.importorskip("langgraph.graph").MessagesState
    ai_message = pytest.importorskip("langchain_core.messages").AIMessage

    def agent(state: Any) -> dict[str, Any]:
        if state["messages"][-1].type == "tool":
            return {"messages": [ai_message(content="done")]}
        call = {"id": "lc1", "name": "add", "args": {"a": 20, "b": 22}, "type": "tool_call"}
        return {"messages": [ai_message(content="", tool_calls=[call])]}

    def go(state: Any) -> str:
        return "tools" if getattr(state["messages"][-1], "tool_calls", None) else langgraph_graph.END

    with ToolsNode(registry_with_add()) as node:
        graph = langgraph_graph.StateGraph(messages_state)
        graph.add_node("agent", agent)
        graph.add_node("tools", lambda state: {"messages": node(state)["messages"]})
        graph.add_edge(langgraph_graph.START, "agent")
        graph.add_conditional_edges("agent", go, ["tools", langgraph_graph.END])
        graph.add_edge("tools", "agent")
        final = graph.compile().invoke({"messages": [("user", "20+22?")]})
    tool_message = final["messages"][2]
    assert tool_message.type == "tool"
    assert tool_message.tool_call_id == "lc1"
    assert json.loads(tool_message.content)["data"] == 42
