"""Serve a tooldeck registry as an MCP server (stdio, or streamable HTTP).

Every registered tool is listed with its input schema and, when it has an object output
schema, its output schema. Calls go through the registry (``acall_tool``), so validation,
breakers, retries, timeouts and metrics apply exactly as for any other caller, and so does
the freedom dial: a call that needs a person's approval is asked about through the client
(elicitation) or refused with how to approve it (see :mod:`tools.external.mcp._approvals`).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

import anyio
import mcp_types
from mcp.server import Server
from mcp.server.context import ServerRequestContext
from mcp.server.stdio import stdio_server

from tools.external.mcp._approvals import DEFAULT_ELICITATION_TIMEOUT, McpApprovals
from tools.external.mcp._progress import relayed_progress
from tools.result import ToolResult

if TYPE_CHECKING:
    from tools.approvals import ApprovalPolicy

logger = logging.getLogger(__name__)


class ServableRegistry(Protocol):
    """What the server needs from a registry (a :class:`~tools.registry.LocalToolRegistry`)."""

    def to_mcp_tools(self) -> list[dict[str, Any]]:
        """MCP ``tools/list`` entries (``name``, ``description``, ``inputSchema``, ...)."""
        ...

    async def acall_tool(self, name: str, /, **arguments: Any) -> ToolResult:
        """Run one call through the registry; never raises."""
        ...


def build_mcp_server(
    registry: ServableRegistry,
    *,
    name: str = "tooldeck",
    version: str = "0.1.0",
    instructions: str | None = None,
    policy: ApprovalPolicy | None = None,
    elicitation_timeout: float = DEFAULT_ELICITATION_TIMEOUT,
) -> Server[Any]:
    """An SDK low-level :class:`mcp.server.Server` exposing ``registry``'s tools.

    ``tools/list`` answers from ``registry.to_mcp_tools()`` (read on every request, so
    tools registered later appear). ``tools/call`` runs ``registry.acall_tool``: an error
    envelope becomes a result with ``isError: true`` whose text is the envelope's
    model-facing message (never a traceback); success becomes one text block (a string
    result as is, anything else as JSON) plus ``structuredContent`` when the tool declares
    an output schema. Unknown tools, missing or malformed arguments (not an object) come
    back as ``isError`` results from the registry's own validation, so a client sees the
    same messages a model would. Nothing a client sends makes the handler raise. A client
    that sends a progress token gets the tool's ``report_progress`` reports as
    ``notifications/progress`` (see ``tools.progress``).

    With a policy (``policy``, else the registry's own), a call that needs a person's
    approval is asked about with an elicitation when the client declared it (an accepted
    "run it" runs exactly that call once), else answered with an ``isError`` result saying
    that a person must approve it and how (``tooldeck approve ...``).

    Args:
        registry: The tools to serve.
        name: Server name announced to clients.
        version: Server version announced to clients.
        instructions: Optional usage instructions announced to clients.
        policy: The freedom dial for the clients' calls (the entry points pass the user's:
            the stored level, else ``medium``); None: the registry's own policy, if any.
        elicitation_timeout: Seconds the client's user has to answer an approval request.

    Raises:
        TypeError: a policy applies but the registry cannot check approvals
            (``check_approval`` / ``acall_tool_raw``, as ``LocalToolRegistry`` has).
    """

    async def list_tools(
        ctx: ServerRequestContext[Any], params: mcp_types.PaginatedRequestParams | None
    ) -> mcp_types.ListToolsResult:
        return mcp_types.ListToolsResult(tools=_listed_tools(registry))

    schemas = _OutputSchemas(registry)
    approvals = _approvals(registry, policy, elicitation_timeout)

    async def call_tool(
        ctx: ServerRequestContext[Any], params: mcp_types.CallToolRequestParams
    ) -> mcp_types.CallToolResult | mcp_types.InputRequiredResult:
        async with relayed_progress(ctx, params.name):  # the tool's report_progress, when the client asked
            return await _screened_call(ctx, params)

    async def _screened_call(
        ctx: ServerRequestContext[Any], params: mcp_types.CallToolRequestParams
    ) -> mcp_types.CallToolResult | mcp_types.InputRequiredResult:
        if approvals is not None and isinstance(params.arguments, Mapping | None):
            try:
                screened = await approvals.screen(
                    ctx,
                    params.name,
                    params.arguments or {},
                    responses=params.input_responses,
                    state=params.request_state,
                )
            except Exception:
                logger.exception("MCP tools/call of %r: the approval check raised", params.name)
                return _error_result(f"The tool '{params.name}' could not be checked for approval, so it was not run.")
            if isinstance(screened, mcp_types.CallToolResult | mcp_types.InputRequiredResult):
                return screened
            if screened is not None:
                return _envelope(screened, params.name, schemas)
        return await _call(registry, params.name, params.arguments, schemas)

    return Server(
        name,
        version=version,
        instructions=instructions,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


def _approvals(registry: ServableRegistry, policy: ApprovalPolicy | None, timeout: float) -> McpApprovals | None:
    """The approvals of this server: ``policy``, else the registry's own; None: no gate."""
    used = policy if policy is not None else getattr(registry, "policy", None)
    if used is None:
        return None
    if not callable(getattr(registry, "check_approval", None)) or not callable(
        getattr(registry, "acall_tool_raw", None)
    ):
        raise TypeError(
            f"a policy applies to the MCP server, but {type(registry).__name__} cannot check approvals; serve a "
            "LocalToolRegistry (it has check_approval and acall_tool_raw)"
        )
    return McpApprovals(registry, used, elicitation_timeout=timeout)  # type: ignore[arg-type]


