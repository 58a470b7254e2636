"""The one WARNING line every failed tool call logs: tool, request id, error type.

Never arguments, results, error messages or secrets: the message may echo what the model
sent, and the request id is enough to find the full story (the traceback of an unexpected
exception is logged by the tool under the same id).
"""

from __future__ import annotations

import logging

from tools.result import ToolResult

#: The line's format; ``%r`` for the tool name because an unknown tool's name is whatever
#: the model sent (quoted and escaped, it cannot forge log lines).
FAILURE_FORMAT = "tool call failed: tool=%r request_id=%s error_type=%s"


def log_tool_failure(logger: logging.Logger, result: ToolResult) -> None:
    """Log ``result`` as one WARNING line on ``logger`` if it is an error envelope.

    Cheap for successes (one attribute check); never raises for a malformed envelope.
    """
    error = result.error
    if error is None or not logger.isEnabledFor(logging.WARNING):
        return
    metadata = result.metadata
    request_id = metadata.get("request_id")
    logger.warning(
        FAILURE_FORMAT,
        str(metadata.get("tool_name", "?"))[:64],
        request_id if type(request_id) is str and request_id.isprintable() else "?",
        error.type,
    )
