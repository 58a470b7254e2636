"""MCP for tooldeck: use an MCP server's tools (client) and serve a registry (server).

Needs the ``mcp`` extra (the official SDK): ``pip install -e '.[mcp]'`` in a checkout. Only
``features`` (the requests a server may send its client, and the handlers' types) loads
without it, so an application that can answer servers needs no SDK until it connects to one.

Client::

    with MCPToolset(command=[sys.executable, "-m", "mcp_server_time"]) as time_server:
        for tool in time_server.tools():
            registry.register(tool)

Server::

    python -m tools.external.mcp --registry mypackage.tools:build_registry

Names are imported on first use (PEP 562): the SDK (about a second of start-up on a loaded
machine) is imported with the first name that needs it, so a program that only builds
client handlers (:mod:`tools.external.mcp.features`, SDK-free) and never opens a toolset,
such as ``python -m orchestrator`` without MCP servers, does not pay for it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from shared.lazy import lazy_exports

if TYPE_CHECKING:
    from tools.external.mcp._connect import MCPConfigError, MCPServerParams
    from tools.external.mcp.adapter import MCPAdapter
    from tools.external.mcp.features import (
        ElicitationRequest,
        ElicitationResult,
        MCPClientHandlers,
        MCPRequestDeclined,
        SamplingRequest,
        SamplingResult,
    )
    from tools.external.mcp.server import (
        ServableRegistry,
        build_mcp_server,
        serve_http,
        serve_stdio,
        serve_stdio_async,
    )
    from tools.external.mcp.tool import MCPTool
    from tools.external.mcp.toolset import MCPProgress, MCPToolset, ProgressCallback

#: Public name -> the module that defines it. Imported on first use (PEP 562): the SDK-free
#: ``features`` module (what an application answers servers with) loads without the extra.
_LAZY = {
    "ElicitationRequest": "tools.external.mcp.features",
    "ElicitationResult": "tools.external.mcp.features",
    "MCPAdapter": "tools.external.mcp.adapter",
    "MCPClientHandlers": "tools.external.mcp.features",
    "MCPConfigError": "tools.external.mcp._connect",
    "MCPProgress": "tools.external.mcp.toolset",
    "MCPRequestDeclined": "tools.external.mcp.features",
    "MCPServerParams": "tools.external.mcp._connect",
    "MCPTool": "tools.external.mcp.tool",
    "MCPToolset": "tools.external.mcp.toolset",
    "ProgressCallback": "tools.external.mcp.toolset",
    "SamplingRequest": "tools.external.mcp.features",
    "SamplingResult": "tools.external.mcp.features",
    "ServableRegistry": "tools.external.mcp.server",
    "build_mcp_server": "tools.external.mcp.server",
    "serve_http": "tools.external.mcp.server",
    "serve_stdio": "tools.external.mcp.server",
    "serve_stdio_async": "tools.external.mcp.server",
}

__all__ = [
    "ElicitationRequest",
    "ElicitationResult",
    "MCPAdapter",
    "MCPClientHandlers",
    "MCPConfigError",
    "MCPProgress",
    "MCPRequestDeclined",
    "MCPServerParams",
    "MCPTool",
    "MCPToolset",
    "ProgressCallback",
    "SamplingRequest",
    "SamplingResult",
    "ServableRegistry",
    "build_mcp_server",
    "serve_http",
    "serve_stdio",
    "serve_stdio_async",
]


__getattr__, __dir__ = lazy_exports(__name__, _LAZY, __all__)
