"""MCP for tooldeck: use an MCP server's tools (client) and serve a registry (server).

Needs the ``mcp`` extra (the official SDK): ``pip install -e '.[mcp]'`` in a checkout.

Client::

    with MCPToolset(command=[sys.executable, "-m", "mcp_server_time"]) as time_server:
        for tool in time_server.tools():
            registry.register(tool)

Server::

    python -m tools.external.mcp --registry mypackage.tools:build_registry
"""

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
