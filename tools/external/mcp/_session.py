"""Session strategies over the SDK client: one persistent connection, or one per call.

Every coroutine here runs on the toolset's own event loop (:class:`LoopThread`); state is
only touched from that loop, so no locks are needed.
"""

from __future__ import annotations

import asyncio
import logging
import math
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol

import anyio
import mcp_types
from mcp import Client
from mcp.shared.dispatcher import ProgressFnT

from tools.errors import UpstreamError
from tools.external.mcp._connect import ClientOptions, make_client
from tools.external.mcp._errors import translate
from tools.external.mcp._tasks import call_as_task, runs_as_task, ttl_for

logger = logging.getLogger(__name__)

#: The SDK's progress callback shape: ``async (progress, total, message) -> None``.
SDKProgress = ProgressFnT

#: Upper bound on ``tools/list`` pages followed, so a server that never ends cannot hang us.
MAX_LIST_PAGES = 100


class Session(Protocol):
    """What :class:`~tools.external.mcp.MCPToolset` needs from a session strategy."""

    @property
    def server_pid(self) -> int | None:
        """Pid of the most recent stdio server process, if any."""
        ...

    async def list_tools(self, *, timeout: float) -> Listing:
        """All tools the server offers (pages followed)."""
        ...

    async def call_tool(
        self,
        name: str,
        arguments: dict[str, Any],
        *,
        timeout: float,
        progress: SDKProgress | None,
        task_support: str | None = None,
    ) -> mcp_types.CallToolResult:
        """One ``tools/call`` bounded by ``timeout`` (as a task when the tool and server
        support it); raises ``ToolError`` subclasses."""
        ...

    async def aclose(self) -> None:
        """Close every connection and stop every server process. Idempotent."""
        ...


@dataclass(frozen=True)
class Listing:
    """A server's tools and the version it announced (empty when it announced none)."""

    tools: list[mcp_types.Tool]
    server_version: str


async def _call(
    client: Client,
    options: ClientOptions,
    name: str,
    arguments: dict[str, Any],
    *,
    timeout: float,
    progress: SDKProgress | None,
    task_support: str | None,
) -> mcp_types.CallToolResult:
    """``tools/call``, as an MCP task when the tool is task-capable and the server runs tasks."""
    if runs_as_task(client, task_support):
        router = options.progress_router
        return await call_as_task(client, name, arguments, progress=progress, router=router, ttl_ms=ttl_for(timeout))
    return await client.call_tool(name, arguments, progress_callback=progress)


async def _list_all(client: Client) -> Listing:
    info = client.server_info
    version = (info.version if info is not None else "") or ""
    tools: list[mcp_types.Tool] = []
    cursor: str | None = None
    for _ in range(MAX_LIST_PAGES):
        page = await client.list_tools(cursor=cursor, cache_mode="bypass")
        tools.extend(page.tools)
        cursor = page.next_cursor
        if cursor is None:
            return Listing(tools, version)
    logger.warning("MCP tools/list still paging after %d pages; using what arrived", MAX_LIST_PAGES)
    return Listing(tools, version)


class _Connection:
    """One attempt at a live connection: the owner task's state, shared with callers."""

    def __init__(self, connect_timeout: float) -> None:
        self.ready = anyio.Event()
        self.stop = anyio.Event()
        self.done = anyio.Event()
        self.scope = anyio.CancelScope(deadline=anyio.current_time() + connect_timeout)
        self.client: Client | None = None
        self.error: BaseException | None = None
        self.pid: int | None = None

    @property
    def usable(self) -> bool:
        """Connecting or connected, and not told to stop."""
        return not (self.stop.is_set() or self.done.is_set())


