"""The tools `orchestrator.service.OrchestratorService` builds and registers itself.

Every tool instance is built here and registered by its own ``registry.register(...)`` call
(plus the aliases that keep old tool names callable): the builtins, an agent type's workspace
tools with their ``task`` delegation, and the adopted tools. What each needs closed when the
service closes is handed to ``on_close``; a tool left out (a missing optional dependency, an
adopted tool that cannot be built) is reported to ``skip``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from orchestrator._own_tools import register_workspace, writes
from orchestrator._service_config import ServiceConfigError, agent_router, secret_value
from tools import BaseTool, LocalToolRegistry, ToolDefinitionError

if TYPE_CHECKING:
    from orchestrator._delegation import Delegation
    from orchestrator.graph.hooks import RunHooks
    from orchestrator.llm import ChatModel
    from orchestrator.settings import Settings
    from shared.modules import ModuleAdapters
    from tools.approvals import ApprovalPolicy
    from tools.executors import RemoteExecutor
    from tools.external.mcp import MCPClientHandlers
    from tools.postgres import Database
    from tools.store import RegistryService


class ServiceTools:
    """Builds the service's own tools into ``registry``, from ``settings``.

    Args:
        registry: Where the tools are registered.
        settings: The service's settings (data directory, URLs, keys, executor...).
        cluster: Where the compute tools (``math_solver``, ``execute_code``) run; None: here.
        hidden_dirs: The directories the sandboxes hide (see `secret_dirs`).
        model: The service's model, looked up when needed (``repair`` and delegation are
            wired before the model is built).
        on_close: Told about each thing to close when the service closes.
        skip: Told the name of each tool left out, and why.
    """

    def __init__(
        self,
        registry: LocalToolRegistry,
        settings: Settings,
        *,
        cluster: RemoteExecutor | None,
        hidden_dirs: tuple[Path, ...],
        model: Callable[[], ChatModel],
        on_close: Callable[[Callable[[], None]], None],
        skip: Callable[[str, str], None],
    ) -> None:
        self._registry = registry
        self._settings = settings
        self._cluster = cluster
        self._hidden_dirs = hidden_dirs
        self._model = model
        self._on_close = on_close
        self._skip = skip
        self._database: Database | None = None
        self._module_adapters: ModuleAdapters | None = None

    def register_builtins(self) -> None:
        """``math_solver``, the knowledge tools, ``execute_code``, ``web``, the module tools
        and ``user_context``, with their old names (hidden)."""
        self._register_math()
        self._register_knowledge()
        self._register_code()
        self._register_web()
        self._register_modules()
        self._register_user_context()

    def register_workspace(
        self, agent: str, workspace: str | os.PathLike[str] | None, *, policy: ApprovalPolicy, hooks: RunHooks | None
    ) -> Delegation:
        """The workspace tools of an agent type, over ``workspace`` (default: the current
        directory), read-only for a read-only profile; ``bash`` runs in the code sandbox, which
        hides the data and configuration directories as ``execute_code``'s does; ``task``
        delegates to sub-agents (the profile decides whether the agent sees it). Returns the
        delegation, to bind once the agent's tools are known.

        Raises:
            ServiceConfigError: the routing config file is unusable.
        """
        from orchestrator._delegation import Delegation  # the agents' toolset: only for --agent
        from tools.builtin.code_executor import LocalSandbox

        sandbox = LocalSandbox(hidden_dirs=self._hidden_dirs)
        self._on_close(sandbox.close)
        root = workspace if workspace is not None else os.getcwd()
        router = agent_router(self._settings)
        delegation = Delegation(
            Path(root), model=self._model, router=router, policy=policy, sandbox=sandbox,
            max_iterations=self._settings.max_subagent_iterations, hooks=hooks,
        )  # fmt: skip
        self._on_close(delegation.close)
        read_only = not writes(router, agent)
        register_workspace(self._registry, root, read_only=read_only, sandbox=sandbox, delegate=delegation.delegate)
        return delegation

    def register_adopted(self, service: RegistryService | None, mcp_handlers: MCPClientHandlers) -> None:
        """Every adopted tool (``tooldeck adopt``, registry files) beside the builtins; one
        whose name a builtin has is skipped.

        Raises:
            ServiceConfigError: a registry file is unusable.
        """
        from tools.store import RegistryFileError

        if service is None:
            return
        self._on_close(service.close)
        if service.builder.mcp_handlers is None:  # read when the first MCP session opens
            service.builder.mcp_handlers = mcp_handlers
        skipped: dict[str, str] = {}
        try:
            tools = service.build_tools(skipped=skipped)
        except RegistryFileError as exc:
            raise ServiceConfigError(str(exc)) from None
        for tool in tools:
            if tool.name in self._registry:
                skipped[tool.name] = "its id is a builtin tool's name; adopt it again with --id OTHER_NAME"
                continue
            try:
                self._registry.register(tool)
            except (ToolDefinitionError, ValueError) as exc:
                skipped[tool.name] = str(exc)
        for name, reason in skipped.items():
            self._skip(name, reason)

    def _own(self, tool: BaseTool[Any, Any]) -> BaseTool[Any, Any]:
        close = getattr(tool, "close", None)
        if callable(close):
            self._on_close(close)
        return tool

    def _shared_database(self) -> Database:
        """The PostgreSQL database of ``TOOLDECK_DATABASE_URL`` (one pool for the service's stores)."""
        if self._database is None:
            from tools.postgres import Database

            self._database = Database(secret_value(self._settings.database_url) or "")
            self._on_close(self._database.close)
        return self._database

    def _register_math(self) -> None:
        from tools.builtin.math import MathSolverTool

        self._registry.register(self._own(MathSolverTool()), executor=self._cluster)

    def _register_knowledge(self) -> None:
        from tools.builtin.knowledge import (
            KnowledgeSearchTool,
            KnowledgeStore,
            KnowledgeStoreTool,
            PostgresKnowledgeStore,
            SqliteKnowledgeStore,
        )

        data_dir = self._settings.data_dir
        store: KnowledgeStore
        try:
            if self._settings.database_url is not None:
                store = PostgresKnowledgeStore(database=self._shared_database())
                self._registry.register(KnowledgeStoreTool(store=store))
                self._registry.register(KnowledgeSearchTool(store=store))
                return
            data_dir.mkdir(parents=True, exist_ok=True)
            store = SqliteKnowledgeStore(data_dir / "knowledge.sqlite3")
        except OSError as exc:
            raise ServiceConfigError(
                f"cannot use the data directory {str(data_dir)!r} for the knowledge database "
                f"({exc.strerror or exc}); pass --data-dir or set TOOLDECK_DATA_DIR to a "
                "writable directory"
            ) from None
        self._on_close(store.close)
        self._registry.register(KnowledgeStoreTool(store=store))
        self._registry.register(KnowledgeSearchTool(store=store))

    def _register_code(self) -> None:
        """``execute_code``, its sandbox hiding the data and configuration directories."""
        from tools.builtin.code_executor import CodeExecutorTool

        tool = CodeExecutorTool(hidden_dirs=self._hidden_dirs)
        self._registry.register(self._own(tool), executor=self._cluster)

    def _register_web(self) -> None:
        from tools.builtin.legacy import legacy_tools
        from tools.builtin.web import BraveSearchBackend, SearxngSearchBackend, WebTool

        settings = self._settings
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
        self._registry.register(web)
        for alias in legacy_tools(web=web):  # old names web_search, load_web_page, old arguments
            self._registry.register(alias, hidden=True)  # callable for stored conversations, not offered

    def _register_user_context(self) -> None:
        from shared.adapters import AdapterRegistry
        from tools.builtin.context_bridge import ContextBridge
        from tools.builtin.legacy import legacy_tools
        from tools.builtin.user_context import UserContextTool

        settings = self._settings
        modules = self._module_adapters  # modules' own normalize_for_tools shape their data
        adapters = modules.registry_over(AdapterRegistry.with_builtin_adapters()) if modules is not None else None
        try:
            bridge = ContextBridge(
                settings.context_url, api_key=secret_value(settings.context_api_key), adapters=adapters
            )
        except ValueError as exc:
            raise ServiceConfigError(f"--context-url / TOOLDECK_CONTEXT_URL: {exc}") from None
        close = getattr(bridge, "close", None)
        if callable(close):
            self._on_close(close)
        tool = UserContextTool(context_bridge=bridge)
        self._registry.register(tool)
        for alias in legacy_tools(user_context=tool):  # old names, with their old arguments
            self._registry.register(alias, hidden=True)  # callable for stored conversations, not offered

    def _register_modules(self) -> None:
        """``module_pipeline`` and ``module_admin`` (plus their 17 old names) over the module
        store in ``data_dir/modules``; the tests of modules run in a sandbox that hides the
        data directory, and so do the enabled modules (each in its own worker, for
        ``normalize_for_tools``; this process never fetches their data, so their HTTP is
        refused); ``repair`` asks the service's model."""
        try:
            import cryptography  # noqa: F401 - the modules extra

            from shared.modules import KeyFileError, ModuleKeys, NoEgress
            from tools.builtin.code_executor import LocalSandbox
            from tools.builtin.modules import ModuleToolkit, sandboxed_workers
        except ImportError as exc:
            self._skip("module_pipeline", f"{exc}; install the modules extra: pip install -e '.[modules]'")
            return
        data_dir = self._settings.data_dir
        try:
            keys = ModuleKeys.load(
                data_dir / "module-keys",
                credentials_key=secret_value(self._settings.module_credentials_key),
                signing_key=secret_value(self._settings.module_signing_key),
            )
        except KeyFileError as exc:
            raise ServiceConfigError(f"module keys: {exc}") from None
        sandbox = LocalSandbox(hidden_dirs=[data_dir, *self._hidden_dirs])
        self._on_close(sandbox.close)
        workers = sandboxed_workers(
            hidden_dirs=[data_dir, *self._hidden_dirs], egress=NoEgress("modules fetch in the context service")
        )
        self._on_close(workers.close)
        toolkit = ModuleToolkit.create(
            data_dir / "modules", keys=keys, sandbox=sandbox, workers=workers, llm_gateway=_LazyModel(self._model)
        )
        self._on_close(toolkit.adapters.close)
        toolkit.register(self._registry)
        self._module_adapters = toolkit.adapters


class _LazyModel:
    """The service's model, looked up per call: ``repair`` is wired before the model is built."""

    def __init__(self, model: Callable[[], ChatModel]) -> None:
        self._model = model

    def chat(
        self,
        messages: Sequence[Mapping[str, Any]],
        *,
        tools: Sequence[Mapping[str, Any]] | None = None,
        tool_choice: Any = None,
    ) -> Any:
        """``service.model.chat(...)``."""
        return self._model().chat(messages, tools=tools, tool_choice=tool_choice)
