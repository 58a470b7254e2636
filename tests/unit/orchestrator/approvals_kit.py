"""Shared pieces of the human-in-the-loop tests: a scripted model, a registry with one tool of
each risk that records every execution, and tool-call builders."""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from orchestrator.graph import AgentGraph
from orchestrator.llm import ChatResponse, ToolChoice
from tools import LocalToolRegistry
from tools.approvals import ApprovalPolicy, ApprovalsStore, Approver
from tools.routing import RiskLevel, ToolCategory, ToolManual

RISKS: dict[str, RiskLevel] = {"look": "safe", "note": "moderate", "wipe": "dangerous"}


class ScriptedModel:
    """Replays assistant turns; keeps what it was shown on each call."""

    model = "scripted"

    def __init__(self, *turns: dict[str, Any]) -> None:
        self.turns = list(turns)
        self.seen: list[list[dict[str, Any]]] = []

    @property
    def supports_strict_tools(self) -> bool:
        return False

    def chat(
        self,
        messages: Sequence[Mapping[str, Any]],
        *,
        tools: Sequence[Mapping[str, Any]] | None = None,
        tool_choice: ToolChoice | None = None,
    ) -> ChatResponse:
        self.seen.append([dict(m) for m in messages])
        turn = self.turns.pop(0) if len(self.turns) > 1 else self.turns[0]
        return ChatResponse(message={"role": "assistant", **turn}, finish_reason="stop", model="scripted")


class Ledger:
    """Every execution of a registry's tools, with the thread it ran on."""

    def __init__(self) -> None:
        self.runs: list[tuple[str, dict[str, Any]]] = []
        self._lock = threading.Lock()

    def add(self, name: str, arguments: dict[str, Any]) -> None:
        with self._lock:
            self.runs.append((name, arguments))

    def names(self) -> list[str]:
        return [name for name, _ in self.runs]


def registry(ledger: Ledger, policy: ApprovalPolicy | None, approver: Approver | None = None) -> LocalToolRegistry:
    """``look`` (safe), ``note`` (moderate) and ``wipe`` (dangerous), each ``(path: str)``."""
    reg = LocalToolRegistry(policy=policy, approver=approver)
    for name, risk in RISKS.items():

        def work(path: str, _name: str = name) -> str:
            """Work on a path.

            Args:
                path: The path to work on.
            """
            ledger.add(_name, {"path": path})
            return f"{_name}:{path}"

        category = ToolCategory.FILE_READ if risk == "safe" else ToolCategory.FILE_WRITE
        reg.register(work, name=name, manual=ToolManual(name=name, category=category, risk=risk))
    return reg


def policy(level: str, tmp_path: Path) -> ApprovalPolicy:
    return ApprovalPolicy(level, ApprovalsStore(tmp_path / "approvals.json"))


def call(call_id: str, name: str, **arguments: Any) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}


def turn(*calls: dict[str, Any]) -> dict[str, Any]:
    return {"content": None, "tool_calls": list(calls)}


def answer(text: str = "done") -> dict[str, Any]:
    return {"content": text}


def graph(model: ScriptedModel, ledger: Ledger, level: str | None, tmp_path: Path, **options: Any) -> AgentGraph:
    """A graph over `registry` with the policy of ``level`` (None: no policy)."""
    gate = policy(level, tmp_path) if level is not None else None
    return AgentGraph(model, registry(ledger, gate), **options)


def tool_answers(messages: Sequence[Mapping[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
    """(tool_call_id, parsed content) of every tool message, in order."""
    return [(m["tool_call_id"], json.loads(m["content"])) for m in messages if m.get("role") == "tool"]


def roundtrip(state: Any) -> dict[str, Any]:
    """The state after ``json.dumps`` / ``json.loads`` (what a file gives back)."""
    loaded: dict[str, Any] = json.loads(json.dumps(state))
    return loaded
