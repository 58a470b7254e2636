"""A small pool of daemon worker threads for sync tools, which survives stuck calls.

`concurrent.futures.ThreadPoolExecutor` joins its workers at interpreter exit, so one tool
that hangs past its timeout would hang the whole process on exit. These workers are daemon
threads. A call the node gives up on (its deadline passed while it ran) is *abandoned*:
its thread no longer counts as a worker and leaves when the call finally returns, and a
new thread takes its place, so later calls do not queue behind it. Replacements are
capped (``max_abandoned``): when every worker is stuck and the cap is reached, `submit`
raises `PoolExhausted` at once instead of queueing work nobody will run.

One hung tool cannot use up the replacements: abandoned threads count against their own
tool (the ``label`` of the call), which may leave at most ``max_abandoned_per_label`` of
them stuck (half of ``max_abandoned`` by default); past that, that tool's calls are refused
at once and every other tool keeps its workers.
"""

from __future__ import annotations

import collections
import contextvars
import functools
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, TypeVar

T = TypeVar("T")


class PoolExhausted(RuntimeError):
    """No worker may run the call: every one is stuck in an abandoned call, or (``label``
    set) that tool already left its share of threads stuck.

    Attributes:
        abandoned: The stuck threads that decided it (the pool's, or the tool's).
        label: The tool whose share is used up; None when the whole pool is.
    """

    def __init__(self, abandoned: int, label: str | None = None) -> None:
        if label is None:
            message = f"all {abandoned} tool worker threads are stuck in calls that timed out"
        else:
            message = f"{abandoned} calls of the tool {label!r} timed out and are still running"
        super().__init__(message)
        self.abandoned = abandoned
        self.label = label


class _Worker:
    __slots__ = ("abandoned", "label")

    def __init__(self) -> None:
        self.abandoned = False
        self.label: str | None = None


class DaemonPool:
    """At most ``max_workers`` working daemon threads, started on demand, fed from one queue.

    Args:
        max_workers: Most threads running calls at once (abandoned ones not counted).
        max_abandoned: Most threads left behind in abandoned calls; while that many are
            stuck, no more replacements are started.
        max_abandoned_per_label: Most threads one label (one tool) may leave stuck; its
            calls are refused while it has that many (default: half of ``max_abandoned``,
            at least 1).
        name: Thread name prefix.
    """

    def __init__(
        self,
        max_workers: int,
        *,
        max_abandoned: int | None = None,
        max_abandoned_per_label: int | None = None,
        name: str = "tooldeck-tool",
    ) -> None:
        if max_workers < 1:
            raise ValueError("max_workers must be >= 1")
        stuck = max_workers if max_abandoned is None else max(0, max_abandoned)
        self._max_workers = max_workers
        self._max_total = max_workers + stuck
        self._max_per_label = max(1, stuck // 2) if max_abandoned_per_label is None else max_abandoned_per_label
        self._stuck_by_label: dict[str, int] = {}
        self._name = name
        self._queue: collections.deque[tuple[Future[Any], Callable[[], Any], str | None]] = collections.deque()
        self._cond = threading.Condition(threading.Lock())
        self._idle = 0  # live workers waiting for work
        self._live = 0  # threads that count as workers
        self._abandoned = 0  # threads still running an abandoned call
        self._running: dict[Future[Any], _Worker] = {}
        self._started = 0
        self._closed = False

    def _capacity(self) -> int:
        return min(self._max_workers, self._max_total - self._abandoned)

    def submit(self, fn: Callable[[], T], *, label: str | None = None) -> Future[T]:
        """Schedule ``fn()`` on a worker; the future is cancellable until a worker takes it.

        Args:
            fn: The call.
            label: The tool it calls: its abandoned threads count against that label.

        Raises:
            PoolExhausted: Every worker is stuck in an abandoned call and the cap on
                replacements is reached (nothing would ever run this call), or ``label``
                has left its share of threads stuck.
            RuntimeError: After `shutdown`.
        """
        future: Future[T] = Future()
        with self._cond:
            if self._closed:
                raise RuntimeError("the tool worker pool is shut down")
            if self._capacity() <= 0:
                raise PoolExhausted(self._abandoned)
            stuck = self._stuck_by_label.get(label, 0) if label is not None else 0
            if stuck >= self._max_per_label:
                raise PoolExhausted(stuck, label)
            # The caller's context variables (the agent's trace span) go with the call.
            self._queue.append((future, functools.partial(contextvars.copy_context().run, fn), label))
            self._wake_or_start()
        return future

    def abandon(self, future: Future[Any]) -> None:
        """Give up on the call behind ``future``.

        A queued call is cancelled; a running one keeps its thread, which stops counting
        as a worker (a replacement may start) and exits when the call returns.
        """
        if future.cancel():
            return
        with self._cond:
            worker = self._running.get(future)
            if worker is None or worker.abandoned:
                return  # finished meanwhile, or already abandoned
            worker.abandoned = True
            self._live -= 1
            self._abandoned += 1
            if worker.label is not None:
                self._stuck_by_label[worker.label] = self._stuck_by_label.get(worker.label, 0) + 1
            if self._queue:
                self._wake_or_start()

    def _wake_or_start(self) -> None:
        """Called with the lock held and work queued: wake an idle worker or start one."""
        if len(self._queue) <= self._idle:
            self._cond.notify()
        elif self._live < self._capacity():
            self._live += 1
            self._started += 1
            thread = threading.Thread(target=self._work, name=f"{self._name}-{self._started}", daemon=True)
            thread.start()

    def _work(self) -> None:
        me = _Worker()
        while True:
            with self._cond:
                while not self._queue and not self._closed:
                    self._idle += 1
                    self._cond.wait()
                    self._idle -= 1
                if not self._queue:  # closed and drained
                    self._live -= 1
                    return
                future, fn, me.label = self._queue.popleft()
                if not future.set_running_or_notify_cancel():
                    continue
                self._running[future] = me
            try:
                result = fn()
            except BaseException as exc:
                future.set_exception(exc)
            else:
                future.set_result(result)
            with self._cond:
                del self._running[future]
                if me.abandoned:  # a replacement took this thread's place
                    self._abandoned -= 1
                    self._unstick(me.label)
                    return
            del future, fn

    def _unstick(self, label: str | None) -> None:
        """An abandoned call of ``label`` returned at last (called with the lock held)."""
        if label is None:
            return
        left = self._stuck_by_label.get(label, 1) - 1
        if left > 0:
            self._stuck_by_label[label] = left
        else:
            self._stuck_by_label.pop(label, None)

    def stuck_by_label(self) -> dict[str, int]:
        """Threads still running abandoned calls, by label."""
        with self._cond:
            return dict(self._stuck_by_label)

    def shutdown(self) -> None:
        """Stop taking work; idle workers exit, busy ones exit after their current call."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()
