"""LocalSandbox: run code in a separate, limited, isolated process on this machine.

Every run, whether the application runs as root or as an ordinary user (see
``docs/compute.md`` for exactly what each mode guarantees):

- **Launcher**: bubblewrap when it is installed and works here (:mod:`._bwrap`), else the
  namespaces launcher (:mod:`._launcher`). When neither can establish containment the
  run is refused with the reason, unless the developer passes
  ``allow_weaker_isolation=True``.
- **Filesystem**: an allow-list of the host, read-only and ``nosuid`` (``/usr``, ``/etc``,
  ``/bin``, ``/lib*``, the interpreters' installations, ``readable_dirs``), nothing else:
  no ``/run``, ``/var/run``, ``/home``, ``/sys``; ``/tmp``, ``/var/tmp``, ``/dev/shm``
  private per run; data directories (``hidden_dirs``) inside the bound trees hidden; as an
  ordinary user, what only its own uid or groups may read there masked; a private tmpfs
  working directory (:mod:`._layout`, :mod:`._masks`).
- **Processes**: a PID namespace (nothing outlives the call) and a per-run process cap:
  ``RLIMIT_NPROC`` set inside a user namespace created for this run (the kernel counts
  processes per user namespace and uid, so runs don't share the cap).
- **Privileges**: as root the program runs as ``sandbox_uid`` (``nobody``) with no
  supplementary groups; ``PR_SET_NO_NEW_PRIVS`` and ``nosuid`` make setuid programs
  harmless; a seccomp filter (:mod:`._seccomp`) where libseccomp is installed.
- **Network**: an empty network namespace; no socket but ``AF_UNIX`` stream sockets, and
  no ``connect``: no host UNIX socket is reachable.
- **Resources**: CPU, file size, open files, wall clock, output; memory per run, all
  processes together (a cgroup where one is delegated, else a divided address-space
  budget: :mod:`._memory`).
- **Environment**: scrubbed; Python runs with ``-I -S -B -u``.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Literal

from tools._procgroup import kill_group
from tools.builtin.code_executor._launch import Launcher
from tools.builtin.code_executor._layout import (
    Layout,
    build_layout,
    home_of_current_user,
    reachable_by_others,
    revealing,
    sandbox_executable,
    unreachable_by_others,
)
from tools.builtin.code_executor._memory import BudgetTooSmallError, CgroupParent, MemoryPlan, plan_memory
from tools.builtin.code_executor._outcome import Outcome, build_result
from tools.builtin.code_executor._runplan import plan
from tools.builtin.code_executor._setup import AUTO, SEARCH_PATH, Options, Setup, set_up, userns_hint
from tools.builtin.code_executor._spawn import Spawn
from tools.builtin.code_executor._workspace import Snapshot, WorkspaceTooLargeError, stage, sync_back
from tools.builtin.code_executor.sandbox import SandboxLimits, SandboxResult, WorkspaceChanges
from tools.errors import InvalidArgumentsError, ToolError

logger = logging.getLogger(__name__)

_LAUNCHER = Path(__file__).with_name("_launcher.py")
_NOBODY = 65534
_FILE_NAMES = {"python": "main.py", "bash": "main.sh", "sh": "main.sh", "node": "main.js"}
_MIB = 1024 * 1024

LauncherChoice = Literal["auto", "bwrap", "namespaces"]
#: The namespaces launcher's short names for what it could not set up.
_MISSING = {
    "net": "a network namespace",
    "pid": "a PID namespace",
    "userns": "a user namespace (the per-run process cap)",
    "fs": "a mount namespace (the private, read-only filesystem)",
}


def world_executable(path: str) -> bool:
    """Whether any user may run ``path``: every directory on the way is ``o+x``, the file
    ``o+rx`` (symlinks resolved). The sandbox's unprivileged uid needs exactly that."""
    try:
        real = Path(path).resolve(strict=True)
        if real.stat().st_mode & 0o005 != 0o005:
            return False
        return all(parent.stat().st_mode & 0o001 for parent in real.parents)
    except OSError:
        return False


def world_executable_dir(path: Path) -> bool:
    """Whether every directory above ``path`` lets others through (``o+x``)."""
    try:
        return all(parent.stat().st_mode & 0o001 for parent in path.parents)
    except OSError:
        return False