class PersistentSession:
    """One connection per server, opened on first use, shared by all calls, reopened if lost.

    An *owner* task enters the SDK client (anyio requires entering and leaving a client in
    the same task) and holds it open until :meth:`aclose`. Calls run as their own tasks and
    use the client concurrently. When the server goes away (crash, exit), in-flight calls
    get ``CONNECTION_CLOSED`` errors, the owner is told to wind down (which reaps the
    process group) and the next call starts a fresh server.
    """

    def __init__(self, options: ClientOptions) -> None:
        self._options = options
        self._current: _Connection | None = None
        self._owners: set[asyncio.Task[None]] = set()
        self._closed = False

    @property
    def server_pid(self) -> int | None:
        """Pid of the current stdio server process (None before the first call or for URLs)."""
        return self._current.pid if self._current is not None else None

    async def _connected(self) -> Client:
        if self._closed:
            raise UpstreamError("The MCP toolset is closed.", retryable=False)
        conn = self._current
        if conn is None or not conn.usable:
            conn = self._start_owner()
        if conn.client is None:
            await conn.ready.wait()
        if conn.client is None or conn.stop.is_set():
            error = conn.error or UpstreamError("The MCP server closed the connection.")
            raise translate(error, label=self._options.params.label, timeout=self._options.connect_timeout)
        return conn.client

    def _start_owner(self) -> _Connection:
        conn = _Connection(self._options.connect_timeout)
        self._current = conn
        # The owner must outlive the caller's task (and its cancel scopes), so it is a
        # free-standing task on this loop rather than a child of the calling task.
        task = asyncio.get_running_loop().create_task(self._own(conn))
        self._owners.add(task)
        task.add_done_callback(self._owners.discard)
        return conn

    async def _own(self, conn: _Connection) -> None:
        label = self._options.params.label

        def spawned(pid: int) -> None:
            conn.pid = pid

        try:
            with conn.scope:
                async with make_client(self._options, on_spawn=spawned) as client:
                    conn.scope.deadline = math.inf
                    conn.client = client
                    conn.ready.set()
                    logger.debug("MCP server %s connected", label)
                    await conn.stop.wait()
            if conn.scope.cancelled_caught and conn.client is None:
                conn.error = TimeoutError()
        except Exception as exc:  # any connect failure becomes the waiting calls' error
            conn.error = exc
            logger.debug("MCP server %s session ended: %r", label, exc)
        finally:
            conn.client = None
            conn.stop.set()
            conn.ready.set()
            conn.done.set()

    def _invalidate(self, client: Client) -> None:
        """Retire the connection of ``client`` (its server is gone); the next call reconnects."""
        conn = self._current
        if conn is not None and conn.client is client:
            conn.stop.set()

    async def list_tools(self, *, timeout: float) -> Listing:
        """All tools the server offers, pages followed; raises ``ToolError`` subclasses."""
        client: Client | None = None
        try:
            with anyio.fail_after(timeout):
                client = await self._connected()
                return await _list_all(client)
        except Exception as exc:
            raise self._failed(exc, client, timeout) from None

    async def call_tool(
        self,
        name: str,
        arguments: dict[str, Any],
        *,
        timeout: float,
        progress: SDKProgress | None,
        task_support: str | None = None,
    ) -> mcp_types.CallToolResult:
        """One ``tools/call`` within ``timeout`` (connecting first if needed)."""
        client: Client | None = None
        try:
            with anyio.fail_after(timeout):
                client = await self._connected()
                return await _call(
                    client,
                    self._options,
                    name,
                    arguments,
                    timeout=timeout,
                    progress=progress,
                    task_support=task_support,
                )
        except Exception as exc:
            raise self._failed(exc, client, timeout) from None

    def _failed(self, exc: Exception, client: Client | None, timeout: float) -> Exception:
        error = translate(exc, label=self._options.params.label, timeout=timeout)
        if client is not None and error.error_type == "upstream_error" and error.retryable:
            self._invalidate(client)
        return error

    async def aclose(self) -> None:
        """Close every connection and stop its server (process group killed if it lingers)."""
        self._closed = True
        conn = self._current
        if conn is not None:
            conn.stop.set()
            if conn.client is None:
                # Still connecting (a hung or babbling server): give up on it now.
                conn.scope.cancel()
        owners = list(self._owners)
        if owners:
            await asyncio.wait(owners)


class SpawnPerCallSession:
    """A fresh connection (and, for stdio, a fresh server process) for every operation."""

    def __init__(self, options: ClientOptions) -> None:
        self._options = options
        self._pid: int | None = None
        self._closed = False

    @property
    def server_pid(self) -> int | None:
        """Pid of the most recently spawned stdio server (gone once its call finished)."""
        return self._pid

    def _spawned(self, pid: int) -> None:
        self._pid = pid

    async def _run(self, operation: Callable[[Client], Awaitable[Any]], timeout: float) -> Any:
        if self._closed:
            raise UpstreamError("The MCP toolset is closed.", retryable=False)
        try:
            with anyio.fail_after(timeout):
                async with make_client(self._options, on_spawn=self._spawned) as client:
                    return await operation(client)
        except Exception as exc:
            raise translate(exc, label=self._options.params.label, timeout=timeout) from None

    async def list_tools(self, *, timeout: float) -> Listing:
        """All tools the server offers, from a fresh connection."""
        listing: Listing = await self._run(_list_all, timeout)
        return listing

    async def call_tool(
        self,
        name: str,
        arguments: dict[str, Any],
        *,
        timeout: float,
        progress: SDKProgress | None,
        task_support: str | None = None,
    ) -> mcp_types.CallToolResult:
        """One ``tools/call`` on a fresh connection, closed (server stopped) afterwards."""

        async def call(client: Client) -> mcp_types.CallToolResult:
            return await _call(
                client, self._options, name, arguments, timeout=timeout, progress=progress, task_support=task_support
            )

        result: mcp_types.CallToolResult = await self._run(call, timeout)
        return result

    async def aclose(self) -> None:
        """Refuse further calls; connections are already closed after each call."""
        self._closed = True
