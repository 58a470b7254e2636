"""A small pool of daemon worker threads for sync tools.

`concurrent.futures.ThreadPoolExecutor` joins its workers at interpreter exit, so one tool
that hangs past its timeout would hang the whole process on exit. These workers are daemon
threads: a timed-out call is abandoned (its result dropped), and the process can still exit.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, TypeVar

T = TypeVar("T")

_Item = tuple["Future[Any]", Callable[[], Any]] | None


class DaemonPool:
    """At most ``max_workers`` daemon threads, started on demand, fed from one queue."""

    def __init__(self, max_workers: int, *, name: str = "tooldeck-tool") -> None:
        if max_workers < 1:
            raise ValueError("max_workers must be >= 1")
        self._max_workers = max_workers
        self._name = name
        self._queue: queue.SimpleQueue[_Item] = queue.SimpleQueue()
        self._idle = threading.Semaphore(0)
        self._lock = threading.Lock()
        self._threads: list[threading.Thread] = []
        self._closed = False

    def submit(self, fn: Callable[[], T]) -> Future[T]:
        """Schedule ``fn()`` on a worker; the future is cancellable until a worker takes it.

        Raises:
            RuntimeError: After `shutdown`.
        """
        future: Future[T] = Future()
        with self._lock:
            if self._closed:
                raise RuntimeError("the tool worker pool is shut down")
            self._queue.put((future, fn))
            if not self._idle.acquire(blocking=False) and len(self._threads) < self._max_workers:
                thread = threading.Thread(target=self._work, name=f"{self._name}-{len(self._threads)}", daemon=True)
                self._threads.append(thread)
                thread.start()
        return future

    def _work(self) -> None:
        while True:
            item = self._queue.get()
            if item is None:
                return
            future, fn = item
            if future.set_running_or_notify_cancel():
                try:
                    result = fn()
                except BaseException as exc:
                    future.set_exception(exc)
                else:
                    future.set_result(result)
            del item, future, fn
            self._idle.release()

    def shutdown(self) -> None:
        """Stop taking work; idle workers exit, busy ones exit after their current call."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            for _ in self._threads:
                self._queue.put(None)
