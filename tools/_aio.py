"""Async tools on one long-lived event loop, whoever calls them.

An async tool often holds loop-bound state: an ``httpx.AsyncClient`` and its connection
pool, an ``asyncio.Lock``, a database pool. Running each call on a fresh loop (what
``asyncio.run`` per call does) breaks that state on the second call ("Event loop is
closed"). So every async tool runs on one event loop that lives in a daemon thread for the
life of the process: sync callers submit the coroutine and wait, async callers submit it
and await the result, and the tool always sees the same loop.

This is the one process-wide resource of the tool layer (like asyncio's own default
executor): one loop per process keeps a tool consistent whether it is called directly,
through one registry or through several. It is created on first use and re-created in a
forked child.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import threading
from collections.abc import Awaitable, Coroutine
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:  # asyncio is imported on first use: ``import tools`` stays light
    import asyncio
    import concurrent.futures

T = TypeVar("T")


class DeadlineExceeded(Exception):
    """A call ran past the deadline its caller gave (not a ``TimeoutError`` the code raised)."""


class LoopThread:
    """One event loop running forever in one daemon thread; coroutines come from any thread.

    Args:
        name: The thread's name, shown in debuggers and thread dumps.
    """

    def __init__(self, *, name: str = "tooldeck-loop") -> None:
        import asyncio

        self._loop = asyncio.new_event_loop()
        self._lock = threading.Lock()
        self._closed = False
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        import asyncio

        asyncio.set_event_loop(self._loop)
        try:
            self._loop.run_forever()
        finally:
            self._loop.close()

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        """The loop every submitted coroutine runs on."""
        return self._loop

    @property
    def closed(self) -> bool:
        """True once :meth:`close` was called."""
        return self._closed

    def in_loop_thread(self) -> bool:
        """True when called from the loop's own thread (where blocking on it would deadlock)."""
        return threading.current_thread() is self._thread

    def submit(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        """Schedule ``coro`` on the loop, in a copy of the caller's context variables.

        Raises:
            RuntimeError: the loop is closed (the coroutine is closed, never run).
        """
        import concurrent.futures

        context = contextvars.copy_context()
        future: concurrent.futures.Future[T] = concurrent.futures.Future()

        def start() -> None:
            if future.cancelled():  # the caller gave up before the loop got to it
                coro.close()
                return
            task = context.run(self._loop.create_task, coro)  # the task inherits ``context``
            task.add_done_callback(lambda done: _copy_outcome(done, future))
            # The future stays pending while the task runs, so a caller's cancel() succeeds
            # and reaches the task.
            future.add_done_callback(lambda f: self._loop.call_soon_threadsafe(task.cancel) if f.cancelled() else None)

        with self._lock:
            if self._closed:
                coro.close()
                raise RuntimeError("the tool event loop is closed")
            self._loop.call_soon_threadsafe(start)
        return future

    def run(self, coro: Coroutine[Any, Any, T], *, timeout: float | None = None) -> T:
        """Run ``coro`` on the loop and wait for its result (from a thread that is not the loop's).

        Args:
            coro: The coroutine.
            timeout: Seconds to wait; then the coroutine is cancelled and
                :class:`DeadlineExceeded` is raised (None: wait until it finishes).

        Raises:
            DeadlineExceeded: ``timeout`` passed (the coroutine was cancelled).
            RuntimeError: called from the loop's own thread, or the loop is closed.
        """
        import concurrent.futures

        if self.in_loop_thread():
            coro.close()
            raise RuntimeError("cannot block the tool event loop's own thread on itself")
        future = self.submit(coro)
        try:
            return future.result(timeout)
        except concurrent.futures.TimeoutError:
            if future.done():  # the coroutine's own TimeoutError
                raise
            future.cancel()
            raise DeadlineExceeded(f"did not finish within {timeout:g} s") from None

    async def arun(self, coro: Coroutine[Any, Any, T]) -> T:
        """Await ``coro`` running on this loop, from any event loop (cancellation propagates)."""
        import asyncio

        try:
            running = asyncio.get_running_loop()
        except RuntimeError:  # pragma: no cover - arun is always awaited inside a loop
            running = None
        if running is self._loop:
            return await coro
        return await asyncio.wrap_future(self.submit(coro))

    def close(self, *, timeout: float = 10.0) -> None:
        """Cancel pending tasks, stop the loop and join the thread. Idempotent."""
        import asyncio
        import concurrent.futures

        with self._lock:
            if self._closed:
                return
            self._closed = True
        if self.in_loop_thread():
            self._loop.call_soon(self._loop.stop)
            return
        drain = asyncio.run_coroutine_threadsafe(_cancel_pending(), self._loop)
        with contextlib.suppress(concurrent.futures.TimeoutError, concurrent.futures.CancelledError):
            drain.result(timeout)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout)


