"""A module's files: path rules, reading a module directory, and the files' hash.

Every path a caller gives is relative to the module's directory and is checked by
:func:`check_relative_path`: no absolute paths, no ``..`` or ``.`` segments, no
backslashes or NUL bytes, at most :data:`MAX_DEPTH` folders deep, and a name ending in one
of :data:`ALLOWED_SUFFIXES`. :func:`confined` also refuses a path through a symbolic link,
and :func:`read_tree` refuses a directory that holds one (files are opened with
``O_NOFOLLOW``), so nothing outside the module's directory is ever read or written through
it.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
from collections.abc import Mapping
from pathlib import Path

__all__ = [
    "ALLOWED_SUFFIXES",
    "MAX_DEPTH",
    "MAX_FILES",
    "MAX_FILE_BYTES",
    "MAX_TOTAL_BYTES",
    "UnsafePathError",
    "check_relative_path",
    "confined",
    "files_hash",
    "read_tree",
]

ALLOWED_SUFFIXES = frozenset({".py", ".json", ".md", ".txt", ".csv"})
MAX_DEPTH = 4
MAX_PATH_CHARS = 200
MAX_FILE_BYTES = 256 * 1024
MAX_FILES = 64
MAX_TOTAL_BYTES = 2 * 1024 * 1024
_SEGMENT = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}$")


class UnsafePathError(ValueError):
    """A file path leaves the module's directory, goes through a symlink, or breaks a rule."""


def check_relative_path(path: object) -> str:
    """``path`` checked against the rules above, as a ``/``-separated relative path.

    Raises:
        UnsafePathError: Saying which rule it breaks and what a valid path looks like.
    """
    example = "Use a path inside the module such as 'adapter.py' or 'fixtures/sample.json'."
    if not isinstance(path, str) or not path.strip():
        raise UnsafePathError(f"the file path is empty. {example}")
    if len(path) > MAX_PATH_CHARS:
        raise UnsafePathError(f"the file path is longer than {MAX_PATH_CHARS} characters. {example}")
    if "\x00" in path or "\\" in path:
        raise UnsafePathError(f"the file path contains a NUL byte or a backslash. {example}")
    if path.startswith("/") or re.match(r"^[A-Za-z]:", path):
        raise UnsafePathError(f"absolute paths are not allowed ({path[:80]!r}). {example}")
    segments = path.split("/")
    if any(s in ("..", ".") for s in segments):
        raise UnsafePathError(f"'..' and '.' are not allowed in a file path ({path[:80]!r}). {example}")
    if len(segments) > MAX_DEPTH:
        raise UnsafePathError(f"the file path is more than {MAX_DEPTH} levels deep. {example}")
    for segment in segments:
        if not _SEGMENT.match(segment) or segment == "__pycache__":
            raise UnsafePathError(
                f"{segment[:64]!r} is not an allowed file or folder name (letters, digits, '_', '-', "
                f"'.'; not starting with '.'). {example}"
            )
    suffix = os.path.splitext(segments[-1])[1]
    if suffix not in ALLOWED_SUFFIXES:
        allowed = ", ".join(sorted(ALLOWED_SUFFIXES))
        raise UnsafePathError(f"files ending in {suffix or '(nothing)'!r} are not allowed; use one of {allowed}.")
    return path


def confined(root: Path, path: object) -> Path:
    """The file ``path`` names inside ``root``, refusing any symlink on the way.

    Raises:
        UnsafePathError: The path breaks a rule, or ``root`` or a folder or the file on the
            way is a symbolic link.
    """
    relative = check_relative_path(path)
    current = root
    if current.is_symlink():
        raise UnsafePathError("the module's directory is a symbolic link; refusing to use it")
    for segment in relative.split("/"):
        current = current / segment
        if current.is_symlink():
            raise UnsafePathError(f"{relative!r} goes through a symbolic link; refusing to follow it")
    return current


def _read_file(path: Path, relative: str) -> bytes:
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError as exc:
        raise UnsafePathError(f"cannot read {relative!r} ({exc.strerror})") from None
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            raise UnsafePathError(f"{relative!r} is not a regular file")
        data = handle.read(MAX_FILE_BYTES + 1)
    if len(data) > MAX_FILE_BYTES:
        raise UnsafePathError(f"{relative!r} is larger than {MAX_FILE_BYTES // 1024} KiB")
    return data


def read_tree(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` by relative path (``/``-separated), sorted by path.

    Raises:
        UnsafePathError: ``root`` is missing or a symlink, or holds a symlink, a special
            file, a name the rules refuse, or more than the size limits allow.
    """
    if root.is_symlink() or not root.is_dir():
        raise UnsafePathError(f"{root.name!r} is not a module directory")
    files: dict[str, bytes] = {}
    total = 0
    pending: list[tuple[Path, str]] = [(root, "")]
    while pending:
        folder, prefix = pending.pop()
        with os.scandir(folder) as entries:
            for entry in entries:
                relative = prefix + entry.name
                if entry.is_symlink():
                    raise UnsafePathError(f"{relative!r} is a symbolic link; modules may not contain links")
                if entry.is_dir(follow_symlinks=False):
                    if entry.name == "__pycache__":
                        continue
                    if relative.count("/") + 1 >= MAX_DEPTH:
                        raise UnsafePathError(f"{relative!r} is nested more than {MAX_DEPTH} levels deep")
                    pending.append((Path(entry.path), relative + "/"))
                    continue
                check_relative_path(relative)
                data = _read_file(Path(entry.path), relative)
                total += len(data)
                files[relative] = data
                if len(files) > MAX_FILES or total > MAX_TOTAL_BYTES:
                    raise UnsafePathError(
                        f"the module has more than {MAX_FILES} files or {MAX_TOTAL_BYTES // 1024 // 1024} MiB"
                    )
    return dict(sorted(files.items()))


def files_hash(files: Mapping[str, bytes]) -> str:
    """``"sha256:<hex>"`` over every path and content, independent of the mapping's order."""
    digest = hashlib.sha256()
    for path in sorted(files):
        data = files[path]
        encoded = path.encode("utf-8")
        digest.update(len(encoded).to_bytes(4, "big") + encoded)
        digest.update(len(data).to_bytes(8, "big") + data)
    return "sha256:" + digest.hexdigest()
