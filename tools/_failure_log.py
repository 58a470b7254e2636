"""The one WARNING line every failed tool call logs: tool, request id, error type.

Never arguments, results, error messages or secrets: the message may echo what the model
sent, and the request id is enough to find the full story (the traceback of an unexpected
exception is logged by the tool under the same id).

The line costs nothing when no handler would show it: the library's loggers carry only a
``NullHandler`` until the application configures logging, and then no record is made.
"""

from __future__ import annotations

import logging

from tools.result import ToolResult

#: The line's format; ``%r`` for the tool name because an unknown tool's name is whatever
#: the model sent (quoted and escaped, it cannot forge log lines).
FAILURE_FORMAT = "tool call failed: tool=%r request_id=%s error_type=%s"


def log_tool_failure(logger: logging.Logger, result: ToolResult) -> None:
    """Log ``result`` as one WARNING line on ``logger`` if it is an error envelope.

    Cheap for successes (one attribute check) and for failures nobody would see (no
    handler but ``NullHandler`` on the way to the root); never raises for a malformed envelope.
    """
    error = result.error
    if error is None or not shown(logger, logging.WARNING):
        return
    metadata = result.metadata
    request_id = metadata.get("request_id")
    logger.warning(
        FAILURE_FORMAT,
        str(metadata.get("tool_name", "?"))[:64],
        request_id if type(request_id) is str and request_id.isprintable() else "?",
        error.type,
    )


def shown(logger: logging.Logger, level: int) -> bool:
    """Whether a record of ``level`` on ``logger`` would reach a handler that emits it.

    Mirrors ``Logger.callHandlers``: the handlers of the logger and of its ancestors while
    they propagate; when there is none at all, logging's last resort (stderr, WARNING and
    up) would print it. A ``NullHandler`` emits nothing. (A handler's filters are not
    consulted: a filtered handler counts as one that would show the record.)
    """
    if not logger.isEnabledFor(level):
        return False
    found = False
    current: logging.Logger | None = logger
    while current is not None:
        for handler in current.handlers:
            found = True
            if level >= handler.level and type(handler) is not logging.NullHandler:
                return True
        current = current.parent if current.propagate else None
    last_resort = logging.lastResort
    return not found and last_resort is not None and level >= last_resort.level
