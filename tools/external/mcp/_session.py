"""Session strategies over the SDK client: one persistent connection, or one per call.

Every coroutine here runs on the toolset's own event loop (:class:`LoopThread`); state is
only touched from that loop, so no locks are needed.
"""

from __future__ import annotations

import asyncio
import logging
import math
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

import anyio
import mcp_types
from mcp import Client
from mcp.shared.dispatcher import ProgressFnT

from tools.errors import UpstreamError
from tools.external.mcp._connect import ClientOptions, make_client
from tools.external.mcp._errors import translate

logger = logging.getLogger(__name__)

#: The SDK's progress callback shape: ``async (progress, total, message) -> None``.
SDKProgress = ProgressFnT

#: Upper bound on ``tools/list`` pages followed, so a server that never ends cannot hang us.
MAX_LIST_PAGES = 100


class Session(Protocol):
    """What :class:`~tools.external.mcp.MCPToolset` needs from a session strategy."""

    async def list_tools(self, *, timeout: float) -> list[mcp_types.Tool]:
        """All tools the server offers (pages followed)."""
        ...

    async def call_tool(
        self,
        name: str,
        arguments: dict[str, Any],
        *,
        timeout: float,
        progress: SDKProgress | None,
    ) -> mcp_types.CallToolResult:
        """One ``tools/call`` bounded by ``timeout``; raises ``ToolError`` subclasses."""
        ...

    async def aclose(self) -> None:
        """Close every connection and stop every server process. Idempotent."""
        ...


async def _list_all(client: Client) -> list[mcp_types.Tool]:
    tools: list[mcp_types.Tool] = []
    cursor: str | None = None
    for _ in range(MAX_LIST_PAGES):
        page = await client.list_tools(cursor=cursor, cache_mode="bypass")
        tools.extend(page.tools)
        cursor = page.next_cursor
        if cursor is None:
            return tools
    logger.warning("MCP tools/list still paging after %d pages; using what arrived", MAX_LIST_PAGES)
    return tools


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
        self._client: Client | None = None
        self._owner_done: anyio.Event | None = None
        self._ready: anyio.Event | None = None
        self._stop: anyio.Event | None = None
        self._error: BaseException | None = None
        self._scope: anyio.CancelScope | None = None
        self._owner_task: asyncio.Task[None] | None = None
        self._closed = False

    async def _connected(self) -> Client:
        if self._closed:
            raise UpstreamError("The MCP toolset is closed.", retryable=False)
        if self._client is not None:
            return self._client
        ready = self._ready
        if ready is None or self._owner_done is None or self._owner_done.is_set():
            ready = self._start_owner()
        await ready.wait()
        client = self._current()
        if client is None:
            error = self._error or UpstreamError("The MCP server connection failed.")
            raise translate(
                error, label=self._options.params.label, timeout=self._options.connect_timeout
            )
        return self._client

    def _start_owner(self) -> anyio.Event:
        ready, stop, done = anyio.Event(), anyio.Event(), anyio.Event()
        self._ready, self._stop, self._owner_done = ready, stop, done
        self._error = None
        self._scope = anyio.CancelScope(
            deadline=anyio.current_time() + self._options.connect_timeout
        )
        # The owner must outlive the caller's task (and its cancel scopes), so it is a
        # free-standing task on this loop rather than a child of the calling task.
        self._owner_task = asyncio.get_running_loop().create_task(
            self._own(self._scope, ready, stop, done)
        )
        return ready

    async def _own(
        self, scope: anyio.CancelScope, ready: anyio.Event, stop: anyio.Event, done: anyio.Event
    ) -> None:
        label = self._options.params.label
        try:
            with scope:
                async with make_client(self._options) as client:
                    scope.deadline = math.inf
                    self._client = client
                    ready.set()
                    logger.debug("MCP server %s connected", label)
                    await stop.wait()
            if scope.cancelled_caught and not ready.is_set():
                self._error = TimeoutError()
        except Exception as exc:  # any connect failure becomes the calls' error
            self._error = exc
            logger.debug("MCP server %s session ended: %r", label, exc)
        finally:
            if self._stop is stop:
                self._client = None
            ready.set()
            done.set()

    def _invalidate(self, client: Client) -> None:
        """Drop ``client`` (its server is gone) so that the next call reconnects."""
        if self._client is client and self._stop is not None:
            self._client = None
            self._stop.set()

    async def list_tools(self, *, timeout: float) -> list[mcp_types.Tool]:
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
    ) -> mcp_types.CallToolResult:
        """One ``tools/call`` within ``timeout`` (connecting first if needed)."""
        client: Client | None = None
        try:
            with anyio.fail_after(timeout):
                client = await self._connected()
                return await client.call_tool(name, arguments, progress_callback=progress)
        except Exception as exc:
            raise self._failed(exc, client, timeout) from None

    def _failed(self, exc: Exception, client: Client | None, timeout: float) -> Exception:
        error = translate(exc, label=self._options.params.label, timeout=timeout)
        if client is not None and error.error_type == "upstream_error" and error.retryable:
            self._invalidate(client)
        return error

    async def aclose(self) -> None:
        """Close the connection and stop the server (process group killed if it lingers)."""
        self._closed = True
        if self._stop is not None:
            self._stop.set()
        if self._scope is not None and self._client is None:
            # Still connecting (a hung or babbling server): give up on it now.
            self._scope.cancel()
        if self._owner_done is not None:
            await self._owner_done.wait()
        self._client = None


class SpawnPerCallSession:
    """A fresh connection (and, for stdio, a fresh server process) for every operation."""

    def __init__(self, options: ClientOptions) -> None:
        self._options = options
        self._closed = False

    async def _run(self, operation: Callable[[Client], Awaitable[Any]], timeout: float) -> Any:
        if self._closed:
            raise UpstreamError("The MCP toolset is closed.", retryable=False)
        try:
            with anyio.fail_after(timeout):
                async with make_client(self._options) as client:
                    return await operation(client)
        except Exception as exc:
            raise translate(exc, label=self._options.params.label, timeout=timeout) from None

    async def list_tools(self, *, timeout: float) -> list[mcp_types.Tool]:
        """All tools the server offers, from a fresh connection."""
        tools: list[mcp_types.Tool] = await self._run(_list_all, timeout)
        return tools

    async def call_tool(
        self,
        name: str,
        arguments: dict[str, Any],
        *,
        timeout: float,
        progress: SDKProgress | None,
    ) -> mcp_types.CallToolResult:
        """One ``tools/call`` on a fresh connection, closed (server stopped) afterwards."""

        async def call(client: Client) -> mcp_types.CallToolResult:
            return await client.call_tool(name, arguments, progress_callback=progress)

        result: mcp_types.CallToolResult = await self._run(call, timeout)
        return result

    async def aclose(self) -> None:
        """Refuse further calls; connections are already closed after each call."""
        self._closed = True
