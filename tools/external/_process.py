"""Run a child process in its own process group, with a timeout and capped output (POSIX).

Every child starts a new session (``start_new_session=True``), so the child and everything it
spawns share one process group. The group is killed with ``SIGKILL`` when the call times out,
when stdout grows past the cap, when :meth:`ProcessRunner.kill_all` is called, and also after
the child exits normally, so no grandchild outlives its call. Never uses a shell.
"""

from __future__ import annotations

import contextlib
import os
import select
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import IO

from tools._procgroup import interrupts_deferred, kill_group

_CHUNK = 65536


@dataclass(frozen=True)
class ProcessOutcome:
    """What a finished (or killed) child left behind.

    Attributes:
        returncode: The exit status (negative: killed by that signal).
        stdout: Captured stdout, at most ``max_output_bytes`` bytes.
        stderr: Captured stderr, at most ``max_stderr_bytes`` bytes.
        timed_out: The child was killed because the timeout passed.
        output_overflow: The child was killed because stdout passed the cap.
        killed: The child was killed by :meth:`ProcessRunner.kill_all`.
        duration: Wall-clock seconds from spawn to reap.
    """

    returncode: int
    stdout: bytes
    stderr: bytes
    timed_out: bool = False
    output_overflow: bool = False
    killed: bool = False
    duration: float = 0.0


class RunnerClosedError(RuntimeError):
    """The runner was shut down; no new process may start."""


class _Capture:
    """Reads one pipe in a thread, keeping at most ``limit`` bytes."""

    def __init__(self, pipe: IO[bytes], limit: int, on_overflow: Callable[[], None] | None) -> None:
        self.chunks: list[bytes] = []
        self.size = 0
        self.overflow = False
        self._pipe = pipe
        self._limit = limit
        self._on_overflow = on_overflow
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        read = getattr(self._pipe, "read1", self._pipe.read)
        with contextlib.suppress(OSError, ValueError):
            while chunk := read(_CHUNK):
                room = self._limit - self.size
                if room > 0:
                    self.chunks.append(chunk[:room])
                    self.size += min(room, len(chunk))
                if len(chunk) > room and not self.overflow:
                    self.overflow = True
                    if self._on_overflow is not None:
                        self._on_overflow()
                        return

    def data(self) -> bytes:
        return b"".join(self.chunks)


def _feed(pipe: IO[bytes], data: bytes) -> None:
    with contextlib.suppress(BrokenPipeError, OSError, ValueError):
        pipe.write(data)
    with contextlib.suppress(BrokenPipeError, OSError, ValueError):
        pipe.close()


