"""``SubAgent``: one agent type, its tool view, its model, a system prompt and a budget.

A sub-agent is the project's agent loop (:class:`~orchestrator.graph.AgentGraph`) over the
registry view of its type (``registry.for_agent(agent_type)``): it is offered only its
profile's tools, and a call to any other is answered ``permission_denied``. Its budget,
``max_iterations``, counts model turns (each turn may make several tool calls); a
sub-agent still calling tools when it runs out is stopped with ``stop_reason
"max_iterations"``.

When its view's policy holds a call for a person's approval and nobody can be asked, the
sub-agent pauses (``stop_reason "awaiting_approval"``, with the signed ``state`` and the
``pending_approvals``); :meth:`SubAgent.resume` continues it with the person's decisions.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from orchestrator.graph import AgentGraph, AgentRun, ClaimStore, RunHooks, ToolsNode
from orchestrator.llm import ChatModel
from tools.approvals import Approve, Deny, StateSigner
from tools.routing import ToolView

#: ``max_subagent_iterations``: the range and the default.
MIN_SUBAGENT_ITERATIONS, MAX_SUBAGENT_ITERATIONS, DEFAULT_SUBAGENT_ITERATIONS = 1, 10, 3

#: Tools for a workspace: a view, or a function making one for a workspace root.
ToolSource = ToolView | Callable[[Path], ToolView]


def check_max_subagent_iterations(value: Any, *, source: str = "max_subagent_iterations") -> int:
    """``value`` as a budget of 1-10 model turns.

    Args:
        value: An int (or its text, from the environment).
        source: How the user set it, for the message (``--max-subagent-iterations``,
            ``TOOLDECK_MAX_SUBAGENT_ITERATIONS``).

    Raises:
        ValueError: not a whole number between 1 and 10; the message names the setting.
    """
    try:
        number = int(str(value).strip()) if not isinstance(value, bool) else None
    except ValueError:
        number = None
    if number is None or not MIN_SUBAGENT_ITERATIONS <= number <= MAX_SUBAGENT_ITERATIONS:
        raise ValueError(
            f"max_subagent_iterations ({source}) must be a whole number from {MIN_SUBAGENT_ITERATIONS} to "
            f"{MAX_SUBAGENT_ITERATIONS}, got {str(value)[:40]!r}; the default is {DEFAULT_SUBAGENT_ITERATIONS}"
        )
    return number


class ToolCallSummary(BaseModel):
    """One tool call of a sub-agent, for traces."""

    name: str
    arguments: Any = None
    status: str
    error_type: str | None = None
    duration_ms: float = 0.0


class SubAgentResult(BaseModel):
    """What a sub-agent did (JSON-serialisable)."""

    agent_type: str
    answer: str
    stop_reason: str = Field(description="'final_answer', 'max_iterations' or 'awaiting_approval'.")
    iterations: int
    tool_calls: list[ToolCallSummary] = Field(default_factory=list)
    duration_ms: float = 0.0
    run_id: str = ""
    pending_approvals: list[dict[str, Any]] = Field(
        default_factory=list, description="The calls waiting for a person (awaiting_approval only)."
    )
    state: dict[str, Any] | None = Field(
        default=None, description="The signed state SubAgent.resume continues (awaiting_approval only)."
    )

    @property
    def paused(self) -> bool:
        """True while calls wait for a person's approval."""
        return self.stop_reason == "awaiting_approval"


