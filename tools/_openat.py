"""Paths opened beneath a directory descriptor, never through a symlink that leads out.

A path checked with ``realpath`` and then opened by name can be redirected between the
check and the open: a directory swapped for a symlink to ``/etc`` in that window sends the
write there. Everything here works from the descriptor of a trusted directory (a
workspace root) instead, one component at a time with ``openat``:

- :func:`open_dir` never follows a symlink: each directory is opened with
  ``O_DIRECTORY | O_NOFOLLOW`` (and made with ``mkdirat`` when asked), so a swap makes the
  walk fail (``ELOOP``/``ENOTDIR``) rather than go elsewhere. Writers use it, and open or
  replace the leaf with ``O_NOFOLLOW`` / ``renameat`` in the directory it returns.
- :func:`resolve` follows symlinks the way the kernel would, but itself, against the real
  tree below the root: ``..`` pops the directories it holds, a link's target is read with
  ``readlinkat`` and walked on, and a path that climbs above the root or reaches an
  absolute target elsewhere fails with ``EXDEV``. Readers use it: a link inside the
  workspace still works, a link out never does.
- :func:`stays_beneath` answers, without opening anything, whether a symlink's target
  resolves inside the root (components that do not exist yet are taken as plain
  directories; links about to be created are given in ``links``).
- :func:`walk` lists a tree through descriptors (``scandir`` on a directory descriptor,
  children opened ``O_NOFOLLOW``), never entering a symlink.

What this does not stop: a directory *moved* out of the tree while a descriptor into it is
held. Moving it needs write access to the destination, so the file lands where the mover
could write anyway; a symlink needs no such access, which is why it is the case handled.

Stdlib only: the sandbox's copy-back imports it in a process without the dependencies.
"""

from __future__ import annotations

import contextlib
import errno
import os
import posixpath
import stat
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

#: Opening a directory beneath a descriptor: never through a symlink.
DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
#: Opening a file to read: not a symlink, and a FIFO does not block the open.
READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | getattr(os, "O_NONBLOCK", 0)
#: Symlinks followed in one resolution before ``ELOOP`` (the kernel's limit).
MAX_LINKS = 40


def components(path: str) -> list[str]:
    """The components of a ``/``-separated relative path (empty ones and ``.`` dropped)."""
    return [part for part in path.split("/") if part not in ("", ".")]


def open_dir(dir_fd: int, parts: list[str], *, create: bool = False, mode: int = 0o755) -> int:
    """A new descriptor of the directory ``parts`` below ``dir_fd``, no symlink followed.

    Args:
        dir_fd: The trusted directory.
        parts: Plain names (no ``..``): the caller normalised the path.
        create: Make missing directories (``mkdirat``) on the way.
        mode: Their permission bits (before the umask).

    Raises:
        OSError: ``ELOOP``/``ENOTDIR`` when a component is a symlink or not a directory,
            ``ENOENT`` when one is missing and ``create`` is False, ``EINVAL`` for ``..``.
    """
    current = os.dup(dir_fd)
    try:
        for part in parts:
            if part in ("", ".", ".."):
                raise OSError(errno.EINVAL, f"path component {part!r} is not a plain name")
            try:
                child = os.open(part, DIR_FLAGS, dir_fd=current)
            except FileNotFoundError:
                if not create:
                    raise
                with contextlib.suppress(FileExistsError):  # made meanwhile: open it, no-follow
                    os.mkdir(part, mode, dir_fd=current)
                child = os.open(part, DIR_FLAGS, dir_fd=current)
            os.close(current)
            current = child
    except BaseException:
        os.close(current)
        raise
    return current


def lstat_at(dir_fd: int, name: str) -> os.stat_result | None:
    """``lstat`` of ``name`` in ``dir_fd`` (None when it does not exist)."""
    try:
        return os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return None