class ProcessRunner:
    """Starts children in their own process groups and can kill them all at once.

    Thread-safe: many threads may call :meth:`run` concurrently; each call is its own process.

    Args:
        grace: Seconds to wait for pipes to drain after the child is reaped.
    """

    def __init__(self, *, grace: float = 1.0) -> None:
        self._grace = grace
        self._lock = threading.Lock()
        self._running: dict[int, subprocess.Popen[bytes]] = {}
        self._killed: set[int] = set()
        self._closed = False

    @property
    def running(self) -> int:
        """How many children are alive right now."""
        with self._lock:
            return len(self._running)

    def run(
        self,
        argv: Sequence[str],
        *,
        input: bytes | None = None,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        timeout: float,
        max_output_bytes: int = 10_000_000,
        max_stderr_bytes: int = 65_536,
    ) -> ProcessOutcome:
        """Run ``argv`` to completion (or until killed) and return what it printed.

        ``input`` is written to stdin (stdin is empty otherwise). stdout beyond
        ``max_output_bytes`` kills the group and sets ``output_overflow``; stderr beyond
        ``max_stderr_bytes`` is dropped silently.

        Raises:
            OSError: the program could not be started (missing, not executable, bad format).
            RunnerClosedError: :meth:`kill_all` was called with ``close=True``.
        """
        # No interrupt between starting the child and listing it for kill_all.
        with interrupts_deferred(), self._lock:
            if self._closed:
                raise RunnerClosedError("the process runner is shut down")
            proc = subprocess.Popen(
                list(argv),
                stdin=subprocess.PIPE if input is not None else subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=dict(env) if env is not None else None,
                cwd=cwd,
                start_new_session=True,
                close_fds=True,
            )
            self._running[proc.pid] = proc
        try:
            return self._supervise(proc, input, timeout, max_output_bytes, max_stderr_bytes)
        finally:
            self._reap(proc)

    def _kill_if_running(self, pid: int) -> None:
        # Under the lock: a pid still listed in _running is not reaped, so it cannot have
        # been reused by an unrelated process group.
        with self._lock:
            if pid in self._running:
                kill_group(pid)

    def _reap(self, proc: subprocess.Popen[bytes]) -> bool:
        """Kill the group while the child's pid is still held, then reap; True if killed."""
        with self._lock:
            listed = self._running.pop(proc.pid, None) is not None
            killed = proc.pid in self._killed
            self._killed.discard(proc.pid)
            if listed:
                kill_group(proc.pid)
        if proc.returncode is None:
            proc.wait()
        return killed

    def _supervise(
        self,
        proc: subprocess.Popen[bytes],
        data: bytes | None,
        timeout: float,
        max_out: int,
        max_err: int,
    ) -> ProcessOutcome:
        started = time.monotonic()
        if proc.stdout is None or proc.stderr is None:  # pragma: no cover - set by Popen
            raise RuntimeError("child pipes missing")
        out = _Capture(proc.stdout, max_out, lambda: self._kill_if_running(proc.pid))
        err = _Capture(proc.stderr, max_err, None)
        if data is not None and proc.stdin is not None:
            threading.Thread(target=_feed, args=(proc.stdin, data), daemon=True).start()
        timed_out = not _wait_exit(proc, timeout)
        # The child has exited (or timed out) but is not reaped yet: killing its group now
        # also ends any grandchild it left behind, so the pipes reach EOF.
        killed = self._reap(proc)
        out.thread.join(self._grace)
        err.thread.join(self._grace)
        for pipe in (proc.stdout, proc.stderr):
            with contextlib.suppress(OSError):
                pipe.close()
        return ProcessOutcome(
            returncode=proc.returncode,
            stdout=out.data(),
            stderr=err.data(),
            timed_out=timed_out and not killed,
            output_overflow=out.overflow,
            killed=killed,
            duration=time.monotonic() - started,
        )

    def kill_all(self, *, close: bool = False) -> int:
        """SIGKILL the process group of every running child; returns how many were signalled.

        Args:
            close: Also refuse every later :meth:`run` (shutdown).
        """
        with self._lock:
            self._closed = self._closed or close
            pids = list(self._running)
            self._killed.update(pids)
            for pid in pids:
                kill_group(pid)
        return len(pids)

    def reopen(self) -> None:
        """Accept new runs again after ``kill_all(close=True)``."""
        with self._lock:
            self._closed = False


def _wait_exit(proc: subprocess.Popen[bytes], timeout: float) -> bool:
    """Wait for ``proc`` to exit; False when ``timeout`` passed first.

    On Linux a pidfd wakes on the exit itself (no polling) and leaves the child unreaped, so
    its pid cannot be reused before the group is killed. Elsewhere ``Popen.wait`` (reaps).
    """
    pidfd_open = getattr(os, "pidfd_open", None)
    if pidfd_open is not None:
        try:
            fd = pidfd_open(proc.pid)
        except OSError:
            fd = None
        if fd is not None:
            try:
                poller = select.poll()
                poller.register(fd, select.POLLIN)
                ready = poller.poll(max(0, int(timeout * 1000)))
            finally:
                os.close(fd)
            return bool(ready)
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        return False
    return True
