"""``AgentToolset``: builds each agent's tools over a workspace, and ``SubAgentDelegator``.

Each agent gets its own registry of workspace tools bound to its own :class:`Workspace`
(the test-writer's is write-scoped to test paths, ``DEFAULT_WRITE_SCOPES``), seen through
``registry.for_agent(agent_type)``. A delegated agent's view is its own profile's
intersected with its caller's tools: delegation never widens rights (PEERS 20); nesting is
bounded by ``max_depth``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING

from tools.builtin.workspace import (
    TEST_PATHS,
    Delegate,
    DelegationResult,
    SkillLibrary,
    TodoStore,
    Workspace,
    WorkspaceLimits,
    register_workspace_tools,
)
from tools.errors import InvalidArgumentsError, PermissionDeniedError
from tools.registry import LocalToolRegistry
from tools.routing import ToolRouter, ToolRoutingConfig, ToolView

if TYPE_CHECKING:
    from orchestrator.agents.models import ModelResolver
    from orchestrator.agents.subagent import SubAgent
    from tools.approvals import ApprovalPolicy, Approver
    from tools.builtin.code_executor import SandboxClient

SubAgentFactory = Callable[[str, ToolView], "SubAgent"]

#: Per agent type, the paths its edit/write/patch may change (others: the whole workspace).
DEFAULT_WRITE_SCOPES: Mapping[str, tuple[str, ...]] = MappingProxyType({"test-writer": TEST_PATHS})


class AgentToolset:
    """Makes the tool view of an agent type over a workspace.

    Args:
        sandbox: Where ``bash`` runs (None: no ``bash``).
        skills: The skill library (default: the packaged skills).
        router: Routing (profiles and the user's overrides); default ``ToolRouter()``.
        write_scopes: Agent type -> paths it may change.
        python_path: Directories ``bash`` programs get on ``PYTHONPATH``.
        limits: Workspace tool limits.
        make_agent: ``(agent_type, view) -> SubAgent``: when given, every view gets a
            ``task`` tool backed by a :class:`SubAgentDelegator` (its profile decides whether
            the agent may call it); None: no ``task`` unless a delegate is passed.
        max_depth: Most nested delegation levels.
        policy: The freedom dial for every agent's calls (``tools.approvals``); a call it
            does not allow is asked about through ``approver``, else refused with
            ``permission_denied`` naming how to approve it. None: no approval gate.
        approver: Asks a person about such a call (e.g. at the terminal).
    """

    def __init__(
        self,
        *,
        sandbox: SandboxClient | None = None,
        skills: SkillLibrary | None = None,
        router: ToolRouter | None = None,
        write_scopes: Mapping[str, Sequence[str]] = DEFAULT_WRITE_SCOPES,
        python_path: Sequence[str] = (),
        limits: WorkspaceLimits | None = None,
        make_agent: SubAgentFactory | None = None,
        max_depth: int = 2,
        policy: ApprovalPolicy | None = None,
        approver: Approver | None = None,
    ) -> None:
        self.sandbox = sandbox
        self.policy = policy
        self.approver = approver
        self.make_agent = make_agent
        self.max_depth = max_depth
        self.skills = skills if skills is not None else SkillLibrary()
        self.router = router if router is not None else ToolRouter()
        self.write_scopes = {k: tuple(v) for k, v in write_scopes.items()}
        self.python_path = tuple(python_path)
        self.limits = limits or WorkspaceLimits()
        self._registries: list[LocalToolRegistry] = []

    def workspace(self, agent_type: str, root: Path) -> Workspace:
        """The agent's workspace over ``root`` (write-scoped when the agent has a scope)."""
        return Workspace(
            root, sandbox=self.sandbox, todos=TodoStore(), skills=self.skills,
            write_scope=self.write_scopes.get(agent_type), python_path=self.python_path, limits=self.limits,
        )  # fmt: skip

    def view(
        self,
        agent_type: str,
        root: Path,
        *,
        delegate: Delegate | None = None,
        within: Sequence[str] | None = None,
    ) -> ToolView:
        """A fresh registry of workspace tools for ``agent_type``, seen through its profile.

        Args:
            agent_type: The agent.
            root: The workspace root.
            delegate: Backs its ``task`` tool (None: no ``task``).
            within: The caller's tool names when delegated: tools outside them are denied.
        """
        if delegate is None and self.make_agent is not None:
            delegate = SubAgentDelegator(self, self.make_agent, root, caller_tools=within, max_depth=self.max_depth)
        registry = LocalToolRegistry(policy=self.policy, approver=self.approver)
        self._registries.append(registry)
        register_workspace_tools(registry, self.workspace(agent_type, root), delegate=delegate)
        view = registry.for_agent(agent_type, router=self.router)
        if within is not None:
            extra = [name for name in view.names() if name not in within]
            if extra:
                base = self.router.config or ToolRoutingConfig()
                config = base.model_copy(update={"global_deny": (*base.global_deny, *extra)})
                view = registry.for_agent(agent_type, router=ToolRouter(self.router.profiles, config=config))
        if isinstance(delegate, SubAgentDelegator):
            delegate.bind_caller(view.names())
        return view

    def close(self) -> None:
        """Release the registries made so far."""
        for registry in self._registries:
            registry.close()
        self._registries.clear()


class SubAgentDelegator:
    """The ``task`` tool's backend: runs a sub-agent of the asked type on the workspace.

    Args:
        toolset: Builds the sub-agent's tools.
        make_agent: ``(agent_type, view) -> SubAgent`` (its model, prompt and budget).
        root: The workspace root.
        caller_tools: The delegating agent's tool names (None: unrestricted, the top level).
        depth: How deep this delegator is (0: called by the top-level agent).
        max_depth: Most nested ``task`` levels.
        agent_types: The types that may be delegated to (default: the router's profiles).
    """

    def __init__(
        self,
        toolset: AgentToolset,
        make_agent: SubAgentFactory,
        root: Path,
        *,
        caller_tools: Sequence[str] | None = None,
        depth: int = 0,
        max_depth: int = 2,
        agent_types: Sequence[str] | None = None,
    ) -> None:
        self._toolset = toolset
        self._make_agent = make_agent
        self._root = root
        self._caller = tuple(caller_tools) if caller_tools is not None else None
        self._depth = depth
        self._max_depth = max_depth
        self._types = list(agent_types) if agent_types is not None else list(toolset.router.profiles)

    def bind_caller(self, names: Sequence[str]) -> None:
        """Record the delegating agent's tools: a delegated agent never gets more."""
        self._caller = tuple(names)

    def agent_types(self) -> list[str]:
        """The agent types ``task`` accepts."""
        return list(self._types)

    def delegate(self, agent: str, prompt: str) -> DelegationResult:
        """Run ``agent`` on ``prompt`` with its profile's tools, never more than the caller's."""
        if agent not in self._types:
            raise InvalidArgumentsError(f"There is no agent {agent[:64]!r}. Agents: {', '.join(self._types)}.")
        if self._depth >= self._max_depth:
            raise PermissionDeniedError(
                f"Delegation is nested {self._depth} deep, the limit: do this task yourself instead of delegating."
            )
        child = SubAgentDelegator(
            self._toolset, self._make_agent, self._root,
            caller_tools=None, depth=self._depth + 1, max_depth=self._max_depth, agent_types=self._types,
        )  # fmt: skip
        view = self._toolset.view(agent, self._root, delegate=child, within=self._caller)
        result = self._make_agent(agent, view).run(prompt)
        if result.paused:  # a delegated task cannot wait for a person: say so, never an empty answer
            held = ", ".join(sorted({str(r.get("tool")) for r in result.pending_approvals}))
            raise PermissionDeniedError(
                f"The delegated {agent} agent stopped: its call(s) of {held} need a person's approval, which cannot "
                "be asked for inside a delegated task. Make those calls yourself (then the person is asked), or "
                "continue without them."
            )
        return DelegationResult(
            agent=agent,
            answer=result.answer,
            stop_reason=result.stop_reason,
            iterations=result.iterations,
            tool_calls=[{"name": c.name, "status": c.status, "error_type": c.error_type} for c in result.tool_calls],
        )


def agent_factory(
    models: ModelResolver,
    prompts: Mapping[str, str],
    *,
    max_iterations: int,
) -> SubAgentFactory:
    """``(agent_type, view) -> SubAgent`` with the agent's model, prompt and budget."""
    from orchestrator.agents.subagent import SubAgent

    def make(agent_type: str, view: ToolView) -> SubAgent:
        prompt = prompts.get(agent_type) or f"You are the {agent_type} agent. Do the task with your tools."
        return SubAgent(agent_type, models.for_agent(agent_type), view, prompt, max_iterations)

    return make


__all__ = ["DEFAULT_WRITE_SCOPES", "AgentToolset", "SubAgentDelegator", "agent_factory"]
