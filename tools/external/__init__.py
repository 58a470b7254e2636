"""Tools that run elsewhere: HTTP APIs, CLI commands, MCP servers and subprocess binaries.

Every external tool becomes an ordinary :class:`~tools.base.BaseTool`, so it registers in a
:class:`~tools.registry.LocalToolRegistry` and goes through the same envelope, breaker, retry
and metrics as any other tool.
"""

from tools.external.adapter import ToolAdapter, ToolAdapterRegistry, UnknownAdapterError
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

__all__ = [
    "ActionSpec",
    "AdoptionMetadata",
    "AuthConfig",
    "CLIAction",
    "CLIConfig",
    "HTTPConfig",
    "HTTPEndpoint",
    "MCPConfig",
    "ToolAdapter",
    "ToolAdapterRegistry",
    "ToolConfig",
    "UnknownAdapterError",
]
