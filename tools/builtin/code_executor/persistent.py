"""Long-lived programs in the sandbox: :func:`start_process` and :class:`SandboxedProcess`.

:meth:`LocalSandbox.run` is one-shot: it feeds standard input from a file, collects the
output until the program ends and tears everything down. A program that keeps running and
talks over pipes (a module worker) needs the same containment without the one-shot
plumbing. :func:`start_process` prepares the program exactly as ``run`` does — the launcher
the sandbox chose (bubblewrap or the namespaces launcher), its filesystem layout, uid,
resource limits, scrubbed environment and ``python_path`` binds — and starts the launcher
with pipes on standard input, output and error, leading its own process group.
:meth:`SandboxedProcess.stop` kills that group; :meth:`LocalSandbox.close` kills it too.

Differences from ``run``: no wall-clock limit (the caller bounds each exchange; the CPU
limit still applies over the process's life), no workspace, Python only, and by default a
seccomp filter that refuses every ``socket()`` (``AF_UNIX`` included): a program that only
talks over the pipes it was given cannot reach any socket on the host.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import signal
import subprocess
import tempfile
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tools._procgroup import kill_group, wait_group_gone
from tools.builtin.code_executor._runplan import plan
from tools.builtin.code_executor._seccomp import SeccompUnavailableError, compile_filter
from tools.builtin.code_executor.local import LocalSandbox
from tools.errors import ToolError

__all__ = ["SandboxedProcess", "start_process"]

logger = logging.getLogger(__name__)

_TEARDOWN_S = 2.0


class SandboxedProcess:
    """A program running in the sandbox, with pipes; made by :func:`start_process`.

    Attributes:
        pid: The launcher's host process id, leader of the process group.
        stdin: Descriptor writing to the program's standard input.
        stdout: Descriptor reading the program's standard output.
        stderr: Descriptor reading the program's standard error.
        launcher: ``"bwrap"`` or ``"namespaces"``.
        uid: The uid the program runs as (on the host).
    """

    def __init__(
        self, popen: subprocess.Popen[bytes], *, sandbox: LocalSandbox, workdir: Path, status_r: int, launcher: str
    ) -> None:
        if popen.stdin is None or popen.stdout is None or popen.stderr is None:
            raise ValueError("SandboxedProcess needs a process started with three pipes")
        self._popen = popen
        self._sandbox = sandbox
        self._workdir = workdir
        self._status_r = status_r
        self._status = bytearray()
        self._stopped = False
        self._lock = threading.Lock()
        self.pid = popen.pid
        self.stdin = popen.stdin.fileno()
        self.stdout = popen.stdout.fileno()
        self.stderr = popen.stderr.fileno()
        self.launcher = launcher
        self.uid = sandbox._uid if sandbox._uid is not None else os.geteuid()

    def __repr__(self) -> str:
        return f"SandboxedProcess(pid={self.pid}, launcher={self.launcher})"

    def poll(self) -> int | None:
        """The launcher's exit status once it has ended, else None."""
        return self._popen.poll()

    def stop(self) -> None:
        """Kill the process group, wait until it is gone, close the pipes. Idempotent."""
        with self._lock:
            if self._stopped:
                return
            self._stopped = True
        kill_group(self.pid)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self._popen.wait(timeout=10)
        wait_group_gone(self.pid, timeout=_TEARDOWN_S)
        _forget(self._sandbox, self.pid)
        self._read_status()
        for stream in (self._popen.stdin, self._popen.stdout, self._popen.stderr):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()
        with contextlib.suppress(OSError):
            os.close(self._status_r)
        shutil.rmtree(self._workdir, ignore_errors=True)

    def exit_reason(self) -> str:
        """Why the process ended (or ``"running"``): a refusal by the launcher, a start
        error, an exit status or a signal."""
        code = self._popen.poll()
        if code is None:
            return "running"
        status = self._read_status()
        items = dict(line.split("=", 1) for line in status.splitlines() if "=" in line)
        if items.get("refused") == "1":
            return self._sandbox._refusal(items.get("missing", ""), items.get("fs_error"))
        if "error" in items:
            return f"the program could not start ({items['error']})"
        if code < 0:
            return f"killed by {signal.Signals(-code).name}"
        return f"exit status {code}"

    def _read_status(self) -> str:
        with contextlib.suppress(OSError):
            os.set_blocking(self._status_r, False)
            while chunk := os.read(self._status_r, 65536):
                self._status += chunk
        return self._status.decode("utf-8", "replace")