def default_interpreters(python: str | None = None) -> dict[str, list[str]]:
    """The interpreters found on this machine: Python always, bash/sh/node when present.

    Args:
        python: The Python executable to run code with. Default: the real interpreter
            behind the current one (a venv's ``bin/python`` is resolved to its base
            interpreter: the sandbox runs Python with ``-I -S``) if any user may execute
            it (as root the sandbox runs programs as an unprivileged uid), else the system
            ``python3``.

    Returns:
        Language name -> argv prefix; the code file's path is appended.
    """
    if python is None:
        system = [shutil.which(n, path=SEARCH_PATH) or "" for n in ("python3", "python")]
        candidates = [sandbox_executable(sys.executable), *system]
        python = next((c for c in candidates if c and world_executable(c)), candidates[0])
    found: dict[str, list[str]] = {"python": [python, "-I", "-S", "-B", "-u"]}
    for name, extra in (("bash", ["--noprofile", "--norc"]), ("sh", []), ("node", [])):
        path = shutil.which(name, path=SEARCH_PATH)
        if path:
            found[name] = [path, *extra]
    return found


class LocalSandbox:
    """A :class:`~tools.builtin.code_executor.sandbox.SandboxClient` using local processes.

    Args:
        limits: Resource limits for every run (``timeout_seconds`` is the default and the
            maximum a caller may ask for).
        interpreters: Language -> argv prefix; default :func:`default_interpreters`.
        isolate_network: Put the program in an empty network namespace. ``False`` is an
            explicit choice to give programs the host's network (``AF_UNIX`` sockets are
            refused then, so host UNIX sockets stay out of reach).
        isolate_filesystem: Give the program the private, read-only filesystem view.
            ``False`` is an explicit choice to let programs see and write the host
            filesystem (as far as their uid may).
        require_network_isolation: Refuse to run when the network can't be isolated, even
            with ``allow_weaker_isolation``.
        sandbox_uid: The uid (and gid) programs run as when this process is root. ``None``
            keeps root, which needs ``allow_weaker_isolation=True``.
        temp_root: Where working directories are created (default: the system temp dir).
        launcher_python: Python used for the namespaces launcher process.
        launcher: ``"auto"`` (bubblewrap when installed and working here, else the
            namespaces launcher), ``"bwrap"`` or ``"namespaces"``.
        bwrap: The bwrap executable (default: ``bwrap`` on the standard search path).
        hidden_dirs: The application's data directories (registries, caches, databases,
            credentials). They are not in the view at all unless a bound tree contains
            them (``/etc/myapp``): then each is an empty, read-only directory.
        readable_dirs: More host directories programs may read (bound read-only at their
            own path), beside the system ones (``/usr``, ``/etc``, ``/bin``, ``/lib*``).
            As root, each must be reachable by ``sandbox_uid``.
        allow_weaker_isolation: Run even when containment can't be established here
            (no user namespaces, ...), with whatever holds; the result's ``isolation``
            says what did. Default: refuse with the reason.
        seccomp: Load the seccomp filter (when libseccomp is installed).
        cgroup: How a run's memory is bounded, all its processes together: ``"auto"``
            (a cgroup per run under this process's own cgroup v2, when it is delegated to
            it; else an address-space budget divided over the run's process cap), a
            delegated cgroup v2 directory to create run cgroups in, or None (always the
            divided budget). The result's ``isolation["memory_mode"]`` says which held.

    Raises:
        ValueError: An unknown launcher; root without a uid drop; as root, a
            ``readable_dirs`` entry the sandbox uid can't reach.
    """

    def __init__(
        self,
        *,
        limits: SandboxLimits | None = None,
        interpreters: Mapping[str, Sequence[str]] | None = None,
        isolate_network: bool = True,
        isolate_filesystem: bool = True,
        require_network_isolation: bool = False,
        sandbox_uid: int | None = _NOBODY,
        temp_root: str | None = None,
        launcher_python: str = sys.executable,
        launcher: LauncherChoice = "auto",
        bwrap: str | None = None,
        hidden_dirs: Sequence[str | os.PathLike[str]] = (),
        readable_dirs: Sequence[str | os.PathLike[str]] = (),
        allow_weaker_isolation: bool = False,
        seccomp: bool = True,
        cgroup: str | os.PathLike[str] | None = AUTO,
    ) -> None:
        if launcher not in ("auto", "bwrap", "namespaces"):
            msg = f"LocalSandbox(launcher={launcher!r}): use 'auto', 'bwrap' or 'namespaces'"
            raise ValueError(msg)
        root = os.geteuid() == 0
        if root and sandbox_uid is None and not allow_weaker_isolation:
            msg = (
                "LocalSandbox(sandbox_uid=None) runs programs as root; pass allow_weaker_isolation=True to accept that"
            )
            raise ValueError(msg)
        self.limits = limits or SandboxLimits()
        self._uid = sandbox_uid if root else None
        layout = self._layout_for(interpreters, hidden_dirs, readable_dirs)
        # Import the launcher (its bytecode is cached) rather than run it as a script.
        stub = f"import sys; sys.path[0:0] = [{str(_LAUNCHER.parent)!r}]; import _launcher; "
        self._options = Options(
            launcher=launcher,
            layout=layout,
            uid=self._uid,
            isolate_network=isolate_network,
            isolate_filesystem=isolate_filesystem,
            require_network=require_network_isolation,
            strict=not allow_weaker_isolation,
            seccomp=seccomp,
            bwrap=bwrap if bwrap is not None else shutil.which("bwrap", path=SEARCH_PATH),
            python_argv=(launcher_python, "-I", "-S", "-c", stub + "_launcher.main()"),
            cgroup=None if cgroup is None else os.fspath(cgroup),
        )
        self._temp_root = temp_root
        self._lock = threading.Lock()
        self._running: set[int] = set()
        self._closed = False
        self._setup: Setup | None = None

    def _layout_for(
        self,
        interpreters: Mapping[str, Sequence[str]] | None,
        hidden_dirs: Sequence[str | os.PathLike[str]],
        readable_dirs: Sequence[str | os.PathLike[str]],
    ) -> Layout:
        base = build_layout(
            hidden_dirs=[os.fspath(d) for d in hidden_dirs],
            readable_dirs=[os.fspath(d) for d in readable_dirs],
            disk_mb=self.limits.disk_mb,
            home=home_of_current_user(),
        )
        if self._uid is not None and (closed := unreachable_by_others(base)):
            msg = f"LocalSandbox(readable_dirs=...): uid {self._uid} can't reach {closed[0]}; make it o+x or drop it"
            raise ValueError(msg)
        source = default_interpreters() if interpreters is None else interpreters
        self._interpreters = {
            name: [sandbox_executable(argv[0], layout=base), *argv[1:]] for name, argv in source.items()
        }
        layout = revealing(base, [argv[0] for argv in self._interpreters.values()])
        return reachable_by_others(layout) if self._uid is not None else layout

    def languages(self) -> list[str]:
        """The languages this sandbox can run, sorted."""
        return sorted(self._interpreters)

    def run(
        self,
        code: str,
        *,
        language: str = "python",
        stdin: str | None = None,
        timeout_seconds: float | None = None,
        workspace: str | os.PathLike[str] | None = None,
        writable: bool = False,
        python_path: Sequence[str | os.PathLike[str]] = (),
    ) -> SandboxResult:
        """Run ``code`` in a fresh process and working directory and report the outcome.

        Hostile code is contained by the limits above: an infinite loop or a fork bomb
        ends at the timeout (``timed_out``), forks fail past the per-run process cap,
        allocations past the run's memory fail inside the program (``MemoryError``), huge
        files stop at the file-size limit (``SIGXFSZ``, or ``EFBIG`` in Python), floods of
        output are cut (``truncated``) and killed past ``max_drain_bytes``, background
        processes are killed when the call ends.

        Args:
            code: Source code (at most ``limits.max_code_bytes`` UTF-8 bytes; NUL bytes
                are rejected).
            language: One of :meth:`languages`.
            stdin: Text fed to the program's standard input (default: empty).
            timeout_seconds: Wall-clock limit, capped at ``limits.timeout_seconds``.
            workspace: A host directory the program works in: a copy of it (at most
                ``limits.workspace_mb`` and ``limits.workspace_files``) owned by the
                program's uid is its working directory (see ``docs/compute.md``,
                "Workspaces").
            writable: Write the program's changes to the copy back to ``workspace``
                (path-confined; the result's ``workspace`` lists them).
            python_path: Host directories bound read-only and put first on ``sys.path``
                (``PYTHONPATH`` for other languages).

        Raises:
            InvalidArgumentsError: Unknown language, oversized code or stdin, a
                workspace that is not a directory or too large, an unusable
                ``python_path`` entry.
            ToolError: The sandbox is closed, can't establish containment here, or could
                not start the program (these trip the tool's circuit breaker; a program
                that fails or hits a limit is a result, not an error).
        """
        argv = self._check(code, language, stdin)
        limit = self.limits.timeout_seconds
        timeout = limit if timeout_seconds is None else max(0.1, min(timeout_seconds, limit))
        if self._options.require_network and not self._options.isolate_network:
            msg = "The code was not run: the sandbox requires network isolation, which is turned off."
            raise ToolError(msg, trips_breaker=True)
        setup, launcher = self._set_up()
        self._check_interpreter(argv[0], language)
        memory = self.memory_plan(language)
        try:
            workdir = Path(tempfile.mkdtemp(prefix="tooldeck-sbx-", dir=self._temp_root))
        except OSError as exc:
            msg = f"The sandbox could not create a working directory ({type(exc).__name__})."
            raise ToolError(msg, trips_breaker=True) from exc
        cleanup: list[Path] = []
        cgroup: str | None = None
        try:
            program = self._prepare(workdir, code, language, stdin)
            stage_parent = self._stage_parent(workdir, cleanup) if workspace is not None else workdir
            run_plan = plan(
                str(workdir), workspace=workspace, python_path=python_path,
                other_uid=self._uid is not None, stage_parent=str(stage_parent),
            )  # fmt: skip
            snapshot = self._stage(workspace, stage_parent) if workspace is not None else None
            cgroup, memory = self._run_cgroup(setup, workdir, memory, language)
            launch = launcher.prepare(
                run_plan.command(self._with_flags(argv, memory), str(program), language),
                workdir=str(workdir), run_plan=run_plan,
                rlimits=self.rlimits(memory), env=run_plan.environment(self._env(workdir), language),
                disk_mb=self.limits.disk_mb, cgroup=cgroup,
            )  # fmt: skip
            started = time.monotonic()
            capture, returncode = self._spawn(workdir, started + timeout).run(launch)
            outcome = launcher.outcome(launch, capture, returncode)
            duration_ms = (time.monotonic() - started) * 1000.0
            self._raise_for(outcome, language, closed=self._closed)
            changes = self._sync(snapshot) if snapshot is not None and writable else None
        finally:
            if cgroup is not None:
                CgroupParent.remove(cgroup)
            for path in (workdir, *cleanup):
                shutil.rmtree(path, ignore_errors=True)
        result = build_result(
            outcome, capture, language=language, limits=self.limits, duration_ms=duration_ms, timeout=timeout,
            uid=self._uid if self._uid is not None else os.geteuid(), memory=memory,
        )  # fmt: skip
        return dataclasses.replace(result, workspace=changes) if changes is not None else result

    # -- for long-lived workers (see _launch): the same launcher, limits and memory plan ---

    def launcher(self) -> Launcher:
        """The :class:`~._launch.Launcher` every run of this sandbox uses (decided at the
        first call): start a long-lived worker with it exactly like a run.

        Raises:
            ToolError: No launcher can contain programs here (see :meth:`run`).
        """
        return self._set_up()[1]

    def memory_plan(self, language: str) -> MemoryPlan:
        """How a ``language`` process's memory is bounded here (see :mod:`._memory`).

        Raises:
            ToolError: The budget can't give that language two processes here.
        """
        setup, _ = self._set_up()
        limits = self.limits
        try:
            return plan_memory(limits.memory_mb, limits.max_processes, language, cgroup=setup.cgroup is not None)
        except BudgetTooSmallError as exc:
            msg = (
                f"The code was not run: {exc}. Fix: raise SandboxLimits.memory_mb, or delegate a cgroup v2 "
                "to this process (see docs/compute.md, 'Memory')."
            )
            raise ToolError(msg, trips_breaker=True) from exc

    def _run_cgroup(
        self, setup: Setup, workdir: Path, memory: MemoryPlan, language: str
    ) -> tuple[str | None, MemoryPlan]:
        """The run's own cgroup (cgroup mode), or the address-space plan when it can't be made."""
        if setup.cgroup is None:
            return None, memory
        try:
            return setup.cgroup.create(workdir.name, memory), memory
        except OSError as exc:
            logger.warning("sandbox: no cgroup for this run (%s); using the address-space budget", exc.strerror)
            limits = self.limits
            try:
                return None, plan_memory(limits.memory_mb, limits.max_processes, language, cgroup=False)
            except BudgetTooSmallError as budget:
                raise ToolError(f"The code was not run: {budget}.", trips_breaker=True) from budget

    @staticmethod
    def _with_flags(argv: list[str], memory: MemoryPlan) -> list[str]:
        """``argv`` with the memory plan's interpreter options (node's, for a node binary)."""
        if memory.flags and os.path.basename(argv[0]).startswith("node"):
            return [argv[0], *memory.flags, *argv[1:]]
        return argv

    def _stage_parent(self, workdir: Path, cleanup: list[Path]) -> Path:
        """Where the workspace copy goes: the working dir, unless (as root) the sandbox uid
        can't reach it (bubblewrap, running as that uid, must find the copy by path)."""
        if self._uid is None or world_executable_dir(workdir):
            return workdir
        try:
            parent = Path(tempfile.mkdtemp(prefix="tooldeck-ws-"))
            cleanup.append(parent)
            os.chown(parent, self._uid, self._uid)
        except OSError as exc:
            msg = f"The sandbox could not create a directory for the workspace copy ({type(exc).__name__})."
            raise ToolError(msg, trips_breaker=True) from exc
        return parent

    def _stage(self, workspace: str | os.PathLike[str], parent: Path) -> Snapshot:
        limits = self.limits
        try:
            return stage(
                workspace, str(parent), uid=self._uid,
                max_bytes=limits.workspace_mb * _MIB, max_files=limits.workspace_files,
            )  # fmt: skip
        except InvalidArgumentsError:
            raise
        except OSError as exc:
            where = f" ({exc.filename})" if exc.filename else ""
            msg = f"The workspace {os.fspath(workspace)!r} could not be copied into the sandbox: {exc.strerror}{where}."
            raise InvalidArgumentsError(msg) from exc

    def _sync(self, snapshot: Snapshot) -> WorkspaceChanges:
        limits = self.limits
        try:
            report = sync_back(snapshot, max_bytes=limits.workspace_mb * _MIB, max_files=limits.workspace_files)
        except WorkspaceTooLargeError as exc:
            return WorkspaceChanges(error=f"nothing was written back: {exc}")
        except OSError as exc:
            return WorkspaceChanges(error=f"nothing was written back: {type(exc).__name__}: {exc.strerror or exc}")
        if report.written or report.deleted or report.skipped:
            logger.info(
                "sandbox: workspace %s: %d written, %d deleted, %d skipped",
                snapshot.root, len(report.written), len(report.deleted), len(report.skipped),
            )  # fmt: skip
        return WorkspaceChanges(
            written=tuple(report.written), deleted=tuple(report.deleted), skipped=tuple(report.skipped)
        )

    def close(self) -> None:
        """Kill runs in progress and refuse new ones. Idempotent."""
        with self._lock:
            self._closed = True
            running = list(self._running)
        for pgid in running:
            kill_group(pgid)

    def __enter__(self) -> LocalSandbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- checks -------------------------------------------------------------------------

    def _check(self, code: str, language: str, stdin: str | None) -> list[str]:
        if self._closed:
            msg = "The code sandbox is shut down; code can't be run any more."
            raise ToolError(msg, trips_breaker=True)
        if language not in self._interpreters:
            msg = f"Language {language!r} is not available. Use one of: {self.languages()}."
            raise InvalidArgumentsError(msg)
        if "\x00" in code:
            msg = "The code contains NUL bytes; send plain source text."
            raise InvalidArgumentsError(msg)
        if len(code.encode("utf-8", "surrogatepass")) > self.limits.max_code_bytes:
            msg = f"The code is longer than {self.limits.max_code_bytes} bytes; send less code."
            raise InvalidArgumentsError(msg)
        if stdin is not None and len(stdin.encode("utf-8", "surrogatepass")) > (self.limits.max_stdin_bytes):
            msg = f"stdin is longer than {self.limits.max_stdin_bytes} bytes."
            raise InvalidArgumentsError(msg)
        return list(self._interpreters[language])

    def _check_interpreter(self, path: str, language: str) -> None:
        usable = world_executable(path) if self._uid is not None else os.access(path, os.X_OK)
        if not usable:
            who = f"uid {self._uid}" if self._uid is not None else "this user"
            msg = (
                f"The sandbox could not start the {language} interpreter: {path} does not exist or "
                f"{who} may not execute it. Configure LocalSandbox(interpreters=...) with an "
                "interpreter every user may run."
            )
            raise ToolError(msg, trips_breaker=True)

    def _raise_for(self, outcome: Outcome, language: str, *, closed: bool) -> None:
        if outcome.refused is not None:
            raise ToolError(self._refusal(outcome.refused, outcome.detail), trips_breaker=True)
        if outcome.start_error is not None and not closed:
            msg = f"The sandbox could not start the {language} interpreter ({outcome.start_error})."
            raise ToolError(msg, trips_breaker=True)

    def _refusal(self, missing: str, detail: str | None) -> str:
        cause = f" ({detail})" if detail else ""
        hint = userns_hint() if "userns" in missing or "user namespace" in missing else ""
        missing = ", ".join(_MISSING.get(item, item) for item in missing.split(","))
        bwrap = (self._setup.bwrap_problem if self._setup is not None else None) or "not tried"
        return (
            f"The code was not run: the sandbox can't contain programs on this machine. Missing: "
            f"{missing}{cause}{'; ' + hint if hint else ''}. bubblewrap: {bwrap}. Fix: install "
            "bubblewrap (>= 0.8) and allow user namespaces for this user, or construct "
            "LocalSandbox(allow_weaker_isolation=True) to run with what this machine allows."
        )

    # -- set-up ---------------------------------------------------------------------------

    def _set_up(self) -> tuple[Setup, Launcher]:
        with self._lock:
            if self._setup is None:
                self._setup = set_up(self._options)
            setup = self._setup
        if setup.launcher is None:
            msg = (
                f"The code was not run: LocalSandbox(launcher='bwrap') can't use bubblewrap here: "
                f"{setup.bwrap_problem}. Install bubblewrap >= 0.8 and util-linux, allow user "
                "namespaces, or use launcher='auto'."
            )
            raise ToolError(msg, trips_breaker=True)
        return setup, setup.launcher

    # -- one process --------------------------------------------------------------------

    def _prepare(self, workdir: Path, code: str, language: str, stdin: str | None) -> Path:
        program = workdir / _FILE_NAMES.get(language, "main.txt")
        try:
            program.write_text(code, encoding="utf-8", errors="surrogateescape")
            stdin_bytes = (stdin or "").encode("utf-8", "surrogateescape")
            (workdir / ".stdin").write_bytes(stdin_bytes)
            if self._uid is not None:
                for path in (workdir, program):
                    os.chown(path, self._uid, self._uid)
        except OSError as exc:
            msg = f"The sandbox could not prepare its working directory ({type(exc).__name__})."
            raise ToolError(msg, trips_breaker=True) from exc
        return program

    def _env(self, workdir: Path) -> dict[str, str]:
        return {
            "PATH": SEARCH_PATH,
            "HOME": str(workdir),
            "TMPDIR": str(workdir),
            "LANG": "C.UTF-8",
            "LC_ALL": "C.UTF-8",
        }

    def rlimits(self, memory: MemoryPlan) -> dict[str, int]:
        """A program's resource limits under ``memory`` (the launchers' key names);
        ``nproc`` is applied only inside a per-run user namespace."""
        return {
            "cpu": self.limits.cpu_seconds,
            "as": memory.process_mb * _MIB,
            "fsize": self.limits.file_size_mb * _MIB,
            "nofile": self.limits.max_open_files,
            "nproc": memory.processes,
            "core": 0,
        }

    def _spawn(self, workdir: Path, deadline: float) -> Spawn:
        return Spawn(workdir=workdir, deadline=deadline, limits=self.limits, lock=self._lock, running=self._running)
