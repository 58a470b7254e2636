""":class:`MCPToolset`: the tools of one MCP server as :class:`~tools.base.BaseTool` instances."""

from __future__ import annotations

import asyncio
import logging
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, Literal, TextIO

import mcp_types

from tools._fail_closed import external_manual
from tools.errors import ToolError, ToolTimeoutError, UnknownToolError
from tools.external.mcp._connect import ClientOptions, MCPConfigError, MCPServerParams, clip
from tools.external.mcp._home import SessionHome
from tools.external.mcp._names import check_prefix, local_names
from tools.external.mcp._session import (
    Listing,
    PersistentSession,
    SDKProgress,
    Session,
    SpawnPerCallSession,
)
from tools.external.mcp.features import MCPClientHandlers
from tools.external.mcp.tool import MCPTool
from tools.manual import ToolCategory, ToolManual
from tools.result import ToolResult

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class MCPProgress:
    """One progress notification from a server during a tool call.

    Attributes:
        tool: The server's name for the tool being called.
        progress: Progress so far (increases with each notification).
        total: The total, when the server knows it.
        message: The server's progress message, if any (cut to 500 characters).
    """

    tool: str
    progress: float
    total: float | None
    message: str | None


ProgressCallback = Callable[[MCPProgress], None]


class MCPToolset:
    """Connect to one MCP server and use its tools as tooldeck tools.

    ``MCPToolset(command=["python", "-m", "mcp_server_time"])`` spawns a stdio server;
    ``MCPToolset(url="http://127.0.0.1:8000/mcp")`` talks streamable HTTP. :meth:`tools`
    lists the server's tools as :class:`MCPTool` instances (``parameters`` = the server's
    ``inputSchema``, names sanitised to ``^[a-zA-Z0-9_-]{1,64}$`` and optionally prefixed)
    ready for ``LocalToolRegistry.register``.

    By default one session per server is opened on first use and shared by every call from
    any number of threads: the SDK runs on an event loop in a background thread owned by
    the toolset, and every call hops to that thread and back. An async application should
    open the toolset in its own loop (``async with MCPToolset(...) as toolset`` or
    ``await toolset.aopen()``): the session then lives on that loop and calls awaited there
    (``await tool.aexecute(...)``, ``registry.acall_tool``) run in place, with no thread
    hop, at the cost of the SDK's own ``call_tool``; calls from other threads hop into that
    loop, and a sync call on that loop's own thread is refused (it would block the loop
    that must answer it). There is one session either way, so stateful servers keep their
    state. With ``persistent=False`` every call spawns/connects afresh and closes
    afterwards. A server that crashes, hangs, exits at once or writes garbage yields an
    error envelope within ``call_timeout``; its process group is killed, no zombie is left,
    and the next call starts a new server.

    There is no ``atexit`` hook: call :meth:`close` (idempotent) or use ``with`` / ``async
    with``, or the server process lives until the interpreter exits (or, for a session
    opened in an application's loop, until that loop ends).

    Args:
        command: argv of a stdio server (no shell), e.g. ``[sys.executable, "-m", "x"]``.
        url: Streamable-HTTP endpoint instead of ``command``.
        env: Extra environment for the server process (over PATH, HOME, ... only).
        cwd: Working directory for the server process.
        headers: Static HTTP headers for ``url`` (e.g. authorisation); never logged.
        prefix: Prepended to every tool name as ``prefix_name`` (1-32 safe characters).
        persistent: Reuse one session (True) or spawn/connect per call (False).
        call_timeout: Seconds one call may take, (re)connection included.
        connect_timeout: Seconds for start-up and handshake.
        progress_callback: Receives :class:`MCPProgress` for calls in flight. Runs on the
            event loop the call runs on (the toolset's own for sync callers): keep it quick
            and never call tools from it.
        server_log_level: Lowest level of server log messages requested; they are logged
            to ``tools.external.mcp._connect`` at the mapped Python level.
        errlog: Where a stdio server's stderr goes (default: this process's stderr).
        label: Short server name for logs and error messages.
        protocol: ``"legacy"`` (default) uses the ``initialize`` handshake every server
            speaks (revision 2025-11-25 and older); ``"auto"`` negotiates the newest
            revision (2026-07-28) when the server has it, falling back to the handshake.
            With SDK 2.3 the newest revision costs about a quarter more per call (see
            ``scripts/_bench_mcp.py``) and adds nothing tool calls need.
        categories: Routing categories by tool name (the server's name or the local one),
            declared by you; they win over ``default_category``. A tool neither names is
            ``unclassified`` (routing places it by name: see
            :func:`tools.routing.categorize_tool`).
        default_category: The category of this server's tools that ``categories`` does
            not name (e.g. ``"planning"`` for an issue tracker); default: the heuristic.
        trusted: Trust the server's tool annotations. Untrusted (the default), they are a
            remote party's hints: ``destructiveHint`` raises a tool to ``dangerous``, but
            ``readOnlyHint`` is ignored, so every tool is at least ``moderate`` and
            ``mutating`` (read-only agents get none of them). Trusted, ``readOnlyHint``
            makes a tool ``safe`` and declares it ``mutating=False``.
        handlers: What this client serves the server (:class:`MCPClientHandlers`):
            sampling, elicitation, roots. Each capability is declared only when its handler
            is given; by default none is. Tools the server marks task-capable are called as
            MCP tasks whatever the handlers (polled, cancelled on timeout).

    Raises:
        MCPConfigError: both or neither of ``command``/``url``, a shell string as command,
            a non-http URL, a bad prefix, a non-positive timeout or an unknown category.
    """

    def __init__(
        self,
        command: Sequence[str] | None = None,
        *,
        url: str | None = None,
        env: Mapping[str, str] | None = None,
        cwd: str | Path | None = None,
        headers: Mapping[str, str] | None = None,
        prefix: str | None = None,
        persistent: bool = True,
        call_timeout: float = 60.0,
        connect_timeout: float = 30.0,
        progress_callback: ProgressCallback | None = None,
        server_log_level: mcp_types.LoggingLevel = "info",
        errlog: TextIO | None = None,
        label: str | None = None,
        protocol: Literal["auto", "legacy"] = "legacy",
        categories: Mapping[str, ToolCategory | str] | None = None,
        default_category: ToolCategory | str | None = None,
        trusted: bool = False,
        handlers: MCPClientHandlers | None = None,
    ) -> None:
        if isinstance(command, str):
            raise MCPConfigError(
                "MCPToolset: command must be an argv list, not a shell string: "
                f"{clip(command, 80)!r}; e.g. command=['python', '-m', 'mcp_server_time']."
            )
        if call_timeout <= 0 or connect_timeout <= 0:
            raise MCPConfigError("MCPToolset: call_timeout and connect_timeout must be positive.")
        self._params = MCPServerParams(
            command=tuple(command) if command is not None else None,
            url=url,
            env=env,
            cwd=cwd,
            headers=headers,
            label=label or "",
        )
        self._prefix = check_prefix(prefix)
        self._categories = {key: _category(value, f"categories[{key!r}]") for key, value in (categories or {}).items()}
        self._default_category = _category(default_category, "default_category") if default_category else None
        self._trusted = trusted
        self._call_timeout = call_timeout
        self._connect_timeout = connect_timeout
        self._progress_callback = progress_callback
        self._options = ClientOptions(
            params=self._params,
            connect_timeout=connect_timeout,
            log_level=server_log_level,
            errlog=errlog if errlog is not None else sys.stderr,
            protocol=protocol,
            handlers=handlers,
        )
        self._persistent = persistent
        name = f"tooldeck-mcp-{self._params.label}"[:60]
        self._home = SessionHome(self._new_session, name=name, close_timeout=connect_timeout)
        self._lock = threading.Lock()
        self._tools: list[MCPTool] | None = None
        self._task_support: dict[str, str] = {}

    def _new_session(self) -> Session:
        return PersistentSession(self._options) if self._persistent else SpawnPerCallSession(self._options)

    @property
    def label(self) -> str:
        """The server's short name used in logs and messages."""
        return self._params.label

    @property
    def server_pid(self) -> int | None:
        """Pid of the current (or, spawn-per-call, the latest) stdio server process.

        For diagnostics; None before the first call and for URL servers.
        """
        return self._home.session.server_pid

    @property
    def trusted(self) -> bool:
        """Whether the server's tool annotations are trusted (may lower risk)."""
        return self._trusted

    @property
    def persistent(self) -> bool:
        """Whether one session is reused across calls."""
        return self._persistent

    # ------------------------------------------------------------------ tools

    def tools(self, *, refresh: bool = False, timeout: float | None = None) -> list[MCPTool]:
        """The server's tools as :class:`MCPTool` instances (listed once, then cached).

        Args:
            refresh: List the server's tools again instead of using the cached list.
            timeout: Seconds for starting the server and listing, all included (default:
                ``connect_timeout + call_timeout``). A server still starting when it
                passes keeps starting in the background until ``connect_timeout``.

        Raises:
            ToolError: the server could not be started, reached or listed in time
                (``UpstreamError`` or ``ToolTimeoutError``, with the reason).
        """
        with self._lock:
            if self._tools is not None and not refresh:
                return list(self._tools)
        limit = self._connect_timeout + self._call_timeout if timeout is None else timeout
        listing = self._home.run(lambda session: session.list_tools(timeout=limit), timeout=limit)
        return self._build_tools(listing)

    async def atools(self, *, refresh: bool = False, timeout: float | None = None) -> list[MCPTool]:
        """Async twin of :meth:`tools`: lists through the session of the running event loop.

        Raises:
            ToolError: as for :meth:`tools`.
        """
        with self._lock:
            if self._tools is not None and not refresh:
                return list(self._tools)
        limit = self._connect_timeout + self._call_timeout if timeout is None else timeout
        listing = await self._home.arun(lambda session: session.list_tools(timeout=limit), timeout=limit)
        return self._build_tools(listing)

    def _build_tools(self, listing: Listing) -> list[MCPTool]:
        names = local_names([tool.name for tool in listing.tools], self._prefix)
        built = [
            MCPTool(
                caller=self,
                remote=tool,
                name=names[tool.name],
                call_timeout=self._call_timeout,
                version=listing.server_version,
                manual=self._manual(tool, names[tool.name]),
            )
            for tool in _unique(listing.tools)
        ]
        self._warn_unlisted(built)
        task_support = {t.name: t.execution.task_support for t in listing.tools if t.execution is not None}
        with self._lock:
            self._tools = built
            self._task_support = {name: support for name, support in task_support.items() if support}
        return list(built)

    def _manual(self, tool: mcp_types.Tool, name: str) -> ToolManual:
        hints = tool.annotations
        return external_manual(
            name,
            source="mcp",
            server=self.label,
            remote_name=tool.name,
            description=tool.description or "",
            known=self._categories,
            server_default=self._default_category,
            read_only=hints.read_only_hint if hints is not None else None,
            destructive=hints.destructive_hint if hints is not None else None,
            trusted=self._trusted,
            schema=tool.input_schema,
        )

    def _warn_unlisted(self, tools: list[MCPTool]) -> None:
        listed = {tool.name for tool in tools} | {tool.remote_name for tool in tools}
        for key in self._categories:
            if key not in listed:
                logger.warning(
                    "MCP server %s has no tool %r named in categories; fix or remove that entry", self.label, key
                )

    def tool(self, name: str, *, timeout: float | None = None) -> MCPTool:
        """The tool called ``name`` (local or server name).

        Args:
            name: The tool's local or server name.
            timeout: Seconds for listing the server's tools if they are not known yet
                (see :meth:`tools`).

        Raises:
            UnknownToolError: no such tool; the message lists the available ones.
            ToolError: the server could not be listed (see :meth:`tools`).
        """
        tools = self.tools(timeout=timeout)
        for tool in tools:
            if name in (tool.name, tool.remote_name):
                return tool
        available = ", ".join(tool.name for tool in tools) or "none"
        raise UnknownToolError(
            f"The MCP server {self.label!r} has no tool {clip(name, 100)!r}; available: {available}."
        )

    def call(
        self, name: str, arguments: Mapping[str, Any] | None = None, *, timeout: float | None = None
    ) -> ToolResult:
        """Call tool ``name`` (local or server name) through the envelope; never raises.

        Args:
            name: The tool's local or server name.
            arguments: The arguments (validated against the tool's schema).
            timeout: Seconds for this call instead of ``call_timeout``, the server's
                start-up and listing included when they are still to come.
        """
        started = time.monotonic()
        try:
            tool = self.tool(name, timeout=timeout)
        except ToolError as exc:
            return ToolResult.failure(exc.error_type, exc.message, retryable=exc.retryable)
        return within(tool, timeout, started, self.label).execute(**dict(arguments or {}))

    # ------------------------------------------------------------------ calls

    def call_remote(self, remote_name: str, arguments: dict[str, Any], *, timeout: float) -> mcp_types.CallToolResult:
        """Run ``tools/call`` on the server and return the raw SDK result.

        This is the low-level path :class:`MCPTool` uses; prefer :meth:`call` or the tools.

        Raises:
            ToolError: the call failed (subclass by cause: timeout, upstream, validation).
        """
        progress = self._progress_for(remote_name)
        tasks = self._task_support.get(remote_name)
        return self._home.run(
            lambda session: session.call_tool(
                remote_name, arguments, timeout=timeout, progress=progress, task_support=tasks
            ),
            timeout=timeout,
        )

    async def acall_remote(
        self, remote_name: str, arguments: dict[str, Any], *, timeout: float
    ) -> mcp_types.CallToolResult:
        """Async twin of :meth:`call_remote`: awaited in place when the session lives on the
        running loop (see :meth:`aopen`), else on the session's loop.

        Raises:
            ToolError: the call failed (subclass by cause: timeout, upstream, validation).
        """
        progress = self._progress_for(remote_name)
        tasks = self._task_support.get(remote_name)
        return await self._home.arun(
            lambda session: session.call_tool(
                remote_name, arguments, timeout=timeout, progress=progress, task_support=tasks
            ),
            timeout=timeout,
        )

    def serves_from(self, loop: asyncio.AbstractEventLoop | None) -> bool:
        """True when the session lives on ``loop``, an application's loop (see :meth:`aopen`)."""
        return self._home.serves_from(loop)

    def _progress_for(self, remote_name: str) -> SDKProgress | None:
        callback = self._progress_callback
        if callback is None:
            return None

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            event = MCPProgress(remote_name, progress, total, clip(message, 500) if message is not None else None)
            try:
                callback(event)
            except Exception:
                logger.exception("MCP progress callback raised for tool %s", remote_name)

        return on_progress

    # ------------------------------------------------------------------ lifecycle

    async def aopen(self) -> MCPToolset:
        """Serve the session from the running event loop (an async application's own loop).

        Calls awaited on this loop then run in place, with no thread hop. Call it before the
        first call (a session already opened by sync calls is closed first: the server
        restarts). ``async with MCPToolset(...)`` does it for you.

        Raises:
            ToolError: the toolset is closed.
            ToolDefinitionError: another, still running, loop already serves the session.
        """
        await self._home.adopt()
        return self

    def close(self) -> None:
        """Close the session, stop the server (killing its process group if needed), stop
        the background loop. Idempotent; calls afterwards return error envelopes.

        From inside the application loop that serves the session (see :meth:`aopen`), the
        session can only be told to close; use :meth:`aclose` (or ``async with``) there.
        """
        self._home.close()

    async def aclose(self) -> None:
        """Async twin of :meth:`close`: returns once the server is stopped."""
        await self._home.aclose()

    async def __aenter__(self) -> MCPToolset:
        return await self.aopen()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    def __enter__(self) -> MCPToolset:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        mode = "persistent" if self.persistent else "spawn-per-call"
        return f"MCPToolset({self.label!r}, {mode})"


def within(tool: MCPTool, timeout: float | None, started: float, label: str) -> MCPTool:
    """``tool`` with what is left of ``timeout`` (seconds since ``started``, a monotonic
    time) for its call: one budget for start-up, listing and the call together."""
    if timeout is None:
        return tool
    left = timeout - (time.monotonic() - started)
    if left <= 0:
        raise ToolTimeoutError(f"The MCP server {label!r} did not answer within {timeout:g} seconds.")
    return tool.with_timeout(left)


def _category(value: ToolCategory | str, key: str) -> ToolCategory:
    try:
        return ToolCategory(value)
    except ValueError:
        allowed = ", ".join(c.value for c in ToolCategory)
        raise MCPConfigError(f"MCPToolset {key}: unknown category {str(value)[:80]!r}; allowed: {allowed}") from None


def _unique(tools: list[mcp_types.Tool]) -> list[mcp_types.Tool]:
    """The listing without repeated names (first one wins; a server should not repeat)."""
    seen: set[str] = set()
    out: list[mcp_types.Tool] = []
    for tool in tools:
        if tool.name not in seen:
            seen.add(tool.name)
            out.append(tool)
    return out
