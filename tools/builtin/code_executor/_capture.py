"""Read a sandboxed process's pipes with caps, a deadline and whole-group kills."""

from __future__ import annotations

import contextlib
import os
import selectors
import subprocess
import time
from dataclasses import dataclass, field
from typing import Any

from tools._procgroup import kill_group

#: After the launcher exits, how long stragglers may still hold the pipes open.
_GRACE_SECONDS = 0.5
_CHUNK = 65_536


@dataclass
class Capture:
    """Everything read from one run's pipes."""

    stdout: bytearray = field(default_factory=bytearray)
    stderr: bytearray = field(default_factory=bytearray)
    total_bytes: int = 0
    truncated: bool = False
    timed_out: bool = False
    output_killed: bool = False
    status: list[dict[str, Any]] = field(default_factory=list)
    status_raw: bytes = b""


def _parse_status(raw: bytes) -> list[dict[str, Any]]:
    """The launcher's ``key=value`` lines, one dict per line; integers become ints."""
    lines: list[dict[str, Any]] = []
    for line in raw.decode("utf-8", "replace").splitlines():
        key, sep, value = line.partition("=")
        if not sep:
            continue
        number = value.removeprefix("-")
        lines.append({key: int(value) if number.isdigit() else value})
    return lines


class _Reader:
    """One capture loop over stdout, stderr, the status pipe and the launcher's pidfd."""

    def __init__(
        self,
        proc: subprocess.Popen[bytes],
        streams: tuple[int, int],
        status_fd: int,
        *,
        max_output: int,
        max_drain: int,
    ) -> None:
        self.proc = proc
        self.streams = streams
        self.max_output = max_output
        self.max_drain = max_drain
        self.capture = Capture()
        self.status_raw = bytearray()
        self.sel = selectors.DefaultSelector()
        self.buffers = {
            streams[0]: self.capture.stdout,
            streams[1]: self.capture.stderr,
            status_fd: self.status_raw,
        }
        for fd in self.buffers:
            os.set_blocking(fd, False)
            self.sel.register(fd, selectors.EVENT_READ)
        self.pidfd: int | None = None
        with contextlib.suppress(OSError, AttributeError):
            self.pidfd = os.pidfd_open(proc.pid)
        self.exited_at: float | None = None

    def _launcher_exited(self) -> bool:
        if self.pidfd is None:
            return self.proc.poll() is not None
        # A readable pidfd means the launcher is a zombie: its pgid can't be reused yet,
        # so killing the group afterwards is safe.
        with selectors.DefaultSelector() as probe:
            probe.register(self.pidfd, selectors.EVENT_READ)
            return bool(probe.select(0))

    def _read(self, fd: int) -> None:
        try:
            data = os.read(fd, _CHUNK)
        except BlockingIOError:
            return
        if not data:
            self.sel.unregister(fd)
            return
        buf = self.buffers[fd]
        if fd not in self.streams:
            if len(buf) < _CHUNK:  # the status pipe carries a few short lines
                buf += data
            return
        self.capture.total_bytes += len(data)
        room = self.max_output - len(buf)
        if len(data) > room:
            self.capture.truncated = True
        if room > 0:
            buf += data[:room]
        if self.capture.total_bytes > self.max_drain and not self.capture.output_killed:
            self.capture.output_killed = True
            kill_group(self.proc.pid)

    def run(self, deadline: float) -> Capture:
        try:
            self._loop(deadline)
        finally:
            self.sel.close()
            if self.pidfd is not None:
                os.close(self.pidfd)
        self.capture.status_raw = bytes(self.status_raw)
        self.capture.status = _parse_status(self.capture.status_raw)
        return self.capture

    def _mark_exited(self, now: float) -> None:
        if self.exited_at is None:
            self.exited_at = now
            kill_group(self.proc.pid)  # stragglers that stayed in the group

    def _loop(self, deadline: float) -> None:
        if self.pidfd is not None:
            self.sel.register(self.pidfd, selectors.EVENT_READ)
        while any(fd in self.buffers for fd in self.sel.get_map()):
            now = time.monotonic()
            if self.exited_at is None and self._launcher_exited():
                self._mark_exited(now)
                if self.pidfd is not None:
                    self.sel.unregister(self.pidfd)
            limit = deadline if self.exited_at is None else self.exited_at + _GRACE_SECONDS
            if now >= limit:
                if self.exited_at is not None:
                    return
                self.capture.timed_out = True
                kill_group(self.proc.pid)
                continue  # the pidfd turns readable once the launcher is dead
            wait = min(limit - now, 1.0 if self.pidfd is not None else 0.05)
            for key, _ in self.sel.select(wait):
                if key.fd in self.buffers:
                    self._read(key.fd)


def collect(
    proc: subprocess.Popen[bytes],
    streams: tuple[int, int],
    status_fd: int,
    *,
    deadline: float,
    max_output: int,
    max_drain: int,
) -> Capture:
    """Read stdout/stderr (``streams``: their fds) and the status pipe until all close.

    Keeps at most ``max_output`` bytes per stream (setting ``truncated``), kills the
    process group on ``deadline`` (``timed_out``) or once more than ``max_drain`` bytes
    were written (``output_killed``), and kills stragglers of the group when the launcher
    exits. Never blocks past the deadline plus a short grace period.
    """
    reader = _Reader(proc, streams, status_fd, max_output=max_output, max_drain=max_drain)
    return reader.run(deadline)
