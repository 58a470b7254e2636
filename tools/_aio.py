"""Running coroutines from sync code without blocking or deadlocking a running loop."""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


def run_coroutine_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` to completion from synchronous code and return its result.

    With no event loop running in this thread the coroutine runs on a fresh loop here.
    Inside a running loop (a sync call made from async code) blocking that loop's thread on
    itself would deadlock, so the coroutine runs on a fresh loop in a helper thread while
    this thread waits. Context variables are carried over in both cases.
    """
    import asyncio

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    box: dict[str, Any] = {}
    context = contextvars.copy_context()

    def runner() -> None:
        try:
            box["value"] = context.run(asyncio.run, coro)
        except BaseException as exc:
            box["error"] = exc

    thread = threading.Thread(target=runner, name="tooldeck-async-bridge", daemon=True)
    thread.start()
    thread.join()
    if "error" in box:
        raise box["error"]
    return box["value"]  # type: ignore[no-any-return]
