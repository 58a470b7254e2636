"""`OrchestratorService`: the composition root of the agent side.

It turns `Settings` into objects, explicitly: every tool instance is built and registered
by its own ``registry.register(...)`` call (plus the aliases that keep old tool names
callable; `orchestrator._service_tools`), then the model and the graph, from what the
settings select (`orchestrator._service_config`, whose public functions this module
re-exports). Nothing is discovered at import time and nothing lives in module globals.
"""

from __future__ import annotations

import functools
import logging
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from orchestrator._own_tools import OwnTool, OwnToolError, no_tools_message, register_own
from orchestrator._service_config import (
    TEST_MODEL,
    ServiceConfigError,
    agent_router,
    approval_policy,
    build_chat_model,
    ray_executor,
    result_budget,
    secret_dirs,
    secret_value,
    settings_secrets,
    tool_choices,
)
from orchestrator._service_tools import ServiceTools
from orchestrator.agents.prompts import agent_prompt
from orchestrator.graph import AgentGraph, AgentRun, ClaimStore, ToolsNode
from orchestrator.graph.state import new_run_id
from orchestrator.llm import ChatModel
from orchestrator.mcp_client import mcp_client_handlers
from orchestrator.offline import OfflineModel
from orchestrator.openai_client import OpenAIChatModel
from orchestrator.runlog import RecordingApprover, RunLog, question_text
from orchestrator.settings import Settings
from tools import LocalToolRegistry

if TYPE_CHECKING:
    from orchestrator._delegation import Delegation
    from orchestrator.graph._approvals import GraphApprover
    from orchestrator.graph.hooks import RunHooks
    from tools.approvals import ApprovalsBackend, Approve, Approver, Deny, StateSigner
    from tools.artifacts import ResultBudget
    from tools.routing import ToolView
    from tools.runs import RunStore
    from tools.store import RegistryService
    from tools.telemetry import ToolTracer

#: ``system_prompt=`` default: the prompt of the agent type, naming exactly its tools.
GENERATED: Any = object()

__all__ = [
    "GENERATED",
    "SYSTEM_PROMPT",
    "TEST_MODEL",
    "OrchestratorService",
    "ServiceConfigError",
    "approval_policy",
    "build_chat_model",
    "result_budget",
    "secret_dirs",
]

_log = logging.getLogger(__name__)

SYSTEM_PROMPT = (
    "You are a helpful assistant with tools. Use a tool whenever it can answer better than "
    "memory: math_solver for any arithmetic or algebra, store_knowledge when the user asks "
    "you to remember something, search_knowledge to recall it, user_context for their "
    "calendar, weather, commute and finances, web to search or read pages, execute_code to "
    "run code, module_pipeline and module_admin to build and manage new data sources. "
    "Answer briefly from the tool results; if a tool fails, say so."
)
"""The main agent's prompt when it has every builtin tool (the service writes each run's
prompt from the tools it actually has: `orchestrator.agents.prompts.agent_prompt`)."""