class SubAgent:
    """An agent type with its own tools, model, instructions and iteration budget.

    Args:
        agent_type: A profile name (``coder``, ``test-writer``, ``reviewer``, ...).
        model: Its chat model (per-agent model settings, default the orchestrator's).
        tools: Its :class:`~tools.routing.ToolView` (``registry.for_agent(agent_type)``),
            or a function making one for a workspace root (what the pipeline uses).
        system_prompt: Its instructions.
        max_iterations: Model turns per run, 1-10 (``max_subagent_iterations``).
        max_parallel: Concurrent tool calls per turn.
        hooks: Told about each model turn and tool call (a progress display).
        clock: Seconds, for durations.
        state_signer: Signs a paused run's state and verifies it on :meth:`resume` (default:
            a key in memory: resume through this sub-agent object).
        claims: Where resumes claim the calls they decide (default: in memory per run).

    Raises:
        ValueError: ``max_iterations`` out of range, or ``tools`` is a view of another type.
    """

    def __init__(
        self,
        agent_type: str,
        model: ChatModel,
        tools: ToolSource,
        system_prompt: str,
        max_iterations: int = DEFAULT_SUBAGENT_ITERATIONS,
        *,
        max_parallel: int = 4,
        hooks: RunHooks | None = None,
        clock: Callable[[], float] = time.perf_counter,
        state_signer: StateSigner | None = None,
        claims: ClaimStore | None = None,
    ) -> None:
        self.max_iterations = check_max_subagent_iterations(max_iterations)
        if isinstance(tools, ToolView) and tools.agent_type != agent_type:
            raise ValueError(
                f"SubAgent({agent_type!r}) was given the tool view of {tools.agent_type!r}: "
                f"pass registry.for_agent({agent_type!r})"
            )
        self.agent_type = agent_type
        self.model = model
        self.tools = tools
        self.system_prompt = system_prompt
        self._max_parallel = max_parallel
        self.hooks = hooks
        self._clock = clock
        self._signer = state_signer if state_signer is not None else StateSigner.ephemeral()
        self._claims = claims

    def __repr__(self) -> str:
        return f"SubAgent({self.agent_type!r}, max_iterations={self.max_iterations})"

    def view(self, workspace: str | Path | None = None) -> ToolView:
        """The tool view for a run (made for ``workspace`` when ``tools`` is a function).

        Raises:
            ValueError: ``tools`` is a function and no workspace was given.
        """
        if isinstance(self.tools, ToolView):
            return self.tools
        if workspace is None:
            raise ValueError(f"SubAgent({self.agent_type!r}) makes its tools per workspace: pass workspace=")
        return self.tools(Path(workspace))

    def run(self, prompt: str, *, workspace: str | Path | None = None) -> SubAgentResult:
        """Run the agent on ``prompt`` to its answer, the end of its budget, or a call that
        waits for a person (``stop_reason "awaiting_approval"``).

        Raises:
            ChatModelError: the model could not answer (tool failures never raise).
        """
        return self._drive(workspace, lambda graph: graph.run(prompt))

    def resume(
        self,
        state: dict[str, Any],
        decisions: dict[str, Approve | Deny],
        *,
        workspace: str | Path | None = None,
    ) -> SubAgentResult:
        """Continue a paused run with a person's decisions (see ``AgentGraph.resume``).

        Raises:
            ResumeError: the state is not this agent type's, was edited, or a decision names
                no held call; nothing ran.
            ChatModelError: the model could not answer.
        """
        return self._drive(workspace, lambda graph: graph.resume(state, decisions))

    def _drive(self, workspace: str | Path | None, go: Callable[[AgentGraph], AgentRun]) -> SubAgentResult:
        runner: Any = self.view(workspace)
        node = ToolsNode(runner, max_parallel=self._max_parallel, hooks=self.hooks)
        graph = AgentGraph(
            self.model,
            runner,
            tools_node=node,
            max_iterations=self.max_iterations,
            system_prompt=self.system_prompt,
            agent_name=self.agent_type,
            state_signer=self._signer,
            claims=self._claims,
            hooks=self.hooks,
        )
        started = self._clock()
        try:
            run = go(graph)
        finally:
            node.close()
        calls = [
            ToolCallSummary(
                name=r["name"],
                arguments=r["arguments"],
                status=r["status"],
                error_type=r["error_type"],
                duration_ms=r["duration_ms"],
            )
            for r in run.tool_results
        ]
        return SubAgentResult(
            agent_type=self.agent_type,
            answer=run.answer,
            stop_reason=run.stop_reason,
            iterations=run.iterations,
            tool_calls=calls,
            duration_ms=round((self._clock() - started) * 1000, 3),
            run_id=run.run_id,
            pending_approvals=[request.to_dict() for request in run.pending_approvals],
            state=run.state,
        )