@dataclass
class Resolved:
    """Where a path resolved to (see :func:`resolve`); close it (or use ``with``).

    Attributes:
        parent_fd: The directory holding the leaf (owned: :meth:`close` closes it).
        name: The leaf's name in it; ``"."`` when the path is the root itself.
        parts: The leaf's real path below the root, as components.
        exists: Whether the leaf exists.
    """

    parent_fd: int
    name: str
    parts: list[str]
    exists: bool

    def close(self) -> None:
        """Close the parent descriptor."""
        os.close(self.parent_fd)

    def __enter__(self) -> Resolved:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _escape(what: str) -> OSError:
    return OSError(errno.EXDEV, f"{what} leads outside the directory")


def _target_parts(target: str, root_path: str | None) -> tuple[bool, list[str]]:
    """(restart at the root, components) of a symlink target; EXDEV for an absolute one
    outside ``root_path``."""
    if not target.startswith("/"):
        return False, target.split("/")
    if root_path is not None:
        norm = posixpath.normpath(target)
        if norm == root_path or norm.startswith(root_path.rstrip("/") + "/"):
            return True, norm[len(root_path) :].split("/")
    raise _escape(f"the symlink target {target!r}")


class _Walk:
    """One resolution below a root: the directories held (``None``: one that does not
    exist yet, in a ``virtual`` walk), the components still to go, the links followed."""

    def __init__(self, dir_fd: int, parts: list[str], *, virtual: bool, links: Mapping[str, str] | None) -> None:
        self.stack: list[tuple[str, int | None]] = [("", os.dup(dir_fd))]
        self.pending = list(reversed(parts))
        self.virtual = virtual
        self.links = links or {}
        self.hops = 0

    def close(self) -> None:
        for _, fd in self.stack:
            if fd is not None:
                os.close(fd)
        self.stack = []

    def up(self) -> None:
        if len(self.stack) == 1:
            raise _escape("'..'")
        fd = self.stack.pop()[1]
        if fd is not None:
            os.close(fd)

    def at_leaf(self) -> bool:
        return all(part in ("", ".") for part in self.pending)

    def link_target(self, name: str, info: os.stat_result | None) -> str | None:
        """The target when ``name`` is a symlink (on disk, or about to be made)."""
        current = self.stack[-1][1]
        if info is not None and stat.S_ISLNK(info.st_mode):
            return os.readlink(name, dir_fd=current)
        if info is None and self.links:
            return self.links.get("/".join([n for n, _ in self.stack[1:]] + [name]))
        return None

    def follow(self, target: str, root_path: str | None) -> None:
        self.hops += 1
        if self.hops > MAX_LINKS:
            raise OSError(errno.ELOOP, "too many levels of symbolic links")
        restart, more = _target_parts(target, root_path)
        while restart and len(self.stack) > 1:
            self.up()
        self.pending.extend(reversed(more))

    def descend(self, name: str, info: os.stat_result | None) -> None:
        current = self.stack[-1][1]
        if info is None and not self.virtual:
            raise OSError(errno.ENOENT, f"{name!r} does not exist")
        if info is not None and not stat.S_ISDIR(info.st_mode):
            raise OSError(errno.ENOTDIR, f"{name!r} is not a directory")
        self.stack.append((name, None if info is None else os.open(name, DIR_FLAGS, dir_fd=current)))

    def run(self, root_path: str | None) -> tuple[str, bool]:
        """Walk to the leaf: its name (``"."``: the directory on top of the stack) and
        whether it exists."""
        while self.pending:
            name = self.pending.pop()
            if name in ("", "."):
                continue
            if name == "..":
                self.up()
                continue
            current = self.stack[-1][1]
            info = lstat_at(current, name) if current is not None else None
            target = self.link_target(name, info)
            if target is not None:
                self.follow(target, root_path)
            elif self.at_leaf():
                return name, info is not None
            else:
                self.descend(name, info)
        return ".", True


