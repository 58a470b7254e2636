"""Where a toolset's one MCP session lives: its own loop thread, or an application's loop.

The SDK's sessions are asyncio (anyio) objects bound to the loop that opened them. By
default a toolset keeps its session on a private loop in a background thread
(:class:`LoopThread`), so sync callers from any thread can share it: each call hops to
that thread and back. An async application can instead *adopt* the session into its own
loop (``async with toolset`` / ``await toolset.aopen()``): calls awaited on that loop then
run there directly, with no thread hop, which is what the SDK itself costs. Either way
there is one session (one server process for stdio), so stateful servers keep their state.

From a home that is an application's loop:

* async calls on that loop are awaited in place;
* calls from other threads or loops hop into it (it must be running);
* a *sync* call made on that loop's own thread would block the very loop that must answer
  it: it is refused with a :class:`~tools.errors.ToolError` saying to ``await`` instead;
* when that loop ends (``asyncio.run`` returns), its shutdown cancels the session (the
  server is stopped) and the home moves back to a private loop thread for later calls.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import threading
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

from tools.errors import ToolDefinitionError, ToolError, ToolTimeoutError, UpstreamError
from tools.external.mcp._loop import BACKSTOP_GRACE, LoopThread
from tools.external.mcp._session import Session

logger = logging.getLogger(__name__)

T = TypeVar("T")
Operation = Callable[[Session], Coroutine[Any, Any, T]]

SYNC_ON_HOME = (
    "This MCP tool was called synchronously from the event loop that serves its session, "
    "which would block that loop forever; await tool.aexecute(...) (or registry.acall_tool) "
    "there instead."
)


def running_loop() -> asyncio.AbstractEventLoop | None:
    """The event loop running in this thread, if any."""
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


class SessionHome:
    """The one session of a toolset and the loop it lives on.

    Args:
        make_session: Builds a fresh (unopened) session; called again after the session's
            loop has ended.
        name: Name of the private loop thread.
        close_timeout: Seconds allowed for closing the session.
    """

    def __init__(self, make_session: Callable[[], Session], *, name: str, close_timeout: float) -> None:
        self._make = make_session
        self._name = name
        self._close_timeout = close_timeout
        self._lock = threading.Lock()
        self._session = make_session()
        self._thread: LoopThread | None = None
        self._app_loop: asyncio.AbstractEventLoop | None = None
        self._closing: set[asyncio.Task[None]] = set()
        self._closed = False

    @property
    def session(self) -> Session:
        """The current session."""
        return self._session

    def serves_from(self, loop: asyncio.AbstractEventLoop | None) -> bool:
        """True when ``loop`` is the application loop the session was adopted into."""
        with self._lock:
            return loop is not None and self._app_loop is loop

    def _target(self) -> tuple[Session, asyncio.AbstractEventLoop, LoopThread | None]:
        with self._lock:
            if self._closed:
                raise UpstreamError("The MCP connection is closed; the tool can no longer be called.", retryable=False)
            app = self._app_loop
            if app is not None and app.is_closed():
                logger.debug("the event loop serving MCP session %s ended; using a loop thread", self._name)
                self._app_loop = app = None
                self._session = self._make()  # the old one ended with its loop
            if app is not None:
                return self._session, app, None
            if self._thread is None:
                self._thread = LoopThread(name=self._name)
            return self._session, self._thread.loop, self._thread

    def run(self, operation: Operation[T], *, timeout: float) -> T:
        """Run ``operation(session)`` on the home loop from sync code and wait for it.

        Raises:
            ToolError: closed, or called on the application loop that serves the session.
            ToolTimeoutError: no result within ``timeout`` plus a grace period.
        """
        session, loop, thread = self._target()
        if thread is not None:
            return thread.run(operation(session), timeout=timeout)
        if running_loop() is loop:
            raise ToolError(SYNC_ON_HOME)
        future = asyncio.run_coroutine_threadsafe(operation(session), loop)
        try:
            return future.result(timeout + BACKSTOP_GRACE)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise ToolTimeoutError(f"The MCP server did not answer within {timeout:g} seconds.") from None

    async def arun(self, operation: Operation[T], *, timeout: float) -> T:
        """Await ``operation(session)``: in place on the home loop, else hopping to it.

        Raises:
            ToolError: closed.
            ToolTimeoutError: no result within ``timeout`` plus a grace period.
        """
        session, loop, _ = self._target()
        if asyncio.get_running_loop() is loop:
            return await operation(session)
        # The operation enforces its own deadline; the backstop is a timer, not a wrapping
        # task (asyncio.wait_for would add a task per call).
        future = asyncio.run_coroutine_threadsafe(operation(session), loop)
        expired = False

        def expire() -> None:
            nonlocal expired
            expired = True
            future.cancel()

        backstop = asyncio.get_running_loop().call_later(timeout + BACKSTOP_GRACE, expire)
        try:
            return await asyncio.wrap_future(future)
        except asyncio.CancelledError:
            if expired:
                raise ToolTimeoutError(f"The MCP server did not answer within {timeout:g} seconds.") from None
            raise
        finally:
            backstop.cancel()

    async def adopt(self) -> None:
        """Move the session into the running loop (a session already open elsewhere is
        closed first: its server restarts on the next call).

        Raises:
            ToolError: closed.
            ToolDefinitionError: another, still open, application loop serves the session.
        """
        loop = asyncio.get_running_loop()
        with self._lock:
            if self._closed:
                raise UpstreamError("The MCP connection is closed; open a new toolset.", retryable=False)
            if self._app_loop is loop:
                return
            if self._app_loop is not None and not self._app_loop.is_closed():
                raise ToolDefinitionError(
                    "this MCP toolset is already served from another event loop; use it from that "
                    "loop, or give each loop its own MCPToolset"
                )
            thread, old = self._thread, self._session
            self._thread, self._app_loop = None, loop
            self._session = self._make()
        if thread is not None:
            await asyncio.to_thread(self._stop_thread, thread, old)

    def _stop_thread(self, thread: LoopThread, session: Session) -> None:
        try:
            thread.run(session.aclose(), timeout=self._close_timeout)
        except Exception:
            logger.exception("closing MCP session %s failed", self._name)
        finally:
            thread.close()

    def close(self) -> None:
        """Close the session (stopping its server) and the private loop thread. Idempotent.

        On the application loop that serves the session, closing can only be scheduled (it
        runs when the loop next gets control); :meth:`aclose` waits for it.
        """
        with self._lock:
            if self._closed:
                return
            self._closed = True
            thread, app, session = self._thread, self._app_loop, self._session
            self._thread = self._app_loop = None
        if thread is not None:
            self._stop_thread(thread, session)
        elif app is not None and not app.is_closed():
            try:
                if running_loop() is app:
                    task = app.create_task(session.aclose())
                    self._closing.add(task)  # keep it alive until it ran
                    task.add_done_callback(self._closing.discard)
                elif app.is_running():
                    asyncio.run_coroutine_threadsafe(session.aclose(), app).result(self._close_timeout)
                else:
                    app.run_until_complete(session.aclose())
            except Exception:
                logger.exception("closing MCP session %s failed", self._name)

    async def aclose(self) -> None:
        """Async twin of :meth:`close`; waits for the session to close on any loop."""
        with self._lock:
            here = not self._closed and self._app_loop is not None and self._app_loop is running_loop()
            if here:
                self._closed = True
                session, self._app_loop = self._session, None
        if here:
            try:
                await session.aclose()
            except Exception:
                logger.exception("closing MCP session %s failed", self._name)
            return
        await asyncio.to_thread(self.close)
