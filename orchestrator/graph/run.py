"""`AgentRun`: what `AgentGraph.run` (and `resume`) return."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from orchestrator.graph.tools_node import ToolCallRecord
from orchestrator.llm import Message
from tools.approvals import ApprovalRequest

__all__ = ["AgentRun", "RunStatus", "StepRecord", "StopReason"]

StopReason = Literal["final_answer", "max_iterations", "awaiting_approval"]
RunStatus = Literal["completed", "awaiting_approval"]


@dataclass(frozen=True, slots=True)
class StepRecord:
    """One node execution of a run: ``node`` is ``"agent"`` or ``"tools"``."""

    node: Literal["agent", "tools"]
    iteration: int
    duration_ms: float


@dataclass(frozen=True)
class AgentRun:
    """The outcome of `AgentGraph.run`, `AgentGraph.resume` and their async twins.

    Attributes:
        messages: The conversation, OpenAI format. A finished run ends with an assistant
            message; a paused one with the assistant turn whose calls wait for a person (their
            answers, and those of the turn's other calls, are added in call order once every
            held call is decided).
        tool_results: One trace record per executed (or refused) tool call, in execution order.
        iterations: Model calls made (over every resume of the run).
        stop_reason: ``"final_answer"`` (the model answered without tool calls),
            ``"max_iterations"`` (the budget ran out; the last message says so) or
            ``"awaiting_approval"`` (calls wait for a person: see ``pending_approvals``).
        steps: Every node execution with its duration.
        timings: ``total_ms``, ``model_ms`` and ``tools_ms`` (time spent waiting for a person
            is not counted).
        run_id: The run's id (``run_`` and 32 hex digits), the same over every resume.
        pending_approvals: The held calls, in call order (empty unless awaiting approval).
        state: What `AgentGraph.resume` takes to continue (JSON-serialisable; None unless
            awaiting approval).
    """

    messages: list[Message]
    tool_results: list[ToolCallRecord]
    iterations: int
    stop_reason: StopReason
    steps: list[StepRecord] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)
    run_id: str = ""
    pending_approvals: list[ApprovalRequest] = field(default_factory=list)
    state: dict[str, Any] | None = None

    @property
    def status(self) -> RunStatus:
        """``"awaiting_approval"`` while calls wait for a person, else ``"completed"``."""
        return "awaiting_approval" if self.stop_reason == "awaiting_approval" else "completed"

    @property
    def answer(self) -> str:
        """The text of the final assistant message ("" when it had none, or while paused)."""
        if self.stop_reason == "awaiting_approval":
            return ""
        for message in reversed(self.messages):
            if message.get("role") == "assistant":
                content = message.get("content")
                return content if isinstance(content, str) else ""
        return ""

    def to_dict(self) -> dict[str, Any]:
        """The run as JSON-compatible data (what ``python -m orchestrator --json`` prints).

        A paused run also has ``pending_approvals`` and ``state`` (give the whole dict, or
        its ``state``, to `AgentGraph.resume` or ``python -m orchestrator --resume FILE``).
        """
        out: dict[str, Any] = {
            "status": self.status,
            "run_id": self.run_id,
            "answer": self.answer,
            "stop_reason": self.stop_reason,
            "iterations": self.iterations,
            "timings": dict(self.timings),
            "steps": [{"node": s.node, "iteration": s.iteration, "duration_ms": s.duration_ms} for s in self.steps],
            "tool_results": [dict(r) for r in self.tool_results],
            "messages": self.messages,
        }
        if self.stop_reason == "awaiting_approval":
            out["pending_approvals"] = [request.to_dict() for request in self.pending_approvals]
            out["state"] = self.state
        return out
