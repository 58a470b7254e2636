"""Progress from a running tool: ``report_progress(fraction, message)``.

A long tool (an indexer, a download, a build) says how far it is; whoever runs the call
listens: the graph's ``ToolsNode`` passes it to its hooks (the CLI's progress line), the
MCP server (``serve-mcp``) sends ``notifications/progress`` to a client that asked for
them, and the call's OpenTelemetry span gets a ``tooldeck.progress`` event::

    from tools.progress import report_progress

    class IndexTool(BaseTool[IndexRequest, IndexReport]):
        def execute_internal(self, request: IndexRequest) -> IndexReport:
            for number, path in enumerate(request.paths, 1):
                index(path)
                report_progress(number / len(request.paths), f"indexed {path}")
            ...

How a tool gets its call's context: the runner of a call (the graph's node, the MCP
server, the CLI) opens it with `listening`, which sets a context variable for the
duration of that one call. Context variables follow the call wherever it runs: the
registry's worker threads and the shared tool event loop copy the caller's context, so sync
and async tools see their own call's context and never another's; nothing lives in a
module global, and nothing appears in the tool's schema. `current_call` returns the
context (a detached one, which drops reports, outside a listened call), `report_progress`
is the shortcut.

Cost when nobody listens: the registry's call path does nothing at all; a tool's
`report_progress` reads one context variable (and, when OpenTelemetry is loaded, asks for
the current span).
"""

from __future__ import annotations

import contextlib
import logging
import math
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass

__all__ = [
    "ProgressListener",
    "ToolCallContext",
    "ToolProgress",
    "current_call",
    "listening",
    "report_progress",
]

logger = logging.getLogger(__name__)

#: Longest progress message passed on (longer ones are cut).
MAX_MESSAGE_CHARS = 500
#: Default: at most one report passed on per call in this many seconds (first and last always).
DEFAULT_MIN_INTERVAL = 0.1


@dataclass(frozen=True, slots=True)
class ToolProgress:
    """One progress report of a running call.

    Attributes:
        tool: The tool's name as called.
        call_id: The model's ``tool_call`` id (or the MCP request's), when known.
        fraction: How far the call is, from 0.0 to 1.0; None when the tool cannot say.
        message: What it is doing, in a few words (at most `MAX_MESSAGE_CHARS`).
    """

    tool: str
    call_id: str | None
    fraction: float | None
    message: str | None


#: Receives each report passed on; called on the tool's thread (a worker thread, or the
#: tool event loop's): keep it short, thread-safe, and never raising.
ProgressListener = Callable[[ToolProgress], None]


class ToolCallContext:
    """The context of one running tool call, as the tool sees it.

    Args:
        tool: The tool's name as called.
        call_id: The call's id, when the caller has one.
        listener: Receives the reports (None: a detached context; reports go to the span only).
        min_interval: Reports closer together than this (seconds) are dropped, except the
            first, the last (``fraction >= 1``) and any whose message changed.
        clock: Monotonic seconds (injectable for tests).
    """

    __slots__ = ("_clock", "_last_at", "_last_message", "_listener", "_lock", "_min_interval", "call_id", "tool")

    def __init__(
        self,
        tool: str,
        call_id: str | None = None,
        *,
        listener: ProgressListener | None = None,
        min_interval: float = DEFAULT_MIN_INTERVAL,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.tool = tool
        self.call_id = call_id
        self._listener = listener
        self._min_interval = min_interval
        self._clock = clock
        self._lock = threading.Lock()
        self._last_at: float | None = None
        self._last_message: str | None = None

    def report_progress(self, fraction: float | None = None, message: str | None = None) -> None:
        """Say how far the call is; never raises, costs next to nothing when nobody listens.

        Args:
            fraction: 0.0 to 1.0 (values outside are clamped; NaN or None: unknown).
            message: A few words on what it is doing now.
        """
        report = ToolProgress(self.tool, self.call_id, _fraction(fraction), _message(message))
        if "opentelemetry.trace" in sys.modules:
            _span_event(report)
        listener = self._listener
        if listener is None or not self._due(report):
            return
        try:
            listener(report)
        except Exception:  # a broken listener must not break the tool's call
            logger.warning("progress listener failed for tool %r", self.tool, exc_info=True)

    def _due(self, report: ToolProgress) -> bool:
        now = self._clock()
        with self._lock:
            last = self._last_at
            final = report.fraction is not None and report.fraction >= 1.0
            same = report.message == self._last_message
            if last is not None and not final and same and now - last < self._min_interval:
                return False
            self._last_at, self._last_message = now, report.message
        return True


_DETACHED = ToolCallContext("")
_current: ContextVar[ToolCallContext] = ContextVar("tooldeck_tool_call", default=_DETACHED)


def current_call() -> ToolCallContext:
    """The context of the tool call running here (a detached one outside a listened call,
    whose reports reach only the current span)."""
    return _current.get()


def report_progress(fraction: float | None = None, message: str | None = None) -> None:
    """``current_call().report_progress(fraction, message)``: see `ToolCallContext.report_progress`."""
    _current.get().report_progress(fraction, message)


@contextlib.contextmanager
def listening(
    listener: ProgressListener,
    *,
    tool: str,
    call_id: str | None = None,
    min_interval: float = DEFAULT_MIN_INTERVAL,
    clock: Callable[[], float] = time.monotonic,
) -> Iterator[ToolCallContext]:
    """Pass the progress reports of the tool call made inside the block to ``listener``.

    Open it around exactly one call, in the thread or task that makes it (the call's worker
    thread or tool-loop task inherits it). Nested blocks: the innermost wins.
    """
    context = ToolCallContext(tool, call_id, listener=listener, min_interval=min_interval, clock=clock)
    token = _current.set(context)
    try:
        yield context
    finally:
        _current.reset(token)


def _fraction(value: float | None) -> float | None:
    if value is None or isinstance(value, bool):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    if math.isnan(number):
        return None
    return min(max(number, 0.0), 1.0)


def _message(value: str | None) -> str | None:
    if value is None:
        return None
    text = " ".join(str(value).split())
    return text[:MAX_MESSAGE_CHARS] or None


def _span_event(report: ToolProgress) -> None:
    from opentelemetry import trace

    span = trace.get_current_span()
    if not span.is_recording():
        return
    attributes: dict[str, str | float] = {}
    if report.fraction is not None:
        attributes["tooldeck.progress.fraction"] = report.fraction
    if report.message is not None:
        attributes["tooldeck.progress.message"] = report.message
    span.add_event("tooldeck.progress", attributes)
