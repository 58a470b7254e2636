"""``ToolExecutor``: the bounded worker threads a registry runs sync tools on.

Sync tools need a worker thread in two cases: a call with a timeout (the caller stops
waiting; the thread cannot be killed, so it is *abandoned* and runs on), and a call from
async code (the event loop must not block). Every call of one registry shares one bounded
pool, so hung calls can never pile up threads without limit or starve the host
application's own ``asyncio.to_thread`` (asyncio's default executor is never used). When
every worker is busy or abandoned, a call is refused at once with an error that says so:
never a hang.

One tool cannot take the whole pool: each tool (by name) holds at most ``max_per_tool``
workers at once (half the pool by default), its abandoned calls included. A tool that hangs
and times out again and again fills its own share, then its calls are refused, while every
other tool keeps the rest of the pool.
"""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeVar

from tools._aio import DeadlineExceeded
from tools.errors import ToolSaturatedError

if TYPE_CHECKING:  # imported on first use: ``import tools`` stays light
    import concurrent.futures

T = TypeVar("T")


@dataclass(frozen=True)
class ExecutorStats:
    """A snapshot of a :class:`ToolExecutor`.

    Attributes:
        max_workers: The bound on worker threads.
        busy: Workers running a call right now (abandoned ones included).
        abandoned: Workers still running a call whose caller gave up after a timeout.
        abandoned_total: Calls abandoned since the executor was created.
        saturated_total: Calls refused because every worker was busy, or the tool held its
            share of them.
        max_per_tool: The most workers one tool may hold at once.
        by_tool: Workers held right now, by tool (abandoned ones included).
    """

    max_workers: int
    busy: int
    abandoned: int
    abandoned_total: int
    saturated_total: int
    max_per_tool: int = 0
    by_tool: dict[str, int] = field(default_factory=dict)


