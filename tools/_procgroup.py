"""Process groups: the one place that signals, probes and waits for a whole group.

Every subprocess tooldeck starts (sandboxed programs, CLI tools, tool binaries, MCP
servers, the math worker) leads its own process group, so a timeout or a shutdown can
take down the program *and* everything it spawned. The host processes (``tooldeck``,
``python -m orchestrator``, ``serve-mcp``) run inside :func:`sigterm_as_interrupt`, so a
``SIGTERM`` (a service manager, ``kill``, a container stopping) runs the same shutdown as
Ctrl-C: every tool child's group is killed, none is left orphaned.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import sys
import threading
import time
from collections.abc import Iterator
from types import FrameType
from typing import Any


def kill_group(pgid: int, sig: int = signal.SIGKILL) -> None:
    """Send ``sig`` (default SIGKILL) to process group ``pgid``; a group already gone is fine."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def group_alive(pgid: int) -> bool:
    """True while any process of group ``pgid`` exists (members we may not signal count)."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # members running as another user (the sandbox user): still there
    return True


def live_members(pgid: int) -> int:
    """Processes of group ``pgid`` that are not zombies (a ``/proc`` scan; 0 where there is
    no ``/proc``)."""
    live = 0
    try:
        entries = os.scandir("/proc")
    except OSError:
        return 0
    with entries:
        for entry in entries:
            if not entry.name.isdigit():
                continue
            try:
                with open(f"/proc/{entry.name}/stat", "rb") as stat:
                    fields = stat.read().rsplit(b")", 1)[1].split()
            except (OSError, IndexError):
                continue
            if len(fields) > 2 and int(fields[2]) == pgid and fields[0] != b"Z":
                live += 1
    return live


def wait_group_gone(pgid: int, timeout: float) -> bool:
    """SIGKILL group ``pgid`` until none of it runs; True when done within ``timeout``.

    A zombie counts as gone: it runs nothing, and an orphaned one (bubblewrap's PID 1, say)
    is reaped by the host's init in its own time.
    """
    deadline = time.monotonic() + timeout
    while group_alive(pgid) and live_members(pgid):
        if time.monotonic() >= deadline:
            return False
        kill_group(pgid)
        time.sleep(0.01)
    return True


@contextlib.contextmanager
def interrupts_deferred() -> Iterator[None]:
    """Hold SIGINT and SIGTERM while inside, then act on them as usual.

    Wraps starting a child and recording its process group: an interrupt between the two
    would leave a child nobody knows to kill. Only the main thread receives signals; off
    it this does nothing.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    pending: list[tuple[int, FrameType | None]] = []

    def hold(signum: int, frame: FrameType | None) -> None:
        pending.append((signum, frame))

    previous: dict[int, Any] = {sig: signal.signal(sig, hold) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        for signum, frame in pending:
            handler = previous[signum]
            if callable(handler):
                handler(signum, frame)  # KeyboardInterrupt, as if it had come now
            elif handler == signal.SIG_DFL:
                os.kill(os.getpid(), signum)


class Termination:
    """Whether a SIGTERM arrived inside :func:`sigterm_as_interrupt` (see :func:`exit_if_terminated`)."""

    def __init__(self) -> None:
        self.received = False


@contextlib.contextmanager
def sigterm_as_interrupt(state: Termination | None = None) -> Iterator[Termination]:
    """Inside, ``SIGTERM`` raises :class:`KeyboardInterrupt` in the main thread, as Ctrl-C
    does, so the same ``finally`` blocks and context managers stop the tool children.

    Does nothing off the main thread, or when the application installed its own handler.

    Args:
        state: Records that SIGTERM arrived (a new one is made when None); yielded.
    """
    state = state if state is not None else Termination()
    if threading.current_thread() is not threading.main_thread():
        yield state
        return
    if signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        yield state
        return

    def interrupt(signum: int, frame: FrameType | None) -> None:
        state.received = True
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, interrupt)
    try:
        yield state
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)


def exit_if_terminated(state: Termination) -> None:
    """After a SIGTERM and the cleanup it triggered, leave now (exit status 143).

    A thread blocked in a read that nothing interrupts (an MCP server's stdin reader, say)
    would otherwise keep the interpreter alive after ``main`` returned. Call this once the
    tool children are stopped; it does nothing when no SIGTERM arrived.
    """
    if not state.received:
        return
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    logging.shutdown()
    os._exit(128 + signal.SIGTERM)
