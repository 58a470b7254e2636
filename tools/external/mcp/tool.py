""":class:`MCPTool`: one tool of an MCP server as an ordinary :class:`~tools.base.BaseTool`."""

from __future__ import annotations

import asyncio
import copy
import logging
from collections.abc import Coroutine
from typing import Any, Protocol

import mcp_types

from tools.base import BaseTool, check_parameters_schema
from tools.errors import ToolDefinitionError, ToolError
from tools.external.mcp._connect import clip
from tools.external.mcp._home import SYNC_ON_HOME
from tools.external.mcp._results import result_data
from tools.manual import ToolManual

logger = logging.getLogger(__name__)

#: Schema used when a server's ``inputSchema`` is not a valid object schema.
_FALLBACK_SCHEMA: dict[str, Any] = {"type": "object"}


class ToolCaller(Protocol):
    """What an :class:`MCPTool` calls through (an :class:`MCPToolset`)."""

    def call_remote(self, remote_name: str, arguments: dict[str, Any], *, timeout: float) -> mcp_types.CallToolResult:
        """Run ``tools/call`` and return the raw result; raise ``ToolError`` on failure."""
        ...

    async def acall_remote(
        self, remote_name: str, arguments: dict[str, Any], *, timeout: float
    ) -> mcp_types.CallToolResult:
        """:meth:`call_remote`, awaited (in place when the session lives on this loop)."""
        ...

    def serves_from(self, loop: asyncio.AbstractEventLoop | None) -> bool:
        """True when the session lives on ``loop``, an application's event loop."""
        ...


class MCPTool(BaseTool[dict[str, Any], Any]):
    """A tool on an MCP server, callable, registrable and exportable like any other tool.

    Instances come from :meth:`MCPToolset.tools`; build them yourself only in tests.
    Arguments are validated against the server's ``inputSchema`` before anything is sent
    (field-level ``validation_error`` for the model); the call then goes to the server
    through the toolset's session. Results: ``structuredContent`` when the server sends
    it, otherwise the text blocks joined (images, audio and resources summarised). A
    result with ``isError`` becomes an ``execution_error`` whose message is the server's
    text; protocol errors (``-32602`` invalid params, unknown tool) a ``validation_error``
    with the server's text; a crashed or unreachable server an ``upstream_error``; no
    answer within ``call_timeout`` a ``timeout``. A server schema that is not a valid JSON
    object schema is replaced by ``{"type": "object"}`` with a WARNING naming the tool; a
    description longer than 4,000 characters is cut with a note.

    Async calls (``aexecute``, ``registry.acall_tool``) never take a worker thread: they
    are awaited on the caller's loop, in place when the toolset was opened in that loop
    (``async with toolset``: a call then costs the SDK's own ``call_tool`` plus validation
    and the envelope), else by handing the call to the session's loop. Sync calls block on
    the session's loop.

    Args:
        caller: The toolset that owns the session.
        remote: The server's tool definition.
        name: The model-facing name (already sanitised).
        call_timeout: Seconds one call may take, connection included.
        version: Reported in result metadata (the server's version).
        manual: Its routing manual (the toolset categorises each tool; source ``mcp``).
    """

    #: The toolset decides where its session's calls run (its own loop, or the loop it was
    #: opened in); the process's shared tool loop would be a third, foreign loop.
    run_on_shared_loop = False

    def __init__(
        self,
        *,
        caller: ToolCaller,
        remote: mcp_types.Tool,
        name: str,
        call_timeout: float,
        version: str = "0.0.0",
        manual: ToolManual | None = None,
    ) -> None:
        self.name = name
        self.manual = manual
        self.remote_name = remote.name
        # Server text becomes prompt text: bounded, so one server cannot flood the context.
        self.description = clip(remote.description or remote.title or f"MCP tool {remote.name}.")
        self.version = version or "0.0.0"
        self.parameters = _usable_schema(remote.input_schema, tool=remote.name)
        self.call_timeout = call_timeout
        self._output_schema = remote.output_schema
        self._caller = caller
        self._annotations = remote.annotations

    def execute_internal(self, request: dict[str, Any]) -> Any:
        """Send the validated arguments to the server and return its result's data.

        Without a running event loop (a sync caller) this blocks on the toolset's own loop.
        On a running loop it returns a coroutine, which the envelope awaits on that loop.
        """
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            result = self._caller.call_remote(self.remote_name, request, timeout=self.call_timeout)
            return result_data(result, tool=self.remote_name)
        return self._acall(request, loop)

    def _acall(self, request: dict[str, Any], origin: asyncio.AbstractEventLoop) -> Coroutine[Any, Any, Any]:
        async def call() -> Any:
            if asyncio.get_running_loop() is origin:  # awaited by an async caller
                result = await self._caller.acall_remote(self.remote_name, request, timeout=self.call_timeout)
            elif self._caller.serves_from(origin):
                # A sync call made on the loop that serves the session (the envelope runs
                # this coroutine elsewhere while that loop waits): it could never finish.
                raise ToolError(SYNC_ON_HOME)
            else:  # a sync call made from some other loop's thread
                result = await asyncio.to_thread(
                    self._caller.call_remote, self.remote_name, request, timeout=self.call_timeout
                )
            return result_data(result, tool=self.remote_name)

        return call()

    @property
    def is_async(self) -> bool:
        """True: an async caller awaits the call on its own loop (no worker thread).

        :meth:`execute_internal` returns a coroutine when an event loop is running, the
        result directly for sync callers (who may run it in any worker thread).
        """
        return True

    def output_schema(self) -> dict[str, Any] | None:
        """The server's ``outputSchema`` for this tool, if it declared one (a fresh copy)."""
        return copy.deepcopy(self._output_schema) if self._output_schema is not None else None

    @property
    def read_only(self) -> bool | None:
        """The server's ``readOnlyHint`` annotation, if given: a hint from the server, which
        the tool's manual trusts only for a server marked ``trusted``."""
        return None if self._annotations is None else self._annotations.read_only_hint

    @property
    def destructive(self) -> bool | None:
        """The server's ``destructiveHint`` annotation, if given (a hint, like :attr:`read_only`)."""
        return None if self._annotations is None else self._annotations.destructive_hint

    def with_timeout(self, call_timeout: float) -> MCPTool:
        """A copy of this tool whose calls may take ``call_timeout`` seconds."""
        clone = copy.copy(self)
        clone.call_timeout = call_timeout
        return clone

    def __repr__(self) -> str:
        return f"MCPTool(name={self.name!r}, remote_name={self.remote_name!r})"


def _usable_schema(schema: dict[str, Any], *, tool: str) -> dict[str, Any]:
    """The server's input schema if it is a valid object schema, else a permissive one."""
    try:
        check_parameters_schema(schema, owner=f"MCP tool {tool!r}")
    except ToolDefinitionError as exc:
        logger.warning("%s; the tool accepts any arguments instead", exc)
        return dict(_FALLBACK_SCHEMA)
    return copy.deepcopy(schema)
