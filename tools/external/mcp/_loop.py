"""The toolset's private event loop: :class:`tools._aio.LoopThread` with MCP's errors.

The MCP SDK is asyncio (anyio) code whose sessions must be entered and left on the loop
that created them. A toolset whose session is not adopted by an application's loop owns
one ``LoopThread`` and runs every session task on it, so any number of caller threads can
share a persistent session safely.
"""

from __future__ import annotations

from collections.abc import Coroutine
from typing import Any, TypeVar

from tools._aio import DeadlineExceeded
from tools._aio import LoopThread as _LoopThread
from tools.errors import ToolError, ToolTimeoutError

T = TypeVar("T")

#: Extra seconds a caller waits beyond a coroutine's own deadline before giving up on it.
BACKSTOP_GRACE = 5.0


class LoopThread(_LoopThread):
    """A loop thread whose :meth:`run` speaks in tool errors (for the model).

    Args:
        name: Thread name, shown in debuggers and thread dumps.
    """

    def __init__(self, *, name: str = "tooldeck-mcp") -> None:
        super().__init__(name=name)

    def run(self, coro: Coroutine[Any, Any, T], *, timeout: float | None = None) -> T:
        """Run ``coro`` on the loop and wait for its result.

        The coroutine is expected to enforce ``timeout`` itself; this method waits a few
        seconds more as a backstop, then cancels it and raises :class:`ToolTimeoutError`.

        Raises:
            ToolError: The loop is closed, or this is the loop's own thread.
            ToolTimeoutError: The coroutine did not finish within ``timeout`` plus a grace.
        """
        if self.in_loop_thread():
            coro.close()
            raise ToolError("An MCP tool was called from inside an MCP callback; call it from another thread.")
        try:
            return super().run(coro, timeout=None if timeout is None else timeout + BACKSTOP_GRACE)
        except DeadlineExceeded:
            raise ToolTimeoutError(f"The MCP server did not answer within {timeout:g} seconds.") from None
        except RuntimeError as exc:
            if not self.closed:
                raise
            raise ToolError("The MCP connection is closed; the tool can no longer be called.") from exc
