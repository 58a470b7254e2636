"""The ``task`` tool of an ``--agent`` run: the agent hands a sub-task to another agent type
over the same workspace (the pipeline's `SubAgentDelegator`, wired to the service).

The agent's profile decides whether it sees ``task`` (``main``, ``plan``, ``researcher`` allow
delegation; ``explore`` requires it; ``coder``, ``reviewer`` ... deny it). A delegated agent
gets its own profile's workspace tools, never more than its caller's (a read-only caller's
sub-agents read only), runs on the service's model with the prompt of its type, within the
sub-agent budget (``max_subagent_iterations``); its calls go through the same freedom level
and approver, and a call nobody can be asked about is refused inside the task (a delegated
run cannot pause). Nesting stops at two levels.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from orchestrator.agents.prompts import agent_prompt
from orchestrator.agents.subagent import SubAgent
from orchestrator.agents.toolset import AgentToolset, SubAgentDelegator

if TYPE_CHECKING:
    from orchestrator.graph.hooks import RunHooks
    from orchestrator.llm import ChatModel
    from tools.approvals import ApprovalPolicy, Approver
    from tools.builtin.code_executor import SandboxClient
    from tools.routing import ToolRouter, ToolView

__all__ = ["Delegation"]


class Delegation:
    """The delegate behind an agent's ``task`` tool, and the sub-agents' tools.

    Args:
        root: The workspace the sub-agents work in.
        model: Returns the model sub-agents run on (looked up per task: the service builds
            its model after its tools).
        router: Routing (profiles and the user's overrides), for the sub-agents' views.
        policy: The freedom level every sub-agent's call goes through.
        sandbox: Where ``bash`` runs.
        max_iterations: Model turns per sub-agent.
        hooks: Told about the sub-agents' turns and calls (the progress display).
    """

    def __init__(
        self,
        root: Path,
        *,
        model: Callable[[], ChatModel],
        router: ToolRouter,
        policy: ApprovalPolicy,
        sandbox: SandboxClient | None,
        max_iterations: int,
        hooks: RunHooks | None = None,
    ) -> None:
        self._model = model
        self._max_iterations = max_iterations
        self._hooks = hooks
        self.toolset = AgentToolset(sandbox=sandbox, router=router, policy=policy, make_agent=self._agent)
        self.delegate = SubAgentDelegator(self.toolset, self._agent, root, caller_tools=(), max_depth=2)

    def _agent(self, agent_type: str, view: ToolView) -> SubAgent:
        names = [tool["function"]["name"] for tool in view.to_openai_tools()]
        return SubAgent(
            agent_type,
            self._model(),
            view,
            agent_prompt(agent_type, names),
            self._max_iterations,
            hooks=self._hooks,
        )

    def bind(self, caller_tools: Sequence[str], approver: Approver | None) -> None:
        """The calling agent's tools (a sub-agent never gets more) and who is asked about the
        sub-agents' calls that need approval (None: they are refused inside the task)."""
        self.delegate.bind_caller(caller_tools)
        self.toolset.approver = approver

    def close(self) -> None:
        """Release the sub-agents' registries."""
        self.toolset.close()