class OrchestratorService:
    """Builds the registry with every builtin tool, the model and the agent graph.

    Example:
        >>> service = OrchestratorService(Settings.from_env(os.environ))  # doctest: +SKIP
        >>> service.ask("What is 12*(3+4)?").answer  # doctest: +SKIP
        '12 * (3 + 4) = 84.'

    Tools registered (each by an explicit call, see `orchestrator._service_tools`): ``math_solver``;
    ``store_knowledge`` and ``search_knowledge`` over a SQLite database in
    ``settings.data_dir``; ``execute_code``; ``web`` plus the old ``web_search`` and
    ``load_web_page``; and ``user_context`` (over a `ContextBridge` to
    ``settings.context_url``; when that service is down the tool says so per category) plus
    the old ``get_user_context``, ``get_daily_briefing``, ``get_commute_time`` and
    ``query_finance``; ``module_pipeline`` and ``module_admin`` (modules: data sources
    the model builds, see ``docs/modules.md``) plus their 17 old names. A tool whose
    optional dependency is missing is skipped with a warning naming the extra to install.

    Your own tools (``tools=[...]``) join them; ``builtins=False`` leaves only yours. An
    agent type (``settings.agent``) also gets the workspace tools over ``workspace`` (read,
    glob, grep, edit, write, patch, bash, todo, skill, and ``task``, which delegates to another
    agent type (see `orchestrator._delegation`); a read-only workspace for a read-only
    profile), sees only the tools its profile allows, and is refused when that leaves none.
    With ``settings.database_url`` the knowledge lives in that PostgreSQL database. With
    ``settings.executor == "ray"``, the compute tools (``math_solver``, ``execute_code``)
    run on the Ray cluster of ``settings.ray_address``; the others use this host's data
    and services and run here.
    """

    #: An --agent's task tool (None: no agent type), bound once the agent's tools are known.
    _delegation: Delegation | None = None

    def __init__(
        self,
        settings: Settings,
        *,
        model: ChatModel | None = None,
        registry: LocalToolRegistry | None = None,
        system_prompt: str | None = GENERATED,
        tools: Sequence[OwnTool] = (),
        builtins: bool = True,
        workspace: str | os.PathLike[str] | None = None,
        adopted_tools: RegistryService | None = None,
        approvals: ApprovalsBackend | None = None,
        approver: GraphApprover | None = None,
        hold_for_approval: bool = True,
        claims: ClaimStore | None = None,
        state_signer: StateSigner | None = None,
        tracer: ToolTracer | None = None,
        hooks: RunHooks | None = None,
        runs: RunStore | None = None,
        budget: ResultBudget | None = None,
        mcp_roots: Sequence[Path] = (),
    ) -> None:
        """Build everything.

        Args:
            settings: The configuration (see `Settings.from_env`).
            model: Use this model instead of the one the settings select.
            registry: Register into this registry (default: a new one).
            system_prompt: Sent first on each question (None: no system message; default:
                the agent type's prompt naming exactly the tools it has).
            tools: Your own tools, beside the builtins: `tools.BaseTool` instances, plain
                functions, or registries (each registration copied with its manual, preset,
                timeout and retry policy). A name a builtin has is an error.
            builtins: False: register only ``tools`` (no builtins, no adopted tools).
            workspace: The workspace root of an agent type's workspace tools (default: the
                current directory); only used with ``settings.agent``.
            adopted_tools: Where the adopted tools come from (``tooldeck adopt``, registry
                files; see `tools.store`); None: no adopted tools. `from_env` reads them
                from the environment's and the current directory's registry files.
            approvals: The approvals store (`tools.approvals.ApprovalsStore`, or
                `tools.approvals.PostgresApprovalsStore` with a database URL): its stored
                level applies when ``settings.freedom`` is unset, its approvals always. With
                no level from either, the level is ``medium`` (only safe tools run freely);
                None: no stored level or approvals (``settings.freedom``, else ``medium``).
            approver: Asked about each call that needs approval (a terminal prompt);
                None: such calls are held and the run ends ``awaiting_approval``.
            hold_for_approval: False: calls that need approval are refused instead of held.
            claims: Where resumes claim the calls they decide (default: beside the
                approvals: the ledger next to the approvals file, or their database).
            state_signer: Signs paused states and verifies them on resume (default: a key
                in memory, so states resume only through this service; `from_env` and
                ``python -m orchestrator`` use the user's key file).
            tracer: Spans for each run, model request and tool call (one trace per question).
            hooks: Told about each model turn and tool call as it happens (a progress display).
            runs: Where each run is recorded (`tools.runs.RunStore`; None: not recorded).
            budget: A result budget (see `result_budget`): oversized results become artifacts
                that ``read_artifact``/``search_artifact`` (registered here) read; None, or
                ``builtins=False``: results are cut.
            mcp_roots: The workspace directories MCP servers are given as roots. The MCP
                servers of adopted tools may also ask for sampling (answered by this
                service's model, gated by ``approvals``' level and ``approver``) and for
                elicitation (routed to ``approver``); see `orchestrator.mcp_client`.

        Raises:
            ServiceConfigError: The data directory cannot be created, a URL is invalid,
                ``tool_choice`` names no registered tool, the approvals file is unusable,
                ``registry`` was built without the policy the settings ask for, one of
                ``tools`` cannot be registered, or the agent type would get no tools.
        """
        self.settings = settings
        self.policy = approval_policy(settings, approvals)
        if registry is not None and registry.policy is None and settings.agent is None:
            raise ServiceConfigError(
                f"the service applies the freedom level {self.policy.level} (calls that need approval are asked about "
                "or held), but the registry given was built without a policy, so its calls would run unchecked; "
                "build it with LocalToolRegistry(policy=service_policy) or let the service build it"
            )
        self.registry = registry if registry is not None else LocalToolRegistry(policy=self.policy, tracer=tracer)
        self._closers: list[Callable[[], None]] = []
        self.skipped: dict[str, str] = {}
        self.mcp_handlers = mcp_client_handlers(
            lambda: self.model,
            model_name=lambda: self.model_description,
            policy=self.policy,
            approver=approver,
            roots=mcp_roots,
        )
        hidden_dirs = secret_dirs(settings.data_dir, approvals, state_signer)
        try:
            self._register_tools(
                tools, hidden_dirs, builtins=builtins, adopted=adopted_tools, workspace=workspace, hooks=hooks
            )
            if not builtins:
                budget = None  # only the caller's tools: results are cut, nothing reads them back
            self._helpers: frozenset[str] = frozenset()
            if budget is not None:
                from tools.artifacts import register_artifact_tools

                self._helpers = frozenset(register_artifact_tools(self.registry, budget))
            self.tools = self._tools_for_agent()
            every_turn, first_turn = tool_choices(settings, self.tools)
            self.model: ChatModel = model if model is not None else self._build_model()
        except BaseException:
            self.close()
            raise
        agent = settings.agent or "main"
        self.run_log = None if runs is None else RunLog(runs, agent=agent, model=self.model_description,
                                                        secrets=settings_secrets(settings))  # fmt: skip
        if approver is not None and self.run_log is not None:
            approver = RecordingApprover(approver, self.run_log)
        if self._delegation is not None:
            self._delegation.bind(self.tools.names(), cast("Approver | None", approver))
        offered = [tool["function"]["name"] for tool in self.tools.to_openai_tools()]  # hidden old names left out
        self.system_prompt = agent_prompt(agent, offered) if system_prompt is GENERATED else system_prompt
        self.tools_node = ToolsNode(
            self.tools,
            max_parallel=settings.max_parallel,
            call_timeout=settings.call_timeout,
            hooks=hooks,
            budget=budget,
        )
        self._closers.append(self.tools_node.close)
        self.graph = AgentGraph(
            self.model,
            self.tools,
            tools_node=self.tools_node,
            max_iterations=settings.max_iterations,
            system_prompt=self.system_prompt,
            tool_choice=every_turn,
            initial_tool_choice=first_turn,
            strict=settings.strict,
            agent_name=settings.agent or "main",
            approver=approver,
            hold_for_approval=hold_for_approval,
            claims=claims,
            state_signer=state_signer,
            tracer=tracer,
            provider=self._provider(),
            hooks=hooks,
        )

    @classmethod
    def from_env(cls, env: Mapping[str, str], **overrides: Any) -> OrchestratorService:
        """The service the environment describes: `Settings.from_env(env, **overrides)`, the
        tools adopted in the user's and the current directory's registry files (the latter
        only once trusted: ``tooldeck trust``), the user's approvals file
        (``$XDG_CONFIG_HOME/tooldeck/approvals.json``; with ``database_url``, its database) and
        state key (or ``TOOLDECK_STATE_KEY_FILE``), run records in the data directory (or that database).

        Raises:
            SettingsError: a setting is malformed.
            ServiceConfigError: the service cannot be built (see the constructor).
        """
        from tools.approvals import StateSigner, open_approvals_store
        from tools.runs import run_store_from_env
        from tools.store import RegistryService, RegistryStore

        settings = Settings.from_env(env, **overrides)
        adopted = RegistryService(RegistryStore.from_env(env), env=env)
        approvals = open_approvals_store(env, database_url=secret_value(settings.database_url))
        signer = StateSigner.from_env(env)
        runs = run_store_from_env(env, settings.data_dir, database_url=secret_value(settings.database_url))
        return cls(settings, adopted_tools=adopted, approvals=approvals, state_signer=signer, runs=runs)

    def _tools_for_agent(self) -> LocalToolRegistry | ToolView:
        """The registry, or the agent type's view of it (``--agent``); an agent left with no
        tool is refused, saying why."""
        agent = self.settings.agent
        if agent is None:
            return self.registry
        from tools.routing import RoutingConfigError

        router = agent_router(self.settings)
        try:
            view = self.registry.for_agent(agent, router, policy=self.policy)
        except RoutingConfigError as exc:
            raise ServiceConfigError(f"--routing-config / TOOLDECK_ROUTING_CONFIG: {exc}") from None
        # read_artifact alone is no tool to work with, nor is task: a delegate never gets more than its caller
        if not set(view.names()) - self._helpers - {"task"}:
            raise ServiceConfigError(no_tools_message(agent, router, self.registry, view.names()))
        return view

    @property
    def model_description(self) -> str:
        """A short description of the model in use (no secrets)."""
        if isinstance(self.model, OpenAIChatModel):
            return f"{self.model.model} at {self.model.endpoint}"
        if isinstance(self.model, OfflineModel):
            return "offline model (embedded, deterministic)"
        if type(self.model).__name__ == "TestModel":
            return "TestModel (calls every tool once, then summarises)"
        return type(self.model).__name__

    # ------------------------------------------------------------------ running

    def ask(self, question: str | Sequence[Mapping[str, Any]]) -> AgentRun:
        """Run one question (or a conversation) through the agent graph (recorded, with ``runs``).

        The run may end ``awaiting_approval`` (see `AgentGraph.run`); continue it with `resume`.

        Raises:
            ChatModelError: The model endpoint failed (see `AgentGraph.run`).
        """
        run_id = new_run_id()
        work = functools.partial(self.graph.run, question, run_id=run_id)
        return work() if self.run_log is None else self.run_log.record(run_id, question_text(question), work)

    async def aask(self, question: str | Sequence[Mapping[str, Any]]) -> AgentRun:
        """Async twin of `ask`."""
        run_id = new_run_id()
        work = functools.partial(self.graph.arun, question, run_id=run_id)
        return await (work() if self.run_log is None else self.run_log.arecord(run_id, question_text(question), work))

    def resume(self, state: Mapping[str, Any], decisions: Mapping[str, Approve | Deny] | None = None) -> AgentRun:
        """Continue a paused run (see `AgentGraph.resume`); its record moves on.

        Raises:
            ResumeError: The state or a decision is refused; nothing ran.
            ChatModelError: The model endpoint failed.
        """
        work = functools.partial(self.graph.resume, state, decisions)
        return work() if self.run_log is None else self.run_log.record_resume(state, decisions or {}, work)

    async def aresume(
        self, state: Mapping[str, Any], decisions: Mapping[str, Approve | Deny] | None = None
    ) -> AgentRun:
        """Async twin of `resume`."""
        work = functools.partial(self.graph.aresume, state, decisions)
        if self.run_log is None:
            return await work()
        return await self.run_log.arecord_resume(state, decisions or {}, work)

    def close(self) -> None:
        """Stop worker processes and threads, close the database and HTTP sessions."""
        while self._closers:
            closer = self._closers.pop()
            try:
                closer()
            except Exception:  # one failing close must not keep the others open
                _log.warning("closing %r failed", closer, exc_info=True)

    def __enter__(self) -> OrchestratorService:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # ------------------------------------------------------------------ building

    def _build_model(self) -> ChatModel:
        model = build_chat_model(self.settings)
        close = getattr(model, "close", None)
        if callable(close):
            self._closers.append(close)
        return model

    def _provider(self) -> str | None:
        """``gen_ai.provider.name`` for the model's spans: ``openai`` for OpenAI's own API."""
        if isinstance(self.model, OpenAIChatModel) and "api.openai.com" in self.model.endpoint:
            return "openai"
        return None

    def _register_tools(
        self,
        own: Sequence[OwnTool],
        hidden_dirs: tuple[Path, ...],
        *,
        builtins: bool,
        adopted: RegistryService | None,
        workspace: str | os.PathLike[str] | None,
        hooks: RunHooks | None,
    ) -> None:
        """The builtins, an agent type's workspace tools, ``own`` and the adopted tools, in
        that order (a name taken first is an error or a skip for those that come later)."""
        cluster = ray_executor(self.settings)
        if cluster is not None:
            self._closers.append(cluster.close)
        made = ServiceTools(
            self.registry,
            self.settings,
            cluster=cluster,
            hidden_dirs=hidden_dirs,
            model=lambda: self.model,
            on_close=self._closers.append,
            skip=self._skip,
        )
        if builtins:
            made.register_builtins()
        try:
            if self.settings.agent is not None:
                agent = self.settings.agent
                self._delegation = made.register_workspace(agent, workspace, policy=self.policy, hooks=hooks)
            register_own(self.registry, own, builtins=builtins)
        except OwnToolError as exc:
            raise ServiceConfigError(str(exc)) from None
        if builtins:
            made.register_adopted(adopted, self.mcp_handlers)

    def _skip(self, name: str, reason: str) -> None:
        self.skipped[name] = reason
        _log.info("tool %s not registered: %s", name, reason)
