"""Turn an adapter's error :class:`ToolResult` back into the matching :class:`ToolError`.

Adapters answer with envelopes; a :class:`~tools.base.BaseTool` reports failures by raising.
Re-raising the right subclass keeps the error type, message, retryability and details, so the
registry's breaker, retry policy and metrics treat external failures like any other.
"""

from __future__ import annotations

from tools.errors import (
    CircuitOpenError,
    InvalidArgumentsError,
    PermissionDeniedError,
    ToolCancelledError,
    ToolError,
    ToolTimeoutError,
    UnknownActionError,
    UnknownToolError,
    UpstreamError,
)
from tools.result import ToolResult

_BY_TYPE: dict[str, type[ToolError]] = {
    "validation_error": InvalidArgumentsError,
    "unknown_tool": UnknownToolError,
    "unknown_action": UnknownActionError,
    "timeout": ToolTimeoutError,
    "circuit_open": CircuitOpenError,
    "permission_denied": PermissionDeniedError,
    "upstream_error": UpstreamError,
    "execution_error": ToolError,
    "cancelled": ToolCancelledError,
}


def error_from_result(result: ToolResult) -> ToolError:
    """The exception matching an error result (``ToolError`` for an unknown type)."""
    error = result.error
    if error is None:
        return ToolError("the tool failed without a message")
    cls = _BY_TYPE.get(error.type, ToolError)
    return cls(error.message, retryable=error.retryable, details=error.details)


def raise_for_result(result: ToolResult) -> None:
    """Raise :func:`error_from_result` when ``result`` is an error; do nothing otherwise."""
    if not result.ok:
        raise error_from_result(result)
