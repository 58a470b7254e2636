"""The metrics append log: one line per flush, appended under the file lock.

A line goes out in one ``write`` of a file opened for appending, then to disk
(``fdatasync``), so a writer killed at any moment leaves either its whole line or none: a
process cannot be stopped inside that system call. Only a crash of the machine can leave a
last line without its newline; readers skip it and the next writer cuts it off before
appending. A write that fails (a full disk) is cut back too, so the flush can be retried
without counting anything twice.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

from tools.telemetry._file import Figures, MetricsFileError, parse_delta

_TAIL = 65_536


def append_line(log: Path, line: bytes) -> int:
    """Append ``line`` (which ends with a newline) to ``log``; returns the log's new size.

    The log is never followed if it is a symbolic link (``O_NOFOLLOW``): a link planted in a
    project's directory cannot turn a flush into an append to another file.

    Raises:
        OSError: the line could not be written in full (the log is as it was), or the log
            is a symbolic link (``errno.ELOOP``).
    """
    fd = os.open(log, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    try:
        size = _cut_torn_tail(fd)
        try:
            view = memoryview(line)
            while view:
                written = os.write(fd, view)
                view = view[written:]
            _sync(fd)
        except OSError:
            os.ftruncate(fd, size)
            raise
        return size + len(line)
    finally:
        os.close(fd)


def _cut_torn_tail(fd: int) -> int:
    """Cut a last line that has no newline (its writer died with the machine); the size after."""
    size = os.fstat(fd).st_size
    if size == 0 or os.pread(fd, 1, size - 1) == b"\n":
        return size
    start = max(0, size - _TAIL)
    tail = os.pread(fd, size - start, start)
    end = tail.rfind(b"\n")
    keep = start + end + 1 if end >= 0 else (0 if start == 0 else size)
    if keep != size:
        os.ftruncate(fd, keep)
    return keep


def _sync(fd: int) -> None:
    sync = getattr(os, "fdatasync", os.fsync)
    sync(fd)


def read_log(log: Path, offset: int = 0) -> tuple[list[Figures], int]:
    """The complete lines of ``log`` from byte ``offset`` on (oldest first), and the offset
    just past the last of them (``offset`` when there is none, or no log).

    Raises:
        MetricsFileError: a complete line is not a valid delta (``corrupt``).
        OSError: the log exists but cannot be read.
    """
    try:
        fd = os.open(log, os.O_RDONLY | os.O_NOFOLLOW)
    except FileNotFoundError:
        return [], offset
    except OSError as exc:
        if exc.errno == errno.ELOOP:  # a symbolic link: never one of ours
            raise MetricsFileError(f"metrics log {log} is a symbolic link", path=log, reason="corrupt") from None
        raise
    with os.fdopen(fd, "rb") as handle:
        handle.seek(offset)
        data = handle.read()
    end = data.rfind(b"\n") + 1  # past it: empty, or a line still being written (or torn)
    lines = data[:end].split(b"\n")
    return [parse_delta(log, line) for line in lines if line.strip()], offset + end
