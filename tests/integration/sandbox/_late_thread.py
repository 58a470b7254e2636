"""Starts a sandboxed program from a thread that is gone before the launcher starts up.

Run by ``test_sandbox_die_with_parent.py`` through ``privileges.run_python`` (as root, or
dropped to uid 1000): ``main(job)`` returns what happened. The namespaces launcher is
started through ``job["wrapper"]``, a script that waits on the FIFO ``job["gate"]`` before
it runs Python: so the thread that started it has ended, and the kernel has forgotten it,
before the launcher arms its parent-death signal. A launcher that only arms the signal
(``PR_SET_PDEATHSIG`` is sent when the thread ends, not when it has already ended) would
then run the program with nothing left to stop it.
"""

from __future__ import annotations

import errno
import os
import select
import threading
import time
from typing import Any

UP = "import time\nprint('up', flush=True)\ntime.sleep(600)\n"


def _release(gate: str, deadline: float) -> bool:
    """Open the FIFO for writing once the wrapper waits on it; False if it never does."""
    while time.monotonic() < deadline:
        try:
            fd = os.open(gate, os.O_WRONLY | os.O_NONBLOCK)
        except OSError as exc:
            if exc.errno != errno.ENXIO:  # ENXIO: no reader yet
                raise
            time.sleep(0.01)
            continue
        os.write(fd, b"go\n")
        os.close(fd)
        return True
    return False


def _output(process: Any, deadline: float) -> bytes:
    """What the program printed until its pipe closed (or the deadline passed)."""
    seen = b""
    while time.monotonic() < deadline:
        ready, _, _ = select.select([process.stdout], [], [], 0.1)
        if ready:
            chunk = os.read(process.stdout, 64)
            if not chunk:
                break
            seen += chunk
        if b"up" in seen:
            break
    return seen


def main(job: dict[str, Any]) -> dict[str, Any]:
    from tools.builtin.code_executor import LocalSandbox
    from tools.builtin.code_executor.persistent import start_process

    box = LocalSandbox(launcher="namespaces", launcher_python=job["wrapper"], temp_root=job["temp_root"])
    started: dict[str, Any] = {}
    try:
        thread = threading.Thread(target=lambda: started.update(process=start_process(box, UP)))
        thread.start()
        thread.join()
        deadline = time.monotonic() + 30
        while os.path.exists(f"/proc/self/task/{thread.native_id}") and time.monotonic() < deadline:
            time.sleep(0.01)
        process = started["process"]
        released = _release(job["gate"], time.monotonic() + 60)
        printed = _output(process, time.monotonic() + 60)
        deadline = time.monotonic() + 30
        while process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        out = {"released": released, "printed": printed.decode(errors="replace"), "ended": process.poll() is not None}
        out["reason"] = process.exit_reason()
        process.stop()
        return out
    finally:
        box.close()
