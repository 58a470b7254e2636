"""ToolsNode and AgentGraph driven through a per-agent ToolView instead of the registry."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pytest

from orchestrator.graph import AgentGraph, ToolsNode
from orchestrator.llm import ChatResponse, ToolChoice
from tools import LocalToolRegistry
from tools.routing import CODING_TOOL_MANUALS


class ScriptedModel:
    """Replays assistant turns; records the tool definitions it was offered."""

    def __init__(self, *turns: dict[str, Any]) -> None:
        self.turns = list(turns)
        self.offered: list[list[str]] = []

    @property
    def supports_strict_tools(self) -> bool:
        return True

    def chat(
        self,
        messages: Sequence[Mapping[str, Any]],
        *,
        tools: Sequence[Mapping[str, Any]] | None = None,
        tool_choice: ToolChoice | None = None,
    ) -> ChatResponse:
        self.offered.append([t["function"]["name"] for t in tools or ()])
        return ChatResponse(message={"role": "assistant", **self.turns.pop(0)})


def call(call_id: str, name: str, arguments: Mapping[str, Any]) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}


def _stub(name: str, ran: list[str]) -> Callable[..., str]:
    def run(path: str = "") -> str:
        ran.append(name)
        return f"{name}:{path}"

    return run


@pytest.fixture
def calls() -> list[str]:
    return []


@pytest.fixture
def coding_registry(calls: list[str]) -> LocalToolRegistry:
    registry = LocalToolRegistry()
    for manual in CODING_TOOL_MANUALS:
        registry.register(_stub(manual.name, calls), name=manual.name, description=manual.description, manual=manual)
    return registry


def test_agent_graph_offers_only_the_reviewers_tools_and_refuses_edit(
    coding_registry: LocalToolRegistry, calls: list[str]
) -> None:
    view = coding_registry.for_agent("reviewer")
    model = ScriptedModel(
        {"content": None, "tool_calls": [call("c1", "read", {"path": "a.py"}), call("c2", "edit", {"path": "a.py"})]},
        {"content": "APPROVE"},
    )
    graph = AgentGraph(model, view)
    run = graph.run("review a.py")
    assert run.answer == "APPROVE"
    assert model.offered == [["read", "glob", "grep", "skill", "lsp"]] * 2
    tool_messages = [m for m in run.messages if m["role"] == "tool"]
    read, edit = (json.loads(m["content"]) for m in tool_messages)
    assert read["status"] == "success"
    assert edit["error_type"] == "permission_denied"
    assert edit["error"].startswith("The reviewer agent may not use the tool 'edit'.")
    assert [(r["name"], r["error_type"]) for r in run.tool_results] == [("read", None), ("edit", "permission_denied")]
    assert calls == ["read"]
    graph.tools_node.close()


def test_tools_node_runs_a_view_async_and_answers_unknown_tools(
    coding_registry: LocalToolRegistry, calls: list[str]
) -> None:
    view = coding_registry.for_agent("coder")
    state = {
        "messages": [
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    call("1", "bash", {"path": "make test"}),
                    call("2", "task", {"path": "x"}),
                    call("3", "nope", {}),
                ],
            }
        ]
    }
    with ToolsNode(view) as node:
        update = asyncio.run(node.ainvoke(state))
    statuses = [json.loads(m["content"]).get("error_type") for m in update["messages"]]
    assert statuses == [None, "permission_denied", "unknown_tool"]
    assert calls == ["bash"]


def test_graph_in_search_mode_loads_found_tools_for_the_next_turn(coding_registry: LocalToolRegistry) -> None:
    view = coding_registry.for_agent("main").with_tool_search(["read"])
    model = ScriptedModel(
        {"content": None, "tool_calls": [call("1", "tool_search", {"query": "language server definitions"})]},
        {"content": None, "tool_calls": [call("2", "lsp", {"path": "a.py"})]},
        {"content": "done"},
    )
    with ToolsNode(view) as node:
        run = AgentGraph(model, view, tools_node=node).run("where is foo defined?")
    assert run.answer == "done"
    assert model.offered[0] == ["read", "tool_search"]
    assert model.offered[1] == ["read", "lsp", "tool_search"]
    assert [r["status"] for r in run.tool_results] == ["success", "success"]


@pytest.mark.parametrize("decision", ["approve", "deny"])
def test_graph_over_a_view_asks_the_registry_s_approver(calls: list[str], tmp_path: Any, decision: str) -> None:
    """``AgentGraph`` takes "the registry's approver" when given none; over a view that is the
    approver of the view's registry (the pipeline's agents paused at a terminal without it)."""
    from tools.approvals import ApprovalPolicy, ApprovalRequest, ApprovalsStore, Approve, Deny

    asked: list[str] = []

    def approver(request: ApprovalRequest) -> Approve | Deny:
        asked.append(request.tool)
        return Approve() if decision == "approve" else Deny("not now")

    registry = LocalToolRegistry(
        policy=ApprovalPolicy("medium", ApprovalsStore(tmp_path / "a.json")), approver=approver
    )
    for manual in CODING_TOOL_MANUALS:
        registry.register(_stub(manual.name, calls), name=manual.name, manual=manual)
    view = registry.for_agent("coder")
    assert view.approver is approver
    model = ScriptedModel({"content": None, "tool_calls": [call("c1", "edit", {"path": "a.py"})]}, {"content": "done"})
    graph = AgentGraph(model, view)
    run = graph.run("edit a.py")
    graph.tools_node.close()
    assert run.stop_reason == "final_answer" and asked == ["edit"]
    assert calls == (["edit"] if decision == "approve" else [])
    assert run.tool_results[0]["status"] == ("success" if decision == "approve" else "error")