def _copy_outcome(task: asyncio.Task[Any], future: concurrent.futures.Future[Any]) -> None:
    if future.done():
        return
    if task.cancelled():
        future.cancel()
        return
    error = task.exception()
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(task.result())


async def _cancel_pending() -> None:
    """Cancel every other task on the running loop and wait for them to finish."""
    import asyncio

    current = asyncio.current_task()
    pending = [task for task in asyncio.all_tasks() if task is not current]
    for task in pending:
        task.cancel()
    if pending:
        await asyncio.gather(*pending, return_exceptions=True)


class _ProcessLoop:
    """Holds the process's tool loop: created on first use, re-created after ``fork``."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._thread: LoopThread | None = None
        self._pid = os.getpid()

    def get(self) -> LoopThread:
        thread = self._thread
        if thread is not None and self._pid == os.getpid() and not thread.closed:
            return thread
        with self._lock:
            if self._thread is None or self._pid != os.getpid() or self._thread.closed:
                self._thread = LoopThread(name="tooldeck-tools-loop")
                self._pid = os.getpid()
            return self._thread


_PROCESS_LOOP = _ProcessLoop()


def tool_loop() -> LoopThread:
    """The process's long-lived loop for async tools (started on first use)."""
    return _PROCESS_LOOP.get()


def run_coroutine_sync(coro: Coroutine[Any, Any, T], *, timeout: float | None = None) -> T:
    """Run ``coro`` to completion from synchronous code on the process's tool loop.

    From the tool loop's own thread (a sync call made inside an async tool) blocking on that
    loop would deadlock, so the coroutine then runs on a fresh loop in a helper thread:
    correct, but loop-bound state does not carry over for that nested call.

    Raises:
        DeadlineExceeded: ``timeout`` passed; the coroutine was cancelled.
    """
    loop = tool_loop()
    if not loop.in_loop_thread():
        return loop.run(coro, timeout=timeout)
    return _run_in_helper_thread(coro, timeout)


def _run_in_helper_thread(coro: Coroutine[Any, Any, T], timeout: float | None) -> T:
    import asyncio

    box: dict[str, Any] = {}
    context = contextvars.copy_context()

    def runner() -> None:
        try:
            box["value"] = context.run(asyncio.run, bounded(coro, timeout))
        except BaseException as exc:
            box["error"] = exc

    thread = threading.Thread(target=runner, name="tooldeck-async-bridge", daemon=True)
    thread.start()
    thread.join()
    if "error" in box:
        raise box["error"]
    return box["value"]  # type: ignore[no-any-return]


async def bounded(awaitable: Awaitable[T], timeout: float | None) -> T:
    """Await ``awaitable``, cancelling it after ``timeout`` seconds (None: no limit).

    Raises:
        DeadlineExceeded: the deadline passed (a ``TimeoutError`` raised by the awaited code
            itself propagates unchanged).
    """
    if timeout is None:
        return await awaitable
    import asyncio

    task = asyncio.ensure_future(awaitable)
    try:
        done, _ = await asyncio.wait((task,), timeout=timeout)
    except asyncio.CancelledError:
        task.cancel()
        raise
    if not done:
        task.cancel()
        raise DeadlineExceeded(f"did not finish within {timeout:g} s")
    return task.result()
