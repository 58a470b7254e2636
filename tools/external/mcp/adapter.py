""":class:`MCPAdapter`: the ``ToolAdapter`` for MCP servers described by ``ToolConfig``."""

from __future__ import annotations

import logging
import os
import shutil
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from types import TracebackType
from typing import Any

from tools.errors import ToolDefinitionError, ToolError, UnknownActionError, UnknownToolError
from tools.external.config import ActionSpec, MCPConfig, ToolConfig
from tools.external.mcp.features import MCPClientHandlers
from tools.external.mcp.tool import MCPTool
from tools.external.mcp.toolset import MCPToolset, ProgressCallback, within
from tools.result import ToolResult

logger = logging.getLogger(__name__)


class MCPAdapter:
    """Runs the tools of MCP servers; one :class:`ToolConfig` (with an ``MCPConfig``) per server.

    ``execute(tool_id, action, params)`` calls the server tool named ``action`` on the
    server configured as ``tool_id`` (``action`` may be omitted when the server has exactly
    one tool). Sessions are opened on first use, persistent or spawn-per-call as
    :attr:`MCPConfig.persistent` says, and shared by all callers; :meth:`close` (or ``with``)
    stops every server. Every failure is an error :class:`ToolResult`, never an exception:
    an unknown ``tool_id`` is ``unknown_tool``, an unknown or missing ``action`` is
    ``unknown_action`` listing the server's tools, a server that cannot start is
    ``upstream_error``.

    Args:
        tools: Configs to register at once (see :meth:`add_tool`).
        env: Where secrets named by :attr:`ToolConfig.auth` are read (pass ``os.environ`` at
            the entry point) and whose ``PATH`` resolves stdio commands in
            :meth:`is_available`. Server processes get only ``MCPConfig.env`` on top of the
            SDK's safe defaults, never this mapping.
        progress_callback: Passed to every toolset (see :class:`MCPToolset`).
        handlers: What every toolset's client serves (sampling, elicitation, roots; see
            :class:`~tools.external.mcp.MCPClientHandlers`); None: no such capability.
        which: Resolves a program name against a ``PATH``; injectable for tests.
    """

    adapter_type = "mcp"

    def __init__(
        self,
        tools: Iterable[ToolConfig] = (),
        *,
        env: Mapping[str, str] | None = None,
        progress_callback: ProgressCallback | None = None,
        which: Callable[..., str | None] = shutil.which,
        handlers: MCPClientHandlers | None = None,
    ) -> None:
        self._handlers = handlers
        self._env = dict(env or {})
        self._progress_callback = progress_callback
        self._which = which
        self._configs: dict[str, ToolConfig] = {}
        self._toolsets: dict[str, MCPToolset] = {}
        self._lock = threading.Lock()
        for config in tools:
            self.add_tool(config)

    def add_tool(self, config: ToolConfig) -> None:
        """Register the server ``config`` under its id (replacing, and closing, an older one).

        Adding a config equal to the one already registered keeps the running session.

        Raises:
            ToolDefinitionError: ``config`` is not an MCP config.
        """
        _mcp(config)
        with self._lock:
            if self._configs.get(config.id) == config:
                return
            self._configs[config.id] = config
            old = self._toolsets.pop(config.id, None)
        if old is not None:
            old.close()

    def action_specs(self, config: ToolConfig) -> list[ActionSpec]:
        """The server's tools as actions (name, description, ``inputSchema``); lists the
        server (starting it if needed). ``config`` is added first when it is new.

        Raises:
            ToolDefinitionError: the server could not be started or listed; the message
                says why.
        """
        self.add_tool(config)
        try:
            tools = self.tools(config.id)
        except ToolError as exc:
            raise ToolDefinitionError(
                f"MCP server {config.id!r}: cannot list its tools ({exc.message}); check the "
                "command/url in its MCPConfig and that the server starts on its own."
            ) from None
        return [ActionSpec(tool.name, tool.description, tool.input_schema()) for tool in tools]

    def toolset(self, tool_id: str) -> MCPToolset:
        """The (lazily created) toolset of server ``tool_id``.

        Raises:
            UnknownToolError: no server registered under ``tool_id``.
            ToolError: the secret named by ``auth`` is not set.
        """
        with self._lock:
            existing = self._toolsets.get(tool_id)
            if existing is not None:
                return existing
            config = self._configs.get(tool_id)
            if config is None:
                known = ", ".join(sorted(self._configs)) or "none"
                raise UnknownToolError(f"No MCP server {tool_id!r} is configured; known: {known}.")
            toolset = self._build(config)
            self._toolsets[tool_id] = toolset
            return toolset

    def _build(self, config: ToolConfig) -> MCPToolset:
        mcp = _mcp(config)
        headers: dict[str, str] = {}
        if config.auth is not None:
            secret = self._env.get(config.auth.env_var)
            if not secret:
                raise ToolError(
                    f"The MCP server {config.id!r} needs a credential that is not configured.",
                    retryable=False,
                    details={"reason": "missing_credential", "env_var": config.auth.env_var},
                )
            headers[config.auth.header] = config.auth.header_value(secret)
        stdio = mcp.transport == "stdio"
        return MCPToolset(
            mcp.command if stdio else None,
            url=None if stdio else mcp.url,
            env=mcp.env,
            cwd=mcp.cwd,
            headers=headers or None,
            persistent=mcp.persistent,
            call_timeout=config.timeout or mcp.timeout,
            progress_callback=self._progress_callback,
            label=config.id,
            trusted=mcp.trusted,
            handlers=self._handlers,
        )

    def tools(self, tool_id: str) -> list[MCPTool]:
        """The tools of server ``tool_id`` as :class:`MCPTool` instances.

        Raises:
            ToolError: unknown ``tool_id``, or the server could not be listed.
        """
        return self.toolset(tool_id).tools()

    def execute(
        self,
        tool_id: str,
        action: str | None,
        params: Mapping[str, Any],
        timeout: float | None = None,
    ) -> ToolResult:
        """Call server tool ``action`` of server ``tool_id``; never raises.

        Args:
            tool_id: The :attr:`ToolConfig.id` of the server.
            action: The server's tool name (or its sanitised local name); None when the
                server has a single tool.
            params: The arguments, validated against the tool's ``inputSchema``.
            timeout: Seconds for the call, the server's start-up and listing included when
                they are still to come (default: the config's timeout for the call).
        """
        started = time.monotonic()
        try:
            toolset = self.toolset(tool_id)
            tools = toolset.tools(timeout=timeout)
            tool = within(_pick(tools, action, tool_id), timeout, started, tool_id)
        except ToolError as exc:
            return ToolResult.failure(exc.error_type, exc.message, retryable=exc.retryable)
        return tool.execute(**dict(params))

    def is_available(self, config: ToolConfig) -> bool:
        """Whether ``config`` can run: an MCP config whose command resolves (stdio) or that
        has a URL, and whose ``auth`` secret is set. No process is started, no request sent."""
        if not isinstance(config.config, MCPConfig):
            return False
        if config.auth is not None and not self._env.get(config.auth.env_var):
            return False
        mcp = config.config
        if mcp.transport != "stdio":
            return mcp.url is not None
        program = (mcp.command or [""])[0]
        if os.sep in program:
            return os.access(program, os.X_OK)
        path = self._env.get("PATH", os.environ.get("PATH", os.defpath))
        return bool(program) and self._which(program, path=path) is not None

    @property
    def handlers(self) -> MCPClientHandlers | None:
        """What every toolset's client serves (sampling, elicitation, roots)."""
        return self._handlers

    @handlers.setter
    def handlers(self, handlers: MCPClientHandlers | None) -> None:
        # A session declares its capabilities when it opens: close the open ones so that
        # the next call reopens them declaring what is served now.
        self._handlers = handlers
        self.close()

    def close(self) -> None:
        """Close every server session (idempotent; later calls reopen them)."""
        with self._lock:
            toolsets = list(self._toolsets.values())
            self._toolsets.clear()
        for toolset in toolsets:
            toolset.close()

    def __enter__(self) -> MCPAdapter:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def _mcp(config: ToolConfig) -> MCPConfig:
    if not isinstance(config.config, MCPConfig):
        raise ToolDefinitionError(
            f"tool {config.id!r} has adapter_type {config.adapter_type!r}; "
            "MCPAdapter needs adapter_type 'mcp' with an MCPConfig (command or url)"
        )
    return config.config


def _pick(tools: list[MCPTool], action: str | None, tool_id: str) -> MCPTool:
    if action is None and len(tools) == 1:
        return tools[0]
    for tool in tools:
        if action in (tool.name, tool.remote_name):
            return tool
    choices = ", ".join(tool.remote_name for tool in tools) or "none"
    what = "needs an action" if action is None else f"has no tool {action!r}"
    raise UnknownActionError(f"The MCP server {tool_id!r} {what}; choose one of: {choices}.")
