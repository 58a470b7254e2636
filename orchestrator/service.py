"""`OrchestratorService`: the composition root of the agent side.

It turns `Settings` into objects, explicitly: every tool instance is built here and
registered by its own ``registry.register(...)`` call (plus the aliases that keep old tool
names callable), then the model and the graph. Nothing is discovered at import time and
nothing lives in module globals.
"""

from __future__ import annotations

import functools
import logging
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from pydantic import SecretStr

from orchestrator._delegation import Delegation
from orchestrator._own_tools import OwnTool, OwnToolError, no_tools_message, register_own, register_workspace, writes
from orchestrator.agents.prompts import agent_prompt
from orchestrator.graph import AgentGraph, AgentRun, ClaimStore, ToolsNode
from orchestrator.graph.state import new_run_id
from orchestrator.llm import ChatModel, ToolChoice
from orchestrator.mcp_client import mcp_client_handlers
from orchestrator.offline import OfflineModel
from orchestrator.openai_client import OpenAIChatModel
from orchestrator.runlog import RecordingApprover, RunLog, question_text
from orchestrator.settings import Settings
from tools import BaseTool, LocalToolRegistry, ToolDefinitionError

if TYPE_CHECKING:
    from orchestrator.graph._approvals import GraphApprover
    from orchestrator.graph.hooks import RunHooks
    from shared.modules import ModuleAdapters
    from tools.approvals import ApprovalPolicy, ApprovalsBackend, Approve, Approver, Deny, StateSigner
    from tools.artifacts import ResultBudget
    from tools.executors import RemoteExecutor
    from tools.postgres import Database
    from tools.routing import ToolRouter, ToolView
    from tools.runs import RunStore
    from tools.store import RegistryService
    from tools.telemetry import ToolTracer

#: The model name that selects `orchestrator.testing.TestModel` (without a base URL).
TEST_MODEL = "test"
#: ``system_prompt=`` default: the prompt of the agent type, naming exactly its tools.
GENERATED: Any = object()

