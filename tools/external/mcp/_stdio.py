"""The stdio transport: spawn the server in its own process group, always reap the group.

The SDK's ``stdio_client`` kills the process tree only when the server ignores the end of
its stdin; a server that exits politely leaves its own children running. This transport
ends every shutdown with a group-wide SIGTERM then SIGKILL, caps line length, and reports
the server's pid (for diagnostics and tests).
"""

from __future__ import annotations

import logging
import signal
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import asynccontextmanager, suppress
from pathlib import Path
from typing import IO, Any

import anyio
import anyio.abc
import mcp_types
from mcp.client.stdio import get_default_environment
from mcp.shared.message import SessionMessage

from tools._procgroup import group_alive, kill_group

logger = logging.getLogger(__name__)

#: Longest stdout line accepted from a server; a longer one ends the connection.
MAX_LINE_BYTES = 32 * 1024 * 1024
#: Seconds a server gets to exit by itself once its stdin is closed.
EXIT_GRACE = 1.0
#: Seconds between the group SIGTERM and the group SIGKILL.
TERM_GRACE = 1.0


class LineTooLongError(ValueError):
    """The server wrote a stdout line longer than :data:`MAX_LINE_BYTES`."""


@asynccontextmanager
async def stdio_transport(
    command: Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    cwd: str | Path | None = None,
    stderr: IO[Any] | int | None = None,
    on_spawn: Callable[[int], None] | None = None,
    max_line_bytes: int = MAX_LINE_BYTES,
) -> AsyncIterator[Any]:
    """Spawn ``command`` and yield the ``(read_stream, write_stream)`` pair the SDK expects.

    The child gets the SDK's safe default environment (``PATH``, ``HOME``, ...) plus ``env``,
    a new session (so its pid is its process-group id) and no shell. Malformed stdout lines
    are passed to the session as exceptions (it logs them); a line over ``max_line_bytes``
    is passed as :class:`LineTooLongError` and ends the connection. On exit the server's stdin is closed, it gets
    :data:`EXIT_GRACE` seconds, then its whole process group is sent SIGTERM and SIGKILL.

    Raises:
        OSError: the command cannot be started (not found, not executable).
    """
    process = await anyio.open_process(
        list(command),
        env=get_default_environment() | dict(env or {}),
        cwd=cwd,
        stderr=stderr,
        start_new_session=True,
    )
    if on_spawn is not None:
        on_spawn(process.pid)
    read_writer, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_stream, write_reader = anyio.create_memory_object_stream[SessionMessage](0)
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(_pump_stdout, process, read_writer, max_line_bytes)
            tg.start_soon(_pump_stdin, process, write_reader, read_writer)
            try:
                yield read_stream, write_stream
            finally:
                tg.cancel_scope.cancel()
    finally:
        with anyio.CancelScope(shield=True):
            await _stop(process)
            for stream in (read_stream, write_stream, read_writer, write_reader):
                await stream.aclose()


async def _pump_stdout(
    process: anyio.abc.Process,
    sink: anyio.abc.ObjectSendStream[SessionMessage | Exception],
    max_line_bytes: int,
) -> None:
    stdout = process.stdout
    if stdout is None:  # pragma: no cover - spawned with pipes
        return
    pending = bytearray()
    async with sink:
        try:
            async for chunk in stdout:
                pending += chunk
                if b"\n" in chunk:
                    *lines, rest = pending.split(b"\n")
                    pending = bytearray(rest)
                    for line in lines:
                        if line.strip():
                            await sink.send(_parse(bytes(line)))
                if len(pending) > max_line_bytes:
                    await sink.send(LineTooLongError(f"stdout line over {max_line_bytes} bytes"))
                    return
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream):
            return


def _parse(line: bytes) -> SessionMessage | Exception:
    try:
        message = mcp_types.jsonrpc_message_adapter.validate_json(line, by_name=False)
    except ValueError as exc:
        return exc
    return SessionMessage(message)


async def _pump_stdin(
    process: anyio.abc.Process,
    source: anyio.abc.ObjectReceiveStream[SessionMessage],
    reader_sink: anyio.abc.ObjectSendStream[SessionMessage | Exception],
) -> None:
    stdin = process.stdin
    if stdin is None:  # pragma: no cover - spawned with pipes
        return
    try:
        async with source:
            async for message in source:
                data = message.message.model_dump_json(by_alias=True, exclude_unset=True)
                await stdin.send(data.encode() + b"\n")
    except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
        # The server stopped reading: end the session instead of letting requests hang.
        await reader_sink.aclose()


async def _stop(process: anyio.abc.Process) -> None:
    """Close stdin, wait :data:`EXIT_GRACE`, then TERM and KILL the whole process group."""
    if process.stdin is not None:
        with suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
            await process.stdin.aclose()
    with anyio.move_on_after(EXIT_GRACE):
        while process.returncode is None:
            await anyio.sleep(0.01)
    # Always signal the group: a server that exited politely may have left children behind.
    # A pid still in use as a process-group id is never handed out again, so while any
    # member lives the group is still the server's.
    kill_group(process.pid, signal.SIGTERM)
    with anyio.move_on_after(TERM_GRACE):
        while group_alive(process.pid):
            await anyio.sleep(0.01)
    if group_alive(process.pid):
        kill_group(process.pid, signal.SIGKILL)
    with anyio.move_on_after(TERM_GRACE):
        await process.aclose()  # closes the pipes and reaps the leader