def resolve(dir_fd: int, parts: list[str], *, root_path: str | None = None) -> Resolved:
    """Resolve ``parts`` below ``dir_fd`` following symlinks, but only inside it.

    Args:
        dir_fd: The trusted directory (the root).
        parts: The path's components (``..`` allowed; it may not climb above the root).
        root_path: The root's real path: an absolute symlink target inside it is followed
            (None: every absolute target is an escape).

    Returns:
        The leaf's parent directory, name and real path; the leaf itself may be missing.

    Raises:
        OSError: ``EXDEV`` when the path or a link leaves the root, ``ELOOP`` after
            :data:`MAX_LINKS` links, ``ENOENT``/``ENOTDIR`` for a missing or non-directory
            middle component.
    """
    walk = _Walk(dir_fd, parts, virtual=False, links=None)
    try:
        name, exists = walk.run(root_path)
        if name == "." and len(walk.stack) > 1:  # ends at a held directory: name it from its parent
            name = walk.stack[-1][0]
            walk.up()
    except BaseException:
        walk.close()
        raise
    held = [fd for _, fd in walk.stack if fd is not None]
    for fd in held[:-1]:
        os.close(fd)
    real = [n for n, _ in walk.stack[1:]] + ([name] if name != "." else [])
    return Resolved(held[-1], name, real, exists)


def stays_beneath(dir_fd: int, parts: list[str], *, links: Mapping[str, str] | None = None) -> bool:
    """Whether ``parts`` resolves inside ``dir_fd`` in the real tree, symlinks followed.

    Nothing is opened for reading or writing; components that do not exist are taken as
    the directories they would become. ``links`` (real relative path -> target) are
    symlinks about to be created: they count where nothing exists yet. An absolute
    target, a climb above the root or more than :data:`MAX_LINKS` links is False.
    """
    walk = _Walk(dir_fd, parts, virtual=True, links=links)
    try:
        walk.run(None)
    except OSError:
        return False
    finally:
        walk.close()
    return True


def walk(
    dir_fd: int, prefix: str = "", *, skip_dirs: frozenset[str] = frozenset(), strict: bool = False
) -> Iterator[tuple[str, str, int, os.stat_result]]:
    """``(relative path, name, parent fd, lstat)`` of everything below ``dir_fd``, sorted,
    parents before their children; symlinks are listed, never entered. The parent
    descriptor is valid while the consumer handles the entry.

    A directory that can't be opened (unreadable, or swapped for a symlink meanwhile) is
    not entered; with ``strict`` the ``OSError`` propagates instead (a copy that must be
    complete)."""
    with os.scandir(dir_fd) as entries:
        items = sorted((e.name, e.stat(follow_symlinks=False)) for e in entries)
    for name, info in items:
        rel = f"{prefix}{name}"
        yield rel, name, dir_fd, info
        if stat.S_ISDIR(info.st_mode) and name not in skip_dirs:
            try:
                child = os.open(name, DIR_FLAGS, dir_fd=dir_fd)
            except OSError:
                if strict:
                    raise
                continue
            try:
                yield from walk(child, rel + "/", skip_dirs=skip_dirs, strict=strict)
            finally:
                os.close(child)


def write_atomic(dir_fd: int, name: str, data: bytes, *, mode: int | None = None) -> None:
    """Replace ``name`` in ``dir_fd`` with ``data``: a temporary file, fsynced, renamed over it.

    The rename replaces whatever ``name`` is (a symlink is replaced, never written
    through); callers refuse a symlink leaf first. Permission bits: ``mode``, else the
    existing file's, else 0644 less the umask.

    Raises:
        OSError: the directory is not writable or the disk is full; the old file is intact.
    """
    if mode is None:
        info = lstat_at(dir_fd, name)
        mode = stat.S_IMODE(info.st_mode) if info is not None and stat.S_ISREG(info.st_mode) else None
    tmp = f".{name[:200]}.{os.urandom(4).hex()}.tmp"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    fd = os.open(tmp, flags, 0o644 if mode is None else 0o600, dir_fd=dir_fd)
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            if mode is not None:
                os.fchmod(fd, mode)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp, dir_fd=dir_fd)
        raise
    with contextlib.suppress(OSError):
        os.fsync(dir_fd)