def _listed_tools(registry: ServableRegistry) -> list[mcp_types.Tool]:
    tools: list[mcp_types.Tool] = []
    for entry in registry.to_mcp_tools():
        output = entry.get("outputSchema")
        if isinstance(output, Mapping) and output.get("type") != "object":
            # MCP clients up to 2025-11-25 accept only object output schemas.
            entry = {key: value for key, value in entry.items() if key != "outputSchema"}  # noqa: PLW2901
        tools.append(mcp_types.Tool.model_validate(entry))
    return tools


async def _call(
    registry: ServableRegistry,
    name: str,
    arguments: Mapping[str, Any] | None,
    schemas: _OutputSchemas,
) -> mcp_types.CallToolResult:
    try:
        result = await registry.acall_tool(name, **dict(arguments or {}))
    except Exception:
        # The registry never raises by contract; if a broken one does, the client still gets
        # an answer and the traceback stays in this process's log.
        logger.exception("MCP tools/call of %r raised inside the registry", name)
        return _error_result(f"The tool '{name}' failed with an internal error.")
    return _envelope(result, name, schemas)


def _envelope(result: ToolResult, name: str, schemas: _OutputSchemas) -> mcp_types.CallToolResult:
    """A registry's result as an MCP result (the model-facing message of an error)."""
    if result.error is not None:
        return _error_result(result.error.message)
    structured = result.data if schemas.has_object_schema(name) and isinstance(result.data, dict) else None
    return mcp_types.CallToolResult(
        content=[mcp_types.TextContent(text=_as_text(result.data))],
        structured_content=structured,
    )


class _OutputSchemas:
    """Whether each tool declares an object output schema, cached per tool instance."""

    def __init__(self, registry: ServableRegistry) -> None:
        self._lookup = getattr(registry, "get_tool", None)
        self._known: dict[str, tuple[Any, bool]] = {}

    def has_object_schema(self, name: str) -> bool:
        tool = self._lookup(name) if callable(self._lookup) else None
        if tool is None:
            return False
        cached = self._known.get(name)
        if cached is not None and cached[0] is tool:
            return cached[1]
        schema = tool.output_schema()
        known = isinstance(schema, Mapping) and schema.get("type") == "object"
        self._known[name] = (tool, known)
        return known


def _error_result(message: str) -> mcp_types.CallToolResult:
    return mcp_types.CallToolResult(content=[mcp_types.TextContent(text=message)], is_error=True)


def _as_text(data: Any) -> str:
    if isinstance(data, str):
        return data
    return json.dumps(data, ensure_ascii=False)


async def serve_stdio_async(registry: ServableRegistry, **server_options: Any) -> None:
    """Serve ``registry`` over this process's stdin/stdout until stdin closes.

    While serving, the SDK points file descriptor 1 at stderr, so a tool that prints cannot
    corrupt the protocol stream.

    Args:
        registry: The tools to serve.
        **server_options: ``name``, ``version``, ``instructions``, ``policy``,
            ``elicitation_timeout`` for :func:`build_mcp_server`.
    """
    server = build_mcp_server(registry, **server_options)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def serve_stdio(registry: ServableRegistry, **server_options: Any) -> None:
    """Blocking :func:`serve_stdio_async`: serve over stdio until the client disconnects."""
    anyio.run(_serve_stdio, registry, server_options)


async def _serve_stdio(registry: ServableRegistry, server_options: dict[str, Any]) -> None:
    await serve_stdio_async(registry, **server_options)


def serve_http(
    registry: ServableRegistry,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    path: str = "/mcp",
    **server_options: Any,
) -> None:
    """Serve ``registry`` over streamable HTTP at ``http://host:port/path`` (blocking).

    Binds to loopback by default; DNS-rebinding protection is on for loopback hosts. There
    is no authentication: put a proxy in front before binding to a public interface.

    Args:
        registry: The tools to serve.
        host: Interface to bind.
        port: TCP port (0 picks a free one).
        path: Endpoint path.
        **server_options: ``name``, ``version``, ``instructions``, ``policy``,
            ``elicitation_timeout`` for :func:`build_mcp_server`.
    """
    import uvicorn

    server = build_mcp_server(registry, **server_options)
    app = server.streamable_http_app(streamable_http_path=path, host=host)
    uvicorn.run(app, host=host, port=port, log_level="warning")
