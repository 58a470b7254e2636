"""Calling a tool as an MCP *task* (protocol revision 2025-11-25, "tasks" utility).

A server that declares ``capabilities.tasks.requests.tools.call`` and marks a tool
``execution.taskSupport`` ``"optional"`` or ``"required"`` runs that tool as a task: the
``tools/call`` carries ``task: {ttl}`` and the server answers at once with a
``CreateTaskResult``; the client polls ``tasks/get`` (honouring the server's
``pollInterval``, backing off up to :data:`MAX_POLL_INTERVAL`) until the task completes,
fails or needs input, then fetches the tool's result with ``tasks/result``. On the call's
timeout or cancellation the task is cancelled with ``tasks/cancel``. Progress keeps flowing:
the call carries its own progress token, and notifications for it are routed to the
caller's callback for the whole life of the task (see :class:`ProgressRouter`).

The SDK defines the task types but not the flow, and its typed ``tools/call`` path accepts
only a ``CallToolResult``; the first request is therefore sent through the session's raw
request channel (the SDK's own subscriptions driver does the same), and everything after
it through the typed one.
"""

from __future__ import annotations

import itertools
import logging
import math
import os
from collections.abc import Mapping
from typing import Any

import anyio
import mcp_types
from mcp import Client
from mcp.shared.dispatcher import Outbound, ProgressFnT
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from tools.errors import ToolError, UpstreamError

logger = logging.getLogger(__name__)

#: First and longest wait between two ``tasks/get`` polls (seconds); the server's
#: ``pollInterval`` is honoured as a floor.
FIRST_POLL_INTERVAL = 0.05
MAX_POLL_INTERVAL = 5.0
POLL_BACKOFF = 1.5
#: Seconds allowed for ``tasks/cancel`` after a timeout or cancellation.
CANCEL_TIMEOUT = 5.0
TERMINAL = frozenset({"completed", "failed", "cancelled"})
_PROTOCOL_HEADER = "mcp-protocol-version"


class ProgressRouter:
    """Routes ``notifications/progress`` of task-augmented calls to their callbacks by token.

    The SDK correlates progress with a request only until its first response; a task's
    progress goes on after that (the ``CreateTaskResult``), so the client's message handler
    hands every progress notification here and the router finds the caller by its token.
    """

    def __init__(self) -> None:
        self._callbacks: dict[str, ProgressFnT] = {}
        self._ids = itertools.count(1)
        self._prefix = f"tooldeck-task-{os.getpid()}-{id(self):x}-"

    def open(self, callback: ProgressFnT | None) -> str | None:
        """A new progress token routed to ``callback`` (None without a callback)."""
        if callback is None:
            return None
        token = f"{self._prefix}{next(self._ids)}"
        self._callbacks[token] = callback
        return token

    def close(self, token: str | None) -> None:
        """Stop routing ``token``."""
        if token is not None:
            self._callbacks.pop(token, None)

    async def deliver(self, notification: mcp_types.ProgressNotification) -> None:
        """Hand one notification to its callback, if its token is open."""
        params = notification.params
        callback = self._callbacks.get(str(params.progress_token))
        if callback is None:
            return
        try:
            await callback(params.progress, params.total, params.message)
        except Exception:
            logger.exception("MCP progress callback raised")


def runs_as_task(client: Client, task_support: str | None) -> bool:
    """Whether a tool marked ``task_support`` is called as a task on this connection.

    Only on 2025-11-25-era connections whose server declared task-augmented ``tools/call``
    (the spec forbids task requests otherwise); the tool says ``optional`` or ``required``.
    """
    if task_support not in ("optional", "required"):
        return False
    if client.protocol_version in MODERN_PROTOCOL_VERSIONS:
        return False
    tasks = client.server_capabilities.tasks
    return bool(tasks and tasks.requests and tasks.requests.tools and tasks.requests.tools.call is not None)