class ToolExecutor:
    """A bounded pool of worker threads with abandonment accounting.

    Args:
        max_workers: Worker threads at most (busy plus abandoned).
        max_per_tool: Workers one tool (one ``label``) may hold at once, abandoned ones
            included (default: half of ``max_workers``, at least 1).
        name: Prefix of the worker threads' names.

    Raises:
        ValueError: a bound is below 1, or ``max_per_tool`` exceeds ``max_workers``.
    """

    def __init__(
        self, max_workers: int = 32, *, max_per_tool: int | None = None, name: str = "tooldeck-worker"
    ) -> None:
        if max_workers < 1:
            raise ValueError("max_workers must be at least 1")
        per_tool = max(1, max_workers // 2) if max_per_tool is None else max_per_tool
        if not 1 <= per_tool <= max_workers:
            raise ValueError(f"max_workers_per_tool must be between 1 and max_workers ({max_workers}), got {per_tool}")
        self.max_workers = max_workers
        self.max_per_tool = per_tool
        self._name = name
        self._held: dict[str, int] = {}  # workers held by each label (abandoned included)
        self._abandoned_by: dict[str, int] = {}
        self._pool: concurrent.futures.ThreadPoolExecutor | None = None
        self._lock = threading.Lock()
        self._busy = 0
        self._abandoned = 0
        self._abandoned_total = 0
        self._saturated_total = 0

    def stats(self) -> ExecutorStats:
        """Current figures."""
        with self._lock:
            return ExecutorStats(
                self.max_workers,
                self._busy,
                self._abandoned,
                self._abandoned_total,
                self._saturated_total,
                self.max_per_tool,
                dict(self._held),
            )

    def _acquire(self, label: str) -> concurrent.futures.ThreadPoolExecutor:
        with self._lock:
            if self._busy >= self.max_workers:
                self._saturated_total += 1
                abandoned = self._abandoned
                raise ToolSaturatedError(
                    f"The tool '{label}' cannot run right now: all {self.max_workers} worker threads are busy"
                    + (f" ({abandoned} still running calls that timed out)" if abandoned else "")
                    + ". Try again in a moment, or continue without it.",
                    retryable=True,
                    details={"max_workers": self.max_workers, "abandoned": abandoned},
                )
            held = self._held.get(label, 0)
            if held >= self.max_per_tool:
                self._saturated_total += 1
                raise self._tool_full(label, held)
            self._busy += 1
            self._held[label] = held + 1
            if self._pool is None:
                import concurrent.futures

                self._pool = concurrent.futures.ThreadPoolExecutor(self.max_workers, thread_name_prefix=self._name)
            return self._pool

    def _tool_full(self, label: str, held: int) -> ToolSaturatedError:
        stuck = self._abandoned_by.get(label, 0)
        return ToolSaturatedError(
            f"The tool '{label}' cannot run right now: it already has {held} "
            f"{'call' if held == 1 else 'calls'} running, the most one tool may have at once"
            + (f" ({stuck} of them timed out and are still running)" if stuck else "")
            + ". Try again later, or continue without it.",
            retryable=True,
            details={"max_per_tool": self.max_per_tool, "running": held, "abandoned": stuck},
        )

    def _release(self, label: str, state: list[bool]) -> None:
        """A call's worker is free again (called with the lock held, once per call)."""
        state[1] = True
        self._busy -= 1
        held = self._held.get(label, 1) - 1
        if held > 0:
            self._held[label] = held
        else:
            self._held.pop(label, None)
        if state[0]:
            self._abandoned -= 1
            stuck = self._abandoned_by.get(label, 1) - 1
            if stuck > 0:
                self._abandoned_by[label] = stuck
            else:
                self._abandoned_by.pop(label, None)

    def _wrap(self, fn: Callable[[], T], state: list[bool], label: str) -> Callable[[], T]:
        def work() -> T:
            try:
                return fn()
            finally:
                with self._lock:
                    self._release(label, state)

        return work

    def _submit(self, fn: Callable[[], T], state: list[bool], label: str) -> concurrent.futures.Future[T]:
        # The caller's context variables (the current span, above all) go with the call.
        context = contextvars.copy_context()
        future = self._acquire(label).submit(context.run, self._wrap(fn, state, label))
        future.add_done_callback(lambda f: self._never_ran(state, label) if f.cancelled() else None)
        return future

    def _never_ran(self, state: list[bool], label: str) -> None:
        """A queued call was cancelled before a worker picked it up: free its slot."""
        with self._lock:
            if not state[1]:
                self._release(label, state)

    def _abandon(self, state: list[bool], label: str) -> None:
        with self._lock:
            if not state[1]:  # still running: count it, against its tool, until it ends
                state[0] = True
                self._abandoned += 1
                self._abandoned_total += 1
                self._abandoned_by[label] = self._abandoned_by.get(label, 0) + 1

    def run(self, fn: Callable[[], T], *, timeout: float, label: str) -> T:
        """Run ``fn`` in a worker and wait at most ``timeout`` seconds.

        Raises:
            ToolSaturatedError: no worker is free (raised at once).
            DeadlineExceeded: ``timeout`` passed; the worker is abandoned and keeps running.
        """
        import concurrent.futures

        state = [False, False]  # [abandoned, finished]
        future = self._submit(fn, state, label)
        try:
            return future.result(timeout)
        except concurrent.futures.TimeoutError:
            if future.done():  # fn's own TimeoutError
                raise
            self._abandon(state, label)
            raise DeadlineExceeded(f"did not finish within {timeout:g} s") from None

    async def arun(self, fn: Callable[[], T], *, timeout: float | None, label: str) -> T:
        """Await ``fn`` running in a worker (``timeout`` None: wait until it ends).

        Cancelling the awaiting task abandons the worker (it cannot be stopped).

        Raises:
            ToolSaturatedError: no worker is free (raised at once).
            DeadlineExceeded: ``timeout`` passed; the worker is abandoned and keeps running.
        """
        import asyncio

        state = [False, False]
        future = asyncio.wrap_future(self._submit(fn, state, label))
        try:
            done, _ = await asyncio.wait((future,), timeout=timeout)
        except asyncio.CancelledError:
            self._abandon(state, label)
            raise
        if not done:
            self._abandon(state, label)
            raise DeadlineExceeded(f"did not finish within {timeout:g} s")
        return future.result()

    def shutdown(self) -> None:
        """Stop accepting work; running (and abandoned) calls finish in the background."""
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)
