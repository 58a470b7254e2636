"""Where ``grep`` runs: always in a child process, killed when the call's time is up.

- **ripgrep** (``rg``, when installed): fast and ``.gitignore``-aware, started with
  ``--no-follow``, ``--no-config`` and the same regex memory budget. It walks by path, so
  a directory swapped for a symlink mid-search could make it read outside the workspace:
  every line it reports is therefore read back through the workspace's descriptors
  (``openat``, ``O_NOFOLLOW``) at the byte offset it names, and kept only when the same
  bytes are there. What the model gets was read inside the workspace; a race can cost a
  match, never leak one.
- **RE2** (``google-re2``, always there): the worker in ``_grepworker``, started with the
  directory's descriptor and walking below it through descriptors.

Either is killed, with its process group, at the deadline: the call then answers
``timeout`` (not a strike against the breaker: a slow pattern is the caller's).
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import selectors
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, cast

import re2

import tools
from tools import _openat
from tools._procgroup import kill_group
from tools.errors import InvalidArgumentsError, ToolError, ToolTimeoutError

_ENV = {"LC_ALL": "C.UTF-8"}
_STDERR_CAP = 16 * 1024
# No site (-S: no .pth hooks to run), re2's directory only; the packages stubbed so that
# the worker imports only stdlib-only modules (no __init__ runs).
_BOOT = (
    "import os, sys, types\n"
    "sys.path.append(sys.argv[2])\n"
    "for name in ('tools', 'tools.builtin', 'tools.builtin.workspace'):\n"
    "    module = types.ModuleType(name)\n"
    "    module.__path__ = [os.path.join(sys.argv[1], *name.split('.'))]\n"
    "    sys.modules[name] = module\n"
    "from tools.builtin.workspace._grepworker import main\n"
    "main()\n"
)


@dataclass
class Found:
    """Matches ``(path relative to the searched directory, line, text)`` and whether more
    matched than were kept."""

    matches: list[tuple[str, int, str]] = field(default_factory=list)
    truncated: bool = False


def timed_out(seconds: float) -> ToolTimeoutError:
    """The error of a search stopped at its deadline."""
    return ToolTimeoutError(
        f"grep stopped after {seconds:g} s; use a simpler pattern or search a smaller path.", trips_breaker=False
    )


class _Child:
    """A child process in its own group, read line by line until a deadline."""

    def __init__(self, argv: list[str], *, cwd: str | None = None, pass_fds: tuple[int, ...] = ()) -> None:
        self.proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=cwd,
            pass_fds=pass_fds,
            start_new_session=True,
            env=_ENV,
        )
        self.stderr = bytearray()

    def lines(self, deadline: float, seconds: float) -> Iterator[bytes]:
        """stdout, line by line; raises the timeout error at ``deadline``."""
        stdout, stderr = cast("IO[bytes]", self.proc.stdout), cast("IO[bytes]", self.proc.stderr)
        buffer = bytearray()
        with selectors.DefaultSelector() as selector:
            selector.register(stdout, selectors.EVENT_READ)
            selector.register(stderr, selectors.EVENT_READ)
            while selector.get_map():
                left = deadline - time.monotonic()
                if left <= 0:
                    raise timed_out(seconds)
                for key, _ in selector.select(left):
                    chunk = os.read(key.fd, 1 << 16)
                    if not chunk:
                        selector.unregister(key.fileobj)
                    elif key.fileobj is stderr:
                        self.stderr += chunk[: max(0, _STDERR_CAP - len(self.stderr))]
                    else:
                        start = len(buffer)
                        buffer += chunk
                        end = buffer.find(b"\n", start)
                        while end >= 0:
                            yield bytes(buffer[:end])
                            del buffer[: end + 1]
                            end = buffer.find(b"\n")
        if buffer:
            yield bytes(buffer)

    def close(self) -> None:
        """Kill the group (when still running), close the pipes and reap the child."""
        kill_group(self.proc.pid)
        for pipe in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if pipe is not None:
                with contextlib.suppress(OSError):
                    pipe.close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=10)

    def message(self) -> str:
        """What the child said on stderr (cut)."""
        return self.stderr.decode("utf-8", "replace").strip()[:500]


def run_worker(job: dict[str, Any], fd: int, seconds: float) -> Found:
    """Search with the RE2 worker below ``fd`` (a directory, or the file to search).

    Raises:
        ToolTimeoutError: not done within ``seconds``.
        InvalidArgumentsError: the worker refused the pattern.
        ToolError: the worker failed.
    """
    deadline = time.monotonic() + seconds
    tree = str(Path(tools.__file__).resolve().parent.parent)
    re2_dir = str(Path(re2.__file__).resolve().parent.parent)
    child = _Child([sys.executable, "-I", "-S", "-c", _BOOT, tree, re2_dir], pass_fds=(fd,))
    found = Found()
    try:
        stdin = cast("IO[bytes]", child.proc.stdin)
        with contextlib.suppress(BrokenPipeError):
            stdin.write(json.dumps({**job, "fd": fd}).encode())
            stdin.close()
        for raw in child.lines(deadline, seconds):
            item = json.loads(raw)
            if "error" in item:
                raise InvalidArgumentsError(f"pattern is not a valid regular expression ({item['error']}).")
            if item.get("done"):
                found.truncated = bool(item["truncated"])
                return found
            found.matches.append((item["p"], item["l"], item["t"]))
    finally:
        child.close()
    raise ToolError(f"grep's search process ended without an answer ({child.message() or 'no message'}).")


@dataclass(frozen=True)
class RipgrepJob:
    """One ripgrep search: the flags to add, the directory to run in and what to search."""

    argv: list[str]
    cwd: str
    target: str
    max_results: int
    max_line_chars: int


def run_ripgrep(job: RipgrepJob, verify_fd: int, is_file: bool, seconds: float) -> Found:
    """Search with ripgrep, each reported line read back below ``verify_fd`` (the searched
    directory, or the searched file when ``is_file``).

    Raises:
        ToolTimeoutError: not done within ``seconds``.
        InvalidArgumentsError: ripgrep refused the pattern or the include glob.
    """
    deadline = time.monotonic() + seconds
    child = _Child([*job.argv, "--", job.target], cwd=job.cwd)
    raw: list[tuple[str, int, int, bytes]] = []
    truncated = False
    try:
        for line in child.lines(deadline, seconds):
            item = json.loads(line)
            if item.get("type") != "match":
                continue
            if len(raw) == job.max_results:
                truncated = True
                break
            raw.append(_reported(item["data"]))
    finally:
        child.close()
    if not raw and child.proc.returncode == 2 and child.stderr:
        raise InvalidArgumentsError(f"ripgrep refused the search: {child.message()}")
    return Found(_verified(raw, verify_fd, is_file, job.max_line_chars), truncated)


def _text(value: dict[str, str]) -> bytes:
    return value["text"].encode("utf-8", "surrogateescape") if "text" in value else base64.b64decode(value["bytes"])


def _reported(data: dict[str, Any]) -> tuple[str, int, int, bytes]:
    """(path, line number, byte offset of the line, the line without its newline)."""
    path = _text(data["path"]).decode("utf-8", "surrogateescape")
    line = _text(data["lines"]).rstrip(b"\n").rstrip(b"\r")
    return path.removeprefix("./"), int(data["line_number"]), int(data["absolute_offset"]), line


def _verified(raw: list[tuple[str, int, int, bytes]], fd: int, is_file: bool, cut: int) -> list[tuple[str, int, str]]:
    """The reported lines that are really there, read through descriptors."""
    kept: list[tuple[str, int, str]] = []
    opened: dict[str, int | None] = {}
    try:
        for path, number, offset, line in raw:
            if path not in opened:
                opened[path] = os.dup(fd) if is_file else _open_below(fd, path)
            file_fd = opened[path]
            want = line[: cut * 4 + 4]
            if file_fd is not None and os.pread(file_fd, len(want), offset) == want:
                kept.append((path, number, want.decode("utf-8", "replace")[:cut]))
    finally:
        for file_fd in opened.values():
            if file_fd is not None:
                os.close(file_fd)
    return kept


def _open_below(dir_fd: int, path: str) -> int | None:
    """A regular file below ``dir_fd``, no symlink followed at any level (None: not one)."""
    parts = _openat.components(path)
    if not parts or ".." in parts:
        return None
    try:
        parent = _openat.open_dir(dir_fd, parts[:-1])
    except OSError:
        return None
    try:
        file_fd = os.open(parts[-1], _openat.READ_FLAGS, dir_fd=parent)
    except OSError:
        return None
    finally:
        os.close(parent)
    if not stat.S_ISREG(os.fstat(file_fd).st_mode):
        os.close(file_fd)
        return None
    return file_fd
