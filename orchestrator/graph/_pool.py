"""A small pool of daemon worker threads for sync tools, which survives stuck calls.

`concurrent.futures.ThreadPoolExecutor` joins its workers at interpreter exit, so one tool
that hangs past its timeout would hang the whole process on exit. These workers are daemon
threads. A call the node gives up on (its deadline passed while it ran) is *abandoned*:
its thread no longer counts as a worker and leaves when the call finally returns, and a
new thread takes its place, so later calls do not queue behind it. Replacements are
capped (``max_abandoned``): when every worker is stuck and the cap is reached, `submit`
raises `PoolExhausted` at once instead of queueing work nobody will run.
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
    """Every worker is stuck in an abandoned call and no replacement may be started."""

    def __init__(self, abandoned: int) -> None:
        super().__init__(f"all {abandoned} tool worker threads are stuck in calls that timed out")
        self.abandoned = abandoned


class _Worker:
    __slots__ = ("abandoned",)

    def __init__(self) -> None:
        self.abandoned = False


class DaemonPool:
    """At most ``max_workers`` working daemon threads, started on demand, fed from one queue.

    Args:
        max_workers: Most threads running calls at once (abandoned ones not counted).
        max_abandoned: Most threads left behind in abandoned calls; while that many are
            stuck, no more replacements are started.
        name: Thread name prefix.
    """

    def __init__(self, max_workers: int, *, max_abandoned: int | None = None, name: str = "tooldeck-tool") -> None:
        if max_workers < 1:
            raise ValueError("max_workers must be >= 1")
        self._max_workers = max_workers
        self._max_total = max_workers + (max_workers if max_abandoned is None else max(0, max_abandoned))
        self._name = name
        self._queue: collections.deque[tuple[Future[Any], Callable[[], Any]]] = collections.deque()
        self._cond = threading.Condition(threading.Lock())
        self._idle = 0  # live workers waiting for work
        self._live = 0  # threads that count as workers
        self._abandoned = 0  # threads still running an abandoned call
        self._running: dict[Future[Any], _Worker] = {}
        self._started = 0
        self._closed = False

    def _capacity(self) -> int:
        return min(self._max_workers, self._max_total - self._abandoned)

    def submit(self, fn: Callable[[], T]) -> Future[T]:
        """Schedule ``fn()`` on a worker; the future is cancellable until a worker takes it.

        Raises:
            PoolExhausted: Every worker is stuck in an abandoned call and the cap on
                replacements is reached (nothing would ever run this call).
            RuntimeError: After `shutdown`.
        """
        future: Future[T] = Future()
        with self._cond:
            if self._closed:
                raise RuntimeError("the tool worker pool is shut down")
            if self._capacity() <= 0:
                raise PoolExhausted(self._abandoned)
            # The caller's context variables (the agent's trace span) go with the call.
            self._queue.append((future, functools.partial(contextvars.copy_context().run, fn)))
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
                future, fn = self._queue.popleft()
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
                    return
            del future, fn

    def shutdown(self) -> None:
        """Stop taking work; idle workers exit, busy ones exit after their current call."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()
