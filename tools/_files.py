"""Files tooldeck writes (registries, approvals, metrics, caches, artifacts): atomically.

A reader, a concurrent writer or a crash mid-write sees either the old file or the new
one, never a torn or empty file: the text goes to a temporary file in the same directory,
is flushed and fsynced, then renamed over the target, and the directory is fsynced so the
rename itself survives a power cut.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path


def atomic_write_text(path: str | os.PathLike[str], text: str, *, mode: int | None = None) -> None:
    """Replace ``path`` with ``text`` (UTF-8) atomically, creating parent directories.

    Args:
        path: The file to write.
        text: Its new content.
        mode: Permission bits for the new file (default: those of ``mkstemp``, 0600, or the
            existing file's when it exists).

    Raises:
        OSError: the directory is not writable or the disk is full; the old file is intact.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    if mode is None:
        with contextlib.suppress(OSError):
            mode = target.stat().st_mode & 0o777
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    _fsync_directory(target.parent)


def _fsync_directory(directory: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
