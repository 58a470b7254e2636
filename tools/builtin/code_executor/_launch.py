"""One program's launch in the sandbox, for either launcher, and how to read its report.

A :class:`Launcher` holds what every run of a :class:`~.local.LocalSandbox` shares: which
launcher, the filesystem :class:`~._layout.Layout`, the uid, the isolation switches, the
seccomp program and the helper executables. :meth:`Launcher.prepare` turns one program
(an argv whose last item is the program file) into a :class:`Launch`: the command line,
the environment, the descriptors the child must inherit, the ``subprocess.Popen``
keywords that start it as the sandbox uid, and the read end of its status pipe. The
caller starts it however it likes (:class:`~._spawn.Spawn` reads a one-shot run to the
end; a long-lived worker with stdin/stdout pipes starts the same launch with
``Popen(launch.argv, stdin=PIPE, stdout=PIPE, pass_fds=launch.pass_fds, env=launch.env,
start_new_session=True, **launch.popen)`` and calls :meth:`Launch.started`), and reads
the outcome with :meth:`Launcher.outcome`.

Both launchers die with the thread that started them (bubblewrap's ``--die-with-parent``,
``PR_SET_PDEATHSIG`` in the namespaces launcher), and the whole sandbox with them: start
a long-lived worker from a thread that lives as long as it (the main thread, say).
"""

from __future__ import annotations

import marshal
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from tools.builtin.code_executor import _bwrap
from tools.builtin.code_executor._capture import Capture
from tools.builtin.code_executor._layout import Layout
from tools.builtin.code_executor._memory import enter_argv
from tools.builtin.code_executor._outcome import Outcome, from_bwrap, from_launcher
from tools.builtin.code_executor._runplan import RunPlan
from tools.errors import ToolError


@dataclass(frozen=True)
class _Run:
    command: list[str]
    workdir: str
    plan: RunPlan
    rlimits: dict[str, int]
    env: dict[str, str]
    disk_mb: int
    layout: Layout


@dataclass
class Launch:
    """A prepared process: start it with ``Popen(argv, env=env, pass_fds=pass_fds,
    start_new_session=True, **popen)``, then call :meth:`started`.

    Attributes:
        kind: ``"bwrap"`` or ``"namespaces"``.
        argv: The command line.
        env: The launcher's environment (the program's own is inside the launch).
        pass_fds: Descriptors the child inherits; this process's copies are closed by
            :meth:`started` (the status pipe must see EOF when the child's copy closes).
        status_r: Read end of the status pipe (the caller closes it).
        popen: ``user``/``group``/``extra_groups`` to start it as another user, or empty.
    """

    kind: str
    argv: list[str]
    env: dict[str, str]
    pass_fds: list[int]
    status_r: int
    popen: dict[str, Any] = field(default_factory=dict)

    def started(self) -> None:
        """Close this process's copies of the child's descriptors (call once, started or not)."""
        for fd in self.pass_fds:
            os.close(fd)
        self.pass_fds = []


