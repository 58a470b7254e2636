"""Process groups: the one place that signals, probes and waits for a whole group.

Every subprocess tooldeck starts (sandboxed programs, CLI tools, tool binaries, MCP
servers, the math worker) leads its own process group, so a timeout or a shutdown can
take down the program *and* everything it spawned.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time


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
