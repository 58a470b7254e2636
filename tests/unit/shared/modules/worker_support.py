"""A plain subprocess launcher for the worker tests of the ``shared`` layer (tests only).

It runs the real worker program, protocol and supervisor, without the sandbox (which lives
in the tool layer and is exercised by ``tests/integration/modules``): *not* isolated, so it
only ever runs the modules these tests write.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field

from shared.modules import ModuleWorkers, NoEgress, WorkerLimits
from shared.modules.egress import ModuleEgress


@dataclass
class SubprocessWorker:
    """A worker started as a plain subprocess in its own process group."""

    popen: subprocess.Popen[bytes]
    stdin: int = field(init=False)
    stdout: int = field(init=False)
    stderr: int = field(init=False)

    def __post_init__(self) -> None:
        assert self.popen.stdin and self.popen.stdout and self.popen.stderr
        self.stdin = self.popen.stdin.fileno()
        self.stdout = self.popen.stdout.fileno()
        self.stderr = self.popen.stderr.fileno()

    @property
    def pid(self) -> int:
        return self.popen.pid

    def poll(self) -> int | None:
        return self.popen.poll()

    def stop(self) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.popen.pid, signal.SIGKILL)
        self.popen.wait(timeout=30)
        for stream in (self.popen.stdin, self.popen.stdout, self.popen.stderr):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()

    def exit_reason(self) -> str:
        code = self.popen.poll()
        return "running" if code is None else f"exit status {code}"


@dataclass
class SubprocessLauncher:
    """Starts the worker program with this interpreter, ``-I -S``, an empty environment."""

    launched: list[SubprocessWorker] = field(default_factory=list)

    def launch(self, *, program: str, python_path: Sequence[str]) -> SubprocessWorker:
        prelude = f"import sys; sys.path[0:0] = {list(python_path)!r}\n"
        popen = subprocess.Popen(
            [sys.executable, "-I", "-S", "-B", "-u", "-c", prelude + program],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
            env={"LANG": "C.UTF-8"},
            cwd="/",
        )
        worker = SubprocessWorker(popen)
        self.launched.append(worker)
        return worker


def subprocess_workers(egress: ModuleEgress | None = None, limits: WorkerLimits | None = None) -> ModuleWorkers:
    """Workers started as plain subprocesses (the real protocol and supervisor)."""
    return ModuleWorkers(launcher=SubprocessLauncher(), egress=egress or NoEgress(), limits=limits)