@dataclass(frozen=True)
class Launcher:
    """What every run of one sandbox shares; see the module docstring.

    Attributes:
        kind: ``"bwrap"`` or ``"namespaces"``.
        layout: The filesystem view.
        uid: The uid programs run as (this process is root), or None (its own uid).
        isolate_network: An empty network namespace.
        isolate_filesystem: The private, read-only view (else the host, read-write).
        require_network: Refuse to run without network isolation.
        strict: Refuse to run when containment can't be established.
        seccomp: The compiled seccomp program, or None.
        bwrap: The bwrap executable (bwrap launcher).
        prlimit: util-linux ``prlimit`` (bwrap launcher).
        setpriv: util-linux ``setpriv`` (root entering a run cgroup before bwrap).
        python_argv: The namespaces launcher's argv prefix (its config is appended).
    """

    kind: str
    layout: Layout
    uid: int | None
    isolate_network: bool
    isolate_filesystem: bool
    require_network: bool
    strict: bool
    seccomp: bytes | None
    bwrap: str
    prlimit: str
    setpriv: str | None
    python_argv: tuple[str, ...]

    def prepare(
        self,
        command: Sequence[str],
        *,
        workdir: str,
        run_plan: RunPlan,
        rlimits: Mapping[str, int],
        env: Mapping[str, str],
        disk_mb: int,
        cgroup: str | None = None,
    ) -> Launch:
        """The :class:`Launch` of ``command`` (its last item is the program file, which
        is placed in ``workdir``, a private tmpfs of ``disk_mb``, inside the sandbox).

        Args:
            command: The program's argv.
            workdir: The run's working directory (host path, also its sandbox path).
            run_plan: The program's working directory and the run's binds.
            rlimits: The program's resource limits (``_launcher``'s key names).
            env: The program's whole environment.
            disk_mb: Size of the working directory's tmpfs.
            cgroup: A run cgroup to enter before anything starts, or None.

        Raises:
            ToolError: The launch's inputs could not be prepared (trips the breaker).
        """
        run = _Run(list(command), workdir, run_plan, dict(rlimits), dict(env), disk_mb, self.layout.present())
        launch = self._bwrap_launch(run) if self.kind == "bwrap" else self._launcher_launch(run)
        if cgroup is not None:
            if launch.popen and self.setpriv is not None:  # root: enter as root, then drop
                drop = [self.setpriv, f"--reuid={self.uid}", f"--regid={self.uid}", "--clear-groups", "--"]
                launch.argv, launch.popen = [*drop, *launch.argv], {}
            launch.argv = [*enter_argv(cgroup), *launch.argv]
        return launch

    def _bwrap_launch(self, run: _Run) -> Launch:
        inner = [*_bwrap.prlimit_argv(self.prlimit, run.rlimits), *run.command]
        fds: list[int] = []
        try:
            program_fd = os.open(run.command[-1], os.O_RDONLY | os.O_CLOEXEC)
            fds.append(program_fd)
            seccomp_fd = None
            if self.seccomp is not None:
                seccomp_fd = os.memfd_create("tooldeck-seccomp")
                fds.append(seccomp_fd)
                os.write(seccomp_fd, self.seccomp)
                os.lseek(seccomp_fd, 0, os.SEEK_SET)
            status_r, status_w = os.pipe()
            fds.append(status_w)
        except OSError as exc:
            for fd in fds:
                os.close(fd)
            msg = f"The sandbox could not prepare bubblewrap's inputs ({type(exc).__name__}: {exc})."
            raise ToolError(msg, trips_breaker=True) from exc
        argv = _bwrap.bwrap_argv(
            self.bwrap, command=inner, cwd=run.workdir, layout=run.layout, disk_mb=run.disk_mb,
            program_fd=program_fd, status_fd=status_w, seccomp_fd=seccomp_fd,
            isolate_network=self.isolate_network, isolate_filesystem=self.isolate_filesystem,
            binds=run.plan.binds, chdir=run.plan.cwd,
        )  # fmt: skip
        user = {"user": self.uid, "group": self.uid, "extra_groups": []} if self.uid is not None else {}
        return Launch("bwrap", argv, run.env, fds, status_r, user)

    def _launcher_launch(self, run: _Run) -> Launch:
        status_r, status_w = os.pipe()
        layout = run.layout
        config: dict[str, Any] = {
            "argv": run.command,
            "workdir": run.workdir,
            "cwd": run.plan.cwd,
            "binds": [list(bind) for bind in run.plan.binds],
            "env": run.env,
            "rlimits": run.rlimits,
            "uid": self.uid,
            "gid": self.uid,
            "isolate_net": self.isolate_network,
            "require_net": self.require_network,
            "isolate_fs": self.isolate_filesystem,
            "strict": self.strict,
            "disk_mb": run.disk_mb,
            "system": list(layout.system),
            "links": [list(link) for link in layout.links],
            "mounts": [list(item) for item in layout.mounts()],
            "seccomp": self.seccomp,
            "status_fd": status_w,
            "parent": os.getpid(),
        }
        argv = [*self.python_argv, marshal.dumps(config).hex()]
        return Launch("namespaces", argv, {"LANG": "C.UTF-8"}, [status_w], status_r)

    def outcome(self, launch: Launch, capture: Capture, returncode: int) -> Outcome:
        """What held and how the program ended, from the launch's status report."""
        if launch.kind == "bwrap":
            return from_bwrap(
                capture,
                returncode,
                network=self.isolate_network,
                filesystem=self.isolate_filesystem,
                seccomp=self.seccomp is not None,
            )
        return from_launcher(capture, returncode, isolate_fs=self.isolate_filesystem)
