"""LocalSandbox: run code in a separate, limited, isolated-where-possible process.

What is isolated (see ``docs/compute.md`` for the full, honest list):

- **Processes**: a new PID namespace when the kernel allows it; the program's PID 1 exits
  with it and the kernel kills everything left, so background processes (even ones that
  ``setsid``) never outlive the call. Without it, the process group is killed.
- **Network**: a new, empty network namespace (no interfaces up, not even loopback) when
  the kernel allows it; the result says ``network_isolated: false`` otherwise.
- **Resources**: ``RLIMIT_CPU``, ``RLIMIT_AS``, ``RLIMIT_FSIZE``, ``RLIMIT_NOFILE``,
  ``RLIMIT_NPROC`` (only enforced under an unprivileged uid), a wall-clock timeout, and
  output caps.
- **Files**: a fresh temporary working directory, removed afterwards. With a mount
  namespace (when the kernel allows it), the working directory, /tmp, /var/tmp and
  /dev/shm are private, size-limited tmpfs mounts: nothing written reaches the disk, and
  ``../`` leads only to empty directories. When the parent runs as root, the program runs
  as an unprivileged uid (``nobody``), so it can't read private files or write anywhere
  else. World-readable files (``/etc/passwd``, the Python installation) stay readable:
  there is no chroot.
- **Environment**: scrubbed to ``PATH``, ``HOME``, ``TMPDIR`` and the locale; no secrets
  of the parent leak in. Python runs isolated (``-I -S``: no site-packages, no
  ``PYTHON*`` variables) and unbuffered, so output printed before a kill is kept.
"""

from __future__ import annotations

import contextlib
import marshal
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from tools._procgroup import kill_group, wait_group_gone
from tools.builtin.code_executor._capture import Capture, collect
from tools.builtin.code_executor.sandbox import SandboxLimits, SandboxResult
from tools.errors import InvalidArgumentsError, ToolError

_LAUNCHER = Path(__file__).with_name("_launcher.py")
_SEARCH_PATH = "/usr/local/bin:/usr/bin:/bin"
_NOBODY = 65534
#: Seconds to wait for a killed run's processes to be torn down before returning.
_GROUP_TEARDOWN_S = 2.0
_FILE_NAMES = {"python": "main.py", "bash": "main.sh", "sh": "main.sh", "node": "main.js"}


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


def _sandbox_python(candidates: Sequence[str]) -> str:
    for candidate in candidates:
        if candidate and world_executable(candidate):
            return candidate
    return candidates[0]


def default_interpreters(python: str | None = None) -> dict[str, list[str]]:
    """The interpreters found on this machine: Python always, bash/sh/node when present.

    Args:
        python: The Python executable to run code with. Default: the current interpreter
            if any user may execute it (the sandbox drops to an unprivileged uid when run
            as root), else the system ``python3``.

    Returns:
        Language name -> argv prefix; the code file's path is appended.
    """
    if python is None:
        system = [shutil.which(n, path=_SEARCH_PATH) or "" for n in ("python3", "python")]
        python = _sandbox_python([sys.executable, *system])
    found: dict[str, list[str]] = {"python": [python, "-I", "-S", "-B", "-u"]}
    bash = shutil.which("bash", path=_SEARCH_PATH)
    if bash:
        found["bash"] = [bash, "--noprofile", "--norc"]
    sh = shutil.which("sh", path=_SEARCH_PATH)
    if sh:
        found["sh"] = [sh]
    node = shutil.which("node", path=_SEARCH_PATH)
    if node:
        found["node"] = [node]
    return found


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


