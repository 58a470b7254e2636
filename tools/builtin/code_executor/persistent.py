"""Long-lived programs in the sandbox: :func:`start_process` and :class:`SandboxedProcess`.

:meth:`LocalSandbox.run` is one-shot: it feeds standard input from a file, collects the
output until the program ends and tears everything down. A program that keeps running and
talks over pipes (a module worker) needs the same containment without the one-shot
plumbing. :func:`start_process` prepares the program exactly as ``run`` does — the launcher
the sandbox chose (:meth:`LocalSandbox.launcher`: bubblewrap or the namespaces launcher,
its allow-listed filesystem view, uid and isolation), the resource limits and memory plan
of a run (:meth:`LocalSandbox.rlimits`, :meth:`LocalSandbox.memory_plan`: in cgroup mode
the process gets a cgroup of its own, removed when it stops), the scrubbed environment and
the ``python_path`` binds — and starts the launcher with pipes on standard input, output
and error, leading its own process group. :meth:`SandboxedProcess.stop` kills that group;
:meth:`LocalSandbox.close` kills it too.

Both launchers die with the thread that started them (bubblewrap's ``--die-with-parent``,
``PR_SET_PDEATHSIG`` in the namespaces launcher): call :func:`start_process` from a thread
that lives as long as the process (``tools.builtin.modules.SandboxWorkerLauncher`` keeps
one thread for that).

Differences from ``run``: no wall-clock limit (the caller bounds each exchange; the CPU
limit still applies over the process's life), no workspace, Python only, and by default a
seccomp filter that refuses every ``socket()`` (``AF_UNIX`` included): a program that only
talks over the pipes it was given cannot reach any socket on the host.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import os
import shutil
import signal
import subprocess
import tempfile
import threading
from collections.abc import Sequence
from pathlib import Path

from tools._procgroup import kill_group, wait_group_gone
from tools.builtin.code_executor._launch import Launch, Launcher
from tools.builtin.code_executor._memory import CgroupParent, MemoryPlan
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
        memory: How its memory is bounded (``mode``, ``budget_mb``, ...).
    """

    def __init__(
        self,
        popen: subprocess.Popen[bytes],
        *,
        sandbox: LocalSandbox,
        workdir: Path,
        status_r: int,
        launcher: str,
        memory: MemoryPlan,
        cgroup: str | None = None,
    ) -> None:
        if popen.stdin is None or popen.stdout is None or popen.stderr is None:
            raise ValueError("SandboxedProcess needs a process started with three pipes")
        self._popen = popen
        self._sandbox = sandbox
        self._workdir = workdir
        self._status_r = status_r
        self._cgroup = cgroup
        self._status = bytearray()
        self._stopped = False
        self._lock = threading.Lock()
        self.pid = popen.pid
        self.stdin = popen.stdin.fileno()
        self.stdout = popen.stdout.fileno()
        self.stderr = popen.stderr.fileno()
        self.launcher = launcher
        self.memory = memory
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
        if self._cgroup is not None:
            CgroupParent.remove(self._cgroup)
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


def _socketless(launcher: Launcher) -> Launcher:
    """``launcher`` with a seccomp filter that also refuses ``socket()`` of every family
    and ``connect`` (only when the sandbox loads a filter at all)."""
    if launcher.seccomp is None:
        return launcher
    try:
        program = compile_filter(allow_network=not launcher.isolate_network, deny_sockets=True)
    except SeccompUnavailableError as exc:  # the sandbox compiled its own: unlikely
        msg = f"The sandbox could not build the socket-free seccomp filter ({exc})."
        raise ToolError(msg, trips_breaker=True) from exc
    return dataclasses.replace(launcher, seccomp=program)


def start_process(
    sandbox: LocalSandbox,
    code: str,
    *,
    python_path: Sequence[str | os.PathLike[str]] = (),
    deny_sockets: bool = True,
) -> SandboxedProcess:
    """Start ``code`` (Python) in ``sandbox`` and leave it running, with pipes.

    Call it from a thread that lives as long as the process (see the module docstring).

    Args:
        sandbox: The sandbox whose containment applies.
        code: The program's source.
        python_path: Host directories bound read-only and put first on ``sys.path``.
        deny_sockets: Load a seccomp filter that refuses ``socket()`` of every family
            (when the sandbox loads seccomp filters).

    Raises:
        InvalidArgumentsError: Oversized code, an unusable ``python_path`` entry.
        ToolError: The sandbox is closed, can't contain programs here, or could not
            start the launcher.
    """
    argv = sandbox._check(code, "python", None)
    setup, launcher = sandbox._set_up()
    sandbox._check_interpreter(argv[0], "python")
    memory = sandbox.memory_plan("python")
    if deny_sockets:
        launcher = _socketless(launcher)
    workdir = Path(tempfile.mkdtemp(prefix="tooldeck-proc-", dir=sandbox._temp_root))
    cgroup: str | None = None
    try:
        program = sandbox._prepare(workdir, code, "python", None)
        run_plan = plan(str(workdir), workspace=None, python_path=python_path, other_uid=sandbox._uid is not None)
        cgroup, memory = sandbox._run_cgroup(setup, workdir, memory, "python")
        launch = launcher.prepare(
            run_plan.command(argv, str(program), "python"),
            workdir=str(workdir), run_plan=run_plan,
            rlimits=sandbox.rlimits(memory), env=run_plan.environment(sandbox._env(workdir), "python"),
            disk_mb=sandbox.limits.disk_mb, cgroup=cgroup,
        )  # fmt: skip
        popen = _spawn(launch)
    except BaseException:
        if cgroup is not None:
            CgroupParent.remove(cgroup)
        shutil.rmtree(workdir, ignore_errors=True)
        raise
    process = SandboxedProcess(
        popen, sandbox=sandbox, workdir=workdir, status_r=launch.status_r, launcher=launch.kind,
        memory=memory, cgroup=cgroup,
    )  # fmt: skip
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


def _spawn(launch: Launch) -> subprocess.Popen[bytes]:
    try:
        return subprocess.Popen(
            launch.argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            pass_fds=tuple(launch.pass_fds),
            start_new_session=True,
            cwd="/",
            env=launch.env,
            **launch.popen,
        )
    except OSError as exc:
        os.close(launch.status_r)
        raise ToolError(f"The sandbox could not start: {type(exc).__name__}: {exc}.", trips_breaker=True) from exc
    finally:
        launch.started()  # the status pipe must see EOF when the child's copy closes
