"""``ToolBuilder``: a :class:`~tools.store.ToolConfig` as a ready-to-register ``BaseTool``.

HTTP and CLI tools become :class:`~tools.external.ExternalTool` instances run by an
:class:`~tools.external.HTTPAdapter` / :class:`~tools.external.CLIAdapter`; an MCP tool is an
``ExternalTool`` over a shared :class:`~tools.external.MCPAdapter` (one session per server,
opened on the first call, so building never starts a server); a binary is a
:class:`~tools.external.BinaryTool` that spawns its executable per call. Every tool carries
its :class:`~tools.manual.ToolManual` (source = adapter type, capabilities from the config,
category/risk/mutating from the operator's declarations, else failing closed: see
:func:`manual_for`).

Adapters are created on first need (so building HTTP tools never imports the MCP SDK) and
each one knows the configs it was given: the adapter of a built tool always has its config.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from tools._fail_closed import external_manual
from tools.base import BaseTool, check_parameters_schema
from tools.errors import ToolDefinitionError
from tools.external.config import AuthConfig
from tools.external.config import ToolConfig as ExternalConfig
from tools.manual import ToolManual
from tools.result import ToolResult
from tools.store._secrets import secret_names
from tools.store.config import ToolConfig, ToolHints

if TYPE_CHECKING:
    from tools.external import CLIAdapter, HTTPAdapter, MCPAdapter, ProcessRunner
    from tools.external.mcp.features import MCPClientHandlers

logger = logging.getLogger(__name__)

MODE_VARIABLE = "TOOLDECK_TOOL_MODE"
_T = TypeVar("_T")


def manual_for(config: ToolConfig, parameters: Mapping[str, Any] | None = None) -> ToolManual:
    """The manual of ``config``: the operator's declarations over what fails closed.

    Without declarations an adopted tool is ``moderate`` and ``mutating`` (CLI tools and
    binaries run programs: never less), ``dangerous`` when its id, the server's name for it,
    its actions or the program it runs destroy, send, pay, deploy or execute (or an HTTP
    endpoint uses ``DELETE``); the source's hints (:class:`~tools.store.ToolHints`) may raise
    that, and lower it only for an MCP server marked ``trusted``. Category: the operator's,
    else the source's claim, else ``unclassified`` (routing places it by name).

    Args:
        config: The tool's configuration.
        parameters: Its argument schema, to estimate the token cost (default: the config's).
    """
    hints = config.hints or ToolHints()
    destructive = hints.destructive
    if config.http is not None and any(ep.method == "DELETE" for ep in config.http.endpoints.values()):
        destructive = True
    manual = external_manual(
        config.id,
        source=config.adapter_type,
        server=_server_label(config),
        remote_name=config.remote_tool,
        description=config.description,
        read_only=hints.read_only,
        destructive=destructive,
        trusted=config.mcp is not None and config.mcp.trusted,
        risk_hint=hints.risk,
        category_hint=hints.category,
        programs=_programs(config),
        words=_action_words(config),
        schema=parameters if parameters is not None else config.parameters or {},
        capabilities=config.capabilities,
    )
    declared = config.manual
    if not declared.is_empty():
        manual = manual.with_declarations(
            by="operator", category=declared.category, risk=declared.risk, mutating=declared.mutating
        )
    return manual.model_copy(update={"display_name": config.name}) if config.name else manual


def _programs(config: ToolConfig) -> list[str]:
    """The programs the tool runs (a CLI tool's argv[0], a binary's path)."""
    if config.cli is not None:
        return [config.cli.command[0]]
    if config.binary is not None:
        return [config.binary.path]
    return []


def _action_words(config: ToolConfig) -> list[str]:
    """The action names of a CLI or HTTP tool and a CLI tool's literal arguments."""
    if config.http is not None:
        return list(config.http.endpoints)
    if config.cli is None:
        return []
    words = [*config.cli.command[1:], *config.cli.actions]
    for action in config.cli.actions.values():
        for element in action.args:
            words.extend(part for part in ([element] if isinstance(element, str) else element) if "{" not in part)
    return words


def _server_label(config: ToolConfig) -> str | None:
    if config.http is not None:
        return config.http.base_url.split("://", 1)[-1].split("/", 1)[0]
    if config.mcp is not None:
        return config.mcp.url or " ".join(config.mcp.command or [])[:100]
    return None


class _RemoteToolAdapter:
    """Sends an ``ExternalTool``'s single action to one named tool of an MCP server."""

    adapter_type = "mcp"

    def __init__(self, inner: MCPAdapter, remote_tool: str) -> None:
        self._inner = inner
        self._remote = remote_tool

    def execute(
        self, tool_id: str, action: str | None, params: Mapping[str, Any], timeout: float | None = None
    ) -> ToolResult:
        return self._inner.execute(tool_id, self._remote, params, timeout)

    def is_available(self, config: ExternalConfig) -> bool:
        return self._inner.is_available(config)


class ToolBuilder:
    """Builds tools from configs; owns the adapters (and their sessions and processes).

    Args:
        env: The environment tools run with: where auth secrets are read at call time and
            what CLI children and binaries inherit (pass ``os.environ`` at the entry point).
        runner: Process runner shared by CLI tools and binaries (one is created if omitted).
        mcp_handlers: What the MCP client serves servers (sampling, elicitation, roots; see
            :class:`tools.external.mcp.MCPClientHandlers`); also settable later through
            :attr:`mcp_handlers`, for a composition root whose answering service is built
            after this builder.
    """

    def __init__(
        self,
        *,
        env: Mapping[str, str] | None = None,
        runner: ProcessRunner | None = None,
        mcp_handlers: MCPClientHandlers | None = None,
    ) -> None:
        self._mcp_handlers = mcp_handlers
        self._env = dict(env or {})
        self._runner = runner
        self._owns_runner = runner is None
        self._http: HTTPAdapter | None = None
        self._cli: CLIAdapter | None = None
        self._mcp: MCPAdapter | None = None
        self._mcp_servers: set[str] = set()

    @property
    def env(self) -> Mapping[str, str]:
        """The environment the tools run with."""
        return self._env

    def build(self, config: ToolConfig, *, call_timeout: float | None = None) -> BaseTool[Any, Any]:
        """The tool for ``config``, with its manual attached; cheap (see :class:`AdoptedTool`).

        HTTP, CLI and MCP tools are :class:`AdoptedTool` instances whose adapter-backed tool is
        created on the first call; call :meth:`check` to create it now.

        Args:
            config: The tool's configuration.
            call_timeout: Seconds per call (default: the adapter config's own timeout).
        """
        from tools.store.adopted_tool import AdoptedTool

        if config.adapter_type == "binary":
            tool: BaseTool[Any, Any] = self._binary_tool(config, call_timeout)
        else:
            external = self.external_config(config)
            tool = AdoptedTool(config, external, lambda: self._external_tool(config, external, call_timeout))
        tool.manual = manual_for(config, tool.parameters)
        return tool

    def check(self, config: ToolConfig) -> BaseTool[Any, Any]:
        """Build ``config``'s tool completely now (schema checked against the meta-schema).

        Raises:
            ToolDefinitionError: the config cannot be turned into a tool (bad argument schema,
                the MCP extra missing, ...); the message names the tool and the fix.
        """
        from tools.store.adopted_tool import AdoptedTool

        tool = self.build(config)
        if isinstance(tool, AdoptedTool):
            tool.delegate()
        else:
            check_parameters_schema(tool.parameters, owner=f"tool {config.id!r}")
        return tool

    # ------------------------------------------------------------------ adapters

    def _runner_(self) -> ProcessRunner:
        if self._runner is None:
            from tools.external import ProcessRunner

            self._runner = ProcessRunner()
        return self._runner

    def http_adapter(self) -> HTTPAdapter:
        """The (lazily created) HTTP adapter."""
        if self._http is None:
            from tools.external.http_adapter import HTTPAdapter

            self._http = HTTPAdapter(env=self._env)
        return self._http

    def cli_adapter(self) -> CLIAdapter:
        """The (lazily created) CLI adapter."""
        if self._cli is None:
            from tools.external.cli_adapter import CLIAdapter

            self._cli = CLIAdapter(env=self._env, runner=self._runner_())
        return self._cli

    @property
    def mcp_handlers(self) -> MCPClientHandlers | None:
        """What MCP servers are served (sampling, elicitation, roots); None: nothing."""
        return self._mcp_handlers

    @mcp_handlers.setter
    def mcp_handlers(self, handlers: MCPClientHandlers | None) -> None:
        self._mcp_handlers = handlers
        if self._mcp is not None:  # sessions already opened reopen declaring the new ones
            self._mcp.handlers = handlers

    def mcp_adapter(self) -> MCPAdapter:
        """The (lazily created) MCP adapter; needs the ``mcp`` extra.

        Raises:
            ToolDefinitionError: the MCP SDK is not installed.
        """
        if self._mcp is None:
            try:
                from tools.external.mcp.adapter import MCPAdapter
            except ImportError as exc:
                raise ToolDefinitionError(
                    f"MCP tools need the MCP SDK ({exc}); install it with: pip install -e '.[mcp]'"
                ) from None
            self._mcp = MCPAdapter(env=self._env, handlers=self._mcp_handlers)
        return self._mcp

    def mcp_server_id(self, config: ToolConfig) -> str:
        """The adapter id of ``config``'s server: tools of one server share its session."""
        mcp = _required(config.mcp, config)
        auth = config.auth.model_dump(mode="json") if config.auth else None
        blob = json.dumps([mcp.model_dump(mode="json"), auth], sort_keys=True)
        return "mcp-" + hashlib.sha256(blob.encode()).hexdigest()[:12]

    def external_config(self, config: ToolConfig) -> ExternalConfig:
        """``config`` in the form the :mod:`tools.external` adapters take."""
        auth = (
            AuthConfig(env_var=config.auth.env_var, kind=config.auth.kind, header=config.auth.header)
            if config.auth
            else None
        )
        settings: Any
        if config.cli is not None and config.auth is not None and config.auth.env_var not in config.cli.secret_env:
            settings = config.cli.model_copy(update={"secret_env": [*config.cli.secret_env, config.auth.env_var]})
        else:
            settings = config.http or config.cli or config.mcp
        tool_id = self.mcp_server_id(config) if config.mcp is not None else config.id
        return ExternalConfig(
            id=tool_id,
            name=config.id,
            adapter_type=config.adapter_type,
            description=config.description,
            config=settings,
            parameters=config.parameters,
            auth=auth,
        )

    def _external_tool(
        self, config: ToolConfig, external: ExternalConfig, call_timeout: float | None
    ) -> BaseTool[Any, Any]:
        from tools.external.external_tool import ExternalTool

        adapter: Any
        if config.adapter_type == "http":
            adapter = self.http_adapter()
            adapter.add_tool(external)
        elif config.adapter_type == "cli":
            adapter = self.cli_adapter()
            adapter.add_tool(external)
        else:
            mcp = self.mcp_adapter()
            if external.id not in self._mcp_servers:
                mcp.add_tool(external)
                self._mcp_servers.add(external.id)
            adapter = _RemoteToolAdapter(mcp, config.remote_tool or config.id)
        return ExternalTool(external, adapter=adapter, call_timeout=call_timeout)

    def _binary_tool(self, config: ToolConfig, call_timeout: float | None) -> BaseTool[Any, Any]:
        from tools.external._binary_contract import call_binary
        from tools.external._environment import ChildEnvironment
        from tools.external.binary_tool import BinaryTool

        binary = _required(config.binary, config)
        # The scheme every external child shares: base variables, the config's, its own secret.
        child, secrets = ChildEnvironment(self._env), secret_names([config])
        env = child.build({**binary.env, MODE_VARIABLE: "subprocess"}, secrets)
        redactor = child.redactor(secrets)
        limit = call_timeout or binary.timeout
        runner = self._runner_()

        def invoke(params: dict[str, Any]) -> ToolResult:
            result = call_binary(
                binary.path,
                params,
                runner=runner,
                env=env,
                timeout=limit,
                max_output_bytes=10_000_000,
                label=config.id,
            )
            return redactor.result(result)

        return BinaryTool(
            name=config.id,
            description=config.description,
            version=(config.version_hash or "0")[:12],
            parameters=config.parameters,
            output_schema=binary.output_schema,
            invoke=invoke,
            path=binary.path,
        )

    def close(self) -> None:
        """Close HTTP sessions, stop MCP servers and kill running children (idempotent)."""
        for adapter in (self._http, self._cli, self._mcp):
            if adapter is not None:
                try:
                    adapter.close()
                except Exception:  # one failing close must not keep the others open
                    logger.warning("closing %s failed", type(adapter).__name__, exc_info=True)
        self._http = self._cli = self._mcp = None
        self._mcp_servers.clear()
        if self._owns_runner and self._runner is not None:
            self._runner.kill_all(close=True)
            self._runner = None


def _required(value: _T | None, config: ToolConfig) -> _T:
    if value is None:  # ToolConfig's validator guarantees it; kept for the type checker
        raise ToolDefinitionError(f"tool {config.id!r}: the {config.adapter_type!r} settings are missing")
    return value