async def call_as_task(
    client: Client,
    name: str,
    arguments: Mapping[str, Any],
    *,
    progress: ProgressFnT | None,
    router: ProgressRouter,
    ttl_ms: int,
) -> mcp_types.CallToolResult:
    """Run ``tools/call`` as a task and return the tool's result; the caller bounds the time.

    Raises:
        ToolError: the task was cancelled by the server, or it answered outside the protocol.
        MCPError, TimeoutError: as the SDK raises them (the caller translates).
    """
    token = router.open(progress)
    task_id: str | None = None
    try:
        created = await _create(client, name, arguments, token, ttl_ms)
        if isinstance(created, mcp_types.CallToolResult):  # the server ran it directly after all
            return created
        task_id = created.task.task_id
        status = await _poll(client, created.task)
        if status.status == "cancelled":
            reason = f": {status.status_message}" if status.status_message else ""
            raise ToolError(f"The MCP server cancelled the task running {name!r}{reason}.")
        task_id = None if status.status in TERMINAL else task_id
        result = await _payload(client, created.task.task_id)
        task_id = None
        return result
    finally:
        router.close(token)
        if task_id is not None:  # timed out, cancelled or failed midway: stop the server's work
            await _cancel(client, task_id)


async def _create(
    client: Client, name: str, arguments: Mapping[str, Any], token: str | None, ttl_ms: int
) -> mcp_types.CreateTaskResult | mcp_types.CallToolResult:
    params: dict[str, Any] = {"name": name, "arguments": dict(arguments), "task": {"ttl": ttl_ms}}
    if token is not None:
        params["_meta"] = {"progressToken": token}
    headers = {_PROTOCOL_HEADER: client.protocol_version}
    raw = await _outbound(client).send_raw_request("tools/call", params, {"headers": headers})
    if "task" not in raw:
        if "content" in raw:
            return mcp_types.CallToolResult.model_validate(raw, by_name=False)
        raise UpstreamError("The MCP server answered a task request with neither a task nor a result.", retryable=False)
    return mcp_types.CreateTaskResult.model_validate(raw, by_name=False)


async def _poll(client: Client, task: mcp_types.Task) -> mcp_types.Task:
    interval = FIRST_POLL_INTERVAL
    while task.status == "working":
        floor = (task.poll_interval or 0) / 1000
        await anyio.sleep(min(max(interval, floor), MAX_POLL_INTERVAL))
        interval = min(interval * POLL_BACKOFF, MAX_POLL_INTERVAL)
        task = await client.session.send_request(
            mcp_types.GetTaskRequest(params=mcp_types.GetTaskRequestParams(task_id=task.task_id)),
            mcp_types.GetTaskResult,
        )
    return task


async def _payload(client: Client, task_id: str) -> mcp_types.CallToolResult:
    """``tasks/result``: blocks until the task is terminal (serving its input requests)."""
    return await client.session.send_request(
        mcp_types.GetTaskPayloadRequest(params=mcp_types.GetTaskPayloadRequestParams(task_id=task_id)),
        mcp_types.CallToolResult,
    )


async def _cancel(client: Client, task_id: str) -> None:
    with anyio.move_on_after(CANCEL_TIMEOUT, shield=True):
        try:
            await client.session.send_request(
                mcp_types.CancelTaskRequest(params=mcp_types.CancelTaskRequestParams(task_id=task_id)),
                mcp_types.CancelTaskResult,
            )
            logger.debug("MCP task %s cancelled", task_id)
        except Exception as exc:  # the server may have finished or forgotten it: nothing to undo
            logger.debug("cancelling MCP task %s failed: %r", task_id, exc)


def _outbound(client: Client) -> Outbound:
    dispatcher = getattr(client.session, "_dispatcher", None)
    if not isinstance(dispatcher, Outbound):  # pragma: no cover - an SDK that moved it
        raise UpstreamError("This MCP SDK offers no raw request channel for task calls.", retryable=False)
    return dispatcher


def ttl_for(timeout: float) -> int:
    """The task's requested retention: the call's time limit plus a minute, in milliseconds."""
    return int(min(timeout + 60, 24 * 3600) * 1000) if math.isfinite(timeout) else 3_600_000
