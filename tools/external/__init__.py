"""Tools that run elsewhere: HTTP APIs, CLI commands, MCP servers and subprocess binaries.

Every external tool becomes an ordinary :class:`~tools.base.BaseTool`, so it registers in a
:class:`~tools.registry.LocalToolRegistry` and goes through the same envelope, breaker, retry
and metrics as any other tool. :func:`tools.external.binary.serve` (not re-exported here) turns
a tool into a subprocess binary.

Names are imported on first use (PEP 562), so a tool binary that only needs
``tools.external.binary`` does not pay for ``requests`` and the other adapters at start-up.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from shared.lazy import lazy_exports

if TYPE_CHECKING:
    from tools.external._process import ProcessOutcome, ProcessRunner
    from tools.external._redact import secret_values
    from tools.external.adapter import (
        ConfigurableAdapter,
        DiscoveringAdapter,
        ToolAdapter,
        ToolAdapterRegistry,
        UnknownAdapterError,
    )
    from tools.external.binary_tool import BinaryTool
    from tools.external.cli_adapter import CLIAdapter
    from tools.external.config import (
        ActionSpec,
        AdoptionMetadata,
        AuthConfig,
        CLIAction,
        CLIConfig,
        HTTPConfig,
        HTTPEndpoint,
        MCPConfig,
        ToolConfig,
    )
    from tools.external.executor import BinaryStatus, ScanChanges, ToolExecutorService
    from tools.external.external_tool import ExternalCall, ExternalTool, build_external_tools
    from tools.external.http_adapter import HTTPAdapter
    from tools.external.mcp import MCPAdapter, MCPTool, MCPToolset, build_mcp_server, serve_stdio

_HOMES = {
    "ProcessOutcome": "tools.external._process",
    "ProcessRunner": "tools.external._process",
    "secret_values": "tools.external._redact",
    "ConfigurableAdapter": "tools.external.adapter",
    "DiscoveringAdapter": "tools.external.adapter",
    "ToolAdapter": "tools.external.adapter",
    "ToolAdapterRegistry": "tools.external.adapter",
    "UnknownAdapterError": "tools.external.adapter",
    "BinaryTool": "tools.external.binary_tool",
    "CLIAdapter": "tools.external.cli_adapter",
    "ActionSpec": "tools.external.config",
    "AdoptionMetadata": "tools.external.config",
    "AuthConfig": "tools.external.config",
    "CLIAction": "tools.external.config",
    "CLIConfig": "tools.external.config",
    "HTTPConfig": "tools.external.config",
    "HTTPEndpoint": "tools.external.config",
    "MCPConfig": "tools.external.config",
    "ToolConfig": "tools.external.config",
    "BinaryStatus": "tools.external.executor",
    "ScanChanges": "tools.external.executor",
    "ToolExecutorService": "tools.external.executor",
    "ExternalCall": "tools.external.external_tool",
    "ExternalTool": "tools.external.external_tool",
    "build_external_tools": "tools.external.external_tool",
    "HTTPAdapter": "tools.external.http_adapter",
    # MCP names need the SDK (extra "mcp"); importing them is deferred like the rest.
    "MCPAdapter": "tools.external.mcp",
    "MCPTool": "tools.external.mcp",
    "MCPToolset": "tools.external.mcp",
    "build_mcp_server": "tools.external.mcp",
    "serve_stdio": "tools.external.mcp",
}

__all__ = [
    "ActionSpec",
    "AdoptionMetadata",
    "AuthConfig",
    "BinaryStatus",
    "BinaryTool",
    "CLIAction",
    "CLIAdapter",
    "CLIConfig",
    "ConfigurableAdapter",
    "DiscoveringAdapter",
    "ExternalCall",
    "ExternalTool",
    "HTTPAdapter",
    "HTTPConfig",
    "HTTPEndpoint",
    "MCPAdapter",
    "MCPConfig",
    "MCPTool",
    "MCPToolset",
    "ProcessOutcome",
    "ProcessRunner",
    "ScanChanges",
    "ToolAdapter",
    "ToolAdapterRegistry",
    "ToolConfig",
    "ToolExecutorService",
    "UnknownAdapterError",
    "build_external_tools",
    "build_mcp_server",
    "secret_values",
    "serve_stdio",
]


__getattr__, __dir__ = lazy_exports(__name__, _HOMES, __all__)