__all__ = [
    "GENERATED",
    "SYSTEM_PROMPT",
    "OrchestratorService",
    "ServiceConfigError",
    "approval_policy",
    "build_chat_model",
    "result_budget",
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


class ServiceConfigError(Exception):
    """The service could not be built from its settings; the message names the fix."""


class OrchestratorService:
    """Builds the registry with every builtin tool, the model and the agent graph.

    Example:
        >>> service = OrchestratorService(Settings.from_env(os.environ))  # doctest: +SKIP
        >>> service.ask("What is 12*(3+4)?").answer  # doctest: +SKIP
        '12 * (3 + 4) = 84.'

    Tools registered (each by an explicit call in ``_register_*``): ``math_solver``;
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
        self._adopted_tools = adopted_tools
        self._module_adapters: ModuleAdapters | None = None
        self._builtins = builtins
        self._workspace = workspace
        self._subagent_hooks = hooks
        self.mcp_handlers = mcp_client_handlers(
            lambda: self.model,
            model_name=lambda: self.model_description,
            policy=self.policy,
            approver=approver,
            roots=mcp_roots,
        )
        self._database: Database | None = None
        self._secret_dirs = secret_dirs(settings.data_dir, approvals, state_signer)
        try:
            self._cluster = self._build_executor()
            self._register_tools(tools)
            if not builtins:
                budget = None  # only the caller's tools: results are cut, nothing reads them back
            self._helpers: frozenset[str] = frozenset()
            if budget is not None:
                from tools.artifacts import register_artifact_tools

                self._helpers = frozenset(register_artifact_tools(self.registry, budget))
            self.tools = self._tools_for_agent()
            every_turn, first_turn = self._tool_choices()
            self.model: ChatModel = model if model is not None else self._build_model()
        except BaseException:
            self.close()
            raise
        agent = settings.agent or "main"
        self.run_log = None if runs is None else RunLog(runs, agent=agent, model=self.model_description,
                                                        secrets=self._secrets())  # fmt: skip
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
        approvals = open_approvals_store(env, database_url=_secret(settings.database_url))
        signer = StateSigner.from_env(env)
        runs = run_store_from_env(env, settings.data_dir, database_url=_secret(settings.database_url))
        return cls(settings, adopted_tools=adopted, approvals=approvals, state_signer=signer, runs=runs)

    def _router(self) -> ToolRouter:
        from tools.routing import RoutingConfigError, ToolRouter, ToolRoutingConfig

        path = self.settings.routing_config
        try:
            return ToolRouter(config=ToolRoutingConfig.from_file(path) if path is not None else None)
        except RoutingConfigError as exc:
            raise ServiceConfigError(f"--routing-config / TOOLDECK_ROUTING_CONFIG: {exc}") from None

    def _tools_for_agent(self) -> LocalToolRegistry | ToolView:
        """The registry, or the agent type's view of it (``--agent``); an agent left with no
        tool is refused, saying why."""
        agent = self.settings.agent
        if agent is None:
            return self.registry
        from tools.routing import RoutingConfigError

        router = self._router()
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

    def _tool_choices(self) -> tuple[ToolChoice | None, ToolChoice | None]:
        """(every turn, first turn): ``auto``/``none`` hold for every turn; ``required`` or
        a tool name force the first turn only, so the model can answer afterwards."""
        choice = self.settings.tool_choice
        if choice is None:
            return None, None
        if choice == "auto":
            return "auto", None
        if choice == "none":
            return "none", None
        if choice == "required":
            return None, "required"
        if choice not in self.tools:
            known = ", ".join(self.tools.names())
            raise ServiceConfigError(
                f"--tool-choice / TOOLDECK_TOOL_CHOICE: no tool named {choice!r}; use auto, "
                f"required, none or one of: {known}"
            )
        return None, {"type": "function", "function": {"name": choice}}

    def _own(self, tool: BaseTool[Any, Any]) -> BaseTool[Any, Any]:
        close = getattr(tool, "close", None)
        if callable(close):
            self._closers.append(close)
        return tool

    def _register_tools(self, own: Sequence[OwnTool]) -> None:
        if self._builtins:
            self._register_math()
            self._register_knowledge()
            self._register_code()
            self._register_web()
            self._register_modules()
            self._register_user_context()
        try:
            if self.settings.agent is not None:
                self._register_workspace(self.settings.agent)
            register_own(self.registry, own, builtins=self._builtins)
        except OwnToolError as exc:
            raise ServiceConfigError(str(exc)) from None
        if self._builtins:
            self._register_adopted()

    def _register_workspace(self, agent: str) -> None:
        """The workspace tools of an agent type, over ``workspace`` (default: the current
        directory), read-only for a read-only profile; ``bash`` runs in the code sandbox, which
        hides the data and configuration directories as ``execute_code``'s does; ``task``
        delegates to sub-agents (the profile decides whether the agent sees it)."""
        from tools.builtin.code_executor import LocalSandbox

        sandbox = LocalSandbox(hidden_dirs=self._secret_dirs)
        self._closers.append(sandbox.close)
        root = self._workspace if self._workspace is not None else os.getcwd()
        router = self._router()
        delegation = Delegation(
            Path(root), model=lambda: self.model, router=router, policy=self.policy, sandbox=sandbox,
            max_iterations=self.settings.max_subagent_iterations, hooks=self._subagent_hooks,
        )  # fmt: skip
        self._closers.append(delegation.close)
        self._delegation = delegation
        read_only = not writes(router, agent)
        register_workspace(self.registry, root, read_only=read_only, sandbox=sandbox, delegate=delegation.delegate)

    def _secrets(self) -> list[str]:
        """The secret values in use, masked in run records wherever they appear."""
        return _settings_secrets(self.settings)

    def _build_executor(self) -> RemoteExecutor | None:
        """``--executor ray``: the Ray cluster the compute tools run on (None: threads here)."""
        if self.settings.executor != "ray":
            return None
        from tools.executors import RayExecutor

        try:
            cluster = RayExecutor(address=self.settings.ray_address)
        except ImportError as exc:
            raise ServiceConfigError(f"--executor ray: {exc}") from None
        except (ConnectionError, RuntimeError, ValueError) as exc:
            where = self.settings.ray_address or "a local Ray"
            raise ServiceConfigError(f"--executor ray: cannot start or join {where} ({exc})") from None
        self._closers.append(cluster.close)
        return cluster

    def _shared_database(self) -> Database:
        """The PostgreSQL database of ``TOOLDECK_DATABASE_URL`` (one pool for the service's stores)."""
        if self._database is None:
            from tools.postgres import Database

            self._database = Database(_secret(self.settings.database_url) or "")
            self._closers.append(self._database.close)
        return self._database

    def _register_math(self) -> None:
        from tools.builtin.math import MathSolverTool

        self.registry.register(self._own(MathSolverTool()), executor=self._cluster)

    def _register_knowledge(self) -> None:
        from tools.builtin.knowledge import (
            KnowledgeSearchTool,
            KnowledgeStore,
            KnowledgeStoreTool,
            PostgresKnowledgeStore,
            SqliteKnowledgeStore,
        )

        data_dir = self.settings.data_dir
        store: KnowledgeStore
        try:
            if self.settings.database_url is not None:
                store = PostgresKnowledgeStore(database=self._shared_database())
                self.registry.register(KnowledgeStoreTool(store=store))
                self.registry.register(KnowledgeSearchTool(store=store))
                return
            data_dir.mkdir(parents=True, exist_ok=True)
            store = SqliteKnowledgeStore(data_dir / "knowledge.sqlite3")
        except OSError as exc:
            raise ServiceConfigError(
                f"cannot use the data directory {str(data_dir)!r} for the knowledge database "
                f"({exc.strerror or exc}); pass --data-dir or set TOOLDECK_DATA_DIR to a "
                "writable directory"
            ) from None
        self._closers.append(store.close)
        self.registry.register(KnowledgeStoreTool(store=store))
        self.registry.register(KnowledgeSearchTool(store=store))

    def _register_code(self) -> None:
        """``execute_code``, its sandbox hiding the data and configuration directories."""
        from tools.builtin.code_executor import CodeExecutorTool

        tool = CodeExecutorTool(hidden_dirs=self._secret_dirs)
        self.registry.register(self._own(tool), executor=self._cluster)

    def _register_web(self) -> None:
        from tools.builtin.legacy import legacy_tools
        from tools.builtin.web import BraveSearchBackend, SearxngSearchBackend, WebTool

        settings = self.settings
        backend: Any = None
        try:
            if settings.brave_api_key:
                backend = BraveSearchBackend(settings.brave_api_key.get_secret_value())
            elif settings.searxng_url:
                backend = SearxngSearchBackend(settings.searxng_url)
            web = WebTool(search_backend=backend)
        except ImportError as exc:
            self._skip("web", f"{exc}; install the web extra: pip install -e '.[web]' in a tooldeck checkout")
            return
        except ValueError as exc:
            raise ServiceConfigError(f"web search configuration (SEARXNG_URL): {exc}") from None
        self.registry.register(web)
        for alias in legacy_tools(web=web):  # old names web_search, load_web_page, old arguments
            self.registry.register(alias, hidden=True)  # callable for stored conversations, not offered

    def _register_user_context(self) -> None:
        from shared.adapters import AdapterRegistry
        from tools.builtin.context_bridge import ContextBridge
        from tools.builtin.legacy import legacy_tools
        from tools.builtin.user_context import UserContextTool

        settings = self.settings
        modules = self._module_adapters  # modules' own normalize_for_tools shape their data
        adapters = modules.registry_over(AdapterRegistry.with_builtin_adapters()) if modules is not None else None
        try:
            bridge = ContextBridge(settings.context_url, api_key=_secret(settings.context_api_key), adapters=adapters)
        except ValueError as exc:
            raise ServiceConfigError(f"--context-url / TOOLDECK_CONTEXT_URL: {exc}") from None
        close = getattr(bridge, "close", None)
        if callable(close):
            self._closers.append(close)
        tool = UserContextTool(context_bridge=bridge)
        self.registry.register(tool)
        for alias in legacy_tools(user_context=tool):  # old names, with their old arguments
            self.registry.register(alias, hidden=True)  # callable for stored conversations, not offered

    def _register_modules(self) -> None:
        """``module_pipeline`` and ``module_admin`` (plus their 17 old names) over the module
        store in ``data_dir/modules``; the tests of modules run in a sandbox that hides the
        data directory, and so do the enabled modules (each in its own worker, for
        ``normalize_for_tools``; this process never fetches their data, so their HTTP is
        refused); ``repair`` asks this service's model."""
        try:
            import cryptography  # noqa: F401 - the modules extra

            from shared.modules import KeyFileError, ModuleKeys, NoEgress
            from tools.builtin.code_executor import LocalSandbox
            from tools.builtin.modules import ModuleToolkit, sandboxed_workers
        except ImportError as exc:
            self._skip("module_pipeline", f"{exc}; install the modules extra: pip install -e '.[modules]'")
            return
        data_dir = self.settings.data_dir
        try:
            keys = ModuleKeys.load(
                data_dir / "module-keys",
                credentials_key=_secret(self.settings.module_credentials_key),
                signing_key=_secret(self.settings.module_signing_key),
            )
        except KeyFileError as exc:
            raise ServiceConfigError(f"module keys: {exc}") from None
        sandbox = LocalSandbox(hidden_dirs=[data_dir, *self._secret_dirs])
        self._closers.append(sandbox.close)
        workers = sandboxed_workers(
            hidden_dirs=[data_dir, *self._secret_dirs], egress=NoEgress("modules fetch in the context service")
        )
        self._closers.append(workers.close)
        toolkit = ModuleToolkit.create(
            data_dir / "modules", keys=keys, sandbox=sandbox, workers=workers, llm_gateway=_ServiceModel(self)
        )
        self._closers.append(toolkit.adapters.close)
        toolkit.register(self.registry)
        self._module_adapters = toolkit.adapters

    def _register_adopted(self) -> None:
        """Every adopted tool (``tooldeck adopt``, registry files) beside the builtins."""
        from tools.store import RegistryFileError

        service = self._adopted_tools
        if service is None:
            return
        self._closers.append(service.close)
        if service.builder.mcp_handlers is None:  # read when the first MCP session opens
            service.builder.mcp_handlers = self.mcp_handlers
        skipped: dict[str, str] = {}
        try:
            tools = service.build_tools(skipped=skipped)
        except RegistryFileError as exc:
            raise ServiceConfigError(str(exc)) from None
        for tool in tools:
            if tool.name in self.registry:
                skipped[tool.name] = "its id is a builtin tool's name; adopt it again with --id OTHER_NAME"
                continue
            try:
                self.registry.register(tool)
            except (ToolDefinitionError, ValueError) as exc:
                skipped[tool.name] = str(exc)
        for name, reason in skipped.items():
            self._skip(name, reason)

    def _skip(self, name: str, reason: str) -> None:
        self.skipped[name] = reason
        _log.info("tool %s not registered: %s", name, reason)


def build_chat_model(settings: Settings, model: str | None = None) -> ChatModel:
    """The model the settings select: without ``base_url``, the embedded offline model (or
    `orchestrator.testing.TestModel` for the model name ``test``); else an OpenAI-compatible
    client (``model`` overrides the settings' model name).

    Raises:
        ServiceConfigError: ``base_url`` is not a usable http(s) URL.
    """
    if settings.base_url is None:
        if (model or settings.model) == TEST_MODEL:
            from orchestrator.testing import TestModel

            return TestModel()
        return OfflineModel()
    try:
        return OpenAIChatModel(
            settings.base_url,
            model or settings.model,
            api_key=_secret(settings.api_key),
            timeout=settings.model_timeout,
            strict_tools=settings.strict,
            stream=settings.stream,
        )
    except ValueError as exc:
        raise ServiceConfigError(f"--base-url / TOOLDECK_BASE_URL: {exc}") from None


def result_budget(settings: Settings) -> ResultBudget | None:
    """The result budget the settings ask for, its artifacts under ``data_dir/artifacts`` (the
    settings' secrets masked in them); None when ``result_budget_tokens`` is 0."""
    if not settings.result_budget_tokens:
        return None
    from tools.artifacts import ArtifactStore, ResultBudget

    store = ArtifactStore(settings.data_dir / "artifacts", secrets=_settings_secrets(settings))
    return ResultBudget(store, max_tokens=settings.result_budget_tokens)


def _settings_secrets(settings: Settings) -> list[str]:
    """The secret values ``settings`` hold (API keys, module keys): masked in run records and
    artifacts wherever they appear."""
    values = (settings.api_key, settings.context_api_key, settings.brave_api_key, settings.module_credentials_key,
              settings.module_signing_key)  # fmt: skip
    return [value.get_secret_value() for value in values if value is not None]


def approval_policy(settings: Settings, store: ApprovalsBackend | None) -> ApprovalPolicy:
    """The policy of ``settings.freedom``, else of the store's level, else ``medium``: the one
    default of every entry point (``python -m orchestrator``, `OrchestratorService`,
    ``tooldeck``, ``serve-mcp``).

    Raises:
        ServiceConfigError: the approvals file is unusable (nothing runs unchecked).
    """
    from tools.approvals import ApprovalError, ApprovalPolicy

    policy = ApprovalPolicy(settings.freedom, store)
    try:
        _ = policy.level  # read the file now: a corrupt one is a setup error, not a refusal per call
    except ApprovalError as exc:
        raise ServiceConfigError(str(exc)) from None
    return policy


def secret_dirs(data_dir: Path, approvals: ApprovalsBackend | None, signer: StateSigner | None) -> tuple[Path, ...]:
    """The directories model-written code must never see: the data directory (knowledge
    database, module store and keys, paused states, run records) and the directories of the
    approvals file and the state key (the user's configuration directory; ``approvals`` and
    ``signer`` are the store and the :class:`StateSigner` in use, None when there is none).
    Those missing are created (mode 0700) so that the sandboxes, which decide what they hide
    when built, hide what is put there later; one that can't be created can't hold anything
    either. The service's sandboxes and ``--pipeline``'s hide them."""
    found = [data_dir]
    for path in (getattr(approvals, "path", None), getattr(signer, "key_file", None)):
        if isinstance(path, (str, os.PathLike)):
            found.append(Path(path).parent)
    kept: list[Path] = []
    for folder in dict.fromkeys(found):
        try:
            folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        except OSError:
            continue
        kept.append(folder)
    return tuple(kept)


def _secret(value: SecretStr | None) -> str | None:
    return value.get_secret_value() if value is not None else None


class _ServiceModel:
    """The service's model, looked up per call: ``repair`` is wired before the model is built."""

    def __init__(self, service: OrchestratorService) -> None:
        self._service = service

    def chat(
        self,
        messages: Sequence[Mapping[str, Any]],
        *,
        tools: Sequence[Mapping[str, Any]] | None = None,
        tool_choice: Any = None,
    ) -> Any:
        """``service.model.chat(...)``."""
        return self._service.model.chat(messages, tools=tools, tool_choice=tool_choice)
