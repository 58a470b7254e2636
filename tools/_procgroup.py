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


def wait_group_gone(pgid: int, timeout: float) -> bool:
    """SIGKILL group ``pgid`` until none of it is left (killed processes take a moment to be
    torn down and reaped); True when it is gone, False after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while group_alive(pgid):
        if time.monotonic() >= deadline:
            return False
        kill_group(pgid)
        time.sleep(0.01)
    return True
