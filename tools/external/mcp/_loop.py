"""A private asyncio event loop running in a daemon thread, for sync callers of the async SDK."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

from tools.errors import ToolError, ToolTimeoutError

T = TypeVar("T")

#: Extra seconds a caller waits beyond a coroutine's own deadline before giving up on it.
BACKSTOP_GRACE = 5.0


class LoopThread:
    """One event loop in one background thread; coroutines are submitted from any thread.

    The MCP SDK is asyncio (anyio) code whose sessions must be entered and left on the loop
    that created them. A toolset owns one ``LoopThread`` and runs every session task on it,
    so any number of caller threads can share a persistent session safely.

    Args:
        name: Thread name, shown in debuggers and thread dumps.
    """

    def __init__(self, *, name: str = "tooldeck-mcp") -> None:
        self._loop = asyncio.new_event_loop()
        self._lock = threading.Lock()
        self._closed = False
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        try:
            self._loop.run_forever()
        finally:
            self._loop.close()

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        """The loop every submitted coroutine runs on."""
        return self._loop

    def in_loop_thread(self) -> bool:
        """True when called from the loop's own thread (where blocking would deadlock)."""
        return threading.current_thread() is self._thread

    def run(self, coro: Coroutine[Any, Any, T], *, timeout: float) -> T:
        """Run ``coro`` on the loop and wait for its result.

        The coroutine is expected to enforce ``timeout`` itself; this method waits a few
        seconds more as a backstop, then cancels it and raises :class:`ToolTimeoutError`.

        Args:
            coro: The coroutine to run.
            timeout: The coroutine's own deadline in seconds.

        Raises:
            ToolError: The loop is closed, or this is the loop's own thread.
            ToolTimeoutError: The coroutine did not finish within ``timeout`` plus a grace.
        """
        if self.in_loop_thread():
            coro.close()
            raise ToolError("An MCP tool was called from inside an MCP callback; call it from another thread.")
        with self._lock:
            if self._closed:
                coro.close()
                raise ToolError("The MCP connection is closed; the tool can no longer be called.")
            future = asyncio.run_coroutine_threadsafe(coro, self._loop)
        try:
            return future.result(timeout + BACKSTOP_GRACE)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise ToolTimeoutError(f"The MCP server did not answer within {timeout:g} seconds.") from None

    def close(self, *, timeout: float = 10.0) -> None:
        """Stop the loop and join the thread. Idempotent.

        Pending tasks are cancelled first so that their cleanup (closing sessions, killing
        server processes) runs before the loop stops.

        Args:
            timeout: Seconds to wait for pending tasks and the thread.
        """
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


async def _cancel_pending() -> None:
    """Cancel every other task on the running loop and wait for them to finish."""
    current = asyncio.current_task()
    pending = [task for task in asyncio.all_tasks() if task is not current]
    for task in pending:
        task.cancel()
    if pending:
        await asyncio.gather(*pending, return_exceptions=True)