def _socketless_filter(sandbox: LocalSandbox) -> bytes | None:
    if not sandbox._want_seccomp:
        return None
    try:
        return compile_filter(allow_network=not sandbox._isolate_network, deny_sockets=True)
    except SeccompUnavailableError as exc:
        logger.warning("sandbox: no seccomp filter for a long-lived program (%s)", exc)
        return None


def start_process(
    sandbox: LocalSandbox,
    code: str,
    *,
    python_path: Sequence[str | os.PathLike[str]] = (),
    deny_sockets: bool = True,
) -> SandboxedProcess:
    """Start ``code`` (Python) in ``sandbox`` and leave it running, with pipes.

    Args:
        sandbox: The sandbox whose containment applies.
        code: The program's source.
        python_path: Host directories bound read-only and put first on ``sys.path``.
        deny_sockets: Load a seccomp filter that refuses ``socket()`` of every family.

    Raises:
        InvalidArgumentsError: Oversized code, an unusable ``python_path`` entry.
        ToolError: The sandbox is closed, can't contain programs here, or could not
            start the launcher.
    """
    argv = sandbox._check(code, "python", None)
    backend = sandbox._backend()
    sandbox._check_interpreter(argv[0], "python")
    workdir = Path(tempfile.mkdtemp(prefix="tooldeck-proc-", dir=sandbox._temp_root))
    try:
        program = sandbox._prepare(workdir, code, "python", None)
        run_plan = plan(str(workdir), workspace=None, python_path=python_path, other_uid=sandbox._uid is not None)
        command = run_plan.command(argv, str(program), "python")
        seccomp = _socketless_filter(sandbox) if deny_sockets else None
        launch = sandbox._bwrap_launch if backend == "bwrap" else sandbox._launcher_launch
        launcher_argv, fds, status_r, env, user = launch(command, workdir, "python", run_plan, seccomp)
        popen = _spawn(launcher_argv, fds, status_r, env=env, user=user, cwd="/" if user else str(workdir))
    except BaseException:
        shutil.rmtree(workdir, ignore_errors=True)
        raise
    process = SandboxedProcess(popen, sandbox=sandbox, workdir=workdir, status_r=status_r, launcher=backend)
    _track(sandbox, process)
    return process


def _track(sandbox: LocalSandbox, process: SandboxedProcess) -> None:
    """Count the process group as running, so that ``sandbox.close()`` kills it."""
    with sandbox._lock:
        closed = sandbox._closed
        if not closed:
            sandbox._running.add(process.pid)
    if closed:
        process.stop()
        raise ToolError("The code sandbox is shut down; no program can be started.", trips_breaker=True)


def _forget(sandbox: LocalSandbox, pgid: int) -> None:
    with sandbox._lock:
        sandbox._running.discard(pgid)


def _spawn(
    argv: list[str], fds: list[int], status_r: int, *, env: dict[str, str], user: dict[str, Any], cwd: str
) -> subprocess.Popen[bytes]:
    try:
        return subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            pass_fds=tuple(fds),
            start_new_session=True,
            cwd=cwd,
            env=env,
            **user,
        )
    except OSError as exc:
        os.close(status_r)
        raise ToolError(f"The sandbox could not start: {type(exc).__name__}: {exc}.", trips_breaker=True) from exc
    finally:
        for fd in fds:  # the status pipe must see EOF when the child's copy closes
            os.close(fd)
