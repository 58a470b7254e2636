"""MCP for tooldeck: use an MCP server's tools (client) and serve a registry (server).

Needs the ``mcp`` extra (the official SDK): ``pip install -e '.[mcp]'`` in a checkout. The
names below are imported on first use, so ``tools.external.mcp.features`` (plain data types)
works without it.

Client::

    with MCPToolset(command=[sys.executable, "-m", "mcp_server_time"]) as time_server:
        for tool in time_server.tools():
            registry.register(tool)

Server::

    python -m tools.external.mcp --registry mypackage.tools:build_registry
"""

import importlib
from typing import TYPE_CHECKING, Any

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

#: Public name -> the module that defines it (imported on first use: the SDK only then).
_LAZY = {
    "MCPConfigError": "tools.external.mcp._connect",
    "MCPServerParams": "tools.external.mcp._connect",
    "MCPAdapter": "tools.external.mcp.adapter",
    "ElicitationRequest": "tools.external.mcp.features",
    "ElicitationResult": "tools.external.mcp.features",
    "MCPClientHandlers": "tools.external.mcp.features",
    "MCPRequestDeclined": "tools.external.mcp.features",
    "SamplingRequest": "tools.external.mcp.features",
    "SamplingResult": "tools.external.mcp.features",
    "ServableRegistry": "tools.external.mcp.server",
    "build_mcp_server": "tools.external.mcp.server",
    "serve_http": "tools.external.mcp.server",
    "serve_stdio": "tools.external.mcp.server",
    "serve_stdio_async": "tools.external.mcp.server",
    "MCPTool": "tools.external.mcp.tool",
    "MCPProgress": "tools.external.mcp.toolset",
    "MCPToolset": "tools.external.mcp.toolset",
    "ProgressCallback": "tools.external.mcp.toolset",
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


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'tools.external.mcp' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # the next lookup is a plain attribute
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
