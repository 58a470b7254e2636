"""``task``: hand a task to a sub-agent and return its answer.

The tool knows nothing of models or graphs: it calls a :class:`Delegate` (the
orchestrator's ``SubAgentDelegator``), which runs the sub-agent with its own profile's
tools (never more than the caller's) and bounds nested delegation.
"""

from __future__ import annotations

from typing import Any, Protocol

from pydantic import BaseModel, Field

from tools.base import BaseTool
from tools.routing import CODING_TOOL_MANUALS_BY_NAME


class DelegationResult(BaseModel):
    """What a sub-agent did."""

    agent: str
    answer: str
    stop_reason: str = Field(description="'final_answer', or 'max_iterations' when its budget ran out.")
    iterations: int
    tool_calls: list[dict[str, Any]] = Field(description="Each call: name, status, error_type.")


class Delegate(Protocol):
    """Runs a sub-agent (implemented by ``orchestrator.agents.SubAgentDelegator``)."""

    def agent_types(self) -> list[str]:
        """The agent types this delegate can run."""
        ...

    def delegate(self, agent: str, prompt: str) -> DelegationResult:
        """Run ``agent`` on ``prompt``.

        Raises:
            ToolError: unknown agent type or nesting too deep (shown to the model).
        """
        ...


class TaskRequest(BaseModel):
    """Arguments of ``task``."""

    agent: str = Field(description="The sub-agent type, e.g. 'coder', 'explore', 'reviewer'.")
    prompt: str = Field(min_length=1, description="The complete task for the sub-agent: it sees nothing else.")


class TaskTool(BaseTool[TaskRequest, DelegationResult]):
    """Delegates a task to a sub-agent."""

    name = "task"
    manual = CODING_TOOL_MANUALS_BY_NAME["task"]

    def __init__(self, delegate: Delegate) -> None:
        self._delegate = delegate
        self.description = (
            "Hand a self-contained task to a sub-agent and get its answer and a summary of its tool calls. "
            f"Agents: {', '.join(delegate.agent_types())}."
        )

    def execute_internal(self, request: TaskRequest) -> DelegationResult:
        """Run the sub-agent."""
        return self._delegate.delegate(request.agent, request.prompt)
