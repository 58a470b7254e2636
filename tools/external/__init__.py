"""Tools that run elsewhere: HTTP APIs, CLI commands, MCP servers and subprocess binaries.

Every external tool becomes an ordinary :class:`~tools.base.BaseTool`, so it registers in a
:class:`~tools.registry.LocalToolRegistry` and goes through the same envelope, breaker, retry
and metrics as any other tool. :func:`tools.external.binary.serve` (not re-exported here) turns
a tool into a subprocess binary.
"""

from tools.external._process import ProcessOutcome, ProcessRunner
from tools.external.adapter import ToolAdapter, ToolAdapterRegistry, UnknownAdapterError
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
from tools.external.external_tool import ExternalTool, build_external_tools
from tools.external.http_adapter import HTTPAdapter

__all__ = [
    "ActionSpec",
    "AdoptionMetadata",
    "AuthConfig",
    "BinaryStatus",
    "BinaryTool",
    "CLIAction",
    "CLIAdapter",
    "CLIConfig",
    "ExternalTool",
    "HTTPAdapter",
    "HTTPConfig",
    "HTTPEndpoint",
    "MCPConfig",
    "ProcessOutcome",
    "ProcessRunner",
    "ScanChanges",
    "ToolAdapter",
    "ToolAdapterRegistry",
    "ToolConfig",
    "ToolExecutorService",
    "UnknownAdapterError",
    "build_external_tools",
]
