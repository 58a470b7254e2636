"""A ToolsNode alone (AgentGraph pauses instead: tests/unit/orchestrator/test_agent_pause_resume.py)
over a registry or view given a policy answers a call that needs approval with the registry's
permission_denied result: the other calls of the turn still run, and nothing is executed that
needed a person."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from orchestrator.graph import ToolsNode
from tools import LocalToolRegistry
from tools.approvals import ApprovalPolicy, ApprovalsStore
from tools.routing import RiskLevel, ToolCategory, ToolManual

RAN: list[str] = []


def _registry(policy: ApprovalPolicy | None) -> LocalToolRegistry:
    registry = LocalToolRegistry(policy=policy)
    tools: list[tuple[str, ToolCategory, RiskLevel]] = [
        ("look", ToolCategory.FILE_READ, "safe"),
        ("wipe", ToolCategory.FILE_WRITE, "dangerous"),
    ]
    for name, category, risk in tools:

        def work(path: str, _name: str = name) -> str:
            """Work on a path.

            Args:
                path: The path.
            """
            RAN.append(_name)
            return f"{_name}:{path}"

        registry.register(work, name=name, manual=ToolManual(name=name, category=category, risk=risk))
    return registry


def _turn(*names: str) -> dict[str, Any]:
    calls = [
        {"id": f"call_{i}", "type": "function", "function": {"name": name, "arguments": json.dumps({"path": "x"})}}
        for i, name in enumerate(names)
    ]
    assistant = {"role": "assistant", "content": None, "tool_calls": calls}
    return {"messages": [{"role": "user", "content": "go"}, assistant]}


def test_a_gated_registry_under_a_tools_node(tmp_path: Path) -> None:
    RAN.clear()
    policy = ApprovalPolicy("medium", ApprovalsStore(tmp_path / "approvals.json"))
    for target in (_registry(policy), _registry(None).for_agent("main", policy=policy)):
        with ToolsNode(target) as node:
            update = node(_turn("wipe", "look"))
        answers = [json.loads(m["content"]) for m in update["messages"]]
        assert [m["tool_call_id"] for m in update["messages"]] == ["call_0", "call_1"]
        assert answers[0]["error_type"] == "permission_denied"
        assert "needs a person's approval" in answers[0]["error"]
        assert "you cannot approve it yourself" in answers[0]["error"]
        assert answers[1]["data"] == "look:x"
    assert RAN == ["look", "look"]
