"""The sandbox contract: :class:`SandboxClient`, :class:`SandboxLimits`, :class:`SandboxResult`.

A sandbox runs a piece of source code in some language and reports what happened. The
embedded implementation is :class:`~tools.builtin.code_executor.local.LocalSandbox`
(a separate, limited process on this machine); a remote one (a container service, a
Firecracker VM, ...) implements the same protocol and is handed to
:class:`~tools.builtin.code_executor.tool.CodeExecutorTool` instead.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable


@dataclass(frozen=True, slots=True)
class SandboxLimits:
    """Resource limits for one run. All values are bounded and positive.

    Attributes:
        timeout_seconds: Wall-clock limit; the whole process tree is killed after it.
        cpu_seconds: CPU time limit per process (``RLIMIT_CPU``).
        memory_mb: Memory one run may use, all its processes together, in MiB: a cgroup's
            ``memory.max`` where a cgroup v2 is delegated, else an address-space budget
            divided over the run's processes (each gets ``RLIMIT_AS`` = its share, at least
            64 MiB, 768 MiB for node; the process cap is lowered to fit). See
            ``docs/compute.md``, "Memory".
        file_size_mb: Largest file a process may write (``RLIMIT_FSIZE``), in MiB.
        max_processes: Processes one run may have at once (``RLIMIT_NPROC`` inside a user
            namespace created for the run, so runs don't share it; the program and its
            children count). Lower when the memory budget is divided (see ``memory_mb``).
        max_open_files: Open file descriptors per process (``RLIMIT_NOFILE``).
        disk_mb: Size of each private tmpfs (working dir, /tmp, /var/tmp, /dev/shm), in
            MiB (memory-backed).
        max_output_bytes: Bytes of stdout and of stderr kept in the result; the rest is cut.
        max_drain_bytes: Total output read before the run is killed as runaway.
        max_code_bytes: Largest accepted source code.
        max_stdin_bytes: Largest accepted stdin.
        workspace_mb: Largest workspace a run may be given, and the most a program may
            leave in it, in MiB (the copy lives on the host's temporary directory).
        workspace_files: Most files and directories a workspace may hold, likewise.
    """

    timeout_seconds: float = 10.0
    cpu_seconds: int = 10
    memory_mb: int = 2048
    file_size_mb: int = 16
    max_processes: int = 16
    max_open_files: int = 64
    disk_mb: int = 64
    max_output_bytes: int = 64_000
    max_drain_bytes: int = 8_000_000
    max_code_bytes: int = 200_000
    max_stdin_bytes: int = 1_000_000
    workspace_mb: int = 256
    workspace_files: int = 20_000

    def __post_init__(self) -> None:
        for name in self.__dataclass_fields__:
            value = getattr(self, name)
            if not value > 0:
                msg = f"SandboxLimits.{name} must be positive, got {value!r}"
                raise ValueError(msg)
        if self.max_drain_bytes < self.max_output_bytes:
            msg = "SandboxLimits.max_drain_bytes must be >= max_output_bytes"
            raise ValueError(msg)


@dataclass(frozen=True, slots=True)
class WorkspaceChanges:
    """What a ``writable=True`` run wrote back to its workspace.

    Attributes:
        written: Relative paths created or changed on the host (files, directories,
            symlinks that stay inside the workspace).
        deleted: Relative paths deleted on the host.
        skipped: ``(path, reason)`` of changes not written back: a symlink leaving the
            workspace, a path through a host symlink, a host file changed during the run.
        error: Why nothing was written back (e.g. the program left more than the caps
            allow), else None.
    """

    written: tuple[str, ...] = ()
    deleted: tuple[str, ...] = ()
    skipped: tuple[tuple[str, str], ...] = ()
    error: str | None = None


@dataclass(frozen=True, slots=True)
class SandboxResult:
    """What happened in one run.

    Attributes:
        language: The language the code ran as.
        stdout: Captured standard output (UTF-8, invalid bytes replaced), cut at the limit.
        stderr: Captured standard error, cut likewise.
        exit_code: The process exit code; negative ``-N`` when it died of signal ``N``;
            ``None`` when it never started.
        duration_ms: Wall-clock time of the run.
        timed_out: The wall-clock limit was hit and the process tree killed.
        killed: The program ended by a signal (ours or the kernel's, e.g. a CPU limit).
        truncated: stdout or stderr was cut at ``max_output_bytes``.
        network_isolated: The program ran in its own, empty network namespace.
        signal: Name of the fatal signal (``"SIGKILL"``, ``"SIGXCPU"``, ...), if any.
        note: A one-line explanation for the model when a limit ended the run.
        isolation: What held for this run: ``launcher`` (``"bwrap"``, ``"namespaces"``
            or ``"none"``), ``network``, ``pid_namespace``, ``filesystem`` (read-only
            host, private scratch and hidden directories), ``process_cap`` (the per-run
            process limit, or None), ``no_new_privs``, ``seccomp``, ``uid`` (the uid the
            program ran as), ``memory_mode`` (``"cgroup"``: the run's memory is one
            cgroup's; ``"address-space"``: a budget divided over the process cap;
            ``"per-process"``: no per-run cap held, so only each process is bounded),
            ``memory_mb`` (the run's budget) and ``process_memory_mb`` (each process's
            address-space limit). Other sandboxes may report fewer keys.
        workspace: For a ``writable=True`` run with a workspace, what was written back;
            else None.
    """

    language: str
    stdout: str
    stderr: str
    exit_code: int | None
    duration_ms: float
    timed_out: bool = False
    killed: bool = False
    truncated: bool = False
    network_isolated: bool = False
    signal: str | None = None
    note: str | None = None
    isolation: dict[str, Any] = field(default_factory=dict)
    workspace: WorkspaceChanges | None = None


@runtime_checkable
class SandboxClient(Protocol):
    """Runs code somewhere isolated. Implementations must be safe to call from threads."""

    def languages(self) -> list[str]:
        """The languages this sandbox can run, e.g. ``["bash", "python"]``."""
        ...

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
        """Run ``code`` and return its result; a limit hit is a result, not an exception.

        Args:
            code: The program's source.
            language: One of :meth:`languages`.
            stdin: Text fed to its standard input.
            timeout_seconds: Wall-clock limit (capped by the sandbox's own).
            workspace: A host directory whose files the program's working directory
                shows. Changes stay in the sandbox unless ``writable``.
            writable: Write the files the program created, changed or deleted in the
                workspace back to the host directory after the run (nothing else of the
                host is writable); the result's ``workspace`` says what was written.
            python_path: Host directories made visible read-only and put first on a
                Python program's ``sys.path`` (and in ``PYTHONPATH`` for other
                languages, so a ``python3`` they start finds them). An entry inside the
                workspace refers to the program's copy of it.

        Raises:
            InvalidArgumentsError: Unknown language, code/stdin over the size limits, a
                workspace that is not a directory or is over ``workspace_mb`` /
                ``workspace_files``, a ``python_path`` entry that is not a directory the
                program may read.
            ToolError: The sandbox itself could not run (not the code's fault); raise it
                with ``trips_breaker=True`` so that the circuit breaker counts it. A
                program that fails or hits a limit is a result, never an error.
        """
        ...

    def close(self) -> None:
        """Release resources; runs in progress are killed."""
        ...
