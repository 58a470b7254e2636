"""`CallWatch`: one tool call of a `ToolsNode` as its hooks see it (start, progress, end).

The end is told exactly once, by whoever has the answer first: the thread that ran the
call, or the node when it answers for a call that timed out, was cancelled or was decided
without running (a denied approval). A thread abandoned after a timeout that finishes later
tells nothing more.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator, Sequence

from orchestrator.graph._calls import PendingCall
from orchestrator.graph._content import trace_arguments
from orchestrator.graph.hooks import RunHooks, ToolFinished, ToolStarted, safely
from tools.progress import ToolProgress, listening
from tools.result import ToolResult


def watches(hooks: RunHooks | None, calls: Sequence[PendingCall]) -> dict[int, CallWatch]:
    """A watch per call position (empty without hooks: the node's paths then cost nothing)."""
    if hooks is None:
        return {}
    return {call.index: CallWatch(hooks, call) for call in calls}


class CallWatch:
    """Tells ``hooks`` about one call.

    Args:
        hooks: Who is told.
        call: The call.
    """

    __slots__ = ("_call", "_ended", "_hooks", "_lock", "_started")

    def __init__(self, hooks: RunHooks, call: PendingCall) -> None:
        self._hooks = hooks
        self._call = call
        self._lock = threading.Lock()
        self._started: float | None = None
        self._ended = False

    def start(self) -> None:
        """Tell that the call starts (once)."""
        with self._lock:
            if self._started is not None:
                return
            self._started = time.perf_counter()
        call = self._call
        safely(self._hooks.on_tool_start, ToolStarted(call.id, call.name, trace_arguments(call.arguments)))

    @contextlib.contextmanager
    def running(self) -> Iterator[None]:
        """Around the call, on its thread: started, and its progress reports passed on."""
        self.start()
        with listening(self._progress, tool=self._call.name, call_id=self._call.id):
            yield

    def _progress(self, report: ToolProgress) -> None:
        if not self._ended:
            safely(self._hooks.on_tool_progress, report)

    def ended(self, result: ToolResult) -> ToolResult:
        """Tell the call's answer (the first time only); returns ``result``."""
        self.start()  # a call answered without running (denied, no worker free) starts and ends here
        with self._lock:
            if self._ended:
                return result
            self._ended = True
            started = self._started if self._started is not None else time.perf_counter()
        error = result.error
        event = ToolFinished(
            call_id=self._call.id,
            name=self._call.name,
            status=result.status,
            error_type=error.type if error is not None else None,
            duration_ms=round((time.perf_counter() - started) * 1000, 3),
        )
        safely(self._hooks.on_tool_end, event)
        return result
