"""Workspace files opened through the root's descriptor (see ``tools._openat``).

Readers (``read``, ``glob``, ``grep``) follow a symlink only while it stays inside the
root, resolved against the real tree; writers (``write``, ``edit``, ``patch``) follow none:
every directory on the way is opened ``O_NOFOLLOW`` from the root's descriptor (made with
``mkdirat`` when missing), the leaf is opened ``O_NOFOLLOW`` and replaced with
``renameat`` in the directory just opened. A directory swapped for a symlink between a
check and an open makes the call fail; it never redirects it.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tools import _openat
from tools.errors import InvalidArgumentsError

if TYPE_CHECKING:
    from tools.builtin.workspace.workspace import Workspace

_SNIFF = 8192
_ROOT_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC


def looks_binary(head: bytes) -> bool:
    """Whether the first bytes of a file look binary (a NUL byte, or undecodable UTF-8 that
    is not just a character cut at the end of ``head``)."""
    if b"\x00" in head:
        return True
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        return exc.start < len(head) - 4
    return False


@contextlib.contextmanager
def root_fd(ws: Workspace) -> Iterator[int]:
    """A descriptor of the workspace root (the operator's directory: opened by path)."""
    fd = os.open(ws.root, _ROOT_FLAGS)
    try:
        yield fd
    finally:
        os.close(fd)


def _not_found(path: str) -> InvalidArgumentsError:
    return InvalidArgumentsError(f"{path[:200]!r} does not exist in the workspace; use glob to find the right path.")


def _read_error(path: str, exc: OSError) -> InvalidArgumentsError:
    if exc.errno == errno.EXDEV:
        return InvalidArgumentsError(
            f"The path {path[:200]!r} leads outside the workspace through a symlink; only files inside the "
            "workspace can be used."
        )
    if exc.errno in (errno.ENOENT, errno.ENOTDIR):
        return _not_found(path)
    if exc.errno == errno.ELOOP:
        return InvalidArgumentsError(f"The path {path[:200]!r} has a symlink loop (or changed while it was opened).")
    return InvalidArgumentsError(f"{path[:200]!r} can't be opened: {exc.strerror or exc}.")


@contextlib.contextmanager
def resolved(ws: Workspace, path: str) -> Iterator[_openat.Resolved]:
    """``path`` resolved below the root, symlinks followed while they stay inside.

    Raises:
        InvalidArgumentsError: outside the root, a link leading out, a missing directory.
    """
    parts = ws.components(path)
    with root_fd(ws) as root:
        try:
            found = _openat.resolve(root, parts, root_path=str(ws.root))
        except OSError as exc:
            raise _read_error(path, exc) from None
        with found:
            yield found


@dataclass(frozen=True)
class Opened:
    """A workspace file or directory opened for reading (the descriptor is the caller's
    until the ``with`` block ends)."""

    fd: int
    rel: str
    info: os.stat_result

    @property
    def is_dir(self) -> bool:
        """Whether it is a directory."""
        return stat.S_ISDIR(self.info.st_mode)


@contextlib.contextmanager
def open_for_reading(ws: Workspace, path: str) -> Iterator[Opened]:
    """Open an existing workspace file or directory, links followed only inside.

    Raises:
        InvalidArgumentsError: missing, outside, or neither a regular file nor a directory.
    """
    with resolved(ws, path) as found:
        if not found.exists:
            raise _not_found(path)
        info = _openat.lstat_at(found.parent_fd, found.name)
        if info is None:
            raise _not_found(path)
        if not (stat.S_ISREG(info.st_mode) or stat.S_ISDIR(info.st_mode)):  # never open a device or a FIFO
            raise InvalidArgumentsError(f"{path[:200]!r} is not a regular file; only text files can be used.")
        flags = _openat.DIR_FLAGS if stat.S_ISDIR(info.st_mode) else _openat.READ_FLAGS
        try:
            fd = os.open(found.name, flags, dir_fd=found.parent_fd)
        except OSError as exc:
            raise _read_error(path, exc) from None
        rel = "/".join(found.parts) or "."
    try:
        info = os.fstat(fd)
        if not (stat.S_ISREG(info.st_mode) or stat.S_ISDIR(info.st_mode)):
            raise InvalidArgumentsError(f"{path[:200]!r} is not a regular file; only text files can be used.")
        yield Opened(fd, rel, info)
    finally:
        os.close(fd)


def read_head(fd: int) -> bytes:
    """The first bytes of an open file (for :func:`looks_binary`), from offset 0."""
    return os.pread(fd, _SNIFF, 0)


def _write_error(root: int, parts: list[str], path: str, exc: OSError) -> InvalidArgumentsError:
    if exc.errno in (errno.ELOOP, errno.ENOTDIR):
        for depth in range(1, len(parts)):
            try:
                os.close(_openat.open_dir(root, parts[:depth]))
            except OSError:
                where = "/".join(parts[:depth])
                info = _openat.lstat_at(root, where)
                kind = "a symlink" if info is not None and stat.S_ISLNK(info.st_mode) else "not a directory"
                return InvalidArgumentsError(
                    f"The path {path[:200]!r} goes through a symlink or a file: {where!r} is {kind}. edit, write "
                    "and patch change files only at their real path inside the workspace, never through a symlink."
                )
    if exc.errno == errno.ENOENT:
        return _not_found(path)
    return InvalidArgumentsError(f"{path[:200]!r} can't be changed: {exc.strerror or exc}.")


@contextlib.contextmanager
def _parent(ws: Workspace, parts: list[str], path: str, *, create: bool) -> Iterator[int]:
    """The descriptor of the directory holding ``parts[-1]``, no symlink followed."""
    with root_fd(ws) as root:
        try:
            fd = _openat.open_dir(root, parts[:-1], create=create)
        except OSError as exc:
            raise _write_error(root, parts, path, exc) from None
        try:
            yield fd
        finally:
            os.close(fd)


def _leaf_refusal(dir_fd: int, name: str, path: str, info: os.stat_result | None) -> InvalidArgumentsError | None:
    if info is None or stat.S_ISREG(info.st_mode):
        return None
    if stat.S_ISLNK(info.st_mode):
        try:
            target = os.readlink(name, dir_fd=dir_fd)
        except OSError:  # replaced meanwhile
            target = "?"
        return InvalidArgumentsError(
            f"{path[:200]!r} is a symlink (to {target[:200]!r}); edit, write and patch never write through a "
            "symlink: change the file it points to, by its own path."
        )
    if stat.S_ISDIR(info.st_mode):
        return InvalidArgumentsError(f"{path[:200]!r} is a directory; pass a file path such as 'src/app.py'.")
    return InvalidArgumentsError(f"{path[:200]!r} is not a regular file; only text files can be changed.")


def target(ws: Workspace, path: str) -> list[str]:
    """The components of a path to change, the write scope checked.

    Raises:
        InvalidArgumentsError: outside the root, or the root itself.
        PermissionDeniedError: outside the write scope.
    """
    parts = ws.components(path)
    if not parts:
        raise InvalidArgumentsError(
            f"{path[:200]!r} is the workspace directory; pass a file path such as 'src/app.py'."
        )
    ws.check_writable("/".join(parts))
    return parts


@dataclass(frozen=True)
class Loaded:
    """A workspace text file read for changing: its components and text."""

    parts: list[str]
    text: str

    @property
    def rel(self) -> str:
        """The path relative to the root."""
        return "/".join(self.parts)


def load(ws: Workspace, path: str) -> Loaded:
    """Read an existing UTF-8 text file that ``edit``/``patch`` may rewrite.

    Raises:
        InvalidArgumentsError: missing, a symlink (at any level), a directory, binary,
            not UTF-8, or over ``max_file_bytes``.
        PermissionDeniedError: outside the write scope.
    """
    parts = target(ws, path)
    limit = ws.limits.max_file_bytes
    with _parent(ws, parts, path, create=False) as dir_fd:
        refusal = _leaf_refusal(dir_fd, parts[-1], path, _openat.lstat_at(dir_fd, parts[-1]))
        if refusal is not None:
            raise refusal
        try:
            fd = os.open(parts[-1], _openat.READ_FLAGS, dir_fd=dir_fd)
        except OSError as exc:
            raise _write_error(dir_fd, parts[-1:], path, exc) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise InvalidArgumentsError(f"{path[:200]!r} is not a regular file; only text files can be changed.")
        if info.st_size > limit:
            raise InvalidArgumentsError(
                f"{path[:200]!r} is {info.st_size} bytes, over the {limit} bytes this tool rewrites; "
                "change it with bash in the sandbox instead."
            )
        data = _read_all(fd, limit + 1)
    finally:
        os.close(fd)
    if looks_binary(data[:_SNIFF]):
        raise InvalidArgumentsError(f"{path[:200]!r} is a binary file; only text files can be read or edited.")
    try:
        return Loaded(parts, data.decode("utf-8"))
    except UnicodeDecodeError:
        raise InvalidArgumentsError(f"{path[:200]!r} is not UTF-8 text; it can't be edited here.") from None


def _read_all(fd: int, limit: int) -> bytes:
    chunks, size = [], 0
    while size < limit and (chunk := os.read(fd, min(1 << 20, limit - size))):
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


def encode(text: str, what: str) -> bytes:
    """``text`` as UTF-8, or a model-facing error (a lone surrogate can't be written)."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidArgumentsError(f"{what} contains a lone surrogate (\\ud8xx); send valid Unicode text.") from None


def store(ws: Workspace, parts: list[str], data: bytes, path: str) -> bool:
    """Create or replace the file ``parts`` atomically, making missing directories;
    returns whether it was created.

    Raises:
        InvalidArgumentsError: the path goes through a symlink or a file, or its leaf is a
            symlink, a directory or a special file.
    """
    with _parent(ws, parts, path, create=True) as dir_fd:
        info = _openat.lstat_at(dir_fd, parts[-1])
        refusal = _leaf_refusal(dir_fd, parts[-1], path, info)
        if refusal is not None:
            raise refusal
        _openat.write_atomic(dir_fd, parts[-1], data)
    return info is None


def remove(ws: Workspace, parts: list[str], path: str) -> None:
    """Delete the regular file ``parts`` (never through a symlink)."""
    with _parent(ws, parts, path, create=False) as dir_fd:
        refusal = _leaf_refusal(dir_fd, parts[-1], path, _openat.lstat_at(dir_fd, parts[-1]))
        if refusal is not None:
            raise refusal
        os.unlink(parts[-1], dir_fd=dir_fd)


def exists(ws: Workspace, parts: list[str]) -> bool:
    """Whether something (a symlink included) is at ``parts``; a path through a symlink or
    a file counts as taken."""
    with root_fd(ws) as root:
        try:
            fd = _openat.open_dir(root, parts[:-1])
        except FileNotFoundError:
            return False
        except OSError:
            return True
        try:
            return _openat.lstat_at(fd, parts[-1]) is not None
        finally:
            os.close(fd)
