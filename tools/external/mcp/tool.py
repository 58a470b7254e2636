""":class:`MCPTool`: one tool of an MCP server as an ordinary :class:`~tools.base.BaseTool`."""

from __future__ import annotations

import copy
import logging
from typing import Any, Protocol

import mcp_types

from tools.base import BaseTool, check_parameters_schema
from tools.errors import ToolDefinitionError
from tools.external.mcp._connect import clip
from tools.external.mcp._results import result_data
from tools.routing.manual import ToolManual

logger = logging.getLogger(__name__)

#: Schema used when a server's ``inputSchema`` is not a valid object schema.
_FALLBACK_SCHEMA: dict[str, Any] = {"type": "object"}


class ToolCaller(Protocol):
    """What an :class:`MCPTool` calls through (an :class:`MCPToolset`)."""

    def call_remote(self, remote_name: str, arguments: dict[str, Any], *, timeout: float) -> mcp_types.CallToolResult:
        """Run ``tools/call`` and return the raw result; raise ``ToolError`` on failure."""
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

    Args:
        caller: The toolset that owns the session.
        remote: The server's tool definition.
        name: The model-facing name (already sanitised).
        call_timeout: Seconds one call may take, connection included.
        version: Reported in result metadata (the server's version).
        manual: Its routing manual (the toolset categorises each tool; source ``mcp``).
    """

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
        """Send the validated arguments to the server and return its result's data."""
        result = self._caller.call_remote(self.remote_name, request, timeout=self.call_timeout)
        return result_data(result, tool=self.remote_name)

    def output_schema(self) -> dict[str, Any] | None:
        """The server's ``outputSchema`` for this tool, if it declared one (a fresh copy)."""
        return copy.deepcopy(self._output_schema) if self._output_schema is not None else None

    @property
    def read_only(self) -> bool | None:
        """The server's ``readOnlyHint`` annotation, if given (useful for routing)."""
        return None if self._annotations is None else self._annotations.read_only_hint

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
