"""tooldeck's tool layer: write a tool once, validate, run, meter and export it everywhere.

The public names below are the API; modules starting with ``_`` are private.
"""

import logging as _logging

from tools._bound import BoundTool
from tools._names import is_tool_name
from tools.base import BaseTool
from tools.composite import ActionCall, ActionStrategy, CompositeTool
from tools.errors import (
    CircuitOpenError,
    DataFileError,
    DuplicateToolError,
    ErrorType,
    InvalidArgumentsError,
    InvalidToolNameError,
    PermissionDeniedError,
    ToolCancelledError,
    TooldeckError,
    ToolDefinitionError,
    ToolError,
    ToolSaturatedError,
    ToolTimeoutError,
    UnknownActionError,
    UnknownToolError,
    UnsupportedSchemaError,
    UpstreamError,
)
from tools.function_tool import FunctionTool
from tools.manual import RiskLevel, TokenCost, ToolCategory, ToolManual, ToolSource
from tools.metrics import InMemoryMetrics, MetricsSink, ToolStats
from tools.progress import ToolCallContext, ToolProgress, current_call, report_progress
from tools.registry import LocalToolRegistry
from tools.resilience import CircuitBreaker, RetryPolicy, parse_retry_after
from tools.result import ErrorInfo, ToolResult

__all__ = [
    "ActionCall",
    "ActionStrategy",
    "BaseTool",
    "BoundTool",
    "CircuitBreaker",
    "CircuitOpenError",
    "CompositeTool",
    "DataFileError",
    "DuplicateToolError",
    "ErrorInfo",
    "ErrorType",
    "FunctionTool",
    "InMemoryMetrics",
    "InvalidArgumentsError",
    "InvalidToolNameError",
    "LocalToolRegistry",
    "MetricsSink",
    "PermissionDeniedError",
    "RetryPolicy",
    "RiskLevel",
    "TokenCost",
    "ToolCallContext",
    "ToolCancelledError",
    "ToolCategory",
    "ToolDefinitionError",
    "ToolError",
    "ToolManual",
    "ToolProgress",
    "ToolResult",
    "ToolSaturatedError",
    "ToolSource",
    "ToolStats",
    "ToolTimeoutError",
    "TooldeckError",
    "UnknownActionError",
    "UnknownToolError",
    "UnsupportedSchemaError",
    "UpstreamError",
    "current_call",
    "is_tool_name",
    "parse_retry_after",
    "report_progress",
]

# A library never prints on its own: until the application configures logging, records of
# the "tools" loggers go nowhere (not to logging's last-resort stderr handler).
_logging.getLogger(__name__).addHandler(_logging.NullHandler())
