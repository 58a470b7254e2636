"""Relay a served tool's ``report_progress`` to the MCP client as ``notifications/progress``.

Only for a client that asked (``_meta.progressToken`` on its ``tools/call``): otherwise the
call runs exactly as before. Reports arrive on whatever thread runs the tool (a registry
worker, the shared tool loop); each is handed to the server's own event loop and sent, in
order, by one task, and every report made before the tool returned is sent before the
call's result.

MCP says the ``progress`` value must increase with each notification: a known fraction is
sent as ``progress`` out of ``total`` 1.0; a report without one (or one that went
backwards) moves ``progress`` up by a hair and keeps the message.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from typing import Any

from tools.progress import ToolProgress, listening

logger = logging.getLogger(__name__)

_STEP = 1e-6
_DONE = object()


def wants_progress(ctx: Any) -> bool:
    """Whether the client sent a progress token with this request."""
    meta = getattr(ctx, "meta", None)
    return isinstance(meta, dict) and meta.get("progress_token") is not None


@contextlib.asynccontextmanager
async def relayed_progress(ctx: Any, tool: str) -> AsyncIterator[None]:
    """Around one served call: its progress reports go to the client (when it asked)."""
    if not wants_progress(ctx):
        yield
        return
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[Any] = asyncio.Queue()
    sender = asyncio.create_task(_send_all(ctx, queue))

    def listener(report: ToolProgress) -> None:
        loop.call_soon_threadsafe(queue.put_nowait, report)

    try:
        with listening(listener, tool=tool, call_id=str(getattr(ctx, "request_id", "") or "") or None):
            yield
    finally:
        # Every report of the call was scheduled before this line: the marker comes after them.
        loop.call_soon_threadsafe(queue.put_nowait, _DONE)
        await sender


async def _send_all(ctx: Any, queue: asyncio.Queue[Any]) -> None:
    last = 0.0
    while True:
        report = await queue.get()
        if report is _DONE:
            return
        fraction = report.fraction
        progress = fraction if fraction is not None and fraction > last else last + _STEP
        last = progress
        try:
            await ctx.session.report_progress(progress, 1.0, report.message)
        except Exception:  # a client gone or a closed stream: the call's answer still goes out
            logger.info("progress notification for %r not sent", report.tool, exc_info=True)
