"""Turning what the MCP SDK raises into tooldeck's :class:`~tools.errors.ToolError` tree."""

from __future__ import annotations

import logging

import httpx2
import mcp_types
from mcp import MCPError
from pydantic import ValidationError

from tools.errors import (
    InvalidArgumentsError,
    ToolError,
    ToolTimeoutError,
    UpstreamError,
)
from tools.external.mcp._connect import clip

logger = logging.getLogger(__name__)


def leaf_exception(exc: BaseException) -> BaseException:
    """The first non-group exception inside ``exc`` (anyio task groups wrap failures)."""
    # Duck-typed so Python 3.10 (exceptiongroup backport) and 3.11+ behave alike.
    while True:
        inner = getattr(exc, "exceptions", None)
        if not (isinstance(inner, tuple) and inner and isinstance(inner[0], BaseException)):
            return exc
        exc = inner[0]


def translate(exc: BaseException, *, label: str, timeout: float) -> ToolError:  # noqa: PLR0911
    """Map an exception from a session operation to the :class:`ToolError` the model sees.

    The server's own error text is passed through (cut to a bounded length); local details
    such as tracebacks, URLs or environment never are.

    Args:
        exc: What the SDK or the transport raised.
        label: The server's short name, for the message.
        timeout: The time limit that applied, for timeout messages.
    """
    exc = leaf_exception(exc)
    if isinstance(exc, ToolError):
        return exc
    if isinstance(exc, TimeoutError):
        return ToolTimeoutError(
            f"The MCP server {label!r} did not answer within {timeout:g} seconds; "
            "try again later or with a smaller request."
        )
    if isinstance(exc, MCPError):
        return _from_mcp_error(exc, label=label, timeout=timeout)
    if isinstance(exc, OSError):
        reason = exc.strerror or type(exc).__name__
        return UpstreamError(
            f"The MCP server {label!r} could not be started or reached ({reason}).",
            retryable=False,
        )
    if isinstance(exc, httpx2.HTTPError):
        return UpstreamError(f"The MCP server {label!r} could not be reached ({type(exc).__name__}).")
    if isinstance(exc, ValidationError):
        return UpstreamError(f"The MCP server {label!r} sent a reply that is not valid MCP.", retryable=False)
    if isinstance(exc, RuntimeError):
        # The SDK raises RuntimeError for results that break the tool's declared output schema
        # and for protocol states it cannot drive; its text names the tool, not local secrets.
        return UpstreamError(f"The MCP server {label!r} failed: {clip(str(exc), 1_000)}", retryable=False)
    logger.error("Unexpected error from MCP server %s", label, exc_info=exc)
    return UpstreamError(f"The MCP server {label!r} failed unexpectedly.", retryable=False)


def _from_mcp_error(exc: MCPError, *, label: str, timeout: float) -> ToolError:
    code = exc.error.code
    message = clip(exc.error.message or "")
    if code == mcp_types.INVALID_PARAMS:
        return InvalidArgumentsError(message or "The MCP server rejected the arguments.")
    if code == mcp_types.REQUEST_TIMEOUT:
        return ToolTimeoutError(f"The MCP server {label!r} did not answer within {timeout:g} seconds.")
    if code == mcp_types.CONNECTION_CLOSED:
        return UpstreamError(
            f"The MCP server {label!r} closed the connection (it exited or crashed); the call may be retried."
        )
    if code == mcp_types.METHOD_NOT_FOUND:
        return UpstreamError(f"The MCP server {label!r} does not support: {message}", retryable=False)
    return UpstreamError(
        f"The MCP server {label!r} reported an error: {message}",
        retryable=code == mcp_types.INTERNAL_ERROR,
    )
