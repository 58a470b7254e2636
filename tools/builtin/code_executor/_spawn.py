"""One launcher process: started in its own group, read until it ends, nothing left behind."""

from __future__ import annotations

import contextlib
import os
import subprocess
import threading
from dataclasses import dataclass
from pathlib import Path

from tools._procgroup import interrupts_deferred, kill_group, wait_group_gone
from tools.builtin.code_executor._capture import Capture, collect
from tools.builtin.code_executor._launch import Launch
from tools.builtin.code_executor.sandbox import SandboxLimits
from tools.errors import ToolError

#: Seconds to wait for a killed run's processes to be torn down before returning.
GROUP_TEARDOWN_S = 2.0


@dataclass
class Spawn:
    """Runs a :class:`Launch` with the working dir's ``.stdin`` as standard input.

    ``running`` (guarded by ``lock``) holds the process groups in flight, so that the
    sandbox's ``close()`` can kill them.
    """

    workdir: Path
    deadline: float
    limits: SandboxLimits
    lock: threading.Lock
    running: set[int]

    def run(self, launch: Launch) -> tuple[Capture, int]:
        """Start the process and collect its output and status until it ends.

        Takes ownership of the launch's descriptors (closed here).

        Raises:
            ToolError: The process could not be started (trips the breaker).
        """
        status_r = launch.status_r
        try:
            # No interrupt between starting the launcher and listing it for close().
            with interrupts_deferred():
                with (self.workdir / ".stdin").open("rb") as stdin_file:
                    proc = subprocess.Popen(
                        launch.argv,
                        stdin=stdin_file,
                        stdout=subprocess.PIPE,
                        stderr=subprocess.PIPE,
                        pass_fds=tuple(launch.pass_fds),
                        start_new_session=True,
                        cwd="/",
                        env=launch.env,
                        **launch.popen,
                    )
                with self.lock:
                    self.running.add(proc.pid)
        except OSError as exc:
            os.close(status_r)
            msg = f"The sandbox could not start: {type(exc).__name__}: {exc}."
            raise ToolError(msg, trips_breaker=True) from exc
        finally:
            launch.started()
        try:
            capture = collect(
                proc,
                (proc.stdout.fileno(), proc.stderr.fileno()),  # type: ignore[union-attr]
                status_r,
                deadline=self.deadline,
                max_output=self.limits.max_output_bytes,
                max_drain=self.limits.max_drain_bytes,
            )
        finally:
            kill_group(proc.pid)
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=10)
            # Nothing of the run may outlive the call: wait for the killed group to be gone.
            wait_group_gone(proc.pid, timeout=GROUP_TEARDOWN_S)
            with self.lock:
                self.running.discard(proc.pid)
            os.close(status_r)
            for stream in (proc.stdout, proc.stderr):
                if stream is not None:
                    stream.close()
        return capture, proc.returncode