class LocalSandbox:
    """A :class:`~tools.builtin.code_executor.sandbox.SandboxClient` using local processes.

    Args:
        limits: Resource limits for every run (``timeout_seconds`` is the default and the
            maximum a caller may ask for).
        interpreters: Language -> argv prefix; default :func:`default_interpreters`.
        isolate_network: Put the program in an empty network namespace when possible.
        isolate_filesystem: Give the program a private mount namespace with size-limited
            tmpfs scratch dirs and working dir, when possible.
        require_network_isolation: Refuse to run (``ToolError``) when the network can't be
            isolated on this machine instead of running with ``network_isolated: false``.
        sandbox_uid: The uid (and gid) programs run as when this process is root; ``None``
            keeps root (then ``RLIMIT_NPROC`` is not enforced by the kernel).
        temp_root: Where working directories are created (default: the system temp dir).
        launcher_python: Python used for the small launcher process.
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
    ) -> None:
        self.limits = limits or SandboxLimits()
        source = default_interpreters() if interpreters is None else interpreters
        self._interpreters = {name: list(argv) for name, argv in source.items()}
        self._isolate_network = isolate_network
        self._isolate_filesystem = isolate_filesystem
        self._require_network = require_network_isolation
        self._uid = sandbox_uid if os.geteuid() == 0 else None
        self._temp_root = temp_root
        # Import the launcher (its bytecode is cached) rather than run it as a script.
        stub = f"import sys; sys.path[0:0] = [{str(_LAUNCHER.parent)!r}]; import _launcher; "
        self._launcher_argv = [launcher_python, "-I", "-S", "-c", stub + "_launcher.main()"]
        self._lock = threading.Lock()
        self._running: set[int] = set()
        self._closed = False

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
    ) -> SandboxResult:
        """Run ``code`` in a fresh process and working directory and report the outcome.

        Hostile code is contained by the limits above: an infinite loop or a fork bomb
        ends at the timeout (``timed_out``), huge allocations fail inside the program
        (``MemoryError``), huge files stop at the file-size limit (``SIGXFSZ``, or
        ``EFBIG`` in Python), floods of output are cut
        (``truncated``) and killed past ``max_drain_bytes``, background processes are
        killed when the call ends.

        Args:
            code: Source code (at most ``limits.max_code_bytes`` UTF-8 bytes; NUL bytes
                are rejected).
            language: One of :meth:`languages`.
            stdin: Text fed to the program's standard input (default: empty).
            timeout_seconds: Wall-clock limit, capped at ``limits.timeout_seconds``.

        Raises:
            InvalidArgumentsError: Unknown language, oversized code or stdin.
            ToolError: The sandbox is closed or could not start the program.
        """
        argv = self._check(code, language, stdin)
        limit = self.limits.timeout_seconds
        timeout = limit if timeout_seconds is None else max(0.1, min(timeout_seconds, limit))
        try:
            workdir = Path(tempfile.mkdtemp(prefix="tooldeck-sbx-", dir=self._temp_root))
        except OSError as exc:
            msg = f"The sandbox could not create a working directory ({type(exc).__name__})."
            raise ToolError(msg) from exc
        try:
            program = self._prepare(workdir, code, language, stdin)
            return self._launch([*argv, str(program)], workdir, language, timeout)
        finally:
            shutil.rmtree(workdir, ignore_errors=True)

    def close(self) -> None:
        """Kill runs in progress and refuse new ones. Idempotent."""
        with self._lock:
            self._closed = True
            running = list(self._running)
        for pgid in running:
            kill_group(pgid)

    def _check(self, code: str, language: str, stdin: str | None) -> list[str]:
        if self._closed:
            msg = "The code sandbox is shut down; code can't be run any more."
            raise ToolError(msg)
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
            raise ToolError(msg) from exc
        return program

    def _env(self, workdir: Path) -> dict[str, str]:
        return {
            "PATH": _SEARCH_PATH,
            "HOME": str(workdir),
            "TMPDIR": str(workdir),
            "LANG": "C.UTF-8",
            "LC_ALL": "C.UTF-8",
        }

    def _rlimits(self, language: str) -> dict[str, int]:
        mib = 1024 * 1024
        memory = self.limits.memory_mb
        if language == "node":  # V8 reserves a large address space up front
            memory = max(memory, 2048)
        limits = {
            "cpu": self.limits.cpu_seconds,
            "as": memory * mib,
            "fsize": self.limits.file_size_mb * mib,
            "nofile": self.limits.max_open_files,
            "core": 0,
        }
        if self._uid is not None:
            limits["nproc"] = self.limits.max_processes
        return limits

    def _launch(self, argv: list[str], workdir: Path, language: str, timeout: float) -> SandboxResult:
        status_r, status_w = os.pipe()
        config: dict[str, Any] = {
            "argv": argv,
            "cwd": str(workdir),
            "env": self._env(workdir),
            "rlimits": self._rlimits(language),
            "uid": self._uid,
            "gid": self._uid,
            "isolate_net": self._isolate_network,
            "require_net": self._require_network,
            "isolate_pid": True,
            "isolate_fs": self._isolate_filesystem,
            "disk_mb": self.limits.disk_mb,
            "status_fd": status_w,
        }
        started = time.monotonic()
        try:
            with (workdir / ".stdin").open("rb") as stdin_file:
                proc = subprocess.Popen(
                    [*self._launcher_argv, marshal.dumps(config).hex()],
                    stdin=stdin_file,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    pass_fds=(status_w,),
                    start_new_session=True,
                    cwd=workdir,
                    env={"LANG": "C.UTF-8"},
                )
        except OSError as exc:
            os.close(status_r)
            os.close(status_w)
            msg = f"The sandbox could not start: {type(exc).__name__}."
            raise ToolError(msg) from exc
        os.close(status_w)
        with self._lock:
            self._running.add(proc.pid)
        try:
            capture = self._collect(proc, status_r, started + timeout)
        finally:
            kill_group(proc.pid)
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=10)
            # Nothing of the run may outlive the call: wait for the killed group to be gone.
            wait_group_gone(proc.pid, timeout=_GROUP_TEARDOWN_S)
            with self._lock:
                self._running.discard(proc.pid)
            os.close(status_r)
            for stream in (proc.stdout, proc.stderr):
                if stream is not None:
                    stream.close()
        duration_ms = (time.monotonic() - started) * 1000.0
        return self._result(capture, proc.returncode, language, duration_ms, timeout)

    def _collect(self, proc: subprocess.Popen[bytes], status_fd: int, deadline: float) -> Capture:
        if proc.stdout is None or proc.stderr is None:  # pragma: no cover - Popen(PIPE)
            msg = "The sandbox lost its output pipes."
            raise ToolError(msg)
        return collect(
            proc,
            (proc.stdout.fileno(), proc.stderr.fileno()),
            status_fd,
            deadline=deadline,
            max_output=self.limits.max_output_bytes,
            max_drain=self.limits.max_drain_bytes,
        )

    def _result(
        self,
        capture: Capture,
        returncode: int,
        language: str,
        duration_ms: float,
        timeout: float,
    ) -> SandboxResult:
        info: dict[str, Any] = {}
        for item in capture.status:
            info.update(item)
        if "error" in info:
            msg = f"The sandbox could not start the {language} interpreter ({info['error']})."
            raise ToolError(msg)
        if info.get("refused"):
            msg = "The sandbox requires network isolation, which this machine does not allow; code was not run."
            raise ToolError(msg)
        exit_code = returncode
        if isinstance(info.get("wait_status"), int):
            exit_code = os.waitstatus_to_exitcode(info["wait_status"])
        if capture.timed_out or capture.output_killed:
            exit_code = -signal.SIGKILL
        sig = _signal_name(-exit_code) if exit_code < 0 else None
        note = self._note(capture, sig, timeout)
        return SandboxResult(
            language=language,
            stdout=bytes(capture.stdout).decode("utf-8", "replace"),
            stderr=bytes(capture.stderr).decode("utf-8", "replace"),
            exit_code=exit_code,
            duration_ms=round(duration_ms, 3),
            timed_out=capture.timed_out,
            killed=sig is not None,
            truncated=capture.truncated,
            network_isolated=bool(info.get("net")),
            signal=sig,
            note=note,
            isolation={
                "network": bool(info.get("net")),
                "pid_namespace": bool(info.get("pid")),
                "filesystem": bool(info.get("fs")),
                "uid": self._uid,
            },
        )

    def _note(self, capture: Capture, sig: str | None, timeout: float) -> str | None:
        limits = self.limits
        if capture.timed_out:
            return f"Killed after the {timeout:g} s wall-clock limit."
        if capture.output_killed:
            return f"Killed after writing more than {limits.max_drain_bytes} bytes of output."
        if sig == "SIGXCPU":
            return f"Killed after using the {limits.cpu_seconds} s CPU time limit."
        if sig == "SIGXFSZ":
            return f"Killed for writing a file larger than {limits.file_size_mb} MiB."
        if capture.truncated:
            return f"Output was cut to {limits.max_output_bytes} bytes per stream."
        return None
