"""Running a group of tool calls on worker threads from synchronous code, with deadlines.

The sync entry of `ToolsNode` uses this instead of an event loop: no loop to create per
invocation, and one queue hand-off per call.
"""

from __future__ import annotations

import concurrent.futures
import time
from collections.abc import Callable, Sequence
from typing import TypeVar

from orchestrator.graph._pool import DaemonPool

T = TypeVar("T")

_POLL_SECONDS = 0.02  # how often a queued call is checked for having started


def run_in_pool(
    pool: DaemonPool,
    jobs: Sequence[Callable[[], T]],
    *,
    timeout: float | None,
    on_timeout: Callable[[int], T],
    on_error: Callable[[int, BaseException], T],
) -> list[tuple[T, float]]:
    """Run ``jobs`` on ``pool`` and return ``(result, duration_ms)`` in job order.

    Each job may run for at most ``timeout`` seconds from the moment a worker starts it
    (time spent queued does not count); one that runs longer is answered by
    ``on_timeout(index)`` and abandoned (its thread finishes in the background). A job
    that raises is answered by ``on_error(index, exception)``. Never raises for a job.
    """
    starts: list[float | None] = [None] * len(jobs)
    ends: list[float | None] = [None] * len(jobs)

    def timed(index: int, job: Callable[[], T]) -> Callable[[], T]:
        def run() -> T:
            starts[index] = time.perf_counter()
            try:
                return job()
            finally:
                ends[index] = time.perf_counter()

        return run

    futures = [pool.submit(timed(i, job)) for i, job in enumerate(jobs)]
    out: list[tuple[T, float]] = []
    for index, future in enumerate(futures):
        if not _settle(future, starts, index, timeout):
            future.cancel()
            started = starts[index] or time.perf_counter()
            out.append((on_timeout(index), (time.perf_counter() - started) * 1000))
            continue
        error = future.exception()
        result = on_error(index, error) if error is not None else future.result()
        start, end = starts[index], ends[index]
        out.append((result, (end - start) * 1000 if start is not None and end is not None else 0.0))
    return out


def _settle(
    future: concurrent.futures.Future[T],
    starts: list[float | None],
    index: int,
    timeout: float | None,
) -> bool:
    """Wait for ``future``; False when it ran past its deadline."""
    if timeout is None:
        future.exception()  # blocks until done; cheaper than concurrent.futures.wait
        return True
    while not future.done():
        start = starts[index]
        remaining = _POLL_SECONDS if start is None else start + timeout - time.perf_counter()
        if remaining <= 0:
            return future.done()
        try:
            future.exception(timeout=remaining)
        except concurrent.futures.TimeoutError:
            continue
    return True
