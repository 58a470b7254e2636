"""Running a group of tool calls on worker threads from synchronous code, with deadlines.

The sync entry of `ToolsNode` uses this instead of an event loop: no loop to create per
invocation, and one queue hand-off per call.
"""

from __future__ import annotations

import concurrent.futures
import time
from collections.abc import Callable, Sequence
from typing import TypeVar

from orchestrator.graph._pool import DaemonPool, PoolExhausted

T = TypeVar("T")


def run_in_pool(
    pool: DaemonPool,
    jobs: Sequence[Callable[[], T]],
    *,
    timeout: float | None,
    on_timeout: Callable[[int], T],
    on_error: Callable[[int, BaseException], T],
    labels: Sequence[str | None] | None = None,
) -> list[tuple[T, float]]:
    """Run ``jobs`` on ``pool`` and return ``(result, duration_ms)`` in job order.

    Each job has ``timeout`` seconds from the moment it is handed to the pool, time spent
    queued included; one not finished by then is answered by ``on_timeout(index)`` and
    abandoned (a queued job is cancelled; a running one finishes in the background and
    its thread is replaced). A job that raises, or that the pool cannot take
    (`PoolExhausted`), is answered by ``on_error(index, exception)``. Never raises for a
    job. ``labels`` names the tool of each job (its abandoned threads count against it).
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

    submitted = time.perf_counter()
    futures: list[concurrent.futures.Future[T] | PoolExhausted] = []
    for index, job in enumerate(jobs):
        try:
            futures.append(pool.submit(timed(index, job), label=labels[index] if labels else None))
        except PoolExhausted as exc:
            futures.append(exc)
    deadline = None if timeout is None else submitted + timeout
    out: list[tuple[T, float]] = []
    for index, future in enumerate(futures):
        if isinstance(future, PoolExhausted):
            out.append((on_error(index, future), 0.0))
            continue
        if not _settle(future, deadline):
            pool.abandon(future)
            started = starts[index] or submitted
            out.append((on_timeout(index), (time.perf_counter() - started) * 1000))
            continue
        error = future.exception()
        result = on_error(index, error) if error is not None else future.result()
        start, end = starts[index], ends[index]
        out.append((result, (end - start) * 1000 if start is not None and end is not None else 0.0))
    return out


def _settle(future: concurrent.futures.Future[T], deadline: float | None) -> bool:
    """Wait for ``future`` until ``deadline``; False when it is not done by then."""
    if deadline is None:
        future.exception()  # blocks until done; cheaper than concurrent.futures.wait
        return True
    remaining = deadline - time.perf_counter()
    if remaining > 0:
        try:
            future.exception(timeout=remaining)
        except concurrent.futures.TimeoutError:
            pass
        except concurrent.futures.CancelledError:
            return False
    return future.done() and not future.cancelled()
